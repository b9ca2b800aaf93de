//! What the integration tests share with the unit tests: the SidecarSet test builder.

// The builder names the API types as `super::…`.
use kruise_webhook::api::*;

// Each test crate uses only part of the builder.
#[allow(dead_code)]
#[path = "../../src/api/sidecarset_builder.rs"]
mod sidecarset_builder;

pub use sidecarset_builder::SidecarSetBuilder;
