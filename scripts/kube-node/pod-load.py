#!/usr/bin/env python3
"""Creates pods at a steady rate until a stop file appears, and reports which creations failed and
which pods came back without the expected container (e.g. a sidecar the webhook injects).

  pod-load.py --pki DIR --api URL --namespace NS --rate 4 --expect-container sidecar \
              --label app=load --stop-file FILE --summary FILE

Each creation runs in its own thread on a fresh connection, so a slow answer never delays the next
one. The pods are bound to a node that does not exist (spec.nodeName), so no scheduler or kubelet
works on them: what is measured is admission. The summary (JSON) counts created, failed and
missing-container pods and lists the failures with their time since the start."""
import argparse
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True)
    ap.add_argument("--pki", required=True, help="directory with ca.crt, admin.crt, admin.key")
    ap.add_argument("--namespace", required=True)
    ap.add_argument("--rate", type=float, default=4.0)
    ap.add_argument("--label", default="app=load")
    ap.add_argument("--expect-container", required=True)
    ap.add_argument("--image", default="localhost/kube-node/app:v1")
    ap.add_argument("--node-name", default="e2e-node-nowhere")
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--summary", required=True)
    args = ap.parse_args()

    context = ssl.create_default_context(cafile=os.path.join(args.pki, "ca.crt"))
    context.load_cert_chain(os.path.join(args.pki, "admin.crt"), os.path.join(args.pki, "admin.key"))
    url = urllib.parse.urlparse(args.api)
    key, value = args.label.split("=", 1)
    path = "/api/v1/namespaces/%s/pods" % args.namespace
    results, lock = [], threading.Lock()
    t0 = time.time()

    def create(i):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": "load-", "labels": {key: value}},
               "spec": {"nodeName": args.node_name, "terminationGracePeriodSeconds": 1,
                        "containers": [{"name": "app", "image": args.image}]}}
        started = time.time() - t0
        outcome = {"i": i, "at": round(started, 2)}
        try:
            conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=20)
            conn.request("POST", path, json.dumps(pod), {"Content-Type": "application/json"})
            response = conn.getresponse()
            body = response.read().decode()
            conn.close()
            outcome["code"] = response.status
            if response.status == 201:
                names = [c["name"] for c in json.loads(body)["spec"]["containers"]]
                outcome["containers"] = names
                outcome["injected"] = args.expect_container in names
            else:
                outcome["message"] = json.loads(body).get("message", body)[:300]
        except Exception as error:  # a refused or reset connection is a failed creation too
            outcome["code"] = 0
            outcome["message"] = repr(error)[:300]
        outcome["seconds"] = round(time.time() - t0 - started, 3)
        with lock:
            results.append(outcome)

    threads, i = [], 0
    while not os.path.exists(args.stop_file):
        thread = threading.Thread(target=create, args=(i,))
        thread.start()
        threads.append(thread)
        i += 1
        next_at = t0 + i / args.rate
        while time.time() < next_at and not os.path.exists(args.stop_file):
            time.sleep(min(0.05, max(0.0, next_at - time.time())))
    for thread in threads:
        thread.join()
    results.sort(key=lambda r: r["i"])
    failed = [r for r in results if r["code"] != 201]
    missing = [r for r in results if r["code"] == 201 and not r["injected"]]
    summary = {"attempted": len(results), "created": len(results) - len(failed), "failed": len(failed),
               "without_container": len(missing), "duration_seconds": round(time.time() - t0, 1),
               "slowest_seconds": max([r["seconds"] for r in results] or [0]),
               "failures": failed[:10], "missing": missing[:10]}
    with open(args.summary, "w") as out:
        json.dump(summary, out)


if __name__ == "__main__":
    sys.exit(main())
