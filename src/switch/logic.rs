//! Next-state logic of the butterfly-family switch ([CMS] §1.1).
//!
//! Per cycle, a switch at level `l` below the last:
//! 1. An `ACTIVE` VC passes its front flit to the output VC its worm holds if that register is
//!    *ready*: not full, or its own front flit leaves this cycle (same-cycle reuse).
//! 2. `ROUTING` VCs (a header at the front) request the direction named by one address digit
//!    ([`crate::topology::Topology::route_digit`]). Per direction, requesters are served in
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
//!
//! A switch's evaluation writes only its own VCs' grants and `LEAVING` flags and its pointers'
//! proposals, and reads registered state and the next level's flags: it works on a view of
//! those (`Part`), so the switches of one level evaluate in parallel runs
//! ([`Fabric::evaluate_level`]) with the result of one sweep. The clock edge is [`super::edge`].

use super::{
    DROP, EJECT, FAULTY, Fabric, Headers, LEAVING, NO_GRANT, Shape, SwitchParams, Vc, VcState,
    copy_pointers,
};
use crate::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::FlitSlot;
use crate::gang::Gang;
use crate::topology::{MAX_RADIX, NodeId, Topology};

mod columns;
mod runs;
mod vc_set;

use vc_set::VcSet;

pub(crate) use columns::ColumnPlan;

/// Most input VCs one switch can have: 2 directions · 8 lanes · 16 VCs, or 16 directions ·
/// 16 VCs (radix 16).
const MAX_SWITCH_VCS: usize = 256;
const WORDS: usize = MAX_SWITCH_VCS / 64;

/// `j + 1` wrapped to `0..n`.
#[inline]
fn next(j: usize, n: usize) -> usize {
    if j + 1 == n { 0 } else { j + 1 }
}

/// Register `vc` can take a flit this cycle: it has room, or (combinational back-pressure)
/// its front flit leaves in this cycle.
#[inline]
fn ready(p: &SwitchParams, vc: &Vc) -> bool {
    u32::from(vc.count) < p.depth || (p.backpressure == Backpressure::Combinational && vc.leaving())
}

/// Register `vc` (input VC `d`, FIFO `fifo`) can take the header of a new worm this cycle: it
/// is idle, or (combinational back-pressure) it holds only its worm's tail, which leaves in
/// this cycle.
#[inline]
fn accepts_new_worm(p: &SwitchParams, fifo: &[FlitSlot], d: u32, vc: &Vc) -> bool {
    if vc.state == VcState::Idle as u8 {
        return true;
    }
    p.backpressure == Backpressure::Combinational
        && vc.count == 1
        && vc.leaving()
        && u32::from(fifo[d as usize * p.depth as usize + vc.front as usize].seq) == p.flits - 1
}

impl Fabric {
    /// Register `d` can take a flit this cycle: it has room, or (combinational back-pressure)
    /// its front flit leaves in this cycle.
    #[inline]
    pub(crate) fn ready(&self, d: u32) -> bool {
        ready(&self.params, &self.vcs[d as usize])
    }

    /// Register `d` can take the header of a new worm this cycle: it is idle, or
    /// (combinational back-pressure) it holds only its worm's tail, which leaves in this cycle.
    #[inline]
    pub(crate) fn accepts_new_worm(&self, d: u32) -> bool {
        accepts_new_worm(&self.params, &self.fifo, d, &self.vcs[d as usize])
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
        let own_end = self.vc_base(s) as usize + self.vc_count(s) as usize;
        let (shared, mut part) = self.split(s..s + 1, own_end);
        part.evaluate(&shared, s)
    }

    /// Evaluates every switch of `level` (all of whose downstream switches are evaluated),
    /// split into one run of consecutive switches per thread of `gang` if there is one: each
    /// switch reads only registered state and the next level's `LEAVING` flags, so the result
    /// is the one switch-by-switch evaluation gives, whatever the split.
    pub fn evaluate_level(&mut self, level: u32, gang: Option<&mut Gang>) {
        match gang.filter(|g| g.threads() > 1) {
            Some(gang) => {
                let threads = gang.threads();
                self.evaluate_level_then(level, gang, vec![(); threads], |_, ()| ());
            }
            None => {
                let switches = self.level_switches(level);
                let (shared, mut part) = self.level_part(level);
                part.evaluate_range(&shared, switches);
            }
        }
    }

    /// The view an evaluation of every switch of `level` needs ([`Fabric::split`]).
    #[inline(always)]
    fn level_part(&mut self, level: u32) -> (Shared<'_>, Part<'_>) {
        debug_assert_ne!(self.params.mode, FlowControl::Greedy);
        let switches = self.level_switches(level);
        let cyclic = self.topo.graph.as_ref().is_some_and(|g| g.cyclic);
        let below = if cyclic {
            // Every switch feeds any other: they read the registers as the last edge left
            // them (registered back-pressure reads nothing else).
            self.prev.clone_from(&self.vcs);
            self.vcs.len()
        } else if level + 1 < self.topo.levels {
            self.vc_base(switches.end) as usize
        } else {
            self.vcs.len()
        };
        self.split(switches, below)
    }

    /// The switches of evaluation level `level`.
    pub fn level_switches(&self, level: u32) -> std::ops::Range<u32> {
        self.topo.node_id(level, 0)..self.topo.node_id(level + 1, 0)
    }

    /// The view an evaluation of `switches` needs: their VCs and pointer proposals mutable,
    /// the VCs from `below` on (those the switches feed) and every other array read-only. On
    /// a cyclic network the VCs the switches feed are read from the copy `prev`.
    fn split(&mut self, switches: std::ops::Range<u32>, below: usize) -> (Shared<'_>, Part<'_>) {
        let own = self.vc_base(switches.start) as usize..self.vc_base_end(switches.end - 1);
        let clamp = |l: u32| (l as usize).min(self.link_rr.len());
        let link_lo = clamp(self.shape.links(switches.start).start);
        let link_hi = clamp(self.shape.links(switches.end - 1).end);
        let rr =
            self.shape.pointers(switches.start).start..self.shape.pointers(switches.end - 1).end;
        let cyclic = self.topo.graph.as_ref().is_some_and(|g| g.cyclic);
        let (shared, vcs, prev, rr_next, link_rr_next) = self.views();
        let (lower, upper) = vcs.split_at_mut(below);
        let (below_start, below_vcs) = if cyclic { (0, prev) } else { (below, &*upper) };
        let part = Part {
            own_start: own.start,
            own_end: own.end,
            own: &mut lower[own],
            cyclic,
            below_start,
            below: below_vcs,
            rr_start: rr.start,
            rr_next: &mut rr_next[rr],
            link_start: link_lo,
            link_rr_next: &mut link_rr_next[link_lo..link_hi],
        };
        (shared, part)
    }

    /// What an evaluation reads, and the registers it writes: the input VCs (with a cyclic
    /// network's copy `prev`) and the pointer proposals.
    #[allow(clippy::type_complexity)]
    fn views(&mut self) -> (Shared<'_>, &mut [Vc], &[Vc], &mut [u16], &mut [u16]) {
        let shared = Shared {
            p: self.params,
            topo: &self.topo,
            shape: &self.shape,
            vc_shift: self.vc_shift,
            down: &self.down,
            fifo: &self.fifo,
            alloc: &self.alloc,
            rr: &self.rr,
            link_rr: &self.link_rr,
            lfsr: &self.lfsr,
            occupancy: &self.occupancy,
            switch_flits: &self.switch_flits,
            last_base: self.last_base as usize,
        };
        (
            shared,
            &mut self.vcs,
            &self.prev,
            &mut self.rr_next,
            &mut self.link_rr_next,
        )
    }

    /// One past the last input VC of switch `s`.
    fn vc_base_end(&self, s: NodeId) -> usize {
        self.vc_base(s) as usize + self.vc_count(s) as usize
    }
}

/// What an evaluation reads and never writes.
struct Shared<'a> {
    p: SwitchParams,
    topo: &'a Topology,
    shape: &'a Shape,
    vc_shift: u32,
    down: &'a [u32],
    fifo: &'a [FlitSlot],
    alloc: &'a [u32],
    rr: &'a [u16],
    link_rr: &'a [u16],
    lfsr: &'a [u16],
    occupancy: &'a [u16],
    switch_flits: &'a [u32],
    last_base: usize,
}

impl Shared<'_> {
    /// Switch of input VC `ivc` (an ejection VC's never matters here).
    fn head_switch(&self, ivc: u32) -> NodeId {
        self.shape.switch_of(ivc).0
    }

    fn vc_base(&self, s: NodeId) -> usize {
        self.shape.base(s) as usize
    }

    fn vc_count(&self, s: NodeId) -> usize {
        self.shape.count(s) as usize
    }
}

/// What evaluating a run of consecutive switches writes: their input VCs' grants and
/// `LEAVING` flags (`own`, VCs from `own_start`) and their pointers' proposed values. The VCs
/// they feed (`below`, from `below_start`: the next level, at higher indices) are read-only.
struct Part<'a> {
    own: &'a mut [Vc],
    own_start: usize,
    own_end: usize,
    /// Whether `below` is a copy of every VC (a cyclic network), not the ones above `own`.
    cyclic: bool,
    below: &'a [Vc],
    below_start: usize,
    rr_next: &'a mut [u16],
    rr_start: usize,
    link_rr_next: &'a mut [u16],
    link_start: usize,
}

impl Part<'_> {
    /// Input VC `i`: one of this part's, or one it feeds.
    #[inline]
    fn vc(&self, i: usize) -> &Vc {
        if self.cyclic {
            if (self.own_start..self.own_end).contains(&i) {
                &self.own[i - self.own_start]
            } else {
                &self.below[i]
            }
        } else if i >= self.below_start {
            &self.below[i - self.below_start]
        } else {
            &self.own[i - self.own_start]
        }
    }

    /// Evaluates those of `switches` (all of this part's) that hold a flit.
    fn evaluate_range(&mut self, sh: &Shared<'_>, switches: std::ops::Range<u32>) {
        let (mut at, end) = (switches.start as usize, switches.end as usize);
        while at < end {
            let next = (at + 64).min(end);
            let mut occupied = super::occupied_mask(&sh.switch_flits[at..next]);
            while occupied != 0 {
                let s = at + occupied.trailing_zeros() as usize;
                occupied &= occupied - 1;
                self.evaluate(sh, s as NodeId);
            }
            at = next;
        }
    }

    /// The parts of the switches before `mid` and from `mid` on.
    fn split_at(self, sh: &Shared<'_>, mid: NodeId) -> (Self, Self) {
        let vc_mid = sh.vc_base(mid) - self.own_start;
        let rr_mid = sh.shape.pointers(mid).start - self.rr_start;
        let link_mid = (sh.shape.links(mid).start as usize)
            .clamp(self.link_start, self.link_start + self.link_rr_next.len())
            - self.link_start;
        let (own_l, own_r) = self.own.split_at_mut(vc_mid);
        let (rr_l, rr_r) = self.rr_next.split_at_mut(rr_mid);
        let (link_l, link_r) = self.link_rr_next.split_at_mut(link_mid);
        (
            Part {
                own: own_l,
                own_start: self.own_start,
                own_end: self.own_start + vc_mid,
                cyclic: self.cyclic,
                below: self.below,
                below_start: self.below_start,
                rr_next: rr_l,
                rr_start: self.rr_start,
                link_rr_next: link_l,
                link_start: self.link_start,
            },
            Part {
                own: own_r,
                own_start: self.own_start + vc_mid,
                own_end: self.own_end,
                cyclic: self.cyclic,
                below: self.below,
                below_start: self.below_start,
                rr_next: rr_r,
                rr_start: self.rr_start + rr_mid,
                link_rr_next: link_r,
                link_start: self.link_start + link_mid,
            },
        )
    }

    /// Output VC `ov` can be allocated to a new worm this cycle.
    #[inline]
    fn free(&self, sh: &Shared<'_>, ov: u32) -> bool {
        let d = sh.down[ov as usize];
        let vc = self.vc(d as usize);
        if sh.alloc[ov as usize] != 0
            || vc.flags & FAULTY != 0
            || !accepts_new_worm(&sh.p, sh.fifo, d, vc)
        {
            return false;
        }
        match sh.p.switch_queue {
            Some(a) if (d as usize) < sh.last_base => {
                u32::from(sh.occupancy[sh.head_switch(d) as usize]) < a
            }
            _ => true,
        }
    }

    /// Evaluates switch `s` (one of this part's, holding a flit): sets its VCs' `LEAVING`
    /// flags and header grants and proposes its pointers. Returns true if a `LEAVING` flag
    /// changed.
    fn evaluate(&mut self, sh: &Shared<'_>, s: NodeId) -> bool {
        if sh.vc_count(s) <= 64 {
            self.evaluate_in::<1>(sh, s)
        } else {
            self.evaluate_in::<WORDS>(sh, s)
        }
    }

    /// [`Part::evaluate`] with VC sets of `W` words.
    fn evaluate_in<const W: usize>(&mut self, sh: &Shared<'_>, s: NodeId) -> bool {
        let base = sh.vc_base(s);
        let nv = sh.vc_count(s);
        // Pointers keep their value unless an arbitration moves them (the clock edge copies
        // the proposal of every switch holding a flit).
        let pointers = sh.shape.pointers(s);
        copy_pointers(
            &mut self.rr_next[pointers.start - self.rr_start..pointers.end - self.rr_start],
            &sh.rr[pointers.clone()],
        );
        let mut leave = VcSet::<W>::default();
        if self.vc(base).flags & FAULTY != 0 {
            return self.set_leaving(base, nv, &leave);
        }
        if base >= sh.last_base {
            for j in 0..nv {
                leave.insert_if(j, self.vc(base + j).count > 0);
            }
            return self.set_leaving(base, nv, &leave);
        }
        let p = sh.p;
        if p.bandwidth == LinkBandwidth::One {
            let l = sh.shape.links(s);
            let l = l.start as usize..l.end as usize;
            copy_pointers(
                &mut self.link_rr_next[l.start - self.link_start..l.end - self.link_start],
                &sh.link_rr[l],
            );
        }
        // One request set per direction, sized for the radix (the sets are cleared per switch).
        match pointers.len() {
            0..=2 => self.route_and_allocate::<2, W>(sh, s, base, nv, &mut leave),
            3..=4 => self.route_and_allocate::<4, W>(sh, s, base, nv, &mut leave),
            5..=8 => self.route_and_allocate::<8, W>(sh, s, base, nv, &mut leave),
            _ => self.route_and_allocate::<{ MAX_RADIX as usize }, W>(sh, s, base, nv, &mut leave),
        }
        if p.bandwidth == LinkBandwidth::One {
            self.arbitrate_links(sh, s, base, nv, &mut leave);
        }
        self.set_leaving(base, nv, &leave)
    }

    /// Rules 1 to 3 for switch `s` (below the last level) of radix at most `R`: the moves of
    /// `ACTIVE` worms, then per direction the VC allocation of the waiting headers.
    fn route_and_allocate<const R: usize, const W: usize>(
        &mut self,
        sh: &Shared<'_>,
        s: NodeId,
        base: usize,
        nv: usize,
        leave: &mut VcSet<W>,
    ) {
        let p = sh.p;
        let mut request = [VcSet::<W>::default(); R];
        // The directions requested.
        let mut directions = 0u32;
        // The VCs holding a flit, found without a branch per VC.
        let mut occupied = VcSet::<W>::default();
        let own = base - self.own_start;
        for (j, vc) in self.own[own..own + nv].iter_mut().enumerate() {
            vc.grant = NO_GRANT;
            occupied.insert_if(j, vc.count != 0);
        }
        while let Some(j) = occupied.pop_first() {
            let vc = self.own[own + j];
            let whole_packet =
                p.mode != FlowControl::StoreForward || u32::from(vc.count) == p.flits;
            match VcState::from_u8(vc.state) {
                // A worm leaving the network here drains every cycle.
                VcState::Active if vc.out == EJECT => leave.insert(j),
                VcState::Active if ready(&p, self.vc(sh.down[vc.out as usize] as usize)) => {
                    leave.insert(j)
                }
                VcState::Dropping => leave.insert(j),
                // The header's direction, looked up when it arrived.
                VcState::Routing if whole_packet => {
                    request[vc.out as usize].insert(j);
                    directions |= 1 << vc.out;
                }
                _ => {}
            }
        }
        while directions != 0 {
            let dir = directions.trailing_zeros();
            directions &= directions - 1;
            self.allocate(sh, s, dir as u8, base, nv, &request[dir as usize], leave);
        }
    }

    /// VC allocation for direction `dir` of switch `s` (rule 2 and 3 of the module doc).
    #[allow(clippy::too_many_arguments)]
    fn allocate<const W: usize>(
        &mut self,
        sh: &Shared<'_>,
        s: NodeId,
        dir: u8,
        base: usize,
        nv: usize,
        request: &VcSet<W>,
        leave: &mut VcSet<W>,
    ) {
        let p = sh.p;
        let m = sh.topo.multiplicity;
        let first_lane = match p.lane_choice {
            LaneChoice::Lowest | LaneChoice::LeastLoaded => 0,
            LaneChoice::Random => u32::from(sh.lfsr[s as usize]) % m,
        };
        let (mut lane_k, mut vc) = (0u32, 0u32);
        let slot = sh.shape.pointers(s).start + dir as usize;
        let start = usize::from(sh.rr[slot]);
        let mut last_granted = None;
        // The requests in round-robin order: from the pointer on, then those below it.
        let (from, below) = request.split_at(start);
        for mut requests in [from, below] {
            while let Some(j) = requests.pop_first() {
                let mut granted = None;
                while vc < p.vcs {
                    let lane = if first_lane + lane_k >= m {
                        first_lane + lane_k - m
                    } else {
                        first_lane + lane_k
                    };
                    let ov = sh.topo.out_link(s, dir, lane) << sh.vc_shift | vc;
                    lane_k += 1;
                    if lane_k == m {
                        lane_k = 0;
                        vc += 1;
                    }
                    if self.free(sh, ov) {
                        granted = Some(ov);
                        break;
                    }
                }
                let own = base + j - self.own_start;
                match granted {
                    Some(ov) => {
                        self.own[own].grant = ov;
                        leave.insert(j);
                        last_granted = Some(j);
                    }
                    None if p.mode == FlowControl::Drop => {
                        self.own[own].grant = DROP;
                        leave.insert(j);
                    }
                    None => {}
                }
            }
        }
        // Written on every evaluation: a later sweep of the same cycle may grant differently.
        self.rr_next[slot - self.rr_start] = last_granted.map_or(start, |j| next(j, nv)) as u16;
    }

    /// One flit per link per cycle: of the VCs about to cross each out link of `s`, only the
    /// first in the link's round-robin order does.
    fn arbitrate_links<const W: usize>(
        &mut self,
        sh: &Shared<'_>,
        s: NodeId,
        base: usize,
        nv: usize,
        leave: &mut VcSet<W>,
    ) {
        let own = base - self.own_start;
        for l in sh.shape.links(s) {
            let start = usize::from(sh.link_rr[l as usize]);
            let mut winner = None;
            // The leaving VCs in the link's round-robin order.
            let (from, below) = leave.split_at(start);
            for mut leaving in [from, below] {
                while let Some(j) = leaving.pop_first() {
                    let vc = &self.own[own + j];
                    let target = match vc.state {
                        st if st == VcState::Active as u8 => vc.out,
                        st if st == VcState::Routing as u8 && vc.grant < DROP => vc.grant,
                        _ => NO_GRANT,
                    };
                    if target != NO_GRANT && target >> sh.vc_shift == l {
                        if winner.is_none() {
                            winner = Some(j);
                        } else {
                            leave.remove(j);
                        }
                    }
                }
            }
            self.link_rr_next[l as usize - self.link_start] =
                winner.map_or(start, |j| next(j, nv)) as u16;
        }
    }

    fn set_leaving<const W: usize>(&mut self, base: usize, nv: usize, leave: &VcSet<W>) -> bool {
        let mut changed = false;
        let own = base - self.own_start;
        for (j, vc) in self.own[own..own + nv].iter_mut().enumerate() {
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
}
