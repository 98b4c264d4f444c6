//! Messages in release order, produced as the clock reaches them. Continuous patterns (the
//! Bernoulli generators of [SV] §1.2, the on-chip LFSR generators) draw each cycle's messages
//! when that cycle comes, so a run's memory does not grow with its horizon; every other pattern
//! hands out its precomputed list. Either way the sequence is exactly [`Traffic::messages`].

use rand::Rng as _;
use rand::distr::{Distribution, Uniform};

use super::{Destinations, MAX_LFSR_INPUTS, MessageSpec, Traffic, lfsr_threshold};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};

/// A source of messages in `(release, source)` order.
pub struct Arrivals {
    kind: Kind,
    /// Messages handed out so far.
    produced: u64,
}

enum Kind {
    List {
        specs: Vec<MessageSpec>,
        next: usize,
    },
    Bernoulli {
        n: u32,
        cycles: u64,
        /// Next cycle to draw.
        cycle: u64,
        coin: Coins,
        dest: Uniform<u32>,
        /// Boxed: the generator state is large beside the other variants'.
        rng: Box<Rng>,
    },
    Lfsr {
        n: u32,
        cycles: u64,
        cycle: u64,
        threshold: u16,
        fixed: Option<Vec<u32>>,
        arrivals: Vec<u16>,
        targets: Vec<u16>,
    },
}

impl Arrivals {
    /// The messages of `traffic` on an `n`-input network over `cycles` cycles (the horizon of
    /// continuous traffic), from `seed`.
    pub fn new(traffic: &Traffic, n: u32, cycles: u64, seed: u64) -> Result<Self> {
        traffic.validate()?;
        super::check_n(n)?;
        let kind = match *traffic {
            Traffic::Bernoulli { rate } => {
                u64::from(n).checked_mul(cycles).ok_or_else(|| {
                    Error::invalid("cycles", cycles, "a horizon with n * cycles < 2^64")
                })?;
                Kind::Bernoulli {
                    n,
                    cycles: if rate == 0.0 { 0 } else { cycles },
                    cycle: 0,
                    coin: Coins::new(rate),
                    dest: Uniform::new(0, n).map_err(|e| Error::invalid("inputs", n, e))?,
                    rng: Box::new(stream(seed, Stream::Traffic)),
                }
            }
            Traffic::Lfsr { rate, destinations } => {
                super::power_of_two(n, "lfsr")?;
                lfsr(n, rate, destinations, cycles, seed)?
            }
            _ => return Ok(Arrivals::list(traffic.messages(n, cycles, seed)?)),
        };
        Ok(Arrivals { kind, produced: 0 })
    }

    /// Exactly `specs`, in release order (a stable sort keeps equal releases in list order).
    pub fn list(mut specs: Vec<MessageSpec>) -> Self {
        specs.sort_by_key(|s| s.release);
        Arrivals {
            kind: Kind::List { specs, next: 0 },
            produced: 0,
        }
    }

    /// Appends every message released at or before `cycle` not handed out yet, in order.
    pub fn due(&mut self, cycle: u64, out: &mut Vec<MessageSpec>) {
        let before = out.len();
        match &mut self.kind {
            Kind::List { specs, next } => {
                while let Some(s) = specs.get(*next) {
                    if s.release > cycle {
                        break;
                    }
                    out.push(*s);
                    *next += 1;
                }
            }
            Kind::Bernoulli {
                n,
                cycles,
                cycle: at,
                coin,
                dest,
                rng,
            } => {
                while *at <= cycle && *at < *cycles {
                    for base in (0..*n).step_by(64) {
                        // A word of 64 sources: its coins all at once, then each arrival's
                        // destination in order.
                        let mut bits = coin.word(rng.as_mut(), (*n - base).min(64));
                        while bits != 0 {
                            let source = base + bits.trailing_zeros();
                            bits &= bits - 1;
                            out.push(MessageSpec {
                                source,
                                destination: dest.sample(rng.as_mut()),
                                release: *at,
                                path: None,
                                middle: None,
                            });
                        }
                    }
                    *at += 1;
                }
            }
            Kind::Lfsr {
                n,
                cycles,
                cycle: at,
                threshold,
                fixed,
                arrivals,
                targets,
            } => {
                use crate::lfsr::{next, spread};
                let log_n = n.trailing_zeros();
                while *at <= cycle && *at < *cycles {
                    for source in 0..*n {
                        let a = &mut arrivals[source as usize];
                        if *a <= *threshold {
                            let destination = match fixed {
                                Some(table) => table[source as usize],
                                None => {
                                    let t = &mut targets[source as usize];
                                    let d = spread(*t, log_n);
                                    *t = next(*t);
                                    d
                                }
                            };
                            out.push(MessageSpec {
                                source,
                                destination,
                                release: *at,
                                path: None,
                                middle: None,
                            });
                        }
                        *a = next(*a);
                    }
                    *at += 1;
                }
            }
        }
        self.produced += (out.len() - before) as u64;
    }

    /// Whether every message has been handed out.
    pub fn exhausted(&self) -> bool {
        match &self.kind {
            Kind::List { specs, next } => *next == specs.len(),
            Kind::Bernoulli { cycles, cycle, .. } | Kind::Lfsr { cycles, cycle, .. } => {
                cycle >= cycles
            }
        }
    }

    /// The cycle the next message is released at, if it is known without drawing it: a
    /// list's next release; for a continuous pattern the current cycle while its horizon lasts
    /// (every cycle draws).
    pub fn next_release(&self) -> Option<u64> {
        match &self.kind {
            Kind::List { specs, next } => specs.get(*next).map(|s| s.release),
            Kind::Bernoulli { cycles, cycle, .. } | Kind::Lfsr { cycles, cycle, .. } => {
                (cycle < cycles).then_some(*cycle)
            }
        }
    }

    /// The most messages of a list any one source sends and any one destination receives
    /// (0, 0 for a continuous pattern).
    pub fn busiest(&self) -> (u64, u64) {
        let Kind::List { specs, .. } = &self.kind else {
            return (0, 0);
        };
        let most = |key: &dyn Fn(&MessageSpec) -> u32| {
            let mut keys: Vec<u32> = specs.iter().map(key).collect();
            keys.sort_unstable();
            keys.chunk_by(|a, b| a == b)
                .map(|c| c.len() as u64)
                .max()
                .unwrap_or(0)
        };
        (most(&|s| s.source), most(&|s| s.destination))
    }

    /// Every message of a list, in release order (`None` for a continuous pattern).
    pub fn specs(&self) -> Option<&[MessageSpec]> {
        match &self.kind {
            Kind::List { specs, .. } => Some(specs),
            _ => None,
        }
    }

    /// The latest release of a list (0 for a continuous pattern).
    pub fn last_release(&self) -> u64 {
        match &self.kind {
            Kind::List { specs, .. } => specs.last().map_or(0, |s| s.release),
            _ => 0,
        }
    }

    /// Messages of a list not handed out yet (continuous patterns draw theirs when their cycle
    /// comes, so none is counted before).
    pub fn remaining(&self) -> u64 {
        match &self.kind {
            Kind::List { specs, next } => (specs.len() - next) as u64,
            _ => 0,
        }
    }

    /// Messages handed out so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// Every remaining message at once.
    pub fn collect_all(mut self) -> Vec<MessageSpec> {
        let mut out = Vec::new();
        self.due(u64::MAX, &mut out);
        out
    }
}

/// Bernoulli coins of probability `p` ([SV] §1.2), 64 sources' at once. A source's coin
/// is heads when a uniform 64-bit number `U` is below `⌊p · 2^64⌋` (always, for `p = 1`),
/// as one draw per coin would decide it; here `U` is compared bit by bit from its most
/// significant, one random word holding that bit of the 64 sources' numbers, and a source
/// is decided at its first bit that differs from the threshold's. Half of the undecided
/// sources are decided by each word, so a word of 64 coins takes about 7 random words
/// rather than 64, and the coins have the same law.
#[derive(Clone, Copy, Debug)]
struct Coins {
    /// `⌊p · 2^64⌋`; `None` for `p = 1`.
    threshold: Option<u64>,
}

impl Coins {
    fn new(p: f64) -> Self {
        debug_assert!((0.0..=1.0).contains(&p));
        Coins {
            // The cast saturates, and is exact for every p below 1.
            threshold: (p < 1.0).then(|| (p * 2f64.powi(64)) as u64),
        }
    }

    /// The coins of `count` (1 to 64) sources, bit `i` for the `i`-th.
    #[inline]
    fn word(self, rng: &mut Rng, count: u32) -> u64 {
        let open_lanes = lanes(count);
        let Some(threshold) = self.threshold else {
            return open_lanes;
        };
        let (mut heads, mut open) = (0, open_lanes);
        for bit in (0..64).rev() {
            let r = rng.next_u64();
            // All ones where the threshold's bit is 1: a 0 in U decides heads, a 1 goes on;
            // where it is 0, a 1 decides tails and a 0 goes on.
            let one = 0u64.wrapping_sub(threshold >> bit & 1);
            heads |= open & !r & one;
            open &= !(r ^ one);
            if open == 0 {
                break;
            }
        }
        // Sources still open have U equal to the threshold: not below it, tails.
        heads
    }
}

/// The low `count` (0 to 64) bits.
fn lanes(count: u32) -> u64 {
    match count {
        64.. => u64::MAX,
        c => (1 << c) - 1,
    }
}

/// The on-chip generators ([`Traffic::Lfsr`]), one per input, from their reset values.
fn lfsr(n: u32, rate: f64, destinations: Destinations, cycles: u64, seed: u64) -> Result<Kind> {
    use crate::lfsr::Purpose;
    if n > MAX_LFSR_INPUTS {
        return Err(Error::invalid(
            "inputs",
            n,
            format!("at most {MAX_LFSR_INPUTS} with --traffic lfsr (16-bit destination registers)"),
        ));
    }
    Ok(Kind::Lfsr {
        n,
        cycles,
        cycle: 0,
        threshold: lfsr_threshold(rate),
        fixed: destinations.fixed(n, seed),
        arrivals: (0..n)
            .map(|s| crate::lfsr::seed(seed, Purpose::Arrivals, s.into()))
            .collect(),
        targets: (0..n)
            .map(|s| crate::lfsr::seed(seed, Purpose::Destinations, s.into()))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::{Coins, lanes};
    use crate::rng::{Stream, stream};
    use rand::Rng as _;

    /// A word of coins is each source's `U < ⌊p · 2^64⌋`, `U`'s bits read from the words
    /// drawn (bit `b` of source `i`'s number is bit `i` of the word drawn for bit `b`).
    #[test]
    fn a_word_of_coins_compares_each_sources_number_with_the_threshold() {
        for p in [0.0, 1e-9, 0.01, 0.1, 0.25, 0.3, 0.5, 0.9, 1.0 - 1e-12, 1.0] {
            let coin = Coins::new(p);
            let mut rng = stream(11, Stream::Test);
            for count in [1, 5, 63, 64] {
                for _ in 0..200 {
                    let mut read = rng.clone();
                    let heads = coin.word(&mut rng, count);
                    let words: Vec<u64> = (0..64).map(|_| read.next_u64()).collect();
                    let mut expected = 0;
                    for i in 0..count {
                        let u = (0..64).fold(0u64, |u, b| u << 1 | (words[b] >> i & 1));
                        let below = coin.threshold.is_none_or(|t| u < t);
                        expected |= u64::from(below) << i;
                    }
                    assert_eq!(heads, expected, "p {p}, {count} sources");
                    assert_eq!(heads & !lanes(count), 0);
                }
            }
        }
    }

    /// About 7 random words a word of 64 coins, and heads at the rate asked for.
    #[test]
    fn a_word_of_coins_takes_few_random_words_and_keeps_the_rate() {
        let coin = Coins::new(0.3);
        let mut rng = stream(3, Stream::Test);
        let (mut heads, mut before) = (0u64, rng.clone());
        let words = 10_000;
        for _ in 0..words {
            heads += u64::from(coin.word(&mut rng, 64).count_ones());
        }
        let mut used = 0;
        while before != rng {
            before.next_u64();
            used += 1;
        }
        let per_word = used as f64 / words as f64;
        assert!(
            (6.0..9.0).contains(&per_word),
            "{per_word} random words a word"
        );
        let trials = 64.0 * words as f64;
        let sigma = (trials * 0.3 * 0.7).sqrt();
        assert!((heads as f64 - trials * 0.3).abs() < 5.0 * sigma, "{heads}");
    }
}
