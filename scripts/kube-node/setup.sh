#!/bin/bash
# One real node for the local v1.20.2 apiserver: kubelet and kube-scheduler built from Debian's kubernetes source
# package (through ../kube-local/setup.sh, the same tree and vendored fixes as kube-apiserver), containerd + runc +
# CNI plugins from Debian's archive, and tiny local images (no registry is reachable: mkimage.sh assembles
# docker-archive tarballs that start.sh imports).
# Usage: [KUBE_NODE=dir, default ~/.cache/kruise-webhook/kube-node]
#        [KUBE_LOCAL=dir, default ~/.cache/kruise-webhook/kube-local] scripts/kube-node/setup.sh
# Idempotent. Cold: ~15 min on 2 cores (kube-local's build), then ~1 min (kubelet ~45 s and kube-scheduler ~10 s with
# the Go cache warm, apt ~20 s, images ~1 s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KN=${KUBE_NODE:-$HOME/.cache/kruise-webhook/kube-node}
KL=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$KN/images" "$KL"

# 1. binaries: the four components the node needs
NEED=""
for c in kube-apiserver kube-controller-manager kubelet kube-scheduler; do [ -x "$KL/bin/$c" ] || NEED="$NEED $c"; done
if [ -n "$NEED" ]; then
  t0=$(date +%s)
  echo "building${NEED} (log: $KL.setup.log)"
  KUBE_LOCAL=$KL COMPONENTS="${NEED# }" "$HERE/../kube-local/setup.sh" > "$KL.setup.log" 2>&1 \
    || { tail -40 "$KL.setup.log" >&2; exit 1; }
  echo "kube binaries built in $(( $(date +%s) - t0 )) s"
fi

# 2. node runtime from Debian: containerd 1.6, runc 1.1, CNI plugins (/usr/lib/cni), busybox-static (image content),
#    iptables (one DNAT rule: pods reach the apiserver at the kubernetes Service IP), golang-go (the pause image)
PKGS="containerd runc containernetworking-plugins busybox-static iptables conntrack golang-go python3"
if ! dpkg -s $PKGS >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq $PKGS >/dev/null
fi
# Debian enables containerd.service; the node runs its own containerd (own socket and root), a system one is not needed
# but left alone when it runs.

# 3. images (docker-archive tarballs; start.sh imports them into containerd's k8s.io namespace)
#    localhost/kube-node/pause:1    sandbox image (tiny Go pause: waits for SIGTERM/SIGINT, reaps zombies)
#    localhost/kube-node/app:v1/v2  busybox shell loop printing its version; they differ in /VERSION and $APP_VERSION
#    localhost/kube-node/busybox:1  plain busybox
[ -f "$KN/images/pause-1.tar" ] || "$HERE/mkimage.sh" pause "$KN/images"
for v in v1 v2; do [ -f "$KN/images/app-$v.tar" ] || "$HERE/mkimage.sh" app $v "$KN/images"; done
[ -f "$KN/images/busybox-1.tar" ] || "$HERE/mkimage.sh" busybox 1 "$KN/images"
echo "setup done: binaries in $KL/bin, images in $KN/images"
