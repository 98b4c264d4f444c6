//! Traffic patterns: the list of messages a run injects (q-relations and the random problem of
//! [CMS] §1.2, continuous Bernoulli generators of [SV] §1.2).
//!
//! Every pattern is a pure function of `(pattern, n, cycles, seed)`: all randomness comes from the
//! single stream `stream(seed, Stream::Traffic)`, so a run's traffic can be regenerated from its
//! seed, or saved with [`save_messages`] and replayed with [`Traffic::File`].

use rand::RngExt;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};

mod arrivals;
pub use arrivals::Arrivals;

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
    /// On a graph network, the index of the given path the message follows (none: the
    /// network's routing function takes it to its destination).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<u32>,
    /// On a network of two passes (Beneš, doubled butterfly), the middle column the message
    /// passes between them (none: the run's `--middle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub middle: Option<u32>,
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
    /// The random problem of [CMS] §1.2: `q` messages per input, destinations independent and
    /// uniform.
    Uniform { q: u32 },
    /// A q-relation ([CMS] §1.2): `q` messages per input and `q` per output, the union of `q`
    /// independent uniformly random permutations.
    QRelation { q: u32 },
    /// Continuous traffic ([SV] §1.2): every cycle each input independently creates a message with
    /// probability `rate`, with a uniform destination.
    Bernoulli { rate: f64 },
    /// An explicit message list read with [`load_messages`].
    File { path: String },
    /// The on-chip traffic generators of `flitforge fpga`, one per input, as the hardware
    /// builds them from 16-bit LFSRs ([`crate::lfsr`]): in every cycle below the horizon a
    /// message arrives with probability `rate` (arrival register ≤ round(rate · 65535)), and
    /// each message goes to the fixed destination of `destinations` or, for `uniform`, to lg n
    /// bits of the destination register spaced 16 / lg n apart ([`crate::lfsr::spread`]),
    /// which then steps once. At most 65 536 inputs.
    Lfsr {
        rate: f64,
        #[serde(default)]
        destinations: Destinations,
    },
    /// One message per input to a destination drawn uniformly from the hot region of leaves
    /// `0..region`: it overloads the channels into the region and, on the pruned butterfly,
    /// forces conflicts and sidetracking.
    HotRegion { region: u32 },
    /// A graph network's messages on given paths, one per path of the file ([`crate::topology::graph::read_paths`]),
    /// each from the switch its path starts at to the one it ends at.
    Paths { path: String },
}

/// Where the on-chip generators of [`Traffic::Lfsr`] send their messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Destinations {
    /// Each message to a destination drawn from the generator's destination register.
    #[default]
    Uniform,
    /// Every message of a source to its transpose.
    Transpose,
    /// ... to its bit reversal.
    BitReversal,
    /// ... to itself.
    Identity,
    /// ... to its image under one random permutation of the inputs (from the seed).
    RandomPermutation,
}

impl Destinations {
    /// Command-line names.
    pub const NAMES: [&'static str; 5] = [
        "uniform",
        "transpose",
        "bit-reversal",
        "identity",
        "random-permutation",
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The fixed destination of every source (`None` for uniform destinations).
    pub fn fixed(self, n: u32, seed: u64) -> Option<Vec<u32>> {
        let log_n = n.trailing_zeros();
        match self {
            Destinations::Uniform => None,
            Destinations::Transpose => Some((0..n).map(|s| transpose(s, log_n)).collect()),
            Destinations::BitReversal => Some((0..n).map(|s| bit_reversal(s, log_n)).collect()),
            Destinations::Identity => Some((0..n).collect()),
            Destinations::RandomPermutation => {
                Some(permutation(n, &mut stream(seed, Stream::Traffic)))
            }
        }
    }
}

/// Latest cycle a message may be released at, and longest run (`--cycles`): 2^40, about
/// 10^12 cycles, far beyond any run that ends (the simulator skips idle cycles up to it).
pub const MAX_CYCLE: u64 = 1 << 40;

/// Largest number of inputs of [`Traffic::Lfsr`]: a destination is drawn from a 16-bit register.
pub const MAX_LFSR_INPUTS: u32 = 1 << 16;

/// The arrival threshold of an on-chip generator: a message arrives when the arrival register
/// (1..=65535) is at most this, so with probability `threshold / 65535`.
pub fn lfsr_threshold(rate: f64) -> u16 {
    (rate.clamp(0.0, 1.0) * 65535.0).round() as u16
}

impl Traffic {
    /// Pattern names, as used on the command line and in configuration files.
    pub const NAMES: [&'static str; 11] = [
        "random-permutation",
        "transpose",
        "bit-reversal",
        "identity",
        "uniform",
        "q-relation",
        "bernoulli",
        "file",
        "hot-region",
        "lfsr",
        "paths",
    ];

    /// The file the pattern reads (a message list, or a graph network's paths), if any.
    pub fn file(&self) -> Option<&str> {
        match self {
            Traffic::File { path } | Traffic::Paths { path } => Some(path),
            _ => None,
        }
    }

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
            Traffic::HotRegion { .. } => 8,
            Traffic::Lfsr { .. } => 9,
            Traffic::Paths { .. } => 10,
        };
        Self::NAMES[index]
    }

    /// Checks the parameters: `q` in `1..=1024`, `rate` finite and in `[0, 1]`, `region` at
    /// least 1 (and at most `n`, checked with `n`).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Traffic::Uniform { q } | Traffic::QRelation { q } if !(1..=MAX_Q).contains(&q) => Err(
                Error::invalid("q", q, format!("an integer from 1 to {MAX_Q}")),
            ),
            Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. }
                if !(0.0..=1.0).contains(&rate) =>
            {
                Err(Error::invalid(
                    "rate",
                    rate,
                    "a finite injection probability in [0, 1]",
                ))
            }
            Traffic::HotRegion { region: 0 } => {
                Err(Error::invalid("region", 0, "1 to the number of inputs"))
            }
            _ => Ok(()),
        }
    }

    /// True for continuous traffic (Bernoulli, on-chip generators), which needs a cycle
    /// horizon.
    pub fn is_continuous(&self) -> bool {
        matches!(self, Traffic::Bernoulli { .. } | Traffic::Lfsr { .. })
    }

    /// The messages of a run on an `n`-input network.
    ///
    /// `cycles` is the horizon of continuous traffic (messages are released at cycles
    /// `0..cycles`); batch patterns release everything at cycle 0 and files keep their own release
    /// cycles. The list is sorted by `(release, source)`, ties in generation order, and is a pure
    /// function of `(self, n, cycles, seed)`.
    pub fn messages(&self, n: u32, cycles: u64, seed: u64) -> Result<Vec<MessageSpec>> {
        self.validate()?;
        check_n(n)?;
        let bits = || power_of_two(n, self.name());
        let mut rng = stream(seed, Stream::Traffic);
        let mut messages = match *self {
            Traffic::RandomPermutation => {
                let perm = permutation(n, &mut rng);
                batch(n, |s| perm[s as usize])
            }
            Traffic::Transpose => {
                let log_n = bits()?;
                batch(n, |s| transpose(s, log_n))
            }
            Traffic::BitReversal => {
                let log_n = bits()?;
                batch(n, |s| bit_reversal(s, log_n))
            }
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
                            path: None,
                            middle: None,
                        });
                    }
                }
                out
            }
            Traffic::QRelation { q } => q_relation(n, q, &mut rng),
            Traffic::Bernoulli { .. } | Traffic::Lfsr { .. } => {
                return Ok(Arrivals::new(self, n, cycles, seed)?.collect_all());
            }
            Traffic::File { ref path } => load_messages(path, n)?,
            Traffic::Paths { .. } => {
                return Err(Error::invalid(
                    "traffic",
                    "paths",
                    "a graph network's run (the paths name their own sources and destinations)",
                ));
            }
            Traffic::HotRegion { region } => {
                if region > n {
                    return Err(Error::invalid(
                        "region",
                        region,
                        format!("1 to the number of inputs, {n}"),
                    ));
                }
                let dests: Vec<u32> = (0..n).map(|_| rng.random_range(0..region)).collect();
                batch(n, |s| dests[s as usize])
            }
        };
        // Stable: messages with equal (release, source) keep their generation order.
        messages.sort_by_key(|m| (m.release, m.source));
        Ok(messages)
    }
}

/// Degree `d(M)` of a message set on `n` terminals: the most messages any terminal sends or
/// receives: the larger of the two, not their sum (docs/interpretations.md, 'Degree').
pub fn degree(n: u32, messages: impl IntoIterator<Item = (u32, u32)>) -> u32 {
    let mut out = vec![0u32; n as usize];
    let mut inn = vec![0u32; n as usize];
    for (s, d) in messages {
        out[s as usize] += 1;
        inn[d as usize] += 1;
    }
    out.iter().chain(&inn).copied().max().unwrap_or(0)
}

/// Checks that `n` is a power of two, at least 2, and returns `lg n`.
/// Checks a terminal count: at least 2.
fn check_n(n: u32) -> Result<()> {
    if n < 2 {
        return Err(Error::invalid("inputs", n, "at least 2 terminals"));
    }
    Ok(())
}

/// `lg n` for the patterns defined on address bits (transpose, bit reversal, the on-chip
/// generators), which need `n` a power of two.
fn power_of_two(n: u32, pattern: &str) -> Result<u32> {
    if !n.is_power_of_two() {
        return Err(Error::invalid(
            "inputs",
            n,
            format!("a power of two with --traffic {pattern} (it works on address bits)"),
        ));
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
            path: None,
            middle: None,
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
            release: 0,
            path: None,
            middle: None
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
                path: None,
                middle: None,
            };
        }
    }
    out
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
    let text = crate::limits::read_input_text(path)?;
    // Dispatch on the first token rather than an untagged enum, so serde's message (with line and
    // column) reaches the user.
    let parsed = if text.trim_start().starts_with('[') {
        serde_json::from_str::<Vec<MessageSpec>>(&text)
    } else {
        serde_json::from_str::<MessageFile>(&text).map(|f| f.messages)
    };
    let messages = parsed.map_err(|e| Error::parse(path, e))?;
    for (i, m) in messages.iter().enumerate() {
        if m.release > MAX_CYCLE {
            return Err(Error::parse(
                path,
                format!(
                    "message {i}: release = {} is out of range 0..={MAX_CYCLE} (2^40 cycles)",
                    m.release
                ),
            ));
        }
        for (field, value) in [
            ("source", m.source),
            ("destination", m.destination),
            ("middle", m.middle.unwrap_or(0)),
        ] {
            if value >= n {
                return Err(Error::parse(
                    path,
                    format!(
                        "message {i}: {field} = {value} is out of range 0..={} (the network has {n} {}s)",
                        n - 1,
                        match field {
                            "source" => "input",
                            "destination" => "output",
                            _ => "column",
                        },
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
    let mut file = crate::files::AtomicFile::create(path)?;
    let writer = file.writer();
    serde_json::to_writer_pretty(&mut *writer, &MessageFileRef { messages })
        .map_err(|e| Error::io(path, e.into()))?;
    writer.write_all(b"\n").map_err(|e| Error::io(path, e))?;
    file.commit()
}

#[cfg(test)]
mod tests;
