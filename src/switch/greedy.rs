//! Next-state logic of the greedy store-and-forward mode ([`FlowControl::Greedy`]), the routing
//! of [LM]'s experiments (§IV) as flitforge reads it (docs/interpretations.md, 'Greedy step').
//!
//! Registers per switch: a FIFO queue of up to `depth` one-flit packets (message ids) and its
//! length ([`Fabric::occupancy`]). Per cycle, a switch below the last level:
//! 1. marks an out link *open* when its head switch is healthy and is an output or held fewer
//!    than `switch_queue` packets at the end of the previous cycle ([LM]: "at most 4");
//! 2. walks its queue oldest first, without head-of-line blocking: each packet takes one open,
//!    still unused link of its class ([`LinkClass`]: the `d` links of the direction its
//!    destination bit names, any link, or the one link to its output), chosen by the lane
//!    choice (lowest index, uniform by an LFSR, or the least-loaded head);
//! 3. at the clock edge, every granted packet leaves; the rest keep their order; arrivals are
//!    appended to their head's queue in the order the moves were generated (switch id, then
//!    queue position), and outputs absorb arrivals at once.
//!
//! A switch reads only registered values (queue lengths are the previous cycle's), so there are
//! no combinational signals between switches: one sweep in any order settles a cycle.

use super::transfer::{NONE, Transfer, TransferKind};
use super::{FAULTY, Fabric, Headers, NO_GRANT};
use crate::config::{FlowControl, LaneChoice};
use crate::error::{Error, Result};
use crate::flit::FlitSlot;
use crate::topology::{LinkClass, NodeId};

impl Fabric {
    /// Appends message `msg` to switch `s`'s queue (a source loading an input switch).
    pub fn enqueue(&mut self, s: NodeId, msg: u32) -> Result<()> {
        debug_assert_eq!(self.params.mode, FlowControl::Greedy);
        let depth = self.params.depth;
        let count = u32::from(self.occupancy[s as usize]);
        if count >= depth {
            return Err(Error::invalid(
                "packets per input switch",
                count + 1,
                format!("at most the queue depth {depth}"),
            ));
        }
        if self.is_faulty(s) {
            return Err(Error::invalid(
                "packet source",
                format!("switch {s}"),
                "a healthy switch (this one is faulty)",
            ));
        }
        self.queue[(s * depth + count) as usize] = msg;
        self.occupancy[s as usize] += 1;
        self.held += 1;
        Ok(())
    }

    /// The packets queued in switch `s`, oldest first (greedy mode).
    pub fn queued(&self, s: NodeId) -> &[u32] {
        let depth = self.params.depth as usize;
        let base = s as usize * depth;
        &self.queue[base..base + usize::from(self.occupancy[s as usize])]
    }

    /// Packets switch `s` holds (greedy mode: its queue length, the register the admission rule
    /// reads).
    pub fn occupancy(&self, s: NodeId) -> u32 {
        u32::from(self.occupancy[s as usize])
    }

    /// Evaluates switch `s` in greedy mode: grants out links to queued packets (rules 1–2 of
    /// the module doc).
    pub(crate) fn evaluate_greedy(&mut self, s: NodeId, headers: Headers<'_>) {
        let count = usize::from(self.occupancy[s as usize]);
        if count == 0 {
            return;
        }
        let t = &self.topo;
        debug_assert_eq!(t.radix, 2, "[LM]'s greedy routing runs on radix-2 networks");
        let level = s >> t.log_n;
        let m = t.multiplicity;
        let per = 2 * m;
        let first = s * per;
        let to_outputs = level + 2 == t.levels;
        let limit = self.params.switch_queue.unwrap_or(u32::MAX);
        let mut open = 0u32;
        for k in 0..per {
            let head = t.links[(first + k) as usize].head;
            let healthy = self.vcs[self.vc_base(head) as usize].flags & FAULTY == 0;
            if healthy && (to_outputs || u32::from(self.occupancy[head as usize]) < limit) {
                open |= 1 << k;
            }
        }
        let class = self.classes[level as usize];
        let (_, shift) = self.route[level as usize];
        let every = (1u32 << per) - 1;
        let depth = self.params.depth as usize;
        let base = s as usize * depth;
        let mut used = 0u32;
        for j in 0..count {
            let dest = headers.get(self.queue[base + j]).destination;
            let allowed = match class {
                LinkClass::Direction => ((1 << m) - 1) << (((dest >> shift) & 1) * m),
                LinkClass::Any => every,
                LinkClass::Exact => 1 << (t.exact_link(s, dest) - first),
            };
            let candidates = allowed & open & !used;
            let grant = if candidates == 0 {
                NO_GRANT
            } else {
                let k = self.pick(s, j as u32, candidates, first);
                used |= 1 << k;
                first + k
            };
            self.queue_grant[base + j] = grant;
        }
    }

    /// One of the links in the non-empty mask `candidates` (bit `k` = link `first + k`) for the
    /// `j`-th queued packet of switch `s`, as the lane choice says: the lowest; the
    /// `(lfsr + j) mod |candidates|`-th (uniform over the candidates, different for packets of
    /// one cycle); or the one whose head held the fewest packets (lowest on ties).
    fn pick(&self, s: NodeId, j: u32, candidates: u32, first: u32) -> u32 {
        match self.params.lane_choice {
            LaneChoice::Lowest => candidates.trailing_zeros(),
            LaneChoice::Random => {
                let nth = (u32::from(self.lfsr[s as usize]) + j) % candidates.count_ones();
                let mut rest = candidates;
                for _ in 0..nth {
                    rest &= rest - 1;
                }
                rest.trailing_zeros()
            }
            LaneChoice::LeastLoaded => {
                let load = |k: u32| {
                    let head = self.topo.links[(first + k) as usize].head;
                    self.occupancy[head as usize]
                };
                let mut best = candidates.trailing_zeros();
                let mut rest = candidates & (candidates - 1);
                while rest != 0 {
                    let k = rest.trailing_zeros();
                    if load(k) < load(best) {
                        best = k;
                    }
                    rest &= rest - 1;
                }
                best
            }
        }
    }

    /// First half of a greedy clock edge: granted packets leave (reported as `Crossed` in move
    /// order), the others keep their order and are reported `Stalled`.
    pub(crate) fn commit_greedy_departures(&mut self, transfers: &mut Vec<Transfer>) {
        let depth = self.params.depth as usize;
        for s in 0..self.topo.node_count() {
            let count = usize::from(self.occupancy[s]);
            if count == 0 {
                continue;
            }
            let base = s * depth;
            let from = self.vc_base(s as NodeId);
            let mut kept = 0;
            for j in 0..count {
                let msg = self.queue[base + j];
                let flit = FlitSlot {
                    msg,
                    seq: 0,
                    hop: 0,
                };
                let g = std::mem::replace(&mut self.queue_grant[base + j], NO_GRANT);
                if g == NO_GRANT {
                    self.queue[base + kept] = msg;
                    kept += 1;
                    transfers.push(Transfer {
                        flit,
                        from,
                        to: NONE,
                        kind: TransferKind::Stalled,
                    });
                } else {
                    let ov = self.output_vc(g, 0);
                    self.link_flits[g as usize] += 1;
                    transfers.push(Transfer {
                        flit,
                        from,
                        to: self.down[ov as usize],
                        kind: TransferKind::Crossed { ov },
                    });
                }
            }
            self.held -= (count - kept) as u64;
            self.occupancy[s] = kept as u16;
        }
        if self.params.lane_choice == LaneChoice::Random {
            for v in &mut self.lfsr {
                *v = super::lfsr_next(*v);
            }
        }
    }

    /// Second half of a greedy clock edge: packets that crossed a link are appended to their
    /// head's queue in the order of `transfers`; outputs absorb them.
    pub(crate) fn commit_greedy_arrivals(&mut self, transfers: &[Transfer]) {
        let depth = self.params.depth;
        for t in transfers {
            let TransferKind::Crossed { ov } = t.kind else {
                continue;
            };
            if self.is_ejection_vc(t.to) {
                continue;
            }
            let head = self.topo.links[self.output_vc_parts(ov).0 as usize].head;
            let count = u32::from(self.occupancy[head as usize]);
            // The admission rule bounds a queue by switch_queue − 1 + in-degree, and the router
            // sizes `depth` for that. Were it too small, the packet would be lost here and the
            // router's conservation check (queued + delivered = loaded) would report it.
            debug_assert!(count < depth, "greedy queue overflow at switch {head}");
            self.queue[(head * depth + count.min(depth - 1)) as usize] = t.flit.msg;
            self.occupancy[head as usize] = (count + 1).min(depth) as u16;
            self.held += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkBandwidth;
    use crate::switch::SwitchParams;
    use crate::topology::dilated_butterfly;

    fn fabric(lane_choice: LaneChoice) -> Fabric {
        let params = SwitchParams {
            vcs: 1,
            depth: 8,
            flits: 1,
            mode: FlowControl::Greedy,
            bandwidth: LinkBandwidth::PerVc,
            backpressure: Default::default(),
            lane_choice,
            switch_queue: Some(5),
        };
        Fabric::new(dilated_butterfly(16, 2).unwrap(), params, 1).unwrap()
    }

    #[test]
    fn random_lane_choice_is_uniform_over_the_candidates() {
        let mut f = fabric(LaneChoice::Random);
        for (mask, lanes) in [(0b0011u32, [0, 1]), (0b1100, [2, 3])] {
            let mut seen = [0u32; 4];
            for v in 0..64u16 {
                f.lfsr[0] = v;
                seen[f.pick(0, 0, mask, 0) as usize] += 1;
            }
            assert_eq!((seen[lanes[0]], seen[lanes[1]]), (32, 32), "{mask:b}");
            // Two packets of one cycle take different candidates.
            assert_ne!(f.pick(0, 0, mask, 0), f.pick(0, 1, mask, 0));
        }
    }

    #[test]
    fn least_loaded_prefers_the_emptier_head() {
        let mut f = fabric(LaneChoice::LeastLoaded);
        let heads: Vec<u32> = (0..4).map(|k| f.topo.links[k].head).collect();
        f.occupancy[heads[0] as usize] = 3;
        // Lanes 0 and 1 of a dilated channel share the head: the lowest wins the tie.
        assert_eq!(f.pick(0, 0, 0b0011, 0), 0);
        f.occupancy[heads[2] as usize] = 1;
        assert_eq!(f.pick(0, 0, 0b1111, 0), 2);
        assert_eq!(fabric(LaneChoice::Lowest).pick(0, 0, 0b1100, 0), 2);
    }
}
