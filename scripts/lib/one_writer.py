#!/usr/bin/env python3
"""One writer at a time, read from a kube-apiserver audit log (JSON lines, Metadata level; reads in
it are passed over).

Every replica of the controllers sends `User-Agent: kruise-webhook/<version> (<identity>)`. A write
is one of theirs when its user agent says so. The Lease holder at any moment is the replica whose
write of the Lease completed last (a holder renews, a taker writes itself in; a release is the
holder's last write). The invariant: every successful write of a replica, other than to the Lease
and to Events, is received while that replica is the holder in this sense.

Usage: one_writer.py AUDIT_LOG LEASE_NAMESPACE LEASE_NAME
Prints a summary line (writes, replicas, lease hand-overs); the violations, and exits 1, if any.
"""

import json
import re
import sys

WRITES = {"create", "update", "patch", "delete", "deletecollection"}
AGENT = re.compile(r"^kruise-webhook/\S+ \((?P<identity>[^)]+)\)")


def events(path):
    with open(path, encoding="utf-8") as log:
        for line in log:
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by the apiserver's stop
            if event.get("stage") != "ResponseComplete" or event.get("verb") not in WRITES:
                continue
            if event.get("responseStatus", {}).get("code", 500) >= 300:
                continue
            match = AGENT.match(event.get("userAgent", ""))
            if match:
                yield match.group("identity"), event


def main(path, namespace, name):
    lease_writes = []  # (completed at, identity)
    writes = []  # (received at, identity, what)
    for identity, event in events(path):
        ref = event.get("objectRef", {})
        resource = ref.get("resource", "")
        if resource == "leases":
            if ref.get("namespace") == namespace and ref.get("name") == name:
                lease_writes.append((event["stageTimestamp"], identity))
            continue
        if resource == "events":
            continue
        what = "{} {}/{}/{}{}".format(
            event.get("verb"),
            resource,
            ref.get("namespace", ""),
            ref.get("name", ""),
            "/" + ref["subresource"] if ref.get("subresource") else "",
        )
        writes.append((event["requestReceivedTimestamp"], identity, what))
    lease_writes.sort()
    writes.sort()
    violations = []
    holder, next_lease = None, 0
    for received, identity, what in writes:
        # Audit timestamps are RFC 3339 with microseconds in UTC: they order as strings.
        while next_lease < len(lease_writes) and lease_writes[next_lease][0] < received:
            holder = lease_writes[next_lease][1]
            next_lease += 1
        if holder != identity:
            violations.append(f"{received} {identity} wrote ({what}) while {holder} held the Lease")
    handovers = sum(1 for a, b in zip(lease_writes, lease_writes[1:]) if a[1] != b[1])
    replicas = sorted({identity for _, identity, _ in writes})
    print(
        f"{len(writes)} writes by {len(replicas)} replicas, "
        f"{len(lease_writes)} Lease writes, {handovers} hand-overs, {len(violations)} violations"
    )
    for violation in violations[:20]:
        print("  " + violation)
    return 1 if violations or not writes else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
