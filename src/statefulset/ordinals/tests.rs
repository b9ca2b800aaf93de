use super::*;

fn reserved(items: &[IntOrString]) -> Reserved {
    Reserved::of(Some(items))
}

fn int(n: i32) -> IntOrString {
    IntOrString::Int(n)
}

fn text(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

#[test]
fn names_read_as_go_reads_them() {
    assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
    assert_eq!(parent_and_ordinal("web-12"), Some(("web", 12)));
    // Leading zeros parse; the name is then not the canonical one of the ordinal.
    assert_eq!(parent_and_ordinal("web-01"), Some(("web", 1)));
    assert_eq!(parent_and_ordinal("my-web-3"), Some(("my-web", 3)));
    assert_eq!(parent_and_ordinal("web--3"), Some(("web-", 3)));
    assert_eq!(parent_and_ordinal("-3"), Some(("", 3)));
    assert_eq!(parent_and_ordinal("web"), None);
    assert_eq!(parent_and_ordinal("web-"), None);
    assert_eq!(parent_and_ordinal("web-1a"), None);
    assert_eq!(parent_and_ordinal("web-a1"), None);
    assert_eq!(parent_and_ordinal("123"), None);
    assert_eq!(parent_and_ordinal(""), None);
    // 32 bits, as ParseInt(s, 10, 32).
    assert_eq!(
        parent_and_ordinal("web-2147483647"),
        Some(("web", 2_147_483_647))
    );
    assert_eq!(parent_and_ordinal("web-2147483648"), None);
    assert_eq!(ordinal_of("web", "web-2"), Some(2));
    assert_eq!(ordinal_of("web", "web-1-2"), None);
    assert_eq!(ordinal_of("web-1", "web-1-2"), Some(2));
    assert_eq!(pod_name("web", 7), "web-7");
}

#[test]
fn reserved_ordinals_take_ints_and_ranges_and_one_bad_range_voids_all() {
    let r = reserved(&[int(1), text("3-5"), int(9)]);
    let held: Vec<i64> = (0..12).filter(|o| r.contains(*o)).collect();
    assert_eq!(held, vec![1, 3, 4, 5, 9]);
    // Overlapping and adjacent ranges merge.
    let r = reserved(&[text("4-6"), text("2-4"), int(7), text("10-10")]);
    assert_eq!(r.ranges, vec![(2, 7), (10, 10)]);
    for bad in ["3", "5-3", "a-b", "1-2-3", "-1-2", ""] {
        assert_eq!(
            reserved(&[int(1), text(bad)]),
            Reserved::default(),
            "{bad:?}"
        );
    }
    assert_eq!(Reserved::of(None), Reserved::default());
    assert!(!Reserved::default().contains(0));
}

#[test]
fn the_range_ends_after_the_replicas_th_free_ordinal() {
    let range = |replicas: i64, items: &[IntOrString]| {
        let r = ReplicaRange::new(0, replicas, reserved(items)).unwrap();
        (r.start, r.end)
    };
    assert_eq!(range(3, &[]), (0, 3));
    assert_eq!(range(0, &[]), (0, 0));
    assert_eq!(range(-2, &[]), (0, 0));
    // The spec's example: R 4, reserve [1, 3] → [0, 6).
    assert_eq!(range(4, &[int(1), int(3)]), (0, 6));
    // Reserved ordinals past the end do not move it; reserved ones at the start do.
    assert_eq!(range(2, &[int(5)]), (0, 2));
    assert_eq!(range(2, &[int(0), int(1)]), (0, 4));
    assert_eq!(range(3, &[text("1-2")]), (0, 5));
    assert_eq!(range(0, &[int(0)]), (0, 0));
    // AS-7: R 3, reserve [1] → pods 0, 2, 3.
    let r = ReplicaRange::new(0, 3, reserved(&[int(1)])).unwrap();
    let held: Vec<i64> = (-1..6).filter(|o| r.holds(*o)).collect();
    assert_eq!(held, vec![0, 2, 3]);
    assert_eq!(r.index_of(2), Some(2));
    assert_eq!(r.index_of(1), None);
    assert_eq!(r.len(), 4);
}

#[test]
fn a_range_too_large_to_plan_is_refused() {
    assert!(ReplicaRange::new(0, MAX_SLOTS, Reserved::default()).is_ok());
    let error = ReplicaRange::new(0, MAX_SLOTS + 1, Reserved::default()).unwrap_err();
    assert_eq!(error.slots, MAX_SLOTS + 1);
    assert!(
        error.to_string().contains("spec.replicas 1048577"),
        "{error}"
    );
    // A billion reserved ordinals below one replica: refused without walking them.
    let error = ReplicaRange::new(0, 1, reserved(&[text("0-1000000000")])).unwrap_err();
    assert!(error.slots > 1_000_000_000, "{error}");
    let big = ReplicaRange::new(0, i64::from(i32::MAX), Reserved::default());
    assert!(big.is_err());
}

#[test]
fn pods_fall_into_slots_or_are_condemned_highest_first() {
    let range = ReplicaRange::new(0, 4, reserved(&[int(1), int(3)])).unwrap();
    let names = [
        "web-4", "web-1", "other-0", "web-7", "web-0", "web-x", "web-9", "web-3",
    ];
    let slots = Slots::of("web", range, names);
    assert_eq!(
        slots.slots,
        vec![
            Slot::Pod(4),
            Slot::Reserved,
            Slot::Missing,
            Slot::Reserved,
            Slot::Pod(0),
            Slot::Missing
        ]
    );
    // web-9, web-7, web-3 (reserved), web-1 (reserved).
    assert_eq!(slots.condemned, vec![6, 3, 7, 1]);
    assert_eq!(slots.ordinals[2], None);
    assert_eq!(slots.ordinals[5], None);
    assert_eq!(slots.ordinal_at(5), 5);
    assert!(Slot::Missing.is_replica() && !Slot::Reserved.is_replica());
    assert_eq!(Slot::Pod(3).pod(), Some(3));
}

#[test]
fn the_canonical_name_holds_a_slot_read_twice() {
    let range = ReplicaRange::new(0, 2, Reserved::default()).unwrap();
    for names in [["web-1", "web-01"], ["web-01", "web-1"]] {
        let slots = Slots::of("web", range.clone(), names);
        let canonical = names.iter().position(|n| *n == "web-1").unwrap();
        assert_eq!(slots.slots[1], Slot::Pod(canonical), "{names:?}");
        assert!(slots.condemned.is_empty());
    }
}

#[test]
fn canonical_names_have_no_leading_zero() {
    assert!(is_canonical("web-0"));
    assert!(is_canonical("web-10"));
    assert!(!is_canonical("web-01"));
    assert!(!is_canonical("web-00"));
}

#[test]
fn ordinal_text_is_exactly_the_written_ordinal() {
    for (text, ordinal, expected) in [
        ("0", 0, true),
        ("7", 7, true),
        ("12", 12, true),
        ("012", 12, false),
        ("00", 0, false),
        ("-0", 0, false),
        ("+3", 3, false),
        ("-3", -3, true),
        ("3", -3, false),
        ("", 0, false),
        ("1a", 1, false),
        ("9223372036854775807", i64::MAX, true),
        ("-9223372036854775808", i64::MIN, true),
        ("18446744073709551616", 0, false),
    ] {
        assert_eq!(
            is_ordinal_text(text, ordinal),
            expected,
            "{text:?} {ordinal}"
        );
    }
}

proptest::proptest! {
    #[test]
    fn ordinal_text_agrees_with_to_string(
        ordinal in proptest::prelude::any::<i64>(),
        other in proptest::prelude::any::<i64>(),
        text in "-?[0-9]{0,4}",
    ) {
        proptest::prop_assert!(is_ordinal_text(&ordinal.to_string(), ordinal));
        proptest::prop_assert_eq!(is_ordinal_text(&other.to_string(), ordinal), other == ordinal);
        proptest::prop_assert_eq!(is_ordinal_text(&text, ordinal), text == ordinal.to_string());
        let small = ordinal % 10_000;
        proptest::prop_assert_eq!(is_ordinal_text(&text, small), text == small.to_string());
    }
}
