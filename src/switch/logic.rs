//! Next-state logic of the butterfly-family switch ([CMS] §1.1).
//!
//! Per cycle, a switch at level `l` below the last:
//! 1. An `ACTIVE` VC passes its front flit to the output VC its worm holds if that register is
//!    *ready*: not full, or its own front flit leaves this cycle (same-cycle reuse).
//! 2. `ROUTING` VCs (a header at the front) request the direction named by one address bit
//!    ([`crate::topology::Topology::route_bit`]). Per direction, requesters are served in
//!    round-robin order from the direction's pointer; the k-th requester gets the k-th *free*
//!    output VC in the order (VC 0 of every lane, then VC 1 of every lane, ...), lanes scanned
//!    from the lowest (or from an LFSR-drawn lane): the lowest-index edge with the fewest busy
//!    VCs, so worms spread over the d wires of a channel before they share one. An output VC is
//!    free if no input VC holds it and its register can take a new worm: idle, or holding only
//!    the previous worm's tail, which leaves this cycle. A granted header crosses at once; the
//!    pointer moves past the last requester served.
//! 3. A header that gets nothing waits (wormhole, store-and-forward) or is discarded (drop), and
//!    its VC then discards the rest of the worm as it arrives.
//! 4. With one flit per link per cycle, the VCs that would cross one link are cut to the first
//!    in the link's round-robin order; a granted header that loses still keeps its output VC.
//!
//! With [`Backpressure::Combinational`] (the default) the `ready` signals of rule 1 run
//! combinationally from the last level back to the sources in one cycle (as `ready` wires in
//! RTL): the netlist is acyclic, its critical path grows with the number of levels, and
//! same-cycle reuse of a VC (needed for [CMS]'s L-spaced sub-rounds) depends on it. With
//! [`Backpressure::Registered`] a switch reads only registered state of the VCs it feeds (room
//! after the last edge, idle after the last edge), so every switch evaluates independently.
//!
//! Store-and-forward: a header requests only once its whole packet is in the VC, and with a
//! per-switch bound A only output VCs into switches that held fewer than A packets at the end of
//! the previous cycle count as free. Last-level switches pass every front flit to the
//! destination each cycle. Faulty switches pass nothing.

use super::{DROP, FAULTY, Fabric, LEAVING, NO_GRANT, VcState};
use crate::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::FlitSlot;
use crate::topology::{NodeId, RouteField};

/// The fields a header carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub destination: u32,
    pub middle: u32,
    /// The id field before truncation: `k · n + source` for the `k`-th message (in release
    /// order) of its source, the number a hardware source gives its messages without knowing
    /// any other source's.
    pub id: u32,
}

/// The headers of the messages in flight, by message id: a plain slice, or a ring whose
/// length is a power of two, indexed by `id & mask` (the simulator frees finished messages).
#[derive(Clone, Copy, Debug)]
pub struct Headers<'a> {
    ring: &'a [Header],
    mask: u32,
}

impl<'a> Headers<'a> {
    /// `all[id]` for every id.
    pub fn all(all: &'a [Header]) -> Self {
        Headers {
            ring: all,
            mask: u32::MAX,
        }
    }

    /// `ring[id & mask]`; `ring.len()` must be `mask + 1`.
    pub fn ring(ring: &'a [Header], mask: u32) -> Self {
        debug_assert_eq!(ring.len() as u64, u64::from(mask) + 1);
        Headers { ring, mask }
    }

    /// The header of message `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Header {
        self.ring[(id & self.mask) as usize]
    }
}

/// What happened to a flit at a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferKind {
    /// Written into a level-0 injection VC by the source.
    Injected,
    /// Crossed output VC `ov` into the input VC `to`.
    Crossed { ov: u32 },
    /// Left a last-level register into the destination.
    Delivered,
    /// Discarded (drop mode).
    Discarded,
    /// Did not move: a header (flit 0) at the front of its VC that waited this cycle for an
    /// output VC or a link (a store-and-forward header still waiting for its own packet to
    /// arrive is not counted).
    Stalled,
}

/// One flit event of a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub flit: FlitSlot,
    /// Input VC the flit left (or, for `Stalled`, stayed in); [`NONE`] for injections.
    pub from: u32,
    /// Input VC the flit enters, [`NONE`] if none.
    pub to: u32,
    pub kind: TransferKind,
}

/// Marker for "no input VC".
pub const NONE: u32 = u32::MAX;
/// Most input VCs one switch can have: 2 directions · 8 lanes · 16 VCs.
const MAX_SWITCH_VCS: usize = 256;
const WORDS: usize = MAX_SWITCH_VCS / 64;

/// A set of a switch's input VCs.
#[derive(Clone, Copy, Default)]
struct VcSet([u64; WORDS]);

impl VcSet {
    #[inline]
    fn insert(&mut self, j: usize) {
        self.0[j >> 6] |= 1 << (j & 63);
    }
    #[inline]
    fn remove(&mut self, j: usize) {
        self.0[j >> 6] &= !(1 << (j & 63));
    }
    #[inline]
    fn contains(&self, j: usize) -> bool {
        self.0[j >> 6] >> (j & 63) & 1 != 0
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

/// `j + 1` wrapped to `0..n`.
#[inline]
fn next(j: usize, n: usize) -> usize {
    if j + 1 == n { 0 } else { j + 1 }
}

impl Fabric {
    /// Register `d` can take a flit this cycle: it has room, or (combinational back-pressure)
    /// its front flit leaves in this cycle.
    #[inline]
    pub(crate) fn ready(&self, d: u32) -> bool {
        let vc = &self.vcs[d as usize];
        u32::from(vc.count) < self.params.depth
            || (self.params.backpressure == Backpressure::Combinational && vc.leaving())
    }

    /// Register `d` can take the header of a new worm this cycle: it is idle, or
    /// (combinational back-pressure) it holds only its worm's tail, which leaves in this cycle.
    #[inline]
    pub(crate) fn accepts_new_worm(&self, d: u32) -> bool {
        let vc = &self.vcs[d as usize];
        if vc.state == VcState::Idle as u8 {
            return true;
        }
        self.params.backpressure == Backpressure::Combinational
            && vc.count == 1
            && vc.leaving()
            && u32::from(self.fifo[d as usize * self.params.depth as usize + vc.front as usize].seq)
                == self.params.flits - 1
    }

    /// Output VC `ov` can be allocated to a new worm this cycle.
    #[inline]
    fn free(&self, ov: u32) -> bool {
        let d = self.down[ov as usize];
        if self.alloc[ov as usize] != 0
            || self.vcs[d as usize].flags & FAULTY != 0
            || !self.accepts_new_worm(d)
        {
            return false;
        }
        match self.params.switch_queue {
            Some(a) if !self.is_ejection_vc(d) => {
                let (head, _) = self.vc_switch(d);
                u32::from(self.occupancy[head as usize]) < a
            }
            _ => true,
        }
    }

    /// Evaluates switch `s`: sets its VCs' `LEAVING` flags and header grants from registered
    /// state and the downstream `LEAVING` flags. Returns true if a `LEAVING` flag changed.
    pub fn evaluate_switch(&mut self, s: NodeId, headers: Headers<'_>) -> bool {
        if self.params.mode == FlowControl::Greedy {
            self.evaluate_greedy(s, headers);
            return false;
        }
        if self.switch_flits[s as usize] == 0 {
            // Idle: no flit, no grant, no LEAVING flag (the last edge cleared them).
            return false;
        }
        let base = self.vc_base(s) as usize;
        let nv = self.vc_count(s) as usize;
        let mut leave = VcSet::default();
        if self.vcs[base].flags & FAULTY != 0 {
            return self.set_leaving(base, nv, &leave);
        }
        if base >= self.last_base as usize {
            for j in 0..nv {
                if self.vcs[base + j].count > 0 {
                    leave.insert(j);
                }
            }
            return self.set_leaving(base, nv, &leave);
        }
        let p = self.params;
        let (field, shift) = self.route[(s >> self.topo.log_n) as usize];
        let mut request = [VcSet::default(); 2];
        for j in 0..nv {
            let i = base + j;
            self.vcs[i].grant = NO_GRANT;
            let vc = self.vcs[i];
            if vc.count == 0 {
                continue;
            }
            let whole_packet =
                p.mode != FlowControl::StoreForward || u32::from(vc.count) == p.flits;
            match VcState::from_u8(vc.state) {
                VcState::Active if self.ready(self.down[vc.out as usize]) => leave.insert(j),
                VcState::Dropping => leave.insert(j),
                VcState::Routing if whole_packet => {
                    let h = headers.get(vc.owner);
                    let addr = match field {
                        RouteField::Destination => h.destination,
                        RouteField::Middle => h.middle,
                    };
                    request[((addr >> shift) & 1) as usize].insert(j);
                }
                _ => {}
            }
        }
        for dir in 0..2u8 {
            if request[dir as usize].is_empty() {
                continue;
            }
            self.allocate(s, dir, base, nv, &request[dir as usize], &mut leave);
        }
        if p.bandwidth == LinkBandwidth::One {
            self.arbitrate_links(s, base, nv, &mut leave);
        }
        self.set_leaving(base, nv, &leave)
    }

    /// VC allocation for direction `dir` of switch `s` (rule 2 and 3 of the module doc).
    fn allocate(
        &mut self,
        s: NodeId,
        dir: u8,
        base: usize,
        nv: usize,
        request: &VcSet,
        leave: &mut VcSet,
    ) {
        let p = self.params;
        let m = self.topo.multiplicity;
        let first_lane = match p.lane_choice {
            LaneChoice::Lowest | LaneChoice::LeastLoaded => 0,
            LaneChoice::Random => u32::from(self.lfsr[s as usize]) % m,
        };
        let (mut lane_k, mut vc) = (0u32, 0u32);
        let slot = s as usize * 2 + dir as usize;
        let start = usize::from(self.rr[slot]);
        let mut last_granted = None;
        let mut j = start;
        for _ in 0..nv {
            if request.contains(j) {
                let mut granted = None;
                while vc < p.vcs {
                    let lane = if first_lane + lane_k >= m {
                        first_lane + lane_k - m
                    } else {
                        first_lane + lane_k
                    };
                    let ov = self.output_vc(self.topo.out_link(s, dir, lane), vc);
                    lane_k += 1;
                    if lane_k == m {
                        lane_k = 0;
                        vc += 1;
                    }
                    if self.free(ov) {
                        granted = Some(ov);
                        break;
                    }
                }
                match granted {
                    Some(ov) => {
                        self.vcs[base + j].grant = ov;
                        leave.insert(j);
                        last_granted = Some(j);
                    }
                    None if p.mode == FlowControl::Drop => {
                        self.vcs[base + j].grant = DROP;
                        leave.insert(j);
                    }
                    None => {}
                }
            }
            j = next(j, nv);
        }
        // Written on every evaluation: a later sweep of the same cycle may grant differently.
        self.rr_next[slot] = last_granted.map_or(start, |j| next(j, nv)) as u16;
        self.rr_dirty.push(slot as u32);
    }

    /// One flit per link per cycle: of the VCs about to cross each out link of `s`, only the
    /// first in the link's round-robin order does.
    fn arbitrate_links(&mut self, s: NodeId, base: usize, nv: usize, leave: &mut VcSet) {
        let links = 2 * self.topo.multiplicity;
        for l in s * links..(s + 1) * links {
            let start = usize::from(self.link_rr[l as usize]);
            let mut winner = None;
            let mut j = start;
            for _ in 0..nv {
                let vc = self.vcs[base + j];
                let target = match vc.state {
                    st if st == VcState::Active as u8 => vc.out,
                    st if st == VcState::Routing as u8 && vc.grant < DROP => vc.grant,
                    _ => NO_GRANT,
                };
                if leave.contains(j) && target != NO_GRANT && self.output_vc_parts(target).0 == l {
                    if winner.is_none() {
                        winner = Some(j);
                    } else {
                        leave.remove(j);
                    }
                }
                j = next(j, nv);
            }
            self.link_rr_next[l as usize] = winner.map_or(start, |j| next(j, nv)) as u16;
            self.link_rr_dirty.push(l);
        }
    }

    fn set_leaving(&mut self, base: usize, nv: usize, leave: &VcSet) -> bool {
        let mut changed = false;
        for (j, vc) in self.vcs[base..base + nv].iter_mut().enumerate() {
            let flags = if leave.contains(j) {
                vc.flags | LEAVING
            } else {
                vc.flags & !LEAVING
            };
            changed |= flags != vc.flags;
            vc.flags = flags;
        }
        changed
    }

    /// First half of the clock edge: every leaving front flit is popped and described in
    /// `transfers`; allocations, tails and drops update the VC state; waiting headers are
    /// reported as `Stalled`; arbitration pointers and LFSRs advance. Clears the cycle's
    /// combinational signals.
    pub fn commit_departures(&mut self, transfers: &mut Vec<Transfer>) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_departures(transfers);
        }
        for s in 0..self.switch_flits.len() {
            if self.switch_flits[s] != 0 {
                let base = self.vc_base(s as u32) as usize;
                let nv = self.vc_count(s as u32) as usize;
                self.depart(s, base..base + nv, transfers);
            }
        }
        for slot in self.rr_dirty.drain(..) {
            self.rr[slot as usize] = self.rr_next[slot as usize];
        }
        for l in self.link_rr_dirty.drain(..) {
            self.link_rr[l as usize] = self.link_rr_next[l as usize];
        }
        if self.params.lane_choice == LaneChoice::Random {
            for v in &mut self.lfsr {
                *v = super::lfsr_next(*v);
            }
        }
    }

    /// The first half of the clock edge for switch `s`, whose input VCs are `vcs`.
    #[inline]
    fn depart(&mut self, s: usize, vcs: std::ops::Range<usize>, transfers: &mut Vec<Transfer>) {
        let depth = self.params.depth as usize;
        let tail = (self.params.flits - 1) as u16;
        let last_base = self.last_base as usize;
        let shared_queue = self.params.switch_queue.is_some();
        let store_forward = self.params.mode == FlowControl::StoreForward;
        for i in vcs {
            let mut vc = self.vcs[i];
            if vc.count == 0 {
                continue;
            }
            let g = vc.grant;
            vc.grant = NO_GRANT;
            if g < DROP {
                vc.out = g;
                vc.state = VcState::Active as u8;
                self.alloc[g as usize] = i as u32 + 1;
            }
            let flit = self.fifo[i * depth + vc.front as usize];
            if !vc.leaving() {
                self.vcs[i] = vc;
                let assembling = store_forward
                    && vc.state == VcState::Routing as u8
                    && u32::from(vc.count) < self.params.flits;
                if flit.seq == 0 && !assembling {
                    transfers.push(Transfer {
                        flit,
                        from: i as u32,
                        to: NONE,
                        kind: TransferKind::Stalled,
                    });
                }
                continue;
            }
            vc.flags &= !LEAVING;
            vc.front = if vc.front as usize + 1 == depth {
                0
            } else {
                vc.front + 1
            };
            vc.count -= 1;
            self.held -= 1;
            self.switch_flits[s] -= 1;
            let (to, kind) = if i >= last_base {
                (NONE, TransferKind::Delivered)
            } else if g == DROP || vc.state == VcState::Dropping as u8 {
                vc.state = VcState::Dropping as u8;
                (NONE, TransferKind::Discarded)
            } else {
                if flit.seq == tail {
                    self.alloc[vc.out as usize] = 0;
                }
                (
                    self.down[vc.out as usize],
                    TransferKind::Crossed { ov: vc.out },
                )
            };
            if flit.seq == tail {
                vc.state = VcState::Idle as u8;
                vc.out = NO_GRANT;
                if shared_queue {
                    self.occupancy[s] -= 1;
                }
            }
            self.vcs[i] = vc;
            transfers.push(Transfer {
                flit,
                from: i as u32,
                to,
                kind,
            });
        }
    }

    /// Second half of the clock edge: every flit that crossed a link or was injected is written
    /// into its register; a header makes its VC `ROUTING` (or, at the last level, `ACTIVE`:
    /// ejecting) and names its owner.
    pub fn commit_arrivals(&mut self, transfers: &[Transfer]) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_arrivals(transfers);
        }
        let depth = self.params.depth as usize;
        for t in transfers {
            if t.to == NONE {
                continue;
            }
            let d = t.to as usize;
            let vc = &mut self.vcs[d];
            let mut pos = vc.front as usize + vc.count as usize;
            if pos >= depth {
                pos -= depth;
            }
            self.fifo[d * depth + pos] = t.flit;
            vc.count += 1;
            self.held += 1;
            let sw = self.vc_node[d] as usize;
            self.switch_flits[sw] += 1;
            if t.flit.seq == 0 {
                vc.owner = t.flit.msg;
                vc.state = if t.to >= self.last_base {
                    VcState::Active
                } else {
                    VcState::Routing
                } as u8;
                if self.params.switch_queue.is_some() {
                    self.occupancy[sw] += 1;
                }
            }
        }
    }
}
