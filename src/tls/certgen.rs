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

use super::resolver::{certified_key, unix_seconds_to_system_time};

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
mod tests {
    use super::*;
    use crate::tls::resolver::ReloadableCert;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    struct Snapshot {
        ca_cert: Vec<u8>,
        ca_key: Vec<u8>,
        cert: Vec<u8>,
        key: Vec<u8>,
    }

    fn snapshot(dir: &Path) -> Snapshot {
        let read = |name: &str| fs::read(dir.join(name)).unwrap();
        Snapshot {
            ca_cert: read(CA_CERT_FILE),
            ca_key: read(CA_KEY_FILE),
            cert: read(CERT_FILE),
            key: read(KEY_FILE),
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    fn sans_of(cert_path: &Path) -> Vec<String> {
        let der = CertificateDer::from_pem_file(cert_path).unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        let san = cert.subject_alternative_name().unwrap().unwrap();
        san.value
            .general_names
            .iter()
            .map(|name| match name {
                GeneralName::DNSName(name) => (*name).to_owned(),
                GeneralName::IPAddress(bytes) => ip_from_bytes(bytes).unwrap().to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// The serving certificate must verify against the CA written next to it.
    fn assert_chains_to_ca(files: &CertFiles, name: &str) {
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(&files.ca).unwrap())
            .unwrap();
        let verifier = WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let leaf = CertificateDer::from_pem_file(&files.cert).unwrap();
        verifier
            .verify_server_cert(
                &leaf,
                &[],
                &ServerName::try_from(name.to_owned()).unwrap(),
                &[],
                UnixTime::now(),
            )
            .unwrap();
    }

    #[test]
    fn generates_ca_and_serving_cert_with_requested_sans() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("nested/certs");
        let ip: IpAddr = "10.0.0.7".parse().unwrap();
        let files = ensure_cert_dir(
            &dir,
            &names(&["webhook.kruise-system.svc", "Webhook.Example"]),
            &[ip],
            30 * DAY,
        )
        .unwrap();

        assert!(files.issued);
        assert_eq!(files.cert, dir.join(CERT_FILE));
        let sans = sans_of(&files.cert);
        for expected in [
            "localhost",
            "webhook.kruise-system.svc",
            "webhook.example",
            "127.0.0.1",
            "::1",
            "10.0.0.7",
        ] {
            assert!(
                sans.iter().any(|san| san == expected),
                "{expected} missing from {sans:?}"
            );
        }
        let left = files.not_after.duration_since(SystemTime::now()).unwrap();
        assert!(left > 29 * DAY && left <= 30 * DAY, "{left:?}");

        assert_chains_to_ca(&files, "webhook.kruise-system.svc");
        assert_chains_to_ca(&files, "127.0.0.1");
        // The written pair loads into the TLS resolver with the same expiry.
        let resolver = ReloadableCert::from_files(&files.cert, &files.key).unwrap();
        assert_eq!(resolver.not_after(), files.not_after);

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&files.key), 0o600);
            assert_eq!(mode(&dir.join(CA_KEY_FILE)), 0o600);
            assert_eq!(mode(&files.cert), 0o644);
        }
        // No temporary files left behind.
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .filter(|name| name.to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn reuses_good_files_byte_for_byte() {
        let temp = tempfile::tempdir().unwrap();
        let dns = names(&["svc.example"]);
        let first = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
        let before = snapshot(temp.path());

        let second = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
        assert!(!second.issued);
        assert_eq!(second.not_after, first.not_after);
        let after = snapshot(temp.path());
        assert_eq!(after.ca_cert, before.ca_cert);
        assert_eq!(after.ca_key, before.ca_key);
        assert_eq!(after.cert, before.cert);
        assert_eq!(after.key, before.key);

        // A subset of the names (and the implicit loopback ones) is still covered.
        let third = ensure_cert_dir(temp.path(), &names(&["localhost"]), &[], 30 * DAY).unwrap();
        assert!(!third.issued);
    }

    #[test]
    fn renews_expired_or_nearly_expired_serving_cert_but_keeps_the_ca() {
        let temp = tempfile::tempdir().unwrap();
        let dns = names(&["svc.example"]);
        // Issued 40 days ago for 30 days: expired now.
        ensure_cert_dir_at(
            temp.path(),
            &dns,
            &[],
            30 * DAY,
            SystemTime::now() - 40 * DAY,
        )
        .unwrap();
        let before = snapshot(temp.path());

        let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
        assert!(files.issued);
        let after = snapshot(temp.path());
        assert_eq!(after.ca_cert, before.ca_cert, "a still-valid CA is reused");
        assert_eq!(after.ca_key, before.ca_key);
        assert_ne!(after.cert, before.cert);
        assert_ne!(after.key, before.key);
        assert_chains_to_ca(&files, "svc.example");

        // Issued 25 days ago for 30 days: valid, but under a third of its life is left.
        let temp = tempfile::tempdir().unwrap();
        ensure_cert_dir_at(
            temp.path(),
            &dns,
            &[],
            30 * DAY,
            SystemTime::now() - 25 * DAY,
        )
        .unwrap();
        let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
        assert!(files.issued);

        // Issued 5 days ago for 30 days: reused.
        let temp = tempfile::tempdir().unwrap();
        ensure_cert_dir_at(
            temp.path(),
            &dns,
            &[],
            30 * DAY,
            SystemTime::now() - 5 * DAY,
        )
        .unwrap();
        let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
        assert!(!files.issued);
    }

    #[test]
    fn reissues_when_the_key_does_not_match() {
        let temp = tempfile::tempdir().unwrap();
        ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        let before = snapshot(temp.path());
        let stray_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        fs::write(temp.path().join(KEY_FILE), stray_key.serialize_pem()).unwrap();

        let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        assert!(files.issued);
        let after = snapshot(temp.path());
        assert_eq!(after.ca_cert, before.ca_cert);
        assert_ne!(after.cert, before.cert);
        ReloadableCert::from_files(&files.cert, &files.key).unwrap();
    }

    #[test]
    fn reissues_when_a_requested_san_is_missing() {
        let temp = tempfile::tempdir().unwrap();
        ensure_cert_dir(temp.path(), &names(&["a.example"]), &[], 30 * DAY).unwrap();
        let before = snapshot(temp.path());

        let extra_ip: IpAddr = "192.0.2.1".parse().unwrap();
        let files = ensure_cert_dir(
            temp.path(),
            &names(&["a.example", "b.example"]),
            &[],
            30 * DAY,
        )
        .unwrap();
        assert!(files.issued);
        assert!(sans_of(&files.cert).contains(&"b.example".to_owned()));
        let files =
            ensure_cert_dir(temp.path(), &names(&["a.example"]), &[extra_ip], 30 * DAY).unwrap();
        assert!(files.issued);
        assert!(sans_of(&files.cert).contains(&"192.0.2.1".to_owned()));
        assert_eq!(snapshot(temp.path()).ca_cert, before.ca_cert);
    }

    #[test]
    fn regenerates_everything_when_the_ca_is_gone_or_broken() {
        let temp = tempfile::tempdir().unwrap();
        ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        let before = snapshot(temp.path());

        // A serving cert signed by a CA that is no longer there must not be reused.
        fs::remove_file(temp.path().join(CA_CERT_FILE)).unwrap();
        fs::remove_file(temp.path().join(CA_KEY_FILE)).unwrap();
        let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        assert!(files.issued);
        let after = snapshot(temp.path());
        assert_ne!(after.ca_cert, before.ca_cert);
        assert_ne!(after.cert, before.cert);
        assert_chains_to_ca(&files, "localhost");

        // A CA key that does not belong to the CA certificate.
        let stray_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        fs::write(temp.path().join(CA_KEY_FILE), stray_key.serialize_pem()).unwrap();
        let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        assert!(files.issued);
        assert_ne!(snapshot(temp.path()).ca_cert, after.ca_cert);
        assert_chains_to_ca(&files, "localhost");

        // Garbage in the serving cert.
        fs::write(temp.path().join(CERT_FILE), b"garbage").unwrap();
        let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
        assert!(files.issued);
        assert_chains_to_ca(&files, "localhost");
    }

    #[test]
    fn unusable_input_is_an_error_not_a_panic() {
        let temp = tempfile::tempdir().unwrap();
        let result = ensure_cert_dir(temp.path(), &[], &[], Duration::MAX);
        assert!(matches!(result, Err(CertError::Validity(_))), "{result:?}");

        let result = ensure_cert_dir(temp.path(), &names(&["bücher.example"]), &[], 30 * DAY);
        assert!(matches!(result, Err(CertError::Generate(_))), "{result:?}");

        let file = temp.path().join("not-a-dir");
        fs::write(&file, b"").unwrap();
        let result = ensure_cert_dir(&file, &[], &[], 30 * DAY);
        assert!(matches!(result, Err(CertError::Io { .. })), "{result:?}");
    }

    #[test]
    fn renewal_margin_is_a_third_of_the_lifetime_capped_at_30_days() {
        let start = UNIX_EPOCH + 1000 * DAY;
        // 3-day certificate: renew in its last day.
        assert!(!renewal_due(
            start,
            start + 3 * DAY,
            start + 2 * DAY - Duration::from_secs(1)
        ));
        assert!(renewal_due(
            start,
            start + 3 * DAY,
            start + 2 * DAY + Duration::from_secs(1)
        ));
        // 1-year certificate: renew in its last 30 days.
        assert!(!renewal_due(start, start + 365 * DAY, start + 334 * DAY));
        assert!(renewal_due(start, start + 365 * DAY, start + 336 * DAY));
        // Expired.
        assert!(renewal_due(start, start + DAY, start + 2 * DAY));
    }
}
