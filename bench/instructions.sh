#!/usr/bin/env bash
# Instructions per request of the baseline and of the injection request, pure code (no TLS, no
# HTTP), counted by valgrind: unlike times, counts do not drift with the load of a shared machine.
# Each figure is the difference of two runs (SHORT and LONG iterations), so setup cancels out.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
SHORT=${SHORT:-200}
LONG=${LONG:-1200}
bench=$(cargo bench --bench admission --no-run --message-format=json 2>/dev/null |
  jq -r 'select(.reason == "compiler-artifact" and .target.name == "admission") | .executable')
count() { # route iterations -> instructions
  ADMISSION_BENCH_ONLY=$1 ADMISSION_BENCH_ITERATIONS=$2 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 |
    awk '/Collected/ {print $4}'
}
for route in baseline injection; do
  short=$(count "$route" "$SHORT")
  long=$(count "$route" "$LONG")
  echo "$route: $(((long - short) / (LONG - SHORT))) instructions per request"
done
