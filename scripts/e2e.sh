#!/usr/bin/env bash
# End-to-end checks against a real kube-apiserver + etcd on loopback.
#
# Without KUBECONFIG, builds (once, cached under ~/.cache/kruise-webhook/kube-local) and starts a
# local kube-apiserver v1.20 from Debian's archive, and stops it afterwards. With KUBECONFIG set,
# runs against that cluster instead (it must be a disposable one: CRDs are installed and objects
# created in it).
#
# Checks: the generated CRDs apply and become Established; every example object round-trips
# through the apiserver without losing a field.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
export KUBE_LOCAL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
started_local=0

if [ -z "${KUBECONFIG:-}" ]; then
  command -v kubectl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq kubernetes-client >/dev/null; }
  if [ ! -x "$KUBE_LOCAL/bin/kube-apiserver" ]; then
    echo "== building kube-apiserver (first run only; several minutes)"
    COMPONENTS="kube-apiserver" scripts/kube-local/setup.sh > "$KUBE_LOCAL.setup.log" 2>&1 \
      || { tail -40 "$KUBE_LOCAL.setup.log"; exit 1; }
  fi
  export APISERVER_PORT=${APISERVER_PORT:-16443} ETCD_PORT=${ETCD_PORT:-12379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh
  started_local=1
  export KUBECONFIG=$KUBE_LOCAL/kubeconfig
fi
cleanup() {
  if [ "$started_local" = 1 ]; then "$here/scripts/kube-local/stop.sh" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

passed=0; failed=0
check() { # name command...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

crds_established() {
  kubectl apply -f deploy/crds/ >/dev/null || return 1
  kubectl wait --for=condition=Established --timeout=60s -f deploy/crds/ >/dev/null
}
check "generated CRDs apply and become Established" crds_established

# An example round-trips when the stored spec equals the spec that was sent.
round_trip() { # file
  local file=$1 sent stored
  # (errexit is off inside a function run as a condition: every step checks its own status)
  sent=$(kubectl create --dry-run=client -o json -f "$file" | jq -S 'if .kind == "List" then .items else [.] end | map(.spec)') || return 1
  kubectl apply -f "$file" >/dev/null || return 1
  stored=$(kubectl get -o json -f "$file" | jq -S 'if .kind == "List" then .items else [.] end | map(.spec)') || return 1
  if [ "$sent" != "$stored" ]; then
    diff <(echo "$sent") <(echo "$stored") | head -20
    return 1
  fi
}
for example in deploy/examples/*.yaml; do
  check "example $example round-trips through the apiserver" round_trip "$example"
done

echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
