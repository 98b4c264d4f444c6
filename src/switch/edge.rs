//! The clock edge of the butterfly-family switch ([CMS] §1.1): the registered state every
//! switch's next-state logic ([`super::logic`]) proposed becomes the state. First every
//! leaving front flit is popped (departures), then every flit that crossed a link or was
//! injected is written (arrivals). Both halves touch only the registers of the switch being
//! committed, so they can run on runs of consecutive switches in parallel
//! ([`Fabric::commit_departures_split`], [`Fabric::commit_arrivals_split`]) with the result of
//! one run.

use super::logic::Headers;
use super::logic::{NONE, Transfer, TransferKind};
use super::{DROP, EJECT, Fabric, LEAVING, NO_GRANT, Shape, SwitchParams, Vc, VcState};
use crate::config::{FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::FlitSlot;
use crate::topology::Topology;
use rayon::prelude::*;

impl Fabric {
    /// First half of the clock edge: every leaving front flit is popped and described in
    /// `transfers`; allocations, tails and drops update the VC state; waiting headers are
    /// reported as `Stalled`; arbitration pointers and LFSRs advance. Clears the cycle's
    /// combinational signals.
    pub fn commit_departures(&mut self, transfers: &mut Vec<Transfer>) {
        self.commit_departures_split(transfers, 1);
    }

    /// [`Fabric::commit_departures`] with the switches cut into `parts` runs of consecutive
    /// switches, committed on the current rayon pool: a switch's departures touch only its own
    /// registers, and the runs' transfers are concatenated in switch order, so `transfers`
    /// is the one a single run gives.
    pub fn commit_departures_split(&mut self, transfers: &mut Vec<Transfer>, parts: usize) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_departures(transfers);
        }
        let switches = self.switch_flits.len();
        let parts = parts.clamp(1, switches.max(1));
        if parts == 1 {
            let left = {
                let (shared, mut run) = self.departure_runs(&[0, switches]);
                let run = &mut run[0];
                run.depart_all(&shared, transfers);
                run.left
            };
            self.held -= left;
        } else {
            let bounds: Vec<usize> = (0..=parts).map(|k| k * switches / parts).collect();
            let mut scratch = std::mem::take(&mut self.departure_scratch);
            scratch.resize_with(parts, Vec::new);
            let left: u64 = {
                let (shared, mut runs) = self.departure_runs(&bounds);
                runs.par_iter_mut()
                    .zip(scratch.par_iter_mut())
                    .map(|(run, out)| {
                        out.clear();
                        run.depart_all(&shared, out);
                        run.left
                    })
                    .sum()
            };
            self.held -= left;
            for out in &scratch {
                transfers.extend_from_slice(out);
            }
            self.departure_scratch = scratch;
        }
        if self.params.lane_choice == LaneChoice::Random {
            for v in &mut self.lfsr {
                *v = super::lfsr_next(*v);
            }
        }
    }

    /// The registers the clock edge's first half reads, and one [`Departures`] per run of
    /// switches `bounds[k]..bounds[k + 1]`.
    fn departure_runs(&mut self, bounds: &[usize]) -> (DepartShared<'_>, Vec<Departures<'_>>) {
        let switches = self.switch_flits.len();
        let vc_at = |s: usize| {
            if s == switches {
                self.vcs.len()
            } else {
                self.vc_base(s as u32) as usize
            }
        };
        let vc_bounds: Vec<usize> = bounds.iter().map(|&s| vc_at(s)).collect();
        let link_at = |s: usize| {
            if s == switches {
                self.link_rr.len()
            } else {
                (self.shape.links(s as u32).start as usize).min(self.link_rr.len())
            }
        };
        let link_bounds: Vec<usize> = bounds.iter().map(|&s| link_at(s)).collect();
        let ov_bounds: Vec<usize> = link_bounds
            .iter()
            .map(|&l| (l << self.vc_shift).min(self.alloc.len()))
            .collect();
        let rr_at = |s: usize| {
            if s == switches {
                self.rr.len()
            } else {
                self.shape.pointers(s as u32).start
            }
        };
        let rr_bounds: Vec<usize> = bounds.iter().map(|&s| rr_at(s)).collect();
        let mut vcs = &mut self.vcs[..];
        let mut alloc = &mut self.alloc[..];
        let mut switch_flits = &mut self.switch_flits[..];
        let mut occupancy = &mut self.occupancy[..];
        let mut rr = &mut self.rr[..];
        let mut link_rr = &mut self.link_rr[..];
        let mut runs = Vec::with_capacity(bounds.len() - 1);
        for k in 0..bounds.len() - 1 {
            let count = bounds[k + 1] - bounds[k];
            let (v, rest) = std::mem::take(&mut vcs).split_at_mut(vc_bounds[k + 1] - vc_bounds[k]);
            vcs = rest;
            let (a, rest) =
                std::mem::take(&mut alloc).split_at_mut(ov_bounds[k + 1] - ov_bounds[k]);
            alloc = rest;
            let (f, rest) = std::mem::take(&mut switch_flits).split_at_mut(count);
            switch_flits = rest;
            let (o, rest) = std::mem::take(&mut occupancy).split_at_mut(count);
            occupancy = rest;
            let (r, rest) = std::mem::take(&mut rr).split_at_mut(rr_bounds[k + 1] - rr_bounds[k]);
            rr = rest;
            let (l, rest) =
                std::mem::take(&mut link_rr).split_at_mut(link_bounds[k + 1] - link_bounds[k]);
            link_rr = rest;
            runs.push(Departures {
                first: bounds[k],
                vcs: v,
                vc_start: vc_bounds[k],
                alloc: a,
                alloc_start: ov_bounds[k],
                switch_flits: f,
                occupancy: o,
                rr: r,
                rr_start: rr_bounds[k],
                link_rr: l,
                link_start: link_bounds[k],
                left: 0,
            });
        }
        let shared = DepartShared {
            p: self.params,
            shape: &self.shape,
            fifo: &self.fifo,
            down: &self.down,
            rr_next: &self.rr_next,
            link_rr_next: &self.link_rr_next,
            last_base: self.last_base as usize,
        };
        (shared, runs)
    }

    /// Second half of the clock edge: every flit that crossed a link or was injected is written
    /// into its register; a header makes its VC `ROUTING` (or, at the last level, `ACTIVE`:
    /// ejecting) and names its owner. On a graph network the header also looks up where its
    /// message goes from here ([`Arrival`]): the direction of the next link of its path, or
    /// out of the network.
    pub fn commit_arrivals(&mut self, transfers: &[Transfer], headers: Headers<'_>) {
        if self.params.mode == FlowControl::Greedy {
            return self.commit_greedy_arrivals(transfers);
        }
        let arrival = Arrival {
            topo: &self.topo,
            shape: &self.shape,
            paths: self.paths.as_deref(),
            headers,
            last_base: self.last_base,
        };
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
                (vc.state, vc.out) = arrival.route(sw as u32, t.to, t.flit);
                if self.params.switch_queue.is_some() {
                    self.occupancy[sw] += 1;
                }
            }
        }
    }

    /// [`Fabric::commit_arrivals`] with the switches cut into `parts` runs of consecutive
    /// switches, each run on the current rayon pool writing the flits addressed to its VCs: a
    /// VC receives at most one flit per cycle, so the order of the writes does not matter.
    pub fn commit_arrivals_split(
        &mut self,
        transfers: &[Transfer],
        headers: Headers<'_>,
        parts: usize,
    ) {
        let switches = self.switch_flits.len();
        let parts = parts.clamp(1, switches.max(1));
        if parts == 1 || self.params.mode == FlowControl::Greedy {
            return self.commit_arrivals(transfers, headers);
        }
        let arrival = Arrival {
            topo: &self.topo,
            shape: &self.shape,
            paths: self.paths.as_deref(),
            headers,
            last_base: self.last_base,
        };
        let depth = self.params.depth as usize;
        let shared_queue = self.params.switch_queue.is_some();
        let bounds: Vec<usize> = (0..=parts).map(|k| k * switches / parts).collect();
        let vc_bounds: Vec<usize> = bounds
            .iter()
            .map(|&s| {
                if s == switches {
                    self.vcs.len()
                } else {
                    self.vc_base(s as u32) as usize
                }
            })
            .collect();
        let vc_node = &self.vc_node;
        let mut vcs = &mut self.vcs[..];
        let mut fifo = &mut self.fifo[..];
        let mut switch_flits = &mut self.switch_flits[..];
        let mut occupancy = &mut self.occupancy[..];
        let mut runs = Vec::with_capacity(parts);
        for k in 0..parts {
            let count = bounds[k + 1] - bounds[k];
            let nv = vc_bounds[k + 1] - vc_bounds[k];
            let (v, rest) = std::mem::take(&mut vcs).split_at_mut(nv);
            vcs = rest;
            let (f, rest) = std::mem::take(&mut fifo).split_at_mut(nv * depth);
            fifo = rest;
            let (c, rest) = std::mem::take(&mut switch_flits).split_at_mut(count);
            switch_flits = rest;
            let (o, rest) = std::mem::take(&mut occupancy).split_at_mut(count);
            occupancy = rest;
            runs.push((bounds[k], vc_bounds[k]..vc_bounds[k + 1], v, f, c, o));
        }
        let arrived: u64 = runs
            .par_iter_mut()
            .map(|(first, range, vcs, fifo, switch_flits, occupancy)| {
                let mut arrived = 0;
                for t in transfers {
                    let d = t.to as usize;
                    if t.to == NONE || !range.contains(&d) {
                        continue;
                    }
                    let local = d - range.start;
                    let vc = &mut vcs[local];
                    let mut pos = vc.front as usize + vc.count as usize;
                    if pos >= depth {
                        pos -= depth;
                    }
                    fifo[local * depth + pos] = t.flit;
                    vc.count += 1;
                    arrived += 1;
                    let sw = vc_node[d] as usize - *first;
                    switch_flits[sw] += 1;
                    if t.flit.seq == 0 {
                        vc.owner = t.flit.msg;
                        (vc.state, vc.out) = arrival.route(vc_node[d], t.to, t.flit);
                        if shared_queue {
                            occupancy[sw] += 1;
                        }
                    }
                }
                arrived
            })
            .sum();
        self.held += arrived;
    }
}

/// Where a header goes from the VC it arrives in.
struct Arrival<'a> {
    topo: &'a Topology,
    shape: &'a Shape,
    paths: Option<&'a crate::topology::graph::Paths>,
    headers: Headers<'a>,
    last_base: u32,
}

impl Arrival<'_> {
    /// The state and `out` register a header arriving in VC `d` of switch `s` gives it: on a
    /// leveled network `ACTIVE` (draining) at the last level, else `ROUTING`; on a graph
    /// network `ACTIVE` with [`EJECT`] at the end of its path, else `ROUTING` with the
    /// direction of the next link (from the message's path, or the network's routing
    /// function towards its destination).
    #[inline]
    fn route(&self, s: u32, d: u32, flit: FlitSlot) -> (u8, u32) {
        let Some(g) = &self.topo.graph else {
            return if d >= self.last_base {
                (VcState::Active as u8, NO_GRANT)
            } else {
                (VcState::Routing as u8, NO_GRANT)
            };
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
    /// Flits that left these switches.
    left: u64,
}

impl Departures<'_> {
    /// Commits every switch of the run that holds a flit, appending to `transfers` in switch
    /// and VC order.
    fn depart_all(&mut self, sh: &DepartShared<'_>, transfers: &mut Vec<Transfer>) {
        let link_arbitration = sh.p.bandwidth == LinkBandwidth::One;
        for k in 0..self.switch_flits.len() {
            if self.switch_flits[k] == 0 {
                continue;
            }
            let s = self.first + k;
            // A switch holding a flit was evaluated: its pointers take their proposals.
            let r = sh.shape.pointers(s as u32);
            self.rr[r.start - self.rr_start..r.end - self.rr_start].copy_from_slice(&sh.rr_next[r]);
            let vcs = sh.vc_range(s);
            if link_arbitration && vcs.start < sh.last_base {
                let l = sh.shape.links(s as u32);
                let l = l.start as usize..l.end as usize;
                self.link_rr[l.start - self.link_start..l.end - self.link_start]
                    .copy_from_slice(&sh.link_rr_next[l]);
            }
            self.depart(sh, k, vcs, transfers);
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
    ) {
        let depth = sh.p.depth as usize;
        let tail = (sh.p.flits - 1) as u16;
        let shared_queue = sh.p.switch_queue.is_some();
        let store_forward = sh.p.mode == FlowControl::StoreForward;
        for i in vcs {
            let mut vc = self.vcs[i - self.vc_start];
            if vc.count == 0 {
                continue;
            }
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
            transfers.push(Transfer {
                flit,
                from: i as u32,
                to,
                kind,
            });
        }
    }
}
