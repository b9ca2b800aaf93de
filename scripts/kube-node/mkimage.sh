#!/bin/bash
# Assemble a single-layer image as a docker-archive tarball (what `docker save` writes), without any registry.
# Usage: mkimage.sh pause OUTDIR            -> OUTDIR/pause-1.tar    localhost/kube-node/pause:1
#        mkimage.sh app VERSION OUTDIR      -> OUTDIR/app-VERSION.tar localhost/kube-node/app:VERSION
#        mkimage.sh busybox TAG OUTDIR      -> OUTDIR/busybox-TAG.tar localhost/kube-node/busybox:TAG
#        mkimage.sh kruise-webhook TAG OUTDIR BINARY
#                                           -> OUTDIR/kruise-webhook-TAG.tar localhost/kube-node/kruise-webhook:TAG
#           the release binary, stripped (scripts/strip-binary.sh), in the runtime layout of the Dockerfile's final stage, read from the Dockerfile itself
#           (binary path, USER, ENTRYPOINT, CMD, EXPOSE), on a distroless-like base: the binary's shared libraries
#           (ldd), CA certificates, passwd/group with nonroot 65532, /home/nonroot, /tmp
# Import: ctr --address SOCK -n k8s.io images import OUTDIR/x.tar  (start.sh does this for OUTDIR=images)
# The output is deterministic (fixed mtimes/owners), so the same content always gets the same image ID.
set -euo pipefail
KIND=$1
case $KIND in pause) TAG=1; OUT=$2;; *) TAG=$2; OUT=$3;; esac
REF=localhost/kube-node/$KIND:$TAG
W=$(mktemp -d); trap 'rm -rf $W' EXIT
R=$W/rootfs; mkdir -p $R
USER_SPEC=""; EXPOSED=""

busybox_rootfs() {
  mkdir -p $R/bin $R/etc $R/tmp $R/www
  cp /bin/busybox $R/bin/busybox
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox $R/bin/$a; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > $R/etc/passwd
  printf 'root:x:0:\nnogroup:x:65534:\n' > $R/etc/group
  chmod 1777 $R/tmp
}

case $KIND in
pause)
  cat > $W/pause.go <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

// A sandbox "pause" process: sleeps until SIGINT/SIGTERM, reaps orphaned children.
func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
EOF
  (cd $W && GO111MODULE=off CGO_ENABLED=0 GOCACHE=$W/.gocache go build -trimpath -ldflags '-s -w -buildid=' -o $R/pause pause.go)
  rm -rf $W/.gocache
  CMD='["/pause"]'; ENV='["PATH=/"]'
  ;;
app)
  busybox_rootfs
  echo "$TAG" > $R/VERSION
  echo "app $TAG" > $R/www/index.html
  cat > $R/app.sh <<'EOF'
#!/bin/sh
# Prints its version at start and every ${APP_INTERVAL:-5}s; exits 0 on SIGTERM.
# HTTP_PORT=n also serves /www (index.html = "app VERSION") with busybox httpd, e.g. for probes.
V=$(cat /VERSION)
echo "app $V starting: pid $$ host $(hostname) APP_VERSION=$APP_VERSION"
[ -n "$HTTP_PORT" ] && httpd -p "$HTTP_PORT" -h /www && echo "app $V serving http on :$HTTP_PORT"
trap 'echo "app $V got SIGTERM, exiting"; exit 0' TERM INT
while true; do
  echo "app $V alive $(date -u +%H:%M:%S)"
  sleep "${APP_INTERVAL:-5}" & wait $!
done
EOF
  chmod 755 $R/app.sh
  CMD='["/bin/sh","/app.sh"]'; ENV="[\"PATH=/bin\",\"APP_VERSION=$TAG\"]"
  ;;
busybox)
  busybox_rootfs
  CMD='["sh"]'; ENV='["PATH=/bin"]'
  ;;
kruise-webhook)
  BINARY=${4:?mkimage.sh kruise-webhook TAG OUTDIR BINARY}
  DOCKERFILE=$(cd "$(dirname "$0")/../.." && pwd)/Dockerfile
  # the final stage of the Dockerfile: what a registry image built from it runs
  STAGE=$(awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$DOCKERFILE")
  DEST=$(printf '%b' "$STAGE" | awk '$1 == "COPY" && $2 ~ /^--from=/ {print $NF; exit}')
  USER_SPEC=$(printf '%b' "$STAGE" | awk '$1 == "USER" {print $2}' | tail -1)
  ENTRY=$(printf '%b' "$STAGE" | sed -n 's/^ENTRYPOINT //p' | tail -1)
  CMD=$(printf '%b' "$STAGE" | sed -n 's/^CMD //p' | tail -1)
  EXPOSED=$(printf '%b' "$STAGE" | awk '$1 == "EXPOSE" {for (i = 2; i <= NF; i++) printf "%s\"%s/tcp\":{}", (n++ ? "," : ""), $i}')
  for v in DEST USER_SPEC ENTRY CMD; do
    [ -n "${!v}" ] || { echo "mkimage.sh: $DOCKERFILE: final stage has no ${v/_SPEC/}" >&2; exit 2; }
  done
  mkdir -p $R$(dirname $DEST) $R/etc/ssl/certs $R/tmp $R/home/nonroot
  # stripped, as the Dockerfile ships it
  "$(dirname "$0")/../strip-binary.sh" "$BINARY" $R$DEST $W/kruise-webhook.debug
  chmod 755 $R$DEST
  # shared libraries at the paths the dynamic linker looks them up (the build stage is Debian bookworm too)
  for lib in $(ldd "$BINARY" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    mkdir -p $R$(dirname $lib); cp -L $lib $R$lib
  done
  cp -L /etc/ssl/certs/ca-certificates.crt $R/etc/ssl/certs/
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > $R/etc/passwd
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > $R/etc/group
  chmod 1777 $R/tmp; chown 65532:65532 $R/home/nonroot; chmod 700 $R/home/nonroot
  WORKDIR=/home/nonroot   # the distroless nonroot base's working directory
  ENTRY_CMD="\"Entrypoint\":$ENTRY,"
  ENV='["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"]'
  ;;
*) echo "unknown image kind $KIND" >&2; exit 2;;
esac

EXTRA_CONFIG=""
[ -z "$USER_SPEC" ] || EXTRA_CONFIG="\"User\":\"$USER_SPEC\","
[ -z "$EXPOSED" ] || EXTRA_CONFIG="$EXTRA_CONFIG\"ExposedPorts\":{$EXPOSED},"

# layer (uncompressed tar), config, manifest.json
# owners as staged (root, except what a kind gave to its user)
(cd $R && tar --numeric-owner --mtime='2020-01-01 00:00:00Z' --sort=name -cf $W/layer.tar $(ls -A))
DIFF=$(sha256sum $W/layer.tar | cut -d' ' -f1)
mkdir -p $W/img/$DIFF && mv $W/layer.tar $W/img/$DIFF/layer.tar
printf '{"architecture":"amd64","os":"linux","created":"2020-01-01T00:00:00Z","config":{%s%s"Env":%s,"Cmd":%s,"WorkingDir":"%s","Labels":{"kube-node.image":"%s"}},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"2020-01-01T00:00:00Z","created_by":"kube-node mkimage.sh %s %s"}]}' \
  "${ENTRY_CMD:-}" "$EXTRA_CONFIG" \
  "$ENV" "$CMD" "${WORKDIR:-/}" "$REF" "$DIFF" "$KIND" "$TAG" > $W/img/config.json
CID=$(sha256sum $W/img/config.json | cut -d' ' -f1)
mv $W/img/config.json $W/img/$CID.json
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$CID" "$REF" "$DIFF" > $W/img/manifest.json
mkdir -p $OUT
tar -C $W/img --numeric-owner --owner=0 --group=0 --mtime='2020-01-01 00:00:00Z' -cf $OUT/$KIND-$TAG.tar manifest.json $CID.json $DIFF
echo "image $REF -> $OUT/$KIND-$TAG.tar (config sha256:$CID)"
