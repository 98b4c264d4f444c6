//! Upfal's wave algorithm: deliveries, Lemma 2.5 and the potential, and the refusals.

use super::*;

fn config(n: u32, d: u32, p: u32, seed: u64) -> UpfalConfig {
    UpfalConfig {
        inputs: n,
        multiplicity: d,
        permutations: p,
        beta: f64::from(d.min(4)),
        seed,
        ..UpfalConfig::default()
    }
}

#[test]
fn routes_random_permutations_exactly_once_to_the_right_output() {
    for (n, d, p) in [
        (64, 3, 1),
        (64, 4, 2),
        (256, 3, 2),
        (256, 4, 1),
        (64, 1, 3),
        (8, 2, 2),
    ] {
        for front in [FrontLevels::Copies, FrontLevels::Matchings] {
            let cfg = UpfalConfig {
                front,
                ..config(n, d, p, 7 + u64::from(n + d + p))
            };
            let perms = random_permutations(n, p, cfg.seed);
            let (report, deliveries) = route_traced(&cfg, &perms).unwrap();
            let mut got = vec![0u32; (n * p) as usize];
            for &(packet, row) in &deliveries {
                let (k, i) = (packet / n, packet % n);
                assert_eq!(row, perms[k as usize][i as usize], "packet {packet}");
                got[packet as usize] += 1;
            }
            assert!(got.iter().all(|&g| g == 1), "{n} {d} {p}");
            assert_eq!(report.delivered, n * p);
            let last = *report.potential.last().unwrap();
            assert!(last == 0.0 && last.is_sign_positive());
            assert_eq!(report.potential.len() as u64, report.stages + 1);
            let stage = 4 * u64::from(d);
            assert!(
                report.steps > (report.stages - 1) * stage && report.steps <= report.stages * stage
            );
            // Lemma 2.5 held after every phase (route returned Ok) and was actually exercised.
            // (N = 8 may route without any packet ever waiting.)
            assert!(
                n < 64 || report.lemma_2_5_checks > 0,
                "{n} {d} {p}: {report:?}"
            );
        }
    }
}

/// A forward move from even level k to k + 1 keeps the packet's potential (both levels
/// have w^(k+1)); from odd k to k + 1 it multiplies it by w² < 1; delivery sets it to 0; a
/// swap sends the heavier packet (weight a) forward and the lighter (b < a) back, changing
/// the total by (a − b)(f(k+1) − f(k)) ≤ 0 for the non-increasing level factor f. So the
/// potential never increases (up to float rounding of the sums).
#[test]
fn potential_never_increases() {
    for (n, d, p) in [(64, 3, 2), (256, 4, 1), (256, 3, 1)] {
        let cfg = config(n, d, p, 99);
        let report = route(&cfg, &random_permutations(n, p, 5)).unwrap();
        for s in report.potential.windows(2) {
            assert!(s[1] <= s[0] * (1.0 + 1e-12), "{:?}", report.potential);
        }
        assert!(report.worst_stage_ratio <= 1.0 + 1e-12);
        assert_eq!(report.stage_ratios().len() as u64, report.stages);
    }
}

#[test]
fn colouring_is_proper_and_steps_are_conflict_free() {
    for (n, d, p) in [(64, 3, 3), (256, 4, 2), (16, 8, 2), (4, 2, 1)] {
        let net = Network::build(&config(n, d, p, 3)).unwrap();
        net.check_colouring().unwrap();
        // Every switch below the outputs has one out link per colour; every switch above
        // the top front level one in link per colour.
        let cs = net.colours as usize;
        let mut out = vec![vec![0u32; cs]; (net.levels * n) as usize];
        let mut inn = vec![vec![0u32; cs]; (net.levels * n) as usize];
        for (index, class) in net.classes.iter().enumerate() {
            for a in class {
                out[a.tail as usize][index % cs] += 1;
                inn[a.head as usize][index % cs] += 1;
            }
        }
        let outputs = ((net.levels - 1) * n) as usize;
        assert!(out[..outputs].iter().flatten().all(|&x| x == 1));
        assert!(out[outputs..].iter().flatten().all(|&x| x == 0));
        assert!(inn[n as usize..].iter().flatten().all(|&x| x == 1));
        assert!(inn[..n as usize].iter().flatten().all(|&x| x == 0));
    }
}

#[test]
fn deterministic_for_a_seed() {
    let cfg = config(256, 3, 2, 11);
    let perms = random_permutations(256, 2, 4);
    let a = route_traced(&cfg, &perms).unwrap();
    let b = route_traced(&cfg, &perms).unwrap();
    assert_eq!(a.1, b.1);
    assert_eq!(a.0.potential, b.0.potential);
    assert_eq!(a.0.steps, b.0.steps);
    let c = route_traced(&config(256, 3, 2, 12), &perms).unwrap();
    assert_ne!(a.1, c.1);
}

#[test]
fn invalid_configs_and_destinations_are_refused() {
    let ok = UpfalConfig::default();
    ok.validate().unwrap();
    let bad = [
        UpfalConfig { inputs: 96, ..ok },
        UpfalConfig { inputs: 1, ..ok },
        UpfalConfig {
            multiplicity: 0,
            ..ok
        },
        UpfalConfig {
            multiplicity: 9,
            ..ok
        },
        UpfalConfig {
            permutations: 0,
            ..ok
        },
        UpfalConfig {
            permutations: 65,
            ..ok
        },
        UpfalConfig {
            wave_modulus: 3,
            ..ok
        },
        UpfalConfig {
            wave_modulus: 1 << 17,
            ..ok
        },
        UpfalConfig { nu: 1.0, ..ok },
        UpfalConfig { nu: f64::NAN, ..ok },
        UpfalConfig { w: 0.0, ..ok },
        UpfalConfig { beta: -1.0, ..ok },
        UpfalConfig { nu: 1e-300, ..ok },
        UpfalConfig {
            wave_modulus: 1 << 16,
            ..ok
        },
        UpfalConfig {
            watchdog_stages: 0,
            ..ok
        },
        UpfalConfig {
            inputs: 1 << 20,
            multiplicity: 8,
            ..ok
        },
    ];
    for cfg in bad {
        let e = route(&cfg, &random_permutations(cfg.inputs.min(256), 1, 1));
        assert!(matches!(e, Err(Error::Invalid { .. })), "{cfg:?}: {e:?}");
    }
    let cfg = config(16, 3, 2, 1);
    let mut perms = random_permutations(16, 2, 1);
    assert!(matches!(
        route(&cfg, &perms[..1]),
        Err(Error::Invalid { .. })
    ));
    perms[1][3] = perms[1][4];
    assert!(matches!(route(&cfg, &perms), Err(Error::Invalid { .. })));
    perms[1][3] = 16;
    assert!(matches!(route(&cfg, &perms), Err(Error::Invalid { .. })));
    perms[1].pop();
    assert!(matches!(route(&cfg, &perms), Err(Error::Invalid { .. })));
}

/// The example of [LM] §II-B: d = 11, β = 4, Lw = 16, ν = 1/2, w = 1/√2 give σ = 2/3,
/// ρ = 8/9, and for P = lg N Theorem 2.1's formula gives 4531.41·lg N − 1035.74 steps
/// (44278.37 at N = 1024), not the paper's printed 4273·lg N.
#[test]
fn theorem_2_1_bound_for_the_example_of_section_ii_b() {
    let w = std::f64::consts::FRAC_1_SQRT_2;
    let (rho, sigma) = claim_2_4_rho(4.0, 0.5, w);
    assert!((sigma - 2.0 / 3.0).abs() < 1e-12 && (rho - 8.0 / 9.0).abs() < 1e-12);
    for log_n in [8u32, 10, 16] {
        let t = theorem_2_1_bound(11, 1 << log_n, log_n, 16, 0.5, w, rho);
        let l = f64::from(log_n);
        assert!((t - (4531.4109 * l - 1035.7430)).abs() < 0.01, "{t}");
        assert!((t - (4531.0 * l - 1036.0)).abs() < 8.0, "{t}");
    }
    assert!((theorem_2_1_bound(11, 1024, 10, 16, 0.5, w, rho) - 44278.37).abs() < 0.01);
    assert_eq!(theorem_2_1_bound(4, 256, 1, 16, 0.5, w, 1.0), f64::INFINITY);
}

#[test]
fn lemma_2_5_violation_is_reported() {
    let cfg = config(16, 3, 1, 2);
    let net = Network::build(&cfg).unwrap();
    let perms = random_permutations(16, 1, 2);
    let mut sim = Sim::new(&net, &cfg, &perms);
    // Before any step, every level-0 packet can use an empty level-1 head.
    let e = sim.check_lemma_2_5(0);
    assert!(matches!(e, Err(Error::Invariant { .. })), "{e:?}");
    // No odd-level packets yet: nothing to check.
    sim.check_lemma_2_5(1).unwrap();
}

#[test]
fn watchdog_reports_a_deadlock() {
    let cfg = UpfalConfig {
        watchdog_stages: 3,
        ..config(16, 3, 1, 2)
    };
    let mut net = Network::build(&cfg).unwrap();
    net.classes.iter_mut().for_each(Vec::clear);
    match run(&net, &cfg, &random_permutations(16, 1, 2)) {
        Err(Error::Deadlock(m)) => {
            assert!(
                m.contains("3 stages") && m.contains("16 packets left"),
                "{m}"
            );
            assert!(m.contains("step 36") && m.contains("level 0"), "{m}");
        }
        other => panic!("expected a deadlock, got {:?}", other.map(|r| r.0)),
    }
}
