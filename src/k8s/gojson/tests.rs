use super::*;
use crate::api::{
    ResourceExprPair, ResourcesExpr, ResourcesPolicy, ShareVolumePolicy,
    SidecarContainerUpgradeStrategy, SourceContainerNameSource, TransferEnvVar,
};
use k8s_openapi::api::core::v1::{
    Capabilities, ContainerPort, EnvVar, EnvVarSource, GRPCAction, HTTPGetAction, HTTPHeader,
    Lifecycle, LifecycleHandler, ObjectFieldSelector, Probe, ResourceFieldSelector,
    ResourceRequirements, SecurityContext, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;
use std::collections::BTreeMap;

fn sidecar(name: &str) -> SidecarContainer {
    SidecarContainer {
        container: Container {
            name: name.to_string(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn go_string(s: &str) -> String {
    let mut out = String::new();
    write_go_string(&mut out, s);
    out
}

#[test]
fn minimal_container_writes_the_always_present_fields() {
    assert_eq!(
        encode_sidecar_container(&sidecar("c")),
        r#"{"name":"c","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#
    );
    assert_eq!(
        encode_sidecar_container(&sidecar("")),
        r#"{"name":"","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#
    );
    assert_eq!(
        encode_container(&Container::default()),
        r#"{"name":"","resources":{}}"#
    );
}

#[test]
fn list_encoding_distinguishes_nil_and_empty() {
    assert_eq!(encode_sidecar_containers(None), "null");
    assert_eq!(encode_sidecar_containers(Some(&[])), "[]");
    assert_eq!(
        encode_sidecar_containers(Some(&[sidecar("a"), sidecar("b")])),
        concat!(
            r#"[{"name":"a","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}},"#,
            r#"{"name":"b","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]"#
        )
    );
}

#[test]
fn escapes_strings_like_go() {
    assert_eq!(go_string("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(go_string("\n\r\t"), r#""\n\r\t""#);
    assert_eq!(go_string("\u{8}\u{c}"), r#""\b\f""#);
    assert_eq!(go_string("\u{1}\u{1f}"), r#""\u0001\u001f""#);
    assert_eq!(go_string("<a>&"), r#""\u003ca\u003e\u0026""#);
    assert_eq!(go_string("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
    assert_eq!(go_string("é☃\u{7f}/"), "\"é☃\u{7f}/\"");
}

#[test]
fn core_fields_follow_go_declaration_order() {
    let mut c = sidecar("app");
    c.container.image = Some("img:1".into());
    c.container.command = Some(vec!["sh".into()]);
    c.container.args = Some(vec!["-c".into(), "x".into()]);
    c.container.working_dir = Some("/w".into());
    c.container.ports = Some(vec![ContainerPort {
        container_port: 80,
        name: Some("http".into()),
        protocol: Some("TCP".into()),
        host_port: Some(0),
        ..Default::default()
    }]);
    c.container.env = Some(vec![EnvVar {
        name: "A".into(),
        value: Some("1".into()),
        ..Default::default()
    }]);
    c.container.restart_policy = Some("Always".into());
    c.container.volume_mounts = Some(vec![VolumeMount {
        name: "v".into(),
        mount_path: "/v".into(),
        read_only: Some(true),
        ..Default::default()
    }]);
    c.container.termination_message_path = Some("/dev/termination-log".into());
    c.container.image_pull_policy = Some("IfNotPresent".into());
    c.container.stdin = Some(false);
    c.container.tty = Some(true);
    c.pod_inject_policy = Some("BeforeAppContainer".into());
    assert_eq!(
        encode_sidecar_container(&c),
        concat!(
            r#"{"name":"app","image":"img:1","command":["sh"],"args":["-c","x"],"workingDir":"/w","#,
            r#""ports":[{"name":"http","containerPort":80,"protocol":"TCP"}],"#,
            r#""env":[{"name":"A","value":"1"}],"resources":{},"restartPolicy":"Always","#,
            r#""volumeMounts":[{"name":"v","readOnly":true,"mountPath":"/v"}],"#,
            r#""terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent","#,
            r#""tty":true,"podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{},"shareVolumePolicy":{}}"#
        )
    );
}

#[test]
fn resources_are_sorted_and_canonical() {
    let mut c = Container {
        name: "c".into(),
        ..Default::default()
    };
    let list = |pairs: &[(&str, &str)]| {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                .collect::<BTreeMap<_, _>>(),
        )
    };
    c.resources = Some(ResourceRequirements {
        limits: list(&[("memory", "1024Mi"), ("cpu", "1000m"), ("a/b", "0.5")]),
        requests: list(&[]),
        claims: None,
    });
    assert_eq!(
        encode_container(&c),
        r#"{"name":"c","resources":{"limits":{"a/b":"500m","cpu":"1","memory":"1Gi"}}}"#
    );
}

#[test]
fn probes_inline_the_handler_and_keep_pointer_zeros() {
    let probe = Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/".into()),
            port: IntOrString::String("http".into()),
            scheme: Some("HTTP".into()),
            http_headers: Some(vec![HTTPHeader {
                name: "X".into(),
                value: String::new(),
            }]),
            ..Default::default()
        }),
        initial_delay_seconds: Some(0),
        timeout_seconds: Some(1),
        period_seconds: Some(10),
        success_threshold: Some(1),
        failure_threshold: Some(3),
        termination_grace_period_seconds: Some(0),
        ..Default::default()
    };
    let c = Container {
        name: "c".into(),
        liveness_probe: Some(probe),
        startup_probe: Some(Probe {
            grpc: Some(GRPCAction {
                port: 9000,
                service: None,
            }),
            ..Default::default()
        }),
        lifecycle: Some(Lifecycle {
            pre_stop: Some(LifecycleHandler {
                http_get: Some(HTTPGetAction {
                    port: IntOrString::Int(8080),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        encode_container(&c),
        concat!(
            r#"{"name":"c","resources":{},"livenessProbe":{"httpGet":{"path":"/","port":"http","scheme":"HTTP","#,
            r#""httpHeaders":[{"name":"X","value":""}]},"timeoutSeconds":1,"periodSeconds":10,"#,
            r#""successThreshold":1,"failureThreshold":3,"terminationGracePeriodSeconds":0},"#,
            r#""startupProbe":{"grpc":{"port":9000,"service":null}},"#,
            r#""lifecycle":{"preStop":{"httpGet":{"port":8080}}}}"#
        )
    );
}

#[test]
fn env_sources_and_security_context() {
    let c = Container {
        name: "c".into(),
        env: Some(vec![
            EnvVar {
                name: "NODE".into(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        api_version: Some("v1".into()),
                        field_path: "spec.nodeName".into(),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
            EnvVar {
                name: "MEM".into(),
                value_from: Some(EnvVarSource {
                    resource_field_ref: Some(ResourceFieldSelector {
                        resource: "limits.memory".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ]),
        security_context: Some(SecurityContext {
            privileged: Some(false),
            run_as_user: Some(0),
            capabilities: Some(Capabilities {
                add: Some(vec!["NET_ADMIN".into()]),
                drop: Some(vec![]),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        encode_container(&c),
        concat!(
            r#"{"name":"c","env":[{"name":"NODE","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"spec.nodeName"}}},"#,
            r#"{"name":"MEM","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"0"}}}],"#,
            r#""resources":{},"securityContext":{"capabilities":{"add":["NET_ADMIN"]},"privileged":false,"runAsUser":0}}"#
        )
    );
}

#[test]
fn kruise_extras_in_declaration_order() {
    let mut c = sidecar("s");
    c.resources_policy = Some(ResourcesPolicy {
        target_containers_mode: String::new(),
        target_containers_name_regex: Some(".*".into()),
        resources_expr: Some(ResourcesExpr {
            limits: Some(ResourceExprPair {
                cpu: Some("cpu*50%".into()),
                memory: None,
            }),
            requests: None,
        }),
    });
    c.transfer_env = Some(vec![TransferEnvVar {
        source_container_name_from: Some(SourceContainerNameSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: "metadata.labels['app']".into(),
            }),
        }),
        env_names: Some(vec!["A".into(), "B".into()]),
        env_name: Some(String::new()),
        ..Default::default()
    }]);
    c.share_volume_device_policy = Some(ShareVolumePolicy::default());
    c.upgrade_strategy = Some(SidecarContainerUpgradeStrategy {
        upgrade_type: Some("HotUpgrade".into()),
        hot_upgrade_empty_image: Some("empty:1".into()),
    });
    c.share_volume_policy = Some(ShareVolumePolicy {
        type_: Some("enabled".into()),
    });
    assert_eq!(
        encode_sidecar_container(&c),
        concat!(
            r#"{"name":"s","resources":{},"upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:1"},"#,
            r#""shareVolumePolicy":{"type":"enabled"},"shareVolumeDevicePolicy":{},"#,
            r#""transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"fieldPath":"metadata.labels['app']"}},"envNames":["A","B"]}],"#,
            r#""resourcesPolicy":{"targetContainersMode":"","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu*50%"}}}}"#
        )
    );
    c.resources_policy = Some(ResourcesPolicy::default());
    assert!(
        encode_sidecar_container(&c)
            .ends_with(r#""resourcesPolicy":{"targetContainersMode":"","resourcesExpr":{}}}"#)
    );
}

#[test]
fn unknown_keys_come_last_sorted() {
    let value = json!({"name": "c", "zeta": 1, "alpha": {"b": 2, "a": "<"}});
    let Value::Object(map) = value else {
        unreachable!()
    };
    let mut out = String::new();
    write_struct(&mut out, &map, CONTAINER);
    assert_eq!(
        out,
        r#"{"name":"c","resources":{},"alpha":{"a":"\u003c","b":2},"zeta":1}"#
    );
}

#[test]
fn lifecycle_stop_signal_after_handlers() {
    let c = Container {
        name: "c".into(),
        lifecycle: Some(Lifecycle {
            stop_signal: Some("SIGTERM".into()),
            post_start: Some(LifecycleHandler::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        encode_container(&c),
        r#"{"name":"c","resources":{},"lifecycle":{"postStart":{},"stopSignal":"SIGTERM"}}"#
    );
}

#[test]
fn encode_value_sorts_keys() {
    assert_eq!(
        encode_value(&json!({"b": [1, true, null], "a": "x&y"})),
        r#"{"a":"x\u0026y","b":[1,true,null]}"#
    );
}
