//! Faulty switches and how faults spread ([LM] §III-A and §IV).
//!
//! A fault makes a switch useless: no packet enters or leaves it. Two rule sets decide which
//! healthy switches must be given up as well, so that every switch left can still reach every
//! output its packets need:
//! * the experiments' rule (§IV): a switch becomes faulty when *all* its up links (both, for
//!   d = 2) or all its down links lead to faulty switches, applied from the last interior level
//!   back to the inputs ([`propagate`]);
//! * the theory's rules (§III-A), in [`super::theory`].

use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::topology::{LinkClass, NodeId, Topology, TopologyKind};
use bitvec::prelude::*;
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// Fault state of every switch of a network, indexed by node id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Faults {
    /// Switches placed faulty.
    pub placed: BitVec,
    /// Switches faulty: placed or propagated.
    pub faulty: BitVec,
    /// Switches erased with their splitter (theory rules only).
    pub erased: BitVec,
}

impl Faults {
    /// No faults on `topo`.
    pub fn none(topo: &Topology) -> Self {
        let n = topo.node_count();
        Faults {
            placed: bitvec![0; n],
            faulty: bitvec![0; n],
            erased: bitvec![0; n],
        }
    }

    /// The given switches faulty.
    pub fn at(topo: &Topology, switches: impl IntoIterator<Item = NodeId>) -> Self {
        let mut f = Faults::none(topo);
        for s in switches {
            f.placed.set(s as usize, true);
            f.faulty.set(s as usize, true);
        }
        f
    }

    /// Whether switch `s` is faulty (placed or propagated).
    pub fn is_faulty(&self, s: NodeId) -> bool {
        self.faulty[s as usize]
    }

    /// Switches placed faulty.
    pub fn placed_count(&self) -> usize {
        self.placed.count_ones()
    }

    /// Switches made faulty by propagation.
    pub fn propagated_count(&self) -> usize {
        self.faulty.count_ones() - self.placed.count_ones()
    }

    /// Faulty switches on the input level (level 0).
    pub fn faulty_inputs(&self, topo: &Topology) -> usize {
        self.faulty[..topo.n as usize].count_ones()
    }
}

/// Which switch levels count as interior, where faults are placed, in [LM]'s numbering:
/// for the modified splitter network its matching level is −1 and its level `k` is switch
/// level `k + 1`; other networks number their levels from 0. Default: everything between the
/// input level and the outputs (0..=lg N − 2 for the modified network; docs/interpretations.md,
/// 'Fault placement').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interior {
    /// First and last interior level (inclusive); `None`: the default.
    pub levels: Option<(i32, i32)>,
}

impl Interior {
    /// The switch levels (topology numbering, inclusive) this selects on `topo`, checked.
    pub fn switch_levels(&self, topo: &Topology) -> Result<(u32, u32)> {
        let offset = i32::from(topo.kind == TopologyKind::ModifiedSplitter);
        let (lo, hi) = (-offset, topo.last_level() as i32 - 1 - offset);
        let (first, last) = self.levels.unwrap_or((lo + 1, hi));
        if first < lo || last > hi || first > last {
            return Err(Error::invalid(
                "interior levels",
                format!("{first}..{last}"),
                format!(
                    "a range of levels within {lo}..{hi} ([LM]'s numbering; the outputs are never faulty)"
                ),
            ));
        }
        Ok(((first + offset) as u32, (last + offset) as u32))
    }
}

/// How [LM] §IV's "faults at random" are drawn (docs/interpretations.md, 'Fault placement'):
/// the paper does not say, and near the critical density of the propagation rule the choice
/// moves Table I.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultDraw {
    /// `count` distinct switches: exactly `count` are faulty.
    #[default]
    Distinct,
    /// `count` independent uniform draws: a switch drawn twice is faulty once, so fewer than
    /// `count` may be (about 948 distinct for 1000 draws among 9216 switches).
    WithReplacement,
}

/// Marks `count` switches faulty, drawn uniformly at random among the interior levels as
/// `draw` says (`count` is at most the number of interior switches either way).
pub fn place_random(
    topo: &Topology,
    count: u32,
    interior: Interior,
    draw: FaultDraw,
    rng: &mut Rng,
) -> Result<Faults> {
    let (first, last) = interior.switch_levels(topo)?;
    let pool = (last - first + 1) * topo.n;
    if count > pool {
        return Err(Error::invalid(
            "faults",
            count,
            format!("0..={pool} (the interior switches)"),
        ));
    }
    let mut f = Faults::none(topo);
    let base = first * topo.n;
    let mut drawn = 0;
    while drawn < count {
        let s = (base + rng.random_range(0..pool)) as usize;
        if draw == FaultDraw::WithReplacement || !f.placed[s] {
            f.placed.set(s, true);
            f.faulty.set(s, true);
            drawn += 1;
        }
    }
    Ok(f)
}

/// Places `f` faults and propagates them until no input is faulty ([LM] §IV: otherwise "all
/// of the faults were removed, and a new set of random faults was placed"), at most
/// `max_placements` times. Returns the faults and the number of placements drawn.
pub fn place_until_inputs_survive(
    topo: &Topology,
    f: u32,
    interior: Interior,
    draw: FaultDraw,
    input_rule: InputRule,
    max_placements: u32,
    rng: &mut Rng,
) -> Result<(Faults, u32)> {
    if f > 0 && topo.kind != TopologyKind::ModifiedSplitter && topo.kind != TopologyKind::Splitter {
        return Err(Error::invalid(
            "faults",
            f,
            format!(
                "0 on a {} (every interior fault propagates to 2^l inputs l levels back, [LM] §I-B)",
                topo.kind.name()
            ),
        ));
    }
    for placement in 1..=max_placements {
        let mut faults = place_random(topo, f, interior, draw, rng)?;
        propagate(topo, &mut faults, input_rule);
        if faults.faulty_inputs(topo) == 0 {
            return Ok((faults, placement));
        }
    }
    Err(Error::invalid(
        "faults",
        f,
        format!(
            "a count some placement survives: {max_placements} placements all reached an input"
        ),
    ))
}

/// The experiments' rule at the modified network's matching level (level −1), which the paper
/// does not state (docs/interpretations.md, 'Fault propagation').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputRule {
    /// Faulty when all four neighbours are faulty (flitforge's default).
    #[default]
    All,
    /// The splitter rule read literally: both links of matchings 0–1, or both of 2–3, lead to
    /// faulty switches.
    Pairs,
}

/// The experiments' propagation ([LM] §IV): from the last interior level back to the inputs,
/// a healthy switch becomes faulty when all `d` links of one direction lead to faulty switches
/// (at an [`LinkClass::Any`] level: as `input_rule` says; an [`LinkClass::Exact`] stage never
/// propagates, as outputs are never faulty). Returns the number of switches it made faulty.
pub fn propagate(topo: &Topology, faults: &mut Faults, input_rule: InputRule) -> usize {
    let mut added = 0;
    for level in (0..topo.last_level()).rev() {
        let class = topo.link_class(level);
        if class == LinkClass::Exact {
            continue;
        }
        for s in topo.node_id(level, 0)..topo.node_id(level + 1, 0) {
            if faults.faulty[s as usize] {
                continue;
            }
            let dead = |dir: u8| {
                topo.lanes(s, dir)
                    .all(|l| faults.faulty[topo.links[l as usize].head as usize])
            };
            let fails = match (class, input_rule) {
                (LinkClass::Any, InputRule::All) => dead(0) && dead(1),
                _ => dead(0) || dead(1),
            };
            if fails {
                faults.faulty.set(s as usize, true);
                added += 1;
            }
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};
    use crate::topology::{
        Link, SplitterWiring, assemble, butterfly, dilated_butterfly, modified_splitter,
    };

    /// A hand-wired 16-input modified network: level −1 matching `k` maps row `i` to
    /// `(i + 4k) mod 16`; each splitter input `i` (local) has its up links to the up child's
    /// rows `i mod M/2` and `(i + 1) mod M/2`, likewise down; then the 4×4 stage.
    fn hand_modified() -> Topology {
        let n = 16u32;
        let mut links = Vec::new();
        let mut link = |tail, head, direction: u8, lane: u16| {
            links.push(Link {
                tail,
                head,
                direction,
                lane,
                head_port: 0,
            })
        };
        for i in 0..n {
            for k in 0..4u32 {
                link(i, n + (i + 4 * k) % n, (k / 2) as u8, (k % 2) as u16);
            }
        }
        for level in 0..2u32 {
            let m = n >> level;
            let half = m / 2;
            for row in 0..n {
                let (base, i) = (row / m * m, row % m);
                for dir in 0..2u8 {
                    let child = base + u32::from(dir) * half;
                    let mut heads = [i % half, (i + 1) % half];
                    heads.sort_unstable();
                    for (lane, h) in heads.into_iter().enumerate() {
                        link(
                            (level + 1) * n + row,
                            (level + 2) * n + child + h,
                            dir,
                            lane as u16,
                        );
                    }
                }
            }
        }
        for row in 0..n {
            for k in 0..4u32 {
                link(
                    3 * n + row,
                    4 * n + (row & !3) + k,
                    (k / 2) as u8,
                    (k % 2) as u16,
                );
            }
        }
        assemble(TopologyKind::ModifiedSplitter, n, 5, 2, links)
    }

    /// Switch of [LM]'s row `r` and level `l` (−1 = the matching level) of a modified network.
    fn at(l: i32, r: u32) -> NodeId {
        (l + 1) as u32 * 16 + r
    }

    #[test]
    fn one_butterfly_fault_blocks_two_to_the_l_switches_l_levels_back() {
        // [LM] §I-B: a single fault blocks 2^l switches l levels back in a butterfly.
        let t = butterfly(16).unwrap();
        let mut f = Faults::at(&t, [t.node_id(3, 0)]);
        assert_eq!(propagate(&t, &mut f, InputRule::All), 2 + 4 + 8);
        let faulty = |level| {
            (0..16)
                .filter(|&r| f.is_faulty(t.node_id(level, r)))
                .collect::<Vec<_>>()
        };
        assert_eq!(faulty(2), [0, 2]);
        assert_eq!(faulty(1), [0, 2, 4, 6]);
        assert_eq!(faulty(0), [0, 2, 4, 6, 8, 10, 12, 14]);
        assert_eq!(f.faulty_inputs(&t), 8);
        // The 2-dilated butterfly's two lanes lead to the same switch: the same spread.
        let t = dilated_butterfly(16, 2).unwrap();
        let mut f = Faults::at(&t, [t.node_id(3, 0)]);
        assert_eq!(propagate(&t, &mut f, InputRule::All), 14);
    }

    #[test]
    fn hand_made_modified_network_propagates_both_link_rule() {
        let t = hand_modified();
        // [LM]'s level-2 rows 0 and 1 (inputs of the first 4x4 block) faulty: level-1 input i
        // of block 0..7 links up to rows i mod 4 and i+1 mod 4, so only i = 0 and 4 lose both.
        let mut f = Faults::at(&t, [at(2, 0), at(2, 1)]);
        assert_eq!(propagate(&t, &mut f, InputRule::All), 2);
        assert!(f.is_faulty(at(1, 0)) && f.is_faulty(at(1, 4)));
        assert_eq!(f.faulty_inputs(&t), 0);
        // Row 2 as well: level 1 loses rows 0, 1, 4, 5; level 0 input i links up to rows i mod 8
        // and i+1 mod 8, so rows 0, 4, 8, 12 fail; level −1 row i reaches i, i+4, i+8, i+12, so
        // rows 0, 4, 8, 12 there have all four neighbours faulty: the faults reach the inputs.
        let mut f = Faults::at(&t, [at(2, 0), at(2, 1), at(2, 2)]);
        assert_eq!(propagate(&t, &mut f, InputRule::All), 12);
        let faulty = |f: &Faults, l| {
            (0..16)
                .filter(|&r| f.is_faulty(at(l, r)))
                .collect::<Vec<_>>()
        };
        assert_eq!(faulty(&f, 1), [0, 1, 4, 5]);
        assert_eq!(faulty(&f, 0), [0, 4, 8, 12]);
        assert_eq!(faulty(&f, -1), [0, 4, 8, 12]);
        assert_eq!(f.faulty_inputs(&t), 4);
        // Two level-0 faults (rows 0, 4): no input loses all four neighbours, but under the
        // literal pair rule input 0 (matchings 0-1: rows 0, 4) and input 8 (matchings 2-3:
        // rows 0, 4) fail.
        let placed = [at(0, 0), at(0, 4)];
        let mut f = Faults::at(&t, placed);
        assert_eq!(propagate(&t, &mut f, InputRule::All), 0);
        let mut f = Faults::at(&t, placed);
        assert_eq!(propagate(&t, &mut f, InputRule::Pairs), 2);
        assert_eq!(faulty(&f, -1), [0, 8]);
        // Faults only spread backwards: a whole 4x4 block's inputs faulty leaves the other
        // blocks of that level healthy (and, here, takes every input with it).
        let mut f = Faults::at(&t, (0..4).map(|r| at(2, r)));
        propagate(&t, &mut f, InputRule::All);
        assert_eq!(faulty(&f, 2), [0, 1, 2, 3]);
        assert_eq!(f.faulty_inputs(&t), 16);
    }

    #[test]
    fn one_backward_pass_reaches_the_fixpoint() {
        let mut rng = stream(7, Stream::Test);
        for seed in 0..20 {
            let t = modified_splitter(64, SplitterWiring::default(), seed).unwrap();
            let mut f =
                place_random(&t, 40, Interior::default(), FaultDraw::Distinct, &mut rng).unwrap();
            propagate(&t, &mut f, InputRule::All);
            let before = f.clone();
            assert_eq!(propagate(&t, &mut f, InputRule::All), 0);
            assert_eq!(f, before);
            // Placed faults stay in the interior: never on level −1 or the outputs.
            assert_eq!(f.placed[..64].count_ones(), 0);
            assert_eq!(f.placed[64 * 6..].count_ones(), 0);
            assert_eq!(f.placed_count(), 40);
        }
    }

    #[test]
    fn interior_levels_are_checked_and_selectable() {
        let t = hand_modified();
        assert_eq!(Interior::default().switch_levels(&t).unwrap(), (1, 3));
        let i = Interior {
            levels: Some((-1, 1)),
        };
        assert_eq!(i.switch_levels(&t).unwrap(), (0, 2));
        for bad in [(-2, 1), (0, 3), (2, 1)] {
            let i = Interior { levels: Some(bad) };
            assert!(matches!(i.switch_levels(&t), Err(Error::Invalid { .. })));
        }
        let mut rng = stream(1, Stream::Test);
        assert!(place_random(&t, 49, Interior::default(), FaultDraw::Distinct, &mut rng).is_err());
        let f = place_random(&t, 48, Interior::default(), FaultDraw::Distinct, &mut rng).unwrap();
        assert_eq!(f.placed[16..64].count_ones(), 48);
    }

    #[test]
    fn fault_draws_with_replacement_count_repeats_once() {
        let t = modified_splitter(1024, SplitterWiring::default(), 1).unwrap();
        let mut rng = stream(7, Stream::Test);
        let distinct =
            place_random(&t, 1000, Interior::default(), FaultDraw::Distinct, &mut rng).unwrap();
        assert_eq!(distinct.placed_count(), 1000);
        // 1000 draws among 9 · 1024 interior switches: 9216 (1 − (1 − 1/9216)^1000) ≈ 948
        // distinct, σ ≈ 7.
        let mut total = 0;
        for _ in 0..20 {
            let f = place_random(
                &t,
                1000,
                Interior::default(),
                FaultDraw::WithReplacement,
                &mut rng,
            )
            .unwrap();
            total += f.placed_count();
        }
        let mean = total as f64 / 20.0;
        assert!((mean - 948.4).abs() < 6.0, "mean distinct {mean}");
    }
}
