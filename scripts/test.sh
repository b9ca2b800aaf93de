#!/usr/bin/env bash
# The project's test command: unit, property, fixture and HTTPS integration tests, then the
# end-to-end checks against a real kube-apiserver (scripts/e2e.sh; SKIP_E2E=1 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
if [ "${SKIP_E2E:-0}" != 1 ]; then
  scripts/e2e.sh
fi
