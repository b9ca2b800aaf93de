//! One decoded object held by several stores.
//!
//! kube-runtime's reflector store keeps its own copy of every object it is given. A process that
//! keeps the same objects in a second structure (the SidecarSet catalogue beside the SidecarSet
//! controller's store) would hold each twice: at 50,000 SidecarSets, 250 MB more. A store of
//! [`Shared<K>`] holds a pointer to the one copy instead; cloning it clones the pointer.

use std::ops::Deref;
use std::sync::Arc;

use kube::Resource;
use kube::api::ObjectMeta;
use serde::{Deserialize, Deserializer};

/// An object of kind `K`, shared: a clone is another pointer to the same object.
#[derive(Debug, PartialEq)]
pub struct Shared<K>(Arc<K>);

impl<K> Shared<K> {
    /// The pointer to the object, for a holder that keeps `Arc<K>`.
    pub fn arc(&self) -> &Arc<K> {
        &self.0
    }
}

impl<K> Clone for Shared<K> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<K> From<K> for Shared<K> {
    fn from(object: K) -> Self {
        Shared(Arc::new(object))
    }
}

impl<K> From<Arc<K>> for Shared<K> {
    fn from(object: Arc<K>) -> Self {
        Shared(object)
    }
}

impl<K> Deref for Shared<K> {
    type Target = K;

    fn deref(&self) -> &K {
        &self.0
    }
}

impl<'de, K: Deserialize<'de>> Deserialize<'de> for Shared<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        K::deserialize(deserializer).map(Shared::from)
    }
}

impl<K: Resource + Clone> Resource for Shared<K> {
    super::kind_of!(K);

    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }

    /// Copies the object first if another holder shares it: the others keep what they hold.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        Arc::make_mut(&mut self.0).meta_mut()
    }
}

#[cfg(test)]
mod tests;
