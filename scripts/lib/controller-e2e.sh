# Shared by the controller e2e scripts (e2e-cloneset.sh, e2e-statefulset.sh, e2e-daemonset.sh), which
# source it: the apiserver they start when no KUBECONFIG is given, the summary on exit, pass/fail
# bookkeeping, and the scheduler and kubelet they stand in for (there is neither: pods are bound and
# their status written here, terminating pods removed).
#
# The sourcing script sets NS (its namespace), makes it with `e2e_namespace`, starts its controllers
# with `KUBECONFIG=$CTL_KUBECONFIG` and may define `e2e_cleanup`, run on exit against a cluster it did not start
# (after the namespace is deleted).
#
# The controllers run as deploy/'s ServiceAccount kruise-system/kruise-webhook, with the RBAC of
# deploy/rbac.yaml applied (scripts/lib/identity.sh); on exit, any request of theirs that the
# apiserver refused fails the run.

# shellcheck source=scripts/lib/identity.sh
. scripts/lib/identity.sh

# shellcheck source=scripts/lib/conversion.sh
. scripts/lib/conversion.sh

# e2e_begin NAME APISERVER_PORT ETCD_PORT ETCD_PEER_PORT [LOGS_DIR]: the bookkeeping, the binary
# (BIN, built when missing) and the cluster: KUBECONFIG as given, else a kube-apiserver of its own on
# the ports given (the environment's APISERVER_PORT etc. win), stopped on exit; and the CRDs'
# conversion webhook (scripts/lib/conversion.sh: scripts/e2e.sh's, else one of its own on
# APISERVER_PORT + 2, admin + 3, or E2E_CONVERSION_PORT / E2E_CONVERSION_ADMIN_PORT), for
# `apply_crds`. LOGS_DIR keeps the controllers' logs and the recorded watches.
e2e_begin() {
  e2e_name=$1 e2e_logs=${5:-} here=$PWD
  BIN=${BIN:-target/debug/kruise-webhook}
  [ -x "$BIN" ] || cargo build --locked --quiet
  tmp=$(mktemp -d)
  # kubectl's discovery cache of its own (see scripts/e2e.sh).
  export KUBECACHEDIR=${KUBECACHEDIR:-$tmp/kube-cache}
  ctl_pid="" watch_pids="" started_local=0 passed=0 failed=0
  if [ -z "${KUBECONFIG:-}" ]; then
    local shared=$HOME/.cache/kruise-webhook/kube-local
    [ -x "$shared/bin/kube-apiserver" ] || { echo "no kube-apiserver in $shared/bin (scripts/e2e.sh builds it)"; exit 1; }
    export KUBE_LOCAL=$tmp/kube-local KUBE_BIN=$shared/bin
    export APISERVER_PORT=${APISERVER_PORT:-$2} ETCD_PORT=${ETCD_PORT:-$3} ETCD_PEER_PORT=${ETCD_PEER_PORT:-$4}
    FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
    started_local=1
    export KUBECONFIG=$KUBE_LOCAL/kubeconfig
  fi
  export KUBECONFIG
  trap e2e_finish EXIT
  identity_mark=$(identity_mark)
  identity_apply deploy/rbac.yaml
  # The controllers' kubeconfig: deploy/'s ServiceAccount kruise-system/kruise-webhook.
  CTL_KUBECONFIG=$tmp/kruise-webhook.kubeconfig
  identity_kubeconfig kruise-webhook "$CTL_KUBECONFIG"
  conversion_begin "$BIN" "${E2E_CONVERSION_PORT:-$(($2 + 2))}" "${E2E_CONVERSION_ADMIN_PORT:-$(($2 + 3))}" "$tmp/conversion"
}

# e2e_namespace: makes NS, and lets the webhook's identity keep its Lease there (the Role of
# deploy/rbac.yaml, bound in NS: each test has a Lease of its own).
e2e_namespace() {
  kubectl create namespace "$NS" >/dev/null
  identity_lease_role "$NS"
}

# On exit (the end of the last block, or a command that failed under `set -e`): the summary.
e2e_finish() {
  local code=$? log
  [ "$code" = 0 ] || { echo "FAIL script stopped early (exit $code)"; failed=$((failed + 1)); }
  if [ "$failed" -gt 0 ]; then
    for log in "$tmp"/ctl*.log; do [ -f "$log" ] && { echo "--- $(basename "$log") (tail)"; tail -30 "$log"; }; done
  fi
  for p in $ctl_pid $watch_pids; do kill "$p" 2>/dev/null || true; done
  conversion_end
  wait 2>/dev/null || true
  # Every request of the controllers' identity was allowed.
  check "no request of kruise-system/kruise-webhook refused (audit log, controller logs, Warning events)" \
    identity_refusals "${identity_mark:-0}" "$tmp"/ctl*.log -- "$NS"
  if [ "$started_local" = 1 ]; then
    "$here/scripts/kube-local/stop.sh" >/dev/null 2>&1 || true
  else
    kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    if declare -F e2e_cleanup >/dev/null; then e2e_cleanup; fi
  fi
  [ -n "$e2e_logs" ] && { mkdir -p "$e2e_logs"; cp "$tmp"/*.log "$tmp"/*.watch "$e2e_logs"/ 2>/dev/null || true; }
  rm -rf "$tmp"
  echo "$e2e_name: $passed passed, $failed failed (${SECONDS}s)"
  [ "$failed" = 0 ] || exit 1
}

pass() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
# check DESCRIPTION COMMAND...: one check, passed when COMMAND succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

# --- scheduler and kubelet --------------------------------------------------------------------
# One pass over the namespace's pods: a terminating pod is removed (the kubelet's final delete,
# grace period 0); a pod not yet bound is bound to the node its node-name affinity names (a
# DaemonSet's pod), else to node-1; a pod whose status differs from what a kubelet would report
# gets that status (Running; Ready = every readiness gate condition True; imageIDs follow the
# images and an image change raises restartCount and the containerID; each condition's
# lastTransitionTime moves when its status does, so minReadySeconds counts). One jq over the list:
# unchanged pods cost nothing. Pods labelled e2e.kruise.io/kubelet=off are left alone.
kubelet_pass() {
  local name action node patch
  kubectl get pods -n "$NS" -o json | jq -r --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '
    .items[] | select(.metadata.labels["e2e.kruise.io/kubelet"] != "off")
    | if .metadata.deletionTimestamp != null then [.metadata.name, "delete", "", ""] | @tsv else
      ([.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]?
        | .matchFields[]? | select(.key == "metadata.name" and .operator == "In") | .values[0]][0] // "node-1") as $target
    | (.status.containerStatuses // []) as $old
    | [.spec.containers[] | .name as $n | .image as $i
       | ([$old[] | select(.name == $n)][0]) as $o
       | (if $o == null then 0 elif $o.image == $i then $o.restartCount else $o.restartCount + 1 end) as $restarts
       | {name: $n, image: $i, imageID: ("docker-pullable://" + $i), ready: true, started: true,
          restartCount: $restarts, containerID: ("containerd://" + $n + "-" + ($restarts | tostring)),
          state: {running: {startedAt: "2024-01-01T00:00:00Z"}}}] as $cs
    | [(.spec.readinessGates // [])[] | .conditionType] as $gates
    | (.status.conditions // []) as $conds
    | (if all($gates[]; . as $g | any($conds[]; .type == $g and .status == "True")) then "True" else "False" end) as $ready
    | def since($t; $s): ([$conds[] | select(.type == $t and .status == $s) | .lastTransitionTime][0] // $now);
      ([{type: "PodScheduled", status: "True"}, {type: "Initialized", status: "True"},
        {type: "ContainersReady", status: "True"}, {type: "Ready", status: $ready}]
       | map(. + {lastTransitionTime: since(.type; .status)})) as $want
    | def brief: map({name, image, imageID, ready, restartCount}) | sort_by(.name);
      def kinds: map(select(.type | IN("PodScheduled", "Initialized", "ContainersReady", "Ready")) | {type, status}) | sort_by(.type);
    ((.spec.nodeName // "") == "") as $unbound
    | select($unbound or .status.phase != "Running" or ($old | brief) != ($cs | brief) or ($conds | kinds) != ($want | kinds))
    | [.metadata.name, (if $unbound then "bind" else "status" end), $target,
       ({status: {phase: "Running", containerStatuses: $cs, conditions: $want}} | tojson)]
    | @tsv end' | while IFS=$'\t' read -r name action node patch; do
    if [ "$action" = delete ]; then
      kubectl delete pod -n "$NS" "$name" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
      continue
    fi
    if [ "$action" = bind ]; then
      jq -nc --arg p "$name" --arg n "$node" '{apiVersion: "v1", kind: "Binding", metadata: {name: $p}, target: {kind: "Node", name: $n}}' \
        | kubectl create --raw "/api/v1/namespaces/$NS/pods/$name/binding" -f - >/dev/null 2>&1 || true
    fi
    kubectl patch pod -n "$NS" "$name" --subresource=status --type=strategic -p "$patch" >/dev/null 2>&1 || true
  done
}
# until_kubelet SECONDS DESCRIPTION COMMAND...: kubelet passes until COMMAND succeeds; on a
# timeout COMMAND runs once more with its output shown.
until_kubelet() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then fail "$what (timed out)"; "$@" || true; return 0; fi
    kubelet_pass
    sleep 0.3
  done
  pass "$what"
}
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND, no kubelet.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then fail "$what (timed out)"; return 0; fi
    sleep 0.3
  done
  pass "$what"
}

# --- observation ------------------------------------------------------------------------------
event_count() { # OBJECT REASON: occurrences (repeats aggregate into .series.count)
  kubectl get events -n "$NS" -o json \
    | jq --arg o "$1" --arg r "$2" '[.items[] | select(.involvedObject.name == $o and .reason == $r) | .series.count // .count // 1] | add // 0'
}
# The pod versions recorded by a watch into $tmp/APP.watch, in the order the apiserver stored them.
watched() { jq -sc '[.[] | .type as $t | .object + {watchType: $t}]' "$tmp/$1.watch"; }
