//! Self-managed certificates for running without a cluster-provided Secret: an ECDSA P-256 CA and a
//! serving certificate it signs, kept as PEM files in one directory.
//!
//! [`ensure_cert_dir`] is idempotent: files that are still good are reused byte for byte, so the CA
//! a client was told to trust stays the same across restarts. The directory is owned by this
//! function; anything in it that fails the checks below is replaced.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, SanType,
};
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::time::ASN1Time;

use super::reloader::{certified_key, unix_seconds_to_system_time};

pub const CA_CERT_FILE: &str = "ca.crt";
pub const CA_KEY_FILE: &str = "ca.key";
pub const CERT_FILE: &str = "tls.crt";
pub const KEY_FILE: &str = "tls.key";

/// Lifetime of a newly generated CA (at least three serving-certificate lifetimes).
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);
/// Certificates are renewed once less than a third of their lifetime is left, but no earlier than
/// this before expiry: a one-year certificate is renewed 30 days ahead, a one-day one after 16 h.
const MAX_RENEWAL_MARGIN: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// `notBefore` is backdated so a peer whose clock runs a little behind accepts a fresh certificate.
pub(crate) const CLOCK_SKEW_ALLOWANCE: Duration = Duration::from_secs(5 * 60);

const PRIVATE_FILE_MODE: u32 = 0o600;
const PUBLIC_FILE_MODE: u32 = 0o644;

/// Where the certificate files are, and how long the serving certificate lasts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    /// The CA certificate that signed `cert`: what clients (the webhook `caBundle`) must trust.
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// Expiry of the serving certificate.
    pub not_after: SystemTime,
    /// True when this call wrote a new serving certificate rather than reusing the existing one.
    pub issued: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("generating certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("a certificate valid until {0:?} after the Unix epoch cannot be encoded")]
    Validity(Duration),
}

/// Makes sure `dir` holds a CA (`ca.crt`, `ca.key`) and a serving certificate signed by it
/// (`tls.crt`, `tls.key`) whose SANs cover `localhost`, `127.0.0.1`, `::1` and the given names and
/// addresses, valid for at least another renewal margin.
///
/// Existing files are reused when they parse, the keys match, the serving certificate chains to
/// the CA and covers every requested name, and neither is close to expiry. Otherwise new files are
/// generated (reusing a still-good CA) and written atomically; key files get mode 0600.
pub fn ensure_cert_dir(
    dir: &Path,
    dns_names: &[String],
    ip_sans: &[IpAddr],
    valid_for: Duration,
) -> Result<CertFiles, CertError> {
    ensure_cert_dir_at(dir, dns_names, ip_sans, valid_for, SystemTime::now())
}

/// [`ensure_cert_dir`] with an explicit clock, so tests can produce expired files.
fn ensure_cert_dir_at(
    dir: &Path,
    dns_names: &[String],
    ip_sans: &[IpAddr],
    valid_for: Duration,
    now: SystemTime,
) -> Result<CertFiles, CertError> {
    fs::create_dir_all(dir).map_err(io_error("create directory", dir))?;
    let paths = Paths::in_dir(dir);
    let wanted = WantedNames::new(dns_names, ip_sans);

    let existing_ca = match load_ca(&paths, valid_for, now) {
        Ok(ca) => Some(ca),
        Err(reason) => {
            tracing::info!(dir = %dir.display(), %reason, "generating a new CA");
            None
        }
    };
    if let Some(ca) = &existing_ca {
        match check_serving_cert(&paths, ca, &wanted, now) {
            Ok(not_after) => return Ok(paths.into_cert_files(not_after, false)),
            Err(reason) => {
                tracing::info!(dir = %dir.display(), %reason, "issuing a new serving certificate");
            }
        }
    }

    let ca = match existing_ca {
        Some(ca) => ca,
        None => {
            let ca_lifetime = CA_LIFETIME.max(valid_for.saturating_mul(3));
            let (ca, ca_cert_pem, ca_key_pem) = generate_ca(now, ca_lifetime)?;
            write_atomically(&paths.ca_key, ca_key_pem.as_bytes(), PRIVATE_FILE_MODE)?;
            write_atomically(&paths.ca_cert, ca_cert_pem.as_bytes(), PUBLIC_FILE_MODE)?;
            ca
        }
    };
    let (cert_pem, key_pem, not_after) = issue_serving_cert(&ca, &wanted, valid_for, now)?;
    // Key first: a reader that sees the new certificate also finds its key.
    write_atomically(&paths.key, key_pem.as_bytes(), PRIVATE_FILE_MODE)?;
    write_atomically(&paths.cert, cert_pem.as_bytes(), PUBLIC_FILE_MODE)?;
    sync_dir(dir);
    Ok(paths.into_cert_files(not_after, true))
}

struct Paths {
    ca_cert: PathBuf,
    ca_key: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl Paths {
    fn in_dir(dir: &Path) -> Self {
        Paths {
            ca_cert: dir.join(CA_CERT_FILE),
            ca_key: dir.join(CA_KEY_FILE),
            cert: dir.join(CERT_FILE),
            key: dir.join(KEY_FILE),
        }
    }

    fn into_cert_files(self, not_after: SystemTime, issued: bool) -> CertFiles {
        CertFiles {
            ca: self.ca_cert,
            cert: self.cert,
            key: self.key,
            not_after,
            issued,
        }
    }
}

/// The SANs the serving certificate must carry: the loopback names plus what the caller asked for.
pub(crate) struct WantedNames {
    dns: BTreeSet<String>,
    ips: BTreeSet<IpAddr>,
}

impl WantedNames {
    pub(crate) fn new(dns_names: &[String], ip_sans: &[IpAddr]) -> Self {
        let mut dns = BTreeSet::from(["localhost".to_owned()]);
        let mut ips = BTreeSet::from([
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ]);
        ips.extend(ip_sans.iter().copied());
        for name in dns_names {
            // An address passed as a name becomes an IP SAN, as rcgen would encode it.
            match name.parse::<IpAddr>() {
                Ok(ip) => {
                    ips.insert(ip);
                }
                Err(_) => {
                    dns.insert(name.to_ascii_lowercase());
                }
            }
        }
        WantedNames { dns, ips }
    }

    fn san_types(&self) -> Result<Vec<SanType>, rcgen::Error> {
        let mut sans = Vec::with_capacity(self.dns.len() + self.ips.len());
        for name in &self.dns {
            sans.push(SanType::DnsName(name.clone().try_into()?));
        }
        sans.extend(self.ips.iter().copied().map(SanType::IpAddress));
        Ok(sans)
    }

    /// The first requested name that `cert` does not list, if any.
    fn first_missing(&self, cert: &X509Certificate<'_>) -> Option<String> {
        let mut dns = BTreeSet::new();
        let mut ips = BTreeSet::new();
        if let Ok(Some(san)) = cert.subject_alternative_name() {
            for name in &san.value.general_names {
                match name {
                    GeneralName::DNSName(name) => {
                        dns.insert(name.to_ascii_lowercase());
                    }
                    GeneralName::IPAddress(bytes) => {
                        if let Some(ip) = ip_from_bytes(bytes) {
                            ips.insert(ip);
                        }
                    }
                    _ => {}
                }
            }
        }
        let missing_dns = self.dns.iter().find(|name| !dns.contains(*name)).cloned();
        missing_dns.or_else(|| {
            self.ips
                .iter()
                .find(|ip| !ips.contains(*ip))
                .map(ToString::to_string)
        })
    }
}

fn ip_from_bytes(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

/// A CA able to sign serving certificates.
pub(crate) struct Ca {
    pub(crate) cert_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
    pub(crate) not_before: SystemTime,
    pub(crate) not_after: SystemTime,
}

/// Loads `ca.crt`/`ca.key`, or says why they cannot be reused.
fn load_ca(paths: &Paths, valid_for: Duration, now: SystemTime) -> Result<Ca, String> {
    let cert_pem = read_for_check(&paths.ca_cert)?;
    let key_pem = read_for_check(&paths.ca_key)?;
    let ca = parse_ca(&cert_pem, &key_pem)?;
    // The CA must outlive any serving certificate issued now.
    let outlives_new_leaf = now
        .checked_add(valid_for)
        .is_some_and(|leaf_not_after| ca.not_after >= leaf_not_after);
    if renewal_due(ca.not_before, ca.not_after, now) || !outlives_new_leaf {
        return Err(format!("{CA_CERT_FILE} expires too soon"));
    }
    Ok(ca)
}

/// Parses a CA certificate and its key (PEM), or says why they cannot sign.
pub(crate) fn parse_ca(cert_pem: &[u8], key_pem: &[u8]) -> Result<Ca, String> {
    let cert_der = CertificateDer::from_pem_slice(cert_pem)
        .map_err(|error| format!("{CA_CERT_FILE}: {error}"))?;
    let key_pem =
        std::str::from_utf8(key_pem).map_err(|_| format!("{CA_KEY_FILE} is not PEM text"))?;
    let key = KeyPair::from_pem(key_pem).map_err(|error| format!("{CA_KEY_FILE}: {error}"))?;

    let (_, parsed) = x509_parser::parse_x509_certificate(&cert_der)
        .map_err(|error| format!("{CA_CERT_FILE}: {error}"))?;
    if !parsed.is_ca() {
        return Err(format!("{CA_CERT_FILE} is not a CA certificate"));
    }
    if parsed.public_key().subject_public_key.data.as_ref() != key.public_key_raw() {
        return Err(format!("{CA_KEY_FILE} does not belong to {CA_CERT_FILE}"));
    }
    let (not_before, not_after) = validity(&parsed);
    let issuer = Issuer::from_ca_cert_der(&cert_der, key)
        .map_err(|error| format!("{CA_CERT_FILE}: {error}"))?;
    Ok(Ca {
        cert_der,
        issuer,
        not_before,
        not_after,
    })
}

/// Checks `tls.crt`/`tls.key` against `ca`; returns the expiry or why they cannot be reused.
fn check_serving_cert(
    paths: &Paths,
    ca: &Ca,
    wanted: &WantedNames,
    now: SystemTime,
) -> Result<SystemTime, String> {
    let cert_pem = read_for_check(&paths.cert)?;
    let key_pem = read_for_check(&paths.key)?;
    let (not_before, not_after) = check_leaf(&cert_pem, &key_pem, ca, wanted, now)?;
    if renewal_due(not_before, not_after, now) {
        return Err(format!("{CERT_FILE} is due for renewal"));
    }
    Ok(not_after)
}

/// Checks a serving certificate and key (PEM): the key belongs to the certificate, the certificate
/// chains to `ca` and is valid at `now`, and it covers every wanted name. Returns its validity
/// period or why it cannot be served.
pub(crate) fn check_leaf(
    cert_pem: &[u8],
    key_pem: &[u8],
    ca: &Ca,
    wanted: &WantedNames,
    now: SystemTime,
) -> Result<(SystemTime, SystemTime), String> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("{CERT_FILE}: {error}"))?;
    let key =
        PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| format!("{KEY_FILE}: {error}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    certified_key(chain.clone(), key, &provider).map_err(|error| error.to_string())?;

    let Some((leaf, intermediates)) = chain.split_first() else {
        return Err(format!("{CERT_FILE} holds no certificate"));
    };
    // Let webpki judge the chain, dates and usage exactly as a TLS client would.
    let mut roots = RootCertStore::empty();
    roots
        .add(ca.cert_der.clone())
        .map_err(|error| format!("{CA_CERT_FILE} is not a usable trust anchor: {error}"))?;
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|error| error.to_string())?;
    let since_epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    verifier
        .verify_server_cert(
            leaf,
            intermediates,
            &ServerName::try_from("localhost").map_err(|error| error.to_string())?,
            &[],
            UnixTime::since_unix_epoch(since_epoch),
        )
        .map_err(|error| format!("{CERT_FILE} does not verify against {CA_CERT_FILE}: {error}"))?;

    let (_, parsed) = x509_parser::parse_x509_certificate(leaf)
        .map_err(|error| format!("{CERT_FILE}: {error}"))?;
    if let Some(missing) = wanted.first_missing(&parsed) {
        return Err(format!("{CERT_FILE} does not cover {missing}"));
    }
    Ok(validity(&parsed))
}

fn read_for_check(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}

pub(crate) fn validity(cert: &X509Certificate<'_>) -> (SystemTime, SystemTime) {
    let validity = cert.validity();
    (
        unix_seconds_to_system_time(validity.not_before.timestamp()),
        unix_seconds_to_system_time(validity.not_after.timestamp()),
    )
}

fn renewal_due(not_before: SystemTime, not_after: SystemTime, now: SystemTime) -> bool {
    let lifetime = not_after.duration_since(not_before).unwrap_or_default();
    let margin = (lifetime / 3).min(MAX_RENEWAL_MARGIN);
    match not_after.duration_since(now) {
        Ok(left) => left < margin,
        Err(_) => true,
    }
}

/// Returns the CA plus its certificate and key as PEM. The subject names the creation time, so
/// two CAs published side by side during a rotation are told apart by people and tools alike.
pub(crate) fn generate_ca(
    now: SystemTime,
    lifetime: Duration,
) -> Result<(Ca, String, String), CertError> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::default();
    let created = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    params.distinguished_name = distinguished_name(&format!("kruise-webhook CA {created}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let not_after = set_validity(&mut params, now, lifetime)?;
    let not_before = now.checked_sub(CLOCK_SKEW_ALLOWANCE).unwrap_or(UNIX_EPOCH);
    let not_before = UNIX_EPOCH
        + Duration::from_secs(
            not_before
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
        );
    let cert = params.self_signed(&key)?;
    let cert_pem = cert.pem();
    let key_pem = key.serialize_pem();
    let ca = Ca {
        cert_der: cert.der().clone(),
        issuer: Issuer::new(params, key),
        not_before,
        not_after,
    };
    Ok((ca, cert_pem, key_pem))
}

/// Returns the serving certificate and key as PEM, and the certificate's expiry.
pub(crate) fn issue_serving_cert(
    ca: &Ca,
    wanted: &WantedNames,
    valid_for: Duration,
    now: SystemTime,
) -> Result<(String, String, SystemTime), CertError> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::default();
    params.distinguished_name = distinguished_name("kruise-webhook");
    params.subject_alt_names = wanted.san_types()?;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let not_after = set_validity(&mut params, now, valid_for)?;
    let cert = params.signed_by(&key, &ca.issuer)?;
    Ok((cert.pem(), key.serialize_pem(), not_after))
}

fn distinguished_name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

/// Sets `notBefore` (backdated by the skew allowance) and `notAfter = now + lifetime`, both whole
/// seconds as X.509 stores them; returns `notAfter`.
fn set_validity(
    params: &mut CertificateParams,
    now: SystemTime,
    lifetime: Duration,
) -> Result<SystemTime, CertError> {
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let not_before = now.saturating_sub(CLOCK_SKEW_ALLOWANCE);
    let not_after = now
        .checked_add(lifetime)
        .ok_or(CertError::Validity(lifetime))?;
    params.not_before = asn1_time(not_before)?.to_datetime();
    params.not_after = asn1_time(not_after)?.to_datetime();
    Ok(UNIX_EPOCH + Duration::from_secs(not_after.as_secs()))
}

/// rcgen wants `time::OffsetDateTime`; x509-parser's `ASN1Time` builds one from a Unix timestamp
/// without a direct dependency on the `time` crate.
fn asn1_time(since_epoch: Duration) -> Result<ASN1Time, CertError> {
    i64::try_from(since_epoch.as_secs())
        .ok()
        .and_then(|seconds| ASN1Time::from_timestamp(seconds).ok())
        .ok_or(CertError::Validity(since_epoch))
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CertError {
    let path = path.to_owned();
    move |source| CertError::Io {
        action,
        path,
        source,
    }
}

/// Writes `contents` to a temporary file next to `path` and renames it into place, so readers
/// (including a reloader polling the directory) never see a half-written file.
fn write_atomically(path: &Path, contents: &[u8], mode: u32) -> Result<(), CertError> {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp_path = path.with_file_name(format!(".{file_name}.tmp-{}", std::process::id()));
    // A leftover from a crashed run is removed rather than opened: it could be a symlink.
    match fs::remove_file(&temp_path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(source) => return Err(io_error("remove", &temp_path)(source)),
    }
    let result = write_new_file(&temp_path, contents, mode)
        .map_err(io_error("write", &temp_path))
        .and_then(|()| fs::rename(&temp_path, path).map_err(io_error("rename into", path)));
    if result.is_err() {
        let _ = fs::remove_file(&temp_path);
    }
    result
}

fn write_new_file(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// Best effort: persist the renames themselves.
fn sync_dir(dir: &Path) {
    if let Ok(dir) = fs::File::open(dir) {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests;
