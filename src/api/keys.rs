//! Every well-known string of the OpenKruise wire contract, in one place.
//!
//! These values are the compatibility surface: pods and manifests written for OpenKruise carry them,
//! so none of them may change.

/// API group of every custom resource this project serves.
pub const GROUP: &str = "apps.kruise.io";

/// Pod annotation: SidecarSet name → upgrade spec (hash, sidecar list, revision).
pub const SIDECARSET_HASH: &str = "kruise.io/sidecarset-hash";
/// Pod annotation: as [`SIDECARSET_HASH`] with the hash computed without images.
pub const SIDECARSET_HASH_WITHOUT_IMAGE: &str = "kruise.io/sidecarset-hash-without-image";
/// Pod annotation: comma-joined, sorted names of the SidecarSets injected into the pod.
pub const SIDECARSET_INJECTED_LIST: &str = "kruise.io/sidecarset-injected-list";
/// Pod annotation: hot-upgrade sidecar name → the copy currently doing the work.
pub const SIDECARSET_WORKING_HOTUPGRADE_CONTAINER: &str =
    "kruise.io/sidecarset-working-hotupgrade-container";
/// Pod annotation prefix for the hot-upgrade version of a copy (`version.sidecarset.kruise.io/<copy>`).
pub const SIDECARSET_VERSION_PREFIX: &str = "version.sidecarset.kruise.io/";
/// Pod annotation prefix for the alternate hot-upgrade version of a copy.
pub const SIDECARSET_VERSION_ALT_PREFIX: &str = "versionalt.sidecarset.kruise.io/";
/// Pod annotation written by the SidecarSet controller (listed so nothing else collides with it).
pub const SIDECARSET_INPLACE_UPDATE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";

/// Pod condition: can every SidecarSet of the pod upgrade its sidecars in place? The message is a
/// JSON object SidecarSet name → bool.
pub const SIDECARSET_UPGRADABLE_CONDITION: &str = "SidecarSetUpgradable";
/// [`SIDECARSET_UPGRADABLE_CONDITION`] reason when every SidecarSet can upgrade in place.
pub const REASON_ALL_SIDECARSETS_UPGRADABLE: &str = "AllSidecarsetUpgradable";
/// [`SIDECARSET_UPGRADABLE_CONDITION`] reason when a SidecarSet changed more than images.
pub const REASON_UPDATE_IMMUTABLE_FIELD: &str = "UpdateImmutableField";

/// SidecarSet annotation marking a canary SidecarSet (value `"true"`).
pub const SIDECARSET_CANARY: &str = "apps.kruise.io/sidecarset-canary";
/// SidecarSet annotation naming the base SidecarSet a canary overrides.
pub const SIDECARSET_BASE: &str = "apps.kruise.io/sidecarset-base";
/// SidecarSet label stating the custom version (v1alpha1).
pub const SIDECARSET_CUSTOM_VERSION: &str = "apps.kruise.io/sidecarset-custom-version";
/// ControllerRevision label naming the SidecarSet whose revision it is.
pub const SIDECARSET_NAME_LABEL: &str = "kruise.io/sidecarset-name";
/// `injectionStrategy.revision.policy` that gives the revision only to some new pods.
pub const INJECT_REVISION_PARTIAL: &str = "Partial";
/// SidecarSet status condition, present (`True`) while the webhooks cannot serve the set.
pub const SIDECARSET_INJECTION_FAILURE: &str = "InjectionFailure";
/// SidecarSet status condition: `True` while pods it selects lack its containers (the safety
/// net of the SidecarSet controller), `False` when none does.
pub const SIDECARSET_PODS_MISSING_SIDECARS: &str = "PodsMissingSidecars";
/// The reason of the Warning event on a pod that lacks a SidecarSet's containers.
pub const SIDECARS_MISSING_REASON: &str = "SidecarsMissing";

/// Pod annotation: `Ordered` makes the container order the launch order.
pub const CONTAINER_LAUNCH_PRIORITY: &str = "apps.kruise.io/container-launch-priority";
/// The only meaningful value of [`CONTAINER_LAUNCH_PRIORITY`].
pub const CONTAINER_LAUNCH_PRIORITY_ORDERED: &str = "Ordered";
/// Pod annotation set by the launch-priority controller once every barrier key is written.
pub const CONTAINER_LAUNCH_PRIORITY_COMPLETED: &str =
    "apps.kruise.io/container-launch-priority-completed";

/// Env var appended to every injected container.
pub const ENV_IS_INJECTED: &str = "IS_INJECTED";
/// Env var on hot-upgrade copies: the copy's version.
pub const ENV_SIDECARSET_VERSION: &str = "SIDECARSET_VERSION";
/// Env var on hot-upgrade copies: the other copy's version.
pub const ENV_SIDECARSET_VERSION_ALT: &str = "SIDECARSET_VERSION_ALT";
/// Env var a user sets on a container to give it a launch priority (decimal integer).
pub const ENV_CONTAINER_PRIORITY: &str = "KRUISE_CONTAINER_PRIORITY";
/// Env var the webhook appends: a configMapKeyRef on the pod's barrier ConfigMap.
pub const ENV_CONTAINER_BARRIER: &str = "KRUISE_CONTAINER_BARRIER";
/// Suffix of the per-pod barrier ConfigMap name (`<pod>-barrier`).
pub const BARRIER_CONFIGMAP_SUFFIX: &str = "-barrier";
/// Prefix of a barrier ConfigMap key (`p_<priority>`).
pub const BARRIER_KEY_PREFIX: &str = "p_";

/// Label every Namespace carries on Kubernetes ≥ 1.21; v1alpha1 `spec.namespace` is matched on it.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// `podInjectPolicy` values.
pub const BEFORE_APP_CONTAINER: &str = "BeforeAppContainer";
pub const AFTER_APP_CONTAINER: &str = "AfterAppContainer";
/// `upgradeStrategy.upgradeType` values.
pub const COLD_UPGRADE: &str = "ColdUpgrade";
pub const HOT_UPGRADE: &str = "HotUpgrade";
/// `shareVolumePolicy.type` values (lower case on the wire).
pub const SHARE_VOLUME_ENABLED: &str = "enabled";
pub const SHARE_VOLUME_DISABLED: &str = "disabled";
/// `patchPodMetadata[].patchPolicy` values.
pub const PATCH_POLICY_RETAIN: &str = "Retain";
pub const PATCH_POLICY_OVERWRITE: &str = "Overwrite";
pub const PATCH_POLICY_MERGE_PATCH_JSON: &str = "MergePatchJson";
/// `updateStrategy.type` values.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
pub const NOT_UPDATE: &str = "NotUpdate";

/// The CRDs' conversion webhook path (OpenKruise's).
pub const PATH_CONVERT: &str = "/convert";

/// Admission webhook paths (OpenKruise's).
pub const PATH_MUTATE_POD: &str = "/mutate-pod";
pub const PATH_MUTATE_SIDECARSET: &str = "/mutate-apps-kruise-io-sidecarset";
pub const PATH_VALIDATE_SIDECARSET: &str = "/validate-apps-kruise-io-sidecarset";
pub const PATH_MUTATE_CLONESET: &str = "/mutate-apps-kruise-io-cloneset";
pub const PATH_VALIDATE_CLONESET: &str = "/validate-apps-kruise-io-cloneset";
/// Pod label an (Advanced) StatefulSet writes: the pod's own name.
pub const STATEFULSET_POD_NAME: &str = "statefulset.kubernetes.io/pod-name";
/// Pod label an (Advanced) StatefulSet writes: the pod's ordinal.
pub const POD_INDEX: &str = "apps.kubernetes.io/pod-index";

pub const PATH_MUTATE_STATEFULSET: &str = "/mutate-apps-kruise-io-statefulset";
pub const PATH_VALIDATE_STATEFULSET: &str = "/validate-apps-kruise-io-statefulset";
pub const PATH_MUTATE_DAEMONSET: &str = "/mutate-apps-kruise-io-daemonset";
pub const PATH_VALIDATE_DAEMONSET: &str = "/validate-apps-kruise-io-daemonset";

/// Readiness gate and pod condition type shared by several writers (the lifecycle hooks'
/// `markPodNotReady` among them), added at creation to the pods of this group's workloads.
pub const KRUISE_POD_READY: &str = "KruisePodReady";
/// Readiness gate and pod condition type driven by the in-place update engine.
pub const INPLACE_UPDATE_READY: &str = "InPlaceUpdateReady";
/// Pod annotation: JSON progress record of the in-place update in flight.
pub const INPLACE_UPDATE_STATE: &str = "apps.kruise.io/inplace-update-state";
/// Legacy key of [`INPLACE_UPDATE_STATE`], still read, deleted on every write.
pub const INPLACE_UPDATE_STATE_LEGACY: &str = "inplace-update-state";
/// Pod annotation: the whole update spec, present only while the pod waits out its grace period.
pub const INPLACE_UPDATE_GRACE: &str = "apps.kruise.io/inplace-update-grace";
/// Legacy key of [`INPLACE_UPDATE_GRACE`], still read, deleted together with it.
pub const INPLACE_UPDATE_GRACE_LEGACY: &str = "inplace-update-grace";
/// Pod annotation, this project's own record, beside OpenKruise's state: each patched container's ID and restart
/// count at the moment its image was patched, so completion can require a real restart.
pub const INPLACE_UPDATE_RESTART_RECORD: &str = "kruise-webhook.io/inplace-update-restart-record";
/// Pod annotation written by kruise-daemon: container IDs and the hashes it observed.
pub const RUNTIME_CONTAINERS_META: &str = "apps.kruise.io/runtime-containers-meta";
/// Pod label carrying the workload revision (the default in-place adapter writes it).
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// Reason of the `InPlaceUpdateReady=False` condition written when an update starts.
pub const REASON_START_INPLACE_UPDATE: &str = "StartInPlaceUpdate";
/// Reason of a `Ready=False` condition recomputed from readiness gates.
pub const REASON_READINESS_GATES_NOT_READY: &str = "ReadinessGatesNotReady";
/// Core pod condition types the engine reads or recomputes.
pub const CONDITION_READY: &str = "Ready";
pub const CONDITION_CONTAINERS_READY: &str = "ContainersReady";
/// Pod condition status values.
pub const CONDITION_TRUE: &str = "True";
pub const CONDITION_FALSE: &str = "False";

/// Pod annotation: the lower, the sooner the pod goes on scale-in.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Where `kubectl apply` keeps the last applied manifest: often the largest annotation of all.
pub const LAST_APPLIED_CONFIGURATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
