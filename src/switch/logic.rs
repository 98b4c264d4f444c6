//! Next-state logic of the butterfly-family switch (seed 000 §1.1, notes §1.2–1.3).
//!
//! Per cycle, a switch at level `l` below the last:
//! 1. An `ACTIVE` VC passes its front flit to the output VC its worm holds if that register is
//!    *ready*: not full, or its own front flit leaves this cycle (same-cycle reuse).
//! 2. `ROUTING` VCs (a header at the front) request the direction named by one address bit
//!    ([`Topology::route_bit`]). Per direction, requesters are served in round-robin order from
//!    the direction's pointer; the k-th requester gets the k-th *free* output VC, scanning lanes
//!    from the lowest (or from an LFSR-drawn lane) and VCs from the lowest. An output VC is free
//!    if no input VC holds it and its register can take a new worm: idle, or holding only the
//!    previous worm's tail, which leaves this cycle. A granted header crosses at once.
//! 3. A header that gets nothing waits (wormhole, store-and-forward) or is discarded (drop), and
//!    its VC then discards the rest of the worm as it arrives.
//! 4. With one flit per link per cycle, the VCs that would cross one link are cut to the first
//!    in the link's round-robin order; a granted header that loses still keeps its output VC.
//!
//! Store-and-forward: a header requests only once its whole packet is in the VC, and with a
//! per-switch bound A only output VCs into switches that held fewer than A packets at the end of
//! the previous cycle count as free. Last-level switches pass every front flit to the
//! destination each cycle.

use super::{DROP, Fabric, NO_GRANT, VcState};
use crate::config::{FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::FlitSlot;
use crate::topology::{NodeId, RouteField};

/// The routing fields a header carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub destination: u32,
    pub middle: u32,
}

/// What happened to a flit at a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferKind {
    /// Written into a level-0 injection VC by the source.
    Injected,
    /// Crossed link `ov / B` into the input VC `to`.
    Crossed { ov: u32 },
    /// Left a last-level register into the destination.
    Delivered,
    /// Discarded (drop mode).
    Discarded,
    /// Did not move: a header (front flit 0) that waited this cycle.
    Stalled,
}

/// One flit event of a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub flit: FlitSlot,
    /// Input VC the flit left (or, for `Stalled`, stayed in); `u32::MAX` for injections.
    pub from: u32,
    /// Input VC the flit enters, `u32::MAX` if none.
    pub to: u32,
    pub kind: TransferKind,
}

/// Marker for "no input VC".
pub const NONE: u32 = u32::MAX;
const NOT_REQUESTING: u8 = u8::MAX;
/// Most input VCs one switch can have: 2 · 8 lanes · 16 VCs.
const MAX_SWITCH_VCS: usize = 256;

impl Fabric {
    /// Register `d` can take a flit this cycle.
    #[inline]
    pub(crate) fn ready(&self, d: u32) -> bool {
        let d = d as usize;
        u32::from(self.count[d]) < self.params.depth || self.leaving[d]
    }

    /// Register `d` can take the header of a new worm this cycle.
    #[inline]
    pub(crate) fn accepts_new_worm(&self, d: u32) -> bool {
        let du = d as usize;
        if self.state[du] == VcState::Idle as u8 {
            return true;
        }
        self.count[du] == 1
            && self.leaving[du]
            && u32::from(self.fifo[du * self.params.depth as usize + self.front[du] as usize].seq)
                == self.params.flits - 1
    }

    /// Output VC `ov` of switch `s` can be allocated to a new worm this cycle.
    #[inline]
    fn free(&self, ov: u32, link_head: NodeId) -> bool {
        if self.alloc[ov as usize] != 0 || !self.accepts_new_worm(self.down[ov as usize]) {
            return false;
        }
        match self.params.switch_queue {
            Some(a) if self.topo.node(link_head).level < self.topo.last_level() => {
                u32::from(self.occupancy[link_head as usize]) < a
            }
            _ => true,
        }
    }

    /// Evaluates switch `s`: sets its VCs' `leaving` flags and header grants from registered
    /// state and the downstream `leaving` flags. Returns true if a `leaving` flag changed.
    pub fn evaluate_switch(&mut self, s: NodeId, headers: &[Header]) -> bool {
        let level = self.topo.node(s).level;
        let base = self.vc_base(s);
        let nv = self.vc_count(s);
        let mut leave = [false; MAX_SWITCH_VCS];
        if level == self.topo.last_level() {
            for j in 0..nv {
                leave[j as usize] = self.count[(base + j) as usize] > 0;
            }
            return self.set_leaving(base, &leave[..nv as usize]);
        }
        let p = self.params;
        let b = p.vcs;
        let m = self.topo.multiplicity;
        let (field, bit) = self.topo.route_bit(level);
        let shift = self.topo.log_n - 1 - bit;
        let mut request = [NOT_REQUESTING; MAX_SWITCH_VCS];
        for j in 0..nv {
            let i = (base + j) as usize;
            self.grant[i] = NO_GRANT;
            if self.count[i] == 0 {
                continue;
            }
            match VcState::from_u8(self.state[i]) {
                VcState::Active => leave[j as usize] = self.ready(self.down[self.out[i] as usize]),
                VcState::Dropping => leave[j as usize] = true,
                VcState::Routing => {
                    let whole =
                        p.mode != FlowControl::StoreForward || u32::from(self.count[i]) == p.flits;
                    if whole {
                        let h = headers[self.owner[i] as usize];
                        let addr = match field {
                            RouteField::Destination => h.destination,
                            RouteField::Middle => h.middle,
                        };
                        request[j as usize] = ((addr >> shift) & 1) as u8;
                    }
                }
                VcState::Idle => {}
            }
        }
        for dir in 0..2u8 {
            let first_lane = match p.lane_choice {
                LaneChoice::Lowest => 0,
                LaneChoice::Random => u32::from(self.lfsr[s as usize]) % m,
            };
            let (mut lane_k, mut vc) = (0u32, 0u32);
            let start = u32::from(self.rr[s as usize * 2 + dir as usize]);
            let mut last_granted = None;
            for k in 0..nv {
                let j = (start + k) % nv;
                if request[j as usize] != dir {
                    continue;
                }
                let mut granted = None;
                while lane_k < m {
                    let link = self.topo.out_link(s, dir, (first_lane + lane_k) % m);
                    let ov = link * b + vc;
                    vc += 1;
                    if vc == b {
                        vc = 0;
                        lane_k += 1;
                    }
                    if self.free(ov, self.topo.links[link as usize].head) {
                        granted = Some(ov);
                        break;
                    }
                }
                let i = (base + j) as usize;
                match granted {
                    Some(ov) => {
                        self.grant[i] = ov;
                        leave[j as usize] = true;
                        last_granted = Some(j);
                    }
                    None if p.mode == FlowControl::Drop => {
                        self.grant[i] = DROP;
                        leave[j as usize] = true;
                    }
                    None => {}
                }
            }
            self.rr_next[s as usize * 2 + dir as usize] = match last_granted {
                Some(j) => ((j + 1) % nv) as u16,
                None => start as u16,
            };
        }
        if p.bandwidth == LinkBandwidth::One {
            self.arbitrate_links(s, base, nv, &mut leave);
        }
        self.set_leaving(base, &leave[..nv as usize])
    }

    /// One flit per link per cycle: of the VCs about to cross each out link of `s`, only the
    /// first in the link's round-robin order does.
    fn arbitrate_links(&mut self, s: NodeId, base: u32, nv: u32, leave: &mut [bool]) {
        let b = self.params.vcs;
        let links = 2 * self.topo.multiplicity;
        for l in s * links..(s + 1) * links {
            let start = u32::from(self.link_rr[l as usize]);
            let mut winner = None;
            for k in 0..nv {
                let j = (start + k) % nv;
                let i = (base + j) as usize;
                if !leave[j as usize] {
                    continue;
                }
                let target = match VcState::from_u8(self.state[i]) {
                    VcState::Active => self.out[i],
                    VcState::Routing if self.grant[i] < DROP => self.grant[i],
                    _ => continue,
                };
                if target / b != l {
                    continue;
                }
                if winner.is_none() {
                    winner = Some(j);
                } else {
                    leave[j as usize] = false;
                }
            }
            self.link_rr_next[l as usize] = match winner {
                Some(j) => ((j + 1) % nv) as u16,
                None => start as u16,
            };
        }
    }

    fn set_leaving(&mut self, base: u32, leave: &[bool]) -> bool {
        let slots = &mut self.leaving[base as usize..base as usize + leave.len()];
        let changed = slots != leave;
        slots.copy_from_slice(leave);
        changed
    }

    /// First half of the clock edge: every leaving front flit is popped and described in
    /// `transfers`; allocations, tails and drops update the VC state. Waiting headers are
    /// reported as `Stalled`. Clears the cycle's combinational signals.
    pub fn commit_departures(&mut self, transfers: &mut Vec<Transfer>) {
        let depth = self.params.depth as usize;
        let tail = (self.params.flits - 1) as u16;
        let last_base = self.vc_base(self.topo.node_id(self.topo.last_level(), 0)) as usize;
        for i in 0..self.count.len() {
            let g = self.grant[i];
            if g < DROP {
                self.out[i] = g;
                self.alloc[g as usize] = i as u32 + 1;
                self.state[i] = VcState::Active as u8;
            }
            if self.count[i] == 0 {
                continue;
            }
            let front = i * depth + self.front[i] as usize;
            let flit = self.fifo[front];
            if !self.leaving[i] {
                if flit.seq == 0 {
                    transfers.push(Transfer {
                        flit,
                        from: i as u32,
                        to: NONE,
                        kind: TransferKind::Stalled,
                    });
                }
                continue;
            }
            self.leaving[i] = false;
            self.front[i] = ((self.front[i] as usize + 1) % depth) as u8;
            self.count[i] -= 1;
            let (to, kind) = if i >= last_base {
                (NONE, TransferKind::Delivered)
            } else if g == DROP || self.state[i] == VcState::Dropping as u8 {
                self.state[i] = VcState::Dropping as u8;
                (NONE, TransferKind::Discarded)
            } else {
                let ov = self.out[i];
                if flit.seq == tail {
                    self.alloc[ov as usize] = 0;
                }
                (self.down[ov as usize], TransferKind::Crossed { ov })
            };
            if flit.seq == tail {
                self.state[i] = VcState::Idle as u8;
                self.out[i] = NO_GRANT;
                if self.params.switch_queue.is_some() {
                    let (sw, _) = self.vc_switch(i as u32);
                    self.occupancy[sw as usize] -= 1;
                }
            }
            transfers.push(Transfer {
                flit,
                from: i as u32,
                to,
                kind,
            });
        }
        for g in &mut self.grant {
            *g = NO_GRANT;
        }
        std::mem::swap(&mut self.rr, &mut self.rr_next);
        self.rr_next.copy_from_slice(&self.rr);
        if self.params.bandwidth == LinkBandwidth::One {
            std::mem::swap(&mut self.link_rr, &mut self.link_rr_next);
            self.link_rr_next.copy_from_slice(&self.link_rr);
        }
        if self.params.lane_choice == LaneChoice::Random {
            for v in &mut self.lfsr {
                *v = super::lfsr_next(*v);
            }
        }
    }

    /// Second half of the clock edge: every flit that crossed a link or was injected is written
    /// into its register; a header makes its VC `ROUTING` (or, at the last level, `ACTIVE`:
    /// ejecting) and names its owner.
    pub fn commit_arrivals(&mut self, transfers: &[Transfer]) {
        let depth = self.params.depth as usize;
        let last_base = self.vc_base(self.topo.node_id(self.topo.last_level(), 0)) as usize;
        for t in transfers {
            if t.to == NONE {
                continue;
            }
            let d = t.to as usize;
            let pos = (self.front[d] as usize + self.count[d] as usize) % depth;
            self.fifo[d * depth + pos] = t.flit;
            self.count[d] += 1;
            if t.flit.seq == 0 {
                self.owner[d] = t.flit.msg;
                self.state[d] = if d >= last_base {
                    VcState::Active
                } else {
                    VcState::Routing
                } as u8;
                if self.params.switch_queue.is_some() {
                    let (sw, _) = self.vc_switch(d as u32);
                    self.occupancy[sw as usize] += 1;
                }
            }
        }
    }
}
