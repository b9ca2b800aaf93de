#!/usr/bin/env bash
# Admission benchmark: the same release binary serves /mutate-pod (injection, 1 of 10 SidecarSets
# matching a ~4.9 KB pod review) and /baseline-allow (decode the review, allow it), over the same
# TLS stack. wrk drives HTTP/1.1 keep-alive on loopback. Prints throughput ratio, p99 latency and
# the server's resident memory after the run. Bounded: every wrk run lasts DURATION seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
# Overridable so the benchmark can run next to another server on the default ports.
PORT=${BENCH_PORT:-19443}
ADMIN_PORT=${BENCH_ADMIN_PORT:-19090}
command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release --locked --quiet
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
./target/release/kruise-webhook serve --listen 127.0.0.1:$PORT --admin-listen 127.0.0.1:$ADMIN_PORT \
  --cert-dir "$work/certs" --sidecarsets bench/sidecarsets --baseline-route --log warn,rustls=error &
server=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:$ADMIN_PORT/readyz >/dev/null && break; sleep 0.1; done
export BODY=tests/fixtures/pod-web-log-agent.json
# Sanity: the benchmarked request really is injected.
curl -sf --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' --data-binary @"$BODY" \
  https://localhost:$PORT/mutate-pod | jq -e '.response.patch != null' >/dev/null

run() { # connections path -> "requests/s p99(ms)"
  wrk -t 1 -c "$1" -d "${DURATION}s" --latency -s bench/post.lua "https://127.0.0.1:$PORT$2" > "$work/out"
  rps=$(awk '/^Requests\/sec/ {print $2}' "$work/out")
  p99=$(awk '$1=="99%" {print $2}' "$work/out")
  echo "$rps $p99"
}
wrk -t 1 -c 16 -d 2s -s bench/post.lua "https://127.0.0.1:$PORT/mutate-pod" >/dev/null   # warm-up
read -r base16 _ < <(run 16 /baseline-allow)
read -r inj16 _ < <(run 16 /mutate-pod)
read -r _ base_p99_4 < <(run 4 /baseline-allow)
read -r inj4 inj_p99_4 < <(run 4 /mutate-pod)
rss_kib=$(awk '/^VmRSS/ {print $2}' /proc/$server/status)
echo "16 connections: baseline ${base16} req/s, injection ${inj16} req/s, ratio $(awk -v a="$inj16" -v b="$base16" 'BEGIN{printf "%.2f", a/b}')"
echo "4 connections: injection ${inj4} req/s, p99 ${inj_p99_4} (baseline p99 ${base_p99_4})"
echo "server RSS after the runs: $((rss_kib / 1024)) MiB"
