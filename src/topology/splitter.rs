//! Randomly-wired splitter networks and splitter expansion ([LM] §I-B/C, §IV).
//!
//! Level `l` is split into `2^l` blocks of `M = n / 2^l` consecutive rows; block `b` with its
//! upper child (rows `[bM, bM + M/2)` of level `l + 1`, direction 0) and lower child (the other
//! half, direction 1) forms one `M`-input splitter.

use super::butterfly::check_multiplicity;
use super::{Link, Topology, TopologyKind, assemble, check_inputs};
use crate::error::Result;
use crate::rng::{Rng, Stream, stream};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// How a random splitter network is wired ([LM] §IV: the networks were "cleaned up" to remove
/// parallel edges "where possible"; both the generator and the clean-up are open choices that
/// move the results, so both are parameters: docs/interpretations.md, 'Wiring of random
/// splitters').
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SplitterWiring {
    pub generator: WiringGenerator,
    /// Swap link ends to remove parallel links where possible.
    pub cleanup: bool,
    /// Swap attempts per splitter and direction (per matching at the modified network's
    /// level −1) before the clean-up gives up.
    pub cleanup_budget: u32,
    /// The modified network's level −1: its first matching (direction 0, lane 0).
    pub first_matching: FirstMatching,
}

/// The first of the four perfect matchings at the modified network's level −1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FirstMatching {
    /// Uniformly random, like the other three.
    #[default]
    Random,
    /// The identity: input `i` reaches row `i` of [LM]'s level 0, so a permutation enters the
    /// splitters as it was given (a transpose stays a transpose).
    Identity,
}

/// How the `dM` up (or down) links of an `M`-input splitter are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WiringGenerator {
    /// Configuration model: a uniformly random matching of the `dM` input stubs (each input
    /// `d` times) to the `dM` output stubs (each child output `2d` times).
    Configuration,
    /// `d` rounds; in each, every input gets one link and every child output two, by a
    /// uniformly random matching (every round alone is balanced until the clean-up swaps
    /// links between rounds).
    Rounds,
    /// Lane 0 of each direction is the butterfly's own edge (input `i` to child output
    /// `i mod M/2`); the other `d − 1` lanes are a configuration model of the remaining stubs,
    /// and the clean-up swaps only those. The structure [LM]'s tables imply (a transpose is
    /// harder than a random problem: docs/interpretations.md, 'Wiring of random splitters').
    ButterflyPlusRandom,
}

impl Default for SplitterWiring {
    fn default() -> Self {
        SplitterWiring {
            generator: WiringGenerator::Configuration,
            cleanup: true,
            cleanup_budget: 10_000,
            first_matching: FirstMatching::Random,
        }
    }
}

/// A randomly-wired splitter network of multiplicity `d` (`1..=8`) with `n` inputs ([LM]
/// §I-C). For every splitter and direction (in the order level, block, direction,
/// all from the one `Wiring` stream of `seed`) the `dM` input stubs are matched at random to the
/// `dM` output stubs as [`SplitterWiring::generator`] says, then parallel links are cleaned up
/// (see [`SplitterWiring`]) unless they are unavoidable (`M/2 < d`). Lanes of a (node,
/// direction) are numbered in the order their stubs were drawn, so a lane's index is
/// independent of its head (docs/interpretations.md, 'Lane order of random splitters').
pub fn random_splitter(n: u32, d: u32, wiring: SplitterWiring, seed: u64) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    check_multiplicity("multiplicity", d)?;
    let mut rng = stream(seed, Stream::Wiring);
    let mut links = Vec::with_capacity(log_n as usize * n as usize * 2 * d as usize);
    for level in 0..log_n {
        splitter_level(n, level, level, d, wiring, &mut rng, &mut links);
    }
    Ok(assemble(TopologyKind::Splitter, n, log_n + 1, d, links))
}

/// Appends the links of the splitters of [LM]'s level `level` (blocks of `n >> level` rows),
/// whose tails are switch level `at` of the network being built.
pub(super) fn splitter_level(
    n: u32,
    level: u32,
    at: u32,
    d: u32,
    wiring: SplitterWiring,
    rng: &mut Rng,
    links: &mut Vec<Link>,
) {
    let du = d as usize;
    let m = n >> level;
    let half = m / 2;
    // outs[k] = local output of input stub k (input k / d).
    let mut outs: Vec<u32> = Vec::with_capacity(m as usize * du);
    let mut round: Vec<u32> = Vec::with_capacity(m as usize * du);
    // Leading lanes of every input the clean-up keeps.
    let fixed = usize::from(wiring.generator == WiringGenerator::ButterflyPlusRandom);
    for block in 0..(1u32 << level) {
        let base = block * m;
        for direction in 0..2u8 {
            outs.clear();
            match wiring.generator {
                WiringGenerator::Configuration => {
                    outs.extend((0..half).flat_map(|o| std::iter::repeat_n(o, 2 * du)));
                    outs.shuffle(rng);
                }
                WiringGenerator::Rounds => {
                    outs.resize(m as usize * du, 0);
                    for r in 0..du {
                        round.clear();
                        round.extend((0..half).flat_map(|o| [o, o]));
                        round.shuffle(rng);
                        for (i, &o) in round.iter().enumerate() {
                            outs[i * du + r] = o;
                        }
                    }
                }
                WiringGenerator::ButterflyPlusRandom => {
                    let rest = du - 1;
                    round.clear();
                    round.extend((0..half).flat_map(|o| std::iter::repeat_n(o, 2 * rest)));
                    round.shuffle(rng);
                    for i in 0..m as usize {
                        outs.push(i as u32 % half);
                        outs.extend_from_slice(&round[i * rest..(i + 1) * rest]);
                    }
                }
            }
            if wiring.cleanup && half >= d {
                clean_up(&mut outs, du, fixed, wiring.cleanup_budget, rng);
            }
            let child = (at + 1) * n + base + u32::from(direction) * half;
            // A lane keeps the position its stub was drawn in: both generators draw the
            // stubs of one input exchangeably, so a lane's index says nothing about where it
            // leads (lane-choice rules that prefer low lanes stay unbiased).
            for (i, lanes) in outs.chunks(du).enumerate() {
                let tail = at * n + base + i as u32;
                for (lane, &o) in lanes.iter().enumerate() {
                    links.push(Link {
                        tail,
                        head: child + o,
                        direction,
                        lane: lane as u16,
                        head_port: 0,
                    });
                }
            }
        }
    }
}

/// [LM]'s clean-up: while stub `k` duplicates an earlier link of its input, swap its output
/// end with that of a random stub `j` of another input, provided neither input then has a
/// parallel link; at most `budget` attempts. The first `fixed` stubs of every input are never
/// swapped (a duplicate is always found at a later stub).
fn clean_up(outs: &mut [u32], d: usize, fixed: usize, budget: u32, rng: &mut Rng) {
    let free = d - fixed;
    let mut attempts = 0;
    for k in 0..outs.len() {
        let first = k - k % d;
        while outs[first..k].contains(&outs[k]) {
            if attempts == budget {
                return;
            }
            attempts += 1;
            let r = rng.random_range(0..outs.len() / d * free);
            let j = r / free * d + fixed + r % free;
            let j_first = j - j % d;
            if j_first == first {
                continue;
            }
            let (ok, oj) = (outs[k], outs[j]);
            let k_clash = (first..first + d).any(|x| x != k && outs[x] == oj);
            let j_clash = (j_first..j_first + d).any(|x| x != j && outs[x] == ok);
            if !k_clash && !j_clash {
                outs.swap(k, j);
            }
        }
    }
}

/// Number of extra parallel links: links whose (tail, head) pair occurred on an earlier link.
pub fn parallel_links(topo: &Topology) -> usize {
    let per_node = 2 * topo.multiplicity as usize;
    topo.links
        .chunks(per_node)
        .map(|out| {
            (1..out.len())
                .filter(|&j| out[..j].iter().any(|l| l.head == out[j].head))
                .count()
        })
        .sum()
}

/// Measured expansion of one splitter ([LM] §I-C).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Expansion {
    /// The α asked for.
    pub alpha: f64,
    /// min over the sets S of |N_up(S)| / |S|.
    pub up: f64,
    /// min over the sets S of |N_down(S)| / |S|.
    pub down: f64,
    /// True: every set was enumerated. False: `up`/`down` are upper bounds from sampled sets.
    pub exact: bool,
}

/// Largest splitter measured exactly (2^20 subsets at most).
const EXACT_MAX_INPUTS: u32 = 20;
/// Sampled sets per direction when the splitter is too large to enumerate.
const TRIALS: u32 = 2000;
/// Largest set a sampled trial grows to.
const MAX_GROWTH: usize = 256;
/// Covered outputs whose in-neighbours a greedy step examines.
const PROBES: usize = 2;

/// Expansion of the splitter of block `block` at `level`: the minimum over nonempty input sets
/// S with |S| ≤ max(1, ⌊α M⌋) of |N_up(S)| / |S| and of |N_down(S)| / |S| ([LM] §I-C: the
/// splitter has (α, β)-expansion iff both are ≥ β). Exact by enumeration when `M ≤ 20`;
/// otherwise an upper bound from 2000 sets per direction, each grown greedily (up to 256
/// inputs) from a random input by adding a neighbour-sharing input that adds the fewest new
/// outputs (a fixed seed per splitter, so the result is deterministic). Works for every topology
/// whose level-`level` blocks are splitters (butterfly, dilated, splitter, first half of Beneš).
///
/// # Panics
/// If `level >= log n` or `block >= 2^level`.
pub fn expansion(topo: &Topology, level: u32, block: u32, alpha: f64) -> Expansion {
    assert!(
        level < topo.log_n && block < (1 << level),
        "no splitter at {level}/{block}"
    );
    let sp = Splitter::new(topo, level, block);
    let m = 2 * sp.half;
    let max_size = ((alpha * f64::from(m)).floor() as usize).clamp(1, m as usize);
    let (best, exact) = if m <= EXACT_MAX_INPUTS {
        (exact_expansion(&sp, max_size), true)
    } else {
        let mut rng = Rng::seed_from_u64(0x5EED_E7A9 ^ (u64::from(level) << 32 | u64::from(block)));
        (sampled_expansion(&sp, max_size, &mut rng), false)
    };
    let [up, down] = best;
    Expansion {
        alpha,
        up,
        down,
        exact,
    }
}

/// One splitter of a topology, inputs and outputs as local indices.
struct Splitter<'a> {
    topo: &'a Topology,
    level: u32,
    base: u32,
    half: u32,
}

impl<'a> Splitter<'a> {
    fn new(topo: &'a Topology, level: u32, block: u32) -> Self {
        let m = topo.n >> level;
        Splitter {
            topo,
            level,
            base: block * m,
            half: m / 2,
        }
    }

    /// Distinct local outputs of input `i` in direction `dir`, into `buf`; returns how many.
    fn outputs(&self, i: u32, dir: u8, buf: &mut [u32; 8]) -> usize {
        let t = self.topo;
        let first = (self.level + 1) * t.n + self.base + u32::from(dir) * self.half;
        let mut len = 0;
        for id in t.lanes(t.node_id(self.level, self.base + i), dir) {
            let o = t.links[id as usize].head - first;
            if !buf[..len].contains(&o) {
                buf[len] = o;
                len += 1;
            }
        }
        len
    }

    /// Local inputs linked to local output `o` of direction `dir` (with repetitions).
    fn inputs_of(&self, o: u32, dir: u8) -> impl Iterator<Item = u32> + '_ {
        let t = self.topo;
        let node = (self.level + 1) * t.n + self.base + u32::from(dir) * self.half + o;
        (0..2 * t.multiplicity)
            .map(move |p| t.node(t.links[t.in_link(node, p) as usize].tail).column - self.base)
    }
}

/// Exact minimum ratios `[up, down]` by enumerating every set of `1..=max_size` inputs.
fn exact_expansion(sp: &Splitter, max_size: usize) -> [f64; 2] {
    let m = 2 * sp.half as usize;
    let mut masks = [[0u32; EXACT_MAX_INPUTS as usize]; 2];
    let mut buf = [0u32; 8];
    for (dir, row) in masks.iter_mut().enumerate() {
        for (i, mask) in row.iter_mut().enumerate().take(m) {
            let len = sp.outputs(i as u32, dir as u8, &mut buf);
            *mask = buf[..len].iter().fold(0, |acc, &o| acc | 1 << o);
        }
    }
    fn visit(
        masks: &[[u32; 20]; 2],
        m: usize,
        start: usize,
        size: usize,
        max: usize,
        acc: [u32; 2],
        best: &mut [f64; 2],
    ) {
        for i in start..m {
            let next = [acc[0] | masks[0][i], acc[1] | masks[1][i]];
            for dir in 0..2 {
                best[dir] = best[dir].min(f64::from(next[dir].count_ones()) / (size + 1) as f64);
            }
            if size + 1 < max {
                visit(masks, m, i + 1, size + 1, max, next, best);
            }
        }
    }
    let mut best = [f64::INFINITY; 2];
    visit(&masks, m, 0, 0, max_size, [0, 0], &mut best);
    best
}

/// Upper bounds `[up, down]` from greedily grown sets (see [`expansion`]).
fn sampled_expansion(sp: &Splitter, max_size: usize, rng: &mut Rng) -> [f64; 2] {
    let m = 2 * sp.half;
    let target = max_size.min(MAX_GROWTH);
    let mut in_set = vec![false; m as usize];
    let mut covered = vec![false; sp.half as usize];
    let (mut set, mut nbrs) = (Vec::with_capacity(target), Vec::new());
    let mut buf = [0u32; 8];
    let mut best = [f64::INFINITY; 2];
    for dir in 0..2u8 {
        for _ in 0..TRIALS {
            set.iter().for_each(|&i: &u32| in_set[i as usize] = false);
            nbrs.iter().for_each(|&o: &u32| covered[o as usize] = false);
            set.clear();
            nbrs.clear();
            let mut next = rng.random_range(0..m);
            loop {
                in_set[next as usize] = true;
                set.push(next);
                let len = sp.outputs(next, dir, &mut buf);
                for &o in &buf[..len] {
                    if !std::mem::replace(&mut covered[o as usize], true) {
                        nbrs.push(o);
                    }
                }
                let ratio = nbrs.len() as f64 / set.len() as f64;
                best[dir as usize] = best[dir as usize].min(ratio);
                if set.len() >= target {
                    break;
                }
                // Greedy step: among in-neighbours of a few covered outputs, the input adding
                // the fewest new outputs; a random outside input if they are all taken.
                let mut pick: Option<(usize, u32)> = None;
                for _ in 0..PROBES {
                    let o = nbrs[rng.random_range(0..nbrs.len())];
                    for i in sp.inputs_of(o, dir).filter(|&i| !in_set[i as usize]) {
                        let len = sp.outputs(i, dir, &mut buf);
                        let new = buf[..len].iter().filter(|&&x| !covered[x as usize]).count();
                        if pick.is_none_or(|(n, _)| new < n) {
                            pick = Some((new, i));
                        }
                    }
                }
                next = match pick {
                    Some((_, i)) => i,
                    None => loop {
                        let i = rng.random_range(0..m);
                        if !in_set[i as usize] {
                            break i;
                        }
                    },
                };
            }
        }
    }
    best
}

#[cfg(test)]
mod tests;
