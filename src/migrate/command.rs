//! `kruise-webhook migrate [--apply] [-o json]`: reads the cluster, prints what the switch meets
//! and the steps it takes; with `--apply` takes them in order, then reads again to show that
//! none is left.

use std::io::Write;

use kube::Client;
use serde::Serialize;

use super::apply;
use super::plan::{Plan, plan};
use super::read::snapshot;
use crate::cli::{MigrateArgs, ReportFormat};

/// What `-o json` prints: the plan read before anything was written, and with `--apply` what
/// each step did.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    plan: &'a Plan,
    #[serde(skip_serializing_if = "Option::is_none")]
    applied: Option<&'a [String]>,
}

pub async fn run(args: &MigrateArgs, served: &[&str]) -> Result<(), String> {
    let client: Client = crate::source::watch::client(args.kubeconfig.as_deref()).await?;
    let ours = crate::crds::all();
    let before = plan(&snapshot(&client, &ours).await, served);
    if !args.apply {
        return print(args.output, &before, None);
    }
    if args.output == ReportFormat::Text {
        print(args.output, &before, None)?;
    }
    if before.blocked {
        if args.output == ReportFormat::Json {
            print(args.output, &before, None)?;
        }
        return Err(
            "--apply refused: a finding above blocks the switch (nothing was written)".to_string(),
        );
    }
    let mut applied = Vec::new();
    for step in &before.steps {
        let done = apply::step(&client, step, &ours, served, args.manager_timeout).await;
        let done = match done {
            Ok(done) => done,
            Err(message) => {
                if args.output == ReportFormat::Json {
                    print(args.output, &before, Some(&applied))?;
                }
                return Err(format!("{step}: {message}"));
            }
        };
        if args.output == ReportFormat::Text {
            say(&format!("done: {done}"))?;
        }
        applied.push(done);
    }
    if args.output == ReportFormat::Json {
        print(args.output, &before, Some(&applied))?;
    }
    // Read again: what the steps wrote holds, or the report says what is left.
    let after = plan(&snapshot(&client, &ours).await, served);
    if !after.steps.is_empty() {
        let left: Vec<String> = after.steps.iter().map(ToString::to_string).collect();
        return Err(format!(
            "after --apply, steps are still due (something changed them back?): {}",
            left.join("; ")
        ));
    }
    if args.output == ReportFormat::Text {
        if before.steps.is_empty() {
            say("nothing to do: every step of the switch is already done")?;
        } else {
            say("the switch's steps are done; next: install (docs/migrate-from-kruise.md)")?;
        }
    }
    Ok(())
}

fn print(format: ReportFormat, plan: &Plan, applied: Option<&[String]>) -> Result<(), String> {
    match format {
        ReportFormat::Json => {
            let text = serde_json::to_string_pretty(&Report { plan, applied })
                .map_err(|e| e.to_string())?;
            say(&text)
        }
        ReportFormat::Text => say(&text_report(plan)),
    }
}

/// The plan as an operator reads it: findings with their reasons, then the numbered steps.
pub fn text_report(plan: &Plan) -> String {
    let mut out = String::new();
    if plan.findings.is_empty() {
        out.push_str("Findings: none\n");
    } else {
        out.push_str("Findings:\n");
        for finding in &plan.findings {
            out.push_str(&format!("  - {finding}\n"));
        }
    }
    if plan.steps.is_empty() {
        out.push_str("Steps: none (nothing to do)\n");
    } else {
        out.push_str("Steps (`kruise-webhook migrate --apply` takes them, in this order):\n");
        for (number, step) in plan.steps.iter().enumerate() {
            out.push_str(&format!("  {}. {step}\n", number + 1));
        }
    }
    if plan.blocked {
        out.push_str("Blocked: --apply takes no step until the findings above are resolved\n");
    }
    out.trim_end().to_string()
}

/// One line (or block) on standard output; a closed pipe is not an error worth a panic.
fn say(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").map_err(|e| format!("writing the report: {e}"))
}

#[cfg(test)]
mod tests;
