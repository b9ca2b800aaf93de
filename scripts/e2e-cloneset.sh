#!/usr/bin/env bash
# End-to-end test of the CloneSet controller (`kruise-webhook controller`) against a real
# kube-apiserver.
#
#   KUBECONFIG=/path/to/disposable/kubeconfig scripts/e2e-cloneset.sh
#
# Without KUBECONFIG it starts a kube-apiserver of its own (binaries of scripts/kube-local, state in
# a temporary KUBE_LOCAL, ports APISERVER_PORT 18443 / ETCD_PORT 18379 / ETCD_PEER_PORT 18380) and
# stops it afterwards. scripts/e2e.sh runs it against its apiserver, in namespace e2e-cloneset-<pid>.
#
# There is no scheduler or kubelet: this script binds pods to a node (pods/binding), writes
# pods/status (Running, containerStatuses whose imageID follows the image and whose restartCount
# rises when the image changes, Ready = every readiness gate condition True) and finishes the
# deletion of terminating pods. Pod changes are recorded by `kubectl get pods -w` in the
# background, so orders are checked on every version the apiserver stored, not on polls.
# Scenarios, one block each (a new block can be appended at the end; the summary is printed on
# exit):
#   scale      0 → 3 → 5 → 2 with `kubectl scale`; names, labels, readiness gate, printer columns;
#   only       InPlaceOnly refuses an env change: FailedUpdate condition, pods untouched;
#   w1         the v1.1 release-note CloneSet (spec W1) with both images changed: in place (same
#              uid) in two batches, the sidecar (launch priority 10) first; updatedReadyReplicas 1;
#   partition  5 pods, partition 2, maxUnavailable 1, image change: three pods in place one at a
#              time, gate False stored before each image patch, as `plan --kubeconfig` said before
#              the change (its rounds, its pods in its order, blocked by the partition); then
#              partition 0 and the controller killed (SIGKILL) mid-update: a new one takes the
#              Lease and finishes, no pod recreated;
#   recreate   ReCreate with maxSurge 1, maxUnavailable 0: never fewer than 3 ready pods nor more
#              than 4; then scaleStrategy.podsToDelete replaces the one pod it names.
#   pvc        volumeClaimTemplates: one PVC per pod named <template>-<cloneset>-<id>, owned by the
#              CloneSet; a deleted pod's replacement reuses it; scale-in deletes it.
#   claim      a bare pod with the CloneSet's labels is not adopted (as OpenKruise, which lists pods by
#              ownerReference); one naming the CloneSet in a non-controller ownerReference is, and
#              counts (scale-in removes another pod); a relabelled pod is released and replaced.
#   progress   progressDeadlineSeconds 5 on pods the kubelet leaves alone: Progressing True
#              CloneSetUpdated, then False ProgressDeadlineExceeded; once they run, CloneSetAvailable
#              and updatedAvailableReplicas 2; without the deadline the condition goes.
#   fresh      created with progressDeadlineSeconds 600 and 6 replicas: CloneSetAvailable once the
#              pods run, with minReadySeconds 0 and 3.
# The pods carry the KRUISE_CONTAINER_BARRIER env the pod webhook would add (no webhook runs here).
# E2E_CLONESET_LOGS=DIR keeps the controllers' logs and the recorded watches.
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
# The controller's Lease lasts 15 s (src/controller/leader.rs): a successor of a killed leader
# waits that long.
LEASE_SECONDS=15
ctl_runs=0
# shellcheck source=scripts/lib/controller-e2e.sh
. scripts/lib/controller-e2e.sh
NS=${E2E_NAMESPACE:-e2e-cloneset-$$}
e2e_begin e2e-cloneset 18443 18379 18380 "${E2E_CLONESET_LOGS:-}"

# start_controller IDENTITY: a controller process for the namespace (its log: $tmp/ctl-N.log).
start_controller() {
  ctl_runs=$((ctl_runs + 1))
  KRUISE_WEBHOOK_LOG=${E2E_CLONESET_RUST_LOG:-info} KUBECONFIG=$CTL_KUBECONFIG "$BIN" controller --namespace "$NS" --identity "$1" --no-sidecarsets --no-barriers \
    > "$tmp/ctl-$ctl_runs.log" 2>&1 &
  ctl_pid=$!
}

# --- observation ------------------------------------------------------------------------------
cloneset() { kubectl get cloneset -n "$NS" "$1" -o json; }
# [replicas, readyReplicas, updatedReplicas, updatedReadyReplicas]
status_of() { cloneset "$1" | jq -c '.status | [.replicas, .readyReplicas, .updatedReplicas, .updatedReadyReplicas]'; }
status_is() { [ "$(status_of "$1")" = "$2" ]; }
live_pods() { kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c '[.items[] | select(.metadata.deletionTimestamp == null)]'; }
pod_count() { live_pods "$1" | jq length; }
count_is() { [ "$(pod_count "$1")" = "$2" ]; }
uids() { live_pods "$1" | jq -c 'map(.metadata.uid) | sort'; }
settled() { # NAME N: N pods, all ready and updated, status observed the latest generation
  count_is "$1" "$2" && status_is "$1" "[$2,$2,$2,$2]" \
    && [ "$(cloneset "$1" | jq '.status.observedGeneration == .metadata.generation')" = true ]
}

# watch_start APP: records every stored version of the pods labelled app=APP in $tmp/APP.watch
# (`--output-watch-events`: {type, object}), from their state now on.
watch_start() {
  local n
  n=$(pod_count "$1")
  kubectl get pods -n "$NS" -l "app=$1" -w --output-watch-events -o json > "$tmp/$1.watch" 2>/dev/null &
  watch_pids="$watch_pids $!"
  local deadline=$((SECONDS + 10))
  until [ "$(jq -s length "$tmp/$1.watch" 2>/dev/null || echo 0)" -ge "$n" ] || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
}
# The status of condition TYPE in a pod (jq function).
JQ_COND='def cond($t): ([.status.conditions[]? | select(.type == $t) | .status][0] // "");'

# --- setup ------------------------------------------------------------------------------------
apply_crds deploy/crds/clonesets.apps.kruise.io.yaml
e2e_namespace
start_controller e2e-cloneset-a

# --- scale: 0 → 3 → 5 → 2 with kubectl scale -------------------------------------------------
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: example.com/web:v1}]
  updateStrategy: {type: InPlaceIfPossible}
EOF
until_kubelet 30 "scale: replicas 0 observed, no pod" bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled web 0"
selector=$(cloneset web | jq -r .status.labelSelector)
check "scale: status.labelSelector '$selector'" test "$selector" = app=web
for n in 3 5 2; do
  kubectl scale cloneset -n "$NS" web --replicas="$n" >/dev/null
  until_kubelet 60 "scale: kubectl scale --replicas=$n → $n pods, status [$n,$n,$n,$n]" \
    bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled web $n"
done
pods=$(live_pods web)
check "scale: pod names are web-<5 random chars>" \
  test "$(jq '[.[].metadata.name | test("^web-[bcdfghjklmnpqrstvwxz2456789]{5}$")] | all' <<<"$pods")" = true
check "scale: pods carry instance-id, controller-revision-hash and pod-template-hash" \
  test "$(jq '[.[].metadata.labels | has("apps.kruise.io/cloneset-instance-id", "controller-revision-hash", "pod-template-hash")] | all' <<<"$pods")" = true
gates=$(jq -c '[.[].spec.readinessGates | map(.conditionType)] | unique' <<<"$pods")
check "scale: readiness gates $gates" test "$gates" = '[["InPlaceUpdateReady"]]'
revisions=$(kubectl get controllerrevisions -n "$NS" -l app=web -o json | jq '.items | length')
check "scale: one ControllerRevision ($revisions)" test "$revisions" = 1
# Expectations: a cache slower than the writes never makes the controller create or delete twice.
made="$(event_count web SuccessfulCreate) $(event_count web SuccessfulDelete)"
check "scale: 5 creates and 3 deletes in all ($made)" test "$made" = "5 3"
# One event per pod, naming it in the note and as the event's related object.
named=$(kubectl get events -n "$NS" -o json | jq -c '[.items[] | select(.involvedObject.name == "web" and (.reason == "SuccessfulCreate" or .reason == "SuccessfulDelete")) | select(.related.kind == "Pod" and (.related.name as $n | .message | endswith(" " + $n)))] | [(map(select(.reason == "SuccessfulCreate") | .related.name) | unique | length), (map(select(.reason == "SuccessfulDelete") | .related.name) | unique | length)]')
check "scale: the events name 5 created and 3 deleted pods, one event each ($named)" test "$named" = "[5,3]"
columns=$(kubectl get clonesets -n "$NS" web --no-headers | awk '{print $1, $2, $3, $4, $5, $6, $7}')
header=$(kubectl get clonesets -n "$NS" web | awk 'NR == 1 {print $1, $2, $3, $4, $5, $6, $7, $8}')
check "scale: kubectl get clonesets: '$header' / '$columns'" \
  test "$header|$columns" = "NAME DESIRED UPDATED UPDATED_READY UPDATED_AVAILABLE READY TOTAL AGE|web 2 2 2 2 2 2"
wide=$(kubectl get clonesets -n "$NS" web -o wide --no-headers | awk '{print $9, $10, $11}')
check "scale: kubectl get clonesets -o wide: '$wide'" test "$wide" = "main example.com/web:v1 app=web"

# --- only: InPlaceOnly refuses a change that is not an image ----------------------------------
only() { # ENV_VALUE
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: only}
spec:
  replicas: 2
  selector: {matchLabels: {app: only}}
  template:
    metadata: {labels: {app: only}}
    spec:
      containers: [{name: main, image: example.com/only:v1, env: [{name: MODE, value: "$1"}]}]
  updateStrategy: {type: InPlaceOnly}
EOF
}
only a | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "only: 2 pods, status [2,2,2,2]" \
  bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled only 2"
before=$(live_pods only | jq -c 'map({uid: .metadata.uid, rv: .metadata.resourceVersion}) | sort_by(.uid)')
only b | kubectl apply -n "$NS" -f - >/dev/null
refused() {
  cloneset only | jq -e '[.status.conditions[]? | select(.type == "FailedUpdate" and .status == "True"
    and (.message | test("InPlaceOnly but can not update in-place")))] | length == 1'
}
until_kubelet 30 "only: env change refused, condition FailedUpdate on the CloneSet" refused
kubelet_pass; sleep 1
after=$(live_pods only | jq -c 'map({uid: .metadata.uid, rv: .metadata.resourceVersion}) | sort_by(.uid)')
check "only: pods untouched (same uids and resourceVersions)" test "$before" = "$after"
check "only: status [2,2,0,0] ($(status_of only))" status_is only '[2,2,0,0]'
warned=$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.reason == "FailedUpdate" and .involvedObject.name == "only")] | length')
check "only: FailedUpdate warning event ($warned)" test "$warned" -ge 1
# The same change under InPlaceIfPossible: the pods are re-created at the new revision.
only b | sed 's/type: InPlaceOnly/type: InPlaceIfPossible/' | kubectl apply -n "$NS" -f - >/dev/null
recreated() {
  settled only 2 && [ "$(cloneset only | jq '.status.currentRevision == .status.updateRevision')" = true ] \
    && [ "$(live_pods only | jq -c --argjson before "$before" '[.[].metadata.uid] - [$before[].uid] | length')" = 2 ]
}
until_kubelet 60 "only → InPlaceIfPossible: both pods re-created at the new revision, status [2,2,2,2]" recreated
env=$(live_pods only | jq -c '[.[].spec.containers[0].env[0].value] | unique')
check "only: new pods have MODE b ($env)" test "$env" = '["b"]'
marked=$(event_count only SuccessfulUpdatePodReCreate)
check "only: 2 pods marked specified-delete for re-creation ($marked)" test "$marked" = 2

# --- w1: the v1.1 release-note CloneSet, sidecar (priority 10) and main changed together ------
w1() { # SIDECAR_IMAGE MAIN_IMAGE
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: sample}
spec:
  replicas: 1
  selector: {matchLabels: {app: sample}}
  template:
    metadata:
      labels: {app: sample}
      annotations: {app-config: "config v1"}
    spec:
      containers:
        - name: sidecar
          image: $1
          env:
            - {name: KRUISE_CONTAINER_PRIORITY, value: "10"}
            - {name: APP_CONFIG, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['app-config']"}}}
            - {name: KRUISE_CONTAINER_BARRIER, valueFrom: {configMapKeyRef: {name: sample-barrier, key: p_10}}}
        - name: main
          image: $2
          env:
            - {name: KRUISE_CONTAINER_BARRIER, valueFrom: {configMapKeyRef: {name: sample-barrier, key: p_0}}}
  updateStrategy: {type: InPlaceIfPossible}
EOF
}
w1 example.com/sidecar:v1 example.com/main:v1 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "w1: one pod, status [1,1,1,1]" \
  bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled sample 1"
uid=$(uids sample)
watch_start sample
w1 example.com/sidecar:v2 example.com/main:v2 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "w1: updated in place, status [1,1,1,1]" bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled sample 1 && [ \"\$(cloneset sample | jq '.status.currentRevision == .status.updateRevision')\" = true ]"
history=$(watched sample)
# Distinct (sidecar,main) image tags in stored order, each with the gate's status then.
sequence=$(jq -r "$JQ_COND"' [.[] | (.spec.containers | map(.image | split(":")[1]) | join(","))]
  | reduce .[] as $s ([]; if .[-1] == $s then . else . + [$s] end) | join(" ")' <<<"$history")
check "w1: images moved sidecar first: $sequence" test "$sequence" = "v1,v1 v2,v1 v2,v2"
gate_first=$(jq "$JQ_COND"' any(.[]; cond("InPlaceUpdateReady") == "False" and (.spec.containers | all(.image | endswith(":v1"))))' <<<"$history")
check "w1: InPlaceUpdateReady False stored before the first image patch" test "$gate_first" = true
check "w1: updatedReadyReplicas = replicas = 1" status_is sample '[1,1,1,1]'
check "w1: pod updated in place (same uid)" test "$(uids sample)" = "$uid"
pod=$(live_pods sample | jq -c '.[0]')
batches=$(jq -c '.metadata.annotations["apps.kruise.io/inplace-update-state"] | fromjson | [.containerBatchesRecord[].containers]' <<<"$pod")
check "w1: containerBatchesRecord $batches" test "$batches" = '[["sidecar"],["main"]]'
restarts=$(jq -c '[.status.containerStatuses[] | {(.name): .restartCount}] | add' <<<"$pod")
check "w1: restart counts $restarts" test "$(jq -c 'to_entries | sort_by(.key) | from_entries' <<<"$restarts")" = '{"main":1,"sidecar":1}'
check "w1: gate True and lifecycle Normal at the end" \
  test "$(jq -r "$JQ_COND"' cond("InPlaceUpdateReady") + " " + .metadata.labels["lifecycle.apps.kruise.io/state"]' <<<"$pod")" = "True Normal"
events=$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.reason == "SuccessfulUpdatePodInPlace" and .involvedObject.name == "sample")] | length')
check "w1: SuccessfulUpdatePodInPlace event ($events)" test "$events" -ge 1
components=$(kubectl get events -n "$NS" -o json | jq -c '[.items[] | select(.involvedObject.kind == "CloneSet") | .reportingComponent] | unique')
check "w1: CloneSet events come from Kruise's component cloneset-controller ($components)" \
  test "$components" = '["cloneset-controller"]'

# --- partition: 5 pods, partition 2, maxUnavailable 1, in place; then a leader killed ---------
part() { # IMAGE PARTITION
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: part}
spec:
  replicas: 5
  selector: {matchLabels: {app: part}}
  template:
    metadata: {labels: {app: part}}
    spec:
      containers: [{name: main, image: $1}]
  updateStrategy: {type: InPlaceIfPossible, partition: $2, maxUnavailable: 1}
EOF
}
part example.com/part:v1 2 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "partition: 5 pods, status [5,5,5,5]" \
  bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled part 5"
part_uids=$(uids part)
old_revision=$(cloneset part | jq -r .status.currentRevision)
watch_start part
# `plan --kubeconfig` before the change (the operator's kubeconfig): the live CloneSet, its pods
# and revisions read from the apiserver, then compared below with what the controller does (the
# text kept as plan-part.log with the logs).
plan_exit=0
part example.com/part:v2 2 | sed "s/{name: part}/{name: part, namespace: $NS}/" > "$tmp/part-v2.yaml"
"$BIN" plan "$tmp/part-v2.yaml" --kubeconfig "$KUBECONFIG" > "$tmp/plan-part.log" 2>&1 || true
"$BIN" plan "$tmp/part-v2.yaml" --kubeconfig "$KUBECONFIG" -o json > "$tmp/part.plan" 2>&1 || plan_exit=$?
part example.com/part:v2 2 | kubectl apply -n "$NS" -f - >/dev/null
partitioned() {
  [ "$(cloneset part | jq -c '.status | [.replicas, .readyReplicas, .updatedReplicas, .updatedReadyReplicas, .expectedUpdatedReplicas]')" = '[5,5,3,3,3]' ]
}
until_kubelet 60 "partition 2 of 5: status [5,5,3,3], expectedUpdatedReplicas 3" partitioned
# The plan against what happened, round by round. The controller picks the next pod by the update
# order (updatesort::order: readiness, ready time, restarts, age, then name), over the same pods the
# plan read, so the order itself is compared, not only the set. A pod "got v2" at the first stored
# version with the new image; that the controller had one pod unavailable at a time is the
# maxUnavailable check below.
plan_start=$(jq -r '.start' "$tmp/part.plan" 2>/dev/null || true)
check "partition: plan --kubeconfig read the 5 live pods ('$plan_start')" \
  test "$plan_start" = "5 pods given, 5 at the current revision $old_revision"
plan_end=$(jq -c '[.verdict.result, (.verdict.reasons[]? | select(startswith("updateStrategy.partition")))]' "$tmp/part.plan" 2>/dev/null || true)
check "partition: plan says blocked by the partition, exit 2 (exit $plan_exit, $plan_end)" \
  test "$plan_exit $plan_end" = '2 ["blocked","updateStrategy.partition 2 keeps 2 of 5 pods at the current revision"]'
plan_rounds=$(jq -c '[.rounds[] | [(.updatedInPlace | length), (.recreated | length), .updated]]' "$tmp/part.plan" 2>/dev/null || true)
check "partition: plan updates one pod in place a round, none recreated ($plan_rounds)" \
  test "$plan_rounds" = '[[1,0,1],[1,0,2],[1,0,3]]'
plan_order=$(jq -c '[.rounds[].updatedInPlace[]]' "$tmp/part.plan" 2>/dev/null || true)
real_order=$(watched part | jq -c '[.[] | select(.spec.containers[0].image | endswith(":v2")) | .metadata.name]
  | reduce .[] as $n ([]; if any(.[]; . == $n) then . else . + [$n] end)')
check "partition: the controller updated the plan's pods in the plan's order (plan $plan_order, real $real_order)" \
  test "$plan_order" = "$real_order"
images=$(live_pods part | jq -c '[.[].spec.containers[0].image | split(":")[1]] | sort')
check "partition: images $images" test "$images" = '["v1","v1","v2","v2","v2"]'
current=$(cloneset part | jq -r .status.currentRevision)
check "partition: currentRevision stays $old_revision" test "$current" = "$old_revision"
check "partition: pods updated in place (same uids)" test "$(uids part)" = "$part_uids"
# Unavailable: Ready or the in-place gate not True. The watch starts with all five available.
most_unavailable() {
  watched part | jq "$JQ_COND"' reduce .[] as $p ({now: {}, most: 0};
      .now[$p.metadata.name] = ((($p | cond("Ready")) != "True") or (($p | cond("InPlaceUpdateReady")) != "True"))
      | .most = ([.most, ([.now[] | select(.)] | length)] | max)) | .most'
}
most=$(most_unavailable)
check "partition: never more than maxUnavailable 1 pod unavailable (most: $most)" test "$most" = 1
# Per updated pod: a stored version with the gate False and the old image precedes the new image.
gate_first() {
  watched part | jq "$JQ_COND"' group_by(.metadata.name)
    | map(select(any(.[]; .spec.containers[0].image | endswith(":v2"))))
    | map((map(.spec.containers[0].image | endswith(":v2")) | index(true)) as $patched
          | any(.[:$patched][]; cond("InPlaceUpdateReady") == "False"))
    | "\(length) \(all)"' | tr -d '"'
}
gated=$(gate_first)
check "partition: InPlaceUpdateReady False stored before each image patch (pods, all: $gated)" test "$gated" = "3 true"

# Partition 0: the two pods left update; the controller is killed while one is mid-update.
part example.com/part:v2 0 | kubectl apply -n "$NS" -f - >/dev/null
mid_update() {
  live_pods part | jq -e "$JQ_COND"' any(.[]; (.spec.containers[0].image | endswith(":v2")) and cond("InPlaceUpdateReady") == "False")' >/dev/null
}
wait_for 30 "partition 0: a pod mid in-place update (gate False, image patched, no kubelet yet)" mid_update
kill -9 "$ctl_pid"; wait "$ctl_pid" 2>/dev/null || true
killed_at=$SECONDS
start_controller e2e-cloneset-b
until_kubelet $((LEASE_SECONDS + 60)) "leader killed mid-update: a new controller finishes, status [5,5,5,5]" \
  bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled part 5 && [ \"\$(cloneset part | jq '.status.currentRevision == .status.updateRevision')\" = true ]"
echo "     (finished $((SECONDS - killed_at)) s after the kill; Lease ${LEASE_SECONDS} s)"
check "partition: no pod recreated across the kill (same uids)" test "$(uids part)" = "$part_uids"
deleted=$(watched part | jq '[.[] | select(.watchType == "DELETED")] | length')
check "partition: no pod deleted ($deleted)" test "$deleted" = 0
most=$(most_unavailable)
check "partition: still never more than 1 unavailable (most: $most)" test "$most" = 1
gated=$(gate_first)
check "partition: gate False before each image patch (pods, all: $gated)" test "$gated" = "5 true"
# Each pod's gate went True → False once: no update was started twice, before or after the kill.
starts=$(watched part | jq -c "$JQ_COND"' group_by(.metadata.name) | map(map(cond("InPlaceUpdateReady")) as $g
  | [range(1; $g | length) | select($g[. - 1] == "True" and $g[.] == "False")] | length)')
check "partition: one in-place start per pod ($starts)" test "$starts" = "[1,1,1,1,1]"

# --- recreate: ReCreate with maxSurge 1 and maxUnavailable 0; podsToDelete --------------------
# Written as v1beta1 (OpenKruise's main branch), stored as v1alpha1 through the conversion webhook.
rc() { # ENV_VALUE
  cat <<EOF
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: rc}
spec:
  replicas: 3
  selector: {matchLabels: {app: rc}}
  template:
    metadata: {labels: {app: rc}}
    spec:
      containers: [{name: main, image: example.com/rc:v1, env: [{name: MODE, value: "$1"}]}]
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: ReCreate, maxSurge: 1, maxUnavailable: 0}}
EOF
}
rc a | kubectl apply -n "$NS" -f - >/dev/null
stored=$(kubectl get clonesets.v1alpha1.apps.kruise.io -n "$NS" rc -o json | jq -c '[.spec.updateStrategy, .spec.scaleStrategy]')
check "recreate: the v1beta1 set stored as v1alpha1 ($stored)" \
  test "$stored" = '[{"maxSurge":1,"maxUnavailable":0,"type":"ReCreate"},{"disablePVCReuse":true}]'
until_kubelet 60 "recreate: 3 pods, status [3,3,3,3]" \
  bash -c "$(declare -f cloneset status_of status_is live_pods pod_count count_is settled); NS=$NS; settled rc 3"
rc_uids=$(uids rc)
watch_start rc
rc b | kubectl apply -n "$NS" -f - >/dev/null
all_new() {
  settled rc 3 && [ "$(cloneset rc | jq '.status.currentRevision == .status.updateRevision')" = true ] \
    && [ "$(jq -n --argjson a "$rc_uids" --argjson b "$(uids rc)" '$a - $b | length')" = 3 ]
}
until_kubelet 60 "recreate: env change → 3 new pods at the new revision, status [3,3,3,3]" all_new
# Over every stored version after the initial three: pods not terminating, and those also Ready.
bounds=$(watched rc | jq -c "$JQ_COND"' . as $all | reduce range(0; length) as $i ({now: {}, least: 99, most: 0};
    $all[$i] as $p
    | .now[$p.metadata.name] = (if $p.watchType == "DELETED" or $p.metadata.deletionTimestamp != null then null
                                 else ($p | cond("Ready")) == "True" end)
    | if $i < 2 then . else
        .least = ([.least, ([.now[] | select(. == true)] | length)] | min)
        | .most = ([.most, ([.now[] | select(. != null)] | length)] | max) end) | [.least, .most]')
check "recreate: never fewer than 3 ready pods nor more than 3 + maxSurge 1 ([least, most] $bounds)" test "$bounds" = "[3,4]"
victim=$(live_pods rc | jq -r '.[0].metadata.name')
kept=$(live_pods rc | jq -c --arg v "$victim" '[.[] | select(.metadata.name != $v) | .metadata.uid] | sort')
kubectl patch cloneset -n "$NS" rc --type=merge -p "{\"spec\": {\"scaleStrategy\": {\"podsToDelete\": [\"$victim\"]}}}" >/dev/null
replaced() {
  settled rc 3 && ! kubectl get pod -n "$NS" "$victim" >/dev/null 2>&1 \
    && [ "$(jq -n --argjson k "$kept" --argjson now "$(uids rc)" '$k - $now | length')" = 0 ]
}
until_kubelet 60 "recreate: podsToDelete [$victim] → that pod replaced, the others kept" replaced
listed=$(cloneset rc | jq -c '.spec.scaleStrategy.podsToDelete // []')
check "recreate: podsToDelete emptied once the pod is gone ($listed)" test "$listed" = "[]"

# --- PVCs from volumeClaimTemplates: names and owner, reuse by a recreated pod, gone on scale-in -
# (Without kube-controller-manager a deleted PVC keeps its pvc-protection finalizer: "gone" means
# absent or terminating.)
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: store}
spec:
  replicas: 2
  selector: {matchLabels: {app: store}}
  template:
    metadata: {labels: {app: store}}
    spec:
      containers: [{name: main, image: example.com/store:v1, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  updateStrategy: {type: InPlaceIfPossible}
EOF
pvc_live() { kubectl get pvc -n "$NS" -l app=store -o json | jq -c '[.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name] | sort'; }
# The PVC names the live pods should have: data-store-<instance id> (= data-<pod name>).
pvc_wanted() { kubectl get pods -n "$NS" -l app=store -o json | jq -c '[.items[] | select(.metadata.deletionTimestamp == null) | "data-store-" + .metadata.labels["apps.kruise.io/cloneset-instance-id"]] | sort'; }
pvc_match() { [ "$(pvc_live)" = "$(pvc_wanted)" ]; }
until_kubelet 60 "PVC: 2 pods, status [2,2,2,2], one PVC each" \
  bash -c "$(declare -f cloneset status_is status_of pvc_live pvc_wanted pvc_match); NS=$NS; status_is store '[2,2,2,2]' && pvc_match && [ \"\$(pvc_live | jq length)\" = 2 ]"
store_uid=$(kubectl get cloneset -n "$NS" store -o jsonpath='{.metadata.uid}')
owners=$(kubectl get pvc -n "$NS" -l app=store -o json | jq -r --arg uid "$store_uid" '[.items[] | (.metadata.ownerReferences | length == 1 and .[0].kind == "CloneSet" and .[0].name == "store" and .[0].uid == $uid and .[0].controller == true) and (.metadata.name == "data-store-" + .metadata.labels["apps.kruise.io/cloneset-instance-id"])] | length == 2 and all')
[ "$owners" = true ] && pass "PVC names data-store-<id>, labelled with the id, controlled by the CloneSet" \
  || fail "PVC names/owners $(kubectl get pvc -n "$NS" -o json | jq -c '[.items[] | {n: .metadata.name, l: .metadata.labels, o: .metadata.ownerReferences}]')"
mounts=$(kubectl get pods -n "$NS" -l app=store -o json | jq -r '[.items[] | ([.spec.volumes[] | select(.name == "data") | .persistentVolumeClaim.claimName] == ["data-" + .metadata.name])] | length == 2 and all')
[ "$mounts" = true ] && pass "PVC: each pod mounts data-<pod name> as volume data" \
  || fail "PVC: pod volumes $(kubectl get pods -n "$NS" -l app=store -o json | jq -c '[.items[].spec.volumes]')"
claims_before=$(pvc_live)
victim=$(kubectl get pods -n "$NS" -l app=store -o jsonpath='{.items[0].metadata.name}')
victim_uid=$(kubectl get pod -n "$NS" "$victim" -o jsonpath='{.metadata.uid}')
# No kubelet confirms a graceful deletion here: force it. The pod is stored terminating and deleted
# in one request; the controller must hear of the deletion itself (src/controller/pod_events.rs).
deleted_at=$SECONDS
kubectl delete pod -n "$NS" "$victim" --grace-period=0 --force >/dev/null 2>&1
until_kubelet 60 "PVC: deleted pod $victim recreated with the same id, status [2,2,2,2]" \
  bash -c "$(declare -f cloneset status_is status_of); NS=$NS; uid=\$(kubectl get pod -n $NS $victim -o jsonpath='{.metadata.uid}'); [ -n \"\$uid\" ] && [ \"\$uid\" != $victim_uid ] && status_is store '[2,2,2,2]'"
# A create sent while the old pod was still stored terminating is refused (AlreadyExists).
echo "     (replaced $((SECONDS - deleted_at)) s after the force delete; FailedCreate events: $(event_count store FailedCreate))"
[ "$(pvc_live)" = "$claims_before" ] && pass "PVC: the replacement reuses data-$victim, no new PVC" \
  || fail "PVC: claims $(pvc_live), before $claims_before"
kubectl scale cloneset -n "$NS" store --replicas=1 >/dev/null
until_kubelet 60 "PVC: scaled to 1, status [1,1,1,1], only the remaining pod's PVC left" \
  bash -c "$(declare -f cloneset status_is status_of live_pods count_is pod_count pvc_live pvc_wanted pvc_match); NS=$NS; count_is store 1 && status_is store '[1,1,1,1]' && pvc_match && [ \"\$(pvc_live | jq length)\" = 1 ]"

# --- claim: adoption by ownerReference only, release on relabel ------------------------------
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: own}
spec:
  replicas: 2
  selector: {matchLabels: {app: own}}
  template:
    metadata: {labels: {app: own}}
    spec:
      containers: [{name: main, image: example.com/own:v1}]
  updateStrategy: {type: InPlaceIfPossible}
EOF
until_kubelet 60 "claim: 2 pods, status [2,2,2,2]" settled own 2
own_uid=$(cloneset own | jq -r .metadata.uid)
own_rev=$(cloneset own | jq -r .status.updateRevision)
# The live pods labelled app=own that the CloneSet controls, by name.
controlled() {
  kubectl get pods -n "$NS" -l app=own -o json | jq -c --arg u "$own_uid" '[.items[]
    | select(.metadata.deletionTimestamp == null)
    | select(any(.metadata.ownerReferences[]?; .uid == $u and .controller == true)) | .metadata.name] | sort'
}
owners_of() { kubectl get pod -n "$NS" "$1" -o json | jq -c '[.metadata.ownerReferences[]? | {uid, controller}]'; }
originals=$(controlled)
# A twin of the CloneSet's pods (same labels and revision), made by hand, that scale-in would
# keep (a higher deletion cost).
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: own-bare
  labels: {app: own, controller-revision-hash: $own_rev, apps.kruise.io/cloneset-instance-id: zzzzz}
  annotations: {controller.kubernetes.io/pod-deletion-cost: "100"}
spec:
  containers: [{name: main, image: example.com/own:v1}]
EOF
bare_ready() { [ "$(kubectl get pod -n "$NS" own-bare -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
until_kubelet 30 "claim: a bare pod with the CloneSet's labels runs ready" bare_ready
# A CloneSet change makes the controller reconcile (a pod naming no owner triggers none).
kubectl annotate cloneset -n "$NS" own e2e.kruise.io/poke=1 >/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do kubelet_pass; sleep 0.3; done
left_alone="$(owners_of own-bare) $(status_of own) $(controlled)"
check "claim: the bare pod is not adopted and not counted ($left_alone)" \
  test "$left_alone" = "[] [2,2,2,2] $originals"
kubectl patch pod -n "$NS" own-bare --type=merge -p "{\"metadata\": {\"ownerReferences\": [{\"apiVersion\": \"apps.kruise.io/v1alpha1\", \"kind\": \"CloneSet\", \"name\": \"own\", \"uid\": \"$own_uid\"}]}}" >/dev/null
adopted() {
  [ "$(owners_of own-bare)" = "[{\"uid\":\"$own_uid\",\"controller\":true}]" ] && status_is own '[2,2,2,2]' \
    && [ "$(jq -n --argjson now "$(controlled)" --argjson was "$originals" \
      '($now | index("own-bare")) != null and ($now - ["own-bare"] | length) == 1 and ($now - ["own-bare"] - $was | length) == 0')" = true ]
}
until_kubelet 60 "claim: a pod naming the CloneSet (no controller) is adopted and counted: an original pod scaled in" adopted
victim=$(controlled | jq -r '(. - ["own-bare"])[0]')
kubectl label pod -n "$NS" "$victim" app=moved --overwrite >/dev/null
released() {
  [ "$(owners_of "$victim")" = "[]" ] && status_is own '[2,2,2,2]' \
    && [ "$(controlled | jq --arg v "$victim" 'length == 2 and index($v) == null and index("own-bare") != null')" = true ]
}
until_kubelet 60 "claim: relabelled pod $victim released (no ownerReference left) and replaced" released

# --- progress: the Progressing condition and its deadline ------------------------------------
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: prog}
spec:
  replicas: 2
  progressDeadlineSeconds: 5
  selector: {matchLabels: {app: prog}}
  template:
    metadata: {labels: {app: prog, e2e.kruise.io/kubelet: "off"}}
    spec:
      containers: [{name: main, image: example.com/prog:v1}]
  updateStrategy: {type: InPlaceIfPossible}
EOF
# The Progressing condition as "status reason".
progressing() { cloneset prog | jq -r '[.status.conditions[]? | select(.type == "Progressing") | "\(.status) \(.reason)"][0] // ""'; }
progressing_is() { [ "$(progressing)" = "$1" ]; }
wait_for 5 "progress: 2 pods never started: Progressing True CloneSetUpdated" progressing_is "True CloneSetUpdated"
wait_for 20 "progress: 5 s later: Progressing False ProgressDeadlineExceeded" progressing_is "False ProgressDeadlineExceeded"
message=$(cloneset prog | jq -r '[.status.conditions[] | select(.type == "Progressing") | .message][0]')
revision=$(cloneset prog | jq -r .status.updateRevision)
check "progress: message '$message'" test "$message" = "CloneSet revision $revision has timed out progressing"
for pod in $(live_pods prog | jq -r '.[].metadata.name'); do
  kubectl label pod -n "$NS" "$pod" e2e.kruise.io/kubelet- >/dev/null
done
available() {
  progressing_is "True CloneSetAvailable" && [ "$(cloneset prog | jq .status.updatedAvailableReplicas)" = 2 ]
}
until_kubelet 30 "progress: pods running: Progressing True CloneSetAvailable, updatedAvailableReplicas 2" available
kubectl patch cloneset -n "$NS" prog --type=merge -p '{"spec": {"progressDeadlineSeconds": null}}' >/dev/null
wait_for 10 "progress: progressDeadlineSeconds removed: no Progressing condition" progressing_is ""

# --- fresh: the Progressing condition of a CloneSet created with a deadline ------------------
# Created, its pods started: CloneSetAvailable once every pod is updated and available, with and
# without minReadySeconds (then only once the pods have been Ready that long).
fresh() { # NAME MIN_READY_SECONDS
  kubectl apply -n "$NS" -f - >/dev/null <<EOT
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: $1}
spec:
  replicas: 6
  progressDeadlineSeconds: 600
  minReadySeconds: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers: [{name: main, image: example.com/$1:v1}]
EOT
}
fresh fresh 0
fresh fresh-min 3
fresh_available() { # NAME: prints what it sees
  local seen
  seen=$(cloneset "$1" | jq -r '([.status.conditions[]? | select(.type == "Progressing") | "\(.status) \(.reason)"][0] // "")
    + " " + ([.status.updatedAvailableReplicas, .status.availableReplicas] | tostring)')
  echo "     $1: $seen"
  [ "$seen" = 'True CloneSetAvailable [6,6]' ] && return
  # Shown when the wait times out: what the status and each pod said.
  cloneset "$1" | jq -c '.status'
  kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c '.items[] | [.metadata.name, .metadata.resourceVersion,
    .metadata.labels["lifecycle.apps.kruise.io/state"], .spec.nodeName, .status.phase,
    [.status.conditions[]? | "\(.type)=\(.status)@\(.lastTransitionTime)"]]'
  return 1
}
until_kubelet 60 "fresh: created with progressDeadlineSeconds 600, 6 pods running: Progressing True CloneSetAvailable" \
  bash -c "$(declare -f cloneset fresh_available); NS=$NS; fresh_available fresh"
until_kubelet 60 "fresh: the same with minReadySeconds 3: CloneSetAvailable once the pods have been Ready 3 s" \
  bash -c "$(declare -f cloneset fresh_available); NS=$NS; fresh_available fresh-min"
