#!/usr/bin/env bash
# End-to-end check of the certificate lifecycle against a real kube-apiserver.
#
# Needs KUBECONFIG of a running, disposable cluster whose apiserver can reach 127.0.0.1 (the
# project's kube-local harness). Steps:
#   1. `kruise-webhook certs` creates the Secret and writes caBundle into the two webhook
#      configurations registered here (clientConfig.url https://127.0.0.1:<port>/…, since the
#      apiserver cannot route to Services);
#   2. the Secret is copied into a directory the way the kubelet mounts it (..data symlink swap)
#      and `kruise-webhook serve --external-certs` serves it;
#   3. pods are created continuously and each must be injected, while `certs --force-rotate-ca`
#      replaces the CA, the directory is re-synced, and a later run drops the old CA;
#   4. runs with nothing to do must leave every resourceVersion unchanged;
#   5. serve must never have restarted and must report no caBundle mismatch.
# The configurations registered first also carry entries of OpenKruise's that this server does not
# serve (vpod.kb.io on /validate-pod, WorkloadSpread, BroadcastJob): the first run removes them, says
# so (log line, Warning event on each configuration) and later runs find nothing to remove; pod
# updates and deletes then work. A CRD with a conversion webhook (the first generated one that has
# one; until they do, the clonesets CRD, whose single version is never converted, is given one for
# the run) gets the caBundle through the CA rotation, and serve checks it too.
# `certs` runs as the job's ServiceAccount kruise-system/kruise-webhook-certs and `serve` as
# kruise-system/kruise-webhook, each on a token of its own with the RBAC of deploy/ applied
# (scripts/lib/identity.sh); any request of theirs the apiserver refused fails the run.
# The webhook configurations, pods, Secret, events and (if created here) the SidecarSet are
# deleted again, the CRD's conversion put back; the ServiceAccounts and RBAC are left in place.
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
: "${KUBECONFIG:?set KUBECONFIG to a disposable cluster}"
export KUBECONFIG

ns=kruise-system
secret=kruise-webhook-certs
mwc=kruise-mutating-webhook-configuration
vwc=kruise-validating-webhook-configuration
bin=${KRUISE_WEBHOOK_BIN:-target/debug/kruise-webhook}
# --all-targets: the feature set of `cargo test --all-targets`, so nothing is rebuilt after it.
[ -x "$bin" ] || cargo build --locked --quiet --all-targets
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port); admin=$(free_port)
work=$(mktemp -d)
# kubectl's discovery cache of its own (see scripts/e2e.sh).
export KUBECACHEDIR=${KUBECACHEDIR:-$work/kube-cache}
certs_dir=$work/certs; mkdir -p "$certs_dir"
serve_pid=""; load_pid=""; created_sidecarset=0; patched_crd=""
# shellcheck source=scripts/lib/identity.sh
. scripts/lib/identity.sh
identity_mark=$(identity_mark)
# shellcheck source=scripts/lib/conversion.sh
. scripts/lib/conversion.sh

cleanup() {
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  # The webhooks point at a server that is going away: remove them first.
  kubectl delete mutatingwebhookconfiguration "$mwc" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingwebhookconfiguration "$vwc" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete pods -n default -l e2e-certs=true --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete secret -n "$ns" "$secret" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete events -n default --field-selector reason=UnservedWebhooksRemoved --ignore-not-found >/dev/null 2>&1 || true
  if [ -n "$patched_crd" ]; then
    apply_crds "deploy/crds/$patched_crd.yaml" >/dev/null 2>&1 || true
  fi
  if [ "$created_sidecarset" = 1 ]; then
    kubectl delete -f deploy/examples/log-agent.yaml --ignore-not-found >/dev/null 2>&1 || true
  fi
  conversion_end
  rm -rf "$work"
}
trap cleanup EXIT

passed=0; failed=0
check() { # name command...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

# Every `certs` run authenticates as the job's own ServiceAccount (deploy/certs RBAC), so a missing
# or too-wide permission shows up here; its log goes to $work/certs.log.
sa_kubeconfig=$work/certs-sa.kubeconfig
certs() {
  echo "--- certs $*" >> "$work/certs.log"
  KUBECONFIG=$sa_kubeconfig "$bin" --log info certs --namespace "$ns" "$@" >> "$work/certs.log" 2>&1
}

# Copies the Secret into $certs_dir like the kubelet: new hidden dir, atomic ..data swap.
version=0
sync_secret() {
  version=$((version + 1))
  local dir="$certs_dir/..v$version" json
  mkdir "$dir"
  json=$(kubectl get secret -n "$ns" "$secret" -o json)
  for key in tls.crt tls.key ca.crt ca-bundle.crt; do
    jq -r --arg k "$key" '.data[$k] // ""' <<<"$json" | base64 -d > "$dir/$key"
  done
  ln -s "..v$version" "$certs_dir/..data_tmp"
  mv -T "$certs_dir/..data_tmp" "$certs_dir/..data"
  for key in tls.crt tls.key ca.crt ca-bundle.crt; do
    [ -L "$certs_dir/$key" ] || ln -s "..data/$key" "$certs_dir/$key"
  done
  [ "$version" -gt 1 ] && rm -rf "$certs_dir/..v$((version - 1))"
  return 0
}

resource_versions() {
  kubectl get secret -n "$ns" "$secret" -o jsonpath='{.metadata.resourceVersion}'; echo -n " "
  kubectl get mutatingwebhookconfiguration "$mwc" -o jsonpath='{.metadata.resourceVersion}'; echo -n " "
  kubectl get validatingwebhookconfiguration "$vwc" -o jsonpath='{.metadata.resourceVersion}'; echo -n " "
  kubectl get crd "$crd" -o jsonpath='{.metadata.resourceVersion}'
}
bundle_cert_count() { # kind name
  kubectl get "$1" "$2" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d | grep -c 'BEGIN CERTIFICATE'
}
# The caBundle of the CRD's conversion webhook: its certificates, and whether it is the Secret's.
crd_bundle_cert_count() {
  kubectl get crd "$crd" -o jsonpath='{.spec.conversion.webhook.clientConfig.caBundle}' | base64 -d | grep -c 'BEGIN CERTIFICATE'
}
crd_bundle_is_the_secrets() {
  [ "$(kubectl get crd "$crd" -o jsonpath='{.spec.conversion.webhook.clientConfig.caBundle}')" \
    = "$(kubectl get secret -n "$ns" "$secret" -o jsonpath='{.data.ca-bundle\.crt}')" ]
}
bundles_hold() { # N: both configurations and the CRD hold N certificates
  test "$(bundle_cert_count mutatingwebhookconfiguration "$mwc")-$(bundle_cert_count validatingwebhookconfiguration "$vwc")-$(crd_bundle_cert_count)" = "$1-$1-$1"
}
served_leaf() {
  openssl s_client -connect "127.0.0.1:$port" -servername localhost </dev/null 2>/dev/null \
    | openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
secret_leaf() {
  kubectl get secret -n "$ns" "$secret" -o jsonpath='{.data.tls\.crt}' | base64 -d \
    | openssl x509 -noout -fingerprint -sha256
}
metric() { curl -fsS "http://127.0.0.1:$admin/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns" >/dev/null
# The CRDs' conversion (the example SidecarSet is v1alpha1, stored as v1beta1): scripts/e2e.sh's
# server, or one of this script's own, by URL (scripts/lib/conversion.sh).
conversion_begin "$bin" "$(free_port)" "$(free_port)" "$work/conversion"
apply_crds deploy/crds/
kubectl delete secret -n "$ns" "$secret" --ignore-not-found >/dev/null
identity_apply deploy/certs/serviceaccount.yaml deploy/certs/rbac.yaml deploy/rbac.yaml
identity_kubeconfig kruise-webhook-certs "$sa_kubeconfig"
serve_kubeconfig=$work/webhook-sa.kubeconfig
identity_kubeconfig kruise-webhook "$serve_kubeconfig"
# The CRD whose conversion caBundle the job keeps here: the CloneSets' (stored v1alpha1; nothing in
# this script reads its v1beta1), pointed at this script's server for the run and given back to the
# conversion server by URL on exit. The others keep the conversion server and its CA: the job and the
# server are told of this one only.
crd=clonesets.apps.kruise.io patched_crd=clonesets.apps.kruise.io
jq -n --arg url "https://127.0.0.1:$port/convert" \
  '{spec: {conversion: {webhook: {clientConfig: {url: $url, caBundle: null}}}}}' \
  | kubectl patch crd "$crd" --type=merge --patch-file=/dev/stdin >/dev/null
export KRUISE_WEBHOOK_CONVERSION_CRDS=$crd
echo "     CRD with a conversion webhook: $crd"
kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: $mwc}
webhooks:
  - name: mpod.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/mutate-pod"}
    rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
    objectSelector: {matchLabels: {e2e-certs: "true"}}
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
  - name: msidecarset.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/mutate-apps-kruise-io-sidecarset"}
    rules: [{apiGroups: [apps.kruise.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [sidecarsets]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
  # OpenKruise's, not served here (BroadcastJob).
  - name: mbroadcastjob.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/mutate-apps-kruise-io-broadcastjob"}
    rules: [{apiGroups: [apps.kruise.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [broadcastjobs]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: $vwc}
webhooks:
  # OpenKruise's PodUnavailableBudget entry, not served here: left in place, every update and
  # delete of the pods it matches would be refused (404 from this server, failurePolicy Fail).
  - name: vpod.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/validate-pod"}
    rules: [{apiGroups: [""], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [pods]}]
    objectSelector: {matchLabels: {e2e-certs: "true"}}
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
  - name: vsidecarset.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/validate-apps-kruise-io-sidecarset"}
    rules: [{apiGroups: [apps.kruise.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [sidecarsets]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
  - name: vworkloadspread.kb.io
    clientConfig: {url: "https://127.0.0.1:$port/validate-apps-kruise-io-v1alpha1-workloadspread"}
    rules: [{apiGroups: [apps.kruise.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [workloadspreads]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
    timeoutSeconds: 10
EOF

can_list() { KUBECONFIG=$sa_kubeconfig kubectl auth can-i "$@" 2>/dev/null; }
check "the job's account cannot read other Secrets" test "$(can_list get secret/other -n "$ns" || true)" = no
check "certs creates the Secret (as the job's ServiceAccount)" certs
check "caBundle written into both configurations and the CRD's conversion webhook" bundles_hold 1
check "the CRD's caBundle is the Secret's bundle" crd_bundle_is_the_secrets
entries() { # kind name: its webhooks' names
  kubectl get "$1" "$2" -o json | jq -r '[.webhooks[].name] | join(" ")'
}
check "the entries this server does not serve are gone, the others stay in order" test \
  "$(entries mutatingwebhookconfiguration "$mwc") / $(entries validatingwebhookconfiguration "$vwc")" \
  = "mpod.kb.io msidecarset.kb.io / vsidecarset.kb.io"
removal_logged() {
  grep -q 'MutatingWebhookConfiguration kruise-mutating-webhook-configuration: removed 1 webhook(s) whose path this server does not serve.*mbroadcastjob.kb.io (/mutate-apps-kruise-io-broadcastjob)' "$work/certs.log" &&
  grep -q 'ValidatingWebhookConfiguration kruise-validating-webhook-configuration: removed 2 webhook(s) whose path this server does not serve.*vpod.kb.io (/validate-pod), vworkloadspread.kb.io (/validate-apps-kruise-io-v1alpha1-workloadspread)' "$work/certs.log"
}
check "the removal is logged with every entry and its path" removal_logged
removal_events() { # the kinds of the UnservedWebhooksRemoved Warning events, sorted
  kubectl get events -n default --field-selector reason=UnservedWebhooksRemoved -o json \
    | jq -r '[.items[] | select(.type == "Warning") | .involvedObject.kind] | sort | join(" ")'
}
check "a Warning event UnservedWebhooksRemoved on each configuration" \
  test "$(removal_events)" = "MutatingWebhookConfiguration ValidatingWebhookConfiguration"
echo "     event: $(kubectl get events -n default --field-selector reason=UnservedWebhooksRemoved,involvedObject.kind=ValidatingWebhookConfiguration \
  -o jsonpath='{.items[0].message}')"

sync_secret
# As deploy/'s webhook ServiceAccount, so its caBundle check (configurations and CRD) runs with
# exactly the grants of deploy/rbac.yaml.
KUBECONFIG=$serve_kubeconfig "$bin" --log warn serve --external-certs --cert-dir "$certs_dir" \
  --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" \
  --sidecarsets deploy/examples --reload-interval 500ms --ca-bundle-check-interval 1s \
  > "$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$admin/readyz" >/dev/null 2>&1 && break; sleep 0.1; done

# One pod (labelled for the log-agent example SidecarSet) must come back injected.
create_pod() {
  kubectl create -f - -o jsonpath='{.spec.containers[*].name}' <<EOF
apiVersion: v1
kind: Pod
metadata: {generateName: web-, namespace: default, labels: {app: web, e2e-certs: "true"}}
spec:
  containers:
    - name: app
      image: nginx:1.25
      env: [{name: TZ, value: Europe/Berlin}]
EOF
}
injected() { [[ " $(create_pod) " == *" log-agent "* ]]; }
check "a pod is injected through the webhook" injected
kubectl get -f deploy/examples/log-agent.yaml >/dev/null 2>&1 || created_sidecarset=1
apply_sidecarset() { kubectl apply -f deploy/examples/log-agent.yaml >/dev/null 2>&1; }
check "a SidecarSet passes both SidecarSet webhooks" apply_sidecarset
# vpod.kb.io would have refused both with the server's 404.
pod_update_and_delete() {
  local pod
  pod=$(kubectl get pods -n default -l e2e-certs=true -o jsonpath='{.items[0].metadata.name}') || return 1
  kubectl label pod -n default "$pod" e2e-certs-touched=yes >/dev/null && kubectl delete pod -n default "$pod" --wait=false >/dev/null
}
check "pod updates and deletes work: no entry points at a path this server does not serve" pod_update_and_delete

# Continuous load: one pod after another until told to stop; every result is recorded.
load() {
  while [ ! -e "$work/stop" ]; do
    if injected >/dev/null 2>&1; then echo ok; else echo failed; fi
    sleep 0.2
  done
}
load > "$work/load.log" &
load_pid=$!

rv_before=$(resource_versions)
check "a second run with nothing to do changes nothing" certs
check "resourceVersions unchanged after a no-op run" test "$(resource_versions)" = "$rv_before"

old_leaf=$(served_leaf)
check "certs --force-rotate-ca" certs --force-rotate-ca
check "bundles (configurations and CRD) hold the old and the new CA" bundles_hold 2
sleep 2   # pods keep being created while the old certificate is still served
sync_secret
new_leaf=$(secret_leaf)
seen_new() {
  for _ in $(seq 1 40); do [ "$(served_leaf)" = "$new_leaf" ] && return 0; sleep 0.25; done
  return 1
}
check "serve presents the new certificate without a restart" seen_new
check "the new certificate differs from the old one" test "$old_leaf" != "$new_leaf"
sleep 2

rv_before=$(resource_versions)
check "a run within the overlap changes nothing" certs
check "resourceVersions unchanged within the overlap" test "$(resource_versions)" = "$rv_before"

check "a run after the overlap drops the old CA" certs --ca-overlap 0s
check "bundles (configurations and CRD) hold only the new CA" bundles_hold 1
check "the CRD's caBundle is the Secret's bundle again" crd_bundle_is_the_secrets
sync_secret
sleep 2
rv_before=$(resource_versions)
check "the next run changes nothing" certs --ca-overlap 0s
check "resourceVersions unchanged after the rotation settled" test "$(resource_versions)" = "$rv_before"

touch "$work/stop"; wait "$load_pid" || true; load_pid=""
created=$(grep -c . "$work/load.log" || true)
lost=$(grep -c failed "$work/load.log" || true)
echo "     pods created during the rotation: $created, not injected or refused: $lost"
check "pods were created throughout" test "$created" -ge 10
check "every pod created during the rotation was injected" test "$lost" = 0
check "serve never restarted" kill -0 "$serve_pid"
check "serve reports no caBundle mismatch" test "$(metric kruise_webhook_tls_ca_bundle_mismatches)" = 0
check "serve counted the reload" test "$(metric kruise_webhook_tls_certificate_reloads_total)" -ge 1
check "later runs removed nothing more (one event per configuration)" \
  test "$(removal_events)" = "MutatingWebhookConfiguration ValidatingWebhookConfiguration"
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
check "no request of the job's or the webhook's ServiceAccount refused (audit log, logs, Warning events)" \
  identity_refusals "$identity_mark" "$work/certs.log" "$work/serve.log" -- default "$ns"

echo "e2e-certs: $passed passed, $failed failed"
[ "$failed" = 0 ] || { echo "--- serve log"; tail -30 "$work/serve.log"; echo "--- certs log"; tail -30 "$work/certs.log"; exit 1; }
