//! A bit-plane run on two threads ([`Planes::halves`]). Level 0 of a radix-2 butterfly sends
//! each flit into the half of the network its most significant routing bit names; above it,
//! a row feeds only rows of its own half: two butterflies of `n / 2` inputs ([CMS] §1.2). So
//! each thread owns half of the rows of every level, and a cycle has three phases:
//! 1. each thread runs its half of the levels above 0, from the last down to level 1, and
//!    then work of the run's own that no level above 0 reads (the simulation admits the
//!    cycle's messages on one thread and draws some of the next cycle's on the other);
//! 2. each thread runs its half of level 0 and then its inputs' sources. Level 0 of half `h`
//!    feeds port `h` of level 1 in both halves (a flit's port is its sending row's routing
//!    bit), and reads those registers as they are past their departures; the flits leaving
//!    it are listed in the thread's [`Outbox`], so that no register of level 1 changes while
//!    the other thread may read it;
//! 3. each thread takes the crossings into its half of level 1 from both outboxes.
//!
//! The registers at the end of the cycle are those of a run on one thread. The books get
//! the same transfers, listed half by half rather than level by level; nothing they keep
//! depends on that order (the bit-plane kernel runs wormhole flow control, whose books only
//! count and mark arrivals, with no retry to draw).

use super::below::{Below, Leaving, Sink};
use super::part::Part;
use super::registers::{Level, Slot};
use super::word::port_vc;
use super::{Headers, Injection, Planes};
use crate::error::Result;
use crate::gang::Gang;
use crate::limits::vec_of;
use crate::switch::Transfer;

/// The flits that level 0 of one half sends into level 1 of both halves in a cycle (on a
/// cache line of its own: the other half's thread writes the one beside it).
#[derive(Clone, Debug)]
#[repr(align(128))]
pub(super) struct Outbox {
    /// The sending half, and so the port of level 1 its flits enter.
    port: usize,
    b: usize,
    /// Words of a half's plane.
    words: usize,
    /// `planes[((half · KINDS + kind) · B + v) · words + w]`: the rows of word `w` of level 1
    /// of `half` that a flit enters on input VC `port · B + v`, of kind 0 (every flit), 1
    /// (headers), 2 (tails), 3 (headers whose routing digit at level 1 is 1).
    planes: Vec<u64>,
    /// The headers among them, with their worms, by the half of level 1 they enter (each
    /// thread reads only its own list).
    headers: [Vec<Crossing>; 2],
}

/// The planes of level 1 an outbox carries, in the order of [`Outbox::planes`].
const KINDS: usize = 4;

/// A header crossing from level 0 into row `row` of level 1 (of the half whose list holds
/// it), on VC `v`.
#[derive(Clone, Copy, Debug, Default)]
struct Crossing {
    v: u8,
    row: u32,
    slot: Slot,
}

impl Outbox {
    /// Bytes of an outbox of a half of `rows` rows, B = `b`.
    pub(super) fn bytes(b: usize, rows: usize) -> u64 {
        let planes = 2 * KINDS * b * rows.div_ceil(64) * 8;
        // A header per level-0 register of the half at most, all into either half.
        (planes + 2 * b * rows * std::mem::size_of::<Crossing>()) as u64
    }

    /// An empty outbox of half `port` of a network of `2 · rows` rows (an allocation that
    /// fails is an error).
    pub(super) fn new(port: usize, b: usize, rows: usize) -> Result<Self> {
        let words = rows.div_ceil(64);
        let shown = 2 * rows;
        let list = || -> Result<Vec<Crossing>> {
            let mut list = vec_of(b * rows, Crossing::default(), "inputs", shown)?;
            list.clear();
            Ok(list)
        };
        let headers = [list()?, list()?];
        Ok(Outbox {
            port,
            b,
            words,
            planes: vec_of(2 * KINDS * b * words, 0, "inputs", shown)?,
            headers,
        })
    }

    #[inline(always)]
    fn at(&self, half: usize, kind: usize, v: usize, w: usize) -> usize {
        ((half * KINDS + kind) * self.b + v) * self.words + w
    }

    fn clear(&mut self) {
        self.planes.fill(0);
        self.headers.iter_mut().for_each(Vec::clear);
    }
}

/// Level 1 of both halves, as level 0 of half `port` reads it (port `port` of each, the
/// direction naming the half), and its outbox, which its clock edge writes: a flit of row
/// `row` leaving in direction `o` enters row `row` of half `o` of level 1, on port `port`.
struct Across<'a> {
    levels: [&'a Level; 2],
    port: usize,
    b: usize,
    outbox: &'a mut Outbox,
}

impl Below for Across<'_> {
    #[inline(always)]
    fn ready_idle(&self, v: usize, w: usize) -> [(u64, u64); 2] {
        let j = port_vc(self.port, v, self.b);
        self.levels.map(|next| {
            let at = next.at(j, w);
            (!next.full[at], !(next.full[at] | next.act[at]))
        })
    }
}

impl Sink for Across<'_> {
    fn last(&self) -> bool {
        // A split run has at least three levels.
        false
    }

    #[inline(always)]
    fn enter(&mut self, v: usize, w: usize, leaving: &Leaving) {
        let outbox = &mut *self.outbox;
        for half in 0..2 {
            for (kind, bits) in [leaving.full, leaving.head, leaving.tail, leaving.dir]
                .into_iter()
                .enumerate()
            {
                let at = outbox.at(half, kind, v, w);
                outbox.planes[at] |= bits[half];
            }
        }
    }

    #[inline(always)]
    fn header(&mut self, v: usize, row: usize, o: usize, slot: Slot) {
        self.outbox.headers[o].push(Crossing {
            v: v as u8,
            row: row as u32,
            slot,
        });
    }

    fn vc(&self, _: usize, _: usize, _: usize) -> u32 {
        unreachable!("only a flit entering the last level is numbered")
    }
}

impl Part {
    /// Takes into level 1 of this part, half `half`, the crossings of both halves' level 0
    /// (phase 3).
    fn take_crossings(&mut self, half: usize, outboxes: &[Outbox]) {
        let s = self.shape;
        let (b, words) = (s.b, s.words);
        let level = &mut self.levels[1];
        for outbox in outboxes {
            for v in 0..b {
                let j = port_vc(outbox.port, v, b);
                for w in 0..words {
                    let i = level.at(j, w);
                    level.full[i] |= outbox.planes[outbox.at(half, 0, v, w)];
                    level.head[i] |= outbox.planes[outbox.at(half, 1, v, w)];
                    level.tail[i] |= outbox.planes[outbox.at(half, 2, v, w)];
                    level.dir[i] |= outbox.planes[outbox.at(half, 3, v, w)];
                }
            }
            for c in &outbox.headers[half] {
                let (j, row) = (port_vc(outbox.port, c.v as usize, b), c.row as usize);
                level.slot[j * s.n + row] = c.slot;
            }
        }
    }
}

impl Planes {
    /// Phase 1 of a cycle of a run on two halves ([`Planes::halves`]) on `gang`'s threads:
    /// thread `h` runs half `h` of the levels above 0 (its transfers for the books go to
    /// `events[h]`) and then calls `f(h, work[h])`, work of the run's own that does not touch
    /// the registers (the simulation admits the cycle's messages there, and draws some of the
    /// next cycle's). Returns whether a flit left a register, and what `f` returned, per
    /// half; [`Planes::level_zero_halves`] goes on with the cycle.
    pub fn levels_above_halves<A: Send, R: Send>(
        &mut self,
        gang: &mut Gang,
        events: &mut [Vec<Transfer>],
        work: [A; 2],
        f: impl Fn(usize, A) -> R + Sync,
    ) -> (bool, Vec<R>) {
        assert!(
            self.parts.len() == 2 && events.len() == 2,
            "a run on two halves, with two lists of events"
        );
        // Each thread's list moves to the thread (its length, pushed at every transfer,
        // stays off the line the other list's shares).
        let tasks = self
            .parts
            .iter_mut()
            .zip(events.iter_mut().map(std::mem::take))
            .zip(work)
            .enumerate()
            .collect();
        let done = gang.map(tasks, |(half, ((part, mut list), work))| {
            let moved = part.cycle_down_to(1, &mut list);
            (moved, list, f(half, work))
        });
        let mut moved = false;
        let results = done
            .into_iter()
            .zip(events.iter_mut())
            .map(|((m, list, r), events)| {
                moved |= m;
                *events = list;
                r
            })
            .collect();
        (moved, results)
    }

    /// Phase 2 of a cycle of a run on two halves, after [`Planes::levels_above_halves`]:
    /// thread `h` runs level 0 of half `h` (its transfers for the books to `events[h]`) and
    /// then `send` gives the sources of its inputs (`senders[h]`) its injection VCs. Returns
    /// whether a flit left a register, the flits the sources wrote, and what `send`
    /// returned, per half. [`Planes::end_cycle_halves`] ends the cycle.
    pub fn level_zero_halves<T: Send, R: Send>(
        &mut self,
        gang: &mut Gang,
        headers: Headers<'_>,
        events: &mut [Vec<Transfer>],
        senders: Vec<T>,
        send: impl Fn(T, &mut Injection<'_>) -> R + Sync,
    ) -> (bool, u64, Vec<R>) {
        assert!(
            self.parts.len() == 2 && events.len() == 2 && senders.len() == 2,
            "a run on two halves, with two lists of events and two parts of the sources"
        );
        let [first, second] = &mut self.parts[..] else {
            unreachable!("two halves")
        };
        let ((zero0, above0), (zero1, above1)) = (first.level_zero(), second.level_zero());
        let levels = [above0, above1];
        let tasks = [zero0, zero1]
            .into_iter()
            .zip(self.outboxes.iter_mut())
            .zip(events.iter_mut().map(std::mem::take))
            .zip(senders)
            .collect();
        let done = gang.map(tasks, |(((mut zero, outbox), mut list), sender)| {
            outbox.clear();
            let mut next = Across {
                levels,
                port: outbox.port,
                b: zero.shape.b,
                outbox,
            };
            let moved = zero.cycle(&mut next, &mut list);
            let mut injection = zero.injection(headers);
            let r = send(sender, &mut injection);
            (moved, injection.written, r, list)
        });
        let (mut moved, mut written) = (false, 0);
        let results = done
            .into_iter()
            .zip(events.iter_mut())
            .map(|((m, w, r, list), events)| {
                moved |= m;
                written += w;
                *events = list;
                r
            })
            .collect();
        (moved, written, results)
    }

    /// Ends the cycle of [`Planes::level_zero_halves`] on `gang`'s threads: thread `h` takes the
    /// crossings from level 0 into half `h` of level 1 (its registers are then those of a
    /// run on one thread), then calls `f(h, work[h])`, work of the run's own that does not
    /// touch the registers. Returns what `f` returned, per half.
    pub fn end_cycle_halves<A: Send, R: Send>(
        &mut self,
        gang: &mut Gang,
        work: [A; 2],
        f: impl Fn(usize, A) -> R + Sync,
    ) -> Vec<R> {
        let outboxes = &self.outboxes;
        let tasks = self.parts.iter_mut().zip(work).enumerate().collect();
        gang.map(tasks, |(half, (part, work))| {
            part.take_crossings(half, outboxes);
            part.links.end_cycle();
            f(half, work)
        })
    }
}
