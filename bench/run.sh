#!/usr/bin/env bash
# Admission benchmark: the same release binary serves /mutate-pod (injection, 1 of 10 SidecarSets
# matching a ~4.9 KB pod review) and /baseline-allow (decode the review, allow it), over the same
# TLS stack; the floor webhook (bench/floor-webhook.rs: the review parsed into a serde_json::Value,
# uid echoed, allowed) runs beside it on its own port. wrk drives HTTP/1.1 keep-alive on loopback.
# Prints throughput ratios, p99 latency and the server's resident memory after the run. Bounded:
# every wrk run lasts DURATION seconds, and the 16-connection triple (floor, baseline, injection)
# is repeated ROUNDS times. BENCH_PROFILE=dist measures the build that ships (slow to build).
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
# Overridable so the benchmark can run next to another server on the default ports.
PORT=${BENCH_PORT:-19443}
ADMIN_PORT=${BENCH_ADMIN_PORT:-19090}
FLOOR_PORT=${BENCH_FLOOR_PORT:-19444}
command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
PROFILE=${BENCH_PROFILE:-release}
cargo build --profile "$PROFILE" --locked --quiet
# A build of its own: the example pulls in the dev-dependencies, whose features must not leak into
# the measured server.
cargo build --profile "$PROFILE" --locked --quiet --example floor-webhook
work=$(mktemp -d)
floor=
trap 'kill $server $floor 2>/dev/null || true; rm -rf "$work"' EXIT
./target/$PROFILE/kruise-webhook serve --listen 127.0.0.1:$PORT --admin-listen 127.0.0.1:$ADMIN_PORT \
  --cert-dir "$work/certs" --sidecarsets bench/sidecarsets --baseline-route --log warn,rustls=error &
server=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:$ADMIN_PORT/readyz >/dev/null && break; sleep 0.1; done
export BODY=tests/fixtures/pod-web-log-agent.json
review() { # port/path -> the answer to the benchmarked review
  curl -sf --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' --data-binary @"$BODY" \
    "https://localhost:$1"
}
# Sanity: the benchmarked request really is injected.
review "$PORT/mutate-pod" | jq -e '.response.patch != null' >/dev/null
./target/$PROFILE/examples/floor-webhook 127.0.0.1:$FLOOR_PORT "$work/certs/tls.crt" "$work/certs/tls.key" &
floor=$!
for _ in $(seq 100); do review "$FLOOR_PORT/" >/dev/null && break; sleep 0.1; done
# Sanity: the floor answers the same review (and a floor that never started stops the run here).
review "$FLOOR_PORT/" | jq -e '.response.allowed == true' >/dev/null

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, clock ticks
steal_and_total() { awk '/^cpu / {print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
# Rescheduling IPIs, all CPUs: one is sent whenever a task is woken on another CPU, e.g. wrk by an
# answer; on a virtual machine each costs a VM exit, and the one that wakes a halted vCPU more.
reschedule_ipis() { awk '$1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }
tick_us=$((1000000 / $(getconf CLK_TCK)))
run() { # connections path [port pid] -> "requests/s p99(ms)"; the details go to stderr
  local port=${3:-$PORT} pid=${4:-$server} server_before steal_before total_before ipis_before wrk_cpu_s requests
  server_before=$(cpu_ticks "$pid")
  read -r steal_before total_before < <(steal_and_total)
  ipis_before=$(reschedule_ipis)
  TIMEFORMAT='%U %S'
  { time wrk -t 1 -c "$1" -d "${DURATION}s" --latency -s bench/post.lua "https://127.0.0.1:$port$2" > "$work/out"; } 2> "$work/wrk-cpu"
  read -r steal_after total_after < <(steal_and_total)
  rps=$(awk '/^Requests\/sec/ {print $2}' "$work/out")
  p99=$(awk '$1=="99%" {print $2}' "$work/out")
  requests=$(awk '/requests in/ {print $1}' "$work/out")
  wrk_cpu_s=$(awk '{print $1 + $2}' "$work/wrk-cpu")
  # CPU per request does not depend on what else the machine runs; requests/s does. VM steal is
  # CPU time the hypervisor gave to other guests: when it is high, latencies are not ours.
  awk -v path="$2" -v c="$1" -v rps="$rps" -v p99="$p99" -v n="$requests" \
    -v server=$(( ($(cpu_ticks "$pid") - server_before) * tick_us )) -v wrk="$wrk_cpu_s" \
    -v steal=$((steal_after - steal_before)) -v total=$((total_after - total_before)) \
    -v ipis=$(($(reschedule_ipis) - ipis_before)) \
    'BEGIN { printf "  %-16s %2d conns: %8.0f req/s, p99 %-9s server CPU %5.1f us/req, wrk CPU %5.1f us/req, wake-up IPIs %.3f/req, steal %4.1f%%\n",
      path, c, rps, p99, server / n, wrk * 1e6 / n, ipis / n, 100 * steal / total }' >&2
  echo "$rps $p99"
}
wrk -t 1 -c 16 -d 2s -s bench/post.lua "https://127.0.0.1:$PORT/mutate-pod" >/dev/null   # warm-up
wrk -t 1 -c 16 -d 2s -s bench/post.lua "https://127.0.0.1:$FLOOR_PORT/" >/dev/null
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
# The triple is repeated and interleaved, so a slow minute of the shared machine hits every route
# of a round rather than one route of the only sample.
ratios=()
floor_ratios=()
for round in $(seq "$ROUNDS"); do
  read -r floor16 _ < <(run 16 / "$FLOOR_PORT" "$floor")
  read -r base16 _ < <(run 16 /baseline-allow)
  read -r inj16 _ < <(run 16 /mutate-pod)
  ratio=$(awk -v a="$inj16" -v b="$base16" 'BEGIN{printf "%.2f", a/b}')
  floor_ratio=$(awk -v a="$inj16" -v b="$floor16" 'BEGIN{printf "%.2f", a/b}')
  ratios+=("$ratio")
  floor_ratios+=("$floor_ratio")
  echo "16 connections, round $round: floor ${floor16} req/s, baseline ${base16} req/s, injection ${inj16} req/s, injection/baseline $ratio, injection/floor $floor_ratio"
done
read -r _ base_p99_4 < <(run 4 /baseline-allow)
read -r inj4 inj_p99_4 < <(run 4 /mutate-pod)
rss_kib=$(awk '/^VmRSS/ {print $2}' /proc/$server/status)
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "16 connections: injection/baseline ratio ${ratios[*]} (median $(median "${ratios[@]}"))"
echo "16 connections: injection/floor ratio ${floor_ratios[*]} (median $(median "${floor_ratios[@]}"))"
echo "4 connections: injection ${inj4} req/s, p99 ${inj_p99_4} (baseline p99 ${base_p99_4})"
echo "server RSS after the runs: $((rss_kib / 1024)) MiB"
