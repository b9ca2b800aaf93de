//! OpenKruise's deletion protection of Kubernetes' own objects, on DELETE: `/validate-namespace`,
//! `/validate-customresourcedefinition`, `/validate-apps-deployment`, `/validate-apps-replicaset`,
//! `/validate-apps-statefulset`, `/validate-service`, `/validate-ingress`. The decision is
//! [`crate::validate::deletion`]'s; this shell decodes the deleted object and, for `Cascading` on
//! a Namespace or a CRD only, counts what the decision needs ([`ClusterReads`]).
//!
//! The counts are read live, on demand, never cached: such deletions are rare, and a cache of every
//! pod and custom object of the cluster would cost each replica memory and a watch for a decision it
//! almost never makes. Each count is bounded so that a slow apiserver cannot make these webhooks
//! slow: at most [`CONCURRENT_COUNTS`] at once (the others wait for a turn within the same
//! deadline), each done within [`COUNT_DEADLINE`] or refused. Reads are metadata-only where the
//! decision needs no more, in pages. A count that fails refuses the deletion, as OpenKruise does:
//! the protection holds while it cannot be checked. Every other request, and every deletion without
//! `Cascading`, is answered from the request alone.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client};
use serde::Deserialize;
use tokio::sync::Semaphore;

use super::review::{AdmissionResponse, RequestEnvelope, decode_object};
use crate::validate::deletion::{
    CustomResources, Guarded, NamespaceContents, UNFINISHED_PODS, Verdict,
    custom_resources_refusal, is_bound_claim, namespace_refusal, verdict,
};

pub const PATH_VALIDATE_NAMESPACE: &str = "/validate-namespace";
pub const PATH_VALIDATE_CUSTOMRESOURCEDEFINITION: &str = "/validate-customresourcedefinition";
pub const PATH_VALIDATE_APPS_DEPLOYMENT: &str = "/validate-apps-deployment";
pub const PATH_VALIDATE_APPS_REPLICASET: &str = "/validate-apps-replicaset";
pub const PATH_VALIDATE_APPS_STATEFULSET: &str = "/validate-apps-statefulset";
pub const PATH_VALIDATE_SERVICE: &str = "/validate-service";
pub const PATH_VALIDATE_INGRESS: &str = "/validate-ingress";

/// Counts of one process that may run at once; more wait for a turn.
pub const CONCURRENT_COUNTS: usize = 4;
/// How long a count may take, its wait for a turn included (the webhooks' timeout is 5 s).
pub const COUNT_DEADLINE: Duration = Duration::from_secs(3);
/// Objects per page of a count.
const PAGE: u32 = 500;

const FORBIDDEN: u16 = 403;
const BAD_REQUEST: u16 = 400;

/// What a path guards: the kinds it is sent, and how their objects are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Namespace,
    CustomResourceDefinition,
    /// Deployment, ReplicaSet and apps/v1 StatefulSet, on any of their three paths (OpenKruise
    /// routes the three to one handler).
    Workload,
    Service,
    Ingress,
}

/// Every path of these webhooks, with what it guards.
pub const GUARDED_PATHS: [(&str, Guard); 7] = [
    (PATH_VALIDATE_NAMESPACE, Guard::Namespace),
    (
        PATH_VALIDATE_CUSTOMRESOURCEDEFINITION,
        Guard::CustomResourceDefinition,
    ),
    (PATH_VALIDATE_APPS_DEPLOYMENT, Guard::Workload),
    (PATH_VALIDATE_APPS_REPLICASET, Guard::Workload),
    (PATH_VALIDATE_APPS_STATEFULSET, Guard::Workload),
    (PATH_VALIDATE_SERVICE, Guard::Service),
    (PATH_VALIDATE_INGRESS, Guard::Ingress),
];

impl Guard {
    /// `(groups, kinds)` this guard decides on.
    fn kinds(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Guard::Namespace => (&[""], &["Namespace"]),
            Guard::CustomResourceDefinition => {
                (&["apiextensions.k8s.io"], &["CustomResourceDefinition"])
            }
            Guard::Workload => (&["apps"], &["Deployment", "ReplicaSet", "StatefulSet"]),
            Guard::Service => (&[""], &["Service"]),
            Guard::Ingress => (&["networking.k8s.io", "extensions"], &["Ingress"]),
        }
    }

    /// A denial when the request is about a kind this path does not guard (its configuration's
    /// rules are wrong), as the project's other webhooks answer.
    fn refuse_other_kinds(self, request: &RequestEnvelope<'_>) -> Option<AdmissionResponse> {
        let (groups, kinds) = self.kinds();
        let kind = &request.kind;
        if groups.contains(&kind.group.as_str()) && kinds.contains(&kind.kind.as_str()) {
            return None;
        }
        Some(AdmissionResponse::fail(
            &request.uid,
            BAD_REQUEST,
            format!(
                "request.kind: Unsupported value: \"{}/{}, Kind={}\": this webhook guards the deletion of {} only",
                kind.group,
                kind.version,
                kind.kind,
                kinds.join(", ")
            ),
        ))
    }

    /// What the deleted object is, for the decision.
    fn decode(self, raw: &serde_json::value::RawValue) -> Result<(Metadata, Guarded), String> {
        const FIELD: &str = "request.oldObject";
        match self {
            Guard::Workload => {
                let object: WithReplicas = decode_object(Some(raw), FIELD)?;
                let replicas = object.spec.replicas;
                Ok((object.metadata, Guarded::Workload { replicas }))
            }
            Guard::Service | Guard::Ingress => {
                let object: MetadataOnly = decode_object(Some(raw), FIELD)?;
                Ok((object.metadata, Guarded::AlwaysOnly))
            }
            Guard::Namespace => {
                let object: MetadataOnly = decode_object(Some(raw), FIELD)?;
                let name = object.metadata.name.clone();
                Ok((object.metadata, Guarded::Namespace { name }))
            }
            Guard::CustomResourceDefinition => {
                let object: Crd = decode_object(Some(raw), FIELD)?;
                let resources = object.spec.stored();
                Ok((
                    object.metadata,
                    Guarded::CustomResourceDefinition(resources),
                ))
            }
        }
    }
}

/// The metadata the decision reads.
#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    name: String,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    deletion_timestamp: Option<String>,
}

#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: Metadata,
}

#[derive(Deserialize)]
struct WithReplicas {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    spec: ReplicasSpec,
}

#[derive(Deserialize, Default)]
struct ReplicasSpec {
    #[serde(default)]
    replicas: Option<i32>,
}

/// A CustomResourceDefinition, `apiextensions.k8s.io/v1` or `v1beta1`, as far as the count needs.
#[derive(Deserialize)]
struct Crd {
    #[serde(default)]
    metadata: Metadata,
    spec: CrdSpec,
}

#[derive(Deserialize)]
struct CrdSpec {
    group: String,
    names: CrdNames,
    #[serde(default)]
    versions: Vec<CrdVersion>,
    /// v1beta1's single version, when `versions` is not given.
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct CrdNames {
    plural: String,
    kind: String,
}

#[derive(Deserialize)]
struct CrdVersion {
    name: String,
    #[serde(default)]
    storage: bool,
}

impl CrdSpec {
    /// Its objects as listed in the stored version (OpenKruise: the first marked `storage`).
    fn stored(self) -> CustomResources {
        let version = self
            .versions
            .iter()
            .find(|v| v.storage)
            .or(self.versions.first())
            .map(|v| v.name.clone())
            .or(self.version)
            .unwrap_or_default();
        CustomResources {
            group: self.group,
            version,
            plural: self.names.plural,
            kind: self.names.kind,
        }
    }
}

/// The answer to a request on one of the deletion-protection paths. Only DELETE of the object
/// itself is looked at; a DELETE without its old object (apiservers before 1.16) is allowed, as
/// OpenKruise does.
pub async fn protect(
    guard: Guard,
    request: &RequestEnvelope<'_>,
    reads: Option<&ClusterReads>,
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let subresource = request.sub_resource.as_deref().unwrap_or("");
    if request.operation != "DELETE" || !subresource.is_empty() {
        return AdmissionResponse::allow(uid);
    }
    if let Some(denial) = guard.refuse_other_kinds(request) {
        return denial;
    }
    let Some(raw) = request.old_object else {
        return AdmissionResponse::allow(uid);
    };
    let (metadata, guarded) = match guard.decode(raw) {
        Ok(decoded) => decoded,
        Err(message) => return AdmissionResponse::deny(uid, BAD_REQUEST, message),
    };
    let deleting = metadata.deletion_timestamp.is_some();
    let refusal = match verdict(metadata.labels.as_ref(), deleting, guarded) {
        Verdict::Allow => None,
        Verdict::Refuse(message) => Some(message),
        Verdict::Count(Guarded::Namespace { name }) => {
            namespace_refusal(&ClusterReads::namespace_contents(reads, &name).await)
        }
        Verdict::Count(Guarded::CustomResourceDefinition(resources)) => {
            let active = ClusterReads::custom_resources(reads, &resources).await;
            custom_resources_refusal(&resources, &active)
        }
        // The decision asks to count only for the two kinds above.
        Verdict::Count(Guarded::Workload { .. } | Guarded::AlwaysOnly) => None,
    };
    match refusal {
        Some(message) => AdmissionResponse::deny(uid, FORBIDDEN, message),
        None => AdmissionResponse::allow(uid),
    }
}

/// The apiserver reads of `Cascading` decisions, bounded: [`CONCURRENT_COUNTS`] at once, each
/// within [`COUNT_DEADLINE`].
pub struct ClusterReads {
    client: Client,
    turns: Semaphore,
    deadline: Duration,
}

impl ClusterReads {
    pub fn new(client: Client) -> Self {
        ClusterReads::with_deadline(client, COUNT_DEADLINE)
    }

    pub fn with_deadline(client: Client, deadline: Duration) -> Self {
        ClusterReads {
            client,
            turns: Semaphore::new(CONCURRENT_COUNTS),
            deadline,
        }
    }

    /// The namespace's unfinished pods not being deleted, and its bound claims; both read at once.
    async fn namespace_contents(reads: Option<&Self>, namespace: &str) -> NamespaceContents {
        let Some(reads) = reads else {
            return NamespaceContents {
                active_pods: Err(NO_CLUSTER.to_string()),
                bound_claims: Err(NO_CLUSTER.to_string()),
            };
        };
        let pods: Api<Pod> = Api::namespaced(reads.client.clone(), namespace);
        let claims: Api<PersistentVolumeClaim> = Api::namespaced(reads.client.clone(), namespace);
        let active_pods = reads.bounded(count_pages(
            |params| {
                let pods = pods.clone();
                async move { pods.list_metadata(&params).await }
            },
            ListParams::default().fields(UNFINISHED_PODS),
            |pod| pod.metadata.deletion_timestamp.is_none(),
        ));
        let bound_claims = reads.bounded(count_pages(
            |params| {
                let claims = claims.clone();
                async move { claims.list(&params).await }
            },
            ListParams::default(),
            |claim: &PersistentVolumeClaim| {
                let phase = claim.status.as_ref().and_then(|s| s.phase.as_deref());
                is_bound_claim(phase, claim.metadata.deletion_timestamp.is_some())
            },
        ));
        let (active_pods, bound_claims) = futures::join!(active_pods, bound_claims);
        NamespaceContents {
            active_pods,
            bound_claims,
        }
    }

    /// The CRD's objects not being deleted, in every namespace.
    async fn custom_resources(
        reads: Option<&Self>,
        resources: &CustomResources,
    ) -> Result<usize, String> {
        let reads = reads.ok_or_else(|| NO_CLUSTER.to_string())?;
        let gvk = GroupVersionKind::gvk(&resources.group, &resources.version, &resources.kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, &resources.plural);
        let api: Api<DynamicObject> = Api::all_with(reads.client.clone(), &resource);
        reads
            .bounded(count_pages(
                |params| {
                    let api = api.clone();
                    async move { api.list_metadata(&params).await }
                },
                ListParams::default(),
                |object| object.metadata.deletion_timestamp.is_none(),
            ))
            .await
    }

    /// `read` within the deadline, after waiting for a turn within it too.
    async fn bounded<T>(&self, read: impl Future<Output = Result<T, String>>) -> Result<T, String> {
        let turn_and_read = async {
            let _turn = self
                .turns
                .acquire()
                .await
                .map_err(|_| "shutting down".to_string())?;
            read.await
        };
        tokio::time::timeout(self.deadline, turn_and_read)
            .await
            .unwrap_or_else(|_| Err(format!("timed out after {:?}", self.deadline)))
    }
}

/// Why nothing can be counted in a process without a cluster (`serve` on files).
const NO_CLUSTER: &str =
    "no cluster to read from (serve runs without --kubeconfig or --source cluster)";

/// Counts the items `counts` accepts over every page of a list.
async fn count_pages<K, F, Fut>(
    list: F,
    params: ListParams,
    counts: impl Fn(&K) -> bool,
) -> Result<usize, String>
where
    F: Fn(ListParams) -> Fut,
    Fut: Future<Output = Result<kube::core::ObjectList<K>, kube::Error>>,
    K: Clone,
{
    let mut params = params.limit(PAGE);
    let mut total = 0;
    loop {
        let page = list(params.clone()).await.map_err(|e| match e {
            kube::Error::Api(status) => status.message,
            other => other.to_string(),
        })?;
        total += page.items.iter().filter(|item| counts(item)).count();
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(total),
        }
    }
}

#[cfg(test)]
mod tests;
