//! The stage algorithm of [BB] §3.2–3.3: `L` stages, root level first; in stage `i` every
//! record whose peak is `i` moves to a leaf of the other child of its peak node, in `λ_T`
//! batches per sibling subtree `T` (Lemma 4), each batch compressed to the peak node
//! (interpretation: 'Compression target', docs/interpretations.md), sorted there by destination
//! (Lemma 3, modelled at the message level) and expanded into the sibling with sidetracking.
//! Sidetracked records are queued at the leaf they land on with their new, deeper peak.
//!
//! Two engines move the batches: [`Engine::Cycle`] runs the register-level network of
//! [`super::switch`] bit by bit; [`Engine::Golden`] uses the abstract model B of
//! [`super::golden`] with the same cycle counts. Tests hold them equal.
//!
//! Cycle accounting: compression and expansion take the cycles the network takes;
//! the transaction-level units cost `Q = c_Q·L` per queue operation, `c_pre·(⌈lg N⌉ + depth T)`
//! per Lemma 2 pass (four per stage: sum, max, broadcast, prefix) and `c_rs·⌈lg N⌉` per sort.
//! The network is clocked through those phases with idle wires, so a waveform's time axis is
//! the reported routing time.

use super::frame::{FrameFormat, Landed, Record};
use super::golden::{self, Entry, LEFT};
pub use super::report::{RouteReport, StageReport};
use super::switch::{Inputs, PrunedNet};
use crate::digest::FNV_OFFSET;
use crate::error::{Error, Result};
use crate::topology::pruned::{LoadFactors, PrunedButterfly, Vertex};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

mod network;

/// How batches are moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The register-level bit-serial network, cycle by cycle.
    Cycle,
    /// The abstract level-synchronous model B with the network's cycle counts.
    Golden,
}

/// Latency constants of the transaction-level units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// Queue operation `Q = c_q·L` cycles.
    pub c_q: u32,
    /// Lemma 2 pass `c_pre·(⌈lg N⌉ + depth)` cycles.
    pub c_pre: u32,
    /// Root sort `c_rs·⌈lg N⌉` cycles.
    pub c_rs: u32,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            c_q: 1,
            c_pre: 1,
            c_rs: 2,
        }
    }
}

/// A message of the set to route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub source: u32,
    pub destination: u32,
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    record: Record,
    sidetracked: bool,
}

/// Per-leaf state: the processor's priority queue (by peak, FIFO within a peak) and the
/// peak-level counters are the per-peak queue lengths.
#[derive(Clone, Debug)]
struct Leaf {
    by_peak: Vec<VecDeque<Queued>>,
}

impl Leaf {
    fn stored_sidetracked(&self) -> usize {
        self.by_peak
            .iter()
            .flatten()
            .filter(|q| q.sidetracked)
            .count()
    }
}

/// Per peak node, per child: the records that arrived, with the vertex each arrived at.
type Arrivals = Vec<[Vec<(u32, Record)>; 2]>;

/// A record in flight in one round: where it is, and its batch rank.
#[derive(Clone, Copy, Debug)]
struct Moving {
    leaf: u32,
    h: u32,
    record: Record,
}

/// Observes every network cycle (waveform, stimulus).
pub type Observer<'a> = dyn FnMut(&PrunedNet, &Inputs) -> Result<()> + 'a;

/// The router: leaves, network and counters.
pub struct Router {
    pub graph: PrunedButterfly,
    pub format: FrameFormat,
    pub engine: Engine,
    pub costs: Costs,
    pub net: PrunedNet,
    /// Direction bits of the golden engine (the cycle engine keeps them in `net`).
    dir: Vec<bool>,
    leaves: Vec<Leaf>,
    delivered: Vec<bool>,
    cycle: u64,
    report: RouteReport,
    trace: u64,
    round: u64,
}

fn invariant(cycle: u64, message: String) -> Error {
    Error::Invariant { cycle, message }
}

impl Router {
    /// A router for `messages` on an `n`-leaf pruned butterfly with `body_bits`-bit bodies
    /// (each body carries the message's index, so `|M| ≤ 2^body_bits`).
    pub fn new(
        n: u32,
        messages: &[Message],
        body_bits: u32,
        engine: Engine,
        costs: Costs,
    ) -> Result<Self> {
        let graph = PrunedButterfly::new(n)?;
        if !(1..=48).contains(&body_bits) {
            return Err(Error::invalid("body-bits", body_bits, "1 to 48"));
        }
        if messages.len() as u64 > 1u64 << body_bits {
            return Err(Error::invalid(
                "messages",
                messages.len(),
                format!("at most 2^{body_bits} (the body carries the message index)"),
            ));
        }
        for m in messages {
            if m.source >= n || m.destination >= n {
                return Err(Error::invalid(
                    "message",
                    format!("{} -> {}", m.source, m.destination),
                    format!("leaves 0..{n}"),
                ));
            }
        }
        let format = FrameFormat {
            log_n: graph.levels(),
            body_bits,
        };
        let l = graph.levels();
        let mut leaves = vec![
            Leaf {
                by_peak: vec![VecDeque::new(); l as usize],
            };
            n as usize
        ];
        let mut delivered = vec![false; messages.len()];
        for (i, m) in messages.iter().enumerate() {
            let peak = graph.peak(m.source, m.destination);
            if peak == l {
                delivered[i] = true;
            } else {
                leaves[m.source as usize].by_peak[peak as usize].push_back(Queued {
                    record: Record {
                        destination: m.destination,
                        body: i as u64,
                    },
                    sidetracked: false,
                });
            }
        }
        let lf: LoadFactors =
            graph.load_factors(messages.iter().map(|m| (m.source, m.destination)));
        let degree = crate::traffic::degree(n, messages.iter().map(|m| (m.source, m.destination)));
        let report = RouteReport {
            leaves: n,
            messages: messages.len(),
            delivered: delivered.iter().filter(|&&d| d).count(),
            stages: l,
            load_factor_cut: lf.cut,
            load_factor_dir: lf.dir,
            degree,
            lemma6_bound: 2 * lf.dir.ceil() as u32,
            lemma7_bound: (degree as usize + 1) * l as usize + degree as usize,
            ..RouteReport::default()
        };
        Ok(Router {
            net: PrunedNet::new(graph.clone(), format),
            dir: vec![LEFT; graph.vertex_count()],
            graph,
            format,
            engine,
            costs,
            leaves,
            delivered,
            cycle: 0,
            report,
            trace: FNV_OFFSET,
            round: 0,
        })
    }

    /// Routes every message; `observer` sees every network cycle (cycle engine only).
    pub fn run(mut self, mut observer: Option<&mut Observer<'_>>) -> Result<RouteReport> {
        for stage in 0..self.graph.levels() {
            self.stage(stage, &mut observer)?;
        }
        let missing: Vec<usize> = (0..self.delivered.len())
            .filter(|&i| !self.delivered[i])
            .collect();
        if !missing.is_empty() {
            return Err(invariant(
                self.cycle,
                format!(
                    "{} messages undelivered after the last stage (first: {:?})",
                    missing.len(),
                    &missing[..missing.len().min(8)]
                ),
            ));
        }
        self.report.routing_cycles = self.cycle;
        if self.engine == Engine::Cycle {
            self.report.rules = self.net.rules;
            self.dir = self.net.regs.iter().map(|r| r.dir).collect();
        }
        for &d in &self.dir {
            self.trace = fnv(self.trace, u64::from(d));
        }
        self.report.trace_hash = format!("{:016x}", self.trace);
        let (ties, conflicts) = self.net.errors();
        self.report.unresolved_ties += ties;
        self.report.compression_conflicts += conflicts;
        Ok(self.report)
    }

    /// Advances the clock `cycles` cycles with idle wires (transaction-level phases).
    fn idle(
        &mut self,
        stage: u32,
        cycles: u64,
        observer: &mut Option<&mut Observer<'_>>,
    ) -> Result<()> {
        if self.engine == Engine::Cycle && observer.is_none() && self.net.idle() {
            // Idle registers under idle inputs keep their values: skip ahead.
            self.net.skip_idle(cycles);
        } else if self.engine == Engine::Cycle {
            let inputs = self.net.idle_inputs(stage);
            for _ in 0..cycles {
                self.net.step(&inputs);
                if let Some(o) = observer.as_deref_mut() {
                    o(&self.net, &inputs)?;
                }
            }
        }
        self.cycle += cycles;
        Ok(())
    }

    fn lemma2_pass(&self, stage: u32) -> u64 {
        let l = self.graph.levels();
        u64::from(self.costs.c_pre) * u64::from(l + (l - stage - 1))
    }

    fn stage(&mut self, stage: u32, observer: &mut Option<&mut Observer<'_>>) -> Result<()> {
        crate::interrupt::check()?;
        let g = self.graph.clone();
        let l = g.levels();
        let s = stage as usize;
        let start = self.cycle;
        // Subtrees T rooted at level i + 1: their leaves are the blocks of 2^(L-i-1).
        let span = 1u32 << (l - stage - 1);
        let subtrees = g.leaves() / span;
        let y: Vec<u32> = self
            .leaves
            .iter()
            .map(|leaf| leaf.by_peak[s].len() as u32)
            .collect();
        let mut lambda = vec![0u32; subtrees as usize];
        let mut prefix = vec![0u32; g.leaves() as usize];
        for t in 0..subtrees {
            let base = t * span;
            // ℓ_u for every node u of T, level by level, and λ_T = max ⌈ℓ_u / cap⌉
            // (interpretation: 'Batch count', docs/interpretations.md).
            for m in stage + 1..=l {
                let width = 1u32 << (l - m);
                for u in 0..span / width {
                    let sum: u32 = (0..width).map(|x| y[(base + u * width + x) as usize]).sum();
                    lambda[t as usize] = lambda[t as usize].max(sum.div_ceil(g.capacity(m)));
                }
            }
            let mut acc = 0;
            for x in 0..span {
                prefix[(base + x) as usize] = acc;
                acc += y[(base + x) as usize];
            }
        }
        let records: usize = y.iter().map(|&v| v as usize).sum();
        let rounds = lambda.iter().copied().max().unwrap_or(0);
        let report = &mut self.report;
        report.max_lambda_t = report.max_lambda_t.max(rounds);
        report.lemma6_violations += lambda.iter().filter(|&&t| t > report.lemma6_bound).count();
        report.rounds += rounds;
        let mut stage_report = StageReport {
            stage,
            records,
            rounds,
            ..StageReport::default()
        };
        // The controller learns that M_i is empty only from the sums: every stage pays its
        // set-up (sum, max, broadcast, prefix).
        self.idle(stage, 4 * self.lemma2_pass(stage), observer)?;
        let q_cost = u64::from(self.costs.c_q) * u64::from(l);
        for q in 0..rounds {
            let batch = self.dequeue_batch(stage, q, span, &y, &prefix, &lambda)?;
            self.check_lemma4(stage, q, span, &y, &lambda, &batch)?;
            self.idle(stage, 2 * q_cost, observer)?;
            let before = self.cycle;
            let arrived = self.compress(stage, &batch, observer)?;
            let compressed = self.cycle;
            self.idle(stage, u64::from(self.costs.c_rs) * u64::from(l), observer)?;
            let sorted = self.cycle;
            let landed = self.expand(stage, &arrived, observer)?;
            self.report.network_cycles += (compressed - before) + (self.cycle - sorted);
            self.idle(stage, 2 * q_cost, observer)?;
            stage_report.sidetracked += self.land(stage, &landed)?;
            self.check_lemma7();
        }
        if let Some(leaf) = self.leaves.iter().position(|x| !x.by_peak[s].is_empty()) {
            return Err(invariant(
                self.cycle,
                format!("leaf {leaf} kept peak-{stage} records after {rounds} rounds"),
            ));
        }
        stage_report.cycles = self.cycle - start;
        self.report.sidetracked += stage_report.sidetracked;
        self.report.per_stage.push(stage_report);
        Ok(())
    }

    /// Dequeues batch `q` of every `T` ([BB] §3.3, Lemma 4): record number `x` of leaf `l` has
    /// global index `g = x_l + x`, goes to batch `g mod λ_T`, and its compression rank is
    /// `⌊g / λ_T⌋`. That rank must equal the per-batch prefix count the paper computes ([BB]
    /// §3.3, "Routing of the batches"), `Σ_{l' < l in T} c_l'(q)` plus the record's position
    /// among leaf `l`'s `c_l(q)`.
    fn dequeue_batch(
        &mut self,
        stage: u32,
        q: u32,
        span: u32,
        y: &[u32],
        prefix: &[u32],
        lambda: &[u32],
    ) -> Result<Vec<Moving>> {
        let s = stage as usize;
        let mut batch = Vec::new();
        let mut left = vec![0u32; lambda.len()];
        for leaf in 0..self.graph.leaves() {
            let t = (leaf / span) as usize;
            let (lt, xl, yl) = (lambda[t], prefix[leaf as usize], y[leaf as usize]);
            if yl == 0 || q >= lt {
                continue;
            }
            // c_l(q) = #{x < y_l : (x_l + x) mod λ_T = q}, counted without dividing g.
            let first = (q + lt - xl % lt) % lt;
            let c = if first < yl {
                (yl - first).div_ceil(lt)
            } else {
                0
            };
            if c > 2 {
                return Err(invariant(
                    self.cycle,
                    format!(
                        "leaf {leaf} puts {c} records into one batch (its channel has 2 edges)"
                    ),
                ));
            }
            for k in 0..c {
                let gi = xl + first + k * lt;
                let rank = left[t] + k;
                if gi / lt != rank {
                    return Err(invariant(
                        self.cycle,
                        format!(
                            "record {gi} of batch {q} has rank {} but {rank} precede it",
                            gi / lt
                        ),
                    ));
                }
                let Some(item) = self.leaves[leaf as usize].by_peak[s].pop_front() else {
                    return Err(invariant(self.cycle, format!("leaf {leaf} queue empty")));
                };
                batch.push(Moving {
                    leaf,
                    h: rank,
                    record: item.record,
                });
            }
            left[t] += c;
        }
        Ok(batch)
    }

    /// Lemma 4: batch `q` of every `T` with `q < λ_T` is non-empty, loads every channel
    /// of `T` (and `T`'s top channel) to at most its capacity, and puts `⌊ℓ_u/λ_T⌋` or
    /// `⌈ℓ_u/λ_T⌉` records on the channel above each node `u` (batch sizes differ by ≤ 1).
    fn check_lemma4(
        &self,
        stage: u32,
        q: u32,
        span: u32,
        y: &[u32],
        lambda: &[u32],
        batch: &[Moving],
    ) -> Result<()> {
        let g = &self.graph;
        let l = g.levels();
        let fail = |message: String| {
            Err(invariant(
                self.cycle,
                format!("Lemma 4, stage {stage}, batch {q}: {message}"),
            ))
        };
        for m in stage + 1..=l {
            let width = 1u32 << (l - m);
            let mut count = vec![0u32; (g.leaves() / width) as usize];
            for b in batch {
                count[(b.leaf / width) as usize] += 1;
            }
            for (u, &c) in count.iter().enumerate() {
                let lt = lambda[(u as u32 * width / span) as usize];
                let ell: u32 = (0..width).map(|x| y[(u as u32 * width + x) as usize]).sum();
                if c > g.capacity(m) {
                    return fail(format!(
                        "{c} records on channel c({m},{u}) of capacity {}",
                        g.capacity(m)
                    ));
                }
                if lt > 0 && q < lt && (c < ell / lt || c > ell.div_ceil(lt)) {
                    return fail(format!(
                        "{c} of {ell} records on channel c({m},{u}), not an even share of {lt} batches"
                    ));
                }
            }
            if m == stage + 1
                && let Some(t) = (0..count.len()).find(|&t| q < lambda[t] && count[t] == 0)
            {
                return fail(format!(
                    "subtree {t} has an empty batch although λ_T = {}",
                    lambda[t]
                ));
            }
        }
        Ok(())
    }

    fn check_lemma7(&mut self) {
        let worst = self
            .leaves
            .iter()
            .map(Leaf::stored_sidetracked)
            .max()
            .unwrap_or(0);
        let r = &mut self.report;
        r.max_stored_sidetracked = r.max_stored_sidetracked.max(worst);
        if worst > r.lemma7_bound {
            r.lemma7_violations += 1;
        }
    }

    /// Delivers or re-queues every landed record; returns how many were sidetracked.
    fn land(&mut self, stage: u32, landed: &[(u32, Landed)]) -> Result<usize> {
        let mut order: Vec<(u64, u32, bool)> = landed
            .iter()
            .map(|(leaf, p)| (p.record.body, *leaf, p.active))
            .collect();
        order.sort_unstable();
        self.round += 1;
        for (body, leaf, active) in order {
            for v in [self.round, u64::from(leaf), body, u64::from(active)] {
                self.trace = fnv(self.trace, v);
            }
        }
        let g = &self.graph;
        let l = g.levels();
        let mut per_leaf = vec![0u32; g.leaves() as usize];
        let mut sidetracked = 0;
        for &(leaf, p) in landed {
            per_leaf[leaf as usize] += 1;
            let index = p.record.body as usize;
            let dest = p.record.destination;
            if index >= self.delivered.len() || self.delivered[index] {
                return Err(invariant(
                    self.cycle,
                    format!("record {index} landed at leaf {leaf} twice or unknown"),
                ));
            }
            if p.active && dest != leaf {
                return Err(invariant(
                    self.cycle,
                    format!("active record {index} for leaf {dest} landed at leaf {leaf}"),
                ));
            }
            if dest == leaf {
                self.delivered[index] = true;
                self.report.delivered += 1;
                continue;
            }
            let peak = g.peak(leaf, dest);
            if peak <= stage || peak >= l {
                return Err(invariant(
                    self.cycle,
                    format!(
                        "record {index} sidetracked to leaf {leaf} has peak {peak}, not deeper than stage {stage}"
                    ),
                ));
            }
            sidetracked += 1;
            self.leaves[leaf as usize].by_peak[peak as usize].push_back(Queued {
                record: p.record,
                sidetracked: true,
            });
        }
        if let Some(leaf) = per_leaf.iter().position(|&c| c > 2) {
            return Err(invariant(
                self.cycle,
                format!(
                    "{} records landed on leaf {leaf} in one batch (at most 2, one per in-edge)",
                    per_leaf[leaf]
                ),
            ));
        }
        Ok(sidetracked)
    }
}

fn fnv(hash: u64, value: u64) -> u64 {
    crate::digest::fnv1a(hash, &value.to_le_bytes())
}
