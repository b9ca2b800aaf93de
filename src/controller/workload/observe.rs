//! Pod and PVC events observe a workload's expectations. The cache alone cannot
//! tell of an object created and deleted between two rounds: it shows nothing, as before the
//! create. The event streams do not say which kind of event they carry, but each store already
//! holds the outcome of the event it passes on: an object it no longer holds (or holds under
//! another uid) was deleted, and the held object is at least as new as the event's, so its
//! deletionTimestamp counts.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use super::{Context, PvcMeta, controlling, pvc_key};
use crate::controller::expectations::Told;
use crate::controller::pod_cache;
use crate::podmarks::PodView;

/// What an event of the object `event` tells, `held` being what the store holds of its name.
fn told(event: &ObjectMeta, held: Option<&ObjectMeta>) -> Told {
    match held {
        Some(held) if held.uid == event.uid => {
            if held.deletion_timestamp.is_some() {
                Told::Deleting
            } else {
                Told::Exists
            }
        }
        _ => Told::Deleted,
    }
}

/// An event of `pod`, heard on the pod subscription (deletions included), for the workload of
/// kind `K` that controls it.
pub fn pod_event<K: Resource<DynamicType = ()>>(context: &Context, pod: &Pod) {
    let Some(owner) = controlling::<K>(&pod.metadata) else {
        return;
    };
    // Every pod has a summary; only some are held whole.
    let held = context.summaries.get(&pod_cache::store_key(pod));
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let told = match held {
        Some(held) if held.uid() == uid && held.deleting() => Told::Deleting,
        Some(held) if held.uid() == uid => Told::Exists,
        _ => Told::Deleted,
    };
    observe(context, &owner, &pod.name_any(), told);
}

/// An event of `claim`, heard on the PVC watch behind `claims`.
pub fn claim_event<K: Resource<DynamicType = ()>>(
    context: &Context,
    claims: &Store<PvcMeta>,
    claim: &PvcMeta,
) {
    let Some(owner) = controlling::<K>(&claim.metadata) else {
        return;
    };
    let name = claim.name_any();
    let namespace = claim.metadata.namespace.as_deref().unwrap_or("");
    let held = claims.get(&ObjectRef::new(&name).within(namespace));
    let told = told(&claim.metadata, held.as_deref().map(|c| &c.metadata));
    observe(context, &owner, &pvc_key(&name), told);
}

fn observe<K: Resource<DynamicType = ()>>(
    context: &Context,
    owner: &ObjectRef<K>,
    name: &str,
    told: Told,
) {
    let key = format!(
        "{}/{}",
        owner.namespace.as_deref().unwrap_or(""),
        owner.name
    );
    context.lock_expectations().observe(&key, name, told);
}
