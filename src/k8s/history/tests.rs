use super::*;

#[test]
fn hash_and_name_follow_kubernetes() {
    // FNV-32 of "a": 0x050c5d7e.
    assert_eq!(fnv32(b"a"), 0x050c_5d7e);
    assert_eq!(safe_encode("0123456789"), "456789bcdf");
    let long = "a".repeat(300);
    assert_eq!(revision_name(&long, "h").len(), 225);
}

#[test]
fn equivalent_prefers_the_newest_equal() {
    assert_eq!(find_equivalent(0, |_| true), Equivalent::None);
    assert_eq!(find_equivalent(3, |i| i == 2), Equivalent::Latest(2));
    assert_eq!(find_equivalent(3, |i| i < 2), Equivalent::Older(1));
    assert_eq!(find_equivalent(3, |_| false), Equivalent::None);
}
