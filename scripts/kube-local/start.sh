#!/bin/bash
# Start a local etcd + kube-apiserver (Kubernetes v1.20.2 built from Debian's source package) on loopback.
# Usage: start.sh            (idempotent-ish: refuses if already running)
# Env overrides: ETCD_PORT (2379) ETCD_PEER_PORT (2380) APISERVER_PORT (6443) AUTHZ (RBAC|AlwaysAllow)
#                WITH_KCM=0 do not start kube-controller-manager (default: started when bin/kube-controller-manager exists;
#                           it runs only the namespace, garbagecollector, serviceaccount, serviceaccount-token controllers)
#                FRESH=1 wipe the etcd data dir first
#                APISERVER_ONLY=1 start only kube-apiserver, on the etcd already running (a restart of the
#                           apiserver alone, as a control-plane upgrade does it)
#                KUBE_BIN=dir with kube-apiserver / kube-controller-manager (default $KUBE_LOCAL/bin)
set -euo pipefail
K=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
BIN=${KUBE_BIN:-$K/bin}
ETCD_PORT=${ETCD_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-2380}
APISERVER_PORT=${APISERVER_PORT:-6443}
AUTHZ=${AUTHZ:-RBAC}
RUN=$K/run
mkdir -p $RUN $K/data $K/logs
unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy || true
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "${APISERVER_ONLY:-0}" = 1 ]; then
  alive $RUN/etcd.pid || { echo "APISERVER_ONLY=1: no etcd running (see $RUN/etcd.pid)" >&2; exit 1; }
  if alive $RUN/kube-apiserver.pid; then echo "kube-apiserver already running" >&2; exit 1; fi
elif alive $RUN/etcd.pid || alive $RUN/kube-apiserver.pid; then
  echo "already running (see $RUN/*.pid); run $K/stop.sh first" >&2; exit 1
fi

"$(dirname "$0")/gen-pki.sh"
[ "${FRESH:-0}" = 1 ] && [ "${APISERVER_ONLY:-0}" != 1 ] && rm -rf $K/data/etcd $K/logs/audit.log

# --- etcd ---
if [ "${APISERVER_ONLY:-0}" != 1 ]; then
nohup etcd --name kube-local --data-dir $K/data/etcd \
  --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
  --listen-peer-urls http://127.0.0.1:$ETCD_PEER_PORT --initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER_PORT \
  --initial-cluster kube-local=http://127.0.0.1:$ETCD_PEER_PORT \
  --log-level warn --logger zap \
  > $K/logs/etcd.log 2>&1 &
echo $! > $RUN/etcd.pid
for i in $(seq 1 50); do
  curl -fsS http://127.0.0.1:$ETCD_PORT/health >/dev/null 2>&1 && break
  alive $RUN/etcd.pid || { echo "etcd died; see $K/logs/etcd.log" >&2; tail -20 $K/logs/etcd.log >&2; exit 1; }
  sleep 0.2
done
echo "etcd up (pid $(cat $RUN/etcd.pid)) on 127.0.0.1:$ETCD_PORT"
fi

# --- kube-apiserver ---
P=$K/pki
# Every request of kruise-system's ServiceAccounts goes to $K/logs/audit.log (scripts/lib/identity.sh reads it).
AUDIT_POLICY=$(cd "$(dirname "$0")/../lib" && pwd)/audit-policy.yaml
nohup $BIN/kube-apiserver \
  --etcd-servers=http://127.0.0.1:$ETCD_PORT \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
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
  --authorization-mode=$AUTHZ \
  --enable-admission-plugins=NamespaceLifecycle,LimitRanger,DefaultStorageClass,DefaultTolerationSeconds,Priority,RuntimeClass,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota \
  --disable-admission-plugins=ServiceAccount \
  --allow-privileged=true \
  --profiling=false \
  --endpoint-reconciler-type=none \
  --audit-policy-file="$AUDIT_POLICY" --audit-log-path=$K/logs/audit.log \
  --v=1 \
  >> $K/logs/kube-apiserver.log 2>&1 &
echo $! > $RUN/kube-apiserver.pid
CURL="curl -fsS -m 5 --cacert $P/ca.crt --cert $P/admin.crt --key $P/admin.key"
for i in $(seq 1 300); do
  [ "$($CURL https://127.0.0.1:$APISERVER_PORT/readyz 2>/dev/null)" = ok ] && break
  alive $RUN/kube-apiserver.pid || { echo "kube-apiserver died; see $K/logs/kube-apiserver.log" >&2; tail -30 $K/logs/kube-apiserver.log >&2; exit 1; }
  sleep 0.2
done
[ "$($CURL https://127.0.0.1:$APISERVER_PORT/readyz 2>/dev/null)" = ok ] || { echo "kube-apiserver not ready after 60s" >&2; exit 1; }
echo "kube-apiserver up (pid $(cat $RUN/kube-apiserver.pid)) on https://127.0.0.1:$APISERVER_PORT"

# --- kubeconfig (client cert in system:masters) ---
cat > $K/kubeconfig <<EOT
apiVersion: v1
kind: Config
clusters:
- name: kube-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $P/ca.crt
users:
- name: kube-admin
  user:
    client-certificate: $P/admin.crt
    client-key: $P/admin.key
contexts:
- name: kube-local
  context:
    cluster: kube-local
    user: kube-admin
    namespace: default
current-context: kube-local
EOT
echo "kubeconfig: $K/kubeconfig   (export KUBECONFIG=$K/kubeconfig)"

# --- optional kube-controller-manager (namespace deletion, GC, service accounts) ---
if [ "${WITH_KCM:-1}" = 1 ] && [ -x $BIN/kube-controller-manager ]; then
  nohup $BIN/kube-controller-manager \
    --kubeconfig=$K/kubeconfig --authentication-kubeconfig=$K/kubeconfig --authorization-kubeconfig=$K/kubeconfig \
    --bind-address=127.0.0.1 --secure-port=10257 --port=0 --cert-dir=$RUN/kcm-certs \
    --service-account-private-key-file=$P/sa.key --root-ca-file=$P/ca.crt \
    --use-service-account-credentials=false \
    --controllers=namespace,garbagecollector,serviceaccount,serviceaccount-token \
    --leader-elect=false --v=1 \
    > $K/logs/kube-controller-manager.log 2>&1 &
  echo $! > $RUN/kube-controller-manager.pid
  for i in $(seq 1 100); do
    [ "$(curl -ksS https://127.0.0.1:10257/healthz 2>/dev/null)" = ok ] && break
    alive $RUN/kube-controller-manager.pid || { echo "kube-controller-manager died; see $K/logs/kube-controller-manager.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "kube-controller-manager up (pid $(cat $RUN/kube-controller-manager.pid)) healthz=$(curl -ksS https://127.0.0.1:10257/healthz 2>/dev/null)"
fi
