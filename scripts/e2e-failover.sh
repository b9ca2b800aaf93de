#!/usr/bin/env bash
# Fault injection against the controllers (`kruise-webhook serve` replicas, every controller on) on a
# real kube-apiserver that this script starts, stops and restarts (ports APISERVER_PORT 17443 /
# ETCD_PORT 17379 / ETCD_PEER_PORT 17380; replicas' ports 175xx and 176xx). It ignores KUBECONFIG:
# it must own the apiserver it restarts.
#
#   outage  the apiserver alone (etcd kept) stopped, down OUTAGE_SECONDS (30), started again; twice
#           with one replica, twice with two. After each: exactly one replica leads within the
#           Lease's duration (15 s) of the apiserver being ready, and stays the only one; a
#           template change made then rolls to completion in place.
#   kills   two replicas; during an in-place rollout over 6 pods (maxUnavailable 1) the leader is
#           stopped every few seconds, by SIGTERM and SIGKILL in turn, and a new replica started
#           each time: the rollout finishes, no pod is recreated, never more than 1 pod is
#           unavailable in any version the apiserver stored, and each pod is updated once.
#   writers the apiserver's audit log over the whole run (scripts/lib/one_writer.py): every write of
#           a replica was received while that replica had last written the Lease: one writer at a
#           time, across restarts, hand-overs and kills.
#
# There is no kubelet: the stand-in of scripts/lib/controller-e2e.sh binds pods and writes their
# status. E2E_FAILOVER_PHASES (default "outage kills") selects the phases; writers always runs.
# E2E_FAILOVER_LOGS=DIR keeps the replicas' logs, the watches and the audit log.
set -euo pipefail
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
# Its own apiserver on its own ports, whatever a calling script (scripts/e2e.sh) exported.
unset KUBECONFIG APISERVER_PORT ETCD_PORT ETCD_PEER_PORT E2E_AUDIT_LOG
OUTAGE_SECONDS=${OUTAGE_SECONDS:-30}
phases=${E2E_FAILOVER_PHASES:-outage kills}
# The controller's Lease (src/controller/leader.rs): 15 s, renewed every 2 s, renew deadline 10 s.
LEASE_SECONDS=15
# shellcheck source=scripts/lib/controller-e2e.sh
. scripts/lib/controller-e2e.sh
NS=e2e-failover
e2e_begin e2e-failover 17443 17379 17380 "${E2E_FAILOVER_LOGS:-}"
# The harness's audit log (every request of kruise-system's ServiceAccounts, appended across the
# apiserver's restarts): the replicas run as deploy/'s kruise-system/kruise-webhook.
audit_log=$KUBE_LOCAL/logs/audit.log
# Each restart's warm-up span (identity_warmup_since, scripts/lib/identity.sh).
export IDENTITY_WARMUP=$tmp/warmup
: >"$IDENTITY_WARMUP"
e2e_cleanup_failover() {
  for name in "${!rep_pid[@]}"; do kill -9 "${rep_pid[$name]}" 2>/dev/null || true; done
  [ -z "${E2E_FAILOVER_LOGS:-}" ] || { mkdir -p "$E2E_FAILOVER_LOGS"; cp "$audit_log" "$E2E_FAILOVER_LOGS/" 2>/dev/null || true; }
}
# e2e_finish reads the script's exit status: hand it on past the cleanup.
trap 'status=$?; set +e; e2e_cleanup_failover; (exit $status); e2e_finish' EXIT

# --- replicas ---------------------------------------------------------------------------------
declare -A rep_pid=() rep_admin=()
rep_n=0
# start_replica NAME: a `serve` replica (identity NAME_<random>), its log $tmp/ctl-NAME.log.
start_replica() {
  rep_n=$((rep_n + 1))
  local port=$((17500 + rep_n)) admin=$((17600 + rep_n))
  POD_NAME=$1 KRUISE_WEBHOOK_LOG=${E2E_FAILOVER_RUST_LOG:-info} "$BIN" serve --kubeconfig "$CTL_KUBECONFIG" \
    --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" --cert-dir "$tmp/certs-$1" \
    --service-namespace "$NS" > "$tmp/ctl-$1.log" 2>&1 &
  rep_pid[$1]=$!
  rep_admin[$1]=$admin
}
# stop_replica NAME SIGNAL
stop_replica() {
  kill "-$2" "${rep_pid[$1]}" 2>/dev/null || true
  wait "${rep_pid[$1]}" 2>/dev/null || true
  unset "rep_pid[$1]" "rep_admin[$1]"
}
# The replicas whose controllers run (kruise_webhook_controller_leading 1), by name. A replica busy
# relisting after an outage may answer slowly: each is asked up to three times.
leaders() {
  local name metrics
  for name in "${!rep_admin[@]}"; do
    metrics=$(curl -fsS -m 5 --retry 2 --retry-all-errors "http://127.0.0.1:${rep_admin[$name]}/metrics" 2>/dev/null) || metrics=""
    if grep -qx 'kruise_webhook_controller_leading 1' <<<"$metrics"; then echo "$name"; fi
  done | sort | tr '\n' ' '
}
lease_holder() { kubectl get lease -n "$NS" kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

# --- the apiserver ----------------------------------------------------------------------------
apiserver_ready() {
  kubectl get --raw /readyz >/dev/null 2>&1
}
# outage: stops the apiserver (etcd runs on), waits OUTAGE_SECONDS, starts it; sets ready_at.
outage() {
  local pid
  pid=$(cat "$KUBE_LOCAL/run/kube-apiserver.pid")
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  sleep "$OUTAGE_SECONDS"
  local started_ms
  started_ms=$(now_ms)
  APISERVER_ONLY=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
  ready_ms=$(now_ms)
  # Its RBAC caches fill in the first seconds: what it forbids then is not the identity's fault.
  identity_warmup_since "$started_ms"
}
now_ms() { date +%s%3N; }

# --- the workload -----------------------------------------------------------------------------
cloneset() { # NAME REPLICAS IMAGE MAX_UNAVAILABLE
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers: [{name: main, image: $3}]
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: $4}
EOF
}
live_pods() { kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c '[.items[] | select(.metadata.deletionTimestamp == null)]'; }
uids() { live_pods "$1" | jq -c 'map(.metadata.uid) | sort'; }
# rolled NAME N IMAGE: N pods all on IMAGE and ready, status [N,N,N,N] of the latest generation,
# currentRevision == updateRevision.
rolled() {
  [ "$(live_pods "$1" | jq --arg i "$3" '[.[] | select(.spec.containers[0].image == $i)] | length')" = "$2" ] \
    && kubectl get cloneset -n "$NS" "$1" -o json | jq -e --argjson n "$2" '
      (.status | [.replicas, .readyReplicas, .updatedReplicas, .updatedReadyReplicas]) == [$n, $n, $n, $n]
      and .status.observedGeneration == .metadata.generation
      and .status.currentRevision == .status.updateRevision' >/dev/null
}
ROLLED="$(declare -f live_pods rolled); NS=$NS"

# --- setup ------------------------------------------------------------------------------------
apply_crds deploy/crds/
e2e_namespace
start_replica fo-a
cloneset web 4 example.com/web:v0 1 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "setup: one replica leads and makes the CloneSet's 4 pods" bash -c "$ROLLED; rolled web 4 example.com/web:v0"

# --- outage: twice with one replica, twice with two -------------------------------------------
# after_outage N: exactly one leader within the Lease's duration of the apiserver being ready, the
# only one 4 s later, holding the Lease; then image vN rolls to every pod in place.
after_outage() {
  local n=$1 who="" took held
  until who=$(leaders); [ "$(wc -w <<<"$who")" = 1 ] && [[ "$(lease_holder)" == "${who% }"_* ]] \
      || [ $(($(now_ms) - ready_ms)) -gt $(((LEASE_SECONDS + 5) * 1000)) ]; do
    sleep 0.2
  done
  took=$(($(now_ms) - ready_ms))
  check "outage $n: one replica (${who% }) leads $((took / 1000)).$((took % 1000 / 100)) s after the apiserver is ready (≤ ${LEASE_SECONDS} s)" \
    test "$(wc -w <<<"$who")" = 1 -a "$took" -le $((LEASE_SECONDS * 1000))
  sleep 4
  held=$(leaders)
  check "outage $n: still exactly one leader 4 s later (${held% })" test "$held" = "$who"
  local before
  before=$(uids web)
  cloneset web 4 "example.com/web:v$n" 1 | kubectl apply -n "$NS" -f - >/dev/null
  until_kubelet 90 "outage $n: a template change made then rolls to every pod (v$n)" bash -c "$ROLLED; rolled web 4 example.com/web:v$n"
  check "outage $n: in place (same pods)" test "$(uids web)" = "$before"
}
if [[ $phases == *outage* ]]; then
for n in 1 2; do
  outage
  echo "     (apiserver down ${OUTAGE_SECONDS} s, ready again; one replica running)"
  after_outage "$n"
done
fi
start_replica fo-b
wait_for 20 "a second replica starts and follows" bash -c "curl -fsS http://127.0.0.1:${rep_admin[fo-b]}/readyz"
if [[ $phases == *outage* ]]; then
for n in 3 4; do
  outage
  echo "     (apiserver down ${OUTAGE_SECONDS} s, ready again; two replicas running)"
  after_outage "$n"
done
fi

# --- kills: the leader stopped every few seconds during an in-place rollout -------------------
if [[ $phases == *kills* ]]; then
# One pod at a time (maxUnavailable 1), the stand-in kubelet every 1.5 s: each pod takes a few
# seconds, so the stops fall in the middle of the rollout.
cloneset kp 6 example.com/kp:v1 1 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "kills: 6 pods" bash -c "$ROLLED; rolled kp 6 example.com/kp:v1"
kp_uids=$(uids kp)
kubectl get pods -n "$NS" -l app=kp -w --output-watch-events -o json > "$tmp/kp.watch" 2>/dev/null &
watch_pids="$watch_pids $!"
until [ "$(jq -s length "$tmp/kp.watch" 2>/dev/null || echo 0)" -ge 6 ]; do sleep 0.1; done
cloneset kp 6 example.com/kp:v2 1 | kubectl apply -n "$NS" -f - >/dev/null
kills_started=$SECONDS
signals=(TERM TERM KILL TERM KILL TERM)
kills=0 next_kill=$((SECONDS + 1)) replicas_started=2 deadline=$((SECONDS + 240))
until rolled kp 6 example.com/kp:v2 || [ $SECONDS -ge $deadline ]; do
  kubelet_pass
  if [ $kills -lt ${#signals[@]} ] && [ $SECONDS -ge $next_kill ]; then
    leader=$(leaders)
    if [ -n "$leader" ]; then
      stop_replica "${leader% }" "${signals[$kills]}"
      echo "     (SIG${signals[$kills]} to the leader ${leader% } at +$((SECONDS - kills_started)) s)"
      kills=$((kills + 1))
      replicas_started=$((replicas_started + 1))
      start_replica "fo-$replicas_started"
      next_kill=$((SECONDS + 3))
    fi
  fi
  sleep 1.5
done
echo "     (rollout over $((SECONDS - kills_started)) s)"
check "kills: the rollout finishes after ${kills} leader stops (TERM and KILL)" \
  bash -c "$ROLLED; rolled kp 6 example.com/kp:v2 && [ $kills -ge 3 ]"
check "kills: no pod recreated (same uids)" test "$(uids kp)" = "$kp_uids"
watched_kp() { jq -sc '[.[] | .type as $t | .object + {watchType: $t}]' "$tmp/kp.watch"; }
JQ_COND='def cond($t): ([.status.conditions[]? | select(.type == $t) | .status][0] // "");'
most=$(watched_kp | jq "$JQ_COND"' reduce .[] as $p ({now: {}, most: 0};
    .now[$p.metadata.name] = ((($p | cond("Ready")) != "True") or (($p | cond("InPlaceUpdateReady")) != "True"))
    | .most = ([.most, ([.now[] | select(.)] | length)] | max)) | .most')
check "kills: never more than maxUnavailable 1 pod unavailable in any stored version (most: $most)" test "$most" -le 1
starts=$(watched_kp | jq -c "$JQ_COND"' group_by(.metadata.name) | map(map(cond("InPlaceUpdateReady")) as $g
  | [range(1; $g | length) | select($g[. - 1] == "True" and $g[.] == "False")] | length)')
check "kills: each pod updated once ($starts)" test "$starts" = "[1,1,1,1,1,1]"
fi

# --- writers: one at a time over the whole run ------------------------------------------------
writers=$(python3 scripts/lib/one_writer.py "$audit_log" "$NS" kruise-webhook-controller) && ok=0 || ok=1
echo "$writers" | sed 's/^/     /'
check "writers: every write of a replica made while it held the Lease (apiserver audit log)" test "$ok" = 0
