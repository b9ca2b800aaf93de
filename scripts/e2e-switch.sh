#!/usr/bin/env bash
# End-to-end switch from OpenKruise v1.9.0 (docs/migrate-from-kruise.md) on a real kube-apiserver.
#
#   scripts/e2e-switch.sh
#
# Always an apiserver of its own (the switch starts from a cluster without this project's CRDs): ports
# E2E_SWITCH_APISERVER_PORT 15443 / E2E_SWITCH_ETCD_PORT 15379 / E2E_SWITCH_ETCD_PEER_PORT 15380; the
# servers it starts listen on the next six ports of the apiserver's (+1 … +6). scripts/e2e.sh runs it.
#
# 1. The cluster as OpenKruise v1.9.0 leaves it (scripts/fixtures/openkruise-v1.9.0/): its CRDs
#    (SidecarSet and DaemonSet stored as v1beta1, CloneSet v1alpha1 only), its manager's Deployment
#    and Service, objects written in both versions. kruise-manager's part, while it "runs", is played
#    by this project's own `serve` (webhooks, conversion and controllers, as the cluster admin): the
#    SidecarSet hashes and the CloneSet and StatefulSet revision hashes it writes are OpenKruise's
#    byte for byte (pinned by src/inject/hash/tests.rs and src/workload/revision/tests.rs). It injects
#    the pods, makes the workloads' ControllerRevisions and pods, and updates each workload in place
#    once (pods carry OpenKruise's in-place state). Then the manager "goes": the stand-in stops, the
#    CRDs' conversion and OpenKruise's two webhook configurations, every entry, point at its Service,
#    which answers nothing (failurePolicy Fail).
# 2. The switch as documented: `kruise-webhook migrate` (the manager, the unserved entries, a
#    PodUnavailableBudget whose protection stops), `migrate --apply` (the CRDs replaced in place,
#    uids and stored versions kept; a second run does nothing; without the rights to read, findings
#    and a refusal), then the install
#    as scripts/e2e.sh makes it: the certs job (as its ServiceAccount) first, the CRDs of deploy/crds
#    replaced in place and the webhook configurations of deploy/ applied (by URL: the apiserver here
#    cannot reach a Service), `serve --external-certs` with its controllers as deploy/'s ServiceAccount.
# 3. Checks: the manager kept at zero replicas; no entry left pointing at OpenKruise's Service or at a
#    path this server does not serve; stored versions kept; no pod recreated or restarted (uids,
#    restart counts, images), no new ControllerRevision; every object read in both versions; a new pod
#    injected exactly as its siblings were; `kubectl get` columns and `kubectl scale`; a template change
#    of the CloneSet, the Advanced StatefulSet and the Advanced DaemonSet rolled in place; pod updates
#    and deletes allowed.
# There is no scheduler or kubelet: scripts/lib/controller-e2e.sh stands in for them.
# E2E_SWITCH_LOGS=DIR keeps the servers' logs.
set -euo pipefail
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
fixtures=scripts/fixtures/openkruise-v1.9.0
base=${E2E_SWITCH_APISERVER_PORT:-15443}
# Its own apiserver on its own ports, whatever a calling script (scripts/e2e.sh) exported.
unset KUBECONFIG APISERVER_PORT ETCD_PORT ETCD_PEER_PORT E2E_AUDIT_LOG
# shellcheck source=scripts/lib/controller-e2e.sh
. scripts/lib/controller-e2e.sh
NS=e2e-switch
# The conversion server of scripts/lib/conversion.sh (base + 2, + 3) plays kruise-manager's /convert.
e2e_begin e2e-switch "$base" "${E2E_SWITCH_ETCD_PORT:-15379}" "${E2E_SWITCH_ETCD_PEER_PORT:-15380}" "${E2E_SWITCH_LOGS:-}"
standin_port=$((base + 4)) standin_admin=$((base + 5)) serve_port=$((base + 1)) serve_admin=$((base + 6))
mwc=kruise-mutating-webhook-configuration vwc=kruise-validating-webhook-configuration

# webhooks_by_url FILE BASE_URL CA_FILE [NAME_PREFIX]: the webhook configurations of FILE as a List,
# each entry's Service turned into BASE_URL + its path (as scripts/e2e.sh registers them). `service:
# null` so that `kubectl apply` over an entry of the same name that names the Service drops it.
webhooks_by_url() {
  kubectl create --dry-run=client -o json -f "$1" \
    | jq -s --arg base "$2" --arg ca "$(base64 -w0 < "$3")" --arg prefix "${4:-}" \
      '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
        | .metadata.name = $prefix + .metadata.name
        | .webhooks[] |= (.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca, service: null})]}'
}
# Every pod of the namespace: uid, restart counts, images, revision label.
pods_state() {
  kubectl get pods -n "$NS" -o json | jq -S '[.items[] | {name: .metadata.name, uid: .metadata.uid,
    revision: .metadata.labels["controller-revision-hash"],
    restarts: [.status.containerStatuses[]? | {name, restartCount}], images: [.spec.containers[] | .image]}] | sort_by(.name)'
}
revisions() { kubectl get controllerrevisions -n "$NS" -o json | jq -c '[.items[].metadata.name] | sort'; }
# What injection put into a pod: the sidecar containers, volumes and hash annotations (less the
# time of injection).
# The revision a pod got (controllerRevision) is the SidecarSet's status.latestRevision at its
# admission: the stand-in ran no SidecarSet controller, so the siblings have none, while after the
# switch this project's controller has written it or not yet. It is compared apart
# (new_pod_injected_as_siblings).
injected() {
  jq -S '{sidecars: [.spec.containers[] | select(.name != "main")], volumes: [.spec.volumes[]? | select(.name | startswith("kube-api-access") | not)],
    hash: (.metadata.annotations["kruise.io/sidecarset-hash"] // "{}" | fromjson | map_values(del(.updateTimestamp, .controllerRevision))),
    hashWithoutImage: (.metadata.annotations["kruise.io/sidecarset-hash-without-image"] // "{}" | fromjson | map_values(del(.updateTimestamp)))}'
}
# ready KIND NAME N: the workload reports N replicas, all updated and ready, at its current generation.
ready() {
  kubectl get "$1.apps.kruise.io" -n "$NS" "$2" -o json | jq -e --argjson n "$3" '
    (.status.observedGeneration == .metadata.generation) and
    (if .kind == "DaemonSet" then (.status.desiredNumberScheduled == $n and .status.updatedNumberScheduled == $n and .status.numberReady == $n)
     else (.status.replicas == $n and .status.updatedReplicas == $n and .status.readyReplicas == $n) end)' >/dev/null
}
all_ready() { ready clonesets switch-clone "${1:-3}" && ready statefulsets switch-sts 2 && ready daemonsets switch-ds 1; }
# in_place APP IMAGE: every pod of APP runs IMAGE in "main", with the uid it had before ($tmp/APP.uids).
in_place() {
  local now
  now=$(kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c --arg i "$2" \
    '[.items[] | select(.metadata.deletionTimestamp == null) | {uid: .metadata.uid,
      at: ([.spec.containers[] | select(.name == "main") | .image][0] == $i and ([.status.containerStatuses[]? | select(.name == "main") | .image][0] == $i))}]
     | {uids: (map(.uid) | sort), at: all(.at)}') || return 1
  jq -e --slurpfile before "$tmp/$1.uids" '.at and .uids == $before[0]' <<<"$now" >/dev/null
}
record_uids() { kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c '[.items[].metadata.uid] | sort' > "$tmp/$1.uids"; }
set_image() { # RESOURCE NAME IMAGE
  kubectl patch "$1.apps.kruise.io" -n "$NS" "$2" --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$3\"}]" >/dev/null
}

# --- 1. OpenKruise v1.9.0's cluster ------------------------------------------------------------
# Its CRDs, their conversion on the stand-in's server while its manager runs.
apply_crds "$fixtures/crds.yaml"
kubectl apply -f "$fixtures/manager.yaml" >/dev/null
e2e_namespace
kubectl label namespace "$NS" switch.e2e/mesh=true >/dev/null
kubectl create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
EOF
# A new node is tainted not-ready until a kubelet reports; there is none.
kubectl taint node node-1 node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true

"$BIN" serve --kubeconfig "$KUBECONFIG" --cert-dir "$tmp/standin-certs" \
  --listen "127.0.0.1:$standin_port" --admin-listen "127.0.0.1:$standin_admin" > "$tmp/standin.log" 2>&1 &
standin_pid=$!
watch_pids="$watch_pids $standin_pid"
server_ready "$standin_admin" "$standin_pid" "$tmp/standin.log"
# The stand-in's webhooks under names of their own, so that OpenKruise's configurations come later
# whole, as its manager left them.
webhooks_by_url deploy/webhooks.yaml "https://127.0.0.1:$standin_port" "$tmp/standin-certs/ca.crt" standin- > "$tmp/standin-webhooks.json"
kubectl apply -f "$tmp/standin-webhooks.json" >/dev/null
# The apiserver picks configurations up asynchronously: until a SidecarSet comes back hashed from a
# dry run, then the objects, once.
hashed_dry_run() {
  kubectl create --dry-run=server -o json -f "$fixtures/objects.yaml" 2>/dev/null \
    | jq -s -e '[.[] | if .kind == "List" then .items[] else . end | select(.kind == "SidecarSet")
      | .metadata.annotations["kruise.io/sidecarset-hash"] | length == 64] | all and length == 2' >/dev/null
}
wait_for 30 "the stand-in's webhooks registered" hashed_dry_run
check "OpenKruise's objects written in v1alpha1 and v1beta1" eval 'kubectl create -f "$fixtures/objects.yaml" >/dev/null'
until_kubelet 90 "the workloads' pods made, injected and running (CloneSet 3, StatefulSet 2, DaemonSet 1)" all_ready
set_image clonesets switch-clone example.com/clone:v2
record_uids switch-clone
in_place_state() {
  all_ready && in_place switch-clone example.com/clone:v2 && kubectl get pods -n "$NS" -l app=switch-clone -o json \
    | jq -e '[.items[] | .metadata.annotations["apps.kruise.io/inplace-update-state"] != null] | all' >/dev/null
}
until_kubelet 60 "the CloneSet updated in place once: its pods carry OpenKruise's in-place state" in_place_state
layout_as_openkruise() {
  local crds
  crds=$(kubectl get crd -o json | jq -r '[.items[] | select(.spec.group == "apps.kruise.io") | "\(.spec.names.plural):\(.status.storedVersions | join(","))"] | sort | join(" ")')
  echo "     stored versions: $crds"
  [ "$crds" = "clonesets:v1alpha1 daemonsets:v1beta1 sidecarsets:v1beta1 statefulsets:v1beta1" ] || return 1
  kubectl get pods -n "$NS" -l switch.e2e/sidecar=true -o json | jq -e '.items | length == 5 and all(
    [.spec.containers[].name] as $c | ($c | index("log-agent")) != null and ($c | index("mesh-proxy")) != null
    and (.metadata.annotations["kruise.io/sidecarset-hash"] | fromjson | keys == ["switch-log-agent", "switch-mesh"]))' >/dev/null \
    || { echo "     pods not injected by both SidecarSets"; return 1; }
  echo "     revisions: $(revisions)"
}
check "the cluster as OpenKruise v1.9.0 leaves it: stored versions, pods injected by both SidecarSets, in-place state, revisions" layout_as_openkruise

# The manager goes: the stand-in stops; OpenKruise's configurations, every entry, and the CRDs'
# conversion point at its Service, which answers nothing.
kill "$standin_pid" 2>/dev/null || true
wait "$standin_pid" 2>/dev/null || true
kubectl delete -f "$tmp/standin-webhooks.json" >/dev/null
# OpenKruise's Advanced DaemonSet hashes its revisions with Kubernetes' ComputeHash over a Go struct
# dump, which no other program reproduces (src/workload/revision.rs): the DaemonSet's revision, its
# pods and its status are given such a hash, as OpenKruise leaves them.
go_hash=7c9b6d5f48
go_hashed_daemonset() {
  local rev
  rev=$(kubectl get controllerrevisions -n "$NS" -o json | jq -c '[.items[] | select(.metadata.ownerReferences[0].kind == "DaemonSet")]
    | if length == 1 then .[0] else error("DaemonSet revisions: \(length)") end') || return 1
  jq --arg h "$go_hash" '.metadata |= {name: ("switch-ds-" + $h), namespace, ownerReferences, annotations,
    labels: ((.labels // {}) + {"controller-revision-hash": $h})}' <<<"$rev" | kubectl create -f - >/dev/null || return 1
  kubectl delete controllerrevision -n "$NS" "$(jq -r .metadata.name <<<"$rev")" >/dev/null || return 1
  kubectl label pods -n "$NS" -l app=switch-ds controller-revision-hash=$go_hash --overwrite >/dev/null || return 1
  kubectl patch daemonsets.v1beta1.apps.kruise.io -n "$NS" switch-ds --subresource=status --type=merge \
    -p "{\"status\": {\"updateRevision\": \"$go_hash\"}}" >/dev/null
}
check "the Advanced DaemonSet's revision, pods and status carry a hash of Go's ComputeHash (switch-ds-$go_hash)" go_hashed_daemonset
# Created, not applied: as the chart and the manager leave them, without kubectl's last-applied
# record (with one, `kubectl apply` would drop the entries deploy/ lacks, which it does not do here).
kubectl create -f "$fixtures/webhooks.yaml" >/dev/null
kubectl apply -f "$fixtures/crds.yaml" >/dev/null
manager_gone_refuses() {
  local out
  # The apiserver picks configurations up asynchronously.
  for _ in $(seq 1 50); do
    out=$(kubectl label pod -n "$NS" -l app=switch-sts switch.e2e/probe=1 --overwrite 2>&1) || break
    sleep 0.2
  done
  [[ "$out" == *'vpod.kb.io'* ]] || { echo "     $out"; return 1; }
}
check "with the manager gone, OpenKruise's vpod.kb.io refuses pod updates (failurePolicy Fail)" manager_gone_refuses
pods_state > "$tmp/pods.before"
revisions > "$tmp/revisions.before"
kubectl get pods -n "$NS" -l app=switch-clone -o json | jq '.items[0]' | injected > "$tmp/injected.before"

# --- 2. The switch -----------------------------------------------------------------------------
migrate_reports() {
  "$BIN" migrate -o json > "$tmp/migrate.json" 2>"$tmp/migrate.log" || { cat "$tmp/migrate.log"; return 1; }
  jq -e 'tostring | contains("vpod.kb.io") and contains("kruise-controller-manager")' "$tmp/migrate.json" >/dev/null \
    || { jq -c . "$tmp/migrate.json" | cut -c1-600; return 1; }
  # The objects whose protection stops, and the CRDs it would replace (none blocked).
  jq -e '(.findings | any(.finding == "unrunObjects" and .kind == "PodUnavailableBudget" and .objects == ["e2e-switch/switch-pub"]))
    and ([.steps[] | select(.step == "replaceCrd") | .name] | length == 4) and (.blocked | not)' "$tmp/migrate.json" >/dev/null \
    || { jq -c '[.findings[] | select(.finding != "unservedEntries")], .steps, .blocked' "$tmp/migrate.json" | cut -c1-600; return 1; }
}
check "kruise-webhook migrate names the running manager, the entries this server does not serve, the PodUnavailableBudget" migrate_reports
kubectl get crd -o json | jq -S '[.items[] | {name: .metadata.name, uid: .metadata.uid, stored: .status.storedVersions}]' > "$tmp/crds.before"
check "kruise-webhook migrate --apply" "$BIN" migrate --apply
# docs/migrate-from-kruise.md: replaced in place, never deleted; what this project serves.
crds_replaced_in_place() {
  kubectl get crd -o json | jq -S '[.items[] | {name: .metadata.name, uid: .metadata.uid, stored: .status.storedVersions}]' > "$tmp/crds.after"
  diff "$tmp/crds.before" "$tmp/crds.after" | head -10
  cmp -s "$tmp/crds.before" "$tmp/crds.after" || return 1
  kubectl get crd clonesets.apps.kruise.io -o json | jq -e '[.spec.versions[] | select(.served) | .name] == ["v1alpha1", "v1beta1"]
    and .spec.conversion.strategy == "Webhook"' >/dev/null || { echo "     clonesets: not this project's CRD"; return 1; }
}
check "the CRDs replaced in place by migrate --apply (same uids, stored versions kept, this project's versions served)" crds_replaced_in_place
check "kruise-webhook migrate --apply again: nothing to do" \
  eval '"$BIN" migrate --apply > "$tmp/migrate-again.log" 2>&1 && grep -q "nothing to do" "$tmp/migrate-again.log" || { tail -5 "$tmp/migrate-again.log"; false; }'

# Run without the rights to read what it decides on (a ServiceAccount of the test's namespace, granted
# nothing): findings that name what, and an --apply that writes nothing.
migrate_unreadable() {
  kubectl create serviceaccount -n "$NS" migrate-reader >/dev/null || return 1
  identity_kubeconfig migrate-reader "$tmp/reader.kubeconfig" "$NS" || return 1
  KUBECONFIG=$tmp/reader.kubeconfig "$BIN" migrate -o json > "$tmp/migrate-limited.json" 2>"$tmp/migrate-limited.log" \
    || { cat "$tmp/migrate-limited.log"; return 1; }
  jq -e '.blocked and (.findings | any(.finding == "unreadable" and (.what | contains("kruise-controller-manager")) and (.reason | startswith("403"))))' \
    "$tmp/migrate-limited.json" >/dev/null || { jq -c .findings "$tmp/migrate-limited.json" | cut -c1-600; return 1; }
  if KUBECONFIG=$tmp/reader.kubeconfig "$BIN" migrate --apply > "$tmp/migrate-limited.log" 2>&1; then
    echo "     --apply succeeded on an incomplete reading"; return 1
  fi
  grep -q -- "--apply refused" "$tmp/migrate-limited.log" || { tail -3 "$tmp/migrate-limited.log"; return 1; }
}
check "kruise-webhook migrate without the rights to read: unreadable findings (403), --apply refused" migrate_unreadable

# The install, as scripts/e2e.sh makes it: the certs job first (as its ServiceAccount) ...
identity_apply deploy/certs/serviceaccount.yaml deploy/certs/rbac.yaml deploy/rbac.yaml
identity_kubeconfig kruise-webhook-certs "$tmp/certs.kubeconfig"
check "the certs job runs (its ServiceAccount) over OpenKruise's configurations" \
  eval 'KUBECONFIG=$tmp/certs.kubeconfig "$BIN" certs --namespace kruise-system > "$tmp/ctl-certs.log" 2>&1 || { tail -5 "$tmp/ctl-certs.log"; false; }'
certs_dir=$tmp/certs
mkdir -p "$certs_dir"
kubectl get secret -n kruise-system kruise-webhook-certs -o json > "$tmp/secret.json"
for key in tls.crt tls.key ca.crt ca-bundle.crt; do
  jq -r --arg k "$key" '.data[$k] // ""' "$tmp/secret.json" | base64 -d > "$certs_dir/$key"
done
# ... then deploy/: the CRDs replaced in place, their conversion on the installed server ...
export E2E_CONVERSION_URL="https://127.0.0.1:$serve_port/convert" E2E_CONVERSION_CA=$certs_dir/ca-bundle.crt
check "deploy/crds applied over OpenKruise's CRDs (replaced in place, stored versions kept)" apply_crds deploy/crds/
# ... the server and its controllers as deploy/'s ServiceAccount ...
# The arguments of deploy/deployment.yaml.
"$BIN" serve --kubeconfig "$CTL_KUBECONFIG" --source=cluster --external-certs --cert-dir "$certs_dir" \
  --service-name=kruise-webhook-service --log-format json \
  --listen "127.0.0.1:$serve_port" --admin-listen "127.0.0.1:$serve_admin" > "$tmp/ctl-serve.log" 2>&1 &
serve_pid=$!
watch_pids="$watch_pids $serve_pid"
check "kruise-webhook serve ready as kruise-system/kruise-webhook" server_ready "$serve_admin" "$serve_pid" "$tmp/ctl-serve.log"
# ... and the webhook configurations of deploy/, merged by name into OpenKruise's.
webhooks_by_url deploy/webhooks.yaml "https://127.0.0.1:$serve_port" "$certs_dir/ca-bundle.crt" > "$tmp/webhooks.json"
# (kubectl warns that OpenKruise's lack its last-applied record, and adds it.)
kubectl apply -f "$tmp/webhooks.json" >/dev/null 2>"$tmp/apply-webhooks.log"

# docs/migrate-from-kruise.md: a look after the install finds nothing left to do.
check "kruise-webhook migrate after the install: no step left" \
  eval '"$BIN" migrate -o json | jq -e "(.steps | length) == 0" >/dev/null'

# --- 3. Checks ---------------------------------------------------------------------------------
manager_kept_at_zero() {
  kubectl get deployment -n kruise-system kruise-controller-manager -o json | jq -e '.spec.replicas == 0' >/dev/null
}
check "OpenKruise's manager kept, scaled to zero" manager_kept_at_zero
entries_served() {
  local ours left
  ours=$(kubectl create --dry-run=client -o json -f deploy/webhooks.yaml | jq -s -c '[.[] | .webhooks[].name] | sort')
  left=$(kubectl get mutatingwebhookconfiguration $mwc -o json; kubectl get validatingwebhookconfiguration $vwc -o json) || return 1
  left=$(jq -s -c '[.[] | .webhooks[] | select(.clientConfig.service != null or (.clientConfig.url | startswith("https://127.0.0.1:'"$serve_port"'/") | not)) | .name]' <<<"$left")
  [ "$left" = "[]" ] || { echo "     entries not on this server: $left"; return 1; }
  left=$(kubectl get mutatingwebhookconfiguration $mwc -o json; kubectl get validatingwebhookconfiguration $vwc -o json)
  [ "$(jq -s -c '[.[] | .webhooks[].name] | sort' <<<"$left")" = "$ours" ] \
    || { echo "     entries: $(jq -s -c '[.[] | .webhooks[].name] | sort' <<<"$left")"; return 1; }
}
check "OpenKruise's entries this server does not serve removed; every entry left is deploy/'s, on this server" entries_served
stored_versions_kept() {
  kubectl get crd -o json | jq -e '[.items[] | select(.spec.group == "apps.kruise.io")
    | (.status.storedVersions - [.spec.versions[] | select(.served) | .name]) == []] | all and length == 4' >/dev/null
}
check "every stored version still served" stored_versions_kept

# Time for the controllers to look at everything (a few kubelet passes), then nothing changed.
settle_end=$((SECONDS + 8))
while [ $SECONDS -lt $settle_end ]; do kubelet_pass; sleep 0.5; done
no_pod_touched() {
  pods_state > "$tmp/pods.after"
  diff "$tmp/pods.before" "$tmp/pods.after" | head -20
  cmp -s "$tmp/pods.before" "$tmp/pods.after"
}
check "no pod recreated, restarted or changed by the switch (uids, restart counts, images, revisions of $(jq length "$tmp/pods.before") pods)" no_pod_touched
check "no new ControllerRevision: the controllers took OpenKruise's over" eval '[ "$(revisions)" = "$(cat "$tmp/revisions.before")" ] || { echo "     $(revisions)"; false; }'
check "the workloads report every pod updated and ready under the new controllers" all_ready

both_versions() {
  local plural version name
  for plural in sidecarsets clonesets statefulsets daemonsets; do
    for version in v1alpha1 v1beta1; do
      name=$(kubectl get "$plural.$version.apps.kruise.io" -A -o json \
        | jq -r --arg v "apps.kruise.io/$version" '[.items[] | select(.apiVersion == $v) | .metadata.name | select(startswith("switch-"))] | sort | join(",")') \
        || return 1
      [ -n "$name" ] || { echo "     $plural.$version: nothing"; return 1; }
    done
  done
  # Written as v1alpha1 with spec.namespace: stored as v1beta1's selector on the name label, and read
  # back as v1alpha1 with that selector (OpenKruise's conversion, lossy on the way back).
  kubectl get sidecarsets.v1alpha1.apps.kruise.io switch-log-agent -o json \
    | jq -e '.spec.namespaceSelector.matchLabels["kubernetes.io/metadata.name"] == "e2e-switch"' >/dev/null \
    || { echo "     switch-log-agent lost its namespace"; return 1; }
}
check "every object read as v1alpha1 and as v1beta1 (the CloneSet's new v1beta1 too)" both_versions

columns() {
  local header
  header=$(kubectl get clonesets.apps.kruise.io -n "$NS" | head -1 | tr -s ' ')
  [ "$header" = "NAME DESIRED UPDATED UPDATED_READY UPDATED_AVAILABLE READY TOTAL AGE" ] || { echo "     $header"; return 1; }
  header=$(kubectl get asts -n "$NS" | head -1 | tr -s ' ')
  [ "$header" = "NAME DESIRED CURRENT UPDATED READY AGE" ] || { echo "     $header"; return 1; }
  header=$(kubectl get daemonsets.apps.kruise.io -n "$NS" | head -1 | tr -s ' ')
  [ "$header" = "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE AGE" ] || { echo "     $header"; return 1; }
  header=$(kubectl get sidecarsets | head -1 | tr -s ' ')
  [ "$header" = "NAME MATCHED UPDATED READY AGE" ] || { echo "     $header"; return 1; }
}
check "kubectl get shows this project's columns for every kind" columns
kubectl scale clonesets.apps.kruise.io -n "$NS" switch-clone --replicas=4 >/dev/null
until_kubelet 60 "kubectl scale: the CloneSet grows to 4" all_ready 4
new_pod_injected_as_siblings() {
  local newest
  newest=$(kubectl get pods -n "$NS" -l app=switch-clone -o json | jq -r --slurpfile b "$tmp/pods.before" \
    '[.items[] | select(.metadata.uid as $u | [$b[0][].uid] | index($u) | not)][0]')
  [ "$newest" != null ] || { echo "     no new pod"; return 1; }
  injected <<<"$newest" > "$tmp/injected.new"
  diff "$tmp/injected.before" "$tmp/injected.new" | head -20
  cmp -s "$tmp/injected.before" "$tmp/injected.new" || return 1
  # Each revision the new pod names is its SidecarSet's latest, as OpenKruise stamps it.
  local set revision latest
  while read -r set revision; do
    latest=$(kubectl get sidecarset "$set" -o jsonpath='{.status.latestRevision}')
    [ "$revision" = "$latest" ] || { echo "     $set: the pod names revision $revision, the set's latest is $latest"; return 1; }
  done < <(jq -r '.metadata.annotations["kruise.io/sidecarset-hash"] | fromjson | to_entries[]
    | select(.value.controllerRevision != null) | "\(.key) \(.value.controllerRevision)"' <<<"$newest")
}
check "the new pod injected exactly as OpenKruise injected its siblings (sidecars, volumes, hash annotations)" new_pod_injected_as_siblings

for app in switch-clone switch-sts switch-ds; do record_uids $app; done
set_image clonesets switch-clone example.com/clone:v3
set_image statefulsets switch-sts example.com/sts:v2
set_image daemonsets switch-ds example.com/ds:v2
until_kubelet 90 "CloneSet template change rolled in place (same uids)" in_place switch-clone example.com/clone:v3
until_kubelet 90 "Advanced StatefulSet template change rolled in place (same uids)" in_place switch-sts example.com/sts:v2
until_kubelet 90 "Advanced DaemonSet template change rolled in place (same uids)" in_place switch-ds example.com/ds:v2
until_kubelet 60 "every workload reports its pods updated and ready" all_ready 4

pod_update_and_delete() {
  local victim
  kubectl label pod -n "$NS" -l app=switch-sts switch.e2e/probe=2 --overwrite >/dev/null || return 1
  victim=$(kubectl get pods -n "$NS" -l app=switch-clone -o jsonpath='{.items[0].metadata.name}')
  kubectl delete pod -n "$NS" "$victim" --wait=false >/dev/null || return 1
  echo "$victim" > "$tmp/victim"
}
check "pod updates and deletes allowed (no stale entry refuses them)" pod_update_and_delete
replaced() {
  all_ready 4 && ! kubectl get pods -n "$NS" -o name | grep -qx "pod/$(cat "$tmp/victim")"
}
until_kubelet 60 "the deleted CloneSet pod replaced" replaced
