#!/usr/bin/env bash
# End-to-end checks on a real node: etcd, kube-apiserver, controller-manager, scheduler, kubelet, containerd and runc
# (scripts/kube-node/, Kubernetes v1.20.2 from Debian's archive), so containers really start, wait for their barrier
# and restart in place.
#
#   a. launch priority: containers start in priority order (startedAt, barrier keys), the pods end Ready;
#   b. SidecarSet in-place upgrade over three pods (maxUnavailable 1), then two launch priorities in two batches;
#   c. CloneSet in-place update (the v1.1 release-note example: sidecar and main images together, two batches), and the
#      grace period measured over 12 in-place updates (gate False to image patched, never less than the grace);
#      skipped while the CloneSet controller is missing;
#   d. the install from deploy/ (overlay scripts/kube-node/overlay: image and 1.20 API versions only): certificate
#      Job, caBundle, two Ready replicas, the Lease, injection through the Service, Lease hand-over under load, the
#      node agent's DaemonSet, an Advanced StatefulSet (its claim bound, updated in place) and an Advanced DaemonSet
#      run by the installed controllers, and no request of the installed identities refused (the apiserver's audit
#      log of kruise-system's ServiceAccounts, the pods' logs, Warning events);
#   e. `kubectl rollout restart` of the webhook Deployment under pod-creation load: no failed creation, no pod
#      without its sidecar;
#   f. the node agent (`node-agent` on the host, CRI over the node's containerd socket), run after c: the v1.1
#      release-note example with the annotation and the main image changed together (sidecar restarted first with
#      the new env value, then main at v2, same pod), then the annotation alone (only the sidecar restarts);
#   g. Advanced StatefulSets with real PVCs: pre-created hostPath PersistentVolumes bound by the controller-manager's
#      PV binder; a file the pod writes into its volume survives an in-place update and a deleted-and-recreated pod;
#      scaling in deletes the scaled-in claims (whenScaled Delete, the garbage collector) or keeps them (Retain);
#      deleting the set deletes every claim (whenDeleted Delete) or keeps them (Retain);
#   h. the Advanced DaemonSet (the v1.1 release note's, preDelete labelsHandler example.io/block-deleting): its pod
#      runs on the node, Ready, the status counting it; an image change with InPlaceIfPossible restarts only that
#      container (same pod, new containerID and imageID); a recreate update (Standard, an env change) leaves the pod
#      PreparingDelete while it carries the hook's label, and once the label is removed the pod is replaced;
#   i. SidecarSet hot upgrade (scripts/lib/node-phase-hot-upgrade.sh): a HotUpgrade sidecar over two pods, its image
#      changed twice back to back (the working copy switches, the other goes back to the empty image, a copy serving
#      throughout, the app container never restarted), then to an image that cannot be pulled (the working copy keeps
#      running, the rollout stops at one pod and the status says so);
#   j. in-place updates that cannot hang, and markPodNotReady (scripts/lib/node-phase-inplace.sh): a CloneSet updated in
#      place between two tags of one image (same digest), and between a fully qualified name and its short form: each
#      pod restarted once, the rollout finishes; a CloneSet whose inPlaceUpdate hook has markPodNotReady, behind a
#      Service: its pod leaves the Endpoints' addresses (KruisePodReady False) before its image is patched and comes back
#      after.
# a-c and f-j run the release binary on the host (`serve --kubeconfig`, webhooks registered by URL as scripts/e2e.sh does);
# d-e run it as pods, from a local image with the Dockerfile's runtime layout (scripts/kube-node/mkimage.sh).
#
# Needs root and cgroups (else it fails with one line saying what is missing). Builds once (cached under
# ~/.cache/kruise-webhook/kube-local and kube-node), starts the node, stops it by PID on exit and puts back the host
# settings it changed. Each phase prints its duration. E2E_NODE_PHASES=abcdefghij selects phases (e needs d);
# E2E_NODE_LOAD_RATE (pods/s, default 4) sets the creation rate of d and e; E2E_NODE_BIN=path uses that release
# binary instead of `cargo build --release`; E2E_NODE_KEEP_LOGS=dir keeps the webhook and load logs of a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
export KUBE_LOCAL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
export KUBE_NODE=${KUBE_NODE:-$HOME/.cache/kruise-webhook/kube-node}
# Ports apart from scripts/e2e.sh's apiserver (16443/12379/12380) and the webhook it runs (19443/19090).
export APISERVER_PORT=${E2E_NODE_APISERVER_PORT:-26443} ETCD_PORT=${E2E_NODE_ETCD_PORT:-22379}
export ETCD_PEER_PORT=${E2E_NODE_ETCD_PEER_PORT:-22380}
webhook_port=${E2E_NODE_WEBHOOK_PORT:-29443}
admin_port=${E2E_NODE_ADMIN_PORT:-29090}
phases=${E2E_NODE_PHASES:-abcdefghij}
load_rate=${E2E_NODE_LOAD_RATE:-4}
V1=localhost/kube-node/app:v1
V2=localhost/kube-node/app:v2

scripts/kube-node/check-host.sh || exit 1
# identity_mark / identity_refusals: phase d proves the installed identities were refused nothing.
# shellcheck source=scripts/lib/identity.sh
. scripts/lib/identity.sh
for tool in jq kubectl; do
  command -v $tool >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq jq kubernetes-client >/dev/null; break; }
done

t_start=$SECONDS
phase_t0=0
phase_name=""
phase() { # NAME: prints the previous phase's duration and starts timing NAME
  phase_done
  phase_name=$1; phase_t0=$SECONDS
  echo "== $phase_name"
}
phase_done() {
  if [ -n "$phase_name" ]; then echo "   ($phase_name: $((SECONDS - phase_t0)) s)"; fi
  phase_name=""
}

work=$(mktemp -d)
# kubectl's discovery cache of its own (see scripts/e2e.sh).
export KUBECACHEDIR=${KUBECACHEDIR:-$work/kube-cache}
# shellcheck source=scripts/lib/conversion.sh
. scripts/lib/conversion.sh
webhook_pid=""
agent_pid=""
load_pid=""
node_started=0
stop_host_webhook() {
  if [ -n "$webhook_pid" ]; then
    kill "$webhook_pid" 2>/dev/null || true
    wait "$webhook_pid" 2>/dev/null || true
    webhook_pid=""
  fi
}
cleanup() {
  local status=$?
  [ -z "$load_pid" ] || { touch "$work/stop-load"; wait "$load_pid" 2>/dev/null || true; }
  stop_host_webhook
  [ -z "$agent_pid" ] || { kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true; }
  if [ "$node_started" = 1 ]; then
    echo "== stopping the node"
    "$here/scripts/kube-node/stop.sh" > "$work/stop.log" 2>&1 || true
    grep -E 'restored|removed iptables|warning' "$work/stop.log" | sed 's/^/   /' || true
  fi
  if [ "$status" != 0 ] && [ -n "${E2E_NODE_KEEP_LOGS:-}" ]; then
    cp -r "$work" "$E2E_NODE_KEEP_LOGS" && echo "logs kept in $E2E_NODE_KEEP_LOGS"
  fi
  rm -rf "$work"
  echo "e2e-node: total $((SECONDS - t_start)) s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM   # so that an interrupted run still stops the node

passed=0; failed=0; skipped=0
check() { # name command...
  local name=$1 t0=$SECONDS; shift
  if "$@"; then echo "ok   $name ($((SECONDS - t0)) s)"; passed=$((passed + 1))
  else echo "FAIL $name ($((SECONDS - t0)) s)"; failed=$((failed + 1)); fi
}
skip() { echo "skip $*"; skipped=$((skipped + 1)); }
# until_true SECONDS command...: polls every 0.3 s
until_true() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.3
  done
}

# ---------------------------------------------------------------------------------------------------------------
phase "build: kube binaries, node runtime, images (cached), release binary and its image"
scripts/kube-node/setup.sh | grep -v '^image ' || exit 1
if [ -n "${E2E_NODE_BIN:-}" ]; then
  binary=$E2E_NODE_BIN
else
  cargo build --release --locked --quiet
  binary=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)/release/kruise-webhook
fi
rm -f "$KUBE_NODE/images/kruise-webhook-e2e.tar" # start.sh imports every tarball there: only this run's
if [[ $phases == *d* || $phases == *e* ]]; then
  scripts/kube-node/mkimage.sh kruise-webhook e2e "$KUBE_NODE/images" "$binary"
fi

phase "start the node (scripts/kube-node/start.sh)"
scripts/kube-node/stop.sh >/dev/null 2>&1 || true
node_started=1
FRESH=1 scripts/kube-node/start.sh > "$work/start.log" 2>&1 || { tail -30 "$work/start.log"; exit 1; }
grep -E '^\[' "$work/start.log" | tail -3 | sed 's/^/   /'
export KUBECONFIG=$KUBE_NODE/kubeconfig
API=https://127.0.0.1:$APISERVER_PORT
# shellcheck source=scripts/lib/node-phase-inplace.sh
. scripts/lib/node-phase-inplace.sh
inplace_untag # names phase j gave the v1 image in an earlier run (scripts/lib/node-phase-inplace.sh)

# Waits until the namespace's default ServiceAccount has its token: ServiceAccount admission refuses pods before.
new_namespace() { # name [label=value]
  kubectl create namespace "$1" >/dev/null || return 1
  [ -z "${2:-}" ] || kubectl label namespace "$1" "$2" >/dev/null || return 1
  until_true 30 bash -c "[ -n \"\$(kubectl get serviceaccount default -n $1 -o jsonpath='{.secrets[0].name}' 2>/dev/null)\" ]"
}
# A container of the app image, ready one second after it starts (so starts one after another are seconds apart).
app_container() { # name image [priority]
  jq -n --arg name "$1" --arg image "$2" --arg priority "${3:-}" '{name: $name, image: $image,
    env: ([{name: "APP_INTERVAL", value: "30"}]
          + if $priority == "" then [] else [{name: "KRUISE_CONTAINER_PRIORITY", value: $priority}] end),
    readinessProbe: {exec: {command: ["/bin/true"]}, initialDelaySeconds: 1, periodSeconds: 1}}'
}
pod_json() { # namespace name labels-json annotations-json container-json...
  local ns=$1 name=$2 labels=$3 annotations=$4; shift 4
  jq -n --arg ns "$ns" --arg name "$name" --argjson labels "$labels" --argjson annotations "$annotations" \
    --argjson containers "$(printf '%s\n' "$@" | jq -s .)" '{apiVersion: "v1", kind: "Pod",
      metadata: {namespace: $ns, name: $name, labels: $labels, annotations: $annotations},
      spec: {terminationGracePeriodSeconds: 2, containers: $containers}}'
}
pod_ready() { # namespace name
  [ "$(kubectl get pod -n "$1" "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
pods_ready() { # namespace selector count
  [ "$(kubectl get pods -n "$1" -l "$2" -o json | jq '[.items[] | select(.status.conditions // [] | any(.type == "Ready" and .status == "True"))] | length')" = "$3" ]
}

# ---------------------------------------------------------------------------------------------------------------
# The release binary on the host, as scripts/e2e.sh runs it: cluster mode, webhooks registered by URL.
host_webhook() {
  kubectl apply -f deploy/namespace.yaml >/dev/null || return 1 # the controllers' Lease lives in kruise-system
  kubectl kustomize deploy/crds/ > "$work/crds.yaml" || return 1
  kubectl apply -f "$work/crds.yaml" >/dev/null || return 1
  kubectl wait --for=condition=Established --timeout=60s -f "$work/crds.yaml" >/dev/null || return 1
  "$binary" serve --kubeconfig "$KUBECONFIG" --cert-dir "$work/certs" --log-format json \
    --listen "127.0.0.1:$webhook_port" --admin-listen "127.0.0.1:$admin_port" >> "$work/webhook.log" 2>&1 &
  webhook_pid=$!
  until_true 30 curl -fsS -o /dev/null "http://127.0.0.1:$admin_port/readyz" || { tail -20 "$work/webhook.log"; return 1; }
  # The CRDs' conversion by URL too (scripts/lib/conversion.sh), to this webhook.
  E2E_CONVERSION_URL="https://127.0.0.1:$webhook_port/convert" E2E_CONVERSION_CA="$work/certs/ca.crt" \
    apply_crds deploy/crds/ || return 1
  kubectl create --dry-run=client -o json -f deploy/webhooks.yaml \
    | jq -s --arg base "https://127.0.0.1:$webhook_port" --arg ca "$(base64 -w0 < "$work/certs/ca.crt")" \
        '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end
          | .webhooks[] |= (.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})]}' \
    > "$work/webhooks.json" || return 1
  kubectl apply -f "$work/webhooks.json" >/dev/null || return 1
  # registered once the apiserver calls it: a dry-run pod with a priority comes back with its barrier env
  pod_json default probe '{}' '{}' "$(app_container a $V1 1)" "$(app_container b $V1)" > "$work/probe.json"
  until_true 30 bash -c "kubectl create --dry-run=server -o jsonpath='{.spec.containers[0].env[*].name}' -f '$work/probe.json' \
    | grep -q KRUISE_CONTAINER_BARRIER"
}
catalogue_has() { # n: the host webhook's catalogue holds n SidecarSets
  until_true 30 bash -c "curl -fsS http://127.0.0.1:$admin_port/metrics | grep -qx 'kruise_webhook_sidecarsets_loaded $1'"
}

# ---------------------------------------------------------------------------------------------------------------
# a. Launch priority with real containers.
# New first keys per ConfigMap event of a watch: [["p_10"], ["p_5"], ...]; two keys released in one write would be
# one entry of two, and fail the comparison.
barrier_releases() { # watch-file configmap
  jq -s -c --arg cm "$2" '[.[] | select(.object.metadata.name == $cm) | .object.data // {} | keys]
    | reduce .[] as $keys ({seen: [], releases: []};
        ($keys - .seen) as $new | if ($new | length) > 0 then .seen += $new | .releases += [$new] else . end)
    | .releases' "$1"
}
launch_order() { # namespace pod expected-container-order-json expected-keys-json
  local pod started
  pod=$(kubectl get pod -n "$1" "$2" -o json) || return 1
  started=$(jq -c --argjson order "$3" '[$order[] as $n | .status.containerStatuses[] | select(.name == $n)
    | .state.running.startedAt]' <<<"$pod")
  echo "     $2: startedAt in priority order $(jq -c . <<<"$3"): $started"
  jq -e 'length > 1 and all(. != null) and ([range(1; length) as $i | .[$i - 1] < .[$i]] | all)' <<<"$started" >/dev/null \
    || { echo "     containers did not start one after another in priority order"; return 1; }
  local releases; releases=$(barrier_releases "$work/barrier-watch.json" "$2-barrier")
  echo "     $2-barrier keys as they appeared: $releases"
  [ "$releases" = "$(jq -c '[.[] | [.]]' <<<"$4")" ] || { echo "     expected $(jq -c '[.[] | [.]]' <<<"$4")"; return 1; }
  jq -e '.status.phase == "Running" and (.status.conditions | any(.type == "Ready" and .status == "True"))
    and ([.status.containerStatuses[] | .restartCount] | all(. == 0))' <<<"$pod" >/dev/null \
    || { echo "     pod not Running and Ready without restarts"; return 1; }
}
phase_a() {
  local ns=e2e-node-launch t0
  new_namespace $ns || return 1
  kubectl get configmap -n $ns -w --output-watch-events -o json > "$work/barrier-watch.json" 2>/dev/null &
  local watch_pid=$!
  # Declared out of priority order, so the order seen is the priorities', not the spec's.
  pod_json $ns priorities '{}' '{}' "$(app_container low $V1 -1)" "$(app_container high $V1 10)" \
    "$(app_container mid $V1 5)" | kubectl create -f - >/dev/null || return 1
  pod_json $ns ordered '{}' '{"apps.kruise.io/container-launch-priority": "Ordered"}' \
    "$(app_container first $V1)" "$(app_container second $V1)" "$(app_container third $V1)" | kubectl create -f - >/dev/null || return 1
  t0=$SECONDS
  until_true 120 bash -c "$(declare -f pod_ready); pod_ready $ns priorities && pod_ready $ns ordered"
  local ready=$?
  kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null
  [ $ready = 0 ] || { kubectl get pods -n $ns -o wide; return 1; }
  echo "     both pods Ready $((SECONDS - t0)) s after creation"
  check "a. KRUISE_CONTAINER_PRIORITY 10 > 5 > -1: containers start in that order, barrier keys released in that order, pod Running and Ready" \
    launch_order $ns priorities '["high", "mid", "low"]' '["p_10", "p_5", "p_-1"]'
  check "a. apps.kruise.io/container-launch-priority Ordered: containers start in spec order, barrier keys in that order, pod Running and Ready" \
    launch_order $ns ordered '["first", "second", "third"]' '["p_0", "p_-1", "p_-2"]'
}

# ---------------------------------------------------------------------------------------------------------------
# b. SidecarSet in-place upgrade with real containers.
SIDECAR_NS=e2e-node-sidecar
sidecarset_json() { # name selector-app maxUnavailable container-json...
  local name=$1 app=$2 max=$3; shift 3
  jq -n --arg name "$name" --arg app "$app" --arg ns $SIDECAR_NS --argjson max "$max" \
    --argjson containers "$(printf '%s\n' "$@" | jq -s .)" '{apiVersion: "apps.kruise.io/v1alpha1", kind: "SidecarSet",
      metadata: {name: $name}, spec: {namespace: $ns, selector: {matchLabels: {app: $app}},
      updateStrategy: {type: "RollingUpdate", maxUnavailable: $max}, containers: $containers}}'
}
# One line per pod: uid, and per container: containerID imageID restartCount startedAt.
pod_facts() { # namespace selector
  kubectl get pods -n "$1" -l "$2" -o json | jq -c '[.items[] | {name: .metadata.name, uid: .metadata.uid,
    containers: ([.status.containerStatuses[] | {(.name): {id: .containerID, imageID, restarts: .restartCount,
      startedAt: .state.running.startedAt, image, ready}}] | add)}] | sort_by(.name)'
}
# A pod is unavailable when not Ready, or a container runs another image than its spec's yet, or is not ready.
UNAVAILABLE='(reduce .spec.containers[] as $c ({}; .[$c.name] = $c.image)) as $spec
  | (.status.conditions // [] | any(.type == "Ready" and .status == "True") | not)
    or any(.status.containerStatuses[]?; .image != $spec[.name] or (.ready | not))'
unavailable_pods() { # namespace selector
  kubectl get pods -n "$1" -l "$2" -o json | jq "[.items[] | select($UNAVAILABLE)] | length"
}
# The most pods unavailable at once over every pod change a watch delivered (not a sampling).
max_unavailable_in_watch() { # watch-file
  jq -s "reduce .[] as \$e ({pods: {}, max: 0};
    .pods[\$e.object.metadata.name] = (\$e.object | if $UNAVAILABLE then 1 else 0 end)
    | .max = ([.max, (.pods | add)] | max)) | .max" "$1"
}
sidecarset_status() { kubectl get sidecarset "$1" -o json | jq -c '.status // {}'; }
in_place_upgrade() {
  local before after max n status t0=$SECONDS watch_pid
  before=$(pod_facts $SIDECAR_NS app=upgrade)
  kubectl get pods -n $SIDECAR_NS -l app=upgrade -w --output-watch-events -o json > "$work/upgrade-watch.json" 2>/dev/null &
  watch_pid=$!
  kubectl patch sidecarset node-upgrade --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/containers/0/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  while :; do
    n=$(unavailable_pods $SIDECAR_NS app=upgrade)
    status=$(sidecarset_status node-upgrade)
    if [ "$(jq '.updatedReadyPods' <<<"$status")" = 3 ] && [ "$n" = 0 ]; then break; fi
    [ $((SECONDS - t0)) -lt 180 ] || { echo "     not done after 180 s: $status"; return 1; }
    sleep 0.2
  done
  kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null
  max=$(max_unavailable_in_watch "$work/upgrade-watch.json")
  echo "     upgraded in $((SECONDS - t0)) s; at most $max of 3 pods unavailable over $(jq -s length "$work/upgrade-watch.json") pod changes watched; status $status"
  after=$(pod_facts $SIDECAR_NS app=upgrade)
  jq -n --argjson b "$before" --argjson a "$after" --arg v2 "${V2%:*}@sha256:" '
    [range(0; 3) as $i | $b[$i] as $x | $a[$i] as $y |
      {pod: $x.name, same_uid: ($x.uid == $y.uid),
       sidecar: {restarts: $y.containers.sidecar.restarts, new_container: ($x.containers.sidecar.id != $y.containers.sidecar.id),
                 new_image_id: ($x.containers.sidecar.imageID != $y.containers.sidecar.imageID),
                 image_id: $y.containers.sidecar.imageID},
       app: {restarts: $y.containers.app.restarts, same_container: ($x.containers.app.id == $y.containers.app.id)}}]' \
    > "$work/upgrade.json"
  jq -c '.[]' "$work/upgrade.json" | sed 's/^/     /'
  jq -e --arg v2 "${V2%:*}@sha256:" 'length == 3 and all(.same_uid and .sidecar.restarts == 1 and .sidecar.new_container
    and .sidecar.new_image_id and (.sidecar.image_id | startswith($v2)) and .app.restarts == 0 and .app.same_container)' \
    "$work/upgrade.json" >/dev/null || return 1
  [ "$max" -le 1 ] || { echo "     $max pods unavailable at once (maxUnavailable 1)"; return 1; }
  jq -e '.matchedPods == 3 and .updatedPods == 3 and .readyPods == 3 and .updatedReadyPods == 3' <<<"$status" >/dev/null
}
# proxy (priority 100) and agent (50) change together: agent's image is patched only once proxy runs v2 and is ready.
two_batches() {
  local t0=$SECONDS sample violations=0 agent_patched_at="" done_facts state
  kubectl patch sidecarset node-batches --type=json -p "[
    {\"op\": \"replace\", \"path\": \"/spec/containers/0/image\", \"value\": \"$V2\"},
    {\"op\": \"replace\", \"path\": \"/spec/containers/1/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  while :; do
    sample=$(kubectl get pod -n $SIDECAR_NS batches -o json | jq -c '(reduce .spec.containers[] as $c ({}; .[$c.name] = $c.image)) as $spec
      | {spec: $spec, status: (reduce .status.containerStatuses[] as $s ({}; .[$s.name] = {image: $s.image, ready: $s.ready, restarts: $s.restartCount}))}')
    if [ "$(jq -r .spec.agent <<<"$sample")" = "$V2" ] && [ -z "$agent_patched_at" ]; then
      agent_patched_at=$((SECONDS - t0))
      echo "     agent's image patched after ${agent_patched_at} s; proxy then: $(jq -c .status.proxy <<<"$sample")"
      jq -e --arg v2 "$V2" '.status.proxy.image == $v2 and .status.proxy.ready' <<<"$sample" >/dev/null || violations=1
    fi
    if jq -e --arg v2 "$V2" '.status.proxy.image == $v2 and .status.agent.image == $v2 and .status.proxy.ready and .status.agent.ready' \
        <<<"$sample" >/dev/null; then break; fi
    [ $((SECONDS - t0)) -lt 120 ] || { echo "     not done after 120 s: $sample"; return 1; }
    sleep 0.2
  done
  done_facts=$(pod_facts $SIDECAR_NS app=batches | jq -c '.[0].containers | map_values({restarts, startedAt})')
  state=$(kubectl get pod -n $SIDECAR_NS batches -o json | jq -c '.metadata.annotations["apps.kruise.io/inplace-update-state"] // "{}"
    | fromjson | [.containerBatchesRecord[]?.containers]')
  echo "     both upgraded in $((SECONDS - t0)) s: $done_facts; containerBatchesRecord $state"
  [ "$violations" = 0 ] || { echo "     agent patched before proxy ran v2 ready"; return 1; }
  jq -e '.proxy.restarts == 1 and .agent.restarts == 1 and .app.restarts == 0 and .proxy.startedAt < .agent.startedAt' \
    <<<"$done_facts" >/dev/null || return 1
  [ "$state" = '[["proxy"],["agent"]]' ]
}
phase_b() {
  new_namespace $SIDECAR_NS || return 1
  local sidecar; sidecar=$(app_container sidecar $V1 | jq '.podInjectPolicy = "BeforeAppContainer"')
  sidecarset_json node-upgrade upgrade 1 "$sidecar" | kubectl apply -f - >/dev/null || return 1
  sidecarset_json node-batches batches 1 \
    "$(app_container proxy $V1 100)" "$(app_container agent $V1 50)" | kubectl apply -f - >/dev/null || return 1
  catalogue_has 2 || { echo "catalogue does not hold the 2 SidecarSets"; return 1; }
  for i in 0 1 2; do
    pod_json $SIDECAR_NS upgrade-$i '{"app": "upgrade"}' '{}' "$(app_container app $V1)" | kubectl create -f - >/dev/null || return 1
  done
  pod_json $SIDECAR_NS batches '{"app": "batches"}' '{}' "$(app_container app $V1)" | kubectl create -f - >/dev/null || return 1
  until_true 120 bash -c "$(declare -f pods_ready); pods_ready $SIDECAR_NS app=upgrade 3 && pods_ready $SIDECAR_NS app=batches 1" \
    || { kubectl get pods -n $SIDECAR_NS; return 1; }
  [ "$(kubectl get pods -n $SIDECAR_NS -l app=upgrade -o json | jq -c '[.items[] | [.spec.containers[].name]] | unique')" = '[["sidecar","app"]]' ] \
    || { echo "sidecar not injected"; return 1; }
  check "b. SidecarSet image v1 -> v2 over 3 real pods, maxUnavailable 1: same pods, only the sidecar restarted (new containerID and imageID), never more than 1 unavailable, updatedReadyPods 3" \
    in_place_upgrade
  check "b. sidecars of launch priority 100 and 50 upgraded in two batches, the second once the first runs v2 and is ready" \
    two_batches
  kubectl delete sidecarset node-upgrade node-batches >/dev/null
}

# shellcheck source=scripts/lib/node-phase-hot-upgrade.sh
. scripts/lib/node-phase-hot-upgrade.sh

# ---------------------------------------------------------------------------------------------------------------
# c. CloneSet in-place update: the v1.1 release-note example (a sidecar of priority 10 reading an annotation into its
# env, and main) with both images changed to v2 together: two batches, the sidecar first, the same pod. Changing the
# annotation too needs the node agent (phase f); without one the controller recreates such a pod.
cloneset_controller_present() { "$binary" controller --help 2>/dev/null | grep -qi cloneset; }
cloneset_in_place() {
  local ns=e2e-node-cloneset before after t0
  new_namespace $ns || return 1
  jq -n --arg ns $ns --argjson sidecar "$(app_container sidecar $V1 10 | jq '.env += [{name: "APP_CONFIG",
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['"'"'app-config'"'"']"}}}]')" \
    --argjson main "$(app_container main $V1)" '{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet",
      metadata: {name: "sample", namespace: $ns},
      spec: {replicas: 1, selector: {matchLabels: {app: "sample"}}, updateStrategy: {type: "InPlaceIfPossible"},
        template: {metadata: {labels: {app: "sample"}, annotations: {"app-config": "config v1"}},
          spec: {terminationGracePeriodSeconds: 2, containers: [$sidecar, $main]}}}}' | kubectl apply -f - >/dev/null || return 1
  until_true 120 bash -c "$(declare -f pods_ready); pods_ready $ns app=sample 1" || { kubectl get pods -n $ns; return 1; }
  before=$(pod_facts $ns app=sample)
  t0=$SECONDS
  kubectl patch cloneset.apps.kruise.io -n $ns sample --type=json -p "[
    {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$V2\"},
    {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/1/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  until_true 120 bash -c "[ \"\$(kubectl get cloneset.apps.kruise.io -n $ns sample -o jsonpath='{.status.updatedReadyReplicas}')\" = 1 ]" \
    || { kubectl get cloneset.apps.kruise.io -n $ns sample -o json | jq -c .status; kubectl get pods -n $ns -o json | jq -c '.items[] | {n: .metadata.name, a: .metadata.annotations}'; return 1; }
  after=$(pod_facts $ns app=sample)
  batches=$(kubectl get pods -n $ns -l app=sample -o json \
    | jq -c '.items[0].metadata.annotations["apps.kruise.io/inplace-update-state"] | fromjson | [.containerBatchesRecord[]?.containers]')
  echo "     updated in place in $((SECONDS - t0)) s, batches $batches: $(jq -c '.[0].containers | map_values({restarts, image, startedAt})' <<<"$after")"
  jq -n -e --argjson b "$before" --argjson a "$after" --arg v2 "$V2" --argjson batches "$batches" '$b[0].uid == $a[0].uid
    and $a[0].containers.main.restarts == 1 and $a[0].containers.main.image == $v2
    and $a[0].containers.sidecar.restarts == 1 and $a[0].containers.sidecar.image == $v2
    and $a[0].containers.main.imageID != $b[0].containers.main.imageID
    and $a[0].containers.sidecar.imageID != $b[0].containers.sidecar.imageID
    and $a[0].containers.sidecar.startedAt <= $a[0].containers.main.startedAt
    and $batches == [["sidecar"], ["main"]]' >/dev/null
}

# The grace period of in-place updates, measured: a CloneSet of 4 pods with `gracePeriodSeconds: 2` updated 3 times
# (all pods at once), every pod change stamped as the watch delivers it. Per pod and update: from the event where the
# InPlaceUpdateReady gate turns False (the pod leaves endpoints) to the event where its spec gets the new image (what
# makes the kubelet restart the container), and to the one where the kubelet reports the new container; the first
# must never be shorter than the grace.
GRACE_NS=e2e-node-grace
GRACE_SECONDS=2
# Read from the pods, not the CloneSet's status: 4 pods with the image in spec and running it, Ready, gate True.
grace_pods_updated() { # image
  [ "$(kubectl get pods -n $GRACE_NS -l app=grace -o json | jq --arg image "$1" '[.items[]
    | select(.metadata.deletionTimestamp == null and .spec.containers[0].image == $image
      and ([.status.containerStatuses[]? | select(.name == "main" and .image == $image and .ready)] | length) == 1
      and (.status.conditions // [] | any(.type == "Ready" and .status == "True"))
      and (.status.conditions // [] | any(.type == "InPlaceUpdateReady" and .status == "True")))] | length')" = 4 ]
}
# One row per pod and update: {pod, gate_false, image_patched, restarted} (seconds since the epoch), from the stamped
# watch lines {"t": …, "e": watch event}.
GRACE_GAPS='[inputs | {t, pod: .e.object.metadata.name,
    gate: ([.e.object.status.conditions[]? | select(.type == "InPlaceUpdateReady") | .status][0]),
    image: ([.e.object.spec.containers[] | select(.name == "main") | .image][0]),
    cid: ([.e.object.status.containerStatuses[]? | select(.name == "main") | .containerID][0])}]
  | group_by(.pod) | map(sort_by(.t)
    | reduce .[] as $x ({prev: null, open: null, rows: []};
        if .open == null then
          (if .prev != null and .prev.gate != "False" and $x.gate == "False"
           then .open = {pod: $x.pod, gate_false: $x.t, image: .prev.image, cid: .prev.cid} else . end)
        else
          (if .open.image_patched == null and $x.image != .open.image then .open.image_patched = $x.t else . end)
          | (if .open.image_patched != null and $x.cid != null and $x.cid != .open.cid
             then .rows += [.open + {restarted: $x.t} | del(.image, .cid)] | .open = null else . end)
        end
        | .prev = $x)
    | .rows) | add // []'
grace_never_shorter() {
  local watch_pid rows n t0=$SECONDS
  new_namespace $GRACE_NS || return 1
  jq -n --arg ns $GRACE_NS --argjson main "$(app_container main $V1)" --argjson grace $GRACE_SECONDS '{
      apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", metadata: {name: "grace", namespace: $ns},
      spec: {replicas: 4, selector: {matchLabels: {app: "grace"}},
        updateStrategy: {type: "InPlaceIfPossible", maxUnavailable: "100%", inPlaceUpdateStrategy: {gracePeriodSeconds: $grace}},
        template: {metadata: {labels: {app: "grace"}}, spec: {terminationGracePeriodSeconds: 2, containers: [$main]}}}}' \
    | kubectl apply -f - 2> >(grep -v '^Warning: .*maxUnavailable 100%' >&2) >/dev/null || return 1
  until_true 120 grace_pods_updated $V1 || { kubectl get pods -n $GRACE_NS; return 1; }
  # Every line stamped as it arrives. The observer's own lag shortens a gap when it delays the gate event more than
  # the image event (a bash loop reading the pipe byte by byte, on a loaded machine, stamped a gate event 67 ms after
  # the controller had the answer to that write): a buffered reader, both at a higher priority. $! is kubectl's.
  nice -n -10 kubectl get --raw "/api/v1/namespaces/$GRACE_NS/pods?watch=true&labelSelector=app%3Dgrace" \
    > >(nice -n -10 python3 -u -c 'import sys, time
for line in sys.stdin:
    sys.stdout.write("{\"t\":%.6f,\"e\":%s}\n" % (time.time(), line.rstrip("\n")))' > "$work/grace-watch.json") &
  watch_pid=$!
  sleep 1
  for image in $V2 $V1 $V2; do
    kubectl patch cloneset.apps.kruise.io -n $GRACE_NS grace --type=json 2> >(grep -v '^Warning: .*maxUnavailable 100%' >&2) \
      -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$image\"}]" >/dev/null || return 1
    until_true 120 grace_pods_updated "$image" \
      || { kubectl get cloneset.apps.kruise.io -n $GRACE_NS grace -o json | jq -c .status; kill $watch_pid; return 1; }
  done
  sleep 1
  kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null
  sleep 0.5 # the stamping loop writes what it read
  rows=$(jq -n -c "$GRACE_GAPS" < "$work/grace-watch.json") || return 1
  n=$(jq length <<<"$rows")
  echo "     3 updates of 4 pods in $((SECONDS - t0)) s, gracePeriodSeconds $GRACE_SECONDS; seconds from the gate turning False to:"
  jq -r '"       the new image in the spec: " + ([.[] | .image_patched - .gate_false | . * 1000 | round / 1000 | tostring] | join(" ")),
    "       the new container reported: " + ([.[] | .restarted - .gate_false | . * 1000 | round / 1000 | tostring] | join(" "))' <<<"$rows"
  [ "$n" = 12 ] || { echo "     expected 12 measured updates, got $n"; return 1; }
  jq -e --argjson grace $GRACE_SECONDS 'all(.[]; .image_patched - .gate_false >= $grace and .restarted >= .image_patched)' <<<"$rows" >/dev/null
}

# ---------------------------------------------------------------------------------------------------------------
# g. Advanced StatefulSets with real PVCs. Each pod appends "<version> <hostname>" to /data/log when its container
# starts, so the log in the volume's host directory tells every container start the volume saw.
STS_NS=e2e-node-sts
sts_json() { # name replicas policy(OrderedReady|Parallel) whenScaled whenDeleted image
  jq -n --arg ns $STS_NS --arg name "$1" --argjson replicas "$2" --arg policy "$3" --arg scaled "$4" --arg deleted "$5" \
    --arg image "$6" '{apiVersion: "apps.kruise.io/v1beta1", kind: "StatefulSet", metadata: {name: $name, namespace: $ns},
    spec: {replicas: $replicas, serviceName: $name, podManagementPolicy: $policy, selector: {matchLabels: {app: $name}},
      persistentVolumeClaimRetentionPolicy: {whenScaled: $scaled, whenDeleted: $deleted},
      updateStrategy: {type: "RollingUpdate", rollingUpdate: {podUpdatePolicy: "InPlaceIfPossible"}},
      template: {metadata: {labels: {app: $name}}, spec: {terminationGracePeriodSeconds: 2,
        readinessGates: [{conditionType: "InPlaceUpdateReady"}],
        containers: [{name: "app", image: $image, env: [{name: "APP_INTERVAL", value: "30"}],
          command: ["/bin/sh", "-c", "echo \"$(cat /VERSION) $(hostname)\" >> /data/log; exec /bin/sh /app.sh"],
          volumeMounts: [{name: "data", mountPath: "/data"}],
          readinessProbe: {exec: {command: ["/bin/true"]}, initialDelaySeconds: 1, periodSeconds: 1}}]}},
      volumeClaimTemplates: [{metadata: {name: "data"},
        spec: {accessModes: ["ReadWriteOnce"], resources: {requests: {storage: "1Gi"}}}}]}}'
}
# The volume's directory on the host, through the claim's bound PV.
claim_dir() { # claim
  local pv; pv=$(kubectl get pvc -n $STS_NS "$1" -o jsonpath='{.spec.volumeName}') || return 1
  kubectl get pv "$pv" -o jsonpath='{.spec.hostPath.path}'
}
sts_ready() { # name replicas: status readyReplicas = updatedReplicas = replicas, the current revision the update's
  [ "$(kubectl get statefulsets.apps.kruise.io -n $STS_NS "$1" -o json | jq -c '.status | [.readyReplicas, .updatedReplicas,
    .currentRevision == .updateRevision]')" = "[$2,$2,true]" ] && pods_ready $STS_NS "app=$1" "$2"
}
claims_bound() { # selector n
  [ "$(kubectl get pvc -n $STS_NS -l "$1" -o json | jq '[.items[] | select(.status.phase == "Bound")] | length')" = "$2" ]
}
claim_gone() { ! kubectl get pvc -n $STS_NS "$1" >/dev/null 2>&1; }
sts_bound() {
  for i in 0 1 2 3 4 5 6 7; do
    mkdir -p "$work/pv/$i" && chmod 777 "$work/pv/$i"
    jq -n --arg name "e2e-sts-pv-$i" --arg path "$work/pv/$i" '{apiVersion: "v1", kind: "PersistentVolume",
      metadata: {name: $name}, spec: {capacity: {storage: "1Gi"}, accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain", hostPath: {path: $path}}}' | kubectl apply -f - >/dev/null || return 1
  done
  sts_json data 2 OrderedReady Delete Delete $V1 | kubectl apply -f - >/dev/null || return 1
  sts_json keep 2 Parallel Retain Retain $V1 | kubectl apply -f - >/dev/null || return 1
  until_true 180 bash -c "$(declare -f sts_ready pods_ready claims_bound); STS_NS=$STS_NS; sts_ready data 2 && sts_ready keep 2 \
    && claims_bound app=data 2 && claims_bound app=keep 2" \
    || { kubectl get pods,pvc -n $STS_NS -o wide; return 1; }
  kubectl get pvc -n $STS_NS -o json | jq -r '.items[] | "     \(.metadata.name) bound to \(.spec.volumeName), owners \([.metadata.ownerReferences[]? | .kind + "/" + .name])"'
  grep -qx "v1 data-1" "$(claim_dir data-data-1)/log"
}
sts_in_place() {
  local before t0=$SECONDS dir
  before=$(kubectl get pod -n $STS_NS data-1 -o jsonpath='{.metadata.uid}')
  kubectl patch statefulsets.apps.kruise.io -n $STS_NS data --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  until_true 180 bash -c "$(declare -f sts_ready pods_ready); STS_NS=$STS_NS; sts_ready data 2 && \
    [ \"\$(kubectl get pods -n $STS_NS -l app=data -o jsonpath='{.items[*].status.containerStatuses[0].image}')\" = '$V2 $V2' ]" \
    || { kubectl get pods -n $STS_NS -o wide; return 1; }
  dir=$(claim_dir data-data-1)
  echo "     in place in $((SECONDS - t0)) s; $dir/log: $(tr '\n' '|' < "$dir/log")"
  [ "$(kubectl get pod -n $STS_NS data-1 -o jsonpath='{.metadata.uid}')" = "$before" ] || { echo "     pod recreated"; return 1; }
  [ "$(cat "$dir/log")" = "$(printf 'v1 data-1\nv2 data-1')" ]
}
sts_recreated() {
  local before dir volume
  before=$(kubectl get pod -n $STS_NS data-1 -o jsonpath='{.metadata.uid}')
  volume=$(kubectl get pvc -n $STS_NS data-data-1 -o jsonpath='{.spec.volumeName}')
  kubectl delete pod -n $STS_NS data-1 --wait=false >/dev/null || return 1
  until_true 120 bash -c "$(declare -f sts_ready pods_ready); STS_NS=$STS_NS; sts_ready data 2 && \
    [ \"\$(kubectl get pod -n $STS_NS data-1 -o jsonpath='{.metadata.uid}')\" != '$before' ]" \
    || { kubectl get pods -n $STS_NS -o wide; return 1; }
  dir=$(claim_dir data-data-1)
  echo "     data-1 recreated on claim data-data-1 ($volume); log: $(tr '\n' '|' < "$dir/log")"
  [ "$(kubectl get pvc -n $STS_NS data-data-1 -o jsonpath='{.spec.volumeName}')" = "$volume" ] \
    && [ "$(cat "$dir/log")" = "$(printf 'v1 data-1\nv2 data-1\nv2 data-1')" ]
}
sts_scale_in() {
  kubectl scale statefulsets.apps.kruise.io -n $STS_NS data keep --replicas=1 >/dev/null || return 1
  # Ready counts can settle while keep-1 is still terminating on the kubelet: wait for it to go.
  until_true 120 bash -c "$(declare -f sts_ready pods_ready claim_gone); STS_NS=$STS_NS; sts_ready data 1 && sts_ready keep 1 \
    && claim_gone data-data-1 && ! kubectl get pod -n $STS_NS keep-1 >/dev/null 2>&1" \
    || { kubectl get pods,pvc -n $STS_NS; return 1; }
  # The kept claim is still there once its pod is long gone (the collector has had its chance).
  sleep 3
  kubectl get pvc -n $STS_NS data-keep-1 >/dev/null && kubectl get pvc -n $STS_NS data-data-0 >/dev/null \
    || { kubectl get pods,pvc -n $STS_NS; return 1; }
}
sts_deleted() {
  kubectl delete statefulsets.apps.kruise.io -n $STS_NS data keep --wait=false >/dev/null || return 1
  until_true 120 bash -c "$(declare -f claim_gone); STS_NS=$STS_NS; claim_gone data-data-0 \
    && [ -z \"\$(kubectl get pods -n $STS_NS -o name)\" ]" || { kubectl get pods,pvc -n $STS_NS; return 1; }
  sleep 3
  [ "$(kubectl get pvc -n $STS_NS -o jsonpath='{.items[*].metadata.name}')" = "data-keep-0 data-keep-1" ]
}
phase_g() {
  new_namespace $STS_NS || return 1
  check "g. two sets (OrderedReady Delete/Delete, Parallel Retain/Retain), 2 replicas each: hostPath PVs bound to their claims by the PV binder, the pods Ready and writing into their volume" sts_bound
  check "g. image v1 -> v2 in place: same pod, its volume's log holds both starts" sts_in_place
  check "g. pod deleted: recreated on the same claim and volume, the log holds its third start" sts_recreated
  check "g. scaled to 1: whenScaled Delete deletes data-data-1 (garbage collector), Retain keeps data-keep-1" sts_scale_in
  check "g. sets deleted: whenDeleted Delete takes data-data-0 (garbage collector), Retain keeps data-keep-0 and -1" sts_deleted
}

# ---------------------------------------------------------------------------------------------------------------
# h. The Advanced DaemonSet on the real node: the release note's DaemonSet (preDelete labelsHandler) runs its pod, an
# image change with InPlaceIfPossible restarts only that container, and a recreate update waits in PreparingDelete
# while the pod carries the hook's label.
ADS_NS=e2e-node-ads
HOOK_LABEL=example.io/block-deleting
ads_json() { # image rollingUpdateType APP_INTERVAL
  jq -n --arg ns $ADS_NS --arg type "$2" --arg hook $HOOK_LABEL \
    --argjson main "$(app_container main "$1" | jq --arg interval "$3" '.env[0].value = $interval')" '{
      apiVersion: "apps.kruise.io/v1alpha1", kind: "DaemonSet", metadata: {name: "agent", namespace: $ns},
      spec: {selector: {matchLabels: {app: "agent"}},
        lifecycle: {preDelete: {labelsHandler: {($hook): "true"}}},
        updateStrategy: {type: "RollingUpdate", rollingUpdate: {rollingUpdateType: $type, maxUnavailable: 1}},
        template: {metadata: {labels: {app: "agent", ($hook): "true"}},
          spec: {terminationGracePeriodSeconds: 2, containers: [$main]}}}}'
}
# [desired, current, ready, available, updated, misscheduled, unavailable]
ADS_COUNTERS='[.desiredNumberScheduled, .currentNumberScheduled, .numberReady, .numberAvailable, .updatedNumberScheduled,
  .numberMisscheduled, (.numberUnavailable // 0)]'
ads_status() { kubectl get daemonsets.apps.kruise.io -n $ADS_NS agent -o json | jq -c ".status | $ADS_COUNTERS"; }
# The one pod Running, Ready, not being deleted, at the status's updateRevision; the status counting it at the
# DaemonSet's generation.
ads_settled() {
  local set pods
  set=$(kubectl get daemonsets.apps.kruise.io -n $ADS_NS agent -o json) || return 1
  pods=$(kubectl get pods -n $ADS_NS -l app=agent -o json) || return 1
  [ "$(jq -c ".status | $ADS_COUNTERS" <<<"$set")" = '[1,1,1,1,1,0,0]' ] \
    && jq -e '.metadata.generation == .status.observedGeneration' <<<"$set" >/dev/null \
    && jq -e --arg hash "$(jq -r .status.updateRevision <<<"$set")" '.items | length == 1 and all(
      .metadata.deletionTimestamp == null and .status.phase == "Running"
      and .metadata.labels["controller-revision-hash"] == $hash
      and (.status.conditions // [] | any(.type == "Ready" and .status == "True")))' <<<"$pods" >/dev/null
}
ads_pod() { # per pod: uid, node, lifecycle state, hook label, deletion, APP_INTERVAL and the main container's facts
  kubectl get pods -n $ADS_NS -l app=agent -o json | jq -c --arg hook $HOOK_LABEL '[.items[] | {name: .metadata.name,
    uid: .metadata.uid, node: .spec.nodeName, state: .metadata.labels["lifecycle.apps.kruise.io/state"],
    hook: .metadata.labels[$hook],
    deleting: (.metadata.deletionTimestamp != null), interval: .spec.containers[0].env[0].value,
    main: ([.status.containerStatuses[]? | select(.name == "main") | {id: .containerID, imageID, image,
      restarts: .restartCount, ready}][0])}]'
}
ads_main_runs() { # image: settled, and main runs that image, ready
  ads_settled && [ "$(ads_pod | jq -r '.[0].main | .image + " " + (.ready | tostring)')" = "$1 true" ]
}
ads_interval_is() { ads_settled && [ "$(ads_pod | jq -r '.[0].interval')" = "$1" ]; }
ads_runs() {
  new_namespace $ADS_NS || return 1
  ads_json $V1 InPlaceIfPossible 30 | kubectl apply -f - >/dev/null || return 1
  until_true 90 ads_settled || { ads_status; kubectl get pods -n $ADS_NS -o wide; return 1; }
  echo "     $(ads_pod | jq -c '.[0] | {name, node, main}'); status $(ads_status)"
  ads_pod | jq -e '.[0].node == "kube-node" and .[0].main.restarts == 0' >/dev/null
}
ads_in_place() {
  local before after t0=$SECONDS
  before=$(ads_pod)
  kubectl patch daemonsets.apps.kruise.io -n $ADS_NS agent --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  until_true 90 ads_main_runs "$V2" || { ads_status; ads_pod; return 1; }
  after=$(ads_pod)
  echo "     in place in $((SECONDS - t0)) s: $(jq -c '.[0] | {uid, main}' <<<"$after")"
  jq -n -e --argjson b "$before" --argjson a "$after" --arg v2 "${V2%:*}@sha256:" '($a | length) == 1
    and $a[0].uid == $b[0].uid and $a[0].main.restarts == $b[0].main.restarts + 1
    and $a[0].main.id != $b[0].main.id and $a[0].main.imageID != $b[0].main.imageID
    and ($a[0].main.imageID | startswith($v2))' >/dev/null
}
ads_held() { # uid: the pod is there, not being deleted, PreparingDelete, the hook label on
  ads_pod | jq -e --arg uid "$1" 'any(.[]; .uid == $uid and .state == "PreparingDelete" and (.deleting | not)
    and .hook == "true")' >/dev/null
}
ads_pre_delete() {
  local before uid t0=$SECONDS held_since n=0
  before=$(ads_pod); uid=$(jq -r '.[0].uid' <<<"$before")
  # Standard and an env change: no in-place update, the pod is deleted and created again
  ads_json $V2 Standard 31 | kubectl apply -f - >/dev/null || return 1
  until_true 60 ads_held "$uid" || { ads_pod; return 1; }
  held_since=$SECONDS
  echo "     $(jq -r '.[0].name' <<<"$before") PreparingDelete $((SECONDS - t0)) s after the update"
  # held while the label is there: every poll over 3 s finds it
  while [ $((SECONDS - held_since)) -lt 3 ]; do
    ads_held "$uid" || { echo "     not held after $((SECONDS - held_since)) s: $(ads_pod)"; return 1; }
    n=$((n + 1)); sleep 0.3
  done
  echo "     still PreparingDelete, not deleted, over $n polls in 3 s; status $(ads_status)"
  t0=$SECONDS
  kubectl label pod -n $ADS_NS "$(jq -r '.[0].name' <<<"$before")" $HOOK_LABEL- >/dev/null || return 1
  until_true 90 ads_interval_is 31 || { ads_status; ads_pod; return 1; }
  echo "     label removed: replaced in $((SECONDS - t0)) s by $(ads_pod | jq -c '.[0] | {name, uid, interval, state, main: .main | {image, ready}}'); status $(ads_status)"
  ads_pod | jq -e --arg uid "$uid" '.[0].uid != $uid and .[0].interval == "31"' >/dev/null
}
phase_h() {
  check "h. the release note's Advanced DaemonSet (preDelete labelsHandler $HOOK_LABEL) runs a pod on the node: Running, Ready, status [1,1,1,1,1,0,0]" \
    ads_runs
  check "h. image v1 -> v2, InPlaceIfPossible: same pod, main restarted once with a new containerID and imageID" ads_in_place
  check "h. recreate update with the hook label on: PreparingDelete and kept; label removed: deleted and replaced, Running and Ready at the new revision" \
    ads_pre_delete
  kubectl delete daemonsets.apps.kruise.io -n $ADS_NS agent --wait=false >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------------------------------------------------------
# f. The node agent: env values read from pod metadata change in place.
# The agent runs as deploy/node-agent's ServiceAccount kruise-system/kruise-node-agent, with that RBAC applied.
host_agent() { # [log file, default $work/agent.log]
  local log=${1:-$work/agent.log}
  if [ ! -f "$work/node-agent.kubeconfig" ]; then
    identity_apply deploy/node-agent/rbac.yaml || return 1
    identity_kubeconfig kruise-node-agent "$work/node-agent.kubeconfig" || return 1
  fi
  KRUISE_WEBHOOK_LOG=info,kruise_webhook::nodeagent=debug "$binary" node-agent --kubeconfig "$work/node-agent.kubeconfig" --node-name kube-node --cri-socket "$KUBE_NODE/run/containerd.sock" \
    --log-format json >> "$log" 2>&1 &
  agent_pid=$!
  until_true 30 grep -q 'node agent started' "$log" || { tail -5 "$log"; return 1; }
}
agent_identity_allowed() {
  E2E_AUDIT_LOG=$KUBE_NODE/logs/audit.log identity_refusals "$agent_mark" "$work/agent.log" "$work/agent.log.2" -- e2e-node-agent
}
# The agent's record of a container: containerID and env hash.
agent_meta() { # namespace selector
  kubectl get pods -n "$1" -l "$2" -o json | jq -c '.items[0].metadata.annotations["apps.kruise.io/runtime-containers-meta"] // "{}"
    | fromjson | [.containers[]? | {key: .name, value: {id: .containerID, env: .hashes.extractedEnvFromMetadataHash}}] | from_entries'
}
# The record covers every container as it runs now.
agent_meta_current() { # namespace selector
  local pod; pod=$(kubectl get pods -n "$1" -l "$2" -o json | jq -c '.items[0]')
  jq -e --argjson meta "$(agent_meta "$1" "$2")" '[.status.containerStatuses[] | $meta[.name].id == .containerID
    and ($meta[.name].env // 0) > 0] | length > 0 and all' <<<"$pod" >/dev/null
}
# What the running sidecar sees, through CRI (the agent's exec of `env`): its recorded env hash. 417093530 is
# [{"name":"APP_CONFIG","value":"config v1"}], 2451607708 "config v2", 2573841469 "config v3" (OpenKruise's hash).
sidecar_env_hash() { agent_meta "$1" app=agent | jq -r '.sidecar.env'; }
cloneset_settled() { # namespace: every replica updated and ready, the pod Ready, the agent's record current
  [ "$(kubectl get cloneset.apps.kruise.io -n "$1" sample -o json | jq -c '.status | [.updatedReadyReplicas, .readyReplicas,
    .currentRevision == .updateRevision]')" = '[1,1,true]' ] && pods_ready "$1" app=agent 1 && agent_meta_current "$1" app=agent
}
agent_w1() {
  local ns=e2e-node-agent before after t0 batches killed
  new_namespace $ns || return 1
  jq -n --arg ns $ns --argjson sidecar "$(app_container sidecar $V1 10 | jq '.env += [{name: "APP_CONFIG",
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['"'"'app-config'"'"']"}}}]')" \
    --argjson main "$(app_container main $V1)" '{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet",
      metadata: {name: "sample", namespace: $ns},
      spec: {replicas: 1, selector: {matchLabels: {app: "agent"}}, updateStrategy: {type: "InPlaceIfPossible"},
        template: {metadata: {labels: {app: "agent"}, annotations: {"app-config": "config v1"}},
          spec: {terminationGracePeriodSeconds: 2, containers: [$sidecar, $main]}}}}' | kubectl apply -f - >/dev/null || return 1
  until_true 120 cloneset_settled $ns || { kubectl get pods -n $ns -o wide; agent_meta $ns app=agent; return 1; }
  echo "     agent record: $(agent_meta $ns app=agent)"
  [ "$(sidecar_env_hash $ns)" = 417093530 ] || return 1
  before=$(pod_facts $ns app=agent)
  t0=$SECONDS
  kubectl patch cloneset.apps.kruise.io -n $ns sample --type=json -p "[
    {\"op\": \"replace\", \"path\": \"/spec/template/metadata/annotations/app-config\", \"value\": \"config v2\"},
    {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/1/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  sleep 2
  until_true 180 cloneset_settled $ns \
    || { kubectl get cloneset.apps.kruise.io -n $ns sample -o json | jq -c .status; kubectl get pods -n $ns -o json \
      | jq -c '.items[] | {n: .metadata.name, a: .metadata.annotations, s: [.status.containerStatuses[] | {name, restartCount, containerID}]}'; return 1; }
  after=$(pod_facts $ns app=agent)
  batches=$(kubectl get pods -n $ns -l app=agent -o json \
    | jq -c '.items[0].metadata.annotations["apps.kruise.io/inplace-update-state"] | fromjson | [.containerBatchesRecord[]?.containers]')
  killed=$(kubectl get events -n $ns -o json | jq -c '[.items[] | select(.reason == "Killing" and (.message // .note // "" | test("container meta restarter"))) | .involvedObject.name] | length')
  echo "     in place in $((SECONDS - t0)) s, batches $batches, Killing events $killed, sidecar env hash $(sidecar_env_hash $ns):" \
    "$(jq -c '.[0].containers | map_values({restarts, image, startedAt})' <<<"$after")"
  jq -n -e --argjson b "$before" --argjson a "$after" --arg v1 "$V1" --arg v2 "$V2" --argjson batches "$batches" '$b[0].uid == $a[0].uid
    and $a[0].containers.sidecar.restarts == 1 and $a[0].containers.sidecar.image == $v1
    and $a[0].containers.main.restarts == 1 and $a[0].containers.main.image == $v2
    and $a[0].containers.main.imageID != $b[0].containers.main.imageID
    and $a[0].containers.sidecar.startedAt <= $a[0].containers.main.startedAt
    and $batches == [["sidecar"], ["main"]]' >/dev/null || return 1
  [ "$(sidecar_env_hash $ns)" = 2451607708 ] && [ "$killed" -ge 1 ] || return 1
  printenv_shows $ns "config v2"
}
# kubectl exec … printenv, when the apiserver can reach the kubelet's exec endpoint; the recorded hash otherwise.
printenv_shows() { # namespace value
  local pod out; pod=$(kubectl get pods -n "$1" -l app=agent -o jsonpath='{.items[0].metadata.name}')
  # busybox has no printenv: env, filtered here
  if out=$(timeout 20 kubectl exec -n "$1" "$pod" -c sidecar -- env 2>&1); then
    out=$(sed -n 's/^APP_CONFIG=//p' <<<"$out")
    echo "     kubectl exec $pod -c sidecar -- env: APP_CONFIG=$out"
    [ "$out" = "$2" ]
  else
    echo "     kubectl exec unavailable here ($(tail -1 <<<"$out")); the agent's env hash stands for it"
  fi
}
agent_annotation_only() {
  local ns=e2e-node-agent before after
  before=$(pod_facts $ns app=agent)
  kubectl patch cloneset.apps.kruise.io -n $ns sample --type=json -p '[
    {"op": "replace", "path": "/spec/template/metadata/annotations/app-config", "value": "config v3"}]' >/dev/null || return 1
  sleep 2
  until_true 120 bash -c "$(declare -f cloneset_settled pods_ready agent_meta agent_meta_current); cloneset_settled $ns && \
    [ \"\$(agent_meta $ns app=agent | jq -r .sidecar.env)\" = 2573841469 ]" || { agent_meta $ns app=agent; return 1; }
  after=$(pod_facts $ns app=agent)
  echo "     $(jq -c '.[0].containers | map_values({restarts, image})' <<<"$after")"
  jq -n -e --argjson b "$before" --argjson a "$after" '$b[0].uid == $a[0].uid
    and $a[0].containers.sidecar.restarts == $b[0].containers.sidecar.restarts + 1
    and $a[0].containers.main.restarts == $b[0].containers.main.restarts
    and $a[0].containers.main.id == $b[0].containers.main.id' >/dev/null || return 1
  printenv_shows $ns "config v3"
}
# The agent keeps no state of its own: restarted, it reads the record and the runtime and stops nothing.
agent_restart_restarts_nothing() {
  local ns=e2e-node-agent before after
  before=$(pod_facts $ns app=agent)
  kill "$agent_pid" && wait "$agent_pid" 2>/dev/null
  agent_pid=""
  : > "$work/agent.log.2"
  host_agent "$work/agent.log.2" || return 1
  sleep 5
  after=$(pod_facts $ns app=agent)
  ! grep -q 'container meta restarter' "$work/agent.log.2" && [ "$before" = "$after" ] && agent_meta_current $ns app=agent
}

# ---------------------------------------------------------------------------------------------------------------
# d. The install from deploy/, as pods.
SYS=kruise-system
INSTALL_NS=e2e-node-install
lease_holder() { kubectl get lease -n $SYS kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
# the Deployment's pods (the certificate Job's carry the same name label and a component)
REPLICAS='app.kubernetes.io/name=kruise-webhook,!app.kubernetes.io/component'
webhook_pods() { kubectl get pods -n $SYS -l "$REPLICAS" -o json; }
# The replica a holder identity (pod name + "_" + suffix) belongs to.
holder_pod() { local h; h=$(lease_holder); echo "${h%_*}"; }
load_start() { # namespace
  rm -f "$work/stop-load" "$work/load.json"
  python3 scripts/kube-node/pod-load.py --api "$API" --pki "$KUBE_NODE/pki" --namespace "$1" --rate "$load_rate" \
    --label app=install-probe --expect-container sidecar --stop-file "$work/stop-load" --summary "$work/load.json" &
  load_pid=$!
}
load_stop() { # prints the summary; fails on any failed creation or pod without its sidecar
  touch "$work/stop-load"; wait "$load_pid"; load_pid=""
  jq -c '{attempted, created, failed, without_container, slowest_seconds, duration_seconds}' "$work/load.json" | sed 's/^/     load: /'
  jq -c '.failures[], .missing[]' "$work/load.json" | head -5 | sed 's/^/     /'
  jq -e '.failed == 0 and .without_container == 0 and .created > 0' "$work/load.json" >/dev/null
}
injected_through_service() { # writes the injected pod's name to $work/probe-pod
  local out
  out=$(pod_json $INSTALL_NS probe-$RANDOM '{"app": "install-probe"}' '{}' "$(app_container app $V1)" \
    | kubectl create -f - -o json 2>&1) || { echo "     $out" | tail -1; return 1; }
  jq -e '[.spec.containers[].name] == ["sidecar", "app"]' <<<"$out" >/dev/null || return 1
  jq -r .metadata.name <<<"$out" > "$work/probe-pod"
}
install_applies() {
  kubectl apply -k scripts/kube-node/overlay > "$work/apply.log" 2>&1 || { tail -5 "$work/apply.log"; return 1; }
  # the overlay changes only the image and the API versions 1.20 lacks
  local changed
  changed=$(diff <(kubectl kustomize deploy/) <(kubectl kustomize scripts/kube-node/overlay) | grep '^>' | sed 's/^> *//' | sort | uniq -c | tr -s ' ')
  echo "     overlay changes:$(echo "$changed" | tr '\n' ';')"
  ! grep -vqE '^ ?[0-9]+ (image: localhost/kube-node/kruise-webhook:e2e|apiVersion: batch/v1beta1|apiVersion: policy/v1beta1)$' <<<"$changed"
}
cert_job_completes() {
  kubectl wait --for=condition=complete --timeout=120s -n $SYS job/kruise-webhook-certs-init >/dev/null \
    || { kubectl get pods -n $SYS; kubectl logs -n $SYS job/kruise-webhook-certs-init --tail=5; return 1; }
}
ca_bundles_set() {
  local ca; ca=$(kubectl get secret -n $SYS kruise-webhook-certs -o jsonpath='{.data.ca-bundle\.crt}') || return 1
  until_true 30 bash -c "
    kubectl get mutatingwebhookconfiguration kruise-mutating-webhook-configuration -o json | jq -e --arg ca '$ca' '[.webhooks[].clientConfig.caBundle] | length > 0 and all(. == \$ca)' >/dev/null &&
    kubectl get validatingwebhookconfiguration kruise-validating-webhook-configuration -o json | jq -e --arg ca '$ca' '[.webhooks[].clientConfig.caBundle] | length > 0 and all(. == \$ca)' >/dev/null"
}
replicas_ready() {
  kubectl rollout status -n $SYS deployment/kruise-webhook --timeout=180s >/dev/null || { kubectl get pods -n $SYS -o wide; return 1; }
  [ "$(kubectl get deployment -n $SYS kruise-webhook -o jsonpath='{.status.readyReplicas}')" = 2 ] || return 1
  webhook_pods | jq -c '[.items[] | {name: .metadata.name,
    user: .spec.securityContext.runAsUser, ip: .status.podIP, ready: .status.containerStatuses[0].ready}]' | sed 's/^/     /'
  [ "$(kubectl get endpoints -n $SYS kruise-webhook-service -o json | jq '[.subsets[]?.addresses[]?] | length')" = 2 ]
}
lease_held() {
  until_true 30 bash -c "[ -n \"\$(kubectl get lease -n $SYS kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)\" ]" || return 1
  local holder; holder=$(holder_pod)
  echo "     Lease held by $(lease_holder)"
  webhook_pods | jq -e --arg p "$holder" 'any(.items[]; .metadata.name == $p)' >/dev/null
}
sidecar_through_service() {
  new_namespace $INSTALL_NS || return 1
  sidecarset_json node-install install-probe 1 "$(app_container sidecar $V1)" \
    | jq --arg ns $INSTALL_NS '.spec.namespace = $ns' | kubectl apply -f - >/dev/null || return 1
  # the replicas' catalogues pick the SidecarSet up from their watch
  until_true 30 injected_through_service || return 1
  local name; name=$(cat "$work/probe-pod")
  until_true 60 pod_ready $INSTALL_NS "$name" || return 1
  echo "     $INSTALL_NS/$name: $(kubectl get pod -n $INSTALL_NS "$name" -o json | jq -c '[.spec.containers[].name] as $n | {containers: $n, ready: [.status.containerStatuses[].ready]}')"
}
lease_hand_over() {
  local old new other t0
  old=$(holder_pod)
  other=$(webhook_pods | jq -r --arg old "$old" '.items[] | select(.metadata.name != $old) | .metadata.name')
  load_start $INSTALL_NS
  sleep 3
  t0=$SECONDS
  kubectl delete pod -n $SYS "$old" --wait=false >/dev/null || return 1
  until_true 40 bash -c "h=\$(kubectl get lease -n $SYS kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}'); [ -n \"\$h\" ] && [ \"\${h%_*}\" != '$old' ]" \
    || { echo "     Lease still with $(lease_holder)"; load_stop; return 1; }
  new=$(holder_pod)
  # The other replica polls the released Lease every 5 s; the Deployment's replacement pod, starting meanwhile, may
  # win the race: either is a hand-over to a live replica.
  echo "     deleted $old; Lease taken by $new after $((SECONDS - t0)) s ($([ "$new" = "$other" ] && echo "the other replica" || echo "the replacement replica; the other is $other"))"
  sleep 3
  load_stop || return 1
  webhook_pods | jq -e --arg p "$new" 'any(.items[]; .metadata.name == $p and .metadata.deletionTimestamp == null)' >/dev/null
}
phase_d() {
  install_mark=$(E2E_AUDIT_LOG=$KUBE_NODE/logs/audit.log identity_mark)
  # the host webhook of a-c goes: its URL registrations carry the names deploy/ uses
  stop_host_webhook
  kubectl delete --ignore-not-found -f "$work/webhooks.json" >/dev/null 2>&1 || true
  kubectl delete lease -n $SYS kruise-webhook-controller --ignore-not-found >/dev/null
  check "d. kubectl apply -k of the overlay of deploy/ (image and 1.20 API versions only)" install_applies
  check "d. the certificate Job completes" cert_job_completes
  check "d. both webhook configurations get the CA bundle of the certificate Secret" ca_bundles_set
  check "d. both replicas Ready (non-root, from the local image) and in the Service's endpoints" replicas_ready
  check "d. one replica holds the Lease" lease_held
  check "d. a pod created in an ordinary namespace comes back with its sidecar through the Service, and runs" sidecar_through_service
  check "d. deleting the Lease holder hands the Lease over while pods are created (${load_rate}/s): none failed, all injected" lease_hand_over
  # the host agent of f goes: the DaemonSet's takes over
  [ -z "$agent_pid" ] || { kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null || true; agent_pid=""; }
  check "d. node agent from deploy/node-agent/ (image and socket path only): Ready, not privileged, records the injected pod" agent_daemonset
  check "d. the installed controllers run an Advanced StatefulSet: its pod Ready on its bound claim, the status counting it, then v1 -> v2 in place" \
    installed_statefulset
  check "d. the installed controllers run an Advanced DaemonSet: its pod Running and Ready on the node, status [1,1,1,1,1,0,0]" \
    installed_daemonset
  check "d. no request of the installed pods' ServiceAccounts refused (audit log, the replicas', the job's and the agent's logs, Warning events)" \
    installed_identities_allowed
}
# The install's identities (deploy/rbac.yaml, deploy/certs, deploy/node-agent) are what run here: any refusal fails.
INSTALLED_NS=e2e-node-installed
installed_statefulset() {
  local uid t0
  new_namespace $INSTALLED_NS || return 1
  mkdir -p "$work/pv-installed" && chmod 777 "$work/pv-installed"
  jq -n --arg path "$work/pv-installed" '{apiVersion: "v1", kind: "PersistentVolume", metadata: {name: "e2e-installed-pv"},
    spec: {capacity: {storage: "1Gi"}, accessModes: ["ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain",
      hostPath: {path: $path}}}' | kubectl apply -f - >/dev/null || return 1
  STS_NS=$INSTALLED_NS sts_json installed 1 OrderedReady Delete Delete $V1 | kubectl apply -f - >/dev/null || return 1
  until_true 180 bash -c "$(declare -f sts_ready pods_ready claims_bound); STS_NS=$INSTALLED_NS; sts_ready installed 1 \
    && claims_bound app=installed 1" || { kubectl get pods,pvc -n $INSTALLED_NS -o wide; return 1; }
  uid=$(kubectl get pod -n $INSTALLED_NS installed-0 -o jsonpath='{.metadata.uid}')
  t0=$SECONDS
  kubectl patch statefulsets.apps.kruise.io -n $INSTALLED_NS installed --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$V2\"}]" >/dev/null || return 1
  until_true 180 bash -c "$(declare -f sts_ready pods_ready); STS_NS=$INSTALLED_NS; sts_ready installed 1 && \
    [ \"\$(kubectl get pods -n $INSTALLED_NS -l app=installed -o jsonpath='{.items[*].status.containerStatuses[0].image}')\" = '$V2' ]" \
    || { kubectl get statefulsets.apps.kruise.io -n $INSTALLED_NS installed -o json | jq -c .status; kubectl get pods -n $INSTALLED_NS -o wide; return 1; }
  echo "     installed-0 on claim $(kubectl get pvc -n $INSTALLED_NS data-installed-0 -o jsonpath='{.spec.volumeName}'), in place in $((SECONDS - t0)) s; status $(kubectl get statefulsets.apps.kruise.io -n $INSTALLED_NS installed -o json | jq -c '.status | [.replicas, .readyReplicas, .updatedReplicas]')"
  [ "$(kubectl get pod -n $INSTALLED_NS installed-0 -o jsonpath='{.metadata.uid}')" = "$uid" ]
}
installed_daemonset() {
  ADS_NS=$INSTALLED_NS ads_json $V1 InPlaceIfPossible 30 | kubectl apply -f - >/dev/null || return 1
  ADS_NS=$INSTALLED_NS until_true 90 ads_settled || { ADS_NS=$INSTALLED_NS ads_status; kubectl get pods -n $INSTALLED_NS -o wide; return 1; }
  echo "     $(ADS_NS=$INSTALLED_NS ads_pod | jq -c '.[0] | {name, node, main: .main | {image, ready}}'); status $(ADS_NS=$INSTALLED_NS ads_status)"
  # The preDelete hook's label would hold its deletion: the set goes without it.
  kubectl label pods -n $INSTALLED_NS -l app=agent $HOOK_LABEL- >/dev/null 2>&1 || true
}
installed_identities_allowed() {
  local pod
  for pod in $(kubectl get pods -n $SYS -o jsonpath='{.items[*].metadata.name}'); do
    kubectl logs -n $SYS "$pod" --all-containers > "$work/installed-$pod.log" 2>&1 || true
  done
  E2E_AUDIT_LOG=$KUBE_NODE/logs/audit.log identity_refusals "$install_mark" "$work"/installed-*.log \
    -- $SYS $INSTALL_NS $INSTALLED_NS default
}
agent_daemonset() {
  local name changed
  kubectl kustomize deploy/node-agent/ > "$work/agent-base.yaml" || return 1
  sed -e "s#image: kruise-webhook:0.1.0#image: localhost/kube-node/kruise-webhook:e2e#" \
      -e "s#path: /run/containerd/containerd.sock#path: $KUBE_NODE/run/containerd.sock#" "$work/agent-base.yaml" > "$work/agent.yaml"
  changed=$(diff "$work/agent-base.yaml" "$work/agent.yaml" | grep -c '^>')
  [ "$changed" = 2 ] || { echo "     expected 2 changed lines, got $changed"; return 1; }
  kubectl apply -f "$work/agent.yaml" >/dev/null || return 1
  kubectl rollout status -n $SYS daemonset/kruise-node-agent --timeout=120s >/dev/null \
    || { kubectl get pods -n $SYS -l app.kubernetes.io/name=kruise-node-agent -o wide; return 1; }
  kubectl get pods -n $SYS -l app.kubernetes.io/name=kruise-node-agent -o json | jq -c '.items[] | {name: .metadata.name,
    user: .spec.containers[0].securityContext.runAsUser, privileged: .spec.containers[0].securityContext.privileged,
    ready: .status.containerStatuses[0].ready}' | sed 's/^/     /'
  # the probe pod was injected by a SidecarSet: the agent records its containers with their env hashes
  name=$(cat "$work/probe-pod")
  until_true 60 bash -c "kubectl get pod -n $INSTALL_NS $name -o json | jq -e '(.metadata.annotations[\"apps.kruise.io/runtime-containers-meta\"] // \"{}\" | fromjson) as \$m
    | [.status.containerStatuses[] | .containerID as \$id | any(\$m.containers[]?; .containerID == \$id and .hashes.extractedEnvFromMetadataHash > 0)]
    | length > 0 and all' >/dev/null" || { kubectl logs -n $SYS daemonset/kruise-node-agent --tail=5; return 1; }
  echo "     $INSTALL_NS/$name: $(kubectl get pod -n $INSTALL_NS "$name" -o jsonpath='{.metadata.annotations.apps\.kruise\.io/runtime-containers-meta}')"
}

# ---------------------------------------------------------------------------------------------------------------
# e. Rolling restart under load.
rolling_restart() {
  kubectl rollout status -n $SYS deployment/kruise-webhook --timeout=120s >/dev/null || return 1
  local t0
  load_start $INSTALL_NS
  sleep 3
  t0=$SECONDS
  kubectl rollout restart -n $SYS deployment/kruise-webhook >/dev/null || { load_stop; return 1; }
  kubectl rollout status -n $SYS deployment/kruise-webhook --timeout=180s >/dev/null || { load_stop; return 1; }
  echo "     rollout restart completed in $((SECONDS - t0)) s"
  sleep 3
  load_stop
}

if [[ $phases == *a* || $phases == *b* || $phases == *c* || $phases == *f* || $phases == *g* || $phases == *h* \
  || $phases == *i* || $phases == *j* ]]; then
  phase "host webhook (release binary, serve --kubeconfig, registered by URL)"
  check "release binary serving on the host, webhooks registered by URL" host_webhook
fi
if [[ $phases == *a* ]]; then phase "a. launch priority"; phase_a || { echo "FAIL a. set-up"; failed=$((failed + 1)); }; fi
if [[ $phases == *b* ]]; then phase "b. SidecarSet in-place upgrade"; phase_b || { echo "FAIL b. set-up"; failed=$((failed + 1)); }; fi
if [[ $phases == *c* ]]; then
  phase "c. CloneSet in-place update"
  if cloneset_controller_present; then
    check "c. CloneSet in-place update (v1.1 release-note example): same pod, sidecar then main restarted once with v2 in two batches" cloneset_in_place
    check "c. in-place grace period ${GRACE_SECONDS} s, 3 updates of 4 pods: the image is patched never sooner than the grace after the gate turns False" grace_never_shorter
  else
    skip "c. CloneSet in-place update: the CloneSet controller is missing (\`kruise-webhook controller --help\` names no CloneSet)"
  fi
fi
if [[ $phases == *f* ]]; then
  phase "f. node agent"
  agent_mark=$(E2E_AUDIT_LOG=$KUBE_NODE/logs/audit.log identity_mark)
  if check "f. node agent on the host, talking CRI to the node's containerd" host_agent; then
    check "f. v1.1 example with the node agent: app-config and main image together: sidecar restarted first with config v2, then main at v2, same pod" agent_w1
    check "f. app-config alone: only the sidecar restarts, with config v3" agent_annotation_only
    check "f. the agent restarted stops no container again" agent_restart_restarts_nothing
    check "f. no request of kruise-system/kruise-node-agent refused (audit log, agent logs, Warning events)" \
      agent_identity_allowed
  fi
fi
if [[ $phases == *g* ]]; then phase "g. Advanced StatefulSet with real PVCs"; phase_g || { echo "FAIL g. set-up"; failed=$((failed + 1)); }; fi
if [[ $phases == *h* ]]; then phase "h. Advanced DaemonSet"; phase_h; fi
if [[ $phases == *i* ]]; then phase "i. SidecarSet hot upgrade"; phase_i || { echo "FAIL i. set-up"; failed=$((failed + 1)); }; fi
if [[ $phases == *j* ]]; then phase "j. in-place: same image under two names, markPodNotReady"; phase_j || { echo "FAIL j. set-up"; failed=$((failed + 1)); }; fi
if [[ $phases == *d* ]]; then phase "d. install from deploy/"; phase_d; fi
if [[ $phases == *e* ]]; then
  phase "e. rolling restart under load"
  check "e. kubectl rollout restart of the webhook Deployment while pods are created (${load_rate}/s): none failed, all injected" rolling_restart
fi
phase_done
echo "e2e-node: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
