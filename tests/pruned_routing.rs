//! The pruned butterfly's stage algorithm (seed 001 §3.3) end to end, on both engines.

use flitforge::pruned::{Costs, Engine, Message, Router};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

fn permutation(n: u32, seed: u64) -> Vec<Message> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut d: Vec<u32> = (0..n).collect();
    d.shuffle(&mut rng);
    (0..n)
        .map(|s| Message {
            source: s,
            destination: d[s as usize],
        })
        .collect()
}

#[test]
fn engines_agree_on_random_permutations() {
    for (n, seed) in [(16, 1), (64, 2), (16, 3), (64, 4)] {
        let m = permutation(n, seed);
        let body = 2 * n.trailing_zeros();
        let cyc = Router::new(n, &m, body, Engine::Cycle, Costs::default())
            .unwrap()
            .run(None)
            .unwrap();
        let gold = Router::new(n, &m, body, Engine::Golden, Costs::default())
            .unwrap()
            .run(None)
            .unwrap();
        println!("{cyc:?}");
        assert_eq!(cyc.delivered, m.len());
        assert_eq!(cyc, gold, "n={n} seed={seed}");
    }
}
