#!/usr/bin/env bash
# End-to-end checks against a real kube-apiserver + etcd on loopback.
#
# Without KUBECONFIG, builds (once, cached under ~/.cache/kruise-webhook/kube-local) and starts a
# local kube-apiserver v1.20 from Debian's archive, and stops it afterwards. With KUBECONFIG set,
# runs against that cluster instead (it must be a disposable one: CRDs are installed and objects
# created in it).
#
# Checks: the kustomize base renders; the generated CRDs apply and become Established; every
# example object round-trips through the apiserver without losing a field. The CRDs' conversion
# webhook is a `serve` of the same binary on 127.0.0.1 (E2E_CONVERSION_PORT, 16445; admin
# E2E_CONVERSION_ADMIN_PORT, 16446), the CRDs rewritten to reach it by URL
# (scripts/lib/conversion.sh), for the whole run and the scripts it runs. Then the webhook binary
# runs in cluster mode on 127.0.0.1, registered with the deploy/ webhook configurations rewritten
# to `clientConfig.url` (the apiserver here cannot reach a Service), and pods, SidecarSets and
# refusals go through the apiserver, objects of every kind in both versions among them.
# E2E_WEBHOOK_PORT / E2E_ADMIN_PORT move the webhook's ports.
# The webhook runs as deploy/'s ServiceAccount kruise-system/kruise-webhook with the RBAC of deploy/
# applied (a TokenRequest token; scripts/lib/identity.sh), and so do the processes of the scripts it
# runs after it; any request of that identity the apiserver refused fails the run.
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
here=$PWD
export KUBE_LOCAL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
started_local=0

command -v jq >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq jq >/dev/null; }
if [ -z "${KUBECONFIG:-}" ]; then
  command -v kubectl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq kubernetes-client >/dev/null; }
  if [ ! -x "$KUBE_LOCAL/bin/kube-apiserver" ]; then
    echo "== building kube-apiserver (first run only; several minutes)"
    # The build log sits next to the cache, whose parent does not exist on a fresh machine.
    mkdir -p "$KUBE_LOCAL"
    COMPONENTS="kube-apiserver" scripts/kube-local/setup.sh > "$KUBE_LOCAL.setup.log" 2>&1 \
      || { tail -40 "$KUBE_LOCAL.setup.log"; exit 1; }
  fi
  export APISERVER_PORT=${APISERVER_PORT:-16443} ETCD_PORT=${ETCD_PORT:-12379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh
  started_local=1
  export KUBECONFIG=$KUBE_LOCAL/kubeconfig
fi
work=$(mktemp -d)
# kubectl's discovery cache of its own: one kept under ~/.kube/cache from another apiserver that
# ran on the same port (other CRD versions) would send kubectl to resources this one does not have.
export KUBECACHEDIR=${KUBECACHEDIR:-$work/kube-cache}
# The apiserver's restarts' warm-up spans (scripts/lib/identity.sh).
export IDENTITY_WARMUP=${IDENTITY_WARMUP:-$work/warmup}
: >"$IDENTITY_WARMUP"
# shellcheck source=scripts/lib/conversion.sh
. scripts/lib/conversion.sh
webhook_pid=
stop_webhook() {
  if [ -n "$webhook_pid" ]; then
    kill "$webhook_pid" 2>/dev/null || true
    wait "$webhook_pid" 2>/dev/null || true
    webhook_pid=
  fi
}
cleanup() {
  stop_webhook
  conversion_end
  # Registrations pointing at a stopped server would block pod creation in a user's cluster.
  kubectl delete --ignore-not-found -f "$work/webhooks.json" >/dev/null 2>&1 || true
  if [ "$started_local" = 1 ]; then "$here/scripts/kube-local/stop.sh" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

passed=0; failed=0
check() { # name command...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

kustomize_renders() {
  local kinds
  kinds=$(kubectl kustomize deploy/ | grep '^kind:' | sort | uniq -c | awk '{print $3"="$1}' | tr '\n' ' ') || return 1
  echo "     $kinds"
  for kind in Namespace CustomResourceDefinition ServiceAccount ClusterRole ClusterRoleBinding Service Deployment \
      PodDisruptionBudget MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
    [[ " $kinds" == *" $kind="* ]] || { echo "missing $kind"; return 1; }
  done
  # `kubectl apply -k` applies in this order: the system namespaces' skip label before any webhook.
  local order
  order=$(kubectl kustomize deploy/ | grep '^kind:' | awk '{print $2}' | uniq | tr '\n' ' ')
  [[ "$order" == "Namespace "* && "$order" == *" MutatingWebhookConfiguration ValidatingWebhookConfiguration " ]] \
    || { echo "order: $order"; return 1; }
}
check "kubectl kustomize deploy/ renders the base, Namespaces first and webhook configurations last" kustomize_renders

# --all-targets: the same feature set as `cargo test --all-targets`, so this is a no-op after it
cargo build --locked --quiet --all-targets
binary=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)/debug/kruise-webhook
conversion_begin "$binary" "${E2E_CONVERSION_PORT:-16445}" "${E2E_CONVERSION_ADMIN_PORT:-16446}" "$work/conversion"

crds_established() {
  apply_crds deploy/crds/ || return 1
  # Both versions of every kind served, the stored one as OpenKruise v1.9.0 (CloneSet: v1alpha1).
  local versions
  versions=$(kubectl get crd -o json | jq -r '[.items[] | select(.spec.group == "apps.kruise.io")
    | "\(.spec.names.plural):" + ([.spec.versions[] | .name + (if .storage then "*" else "" end)] | join(","))
      + ":" + .spec.conversion.strategy] | sort | join(" ")')
  echo "     $versions"
  [ "$versions" = "clonesets:v1alpha1*,v1beta1:Webhook daemonsets:v1alpha1,v1beta1*:Webhook sidecarsets:v1alpha1,v1beta1*:Webhook statefulsets:v1alpha1,v1beta1*:Webhook" ]
}
check "generated CRDs apply and become Established, both versions served, conversion by webhook" crds_established

# `kubectl explain` reads the OpenAPI the apiserver publishes for the CRDs (v2 on 1.20, where a
# `nullable` field loses its type and properties): the field's type, and its description. Plain
# `statefulsets` and `daemonsets` are apps/v1's: the group is named with --api-version.
# A type of `-`: the field is published without one (its items are schemaless: 1.20's OpenAPI v2
# drops the type of what keeps unknown fields).
explained() { # resource.field type words-of-the-description [kubectl explain flags]
  local out found=no
  # The apiserver publishes a new CRD's OpenAPI a few seconds after it is Established.
  for _ in $(seq 1 60); do
    out=$(kubectl explain "$1" "${@:4}" 2>&1) && { found=yes; break; }
    sleep 0.5
  done
  [ "$found" = yes ] || { echo "     $out" | head -3; return 1; }
  { [ "$2" = - ] || grep -qE "^(FIELD|RESOURCE): +${1##*.} +<$2>\$" <<<"$out"; } && grep -qF "$3" <<<"$out" \
    || { echo "     kubectl explain $1:"; sed -n '1,12s/^/       /p' <<<"$out"; return 1; }
}
explain_shows_types_and_descriptions() {
  explained clonesets.spec.replicas integer "Replicas is the desired number of replicas" &&
  explained clonesets.spec.updateStrategy Object "UpdateStrategy indicates the UpdateStrategy" &&
  explained clonesets.spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds integer "GracePeriodSeconds is the timespan" \
    --api-version=apps.kruise.io/v1alpha1 &&
  explained clonesets.spec.updateStrategy.rollingUpdate.podUpdatePolicy string "PodUpdatePolicy indicates how pods should be updated" \
    --api-version=apps.kruise.io/v1beta1 &&
  explained sidecarsets.spec.customVersion string "CustomVersion is designed to record" \
    --api-version=apps.kruise.io/v1beta1 &&
  explained sidecarsets.spec.namespace string "Namespace sidecarSet will only match the pods in the namespace" \
    --api-version=apps.kruise.io/v1alpha1 &&
  explained daemonsets.spec.scaleStrategy.partitionedScaling boolean "PartitionedScaling indicates daemon pods" \
    --api-version=apps.kruise.io/v1beta1 &&
  explained clonesets.status.updatedReadyReplicas integer "UpdatedReadyReplicas is the number of Pods" &&
  explained sidecarsets.spec.containers - "Containers is the list of sidecar containers" &&
  explained sidecarsets.spec.updateStrategy.paused boolean "Paused indicates that the SidecarSet is paused" &&
  explained statefulsets.spec.persistentVolumeClaimRetentionPolicy.whenDeleted string "WhenDeleted specifies what happens to PVCs" \
    --api-version=apps.kruise.io/v1beta1 &&
  explained statefulsets.spec.updateStrategy.rollingUpdate.podUpdatePolicy string "PodUpdatePolicy indicates how pods should be updated" \
    --api-version=apps.kruise.io/v1alpha1 &&
  explained daemonsets.spec.updateStrategy.rollingUpdate.paused boolean "Indicates that the daemon set is paused" \
    --api-version=apps.kruise.io/v1alpha1
}
check "kubectl explain shows a type and OpenKruise's description for CloneSet, SidecarSet, StatefulSet and DaemonSet fields" \
  explain_shows_types_and_descriptions

# An example round-trips when the stored spec equals the spec that was sent.
round_trip() { # file
  local file=$1 sent stored
  # (errexit is off inside a function run as a condition: every step checks its own status)
  local specs='map(if .kind == "List" then .items[] else . end | .spec)'
  sent=$(kubectl create --dry-run=client -o json -f "$file" | jq -S -s "$specs") || return 1
  kubectl apply -f "$file" >/dev/null || return 1
  stored=$(kubectl get -o json -f "$file" | jq -S -s "$specs") || return 1
  if [ "$sent" != "$stored" ]; then
    diff <(echo "$sent") <(echo "$stored") | head -20
    return 1
  fi
}
# Before any webhook is registered: what users write is stored as written.
for example in deploy/examples/*.yaml deploy/examples/workloads/*.yaml; do
  check "example $example round-trips through the apiserver" round_trip "$example"
done


# ---------------------------------------------------------------------------------------------
# The webhook in cluster mode, registered with the apiserver.
webhook_port=${E2E_WEBHOOK_PORT:-19443}
admin_port=${E2E_ADMIN_PORT:-19090}

# The webhook's identity: deploy/'s ServiceAccount and RBAC, a token of its own.
# shellcheck source=scripts/lib/identity.sh
. scripts/lib/identity.sh
identity_mark=$(identity_mark)
identity_apply deploy/rbac.yaml
identity_kubeconfig kruise-webhook "$work/kruise-webhook.kubeconfig"

# Namespaces first, so the webhook's first list already has their labels.
kubectl create namespace e2e-web >/dev/null
kubectl create namespace e2e-other >/dev/null
kubectl create namespace e2e-cp >/dev/null
kubectl label namespace e2e-cp control-plane=openkruise >/dev/null
# A kubebuilder-scaffolded operator's namespace: OpenKruise injects there, and so does this webhook.
kubectl create namespace e2e-operator >/dev/null
kubectl label namespace e2e-operator control-plane=controller-manager >/dev/null
# What `kubectl apply -k deploy/` does before it creates the webhook configurations (1.20 gives
# kube-system no label of its own).
kubectl apply -f deploy/system-namespaces.yaml >/dev/null
kubectl create namespace shop >/dev/null 2>&1 || true
# Stored before any webhook is registered, so nothing refused it: cluster mode must skip it.
kubectl apply -f - >/dev/null <<'EOT'
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: e2e-stored-invalid
spec:
  selector: {matchLabels: {app: stored-invalid}}
  containers:
    - name: stored-invalid
      image: busybox:1.36
      podInjectPolicy: Middle
EOT

start_webhook() {
  "$binary" serve --kubeconfig "$work/kruise-webhook.kubeconfig" --cert-dir "$work/certs" --log-format json \
    --listen "127.0.0.1:$webhook_port" --admin-listen "127.0.0.1:$admin_port" \
    >>"$work/webhook.log" 2>&1 &
  webhook_pid=$!
  server_ready "$admin_port" "$webhook_pid" "$work/webhook.log"
}
start_webhook

# deploy/webhooks.yaml with each service reference turned into a URL on 127.0.0.1.
kubectl create --dry-run=client -o json -f deploy/webhooks.yaml \
  | jq -s --arg base "https://127.0.0.1:$webhook_port" --arg ca "$(base64 -w0 < "$work/certs/ca.crt")" \
      '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
        | .webhooks[] |= (.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
  > "$work/webhooks.json"
registered() {
  kubectl apply -f "$work/webhooks.json" >/dev/null || return 1
  # The apiserver picks configurations up asynchronously: wait until a pod is actually mutated.
  local name
  for _ in $(seq 1 50); do
    name=$(printf '%s' '{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"probe-","namespace":"e2e-other","labels":{"app":"probe"}},
      "spec":{"containers":[{"name":"a","image":"busybox:1","env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"1"}]},{"name":"b","image":"busybox:1"}]}}' \
      | kubectl create -f - -o jsonpath='{.metadata.name}{" "}{.spec.containers[0].env[*].name}') || return 1
    [[ "$name" == *KRUISE_CONTAINER_BARRIER* ]] && return 0
    sleep 0.2
  done
  return 1
}
check "webhook configurations from deploy/ registered by URL and called" registered

# Whether the admin port's /metrics has this exact line. The page is read whole first: `curl |
# grep -q` fails under pipefail when grep stops at an early match and curl cannot finish writing.
metric_line() { # line
  local page
  page=$(curl -fsS "http://127.0.0.1:$admin_port/metrics") && grep -qxF "$1" <<<"$page"
}

# Waits for the webhook's catalogue to hold n SidecarSets (its watch is asynchronous).
catalogue_has() { # n [tries, 0.2 s apart]
  for _ in $(seq 1 "${2:-50}"); do
    metric_line "kruise_webhook_sidecarsets_loaded $1" && return 0
    sleep 0.2
  done
  echo "catalogue does not hold $1 SidecarSets"; return 1
}
check "catalogue synced from the cluster (the 2 examples)" catalogue_has 2
invalid_skipped() {
  grep 'SidecarSet in the cluster skipped' "$work/webhook.log" | grep '"sidecarset":"e2e-stored-invalid"' \
    | grep -q 'spec.container.podInjectPolicy: Invalid value: \\"Middle\\": unsupported pod inject policy' \
    && metric_line 'kruise_webhook_sidecarset_load_errors_total 1'
}
check "an invalid SidecarSet stored in the cluster is logged with its field and skipped" invalid_skipped

# Creates a pod from JSON on stdin and prints the stored pod as JSON.
create_pod() {
  local ns name
  ns=$(jq -r .metadata.namespace <<<"$1")
  name=$(kubectl create -f - -o jsonpath='{.metadata.name}' <<<"$1") || return 1
  kubectl get pod -n "$ns" "$name" -o json
}
web_pod() { # namespace [metadata-json merged over the defaults]
  local extra=${2:-}
  [ -n "$extra" ] || extra='{}'
  jq -n --arg ns "$1" --argjson extra "$extra" '{
    apiVersion: "v1", kind: "Pod",
    metadata: ({namespace: $ns, name: "web", labels: {app: "web"}} + $extra),
    spec: {
      containers: [{name: "app", image: "nginx:1.25", env: [{name: "TZ", value: "Europe/Paris"}],
                    volumeMounts: [{name: "logs", mountPath: "/var/log/app"}]}],
      volumes: [{name: "logs", emptyDir: {}}]
    }}'
}
# The log-agent example's injection, read back from the apiserver.
assert_log_agent() { # pod-json
  jq -e '
    ([.spec.containers[].name] == ["app", "log-agent"]) and
    (.spec.containers[1].image == "fluent/fluent-bit:2.2.2") and
    ([.spec.containers[1].volumeMounts[] | select(.name == "logs" and .mountPath == "/var/log/app")] | length == 1) and
    ([.spec.containers[1].env[] | select(.name == "TZ" and .value == "Europe/Paris")] | length == 1) and
    ([.spec.volumes[].name] | index("log-agent-config") != null) and
    (.metadata.annotations["kruise.io/sidecarset-injected-list"] == "log-agent") and
    (.metadata.annotations["kruise.io/sidecarset-hash"] | fromjson | .["log-agent"].hash | length == 64) and
    (.metadata.annotations["kruise.io/sidecarset-hash-without-image"] | fromjson | .["log-agent"].hash | length == 64)
  ' <<<"$1" >/dev/null || { jq -c '{containers: .spec.containers, annotations: .metadata.annotations}' <<<"$1" | head -c 1500; echo; return 1; }
}
pod_injected() {
  local pod; pod=$(create_pod "$(web_pod e2e-web)") || return 1
  assert_log_agent "$pod"
}
check "kubectl create pod: log-agent injected, volume shared, TZ transferred, 3 annotations" pod_injected

# `explain` on the pod just created, read back from the apiserver: admission's decision and why.
pod_explained() {
  local report
  report=$("$binary" explain --kubeconfig "$KUBECONFIG" pod/e2e-web/web -o json) || return 1
  jq -e '
    (.admission.webhookCalled == true) and (.admission.allowed == true) and
    ([.sidecarsets[] | select(.name == "log-agent" and .injects and .alreadyInjected)] | length == 1) and
    ([.sidecarsets[] | select(.name == "proxy" and .reason == "NamespaceNotSelected")] | length == 1) and
    ([.webhooks[] | select(.webhook == "mpod.kb.io" and .passes)] | length == 1)
  ' <<<"$report" >/dev/null || { head -c 1500 <<<"$report"; echo; return 1; }
}
check "explain --kubeconfig pod/e2e-web/web: log-agent injected, proxy pinned to another namespace, the pod webhook called" pod_explained

replicaset_pod_injected() {
  local pod
  pod=$(create_pod "$(web_pod e2e-web '{"name": null, "generateName": "web-7d4b9c-",
    "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c",
      "uid": "6f1c1f7e-3a52-4cde-9d4e-1f0e0a6b8c11", "controller": true, "blockOwnerDeletion": true}]}' \
    | jq 'del(.metadata.name)')") || return 1
  assert_log_agent "$pod" && jq -e '.metadata.name | startswith("web-7d4b9c-")' <<<"$pod" >/dev/null
}
check "Deployment-style pod (generateName, ReplicaSet owner): injected" replicaset_pod_injected

untouched() { # namespace labels-json
  local pod
  pod=$(create_pod "$(web_pod "$1" "{\"name\": \"plain\", \"labels\": $2}")") || return 1
  jq -e '([.spec.containers[].name] == ["app"]) and (.metadata.annotations // {} | length == 0)' <<<"$pod" >/dev/null \
    || { jq -c .spec.containers <<<"$pod" | head -c 600; echo; return 1; }
}
check "pod matching no SidecarSet's namespace (proxy is pinned to shop) stays untouched" untouched e2e-other '{"mesh": "enabled"}'
check "pod in a namespace labelled control-plane=openkruise stays untouched" untouched e2e-cp '{"app": "web"}'
check "pod in kube-system (1.20: no name label) stays untouched" untouched kube-system '{"app": "web"}'
operator_namespace_injected() {
  local pod; pod=$(create_pod "$(web_pod e2e-operator)") || return 1
  assert_log_agent "$pod"
}
check "pod in a namespace labelled control-plane=controller-manager (kubebuilder): injected" operator_namespace_injected

proxy_first_with_barrier() {
  local pod
  pod=$(create_pod "$(web_pod shop '{"name": "meshed", "labels": {"mesh": "enabled"}}')") || return 1
  jq -e '([.spec.containers[].name] == ["proxy", "app"]) and
    ([.spec.containers[] | .env[]? | select(.name == "KRUISE_CONTAINER_BARRIER") | .valueFrom.configMapKeyRef]
      == [{name: "meshed-barrier", key: "p_100"}, {name: "meshed-barrier", key: "p_0"}])' <<<"$pod" >/dev/null \
    || { jq -c .spec.containers <<<"$pod" | head -c 1500; echo; return 1; }
}
check "namespace-pinned proxy injected first in shop, with launch barriers" proxy_first_with_barrier

priority_pod() { # name annotations-json env-a env-b
  jq -n --arg name "$1" --argjson ann "$2" --argjson ea "$3" --argjson eb "$4" '{
    apiVersion: "v1", kind: "Pod",
    metadata: {namespace: "e2e-other", name: $name, annotations: $ann},
    spec: {containers: [{name: "a", image: "busybox:1", env: $ea}, {name: "b", image: "busybox:1", env: $eb}]}}'
}
barriers() { # pod-json expected-keys-json
  jq -e --arg cm "$(jq -r .metadata.name <<<"$1")-barrier" --argjson keys "$2" '
    [.spec.containers[] | .env[]? | select(.name == "KRUISE_CONTAINER_BARRIER") | .valueFrom.configMapKeyRef]
      == [$keys[] | {name: $cm, key: .}]' <<<"$1" >/dev/null || { jq -c .spec.containers <<<"$1" | head -c 1200; echo; return 1; }
}
env_priority() {
  local pod
  pod=$(create_pod "$(priority_pod prio '{}' '[{"name":"KRUISE_CONTAINER_PRIORITY","value":"10"}]' '[{"name":"KRUISE_CONTAINER_PRIORITY","value":"-5"}]')") || return 1
  barriers "$pod" '["p_10", "p_-5"]'
}
check "KRUISE_CONTAINER_PRIORITY on two containers: barrier env on both" env_priority
ordered_priority() {
  local pod
  pod=$(create_pod "$(priority_pod ordered '{"apps.kruise.io/container-launch-priority": "Ordered"}' '[]' '[]')") || return 1
  barriers "$pod" '["p_0", "p_-1"]'
}
check "launch priority Ordered: barrier env by container order" ordered_priority

sidecarset_hashed() {
  kubectl apply -f - >/dev/null <<'EOT' || return 1
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: e2e-hashed
spec:
  namespace: e2e-other
  selector: {matchLabels: {app: hashed}}
  containers:
    - name: hashed-sidecar
      image: busybox:1.36
EOT
  kubectl get sidecarset e2e-hashed -o json | jq -e '
    (.metadata.annotations["kruise.io/sidecarset-hash"] | length == 64) and
    (.metadata.annotations["kruise.io/sidecarset-hash-without-image"] | length == 64) and
    (.spec.containers[0].podInjectPolicy == "BeforeAppContainer") and
    (.spec.containers[0].imagePullPolicy == "IfNotPresent")' >/dev/null
}
check "SidecarSet created through the apiserver: defaults and hash annotations from the webhook" sidecarset_hashed

invalid_refused() {
  local out
  if out=$(kubectl apply -f - 2>&1 <<'EOT'
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: e2e-invalid
spec:
  selector: {matchLabels: {app: invalid}}
  containers:
    - name: sidecar
      image: busybox:1.36
      podInjectPolicy: Middle
EOT
  ); then echo "accepted: $out"; return 1; fi
  [[ "$out" == *'vsidecarset.kb.io'*'spec.container.podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy'* ]] \
    || { echo "$out"; return 1; }
}
check "invalid SidecarSet refused by kubectl apply with the validator's message" invalid_refused

conflict_refused() {
  local out
  if out=$(kubectl apply -f - 2>&1 <<'EOT'
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: e2e-conflict
spec:
  selector: {matchLabels: {app: web}}
  containers:
    - name: log-agent
      image: busybox:1.36
EOT
  ); then echo "accepted: $out"; return 1; fi
  [[ "$out" == *'log-agent'* ]] || { echo "$out"; return 1; }
}
check "SidecarSet conflicting with one in the cluster's catalogue refused" conflict_refused

# Only with the local apiserver, which this script may restart.
survives_apiserver_restart() {
  catalogue_has 3 || return 1 # the 2 examples and e2e-hashed
  "$here/scripts/kube-local/stop.sh" >/dev/null 2>&1
  local started_ms
  curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null || { echo "not ready while the apiserver is down"; return 1; }
  catalogue_has 3 1 || return 1
  started_ms=$(date +%s%3N)
  WITH_KCM=0 "$here/scripts/kube-local/start.sh" >/dev/null || return 1
  # Its RBAC caches fill in the first seconds: what it forbids then is not the identity's fault.
  identity_warmup_since "$started_ms"
  kubectl apply -f - >/dev/null <<'EOT' || return 1
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: e2e-after-restart
spec:
  namespace: e2e-other
  selector: {matchLabels: {app: after}}
  containers:
    - name: after-sidecar
      image: busybox:1.36
EOT
  # The watches reconnect with backoff (0.8 s doubling, at most 30 s).
  catalogue_has 4 300
}
if [ "$started_local" = 1 ]; then
  check "apiserver restarted: last snapshot kept and ready, watches reconnect and see new SidecarSets" survives_apiserver_restart
fi

# SidecarSet revision history, kept by serve's SidecarSet controller in kruise-system.
# shellcheck source=scripts/lib/sidecarset-history-e2e.sh
. scripts/lib/sidecarset-history-e2e.sh
check "SidecarSet history: two revisions in kruise-system as OpenKruise writes them, status.latestRevision, a new pod stamped with it" history_written
check "SidecarSet history: injectionStrategy.revision.revisionName gives a new pod the old sidecar and its stamp" history_revision_name_injected
check "SidecarSet history: a rollback reuses its revision, truncation to revisionHistoryLimit keeps what pods run" history_rollback_and_truncation
check "SidecarSet history: customVersion labels its revision, injectionStrategy.revision.customVersion injects it" history_custom_version_injected
check "SidecarSet history: a deleted revision refuses new pods with OpenKruise's message, shown as condition, event and metric" history_missing_revision_reported
history_cleanup

# resourcesPolicy: the sidecar's resources computed from the pod's app container at creation.
resources_policy_computed() {
  kubectl apply -f - >/dev/null <<'EOT' || return 1
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata:
  name: e2e-sized
spec:
  selector: {matchLabels: {app: sized}}
  containers:
    - name: sized-agent
      image: busybox:1.36
      resourcesPolicy:
        targetContainersMode: sum
        targetContainersNameRegex: "^app$"
        resourcesExpr:
          limits: {cpu: "cpu*50%", memory: "max(memory*25%, 200Mi)"}
          requests: {cpu: "max(cpu*50%, 50m)"}
EOT
  local resources=""
  for _ in $(seq 1 50); do
    resources=$(kubectl create -o json -f - 2>/dev/null <<'EOT' | jq -c '.spec.containers[] | select(.name == "sized-agent") | .resources'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "sized-", "namespace": "e2e-other", "labels": {"app": "sized"}},
 "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
   "resources": {"limits": {"cpu": "400m", "memory": "1Gi"}, "requests": {"cpu": "200m", "memory": "512Mi"}}}]}}
EOT
    ) && [ -n "$resources" ] && break
    sleep 0.2
  done
  kubectl delete sidecarset e2e-sized >/dev/null
  kubectl delete pod -n e2e-other -l app=sized --wait=false >/dev/null 2>&1
  # limits: 400m*50%, max(1Gi*25%, 200Mi); requests: max(200m*50%, 50m), and for memory (no
  # expression) the apiserver's default of a missing request: the limit.
  [ "$resources" = '{"limits":{"cpu":"200m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"256Mi"}}' ] \
    || { echo "sidecar resources: ${resources:-none}"; return 1; }
}
check "SidecarSet resourcesPolicy: a new pod's sidecar gets the resources computed from its app container" resources_policy_computed

# The workload webhooks: OpenKruise's defaults stored, broken specs refused with every field error.
workload_defaulted() {
  kubectl apply -f - >/dev/null <<'EOT' || return 1
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: e2e-defaulted, namespace: e2e-other}
spec:
  selector: {matchLabels: {app: e2e-defaulted}}
  template:
    metadata: {labels: {app: e2e-defaulted}}
    spec:
      containers: [{name: app, image: "nginx:1.25"}]
EOT
  kubectl get clonesets.v1alpha1.apps.kruise.io -n e2e-other e2e-defaulted -o json | jq -e '
    (.spec.replicas == 1) and (.spec.revisionHistoryLimit == 10) and
    (.spec.updateStrategy == {type: "ReCreate", partition: 0, maxUnavailable: "20%", maxSurge: 0}) and
    (.spec.template.spec.restartPolicy == "Always") and
    (.spec.template.spec.containers[0].imagePullPolicy == "IfNotPresent")' >/dev/null
}
check "CloneSet created through the apiserver: OpenKruise's defaults from the mutating webhook" workload_defaulted

workload_refused() { # webhook manifest expected-message...
  local webhook=$1 manifest=$2 out expected
  shift 2
  if out=$(kubectl apply -f - 2>&1 <<<"$manifest"); then echo "accepted: $out"; return 1; fi
  for expected in "$webhook" "$@"; do
    [[ "$out" == *"$expected"* ]] || { echo "$out"; return 1; }
  done
}
check "invalid CloneSet refused by kubectl apply with the validator's message" workload_refused vcloneset.kb.io \
'
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: e2e-invalid, namespace: e2e-other}
spec:
  selector: {matchLabels: {app: e2e-invalid}}
  template:
    metadata: {labels: {app: e2e-invalid}}
    spec:
      containers: [{name: app, image: "nginx:1.25"}]
  updateStrategy: {type: InPlaceOnly, maxSurge: 1}' \
  'spec.updateStrategy.maxSurge' 'can not use maxSurge with strategy type InPlaceOnly'
check "invalid Advanced StatefulSet refused by kubectl apply with every field error in one message" workload_refused vstatefulset.kb.io \
'
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: e2e-invalid, namespace: e2e-other}
spec:
  serviceName: e2e-invalid
  selector: {matchLabels: {app: e2e-invalid}}
  template:
    metadata: {labels: {app: e2e-invalid}}
    spec:
      containers: [{name: app, image: "nginx:1.25"}]
  podManagementPolicy: Sometimes
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}' \
  'spec.podManagementPolicy: Invalid value: "Sometimes"' \
  'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"'
check "invalid Advanced DaemonSet refused by kubectl apply with the validator's message" workload_refused vdaemonset.kb.io \
'
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: e2e-invalid, namespace: e2e-other}
spec:
  selector: {matchLabels: {app: e2e-invalid}}
  template:
    metadata: {labels: {app: e2e-invalid}}
    spec:
      containers: [{name: app, image: "nginx:1.25"}]
  lifecycle: {inPlaceUpdate: {labelsHandler: {example.com/x: "y"}}}' \
  'spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet'
protected_delete_refused() {
  kubectl label clonesets.apps.kruise.io -n e2e-other e2e-defaulted policy.kruise.io/delete-protection=Always >/dev/null || return 1
  local out
  if out=$(kubectl delete clonesets.apps.kruise.io -n e2e-other e2e-defaulted 2>&1); then echo "deleted: $out"; return 1; fi
  [[ "$out" == *'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always'* ]] || { echo "$out"; return 1; }
  kubectl label clonesets.apps.kruise.io -n e2e-other e2e-defaulted policy.kruise.io/delete-protection- >/dev/null || return 1
  kubectl delete clonesets.apps.kruise.io -n e2e-other e2e-defaulted >/dev/null
}
check "CloneSet labelled delete-protection=Always: deletion refused, allowed once unlabelled" protected_delete_refused

# OpenKruise's deletion protection of Kubernetes' own objects, through the apiserver.
refused_delete() { # expected-message kubectl-delete-args...
  local expected=$1 out
  shift
  if out=$(kubectl delete "$@" --wait=false 2>&1); then echo "     deleted: $out"; return 1; fi
  [[ "$out" == *"$expected"* ]] || { echo "     $out"; return 1; }
}
namespace_protected() {
  local ns=e2e-protected
  kubectl create namespace $ns >/dev/null || return 1
  kubectl label namespace $ns policy.kruise.io/delete-protection=Always >/dev/null || return 1
  refused_delete 'admission webhook "vnamespace.kb.io" denied the request: forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always' \
    namespace $ns || return 1
  # Cascading: held while an active pod, then a bound claim, remains.
  kubectl label namespace $ns policy.kruise.io/delete-protection=Cascading --overwrite >/dev/null || return 1
  create_pod "$(web_pod $ns '{"name": "keeper", "labels": {"app": "keeper"}}')" >/dev/null || return 1
  refused_delete 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 1>0' \
    namespace $ns || return 1
  kubectl delete pod -n $ns keeper --grace-period=0 --force >/dev/null 2>&1 || return 1
  kubectl create -n $ns -f - >/dev/null <<'EOT' || return 1
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOT
  kubectl patch pvc -n $ns data --subresource=status --type=merge -p '{"status": {"phase": "Bound"}}' >/dev/null || return 1
  refused_delete 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and "Bound" status pvc 1>0' \
    namespace $ns || return 1
  kubectl patch pvc -n $ns data --subresource=status --type=merge -p '{"status": {"phase": "Lost"}}' >/dev/null || return 1
  kubectl delete namespace $ns --wait=false >/dev/null
}
check "Namespace labelled delete-protection: Always refused; Cascading refused while an active pod, then a bound claim, remains, then deleted" \
  namespace_protected
workloads_and_services_protected() {
  kubectl create deployment -n e2e-other e2e-protected --image=nginx:1.25 --replicas=2 >/dev/null || return 1
  kubectl label deployment -n e2e-other e2e-protected policy.kruise.io/delete-protection=Cascading >/dev/null || return 1
  refused_delete 'admission webhook "vbuiltindeployment.kb.io" denied the request: forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0' \
    deployment -n e2e-other e2e-protected || return 1
  kubectl scale deployment -n e2e-other e2e-protected --replicas=0 >/dev/null || return 1
  kubectl delete deployment -n e2e-other e2e-protected --wait=false >/dev/null || return 1
  kubectl create service clusterip -n e2e-other e2e-protected --tcp=80:80 >/dev/null || return 1
  kubectl label service -n e2e-other e2e-protected policy.kruise.io/delete-protection=Always >/dev/null || return 1
  refused_delete 'admission webhook "vservice.kb.io" denied the request: forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always' \
    service -n e2e-other e2e-protected || return 1
  kubectl label service -n e2e-other e2e-protected policy.kruise.io/delete-protection- >/dev/null || return 1
  kubectl delete service -n e2e-other e2e-protected --wait=false >/dev/null
}
check "Deployment labelled Cascading refused while it has replicas; Service labelled Always refused, deleted once unlabelled" \
  workloads_and_services_protected
# A CRD's objects are counted as the webhook's identity: a CRD of another group needs the grant
# docs/admission.md shows (list on its resource), given here as an operator would.
crd_protected() {
  kubectl apply -f - >/dev/null <<'EOT' || return 1
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.kruise.io
  labels: {policy.kruise.io/delete-protection: Cascading}
spec:
  group: e2e.kruise.io
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kruise-webhook-count-widgets}
rules:
  - apiGroups: [e2e.kruise.io]
    resources: [widgets]
    verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kruise-webhook-count-widgets}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kruise-webhook-count-widgets}
subjects: [{kind: ServiceAccount, name: kruise-webhook, namespace: kruise-system}]
EOT
  kubectl wait --for condition=established crd/widgets.e2e.kruise.io --timeout=30s >/dev/null || return 1
  local created=no
  for _ in $(seq 1 20); do
    printf '{"apiVersion":"e2e.kruise.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"e2e-other"}}' \
      | kubectl create -f - >/dev/null 2>&1 && { created=yes; break; }
    sleep 0.5
  done
  [ "$created" = yes ] || return 1
  refused_delete 'admission webhook "vcustomresourcedefinition.kb.io" denied the request: forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active CRs 1>0' \
    crd widgets.e2e.kruise.io || return 1
  kubectl delete widgets.e2e.kruise.io -n e2e-other w >/dev/null || return 1
  kubectl delete crd widgets.e2e.kruise.io --wait=false >/dev/null || return 1
  kubectl delete clusterrole,clusterrolebinding kruise-webhook-count-widgets >/dev/null
}
check "CRD labelled Cascading refused while an object of it remains, deleted once none does" crd_protected
# ---------------------------------------------------------------------------------------------
# Both API versions of every kind, through the conversion webhook and the admission webhooks.
kubectl create namespace e2e-versions >/dev/null
# versioned KIND VERSION NAME: a minimal object of KIND written as apps.kruise.io/VERSION, in the
# shape that version has (the admission webhooks default it).
versioned() {
  local kind=$1 version=$2 name=$3 template
  template='{"metadata": {"labels": {"app": "'"$name"'"}}, "spec": {"containers": [{"name": "main", "image": "example.com/main:v1"}]}}'
  case "$kind" in
    SidecarSet) jq -n --arg v "$version" --arg n "$name" '{apiVersion: ("apps.kruise.io/" + $v), kind: "SidecarSet",
      metadata: {name: $n}, spec: {selector: {matchLabels: {app: $n}}, containers: [{name: $n, image: "example.com/sidecar:v1"}]}}' ;;
    *) jq -n --arg k "$kind" --arg v "$version" --arg n "$name" --argjson t "$template" '{apiVersion: ("apps.kruise.io/" + $v), kind: $k,
      metadata: {name: $n, namespace: "e2e-versions"},
      spec: ({replicas: 0, selector: {matchLabels: {app: $n}}, template: $t} + (if $k == "StatefulSet" then {serviceName: $n} else {} end)
        | if $k == "DaemonSet" then del(.replicas) else . end)}' ;;
  esac
}
# Every object written in either version reads back in both, with the apiVersion asked for.
both_versions_read_back() {
  local kind plural version name got
  for kind in SidecarSet CloneSet StatefulSet DaemonSet; do
    plural=$(tr '[:upper:]' '[:lower:]' <<<"$kind")s
    for version in v1alpha1 v1beta1; do
      versioned "$kind" "$version" "e2e-$plural-$version" | kubectl create -f - >/dev/null || return 1
    done
    for version in v1alpha1 v1beta1; do
      got=$(kubectl get "$plural.$version.apps.kruise.io" -A -o json \
        | jq -r '[.items[] | select(.metadata.name | startswith("e2e-'"$plural"'-v1")) | .apiVersion + "/" + .metadata.name] | sort | join(" ")')
      [ "$got" = "apps.kruise.io/$version/e2e-$plural-v1alpha1 apps.kruise.io/$version/e2e-$plural-v1beta1" ] \
        || { echo "     $plural.$version: $got"; return 1; }
    done
  done
}
check "SidecarSet, CloneSet, StatefulSet, DaemonSet written as v1alpha1 and as v1beta1 read back as both" both_versions_read_back

# A v1alpha1 SidecarSet pinned by spec.namespace is stored as v1beta1 with a selector on the name
# label, which 1.20 does not set on namespaces: it still injects in its namespace, and only there.
pinned_v1alpha1_injects_in_its_namespace() {
  local stored pod
  stored=$(kubectl get sidecarsets.v1beta1.apps.kruise.io e2e-hashed -o json | jq -c .spec.namespaceSelector)
  [ "$stored" = '{"matchLabels":{"kubernetes.io/metadata.name":"e2e-other"}}' ] || { echo "     stored: $stored"; return 1; }
  kubectl get namespace e2e-other -o json | jq -e '.metadata.labels["kubernetes.io/metadata.name"] == null' >/dev/null \
    || { echo "     this apiserver labels namespaces with their name: the check proves nothing"; return 1; }
  pod=$(create_pod "$(web_pod e2e-other '{"name": "pinned", "labels": {"app": "hashed"}}')") || return 1
  jq -e '[.spec.containers[].name] == ["hashed-sidecar", "app"]' <<<"$pod" >/dev/null \
    || { jq -c '[.spec.containers[].name]' <<<"$pod"; return 1; }
  pod=$(create_pod "$(web_pod e2e-versions '{"name": "pinned", "labels": {"app": "hashed"}}')") || return 1
  jq -e '[.spec.containers[].name] == ["app"]' <<<"$pod" >/dev/null || { jq -c '[.spec.containers[].name]' <<<"$pod"; return 1; }
}
check "v1alpha1 SidecarSet pinned by spec.namespace, stored as v1beta1: injects in its namespace only, on 1.20 (no name label)" \
  pinned_v1alpha1_injects_in_its_namespace

custom_version_v1beta1() {
  versioned SidecarSet v1beta1 e2e-custom | jq '.spec.customVersion = "v2"' | kubectl create -f - >/dev/null || return 1
  kubectl get sidecarsets.v1beta1.apps.kruise.io e2e-custom -o json | jq -e '(.spec.customVersion == "v2")
    and (.metadata.annotations["kruise.io/sidecarset-hash"] | length == 64)
    and (.spec.containers[0].podInjectPolicy == "BeforeAppContainer")' >/dev/null || return 1
  kubectl get sidecarsets.v1alpha1.apps.kruise.io e2e-custom -o json \
    | jq -e '.metadata.labels["apps.kruise.io/sidecarset-custom-version"] == "v2" and .spec.customVersion == null' >/dev/null
}
check "v1beta1 SidecarSet with customVersion: defaulted and hashed, read as v1alpha1 with the custom-version label" custom_version_v1beta1

# The v1beta1 objects of both_versions_read_back, as the mutating webhooks left them.
v1beta1_workloads_defaulted() {
  kubectl get clonesets.v1beta1.apps.kruise.io -n e2e-versions e2e-clonesets-v1beta1 -o json | jq -e '
    (.spec.updateStrategy == {type: "RollingUpdate", rollingUpdate: {podUpdatePolicy: "ReCreate", partition: 0, maxUnavailable: "20%", maxSurge: 0}})
    and (.spec.revisionHistoryLimit == 10) and (.spec.template.spec.restartPolicy == "Always")' >/dev/null \
    || { kubectl get clonesets.v1beta1.apps.kruise.io -n e2e-versions e2e-clonesets-v1beta1 -o json | jq -c .spec.updateStrategy; return 1; }
  kubectl get daemonsets.v1beta1.apps.kruise.io -n e2e-versions e2e-daemonsets-v1beta1 -o json | jq -e '
    (.spec.burstReplicas == 250)
    and (.spec.updateStrategy == {type: "RollingUpdate", rollingUpdate: {rollingUpdateType: "Standard", maxUnavailable: 1, maxSurge: 0}})
    and (.spec.template.spec.containers[0].imagePullPolicy == "IfNotPresent")' >/dev/null \
    || { kubectl get daemonsets.v1beta1.apps.kruise.io -n e2e-versions e2e-daemonsets-v1beta1 -o json | jq -c .spec; return 1; }
}
check "v1beta1 CloneSet and DaemonSet reviews accepted and defaulted by the webhooks" v1beta1_workloads_defaulted
check "invalid v1beta1 CloneSet refused with the validator's message" workload_refused vcloneset.kb.io \
  "$(versioned CloneSet v1beta1 e2e-sideways | jq '.spec.updateStrategy = {rollingUpdate: {podUpdatePolicy: "Sideways"}}')" \
  '"Sideways"'

stopped_refuses() {
  stop_webhook
  local out
  if out=$(create_pod "$(web_pod e2e-web '{"name": "while-down"}')" 2>&1); then
    echo "created while the webhook was down"; return 1
  fi
  [[ "$out" == *'mpod.kb.io'* ]] || { echo "$out"; return 1; }
  # Namespaces the selector excludes do not depend on the webhook.
  local namespace
  for namespace in e2e-cp kube-system kube-public; do
    create_pod "$(web_pod "$namespace" '{"name": "while-down"}')" >/dev/null || return 1
  done
}
check "webhook stopped: pod creation refused (failurePolicy Fail); pods in kube-system, kube-public and the webhook's namespace created" stopped_refuses

# Everything the webhook's identity asked of the apiserver while it ran (the catalogue's watches,
# the controllers of the serving process, the deletion protection's counts) was allowed.
check "no request of kruise-system/kruise-webhook refused (audit log, webhook log, Warning events)" \
  identity_refusals "$identity_mark" "$work/webhook.log" -- e2e-web e2e-other e2e-operator shop default

# The certificate lifecycle (its own script, also runnable alone): the registrations above point
# at the stopped server and share the configuration names, so they go first.
kubectl delete --ignore-not-found -f "$work/webhooks.json" >/dev/null
certs_lifecycle() {
  KRUISE_WEBHOOK_BIN="$binary" "$here/scripts/e2e-certs.sh" > "$work/e2e-certs.log" 2>&1 \
    || { tail -30 "$work/e2e-certs.log"; return 1; }
  grep -E '^e2e-certs:' "$work/e2e-certs.log" || tail -1 "$work/e2e-certs.log"
}
check "certificate lifecycle (scripts/e2e-certs.sh): rotation job, caBundle, CA rotation under load" certs_lifecycle

# controller_script NAME: scripts/NAME.sh against this apiserver (its own namespace); its summary
# line, or the tail of its output when it fails.
controller_script() {
  # On failure: the failed checks themselves (the tail alone may be replica logs), then the tail.
  BIN="$binary" "$here/scripts/$1.sh" > "$work/$1.log" 2>&1 \
    || { grep '^FAIL ' "$work/$1.log" | head -20; tail -30 "$work/$1.log"; return 1; }
  tail -1 "$work/$1.log"
}
check "controllers (scripts/e2e-controller.sh): barriers, one-at-a-time rollout over 5 pods in batches, partition, Lease hand-over and leader crash" controller_script e2e-controller
check "CloneSet controller (scripts/e2e-cloneset.sh): kubectl scale 0→3→5→2, InPlaceOnly refusal, W1 in place sidecar first, partition 2 of 5 with maxUnavailable 1, leader killed mid-update, ReCreate with maxSurge" controller_script e2e-cloneset
check "Advanced StatefulSet controller (scripts/e2e-statefulset.sh): the release note's set made in ordinal order with its claims, in place highest ordinal first, kubectl scale in and out, stale claims, the four retention combinations, v1alpha1" controller_script e2e-statefulset
check "Advanced DaemonSet controller (scripts/e2e-daemonset.sh): placement under nodeSelector, node affinity, NoSchedule/NoExecute taints and a cordoned node, the preDelete hook on eviction and on update, a surge and a partitioned rollout, orphans adopted, status counters" controller_script e2e-daemonset

# Its own apiserver, laid out as OpenKruise v1.9.0 leaves a cluster (ports 15443/15379/15380).
check "the switch from OpenKruise v1.9.0 (scripts/e2e-switch.sh): its CRDs, manager and every webhook entry, then the documented switch; no pod recreated or restarted, revisions taken over, both versions read, a new pod injected as its siblings, each workload rolled in place, pod updates and deletes allowed" \
  controller_script e2e-switch

# Its own apiserver, which it stops and restarts (ports 17443/17379/17380).
check "controllers across apiserver restarts and leader kills (scripts/e2e-failover.sh): 30 s outages with one and two replicas, one leader after each and a rollout, leader stops mid-rollout within the budget, one writer at a time in the audit log" \
  controller_script e2e-failover

echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
