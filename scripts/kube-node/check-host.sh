#!/bin/bash
# Can this machine run the real node? Prints nothing and exits 0 when it can; otherwise one line naming what is
# missing and exits 1. Checked: root (apt-get, mounts, network namespaces, cgroups), a cgroup hierarchy with the
# memory and cpu controllers, network namespaces, overlay or a writable cache for containerd's snapshots.
set -u
fail() { echo "kube-node: this machine cannot run containers: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (running as uid $(id -u))"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  for c in memory cpu pids; do
    grep -qw $c /sys/fs/cgroup/cgroup.controllers || fail "no '$c' controller in the cgroup v2 hierarchy at /sys/fs/cgroup"
  done
else
  for c in memory cpu cpuacct pids; do
    [ -d /sys/fs/cgroup/$c ] || fail "no cgroup v1 '$c' hierarchy mounted under /sys/fs/cgroup"
  done
fi
unshare --net true 2>/dev/null || fail "cannot create a network namespace (unshare --net failed: CAP_SYS_ADMIN missing?)"
[ -w /proc/sys/net/ipv4/ip_forward ] || fail "/proc/sys is read-only (the bridge CNI plugin and the kubelet write kernel settings)"
exit 0
