use super::*;
use k8s_openapi::api::core::v1::{
    ConfigMapKeySelector, EmptyDirVolumeSource, EnvVarSource, ExecAction, GRPCAction,
    HostPathVolumeSource, PersistentVolumeClaimVolumeSource, ProjectedVolumeSource,
    SecurityContext, ServiceAccountTokenProjection, SleepAction,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use crate::validate::field::aggregate;

fn container(name: &str) -> Container {
    Container {
        name: name.into(),
        image: Some("image".into()),
        image_pull_policy: Some("IfNotPresent".into()),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    }
}

fn empty_dir(name: &str) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

fn pvc(name: &str) -> Volume {
    Volume {
        name: name.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: "claim".into(),
            read_only: None,
        }),
        ..Default::default()
    }
}

fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        ..Default::default()
    }
}

fn validate(init: &[Container], containers: &[Container], volumes: &[Volume]) -> Vec<String> {
    let init: Vec<&Container> = init.iter().collect();
    let containers: Vec<&Container> = containers.iter().collect();
    validate_pod_containers_and_volumes(
        &init,
        &containers,
        volumes,
        "Always",
        Some(30),
        &Path::new("spec"),
    )
    .iter()
    .map(ToString::to_string)
    .collect()
}

#[test]
fn a_valid_pod_passes() {
    let mut app = container("app");
    app.volume_mounts = Some(vec![mount("data", "/data")]);
    app.ports = Some(vec![ContainerPort {
        container_port: 8080,
        name: Some("http".into()),
        protocol: Some("TCP".into()),
        ..Default::default()
    }]);
    assert_eq!(
        validate(&[container("init")], &[app], &[empty_dir("data")]),
        Vec::<String>::new()
    );
}

#[test]
fn container_names_images_and_policies() {
    let mut bad = container("Bad_Name");
    bad.image = None;
    bad.image_pull_policy = None;
    bad.termination_message_policy = Some("Sometimes".into());
    let errors = validate(&[], &[bad, container("a"), container("a")], &[]);
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors[0].starts_with(
        "spec.containers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label"
    ));
    assert_eq!(errors[1], "spec.containers[0].image: Required value");
    assert!(errors[2].starts_with(
        "spec.containers[0].terminationMessagePolicy: Unsupported value: \"Sometimes\""
    ));
    assert_eq!(
        errors[3],
        "spec.containers[0].imagePullPolicy: Required value"
    );
    assert_eq!(errors[4], "spec.containers[2].name: Duplicate value: \"a\"");

    assert_eq!(
        validate(&[], &[], &[]),
        vec!["spec.containers: Required value"]
    );
    let errors = validate(&[container("a")], &[container("a")], &[]);
    assert_eq!(
        errors,
        vec!["spec.initContainers[0].name: Duplicate value: \"a\""]
    );

    let mut spaced = container("a");
    spaced.image = Some(" img".into());
    let errors = validate(&[], &[spaced], &[]);
    assert_eq!(
        errors,
        vec![
            "spec.containers[0].image: Invalid value: \" img\": must not have leading or trailing whitespace"
        ]
    );
}

#[test]
fn ports_and_host_port_conflicts() {
    let port = |container_port, host_port, protocol: &str| ContainerPort {
        container_port,
        host_port,
        protocol: Some(protocol.into()),
        ..Default::default()
    };
    let mut a = container("a");
    a.ports = Some(vec![
        port(0, None, "TCP"),
        port(70000, Some(80), "TCP"),
        port(81, Some(80), "ICMP"),
    ]);
    let mut b = container("b");
    b.ports = Some(vec![port(80, Some(80), "TCP")]);
    let errors = validate(&[], &[a, b], &[]);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert_eq!(
        errors[0],
        "spec.containers[0].ports[0].containerPort: Required value"
    );
    assert_eq!(
        errors[1],
        "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
    );
    assert_eq!(
        errors[2],
        "spec.containers[0].ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
    );
    assert_eq!(
        errors[3],
        "spec.containers[1].ports[0].hostPort: Duplicate value: \"/TCP/80\""
    );
}

#[test]
fn env_rules() {
    let mut a = container("a");
    a.env = Some(vec![
        EnvVar {
            name: "GOOD".into(),
            value: Some("v".into()),
            value_from: None,
        },
        EnvVar {
            name: "1BAD".into(),
            value: None,
            value_from: None,
        },
        EnvVar {
            name: "BOTH".into(),
            value: Some("v".into()),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: Some("v1".into()),
                    field_path: "metadata.name".into(),
                }),
                ..Default::default()
            }),
        },
        EnvVar {
            name: "NONE".into(),
            value: None,
            value_from: Some(EnvVarSource::default()),
        },
        EnvVar {
            name: "LABEL".into(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: Some("v1".into()),
                    field_path: "metadata.labels['app']".into(),
                }),
                ..Default::default()
            }),
        },
        EnvVar {
            name: "CM".into(),
            value: None,
            value_from: Some(EnvVarSource {
                config_map_key_ref: Some(ConfigMapKeySelector {
                    key: "".into(),
                    name: "cm".into(),
                    optional: None,
                }),
                ..Default::default()
            }),
        },
        EnvVar {
            name: "WHAT".into(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: Some("v1".into()),
                    field_path: "spec.schedulerName".into(),
                }),
                ..Default::default()
            }),
        },
    ]);
    let errors = validate(&[], &[a], &[]);
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors[0].starts_with(
        "spec.containers[0].env[1].name: Invalid value: \"1BAD\": a valid environment variable name"
    ));
    assert_eq!(
        errors[1],
        "spec.containers[0].env[2].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"
    );
    assert!(errors[2].starts_with(
        "spec.containers[0].env[3].valueFrom: Invalid value: \"\": must specify one of"
    ));
    assert_eq!(
        errors[3],
        "spec.containers[0].env[5].valueFrom.configMapKeyRef.key: Required value"
    );
    assert!(errors[4].starts_with("spec.containers[0].env[6].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.schedulerName\": supported values: \"metadata.name\""));
}

#[test]
fn env_from_sources() {
    use k8s_openapi::api::core::v1::{ConfigMapEnvSource, SecretEnvSource};
    let config_map = |name: &str| EnvFromSource {
        config_map_ref: Some(ConfigMapEnvSource {
            name: name.into(),
            optional: None,
        }),
        ..Default::default()
    };
    let mut a = container("a");
    a.env_from = Some(vec![
        config_map("trailing-dash-"),
        EnvFromSource {
            prefix: Some("1X_".into()),
            ..config_map("ok")
        },
        config_map("Bad"),
        EnvFromSource::default(),
        EnvFromSource {
            secret_ref: Some(SecretEnvSource {
                name: "s".into(),
                optional: None,
            }),
            ..config_map("c")
        },
    ]);
    let errors = validate(&[], &[a], &[]);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].starts_with("spec.containers[0].envFrom[1].prefix: Invalid value: \"1X_\""));
    assert!(
        errors[1]
            .starts_with("spec.containers[0].envFrom[2].configMapRef.name: Invalid value: \"Bad\"")
    );
    assert_eq!(
        errors[2],
        "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`"
    );
    assert_eq!(
        errors[3],
        "spec.containers[0].envFrom: Invalid value: \"\": may not have more than one field specified at a time"
    );
}

#[test]
fn mounts_and_devices() {
    let mut a = container("a");
    a.volume_mounts = Some(vec![
        mount("missing", "/x"),
        mount("log", "/x"),
        mount("log", "/dev/disk"),
    ]);
    a.volume_devices = Some(vec![
        VolumeDevice {
            name: "disk0".into(),
            device_path: "/dev/disk".into(),
        },
        VolumeDevice {
            name: "log".into(),
            device_path: "/dev/log".into(),
        },
    ]);
    let errors = validate(&[], &[a], &[pvc("disk0"), empty_dir("log")]);
    let joined = errors.join("\n");
    assert!(
        joined.contains("spec.containers[0].volumeMounts[0].name: Not found: \"missing\""),
        "{joined}"
    );
    assert!(joined.contains(
        "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/x\": must be unique"
    ));
    assert!(joined.contains("spec.containers[0].volumeMounts[2].mountPath: Invalid value: \"/dev/disk\": must not already exist as a path in volumeDevices"));
    assert!(joined.contains("spec.containers[0].volumeDevices[0].devicePath: Invalid value: \"/dev/disk\": must not already exist as a path in volumeMounts"));
    assert!(joined.contains("spec.containers[0].volumeDevices[1].name: Invalid value: \"log\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"));
    assert!(joined.contains("spec.containers[0].volumeDevices[1].name: Invalid value: \"log\": must not already exist in volumeMounts"));
    assert!(joined.contains("spec.containers[0].volumeMounts[1].name: Invalid value: \"log\": must not already exist in volumeDevices"));

    let mut b = container("b");
    b.volume_mounts = Some(vec![VolumeMount {
        mount_propagation: Some("Bidirectional".into()),
        sub_path: Some("../up".into()),
        ..mount("log", "")
    }]);
    let errors = validate(&[], &[b.clone()], &[empty_dir("log")]);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    b.security_context = Some(SecurityContext {
        privileged: Some(true),
        ..Default::default()
    });
    assert_eq!(validate(&[], &[b], &[empty_dir("log")]).len(), 2);
}

#[test]
fn volumes_need_one_valid_source_and_unique_names() {
    let no_source = Volume {
        name: "test-volume".into(),
        ..Default::default()
    };
    let two_sources = Volume {
        host_path: Some(HostPathVolumeSource {
            path: "/a".into(),
            type_: None,
        }),
        ..empty_dir("two")
    };
    let token = Volume {
        name: "istio-token".into(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(420),
            sources: Some(vec![VolumeProjection {
                service_account_token: Some(ServiceAccountTokenProjection {
                    audience: Some("istio-ca".into()),
                    expiration_seconds: Some(43200),
                    path: "istio-token".into(),
                }),
                ..Default::default()
            }]),
        }),
        ..Default::default()
    };
    let short_token = Volume {
        name: "short".into(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(0o1000),
            sources: Some(vec![VolumeProjection {
                service_account_token: Some(ServiceAccountTokenProjection {
                    audience: None,
                    expiration_seconds: None,
                    path: "t".into(),
                }),
                ..Default::default()
            }]),
        }),
        ..Default::default()
    };
    let volumes = [
        no_source,
        two_sources,
        token,
        empty_dir("dup"),
        empty_dir("dup"),
        short_token,
        empty_dir("Bad"),
    ];
    let (index, errors) = validate_volumes(&volumes, &Path::new("spec").child("volumes"));
    let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(rendered.len(), 6, "{rendered:#?}");
    assert_eq!(
        rendered[0],
        "spec.volumes[0]: Required value: must specify a volume type"
    );
    assert_eq!(
        rendered[1],
        "spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type"
    );
    assert_eq!(
        rendered[2],
        "spec.volumes[4].name: Duplicate value: \"dup\""
    );
    assert_eq!(
        rendered[3],
        "spec.volumes[5].projected.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive"
    );
    assert_eq!(
        rendered[4],
        "spec.volumes[5].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 0: may not specify a duration less than 10 minutes"
    );
    assert!(rendered[5].starts_with("spec.volumes[6].name: Invalid value: \"Bad\""));
    assert!(index.get("istio-token").is_some());
    assert!(index.get("dup").is_some());
    assert!(index.get("test-volume").is_none());
}

#[test]
fn resources() {
    let quantities = |pairs: &[(&str, &str)]| {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), K8sQuantity(v.to_string())))
                .collect(),
        )
    };
    let mut a = container("a");
    a.resources = Some(ResourceRequirements {
        limits: quantities(&[("cpu", "100m"), ("memory", "1Gi"), ("example.com/gpu", "1")]),
        requests: quantities(&[
            ("cpu", "200m"),
            ("memory", "-1"),
            ("example.com/gpu", "2"),
            ("foo", "1"),
        ]),
        claims: None,
    });
    let errors = validate(&[], &[a], &[]);
    let joined = errors.join("\n");
    assert!(joined.contains("spec.containers[0].resources.requests: Invalid value: \"200m\": must be less than or equal to cpu limit of 100m"), "{joined}");
    assert!(joined.contains("spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0"));
    assert!(joined.contains("must be equal to example.com/gpu limit of 1"));
    assert!(joined.contains("spec.containers[0].resources.requests[foo]: Invalid value: \"foo\": must be a standard resource for containers"));

    let mut ok = container("ok");
    ok.resources = Some(ResourceRequirements {
        limits: quantities(&[("cpu", "1"), ("memory", "1Gi")]),
        requests: quantities(&[("cpu", "500m"), ("memory", "1024Mi")]),
        claims: None,
    });
    assert_eq!(validate(&[], &[ok], &[]), Vec::<String>::new());
    assert_eq!(quantity_value("1Gi"), Some(1024f64.powi(3)));
    assert_eq!(quantity_value("1e3"), Some(1000.0));
    assert_eq!(quantity_value("bogus"), None);
}

#[test]
fn probes_hooks_and_init_container_rules() {
    let probe = |success| Probe {
        exec: Some(ExecAction {
            command: Some(vec!["true".into()]),
        }),
        grpc: Some(GRPCAction {
            port: 0,
            service: None,
        }),
        success_threshold: Some(success),
        ..Default::default()
    };
    let mut a = container("a");
    a.liveness_probe = Some(probe(2));
    a.readiness_probe = Some(Probe {
        termination_grace_period_seconds: Some(5),
        ..probe(3)
    });
    a.lifecycle = Some(Lifecycle {
        pre_stop: Some(LifecycleHandler {
            sleep: Some(SleepAction { seconds: 31 }),
            ..Default::default()
        }),
        post_start: Some(LifecycleHandler::default()),
        stop_signal: None,
    });
    let errors = validate(&[], &[a], &[]);
    let joined = errors.join("\n");
    assert_eq!(errors.len(), 6, "{joined}");
    assert!(joined.contains(
        "spec.containers[0].livenessProbe.grpc: Forbidden: may not specify more than 1 handler type"
    ));
    assert!(joined.contains(
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"
    ));
    assert!(joined.contains("spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes"));
    assert!(joined.contains(
        "spec.containers[0].lifecycle.postStart: Required value: must specify a handler type"
    ));
    assert!(joined.contains("spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less than terminationGracePeriodSeconds (30)"));

    let mut plain_init = container("init");
    plain_init.liveness_probe = Some(probe(1));
    plain_init.restart_policy = Some("OnFailure".into());
    let mut native = container("native");
    native.restart_policy = Some("Always".into());
    native.liveness_probe = Some(Probe {
        grpc: None,
        ..probe(1)
    });
    let mut regular = container("app");
    regular.restart_policy = Some("Always".into());
    let errors = validate(&[plain_init, native], &[regular], &[]);
    assert_eq!(
        errors,
        vec![
            "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
            "spec.initContainers[0].restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
            "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
        ]
    );
}

#[test]
fn object_field_selectors() {
    let selector = |api: Option<&str>, path: &str| ObjectFieldSelector {
        api_version: api.map(Into::into),
        field_path: path.into(),
    };
    let path = Path::new("f");
    let check = |s: ObjectFieldSelector| {
        aggregate(&validate_object_field_selector(&s, &ENV_FIELD_PATHS, &path))
    };
    assert_eq!(
        check(selector(None, "metadata.name")),
        "f.apiVersion: Required value"
    );
    assert_eq!(
        check(selector(Some("v1"), "")),
        "f.fieldPath: Required value"
    );
    assert_eq!(
        check(selector(Some("v2"), "metadata.name")),
        "f.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: unsupported pod version: v2"
    );
    assert_eq!(
        check(selector(Some("v1"), "spec.containers['x']")),
        "f.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field label does not support subscript: spec.containers['x']"
    );
    assert!(
        check(selector(
            Some("v1"),
            "metadata.annotations['Example.com/KEY']"
        ))
        .is_empty()
    );
    assert!(
        check(selector(Some("v1"), "metadata.labels['bad key']"))
            .starts_with("f: Invalid value: \"bad key\"")
    );
    // `spec.host` is the legacy spelling of `spec.nodeName`.
    assert!(check(selector(Some("v1"), "spec.host")).is_empty());
    assert!(
        check(selector(Some("v1"), "metadata.labels"))
            .starts_with("f.fieldPath: Unsupported value: \"metadata.labels\"")
    );
    assert_eq!(split_subscripted_path("['x']"), None);
}
