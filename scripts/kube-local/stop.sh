#!/bin/bash
# Stop what start.sh started (by recorded PID only). Usage: stop.sh   (WIPE=1 also deletes etcd data)
K=${KUBE_LOCAL:-$HOME/.cache/kruise-webhook/kube-local}
RUN=$K/run
for n in kube-controller-manager kube-apiserver etcd; do
  f=$RUN/$n.pid
  [ -f $f ] || continue
  pid=$(cat $f)
  if kill -0 $pid 2>/dev/null; then
    kill $pid
    for i in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
    kill -0 $pid 2>/dev/null && kill -9 $pid
    echo "stopped $n (pid $pid)"
  fi
  rm -f $f
done
[ "${WIPE:-0}" = 1 ] && rm -rf $K/data/etcd && echo "wiped etcd data"
exit 0
