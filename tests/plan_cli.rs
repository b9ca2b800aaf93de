//! `kruise-webhook plan` as a script sees it: the rollout of the seed examples (CloneSet,
//! Advanced StatefulSet, Advanced DaemonSet) and of the
//! "5 % of six pods" SidecarSet round by round, what blocks, the exit codes (0 completes, 2 would
//! not, 1 bad input), and errors that name what is wrong.

use std::process::ExitStatus;

use serde_json::Value;

mod support;

const CART_NEW: &str = "tests/fixtures/plan/cart-nginx-1.26.yaml";
const WORKLOADS: &str = "deploy/examples/workloads/workloads.yaml";
const PROXY: &str = "deploy/examples/proxy.yaml";
const PROXY_5_PERCENT: &str = "tests/fixtures/plan/proxy-5-percent.yaml";
const PROXY_PAUSED: &str = "tests/fixtures/plan/proxy-paused.yaml";
const DB_NEW: &str = "tests/fixtures/plan/db-postgres-17.yaml";
const AGENT_NEW: &str = "tests/fixtures/plan/node-agent-busybox-1.37.yaml";
const NODES: &str = "tests/fixtures/plan/nodes.yaml";

/// Runs `kruise-webhook plan` with `args`, `stdin` on standard input: its exit status, standard
/// output and standard error.
fn plan(args: &[&str], stdin: &str) -> (ExitStatus, String, String) {
    support::run_with_stdin("plan", args, stdin)
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn names(round: &Value, key: &str) -> Vec<String> {
    round[key]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// 5 % of six pods is 0.3 pods; the SidecarSet planner rounds a percentage of maxUnavailable up,
/// so one pod is upgraded per round, each after the one before is ready again, and the rollout
/// completes in six rounds.
#[test]
fn five_percent_of_six_pods_upgrades_one_pod_per_round() {
    let args = [
        PROXY_5_PERCENT,
        "--current",
        PROXY,
        "--matched-pods",
        "6",
        "-o",
        "json",
    ];
    let (status, out, err) = plan(&args, "");
    assert_eq!(status.code(), Some(0), "{out}{err}");
    let report = json(&out);
    assert_eq!(report["kind"], "SidecarSet");
    assert_eq!(report["verdict"]["result"], "completes");
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 6, "{out}");
    let mut upgraded = Vec::new();
    for (n, round) in rounds.iter().enumerate() {
        let pods = names(round, "updatedInPlace");
        assert_eq!(pods.len(), 1, "one pod a round: {round}");
        assert_eq!(round["updated"], n + 1);
        assert_eq!(round["total"], 6);
        upgraded.extend(pods);
    }
    upgraded.sort();
    upgraded.dedup();
    assert_eq!(upgraded.len(), 6, "every pod once: {upgraded:?}");

    let (status, text, _) = plan(&args[..5], "");
    assert_eq!(status.code(), Some(0));
    assert!(
        text.contains("start: no pods given: 6 pods injected by the current SidecarSet"),
        "{text}"
    );
    assert!(
        text.contains("round 1: 1/6 pods updated\n  updated in place: "),
        "{text}"
    );
    assert!(
        text.contains("finished: every pod updated and ready"),
        "{text}"
    );
}

#[test]
fn a_paused_sidecarset_and_a_pod_that_never_comes_up_block_the_rollout() {
    let (status, out, err) = plan(
        &[PROXY_PAUSED, "--current", PROXY, "--matched-pods", "6"],
        "",
    );
    assert_eq!(status.code(), Some(2), "{out}{err}");
    assert!(out.contains("no pod changes"), "{out}");
    assert!(out.contains("updateStrategy.paused is true"), "{out}");

    let args = [
        PROXY_5_PERCENT,
        "--current",
        PROXY,
        "--matched-pods",
        "6",
        "--never-ready",
        "pod-0",
        "-o",
        "json",
    ];
    let (status, out, err) = plan(&args, "");
    assert_eq!(status.code(), Some(2), "{out}{err}");
    let report = json(&out);
    assert_eq!(report["verdict"]["result"], "blocked");
    let reasons = report["verdict"]["reasons"].to_string();
    assert!(
        reasons.contains("pod pod-0 is not ready (--never-ready)"),
        "{reasons}"
    );
    // The first pod upgraded never comes back: the budget of one is used up.
    assert_eq!(report["rounds"].as_array().unwrap().len(), 1, "{out}");
}

/// The seed CloneSet (in place, partition 25 %, maxUnavailable 1) with a new image: one pod at a
/// time in place, and the partition keeps one of three at the current revision.
#[test]
fn the_seed_cloneset_stops_at_its_partition() {
    let args = [CART_NEW, "--current", WORKLOADS, "-o", "json"];
    let (status, out, err) = plan(&args, "");
    assert_eq!(status.code(), Some(2), "{out}{err}");
    let report = json(&out);
    assert_eq!(report["kind"], "CloneSet");
    assert_eq!(report["object"], "default/cart");
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{out}");
    for round in rounds {
        assert_eq!(names(round, "updatedInPlace").len(), 1, "{round}");
        assert!(names(round, "recreated").is_empty(), "{round}");
    }
    assert_eq!(rounds[1]["updated"], 2);
    let reasons = report["verdict"]["reasons"].to_string();
    assert!(
        reasons.contains("updateStrategy.partition 25% keeps 1 of 3 pods at the current revision"),
        "{reasons}"
    );

    // The first pod updated never comes up again: the second waits for it.
    let first = names(&rounds[0], "updatedInPlace").remove(0);
    let (status, out, _) = plan(
        &[CART_NEW, "--current", WORKLOADS, "--never-ready", &first],
        "",
    );
    assert_eq!(status.code(), Some(2));
    assert!(
        out.contains(&format!("pod {first} is not ready (--never-ready)")),
        "{out}"
    );
    assert!(out.contains("1/3 pods updated"), "{out}");
    assert!(!out.contains("2/3 pods updated"), "{out}");
}

/// Without a current object a CloneSet starts with no pods and creates them all; the input may
/// come on standard input.
#[test]
fn a_cloneset_from_nothing_creates_its_pods_and_completes() {
    let text =
        std::fs::read_to_string(format!("{}/{CART_NEW}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (status, out, err) = plan(&["-"], &text);
    assert_eq!(status.code(), Some(0), "{out}{err}");
    assert!(out.contains("no current object given"), "{out}");
    assert!(out.contains("3/3 pods updated\n  created: "), "{out}");
    assert!(out.contains("finished"), "{out}");
}

#[test]
fn plan_names_bad_input() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["-"],
            pod,
            "kind \"Pod\": expected a CloneSet, an Advanced StatefulSet",
        ),
        (&["-"], "{", "neither JSON nor YAML"),
        (&["no-such-file.yaml"], "", "no-such-file.yaml"),
        (&[PROXY_5_PERCENT, "--current", PROXY], "", "--matched-pods"),
        (&[PROXY_5_PERCENT], "", "needs its pods"),
        (
            &[CART_NEW, "--current", PROXY],
            "",
            "holds no CloneSet named \"cart\"",
        ),
        (&[CART_NEW, "--max-rounds", "0"], "", "--max-rounds"),
        (
            &[CART_NEW, "--matched-pods", "3"],
            "",
            "--matched-pods: only for a SidecarSet",
        ),
        (
            &[CART_NEW, "--pods", PROXY],
            "",
            "expected Pods and ControllerRevisions",
        ),
        (
            &[DB_NEW, "--matched-pods", "3"],
            "",
            "--matched-pods: only for a SidecarSet",
        ),
        (
            &[DB_NEW, "--nodes", NODES],
            "",
            "--nodes: only for a DaemonSet",
        ),
        (
            &[CART_NEW, "--node-count", "2"],
            "",
            "--node-count: only for a DaemonSet",
        ),
        (
            &[PROXY_5_PERCENT, "--node-count", "2"],
            "",
            "--node-count: only for a DaemonSet",
        ),
        (
            &[AGENT_NEW, "--nodes", NODES, "--node-count", "2"],
            "",
            "--node-count: not with --nodes",
        ),
        (
            &[AGENT_NEW, "--node-count", "0"],
            "",
            "--node-count: must be at least 1",
        ),
        (&[AGENT_NEW, "--nodes", PROXY], "", "expected Nodes"),
        (
            &[AGENT_NEW, "--matched-pods", "3"],
            "",
            "--matched-pods: only for a SidecarSet",
        ),
        (
            &[DB_NEW, "--current", PROXY],
            "",
            "holds no StatefulSet named \"db\"",
        ),
        (
            &["cloneset/shop", "--kubeconfig", "/dev/null"],
            "",
            "no such file, nor a target: target \"cloneset/shop\": expected <kind>/<namespace>/<name>",
        ),
        (
            &["no-such-file.yaml", "--kubeconfig", "/dev/null"],
            "",
            "no-such-file.yaml: no such file, nor a target",
        ),
        (
            &[CART_NEW, "--kubeconfig", "/nonexistent/kubeconfig"],
            "",
            "reading kubeconfig /nonexistent/kubeconfig",
        ),
        (
            &[
                "sidecarset/proxy",
                "--kubeconfig",
                "/nonexistent/kubeconfig",
            ],
            "",
            "reading kubeconfig /nonexistent/kubeconfig",
        ),
    ];
    for (args, stdin, wanted) in cases {
        let (status, out, err) = plan(args, stdin);
        assert_eq!(status.code(), Some(1), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(wanted), "{args:?}: {err}");
    }
}

/// The seed Advanced StatefulSet (Parallel, in place, partition 1, maxUnavailable 2) with a new
/// image: two pods in place at once, and the partition keeps ordinal 0.
#[test]
fn the_seed_statefulset_stops_at_its_partition() {
    let (status, out, err) = plan(&[DB_NEW, "--current", WORKLOADS, "-o", "json"], "");
    assert_eq!(status.code(), Some(2), "{out}{err}");
    let report = json(&out);
    assert_eq!(report["kind"], "StatefulSet");
    assert_eq!(report["object"], "default/db");
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1, "{out}");
    assert_eq!(names(&rounds[0], "updatedInPlace"), ["db-2", "db-1"]);
    assert_eq!(rounds[0]["updated"], 2);
    assert_eq!(
        report["verdict"]["reasons"],
        serde_json::json!([
            "updateStrategy.rollingUpdate.partition 1 keeps ordinal 0 at the current revision"
        ])
    );

    // db-2 never comes back from its update: db-1 still fits the budget of two, db-0 is kept.
    let (status, out, _) = plan(
        &[DB_NEW, "--current", WORKLOADS, "--never-ready", "db-2"],
        "",
    );
    assert_eq!(status.code(), Some(2));
    assert!(
        out.contains("pod db-2 is not ready (--never-ready): it counts against updateStrategy.rollingUpdate.maxUnavailable (2)"),
        "{out}"
    );
}

/// Without a current object a StatefulSet creates its pods, on standard input too.
#[test]
fn a_statefulset_from_nothing_creates_its_pods_and_completes() {
    let text = std::fs::read_to_string(format!("{}/{DB_NEW}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (status, out, err) = plan(&["-"], &text);
    assert_eq!(status.code(), Some(0), "{out}{err}");
    assert!(out.contains("no current object given"), "{out}");
    assert!(
        out.contains("3/3 pods updated\n  created: db-0, db-1, db-2"),
        "{out}"
    );
    assert!(out.contains("finished"), "{out}");
}

/// The seed Advanced DaemonSet (maxUnavailable 10 %) with a new image over three plain Nodes:
/// one node at a time, its pod deleted and made again; over the Nodes of a file, the tainted one
/// gets no pod and is named.
#[test]
fn the_seed_daemonset_replaces_one_node_at_a_time() {
    let (status, out, err) = plan(&[AGENT_NEW, "--current", WORKLOADS, "-o", "json"], "");
    assert_eq!(status.code(), Some(0), "{out}{err}");
    let report = json(&out);
    assert_eq!(report["kind"], "DaemonSet");
    assert!(
        report["start"]
            .as_str()
            .unwrap()
            .starts_with("no --nodes: 3 plain Ready Nodes (node-0..node-2"),
        "{out}"
    );
    let rounds = report["rounds"].as_array().unwrap();
    let recreated: Vec<String> = rounds.iter().flat_map(|r| names(r, "recreated")).collect();
    assert_eq!(recreated.len(), 3, "{out}");
    for round in rounds {
        assert!(names(round, "recreated").len() <= 1, "{round}");
    }

    let (status, out, err) = plan(&[AGENT_NEW, "--current", WORKLOADS, "--nodes", NODES], "");
    assert_eq!(status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("start: 3 Nodes from tests/fixtures/plan/nodes.yaml"),
        "{out}"
    );
    assert!(
        out.contains("note: node gpu-1 gets no pod: the pod does not tolerate its taints dedicated=gpu:NoSchedule"),
        "{out}"
    );
    assert!(out.contains(" on worker-a"), "{out}");
    assert!(!out.contains(" on gpu-1"), "{out}");
}

/// A paused DaemonSet and one whose first new pod never comes up: exit 2, the reason named.
#[test]
fn a_paused_or_stuck_daemonset_is_blocked() {
    let text = std::fs::read_to_string(format!("{}/{AGENT_NEW}", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace(
            "maxUnavailable: 10%",
            "maxUnavailable: 10%\n      paused: true",
        );
    let args = ["-", "--current", WORKLOADS, "--node-count", "2"];
    let (status, out, err) = plan(&args, &text);
    assert_eq!(status.code(), Some(2), "{out}{err}");
    assert!(out.contains("no pod changes"), "{out}");
    assert!(
        out.contains("updateStrategy.rollingUpdate.paused is true: no pod is updated"),
        "{out}"
    );

    let (_, out, _) = plan(&[AGENT_NEW, "--current", WORKLOADS, "-o", "json"], "");
    let report = json(&out);
    let first_new = names(&report["rounds"][1], "created").remove(0);
    let first_new = first_new.split_once(" on ").unwrap().0.to_string();
    let (status, out, _) = plan(
        &[
            AGENT_NEW,
            "--current",
            WORKLOADS,
            "--never-ready",
            &first_new,
        ],
        "",
    );
    assert_eq!(status.code(), Some(2), "{out}");
    assert!(out.contains(&format!("pod {first_new} on node-")), "{out}");
    assert!(
        out.contains("is not ready (--never-ready): it counts against updateStrategy.rollingUpdate.maxUnavailable (10%)"),
        "{out}"
    );
}
