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
# shellcheck source=scripts/lib/scale.sh
. scripts/lib/scale.sh
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
  scale_apiserver_stop "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

scale_apiserver_start
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

# N Nodes, one of them (node-0) selected by the DaemonSet.
t0=$SECONDS
created=$(scale_nodes "$N" "$work/nodes")
size=$(curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$API/api/v1/nodes/node-1" | wc -c)
echo "created $created of $N Nodes in $((SECONDS - t0)) s; one as stored: $size bytes of JSON (managedFields included)"
[ "$created" = "$N" ] || { sort "$work/nodes/codes" | uniq -c | head -5; tail -c 300 "$work/nodes/curl.err"; exit 1; }
# The apiserver's TaintNodesByCondition admission taints every new Node not-ready:NoSchedule (no kubelet reports it
# Ready here), which a daemon pod does not tolerate: lifted from the selected node.
kubectl taint node node-0 node.kubernetes.io/not-ready:NoSchedule- >/dev/null
measure "$N Nodes" 1
