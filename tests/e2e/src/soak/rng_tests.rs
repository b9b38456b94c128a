use super::Rng;

fn draws(seed: u64) -> Vec<u64> {
    let mut r = Rng::new(seed);
    (0..5).map(|_| r.below(10, 20)).collect()
}

#[test]
fn the_same_seed_gives_the_same_schedule_and_ranges_hold() {
    assert_eq!(draws(7), draws(7));
    assert!(draws(7).iter().all(|n| (10..20).contains(n)));
    assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    assert_eq!(Rng::new(1).below(5, 5), 5);
}
