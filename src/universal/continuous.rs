//! Continuous traffic ([SV] §1): N generators, g at every terminal; in every cycle each
//! creates a message with probability p, to a destination drawn uniformly (another terminal,
//! or any output of the butterfly), along the network's oblivious path. The load of link e is
//! λ_e = g·p · (expected paths per generator through e) and λ = max_e λ_e; runs are given λ
//! and derive g (the fewest that keep p ≤ 1: a node may inject more than one message per
//! cycle, [SV] §1) and p.
//!
//! A run warms up, then measures every message born in its window, then drains (generation
//! goes on, unmeasured) until each measured message is delivered. The statistics stream:
//! histograms and counters, no per-message record, so memory follows what is in the network,
//! not the run's length. Whether the network is *stable* (its buffers do not grow without
//! bound) is decided from the messages in the system, sampled every cycle of the window: a
//! least-squares slope, the occupancy of the window's quarters, and whether the measured
//! messages drained.

use super::Net;
use super::stability::{Regression, growing, recovery};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::stats::{Histogram, Summary, round6};
use crate::wave::{ScopedVcd, SignalDecl};
use rand::RngExt;
use serde::Serialize;

/// Most generators at one terminal.
pub const MAX_GENERATORS: u32 = 64;

/// Most (source, destination) pairs × path length the link-load computation walks.
pub const MAX_LOAD_WORK: u64 = 1 << 28;

/// The expected number of paths through every link when every generator creates one
/// message: `unit[e]`; λ_e = p · unit[e].
pub fn unit_loads(net: &Net) -> Result<Vec<f64>> {
    let n = u64::from(net.terminals);
    let work = n * n * u64::from(net.dilation().max(1));
    if work > MAX_LOAD_WORK {
        return Err(Error::invalid(
            "inputs",
            net.terminals,
            format!(
                "a network whose pairs x dilation ({work}) is at most {MAX_LOAD_WORK} (the link loads walk every path)"
            ),
        ));
    }
    let mut unit = vec![0f64; net.data_links() as usize];
    let mut counts = vec![0u64; net.data_links() as usize];
    let mut path = Vec::new();
    let destinations = if net.self_destinations() { n } else { n - 1 };
    for s in 0..net.terminals {
        for t in 0..net.terminals {
            if t == s && !net.self_destinations() {
                continue;
            }
            path.clear();
            net.path_into(s, t, &mut path);
            for &l in &path {
                counts[l as usize] += 1;
            }
        }
    }
    for (u, c) in unit.iter_mut().zip(&counts) {
        *u = *c as f64 / destinations as f64;
    }
    Ok(unit)
}

/// The generation model of a run.
#[derive(Clone, Debug)]
pub struct Traffic {
    /// Per-generator probability of a message per cycle.
    pub p: f64,
    /// Generators at every terminal.
    pub generators: u32,
    /// The link load λ it gives.
    pub load: f64,
    /// Flits per message (1: store-and-forward packets); with `variable_lengths`, the mean.
    pub flits: u32,
    /// [SV] §3's variable-length worms: each message's length is uniform in 1..=2L − 1, so
    /// that only its expectation L is known.
    pub variable_lengths: bool,
}

impl Traffic {
    /// The traffic that loads the busiest link with `load` messages per cycle.
    pub fn at_load(net: &Net, load: f64, flits: u32) -> Result<Traffic> {
        let unit = unit_loads(net)?;
        let max = unit.iter().cloned().fold(0f64, f64::max);
        let most = max * f64::from(MAX_GENERATORS);
        if !(load > 0.0 && load <= most) {
            return Err(Error::invalid(
                "load",
                load,
                format!(
                    "a link load in (0, {}]: one generator per terminal with p = 1 loads the busiest link of this {} with {}, and a terminal has at most {MAX_GENERATORS} generators",
                    round6(most),
                    net.kind.name(),
                    round6(max)
                ),
            ));
        }
        let generators = ((load / max).ceil() as u32).max(1);
        Ok(Traffic {
            p: (load / (max * f64::from(generators))).min(1.0),
            generators,
            load,
            flits,
            variable_lengths: false,
        })
    }

    /// The longest message: 2L − 1 with variable lengths, else L.
    pub fn longest(&self) -> u32 {
        if self.variable_lengths {
            2 * self.flits - 1
        } else {
            self.flits
        }
    }
}

/// A message as a generator creates it.
#[derive(Clone, Debug)]
pub struct NewMessage {
    pub generator: u32,
    /// The terminal it starts at.
    pub source: u32,
    /// The generator's count of messages before this one (ties of equal ranks).
    pub seq: u64,
    pub birth: u64,
    pub path: Box<[u32]>,
    /// Its flits.
    pub flits: u32,
    /// Born inside the measured window.
    pub measured: bool,
}

/// A delivered message, as a protocol reports it.
#[derive(Clone, Copy, Debug)]
pub struct Delivery {
    pub generator: u32,
    pub seq: u64,
    pub birth: u64,
    /// The cycle its last flit crossed its last link.
    pub cycle: u64,
    pub hops: u32,
    pub flits: u32,
    /// Tries before the one that succeeded (wormhole trials), or 0.
    pub failed_trials: u32,
    pub measured: bool,
}

/// What a protocol does with the messages of a run.
pub trait Protocol {
    /// Takes a message generated in cycle `m.birth` (it may cross its first link in that
    /// cycle, [SV] §2).
    fn inject(&mut self, m: NewMessage);
    /// One clock cycle: every link's winners cross, then everything commits; deliveries are
    /// passed to `delivered`.
    fn step(&mut self, cycle: u64, delivered: &mut dyn FnMut(Delivery)) -> Result<()>;
    /// Messages in the system: waiting at a source, in a buffer, or in flight.
    fn buffered(&self) -> u64;
    /// Link crossings so far (data flits or packets), per data link.
    fn crossings(&self) -> &[u64];
    /// The state a waveform shows, declared once: scopes (under `tb.net`) of signals.
    fn wave_scopes(&self, net: &Net) -> Vec<(String, Vec<SignalDecl>)>;
    /// The values of those signals after the last cycle, in declaration order. A protocol
    /// records what crossed each link only once this is first asked for.
    fn wave_values(&mut self, out: &mut Vec<u64>);
}

/// A link's waveform scope: `l<id>_<tail>_<head>` (switch labels), or `ack<id>_<from>_<to>`
/// for an acknowledgement-only link.
pub fn link_scope(net: &Net, l: u32) -> String {
    let g = &net.graph;
    if l < net.data_links() {
        let (t, h) = g.links[l as usize];
        format!("l{l}_{}_{}", g.labels[t as usize], g.labels[h as usize])
    } else {
        let data = net.ack_origin[(l - net.data_links()) as usize];
        let (t, h) = g.links[data as usize];
        format!("ack{l}_{}_{}", g.labels[h as usize], g.labels[t as usize])
    }
}

/// The schedule of a run.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Window {
    pub warmup: u64,
    pub window: u64,
    /// Most cycles after the window for the measured messages to arrive.
    pub drain: u64,
    /// Most messages in the system before the run stops as unstable (memory).
    pub max_buffered: u64,
    /// A bad scenario just before the window ([SV] §4): the generation rate multiplied by
    /// `factor` for the last `cycles` of the warm-up.
    pub burst: Option<Burst>,
}

/// A burst of traffic ending where the measured window starts.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Burst {
    pub cycles: u64,
    pub factor: f64,
}

/// How a network recovers from a burst: the mean routing time of the messages born in each
/// twentieth of the window, the steady value (the window's last quarter) and the first
/// window cycle from which every later twentieth stays within twice the steady value.
#[derive(Clone, Debug, Serialize)]
pub struct Recovery {
    pub bucket: u64,
    /// `None` where no measured message born in that twentieth was delivered.
    pub means: Vec<Option<f64>>,
    pub steady: f64,
    pub recovered_after: Option<u64>,
}

/// Buckets of a recovery profile.
pub(super) const BUCKETS: usize = 20;

/// The stability verdict and its evidence.
#[derive(Clone, Debug, Serialize)]
pub struct Stability {
    pub stable: bool,
    /// Why unstable: `growing`, `not-drained` (measured messages still out after the drain,
    /// unless after a burst the system was emptying) or `overflow`; empty when stable.
    pub reason: String,
    /// Least-squares slope of the messages in the system over the window, per 1000 cycles.
    pub slope_per_kcycle: f64,
    /// Mean messages in the system in each quarter of the window.
    pub quarters: [f64; 4],
    pub max_buffered: u64,
    /// Measured messages not delivered by the end of the drain (their routing times are
    /// missing from the statistics).
    pub undrained: u64,
}

/// The contention delays t at which [`Outcome::delay_tail`] counts the messages delayed more.
pub const TAIL_POINTS: [u64; 9] = [0, 1, 2, 3, 4, 6, 8, 12, 16];

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub p: f64,
    pub load: f64,
    pub cycles: u64,
    pub generated: u64,
    pub measured: u64,
    pub delivered_measured: u64,
    /// Routing time of measured messages: tail arrival − birth + 1.
    pub latency: Summary,
    /// Routing time over the path length D₀, mean.
    pub stretch: f64,
    /// Routing time − D₀ − L + 1 (the cycles lost to contention), mean and tail.
    pub delay: Summary,
    /// How many measured messages lost more than t cycles to contention, for each t of
    /// [`TAIL_POINTS`] ([SV] Theorem 2.4's tail, Q003-1).
    pub delay_tail: Vec<u64>,
    /// The largest routing time over D₀ of a measured message.
    pub stretch_max: f64,
    /// Failed trials per measured message (wormhole), mean and most.
    pub failed_trials_mean: f64,
    pub failed_trials_max: u32,
    /// Measured link load: crossings per data link per window cycle, busiest link.
    pub measured_load_max: f64,
    pub stability: Stability,
    /// With a burst: the recovery profile.
    pub recovery: Option<Recovery>,
}

/// Runs `protocol` under `traffic` on `net` for `window`, drawing arrivals from `seed`.
pub fn run(
    net: &Net,
    traffic: &Traffic,
    window: Window,
    seed: u64,
    protocol: &mut dyn Protocol,
) -> Result<Outcome> {
    run_with_wave(net, traffic, window, seed, protocol, None)
}

/// [`run`], writing the protocol's state cycle by cycle as a VCD into `wave` (with `header`
/// in its comment).
pub fn run_with_wave(
    net: &Net,
    traffic: &Traffic,
    window: Window,
    seed: u64,
    protocol: &mut dyn Protocol,
    wave: Option<(&mut dyn std::io::Write, &str)>,
) -> Result<Outcome> {
    let mut vcd = match wave {
        Some((writer, header)) => {
            let scopes = protocol.wave_scopes(net);
            let mut values = Vec::new();
            protocol.wave_values(&mut values);
            Some((
                ScopedVcd::new(writer, header, &[], &scopes, &values)?,
                values,
            ))
        }
        None => None,
    };
    let mut rng: Rng = stream(seed, Stream::Traffic);
    // lengths from their own stream: fixed-length runs draw exactly as before
    let mut lengths: Rng = stream(seed, Stream::Lengths);
    let n = net.terminals;
    let mut seq = vec![0u64; (n * traffic.generators) as usize];
    let mut path = Vec::new();
    let mut generated = 0u64;
    let mut delivered_all = 0u64;
    let mut profile = [(0f64, 0u64); BUCKETS];
    let mut measured = 0u64;
    let mut latency = Histogram::default();
    let mut delay = Histogram::default();
    let mut stretch = 0f64;
    let mut stretch_max = 0f64;
    let mut failed_sum = 0u64;
    let mut failed_max = 0u32;
    let mut delivered_measured = 0u64;
    let end_window = window.warmup + window.window;
    let mut regression = Regression::default();
    let mut quarters = [0f64; 4];
    let mut max_buffered = 0u64;
    let mut start_crossings = Vec::new();
    let mut end_crossings = Vec::new();
    let mut reason = String::new();
    let mut undrained = 0u64;
    let mut cycle = 0u64;
    loop {
        if cycle == window.warmup {
            start_crossings = protocol.crossings().to_vec();
        }
        if cycle == end_window {
            end_crossings = protocol.crossings().to_vec();
            // the verdict is reached at the window's end: a growing network is not drained
            if growing(&regression, &quarters, window.window) {
                reason = "growing".into();
                break;
            }
        }
        if cycle >= end_window && delivered_measured == measured {
            break;
        }
        if cycle >= end_window + window.drain {
            undrained = measured - delivered_measured;
            break;
        }
        let in_window = (window.warmup..end_window).contains(&cycle);
        // in a burst every generator draws `reps` times at p·F/reps (p·F may exceed 1)
        let (reps, p) = match window.burst {
            Some(b) if cycle < window.warmup && cycle + b.cycles >= window.warmup => {
                let reps = (traffic.p * b.factor).ceil().max(1.0);
                (reps as u32, (traffic.p * b.factor / reps).min(1.0))
            }
            _ => (1, traffic.p),
        };
        for draw in 0..n * traffic.generators * reps {
            let g = draw / reps;
            if !rng.random_bool(p) {
                continue;
            }
            let s = g / traffic.generators;
            let t = net.random_destination(s, &mut rng);
            path.clear();
            net.path_into(s, t, &mut path);
            if path.is_empty() {
                continue; // (no network here has a pair without a link between them)
            }
            generated += 1;
            measured += u64::from(in_window);
            let flits = if traffic.variable_lengths {
                lengths.random_range(1..=traffic.longest())
            } else {
                traffic.flits
            };
            protocol.inject(NewMessage {
                generator: g,
                source: s,
                seq: seq[g as usize],
                birth: cycle,
                path: path.as_slice().into(),
                flits,
                measured: in_window,
            });
            seq[g as usize] += 1;
        }
        let mut too_early = None;
        protocol.step(cycle, &mut |d: Delivery| {
            delivered_all += 1;
            // no message beats its undisturbed time D₀ + L − 1
            let flits = u64::from(d.flits);
            if d.cycle + 2 < d.birth + u64::from(d.hops) + flits {
                too_early = Some(d);
            }
            if d.measured {
                delivered_measured += 1;
                let time = d.cycle - d.birth + 1;
                let b =
                    ((d.birth - window.warmup) * BUCKETS as u64 / window.window.max(1)) as usize;
                profile[b.min(BUCKETS - 1)].0 += time as f64;
                profile[b.min(BUCKETS - 1)].1 += 1;
                latency.add(time);
                delay.add(time.saturating_sub(u64::from(d.hops) + flits - 1));
                let s = time as f64 / f64::from(d.hops.max(1));
                stretch += s;
                stretch_max = stretch_max.max(s);
                failed_sum += u64::from(d.failed_trials);
                failed_max = failed_max.max(d.failed_trials);
            }
        })?;
        if let Some(d) = too_early {
            return Err(Error::Invariant {
                cycle,
                message: format!(
                    "a message born in cycle {} crossed {} links and its {} flits arrived by cycle {}",
                    d.birth, d.hops, d.flits, d.cycle
                ),
            });
        }
        if let Some((v, values)) = vcd.as_mut() {
            values.clear();
            protocol.wave_values(values);
            v.sample(cycle, &[], values)?;
        }
        let buffered = protocol.buffered();
        // conservation: every message generated is delivered or still in the system
        if generated != delivered_all + buffered {
            return Err(Error::Invariant {
                cycle,
                message: format!(
                    "{generated} messages generated, {delivered_all} delivered and {buffered} in the system"
                ),
            });
        }
        max_buffered = max_buffered.max(buffered);
        if in_window {
            let x = (cycle - window.warmup) as f64;
            regression.add(x, buffered as f64);
            let q = ((cycle - window.warmup) * 4 / window.window.max(1)).min(3) as usize;
            quarters[q] += buffered as f64;
        }
        if buffered > window.max_buffered {
            reason = "overflow".into();
            break;
        }
        cycle += 1;
    }
    if let Some((v, _)) = vcd {
        v.finish()?;
    }
    let quarter_len = (window.window as f64 / 4.0).max(1.0);
    for q in &mut quarters {
        *q = round6(*q / quarter_len);
    }
    let slope = regression.slope();
    // measured messages still out after the drain: unstable, unless a burst left the
    // system emptying (overflow stacks release a burst's messages slowly by design, [SV] §4)
    let emptying = window.burst.is_some() && quarters[3] < quarters[0];
    if undrained > 0 && reason.is_empty() && !emptying {
        reason = "not-drained".into();
    }
    let crossings_max = if end_crossings.is_empty() {
        0.0
    } else {
        end_crossings
            .iter()
            .zip(&start_crossings)
            .map(|(e, s)| (e - s) as f64)
            .fold(0f64, f64::max)
            / window.window.max(1) as f64
            / f64::from(traffic.flits)
    };
    let delivered = latency.len().max(1) as f64;
    let recovery = window.burst.map(|_| recovery(&profile, window.window));
    Ok(Outcome {
        p: round6(traffic.p),
        load: round6(traffic.load),
        cycles: cycle,
        generated,
        measured,
        delivered_measured,
        latency: latency.summary(),
        stretch: round6(stretch / delivered),
        delay: delay.summary(),
        delay_tail: TAIL_POINTS.iter().map(|&t| delay.exceeding(t)).collect(),
        stretch_max: round6(stretch_max),
        failed_trials_mean: round6(failed_sum as f64 / delivered),
        failed_trials_max: failed_max,
        measured_load_max: round6(crossings_max),
        stability: Stability {
            stable: reason.is_empty(),
            reason,
            slope_per_kcycle: round6(slope * 1000.0),
            quarters,
            max_buffered,
            undrained,
        },
        recovery,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::NetKind;

    #[test]
    fn butterfly_links_carry_half_a_generators_rate() {
        // [SV] §2.2: random outputs load every butterfly link with γ/2
        let net = Net::new(NetKind::Butterfly, 32, 2, 1).unwrap();
        let unit = unit_loads(&net).unwrap();
        assert!(unit.iter().all(|&u| (u - 0.5).abs() < 1e-12), "{unit:?}");
        let t = Traffic::at_load(&net, 0.3, 1).unwrap();
        assert!((t.p - 0.6).abs() < 1e-12);
        assert_eq!(t.generators, 1);
        let t = Traffic::at_load(&net, 0.75, 1).unwrap();
        assert_eq!(t.generators, 2);
        assert!((t.p - 0.75).abs() < 1e-12);
        let e = Traffic::at_load(&net, 40.0, 1).unwrap_err();
        assert!(e.to_string().contains("(0, 32]"), "{e}");
    }

    #[test]
    fn mesh_centre_links_are_the_busiest() {
        // dimension order on a k x k mesh: the x link between columns i and i + 1 carries
        // (i + 1)(k − 1 − i) · k / (k² − 1) per unit rate
        let k = 6u32;
        let net = Net::new(NetKind::Mesh, k * k, 2, 1).unwrap();
        let unit = unit_loads(&net).unwrap();
        let max = unit.iter().cloned().fold(0f64, f64::max);
        let i = k / 2 - 1;
        let expect = f64::from((i + 1) * (k - 1 - i) * k) / f64::from(k * k - 1);
        assert!((max - expect).abs() < 1e-9, "{max} vs {expect}");
    }
}
