# i. SidecarSet hot upgrade on the real node (sourced by scripts/e2e-node.sh, which provides check, until_true,
# new_namespace, app_container, pod_json, pods_ready, catalogue_has, sidecarset_json, $work, $KUBE_NODE, $V1, $V2).
#
# Two pods, one HotUpgrade sidecar (maxUnavailable 1): injected as sidecar-1 (v1, working) and sidecar-2 (the empty
# image). Its image goes v1 -> v2 -> v3 back to back: each time the idle copy gets the new image and becomes the working
# one (kruise.io/sidecarset-working-hotupgrade-container), the copy that worked goes back to the empty image, a copy on
# a real image is ready in every pod change watched, and the app container is never restarted. Then an image that
# cannot be pulled: the first pod's idle copy fails to start, the copy that worked keeps running, the second pod is
# never upgraded and the SidecarSet's status says the rollout stopped (updatedPods 1, readyPods 1, no updatedReadyPods).

HOT_NS=e2e-node-hot-upgrade
HOT_EMPTY=localhost/kube-node/app:empty
HOT_V3=localhost/kube-node/app:v3
HOT_ABSENT=localhost/kube-node/app:absent # never built: its pull fails

# The empty image and v3 exist only for this phase: assembled and imported into the running node's containerd.
hot_images() {
  local tag
  for tag in empty v3; do
    scripts/kube-node/mkimage.sh app $tag "$work/hot-images" >/dev/null || return 1
    ctr --address "$KUBE_NODE/run/containerd.sock" -n k8s.io images import "$work/hot-images/app-$tag.tar" >/dev/null \
      || return 1
  done
}

# One line per pod: the working copy, the version annotations, and per container: spec image, containerID, status
# image, ready, restarts, waiting reason.
hot_pods() {
  kubectl get pods -n $HOT_NS -l app=hot -o json | jq -c '[.items[] | .metadata.annotations as $a | {name: .metadata.name,
    uid: .metadata.uid, ready: (.status.conditions // [] | any(.type == "Ready" and .status == "True")),
    working: ($a["kruise.io/sidecarset-working-hotupgrade-container"] // "{}" | fromjson | .sidecar),
    version: ([$a | to_entries[] | select(.key | startswith("version.sidecarset.kruise.io/")) | {(.key | ltrimstr("version.sidecarset.kruise.io/")): .value}] | add),
    alt: ([$a | to_entries[] | select(.key | startswith("versionalt.sidecarset.kruise.io/")) | {(.key | ltrimstr("versionalt.sidecarset.kruise.io/")): .value}] | add),
    spec: (reduce .spec.containers[] as $c ({}; .[$c.name] = $c.image)),
    status: (reduce .status.containerStatuses[]? as $s ({}; .[$s.name] = {id: $s.containerID, image: $s.image,
      ready: $s.ready, restarts: $s.restartCount, waiting: $s.state.waiting.reason}))}] | sort_by(.name)'
}
# The idle copy of a pod summary: the one not working.
HOT_IDLE='(if .working == "sidecar-1" then "sidecar-2" else "sidecar-1" end)'
# Both pods settled on `image`: its working copy runs it and is ready, the idle copy runs the empty image and is ready.
hot_settled() { # image
  hot_pods | jq -e --arg image "$1" --arg empty $HOT_EMPTY "length == 2 and all(.[]; . as \$p | $HOT_IDLE as \$idle
    | .ready and .spec[.working] == \$image and .status[.working].image == \$image and .status[.working].ready
      and .spec[\$idle] == \$empty and .status[\$idle].image == \$empty and .status[\$idle].ready)" >/dev/null
}
# The fewest copies on a real image and ready, over every pod change a watch delivered: 0 means a moment without a
# working sidecar.
hot_fewest_serving() { # watch-file
  jq -s --arg empty $HOT_EMPTY '[.[] | .object | [.status.containerStatuses[]?
    | select((.name == "sidecar-1" or .name == "sidecar-2") and .ready and .image != $empty)] | length] | min' "$1"
}

hot_upgrade_to() { # image
  local image=$1 before after t0=$SECONDS watch_pid fewest status
  before=$(hot_pods)
  kubectl get pods -n $HOT_NS -l app=hot -w --output-watch-events -o json > "$work/hot-watch.json" 2>/dev/null &
  watch_pid=$!
  kubectl patch sidecarset node-hot --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/containers/0/image\", \"value\": \"$image\"}]" >/dev/null || return 1
  until_true 180 hot_settled "$image" || { kill $watch_pid; echo "     not settled on $image after 180 s: $(hot_pods)"; return 1; }
  until_true 30 bash -c "[ \"\$(kubectl get sidecarset node-hot -o jsonpath='{.status.updatedReadyPods}')\" = 2 ]" \
    || { kill $watch_pid; echo "     status: $(sidecarset_status node-hot)"; return 1; }
  sleep 1 # the last pod changes reach the watch
  kill $watch_pid 2>/dev/null; wait $watch_pid 2>/dev/null
  fewest=$(hot_fewest_serving "$work/hot-watch.json")
  status=$(sidecarset_status node-hot)
  after=$(hot_pods)
  echo "     settled on $image in $((SECONDS - t0)) s; fewest copies serving over $(jq -s length "$work/hot-watch.json") pod changes watched: $fewest; status $status"
  jq -n --argjson b "$before" --argjson a "$after" "[range(0; 2) as \$i | \$b[\$i] as \$x | \$a[\$i] as \$y
    | {pod: \$x.name, same_uid: (\$x.uid == \$y.uid), working: \"\(\$x.working) -> \(\$y.working)\",
       app: {restarts: \$y.status.app.restarts, same_container: (\$x.status.app.id == \$y.status.app.id)},
       new_working_container: (\$x.status[\$y.working].id != \$y.status[\$y.working].id),
       version: \$y.version, alt: \$y.alt}]" > "$work/hot-upgrade.json"
  jq -c '.[]' "$work/hot-upgrade.json" | sed 's/^/     /'
  # The working copy switched, the app container is the same, and the version annotations say, as OpenKruise writes
  # them, that the working copy is the newer one and the idle copy is empty ("0").
  jq -e --argjson a "$after" '[., $a] | transpose | length == 2 and all(.[]; .[0] as $r | .[1] as $p
    | ($p.working == "sidecar-1" or $p.working == "sidecar-2")
    | $r.same_uid and $r.app.restarts == 0 and $r.app.same_container and $r.new_working_container
      and ($r.working | split(" -> ") | .[0] != .[1])
      and (($p.working == "sidecar-1" and $r.version["sidecar-2"] == "0" and $r.alt["sidecar-1"] == "0"
            and $r.version["sidecar-1"] != "0" and $r.alt["sidecar-2"] == $r.version["sidecar-1"])
        or ($p.working == "sidecar-2" and $r.version["sidecar-1"] == "0" and $r.alt["sidecar-2"] == "0"
            and $r.version["sidecar-2"] != "0" and $r.alt["sidecar-1"] == $r.version["sidecar-2"])))' \
    "$work/hot-upgrade.json" >/dev/null || { echo "     expected: working copy switched, app untouched, versions as OpenKruise's"; return 1; }
  [ "$fewest" -ge 1 ] || { echo "     a pod change showed no ready copy on a real image"; return 1; }
  jq -e '.matchedPods == 2 and .updatedPods == 2 and .readyPods == 2 and .updatedReadyPods == 2' <<<"$status" >/dev/null
}

# An image whose pull fails: the first pod chosen gets it in its idle copy (which becomes the working one in the
# annotation, as OpenKruise writes it at the upgrade) and that copy never starts; the copy that worked keeps its
# container and image, the app is untouched, and the rollout stops at that pod.
hot_pull_failing() {
  hot_pods | jq -e --arg bad $HOT_ABSENT 'any(.[]; .spec[.working] == $bad
    and (.status[.working].waiting // "" | test("ErrImagePull|ImagePullBackOff")))' >/dev/null
}
hot_upgrade_fails() {
  local before after t0=$SECONDS stuck status
  before=$(hot_pods)
  kubectl patch sidecarset node-hot --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/containers/0/image\", \"value\": \"$HOT_ABSENT\"}]" >/dev/null || return 1
  until_true 60 hot_pull_failing || { echo "     no pod's new copy failing to pull after 60 s: $(hot_pods)"; return 1; }
  echo "     a pod's new copy failed to pull after $((SECONDS - t0)) s; watching the rollout for 20 s"
  sleep 20 # four of the controller's in-flight requeues (5 s): time for a rollout that would go on to do so
  after=$(hot_pods)
  status=$(sidecarset_status node-hot)
  stuck=$(jq -c --arg bad $HOT_ABSENT '[.[] | select(.spec | any(. == $bad)) | .name]' <<<"$after")
  echo "     pods given $HOT_ABSENT: $stuck; status $status"
  jq -n --argjson b "$before" --argjson a "$after" --arg bad $HOT_ABSENT "[range(0; 2) as \$i
    | \$b[\$i] as \$x | \$a[\$i] as \$y | {pod: \$x.name, upgraded: (\$y.spec | any(. == \$bad)),
      working: \"\(\$x.working) -> \(\$y.working)\", new_copy: \$y.status[\$y.working],
      old_copy: (\$y.status[\$x.working] + {same_container: (\$x.status[\$x.working].id == \$y.status[\$x.working].id),
        spec: \$y.spec[\$x.working]}),
      app: {restarts: \$y.status.app.restarts, same_container: (\$x.status.app.id == \$y.status.app.id)}}]" \
    > "$work/hot-fail.json"
  jq -c '.[]' "$work/hot-fail.json" | sed 's/^/     /'
  jq -e --arg v3 $HOT_V3 '(map(select(.upgraded)) | length) == 1 and all(.[]; .app.restarts == 0 and .app.same_container)
    and all(.[] | select(.upgraded); .old_copy.same_container and .old_copy.spec == $v3 and .old_copy.image == $v3
      and .old_copy.ready and (.new_copy.ready | not))' \
    "$work/hot-fail.json" >/dev/null || { echo "     expected one pod upgraded, its working copy kept on $HOT_V3, apps untouched"; return 1; }
  kubectl get events -n $HOT_NS --field-selector reason=Failed -o json \
    | jq -r '.items[] | "     event \(.involvedObject.name) \(.type) \(.reason): \(.message)"' | head -2
  jq -e '.matchedPods == 2 and .updatedPods == 1 and .readyPods == 1 and (.updatedReadyPods // 0) == 0' <<<"$status" >/dev/null \
    || { echo "     status does not say the rollout stopped"; return 1; }
}

phase_i() {
  hot_images || { echo "     could not build or import $HOT_EMPTY and $HOT_V3"; return 1; }
  new_namespace $HOT_NS || return 1
  local sidecar
  sidecar=$(app_container sidecar $V1 | jq --arg empty $HOT_EMPTY \
    '.upgradeStrategy = {upgradeType: "HotUpgrade", hotUpgradeEmptyImage: $empty}')
  SIDECAR_NS=$HOT_NS sidecarset_json node-hot hot 1 "$sidecar" | kubectl apply -f - >/dev/null || return 1
  catalogue_has 1 || { echo "catalogue does not hold the SidecarSet"; return 1; }
  for i in 0 1; do
    pod_json $HOT_NS hot-$i '{"app": "hot"}' '{}' "$(app_container app $V1)" | kubectl create -f - >/dev/null || return 1
  done
  until_true 120 pods_ready $HOT_NS app=hot 2 || { kubectl get pods -n $HOT_NS; return 1; }
  check "i. HotUpgrade sidecar injected as sidecar-1 (v1, working) and sidecar-2 (the empty image), both running" \
    hot_settled $V1
  check "i. hot upgrade v1 -> v2 over 2 real pods: the idle copy takes v2 and works, the other goes back to the empty image, a copy serving in every pod change, app container never restarted" \
    hot_upgrade_to $V2
  check "i. hot upgrade v2 -> v3 right after: the working copy switches back, the same guarantees" \
    hot_upgrade_to $HOT_V3
  check "i. upgrade to an image that cannot be pulled: the copy that worked keeps running v3, the rollout stops at one pod (status updatedPods 1, readyPods 1)" \
    hot_upgrade_fails
  kubectl delete sidecarset node-hot >/dev/null
}
