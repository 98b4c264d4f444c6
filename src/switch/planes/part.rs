//! The registers of a bit-plane run ([`super`]), every level of them, and the rules of a
//! level's evaluation and clock edge. The rules read the level a level's flits enter
//! through [`Below`] and write it through [`Sink`]: the next level, read as it is past its
//! departures (in a pipelined run, its headers' worms through a list, [`super::pipeline`]).

// Bit-sliced logic indexes several planes by the same VC in one loop.
#![allow(clippy::needless_range_loop)]

use super::below::{Below, Leaving, Next, Sink};
use super::links::{Counters, LinkCounts};
use super::registers::{Level, run, run_mut};
use super::word::{allocate, round_robin_first};
use super::{MAX_NV, MAX_VCS};
use crate::config::{LinkBandwidth, SimConfig};
use crate::error::Result;
use crate::flit::FlitSlot;
use crate::switch::Fabric;
use crate::switch::transfer::{Transfer, TransferKind};

/// What every level shares: the network's parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    /// Rows (switches a level).
    pub(super) n: usize,
    /// Of the whole network: level `l`'s routing bit is `log_n − 1 − l`.
    pub(super) log_n: u32,
    pub(super) b: usize,
    /// Flits per worm, L.
    pub(super) flits: u16,
    /// Words of a plane: `n / 64` rounded up.
    pub(super) words: usize,
    pub(super) one_per_link: bool,
}

/// The registers of every level, and what their cycles count.
#[derive(Clone, Debug)]
pub(super) struct Part {
    pub(super) shape: Shape,
    pub(super) levels: Vec<Level>,
    /// Flits carried per link.
    pub(super) links: LinkCounts,
    /// Flits written into the registers by the sources, less those that left the network
    /// (a pipelined run's lower thread takes the upper one's departures a cycle at a time).
    pub(super) held: u64,
    /// Body flits (neither head nor tail) that entered the last level since they were last
    /// taken: they reached their destination's register unbooked.
    pub(super) body_arrivals: u64,
}

impl Part {
    /// The empty registers of `fabric`'s network.
    pub(super) fn new(config: &SimConfig, fabric: &Fabric) -> Result<Self> {
        let topo = &fabric.topo;
        let n = topo.n as usize;
        let b = config.vcs as usize;
        let words = n.div_ceil(64);
        let levels = (0..topo.levels as usize)
            .map(|l| {
                let (nv, base) = match l {
                    0 => (b, 0),
                    l => (2 * b, n * b + (l - 1) * n * 2 * b),
                };
                Level::new(nv, b, n, words, base as u32)
            })
            .collect::<Result<_>>()?;
        Ok(Part {
            shape: Shape {
                n,
                log_n: topo.log_n,
                b,
                flits: config.flits as u16,
                words,
                one_per_link: config.link_bandwidth == LinkBandwidth::One,
            },
            levels,
            links: LinkCounts::new(topo.levels as usize - 1, b, n)?,
            held: 0,
            body_arrivals: 0,
        })
    }

    /// The last level delivers, then every level from the one below it down to level 0
    /// evaluates and commits (the level above reads the registers it feeds as they are after
    /// their departures), appending the transfers the books read to `events`: the heads' and
    /// tails' arrivals into the last level (where the books count them delivered). Returns
    /// whether a flit left a register.
    pub(super) fn cycle(&mut self, events: &mut Vec<Transfer>) -> bool {
        let last = self.levels.len() - 1;
        let left = deliver(&mut self.levels[last], self.shape.words);
        self.held -= left;
        let moved = evaluate_down(
            &self.shape,
            &mut self.levels,
            0,
            &mut self.links.counters(),
            events,
            &mut self.body_arrivals,
        );
        moved || left > 0
    }

    /// Level 0 open to the sources.
    pub(super) fn level_zero(&mut self) -> Zero<'_> {
        Zero {
            shape: &self.shape,
            level: &mut self.levels[0],
            held: &mut self.held,
        }
    }
}

/// The last level (`level`, of `words` words a plane): every held flit leaves into its
/// destination; a tail ends its worm. Returns the flits that left. Nothing is listed for the
/// books: a flit is booked as delivered where it enters this level (the destination takes a
/// flit from it every cycle, so it leaves at the next edge).
pub(super) fn deliver(level: &mut Level, words: usize) -> u64 {
    let mut left = 0;
    for i in 0..level.nv * words {
        let full = std::mem::take(&mut level.full[i]);
        if full == 0 {
            continue;
        }
        level.head[i] = 0;
        let tails = std::mem::take(&mut level.tail[i]);
        level.act[i] &= !(full & tails);
        left += u64::from(full.count_ones());
    }
    left
}

/// The flit of worm `msg` entering the last level across its `hops`-th link: its header
/// where `head` is 1, else its tail (the last of `flits`). Computed, not branched on: which
/// of the two is as random as the traffic.
#[inline(always)]
pub(super) fn landing(msg: u32, head: u16, flits: u16, hops: u16) -> FlitSlot {
    FlitSlot {
        msg,
        seq: (1 - head) * (flits - 1),
        hop: head * hops,
    }
}

/// Where a level's clock edge lists the heads and tails entering the last level: as the
/// books' transfers, or (the upper levels of a pipelined run) as the shorter entries the
/// other thread rebuilds them from ([`super::pipeline`]).
pub(super) trait Landings {
    /// `flit`, a head where `head` (else a tail), left input VC `from` into the last level's
    /// input VC `to`.
    fn landed(&mut self, flit: FlitSlot, head: bool, from: u32, to: u32);
}

impl Landings for Vec<Transfer> {
    #[inline(always)]
    fn landed(&mut self, flit: FlitSlot, _: bool, from: u32, to: u32) {
        self.push(Transfer {
            flit,
            from,
            to,
            kind: TransferKind::Arrived,
        });
    }
}

/// Levels `first + levels.len() − 2` down to `first` (of `levels`, the part's levels from
/// `first` on) evaluate and commit, each into the one above it in `levels`, counting their
/// crossings into `links` and appending the transfers the books read to `events`. Returns
/// whether a flit left a register.
pub(super) fn evaluate_down(
    s: &Shape,
    levels: &mut [Level],
    first: usize,
    links: &mut Counters<'_>,
    events: &mut impl Landings,
    body_arrivals: &mut u64,
) -> bool {
    let mut moved = false;
    for i in (0..levels.len().saturating_sub(1)).rev() {
        let (cur, above) = levels[i..].split_at_mut(1);
        moved |= evaluate_into(
            s,
            first + i,
            &mut cur[0],
            &mut above[0],
            links,
            events,
            body_arrivals,
        );
    }
    moved
}

/// Level `l` (`cur`) evaluates and commits into the level above it (`next`, past its
/// departures), as [`evaluate_down`] does for each of its levels.
#[inline(always)]
pub(super) fn evaluate_into(
    s: &Shape,
    l: usize,
    cur: &mut Level,
    next: &mut Level,
    links: &mut Counters<'_>,
    events: &mut impl Landings,
    body_arrivals: &mut u64,
) -> bool {
    let mut next = next_of(s, l, next);
    cycle_level(s, l, cur, &mut next, links, events, body_arrivals)
}

/// The level above level `l` (`next`), as level `l` reads and writes it.
#[inline(always)]
pub(super) fn next_of<'a>(s: &Shape, l: usize, next: &'a mut Level) -> Next<'a> {
    Next {
        level: next,
        k: s.log_n - 1 - l as u32,
        n: s.n,
        b: s.b,
        last: l as u32 + 1 == s.log_n,
    }
}

/// Level 0 of a part open to the sources ([`Part::level_zero`]).
pub(super) struct Zero<'a> {
    pub(super) shape: &'a Shape,
    pub(super) level: &'a mut Level,
    pub(super) held: &'a mut u64,
}

/// Level `l` (`cur`, below the last) in one cycle, its next level (`next`) already past its
/// departures: rules 1, 2 and 4 of [`crate::switch::logic`] for every switch, then its clock
/// edge: granted headers take their output VC, leaving flits cross into `next` (their
/// headers with their direction there), leaving tails end their worms' hold. A header that
/// waits is not listed: the books count its waits from its injection and arrival. Word by
/// word: a word's edge writes only registers of the next level that no other word reads (for
/// routing bit k < 6 its flits stay in its own word of the next level; from k = 6 on, the
/// flits of word `w` enter, and its rules read, words `w` and `w ^ 2^(k − 6)` of the next
/// level's port named by bit k of its rows, a port the other of those two words does not
/// read). Returns whether a flit left a register.
#[allow(clippy::too_many_arguments)]
pub(super) fn cycle_level(
    s: &Shape,
    l: usize,
    cur: &mut Level,
    next: &mut (impl Below + Sink),
    links: &mut Counters<'_>,
    events: &mut impl Landings,
    body_arrivals: &mut u64,
) -> bool {
    // The per-word arrays sized for B (a machine word's worth of rows each); the common
    // shapes with B and the input VCs known, so that every loop over them unrolls.
    // A level of one word (a network of at most 64 inputs) is its own case too.
    macro_rules! with {
        ($v:expr, $nv:expr, $exact:literal) => {{
            let level = match s.words {
                1 => cycle_level_in::<$v, $nv, $exact, true, _, _>,
                _ => cycle_level_in::<$v, $nv, $exact, false, _, _>,
            };
            level(s, l, cur, next, links, events, body_arrivals)
        }};
    }
    match (s.b, cur.nv) {
        (1, 1) => with!(1, 1, true),
        (1, 2) => with!(1, 2, true),
        (2, 2) => with!(2, 2, true),
        (2, 4) => with!(2, 4, true),
        (4, 4) => with!(4, 4, true),
        (4, 8) => with!(4, 8, true),
        (3..=4, _) => with!(4, 8, false),
        _ => with!(MAX_VCS, MAX_NV, false),
    }
}

/// [`cycle_level`] with arrays for at most `V` VCs per link, `NV` per switch; `EXACT`: the
/// level has exactly `V` and `NV`; `ONE_WORD`: its planes are one word each.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn cycle_level_in<
    const V: usize,
    const NV: usize,
    const EXACT: bool,
    const ONE_WORD: bool,
    N: Below + Sink,
    E: Landings,
>(
    s: &Shape,
    l: usize,
    cur: &mut Level,
    next: &mut N,
    links: &mut Counters<'_>,
    events: &mut E,
    body_arrivals: &mut u64,
) -> bool {
    let (b, nv) = match EXACT {
        true => (V, NV),
        false => (s.b, cur.nv),
    };
    let words = match ONE_WORD {
        true => 1,
        false => s.words,
    };
    let shape = WordShape { b, nv, l, words };
    let mut moved = false;
    for w in 0..words {
        if let Some(d) = decide::<V, NV>(s, shape, cur, &*next, w) {
            moved |= edge::<V, NV>(s, shape, cur, &d, next, links, events, body_arrivals, w);
        }
    }
    moved
}

/// A level's B, input VCs per switch and number, as one word's rules read them.
#[derive(Clone, Copy)]
struct WordShape {
    b: usize,
    nv: usize,
    l: usize,
    /// Words of a plane.
    words: usize,
}

/// What a word's evaluation decides for its clock edge, per input VC `j`: its flit crosses
/// (`leave`), its header was granted an output VC (`grant`), the one granted (one-hot,
/// `granted_vc[j][v]`).
struct WordDecisions<const V: usize, const NV: usize> {
    leave: [u64; NV],
    grant: [u64; NV],
    granted_vc: [[u64; V]; NV],
}

/// Rules 1, 2 and 4 for the switches of word `w` of `cur`, whose next level (`below`) is
/// past its departures; the pointers take their next values. `None`: the word holds no flit.
#[inline(always)]
fn decide<const V: usize, const NV: usize>(
    s: &Shape,
    WordShape { b, nv, .. }: WordShape,
    cur: &mut Level,
    below: &impl Below,
    w: usize,
) -> Option<WordDecisions<V, NV>> {
    // The word's run of each plane (word-major: its length is the level's input VCs).
    let (full_w, dir_w) = (run(&cur.full, w, nv), run(&cur.dir, w, nv));
    let mut full = [0u64; NV];
    let mut dir = [0u64; NV];
    let mut any = 0u64;
    for j in 0..nv {
        full[j] = full_w[j];
        dir[j] = dir_w[j];
        any |= full[j];
    }
    if any == 0 {
        return None;
    }
    // Output VC v of direction o can take a flit (ready[o][v]) or a new worm (idle[o][v]).
    let mut ready = [[0u64; V]; 2];
    let mut idle = [[0u64; V]; 2];
    for v in 0..b {
        let [(r0, i0), (r1, i1)] = below.ready_idle(v, w);
        (ready[0][v], idle[0][v]) = (r0, i0);
        (ready[1][v], idle[1][v]) = (r1, i1);
    }
    // Rule 1: an ACTIVE register passes its flit if its output VC is ready; the output VCs
    // ACTIVE registers hold (flit or not) are not free.
    let mut moving = [0u64; NV];
    let mut held = [[0u64; V]; 2];
    let mut requests = [[0u64; NV]; 2];
    let (act_w, hold_w) = (run(&cur.act, w, nv), run(&cur.hold, w, nv * b));
    for j in 0..nv {
        let act = act_w[j];
        let (to0, to1) = (act & !dir[j], act & dir[j]);
        let mut go = 0;
        for v in 0..b {
            let h = hold_w[j * b + v];
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
        let pointer = run_mut(&mut cur.rr, w * 2 + o, nv);
        allocate::<V, NV>(nv, b, req, &free, pointer, &mut grant, &mut granted_vc);
    }
    let mut leave = [0u64; NV];
    if s.one_per_link {
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
            let pointer = run_mut(&mut cur.lrr, w * 2 + o, nv);
            let winners = round_robin_first::<NV>(nv, &candidates, pointer);
            for j in 0..nv {
                leave[j] |= winners[j];
            }
        }
    } else {
        for j in 0..nv {
            leave[j] = moving[j] | grant[j];
        }
    }
    Some(WordDecisions {
        leave,
        grant,
        granted_vc,
    })
}

/// The clock edge of word `w` of level `l` (`cur`), from its decisions `d`. The flits
/// leaving on each output VC are gathered over the input VCs (one output VC is held by one
/// of them) and enter `sink` at once. Returns whether a flit left a register.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn edge<const V: usize, const NV: usize>(
    s: &Shape,
    WordShape { b, nv, l, words }: WordShape,
    cur: &mut Level,
    d: &WordDecisions<V, NV>,
    sink: &mut impl Sink,
    links: &mut Counters<'_>,
    events: &mut impl Landings,
    body_arrivals: &mut u64,
    w: usize,
) -> bool {
    let Shape { n, flits, .. } = *s;
    let vc_base = cur.vc_base;
    let into_last = sink.last();
    // Below the last level, the next level's routing bit: its headers' direction there.
    let digit = match into_last {
        true => 0,
        false => s.log_n - 2 - l as u32,
    };
    let mut moved = 0u64;
    let mut leaving = [Leaving::default(); V];
    // The word's run of each plane (word-major: its length is the level's input VCs).
    let Level {
        full: full_p,
        head: head_p,
        tail: tail_p,
        act: act_p,
        dir: dir_p,
        hold: hold_p,
        slot: slots,
        ..
    } = cur;
    let (full_w, head_w, tail_w) = (
        run_mut(full_p, w, nv),
        run_mut(head_p, w, nv),
        run_mut(tail_p, w, nv),
    );
    let (act_w, dir_w) = (run_mut(act_p, w, nv), run_mut(dir_p, w, nv));
    let hold_w = run_mut(hold_p, w, nv * b);
    let vc = |row: usize, j: usize| vc_base + (row * nv + j) as u32;
    for j in 0..nv {
        let (grant, leave, full) = (d.grant[j], d.leave[j], full_w[j]);
        if full == 0 {
            continue;
        }
        let (head, tail, dir) = (head_w[j], tail_w[j], dir_w[j]);
        let hold = &mut hold_w[j * b..][..b];
        for v in 0..b {
            let h = &mut hold[v];
            *h = (*h & !grant) | (d.granted_vc[j][v] & grant);
            let going = leave & *h;
            if going != 0 {
                leaving[v].add(going, going & head, going & tail, dir);
            }
        }
        // The register's leaving headers (below the last level), or heads and tails (into
        // it), in one pass whatever their output VCs: one loop a register rather than one
        // an output VC, whose exits the branch predictor cannot foresee.
        let heads = leave & head;
        if !into_last {
            // A header names its worm in the register it enters, and its direction there
            // (gathered for the register, then split by output VC and direction).
            let (mut bits, mut ones) = (heads, 0);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = vc_of::<V>(hold, b, bit);
                let o = (dir >> bit & 1) as usize;
                let slot = slots[j * n + w * 64 + bit];
                sink.header(v, w * 64 + bit, o, slot);
                ones |= u64::from(slot.destination >> digit & 1) << bit;
            }
            if ones != 0 {
                for v in 0..b {
                    let these = ones & hold[v];
                    leaving[v].dir[0] |= these & !dir;
                    leaving[v].dir[1] |= these & dir;
                }
            }
        } else {
            // Into the last level: the books read the heads and tails that enter it and
            // count its body flits.
            *body_arrivals += u64::from((leave & !head & !tail).count_ones());
            let mut bits = heads | (leave & tail);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = vc_of::<V>(hold, b, bit);
                let row = w * 64 + bit;
                let o = (dir >> bit & 1) as usize;
                let slot = slots[j * n + row];
                // A tail names its worm too: the register it enters is its header's (no
                // branch on which of the two, as random as the traffic).
                sink.header(v, row, o, slot);
                let head = (heads >> bit & 1) as u16;
                let flit = landing(slot.msg, head, flits, l as u16 + 1);
                events.landed(flit, head != 0, vc(row, j), sink.vc(v, row, o));
            }
        }
        moved |= leave;
        let ended = leave & tail;
        full_w[j] = full & !leave;
        head_w[j] = head & !leave;
        tail_w[j] = tail & !leave;
        act_w[j] = (act_w[j] | grant) & !ended;
        dir_w[j] = dir & !ended;
    }
    for v in 0..b {
        let out = &leaving[v];
        if out.full == [0, 0] {
            continue;
        }
        sink.enter(v, w, out);
        for o in 0..2 {
            if out.full[o] != 0 {
                // Output VC (o, v) of word w, laid out as the level's counters.
                links.add(((l * 2 + o) * b + v) * words + w, out.full[o]);
            }
        }
    }
    moved != 0
}

/// The output VC that row `bit` of a register holds (one of its `b` `hold` planes has the
/// bit), found without a branch.
#[inline(always)]
fn vc_of<const V: usize>(hold: &[u64], b: usize, bit: usize) -> usize {
    let mut v = 0;
    for (u, plane) in hold.iter().enumerate().take(b).skip(1) {
        v |= u & 0usize.wrapping_sub((plane >> bit & 1) as usize);
    }
    v
}

impl Part {
    /// Every header held by a register, with the links it crossed (its level).
    pub(super) fn stored_headers(&self) -> impl Iterator<Item = FlitSlot> + '_ {
        let n = self.shape.n;
        self.levels.iter().enumerate().flat_map(move |(l, level)| {
            (0..level.nv).flat_map(move |j| {
                (0..n).filter_map(move |row| {
                    let at = level.at(j, row / 64);
                    let head = (level.full[at] & level.head[at]) >> (row % 64) & 1 != 0;
                    head.then(|| level.slot[j * n + row].head(l))
                })
            })
        })
    }
}
