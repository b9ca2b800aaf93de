//! The ground floor: Kubernetes and Go-compatibility helpers that every other module may use.
//! Nothing here knows about injection, rollouts, validation or I/O; it imports only the wire
//! types and keys of [`crate::api`]. [`retry`] is the one conflict-retry loop every shell uses.

pub mod event;
pub mod go_text;
pub mod gojson;
pub mod history;
pub mod intstr;
pub mod lenient;
pub mod names;
pub mod owner;
pub mod pod;
pub mod quantity;
pub mod retry;
pub mod selector;
pub mod shared;

/// The type-level half of a [`kube::Resource`] impl for a wrapper of `K` (its kind, group,
/// version, plural and scope are `K`'s): [`lenient::Lenient`] and [`shared::Shared`].
macro_rules! kind_of {
    ($inner:ident) => {
        type DynamicType = $inner::DynamicType;
        type Scope = $inner::Scope;

        fn kind(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
            $inner::kind(dt)
        }

        fn group(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
            $inner::group(dt)
        }

        fn version(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
            $inner::version(dt)
        }

        fn api_version(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
            $inner::api_version(dt)
        }

        fn plural(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
            $inner::plural(dt)
        }
    };
}
use kind_of;
