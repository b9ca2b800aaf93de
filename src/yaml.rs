//! YAML in and out, read the way YAML 1.2's core schema reads it: only `true`/`false` are
//! booleans (a container named `n` or a label value `yes` stays a string), and `0755` or `1_000`
//! in an untyped value stay strings. This is how SidecarSet files and `inject` input were read
//! before, and what a manifest written for `kubectl` means by them.

use serde::{Deserialize, Serialize};

pub use serde_saphyr::{Error, SerializeError};

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    }
}

/// One YAML document (JSON is YAML too).
pub fn from_str<'de, T: Deserialize<'de>>(input: &'de str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(input, options())
}

/// Every document of a `---`-separated stream, in order.
pub fn from_multiple<'de, T: Deserialize<'de>>(input: &'de str) -> Result<Vec<T>, Error> {
    serde_saphyr::from_multiple_with_options(input, options())
}

/// One document.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, SerializeError> {
    serde_saphyr::to_string(value)
}

#[cfg(test)]
mod tests;
