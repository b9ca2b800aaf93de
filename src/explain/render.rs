//! The explanation as people read it.

use std::fmt::Write as _;

use super::report::{Added, Report};

/// The report as text, one section per question.
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    let _ = write_report(&mut out, report);
    out
}

fn write_report(out: &mut String, report: &Report) -> std::fmt::Result {
    writeln!(out, "{}", report.subject)?;
    match &report.namespace_labels {
        Some(labels) => {
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            writeln!(
                out,
                "Namespace {} (labels: {})",
                report.namespace,
                labels.join(", ")
            )?;
        }
        None => writeln!(
            out,
            "Namespace {} (not known: its labels are not)",
            report.namespace
        )?,
    }
    let admission = &report.admission;
    if admission.webhook_called == Some(false) {
        writeln!(
            out,
            "The pod webhook ({}) is not called for this pod (see Webhooks, Notes): nothing below happens. If it were called:",
            crate::api::keys::PATH_MUTATE_POD
        )?;
    }
    match &admission.denied {
        Some(message) => writeln!(out, "Admission: denied: {message}")?,
        None if admission.changes_pod => writeln!(out, "Admission: allowed, the pod is changed")?,
        None => writeln!(out, "Admission: allowed, the pod is left as it is")?,
    }

    writeln!(out, "\nSidecarSets:")?;
    if report.sidecarsets.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for set in &report.sidecarsets {
        if set.injects {
            write!(out, "  {}: injects", set.name)?;
            if let Some(revision) = &set.revision {
                let registered = if revision.controller_revision.is_empty() {
                    "none registered yet"
                } else {
                    &revision.controller_revision
                };
                write!(out, " (revision {registered}; hash {})", revision.hash)?;
            }
            writeln!(out)?;
            if set.already_injected {
                writeln!(
                    out,
                    "      already injected: the pod's {} names it",
                    crate::api::keys::SIDECARSET_INJECTED_LIST
                )?;
            }
            if let Some(revision) = &set.revision
                && let Some(requested) = &revision.requested
            {
                writeln!(
                    out,
                    "      names {requested}: {}",
                    revision.why.as_deref().unwrap_or("")
                )?;
            }
            for added in &set.init_containers {
                writeln!(out, "      + init container {}", added_text(added))?;
            }
            for added in &set.containers {
                writeln!(out, "      + container {}", added_text(added))?;
            }
            for volume in &set.volumes {
                writeln!(out, "      + volume {volume}")?;
            }
        } else {
            writeln!(
                out,
                "  {}: does not inject: {} ({})",
                set.name,
                set.message.as_deref().unwrap_or(""),
                set.reason.as_deref().unwrap_or("")
            )?;
        }
    }

    let launch = &report.launch_priority;
    writeln!(out, "\nLaunch priority: {}", launch.reason)?;
    if let Some(barrier) = &launch.barrier {
        writeln!(out, "  barrier ConfigMap {barrier}")?;
    }
    for container in &launch.containers {
        write!(out, "  {}: priority {}", container.name, container.priority)?;
        if let Some(key) = &container.barrier_key {
            write!(out, ", waits for key {key}")?;
        }
        writeln!(out)?;
    }

    if !report.webhooks.is_empty() {
        writeln!(
            out,
            "\nWebhooks for objects in namespace {}:",
            report.namespace
        )?;
        for passage in &report.webhooks {
            let verdict = if passage.passes { "passes" } else { "skips " };
            let path = passage.path.as_deref().unwrap_or("");
            writeln!(
                out,
                "  {verdict} {} ({path}: {}): {}",
                passage.webhook,
                passage.rules.join("; "),
                passage.reason
            )?;
        }
    }
    if !report.notes.is_empty() {
        writeln!(out, "\nNotes:")?;
        for note in &report.notes {
            writeln!(out, "  {note}")?;
        }
    }
    Ok(())
}

fn added_text(added: &Added) -> String {
    let mut text = added.name.clone();
    if let Some(image) = &added.image {
        text.push_str(&format!(" ({image})"));
    }
    if added.replaces {
        text.push_str(", replacing the pod's container of that name");
    }
    text
}
