//! `kruise-webhook plan` as a script sees it: the rollout of the seed examples and of the
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
        (&["-"], pod, "kind \"Pod\" is not planned"),
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
