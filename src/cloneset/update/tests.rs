use super::first_sorted;

/// The selection gives the head of what the planner's two stable sorts (by key, then
/// PreparingUpdate first) give.
#[test]
fn selecting_first_equals_the_head_of_the_stable_sorts() {
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..500 {
        let len = rng.usize(0..60);
        let items: Vec<(bool, u8)> = (0..len).map(|_| (rng.bool(), rng.u8(0..6))).collect();
        let mut stable: Vec<usize> = (0..len).collect();
        stable.sort_by_key(|i| items[*i].1);
        stable.sort_by_key(|i| items[*i].0);
        let needed = rng.usize(0..=len + 2);
        let mut keyed: Vec<(bool, u8, usize)> = items
            .iter()
            .enumerate()
            .map(|(i, (f, k))| (*f, *k, i))
            .collect();
        first_sorted(&mut keyed, needed);
        let picked: Vec<usize> = keyed.into_iter().map(|(_, _, i)| i).collect();
        stable.truncate(needed);
        assert_eq!(picked, stable);
    }
}
