//! The sorting fat-tree of [BB] §4.2–4.3 at the message level, with the cycle cost of every
//! sort taken from the flexible-sorter model ([`sort_cycles`], equal to the circuit's count).
//!
//! Structure (§4.2): `m × m` meshes of terminals (`m` the largest power of two `≤ lg N`:
//! interpretation 'Fat-tree sizes', docs/interpretations.md) at the leaves of a complete binary
//! fat-tree; the node at depth `δ` has `n = N/2^δ` terminals below it and a `(b, s, n)`-flexible
//! sorter with `s = 2^(⌊lg n / 2⌋ + 1)` (`√(2n)` for odd `lg n`, `2√n` for even); the channel
//! to its parent has `2^⌈lg n / 2⌉` wires (even `lg n`: the sorter's `s` outputs are
//! multiplexed 2:1).
//!
//! Routing (§4.3, the eight steps), per colour class of a `d`-colouring of the message set into
//! partial permutations (interpretation: 'Fat-tree degree', docs/interpretations.md):
//! intra-mesh messages are routed in their mesh; the others get ascent batches `rank mod L` per
//! peak; in pipelined ascent stages the node at depth `δ` handles batch `j` in stage
//! `2j + D − 1 − δ` (meshes emit in `2j − 1`), sorting the batch and draining the records bound
//! further up onto its parent channel and parking the rest; every node sorts its parked set
//! twice (by destination, then by descent batch); in descent stages the node at depth `δ`
//! handles descent batch `j` in stage `2j + δ`; the meshes route to the terminals. A stage
//! lasts as long as its busiest node plus an `O(log N)` barrier.

use super::circuit::{SorterParams, sort_cycles};
use crate::error::{Error, Result};
use crate::topology::colouring::colour;
use crate::traffic::Traffic;
use serde::{Deserialize, Serialize};

/// Mesh-step latency constant: a mesh sort or route costs `c_mesh·L` cycles (interpretation:
/// 'Mesh steps', docs/interpretations.md).
pub const C_MESH: u64 = 4;

/// The structure of an `N`-terminal sorting fat-tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FatTree {
    pub n: u32,
    /// `L = lg N`.
    pub log_n: u32,
    /// Mesh side `m`.
    pub mesh: u32,
    /// Depth of the mesh nodes, `D = L − 2 lg m`.
    pub depth: u32,
    /// Key bits `b` of the sorters' words.
    pub bits: u32,
}

/// The outcome of routing a message set.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FatTreeReport {
    pub terminals: u32,
    pub messages: usize,
    pub delivered: usize,
    pub degree: u32,
    /// Colour classes (partial permutations) routed one after the other.
    pub colours: u32,
    pub load_factor_dir: f64,
    pub load_factor_cut: f64,
    pub ascent_stages: u32,
    pub descent_stages: u32,
    /// Cycles by step: mesh steps, batching, ascent, peak sorts, descent.
    pub mesh_cycles: u64,
    pub batching_cycles: u64,
    pub ascent_cycles: u64,
    pub peak_sort_cycles: u64,
    pub descent_cycles: u64,
    pub routing_cycles: u64,
    /// Sorts asked to hold more words than their sorter's `l` (only the batch being sorted is
    /// counted, not the parked words beside it). Such a sort is charged as several.
    pub capacity_violations: usize,
    /// Batches that loaded a channel above `⌈ℓ(M_i, c)/L⌉` for their peak class (eq. (5) of
    /// [BB] §4.3 read as "≤"; its combination with eq. (4), and Lemma 10 itself, are not
    /// checked).
    pub lemma10_violations: usize,
    /// `T / (λ·L + L²)` (Theorem 3).
    pub theorem3_ratio: f64,
}

/// A sorting fat-tree run: the tree, the message set and the word width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FatTreeConfig {
    /// Terminals `N`: a power of two from 16 to 2^20.
    pub inputs: u32,
    /// Batch traffic (continuous patterns are refused).
    pub traffic: Traffic,
    pub seed: u64,
    /// Word bits `b` (default `2·lg N`).
    pub body_bits: Option<u32>,
}

impl Default for FatTreeConfig {
    /// 64 terminals, a random permutation, seed 1.
    fn default() -> Self {
        FatTreeConfig {
            inputs: 64,
            traffic: Traffic::RandomPermutation,
            seed: 1,
            body_bits: None,
        }
    }
}

impl FatTreeConfig {
    /// The tree this run routes on.
    pub fn tree(&self) -> Result<FatTree> {
        FatTree::new(
            self.inputs,
            self.body_bits
                .unwrap_or(2 * self.inputs.max(2).trailing_zeros()),
        )
    }

    /// Builds the tree and the message set and routes it.
    pub fn run(&self) -> Result<(FatTree, FatTreeReport)> {
        if self.traffic.is_continuous() {
            return Err(Error::invalid(
                "traffic",
                self.traffic.name(),
                "a batch pattern for the sorting fat-tree",
            ));
        }
        self.traffic.validate()?;
        let tree = self.tree()?;
        let messages: Vec<(u32, u32)> = self
            .traffic
            .messages(self.inputs, 0, self.seed)?
            .iter()
            .map(|m| (m.source, m.destination))
            .collect();
        let report = tree.route(&messages)?;
        Ok((tree, report))
    }
}

impl FatTree {
    /// An `N`-terminal tree: `N` a power of two from 16 to 2^20 with at least one mesh.
    pub fn new(n: u32, bits: u32) -> Result<Self> {
        if !(1..=64).contains(&bits) {
            return Err(Error::invalid(
                "body-bits",
                bits,
                "word bits b from 1 to 64",
            ));
        }
        if !(16..=1 << 20).contains(&n) || !n.is_power_of_two() {
            return Err(Error::invalid(
                "inputs",
                n,
                "a power of two from 16 to 2^20 for the sorting fat-tree",
            ));
        }
        let log_n = n.trailing_zeros();
        let mesh = 1u32 << (31 - log_n.leading_zeros());
        let depth = log_n - 2 * mesh.trailing_zeros();
        Ok(FatTree {
            n,
            log_n,
            mesh,
            depth,
            bits,
        })
    }

    /// Terminals under a node at depth `δ`.
    pub fn terminals(&self, depth: u32) -> u32 {
        self.n >> depth
    }

    /// The flexible sorter of a node at depth `δ < D`.
    pub fn sorter(&self, depth: u32) -> SorterParams {
        let lg = self.log_n - depth;
        SorterParams {
            s: 1 << (lg / 2 + 1),
            l: 1 << lg,
            bits: self.bits,
        }
    }

    /// Wires of the channel above a node at depth `δ ≥ 1`: `2^⌈lg n / 2⌉`.
    pub fn capacity(&self, depth: u32) -> u32 {
        1 << (self.log_n - depth).div_ceil(2)
    }

    /// Cycles to send `words` over the channel above a node at depth `δ`: `cap` words per
    /// `b + 1` cycles (an even-power node multiplexes its `s = 2·cap` sorter lines 2:1 onto
    /// the wires, so its columns take two word times each).
    pub fn channel_cycles(&self, depth: u32, words: u64) -> u64 {
        let per = u64::from(self.bits + 1);
        words.div_ceil(u64::from(self.capacity(depth))) * per
    }

    /// Node at depth `δ` above terminal `t`.
    fn node(&self, depth: u32, t: u32) -> u32 {
        t >> (self.log_n - depth)
    }

    /// Depth of the lowest common ancestor of two terminals' meshes (`D` within one mesh).
    pub fn peak(&self, a: u32, b: u32) -> u32 {
        let shared = self.log_n - (32 - (a ^ b).leading_zeros());
        shared.min(self.depth)
    }

    /// Load factors over the channel cuts ([BB] §2; interpretation: 'Load factor',
    /// docs/interpretations.md) with this tree's capacities.
    pub fn load_factors(&self, messages: &[(u32, u32)]) -> (f64, f64) {
        let mut dir = 0.0f64;
        let mut cut = 0.0f64;
        for depth in 1..=self.depth {
            let nodes = 1usize << depth;
            let (mut up, mut down) = (vec![0u32; nodes], vec![0u32; nodes]);
            for &(s, d) in messages {
                if self.peak(s, d) < depth {
                    up[self.node(depth, s) as usize] += 1;
                    down[self.node(depth, d) as usize] += 1;
                }
            }
            let cap = f64::from(self.capacity(depth));
            for i in 0..nodes {
                let (u, d) = (f64::from(up[i]), f64::from(down[i]));
                dir = dir.max(u.max(d) / cap);
                cut = cut.max((u + d) / cap);
            }
        }
        (dir, cut)
    }

    /// Cycles of a sort of `r` words at a node at depth `δ` (several sorts when `r > l`).
    fn sort(&self, depth: u32, r: u64, violations: &mut usize) -> Result<u64> {
        if r == 0 {
            return Ok(0);
        }
        let p = self.sorter(depth);
        let l = u64::from(p.l);
        if r > l {
            *violations += 1;
        }
        let full = r / l;
        let rest = r % l;
        let mut t = full * sort_cycles(p, p.l)?;
        if rest > 0 {
            t += sort_cycles(p, rest as u32)?;
        }
        Ok(t)
    }

    /// Routes `messages` `(source, destination)` and reports the cycles of every step.
    pub fn route(&self, messages: &[(u32, u32)]) -> Result<FatTreeReport> {
        for &(s, d) in messages {
            if s >= self.n || d >= self.n {
                return Err(Error::invalid(
                    "message",
                    format!("{s} -> {d}"),
                    format!("terminals 0..{}", self.n),
                ));
            }
        }
        let (dir, cut) = self.load_factors(messages);
        let d = crate::traffic::degree(self.n, messages.iter().copied());
        if d > MAX_DEGREE {
            return Err(Error::invalid(
                "degree",
                d,
                format!(
                    "at most {MAX_DEGREE}: the sorting fat-tree routes constant-degree message sets (Theorem 3)"
                ),
            ));
        }
        let colours = colour(self.n, messages);
        let classes = colours.iter().copied().max().map_or(0, |c| c + 1);
        let l = u64::from(self.log_n);
        let mut report = FatTreeReport {
            terminals: self.n,
            messages: messages.len(),
            degree: crate::traffic::degree(self.n, messages.iter().copied()),
            colours: classes,
            load_factor_dir: dir,
            load_factor_cut: cut,
            ..FatTreeReport::default()
        };
        let mut delivered = vec![false; messages.len()];
        for class in 0..classes {
            let set: Vec<usize> = (0..messages.len())
                .filter(|&i| colours[i] == class)
                .collect();
            self.route_class(messages, &set, &mut report, &mut delivered)?;
        }
        report.delivered = delivered.iter().filter(|&&d| d).count();
        if report.delivered != messages.len() {
            return Err(Error::Invariant {
                cycle: report.routing_cycles,
                message: format!(
                    "{} of {} messages delivered",
                    report.delivered,
                    messages.len()
                ),
            });
        }
        report.routing_cycles = report.mesh_cycles
            + report.batching_cycles
            + report.ascent_cycles
            + report.peak_sort_cycles
            + report.descent_cycles;
        report.theorem3_ratio =
            report.routing_cycles as f64 / (dir.max(1.0) * l as f64 + (l * l) as f64);
        Ok(report)
    }

    /// Routes one partial permutation (the eight steps of §5.3).
    fn route_class(
        &self,
        messages: &[(u32, u32)],
        set: &[usize],
        report: &mut FatTreeReport,
        delivered: &mut [bool],
    ) -> Result<()> {
        let (l, dd) = (u64::from(self.log_n), self.depth);
        let barrier = l;
        // Steps 1, 3 and 8: mesh sort/route before ascent, mesh arrangement, final routing.
        report.mesh_cycles += 3 * C_MESH * l;
        let far: Vec<usize> = set
            .iter()
            .copied()
            .filter(|&i| {
                let (s, d) = messages[i];
                if self.peak(s, d) == dd {
                    delivered[i] = true;
                }
                self.peak(s, d) < dd
            })
            .collect();
        // Step 2: peaks (one comparison, L cycles) and ranks by source per peak (D prefix
        // computations of Lemma 2 cost, 2L each); batch = rank mod L.
        report.batching_cycles += l + u64::from(dd) * 2 * l;
        let mut batch = vec![0u32; messages.len()];
        let mut by_peak: Vec<Vec<usize>> = vec![Vec::new(); dd as usize];
        for &i in &far {
            let (s, d) = messages[i];
            by_peak[self.peak(s, d) as usize].push(i);
        }
        for class in &mut by_peak {
            class.sort_by_key(|&i| (messages[i].0, i));
            for (rank, &i) in class.iter().enumerate() {
                batch[i] = (rank as u64 % l) as u32;
            }
        }
        self.check_lemma10(messages, &by_peak, &batch, report);
        // Step 4: ascent. Node (δ, v) handles batch j in stage 2j + D − 1 − δ; meshes emit
        // batch j in stage 2j − 1.
        let stages = 2 * (self.log_n - 1) + dd + 1;
        report.ascent_stages += stages;
        for stage in 0..stages {
            let sigma = stage as i64 - 1;
            let mut longest = 0u64;
            // Meshes (depth D) emitting batch j = (σ + 1) / 2 on their channels.
            if (sigma + 1) % 2 == 0 {
                let j = ((sigma + 1) / 2) as u32;
                let mut words = vec![0u64; 1 << dd];
                for &i in &far {
                    if batch[i] == j {
                        words[self.node(dd, messages[i].0) as usize] += 1;
                    }
                }
                for &w in &words {
                    longest = longest.max(self.channel_cycles(dd, w));
                }
            }
            for depth in 0..dd {
                let offset = i64::from(dd - 1 - depth);
                if sigma < offset || (sigma - offset) % 2 != 0 {
                    continue;
                }
                let j = ((sigma - offset) / 2) as u32;
                if j >= self.log_n {
                    continue;
                }
                let nodes = 1usize << depth;
                let (mut held, mut up) = (vec![0u64; nodes], vec![0u64; nodes]);
                for &i in &far {
                    let (s, d) = messages[i];
                    let peak = self.peak(s, d);
                    if batch[i] == j && peak <= depth {
                        let v = self.node(depth, s) as usize;
                        held[v] += 1;
                        if peak < depth {
                            up[v] += 1;
                        }
                    }
                }
                for v in 0..nodes {
                    let t = self.sort(depth, held[v], &mut report.capacity_violations)?
                        + if depth > 0 {
                            self.channel_cycles(depth, up[v])
                        } else {
                            0
                        };
                    longest = longest.max(t);
                }
            }
            report.ascent_cycles += longest + barrier;
        }
        // Steps 5 and 6: every node sorts its parked set by destination, assigns descent
        // batches (position mod L) and sorts again on (batch, destination).
        let mut descent = vec![0u32; messages.len()];
        let mut longest = 0u64;
        for (depth, class) in by_peak.iter().enumerate() {
            let depth = depth as u32;
            let mut parked: Vec<Vec<usize>> = vec![Vec::new(); 1 << depth];
            for &i in class {
                parked[self.node(depth, messages[i].0) as usize].push(i);
            }
            for p in &mut parked {
                p.sort_by_key(|&i| (messages[i].1, i));
                for (pos, &i) in p.iter().enumerate() {
                    descent[i] = (pos as u64 % l) as u32;
                }
                let t = self.sort(depth, p.len() as u64, &mut report.capacity_violations)?;
                longest = longest.max(2 * t);
            }
        }
        report.peak_sort_cycles += longest;
        // Step 7: descent. Node (δ, v) handles descent batch j in stage 2j + δ and drains to
        // its children; the meshes receive at depth D.
        let stages = 2 * (self.log_n - 1) + dd + 1;
        report.descent_stages += stages;
        for sigma in 0..stages {
            let mut longest = 0u64;
            for depth in 0..=dd {
                let sigma = i64::from(sigma);
                if sigma < i64::from(depth) || (sigma - i64::from(depth)) % 2 != 0 {
                    continue;
                }
                let j = ((sigma - i64::from(depth)) / 2) as u32;
                if j >= self.log_n {
                    continue;
                }
                let nodes = 1usize << depth;
                let mut held = vec![0u64; nodes];
                let mut down = vec![[0u64; 2]; nodes];
                for &i in &far {
                    let (s, d) = messages[i];
                    if descent[i] == j && self.peak(s, d) <= depth {
                        let v = self.node(depth, d) as usize;
                        held[v] += 1;
                        if depth < dd {
                            let child = self.node(depth + 1, d) as usize & 1;
                            down[v][child] += 1;
                        } else {
                            delivered[i] = true;
                        }
                    }
                }
                for v in 0..nodes {
                    if depth == dd {
                        continue;
                    }
                    // Both child channels drain at once, every wave full (interpretation:
                    // 'Sorted output', docs/interpretations.md); a column-by-column drain
                    // could take up to twice this.
                    let drain = self
                        .channel_cycles(depth + 1, down[v][0])
                        .max(self.channel_cycles(depth + 1, down[v][1]));
                    let t = self.sort(depth, held[v], &mut report.capacity_violations)? + drain;
                    longest = longest.max(t);
                }
            }
            report.descent_cycles += longest + barrier;
        }
        Ok(())
    }

    /// Eq. (5) in the proof of [BB] Lemma 10, with "≤" for the printed "=" (interpretation:
    /// 'Lemma 10', docs/interpretations.md): batch `j` of peak class `i` puts at most
    /// `⌈ℓ_a(M_i, c)/L⌉` records on every channel `c`.
    fn check_lemma10(
        &self,
        messages: &[(u32, u32)],
        by_peak: &[Vec<usize>],
        batch: &[u32],
        report: &mut FatTreeReport,
    ) {
        for class in by_peak {
            for depth in 1..=self.depth {
                let nodes = 1usize << depth;
                let mut total = vec![0u32; nodes];
                let mut per = vec![vec![0u32; nodes]; self.log_n as usize];
                for &i in class {
                    let (s, d) = messages[i];
                    if self.peak(s, d) < depth {
                        let v = self.node(depth, s) as usize;
                        total[v] += 1;
                        per[batch[i] as usize][v] += 1;
                    }
                }
                for row in &per {
                    for v in 0..nodes {
                        if row[v] > total[v].div_ceil(self.log_n) {
                            report.lemma10_violations += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Largest degree the sorting fat-tree accepts: Theorem 3 is stated for constant degree, and
/// the colouring tables grow as `N·d`.
pub const MAX_DEGREE: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Traffic;

    #[test]
    fn structure_for_256_and_65536_terminals() {
        let t = FatTree::new(256, 16).unwrap();
        assert_eq!((t.mesh, t.depth), (8, 2));
        assert_eq!((t.sorter(0).s, t.sorter(0).l), (32, 256));
        assert_eq!((t.sorter(1).s, t.sorter(1).l, t.capacity(1)), (16, 128, 16));
        assert_eq!(t.capacity(2), 8);
        let big = FatTree::new(1 << 16, 16).unwrap();
        assert_eq!((big.mesh, big.depth), (16, 8));
        assert_eq!(big.sorter(7).s, 32);
        assert_eq!(big.capacity(6), 32);
    }

    #[test]
    fn routes_a_permutation() {
        let t = FatTree::new(1024, 20).unwrap();
        let m: Vec<(u32, u32)> = Traffic::RandomPermutation
            .messages(1024, 0, 1)
            .unwrap()
            .iter()
            .map(|x| (x.source, x.destination))
            .collect();
        let r = t.route(&m).unwrap();
        assert_eq!(r.delivered, 1024);
        assert_eq!(r.colours, 1);
        assert_eq!(r.lemma10_violations, 0);
        assert_eq!(r.ascent_stages, 2 * 9 + 4 + 1);
    }
}
