//! SidecarSet hash and hash-without-image, bit-compatible with OpenKruise.
//!
//! Pods record these hashes in annotations and the SidecarSet controller compares them, so they
//! must equal what OpenKruise computes: SHA-256 of Go's JSON for `{"containers": [...]}` (plus
//! `"initContainers"` when a native sidecar exists), hex digits then mapped onto Kubernetes'
//! "safe" alphabet. The JSON comes from [`crate::k8s::gojson`].

use sha2::{Digest, Sha256};

use crate::api::{SidecarContainer, SidecarSetSpec};

use crate::k8s::gojson;

/// Kubernetes' `rand.SafeEncodeString` alphabet (no vowels, no look-alike digits).
const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// The `kruise.io/sidecarset-hash` of a (defaulted) SidecarSet spec.
pub fn sidecarset_hash(spec: &SidecarSetSpec) -> String {
    safe_sha256(&hash_input(spec))
}

/// The `kruise.io/sidecarset-hash-without-image`: as [`sidecarset_hash`] with every image blanked,
/// so that it changes only when something other than an image changes.
pub fn sidecarset_hash_without_image(spec: &SidecarSetSpec) -> String {
    safe_sha256(&hash_input_without_image(spec))
}

/// The exact JSON [`sidecarset_hash`] digests.
pub fn hash_input(spec: &SidecarSetSpec) -> String {
    encode_hashed_containers(spec.containers.as_deref(), spec.init_containers.as_deref())
}

/// The exact JSON [`sidecarset_hash_without_image`] digests.
pub fn hash_input_without_image(spec: &SidecarSetSpec) -> String {
    let containers = spec.containers.as_deref().map(without_images);
    let init_containers = spec.init_containers.as_deref().map(without_images);
    encode_hashed_containers(containers.as_deref(), init_containers.as_deref())
}

fn without_images(containers: &[SidecarContainer]) -> Vec<SidecarContainer> {
    containers
        .iter()
        .cloned()
        .map(|mut c| {
            // Go sets "" which omitempty then leaves out; None encodes identically.
            c.container.image = None;
            c
        })
        .collect()
}

/// Go marshals `map[string]interface{}`, keys sorted: `containers` (null when nil), then
/// `initContainers` only when a native sidecar exists, so that plain init containers never move
/// the hash (they are not upgraded in place).
fn encode_hashed_containers(
    containers: Option<&[SidecarContainer]>,
    init_containers: Option<&[SidecarContainer]>,
) -> String {
    let mut out = String::from(r#"{"containers":"#);
    gojson::write_sidecar_containers(&mut out, containers);
    let has_native_sidecar = init_containers
        .unwrap_or_default()
        .iter()
        .any(SidecarContainer::is_native_sidecar);
    if has_native_sidecar {
        out.push_str(r#","initContainers":"#);
        gojson::write_sidecar_containers(&mut out, init_containers);
    }
    out.push('}');
    out
}

/// SHA-256 as lower-case hex, each hex digit then replaced by `SAFE_ALPHABET[byte % 27]`.
fn safe_sha256(input: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(input.as_bytes());
    let safe = |nibble: u8| {
        let hex_digit = HEX[usize::from(nibble)];
        char::from(SAFE_ALPHABET[usize::from(hex_digit) % SAFE_ALPHABET.len()])
    };
    digest
        .iter()
        .flat_map(|byte| [safe(byte >> 4), safe(byte & 0x0f)])
        .collect()
}

#[cfg(test)]
mod tests;
