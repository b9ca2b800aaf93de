//! Tests of the SidecarSet sources, and the catalogues the sources' tests share.

use super::*;

mod candidates;
pub(crate) mod catalogues;
