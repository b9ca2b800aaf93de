#!/usr/bin/env bash
# The project's test command: unit, property, fixture and HTTPS integration tests, then the
# end-to-end checks against a real kube-apiserver (scripts/e2e.sh) and on a real node with a
# kubelet and containers (scripts/e2e-node.sh). SKIP_E2E=1 skips both, SKIP_E2E_NODE=1 the node.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
if [ "${SKIP_E2E:-0}" != 1 ]; then
  scripts/e2e.sh
  if [ "${SKIP_E2E_NODE:-0}" != 1 ]; then
    scripts/e2e-node.sh
  fi
fi
