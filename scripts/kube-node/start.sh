#!/bin/bash
# Start a one-node local cluster: etcd + kube-apiserver (Node,RBAC) + kube-controller-manager + kube-scheduler +
# containerd (own root/state/socket) + kubelet (CRI remote, cgroupfs, bridge CNI); waits for the Node to be Ready and
# untainted, then runs a warm-up pod to completion (WARMUP=0 skips it).
# Pods can talk to the apiserver the in-cluster way: the ServiceAccount admission plugin and the token controller give
# them a token volume, and one iptables DNAT rule sends the kubernetes Service (10.0.0.1:443) from the pod network to
# the apiserver (no kube-proxy, no DNS). The apiserver resolves webhook Services to their endpoints
# (--enable-aggregator-routing), so webhooks registered by Service reach pods.
# Usage: start.sh   (refuses if already running; stop.sh first, which also undoes what this changed on the host)
# Env: KUBE_NODE (~/.cache/kruise-webhook/kube-node)  KUBE_LOCAL (~/.cache/kruise-webhook/kube-local, for bin/)
#      NODE_NAME (kube-node)
#      APISERVER_PORT (26443) ETCD_PORT (22379) ETCD_PEER_PORT (22380) KUBELET_PORT (20250) KUBELET_HEALTHZ_PORT (20248)
#      KCM_PORT (20257) SCHED_PORT (20259) POD_CIDR (10.247.77.0/24) CNI_BRIDGE (kn-br0)
#      WITH_KCM=0 WITH_SCHEDULER=0  FRESH=1 (wipe etcd data)  KUBELET_EXTRA_ARGS="..."  KUBELET_V (2)
#      SNAPSHOTTER (overlayfs; "native" if the filesystem under ~/.cache cannot host overlayfs upper dirs)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KN=${KUBE_NODE:-$HOME/.cache/kruise-webhook/kube-node}
KL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
BIN=${KUBE_BIN:-$KL/bin}
NODE_NAME=${NODE_NAME:-kube-node}
APISERVER_PORT=${APISERVER_PORT:-26443}
ETCD_PORT=${ETCD_PORT:-22379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-22380}
KUBELET_PORT=${KUBELET_PORT:-20250}
KUBELET_HEALTHZ_PORT=${KUBELET_HEALTHZ_PORT:-20248}
KCM_PORT=${KCM_PORT:-20257}
SCHED_PORT=${SCHED_PORT:-20259}
POD_CIDR=${POD_CIDR:-10.247.77.0/24}
CNI_BRIDGE=${CNI_BRIDGE:-kn-br0}
RUN=$KN/run
SOCK=$RUN/containerd.sock
# the kubernetes Service's ClusterIP (first address of --service-cluster-ip-range) and the pod network's gateway
SERVICE_IP=10.0.0.1
GATEWAY=${POD_CIDR%.*/*}.1
"$HERE/check-host.sh" >&2 || exit 1
mkdir -p $RUN $KN/data $KN/logs $KN/etc $KN/cni/net.d $KN/cni/ipam $KN/kubelet $KN/manifests
unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy || true
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
T0=$(date +%s.%N)
el() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
for n in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
  if alive $RUN/$n.pid; then echo "$n already running (pid $(cat $RUN/$n.pid)); run $HERE/stop.sh first" >&2; exit 1; fi
done
for b in kube-apiserver kubelet; do [ -x $BIN/$b ] || { echo "missing $BIN/$b: run $HERE/setup.sh" >&2; exit 1; }; done
[ -f $KN/images/pause-1.tar ] || { echo "missing images: run $HERE/setup.sh" >&2; exit 1; }

# ---------- host settings the node changes: the kubelet sets vm.overcommit_memory=1, kernel.panic=10,
# kernel.panic_on_oops=1 (and the keys quotas), the bridge CNI plugin net.ipv4.ip_forward=1; stop.sh puts them back
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward"
[ -f $RUN/sysctl-before ] || for k in $SYSCTLS; do echo "$k=$(sysctl -n $k)"; done > $RUN/sysctl-before
# pods -> apiserver: the in-cluster config dials KUBERNETES_SERVICE_HOST:PORT (10.0.0.1:443); stop.sh deletes the rule
DNAT_RULE="PREROUTING -s $POD_CIDR -d $SERVICE_IP/32 -p tcp --dport 443 -m comment --comment kube-node-apiserver -j DNAT --to-destination $GATEWAY:$APISERVER_PORT"
echo "$DNAT_RULE" > $RUN/dnat-rule
iptables -t nat -C $DNAT_RULE 2>/dev/null || iptables -t nat -A $DNAT_RULE

# ---------- PKI: CA, apiserver, admin (system:masters), SA keys from kube-local's gen-pki.sh; plus node + kubelet-client
KUBE_LOCAL=$KN "$HERE/../kube-local/gen-pki.sh"
P=$KN/pki
client_cert() { # name CN O
  [ -f $P/$1.key ] && return 0
  openssl genrsa -out $P/$1.key 2048 2>/dev/null
  openssl req -new -key $P/$1.key -subj "/O=$3/CN=$2" -out $P/$1.csr
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > $P/$1.ext
  openssl x509 -req -in $P/$1.csr -CA $P/ca.crt -CAkey $P/ca.key -CAcreateserial -days 3650 -sha256 -extfile $P/$1.ext -out $P/$1.crt 2>/dev/null
  chmod 600 $P/$1.key
}
client_cert node-$NODE_NAME "system:node:$NODE_NAME" system:nodes
client_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
kubeconfig() { # file cert key
  cat > $1 <<EOT
apiVersion: v1
kind: Config
clusters:
- name: kube-node
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $P/ca.crt
users:
- name: user
  user:
    client-certificate: $2
    client-key: $3
contexts:
- name: kube-node
  context:
    cluster: kube-node
    user: user
    namespace: default
current-context: kube-node
EOT
}
kubeconfig $KN/kubeconfig $P/admin.crt $P/admin.key
kubeconfig $KN/etc/kubelet.kubeconfig $P/node-$NODE_NAME.crt $P/node-$NODE_NAME.key

# ---------- etcd
[ "${FRESH:-0}" = 1 ] && rm -rf $KN/data/etcd $KN/logs/audit.log
nohup etcd --name kube-node --data-dir $KN/data/etcd \
  --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
  --listen-peer-urls http://127.0.0.1:$ETCD_PEER_PORT --initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER_PORT \
  --initial-cluster kube-node=http://127.0.0.1:$ETCD_PEER_PORT \
  --log-level warn --logger zap > $KN/logs/etcd.log 2>&1 &
echo $! > $RUN/etcd.pid
for i in $(seq 1 100); do
  curl -fsS http://127.0.0.1:$ETCD_PORT/health >/dev/null 2>&1 && break
  alive $RUN/etcd.pid || { echo "etcd died; see $KN/logs/etcd.log" >&2; tail -20 $KN/logs/etcd.log >&2; exit 1; }
  sleep 0.2
done
echo "[$(el)s] etcd up (pid $(cat $RUN/etcd.pid)) on 127.0.0.1:$ETCD_PORT"

# ---------- kube-apiserver
nohup $BIN/kube-apiserver \
  --etcd-servers=http://127.0.0.1:$ETCD_PORT \
  --bind-address=0.0.0.0 --advertise-address=127.0.0.1 \
  --secure-port=$APISERVER_PORT --insecure-port=0 \
  --cert-dir=$RUN/apiserver-certs \
  --tls-cert-file=$P/apiserver.crt --tls-private-key-file=$P/apiserver.key \
  --client-ca-file=$P/ca.crt \
  --token-auth-file=$P/tokens.csv \
  --service-account-key-file=$P/sa.pub \
  --service-account-signing-key-file=$P/sa.key \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --api-audiences=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.0.0.0/24 \
  --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,Priority,RuntimeClass,NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota \
  --enable-aggregator-routing=true \
  --allow-privileged=true \
  --kubelet-client-certificate=$P/apiserver-kubelet-client.crt --kubelet-client-key=$P/apiserver-kubelet-client.key \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --profiling=false \
  --endpoint-reconciler-type=none \
  --audit-policy-file="$HERE/../lib/audit-policy.yaml" --audit-log-path=$KN/logs/audit.log \
  --v=1 > $KN/logs/kube-apiserver.log 2>&1 &
echo $! > $RUN/kube-apiserver.pid
CURL="curl -fsS --cacert $P/ca.crt --cert $P/admin.crt --key $P/admin.key"
API=https://127.0.0.1:$APISERVER_PORT
for i in $(seq 1 300); do
  [ "$($CURL $API/readyz 2>/dev/null)" = ok ] && break
  alive $RUN/kube-apiserver.pid || { echo "kube-apiserver died; see $KN/logs/kube-apiserver.log" >&2; tail -30 $KN/logs/kube-apiserver.log >&2; exit 1; }
  sleep 0.2
done
[ "$($CURL $API/readyz 2>/dev/null)" = ok ] || { echo "kube-apiserver not ready after 60s" >&2; exit 1; }
echo "[$(el)s] kube-apiserver up (pid $(cat $RUN/kube-apiserver.pid)) on $API; KUBECONFIG=$KN/kubeconfig"

# ---------- kube-controller-manager (workload controllers, namespace, GC, service accounts, PV binder and protection) + kube-scheduler
if [ "${WITH_KCM:-1}" = 1 ] && [ -x $BIN/kube-controller-manager ]; then
  nohup $BIN/kube-controller-manager \
    --kubeconfig=$KN/kubeconfig --authentication-kubeconfig=$KN/kubeconfig --authorization-kubeconfig=$KN/kubeconfig \
    --bind-address=127.0.0.1 --secure-port=$KCM_PORT --port=0 --cert-dir=$RUN/kcm-certs \
    --service-account-private-key-file=$P/sa.key --root-ca-file=$P/ca.crt \
    --use-service-account-credentials=false \
    --controllers=namespace,garbagecollector,serviceaccount,serviceaccount-token,replicaset,deployment,statefulset,daemonset,job,podgc,nodelifecycle,endpoint,disruption,persistentvolume-binder,pvc-protection,pv-protection \
    --leader-elect=false --v=1 > $KN/logs/kube-controller-manager.log 2>&1 &
  echo $! > $RUN/kube-controller-manager.pid
  echo "[$(el)s] kube-controller-manager started (pid $(cat $RUN/kube-controller-manager.pid), :$KCM_PORT)"
fi
if [ "${WITH_SCHEDULER:-1}" = 1 ] && [ -x $BIN/kube-scheduler ]; then
  nohup $BIN/kube-scheduler \
    --kubeconfig=$KN/kubeconfig --authentication-kubeconfig=$KN/kubeconfig --authorization-kubeconfig=$KN/kubeconfig \
    --bind-address=127.0.0.1 --secure-port=$SCHED_PORT --port=0 --cert-dir=$RUN/sched-certs \
    --leader-elect=false --v=1 > $KN/logs/kube-scheduler.log 2>&1 &
  echo $! > $RUN/kube-scheduler.pid
  echo "[$(el)s] kube-scheduler started (pid $(cat $RUN/kube-scheduler.pid), :$SCHED_PORT)"
fi

# ---------- containerd: own config, root, state, socket; CRI plugin with local sandbox image, runc, cgroupfs, CNI
cat > $KN/etc/containerd.toml <<EOT
version = 2
root = "$KN/containerd/root"
state = "$KN/containerd/state"
oom_score = -999
[grpc]
  address = "$SOCK"
[ttrpc]
  address = ""
[debug]
  address = ""
  level = "info"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$KN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/kube-node/pause:1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "${SNAPSHOTTER:-overlayfs}"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$KN/containerd/state/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$KN/cni/net.d"
    max_conf_num = 1
EOT
# bridge CNI without ipMasq/portmap: no iptables NAT needed; pods reach each other and the host (gateway IP)
  cat > $KN/cni/net.d/10-kube-node.conflist <<EOT
{
  "cniVersion": "0.4.0",
  "name": "kube-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$KN/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOT
nohup containerd --config $KN/etc/containerd.toml > $KN/logs/containerd.log 2>&1 &
echo $! > $RUN/containerd.pid
CTR="ctr --address $SOCK -n k8s.io"
for i in $(seq 1 100); do
  $CTR version >/dev/null 2>&1 && break
  alive $RUN/containerd.pid || { echo "containerd died; see $KN/logs/containerd.log" >&2; tail -20 $KN/logs/containerd.log >&2; exit 1; }
  sleep 0.2
done
echo "[$(el)s] containerd up (pid $(cat $RUN/containerd.pid)) on $SOCK"
# import (and unpack), then add a NAME@sha256:<manifest digest> reference, as a registry pull would: the CRI then
# reports imageID "localhost/kube-node/app@sha256:..." (repo digest) instead of the bare config digest
old=$($CTR images ls -q | grep '^localhost/kube-node/.*@sha256:' || true)
[ -z "$old" ] || $CTR images rm $old >/dev/null   # digest refs of earlier builds; re-added below for the current ones
for t in $KN/images/*.tar; do $CTR images import --snapshotter "${SNAPSHOTTER:-overlayfs}" "$t" >/dev/null; done
$CTR images ls | awk 'NR>1 && $1 ~ /^localhost\/kube-node\// && $1 !~ /@/ {print $1, $3}' | while read ref dg; do
  $CTR images tag --force $ref ${ref%:*}@$dg >/dev/null
  echo "  image: $ref  ${ref%:*}@$dg"
done
echo "[$(el)s] images imported"

# ---------- kubelet
cat > $KN/etc/kubelet.yaml <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
makeIPTablesUtilChains: false   # no KUBE-FIREWALL/KUBE-MARK-* chains: nothing here uses them, and they outlive the kubelet
failSwapOn: false
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
clusterDNS: [10.0.0.10]   # no DNS server runs there; set so the kubelet does not emit MissingClusterDNS events
staticPodPath: $KN/manifests
volumePluginDir: $KN/kubelet/volume-plugins
enableControllerAttachDetach: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
maxPods: 60
nodeStatusUpdateFrequency: 1s    # computed every 1 s, posted on change (Ready flips fast) ...
nodeStatusReportFrequency: 1m    # ... and at least every minute
syncFrequency: 10s
fileCheckFrequency: 10s
runtimeRequestTimeout: 2m
EOT
# the 1.20 kubelet always writes container logs to /var/log/pods (+ links in /var/log/containers): remember what was
# there before, so stop.sh removes only what this kubelet created
ls -A /var/log/pods 2>/dev/null > $RUN/pod-logs-before || true
KSTART=$(date +%s)
nohup $BIN/kubelet \
  --config=$KN/etc/kubelet.yaml \
  --kubeconfig=$KN/etc/kubelet.kubeconfig \
  --hostname-override=$NODE_NAME \
  --container-runtime=remote --container-runtime-endpoint=unix://$SOCK \
  --root-dir=$KN/kubelet --cert-dir=$KN/kubelet/pki \
  --v=${KUBELET_V:-2} ${KUBELET_EXTRA_ARGS:-} > $KN/logs/kubelet.log 2>&1 &
echo $! > $RUN/kubelet.pid
echo "[$(el)s] kubelet started (pid $(cat $RUN/kubelet.pid)), :$KUBELET_PORT, healthz 127.0.0.1:$KUBELET_HEALTHZ_PORT"
ready=""
for i in $(seq 1 300); do
  # Ready, reported by this kubelet (heartbeat after its start), not a stale condition left in etcd by a previous run
  ready=$($CURL $API/api/v1/nodes/$NODE_NAME 2>/dev/null | KSTART=$KSTART python3 -c '
import datetime, json, os, sys
n = json.load(sys.stdin)
c = [c for c in n["status"].get("conditions", []) if c["type"] == "Ready"][0]
hb = datetime.datetime.strptime(c["lastHeartbeatTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
print(c["status"] if hb >= int(os.environ["KSTART"]) - 1 else "stale")' 2>/dev/null || true)
  [ "$ready" = True ] && break
  alive $RUN/kubelet.pid || { echo "kubelet died; see $KN/logs/kubelet.log" >&2; tail -30 $KN/logs/kubelet.log >&2; exit 1; }
  sleep 0.2
done
[ "$ready" = True ] || { echo "node $NODE_NAME not Ready after 60s; see $KN/logs/kubelet.log" >&2; exit 1; }
echo "[$(el)s] node $NODE_NAME Ready"
# the kubelet registers with the node.kubernetes.io/not-ready:NoSchedule taint; the nodelifecycle controller removes it
# once Ready. Without kube-controller-manager remove it here so the scheduler can place pods.
taints() { $CURL $API/api/v1/nodes/$NODE_NAME | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["spec"].get("taints") or []))'; }
if ! alive $RUN/kube-controller-manager.pid; then
  $CURL -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"taints":null}}' $API/api/v1/nodes/$NODE_NAME >/dev/null
fi
for i in $(seq 1 100); do [ "$(taints)" = 0 ] && break; sleep 0.2; done
if [ "$(taints)" != 0 ]; then
  # A loaded machine can leave the nodelifecycle controller behind the Ready node: do its one step here.
  echo "[$(el)s] node $NODE_NAME Ready but still tainted; removing the not-ready taint" >&2
  $CURL -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"taints":null}}' $API/api/v1/nodes/$NODE_NAME >/dev/null
  for i in $(seq 1 100); do [ "$(taints)" = 0 ] && break; sleep 0.2; done
fi
[ "$(taints)" = 0 ] || { echo "node $NODE_NAME still has taints: $($CURL $API/api/v1/nodes/$NODE_NAME | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("taints"))')" >&2; exit 1; }
echo "[$(el)s] node $NODE_NAME schedulable (no taints)"

# ---------- warm-up: one real pod through scheduler -> kubelet -> containerd -> runc -> CNI, so that "started" means
# pods really run (right after a start the kubelet takes a few seconds before it acts on its first pods)
# ServiceAccount admission refuses pods until their namespace's ServiceAccount has its token Secret
sa_token() { $CURL $API/api/v1/namespaces/kube-system/serviceaccounts/default 2>/dev/null \
  | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("secrets") or []))' 2>/dev/null || echo 0; }
if alive $RUN/kube-controller-manager.pid; then
  for i in $(seq 1 150); do [ "$(sa_token)" != 0 ] && break; sleep 0.2; done
  [ "$(sa_token)" != 0 ] || { echo "no token for ServiceAccount kube-system/default after 30s; see $KN/logs/kube-controller-manager.log" >&2; exit 1; }
  echo "[$(el)s] ServiceAccount tokens issued"
fi
if [ "${WARMUP:-1}" = 1 ]; then
  W=kube-node-warmup-$(date +%s)
  $CURL -X POST -H 'Content-Type: application/json' $API/api/v1/namespaces/kube-system/pods -d '{"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"'$W'"},"spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":1,
    "containers":[{"name":"c","image":"localhost/kube-node/busybox:1","command":["true"]}]}}' >/dev/null
  phase=""
  for i in $(seq 1 600); do
    phase=$($CURL $API/api/v1/namespaces/kube-system/pods/$W | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"].get("phase"))')
    [ "$phase" = Succeeded ] && break
    [ "$phase" = Failed ] && break
    sleep 0.2
  done
  $CURL -X DELETE -H 'Content-Type: application/json' -d '{"gracePeriodSeconds":1}' $API/api/v1/namespaces/kube-system/pods/$W >/dev/null
  [ "$phase" = Succeeded ] || { echo "warm-up pod kube-system/$W: phase $phase (expected Succeeded); see $KN/logs/kubelet.log" >&2; exit 1; }
  echo "[$(el)s] warm-up pod ran to Succeeded"
fi
echo "cluster ready: export KUBECONFIG=$KN/kubeconfig"
