#!/usr/bin/env bash
# The whole cluster in one process (issue 47): kubelet-shaped Nodes, pods owned by a mix of CloneSets, Advanced
# StatefulSets with volumeClaimTemplates and Advanced DaemonSets, SidecarSets of which MATCHING select those pods,
# then `serve --kubeconfig` with every controller, measured as an operator would see it. By hand, on its own
# apiserver (a temporary KUBE_LOCAL; ports APISERVER_PORT/ETCD_PORT/ETCD_PEER_PORT, webhook and admin
# WEBHOOK_PORT/ADMIN_PORT), with a release build:
#
#   cargo build --release --bin kruise-webhook --example standin-kubelet
#   scripts/scale-cluster.sh                                   # the full layout below
#   NODES=50 PODS=500 SIDECARSETS=1000 MATCHING=20 IDLE_SECS=60 scripts/scale-cluster.sh
#
# The layout is built by a first `serve` (the webhook registered by URL, so every pod is injected), and
# bench/standin-kubelet.rs stands in for the scheduler and the kubelets (binds, Running/Ready, in-place restarts);
# PVCs are only created (the StatefulSet controller does not wait for them to bind). Then a second `serve`, over
# everything at once, is measured:
# - time to /readyz 200; peak RSS (VmHWM) and RSS settled after convergence (VmRSS); peak open files;
# - the Lease: the largest gap between renewals seen (sampled every second);
# - every SidecarSet's status current (observedGeneration, followed by one list and a watch), and then CPU
#   (utime + stime) over IDLE_SECS of idle after that convergence, and /mutate-pod p50/p99 while idle;
# - a rollout storm: every workload's image changed at once plus one SidecarSet (matching every CloneSet pod)
#   changed: seconds until every status is current, the apiserver's requests meanwhile (apiserver_request_total),
#   and /mutate-pod p50/p99 (REQUESTS reviews of a pod no SidecarSet matches, scale_sidecarsets.sh's method)
#   while LOAD_PODS pods are created through the apiserver beside it.
# A table of the figures beside the targets ends the output.
#
# Env: NODES (2000), PODS (20000: DaemonSet pods = NODES × DAEMONSETS count in it, the rest split evenly between
#      CloneSets and StatefulSets of REPLICAS pods), DAEMONSETS (2), REPLICAS (100), SIDECARSETS (50000),
#      MATCHING (300, of the SIDECARSETS), IDLE_SECS (300), CONVERGE_SECS (1800: the longest wait for a
#      convergence), REQUESTS (2000), LOAD_PODS (500), KUBELET_CONCURRENCY (64), BINARY
#      (target/release/kruise-webhook), KUBELET (target/release/examples/standin-kubelet), KEEP=1 keeps the logs.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/scale.sh
. scripts/lib/scale.sh
NODES=${NODES:-2000} PODS=${PODS:-20000} DAEMONSETS=${DAEMONSETS:-2} REPLICAS=${REPLICAS:-100}
SIDECARSETS=${SIDECARSETS:-50000} MATCHING=${MATCHING:-300} IDLE_SECS=${IDLE_SECS:-300}
CONVERGE_SECS=${CONVERGE_SECS:-1800} REQUESTS=${REQUESTS:-2000} LOAD_PODS=${LOAD_PODS:-500}
binary=${BINARY:-target/release/kruise-webhook}
kubelet=${KUBELET:-target/release/examples/standin-kubelet}
for b in "$binary" "$kubelet"; do
  [ -x "$b" ] || { echo "no $b: cargo build --release --bin kruise-webhook --example standin-kubelet" >&2; exit 1; }
done
shared=$HOME/.cache/kruise-webhook/kube-local
[ -x "$shared/bin/kube-apiserver" ] || { echo "no kube-apiserver in $shared/bin (scripts/e2e.sh builds it)" >&2; exit 1; }
rest=$((PODS - NODES * DAEMONSETS))
[ "$rest" -ge 0 ] || { echo "PODS ($PODS) is less than NODES × DAEMONSETS ($((NODES * DAEMONSETS)))" >&2; exit 1; }
[ "$MATCHING" -ge 1 ] && [ "$MATCHING" -le "$SIDECARSETS" ] || { echo "MATCHING must be 1..SIDECARSETS" >&2; exit 1; }
clonesets=$(( (rest / 2 + REPLICAS - 1) / REPLICAS )) statefulsets=$(( (rest - rest / 2 + REPLICAS - 1) / REPLICAS ))

work=$(mktemp -d)
export KUBE_LOCAL=$work/kube-local KUBE_BIN=$shared/bin
export APISERVER_PORT=${APISERVER_PORT:-35443} ETCD_PORT=${ETCD_PORT:-35379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-35380}
webhook_port=${WEBHOOK_PORT:-35444} admin_port=${ADMIN_PORT:-35445}
NS=kruise-system BENCH=bench
pid="" kubelet_pid="" sampler=""
cleanup() {
  for p in $sampler $kubelet_pid $pid; do kill "$p" 2>/dev/null || true; done
  scale_status_watch_stop
  wait 2>/dev/null || true
  scale_apiserver_stop "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

scale_apiserver_start
api() { curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
requests_total() { api "$API/metrics" | awk '/^apiserver_request_total[{ ]/ {s += $NF} END {printf "%d", s}'; }

kubectl create namespace "$NS" >/dev/null
kubectl create namespace "$BENCH" >/dev/null
kubectl label namespace "$BENCH" scale.kruise.io/bench=yes >/dev/null
kubectl create namespace load >/dev/null

# --- the objects that need no controller: Nodes, the SidecarSets no pod matches, and the MATCHING that do:
# match-0 every CloneSet pod (the storm's SidecarSet, thousands of pods), match-i the pods of one workload each.
t0=$(now)
created=$(scale_nodes "$NODES" "$work/nodes")
echo "Nodes: $created of $NODES created in $(since "$t0") s"
[ "$created" = "$NODES" ] || { sort "$work/nodes/codes" | uniq -c | head -5; exit 1; }
t0=$(now)
scale_sidecarsets $((SIDECARSETS - MATCHING)) 4 "$work"
workloads=()
for i in $(seq 0 $((clonesets - 1))); do workloads+=("cloneset/cs-$i"); done
for i in $(seq 0 $((statefulsets - 1))); do workloads+=("statefulset/sts-$i"); done
for i in $(seq 0 $((DAEMONSETS - 1))); do workloads+=("daemonset/ds-$i"); done
for i in $(seq 0 $((MATCHING - 1))); do
  if [ "$i" = 0 ]; then selector='"scale.kruise.io/kind": "cloneset"'
  else selector="\"scale.kruise.io/workload\": \"${workloads[$(( (i - 1) % ${#workloads[@]} ))]#*/}\""; fi
  cat <<EOF
{"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "match-$i", "labels": {"scale.kruise.io/matching": "yes"}},
 "spec": {"selector": {"matchLabels": {$selector}},
          "namespaceSelector": {"matchLabels": {"scale.kruise.io/bench": "yes"}},
          "updateStrategy": {"maxUnavailable": "20%"},
          "containers": [{"name": "sidecar-$i", "image": "busybox:1.36"}]}}
EOF
done | kubectl create -f - >/dev/null
created=$(( $(cat "$work"/create-*.codes | grep -c '^201$' || true) + MATCHING ))
echo "SidecarSets: $created of $SIDECARSETS created in $(since "$t0") s ($MATCHING select workload pods)"

launch_serve() { # LOG
  "$binary" serve --kubeconfig "$KUBECONFIG" --cert-dir "$work/certs" --service-namespace "$NS" \
    --listen "127.0.0.1:$webhook_port" --admin-listen "127.0.0.1:$admin_port" --log-format json > "$1" 2>&1 &
  pid=$!
}
wait_ready() { # LOG
  local i
  for i in $(seq 1 3000); do
    curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { echo "serve exited; log tail:" >&2; tail -20 "$1" >&2; exit 1; }
    sleep 0.1
  done
  echo "serve not ready after 300 s" >&2; exit 1
}
stop_serve() {
  kill -TERM "$pid"
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# Every workload's and every matching SidecarSet's status current: prints "<kind> <name>" of each
# that is not, then "listed" once per kind whose list answered.
not_current_list() {
  kubectl get clonesets.v1alpha1.apps.kruise.io -n "$BENCH" -o json | jq -r '(.items[] | select(
    .status.observedGeneration != .metadata.generation or .status.updatedReplicas != .spec.replicas
    or .status.readyReplicas != .spec.replicas or .status.updatedReadyReplicas != .spec.replicas)
    | "CloneSet \(.metadata.name)"), "listed"'
  kubectl get statefulsets.v1beta1.apps.kruise.io -n "$BENCH" -o json | jq -r '(.items[] | select(
    .status.observedGeneration != .metadata.generation or .status.updatedReplicas != .spec.replicas
    or .status.readyReplicas != .spec.replicas or .status.currentRevision != .status.updateRevision)
    | "StatefulSet \(.metadata.name)"), "listed"'
  kubectl get daemonsets.v1beta1.apps.kruise.io -n "$BENCH" -o json | jq -r --argjson n "$NODES" '(.items[] | select(
    .status.observedGeneration != .metadata.generation or .status.desiredNumberScheduled != $n
    or .status.updatedNumberScheduled != $n or .status.numberReady != $n)
    | "DaemonSet \(.metadata.name)"), "listed"'
  kubectl get sidecarsets.v1beta1.apps.kruise.io -l scale.kruise.io/matching=yes -o json | jq -r '(.items[] | select(
    .status.observedGeneration != .metadata.generation or (.status.matchedPods // 0) == 0
    or .status.updatedPods != .status.matchedPods or .status.updatedReadyPods != .status.matchedPods)
    | "SidecarSet \(.metadata.name)"), "listed"'
}
# How many are not current (0 when all are; "?" when a list failed).
not_current() {
  not_current_list 2>/dev/null | awk '$0 == "listed" {n++; next} {s++} END {print (n == 4 ? s + 0 : "?")}'
}
until_current() { # prints the seconds it took, or "never (N left)"
  local t0 left deadline=$((SECONDS + CONVERGE_SECS))
  t0=$(now)
  while :; do
    left=$(not_current 2>/dev/null || echo "?")
    [ "$left" = 0 ] && { since "$t0"; return; }
    if [ $SECONDS -ge $deadline ]; then
      echo "never ($left left after $CONVERGE_SECS s: $(not_current_list 2>/dev/null | grep -v '^listed$' | head -5 | paste -sd, -))"
      return
    fi
    kill -0 "$pid" 2>/dev/null || { echo "never (serve exited)"; return; }
    sleep 2
  done
}
# --- the layout: a first serve, the webhooks registered by URL (every pod created is injected), the workloads.
t0=$(now)
launch_serve "$work/serve-layout.log"
wait_ready "$work/serve-layout.log"
kubectl create --dry-run=client -o json -f deploy/webhooks.yaml \
  | jq -s --arg base "https://127.0.0.1:$webhook_port" --arg ca "$(base64 -w0 < "$work/certs/ca.crt")" \
      '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
        | .webhooks[] |= (.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
  | kubectl apply -f - >/dev/null
"$kubelet" --namespace "$BENCH" --nodes "$NODES" --concurrency "${KUBELET_CONCURRENCY:-64}" \
  > "$work/kubelet.log" 2>&1 &
kubelet_pid=$!
sleep 2 # the apiserver picks webhook configurations up asynchronously
template() { # KIND NAME
  printf '{"metadata": {"labels": {"app": "%s", "scale.kruise.io/kind": "%s", "scale.kruise.io/workload": "%s"}},
    "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]' "$2" "$1" "$2"
  # The StatefulSet's validation asks for the gate in-place updates use.
  [ "$1" = statefulset ] && printf ', "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]'
  [ "$1" = daemonset ] && printf ', "tolerations": [{"operator": "Exists"}]'
  printf '}}'
}
for w in "${workloads[@]}"; do
  kind=${w%/*} name=${w#*/}
  case $kind in
    cloneset) cat <<EOF ;;
{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "$name", "namespace": "$BENCH"},
 "spec": {"replicas": $REPLICAS, "selector": {"matchLabels": {"app": "$name"}}, "template": $(template "$kind" "$name"),
          "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"}}}
EOF
    statefulset) cat <<EOF ;;
{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": {"name": "$name", "namespace": "$BENCH"},
 "spec": {"replicas": $REPLICAS, "serviceName": "$name", "podManagementPolicy": "Parallel",
          "selector": {"matchLabels": {"app": "$name"}}, "template": $(template "$kind" "$name"),
          "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                    "resources": {"requests": {"storage": "1Gi"}}}}],
          "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible",
                                                                          "maxUnavailable": "20%"}}}}
EOF
    daemonset) cat <<EOF ;;
{"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "metadata": {"name": "$name", "namespace": "$BENCH"},
 "spec": {"selector": {"matchLabels": {"app": "$name"}}, "template": $(template "$kind" "$name"),
          "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "20%"}}}}
EOF
  esac
done | kubectl create -f - >/dev/null
echo "workloads: $clonesets CloneSets and $statefulsets StatefulSets of $REPLICAS, $DAEMONSETS DaemonSets over $NODES Nodes"
layout=$(until_current)
pods=$(kubectl get pods -n "$BENCH" --no-headers 2>/dev/null | wc -l)
claims=$(kubectl get pvc -n "$BENCH" --no-headers 2>/dev/null | wc -l)
echo "layout current after $layout s ($pods pods, $claims claims; $(since "$t0") s with the first serve's start)"
stop_serve

# --- the measured serve, over everything at once; samples of fds, RSS, the Lease and CPU every second. Every
# SidecarSet's status followed from before it starts (scale_status_watch): the first serve may have stopped
# before it wrote those of the sets no pod matches, and the idle window starts only once all are current.
api "$API/apis/apps.kruise.io/v1beta1/sidecarsets?resourceVersion=0" > "$work/sidecarsets.json"
scale_status_watch "$work/sidecarsets.json" "$work"
rm "$work/sidecarsets.json"
t0=$(now)
apiserver_pid=$(cat "$KUBE_LOCAL/run/kube-apiserver.pid")
launch_serve "$work/serve.log"
scale_sampler "$pid" "$apiserver_pid" "$NS" > "$work/samples" &
sampler=$!
wait_ready "$work/serve.log"
ready=$(since "$t0")
echo "ready after $ready s"
settled=$(until_current)
echo "workload and matching SidecarSet statuses current after the restart: $settled s"
read -r sets_current sets_total sets_at < <(scale_statuses_current "$work" "$CONVERGE_SECS" "$pid")
scale_status_watch_stop
if [ "$sets_at" != - ]; then
  every_set="all $sets_total, $(awk -v a="$t0" -v b="$sets_at" 'BEGIN {printf "%.1f", b - a}') s after the start"
  idle_after="after convergence"
else
  every_set="$sets_current of $sets_total after the wait of $CONVERGE_SECS s"
  idle_after="statuses NOT converged: $sets_current of $sets_total SidecarSets current"
fi
echo "every SidecarSet's status current: $every_set"

# --- idle, once every status is current
cpu0=$(cpu_seconds "$pid") requests0=$(requests_total)
sleep "$IDLE_SECS"
idle_m=$(awk -v a="$cpu0" -v b="$(cpu_seconds "$pid")" -v s="$IDLE_SECS" 'BEGIN {printf "%.1f", (b - a) / s * 1000}')
idle_requests=$(( $(requests_total) - requests0 ))
rss_settled=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
mkdir "$work/idle"
read -r idle_answered idle_p50 idle_p99 < <(mutate_pod_latency "$REQUESTS" "$webhook_port" "$work/certs/ca.crt" "$work/idle")
echo "idle $IDLE_SECS s ($idle_after): CPU $idle_m m, $idle_requests apiserver requests, RSS $rss_settled MiB;" \
  "/mutate-pod p50 $idle_p50 ms p99 $idle_p99 ms ($idle_answered of $REQUESTS)"

# --- the storm: every workload's image and match-0's at once, pods created beside it, reviews timed.
requests0=$(requests_total)
t0=$(now)
# Each kind at the version it was created in: no conversion (the CRDs' conversion webhook names a Service).
version() { case $1 in cloneset) echo v1alpha1 ;; *) echo v1beta1 ;; esac; }
for w in "${workloads[@]}"; do echo "${w%/*}s.$(version "${w%/*}").apps.kruise.io/${w#*/}"; done \
  | xargs -P 8 -I{} kubectl patch -n "$BENCH" {} --type=json \
    -p '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.37"}]' >/dev/null
kubectl patch sidecarsets.v1beta1.apps.kruise.io match-0 --type=json \
  -p '[{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox:1.37"}]' >/dev/null
echo "storm: ${#workloads[@]} workloads and match-0 changed in $(since "$t0") s"
awk -v n="$LOAD_PODS" -v api="$API" -v p="$P" 'BEGIN {
  for (i = 0; i < n; i++) {
    printf "url = \"%s/api/v1/namespaces/load/pods\"\n", api
    printf "cacert = \"%s/ca.crt\"\ncert = \"%s/admin.crt\"\nkey = \"%s/admin.key\"\n", p, p, p
    printf "header = \"Content-Type: application/json\"\noutput = \"/dev/null\"\nwrite-out = \"%%{http_code}\\n\"\n"
    printf "data-binary = \"{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Pod\\\",\\\"metadata\\\":{\\\"name\\\":\\\"load-%d\\\",\\\"labels\\\":{\\\"app\\\":\\\"load\\\"}},\\\"spec\\\":{\\\"containers\\\":[{\\\"name\\\":\\\"main\\\",\\\"image\\\":\\\"busybox:1.36\\\"}]}}\"\n", i
    if (i + 1 < n) print "next"
  }
}' > "$work/load.conf"
curl -sS --parallel --parallel-max 8 --http2 -K "$work/load.conf" > "$work/load.codes" 2>/dev/null &
load=$!
mkdir "$work/storm"
read -r storm_answered storm_p50 storm_p99 < <(mutate_pod_latency "$REQUESTS" "$webhook_port" "$work/certs/ca.crt" "$work/storm")
wait "$load" || true
loaded=$(grep -c '^201$' "$work/load.codes" || true)
storm=$(until_current)
storm_total=$(since "$t0")
storm_requests=$(( $(requests_total) - requests0 ))
echo "storm: statuses current after $storm s ($storm_total s from the first change); $storm_requests apiserver requests;" \
  "/mutate-pod p50 $storm_p50 ms p99 $storm_p99 ms ($storm_answered of $REQUESTS) beside $loaded of $LOAD_PODS pods created"

kill "$sampler" 2>/dev/null || true
sampler=""
read -r fds gap < <(awk '{ if ($2 > fds) fds = $2
    if ($5 != "-") { if (last != "" && $5 != last && $5 - last > gap) gap = $5 - last; last = $5 } }
  END { printf "%d %.1f\n", fds, gap }' "$work/samples")
hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
stop_serve

# --- the table
row() { printf '%-44s %-34s %s\n' "$@"; }
echo
echo "layout: $NODES Nodes, $pods pods ($clonesets CloneSets, $statefulsets StatefulSets of $REPLICAS; $DAEMONSETS DaemonSets), $SIDECARSETS SidecarSets ($MATCHING matching)"
row figure measured target
row "time to ready" "$ready s" "≤ 30 s"
row "peak RSS (VmHWM)" "$hwm MiB" "≤ 1024 MiB"
row "settled RSS (VmRSS after convergence)" "$rss_settled MiB" "≤ 1024 MiB"
row "open files (peak)" "$fds" "≤ 1000"
row "largest Lease renewal gap" "$gap s" "≤ 10 s"
row "every SidecarSet's status current" "$every_set" "all current"
row "idle CPU over $IDLE_SECS s" "$idle_m m" "≤ 10 m"
row "/mutate-pod p50 / p99 idle" "$idle_p50 / $idle_p99 ms" "p99 ≤ 2 ms"
row "/mutate-pod p50 / p99 in the storm" "$storm_p50 / $storm_p99 ms" "p99 ≤ 2 ms"
row "statuses current after the storm" "$storm s" "all current"
row "apiserver requests during the storm" "$storm_requests" "(reported)"
