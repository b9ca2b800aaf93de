#!/bin/bash
# Generates a local CA, apiserver serving cert, admin client cert, service-account key pair, static token.
# Idempotent: only creates files that are missing.
set -e
D=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}/pki
mkdir -p $D && cd $D
if [ ! -f ca.key ]; then
  openssl genrsa -out ca.key 2048 2>/dev/null
  openssl req -x509 -new -nodes -key ca.key -sha256 -days 3650 -subj "/CN=kube-local-ca" -out ca.crt
fi
if [ ! -f apiserver.key ]; then
  openssl genrsa -out apiserver.key 2048 2>/dev/null
  openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr
  cat > apiserver.ext <<EOT
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOT
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
fi
if [ ! -f admin.key ]; then
  openssl genrsa -out admin.key 2048 2>/dev/null
  openssl req -new -key admin.key -subj "/O=system:masters/CN=kube-admin" -out admin.csr
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > admin.ext
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 -extfile admin.ext -out admin.crt 2>/dev/null
fi
if [ ! -f sa.key ]; then
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
fi
if [ ! -f tokens.csv ]; then
  # token,user,uid,"group1,group2"
  echo "$(openssl rand -hex 16),kube-admin-token,admin-token-uid,\"system:masters\"" > tokens.csv
fi
chmod 600 *.key tokens.csv
