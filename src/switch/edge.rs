//! The clock edge of the butterfly-family switch ([CMS] §1.1): the registered state every
//! switch's next-state logic ([`super::logic`]) proposed becomes the state. First every
//! leaving front flit is popped (departures), then every flit that crossed a link or was
//! injected is written (arrivals). Both halves touch only the registers of the switch being
//! committed, so they can run on runs of consecutive switches in parallel
//! ([`Fabric::commit_departures_split`], [`Fabric::commit_arrivals_split`]) with the result of
//! one run.

use super::header::Headers;
use super::transfer::{NONE, Transfer, TransferKind};
use super::{
    DROP, EJECT, Fabric, LEAVING, NO_GRANT, Shape, SwitchParams, Vc, VcState, copy_pointers,
    held_mask,
};
use crate::config::{FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::FlitSlot;
use crate::topology::{RouteField, Topology};

mod split;
pub(crate) use split::EdgeCut;

impl Fabric {
    /// First half of the clock edge: every leaving front flit is popped and described in
    /// `transfers`; allocations, tails and drops update the VC state; waiting headers are
    /// reported as `Stalled`; arbitration pointers and LFSRs advance. Clears the cycle's
    /// combinational signals.
    pub fn commit_departures(&mut self, transfers: &mut Vec<Transfer>) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_departures(transfers);
        }
        let switches = self.switch_flits.len();
        let left = {
            let (shared, mut run) = self.departure_runs(&[0, switches]);
            let run = &mut run[0];
            run.depart_all(&shared, transfers, None);
            run.left
        };
        self.held -= left;
        self.step_lfsrs();
    }

    /// The lane-choice LFSRs step every cycle.
    fn step_lfsrs(&mut self) {
        if self.params.lane_choice == LaneChoice::Random {
            for v in &mut self.lfsr {
                *v = super::lfsr_next(*v);
            }
        }
    }

    /// The registers the clock edge's first half reads, and one [`Departures`] per run of
    /// switches `bounds[k]..bounds[k + 1]` (consecutive runs, from any switch).
    fn departure_runs(&mut self, bounds: &[usize]) -> (DepartShared<'_>, Vec<Departures<'_>>) {
        let switches = self.switch_flits.len();
        // Where switch `s`'s (or, for `s == switches`, one past the last switch's) input VCs,
        // output VCs, pointers and out links start.
        let (n_vcs, n_alloc, n_rr, n_link) = (
            self.vcs.len(),
            self.alloc.len(),
            self.rr.len(),
            self.link_rr.len(),
        );
        let (shape, vc_shift) = (&self.shape, self.vc_shift);
        let starts = |s: usize| {
            if s == switches {
                return (n_vcs, n_alloc, n_rr, n_link);
            }
            let link = (shape.links(s as u32).start as usize).min(n_link);
            (
                shape.base(s as u32) as usize,
                (link << vc_shift).min(n_alloc),
                shape.pointers(s as u32).start,
                link,
            )
        };
        let (vc0, ov0, rr0, link0) = starts(bounds[0]);
        let mut vcs = &mut self.vcs[vc0..];
        let mut alloc = &mut self.alloc[ov0..];
        let mut switch_flits = &mut self.switch_flits[bounds[0]..];
        let mut occupancy = &mut self.occupancy[bounds[0]..];
        let mut rr = &mut self.rr[rr0..];
        let mut link_rr = &mut self.link_rr[link0..];
        let mut link_flits = &mut self.link_flits[link0..];
        let mut runs = Vec::with_capacity(bounds.len() - 1);
        let mut at = (vc0, ov0, rr0, link0);
        for k in 0..bounds.len() - 1 {
            let count = bounds[k + 1] - bounds[k];
            let next = starts(bounds[k + 1]);
            let (v, rest) = std::mem::take(&mut vcs).split_at_mut(next.0 - at.0);
            vcs = rest;
            let (a, rest) = std::mem::take(&mut alloc).split_at_mut(next.1 - at.1);
            alloc = rest;
            let (f, rest) = std::mem::take(&mut switch_flits).split_at_mut(count);
            switch_flits = rest;
            let (o, rest) = std::mem::take(&mut occupancy).split_at_mut(count);
            occupancy = rest;
            let (r, rest) = std::mem::take(&mut rr).split_at_mut(next.2 - at.2);
            rr = rest;
            let (l, rest) = std::mem::take(&mut link_rr).split_at_mut(next.3 - at.3);
            link_rr = rest;
            let (c, rest) = std::mem::take(&mut link_flits).split_at_mut(next.3 - at.3);
            link_flits = rest;
            runs.push(Departures {
                first: bounds[k],
                vcs: v,
                vc_start: at.0,
                alloc: a,
                alloc_start: at.1,
                switch_flits: f,
                occupancy: o,
                rr: r,
                rr_start: at.2,
                link_rr: l,
                link_start: at.3,
                link_flits: c,
                left: 0,
            });
            at = next;
        }
        let shared = DepartShared {
            p: self.params,
            shape: &self.shape,
            fifo: &self.fifo,
            down: &self.down,
            rr_next: &self.rr_next,
            link_rr_next: &self.link_rr_next,
            last_base: self.last_base as usize,
            // A graph network's VCs deliver by message: any may.
            book_from: match self.topo.graph {
                Some(_) => 0,
                None => self.last_base,
            },
            vc_shift,
        };
        (shared, runs)
    }

    /// Second half of the clock edge: every flit that crossed a link or was injected is written
    /// into its register; a header makes its VC `ROUTING` (or, at the last level, `ACTIVE`:
    /// ejecting) and names its owner. As it arrives, the header also looks up where its
    /// message goes from here: the direction its routing digit names, or on a graph network the
    /// direction of the next link of its path, or out of the network.
    pub fn commit_arrivals(&mut self, transfers: &[Transfer], headers: Headers<'_>) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_arrivals(transfers);
        }
        let (arrival, mut landings) = self.landings(headers, &[0, self.switch_flits.len()]);
        let landing = &mut landings[0];
        for t in transfers {
            if t.to != NONE {
                landing.write(&arrival, t);
            }
        }
        let arrived = landing.arrived;
        self.held += arrived;
    }

    /// What an arrival reads, and one [`Landing`] per run of switches
    /// `bounds[k]..bounds[k + 1]` (consecutive runs, from any switch).
    fn landings<'a>(
        &'a mut self,
        headers: Headers<'a>,
        bounds: &[usize],
    ) -> (Arrival<'a>, Vec<Landing<'a>>) {
        let switches = self.switch_flits.len();
        let depth = self.params.depth as usize;
        let (n_vcs, shape) = (self.vcs.len(), &self.shape);
        let vc_at = |s: usize| {
            if s == switches {
                n_vcs
            } else {
                shape.base(s as u32) as usize
            }
        };
        let first_vc = vc_at(bounds[0]);
        let mut vcs = &mut self.vcs[first_vc..];
        let mut fifo = &mut self.fifo[first_vc * depth..];
        let mut switch_flits = &mut self.switch_flits[bounds[0]..];
        let mut occupancy = &mut self.occupancy[bounds[0]..];
        let mut landings = Vec::with_capacity(bounds.len() - 1);
        let mut at = first_vc;
        for k in 0..bounds.len() - 1 {
            let count = bounds[k + 1] - bounds[k];
            let next = vc_at(bounds[k + 1]);
            let nv = next - at;
            let (v, rest) = std::mem::take(&mut vcs).split_at_mut(nv);
            vcs = rest;
            let (f, rest) = std::mem::take(&mut fifo).split_at_mut(nv * depth);
            fifo = rest;
            let (c, rest) = std::mem::take(&mut switch_flits).split_at_mut(count);
            switch_flits = rest;
            let (o, rest) = std::mem::take(&mut occupancy).split_at_mut(count);
            occupancy = rest;
            landings.push(Landing {
                first: bounds[k],
                vc_start: at,
                vcs: v,
                fifo: f,
                switch_flits: c,
                occupancy: o,
                arrived: 0,
            });
            at = next;
        }
        let arrival = Arrival {
            topo: &self.topo,
            shape: &self.shape,
            paths: self.paths.as_deref(),
            headers,
            last_base: self.last_base,
            route: &self.route,
            vc_node: &self.vc_node,
            depth,
            shared_queue: self.params.switch_queue.is_some(),
        };
        (arrival, landings)
    }
}

/// The registers the clock edge's second half writes for the switches `first..`: their input
/// VCs and FIFOs (from input VC `vc_start`), flit and packet counts.
struct Landing<'a> {
    first: usize,
    vc_start: usize,
    vcs: &'a mut [Vc],
    fifo: &'a mut [FlitSlot],
    switch_flits: &'a mut [u32],
    occupancy: &'a mut [u16],
    /// Flits written.
    arrived: u64,
}

impl Landing<'_> {
    /// The input VCs written here.
    fn vcs_range(&self) -> std::ops::Range<usize> {
        self.vc_start..self.vc_start + self.vcs.len()
    }

    /// Writes the flit of `t` into its input VC (one of these).
    #[inline]
    fn write(&mut self, a: &Arrival<'_>, t: &Transfer) {
        let d = t.to as usize;
        debug_assert!(self.vcs_range().contains(&d), "VC {d} is written here");
        let local = d - self.vc_start;
        let vc = &mut self.vcs[local];
        let mut pos = vc.front as usize + vc.count as usize;
        if pos >= a.depth {
            pos -= a.depth;
        }
        self.fifo[local * a.depth + pos] = t.flit;
        vc.count += 1;
        self.arrived += 1;
        let s = a.vc_node[d];
        let sw = s as usize - self.first;
        self.switch_flits[sw] += 1;
        if t.flit.seq == 0 {
            vc.owner = t.flit.msg;
            (vc.state, vc.out) = a.route(s, t.to, t.flit);
            if a.shared_queue {
                self.occupancy[sw] += 1;
            }
        }
    }
}

/// Where a header goes from the VC it arrives in.
struct Arrival<'a> {
    topo: &'a Topology,
    shape: &'a Shape,
    paths: Option<&'a crate::topology::graph::Paths>,
    headers: Headers<'a>,
    last_base: u32,
    route: &'a [(RouteField, u32)],
    /// The switch of every input VC.
    vc_node: &'a [u32],
    depth: usize,
    shared_queue: bool,
}

impl Arrival<'_> {
    /// The state and `out` register a header arriving in VC `d` of switch `s` gives it: on a
    /// leveled network `ACTIVE` (draining) at the last level, else `ROUTING` with the
    /// direction its routing digit names ([`Topology::route_digit`]); on a graph
    /// network `ACTIVE` with [`EJECT`] at the end of its path, else `ROUTING` with the
    /// direction of the next link (from the message's path, or the network's routing
    /// function towards its destination).
    #[inline]
    fn route(&self, s: u32, d: u32, flit: FlitSlot) -> (u8, u32) {
        let Some(g) = &self.topo.graph else {
            if d >= self.last_base {
                return (VcState::Active as u8, NO_GRANT);
            }
            // The direction is one digit of an address field, fixed per level: read once here
            // rather than every cycle the header waits.
            let (field, shift) = self.route[(s >> self.topo.log_n) as usize];
            let h = self.headers.get(flit.msg);
            let addr = match field {
                RouteField::Destination => h.destination,
                RouteField::Middle => h.middle,
            };
            return (
                VcState::Routing as u8,
                (addr >> shift) & (self.topo.radix - 1),
            );
        };
        let h = self.headers.get(flit.msg);
        let next = match (self.paths, &g.next_link) {
            (Some(paths), _) => paths
                .path(h.path as usize)
                .get(usize::from(flit.hop))
                .copied(),
            (None, Some(table)) => {
                let l = table[s as usize * g.terminal_switch.len() + h.destination as usize];
                (l != crate::topology::NO_TERMINAL).then_some(l)
            }
            (None, None) => None,
        };
        match next {
            None => (VcState::Active as u8, EJECT),
            Some(link) => {
                let first = self.shape.links(s).start;
                debug_assert!(
                    self.shape.links(s).contains(&link),
                    "link {link} leaves switch {s}"
                );
                (VcState::Routing as u8, link - first)
            }
        }
    }
}

/// What the clock edge's first half reads and never writes.
struct DepartShared<'a> {
    p: SwitchParams,
    shape: &'a Shape,
    fifo: &'a [FlitSlot],
    down: &'a [u32],
    rr_next: &'a [u16],
    link_rr_next: &'a [u16],
    last_base: usize,
    /// The first input VC a flit crossing into may deliver (a crossing into one before it is
    /// not booked, [`Transfers::bookable`](super::Transfers::bookable)).
    book_from: u32,
    /// Output VC `ov` crosses link `ov >> vc_shift`.
    vc_shift: u32,
}

impl DepartShared<'_> {
    fn vc_range(&self, s: usize) -> std::ops::Range<usize> {
        let base = self.shape.base(s as u32) as usize;
        base..base + self.shape.count(s as u32) as usize
    }
}

/// The registers the clock edge's first half writes for the switches `first..`: their input
/// VCs (from `vc_start`), output VC allocations (from `alloc_start`), flit and packet counts,
/// and pointers (rr from `radix * first`, link pointers from `link_start`).
struct Departures<'a> {
    first: usize,
    vcs: &'a mut [Vc],
    vc_start: usize,
    alloc: &'a mut [u32],
    alloc_start: usize,
    switch_flits: &'a mut [u32],
    occupancy: &'a mut [u16],
    rr: &'a mut [u16],
    rr_start: usize,
    link_rr: &'a mut [u16],
    link_start: usize,
    /// The flits carried by the out links of these switches (from `link_start`).
    link_flits: &'a mut [u64],
    /// Flits that left these switches.
    left: u64,
}

impl Departures<'_> {
    /// Commits every switch of the run that holds a flit, appending to `transfers` in switch
    /// and VC order (and the ones to book to `events`, if given).
    fn depart_all(
        &mut self,
        sh: &DepartShared<'_>,
        transfers: &mut Vec<Transfer>,
        mut events: Option<&mut Vec<Transfer>>,
    ) {
        let link_arbitration = sh.p.bandwidth == LinkBandwidth::One;
        // The switches holding a flit, 64 at a time: `chunk` is the first of `occupied`'s.
        let (mut chunk, mut occupied) = (0, 0u64);
        loop {
            if occupied == 0 {
                if chunk >= self.switch_flits.len() {
                    break;
                }
                let end = (chunk + 64).min(self.switch_flits.len());
                occupied = super::occupied_mask(&self.switch_flits[chunk..end]);
                if occupied == 0 {
                    chunk = end;
                }
                continue;
            }
            let k = chunk + occupied.trailing_zeros() as usize;
            occupied &= occupied - 1;
            if occupied == 0 {
                chunk = (chunk + 64).min(self.switch_flits.len());
            }
            let s = self.first + k;
            // A switch holding a flit was evaluated: its pointers take their proposals.
            let r = sh.shape.pointers(s as u32);
            copy_pointers(
                &mut self.rr[r.start - self.rr_start..r.end - self.rr_start],
                &sh.rr_next[r],
            );
            let vcs = sh.vc_range(s);
            if link_arbitration && vcs.start < sh.last_base {
                let l = sh.shape.links(s as u32);
                let l = l.start as usize..l.end as usize;
                copy_pointers(
                    &mut self.link_rr[l.start - self.link_start..l.end - self.link_start],
                    &sh.link_rr_next[l],
                );
            }
            self.depart(sh, k, vcs, transfers, events.as_deref_mut());
        }
    }

    /// The first half of the clock edge for switch `first + k`, whose input VCs are `vcs`.
    #[inline]
    fn depart(
        &mut self,
        sh: &DepartShared<'_>,
        k: usize,
        vcs: std::ops::Range<usize>,
        transfers: &mut Vec<Transfer>,
        mut events: Option<&mut Vec<Transfer>>,
    ) {
        let depth = sh.p.depth as usize;
        let tail = (sh.p.flits - 1) as u16;
        let shared_queue = sh.p.switch_queue.is_some();
        let store_forward = sh.p.mode == FlowControl::StoreForward;
        // The VCs holding a flit, 64 at a time (a branch per VC would be a coin toss).
        let (mut chunk, mut held) = (vcs.start, 0u64);
        loop {
            if held == 0 {
                if chunk >= vcs.end {
                    break;
                }
                let end = (chunk + 64).min(vcs.end);
                held = held_mask(&self.vcs[chunk - self.vc_start..end - self.vc_start]);
                if held == 0 {
                    chunk = end;
                }
                continue;
            }
            let i = chunk + held.trailing_zeros() as usize;
            held &= held - 1;
            if held == 0 {
                chunk = (chunk + 64).min(vcs.end);
            }
            let mut vc = self.vcs[i - self.vc_start];
            let g = vc.grant;
            vc.grant = NO_GRANT;
            if g < DROP {
                vc.out = g;
                vc.state = VcState::Active as u8;
                self.alloc[g as usize - self.alloc_start] = i as u32 + 1;
            }
            let mut flit = sh.fifo[i * depth + vc.front as usize];
            if !vc.leaving() {
                self.vcs[i - self.vc_start] = vc;
                let assembling = store_forward
                    && vc.state == VcState::Routing as u8
                    && u32::from(vc.count) < sh.p.flits;
                if flit.seq == 0 && !assembling {
                    let t = Transfer {
                        flit,
                        from: i as u32,
                        to: NONE,
                        kind: TransferKind::Stalled,
                    };
                    if let Some(events) = events.as_deref_mut() {
                        events.push(t);
                    }
                    transfers.push(t);
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
            self.left += 1;
            self.switch_flits[k] -= 1;
            let (to, kind) = if i >= sh.last_base || vc.out == EJECT {
                (NONE, TransferKind::Delivered)
            } else if g == DROP || vc.state == VcState::Dropping as u8 {
                vc.state = VcState::Dropping as u8;
                (NONE, TransferKind::Discarded)
            } else {
                if flit.seq == tail {
                    self.alloc[vc.out as usize - self.alloc_start] = 0;
                }
                // A header counts the links it crosses (a message on a given path is routed
                // by its position there).
                if flit.seq == 0 {
                    flit.hop += 1;
                }
                self.link_flits[(vc.out >> sh.vc_shift) as usize - self.link_start] += 1;
                (
                    sh.down[vc.out as usize],
                    TransferKind::Crossed { ov: vc.out },
                )
            };
            if flit.seq == tail {
                vc.state = VcState::Idle as u8;
                vc.out = NO_GRANT;
                if shared_queue {
                    self.occupancy[k] -= 1;
                }
            }
            self.vcs[i - self.vc_start] = vc;
            let t = Transfer {
                flit,
                from: i as u32,
                to,
                kind,
            };
            if let Some(events) = events.as_deref_mut()
                && (to == NONE || to >= sh.book_from)
            {
                events.push(t);
            }
            transfers.push(t);
        }
    }
}
