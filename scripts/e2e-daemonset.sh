#!/usr/bin/env bash
# End-to-end test of the Advanced DaemonSet controller (`kruise-webhook controller`) against a real
# kube-apiserver, with Node objects and no kubelet.
#
#   KUBECONFIG=/path/to/disposable/kubeconfig scripts/e2e-daemonset.sh
#
# Without KUBECONFIG it starts a kube-apiserver of its own (binaries of scripts/kube-local, state in
# a temporary KUBE_LOCAL, ports APISERVER_PORT 19443 / ETCD_PORT 19379 / ETCD_PEER_PORT 19380) and
# stops it afterwards. scripts/e2e.sh runs it against its apiserver, in namespace e2e-ads-<pid>.
#
# Five Node objects (named e2e-ads-<pid>-n1…n5, labelled so that only this run's DaemonSets select
# them) stand for a cluster: n1 plain, n2 tainted dedicated=infra:NoSchedule, n3 without the role
# label, n4 cordoned (spec.unschedulable and the unschedulable:NoSchedule taint), n5 tainted
# e2e/evict=now:NoExecute. There is no scheduler or kubelet: this script binds each pod to the node
# its node-name affinity names (pods/binding, as the scheduler would), writes pods/status (Running,
# Ready = every readiness gate True) and finishes the deletion of terminating pods.
# Scenarios, one block each:
#   placement  the release note's DaemonSet (nodeSelector role, preDelete labelsHandler
#              example.io/block-deleting: "true"): pods on n1 and n4 only; the pod's tolerations,
#              node-name affinity, owner, revision label; status counters; one revision; events;
#              a second DaemonSet tolerating both taints with a required node affinity on zones:
#              n1, n4 and n5, not n2 (zone) nor n3 (role);
#   evict      n1 tainted NoExecute: the hooked pod goes to PreparingDelete, not deleted, counted
#              misscheduled; its label removed: deleted; the taint removed: a new pod;
#   update     an image change with maxUnavailable 1: the first old pod waits in PreparingDelete
#              (the other one untouched) until its label is removed, then both are replaced;
#   surge      3 nodes, maxSurge 1, maxUnavailable 0: never fewer than 3 ready pods nor more than 4;
#   partition  3 nodes, partition 1: the two highest names updated, n1 kept (as `plan --kubeconfig`
#              said before the change); then partition 0;
#   adopt      bare pods its selector selects (one on n1, two on n4) before an OnDelete DaemonSet
#              exists: it adopts them (controller reference), creates no pod beside them, and
#              n4 keeps the older of its two.
# E2E_DAEMONSET_LOGS=DIR keeps the controller's log.
set -euo pipefail
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
RUN=e2e-ads-$$
# shellcheck source=scripts/lib/controller-e2e.sh
. scripts/lib/controller-e2e.sh
NS=${E2E_NAMESPACE:-e2e-ads-$$}
# On a cluster this script did not start, its Node objects go with the namespace.
e2e_cleanup() { kubectl delete nodes -l "e2e-ads-run=$RUN" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
e2e_begin e2e-daemonset 19443 19379 19380 "${E2E_DAEMONSET_LOGS:-}"

# --- observation ------------------------------------------------------------------------------
ads() { kubectl get daemonsets.apps.kruise.io -n "$NS" "$1" -o json; }
# [desired, current, ready, updated, available, misscheduled]
status_of() { ads "$1" | jq -c '.status | [.desiredNumberScheduled, .currentNumberScheduled, .numberReady, .updatedNumberScheduled, .numberAvailable, .numberMisscheduled]'; }
observed() { [ "$(ads "$1" | jq '.status.observedGeneration == .metadata.generation')" = true ]; }
pods_of() { kubectl get pods -n "$NS" -l "app=$1" -o json; }
live() { pods_of "$1" | jq -c '[.items[] | select(.metadata.deletionTimestamp == null)]'; }
# The nodes the live pods of APP run on, short names, sorted: "n1 n4".
nodes_of() { live "$1" | jq -r --arg run "$RUN-" '[.[].spec.nodeName // "" | ltrimstr($run)] | sort | join(" ")'; }
# settled APP NODES STATUS: pods exactly on NODES, the status counters STATUS, generation observed.
settled() { [ "$(nodes_of "$1")" = "$2" ] && [ "$(status_of "$1")" = "$3" ] && observed "$1"; }
hash_of() { ads "$1" | jq -r .status.updateRevision; }
# The revision hash of every live pod of APP, unique: "h" when all are at h.
pod_hashes() { live "$1" | jq -r '[.[].metadata.labels["controller-revision-hash"]] | unique | join(" ")'; }
lifecycle_of() { kubectl get pod -n "$NS" "$1" -o json | jq -r '.metadata.labels["lifecycle.apps.kruise.io/state"] // ""'; }
pod_on() { live "$1" | jq -r --arg n "$RUN-$2" '[.[] | select(.spec.nodeName == $n) | .metadata.name][0] // ""'; }
export -f ads status_of observed pods_of live nodes_of settled hash_of pod_hashes lifecycle_of pod_on
export NS RUN

# --- setup ------------------------------------------------------------------------------------
apply_crds deploy/crds/daemonsets.apps.kruise.io.yaml
e2e_namespace
node() { # NAME LABELS(json) SPEC(json)
  jq -nc --arg n "$RUN-$1" --arg run "$RUN" --argjson l "$2" --argjson s "$3" \
    '{apiVersion: "v1", kind: "Node", metadata: {name: $n, labels: ($l + {"e2e-ads-run": $run})}, spec: $s}' \
    | kubectl create -f - >/dev/null
  # The apiserver's TaintNodesByCondition taints a new node not-ready:NoSchedule; the node
  # lifecycle controller would lift it once the kubelet reports Ready. There is no kubelet here.
  kubectl taint node "$RUN-$1" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}
node n1 "{\"role\": \"$RUN\", \"zone\": \"a\"}" '{}'
node n2 "{\"role\": \"$RUN\", \"zone\": \"b\"}" '{"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}'
node n3 '{"zone": "a"}' '{}'
node n4 "{\"role\": \"$RUN\", \"zone\": \"a\"}" '{"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}'
node n5 "{\"role\": \"$RUN\", \"zone\": \"c\"}" '{"taints": [{"key": "e2e/evict", "value": "now", "effect": "NoExecute"}]}'
KRUISE_WEBHOOK_LOG=${E2E_DAEMONSET_LOG:-info} KUBECONFIG=$CTL_KUBECONFIG "$BIN" controller --namespace "$NS" --identity e2e-ads \
  --no-sidecarsets --no-barriers --no-clonesets > "$tmp/ctl.log" 2>&1 &
ctl_pid=$!

# daemonset NAME IMAGE [YAML lines appended to the spec]: a DaemonSet on the run's role label,
# written as apps.kruise.io/$DS_VERSION (v1alpha1 unless set; stored as v1beta1 either way).
daemonset() {
  local name=$1 image=$2; shift 2
  cat <<EOF
apiVersion: apps.kruise.io/${DS_VERSION:-v1alpha1}
kind: DaemonSet
metadata: {name: $name}
spec:
  selector: {matchLabels: {app: $name}}
  template:
    metadata:
      labels: {app: $name, example.io/block-deleting: "true"}
    spec:
      nodeSelector: {role: $RUN}
      containers: [{name: main, image: "example.com/$name:$image"}]
$(for line in "$@"; do echo "$line"; done)
EOF
}

# --- placement --------------------------------------------------------------------------------
agent() { # IMAGE
  daemonset agent "$1" \
    '  lifecycle: {preDelete: {labelsHandler: {example.io/block-deleting: "true"}}}' \
    '  updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 1}}'
}
agent v1 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "placement: the release note's DaemonSet runs on n1 and n4 (cordoned) only, status [2,2,2,2,2,0]" \
  settled agent "n1 n4" '[2,2,2,2,2,0]'
pod=$(live agent | jq -c '.[0]')
check "placement: pods are named agent-<random>" test "$(jq -r '.metadata.name | test("^agent-[a-z0-9]{5}$")' <<<"$pod")" = true
owner=$(jq -c '.metadata.ownerReferences | map({apiVersion, kind, name, controller, blockOwnerDeletion})' <<<"$pod")
check "placement: owner $owner" test "$owner" = '[{"apiVersion":"apps.kruise.io/v1beta1","kind":"DaemonSet","name":"agent","controller":true,"blockOwnerDeletion":true}]'
tolerations=$(jq -c '[.spec.tolerations[] | .key + ":" + .effect]' <<<"$pod")
check "placement: the six default tolerations ($tolerations)" test "$tolerations" = \
  '["node.kubernetes.io/not-ready:NoExecute","node.kubernetes.io/unreachable:NoExecute","node.kubernetes.io/disk-pressure:NoSchedule","node.kubernetes.io/memory-pressure:NoSchedule","node.kubernetes.io/pid-pressure:NoSchedule","node.kubernetes.io/unschedulable:NoSchedule"]'
affinity=$(jq -c '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms' <<<"$pod")
check "placement: node-name affinity $affinity" test "$affinity" = "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"$(jq -r .spec.nodeName <<<"$pod")\"]}]}]"
check "placement: pods carry the status's hash $(hash_of agent)" test "$(pod_hashes agent)" = "$(hash_of agent)"
revisions=$(kubectl get controllerrevisions -n "$NS" -l app=agent -o json | jq -c '[.items[] | {name: .metadata.name, hash: .metadata.labels["controller-revision-hash"], revision}]')
check "placement: one ControllerRevision agent-<hash> ($revisions)" \
  test "$(jq -r --arg h "$(hash_of agent)" '(length == 1) and (.[0].name == "agent-" + $h) and (.[0].revision == 1)' <<<"$revisions")" = true
created=$(kubectl get events -n "$NS" -o json | jq -c '[.items[] | select(.involvedObject.name == "agent" and .reason == "SuccessfulCreate") | .message | test("^Created pod: agent-[a-z0-9]{5}$")] | [length, all]')
check "placement: SuccessfulCreate 'Created pod: agent-…' (upstream's words) twice ($created)" test "$created" = '[2,true]'
columns=$(kubectl get daemonsets.apps.kruise.io -n "$NS" agent --no-headers | awk '{print $1, $2, $3, $4, $5, $6}')
check "placement: kubectl get daemonsets.apps.kruise.io: '$columns'" test "$columns" = "agent 2 2 2 2 2"
daemonset tolerant v1 \
  '      tolerations: [{key: dedicated, operator: Exists}, {key: e2e/evict, operator: Exists, effect: NoExecute}]' \
  '      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a, c]}]}]}}}' \
  '  updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 1}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "placement: tolerations and node affinity (zone In [a, c]): n1, n4, n5 (NoExecute tolerated), not n2 (zone b)" \
  settled tolerant "n1 n4 n5" '[3,3,3,3,3,0]'

# --- evict: a NoExecute taint on a running node, and the preDelete hook -----------------------
held=$(pod_on agent n1)
kubectl taint node "$RUN-n1" e2e/evict=now:NoExecute >/dev/null
until_kubelet 30 "evict: n1 tainted NoExecute: the hooked pod is PreparingDelete, not deleted" \
  bash -c "[ \"\$(lifecycle_of $held)\" = PreparingDelete ]"
kubelet_pass; sleep 2; kubelet_pass
check "evict: held: still there, counted misscheduled ($(status_of agent))" \
  bash -c "[ \"\$(pod_on agent n1)\" = $held ] && [ \"\$(status_of agent)\" = '[1,1,1,1,1,1]' ]"
check "evict: the tolerant DaemonSet keeps its n1 pod" test "$(nodes_of tolerant)" = "n1 n4 n5"
kubectl label pod -n "$NS" "$held" example.io/block-deleting- >/dev/null
until_kubelet 30 "evict: label removed: deleted, misscheduled 0" bash -c "! kubectl get pod -n $NS $held >/dev/null 2>&1 && [ \"\$(status_of agent)\" = '[1,1,1,1,1,0]' ]"
check "evict: SuccessfulDelete 'Deleted pod: $held'" \
  test "$(kubectl get events -n "$NS" -o json | jq --arg p "Deleted pod: $held" '[.items[] | select(.reason == "SuccessfulDelete" and .message == $p)] | length')" = 1
kubectl taint node "$RUN-n1" e2e/evict- >/dev/null
until_kubelet 30 "evict: taint removed: n1 gets a new pod" settled agent "n1 n4" '[2,2,2,2,2,0]'

# --- update: preDelete holds the rolling update -----------------------------------------------
h1=$(hash_of agent)
first=$(pod_on agent n4); second=$(pod_on agent n1)
agent v2 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 30 "update: n4's pod (highest name first) PreparingDelete" bash -c "[ \"\$(lifecycle_of $first)\" = PreparingDelete ]"
kubelet_pass; sleep 2; kubelet_pass
check "update: held, and n1's pod untouched (maxUnavailable 1 spent)" \
  bash -c "[ \"\$(pod_on agent n4)\" = $first ] && [ -z \"\$(lifecycle_of $second)\" ]"
kubectl label pod -n "$NS" "$first" example.io/block-deleting- >/dev/null
until_kubelet 30 "update: released: n4 replaced at the new revision, then n1's pod PreparingDelete" \
  bash -c "[ \"\$(lifecycle_of $second)\" = PreparingDelete ] && [ \"\$(live agent | jq -r --arg n $RUN-n4 '.[] | select(.spec.nodeName == \$n) | .metadata.labels[\"controller-revision-hash\"]')\" != $h1 ]"
kubectl label pod -n "$NS" "$second" example.io/block-deleting- >/dev/null
until_kubelet 60 "update: both nodes at the new revision, status [2,2,2,2,2,0]" \
  bash -c "settled agent 'n1 n4' '[2,2,2,2,2,0]' && [ \"\$(pod_hashes agent)\" = \"\$(hash_of agent)\" ] && [ \"\$(hash_of agent)\" != $h1 ]"

# --- surge: maxSurge 1 keeps every node served ------------------------------------------------
three() { # NAME IMAGE STRATEGY: on n1, n2 (dedicated tolerated) and n4
  daemonset "$1" "$2" '      tolerations: [{key: dedicated, operator: Exists}]' "  updateStrategy: $3"
}
three surge v1 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxSurge: 1, maxUnavailable: 0}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "surge: 3 pods on n1, n2, n4" settled surge "n1 n2 n4" '[3,3,3,3,3,0]'
three surge v2 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxSurge: 1, maxUnavailable: 0}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
min_ready=3; max_pods=3; deadline=$((SECONDS + 90))
until [ "$(pod_hashes surge)" = "$(hash_of surge)" ] && settled surge "n1 n2 n4" '[3,3,3,3,3,0]'; do
  [ $SECONDS -lt $deadline ] || break
  kubelet_pass
  counts=$(live surge | jq -c '[length, ([.[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length)]')
  total=$(jq '.[0]' <<<"$counts"); ready=$(jq '.[1]' <<<"$counts")
  [ "$ready" -lt "$min_ready" ] && min_ready=$ready
  [ "$total" -gt "$max_pods" ] && max_pods=$total
  sleep 0.3
done
check "surge: rolled out to the new revision" test "$(pod_hashes surge)" = "$(hash_of surge)"
check "surge: never fewer than 3 ready pods ($min_ready) nor more than 4 ($max_pods)" test "$min_ready,$max_pods" = "3,4"

# --- partition: the lowest name stays (this set written as v1beta1) ---------------------------
export DS_VERSION=v1beta1
three part v1 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 3, partition: 1}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "partition: 3 pods" settled part "n1 n2 n4" '[3,3,3,3,3,0]'
old=$(hash_of part)
# `plan --kubeconfig` before the change (the live set, its pods, revisions and the cluster's Nodes),
# compared below with what the controller does.
plan_exit=0
three part v2 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 3, partition: 1}}' \
  | sed "s/{name: part}/{name: part, namespace: $NS}/" > "$tmp/part-v2.yaml"
"$BIN" plan "$tmp/part-v2.yaml" --kubeconfig "$KUBECONFIG" -o json > "$tmp/part.plan" 2>&1 || plan_exit=$?
[ -z "${E2E_DAEMONSET_LOGS:-}" ] || cp "$tmp/part.plan" "$E2E_DAEMONSET_LOGS/"
three part v2 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 3, partition: 1}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "partition 1: n2 and n4 updated, n1 kept, status [3,3,3,2,3,0]" settled part "n1 n2 n4" '[3,3,3,2,3,0]'
kept=$(live part | jq -r --arg n "$RUN-n1" '.[] | select(.spec.nodeName == $n) | .metadata.labels["controller-revision-hash"]')
check "partition: n1 still at the old revision" test "$kept" = "$old"
# The plan's pods are "<pod> on <node>": the nodes it replaces, and the one the partition keeps.
plan_seen=$(jq -c '[(.start | contains("3 pods given")), .verdict.result,
  ([.rounds[].recreated[]? | split(" on ")[1] | sub("^.*-"; "")] | sort | join(",")),
  ([.verdict.reasons[]? | select(startswith("updateStrategy.rollingUpdate.partition 1 keeps the pods of node") and endswith("-n1 at the current revision"))] | length)]' \
  "$tmp/part.plan" 2>/dev/null || true)
check "partition: plan --kubeconfig read the 3 live pods, replaced n2 and n4 and was blocked by the partition keeping n1, as the controller (exit $plan_exit, $plan_seen)" \
  test "$plan_exit $plan_seen" = '2 [true,"blocked","n2,n4",1]'
three part v2 '{type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 3, partition: 0}}' \
  | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "partition 0: all updated" settled part "n1 n2 n4" '[3,3,3,3,3,0]'
unset DS_VERSION
# Written as v1beta1, read as v1alpha1 through the conversion webhook: the same revision as
# daemonSetHash, the update strategy as written.
read_back=$(kubectl get daemonsets.v1alpha1.apps.kruise.io -n "$NS" part -o json \
  | jq -c '[.apiVersion, .status.daemonSetHash == "'"$(hash_of part)"'", .spec.updateStrategy.rollingUpdate.partition]')
check "partition: the v1beta1 set read as v1alpha1 ($read_back)" test "$read_back" = '["apps.kruise.io/v1alpha1",true,0]'

# --- adopt: orphans the selector selects are adopted, one pod per node kept -------------------
orphan() { # NAME NODE: a bare pod with the DaemonSet's labels, bound to NODE
  jq -nc --arg p "$1" --arg n "$RUN-$2" \
    '{apiVersion: "v1", kind: "Pod", metadata: {name: $p, labels: {app: "keeper"}},
      spec: {nodeName: $n, containers: [{name: "main", image: "example.com/keeper:v1"}]}}' \
    | kubectl create -n "$NS" -f - >/dev/null
}
orphan keeper-left-a n1
orphan keeper-left-b n4
sleep 1
orphan keeper-left-c n4
kubelet_pass
daemonset keeper v1 '  updateStrategy: {type: OnDelete}' | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "adopt: the orphans serve n1 and n4, the younger one on n4 deleted, status [2,2,2,0,2,0]" \
  settled keeper "n1 n4" '[2,2,2,0,2,0]'
names=$(live keeper | jq -r '[.[].metadata.name] | sort | join(" ")')
check "adopt: the DaemonSet's pods are the orphans keeper-left-a and keeper-left-b ($names)" \
  test "$names" = "keeper-left-a keeper-left-b"
uid=$(ads keeper | jq -r .metadata.uid)
owners=$(live keeper | jq -c --arg u "$uid" '[.[] | [.metadata.ownerReferences[]? | select(.controller == true and .uid == $u and .kind == "DaemonSet")] | length]')
check "adopt: each carries the DaemonSet's controller reference ($owners)" test "$owners" = "[1,1]"
check "adopt: no pod created beside them (SuccessfulCreate events: $(event_count keeper SuccessfulCreate))" \
  test "$(event_count keeper SuccessfulCreate)" = 0
check "adopt: n4's duplicate deleted ('Deleted pod: keeper-left-c')" \
  test "$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.involvedObject.name == "keeper" and .reason == "SuccessfulDelete" and .message == "Deleted pod: keeper-left-c")] | length')" = 1
