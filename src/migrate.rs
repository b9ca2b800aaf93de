//! The switch from a running OpenKruise: what `kruise-webhook migrate` reads ([`plan::Snapshot`]),
//! what it finds and the ordered steps it would take ([`plan::plan`], pure), and the shell that
//! reads the cluster and applies the steps with `--apply` (to come).

pub mod plan;
