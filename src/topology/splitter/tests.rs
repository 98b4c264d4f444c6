use super::*;
use crate::error::Error;
use crate::topology::{butterfly, dilated_butterfly};

fn splitter(n: u32, d: u32, seed: u64) -> Topology {
    random_splitter(n, d, SplitterWiring::default(), seed).unwrap()
}

/// The default wiring with `generator`.
fn wired_by(generator: WiringGenerator) -> SplitterWiring {
    SplitterWiring {
        generator,
        ..SplitterWiring::default()
    }
}

/// Every switch's in-degree, by switch number.
fn in_degrees(t: &Topology) -> Vec<u32> {
    let mut inn = vec![0u32; t.node_count()];
    for l in &t.links {
        inn[l.head as usize] += 1;
    }
    inn
}

#[test]
fn splitter_degrees_match_lm_section_i_b() {
    for d in 1..=4 {
        let t = splitter(64, d, 7);
        assert_eq!(
            (t.kind, t.levels, t.multiplicity),
            (TopologyKind::Splitter, 7, d)
        );
        let mut out = vec![[0u32; 2]; t.node_count()];
        for l in &t.links {
            let (tail, head) = (t.node(l.tail), t.node(l.head));
            let m = t.n >> tail.level;
            let child = tail.column / m * m + u32::from(l.direction) * m / 2;
            assert_eq!(head.level, tail.level + 1);
            assert!((child..child + m / 2).contains(&head.column), "{l:?}");
            out[l.tail as usize][l.direction as usize] += 1;
        }
        let n = t.n as usize;
        assert!(out[..n * 6].iter().all(|&c| c == [d, d]));
        assert!(in_degrees(&t)[n..].iter().all(|&c| c == 2 * d));
    }
}

#[test]
fn splitter_wiring_is_deterministic_per_seed() {
    assert_eq!(splitter(64, 2, 1).links, splitter(64, 2, 1).links);
    assert_ne!(splitter(64, 2, 1).links, splitter(64, 2, 2).links);
}

#[test]
fn splitter_wiring_config_defaults_and_rejects_unknown_fields() {
    let w: SplitterWiring = toml::from_str("cleanup = false").unwrap();
    assert_eq!(
        w,
        SplitterWiring {
            generator: WiringGenerator::Configuration,
            cleanup: false,
            cleanup_budget: 10_000,
            first_matching: FirstMatching::Random,
        }
    );
    let w: SplitterWiring = toml::from_str("generator = \"rounds\"").unwrap();
    assert_eq!(w.generator, WiringGenerator::Rounds);
    let w: SplitterWiring =
        toml::from_str("generator = \"butterfly-plus-random\"\nfirst_matching = \"identity\"")
            .unwrap();
    assert_eq!(w.generator, WiringGenerator::ButterflyPlusRandom);
    assert_eq!(w.first_matching, FirstMatching::Identity);
    assert!(toml::from_str::<SplitterWiring>("clean = true").is_err());
}

#[test]
fn splitter_rejects_invalid_parameters() {
    for (n, d) in [(64, 0), (64, 9), (48, 2), (1, 2), (1 << 21, 2)] {
        let r = random_splitter(n, d, SplitterWiring::default(), 1);
        assert!(matches!(r, Err(Error::Invalid { .. })), "n = {n}, d = {d}");
    }
}

#[test]
fn cleanup_removes_parallel_links_when_possible() {
    let per_level = |t: &Topology, level: u32| {
        let (a, b) = ((level * t.n * 4) as usize, ((level + 1) * t.n * 4) as usize);
        let sub = Topology {
            links: t.links[a..b].to_vec(),
            ..t.clone()
        };
        parallel_links(&sub)
    };
    for seed in 0..20 {
        let t = splitter(64, 2, seed);
        for level in 0..4 {
            assert_eq!(
                per_level(&t, level),
                0,
                "seed {seed} level {level} (M >= 8)"
            );
        }
        // M = 2: both lanes of every direction go to the single child output.
        assert_eq!(per_level(&t, 5), 64 * 2);
    }
    let raw = SplitterWiring {
        cleanup: false,
        ..SplitterWiring::default()
    };
    let t = random_splitter(64, 2, raw, 0).unwrap();
    assert!((0..4).map(|level| per_level(&t, level)).sum::<usize>() > 0);
    assert_eq!(parallel_links(&butterfly(64).unwrap()), 0);
    assert_eq!(
        parallel_links(&dilated_butterfly(8, 3).unwrap()),
        8 * 3 * 2 * 2
    );
}

#[test]
fn splitter_routing_reaches_every_destination() {
    let t = splitter(32, 2, 3);
    for s in 0..32 {
        for dst in 0..32 {
            let cols = t.path_columns(s, dst, 0);
            assert_eq!((cols[0], cols[5]), (s, dst));
        }
    }
}

#[test]
fn butterfly_splitter_expansion_is_one_half() {
    // Inputs c and c ^ (bit l) share their one up and one down neighbour: |N(S)| / |S| = 1/2.
    let e = expansion(&butterfly(8).unwrap(), 0, 0, 0.25);
    assert_eq!(
        e,
        Expansion {
            alpha: 0.25,
            up: 0.5,
            down: 0.5,
            exact: true
        }
    );
    let e = expansion(&butterfly(32).unwrap(), 2, 3, 0.25);
    assert_eq!((e.up, e.down, e.exact), (0.5, 0.5, true));
    let e = expansion(&dilated_butterfly(64, 2).unwrap(), 0, 0, 0.25);
    assert_eq!((e.up, e.down, e.exact), (0.5, 0.5, false));
}

#[test]
fn random_d3_splitter_expands() {
    // Seed 1: the 16-input splitter of a d = 3 network has (1/4, >1)-expansion.
    let e = expansion(&splitter(16, 3, 1), 0, 0, 0.25);
    assert!(e.exact && e.up > 1.0 && e.down > 1.0, "{e:?}");
}

#[test]
fn sampled_expansion_bounds_exact_from_above() {
    let t = splitter(64, 3, 5);
    for block in 0..4 {
        let sp = Splitter::new(&t, 2, block);
        let exact = exact_expansion(&sp, 4);
        let sampled = sampled_expansion(&sp, 4, &mut Rng::seed_from_u64(block.into()));
        assert!(
            sampled[0] >= exact[0] && sampled[1] >= exact[1],
            "{sampled:?} {exact:?}"
        );
    }
}

#[test]
fn rounds_generator_keeps_degrees_and_cleans_up() {
    let t = random_splitter(64, 3, wired_by(WiringGenerator::Rounds), 5).unwrap();
    assert_ne!(t.links, splitter(64, 3, 5).links);
    assert!(in_degrees(&t)[64..].iter().all(|&c| c == 6));
    let level0 = Topology {
        links: t.links[..64 * 6].to_vec(),
        ..t.clone()
    };
    assert_eq!(parallel_links(&level0), 0);
}

#[test]
fn lane_index_is_independent_of_the_head_column() {
    // Mean relative head position (column within the child splitter / its size) per
    // lane, per splitter level, over many wirings: equal for every lane when lane order
    // carries no geometry (it was 1/4 against 3/4 when lanes were sorted by head column).
    let n = 64u32;
    for generator in [WiringGenerator::Configuration, WiringGenerator::Rounds] {
        for d in [2u32, 3] {
            let w = wired_by(generator);
            // sum[level][lane], count[level][lane]
            let mut sum = vec![vec![0f64; d as usize]; 6];
            let mut count = vec![vec![0u32; d as usize]; 6];
            for seed in 0..100 {
                let t = random_splitter(n, d, w, seed).unwrap();
                for l in &t.links {
                    let level = (l.tail / n) as usize;
                    let half = (n >> level) / 2;
                    if half < 2 {
                        continue;
                    }
                    let offset = (l.head % n) % half;
                    sum[level][l.lane as usize] += f64::from(offset) / f64::from(half - 1);
                    count[level][l.lane as usize] += 1;
                }
            }
            for level in 0..5 {
                let mean: Vec<f64> = (0..d as usize)
                    .map(|k| sum[level][k] / f64::from(count[level][k]))
                    .collect();
                for k in 1..d as usize {
                    assert!(
                        (mean[k] - mean[0]).abs() < 0.02,
                        "{generator:?} d = {d}, level {level}: lane means {mean:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn butterfly_plus_random_keeps_the_butterfly_edge_on_lane_0() {
    let w = wired_by(WiringGenerator::ButterflyPlusRandom);
    for (n, d) in [(64u32, 2u32), (64, 3), (256, 2)] {
        for seed in 0..5 {
            let t = random_splitter(n, d, w, seed).unwrap();
            for l in &t.links {
                if l.lane == 0 {
                    let level = l.tail / n;
                    let (m, row) = (n >> level, l.tail % n);
                    let half = m / 2;
                    let expected = row - row % m + u32::from(l.direction) * half + row % half;
                    assert_eq!(l.head % n, expected, "n {n} d {d} seed {seed} {l:?}");
                }
            }
            assert!(in_degrees(&t)[n as usize..].iter().all(|&c| c == 2 * d));
            // Levels whose children have at least d rows can avoid parallel links.
            let levels = (0..n.trailing_zeros())
                .filter(|&l| (n >> l) / 2 >= d)
                .count();
            let last = levels * n as usize * 2 * d as usize;
            let avoidable = Topology {
                links: t.links[..last].to_vec(),
                ..t.clone()
            };
            assert_eq!(parallel_links(&avoidable), 0, "n {n} d {d} seed {seed}");
        }
    }
}
