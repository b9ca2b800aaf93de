# j. In-place updates that cannot hang, and markPodNotReady, on the real node (sourced by scripts/e2e-node.sh, which
# provides check, until_true, new_namespace, app_container, pods_ready, pod_facts, $work, $KUBE_NODE, $V1, $V2).
#
# - Two tags of one image (same digest): a CloneSet of 2 pods (maxUnavailable 1) updated in place from one tag to the
#   other: each pod restarts its container once, keeps its uid, and the rollout finishes — the runtime reports the
#   same imageID, which OpenKruise's completion rule waits on forever.
# - A fully qualified name and its short form (docker.io/library/kube-node-app:v1 and kube-node-app:v1, one image):
#   the same, one pod.
# - markPodNotReady: a CloneSet whose inPlaceUpdate hook (a label) has markPodNotReady, behind a Service. Its pod gets
#   the KruisePodReady readiness gate from the webhook and the condition True from the controller (Ready, in the
#   Endpoints). On a template change it waits in PreparingUpdate with the condition False: kubelet marks it not Ready
#   and the Endpoints move its address to notReadyAddresses while the image is still the old one; once the label is
#   removed it is updated in place and comes back to the Endpoints' addresses.

INPLACE_NS=e2e-node-inplace
INPLACE_SAME=localhost/kube-node/app:v1-again    # a second tag of $V1
INPLACE_QUALIFIED=docker.io/library/kube-node-app:v1
INPLACE_SHORT=kube-node-app:v1

inplace_ctr() { ctr --address "$KUBE_NODE/run/containerd.sock" -n k8s.io "$@"; }

# The extra names go again at the end of the phase and when the node starts: the node's containerd
# keeps its images between runs, and with them the runtime reports a v1 container by another of its
# names, which other phases read as a container not yet on its spec image.
inplace_untag() { inplace_ctr images rm $INPLACE_SAME $INPLACE_QUALIFIED >/dev/null 2>&1 || true; }

# The extra names of the v1 image, in the node's containerd: tags, as a registry would list them.
inplace_images() {
  inplace_ctr images tag --force $V1 $INPLACE_SAME >/dev/null &&
    inplace_ctr images tag --force $V1 $INPLACE_QUALIFIED >/dev/null
}

inplace_cloneset() { # name replicas image [lifecycle-json] [extra-labels-json]
  local lifecycle=${4:-null} extra=${5:-'{}'}
  jq -n --arg ns $INPLACE_NS --arg name "$1" --argjson replicas "$2" --argjson main "$(app_container main "$3")" \
    --argjson lifecycle "$lifecycle" --argjson extra "$extra" '{
      apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", metadata: {name: $name, namespace: $ns},
      spec: ({replicas: $replicas, selector: {matchLabels: {app: $name}},
        updateStrategy: {type: "InPlaceOnly", maxUnavailable: 1},
        template: {metadata: {labels: ({app: $name} + $extra)},
          spec: {terminationGracePeriodSeconds: 2, containers: [$main]}}}
        + if $lifecycle == null then {} else {lifecycle: $lifecycle} end)}' | kubectl apply -f - >/dev/null
}

inplace_set_image() { # name image
  kubectl patch cloneset.apps.kruise.io -n $INPLACE_NS "$1" --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$2\"}]" >/dev/null
}

# Every pod of the CloneSet at the update revision, Ready, and the status saying so.
inplace_rolled() { # name replicas
  kubectl get cloneset.apps.kruise.io -n $INPLACE_NS "$1" -o json | jq -e --argjson n "$2" '.status as $s
    | $s.observedGeneration == .metadata.generation and $s.updatedReplicas == $n and $s.updatedReadyReplicas == $n
      and $s.readyReplicas == $n and $s.currentRevision == $s.updateRevision' >/dev/null
}

# An in-place update from one name of an image to another name of the same image finishes: same pods, each container
# restarted exactly once, running the new name in its spec, the imageID unchanged.
inplace_same_image() { # name replicas from to
  local name=$1 replicas=$2 before after t0
  inplace_cloneset "$name" "$replicas" "$3" || return 1
  until_true 120 inplace_rolled "$name" "$replicas" \
    || { kubectl get pods -n $INPLACE_NS -l app="$name" -o wide; return 1; }
  before=$(pod_facts $INPLACE_NS app="$name")
  t0=$SECONDS
  inplace_set_image "$name" "$4" || return 1
  if ! until_true 90 inplace_rolled "$name" "$replicas"; then
    echo "     not finished after 90 s: $(kubectl get cloneset.apps.kruise.io -n $INPLACE_NS "$name" -o json | jq -c .status)"
    kubectl get pods -n $INPLACE_NS -l app="$name" -o json | jq -c '.items[] | {n: .metadata.name,
      state: .metadata.annotations["apps.kruise.io/inplace-update-state"],
      record: .metadata.annotations["kruise-webhook.io/inplace-update-restart-record"],
      status: [.status.containerStatuses[] | {image, imageID, containerID, restartCount}]}'
    return 1
  fi
  after=$(pod_facts $INPLACE_NS app="$name")
  echo "     $3 -> $4: $replicas pods in place in $((SECONDS - t0)) s; runtime reports $(jq -c '[.[].containers.main | {image, restarts, imageID}] | unique' <<<"$after")"
  jq -n -e --argjson b "$before" --argjson a "$after" --arg to "$4" '($b | length) == ($a | length)
    and ([range(0; $a | length) as $i | $a[$i].uid == $b[$i].uid
      and $a[$i].containers.main.restarts == $b[$i].containers.main.restarts + 1
      and $a[$i].containers.main.id != $b[$i].containers.main.id
      and $a[$i].containers.main.imageID == $b[$i].containers.main.imageID] | all)' >/dev/null \
    || { echo "     expected the same pods, one restart each, the same imageID: before $before"; return 1; }
  kubectl get pods -n $INPLACE_NS -l app="$name" -o json \
    | jq -e --arg to "$4" '[.items[].spec.containers[0].image] | all(. == $to)' >/dev/null
}

# --- markPodNotReady -------------------------------------------------------------------------------------------------
DRAIN=drain
drain_pod() { kubectl get pods -n $INPLACE_NS -l app=$DRAIN -o json | jq -c '.items[0]'; }
# Where the Endpoints hold the pod's IP: "ready", "not-ready" or "absent".
drain_endpoint_state() { # ip
  kubectl get endpoints -n $INPLACE_NS $DRAIN -o json | jq -r --arg ip "$1" '[.subsets[]?] as $s
    | if any($s[].addresses[]?; .ip == $ip) then "ready"
      elif any($s[].notReadyAddresses[]?; .ip == $ip) then "not-ready" else "absent" end'
}
drain_endpoint_is() { [ "$(drain_endpoint_state "$1")" = "$2" ]; } # ip state
drain_condition() { jq -r '[.status.conditions[]? | select(.type == "KruisePodReady") | .status][0] // "none"' <<<"$1"; }

drain_released() { # ip: the pod runs v2 and is back in the addresses
  [ "$(drain_pod | jq -r '.spec.containers[0].image')" = $V2 ] && drain_endpoint_is "$1" ready
}

mark_pod_not_ready() {
  local pod ip uid t0
  inplace_cloneset $DRAIN 1 $V1 '{"inPlaceUpdate": {"labelsHandler": {"hold": "true"}, "markPodNotReady": true}}' \
    '{"hold": "true"}' || return 1
  kubectl create service clusterip -n $INPLACE_NS $DRAIN --tcp=80:8080 >/dev/null || return 1
  until_true 120 inplace_rolled $DRAIN 1 || { kubectl get pods -n $INPLACE_NS -l app=$DRAIN -o wide; return 1; }
  pod=$(drain_pod)
  ip=$(jq -r .status.podIP <<<"$pod") uid=$(jq -r .metadata.uid <<<"$pod")
  jq -e '.spec.readinessGates // [] | any(.conditionType == "KruisePodReady")' <<<"$pod" >/dev/null \
    || { echo "     the pod has no KruisePodReady gate: $(jq -c .spec.readinessGates <<<"$pod")"; return 1; }
  [ "$(drain_condition "$pod")" = True ] || { echo "     KruisePodReady is $(drain_condition "$pod")"; return 1; }
  until_true 30 drain_endpoint_is "$ip" ready \
    || { echo "     $ip not in the Endpoints' addresses: $(kubectl get endpoints -n $INPLACE_NS $DRAIN -o json | jq -c .subsets)"; return 1; }
  echo "     pod $ip gated, KruisePodReady True, in the Endpoints' addresses"

  t0=$SECONDS
  inplace_set_image $DRAIN $V2 || return 1
  # Drained while held: PreparingUpdate, the condition False with the lifecycle's key, not Ready, out of the addresses,
  # and still on v1.
  until_true 60 drain_endpoint_is "$ip" not-ready \
    || { echo "     the Endpoints keep $ip: $(kubectl get endpoints -n $INPLACE_NS $DRAIN -o json | jq -c .subsets)"; drain_pod | jq -c '{l: .metadata.labels, c: .status.conditions}'; return 1; }
  pod=$(drain_pod)
  echo "     $((SECONDS - t0)) s after the template change: lifecycle $(jq -r '.metadata.labels["lifecycle.apps.kruise.io/state"]' <<<"$pod"), KruisePodReady $(jq -c '[.status.conditions[] | select(.type == "KruisePodReady") | {status, message}][0]' <<<"$pod"), Endpoints: not ready"
  jq -e --arg v1 $V1 '.metadata.labels["lifecycle.apps.kruise.io/state"] == "PreparingUpdate"
    and .spec.containers[0].image == $v1 and ([.status.containerStatuses[] | .restartCount] | all(. == 0))
    and (.status.conditions | any(.type == "KruisePodReady" and .status == "False"
      and .message == "[{\"userAgent\":\"Lifecycle\",\"key\":\"preUpdateHook\"}]"))
    and (.status.conditions | any(.type == "Ready" and .status == "False"))' <<<"$pod" >/dev/null \
    || { echo "     expected PreparingUpdate, v1, KruisePodReady False with preUpdateHook, not Ready: $(jq -c '{l: .metadata.labels, c: .status.conditions}' <<<"$pod")"; return 1; }
  sleep 3
  [ "$(jq -r '.spec.containers[0].image' <<<"$(drain_pod)")" = $V1 ] || { echo "     updated while held"; return 1; }

  # Released: updated in place, then back in service.
  kubectl label pod -n $INPLACE_NS "$(jq -r .metadata.name <<<"$pod")" hold- >/dev/null || return 1
  until_true 90 drain_released "$ip" \
    || { echo "     not back: $(drain_pod | jq -c '{l: .metadata.labels, c: .status.conditions, s: [.status.containerStatuses[] | {image, ready}]}')"; return 1; }
  pod=$(drain_pod)
  echo "     released: updated in place to v2, back in the Endpoints' addresses $((SECONDS - t0)) s after the change"
  jq -e --arg uid "$uid" --arg v2 $V2 '.metadata.uid == $uid and .status.containerStatuses[0].image == $v2
    and .status.containerStatuses[0].restartCount == 1
    and (.status.conditions | any(.type == "KruisePodReady" and .status == "True"))' <<<"$pod" >/dev/null
}

phase_j() {
  new_namespace $INPLACE_NS || return 1
  check "j. two more names of the v1 image in the node's containerd" inplace_images
  check "j. in place from $V1 to $INPLACE_SAME (same digest), 2 pods: each restarted once, the rollout finishes" \
    inplace_same_image same 2 $V1 $INPLACE_SAME
  check "j. in place from $INPLACE_QUALIFIED to $INPLACE_SHORT (one image): restarted once, finished" \
    inplace_same_image short 1 $INPLACE_QUALIFIED $INPLACE_SHORT
  check "j. markPodNotReady: the pod leaves the Service's Endpoints before its image is patched and comes back after" \
    mark_pod_not_ready
  kubectl delete namespace $INPLACE_NS --wait=false >/dev/null 2>&1 || true
  inplace_untag
}
