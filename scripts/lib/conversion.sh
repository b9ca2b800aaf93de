# The CRDs' conversion webhook for the e2e scripts, which source this file. The CRDs of deploy/crds
# send ConversionReviews to the Service kruise-webhook-service; an apiserver on loopback cannot reach
# a Service, so, as the webhook configurations are, the CRDs are applied with their conversion
# `clientConfig` rewritten to a URL on 127.0.0.1 and the webhook's CA as `caBundle`.
#
# Every read or write of an object in the version its CRD does not store goes through that URL
# (SidecarSet, DaemonSet and StatefulSet store v1beta1, CloneSet v1alpha1; `kubectl get` without a
# version reads v1beta1). A script run by scripts/e2e.sh uses e2e.sh's server (E2E_CONVERSION_URL and
# E2E_CONVERSION_CA are exported); one run alone starts its own.

# shellcheck source=scripts/lib/ready.sh
. "$(dirname "${BASH_SOURCE[0]}")/ready.sh"

# conversion_begin BIN PORT ADMIN_PORT DIR: sets E2E_CONVERSION_URL and E2E_CONVERSION_CA, starting
# `BIN serve` without a cluster (the embedded SidecarSets; only its /convert is used) on
# 127.0.0.1:PORT with its certificate under DIR when they are not set. Its pid is conversion_pid (empty
# when the server is someone else's); conversion_end stops it.
conversion_begin() {
  conversion_pid=""
  if [ -n "${E2E_CONVERSION_URL:-}" ] && [ -n "${E2E_CONVERSION_CA:-}" ]; then return 0; fi
  local bin=$1 port=$2 admin=$3 dir=$4
  mkdir -p "$dir"
  KRUISE_WEBHOOK_SHUTDOWN_DELAY=0 "$bin" serve --cert-dir "$dir/certs" \
    --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" > "$dir/conversion.log" 2>&1 &
  conversion_pid=$!
  server_ready "$admin" "$conversion_pid" "$dir/conversion.log" || { echo "(the conversion webhook)"; return 1; }
  export E2E_CONVERSION_URL="https://127.0.0.1:$port/convert"
  export E2E_CONVERSION_CA="$dir/certs/ca.crt"
}

conversion_end() {
  if [ -n "${conversion_pid:-}" ]; then
    kill "$conversion_pid" 2>/dev/null || true
    wait "$conversion_pid" 2>/dev/null || true
    conversion_pid=""
  fi
}

# crds_by_url FILE...: the CRDs of FILE... (files or kustomize directories) as one JSON List, their
# conversion sent to E2E_CONVERSION_URL with E2E_CONVERSION_CA trusted.
crds_by_url() {
  local file
  for file in "$@"; do
    if [ -d "$file" ]; then kubectl kustomize "$file"; else cat "$file"; fi
    echo "---"
  done | kubectl create --dry-run=client -o json -f - \
    | jq -s --arg url "$E2E_CONVERSION_URL" --arg ca "$(base64 -w0 < "$E2E_CONVERSION_CA")" \
        '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
          | if .spec.conversion.strategy == "Webhook"
            then .spec.conversion.webhook.clientConfig = {url: $url, caBundle: $ca} else . end]}'
}

# apply_crds FILE...: applies the CRDs of FILE... by URL (crds_by_url) and waits until each is
# Established.
apply_crds() {
  local list
  list=$(crds_by_url "$@") || return 1
  kubectl apply -f - >/dev/null <<<"$list" || return 1
  kubectl wait --for=condition=Established --timeout=60s -f - >/dev/null <<<"$list"
}
