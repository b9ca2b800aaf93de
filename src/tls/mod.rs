//! Certificates for the admission port: generating a local CA and serving certificate
//! ([`certgen`]), deciding what the certificate Secret must hold ([`rotation`]), and serving a certificate that can be swapped at runtime ([`resolver`]).

pub mod certgen;
pub mod resolver;
pub mod rotation;
pub mod trust;

pub use certgen::{CertError, CertFiles, ensure_cert_dir};
pub use resolver::{LoadError, ReloadableCert, server_config, spawn_reloader};
