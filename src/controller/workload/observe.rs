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

use super::{Context, controlling, pvc_key};
use crate::controller::expectations::Told;
use crate::controller::pod_cache;
use crate::podmarks::PodView;

/// What an event of the object `event` tells, `held` being what the store holds of its name.
pub fn told(event: &ObjectMeta, held: Option<&ObjectMeta>) -> Told {
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

/// An event of `pvc`, heard on the PVC watch behind `held`, for the workloads of kind `K` whose
/// PVC it is (`owners`).
pub fn pvc_event<K, P>(context: &Context, owners: &[ObjectRef<K>], held: &Store<P>, pvc: &P)
where
    K: Resource<DynamicType = ()>,
    P: Resource<DynamicType = ()> + Clone,
{
    let event = pvc.meta();
    let cached = held.get(&ObjectRef::from_obj(pvc));
    let told = told(event, cached.as_deref().map(Resource::meta));
    let name = pvc_key(event.name.as_deref().unwrap_or(""));
    for owner in owners {
        observe(context, owner, &name, told);
    }
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
