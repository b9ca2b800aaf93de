use super::*;

fn percent(text: &str) -> IntOrString {
    IntOrString::String(text.to_string())
}

#[test]
fn partition_rounds_up_but_below_100_percent_leaves_one_to_update() {
    assert_eq!(partition_count(None, 5), 0);
    assert_eq!(partition_count(Some(&IntOrString::Int(3)), 5), 3);
    assert_eq!(partition_count(Some(&IntOrString::Int(9)), 5), 5);
    assert_eq!(partition_count(Some(&IntOrString::Int(-2)), 5), 0);
    assert_eq!(partition_count(Some(&percent("99%")), 5), 4);
    assert_eq!(partition_count(Some(&percent("1%")), 5), 1);
    assert_eq!(partition_count(Some(&percent("100%")), 5), 5);
    assert_eq!(partition_count(Some(&percent("99%")), 1), 1);
    assert_eq!(partition_count(Some(&percent("18%")), 1000), 180);
    assert_eq!(partition_count(Some(&percent("12.5%")), 8), 1);
    assert_eq!(partition_count(Some(&percent("50")), 8), 0);
}

#[test]
fn max_unavailable_defaults_to_one_and_rounds_up() {
    assert_eq!(max_unavailable_count(None, 100), 1);
    assert_eq!(max_unavailable_count(Some(&IntOrString::Int(10)), 100), 10);
    assert_eq!(max_unavailable_count(Some(&percent("5%")), 5), 1);
    assert_eq!(max_unavailable_count(Some(&percent("10%")), 1000), 100);
    assert_eq!(max_unavailable_count(Some(&percent("2.5%")), 1000), 0);
    assert_eq!(max_unavailable_count(Some(&percent("5")), 1000), 0);
    assert_eq!(max_unavailable_count(Some(&IntOrString::Int(-1)), 10), 0);
}

#[test]
fn not_ready_candidates_are_free_and_the_walk_stops_at_the_first_misfit() {
    let ready = [true, false, true, true, false];
    let taken = take_within_budget(&[0, 1, 2, 3, 4], |i| ready[i], 0, 2);
    assert_eq!(taken, vec![0, 1, 2]);
    let taken = take_within_budget(&[0, 1, 2, 3, 4], |i| ready[i], 2, 2);
    assert!(taken.is_empty());
    let taken = take_within_budget(&[1, 4, 0], |i| ready[i], 5, 2);
    assert_eq!(taken, vec![1, 4]);
}

#[test]
fn daemonset_percentages_round_up_and_take_integers_only() {
    assert_eq!(integer_percent(Some(&percent("30%")), 4, true), 2);
    assert_eq!(integer_percent(Some(&percent("30%")), 4, false), 1);
    assert_eq!(integer_percent(Some(&IntOrString::Int(3)), 4, true), 3);
    assert_eq!(integer_percent(Some(&percent("12.5%")), 8, true), 0);
    assert_eq!(integer_percent(Some(&percent("5")), 8, true), 0);
    assert_eq!(integer_percent(None, 8, true), 0);
}

#[test]
fn statefulset_percentages_round_down_to_at_least_one() {
    let one = IntOrString::Int(1);
    assert_eq!(floor_at_least_one(None, &one, 10), Ok(1));
    assert_eq!(floor_at_least_one(Some(&percent("25%")), &one, 10), Ok(2));
    assert_eq!(floor_at_least_one(Some(&percent("5%")), &one, 10), Ok(1));
    // The deprecated parser reads a bare number as a percentage.
    assert_eq!(floor_at_least_one(Some(&percent("50")), &one, 10), Ok(5));
    assert_eq!(
        floor_at_least_one(Some(&IntOrString::Int(0)), &one, 10),
        Ok(1)
    );
    assert!(floor_at_least_one(Some(&percent("x%")), &one, 10).is_err());
}
