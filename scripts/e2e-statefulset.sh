#!/usr/bin/env bash
# End-to-end test of the Advanced StatefulSet controller (`kruise-webhook controller`) against a
# real kube-apiserver.
#
#   KUBECONFIG=/path/to/disposable/kubeconfig scripts/e2e-statefulset.sh
#
# Without KUBECONFIG it starts a kube-apiserver of its own (binaries of scripts/kube-local, state in
# a temporary KUBE_LOCAL, ports APISERVER_PORT 18443 / ETCD_PORT 18379 / ETCD_PEER_PORT 18380) and
# stops it afterwards. scripts/e2e.sh runs it against its apiserver, in namespace
# e2e-statefulset-<pid>.
#
# There is no scheduler, kubelet, garbage collector or PV binder: this script binds pods, writes
# their status (Running, Ready = every readiness gate condition True, imageIDs following the
# images) and finishes the deletion of terminating pods; PVCs stay Pending. Pod changes are
# recorded by `kubectl get pods -w`, so orders are checked on every version the apiserver stored.
# Scenarios, one block each:
#   ordered    the release note's set (OrderedReady, 3 replicas, a `data` claim template,
#              whenScaled Delete / whenDeleted Retain, InPlaceIfPossible): pods and claims made in
#              ordinal order, each pod only after the one below it is ready; identity, volumes,
#              status; an image change in place (same uids, highest ordinal first, as `plan --kubeconfig`
#              said before it); `kubectl scale`
#              to 1 (claims handed to their pods before the pods go, web-2 then web-1); the claims
#              of the gone pods block their re-creation until removed; `kubectl scale` back to 3.
#   retention  the four whenScaled / whenDeleted combinations (Parallel, 2 replicas): the claims'
#              owners in range and, after scaling to 1, of the scaled-in ordinal.
#   v1alpha1   a set created as apps.kruise.io/v1alpha1 gets its pods; the release note's set
#              written back as v1alpha1 keeps the fields only v1beta1 has.
# The garbage collector's part (claims deleted with their owners) is proven on the real node
# (scripts/e2e-node.sh).
# E2E_STATEFULSET_LOGS=DIR keeps the controller's log and the recorded watches.
set -euo pipefail
# The binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/controller-e2e.sh
. scripts/lib/controller-e2e.sh
NS=${E2E_NAMESPACE:-e2e-statefulset-$$}
e2e_begin e2e-statefulset 18443 18379 18380 "${E2E_STATEFULSET_LOGS:-}"

# --- observation ------------------------------------------------------------------------------
sts() { kubectl get statefulsets.apps.kruise.io -n "$NS" "$1" -o json; }
# [replicas, readyReplicas, currentReplicas, updatedReplicas]
status_of() { sts "$1" | jq -c '.status | [.replicas, .readyReplicas, .currentReplicas, .updatedReplicas]'; }
live_pods() { kubectl get pods -n "$NS" -l "app=$1" -o json | jq -c '[.items[] | select(.metadata.deletionTimestamp == null)]'; }
names_of() { live_pods "$1" | jq -r '[.[].metadata.name] | sort | join(" ")'; }
settled() { # APP N: N pods, status [N,N,N,N] of the latest generation, one revision current
  [ "$(live_pods "$1" | jq length)" = "$2" ] && [ "$(status_of "$1")" = "[$2,$2,$2,$2]" ] \
    && [ "$(sts "$1" | jq '.status.observedGeneration == .metadata.generation and .status.currentRevision == .status.updateRevision')" = true ]
}
# The owners of a claim as "Kind/name" words, sorted ("-" for none).
owners() { kubectl get pvc -n "$NS" "$1" -o json | jq -r '[.metadata.ownerReferences[]? | .kind + "/" + .name] | sort | if length == 0 then "-" else join(",") end'; }
owners_are() { [ "$(owners "$1")" = "$2" ]; }
watch_start() { # APP: records every stored version of its pods in $tmp/APP.watch
  kubectl get pods -n "$NS" -l "app=$1" -w --output-watch-events -o json > "$tmp/$1.watch" 2>/dev/null &
  watch_pids="$watch_pids $!"
  sleep 1
}
JQ_READY='def ready: ([.status.conditions[]? | select(.type == "Ready") | .status][0] // "") == "True";'
helpers="$(declare -f sts status_of live_pods names_of settled owners owners_are); NS=$NS"

# --- setup ------------------------------------------------------------------------------------
apply_crds deploy/crds/statefulsets.apps.kruise.io.yaml
e2e_namespace
KRUISE_WEBHOOK_LOG=${E2E_STATEFULSET_RUST_LOG:-info} KUBECONFIG=$CTL_KUBECONFIG "$BIN" controller --namespace "$NS" --identity e2e-statefulset \
  --no-sidecarsets --no-barriers --no-clonesets > "$tmp/ctl.log" 2>&1 &
ctl_pid=$!

# The release note's set (with the defaults the mutating webhook would add written out).
web() { # IMAGE REPLICAS
  cat <<EOF
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: $2
  serviceName: web
  selector: {matchLabels: {app: web}}
  podManagementPolicy: OrderedReady
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Delete}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 1, partition: 0}
  revisionHistoryLimit: 10
  template:
    metadata: {labels: {app: web}}
    spec:
      readinessGates: [{conditionType: InPlaceUpdateReady}]
      containers: [{name: nginx, image: $1, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
}

# --- ordered ----------------------------------------------------------------------------------
watch_start web
web example.com/nginx:v1 3 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 90 "ordered: 3 pods, status [3,3,3,3]" bash -c "$helpers; settled web 3"
check "ordered: pods web-0 web-1 web-2 ($(names_of web))" test "$(names_of web)" = "web-0 web-1 web-2"
history=$(watched web)
# Each pod's first stored version, in stored order; and whether the pod below was ready by then.
created=$(jq -r '[.[] | select(.watchType == "ADDED") | .metadata.name] | join(" ")' <<<"$history")
check "ordered: created in ordinal order ($created)" test "$created" = "web-0 web-1 web-2"
early=$(jq -r "$JQ_READY"' . as $all | [range(0; length) as $i | $all[$i] | select(.watchType == "ADDED")
  | (.metadata.name | ltrimstr("web-") | tonumber) as $n | select($n > 0)
  | select([$all[0:$i][] | select(.metadata.name == "web-\($n - 1)")] | last | ready | not) | .metadata.name] | join(" ")' <<<"$history")
check "ordered: no pod created before the one below it was ready (early: '$early')" test -z "$early"
pod0=$(kubectl get pod -n "$NS" web-0 -o json)
identity=$(jq -c '[.metadata.labels["statefulset.kubernetes.io/pod-name"], .metadata.labels["apps.kubernetes.io/pod-index"],
  .spec.hostname, .spec.subdomain, (.spec.volumes[] | select(.name == "data") | .persistentVolumeClaim.claimName),
  .metadata.labels["lifecycle.apps.kruise.io/state"], .metadata.ownerReferences[0].kind]' <<<"$pod0")
check "ordered: web-0 identity $identity" test "$identity" = '["web-0","0","web-0","web","data-web-0","Normal","StatefulSet"]'
revision=$(sts web | jq -r .status.updateRevision)
check "ordered: pods labelled with the revision name $revision" \
  test "$(live_pods web | jq --arg r "$revision" '[.[].metadata.labels["controller-revision-hash"] == $r] | all')" = true
claims=$(kubectl get pvc -n "$NS" -o json | jq -r '[.items[].metadata.name] | sort | join(" ")')
check "ordered: claims $claims" test "$claims" = "data-web-0 data-web-1 data-web-2"
check "ordered: claims labelled app=web, no owners in range (whenScaled Delete, whenDeleted Retain)" \
  test "$(kubectl get pvc -n "$NS" -o json | jq '[.items[] | (.metadata.labels.app == "web") and (.metadata.ownerReferences == null)] | all')" = true
status=$(sts web | jq -cS '.status | {replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, labelSelector, volumeClaims, collisionCount}')
check "ordered: status $status (claims unbound: none ready)" test "$status" = "$(jq -cS . <<<'{"replicas":3,"readyReplicas":3,
  "availableReplicas":3,"currentReplicas":3,"updatedReplicas":3,"labelSelector":"app=web",
  "volumeClaims":[{"volumeClaimName":"data","compatibleReplicas":3,"compatibleReadyReplicas":0}],"collisionCount":0}')"
revisions=$(kubectl get controllerrevisions -n "$NS" -l app=web -o json | jq -c '[.items[] | {name: .metadata.name, hash: .metadata.labels["controller.kubernetes.io/hash"], owner: .metadata.ownerReferences[0].kind, revision}]')
check "ordered: one ControllerRevision $revisions" \
  test "$(jq --arg r "$revision" '.[0].hash as $h | length == 1 and .[0].name == $r and ($r | endswith("-" + $h)) and .[0].owner == "StatefulSet" and .[0].revision == 1' <<<"$revisions")" = true
created_events=$(kubectl get events -n "$NS" -o json | jq -r '[.items[] | select(.involvedObject.name == "web" and .reason == "SuccessfulCreate") | .message] | sort | join("; ")')
check "ordered: events '$created_events'" test "$created_events" = \
  "create Claim data-web-0 Pod web-0 in StatefulSet web success; create Claim data-web-1 Pod web-1 in StatefulSet web success; create Claim data-web-2 Pod web-2 in StatefulSet web success; create Pod web-0 in StatefulSet web successful; create Pod web-1 in StatefulSet web successful; create Pod web-2 in StatefulSet web successful"
columns=$(kubectl get statefulsets.apps.kruise.io -n "$NS" web --no-headers | awk '{print $1, $2, $3, $4, $5}')
check "ordered: kubectl get columns '$columns'" test "$columns" = "web 3 3 3 3"

# An image change, in place, highest ordinal first.
uids=$(live_pods web | jq -c 'map(.metadata.uid) | sort')
# `plan --kubeconfig` before the change: the live set, its pods and revisions read from the
# apiserver; compared below with what the controller does.
plan_exit=0
web example.com/nginx:v2 3 | sed "s/{name: web}/{name: web, namespace: $NS}/" > "$tmp/web-v2.yaml"
"$BIN" plan "$tmp/web-v2.yaml" --kubeconfig "$KUBECONFIG" -o json > "$tmp/web.plan" 2>&1 || plan_exit=$?
web example.com/nginx:v2 3 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 90 "in place: status [3,3,3,3] at the new revision" bash -c "$helpers; settled web 3 && [ \"\$(sts web | jq -r .status.currentRevision)\" != $revision ]"
check "in place: same pods (uids)" test "$(live_pods web | jq -c 'map(.metadata.uid) | sort')" = "$uids"
order=$(watched web | jq -r '[.[] | select(.spec.containers[0].image == "example.com/nginx:v2") | .metadata.name]
  | reduce .[] as $n ([]; if index($n) then . else . + [$n] end) | join(" ")')
check "in place: images changed web-2, web-1, web-0 ($order)" test "$order" = "web-2 web-1 web-0"
plan_seen=$(jq -c '[(.start | startswith("3 pods given")), .verdict.result, ([.rounds[].updatedInPlace[]?] | join(" "))]' "$tmp/web.plan" 2>/dev/null || true)
check "in place: plan --kubeconfig read the 3 live pods, completes (exit $plan_exit), in place in the controller's order ($plan_seen)" \
  test "$plan_exit $plan_seen" = "0 [true,\"completes\",\"$order\"]"
inplace=$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.involvedObject.name == "web" and .reason == "SuccessfulUpdatePodInPlace")] | length')
check "in place: SuccessfulUpdatePodInPlace events ($inplace)" test "$inplace" = 3
check "in place: lifecycle Normal, gate True on every pod" test "$(live_pods web | jq '[.[] |
  (.metadata.labels["lifecycle.apps.kruise.io/state"] == "Normal") and
  ([.status.conditions[] | select(.type == "InPlaceUpdateReady") | .status][0] == "True")] | all')" = true

# kubectl scale to 1: the claims go to their pods (whenScaled Delete) before the pods go.
uid2=$(kubectl get pod -n "$NS" web-2 -o jsonpath='{.metadata.uid}')
kubectl scale statefulsets.apps.kruise.io -n "$NS" web --replicas=1 >/dev/null
until_kubelet 60 "scale in: kubectl scale --replicas=1 → web-0 only" bash -c "$helpers; settled web 1"
check "scale in: data-web-2 owned by pod web-2 ($(owners data-web-2))" owners_are data-web-2 Pod/web-2
check "scale in: data-web-1 owned by pod web-1 ($(owners data-web-1))" owners_are data-web-1 Pod/web-1
check "scale in: data-web-0 unowned" owners_are data-web-0 -
check "scale in: the pod reference carries the pod's uid, no controller flag" test \
  "$(kubectl get pvc -n "$NS" data-web-2 -o json | jq -c --arg u "$uid2" '.metadata.ownerReferences == [{apiVersion: "v1", kind: "Pod", name: "web-2", uid: $u}]')" = true
deleted=$(watched web | jq -r '[.[] | select(.metadata.deletionTimestamp != null) | .metadata.name]
  | reduce .[] as $n ([]; if index($n) then . else . + [$n] end) | join(" ")')
check "scale in: deleted web-2 then web-1 ($deleted)" test "$deleted" = "web-2 web-1"

# Back to 3: the claims still owned by the gone pods block their re-creation (no garbage
# collector here); once they are removed (the collector's part), the pods come back.
kubectl scale statefulsets.apps.kruise.io -n "$NS" web --replicas=3 >/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do kubelet_pass; sleep 0.3; done
check "scale out: stale claims hold web-1 back ($(names_of web))" test "$(names_of web)" = "web-0"
kubectl delete pvc -n "$NS" data-web-1 data-web-2 --wait=false >/dev/null
kubectl patch pvc -n "$NS" data-web-1 data-web-2 --type=json -p '[{"op": "remove", "path": "/metadata/finalizers"}]' >/dev/null 2>&1 || true
until_kubelet 90 "scale out: kubectl scale --replicas=3 → web-0 web-1 web-2 once the claims are gone" bash -c "$helpers; settled web 3"
check "scale out: new claims, unowned ($(owners data-web-1) $(owners data-web-2))" test "$(owners data-web-1) $(owners data-web-2)" = "- -"

# --- retention: the four combinations ---------------------------------------------------------
retained() { # NAME WHEN_SCALED WHEN_DELETED REPLICAS
  cat <<EOF
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: $1}
spec:
  replicas: $4
  serviceName: $1
  selector: {matchLabels: {app: $1}}
  podManagementPolicy: Parallel
  persistentVolumeClaimRetentionPolicy: {whenScaled: $2, whenDeleted: $3}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: ReCreate, maxUnavailable: 1, partition: 0}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers: [{name: main, image: example.com/app:v1}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
}
combos="rr:Retain:Retain rd:Retain:Delete dr:Delete:Retain dd:Delete:Delete"
for combo in $combos; do
  IFS=: read -r name scaled deleted <<<"$combo"
  retained "$name" "$scaled" "$deleted" 2 | kubectl apply -n "$NS" -f - >/dev/null
done
for combo in $combos; do
  IFS=: read -r name scaled deleted <<<"$combo"
  until_kubelet 60 "retention $scaled/$deleted: 2 pods" bash -c "$helpers; settled $name 2"
  want=$([ "$deleted" = Delete ] && echo "StatefulSet/$name" || echo -)
  check "retention $scaled/$deleted: claims in range owned by '$want'" \
    test "$(owners "data-$name-0") $(owners "data-$name-1")" = "$want $want"
  kubectl scale statefulsets.apps.kruise.io -n "$NS" "$name" --replicas=1 >/dev/null
done
for combo in $combos; do
  IFS=: read -r name scaled deleted <<<"$combo"
  until_kubelet 60 "retention $scaled/$deleted: scaled to 1" bash -c "$helpers; settled $name 1"
  case "$scaled/$deleted" in
    Retain/Retain) want=- ;;
    Retain/Delete) want="StatefulSet/$name" ;;
    *) want="Pod/$name-1" ;;
  esac
  check "retention $scaled/$deleted: the scaled-in claim owned by '$want' ($(owners "data-$name-1"))" owners_are "data-$name-1" "$want"
done

# --- v1alpha1 -----------------------------------------------------------------------------------
kubectl apply -n "$NS" -f - >/dev/null <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: StatefulSet
metadata: {name: old}
spec:
  replicas: 2
  serviceName: old
  selector: {matchLabels: {app: old}}
  podManagementPolicy: Parallel
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: ReCreate, maxUnavailable: 1, partition: 0}}
  template:
    metadata: {labels: {app: old}}
    spec:
      containers: [{name: main, image: example.com/old:v1}]
EOF
until_kubelet 60 "v1alpha1: a set created as v1alpha1 gets its 2 pods" bash -c "$helpers; settled old 2"
v1alpha1=$(kubectl get statefulsets.v1alpha1.apps.kruise.io -n "$NS" old -o json | jq -c '[.apiVersion, .status.readyReplicas]')
check "v1alpha1: read back as v1alpha1 with its status $v1alpha1" test "$v1alpha1" = '["apps.kruise.io/v1alpha1",2]'
# A v1beta1 set read and written back as v1alpha1 (kubectl edit in v1alpha1) keeps the fields only
# v1beta1 has: v1alpha1 readers get them in an annotation, and writing it back restores them.
carried=$(kubectl get statefulsets.v1alpha1.apps.kruise.io -n "$NS" web -o json \
  | jq 'del(.metadata.resourceVersion) | .spec.replicas = 2' | kubectl replace -f - -o json \
  | jq -r '.metadata.annotations["statefulset.kruise.io/v1beta1-fields"]')
kept=$(sts web | jq -c '[.spec.replicas, .spec.persistentVolumeClaimRetentionPolicy, .metadata.annotations["statefulset.kruise.io/v1beta1-fields"]]')
check "v1alpha1: the release note's set written back as v1alpha1 keeps its retention policy ($carried; v1beta1: $kept)" \
  test "$kept" = '[2,{"whenDeleted":"Retain","whenScaled":"Delete"},null]'
