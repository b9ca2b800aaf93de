use super::*;
use crate::updatesort::order::OrderKey;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

fn random_pod(rng: &mut fastrand::Rng) -> Pod {
    let mut p = Pod::default();
    let names = [
        "web",
        "web-a",
        "web-ab",
        "web-abcdefghijklmnop",
        "web-abcdefghijklmnoq",
    ];
    let mut name = names[rng.usize(..names.len())].to_string();
    if rng.bool() {
        name.push(char::from(b'a' + rng.u8(0..3)));
    }
    if rng.u8(0..8) == 0 {
        name.push('\0');
    }
    p.metadata.name = Some(name);
    p.metadata.namespace = ["default", "a", "default-x", ""][rng.usize(..4)]
        .to_string()
        .into();
    let time = |rng: &mut fastrand::Rng| Time(Timestamp::from_second(rng.i64(0..4)).unwrap());
    p.metadata.creation_timestamp = rng.bool().then(|| time(rng));
    p.spec = Some(PodSpec {
        node_name: [None, Some(""), Some("n1")][rng.usize(..3)].map(String::from),
        ..Default::default()
    });
    let ready = PodCondition {
        type_: "Ready".into(),
        status: ["True", "False"][rng.usize(..2)].into(),
        last_transition_time: rng.bool().then(|| time(rng)),
        ..Default::default()
    };
    p.status = Some(PodStatus {
        phase: ["Running", "Pending", "Unknown", "Failed"][rng.usize(..4)]
            .to_string()
            .into(),
        conditions: rng.bool().then(|| vec![ready]),
        container_statuses: Some(
            (0..rng.usize(0..3))
                .map(|_| ContainerStatus {
                    restart_count: rng.i32(0..3),
                    ..Default::default()
                })
                .collect(),
        ),
        ..Default::default()
    });
    p
}

#[test]
fn flat_keys_order_pods_as_order_keys_do() {
    let mut rng = fastrand::Rng::with_seed(5);
    for _ in 0..300 {
        let pods: Vec<(Pod, bool)> = (0..rng.usize(0..40))
            .map(|_| (random_pod(&mut rng), rng.u8(0..4) == 0))
            .collect();
        let mut reference: Vec<(bool, OrderKey<'_>, usize)> = pods
            .iter()
            .enumerate()
            .map(|(i, (p, preparing))| (!preparing, OrderKey::of(p), i))
            .collect();
        reference.sort();
        let mut flat = flat_keys(pods.iter().enumerate().map(|(i, (p, u))| (p, *u, i)));
        flat.sort();
        let reference: Vec<usize> = reference.into_iter().map(|(_, _, i)| i).collect();
        let flat: Vec<usize> = flat.into_iter().map(|k| k.position).collect();
        assert_eq!(flat, reference);
    }
}
