# SidecarSet revision history against the real apiserver, sourced by scripts/e2e.sh (which
# provides kubectl's KUBECONFIG, `check`, `metric_line` and a running `serve --kubeconfig` whose
# SidecarSet controller keeps the history). One set, e2e-history, selecting app=history pods in
# e2e-other; its revisions live in kruise-system, as OpenKruise keeps them. Each function is one
# check; they run in order and build on each other.

HISTORY_SET=e2e-history
HISTORY_NS=kruise-system
HISTORY_LABEL=kruise.io/sidecarset-name=$HISTORY_SET

history_apply() { # image [extra spec lines, YAML at 2 spaces]
  kubectl apply -f - >/dev/null <<EOT
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata:
  name: $HISTORY_SET
spec:
  selector: {matchLabels: {app: history}}
  revisionHistoryLimit: 2
  # The pods keep the revision they were created with: the history is what this checks.
  updateStrategy: {type: NotUpdate}
  containers:
    - name: history-agent
      image: $1
${2:-}
EOT
}

history_latest() { kubectl get sidecarset "$HISTORY_SET" -o jsonpath='{.status.latestRevision}'; }

# The revisions of the set, oldest first by `.revision`: "name revision image" per line.
history_revisions() {
  kubectl get controllerrevisions -n "$HISTORY_NS" -l "$HISTORY_LABEL" -o json \
    | jq -r '.items | sort_by(.revision)[] | "\(.metadata.name) \(.revision) \(.data.spec.containers[0].image)"'
}

# Waits until status.latestRevision names a revision holding `image`; prints its name.
history_wait_latest() { # image
  local latest
  for _ in $(seq 1 75); do
    latest=$(history_latest)
    if [ -n "$latest" ] && history_revisions | grep -q "^$latest [0-9]* $1\$"; then
      echo "$latest"; return 0
    fi
    sleep 0.2
  done
  echo "no latest revision with $1; latest '$(history_latest)'; history:" >&2; history_revisions >&2
  return 1
}

# Creates an app=history pod; prints "image-of-the-sidecar controllerRevision-of-its-stamp".
history_pod() { # name
  kubectl create -f - -o json <<EOT | jq -r --arg set "$HISTORY_SET" '
    ([.spec.containers[] | select(.name == "history-agent") | .image][0] // "none") + " " +
    ((.metadata.annotations["kruise.io/sidecarset-hash"] // "{}" | fromjson)[$set].controllerRevision // "none")'
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$1", "namespace": "e2e-other", "labels": {"app": "history"}},
 "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}
EOT
}

# The first spec and a change: two revisions, owned by the set, named <set>-<hash>, labelled;
# the latest in status; a new pod runs and is stamped with it.
history_written() {
  history_apply busybox:1.35 || return 1
  HISTORY_R1=$(history_wait_latest busybox:1.35) || return 1
  history_apply busybox:1.36 || return 1
  HISTORY_R2=$(history_wait_latest busybox:1.36) || return 1
  kubectl get controllerrevision -n "$HISTORY_NS" "$HISTORY_R1" -o json | jq -e --arg set "$HISTORY_SET" '
    (.metadata.name | startswith($set + "-")) and
    (.metadata.ownerReferences[0] | .kind == "SidecarSet" and .name == $set and .controller == true) and
    (.metadata.labels["kruise.io/sidecarset-name"] == $set) and
    (.metadata.annotations["kruise.io/sidecarset-hash"] | length == 64) and
    (.data.spec["$patch"] == "replace")' >/dev/null || { echo "revision $HISTORY_R1 is not OpenKruise's shape"; return 1; }
  local got
  got=$(history_pod history-latest) || return 1
  [ "$got" = "busybox:1.36 $HISTORY_R2" ] || { echo "new pod: $got, wanted busybox:1.36 $HISTORY_R2"; return 1; }
}

# injectionStrategy.revision.revisionName: a new pod gets the named revision's sidecar and stamp
# while the set's own image moves on.
history_revision_name_injected() {
  # The validating webhook checks the name against the history it watches; after the apiserver's
  # restart above that watch may still be reconnecting (with backoff, at most 30 s).
  for _ in $(seq 1 40); do
    history_apply busybox:1.37 "  injectionStrategy: {revision: {revisionName: $HISTORY_R1, policy: Always}}" 2>/dev/null \
      && break
    sleep 1
  done
  HISTORY_R3=$(history_wait_latest busybox:1.37) || return 1
  local got
  got=$(history_pod history-pinned) || return 1
  [ "$got" = "busybox:1.35 $HISTORY_R1" ] || { echo "pinned pod: $got, wanted busybox:1.35 $HISTORY_R1"; return 1; }
}

# Back to the first spec: its revision is reused under a higher number (no new one), and the
# history is cut to revisionHistoryLimit 2 except what a pod still runs: R3 (no pod) goes,
# R2 (history-latest runs it) stays.
history_rollback_and_truncation() {
  history_apply busybox:1.35 || return 1
  local latest names
  latest=$(history_wait_latest busybox:1.35) || return 1
  [ "$latest" = "$HISTORY_R1" ] || { echo "rollback made $latest, not $HISTORY_R1"; return 1; }
  for _ in $(seq 1 75); do
    names=$(history_revisions | awk '{print $1}' | tr '\n' ' ')
    [ "$names" = "$HISTORY_R2 $HISTORY_R1 " ] && return 0
    sleep 0.2
  done
  echo "history after rollback: $names (wanted $HISTORY_R2 $HISTORY_R1, R3 $HISTORY_R3 gone); pods:"
  kubectl get pods -n e2e-other -l app=history -o json | jq -c '.items[] | [.metadata.name,
    .metadata.annotations["kruise.io/sidecarset-hash"], .metadata.annotations["kruise.io/sidecarset-injected-list"]]'
  return 1
}

# spec.customVersion labels its revision; injectionStrategy.revision.customVersion injects the
# newest revision with that label.
history_custom_version_injected() {
  history_apply busybox:1.34 "  customVersion: stable" || return 1
  HISTORY_STABLE=$(history_wait_latest busybox:1.34) || return 1
  kubectl get controllerrevision -n "$HISTORY_NS" "$HISTORY_STABLE" -o json \
    | jq -e '.metadata.labels["apps.kruise.io/sidecarset-custom-version"] == "stable"' >/dev/null \
    || { echo "$HISTORY_STABLE has no custom-version label"; return 1; }
  history_apply busybox:1.33 "  customVersion: canary
  injectionStrategy: {revision: {customVersion: stable, policy: Always}}" || return 1
  history_wait_latest busybox:1.33 >/dev/null || return 1
  local got
  got=$(history_pod history-stable) || return 1
  [ "$got" = "busybox:1.34 $HISTORY_STABLE" ] || { echo "stable pod: $got, wanted busybox:1.34 $HISTORY_STABLE"; return 1; }
}

# The revision a set injects by customVersion is gone: new pods are refused with OpenKruise's
# message, and the set shows it where an operator looks (condition, Warning event, metric), not only in a log.
history_missing_revision_reported() {
  kubectl delete controllerrevision -n "$HISTORY_NS" "$HISTORY_STABLE" >/dev/null || return 1
  local out ok=""
  for _ in $(seq 1 50); do
    if ! out=$(history_pod history-refused 2>&1); then
      # OpenKruise's lookup by custom version names the set, not a revision.
      [[ "$out" == *"ControllerRevision.apps \"$HISTORY_SET\" not found"* ]] && { ok=1; break; }
    else
      kubectl delete pod -n e2e-other history-refused --wait=false >/dev/null 2>&1
    fi
    sleep 0.2
  done
  [ -n "$ok" ] || { echo "pod not refused as OpenKruise refuses it: $out"; return 1; }
  history_eventually history_has_condition || { echo "no InjectionFailure condition"; return 1; }
  history_eventually history_has_event || {
    echo "no RevisionNotFound event; events about the set:"
    kubectl get events -A -o json | jq -c --arg set "$HISTORY_SET" \
      '.items[] | select(.involvedObject.name == $set) | [.metadata.namespace, .type, .reason, .message]'
    return 1
  }
  history_eventually metric_line 'kruise_webhook_sidecarsets_not_served{reason="revision"} 1' \
    || { echo "metric not 1"; return 1; }
}

history_eventually() { # command...: true within 15 s
  for _ in $(seq 1 75); do "$@" && return 0; sleep 0.2; done
  return 1
}
history_has_condition() {
  kubectl get sidecarset "$HISTORY_SET" -o json | jq -e '.status.conditions // [] |
    any(.type == "InjectionFailure" and .status == "True" and .reason == "RevisionNotFound")' >/dev/null
}
history_has_event() {
  kubectl get events -n default -o json | jq -e --arg set "$HISTORY_SET" '.items |
    any(.type == "Warning" and .reason == "RevisionNotFound" and .involvedObject.name == $set)' >/dev/null
}

history_cleanup() {
  kubectl delete sidecarset "$HISTORY_SET" --ignore-not-found >/dev/null
  kubectl delete pod -n e2e-other -l app=history --wait=false >/dev/null 2>&1
  # No garbage collector on this harness: the owned revisions go by hand.
  kubectl delete controllerrevisions -n "$HISTORY_NS" -l "$HISTORY_LABEL" >/dev/null 2>&1
  return 0
}
