//! The switch from a running OpenKruise, `kruise-webhook migrate`: what it reads
//! ([`read`], into [`plan::Snapshot`]), what it finds and the ordered steps it would take
//! ([`plan::plan`], pure), this project's CRDs next to the cluster's ([`crd`], pure), and the
//! steps taken with `--apply` ([`apply`]); [`command`] ties them together.

pub mod apply;
pub mod command;
pub mod crd;
pub mod plan;
pub mod read;
