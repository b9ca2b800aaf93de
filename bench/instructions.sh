#!/usr/bin/env bash
# Instructions per admission request, counted by valgrind: unlike times, counts do not drift with
# the load of a shared machine.
#
#   bench/instructions.sh [stages]  the pure code of the baseline and of the injection request (no
#                                   TLS, no HTTP): the difference of two runs of the admission
#                                   bench (SHORT and LONG iterations), so setup cancels out. Also
#                                   the same review decoded with its object skipped (scan) and as
#                                   a serde_json::Value (value): what serde_json alone costs.
#                                   ROUTES="baseline injection" picks some;
#                                   ADMISSION_BENCH_BODY=<file> another review.
#   bench/instructions.sh conversion
#                                   the conversion webhook's pure work per object, for each case
#                                   of the conversion bench (a ConversionReview of
#                                   CONVERSION_BENCH_OBJECTS, 100, decoded, converted, encoded):
#                                   the difference of two runs (SHORT and LONG reviews) divided
#                                   by the objects between them. CASES="…" picks some.
#   bench/instructions.sh server    the whole release server under callgrind, over keep-alive
#                                   HTTPS (HTTP/1.1, as the apiserver speaks): /mutate-pod,
#                                   /baseline-allow and the floor webhook (bench/floor-webhook.rs),
#                                   with the ratios. Each route gets WARMUP requests, then two
#                                   batches of SMALL and LARGE requests, each on one new connection,
#                                   counted between `callgrind_control --zero` and `--dump`; the
#                                   figure is (LARGE batch - SMALL batch) / (LARGE - SMALL), so the
#                                   handshake and anything else per connection cancels out.
#                                   SERVER_BIN / FLOOR_BIN measure other builds (e.g. an older
#                                   commit; FLOOR_BIN=none skips the floor); CALLGRIND_DIR keeps
#                                   the dumps for callgrind_annotate; BENCH_BODY posts another
#                                   review (e.g. the fixture in the apiserver's compact form);
#                                   BENCH_PROFILE=dist builds the profile that ships.
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
MODE=${1:-stages}

stages() {
  local SHORT=${SHORT:-200} LONG=${LONG:-1200} bench short long
  bench=$(cargo bench --bench admission --no-run --message-format=json 2>/dev/null |
    jq -r 'select(.reason == "compiler-artifact" and .target.name == "admission") | .executable')
  count() { # route iterations -> instructions
    ADMISSION_BENCH_ONLY=$1 ADMISSION_BENCH_ITERATIONS=$2 \
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 |
      awk '/Collected/ {print $4}'
  }
  for route in ${ROUTES:-baseline injection scan value}; do
    short=$(count "$route" "$SHORT")
    long=$(count "$route" "$LONG")
    echo "$route: $(((long - short) / (LONG - SHORT))) instructions per request"
  done
}

conversion() {
  local SHORT=${SHORT:-2} LONG=${LONG:-12} OBJECTS=${CONVERSION_BENCH_OBJECTS:-100} bench short long
  bench=$(cargo bench --bench conversion --no-run --message-format=json 2>/dev/null |
    jq -r 'select(.reason == "compiler-artifact" and .target.name == "conversion") | .executable')
  count() { # case reviews -> instructions
    CONVERSION_BENCH_ONLY=$1 CONVERSION_BENCH_ITERATIONS=$2 CONVERSION_BENCH_OBJECTS=$OBJECTS \
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 |
      awk '/Collected/ {print $4}'
  }
  local cases=${CASES:-sidecarset-v1alpha1-to-v1beta1 sidecarset-v1beta1-to-v1alpha1 daemonset-v1alpha1-to-v1beta1 daemonset-v1beta1-to-v1alpha1 cloneset-v1alpha1-to-v1beta1 statefulset-v1beta1-to-v1alpha1}
  for case in $cases; do
    short=$(count "$case" "$SHORT")
    long=$(count "$case" "$LONG")
    echo "$case: $(((long - short) / ((LONG - SHORT) * OBJECTS))) instructions per object"
  done
}

server() {
  local WARMUP=${WARMUP:-100} SMALL=${SMALL:-100} LARGE=${LARGE:-1100}
  local PORT=${BENCH_PORT:-19443} ADMIN_PORT=${BENCH_ADMIN_PORT:-19090}
  local body=${BENCH_BODY:-tests/fixtures/pod-web-log-agent.json}
  # Two builds: an example pulls in the dev-dependencies, whose features must not leak into the
  # measured server.
  SERVER_BIN=${SERVER_BIN:-$(executable --bin kruise-webhook)}
  FLOOR_BIN=${FLOOR_BIN:-$(executable --example floor-webhook)}
  work=$(mktemp -d)
  pid=
  trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  local serve_args=(serve --listen "127.0.0.1:$PORT" --admin-listen "127.0.0.1:$ADMIN_PORT"
    --cert-dir "$work/certs" --sidecarsets bench/sidecarsets --baseline-route --log warn,rustls=error)
  # One native start writes the certificates, so no server generates keys under valgrind.
  "$SERVER_BIN" "${serve_args[@]}" &
  pid=$!
  wait_until curl -sf "http://127.0.0.1:$ADMIN_PORT/readyz"
  kill "$pid" && wait "$pid" || true
  pid=

  start_under_callgrind "$SERVER_BIN" "${serve_args[@]}"
  wait_until curl -sf "http://127.0.0.1:$ADMIN_PORT/readyz"
  # Sanity: the measured request really is injected.
  curl -sf --http1.1 --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"$body" "https://localhost:$PORT/mutate-pod" | jq -e '.response.patch != null' >/dev/null
  local mutate baseline floor
  mutate=$(per_request /mutate-pod)
  baseline=$(per_request /baseline-allow)
  stop_server

  if [ "$FLOOR_BIN" = none ]; then
    printf '/mutate-pod %d, /baseline-allow %d instructions per request\n' "$mutate" "$baseline"
    return
  fi
  start_under_callgrind "$FLOOR_BIN" "127.0.0.1:$PORT" "$work/certs/tls.crt" "$work/certs/tls.key"
  wait_until curl -sf --http1.1 --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"$body" "https://localhost:$PORT/"
  floor=$(per_request /floor)
  stop_server

  awk -v m="$mutate" -v b="$baseline" -v f="$floor" 'BEGIN {
    printf "%-16s %9s  %s\n", "route", "instr/req", "ratio to floor"
    printf "%-16s %9d  %.2f\n", "/mutate-pod", m, m / f
    printf "%-16s %9d  %.2f\n", "/baseline-allow", b, b / f
    printf "%-16s %9d  %.2f\n", "floor webhook", f, 1
    printf "/mutate-pod / /baseline-allow: %.2f\n", m / b
  }'
}

executable() { # cargo target selection -> path of the executable (BENCH_PROFILE, default release)
  cargo build --profile "${BENCH_PROFILE:-release}" --locked "$@" --message-format=json 2>/dev/null |
    jq -r 'select(.reason == "compiler-artifact" and .executable != null) | .executable'
}

wait_until() { # command... -> retries for up to two minutes (valgrind starts slowly)
  for _ in $(seq 240); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting for: $*" >&2
  return 1
}

start_under_callgrind() { # binary args...
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$@" 2>"$work/valgrind.log" &
  pid=$!
}

stop_server() {
  kill "$pid" && wait "$pid" || true
  pid=
  rm -f "$work"/callgrind.out*
}

post() { # path count -> count requests on one keep-alive connection; fails unless all are 200
  local urls=()
  for ((i = 0; i < $2; i++)); do urls+=("https://localhost:$PORT$1"); done
  curl -s --http1.1 --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"$body" -w '%{stderr}%{http_code} %{num_connects}\n' "${urls[@]}" \
    2>"$work/codes" >/dev/null
  awk -v n="$2" '$1 == 200 {ok++} {connects += $2} END {
    if (ok != n || connects != 1) { printf "%d of %d answers were 200, over %d connections\n", ok, n, connects > "/dev/stderr"; exit 1 } }' "$work/codes"
}

counted() { # path count -> instructions the server spent on them (callgrind dump since zero)
  local dumps
  callgrind_control --zero "$pid" >/dev/null 2>&1
  post "$1" "$2"
  callgrind_control --dump "$pid" >/dev/null 2>&1
  # Callgrind numbers its dumps 1, 2, …; the previous server's were removed.
  dumps=$(find "$work" -maxdepth 1 -name 'callgrind.out.*' | wc -l)
  if [ -n "${CALLGRIND_DIR:-}" ]; then
    # Renamed when copied: one directory collects every route's dumps.
    mkdir -p "$CALLGRIND_DIR" && cp "$work/callgrind.out.$dumps" "$CALLGRIND_DIR/callgrind.${1#/}.$2.out"
  fi
  awk '/^totals:/ {print $2}' "$work/callgrind.out.$dumps"
}

per_request() { # path -> instructions per request
  local small large
  post "$1" "$WARMUP"
  small=$(counted "$1" "$SMALL")
  large=$(counted "$1" "$LARGE")
  echo $(((large - small) / (LARGE - SMALL)))
}

case "$MODE" in
  stages) stages ;;
  conversion) conversion ;;
  server) server ;;
  *) echo "usage: $0 [stages|conversion|server]" >&2; exit 2 ;;
esac
