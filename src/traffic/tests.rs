//! Tests of the traffic patterns and message-list files.
use super::*;
use std::sync::atomic::{AtomicU32, Ordering};

fn destinations(messages: &[MessageSpec]) -> Vec<u32> {
    messages.iter().map(|m| m.destination).collect()
}

fn counts(n: u32, values: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut c = vec![0; n as usize];
    for v in values {
        c[v as usize] += 1;
    }
    c
}

/// A fresh path in the temp directory, unique per process and call.
fn temp_path(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("flitforge-traffic-{}-{tag}-{k}.json", std::process::id());
    std::env::temp_dir()
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn write_temp(tag: &str, text: &str) -> String {
    let path = temp_path(tag);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn names_match_patterns() {
    let all = [
        Traffic::RandomPermutation,
        Traffic::Transpose,
        Traffic::BitReversal,
        Traffic::Identity,
        Traffic::Uniform { q: 2 },
        Traffic::QRelation { q: 2 },
        Traffic::Bernoulli { rate: 0.5 },
        Traffic::File {
            path: "x.json".into(),
        },
    ];
    for (t, name) in all.iter().zip(Traffic::NAMES) {
        assert_eq!(t.name(), name);
        let json = serde_json::to_value(t).unwrap();
        assert_eq!(json["pattern"], name);
        let back: Traffic = serde_json::from_value(json).unwrap();
        assert_eq!(&back, t);
        assert_eq!(t.is_continuous(), name == "bernoulli");
    }
}

#[test]
fn random_permutation_is_a_bijection() {
    for n in [2, 64, 1024] {
        let m = Traffic::RandomPermutation.messages(n, 0, 7).unwrap();
        assert_eq!(m.len(), n as usize);
        let sources: Vec<u32> = m.iter().map(|m| m.source).collect();
        assert_eq!(sources, (0..n).collect::<Vec<_>>());
        let mut d = destinations(&m);
        d.sort_unstable();
        assert_eq!(d, (0..n).collect::<Vec<_>>());
        assert!(m.iter().all(|m| m.release == 0));
    }
}

#[test]
fn transpose_rotates_by_half_the_address_bits() {
    // n = 16, lg n = 4: rotate left by 2.
    let m = Traffic::Transpose.messages(16, 0, 0).unwrap();
    let expected = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
    assert_eq!(destinations(&m), expected);
    // n = 8, lg n = 3: rotate left by 1.
    let m = Traffic::Transpose.messages(8, 0, 0).unwrap();
    assert_eq!(destinations(&m), [0, 2, 4, 6, 1, 3, 5, 7]);
    // n = 2, lg n = 1: rotate by 0.
    let m = Traffic::Transpose.messages(2, 0, 0).unwrap();
    assert_eq!(destinations(&m), [0, 1]);
}

#[test]
fn bit_reversal_reverses_three_bits_at_n_8() {
    let m = Traffic::BitReversal.messages(8, 0, 0).unwrap();
    assert_eq!(destinations(&m), [0, 4, 2, 6, 1, 5, 3, 7]);
}

#[test]
fn identity_sends_each_input_to_itself() {
    let m = Traffic::Identity.messages(32, 0, 0).unwrap();
    assert!(m.iter().all(|m| m.source == m.destination));
    assert_eq!(m.len(), 32);
}

#[test]
fn q_relation_has_q_per_source_and_q_per_destination() {
    let (n, q) = (64, 5);
    let m = Traffic::QRelation { q }.messages(n, 0, 3).unwrap();
    assert_eq!(m.len(), (n * q) as usize);
    assert!(
        counts(n, m.iter().map(|m| m.source))
            .iter()
            .all(|&c| c == q)
    );
    assert!(
        counts(n, m.iter().map(|m| m.destination))
            .iter()
            .all(|&c| c == q)
    );
    assert!(m.windows(2).all(|w| w[0].source <= w[1].source));
}

#[test]
fn uniform_has_q_per_source() {
    let (n, q) = (128, 3);
    let m = Traffic::Uniform { q }.messages(n, 0, 11).unwrap();
    assert_eq!(m.len(), (n * q) as usize);
    assert!(
        counts(n, m.iter().map(|m| m.source))
            .iter()
            .all(|&c| c == q)
    );
    assert!(m.iter().all(|m| m.destination < n && m.release == 0));
    // Independent destinations: not a permutation-like spread at every output.
    let per_dest = counts(n, m.iter().map(|m| m.destination));
    assert!(per_dest.iter().any(|&c| c != q));
}

#[test]
fn bernoulli_count_is_within_five_sigma_of_the_mean() {
    let (n, cycles, rate) = (256u32, 400u64, 0.3);
    let m = Traffic::Bernoulli { rate }.messages(n, cycles, 5).unwrap();
    let trials = f64::from(n) * cycles as f64;
    let mean = trials * rate;
    let sigma = (trials * rate * (1.0 - rate)).sqrt();
    assert!(
        (m.len() as f64 - mean).abs() < 5.0 * sigma,
        "{} vs {mean}",
        m.len()
    );
    assert!(m.iter().all(|m| m.release < cycles && m.destination < n));
    assert!(
        m.windows(2)
            .all(|w| (w[0].release, w[0].source) < (w[1].release, w[1].source))
    );
}

#[test]
fn bernoulli_rate_zero_gives_none_and_rate_one_gives_n_per_cycle() {
    assert!(
        Traffic::Bernoulli { rate: 0.0 }
            .messages(64, 100, 1)
            .unwrap()
            .is_empty()
    );
    let m = Traffic::Bernoulli { rate: 1.0 }
        .messages(64, 100, 1)
        .unwrap();
    assert_eq!(m.len(), 64 * 100);
    assert!(
        counts(100, m.iter().map(|m| m.release as u32))
            .iter()
            .all(|&c| c == 64)
    );
}

#[test]
fn bernoulli_rejects_an_overflowing_horizon() {
    let err = Traffic::Bernoulli { rate: 0.5 }
        .messages(1024, u64::MAX, 1)
        .unwrap_err();
    assert!(err.to_string().contains("cycles"), "{err}");
}

#[test]
fn same_seed_gives_identical_lists_and_different_seeds_differ() {
    let patterns = [
        Traffic::RandomPermutation,
        Traffic::Uniform { q: 2 },
        Traffic::QRelation { q: 2 },
        Traffic::Bernoulli { rate: 0.2 },
    ];
    for t in &patterns {
        let a = t.messages(256, 50, 42).unwrap();
        let b = t.messages(256, 50, 42).unwrap();
        let c = t.messages(256, 50, 43).unwrap();
        assert_eq!(a, b, "{}", t.name());
        assert_ne!(a, c, "{}", t.name());
    }
}

#[test]
fn validate_rejects_bad_rates_and_q() {
    for rate in [1.5, f64::NAN, -0.1, f64::INFINITY] {
        let err = Traffic::Bernoulli { rate }.validate().unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&rate.to_string()) && text.contains("[0, 1]"),
            "{text}"
        );
        assert_eq!(err.exit_code(), 2);
    }
    for t in [
        Traffic::Uniform { q: 0 },
        Traffic::QRelation { q: 0 },
        Traffic::QRelation { q: 1025 },
    ] {
        assert!(t.validate().is_err(), "{t:?}");
        assert!(t.messages(8, 0, 0).is_err());
    }
    assert!(Traffic::Bernoulli { rate: 0.0 }.validate().is_ok());
    assert!(Traffic::Bernoulli { rate: 1.0 }.validate().is_ok());
    assert!(Traffic::QRelation { q: 1024 }.validate().is_ok());
}

/// Fewer than two terminals is refused; patterns on address bits need a power of two, the
/// others (graph networks have any number of terminals) do not.
#[test]
fn messages_need_two_terminals_and_bit_patterns_a_power_of_two() {
    for n in [0, 1] {
        assert!(Traffic::Identity.messages(n, 0, 0).is_err(), "n = {n}");
    }
    assert_eq!(Traffic::Identity.messages(12, 0, 0).unwrap().len(), 12);
    assert_eq!(
        Traffic::RandomPermutation.messages(9, 0, 0).unwrap().len(),
        9
    );
    assert!(Traffic::Transpose.messages(12, 0, 0).is_err());
    assert!(Traffic::BitReversal.messages(9, 0, 0).is_err());
}

#[test]
fn load_messages_round_trips_save_messages() {
    let original = Traffic::Bernoulli { rate: 0.1 }
        .messages(16, 20, 9)
        .unwrap();
    let path = temp_path("roundtrip");
    save_messages(&path, &original).unwrap();
    let loaded = load_messages(&path, 16).unwrap();
    let replayed = Traffic::File { path: path.clone() }
        .messages(16, 0, 0)
        .unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(loaded, original);
    assert_eq!(replayed, original);
}

#[test]
fn load_messages_accepts_a_bare_array_with_default_release() {
    let path = write_temp(
        "array",
        r#"[{"source": 3, "destination": 1, "release": 5}, {"source": 2, "destination": 0}]"#,
    );
    let m = load_messages(&path, 4).unwrap();
    let sorted = Traffic::File { path: path.clone() }
        .messages(4, 0, 0)
        .unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(
        m[1],
        MessageSpec {
            source: 2,
            destination: 0,
            release: 0,
            path: None,
            middle: None
        }
    );
    assert_eq!(sorted[0], m[1]);
    assert_eq!(sorted[1], m[0]);
}

#[test]
fn load_messages_rejects_out_of_range_destination() {
    let path = write_temp(
        "range",
        r#"{"messages": [{"source": 0, "destination": 1}, {"source": 1, "destination": 8}]}"#,
    );
    let err = load_messages(&path, 8).unwrap_err();
    std::fs::remove_file(&path).ok();
    let text = err.to_string();
    assert!(
        text.contains("message 1") && text.contains("destination = 8"),
        "{text}"
    );
    assert!(text.contains("0..=7"), "{text}");
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn load_messages_rejects_malformed_json() {
    let path = write_temp(
        "malformed",
        "{\"messages\": [\n  {\"source\": 0, \"destination\": }\n]}",
    );
    let err = load_messages(&path, 8).unwrap_err();
    std::fs::remove_file(&path).ok();
    let text = err.to_string();
    assert!(matches!(err, Error::Parse { .. }), "{text}");
    assert!(text.contains("line 2"), "{text}");
}

#[test]
fn load_messages_rejects_unknown_keys() {
    for text in [
        r#"[{"source": 0, "destination": 1, "length": 4}]"#,
        r#"{"messages": [], "extra": 1}"#,
    ] {
        let path = write_temp("unknown", text);
        let err = load_messages(&path, 8).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert!(err.to_string().contains("unknown field"), "{err}");
    }
}

#[test]
fn load_messages_reports_a_missing_file_as_io() {
    let err = load_messages(&temp_path("missing"), 8).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

/// The continuous patterns, drawn cycle by cycle as the clock reaches them.
fn continuous() -> [Traffic; 2] {
    [
        Traffic::Bernoulli { rate: 0.3 },
        Traffic::Lfsr {
            rate: 0.2,
            destinations: super::Destinations::Uniform,
        },
    ]
}

/// Drawn cycle by cycle as the clock reaches each cycle, or with cycles skipped, a continuous
/// pattern hands out exactly [`Traffic::messages`], each message at its release.
#[test]
fn drawing_cycle_by_cycle_hands_out_the_whole_sequence() {
    use super::Arrivals;
    for traffic in continuous() {
        let (n, cycles) = (128, 40);
        let all = traffic.messages(n, cycles, 5).unwrap();
        for step in [1, 3] {
            let mut arrivals = Arrivals::new(&traffic, n, cycles, 5).unwrap();
            let (mut drawn, mut next) = (Vec::new(), 0);
            for cycle in (0..cycles + 2).step_by(step) {
                let before = drawn.len();
                // The first cycle not drawn yet.
                assert_eq!(arrivals.next_release(), (next < cycles).then_some(next));
                arrivals.due(cycle, &mut drawn);
                next = cycle + 1;
                assert!(drawn[before..].iter().all(|m| m.release <= cycle));
                assert_eq!(arrivals.produced(), drawn.len() as u64);
            }
            assert!(arrivals.exhausted());
            assert_eq!(drawn, all, "{traffic:?}, every {step} cycles");
        }
    }
}

/// The order of the draws, pinned: a fingerprint of each continuous pattern's messages over
/// some cycles from one seed (a change of order would change every run's report).
#[test]
fn the_order_of_the_draws_is_pinned() {
    let fingerprint = |traffic: &Traffic| {
        let messages = traffic.messages(128, 20, 5).unwrap();
        let fields = messages
            .iter()
            .flat_map(|m| [m.source, m.destination, m.release as u32]);
        // FNV-1a over the fields.
        let hash = fields.fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
            (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
        });
        (messages.len(), hash)
    };
    let [bernoulli, lfsr] = continuous();
    assert_eq!(
        fingerprint(&bernoulli),
        (778, 18321976033758231956),
        "Bernoulli"
    );
    assert_eq!(fingerprint(&lfsr), (493, 6680087090748577570), "LFSR");
}
