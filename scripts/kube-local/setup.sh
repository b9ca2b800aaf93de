#!/bin/bash
# From-scratch build of kube-apiserver + kube-controller-manager v1.20.2 using only Debian's archive:
#   Debian source package "kubernetes" (1.20.5+really1.20.2, has vendor/), golang-go 1.19, etcd-server,
#   and Debian's reflect2 1.0.2 / json-iterator 1.1.12 sources to replace the vendored Go<1.18-only copies.
# Usage: [KUBE_LOCAL=dir, default ~/.cache/kube-local] [COMPONENTS="kube-apiserver kube-controller-manager"] ./setup.sh
# ~13 min cold on 2 cores. Binaries land in $BASE/bin.
set -euo pipefail
BASE=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
COMPONENTS=${COMPONENTS:-"kube-apiserver kube-controller-manager"}
mkdir -p $BASE/bin $BASE/.tools
export DEBIAN_FRONTEND=noninteractive

# 1. deb-src + build deps
if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  URI=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$URI" \
    > /etc/apt/sources.list.d/debian-src.sources
fi
apt-get update -qq
apt-get install -y -qq dpkg-dev golang-go etcd-server etcd-client rsync \
  golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev >/dev/null

# 2. source
cd $BASE
SRC=$(ls -d $BASE/kubernetes-1.20*/ 2>/dev/null | head -1 || true)
if [ -z "$SRC" ]; then apt-get source -qq kubernetes; SRC=$(ls -d $BASE/kubernetes-1.20*/ | head -1); fi
SRC=${SRC%/}
echo "source: $SRC"

export GOPATH=$BASE/.gopath GO111MODULE=off GOFLAGS= GOPROXY=off CGO_ENABLED=0 GOCACHE=$BASE/.gocache
mkdir -p $GOPATH/src/k8s.io
[ -L $GOPATH/src/k8s.io/kubernetes ] || ln -s $SRC $GOPATH/src/k8s.io/kubernetes
cd $GOPATH/src/k8s.io/kubernetes

# 3. Go 1.18+ fix: vendored reflect2 1.0.1 crashes (SIGSEGV in mapiterinit) -> use Debian's 1.0.2 (+ json-iterator 1.1.12)
if ! [ -f vendor/github.com/modern-go/reflect2/go_above_118.go ]; then
  for pair in modern-go/reflect2 json-iterator/go; do
    d=vendor/github.com/$pair; s=/usr/share/gocode/src/github.com/$pair
    find $d -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) -delete
    for f in $s/*.go $s/*.s; do [ -f "$f" ] || continue; case "$f" in *_test.go) continue;; esac; cp "$f" $d/; done
  done
fi

# 4. generate pkg/generated/openapi/zz_generated.openapi.go (not in the tarball)
if ! [ -f pkg/generated/openapi/zz_generated.openapi.go ]; then
  go build -o $BASE/.tools/openapi-gen k8s.io/kubernetes/vendor/k8s.io/kube-openapi/cmd/openapi-gen
  DIRS=$(find -H . -not \( \( -path ./_\* -o -path ./.\* -o -path ./vendor -o -path ./debian \) -prune \) -type f -name '*.go' \
     | sed 's|^./staging/src|vendor|; s|/[^/]*$||; s|^\./||' | LC_ALL=C sort -u)
  FILES=$(for d in $DIRS; do find -H $d -maxdepth 1 -type f -name '*.go'; done | xargs grep -l '^// *+k8s:' \
     | grep -v '^vendor/k8s.io/code-generator/' | grep -v '^vendor/k8s.io/sample-apiserver/')
  ODIRS=$(echo "$FILES" | xargs grep -l '+k8s:openapi-gen=' | xargs -n1 dirname | LC_ALL=C sort -u)
  IN=$(echo "$ODIRS" | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
  $BASE/.tools/openapi-gen --logtostderr -i "$IN" -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
     -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt -r /tmp/kube_openapi_violations.report
  diff -q /tmp/kube_openapi_violations.report api/api-rules/violation_exceptions.list
fi

# 5. build
BD=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LD=""
for p in k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version k8s.io/kubernetes/vendor/k8s.io/component-base/version; do
  LD="$LD -X $p.gitVersion=v1.20.2 -X $p.gitMajor=1 -X $p.gitMinor=20 -X $p.gitTreeState=clean -X $p.buildDate=$BD"
done
for c in $COMPONENTS; do
  t0=$(date +%s)
  go build -p 2 -ldflags "-s -w $LD" -o $BASE/bin/$c k8s.io/kubernetes/cmd/$c
  echo "built $c in $(( $(date +%s) - t0 )) s: $($BASE/bin/$c --version)"
done
