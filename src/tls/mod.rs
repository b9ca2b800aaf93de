//! Certificates for the admission port: generating a local CA and serving certificate
//! ([`certgen`]), deciding what the certificate Secret must hold ([`secret_plan`]), the `certs`
//! job and the `caBundle` check that apply that plan in the cluster ([`rotation_job`]; what it
//! writes into the webhook configurations and CRDs: [`bundle_targets`]), and
//! serving a certificate that is reloaded from disk while the server runs ([`reloader`]).

pub mod bundle_targets;
pub mod certgen;
pub mod reloader;
pub mod rotation_job;
pub mod secret_plan;
pub mod trust;

pub use certgen::{CertError, CertFiles, ensure_cert_dir};
pub use reloader::{LoadError, ReloadableCert, server_config, spawn_reloader};
