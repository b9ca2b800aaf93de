#!/usr/bin/env bash
# The SidecarSet scale check (issue 36): N SidecarSets created straight through the local
# kube-apiserver (the e2e harness), then `serve --kubeconfig` with its controllers, measured as a
# user would see it. Reports:
# - time from start to /readyz 200 (catalogue listed and published);
# - peak open file descriptors and RSS of the webhook, and the apiserver's peak RSS;
# - Lease renewal: the largest age of spec.renewTime seen, and the largest gap between renewals;
# - status convergence: how many SidecarSets have status.observedGeneration == generation,
#   and when all did (or after CONVERGE_SECS, how many), counted from a watch of the SidecarSets
#   started before `serve` (listing 50,000 objects every few seconds instead cost the apiserver
#   more CPU than the status writes it measured), then confirmed by one list;
# - /mutate-pod latency (p50/p99 of REQUESTS reviews of a pod no SidecarSet matches, on one
#   keep-alive connection, curl's time_total - time_pretransfer);
# - one pod that SHARED (100) further SidecarSets select, each injecting its own container: the
#   entries of its SidecarSetUpgradable condition (one per set; lost = SHARED - entries);
# - once every status is current (and the shared pod's entries are in): the CPU seconds of the
#   webhook and the apiserver over IDLE_SECS with nothing changing, then /mutate-pod again;
# - SIGTERM: seconds until the process exits (with its default --shutdown-delay);
# - a restart: time to ready again, and the SidecarSet reconciles and controller requests of its
#   first RESTART_SECS (statuses already current: no writes);
# - CPU seconds of the webhook and the apiserver while the first process ran.
# Run by hand, holding the machine-wide lock (it starts etcd and the apiserver on fixed ports):
#   flock /tmp/kruise-e2e.lock scripts/scale-sidecarsets.sh
# Env: N (50000), SHARED (100), BINARY (target/release/kruise-webhook; build it first), CONVERGE_SECS (300; 0
#      skips the wait, e.g. with SERVE_ARGS=--no-controller),
#      RESTART_SECS (30; 0 skips the restart), IDLE_SECS (60; 0 skips the idle figures), REQUESTS (2000), PARALLEL (4 curl processes creating the SidecarSets), SERVE_ARGS (extra
#      flags for serve), KEEP=1 leaves the work directory (logs, samples) in place.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-50000} SHARED=${SHARED:-100} CONVERGE_SECS=${CONVERGE_SECS:-300} RESTART_SECS=${RESTART_SECS:-30} IDLE_SECS=${IDLE_SECS:-60} REQUESTS=${REQUESTS:-2000} PARALLEL=${PARALLEL:-4}
export KUBE_LOCAL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
export APISERVER_PORT=${APISERVER_PORT:-16443} ETCD_PORT=${ETCD_PORT:-12379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
webhook_port=${E2E_WEBHOOK_PORT:-19443} admin_port=${E2E_ADMIN_PORT:-19090}
binary=${BINARY:-target/release/kruise-webhook}
[ -x "$binary" ] || { echo "no $binary: cargo build --release first (or set BINARY)" >&2; exit 1; }
NS=kruise-system

scripts/kube-local/stop.sh >/dev/null 2>&1 || true
FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
export KUBECONFIG=$KUBE_LOCAL/kubeconfig
P=$KUBE_LOCAL/pki
API=https://127.0.0.1:$APISERVER_PORT
# shellcheck source=scripts/lib/scale.sh
. scripts/lib/scale.sh
work=$(mktemp -d) pid= sampler=
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  scale_status_watch_stop
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] && echo "work directory: $work" || rm -rf "$work"
}
trap cleanup EXIT
api() { curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

kubectl kustomize deploy/crds/ | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
kubectl create namespace "$NS" >/dev/null
kubectl create namespace bench >/dev/null

# --- N SidecarSets through the apiserver: PARALLEL curl processes, each multiplexing its share
# over HTTP/2. Each set selects its own app label, all inject a container of the same name (the
# conflict check's worst case for a name index: every set shares it).
started=$(now)
scale_sidecarsets "$N" "$PARALLEL" "$work"
# SHARED sets selecting one pod, each with its own container (no conflict among them), and that
# pod, created straight through the apiserver (no webhook registered, no node) as if all of them
# had injected it, but with no hash of theirs (the sets carry hashes as the SidecarSet webhook
# would have set them: without, a pod counts as updated): each set records itself as not upgradable in the
# pod's SidecarSetUpgradable condition, all at about the same time.
awk -v n="$SHARED" -v api="$API" -v p="$P" 'BEGIN {
  for (i = 0; i < n; i++) {
    printf "url = \"%s/apis/apps.kruise.io/v1beta1/sidecarsets\"\n", api
    printf "cacert = \"%s/ca.crt\"\ncert = \"%s/admin.crt\"\nkey = \"%s/admin.key\"\n", p, p, p
    printf "header = \"Content-Type: application/json\"\noutput = \"/dev/null\"\nwrite-out = \"%%{http_code}\\n\"\n"
    printf "data-binary = \"{\\\"apiVersion\\\":\\\"apps.kruise.io/v1beta1\\\",\\\"kind\\\":\\\"SidecarSet\\\",\\\"metadata\\\":{\\\"name\\\":\\\"shared-%d\\\",\\\"annotations\\\":{\\\"kruise.io/sidecarset-hash\\\":\\\"h\\\",\\\"kruise.io/sidecarset-hash-without-image\\\":\\\"h\\\"}},\\\"spec\\\":{\\\"selector\\\":{\\\"matchLabels\\\":{\\\"app\\\":\\\"shared\\\"}},\\\"containers\\\":[{\\\"name\\\":\\\"shared-%d\\\",\\\"image\\\":\\\"busybox:1.36\\\"}]}}\"\n", i, i
    if (i + 1 < n) print "next"
  }
}' > "$work/create-shared.conf"
[ "$SHARED" -gt 0 ] && curl -sS --parallel --parallel-max 16 --http2 -K "$work/create-shared.conf" > "$work/create-shared.codes" 2>&1
created=$(cat "$work"/create-*.codes | grep -c '^201$' || true)
echo "created $created of $((N + SHARED)) SidecarSets in $(since "$started") s"
if [ "$SHARED" -gt 0 ]; then
  jq -n --argjson n "$SHARED" '[range($n) | "shared-\(.)"] as $sets | {apiVersion: "v1", kind: "Pod",
      metadata: {name: "shared", labels: {app: "shared"},
                 annotations: {"kruise.io/sidecarset-injected-list": ($sets | join(","))}},
      spec: {containers: ([{name: "app", image: "busybox:1.36"}] + [$sets[] | {name: ., image: "busybox:1.36"}])}}' \
    | api -X POST -H 'Content-Type: application/json' "$API/api/v1/namespaces/bench/pods" -d @- >/dev/null
fi

# --- the floor under the time to ready: the apiserver's own paged list of every SidecarSet, 500
# a page as the watcher asks, read by curl and thrown away.
listed_in=$(now) continue_token= pages=0
while :; do
  page=$(api "$API/apis/apps.kruise.io/v1beta1/sidecarsets?limit=500${continue_token:+&continue=$continue_token}" \
    | jq -r '.metadata.continue // ""') || break
  pages=$((pages + 1))
  [ -z "$page" ] && break
  continue_token=$(jq -rn --arg t "$page" '$t | @uri')
done
echo "the apiserver's paged list alone: $pages pages in $(since "$listed_in") s"
# --- and the same from its watch cache (resourceVersion=0: one answer, no paging on 1.20), as
# the webhook lists.
listed_in=$(now)
api "$API/apis/apps.kruise.io/v1beta1/sidecarsets?resourceVersion=0" > "$work/listed.json"
echo "the apiserver's list from its watch cache alone: $(wc -c < "$work/listed.json") bytes in $(since "$listed_in") s"

# --- every status written from now on, as a watch from that list sees it (scale_status_watch).
scale_status_watch "$work/listed.json" "$work"
rm "$work/listed.json"

# --- the webhook with its controllers; samples of fds, RSS and the Lease every second.
started=$(now)
"$binary" serve --kubeconfig "$KUBECONFIG" --cert-dir "$work/certs" --service-namespace "$NS" \
  --listen "127.0.0.1:$webhook_port" --admin-listen "127.0.0.1:$admin_port" --log-format json \
  ${SERVE_ARGS:-} > "$work/serve.log" 2>&1 &
pid=$!
apiserver_pid=$(cat "$KUBE_LOCAL/run/kube-apiserver.pid")
scale_sampler "$pid" "$apiserver_pid" "$NS" > "$work/samples" &
sampler=$!
ready=
for _ in $(seq 1 6000); do
  if curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1; then ready=$(since "$started"); break; fi
  kill -0 "$pid" 2>/dev/null || { echo "serve exited; log tail:" >&2; tail -20 "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done
echo "ready after ${ready:-never} s"

# --- admission: a pod no SidecarSet matches, REQUESTS reviews on one keep-alive connection.
admission() { # LABEL: REQUESTS reviews, their p50 and p99
  local answered p50 p99
  read -r answered p50 p99 < <(mutate_pod_latency "$REQUESTS" "$webhook_port" "$work/certs/ca.crt" "$work")
  echo "/mutate-pod, a pod no set matches$1 ($answered of $REQUESTS answered 200): p50 $p50 ms, p99 $p99 ms"
}
admission ""

# --- status convergence: every SidecarSet's status observed at its generation, as the watch
# started before `serve` saw it.
converged_at= current=unknown total=$(cat "$work/total")
if [ "$CONVERGE_SECS" -gt 0 ]; then
  read -r current total at < <(scale_statuses_current "$work" "$CONVERGE_SECS" "$pid")
  [ "$at" != - ] && converged_at=$(awk -v a="$started" -v b="$at" 'BEGIN {printf "%.1f", b - a}')
fi
scale_status_watch_stop
if [ -n "$converged_at" ]; then
  echo "status current: all $total SidecarSets, $converged_at s from start"
else
  echo "status current: $current of $total SidecarSets when the wait of $CONVERGE_SECS s ended ($(since "$started") s from start)"
fi

# --- the shared pod: one condition entry per set that selects it.
condition_entries() {
  local count
  count=$(api "$API/api/v1/namespaces/bench/pods/shared" 2>/dev/null \
    | jq '[.status.conditions[]? | select(.type == "SidecarSetUpgradable") | .message | fromjson | keys[]
           | select(startswith("shared-"))] | length' 2>/dev/null || true)
  echo "${count:-0}"
}
if [ "$SHARED" -gt 0 ]; then
  entries=0 deadline=$(( $(date +%s) + ${SHARED_SECS:-120} ))
  while kill -0 "$pid" 2>/dev/null; do
    entries=$(condition_entries)
    [ "$entries" -ge "$SHARED" ] || [ "$(date +%s)" -ge "$deadline" ] && break
    sleep 2
  done
  echo "shared pod: $entries of $SHARED condition entries ($((SHARED - entries)) lost or not yet written, $(since "$started") s from start)"
fi

# --- idle: nothing changes any more (if the statuses converged); what the webhook and the
# apiserver spend meanwhile, and admission with the controllers idle.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
if [ "$IDLE_SECS" -gt 0 ] && kill -0 "$pid" 2>/dev/null; then
  hz=$(getconf CLK_TCK) webhook_idle=$(cpu_ticks "$pid") apiserver_idle=$(cpu_ticks "$apiserver_pid")
  sleep "$IDLE_SECS"
  awk -v w="$(( $(cpu_ticks "$pid") - webhook_idle ))" -v a="$(( $(cpu_ticks "$apiserver_pid") - apiserver_idle ))" \
      -v hz="$hz" -v s="$IDLE_SECS" -v c="${converged_at:-}" 'BEGIN {
    printf "idle %d s (%s): webhook %.2f CPU s (%.1f m), apiserver %.2f CPU s (%.1f m)\n", s,
      (c == "" ? "statuses NOT converged" : "after convergence"), w / hz, w / hz / s * 1000, a / hz, a / hz / s * 1000 }'
  admission " (controllers idle)"
fi

# --- SIGTERM
terminated=$(now)
kill -TERM "$pid"
exited=
for _ in $(seq 1 1200); do
  kill -0 "$pid" 2>/dev/null || { exited=$(since "$terminated"); break; }
  sleep 0.1
done
echo "SIGTERM: exited after ${exited:-more than 120 (killed)} s"
[ -z "$exited" ] && kill -9 "$pid" 2>/dev/null
pid=
kill "$sampler" 2>/dev/null || true
sampler=

# --- a restart: every status written above is current (if the convergence was reached), so the
# second process should list, reconcile every set and write nothing. Time to ready again, and
# what the controllers asked of the apiserver in RESTART_SECS.
if [ "$RESTART_SECS" -gt 0 ]; then
  started=$(now)
  "$binary" serve --kubeconfig "$KUBECONFIG" --cert-dir "$work/certs" --service-namespace "$NS" \
    --listen "127.0.0.1:$webhook_port" --admin-listen "127.0.0.1:$admin_port" --log-format json \
    ${SERVE_ARGS:-} > "$work/serve-restart.log" 2>&1 &
  pid=$!
  ready=
  for _ in $(seq 1 6000); do
    if curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1; then ready=$(since "$started"); break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  sleep "$RESTART_SECS"
  metrics=$(curl -fsS "http://127.0.0.1:$admin_port/metrics" 2>/dev/null || true)
  metric() { awk -v m="$1" '$1 == m {print $2; f = 1} END {if (!f) print 0}' <<<"$metrics"; }
  echo "restart: ready after ${ready:-never} s; in the first $RESTART_SECS s after ready:" \
    "$(metric 'kruise_webhook_controller_reconciles_total{controller="sidecarset-controller"}') SidecarSet reconciles," \
    "$(metric kruise_webhook_controller_api_wait_seconds_count) controller requests to the apiserver"
  kill -TERM "$pid"
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  pid=
fi

# --- the samples
awk '
  { if ($2 > fds) fds = $2; if ($3 > rss) rss = $3; if ($4 > api) api = $4
    if ($5 != "-") { age = $1 - $5; if (age > max_age) max_age = age
                     if (last != "" && $5 != last && $5 - last > gap) gap = $5 - last; last = $5 }
    if ($6 > cpu) cpu = $6; if (first_api == "") first_api = $7; if ($7 > api_cpu) api_cpu = $7 }
  END { printf "peak open fds %d; peak RSS %.0f MiB (apiserver %.0f MiB)\n", fds, rss / 1024, api / 1024
        printf "CPU while serve ran: webhook %.1f s, apiserver %.1f s\n", cpu, api_cpu - first_api
        if (last == "") print "Lease: never held"
        else printf "Lease: renewTime at most %.1f s old when sampled; largest gap between renewals %.1f s\n", max_age, gap }
' "$work/samples"
echo "log lines: $(wc -l < "$work/serve.log"); warnings/errors: $(grep -c '"level":"\(WARN\|ERROR\)"' "$work/serve.log" || true)"
