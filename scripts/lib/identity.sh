# The identities of deploy/, for the e2e scripts that source this file: every process they start runs
# as the ServiceAccount the install gives it, with exactly the RBAC of deploy/ applied, on a token of
# the TokenRequest API (the harness's apiserver signs them: --service-account-signing-key-file), in a
# kubeconfig of its own. The admin kubeconfig stays the scripts' own (they play kubelet and user).
# Then `identity_refusals` proves that nothing those identities asked for was refused.
#
# Needs KUBECONFIG (admin) and the repository as the working directory.

# identity_apply FILE...: the namespace of deploy/ and the given RBAC files, as they are.
identity_apply() {
  local file args=(-f deploy/namespace.yaml)
  for file in "$@"; do args+=(-f "$file"); done
  kubectl apply "${args[@]}" >/dev/null
}

# identity_kubeconfig SERVICEACCOUNT OUT: a kubeconfig for the cluster of KUBECONFIG that
# authenticates as kruise-system/SERVICEACCOUNT with a token from the TokenRequest API (4 hours).
identity_kubeconfig() {
  local sa=$1 out=$2 token
  token=$(kubectl create --raw "/api/v1/namespaces/kruise-system/serviceaccounts/$sa/token" -f - <<<'{
      "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 14400}}' \
    | jq -r '.status.token // empty') || return 1
  [ -n "$token" ] || { echo "no token for kruise-system/$sa" >&2; return 1; }
  kubectl config view --raw --flatten --minify -o json \
    | jq --arg t "$token" --arg u "kruise-system:$sa" \
      '.users = [{name: $u, user: {token: $t}}] | .contexts[0].context.user = $u' > "$out"
  # Authenticated: discovery is open to every authenticated user.
  KUBECONFIG=$out kubectl get --raw /api >/dev/null
}

# identity_lease_role NAMESPACE: the Roles deploy/rbac.yaml grants in the manager's namespace (the
# Lease; the watch of the SidecarSet revision history) and their bindings, copied into NAMESPACE,
# which a test gives its processes as theirs so that tests do not share one Lease. The Roles' rules
# are deploy/'s; only their namespace differs.
identity_lease_role() {
  kubectl create --dry-run=client -o json -f deploy/rbac.yaml \
    | jq --arg ns "$1" '[if .kind == "List" then .items[] else . end
        | select((.kind == "Role" or .kind == "RoleBinding") and .metadata.namespace == "kruise-system")
        | .metadata.namespace = $ns]
        | {apiVersion: "v1", kind: "List", items: .}' \
    | kubectl apply -f - >/dev/null
}

# The apiserver's audit log (scripts/kube-local/start.sh records the requests of kruise-system's
# ServiceAccounts), when the cluster is the harness's.
identity_audit_log() {
  local log=${E2E_AUDIT_LOG:-${KUBE_LOCAL:-}/logs/audit.log}
  [ -f "$log" ] && echo "$log"
}
# identity_mark: where the audit log ends now (its line count), to look at what follows only.
identity_mark() {
  local log
  if log=$(identity_audit_log); then wc -l < "$log"; else echo 0; fi
}

# identity_refusals MARK LOG... [-- NAMESPACE...]: every sign that a request of the identities above
# was refused since MARK, printed, and a failure when there is one:
# - the audit log: requests of kruise-system's ServiceAccounts the authorizer refused (when the log
#   exists; the count of the requests seen is printed, so that an empty log cannot pass silently).
#   Other 403s (a write into a namespace being deleted, a webhook's refusal) are not the identity's;
# - the processes' logs (LOG...): an RBAC refusal's words;
# - Warning events in NAMESPACE... whose message is an RBAC refusal (a controller reporting a write
#   it was not allowed to make).
#
# A kube-apiserver that has just started authorizes with RBAC caches still empty and forbids what
# the roles allow until they fill (a second or two). A script that restarts the apiserver records
# each such span in IDENTITY_WARMUP (a file of "START_MS END_MS" lines); refusals inside one are
# the apiserver's, not the identity's, and are counted apart.
identity_refusals() {
  local mark=$1 log found=0 audit seen refused
  shift
  local logs=() namespaces=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do logs+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift && namespaces=("$@")
  if audit=$(identity_audit_log); then
    seen=$(tail -n +"$((mark + 1))" "$audit" | grep -c '"stage":"ResponseComplete"' || true)
    refused=$(tail -n +"$((mark + 1))" "$audit" | jq -c 'select(.stage == "ResponseComplete"
        and .annotations["authorization.k8s.io/decision"] == "forbid")' | outside_warmup requestReceivedTimestamp \
      | jq -r '.
      | "\(.user.username) \(.verb) \(.objectRef.apiGroup // "")/\(.objectRef.resource // .requestURI)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end) \(.objectRef.namespace // "")"' \
      | sort | uniq -c)
    echo "     audit: $seen requests of kruise-system's ServiceAccounts answered"
    if [ -n "$refused" ]; then echo "     refused (audit):"; sed 's/^/       /' <<<"$refused"; found=1; fi
  fi
  for log in "${logs[@]}"; do
    [ -f "$log" ] || continue
    refused=$(grep -E 'is forbidden: User|cannot (get|list|watch|create|update|patch|delete|deletecollection) resource' "$log" \
      | outside_warmup || true)
    if [ -n "$refused" ]; then
      echo "     refused ($(basename "$log")):"
      head -5 <<<"$refused" | cut -c1-400 | sed 's/^/       /'
      found=1
    fi
  done
  for ns in "${namespaces[@]}"; do
    refused=$(kubectl get events -n "$ns" -o json 2>/dev/null | jq -r '.items[] | select(.type == "Warning"
      and (.message // "" | test("is forbidden: User|cannot [a-z]+ resource"))) | "\(.reason): \(.message)"' | head -5)
    if [ -n "$refused" ]; then echo "     refused (Warning events in $ns):"; sed 's/^/       /' <<<"$refused"; found=1; fi
  done
  [ "$found" = 0 ]
}

# outside_warmup [FIELD]: the lines of standard input (log lines that start with an RFC 3339 time,
# or with FIELD: JSON objects holding one) not inside a span of IDENTITY_WARMUP; says how many
# were, on standard error.
outside_warmup() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/outside_warmup.py" "${IDENTITY_WARMUP:-}" "${1:-}"
}

# identity_warmup_since START_MS: records in IDENTITY_WARMUP the warm-up span of an apiserver started
# at START_MS (epoch milliseconds) and ready now: until 10 s from now.
identity_warmup_since() {
  echo "$1 $(($(date +%s%3N) + 10000))" >>"$IDENTITY_WARMUP"
}
