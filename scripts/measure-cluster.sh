#!/usr/bin/env bash
# Cluster-mode figures against the local kube-apiserver (the e2e harness):
# - the latency the apiserver adds for the pod webhook: median time of N pod creates (POST through
#   the apiserver, curl's time_total) without and with the webhook registered;
# - the webhook's RSS with S SidecarSets and M namespaces in its catalogue.
# Usage: scripts/measure-cluster.sh   (N=200 S=100 M=1000 by default; BINARY=path to use another build)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200} S=${S:-100} M=${M:-1000}
export KUBE_LOCAL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
export APISERVER_PORT=${APISERVER_PORT:-16443} ETCD_PORT=${ETCD_PORT:-12379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
webhook_port=${E2E_WEBHOOK_PORT:-19443} admin_port=${E2E_ADMIN_PORT:-19090}
scripts/kube-local/stop.sh >/dev/null 2>&1 || true
FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
export KUBECONFIG=$KUBE_LOCAL/kubeconfig
work=$(mktemp -d) pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
binary=${BINARY:-target/debug/kruise-webhook}

kubectl kustomize deploy/crds/ | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
kubectl create namespace bench >/dev/null
jq -n --argjson m "$M" '{apiVersion: "v1", kind: "List", items: [range($m) |
  {apiVersion: "v1", kind: "Namespace", metadata: {name: "ns-\(.)", labels: {team: "t\(. % 10)"}}}]}' \
  | kubectl apply -f - >/dev/null
jq -n --argjson s "$S" '{apiVersion: "v1", kind: "List", items: [range($s) |
  {apiVersion: "apps.kruise.io/v1beta1", kind: "SidecarSet", metadata: {name: "set-\(.)"},
   spec: {selector: {matchLabels: {app: "app-\(.)"}}, namespaceSelector: {matchLabels: {team: "t\(. % 10)"}},
          containers: [{name: "sidecar-\(.)", image: "busybox:1.36", env: [{name: "N", value: "\(.)"}],
                        volumeMounts: [{name: "v-\(.)", mountPath: "/v"}]}],
          volumes: [{name: "v-\(.)", emptyDir: {}}]}}]}' \
  | kubectl apply -f - >/dev/null

P=$KUBE_LOCAL/pki
pod_creates() { # label
  local i times=()
  for i in $(seq 1 "$N"); do
    times+=("$(curl -sS -o /dev/null -w '%{time_total}\n' --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" \
      -H 'Content-Type: application/json' \
      --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1-$i\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx\"}]}}" \
      "https://127.0.0.1:$APISERVER_PORT/api/v1/namespaces/bench/pods")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) * 1000}'
}
without=$(pod_creates plain)

"$binary" serve --kubeconfig "$KUBECONFIG" --cert-dir "$work/certs" --listen "127.0.0.1:$webhook_port" \
  --admin-listen "127.0.0.1:$admin_port" --log warn >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
kubectl create --dry-run=client -o json -f deploy/webhooks.yaml \
  | jq -s --arg base "https://127.0.0.1:$webhook_port" --arg ca "$(base64 -w0 < "$work/certs/ca.crt")" \
      '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
        | .webhooks[] |= (.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
  | kubectl apply -f - >/dev/null
sleep 2
with=$(pod_creates hooked)
calls=$(curl -fsS "http://127.0.0.1:$admin_port/metrics" | awk '/^kruise_webhook_admission_requests_total\{.*mutate-pod.*CREATE/ {s += $2} END {print s + 0}')
metrics=$(curl -fsS "http://127.0.0.1:$admin_port/metrics")
rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status")
echo "pod create median, $N each: without webhook ${without} ms, with ${with} ms (mutate-pod calls: $calls)"
echo "catalogue: $(grep -x 'kruise_webhook_sidecarsets_loaded [0-9]*' <<<"$metrics"), $(grep -x 'kruise_webhook_namespaces_known [0-9]*' <<<"$metrics"); webhook RSS ${rss} MiB ($binary)"
