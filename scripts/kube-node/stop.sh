#!/bin/bash
# Stop what start.sh started, by recorded PID only, and leave no pods, containers, shims, netns, bridge or
# kubepods cgroups behind, and put back the host settings start.sh changed (kernel settings, its iptables rule).
# Usage: stop.sh   (WIPE=1 also deletes the etcd data; containerd's image store is kept)
# Order: controllers first (no re-creation), delete this node's pods through the API and let the kubelet tear them
# down (CNI DEL, unmounts), then kubelet, then force-remove anything containerd still has, then containerd,
# then network/cgroup leftovers, then apiserver and etcd.
KN=${KUBE_NODE:-$HOME/.cache/kruise-webhook/kube-node}
NODE_NAME=${NODE_NAME:-kube-node}
APISERVER_PORT=${APISERVER_PORT:-26443}
CNI_BRIDGE=${CNI_BRIDGE:-kn-br0}
RUN=$KN/run
SOCK=$RUN/containerd.sock
P=$KN/pki
API=https://127.0.0.1:$APISERVER_PORT
CURL="curl -sS --max-time 10 --cacert $P/ca.crt --cert $P/admin.crt --key $P/admin.key"
T0=$(date +%s.%N)
el() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop_pid() { # name
  local f=$RUN/$1.pid pid
  [ -f $f ] || return 0
  pid=$(cat $f)
  if kill -0 $pid 2>/dev/null; then
    kill $pid
    for i in $(seq 1 75); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
    kill -0 $pid 2>/dev/null && kill -9 $pid
    echo "[$(el)s] stopped $1 (pid $pid)"
  fi
  rm -f $f
}
node_pods() {
  $CURL "$API/api/v1/pods?fieldSelector=spec.nodeName=$NODE_NAME" 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin).get("items", []):
    print(p["metadata"]["namespace"], p["metadata"]["name"])' 2>/dev/null
}

scan() { # our containerd containers -> "netns PATH" and "uid POD_UID" lines (to clean up what the kubelet leaves)
  for c in $(ctr --address $SOCK -n k8s.io containers ls -q 2>/dev/null); do
    ctr --address $SOCK -n k8s.io containers info $c 2>/dev/null | python3 -c '
import json, sys
i = json.load(sys.stdin)
for n in i["Spec"]["linux"].get("namespaces", []):
    if n.get("type") == "network" and n.get("path", "").startswith("/var/run/netns/cni-"): print("netns", n["path"])
u = i.get("Labels", {}).get("io.kubernetes.pod.uid")
if u: print("uid", u)' 2>/dev/null
  done
}

stop_pid kube-controller-manager & stop_pid kube-scheduler & wait
# remember our sandboxes' network namespaces and pods' UIDs, to remove any netns / log dir that survives
SEEN=""
alive $RUN/containerd.pid && SEEN=$(scan)

# 1. delete this node's pods through the API, gracefully (1 s; the kubelet's minimum is 2 s), and let the kubelet kill
#    them and stop their sandboxes (CNI DEL, netns removal). Once nothing runs, drop the API objects the kubelet has
#    not confirmed yet (grace 0): a 1.20 kubelet confirms only on its 10 s status-sync tick.
del_pods() { node_pods | while read ns name; do
    $CURL -X DELETE -H 'Content-Type: application/json' -d "{\"gracePeriodSeconds\":$1}" \
      "$API/api/v1/namespaces/$ns/pods/$name" >/dev/null 2>&1; done; }
tasks() { ctr --address $SOCK -n k8s.io tasks ls -q 2>/dev/null; }
if alive $RUN/kube-apiserver.pid && alive $RUN/kubelet.pid; then
  del_pods 1
  for i in $(seq 1 60); do [ -z "$(tasks)" ] && break; sleep 0.5; done
  sleep 1   # StopPodSandbox's CNI teardown finishes after the sandbox task exits
  del_pods 0
  for i in $(seq 1 20); do [ -z "$(node_pods)" ] && break; sleep 0.5; done
  echo "[$(el)s] pods deleted ($(node_pods | wc -l) left in the API, $(tasks | wc -l) containerd tasks left)"
fi
stop_pid kubelet
# forget the Node: the next start registers it afresh (no stale Ready condition)
alive $RUN/kube-apiserver.pid && $CURL -X DELETE "$API/api/v1/nodes/$NODE_NAME" >/dev/null 2>&1 && echo "[$(el)s] deleted node $NODE_NAME"

# 2. force: whatever containerd still runs (e.g. kubelet was already gone)
if alive $RUN/containerd.pid; then
  CTR="ctr --address $SOCK -n k8s.io"
  SEEN="$SEEN
$(scan)"
  for c in $($CTR containers ls -q 2>/dev/null); do
    $CTR tasks kill -s SIGKILL $c >/dev/null 2>&1
    for i in $(seq 1 25); do $CTR tasks delete $c >/dev/null 2>&1 && break; $CTR tasks ls -q | grep -qx $c || break; sleep 0.2; done
    $CTR containers delete $c >/dev/null 2>&1 && echo "removed container $c"
  done
fi
stop_pid containerd
alive $RUN/containerd.pid || rm -f $SOCK $SOCK.ttrpc

# 3. leftovers: kubelet mounts (tmpfs volumes), bridge, IPAM state, kubepods cgroups
for m in $(awk -v k="$KN/kubelet" '$2 == k || index($2, k "/") == 1 {print $2}' /proc/mounts | sort -r); do umount "$m" && echo "unmounted $m"; done
for ns in $(echo "$SEEN" | awk '$1 == "netns" {print $2}' | sort -u); do
  [ -e $ns ] && { umount $ns 2>/dev/null; rm -f $ns && echo "removed netns $ns"; }
done
# container logs: the kubelet (1.20) always writes them under /var/log/pods/NS_POD_UID (+ /var/log/containers links);
# remove the pod dirs of pods we saw, and those that appeared since start.sh (it lists what was there before)
for u in $(echo "$SEEN" | awk '$1 == "uid" {print $2}' | sort -u); do
  for d in /var/log/pods/*_$u; do [ -d "$d" ] && rm -rf "$d"; done
done
if [ -f $RUN/pod-logs-before ]; then
  for d in $(ls -A /var/log/pods 2>/dev/null); do grep -qxF "$d" $RUN/pod-logs-before || rm -rf "/var/log/pods/$d"; done
  rm -f $RUN/pod-logs-before
fi
for l in /var/log/containers/*.log; do
  [ -L "$l" ] && [ ! -e "$l" ] && case "$(readlink "$l")" in /var/log/pods/*) rm -f "$l";; esac
done
ip link show $CNI_BRIDGE >/dev/null 2>&1 && ip link del $CNI_BRIDGE && echo "removed bridge $CNI_BRIDGE"
rm -rf $KN/cni/ipam/*
for h in /sys/fs/cgroup/*/; do
  [ -d ${h}kubepods ] && find ${h}kubepods -depth -type d -exec rmdir {} + 2>/dev/null
done
# containerd (shims, CRI fifos) creates /run/containerd/{s,fifo}; drop empty ones unless a system containerd lives there
[ -d /run/containerd ] && [ ! -e /run/containerd/containerd.sock ] && find /run/containerd -depth -type d -empty -delete
n=$(ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null | wc -l); [ $n = 0 ] || echo "warning: $n kubepods cgroups left" >&2

# fixed paths the 1.20 kubelet / libcni / containerd use whatever the config says: drop them when empty
rm -f /var/lib/kubelet/device-plugins/{kubelet.sock,kubelet_internal_checkpoint,DEPRECATION}
for d in /var/lib/kubelet/device-plugins /var/lib/kubelet /var/lib/cni/results /var/lib/cni /var/run/netns \
         /var/log/pods /var/log/containers; do
  [ -d $d ] && rmdir --ignore-fail-on-non-empty $d
done

# the DNAT rule start.sh added for pods -> apiserver
if [ -f $RUN/dnat-rule ]; then
  while iptables -t nat -C $(cat $RUN/dnat-rule) 2>/dev/null; do iptables -t nat -D $(cat $RUN/dnat-rule); done
  echo "removed iptables rule: nat $(cat $RUN/dnat-rule)"
  rm -f $RUN/dnat-rule
fi

# kernel settings the kubelet / bridge plugin changed, back to what start.sh found
if [ -f $RUN/sysctl-before ]; then
  sysctl -q -w $(cat $RUN/sysctl-before) && echo "restored $(paste -sd' ' $RUN/sysctl-before)"
  rm -f $RUN/sysctl-before
fi

stop_pid kube-apiserver & stop_pid etcd & wait
[ "${WIPE:-0}" = 1 ] && rm -rf $KN/data/etcd && echo "wiped etcd data"
exit 0
