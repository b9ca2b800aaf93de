#!/usr/bin/env bash
# The memory the Advanced DaemonSet controller spends on Nodes shaped like a kubelet's (by hand, under the lock):
#
#   flock /tmp/kruise-e2e.lock scripts/scale-daemonset-nodes.sh        # N=5000 by default
#
# Starts its own kube-apiserver v1.20 (a temporary KUBE_LOCAL, ports 36443/32379/32380, no controller-manager), creates
# one Advanced DaemonSet whose nodeSelector matches one node, then runs `controller --kubeconfig` with the DaemonSet
# controller only (`--no-sidecarsets --no-barriers --no-clonesets --no-statefulsets`; the shared pod watch runs) twice: without Nodes, then after N Nodes were created straight
# through the apiserver (parallel HTTP/2 curl). Each Node is shaped like a real one: 8 labels, 4 annotations, a
# podCIDR and providerID, capacity and allocatable, 5 conditions with heartbeats and messages, 3 addresses, nodeInfo,
# 20 images with digests and tags (about 6 KB of JSON, managedFields added by the apiserver). Each run waits until
# the DaemonSet's status is observed at its generation with desiredNumberScheduled 0 (no Nodes) or 1, lets it settle
# SETTLE_SECS (30; the allocator returns the list's pages over seconds), and prints the process's VmHWM (peak RSS)
# and VmRSS. BINARY (target/release/kruise-webhook) picks the binary;
# KEEP=1 keeps the logs.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
SETTLE_SECS=${SETTLE_SECS:-30}
binary=${BINARY:-target/release/kruise-webhook}
[ -x "$binary" ] || { echo "no $binary: cargo build --release first (or set BINARY)" >&2; exit 1; }
shared=$HOME/.cache/kruise-webhook/kube-local
[ -x "$shared/bin/kube-apiserver" ] || { echo "no kube-apiserver in $shared/bin (scripts/e2e.sh builds it)" >&2; exit 1; }
work=$(mktemp -d)
export KUBE_LOCAL=$work/kube-local KUBE_BIN=$shared/bin
export APISERVER_PORT=${APISERVER_PORT:-36443} ETCD_PORT=${ETCD_PORT:-32379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-32380}
pid=""
cleanup() {
  [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  if [ "${KEEP:-0}" = 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
export KUBECONFIG=$KUBE_LOCAL/kubeconfig
P=$KUBE_LOCAL/pki
API=https://127.0.0.1:$APISERVER_PORT
kubectl kustomize deploy/crds/ | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
kubectl apply -f deploy/namespace.yaml >/dev/null
kubectl create namespace bench >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent, namespace: bench}
spec:
  selector: {matchLabels: {app: agent}}
  lifecycle: {preDelete: {labelsHandler: {example.io/block-deleting: "true"}}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {bench.kruise.io/daemon: "yes"}
      containers: [{name: main, image: busybox:1.36}]
EOF

# the DaemonSet controller only; prints "VmHWM VmRSS" (KiB) once the status counts `desired` nodes
measure() { # label desired
  local log=$work/controller-${1// /-}.log deadline
  "$binary" controller --kubeconfig "$KUBECONFIG" --log-format json \
    --no-sidecarsets --no-barriers --no-clonesets --no-statefulsets > "$log" 2>&1 &
  pid=$!
  deadline=$((SECONDS + 300))
  until [ "$(kubectl get daemonsets.apps.kruise.io -n bench agent -o json 2>/dev/null \
      | jq -c '[.status.desiredNumberScheduled, .status.observedGeneration == .metadata.generation]')" = "[$2,true]" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "the controller exited; log tail:" >&2; tail -20 "$log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "status not at $2 nodes after 300 s" >&2; tail -20 "$log" >&2; exit 1; }
    sleep 0.5
  done
  sleep "$SETTLE_SECS"
  awk '/^VmHWM/ {hwm = $2} /^VmRSS/ {rss = $2} END {printf "%s: VmHWM %.1f MiB, VmRSS %.1f MiB\n", label, hwm / 1024, rss / 1024}' \
    label="$1" "/proc/$pid/status"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  # a fresh Lease for the next run
  kubectl delete lease -n kruise-system kruise-webhook-controller --ignore-not-found >/dev/null
}
measure "no Nodes" 0

# N Nodes, one of them (node-0) selected by the DaemonSet. A Node's status may be set on create.
python3 - "$N" "$work/nodes" "$API" "$P" <<'EOF'
import json, os, sys
n, out, api, pki = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.makedirs(out)
beat = "2026-11-27T12:00:00Z"
def digest(i, j):
    return ("%064x" % (i * 1000003 + j * 7919))[-64:]
images = lambda i: [{"names": [f"registry.example.com/team-{j}/service-{j}@sha256:{digest(i % 7, j)}",
                               f"registry.example.com/team-{j}/service-{j}:v1.{j}.{i % 3}"],
                     "sizeBytes": 10_000_000 + j * 1_234_567} for j in range(20)]
condition = lambda t, s, reason, message: {"type": t, "status": s, "lastHeartbeatTime": beat,
    "lastTransitionTime": "2026-11-20T08:00:00Z", "reason": reason, "message": message}
with open(os.path.join(out, "curl.conf"), "w") as conf:
    for i in range(n):
        name = f"node-{i}"
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
                  "node.kubernetes.io/instance-type": "m5.2xlarge",
                  "topology.kubernetes.io/zone": f"zone-{i % 3}", "topology.kubernetes.io/region": "region-1"}
        if i == 0:
            labels["bench.kruise.io/daemon"] = "yes"
        resources = {"cpu": "8", "memory": "32481628Ki", "pods": "110", "ephemeral-storage": "101430960Ki",
                     "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
        node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": f"i-{i:017x}"}),
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock"}},
            "spec": {"podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24", "podCIDRs": [f"10.{i // 256 % 256}.{i % 256}.0/24"],
                     "providerID": f"aws:///zone-{i % 3}/i-{i:017x}"},
            "status": {"capacity": resources, "allocatable": dict(resources, cpu="7910m", memory="31330652Ki"),
                "conditions": [
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    condition("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
                    condition("Ready", "True", "KubeletReady", "kubelet is posting ready status. AppArmor enabled")],
                "addresses": [{"type": "InternalIP", "address": f"172.20.{i // 256 % 256}.{i % 256}"},
                              {"type": "Hostname", "address": name},
                              {"type": "InternalDNS", "address": f"ip-172-20-{i // 256 % 256}-{i % 256}.internal"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {"machineID": f"{i:032x}", "systemUUID": f"ec2{i:029x}", "bootID": f"{i * 31:032x}",
                    "kernelVersion": "5.10.0-28-cloud-amd64", "osImage": "Debian GNU/Linux 11 (bullseye)",
                    "containerRuntimeVersion": "containerd://1.6.20", "kubeletVersion": "v1.20.2",
                    "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64"},
                "images": images(i)}}
        body = os.path.join(out, f"{i}.json")
        with open(body, "w") as f:
            json.dump(node, f)
        if i:
            conf.write("next\n")
        conf.write(f'url = "{api}/api/v1/nodes"\ncacert = "{pki}/ca.crt"\ncert = "{pki}/admin.crt"\n'
                   f'key = "{pki}/admin.key"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\n'
                   f'write-out = "%{{http_code}}\\n"\ndata-binary = "@{body}"\n')
EOF
t0=$SECONDS
# the status codes alone on stdout: curl's parallel progress meter goes to stderr, even with -s
curl -sS --parallel --parallel-max 16 --http2 -K "$work/nodes/curl.conf" > "$work/nodes/codes" 2> "$work/nodes/curl.err" || true
created=$(grep -c '^201$' "$work/nodes/codes" || true)
size=$(curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$API/api/v1/nodes/node-1" | wc -c)
echo "created $created of $N Nodes in $((SECONDS - t0)) s; one as stored: $size bytes of JSON (managedFields included)"
[ "$created" = "$N" ] || { sort "$work/nodes/codes" | uniq -c | head -5; tail -c 300 "$work/nodes/curl.err"; exit 1; }
# The apiserver's TaintNodesByCondition admission taints every new Node not-ready:NoSchedule (no kubelet reports it
# Ready here), which a daemon pod does not tolerate: lifted from the selected node.
kubectl taint node node-0 node.kubernetes.io/not-ready:NoSchedule- >/dev/null
measure "$N Nodes" 1
