//! A hot-swappable serving certificate for rustls, and a poller that reloads it from disk.
//!
//! Each TLS handshake asks [`ReloadableCert`] for the current certificate, so a swap is seen by the
//! next new connection while open keep-alive connections finish with the certificate they started
//! with. A pair that does not parse, whose key does not match, or that has expired is refused and
//! the old one stays in place.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

/// Why a certificate/key pair was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("certificate PEM is malformed: {0}")]
    CertificatePem(#[source] pem::Error),
    #[error("certificate PEM holds no CERTIFICATE block")]
    NoCertificate,
    #[error("private key PEM is malformed or holds no private key: {0}")]
    KeyPem(#[source] pem::Error),
    #[error("private key is not usable for TLS: {0}")]
    UnsupportedKey(#[source] rustls::Error),
    #[error("private key does not belong to the certificate: {0}")]
    KeyMismatch(#[source] rustls::Error),
    #[error("certificate is not valid X.509: {0}")]
    InvalidCertificate(String),
    #[error("certificate expired at {not_after}")]
    Expired { not_after: String },
}

/// The certificate being served plus what we need to know about it without re-parsing.
struct ServingCert {
    certified_key: Arc<CertifiedKey>,
    not_after: SystemTime,
    /// SHA-256 of the PEM input, so pollers can tell "same files" without keeping key bytes around.
    source_digest: [u8; 32],
}

/// A [`ResolvesServerCert`] whose certificate can be replaced while the server runs.
pub struct ReloadableCert {
    current: ArcSwap<ServingCert>,
}

impl fmt::Debug for ReloadableCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadableCert")
            .field("not_after", &self.not_after())
            .finish_non_exhaustive()
    }
}

impl ReloadableCert {
    /// Builds the certificate to serve from a PEM certificate chain (leaf first) and a PEM key.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Self, LoadError> {
        let serving = parse_pair(cert_pem, key_pem, SystemTime::now())?;
        Ok(Self {
            current: ArcSwap::from_pointee(serving),
        })
    }

    pub fn from_files(cert_path: &Path, key_path: &Path) -> Result<Self, LoadError> {
        let (cert_pem, key_pem) = read_pair(cert_path, key_path)?;
        Self::from_pem(&cert_pem, &key_pem)
    }

    /// Swaps in a new pair; on error the current certificate is kept. Returns the new expiry.
    pub fn reload_from_pem(
        &self,
        cert_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<SystemTime, LoadError> {
        let serving = parse_pair(cert_pem, key_pem, SystemTime::now())?;
        let not_after = serving.not_after;
        self.current.store(Arc::new(serving));
        Ok(not_after)
    }

    /// Reads both files and swaps them in; on error the current certificate is kept.
    pub fn reload_from_files(
        &self,
        cert_path: &Path,
        key_path: &Path,
    ) -> Result<SystemTime, LoadError> {
        let (cert_pem, key_pem) = read_pair(cert_path, key_path)?;
        self.reload_from_pem(&cert_pem, &key_pem)
    }

    /// Expiry of the certificate currently served.
    pub fn not_after(&self) -> SystemTime {
        self.current.load().not_after
    }

    /// The certificate and key currently handed to new handshakes.
    pub fn current(&self) -> Arc<CertifiedKey> {
        self.current.load().certified_key.clone()
    }

    /// True when these PEM bytes are exactly what is being served.
    pub fn is_serving(&self, cert_pem: &[u8], key_pem: &[u8]) -> bool {
        self.current.load().source_digest == source_digest(cert_pem, key_pem)
    }
}

impl ResolvesServerCert for ReloadableCert {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// The single TLS configuration of the admission port: TLS 1.3 and 1.2, ALPN `h2` then `http/1.1`
/// (the apiserver speaks HTTP/1.1), no client certificates, the ring provider named explicitly so
/// it does not depend on a process-wide default.
pub fn server_config(resolver: Arc<ReloadableCert>) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        // Only fails if the provider lacks cipher suites for a version; ring has both.
        .expect("the ring provider supports TLS 1.2 and TLS 1.3")
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Polls `cert_path`/`key_path` every `interval` and swaps the certificate `serving` holds when their
/// contents change. Swaps are logged at info, refusals at warn; `on_reload` is for metrics.
///
/// Polling with a content compare is deliberate: Kubernetes updates Secret volumes by swapping a
/// `..data` symlink, which per-file inotify watches miss. `on_reload` gets `Ok(not_after)` after a
/// swap and `Err` when the files are unreadable or the pair is refused. A failure is reported only
/// if it is still there on the next poll (a writer that replaces key and cert one after the other
/// briefly leaves a mismatched pair), and only once per distinct content. A zero `interval`
/// disables polling; the task then only waits for `shutdown`.
pub fn spawn_reloader<F>(
    serving: Arc<ReloadableCert>,
    cert_path: PathBuf,
    key_path: PathBuf,
    interval: Duration,
    shutdown: CancellationToken,
    on_reload: F,
) -> JoinHandle<()>
where
    F: Fn(Result<SystemTime, LoadError>) + Send + 'static,
{
    tokio::spawn(async move {
        if interval.is_zero() {
            shutdown.cancelled().await;
            return;
        }
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut last_failure: Option<Failure> = None;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let files = tokio::join!(tokio::fs::read(&cert_path), tokio::fs::read(&key_path));
            let outcome = match files {
                (Ok(cert_pem), Ok(key_pem)) => {
                    try_reload(&serving, &cert_pem, &key_pem, &mut last_failure)
                }
                (Err(source), _) => {
                    note_failure(&mut last_failure, None, read_error(&cert_path, source))
                }
                (_, Err(source)) => {
                    note_failure(&mut last_failure, None, read_error(&key_path, source))
                }
            };
            match &outcome {
                Some(Ok(_)) => {
                    tracing::info!(cert = %cert_path.display(), "serving certificate reloaded");
                }
                Some(Err(error)) => tracing::warn!(
                    cert = %cert_path.display(),
                    %error,
                    "new certificate files refused; keeping the current certificate"
                ),
                None => {}
            }
            if let Some(outcome) = outcome {
                on_reload(outcome);
            }
        }
    })
}

/// A failed poll: which content failed (`None` = the files could not be read), and whether the
/// failure has been reported yet.
struct Failure {
    content: Option<[u8; 32]>,
    reported: bool,
}

fn try_reload(
    serving: &ReloadableCert,
    cert_pem: &[u8],
    key_pem: &[u8],
    last_failure: &mut Option<Failure>,
) -> Option<Result<SystemTime, LoadError>> {
    if serving.is_serving(cert_pem, key_pem) {
        *last_failure = None;
        return None;
    }
    match serving.reload_from_pem(cert_pem, key_pem) {
        Ok(not_after) => {
            *last_failure = None;
            Some(Ok(not_after))
        }
        Err(error) => note_failure(last_failure, Some(source_digest(cert_pem, key_pem)), error),
    }
}

fn note_failure(
    last_failure: &mut Option<Failure>,
    content: Option<[u8; 32]>,
    error: LoadError,
) -> Option<Result<SystemTime, LoadError>> {
    match last_failure {
        Some(failure) if failure.content == content => {
            if failure.reported {
                None
            } else {
                failure.reported = true;
                Some(Err(error))
            }
        }
        _ => {
            *last_failure = Some(Failure {
                content,
                reported: false,
            });
            None
        }
    }
}

fn read_error(path: &Path, source: io::Error) -> LoadError {
    LoadError::Read {
        path: path.to_owned(),
        source,
    }
}

fn read_pair(cert_path: &Path, key_path: &Path) -> Result<(Vec<u8>, Vec<u8>), LoadError> {
    let cert_pem = std::fs::read(cert_path).map_err(|source| read_error(cert_path, source))?;
    let key_pem = std::fs::read(key_path).map_err(|source| read_error(key_path, source))?;
    Ok((cert_pem, key_pem))
}

fn source_digest(cert_pem: &[u8], key_pem: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    // Length prefix so moving bytes between the two inputs changes the digest.
    hasher.update((cert_pem.len() as u64).to_be_bytes());
    hasher.update(cert_pem);
    hasher.update(key_pem);
    hasher.finalize().into()
}

fn parse_pair(cert_pem: &[u8], key_pem: &[u8], now: SystemTime) -> Result<ServingCert, LoadError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(LoadError::CertificatePem)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(LoadError::KeyPem)?;
    let certified_key = certified_key(chain, key, &rustls::crypto::ring::default_provider())?;
    let not_after = leaf_not_after(&certified_key, now)?;
    Ok(ServingCert {
        certified_key: Arc::new(certified_key),
        not_after,
        source_digest: source_digest(cert_pem, key_pem),
    })
}

/// Loads the key with `provider` and checks that it belongs to the leaf certificate.
pub(crate) fn certified_key(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, LoadError> {
    if chain.is_empty() {
        return Err(LoadError::NoCertificate);
    }
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .map_err(LoadError::UnsupportedKey)?;
    let certified_key = CertifiedKey::new(chain, signing_key);
    match certified_key.keys_match() {
        // `Unknown` means the key type cannot expose its public half; rustls accepts that too.
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified_key)
        }
        Err(error) => Err(LoadError::KeyMismatch(error)),
    }
}

fn leaf_not_after(certified_key: &CertifiedKey, now: SystemTime) -> Result<SystemTime, LoadError> {
    let leaf = certified_key
        .end_entity_cert()
        .map_err(|error| LoadError::InvalidCertificate(error.to_string()))?;
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf)
        .map_err(|error| LoadError::InvalidCertificate(error.to_string()))?;
    let not_after_asn1 = parsed.validity().not_after;
    let not_after = unix_seconds_to_system_time(not_after_asn1.timestamp());
    if not_after <= now {
        return Err(LoadError::Expired {
            not_after: not_after_asn1.to_string(),
        });
    }
    Ok(not_after)
}

pub(crate) fn unix_seconds_to_system_time(seconds: i64) -> SystemTime {
    match u64::try_from(seconds) {
        Ok(seconds) => UNIX_EPOCH + Duration::from_secs(seconds),
        Err(_) => UNIX_EPOCH,
    }
}

#[cfg(test)]
mod tests;
