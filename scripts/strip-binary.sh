#!/usr/bin/env bash
# The binary that ships: BINARY without symbols or debug information, written to OUT; those are
# kept apart in DEBUG (default OUT.debug, zlib-compressed), which OUT names in .gnu_debuglink and
# shares its build id with, so perf, gdb and addr2line find it beside OUT or under
# /usr/lib/debug/.build-id/ and profiles of the shipped binary still show function names and
# lines. Usage: scripts/strip-binary.sh BINARY OUT [DEBUG]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BINARY OUT [DEBUG]" >&2; exit 2; }
binary=$1 out=$2 debug=${3:-$2.debug}
objcopy --only-keep-debug --compress-debug-sections=zlib "$binary" "$debug"
objcopy --strip-all --add-gnu-debuglink="$debug" "$binary" "$out"
