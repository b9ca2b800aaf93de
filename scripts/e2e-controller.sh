#!/usr/bin/env bash
# End-to-end test of `kruise-webhook controller` against a real, disposable kube-apiserver.
#
#   KUBECONFIG=/path/to/kubeconfig scripts/e2e-controller.sh
#
# There is no kubelet, scheduler or controller-manager: this script plays kubelet by writing
# pods/status (phase, containerStatuses with image/imageID/ready, Ready conditions).
# Scenario: a SidecarSet with two sidecars (launch priorities p_0 and p_-1 on the pods) and three
# injected pods; the barrier ConfigMap of one pod is released key by key; a second controller
# stays idle while the first holds the Lease; the sidecar images change and the pods upgrade one
# at a time (maxUnavailable 1), each in two batches, higher priority first; the first controller
# is stopped mid-rollout and the second finishes it; a further change with partition 2 moves
# exactly one pod.
# Everything it creates lives in namespace e2e-controller-<pid> plus the SidecarSet e2e-mesh; both are
# deleted at the end.
set -euo pipefail

: "${KUBECONFIG:?set KUBECONFIG to a disposable apiserver}"
export KUBECONFIG
cd "$(dirname "$0")/.."
BIN=${BIN:-target/debug/kruise-webhook}
NS=${E2E_NAMESPACE:-e2e-controller-$$}
SET=e2e-mesh
PODS=(web-0 web-1 web-2)
[ -x "$BIN" ] || cargo build --all-targets --quiet
tmp=$(mktemp -d)
pid_a=""; pid_b=""; failures=0

cleanup() {
  for p in $pid_a $pid_b; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  kubectl delete sidecarset "$SET" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then fail "$what (timed out)"; return 0; fi
    sleep 0.5
  done
  pass "$what"
}

# --- SidecarSet files: what the SidecarSet mutating webhook would store, hashes included -------
write_sidecarset() { # VERSION [PARTITION]
  mkdir -p "$tmp/$1"
  cat > "$tmp/$1/sidecarset.yaml" <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: $SET
spec:
  selector:
    matchLabels: {app: e2e-ctl}
  updateStrategy:
    type: RollingUpdate
    maxUnavailable: 1
    partition: ${2:-0}
  containers:
    - name: proxy
      image: example.com/proxy:$1
      podInjectPolicy: BeforeAppContainer
    - name: agent
      image: example.com/agent:$1
      podInjectPolicy: BeforeAppContainer
EOF
}
pod_yaml() { # NAME
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels: {app: e2e-ctl}
  annotations: {apps.kruise.io/container-launch-priority: Ordered}
spec:
  containers:
    - name: app
      image: example.com/app:v1
EOF
}
# The hashes the webhook stores on the SidecarSet are the ones injection records on a pod.
apply_sidecarset() { # VERSION [PARTITION]
  write_sidecarset "$1" "${2:-0}"
  pod_yaml probe > "$tmp/probe.yaml"
  "$BIN" inject --sidecarsets "$tmp/$1" "$tmp/probe.yaml" > "$tmp/probe.json"
  local hash without
  hash=$(jq -r --arg s "$SET" '.metadata.annotations["kruise.io/sidecarset-hash"] | fromjson | .[$s].hash' "$tmp/probe.json")
  without=$(jq -r --arg s "$SET" '.metadata.annotations["kruise.io/sidecarset-hash-without-image"] | fromjson | .[$s].hash' "$tmp/probe.json")
  # Offline injection knows no namespace labels: the namespaceSelector (keeping other test
  # namespaces out) is only added to the copy sent to the cluster.
  sed "s|^spec:|spec:\n  namespaceSelector:\n    matchLabels: {e2e.kruise.io/run: $NS}|" \
    "$tmp/$1/sidecarset.yaml" | kubectl apply -f - >/dev/null
  kubectl annotate sidecarset "$SET" --overwrite \
    "kruise.io/sidecarset-hash=$hash" "kruise.io/sidecarset-hash-without-image=$without" >/dev/null
  echo "$hash"
}

# --- kubelet ----------------------------------------------------------------------------------
image_id() { echo "docker-pullable://${1%:*}@sha256:$(printf %s "$1" | sha256sum | cut -c1-64)"; }
# kubelet_status POD READY_CONTAINERS(comma list or "*" for all) : statuses from the pod's spec.
kubelet_status() {
  local pod=$1 ready_list=$2 spec statuses all_ready=True
  spec=$(kubectl get pod -n "$NS" "$pod" -o json)
  statuses=$(jq -c --arg ready ",$ready_list," '
    [.spec.containers[] | .name as $n | {name, image,
      ready: ($ready == ",*," or ($ready | contains("," + $n + ","))),
      restartCount: 0}
     | .started = .ready
     | .state = (if .ready then {running: {startedAt: "2024-01-01T00:00:00Z"}}
                 else {waiting: {reason: "CreateContainerConfigError"}} end)]' <<<"$spec")
  statuses=$(jq -c 'map(.imageID = "")' <<<"$statuses")
  local i n; n=$(jq length <<<"$statuses")
  for ((i = 0; i < n; i++)); do
    local image; image=$(jq -r ".[$i].image" <<<"$statuses")
    statuses=$(jq -c --argjson i "$i" --arg id "$(image_id "$image")" '.[$i].imageID = $id' <<<"$statuses")
  done
  jq -e 'all(.ready)' <<<"$statuses" >/dev/null || all_ready=False
  local patch
  patch=$(jq -nc --argjson cs "$statuses" --arg r "$all_ready" '{status: {phase: "Running",
    containerStatuses: $cs,
    conditions: [{type: "PodScheduled", status: "True"}, {type: "Initialized", status: "True"},
                 {type: "ContainersReady", status: $r}, {type: "Ready", status: $r}]}}')
  kubectl patch pod -n "$NS" "$pod" --subresource=status --type=strategic -p "$patch" >/dev/null
}
# One kubelet pass over all pods: a container whose spec image differs from its status is
# restarted (first not ready, next pass running the new image). Prints the number of pods that
# were unavailable (not Ready, or running an image other than the spec's) in one consistent list
# taken before acting.
kubelet_pass() {
  local snapshot unavailable=0 pod json
  snapshot=$(kubectl get pods -n "$NS" -o json)
  for pod in "${PODS[@]}"; do
    json=$(jq -c --arg p "$pod" '.items[] | select(.metadata.name == $p)' <<<"$snapshot")
    local changed ready
    changed=$(jq -r '[.spec.containers[] as $c | .status.containerStatuses[] | select(.name == $c.name and .image != $c.image) | .name] | join(",")' <<<"$json")
    ready=$(jq -r '[.status.conditions[]? | select(.type == "Ready") | .status][0] // "False"' <<<"$json")
    if [ -n "$changed" ] || [ "$ready" != True ]; then unavailable=$((unavailable + 1)); fi
    if [ -n "$changed" ] && [ "$ready" = True ]; then
      # Restarting: the changed containers go down with their old image still reported.
      local cs; cs=$(jq -c --arg ch ",$changed," '[.status.containerStatuses[] | .name as $n | if ($ch | contains("," + $n + ",")) then .ready = false | .started = false else . end]' <<<"$json")
      kubectl patch pod -n "$NS" "$pod" --subresource=status --type=strategic -p "$(jq -nc --argjson cs "$cs" '{status: {containerStatuses: $cs, conditions: [{type: "ContainersReady", status: "False"}, {type: "Ready", status: "False"}]}}')" >/dev/null
    elif [ -n "$changed" ] || [ "$ready" != True ]; then
      kubelet_status "$pod" "*"
    fi
  done
  echo "$unavailable"
}

lease_holder() { kubectl get lease -n "$NS" kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
status_field() { kubectl get sidecarset "$SET" -o jsonpath="{.status.$1}"; }
updated_count() {
  local hash=$1 n=0 pod
  for pod in "${PODS[@]}"; do
    kubectl get pod -n "$NS" "$pod" -o json | jq -e --arg s "$SET" --arg h "$hash" \
      '.metadata.annotations["kruise.io/sidecarset-hash"] | fromjson | .[$s].hash == $h' >/dev/null && n=$((n + 1))
  done
  echo "$n"
}

# --- setup ------------------------------------------------------------------------------------
kubectl apply -f deploy/crds/sidecarsets.apps.kruise.io.yaml >/dev/null
kubectl wait --for condition=established crd/sidecarsets.apps.kruise.io --timeout=30s >/dev/null
kubectl create namespace "$NS" >/dev/null
# Older apiservers do not label namespaces with their name; select on a label of our own.
kubectl label namespace "$NS" "e2e.kruise.io/run=$NS" >/dev/null
hash_v1=$(apply_sidecarset v1)
write_sidecarset v1
for pod in "${PODS[@]}"; do
  pod_yaml "$pod" > "$tmp/$pod.yaml"
  "$BIN" inject --sidecarsets "$tmp/v1" "$tmp/$pod.yaml" > "$tmp/$pod.json"
  kubectl create -f "$tmp/$pod.json" >/dev/null
done
# web-0 is starting (containers held by their barrier); the others are up.
kubelet_status web-0 ""
kubelet_status web-1 "*"
kubelet_status web-2 "*"

# --- leader election --------------------------------------------------------------------------
RUST_LOG=info "$BIN" controller --namespace "$NS" --identity ctl-a > "$tmp/a.log" 2>&1 &
pid_a=$!
wait_for 30 "controller a takes the Lease" sh -c "[ \"\$(kubectl get lease -n $NS kruise-webhook-controller -o jsonpath='{.spec.holderIdentity}')\" = ctl-a ]"
RUST_LOG=info "$BIN" controller --namespace "$NS" --identity ctl-b > "$tmp/b.log" 2>&1 &
pid_b=$!

# --- barrier ----------------------------------------------------------------------------------
cm_keys() { kubectl get configmap -n "$NS" web-0-barrier -o json | jq -r '.data | keys | join(",")'; }
wait_for 20 "barrier ConfigMap holds p_0 only while proxy starts" bash -c "$(declare -f cm_keys); NS=$NS; [ \"\$(cm_keys)\" = p_0 ]"
owner=$(kubectl get configmap -n "$NS" web-0-barrier -o json | jq -r '.metadata.ownerReferences[0] | "\(.kind)/\(.name)/\(.uid)"')
uid=$(kubectl get pod -n "$NS" web-0 -o jsonpath='{.metadata.uid}')
[ "$owner" = "Pod/web-0/$uid" ] && pass "barrier ConfigMap is owned by its pod" || fail "barrier owner is $owner"
kubelet_status web-0 "proxy"
wait_for 20 "p_-1 released once proxy is ready" bash -c "$(declare -f cm_keys); NS=$NS; [ \"\$(cm_keys)\" = p_-1,p_0 ]"
kubelet_status web-0 "proxy,agent"
wait_for 20 "p_-2 released once agent is ready" bash -c "$(declare -f cm_keys); NS=$NS; [ \"\$(cm_keys)\" = p_-1,p_-2,p_0 ]"
kubelet_status web-0 "*"
wait_for 20 "launch priority marked completed" sh -c "[ \"\$(kubectl get pod -n $NS web-0 -o jsonpath='{.metadata.annotations.apps\.kruise\.io/container-launch-priority-completed}')\" = true ]"

# --- status before the rollout ----------------------------------------------------------------
all_three() { [ "$(status_field matchedPods)" = 3 ] && [ "$(status_field updatedPods)" = 3 ] && [ "$(status_field readyPods)" = 3 ] && [ "$(status_field updatedReadyPods)" = 3 ]; }
wait_for 30 "status matched/updated/ready/updatedReady = 3 on v1" bash -c "$(declare -f status_field all_three); SET=$SET; all_three"

if grep -q "leading" "$tmp/b.log"; then fail "controller b acted while a held the Lease"; else pass "controller b stays idle while a holds the Lease"; fi

# --- rollout ----------------------------------------------------------------------------------
hash_v2=$(apply_sidecarset v2)
[ "$hash_v2" != "$hash_v1" ] || fail "v2 hash equals v1 hash"
max_unavailable=0; handed_over=0
deadline=$((SECONDS + 180))
while [ $SECONDS -lt $deadline ]; do
  u=$(kubelet_pass)
  [ "$u" -gt "$max_unavailable" ] && max_unavailable=$u
  n=$(updated_count "$hash_v2")
  if [ "$handed_over" = 0 ] && [ "$n" -ge 1 ]; then
    # Stop the leader mid-rollout: it releases the Lease and b carries on from pod state.
    kill -TERM "$pid_a"; wait "$pid_a" 2>/dev/null || true; pid_a=""; handed_over=1
  fi
  if [ "$n" = 3 ] && [ "$u" = 0 ] && all_three; then break; fi
  sleep 1
done
[ "$handed_over" = 1 ] && [ "$(lease_holder)" = ctl-b ] && pass "controller b took over the released Lease" || fail "Lease holder is '$(lease_holder)'"
grep -q "leading" "$tmp/b.log" && pass "controller b started its controllers" || fail "controller b never led"
[ "$(updated_count "$hash_v2")" = 3 ] && pass "all pods carry the v2 hash" || fail "$(updated_count "$hash_v2")/3 pods carry the v2 hash"
[ "$max_unavailable" -le 1 ] && pass "at most $max_unavailable pod unavailable at a time (maxUnavailable 1)" || fail "$max_unavailable pods unavailable at once"
all_three && pass "status matched/updated/ready/updatedReady = 3 on v2" || fail "status $(kubectl get sidecarset $SET -o jsonpath='{.status}')"
for pod in "${PODS[@]}"; do
  images=$(kubectl get pod -n "$NS" "$pod" -o json | jq -r '[.spec.containers[] | "\(.name)=\(.image)"] | join(" ")')
  [ "$images" = "proxy=example.com/proxy:v2 agent=example.com/agent:v2 app=example.com/app:v1" ] \
    && pass "$pod runs $images" || fail "$pod runs $images"
  batches=$(kubectl get pod -n "$NS" "$pod" -o json | jq -c '.metadata.annotations["apps.kruise.io/inplace-update-state"] // "{}" | fromjson | [.containerBatchesRecord[]?.containers]')
  upgradable=$(kubectl get pod -n "$NS" "$pod" -o json | jq -r '[.status.conditions[] | select(.type == "SidecarSetUpgradable") | "\(.status) \(.message)"][0]')
  [ "$upgradable" = "True {\"$SET\":true}" ] && pass "$pod condition SidecarSetUpgradable $upgradable" || fail "$pod condition SidecarSetUpgradable $upgradable"
  [ "$batches" = '[["proxy"],["agent"]]' ] && pass "$pod upgraded in two batches, higher priority first" || fail "$pod batches $batches"
done
# --- partition: 3 pods, partition 2 -> exactly one pod moves to v3 ------------------------------
hash_v3=$(apply_sidecarset v3 2)
stable=0; deadline=$((SECONDS + 90))
while [ $SECONDS -lt $deadline ] && [ $stable -lt 10 ]; do
  u=$(kubelet_pass)
  [ "$u" -gt "$max_unavailable" ] && max_unavailable=$u
  if [ "$(updated_count "$hash_v3")" = 1 ] && [ "$u" = 0 ]; then stable=$((stable + 1)); else stable=0; fi
  sleep 0.5
done
[ "$(updated_count "$hash_v3")" = 1 ] && pass "partition 2 leaves two of three pods on v2" || fail "$(updated_count "$hash_v3")/3 pods on v3 with partition 2"
wait_for 20 "status updatedPods = 1 under partition 2" sh -c "[ \"\$(kubectl get sidecarset $SET -o jsonpath='{.status.updatedPods}')\" = 1 ]"
[ "$max_unavailable" -le 1 ] && pass "still at most 1 pod unavailable" || fail "$max_unavailable pods unavailable at once"

events=$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.reason == "SidecarSetUpgrade")] | length')
[ "$events" -ge 1 ] && pass "$events SidecarSetUpgrade events on pods" || fail "no SidecarSetUpgrade event"

if [ "$failures" -gt 0 ]; then
  echo "--- controller a log (tail)"; tail -20 "$tmp/a.log" 2>/dev/null || true
  echo "--- controller b log (tail)"; tail -30 "$tmp/b.log"
  echo "e2e-controller: $failures check(s) failed"; exit 1
fi
echo "e2e-controller: all checks passed"
