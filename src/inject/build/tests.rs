use super::*;
use proptest::prelude::*;

proptest! {
    /// Listed or hashed, the set answers as a plain hash set would, across the switch.
    #[test]
    fn name_set_is_a_set(names in proptest::collection::vec("[a-d]{1,2}", 0..60)) {
        let mut set = NameSet::default();
        let mut reference = HashSet::new();
        for name in &names {
            prop_assert_eq!(set.insert(name), reference.insert(name.as_str()), "{}", name);
            prop_assert!(set.contains(name));
        }
        for probe in ["a", "ab", "dd", "e", ""] {
            prop_assert_eq!(set.contains(probe), reference.contains(probe));
        }
        let collected: NameSet<'_> = names.iter().map(String::as_str).collect();
        prop_assert_eq!(collected.listed.len() + collected.hashed.len(), reference.len());
    }
}
