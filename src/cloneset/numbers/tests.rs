use super::*;
use crate::api::cloneset::CloneSetSpec;
use serde_json::json;

fn limits(spec: serde_json::Value) -> Limits {
    Limits::of(&serde_json::from_value::<CloneSetSpec>(spec).unwrap())
}

fn side(count: i64, to_delete: i64, unavailable: i64) -> Side {
    Side {
        count,
        pre_deleting: 0,
        active: count,
        to_delete,
        unavailable,
    }
}

#[test]
fn limits_round_as_upstream() {
    let l = limits(json!({"replicas": 5}));
    assert_eq!((l.partition, l.max_surge, l.max_unavailable), (0, 0, 1));
    assert_eq!(l.scale_max_unavailable, i64::from(i32::MAX));
    // Rounded down when there is a surge.
    let l = limits(json!({"replicas": 3, "updateStrategy": {"maxSurge": 1}}));
    assert_eq!((l.max_surge, l.max_unavailable), (1, 0));
    // Paused: no surge, maxUnavailable rounds up again.
    let l = limits(json!({"replicas": 3, "updateStrategy": {"maxSurge": "50%", "paused": true}}));
    assert_eq!((l.max_surge, l.max_unavailable), (0, 1));
    let l = limits(json!({"replicas": 5, "updateStrategy": {"partition": "30%"}}));
    assert_eq!(l.partition, 2);
    let l = limits(json!({"replicas": 5, "updateStrategy": {"partition": "99%"}}));
    assert_eq!(l.partition, 4);
    let l = limits(json!({"replicas": 5, "updateStrategy": {"maxSurge": "12.5%"}}));
    assert_eq!(l.max_surge, 0);
    let l = limits(json!({"replicas": 5, "scaleStrategy": {"maxUnavailable": "30%"}}));
    assert_eq!(l.scale_max_unavailable, 2);
}

#[test]
fn cc2_scale_down_with_two_unavailable() {
    let l = limits(json!({"replicas": 2}));
    let d = diff(&l, &side(5, 0, 2), &Side::default(), false);
    assert_eq!(d.scale_down, 3);
    assert_eq!(d.delete_ready_limit, 2);
    assert_eq!(d.scale_up, 0);
}

#[test]
fn cc3_partition_two_of_five() {
    let l = limits(json!({"replicas": 5, "updateStrategy": {"partition": 2}}));
    let d = diff(&l, &Side::default(), &side(5, 0, 0), false);
    assert_eq!((d.update_num, d.update_max_unavailable), (3, 1));
    let d = diff(&l, &side(3, 0, 0), &side(2, 0, 0), false);
    assert_eq!(d.update_num, 0);
}

#[test]
fn cc5_surge_then_delete() {
    let l = limits(json!({"replicas": 3, "updateStrategy": {"maxSurge": 1, "maxUnavailable": 0}}));
    let d = diff(&l, &Side::default(), &side(3, 0, 0), false);
    assert_eq!((d.use_surge, d.scale_up, d.scale_up_old), (1, 1, 0));
    // Surge pod unavailable: 4 pods, update waits.
    let d = diff(&l, &side(1, 0, 1), &side(3, 0, 0), false);
    assert_eq!((d.scale_up, d.scale_down, d.update_num), (0, 0, 2));
    assert_eq!(d.update_max_unavailable, 1);
    // An old pod marked: it may go although ready.
    let d = diff(&l, &side(1, 0, 0), &side(3, 1, 0), false);
    assert_eq!(d.delete_ready_limit, 1);
    assert_eq!(d.scale_down, 0);
}

#[test]
fn cc14_scale_max_unavailable() {
    let l = limits(json!({"replicas": 5, "scaleStrategy": {"maxUnavailable": 2}}));
    let d = diff(&l, &Side::default(), &Side::default(), false);
    assert_eq!((d.scale_up, d.scale_up_limit), (5, 2));
    let d = diff(&l, &side(2, 0, 2), &Side::default(), false);
    assert_eq!((d.scale_up, d.scale_up_limit), (3, 0));
    let d = diff(&l, &side(2, 0, 1), &Side::default(), false);
    assert_eq!(d.scale_up_limit, 1);
}

#[test]
fn cc13_partition_rollback_only_with_the_gate() {
    let l = limits(json!({"replicas": 5, "updateStrategy": {"partition": 4, "maxUnavailable": 2}}));
    let d = diff(&l, &side(3, 0, 0), &side(2, 0, 0), true);
    assert_eq!((d.update_num, d.update_max_unavailable), (-2, 2));
    let d = diff(&l, &side(3, 0, 0), &side(2, 0, 0), false);
    assert_eq!(d.update_num, 0);
}
