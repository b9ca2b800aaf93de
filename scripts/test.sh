#!/usr/bin/env bash
# The project's test command: unit, property, fixture and HTTPS integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
