//! The randomised butterfly algorithm of [CMS] §3.1 (A000-2): a q-relation of L-flit worms
//! routed in rounds on the doubled butterfly (two butterflies in series, [CMS] Fig. 2), B
//! virtual channels per link, drop on contention.
//!
//! Each round, every copy of an undelivered message picks a colour c ∈ [Δ] and an intermediate
//! column z uniformly at random; colour c's headers start at cycle c·L of the round and go
//! to column z in the first pass and on to their destination in the second. Sub-rounds L
//! cycles apart move in lock-step and never meet; within one, a header that finds no free VC
//! is discarded at once with its worm. A message is delivered when one of its copies arrives;
//! before the next round every undelivered message doubles its copies. Δ = ⌈β·q·lg^(1/B) n/B⌉
//! colours, 2⌈lg lg(nq)⌉ + 1 rounds with high probability.
//!
//! Choices the paper leaves open (docs/interpretations.md): which B of more than B competing
//! headers proceed is the switch's round-robin VC allocation (the hardware's rule); of the
//! copies of one input and colour, B drawn at random start and the rest are discarded at the
//! source, as the first link would discard them; for q < lg n the messages start with ⌈lg n / q⌉ copies each, so that Θ(lg n) start
//! at each input, as the paper's remark asks, and the analysis uses q_eff = max(q, ⌈lg n⌉).

use crate::config::{Backpressure, FlowControl, LinkBandwidth, SimConfig};
use crate::error::{Error, Result};
use crate::rng::{Stream, stream};
use crate::sim::Simulation;
use crate::topology::TopologyKind;
use crate::traffic::{MessageSpec, Traffic};
use rand::RngExt;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

/// Where the second pass runs ([CMS] §3.1, Fig. 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PassMode {
    /// On a second butterfly below the first (the doubled butterfly): the passes share no
    /// link, and sub-rounds L cycles apart never meet.
    #[default]
    Doubled,
    /// Round the wrap-around butterfly a second time: pass-2 worms can meet pass-1 worms of
    /// later sub-rounds. The network is cyclic, so it runs under registered back-pressure
    /// (VCs of two flits, a freed VC taken one cycle later): sub-rounds start L + 1 cycles
    /// apart. A copy whose two laps would cross one link twice (its path is not edge-simple)
    /// is discarded at the source.
    Wrap,
}

impl PassMode {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "doubled" => Ok(PassMode::Doubled),
            "wrap" => Ok(PassMode::Wrap),
            _ => Err(Error::invalid("pass-mode", s, "doubled or wrap")),
        }
    }
}

/// Parameters of one run of the algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ButterflyConfig {
    /// Inputs n (a power of two, 4..=4096).
    pub inputs: u32,
    /// Messages per input and per output, q (a q-relation of q random permutations).
    pub q: u32,
    /// Flits per worm, L.
    pub flits: u32,
    /// Virtual channels per link, B.
    pub vcs: u32,
    /// The constant β of Δ.
    pub beta: f64,
    pub seed: u64,
    #[serde(default)]
    pub pass_mode: PassMode,
}

impl Default for ButterflyConfig {
    fn default() -> Self {
        ButterflyConfig {
            inputs: 64,
            q: 4,
            flits: 8,
            vcs: 2,
            beta: 1.0,
            seed: 1,
            pass_mode: PassMode::Doubled,
        }
    }
}

/// Rounds run after the paper's 2⌈lg lg(nq)⌉ + 1 before the run is called failed.
pub const EXTRA_ROUNDS: u32 = 16;
/// Most colours Δ of a round.
pub const MAX_COLOURS: u32 = 1 << 20;
/// Most copies one round may send (undelivered messages double theirs every round).
pub const MAX_COPIES: u64 = 1 << 22;

/// What one round did, with the per-round checks of [CMS] §3.1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Undelivered messages at the start of the round.
    pub undelivered: u64,
    /// Copies sent (after the source-side discard).
    pub copies: u64,
    /// Copies discarded at the source (more than B of one input and colour; in wrap mode also
    /// those whose path is not edge-simple).
    pub source_discards: u64,
    pub delivered: u64,
    /// Invariant 3.1.2: the most copies at one input, and bound for one output.
    pub max_copies_per_input: u64,
    pub max_copies_per_output: u64,
    /// Lemma 3.1.4: the least fraction, over inputs and outputs, of their undelivered messages
    /// that can be given pairwise distinct colours among their copies' (a maximum matching).
    pub min_distinct_colour_fraction: f64,
    /// Lemma 3.1.5: the largest fraction of an input's or output's undelivered messages left
    /// undelivered by the round.
    pub max_remaining_fraction: f64,
    /// Cycles from the round's first injection to its last tail arrival.
    pub cycles: u64,
}

/// A whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ButterflyRun {
    pub messages: u64,
    /// Δ, the colours (sub-rounds) of a round.
    pub colours: u32,
    /// q_eff = max(q, ⌈lg n⌉).
    pub q_eff: u32,
    /// The paper's rounds, 2⌈lg lg(nq)⌉ + 1.
    pub paper_rounds: u32,
    /// Cycles a round is allotted: (Δ − 1)·s + 2 lg n + L − 1, sub-rounds s cycles apart (s =
    /// L, or L + 1 in wrap mode).
    pub round_cycles: u64,
    pub rounds: Vec<Round>,
    /// Cycle of the last first delivery of a message (rounds laid end to end).
    pub makespan: u64,
}

impl ButterflyConfig {
    pub fn check(&self) -> Result<()> {
        if !self.inputs.is_power_of_two() || !(4..=4096).contains(&self.inputs) {
            return Err(Error::invalid(
                "inputs",
                self.inputs,
                "a power of two in 4..=4096",
            ));
        }
        if !(1..=64).contains(&self.q) {
            return Err(Error::invalid("q", self.q, "1..=64"));
        }
        if !(1..=4096).contains(&self.flits) {
            return Err(Error::invalid("flits", self.flits, "1..=4096"));
        }
        if !(1..=8).contains(&self.vcs) {
            return Err(Error::invalid("vcs", self.vcs, "1..=8"));
        }
        if !(self.beta.is_finite() && (0.01..=1e6).contains(&self.beta)) {
            return Err(Error::invalid("beta", self.beta, "0.01..=1000000"));
        }
        if f64::from(self.q_eff()) * self.beta > f64::from(MAX_COLOURS) {
            return Err(Error::invalid(
                "beta",
                self.beta,
                format!(
                    "at most {MAX_COLOURS} colours: β·q_eff ≤ {MAX_COLOURS} (q_eff = {})",
                    self.q_eff()
                ),
            ));
        }
        Ok(())
    }

    fn lg_n(&self) -> u32 {
        self.inputs.trailing_zeros()
    }

    /// q_eff = max(q, ⌈lg n⌉).
    pub fn q_eff(&self) -> u32 {
        self.q.max(self.lg_n())
    }

    /// Δ = max(1, ⌈β·q_eff·lg^(1/B) n / B⌉).
    pub fn colours(&self) -> u32 {
        let lg = f64::from(self.lg_n());
        let b = f64::from(self.vcs);
        ((self.beta * f64::from(self.q_eff()) * lg.powf(1.0 / b) / b).ceil() as u32).max(1)
    }

    /// 2⌈lg lg(nq)⌉ + 1 rounds (numbered 0..=2⌈lg lg(nq)⌉).
    pub fn paper_rounds(&self) -> u32 {
        let nq = f64::from(self.inputs) * f64::from(self.q);
        2 * nq.log2().log2().ceil().max(0.0) as u32 + 1
    }

    /// [CMS] Theorem 3.1.1 without its constant: L·(q + lg n)·lg^(1/B) n·lg lg(qn)/B.
    pub fn bound_shape(&self) -> f64 {
        let lg = f64::from(self.lg_n());
        let b = f64::from(self.vcs);
        let nq = f64::from(self.inputs) * f64::from(self.q);
        f64::from(self.flits) * (f64::from(self.q) + lg) * lg.powf(1.0 / b) * nq.log2().log2() / b
    }

    /// The switch model's configuration of a round: the doubled butterfly, drop mode, one
    /// attempt, B VCs of one flit.
    pub fn sim_config(&self, seed: u64) -> SimConfig {
        SimConfig {
            topology: TopologyKind::DoubledButterfly,
            inputs: self.inputs,
            vcs: self.vcs,
            vc_depth: 1,
            flits: self.flits,
            mode: FlowControl::Drop,
            max_attempts: 1,
            link_bandwidth: LinkBandwidth::PerVc,
            traffic: Traffic::File {
                path: "rounds".into(),
            },
            seed,
            ..SimConfig::default()
        }
    }
}

/// A maximum matching of `items` (each a list of acceptable colours, any of `0..colours`) to
/// distinct colours; only the colours that occur are indexed.
fn matching(items: &[Vec<u32>], colours: u32) -> usize {
    let mut used: Vec<u32> = items.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    debug_assert!(used.last().is_none_or(|&c| c < colours));
    let local: Vec<Vec<u32>> = items
        .iter()
        .map(|cs| {
            cs.iter()
                .map(|c| used.binary_search(c).expect("a used colour") as u32)
                .collect()
        })
        .collect();
    matching_dense(&local, used.len() as u32)
}

/// [`matching`] on colours `0..colours`, all of them used.
fn matching_dense(items: &[Vec<u32>], colours: u32) -> usize {
    fn augment(i: usize, items: &[Vec<u32>], owner: &mut [usize], seen: &mut [bool]) -> bool {
        for &c in &items[i] {
            let c = c as usize;
            if seen[c] {
                continue;
            }
            seen[c] = true;
            if owner[c] == usize::MAX || augment(owner[c], items, owner, seen) {
                owner[c] = i;
                return true;
            }
        }
        false
    }
    let mut owner = vec![usize::MAX; colours as usize];
    let mut matched = 0;
    for i in 0..items.len() {
        let mut seen = vec![false; colours as usize];
        matched += usize::from(augment(i, items, &mut owner, &mut seen));
    }
    matched
}

/// Runs the algorithm on a q-relation drawn from `config.seed`.
pub fn run(config: &ButterflyConfig) -> Result<ButterflyRun> {
    config.check()?;
    let n = config.inputs;
    let b = config.vcs;
    let lg_n = config.lg_n();
    let mut rng = stream(config.seed, Stream::Traffic);
    // q random permutations: message m from m % n to dest[m].
    let mut dest = Vec::with_capacity((n * config.q) as usize);
    for _ in 0..config.q {
        let mut p: Vec<u32> = (0..n).collect();
        p.shuffle(&mut rng);
        dest.extend(p);
    }
    let messages = dest.len();
    let source = |m: usize| m as u32 % n;
    let colours = config.colours();
    let first_copies = config.q_eff().div_ceil(config.q);
    let mut copies = vec![u64::from(first_copies); messages];
    let mut delivered_at: Vec<Option<u64>> = vec![None; messages];
    let spacing = u64::from(config.flits) + u64::from(config.pass_mode == PassMode::Wrap);
    let round_cycles =
        u64::from(colours - 1) * spacing + 2 * u64::from(lg_n) + u64::from(config.flits) - 1;
    let wrapped = match config.pass_mode {
        PassMode::Wrap => Some(crate::topology::graph::wrapped_butterfly(n)?.graph),
        PassMode::Doubled => None,
    };
    let paper_rounds = config.paper_rounds();
    let mut out = ButterflyRun {
        messages: messages as u64,
        colours,
        q_eff: config.q_eff(),
        paper_rounds,
        round_cycles,
        ..ButterflyRun::default()
    };
    let mut t = 0u64;
    for round in 0..paper_rounds + EXTRA_ROUNDS {
        let live: Vec<usize> = (0..messages)
            .filter(|&m| delivered_at[m].is_none())
            .collect();
        if live.is_empty() {
            break;
        }
        if round > 0 {
            for &m in &live {
                copies[m] *= 2;
            }
        }
        let total: u64 = live.iter().map(|&m| copies[m]).sum();
        if total > MAX_COPIES {
            return Err(Error::invalid(
                "beta",
                config.beta,
                format!(
                    "a Δ large enough to deliver in fewer rounds: round {round} would send {total} copies of {} undelivered messages, more than {MAX_COPIES}",
                    live.len()
                ),
            ));
        }
        let mut r = Round {
            undelivered: live.len() as u64,
            ..Round::default()
        };
        let mut per_input = vec![0u64; n as usize];
        let mut per_output = vec![0u64; n as usize];
        // (colour, source, random rank, message, middle) of every copy, drawn in message order.
        let mut drawn: Vec<(u32, u32, u64, usize, u32)> = Vec::new();
        let mut colours_of: Vec<Vec<u32>> = vec![Vec::new(); messages];
        for &m in &live {
            per_input[source(m) as usize] += copies[m];
            per_output[dest[m] as usize] += copies[m];
            for _ in 0..copies[m] {
                let c = rng.random_range(0..colours);
                let z = rng.random_range(0..n);
                drawn.push((c, source(m), rng.random(), m, z));
                colours_of[m].push(c);
            }
        }
        r.max_copies_per_input = per_input.iter().copied().max().unwrap_or(0);
        r.max_copies_per_output = per_output.iter().copied().max().unwrap_or(0);
        // Lemma 3.1.4 over inputs and outputs.
        let mut by_end: Vec<Vec<Vec<u32>>> = vec![Vec::new(); 2 * n as usize];
        for &m in &live {
            let mut cs = colours_of[m].clone();
            cs.sort_unstable();
            cs.dedup();
            by_end[source(m) as usize].push(cs.clone());
            by_end[(n + dest[m]) as usize].push(cs);
        }
        r.min_distinct_colour_fraction = by_end
            .iter()
            .filter(|items| !items.is_empty())
            .map(|items| matching(items, colours) as f64 / items.len() as f64)
            .fold(1.0, f64::min);
        // Sub-round order; at most B copies of one input and colour start, chosen at random.
        drawn.sort_unstable_by_key(|&(c, s, rank, m, _)| (c, s, rank, m));
        let mut specs = Vec::with_capacity(drawn.len());
        let mut owners = Vec::with_capacity(drawn.len());
        let mut run_start = 0;
        for (i, &(c, s, _, m, z)) in drawn.iter().enumerate() {
            if i > 0 && (drawn[i - 1].0, drawn[i - 1].1) != (c, s) {
                run_start = i;
            }
            if i - run_start >= b as usize {
                r.source_discards += 1;
                continue;
            }
            specs.push(MessageSpec {
                source: s,
                destination: dest[m],
                release: u64::from(c) * spacing,
                path: None,
                middle: Some(z),
            });
            owners.push(m);
        }
        let (arrivals, cycles, discarded) = match &wrapped {
            None => doubled_round(config, round, specs)?,
            Some(graph) => wrapped_round(config, graph, &specs)?,
        };
        r.source_discards += discarded;
        r.copies = arrivals.len() as u64 - discarded;
        r.cycles = cycles;
        if r.cycles > round_cycles {
            return Err(Error::Invariant {
                cycle: t + cycles,
                message: format!(
                    "round {round} took {} cycles, more than the (Δ - 1)s + 2 lg n + L - 1 = {round_cycles} of lock-step sub-rounds",
                    r.cycles
                ),
            });
        }
        let mut left_in = vec![0u64; 2 * n as usize];
        let mut had = vec![0u64; 2 * n as usize];
        for (k, tail) in arrivals.iter().enumerate() {
            if let Some(tail) = tail {
                let m = owners[k];
                let at = t + tail;
                if delivered_at[m].is_none() {
                    r.delivered += 1;
                }
                if delivered_at[m].is_none_or(|d| at < d) {
                    delivered_at[m] = Some(at);
                }
            }
        }
        for &m in &live {
            for end in [source(m), n + dest[m]] {
                had[end as usize] += 1;
                left_in[end as usize] += u64::from(delivered_at[m].is_none());
            }
        }
        r.max_remaining_fraction = had
            .iter()
            .zip(&left_in)
            .filter(|&(&h, _)| h > 0)
            .map(|(&h, &l)| l as f64 / h as f64)
            .fold(0.0, f64::max);
        out.rounds.push(r);
        t += round_cycles + 1;
    }
    if let Some(m) = delivered_at.iter().position(Option::is_none) {
        return Err(Error::Invariant {
            cycle: t,
            message: format!(
                "message {m} undelivered after {} rounds (Δ = {colours} too small: raise --beta)",
                out.rounds.len()
            ),
        });
    }
    out.makespan = delivered_at.iter().flatten().copied().max().unwrap_or(0);
    Ok(out)
}

/// A round on the doubled butterfly: per copy its tail's arrival (cycles from the round's
/// start), the round's last arrival, and copies discarded before the network (none).
fn doubled_round(
    config: &ButterflyConfig,
    round: u32,
    specs: Vec<MessageSpec>,
) -> Result<(Vec<Option<u64>>, u64, u64)> {
    let copies = specs.len() as u64;
    let seed = crate::rng::trial_seed(config.seed, 1, u64::from(round), 0);
    let mut sim = Simulation::with_messages(config.sim_config(seed), specs)?;
    sim.keep_records(true);
    let report = sim.run()?;
    if report.delivered + report.dropped != copies {
        return Err(Error::Invariant {
            cycle: report.cycles,
            message: format!(
                "round {round}: {} delivered and {} dropped of {copies} copies",
                report.delivered, report.dropped
            ),
        });
    }
    let mut arrivals = vec![None; copies as usize];
    for rec in sim.records() {
        arrivals[rec.id as usize] = rec.tail_arrival;
    }
    Ok((arrivals, report.makespan_cycles, 0))
}

/// One lap of the wrap-around butterfly `graph` from column `from` to column `to` (bit
/// fixing, most significant bit first): lg n links, a full lap of straight links when
/// `from == to`.
fn lap(graph: &crate::topology::graph::Graph, n: u32, from: u32, to: u32) -> Vec<u32> {
    let log_n = n.trailing_zeros();
    let mut col = from;
    (0..log_n)
        .map(|level| {
            let mask = 1u32 << (log_n - 1 - level);
            let next = (col & !mask) | (to & mask);
            let link = graph
                .link(level * n + col, ((level + 1) % log_n) * n + next)
                .expect("a butterfly link");
            col = next;
            link
        })
        .collect()
}

/// A round on the wrap-around butterfly: two laps per copy, the second from the middle
/// column; copies whose laps share a link are discarded at the source.
fn wrapped_round(
    config: &ButterflyConfig,
    graph: &crate::topology::graph::Graph,
    specs: &[MessageSpec],
) -> Result<(Vec<Option<u64>>, u64, u64)> {
    use crate::topology::graph::Paths;
    let n = config.inputs;
    let mut paths = Paths::new();
    let mut releases = Vec::new();
    let mut kept = Vec::new();
    for (k, s) in specs.iter().enumerate() {
        let z = s.middle.unwrap_or(0);
        let mut p = lap(graph, n, s.source, z);
        p.extend(lap(graph, n, z, s.destination));
        let mut seen = p.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() == p.len() {
            paths.push(&p);
            releases.push(s.release);
            kept.push(k);
        }
    }
    let discarded = (specs.len() - kept.len()) as u64;
    let mut arrivals = vec![None; specs.len()];
    if kept.is_empty() {
        return Ok((arrivals, 0, discarded));
    }
    let problem = super::Problem::new(graph.clone(), &paths)?;
    let sim = SimConfig {
        mode: FlowControl::Drop,
        max_attempts: 1,
        backpressure: Backpressure::Registered,
        vc_depth: 2,
        ..problem.config(config.vcs, config.flits)
    };
    let (out, tails) = problem.run(sim, &releases)?;
    for (i, tail) in tails.into_iter().enumerate() {
        arrivals[kept[i]] = tail;
    }
    Ok((arrivals, out.makespan, discarded))
}

/// One-shot circuit switching on the butterfly ([CMS] §1.3, after Kruskal–Snir and Koch):
/// every input sends one worm at cycle 0 to a uniformly random output, a header that finds no
/// free VC is discarded, nothing is retried. Returns the worms delivered.
pub fn survivors(inputs: u32, vcs: u32, seed: u64) -> Result<u64> {
    let config = SimConfig {
        topology: TopologyKind::Butterfly,
        inputs,
        vcs,
        vc_depth: 1,
        flits: 1,
        mode: FlowControl::Drop,
        max_attempts: 1,
        traffic: Traffic::Uniform { q: 1 },
        seed,
        ..SimConfig::default()
    };
    let report = Simulation::new(config)?.run()?;
    Ok(report.delivered)
}

#[cfg(test)]
mod tests;
