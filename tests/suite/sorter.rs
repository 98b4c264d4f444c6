//! The flexible sorter of [BB] §4.1 on its cycle-level circuit and the sorting fat-tree of
//! §4.2–4.3.

use flitforge::sorter::circuit::{FlexibleSorter, SorterParams, inring_dims, sort_cycles};
use flitforge::sorter::fattree::FatTree;
use flitforge::sorter::schedule::{Condition, phases};
use flitforge::topology::colouring::colour;
use flitforge::traffic::Traffic;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PARAMS: [(u32, u32); 11] = [
    (2, 2),
    (4, 4),
    (8, 8),
    (8, 16),
    (8, 32),
    (8, 64),
    (16, 16),
    (16, 32),
    (16, 64),
    (16, 128),
    (32, 64),
];

/// Random inputs of every kind: uniform, few distinct values, only the extremes, already
/// sorted, reversed, all equal.
fn input(rng: &mut ChaCha8Rng, r: usize, bits: u32) -> Vec<u64> {
    let max = (1u64 << bits) - 1;
    let mut v: Vec<u64> = match rng.random_range(0..6) {
        0 => (0..r).map(|_| rng.random_range(0..=max)).collect(),
        1 => (0..r).map(|_| rng.random_range(0..=max.min(3))).collect(),
        2 => (0..r)
            .map(|_| if rng.random_bool(0.5) { 0 } else { max })
            .collect(),
        3 | 4 => (0..r).map(|_| rng.random_range(0..=max)).collect(),
        _ => vec![rng.random_range(0..=max); r],
    };
    match v.len() % 3 {
        0 => v.sort_unstable(),
        1 => v.sort_unstable_by(|a, b| b.cmp(a)),
        _ => {}
    }
    v
}

/// Theorem 2's sorter on `count` random inputs: every `r` from 1 to `l` (the last column padded
/// with dummies), `b` from 1 to 32, the output is the sorted input and the cycles are the
/// formula's.
fn sorts_random_inputs(seed: u64, count: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sorters: Vec<Option<FlexibleSorter>> = PARAMS.iter().map(|_| None).collect();
    for i in 0..count {
        let k = rng.random_range(0..PARAMS.len());
        let (s, l) = PARAMS[k];
        let bits = rng.random_range(1..=32);
        let params = SorterParams { s, l, bits };
        let sorter = match &mut sorters[k] {
            Some(f) if f.params().bits == bits => f,
            slot => slot.insert(FlexibleSorter::new(params).unwrap()),
        };
        let r = rng.random_range(1..=l as usize);
        let words = input(&mut rng, r, bits);
        let run = sorter.sort(&words, |_, _| Ok(())).unwrap();
        let mut want = words.clone();
        want.sort_unstable();
        assert_eq!(run.output, want, "instance {i}: {params:?}, r = {r}");
        assert_eq!(
            run.cycles,
            sort_cycles(params, r as u32).unwrap(),
            "instance {i}"
        );
    }
}

#[test]
fn sorts_random_inputs_part_1() {
    sorts_random_inputs(1, 2500);
}

#[test]
fn sorts_random_inputs_part_2() {
    sorts_random_inputs(2, 2500);
}

#[test]
fn sorts_random_inputs_part_3() {
    sorts_random_inputs(3, 2500);
}

#[test]
fn sorts_random_inputs_part_4() {
    sorts_random_inputs(4, 2500);
}

/// Control-store lengths ([BB] §4.1): Omega switches hold `Σ_w 2β(w)w` bits (1168 for s = 8,
/// l = 64); cell `c` holds `Σ_{w > c} β(w)·owners(c, w)`.
#[test]
fn control_store_lengths() {
    for (s, l) in [(8, 64), (16, 256), (32, 1024)] {
        let f = FlexibleSorter::new(SorterParams { s, l, bits: 4 }).unwrap();
        let c = &f.controls;
        let mut omega = 0;
        let mut w = 2;
        while w <= l / s {
            omega += 2 * phases(s * w, s, Condition::Paper).unwrap() * w;
            w *= 2;
        }
        if (s, l) == (8, 64) {
            assert_eq!(omega, 1168);
        }
        for stage in &c.omega {
            for store in stage {
                assert_eq!(
                    store.len() as u32,
                    omega + 1,
                    "one zero past the last field"
                );
            }
        }
        for col in 0..l / s {
            let mut bits = 0;
            let mut w = 2;
            while w <= l / s {
                if col < w {
                    let owners = inring_dims(w)
                        .iter()
                        .filter(|&&j| col & (1 << j) == 0)
                        .count() as u32;
                    bits += phases(s * w, s, Condition::Paper).unwrap() * owners;
                }
                w *= 2;
            }
            for ring in &c.cell {
                assert_eq!(ring[col as usize].len() as u32, bits + 1, "cell {col}");
            }
        }
    }
}

/// Theorem 2's time grows with the number of columns: per phase, a sort costs between 4 and 8
/// cycles per column bit, `T ≤ 8·β(w)·w·(b + 1)`, for every `r` of two circuits.
#[test]
fn time_is_linear_in_columns_per_phase() {
    for (s, l, bits) in [(8, 64, 8), (16, 256, 8), (32, 1024, 16)] {
        let p = SorterParams { s, l, bits };
        for r in (s..=l).step_by(s as usize) {
            let t = sort_cycles(p, r).unwrap() as f64;
            let w = r.div_ceil(s).next_power_of_two();
            let beta = phases(s * w, s, Condition::Paper).unwrap();
            let per = t / (f64::from(beta) * f64::from(w) * f64::from(bits + 1));
            assert!((3.0..=8.0).contains(&per), "s {s} l {l} r {r}: {per}");
        }
    }
}

/// The sorting fat-tree over sizes and workloads: eq. (5) of Lemma 10's proof, the ascent stage
/// counts and delivery of every message, with d-colouring for degree > 1 (interpretation:
/// 'Fat-tree degree', docs/interpretations.md).
#[test]
fn sorting_fat_tree_routes_every_message() {
    for n in [64u32, 256, 1024, 4096] {
        let tree = FatTree::new(n, 2 * n.trailing_zeros()).unwrap();
        for (k, traffic) in [
            Traffic::RandomPermutation,
            Traffic::Transpose,
            Traffic::QRelation { q: 3 },
            Traffic::Uniform { q: 2 },
            Traffic::HotRegion { region: n / 16 },
        ]
        .iter()
        .enumerate()
        {
            let m: Vec<(u32, u32)> = traffic
                .messages(n, 0, k as u64)
                .unwrap()
                .iter()
                .map(|x| (x.source, x.destination))
                .collect();
            let r = tree.route(&m).unwrap();
            assert_eq!(r.delivered, m.len(), "n {n} {}", traffic.name());
            assert_eq!(r.lemma10_violations, 0, "n {n} {}", traffic.name());
            let per_class = 2 * (tree.log_n - 1) + tree.depth + 1;
            assert_eq!(r.ascent_stages, per_class * r.colours);
            assert_eq!(r.colours, r.degree, "König: d colours");
            assert!(r.routing_cycles as f64 >= r.load_factor_dir);
        }
    }
    // Degree beyond a constant is refused (Theorem 3 is for constant degree).
    let hot: Vec<(u32, u32)> = (0..1024).map(|s| (s, 0)).collect();
    let err = FatTree::new(1024, 20).unwrap().route(&hot).unwrap_err();
    assert!(err.to_string().contains("degree = 1024"), "{err}");
    // The colouring is proper: no two messages of one class share a source or destination.
    let m: Vec<(u32, u32)> = Traffic::Uniform { q: 4 }
        .messages(256, 0, 9)
        .unwrap()
        .iter()
        .map(|x| (x.source, x.destination))
        .collect();
    let c = colour(256, &m);
    let mut seen = std::collections::HashSet::new();
    for (e, &(s, t)) in m.iter().enumerate() {
        assert!(seen.insert((0, s, c[e])) && seen.insert((1, t, c[e])));
    }
}
