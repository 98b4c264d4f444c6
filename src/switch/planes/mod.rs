//! The butterfly-family switch of [`super::logic`] and [`super::edge`] in bit planes: the same
//! next-state logic, evaluated for 64 switches of a level at once, one bit per switch (row) in
//! every word, the way a wide datapath computes it. It runs the subset of networks in which
//! that logic is pure Boolean algebra over a few registers per VC: a radix-2 butterfly
//! ([CMS] §1.2) with worms of any length L in depth-1 VC registers, wormhole flow control,
//! the combinational `ready` wires of the default back-pressure, no faulty switch and at most
//! [`MAX_VCS`] VCs per link ([`Planes::supports`] names what else it refuses).
//!
//! For each input VC `j` of a level (level 0: `j = vc`; above it `j = port · B + vc`, port 0
//! being the link from the column whose routing bit is 0) and each word of 64 columns the
//! planes hold:
//! - `full`: the register holds a flit; `head`, `tail`: it is its worm's header, its tail;
//! - `act`: `ACTIVE`: its worm holds an output VC (at the last level: the worm drains), from
//!   the header's grant until the tail leaves; a full register that is not `ACTIVE` holds a
//!   `ROUTING` header;
//! - `dir`: the direction the worm's routing digit names
//!   ([`crate::topology::Topology::route_digit`]);
//! - `hold[v]`: one-hot, the output VC an `ACTIVE` register holds;
//! - per direction `o`, the one-hot round-robin pointers of VC allocation (`rr`) and of the
//!   link (`lrr`) over the switch's input VCs.
//!
//! A cycle settles as the general kernel's does, from the last level up to the sources, and
//! each level's clock edge follows its evaluation: the level above reads the registers it
//! feeds as they are after their departures, where "ready" (empty, or its flit leaves) is
//! "empty", and "accepts a new worm" (idle, or its tail leaves) is "empty and not `ACTIVE`".
//! A header carries its worm's message id and destination into each register it enters, in a
//! scalar array; a body flit moves in the planes alone (its register already names its
//! worm), and only heads and tails reach the books, which count a worm by them. The
//! rules, word by word, are those of the module doc of [`super::logic`] with `B` output VCs
//! per direction: the k-th requester in round-robin order gets the k-th free output VC.
//!
//! The run is the one the general kernel gives: the same flits move at the same clock edges,
//! and the report is the same (`tests/planes.rs` holds them equal report for report, every
//! message's record included).

// Bit-sliced logic indexes several planes by the same VC in one loop.
#![allow(clippy::needless_range_loop)]

use super::transfer::{NONE, Transfer, TransferKind};
use super::{Fabric, Headers};
use crate::config::{Backpressure, FlowControl, LinkBandwidth, SimConfig};
use crate::error::Result;
use crate::flit::FlitSlot;
use crate::topology::TopologyKind;

mod injection;
mod links;
mod registers;
mod word;

pub use injection::Injection;

use links::LinkCounts;
use registers::{Decisions, Level};
use word::{LOW_HALF, Landing, allocate, port_vc, round_robin_first};

/// Most VCs per link the bit-plane kernel takes.
pub const MAX_VCS: usize = 8;
/// Most input VCs of one switch: two ports of [`MAX_VCS`].
const MAX_NV: usize = 2 * MAX_VCS;

/// A butterfly run in bit planes ([`Planes::supports`]).
#[derive(Clone, Debug)]
pub struct Planes {
    n: usize,
    log_n: u32,
    b: usize,
    /// Flits per worm, L.
    flits: u16,
    words: usize,
    one_per_link: bool,
    vc_shift: u32,
    levels: Vec<Level>,
    scratch: Decisions,
    /// Flits carried per link.
    links: LinkCounts,
    /// Flits held by all registers.
    held: u64,
    /// Body flits (neither head nor tail) that entered the last level since
    /// [`Planes::take_body_arrivals`]: they reached their destination's register unbooked.
    body_arrivals: u64,
}

impl Planes {
    /// Why the bit-plane kernel cannot run `config` on `fabric`, if it cannot.
    pub fn supports(config: &SimConfig, fabric: &Fabric) -> std::result::Result<(), String> {
        let refuse = |what: String| Err(what);
        if config.topology != TopologyKind::Butterfly || fabric.topo.graph.is_some() {
            return refuse(format!(
                "a butterfly (this run: --topology {})",
                config.topology.name()
            ));
        }
        if config.mode != FlowControl::Wormhole {
            return refuse(format!(
                "wormhole flow control (this run: --mode {})",
                config.mode.name()
            ));
        }
        if config.effective_depth() != 1 {
            return refuse(format!(
                "depth-1 VC registers (this run: {} flits per register)",
                config.effective_depth()
            ));
        }
        if config.backpressure != Backpressure::Combinational {
            return refuse("combinational back-pressure (this run: registered)".into());
        }
        if let Some(a) = config.switch_queue {
            return refuse(format!(
                "no per-switch queue bound (this run: --switch-queue {a})"
            ));
        }
        if config.vcs as usize > MAX_VCS {
            return refuse(format!(
                "at most {MAX_VCS} VCs per link (this run: --vcs {})",
                config.vcs
            ));
        }
        if fabric.paths.is_some() {
            return refuse("routing by destination (this run: given paths)".into());
        }
        let switches = fabric.topo.node_count() as u32;
        if let Some(s) = (0..switches).find(|&s| fabric.is_faulty(s)) {
            return refuse(format!(
                "no faulty switch (this run: switch {} is faulty)",
                fabric.topo.scope(s)
            ));
        }
        Ok(())
    }

    /// Bytes the registers of `fabric`'s network take.
    pub fn bytes(config: &SimConfig, fabric: &Fabric) -> u64 {
        let (n, b) = (fabric.topo.n as usize, config.vcs as usize);
        let levels = u64::from(fabric.topo.levels);
        Level::bytes(b, b, n)
            + levels.saturating_sub(1) * Level::bytes(2 * b, b, n)
            + LinkCounts::bytes(levels.saturating_sub(1) as usize, b, n)
    }

    /// The empty registers of `fabric`'s network (which [`Planes::supports`]; an allocation
    /// that fails is an error).
    pub fn new(config: &SimConfig, fabric: &Fabric) -> Result<Self> {
        let topo = &fabric.topo;
        let (n, log_n) = (topo.n as usize, topo.log_n);
        let b = config.vcs as usize;
        let words = n.div_ceil(64);
        let levels = (0..topo.levels as usize)
            .map(|l| {
                let (nv, base) = match l {
                    0 => (b, 0),
                    l => (2 * b, (n * b + (l - 1) * n * 2 * b) as u32),
                };
                Level::new(nv, b, n, words, base)
            })
            .collect::<Result<_>>()?;
        Ok(Planes {
            n,
            log_n,
            b,
            flits: config.flits as u16,
            words,
            one_per_link: config.link_bandwidth == LinkBandwidth::One,
            vc_shift: fabric.vc_shift,
            levels,
            scratch: Decisions::default(),
            links: LinkCounts::new(topo.levels as usize - 1, b, n)?,
            held: 0,
            body_arrivals: 0,
        })
    }

    /// Flits held by all registers.
    pub fn flits_in_network(&self) -> u64 {
        self.held
    }

    /// Body flits that reached their destination's register since the last call: the books
    /// see heads and tails only.
    pub fn take_body_arrivals(&mut self) -> u64 {
        std::mem::take(&mut self.body_arrivals)
    }

    /// Flits carried per link so far (the general kernel's link order).
    pub fn link_flits(&self) -> Vec<u64> {
        self.links.totals()
    }

    /// Every header held by a register, with the links it crossed (its level).
    pub fn stored_headers(&self) -> impl Iterator<Item = FlitSlot> + '_ {
        self.levels.iter().enumerate().flat_map(move |(l, level)| {
            (0..level.nv).flat_map(move |j| {
                (0..self.n).filter_map(move |row| {
                    let at = j * self.words + row / 64;
                    let head = (level.full[at] & level.head[at]) >> (row % 64) & 1 != 0;
                    head.then(|| level.slot[j * self.n + row].head(l))
                })
            })
        })
    }

    /// Evaluates every level from the last and commits each one's departures and the arrivals
    /// they cause, appending the transfers the books read to `events`: `Stalled` headers, and
    /// the heads' and tails' crossings into the last level and `Delivered`. Returns the flits
    /// that left a register.
    pub fn cycle(&mut self, events: &mut Vec<Transfer>) -> u64 {
        let last = self.levels.len() - 1;
        let mut left = self.deliver(events);
        for l in (0..last).rev() {
            self.evaluate_level(l);
            left += self.commit_level(l, events);
        }
        self.links.end_cycle();
        left
    }

    /// The last level: every held flit leaves into its destination (heads and tails booked);
    /// a tail ends its worm.
    fn deliver(&mut self, events: &mut Vec<Transfer>) -> u64 {
        let last = self.levels.len() - 1;
        let (words, n) = (self.words, self.n);
        let level = &mut self.levels[last];
        let mut left = 0;
        for j in 0..level.nv {
            for w in 0..words {
                let i = j * words + w;
                let full = std::mem::take(&mut level.full[i]);
                if full == 0 {
                    continue;
                }
                let heads = std::mem::take(&mut level.head[i]);
                let tails = std::mem::take(&mut level.tail[i]);
                level.act[i] &= !(full & tails);
                left += u64::from(full.count_ones());
                let mut bits = full & (heads | tails);
                while bits != 0 {
                    let bit = bits.trailing_zeros() as usize;
                    let row = w * 64 + bit;
                    bits &= bits - 1;
                    let slot = &level.slot[j * n + row];
                    events.push(Transfer {
                        flit: match heads >> bit & 1 {
                            1 => slot.head(last),
                            _ => slot.body(self.flits - 1),
                        },
                        from: level.vc(row, j),
                        to: NONE,
                        kind: TransferKind::Delivered,
                    });
                }
            }
        }
        self.held -= left;
        left
    }

    /// Rules 1, 2 and 4 of [`super::logic`] for every switch of level `l` (below the last),
    /// whose next level is already past its departures: the decisions go to `scratch`, the
    /// pointers take their next values.
    fn evaluate_level(&mut self, l: usize) {
        // The per-word arrays sized for B (a machine word's worth of rows each).
        match self.b {
            1 => self.evaluate_level_in::<1, 2>(l),
            2 => self.evaluate_level_in::<2, 4>(l),
            3..=4 => self.evaluate_level_in::<4, 8>(l),
            _ => self.evaluate_level_in::<MAX_VCS, MAX_NV>(l),
        }
    }

    /// [`Planes::evaluate_level`] with arrays for at most `V` VCs per link, `NV` per switch.
    fn evaluate_level_in<const V: usize, const NV: usize>(&mut self, l: usize) {
        let (b, words) = (self.b, self.words);
        let k = self.log_n - 1 - l as u32;
        let (upper, lower) = self.levels.split_at_mut(l + 1);
        let (cur, next) = (&mut upper[l], &lower[0]);
        let nv = cur.nv;
        let d = &mut self.scratch;
        for plane in [&mut d.leave, &mut d.grant] {
            plane.clear();
            plane.resize(nv * words, 0);
        }
        d.granted_vc.clear();
        d.granted_vc.resize(nv * b * words, 0);
        for w in 0..words {
            let mut full = [0u64; NV];
            let mut dir = [0u64; NV];
            let mut any = 0u64;
            for j in 0..nv {
                full[j] = cur.full[j * words + w];
                dir[j] = cur.dir[j * words + w];
                any |= full[j];
            }
            if any == 0 {
                continue;
            }
            // Output VC v of direction o can take a flit (ready[o][v]: its register is empty
            // after the next level's departures) or a new worm (idle[o][v]: empty and not
            // ACTIVE).
            let mut ready = [[0u64; V]; 2];
            let mut idle = [[0u64; V]; 2];
            let into = |plane: usize, w: usize| {
                let at = plane * words + w;
                (!next.full[at], !(next.full[at] | next.act[at]))
            };
            for v in 0..b {
                if k >= 6 {
                    let bit = 1usize << (k - 6);
                    let plane = port_vc(usize::from(w & bit != 0), v, b);
                    (ready[0][v], idle[0][v]) = into(plane, w & !bit);
                    (ready[1][v], idle[1][v]) = into(plane, w | bit);
                } else {
                    let (shift, low) = (1u32 << k, LOW_HALF[k as usize]);
                    let gather = |x0: u64, x1: u64| {
                        (
                            (x0 & low) | ((x1 & low) << shift),
                            ((x0 & !low) >> shift) | (x1 & !low),
                        )
                    };
                    let (r0, i0) = into(port_vc(0, v, b), w);
                    let (r1, i1) = into(port_vc(1, v, b), w);
                    (ready[0][v], ready[1][v]) = gather(r0, r1);
                    (idle[0][v], idle[1][v]) = gather(i0, i1);
                }
            }
            // Rule 1: an ACTIVE register passes its flit if its output VC is ready; the output
            // VCs ACTIVE registers hold (flit or not) are not free.
            let mut moving = [0u64; NV];
            let mut held = [[0u64; V]; 2];
            let mut requests = [[0u64; NV]; 2];
            for j in 0..nv {
                let act = cur.act[j * words + w];
                let (to0, to1) = (act & !dir[j], act & dir[j]);
                let mut go = 0;
                for v in 0..b {
                    let h = cur.hold[(j * b + v) * words + w];
                    held[0][v] |= to0 & h;
                    held[1][v] |= to1 & h;
                    go |= h & ((to0 & ready[0][v]) | (to1 & ready[1][v]));
                }
                moving[j] = go & full[j];
                let routing = full[j] & !act;
                requests[0][j] = routing & !dir[j];
                requests[1][j] = routing & dir[j];
            }
            let mut grant = [0u64; NV];
            let mut granted_vc = [[0u64; V]; NV];
            for o in 0..2 {
                let req = &requests[o];
                if req[..nv].iter().all(|&r| r == 0) {
                    continue;
                }
                let mut free = [0u64; V];
                for v in 0..b {
                    free[v] = !held[o][v] & idle[o][v];
                }
                let pointer = &mut cur.rr[o * nv * words..(o + 1) * nv * words];
                allocate::<V, NV>(
                    nv,
                    b,
                    w,
                    words,
                    req,
                    &free,
                    pointer,
                    &mut grant,
                    &mut granted_vc,
                );
            }
            let mut leave = [0u64; NV];
            if self.one_per_link {
                for o in 0..2 {
                    let mut candidates = [0u64; NV];
                    let mut some = 0;
                    for j in 0..nv {
                        let to_o = if o == 0 { !dir[j] } else { dir[j] };
                        candidates[j] = (moving[j] | grant[j]) & to_o;
                        some |= candidates[j];
                    }
                    if some == 0 {
                        continue;
                    }
                    let pointer = &mut cur.lrr[o * nv * words..(o + 1) * nv * words];
                    let winners = round_robin_first::<NV>(nv, w, words, &candidates, pointer);
                    for j in 0..nv {
                        leave[j] |= winners[j];
                    }
                }
            } else {
                for j in 0..nv {
                    leave[j] = moving[j] | grant[j];
                }
            }
            for j in 0..nv {
                d.leave[j * words + w] = leave[j];
                d.grant[j * words + w] = grant[j];
                for v in 0..b {
                    d.granted_vc[(j * b + v) * words + w] = granted_vc[j][v];
                }
            }
        }
    }

    /// The clock edge of level `l` (below the last), from the decisions in `scratch`: granted
    /// headers take their output VC, waiting headers are `Stalled`, leaving flits cross into
    /// the next level (whose headers look up their direction there), leaving tails end their
    /// worms' hold.
    fn commit_level(&mut self, l: usize, events: &mut Vec<Transfer>) -> u64 {
        let (b, words, n) = (self.b, self.words, self.n);
        let last = self.levels.len() - 1;
        let k = self.log_n - 1 - l as u32;
        // The last level is the one whose routing bit (k) is 0; it has no routing digit.
        let into_last = l + 1 == last;
        let (upper, lower) = self.levels.split_at_mut(l + 1);
        let (cur, next) = (&mut upper[l], &mut lower[0]);
        let nv = cur.nv;
        let d = &mut self.scratch;
        // Per output VC (direction o, VC v) and word: the rows whose link it crosses.
        d.crossed.clear();
        d.crossed.resize(2 * b * words, 0);
        let mut left = 0u64;
        for j in 0..nv {
            for w in 0..words {
                let i = j * words + w;
                let (grant, leave, full) = (d.grant[i], d.leave[i], cur.full[i]);
                if full == 0 {
                    continue;
                }
                let (head, tail, dir) = (cur.head[i], cur.tail[i], cur.dir[i]);
                for v in 0..b {
                    let h = &mut cur.hold[(j * b + v) * words + w];
                    *h = (*h & !grant) | (d.granted_vc[(j * b + v) * words + w] & grant);
                }
                let mut stalled = full & !leave & head;
                while stalled != 0 {
                    let row = w * 64 + stalled.trailing_zeros() as usize;
                    stalled &= stalled - 1;
                    events.push(Transfer {
                        flit: cur.slot[j * n + row].head(l),
                        from: cur.vc(row, j),
                        to: NONE,
                        kind: TransferKind::Stalled,
                    });
                }
                for v in 0..b {
                    let going = leave & cur.hold[(j * b + v) * words + w];
                    if going == 0 {
                        continue;
                    }
                    // The registers they enter are empty: every plane of theirs is clear
                    // (the direction of an ACTIVE one aside, which takes no header).
                    let land = Landing::new(k, w, words, v, b);
                    let heads = going & head;
                    land.or(&mut next.full, going, dir);
                    land.or(&mut next.head, heads, dir);
                    land.or(&mut next.tail, going & tail, dir);
                    if into_last {
                        // At the last level a worm drains from its header on.
                        land.or(&mut next.act, heads, dir);
                    }
                    d.crossed[v * words + w] |= going & !dir;
                    d.crossed[(b + v) * words + w] |= going & dir;
                    // A header names its worm in the register it enters; the books read the
                    // heads and tails that enter the last level and count its body flits.
                    let mut bits = heads;
                    if into_last {
                        bits |= going & tail;
                        self.body_arrivals += u64::from((going & !head & !tail).count_ones());
                    }
                    while bits != 0 {
                        let bit = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let row = w * 64 + bit;
                        let o = (dir >> bit & 1) as usize;
                        let to_row = (row & !(1 << k)) | (o << k);
                        let to_j = port_vc(row >> k & 1, v, b);
                        let slot = cur.slot[j * n + row];
                        let is_head = heads >> bit & 1 != 0;
                        if is_head {
                            next.slot[to_j * n + to_row] = slot;
                        }
                        if !into_last {
                            // The next level's routing digit, bit k - 1.
                            next.dir[to_j * words + to_row / 64] |=
                                u64::from(slot.destination >> (k - 1) & 1) << (to_row % 64);
                            continue;
                        }
                        let link = (l * n + row) * 2 + o;
                        events.push(Transfer {
                            flit: match is_head {
                                true => slot.head(l + 1),
                                false => slot.body(self.flits - 1),
                            },
                            from: cur.vc(row, j),
                            to: next.vc(to_row, to_j),
                            kind: TransferKind::Crossed {
                                ov: (link as u32) << self.vc_shift | v as u32,
                            },
                        });
                    }
                }
                left += u64::from(leave.count_ones());
                let ended = leave & tail;
                cur.full[i] = full & !leave;
                cur.head[i] = head & !leave;
                cur.tail[i] = tail & !leave;
                cur.act[i] = (cur.act[i] | grant) & !ended;
                cur.dir[i] = dir & !ended;
            }
        }
        // Laid out as the level's counters are.
        let first = l * 2 * b * words;
        for (c, &rows) in d.crossed.iter().enumerate() {
            if rows != 0 {
                self.links.add(first + c, rows);
            }
        }
        left
    }
}
