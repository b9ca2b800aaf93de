use super::*;

fn spec_from_yaml(yaml: &str) -> SidecarSetSpec {
    crate::yaml::from_str(yaml).unwrap()
}

/// Upstream unit-test SidecarSet: one container, optionally a (native) init container.
fn upstream_spec(init: Option<&str>) -> SidecarSetSpec {
    let mut yaml = String::from("containers: [{name: container1, image: test-image}]\n");
    if let Some(init) = init {
        yaml.push_str(&format!("initContainers: [{init}]\n"));
    }
    spec_from_yaml(&yaml)
}

const ROW1_JSON: &str = r#"{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}"#;
const ROW1_HASH: &str = "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78";
const ROW3_JSON: &str = r#"{"containers":[{"name":"container1","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}"#;
const ROW3_HASH: &str = "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759";

#[test]
fn vector_rows_1_and_3_plain_containers() {
    let spec = upstream_spec(None);
    assert_eq!(hash_input(&spec), ROW1_JSON);
    assert_eq!(sidecarset_hash(&spec), ROW1_HASH);
    assert_eq!(hash_input_without_image(&spec), ROW3_JSON);
    assert_eq!(sidecarset_hash_without_image(&spec), ROW3_HASH);
}

#[test]
fn plain_init_containers_do_not_change_the_hash() {
    let spec = upstream_spec(Some("{name: init, image: busybox}"));
    assert_eq!(hash_input(&spec), ROW1_JSON);
    assert_eq!(sidecarset_hash(&spec), ROW1_HASH);
    assert_eq!(sidecarset_hash_without_image(&spec), ROW3_HASH);
}

#[test]
fn vector_rows_2_and_4_native_sidecar() {
    let spec = upstream_spec(Some(
        "{name: container1, image: test-image, restartPolicy: Always}",
    ));
    assert_eq!(
        hash_input(&spec),
        concat!(
            r#"{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],"#,
            r#""initContainers":[{"name":"container1","image":"test-image","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}"#
        )
    );
    assert_eq!(
        sidecarset_hash(&spec),
        "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w"
    );
    assert_eq!(
        hash_input_without_image(&spec),
        concat!(
            r#"{"containers":[{"name":"container1","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}],"#,
            r#""initContainers":[{"name":"container1","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}"#
        )
    );
    assert_eq!(
        sidecarset_hash_without_image(&spec),
        "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8"
    );
}

#[test]
fn vector_rows_5_and_6_defaulted_container() {
    // Row 5 as the SidecarSet webhook stores it; `defaults` tests derive it by defaulting.
    let spec = spec_from_yaml(
        r#"
containers:
- name: dns-f
  image: "dns:1.0"
  resources: {}
  terminationMessagePath: /dev/termination-log
  terminationMessagePolicy: File
  imagePullPolicy: IfNotPresent
  podInjectPolicy: BeforeAppContainer
  upgradeStrategy: {upgradeType: ColdUpgrade}
  shareVolumePolicy: {type: disabled}
"#,
    );
    assert_eq!(
        hash_input(&spec),
        concat!(
            r#"{"containers":[{"name":"dns-f","image":"dns:1.0","resources":{},"terminationMessagePath":"/dev/termination-log","#,
            r#""terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"BeforeAppContainer","#,
            r#""upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"}}]}"#
        )
    );
    assert_eq!(
        sidecarset_hash(&spec),
        "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
    );
    assert_eq!(
        hash_input_without_image(&spec),
        hash_input(&spec).replace(r#""image":"dns:1.0","#, "")
    );
    assert_eq!(
        sidecarset_hash_without_image(&spec),
        "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
    );
}

/// The stored SidecarSet of the golden example (spec §13.0), already defaulted.
const GOLDEN_JSON: &str = r#"{"containers":[{"name":"log-agent","image":"fluent-bit:2.0","resources":{},"volumeMounts":[{"name":"fb-config","mountPath":"/fluent-bit/etc"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"AfterAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"enabled"},"transferEnv":[{"sourceContainerName":"app","envName":"LOG_LEVEL"}]}]}"#;
const GOLDEN_HASH: &str = "dzw7fx282v47vxxddxb4d44448bcvz2875xx89x4bcxww8f9xf9ff4d45v22vc4c";
const GOLDEN_HASH_WITHOUT_IMAGE: &str =
    "v4497x7v99fdbcd9dfvcc2xd759zcv27fxb4c68fd9f8b52b4f77c72ff988cwbd";

#[test]
fn golden_example_hashes() {
    let spec = spec_from_yaml(
        r#"
selector: {matchLabels: {app: web}}
containers:
- name: log-agent
  image: fluent-bit:2.0
  resources: {}
  volumeMounts: [{name: fb-config, mountPath: /fluent-bit/etc}]
  terminationMessagePath: /dev/termination-log
  terminationMessagePolicy: File
  imagePullPolicy: IfNotPresent
  podInjectPolicy: AfterAppContainer
  upgradeStrategy: {upgradeType: ColdUpgrade}
  shareVolumePolicy: {type: enabled}
  transferEnv: [{sourceContainerName: app, envName: LOG_LEVEL}]
volumes:
- {name: fb-config, configMap: {name: fb-config, defaultMode: 420}}
- {name: unused, emptyDir: {}}
imagePullSecrets: [{name: regcred}]
updateStrategy: {type: RollingUpdate, partition: 0, maxUnavailable: 1}
revisionHistoryLimit: 10
"#,
    );
    assert_eq!(hash_input(&spec), GOLDEN_JSON);
    assert_eq!(sidecarset_hash(&spec), GOLDEN_HASH);
    assert_eq!(
        sidecarset_hash_without_image(&spec),
        GOLDEN_HASH_WITHOUT_IMAGE
    );
}

#[test]
fn absent_and_empty_container_lists() {
    let spec = SidecarSetSpec::default();
    assert_eq!(hash_input(&spec), r#"{"containers":null}"#);
    let spec = spec_from_yaml("containers: []");
    assert_eq!(hash_input(&spec), r#"{"containers":[]}"#);
    // A native sidecar with no containers at all.
    let spec = spec_from_yaml("initContainers: [{name: n, restartPolicy: Always}]");
    assert!(hash_input(&spec).starts_with(r#"{"containers":null,"initContainers":[{"name":"n""#));
}

#[test]
fn hashes_use_the_safe_alphabet() {
    let hash = sidecarset_hash(&upstream_spec(None));
    assert_eq!(hash.len(), 64);
    assert!(hash.bytes().all(|b| SAFE_ALPHABET.contains(&b)));
}

#[test]
fn only_images_differ_between_the_two_hashes() {
    let a = upstream_spec(None);
    let mut b = a.clone();
    if let Some(containers) = b.containers.as_mut() {
        containers[0].container.image = Some("other-image".into());
    }
    assert_ne!(sidecarset_hash(&a), sidecarset_hash(&b));
    assert_eq!(
        sidecarset_hash_without_image(&a),
        sidecarset_hash_without_image(&b)
    );
}
