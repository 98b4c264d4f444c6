//! Traffic patterns: the list of messages a run injects (notes §1.1 `Message`, §2.3.3 q-relations and
//! the random problem of paper 000, §4.1 continuous Bernoulli generators of paper 003).
//!
//! Every pattern is a pure function of `(pattern, n, cycles, seed)`: all randomness comes from the
//! single stream `stream(seed, Stream::Traffic)`, so a run's traffic can be regenerated from its
//! seed, or saved with [`save_messages`] and replayed with [`Traffic::File`].

use std::fs::File;
use std::io::{BufWriter, Write};

use rand::RngExt;
use rand::distr::{Bernoulli, Distribution, Uniform};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};

/// Largest number of messages per input (and per output) of the `uniform` and `q-relation` patterns.
pub const MAX_Q: u32 = 1024;

/// One message to inject: from input `source` to output `destination`, not before cycle `release`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    pub source: u32,
    pub destination: u32,
    #[serde(default)]
    pub release: u64,
}

/// A traffic pattern on an n-input network (n a power of two, inputs and outputs numbered `0..n`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "pattern", deny_unknown_fields)]
pub enum Traffic {
    /// One message per input; the destinations form a uniformly random permutation.
    RandomPermutation,
    /// Destination = source rotated left by `floor(lg n / 2)` bits within `lg n` bits.
    Transpose,
    /// Destination = source with its `lg n` bits reversed.
    BitReversal,
    /// Destination = source.
    Identity,
    /// The random problem of notes §2.3.3: `q` messages per input, destinations independent and uniform.
    Uniform { q: u32 },
    /// A q-relation (notes §2.3.3): `q` messages per input and `q` per output, the union of `q`
    /// independent uniformly random permutations.
    QRelation { q: u32 },
    /// Continuous traffic (notes §4.1): every cycle each input independently creates a message with
    /// probability `rate`, with a uniform destination.
    Bernoulli { rate: f64 },
    /// An explicit message list read with [`load_messages`].
    File { path: String },
}

impl Traffic {
    /// Pattern names, as used on the command line and in configuration files.
    pub const NAMES: [&'static str; 8] = [
        "random-permutation",
        "transpose",
        "bit-reversal",
        "identity",
        "uniform",
        "q-relation",
        "bernoulli",
        "file",
    ];

    /// The pattern's name (one of [`Traffic::NAMES`]).
    pub fn name(&self) -> &'static str {
        let index = match self {
            Traffic::RandomPermutation => 0,
            Traffic::Transpose => 1,
            Traffic::BitReversal => 2,
            Traffic::Identity => 3,
            Traffic::Uniform { .. } => 4,
            Traffic::QRelation { .. } => 5,
            Traffic::Bernoulli { .. } => 6,
            Traffic::File { .. } => 7,
        };
        Self::NAMES[index]
    }

    /// Checks the parameters: `q` in `1..=1024`, `rate` finite and in `[0, 1]`.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Traffic::Uniform { q } | Traffic::QRelation { q } if !(1..=MAX_Q).contains(&q) => Err(
                Error::invalid("q", q, format!("an integer from 1 to {MAX_Q}")),
            ),
            Traffic::Bernoulli { rate } if !(0.0..=1.0).contains(&rate) => Err(Error::invalid(
                "rate",
                rate,
                "a finite injection probability in [0, 1]",
            )),
            _ => Ok(()),
        }
    }

    /// True for continuous traffic (Bernoulli), which needs a cycle horizon.
    pub fn is_continuous(&self) -> bool {
        matches!(self, Traffic::Bernoulli { .. })
    }

    /// The messages of a run on an `n`-input network.
    ///
    /// `cycles` is the horizon of continuous traffic (messages are released at cycles
    /// `0..cycles`); batch patterns release everything at cycle 0 and files keep their own release
    /// cycles. The list is sorted by `(release, source)`, ties in generation order, and is a pure
    /// function of `(self, n, cycles, seed)`.
    pub fn messages(&self, n: u32, cycles: u64, seed: u64) -> Result<Vec<MessageSpec>> {
        self.validate()?;
        let log_n = check_n(n)?;
        let mut rng = stream(seed, Stream::Traffic);
        let mut messages = match *self {
            Traffic::RandomPermutation => {
                let perm = permutation(n, &mut rng);
                batch(n, |s| perm[s as usize])
            }
            Traffic::Transpose => batch(n, |s| transpose(s, log_n)),
            Traffic::BitReversal => batch(n, |s| bit_reversal(s, log_n)),
            Traffic::Identity => batch(n, |s| s),
            Traffic::Uniform { q } => {
                let mut out = Vec::with_capacity(n as usize * q as usize);
                for source in 0..n {
                    for _ in 0..q {
                        let destination = rng.random_range(0..n);
                        out.push(MessageSpec {
                            source,
                            destination,
                            release: 0,
                        });
                    }
                }
                out
            }
            Traffic::QRelation { q } => q_relation(n, q, &mut rng),
            Traffic::Bernoulli { rate } => return bernoulli(n, rate, cycles, &mut rng),
            Traffic::File { ref path } => load_messages(path, n)?,
        };
        // Stable: messages with equal (release, source) keep their generation order.
        messages.sort_by_key(|m| (m.release, m.source));
        Ok(messages)
    }
}

/// Checks that `n` is a power of two, at least 2, and returns `lg n`.
fn check_n(n: u32) -> Result<u32> {
    if n < 2 || !n.is_power_of_two() {
        return Err(Error::invalid("inputs", n, "a power of two, at least 2"));
    }
    Ok(n.trailing_zeros())
}

/// One message per input, released at cycle 0, with destination `dest(source)`.
fn batch(n: u32, dest: impl Fn(u32) -> u32) -> Vec<MessageSpec> {
    (0..n)
        .map(|source| MessageSpec {
            source,
            destination: dest(source),
            release: 0,
        })
        .collect()
}

/// A uniformly random permutation of `0..n`.
fn permutation(n: u32, rng: &mut Rng) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n).collect();
    perm.shuffle(rng);
    perm
}

/// `source` rotated left by `floor(log_n / 2)` bits within `log_n` bits (`log_n >= 1`).
fn transpose(source: u32, log_n: u32) -> u32 {
    let k = log_n / 2;
    let mask = if log_n == 32 {
        u32::MAX
    } else {
        (1 << log_n) - 1
    };
    ((source << k) | (source >> (log_n - k))) & mask
}

/// `source` with its low `log_n` bits reversed (`log_n >= 1`).
fn bit_reversal(source: u32, log_n: u32) -> u32 {
    source.reverse_bits() >> (32 - log_n)
}

/// The union of `q` independent random permutations, listed source-major (permutation order
/// within a source).
fn q_relation(n: u32, q: u32, rng: &mut Rng) -> Vec<MessageSpec> {
    let (n_us, q_us) = (n as usize, q as usize);
    let mut out = vec![
        MessageSpec {
            source: 0,
            destination: 0,
            release: 0
        };
        n_us * q_us
    ];
    for k in 0..q_us {
        let perm = permutation(n, rng);
        for (source, &destination) in perm.iter().enumerate() {
            out[source * q_us + k] = MessageSpec {
                source: source as u32,
                destination,
                release: 0,
            };
        }
    }
    out
}

/// Continuous Bernoulli generators (notes §4.1), drawn cycle-major then source, so the list is
/// already sorted by `(release, source)`.
fn bernoulli(n: u32, rate: f64, cycles: u64, rng: &mut Rng) -> Result<Vec<MessageSpec>> {
    let draws = u64::from(n)
        .checked_mul(cycles)
        .ok_or_else(|| Error::invalid("cycles", cycles, "a horizon with n * cycles < 2^64"))?;
    if rate == 0.0 || draws == 0 {
        return Ok(Vec::new());
    }
    let coin = Bernoulli::new(rate).map_err(|e| Error::invalid("rate", rate, e))?;
    let dest = Uniform::new(0, n).map_err(|e| Error::invalid("inputs", n, e))?;
    // Expected count plus a 6-sigma margin, capped so an absurd horizon cannot pre-allocate
    // unbounded memory (the vector still grows if needed).
    let mean = draws as f64 * rate;
    let estimate = mean + 6.0 * mean.sqrt() + 16.0;
    let mut out = Vec::with_capacity(estimate.min((1u64 << 27) as f64) as usize);
    for release in 0..cycles {
        for source in 0..n {
            if coin.sample(rng) {
                out.push(MessageSpec {
                    source,
                    destination: dest.sample(rng),
                    release,
                });
            }
        }
    }
    Ok(out)
}

/// The object form of a message-list file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageFile {
    messages: Vec<MessageSpec>,
}

/// The object form of a message-list file, borrowed for writing.
#[derive(Serialize)]
struct MessageFileRef<'a> {
    messages: &'a [MessageSpec],
}

/// Reads a message list: a JSON array of `{"source", "destination", "release"?}` objects, or an
/// object `{"messages": [...]}`. Every source and destination must be in `0..n`.
pub fn load_messages(path: &str, n: u32) -> Result<Vec<MessageSpec>> {
    check_n(n)?;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    // Dispatch on the first token rather than an untagged enum, so serde's message (with line and
    // column) reaches the user.
    let parsed = if text.trim_start().starts_with('[') {
        serde_json::from_str::<Vec<MessageSpec>>(&text)
    } else {
        serde_json::from_str::<MessageFile>(&text).map(|f| f.messages)
    };
    let messages = parsed.map_err(|e| Error::parse(path, e))?;
    for (i, m) in messages.iter().enumerate() {
        for (field, value) in [("source", m.source), ("destination", m.destination)] {
            if value >= n {
                return Err(Error::parse(
                    path,
                    format!(
                        "message {i}: {field} = {value} is out of range 0..={} (the network has {n} {}s)",
                        n - 1,
                        if field == "source" { "input" } else { "output" },
                    ),
                ));
            }
        }
    }
    Ok(messages)
}

/// Writes a message list as a pretty JSON object `{"messages": [...]}`, readable by
/// [`load_messages`], so a run's traffic can be saved and replayed.
pub fn save_messages(path: &str, messages: &[MessageSpec]) -> Result<()> {
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut writer, &MessageFileRef { messages })
        .map_err(|e| Error::io(path, e.into()))?;
    writer
        .write_all(b"\n")
        .and_then(|()| writer.flush())
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn messages_rejects_non_power_of_two_inputs() {
        for n in [0, 1, 12] {
            assert!(Traffic::Identity.messages(n, 0, 0).is_err(), "n = {n}");
        }
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
                release: 0
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
}
