//! The text of a [`Report`] for people.

use std::fmt::Write as _;

use super::report::{Report, Round, Verdict};

pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {}", report.kind, report.object);
    let _ = writeln!(out, "start: {}", report.start);
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    if report.rounds.is_empty() {
        let _ = writeln!(out, "no pod changes");
    }
    for round in &report.rounds {
        round_text(&mut out, round);
    }
    match &report.verdict {
        Verdict::Completes { rounds } => {
            let _ = writeln!(
                out,
                "finished: every pod updated and ready after {rounds} rounds"
            );
        }
        Verdict::Blocked { rounds, reasons } => {
            let _ = writeln!(out, "blocked after {rounds} rounds:");
            for reason in reasons {
                let _ = writeln!(out, "  - {reason}");
            }
        }
    }
    out
}

fn round_text(out: &mut String, round: &Round) {
    let _ = writeln!(
        out,
        "round {}: {}/{} pods updated",
        round.round, round.updated, round.total
    );
    let lines = [
        ("updated in place", &round.updated_in_place),
        ("recreated", &round.recreated),
        ("created", &round.created),
        ("surged", &round.surged),
        ("deleted", &round.deleted),
        ("not upgradable in place", &round.not_upgradable),
    ];
    for (what, pods) in lines {
        if !pods.is_empty() {
            let _ = writeln!(out, "  {what}: {}", pods.join(", "));
        }
    }
}
