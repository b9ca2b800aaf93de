#!/usr/bin/env bash
# End-to-end test of the CloneSet controller (`kruise-webhook controller`) against a real
# kube-apiserver.
#
#   KUBECONFIG=/path/to/disposable/kubeconfig scripts/e2e-cloneset.sh
#
# Without KUBECONFIG it starts a kube-apiserver of its own (binaries of scripts/kube-local, state in
# a temporary KUBE_LOCAL, ports APISERVER_PORT 18443 / ETCD_PORT 18379 / ETCD_PEER_PORT 18380) and
# stops it afterwards.
#
# There is no scheduler or kubelet: this script binds pods to a node (pods/binding) and writes
# pods/status (Running, containerStatuses whose imageID follows the image and whose restartCount
# rises when the image changes, Ready = every readiness gate condition True).
# Scenario: a CloneSet scaled 0 → 3 → 5 (kubectl scale) → 2; then the v1.1 release-note CloneSet
# (W1) with both images changed: the pod is updated in place (same uid) in two batches, the
# sidecar (launch priority 10) first, and reports updatedReadyReplicas = replicas.
# The pods carry the KRUISE_CONTAINER_BARRIER env the pod webhook would add (no webhook runs here).
set -euo pipefail
# The webhook binaries started here stop at once: no endpoints drain them (see --shutdown-delay).
export KRUISE_WEBHOOK_SHUTDOWN_DELAY=${KRUISE_WEBHOOK_SHUTDOWN_DELAY:-0}
cd "$(dirname "$0")/.."
here=$PWD
BIN=${BIN:-target/debug/kruise-webhook}
NS=${E2E_NAMESPACE:-e2e-cloneset-$$}
[ -x "$BIN" ] || cargo build --quiet
tmp=$(mktemp -d)
ctl_pid=""; started_local=0; failures=0

if [ -z "${KUBECONFIG:-}" ]; then
  shared=$HOME/.cache/kruise-webhook/kube-local
  [ -x "$shared/bin/kube-apiserver" ] || { echo "no kube-apiserver in $shared/bin (scripts/e2e.sh builds it)"; exit 1; }
  export KUBE_LOCAL=$tmp/kube-local KUBE_BIN=$shared/bin
  export APISERVER_PORT=${APISERVER_PORT:-18443} ETCD_PORT=${ETCD_PORT:-18379} ETCD_PEER_PORT=${ETCD_PEER_PORT:-18380}
  FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
  started_local=1
  export KUBECONFIG=$KUBE_LOCAL/kubeconfig
fi
export KUBECONFIG

cleanup() {
  [ -n "$ctl_pid" ] && { kill "$ctl_pid" 2>/dev/null || true; wait "$ctl_pid" 2>/dev/null || true; }
  if [ "$started_local" = 1 ]; then
    "$here/scripts/kube-local/stop.sh" >/dev/null 2>&1 || true
  else
    kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# --- kubelet ----------------------------------------------------------------------------------
kubelet_pass() {
  local snapshot pod
  snapshot=$(kubectl get pods -n "$NS" -o json)
  for pod in $(jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name' <<<"$snapshot"); do
    local json node patch
    json=$(jq -c --arg p "$pod" '.items[] | select(.metadata.name == $p)' <<<"$snapshot")
    node=$(jq -r '.spec.nodeName // ""' <<<"$json")
    if [ -z "$node" ]; then
      jq -nc --arg p "$pod" '{apiVersion: "v1", kind: "Binding", metadata: {name: $p}, target: {kind: "Node", name: "node-1"}}' \
        | kubectl create --raw "/api/v1/namespaces/$NS/pods/$pod/binding" -f - >/dev/null 2>&1 || true
    fi
    patch=$(jq -c '
      (.status.containerStatuses // []) as $old
      | [.spec.containers[] | .name as $n | .image as $i
         | ([$old[] | select(.name == $n)][0]) as $o
         | {name: $n, image: $i, imageID: ("docker-pullable://" + $i),
            ready: true, started: true,
            restartCount: (if $o == null then 0 elif $o.image == $i then $o.restartCount else $o.restartCount + 1 end),
            containerID: ("containerd://" + $n + "-" + (if $o == null then "0" elif $o.image == $i then ($o.restartCount | tostring) else ($o.restartCount + 1 | tostring) end)),
            state: {running: {startedAt: "2024-01-01T00:00:00Z"}}}] as $cs
      | [(.spec.readinessGates // [])[] | .conditionType] as $gates
      | (.status.conditions // []) as $conds
      | (if all($gates[]; . as $g | any($conds[]; .type == $g and .status == "True")) then "True" else "False" end) as $ready
      | {status: {phase: "Running", containerStatuses: $cs,
          conditions: [{type: "PodScheduled", status: "True"}, {type: "Initialized", status: "True"},
                       {type: "ContainersReady", status: "True"}, {type: "Ready", status: $ready}]}}' <<<"$json")
    # An unchanged status is a no-op for the apiserver (no new resourceVersion).
    kubectl patch pod -n "$NS" "$pod" --subresource=status --type=strategic -p "$patch" >/dev/null 2>&1 || true
  done
}
# until_kubelet SECONDS DESCRIPTION COMMAND...: kubelet passes until COMMAND succeeds.
until_kubelet() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then fail "$what (timed out)"; return 0; fi
    kubelet_pass
    sleep 0.5
  done
  pass "$what"
}
status_of() { kubectl get cloneset -n "$NS" "$1" -o json | jq -c '.status | [.replicas, .readyReplicas, .updatedReplicas, .updatedReadyReplicas]'; }
status_is() { [ "$(status_of "$1")" = "$2" ]; }
pod_count() { kubectl get pods -n "$NS" -l "app=$1" -o json | jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length'; }
count_is() { [ "$(pod_count "$1")" = "$2" ]; }

# --- setup ------------------------------------------------------------------------------------
kubectl apply -f deploy/crds/clonesets.apps.kruise.io.yaml >/dev/null
kubectl wait --for condition=established crd/clonesets.apps.kruise.io --timeout=30s >/dev/null
kubectl create namespace "$NS" >/dev/null
RUST_LOG=info "$BIN" controller --namespace "$NS" --identity e2e-cloneset --no-sidecarsets --no-barriers > "$tmp/ctl.log" 2>&1 &
ctl_pid=$!

# --- scale 0 → 3 → 5 → 2 ----------------------------------------------------------------------
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
until_kubelet 30 "replicas 0: status observed" sh -c "[ \"\$(kubectl get cloneset -n $NS web -o jsonpath='{.status.observedGeneration}')\" = 1 ]"
selector=$(kubectl get cloneset -n "$NS" web -o jsonpath='{.status.labelSelector}')
[ "$selector" = "app=web" ] && pass "status.labelSelector $selector" || fail "status.labelSelector '$selector'"
for n in 3 5 2; do
  kubectl scale cloneset -n "$NS" web --replicas="$n" >/dev/null
  until_kubelet 60 "kubectl scale --replicas=$n: $n pods, status [$n,$n,$n,$n]" \
    bash -c "$(declare -f status_is status_of count_is pod_count); NS=$NS; count_is web $n && status_is web '[$n,$n,$n,$n]'"
done
names=$(kubectl get pods -n "$NS" -l app=web -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name | test("^web-[bcdfghjklmnpqrstvwxz2456789]{5}$")] | all')
[ "$names" = true ] && pass "pod names are web-<5 random chars>" || fail "pod names $(kubectl get pods -n $NS -o name | tr '\n' ' ')"
labels=$(kubectl get pods -n "$NS" -l app=web -o json | jq -r '[.items[0].metadata.labels | has("apps.kruise.io/cloneset-instance-id", "controller-revision-hash", "pod-template-hash")] | all')
[ "$labels" = true ] && pass "pods carry instance-id, controller-revision-hash and pod-template-hash" || fail "pod labels"
gates=$(kubectl get pods -n "$NS" -l app=web -o json | jq -r '.items[0].spec.readinessGates | map(.conditionType) | join(",")')
[ "$gates" = InPlaceUpdateReady ] && pass "readiness gate $gates" || fail "readiness gates '$gates'"
revisions=$(kubectl get controllerrevisions -n "$NS" -o json | jq '.items | length')
[ "$revisions" = 1 ] && pass "one ControllerRevision" || fail "$revisions ControllerRevisions"

# --- W1: a sidecar of priority 10 and main changed together → two batches, sidecar first ------
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
            - {name: KRUISE_CONTAINER_BARRIER, valueFrom: {configMapKeyRef: {name: sample-barrier, key: p_10}}}
        - name: main
          image: $2
          env:
            - {name: KRUISE_CONTAINER_BARRIER, valueFrom: {configMapKeyRef: {name: sample-barrier, key: p_0}}}
  updateStrategy: {type: InPlaceIfPossible}
EOF
}
w1 example.com/sidecar:v1 example.com/main:v1 | kubectl apply -n "$NS" -f - >/dev/null
until_kubelet 60 "W1: one pod, status [1,1,1,1]" bash -c "$(declare -f status_is status_of); NS=$NS; status_is sample '[1,1,1,1]'"
uid=$(kubectl get pods -n "$NS" -l app=sample -o jsonpath='{.items[0].metadata.uid}')
w1 example.com/sidecar:v2 example.com/main:v2 | kubectl apply -n "$NS" -f - >/dev/null
# Watch the pod spec between kubelet passes: the sidecar must change before main.
seen=""
deadline=$((SECONDS + 90))
while [ $SECONDS -lt $deadline ]; do
  images=$(kubectl get pods -n "$NS" -l app=sample -o json | jq -r '.items[0].spec.containers | map(.image | split(":")[1]) | join(",")')
  [[ " $seen " == *" $images "* ]] || seen="${seen:+$seen }$images"
  status_is sample '[1,1,1,1]' && [ "$images" = v2,v2 ] && break
  kubelet_pass
  sleep 0.5
done
[ "$seen" = "v1,v1 v2,v1 v2,v2" ] && pass "W1 images moved sidecar first: $seen" || fail "W1 image sequence: $seen"
status_is sample '[1,1,1,1]' && pass "W1 updatedReadyReplicas = replicas = 1" || fail "W1 status $(status_of sample)"
pod=$(kubectl get pods -n "$NS" -l app=sample -o json | jq -c '.items[0]')
[ "$(jq -r .metadata.uid <<<"$pod")" = "$uid" ] && pass "W1 pod updated in place (same uid)" || fail "W1 pod was recreated"
batches=$(jq -c '.metadata.annotations["apps.kruise.io/inplace-update-state"] | fromjson | [.containerBatchesRecord[].containers]' <<<"$pod")
[ "$batches" = '[["sidecar"],["main"]]' ] && pass "W1 batches $batches" || fail "W1 batches $batches"
restarts=$(jq -c '[.status.containerStatuses[] | {(.name): .restartCount}] | add' <<<"$pod")
[ "$restarts" = '{"sidecar":1,"main":1}' ] || [ "$restarts" = '{"main":1,"sidecar":1}' ] \
  && pass "W1 restart counts $restarts" || fail "W1 restart counts $restarts"
events=$(kubectl get events -n "$NS" -o json | jq '[.items[] | select(.reason == "SuccessfulUpdatePodInPlace")] | length')
[ "$events" -ge 1 ] && pass "$events SuccessfulUpdatePodInPlace event(s)" || fail "no SuccessfulUpdatePodInPlace event"

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
  bash -c "$(declare -f status_is status_of pvc_live pvc_wanted pvc_match); NS=$NS; status_is store '[2,2,2,2]' && pvc_match && [ \"\$(pvc_live | jq length)\" = 2 ]"
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
# No kubelet confirms a graceful deletion here: force it.
kubectl delete pod -n "$NS" "$victim" --grace-period=0 --force >/dev/null 2>&1
until_kubelet 60 "PVC: deleted pod $victim recreated with the same id, status [2,2,2,2]" \
  bash -c "$(declare -f status_is status_of); NS=$NS; uid=\$(kubectl get pod -n $NS $victim -o jsonpath='{.metadata.uid}'); [ -n \"\$uid\" ] && [ \"\$uid\" != $victim_uid ] && status_is store '[2,2,2,2]'"
[ "$(pvc_live)" = "$claims_before" ] && pass "PVC: the replacement reuses data-$victim, no new PVC" \
  || fail "PVC: claims $(pvc_live), before $claims_before"
kubectl scale cloneset -n "$NS" store --replicas=1 >/dev/null
until_kubelet 60 "PVC: scaled to 1, status [1,1,1,1], only the remaining pod's PVC left" \
  bash -c "$(declare -f status_is status_of count_is pod_count pvc_live pvc_wanted pvc_match); NS=$NS; count_is store 1 && status_is store '[1,1,1,1]' && pvc_match && [ \"\$(pvc_live | jq length)\" = 1 ]"

if [ "$failures" -gt 0 ]; then
  echo "--- controller log (tail)"; tail -40 "$tmp/ctl.log"
  echo "e2e-cloneset: $failures check(s) failed"; exit 1
fi
echo "e2e-cloneset: all checks passed"
