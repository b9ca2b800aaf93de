# Pieces shared by the scale scripts (scale-sidecarsets.sh, scale-daemonset-nodes.sh, scale-cluster.sh), which
# source it; the functions read API (the apiserver's URL) and P (its pki directory with ca.crt, admin.crt, admin.key).

# scale_apiserver_start: a fresh kube-apiserver in KUBE_LOCAL (on the environment's ports, no controller-manager);
# sets KUBECONFIG, P and API, and applies the CRDs.
scale_apiserver_start() {
  FRESH=1 WITH_KCM=0 scripts/kube-local/start.sh >/dev/null
  export KUBECONFIG=$KUBE_LOCAL/kubeconfig
  P=$KUBE_LOCAL/pki
  API=https://127.0.0.1:$APISERVER_PORT
  kubectl kustomize deploy/crds/ | kubectl apply -f - >/dev/null
  kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
}
# scale_apiserver_stop WORK: the apiserver stopped; WORK removed unless KEEP=1.
scale_apiserver_stop() {
  scripts/kube-local/stop.sh >/dev/null 2>&1 || true
  if [ "${KEEP:-0}" = 1 ]; then echo "work directory: $1"; else rm -rf "$1"; fi
}

# scale_nodes N DIR: N Nodes shaped like a kubelet's (node-0 … node-N-1; node-0 carries the label
# bench.kruise.io/daemon=yes), created straight through the apiserver by parallel HTTP/2 curl; the bodies and
# the status codes (DIR/codes) in DIR. Each has 8 labels, 4 annotations, a podCIDR and providerID, capacity and
# allocatable, 5 conditions with heartbeats and messages, 3 addresses, nodeInfo, 20 images with digests and tags
# (about 6 KB of JSON, managedFields added by the apiserver). A Node's status may be set on create. Prints the
# number created.
scale_nodes() {
  python3 - "$1" "$2" "$API" "$P" <<'PY'
import json, os, sys
n, out, api, pki = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.makedirs(out)
beat = "2026-11-27T12:00:00Z"
def digest(i, j):
    return ("%064x" % (i * 1000003 + j * 7919))[-64:]
images = lambda i: [{"names": [f"registry.example.com/team-{j}/service-{j}@sha256:{digest(i % 7, j)}",
                               f"registry.example.com/team-{j}/service-{j}:v1.{j}.{i % 3}"],
                     "sizeBytes": 10_000_000 + j * 1_234_567} for j in range(20)]
condition = lambda t, s, reason, message: {"type": t, "status": s, "lastHeartbeatTime": beat,
    "lastTransitionTime": "2026-11-20T08:00:00Z", "reason": reason, "message": message}
with open(os.path.join(out, "curl.conf"), "w") as conf:
    for i in range(n):
        name = f"node-{i}"
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
                  "node.kubernetes.io/instance-type": "m5.2xlarge",
                  "topology.kubernetes.io/zone": f"zone-{i % 3}", "topology.kubernetes.io/region": "region-1"}
        if i == 0:
            labels["bench.kruise.io/daemon"] = "yes"
        resources = {"cpu": "8", "memory": "32481628Ki", "pods": "110", "ephemeral-storage": "101430960Ki",
                     "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
        node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": f"i-{i:017x}"}),
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock"}},
            "spec": {"podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24", "podCIDRs": [f"10.{i // 256 % 256}.{i % 256}.0/24"],
                     "providerID": f"aws:///zone-{i % 3}/i-{i:017x}"},
            "status": {"capacity": resources, "allocatable": dict(resources, cpu="7910m", memory="31330652Ki"),
                "conditions": [
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    condition("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
                    condition("Ready", "True", "KubeletReady", "kubelet is posting ready status. AppArmor enabled")],
                "addresses": [{"type": "InternalIP", "address": f"172.20.{i // 256 % 256}.{i % 256}"},
                              {"type": "Hostname", "address": name},
                              {"type": "InternalDNS", "address": f"ip-172-20-{i // 256 % 256}-{i % 256}.internal"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {"machineID": f"{i:032x}", "systemUUID": f"ec2{i:029x}", "bootID": f"{i * 31:032x}",
                    "kernelVersion": "5.10.0-28-cloud-amd64", "osImage": "Debian GNU/Linux 11 (bullseye)",
                    "containerRuntimeVersion": "containerd://1.6.20", "kubeletVersion": "v1.20.2",
                    "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64"},
                "images": images(i)}}
        body = os.path.join(out, f"{i}.json")
        with open(body, "w") as f:
            json.dump(node, f)
        if i:
            conf.write("next\n")
        conf.write(f'url = "{api}/api/v1/nodes"\ncacert = "{pki}/ca.crt"\ncert = "{pki}/admin.crt"\n'
                   f'key = "{pki}/admin.key"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\n'
                   f'write-out = "%{{http_code}}\\n"\ndata-binary = "@{body}"\n')
PY
  # the status codes alone on stdout: curl's parallel progress meter goes to stderr, even with -s
  curl -sS --parallel --parallel-max 16 --http2 -K "$2/curl.conf" > "$2/codes" 2> "$2/curl.err" || true
  grep -c '^201$' "$2/codes" || true
}

# scale_sidecarsets N PARALLEL DIR: N SidecarSets scale-0 … scale-N-1 through the apiserver, PARALLEL curl processes
# each multiplexing its share over HTTP/2. Each set selects its own app label (scale-i, which no pod carries), all
# inject a container of the same name (the conflict check's worst case for a name index: every set shares it).
# Status codes in DIR/create-*.codes.
scale_sidecarsets() {
  local part
  for part in $(seq 0 $(($2 - 1))); do
    awk -v n="$1" -v parts="$2" -v part="$part" -v api="$API" -v p="$P" 'BEGIN {
      for (i = part; i < n; i += parts) {
        printf "url = \"%s/apis/apps.kruise.io/v1beta1/sidecarsets\"\n", api
        printf "cacert = \"%s/ca.crt\"\ncert = \"%s/admin.crt\"\nkey = \"%s/admin.key\"\n", p, p, p
        printf "header = \"Content-Type: application/json\"\noutput = \"/dev/null\"\nwrite-out = \"%%{http_code}\\n\"\n"
        printf "data-binary = \"{\\\"apiVersion\\\":\\\"apps.kruise.io/v1beta1\\\",\\\"kind\\\":\\\"SidecarSet\\\",\\\"metadata\\\":{\\\"name\\\":\\\"scale-%d\\\"},\\\"spec\\\":{\\\"selector\\\":{\\\"matchLabels\\\":{\\\"app\\\":\\\"scale-%d\\\"}},\\\"containers\\\":[{\\\"name\\\":\\\"sidecar\\\",\\\"image\\\":\\\"busybox:1.36\\\"}]}}\"\n", i, i
        if (i + parts < n) print "next"
      }
    }' > "$3/create-$part.conf"
    curl -sS --parallel --parallel-max 16 --http2 -K "$3/create-$part.conf" > "$3/create-$part.codes" 2>&1 &
  done
  wait
}

# mutate_pod_latency REQUESTS PORT CA DIR: REQUESTS AdmissionReviews of a pod no SidecarSet matches sent to
# https://127.0.0.1:PORT/mutate-pod on one keep-alive connection; the milliseconds of each answered 200 (curl's
# time_total - time_pretransfer), sorted, in DIR/admission.ms. Prints "ANSWERED p50 p99".
mutate_pod_latency() {
  local i
  jq -c '.request.object.metadata.labels = {"app": "nothing-matches"}' tests/fixtures/pod-web-log-agent.json \
    > "$4/review.json"
  {
    for i in $(seq 1 "$1"); do
      printf 'url = "https://127.0.0.1:%s/mutate-pod"\noutput = "/dev/null"\n' "$2"
      printf 'cacert = "%s"\n' "$3"
      printf 'max-time = 10\nwrite-out = "%%{http_code} %%{time_pretransfer} %%{time_total}\\n"\n'
      printf 'header = "Content-Type: application/json"\ndata-binary = "@%s/review.json"\n' "$4"
      [ "$i" -lt "$1" ] && echo next
    done
  } > "$4/admission.conf"
  curl -sS -K "$4/admission.conf" 2>/dev/null \
    | awk '$1 == 200 {printf "%.3f\n", ($3 - $2) * 1000}' | sort -n > "$4/admission.ms" || true
  awk '{a[NR] = $1} END {
    q = 0.5; i = int(NR * q); if (i < 1) i = 1; p50 = NR ? a[i] : "-"
    q = 0.99; i = int(NR * q); if (i < 1) i = 1; p99 = NR ? a[i] : "-"
    print NR, p50, p99 }' "$4/admission.ms"
}

# scale_sampler PID APISERVER_PID NS: every second while PID lives, one line "TIME FDS RSS_KIB APISERVER_RSS_KIB
# RENEW_TIME CPU_S APISERVER_CPU_S": PID's open files and VmRSS, the apiserver's VmRSS, the renewTime (epoch
# seconds, "-" when none) of the Lease NS/kruise-webhook-controller, and the CPU seconds (user + system) of both.
scale_sampler() {
  local fds rss api_rss renew renew_s cpu api_cpu hz
  hz=$(getconf CLK_TCK)
  while kill -0 "$1" 2>/dev/null; do
    fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
    api_rss=$(awk '/VmRSS/ {print $2}' "/proc/$2/status" 2>/dev/null || echo 0)
    renew=$(curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" \
        "$API/apis/coordination.k8s.io/v1/namespaces/$3/leases/kruise-webhook-controller" 2>/dev/null \
      | jq -r '.spec.renewTime // ""' 2>/dev/null || true)
    renew_s=$([ -n "$renew" ] && date -d "$renew" +%s.%N 2>/dev/null || echo "")
    cpu=$(awk -v hz="$hz" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0)
    api_cpu=$(awk -v hz="$hz" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$2/stat" 2>/dev/null || echo 0)
    echo "$(date +%s.%N) $fds $rss $api_rss ${renew_s:--} $cpu $api_cpu"
    sleep 1
  done
}

# Whether every SidecarSet's status is current (status.observedGeneration == metadata.generation), followed from
# one list and a watch: listing 50,000 sets every few seconds instead costs the apiserver more CPU than the status
# writes it would measure.
# scale_status_watch LISTED DIR: from LISTED (a file holding the apiserver's list of every SidecarSet), the names
# of the current ones in DIR/current and the number of sets in DIR/total; then, in the background, a watch from
# that list's resourceVersion appends the name of each set whose status becomes current. SCALE_STATUS_WATCH holds
# the watch's pid until scale_statuses_current ends it.
scale_status_watch() {
  local rv
  jq '.items | length' "$1" > "$2/total"
  jq -r '.items[] | select(.status.observedGeneration == .metadata.generation) | .metadata.name' "$1" > "$2/current"
  rv=$(jq -r '.metadata.resourceVersion' "$1")
  (
    curl -fsS -N --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" \
        "$API/apis/apps.kruise.io/v1beta1/sidecarsets?watch=1&resourceVersion=$rv&timeoutSeconds=3600" 2>/dev/null \
      | jq --unbuffered -r 'select(.type == "MODIFIED") | .object
          | select(.status.observedGeneration == .metadata.generation) | .metadata.name' >> "$2/current"
  ) 2>/dev/null &
  SCALE_STATUS_WATCH=$!
}
# scale_status_watch_stop: the watch scale_status_watch started ended (nothing when none runs).
scale_status_watch_stop() {
  [ -n "${SCALE_STATUS_WATCH:-}" ] || return 0
  pkill -P "$SCALE_STATUS_WATCH" 2>/dev/null || true
  wait "$SCALE_STATUS_WATCH" 2>/dev/null || true
  SCALE_STATUS_WATCH=
}
# scale_statuses_current DIR SECS PID: waits until the watch of scale_status_watch has seen every set of DIR/total
# current, at most SECS and while PID lives; ends the watch, then one list confirms. Prints "CURRENT TOTAL AT":
# the sets current (by the list when the watch saw all, else by the watch), the sets listed at the start, and the
# time (epoch seconds) the watch saw the last one, "-" when it did not.
scale_statuses_current() {
  local total current at=- deadline=$(( $(date +%s) + $2 ))
  total=$(cat "$1/total")
  while :; do
    current=$(sort -u "$1/current" | wc -l)
    [ "$current" -ge "$total" ] && { at=$(date +%s.%N); break; }
    [ "$(date +%s)" -ge "$deadline" ] && break
    kill -0 "$3" 2>/dev/null || break
    sleep 1
  done
  scale_status_watch_stop
  if [ "$at" != - ]; then
    current=$(curl -fsS --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" \
        "$API/apis/apps.kruise.io/v1beta1/sidecarsets?resourceVersion=0" \
      | jq '[.items[] | select(.status.observedGeneration == .metadata.generation)] | length')
    [ "$current" -ge "$total" ] || at=-
  fi
  echo "$current $total $at"
}
