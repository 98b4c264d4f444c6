//! The level a level's flits enter, as the level's evaluation reads it ([`Below`]) and its
//! clock edge writes it ([`Sink`]); here the next level of the same part (in a pipelined
//! run, the lower thread's last level writes its headers' worms through a list:
//! [`super::pipeline`]).

use super::registers::{Level, Slot};
use super::word::{LOW_HALF, Landing, port_vc};

/// The level a level's flits enter, as the level's evaluation reads it.
pub(super) trait Below {
    /// Per direction `o`, the rows of word `w` of the evaluating level whose output VC `v` of
    /// direction `o` can take a flit (its register is empty after the next level's
    /// departures) and a new worm (empty and not `ACTIVE`).
    fn ready_idle(&self, v: usize, w: usize) -> [(u64, u64); 2];
}

/// The level a level's flits enter, as the level's clock edge writes it.
pub(super) trait Sink {
    /// Whether it is the last level (a header entering it starts its worm draining).
    fn last(&self) -> bool;
    /// The rows of word `w` in `leaving` send a flit on output VC `v` (its headers'
    /// directions land with them below the last level).
    fn enter(&mut self, v: usize, w: usize, leaving: &Leaving);
    /// The header of worm `slot` leaving row `row` (of the sending part) in direction `o`
    /// on VC `v` names its worm in the register it enters.
    fn header(&mut self, v: usize, row: usize, o: usize, slot: Slot);
    /// The general kernel's number of the input VC that a flit leaving row `row` in
    /// direction `o` on VC `v` enters (asked of the last level only).
    fn vc(&self, v: usize, row: usize, o: usize) -> u32;
}

/// The flits leaving one word of a level on one output VC, by direction: `[o]` holds the
/// rows whose flit leaves in direction `o`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Leaving {
    pub(super) full: [u64; 2],
    /// The headers among them, and the tails.
    pub(super) head: [u64; 2],
    pub(super) tail: [u64; 2],
    /// Of the headers, those whose routing digit at the next level (below the last) is 1:
    /// the direction they take there.
    pub(super) dir: [u64; 2],
}

impl Leaving {
    /// The rows of `going` leave, in the direction their bit of `dir` names: headers where
    /// `heads` is set, tails where `tails` is. Rows may leave from several input VCs of a
    /// word, never twice on the same output VC.
    #[inline(always)]
    pub(super) fn add(&mut self, going: u64, heads: u64, tails: u64, dir: u64) {
        for (o, to) in [!dir, dir].into_iter().enumerate() {
            self.full[o] |= going & to;
            self.head[o] |= heads & to;
            self.tail[o] |= tails & to;
        }
    }
}

/// The next level of the same part, read and written.
pub(super) struct Next<'a> {
    pub(super) level: &'a mut Level,
    pub(super) k: u32,
    pub(super) n: usize,
    pub(super) b: usize,
    pub(super) last: bool,
}

impl Below for Next<'_> {
    #[inline(always)]
    fn ready_idle(&self, v: usize, w: usize) -> [(u64, u64); 2] {
        let (b, next) = (self.b, &*self.level);
        let into = |j: usize, w: usize| {
            let at = next.at(j, w);
            (!next.full[at], !(next.full[at] | next.act[at]))
        };
        let k = self.k;
        if k >= 6 {
            let bit = 1usize << (k - 6);
            let plane = port_vc(usize::from(w & bit != 0), v, b);
            [into(plane, w & !bit), into(plane, w | bit)]
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
            let (ready, idle) = (gather(r0, r1), gather(i0, i1));
            [(ready.0, idle.0), (ready.1, idle.1)]
        }
    }
}

impl Next<'_> {
    /// Input VC and row that a flit of row `row` leaving in direction `o` on VC `v` enters.
    #[inline(always)]
    pub(super) fn target(&self, v: usize, row: usize, o: usize) -> (usize, usize) {
        let k = self.k;
        (
            port_vc(row >> k & 1, v, self.b),
            (row & !(1 << k)) | (o << k),
        )
    }
}

impl Sink for Next<'_> {
    fn last(&self) -> bool {
        self.last
    }

    #[inline(always)]
    fn enter(&mut self, v: usize, w: usize, leaving: &Leaving) {
        // The registers they enter are empty: every plane of theirs is clear (the direction
        // of an ACTIVE one aside, which takes no header).
        let next = &mut *self.level;
        let land = Landing::new(self.k, w, next.nv, v, self.b);
        land.or(&mut next.full, leaving.full);
        land.or(&mut next.head, leaving.head);
        land.or(&mut next.tail, leaving.tail);
        if self.last {
            // At the last level a worm drains from its header on.
            land.or(&mut next.act, leaving.head);
        } else {
            land.or(&mut next.dir, leaving.dir);
        }
    }

    #[inline(always)]
    fn header(&mut self, v: usize, row: usize, o: usize, slot: Slot) {
        let (to_j, to_row) = self.target(v, row, o);
        self.level.slot[to_j * self.n + to_row] = slot;
    }

    #[inline(always)]
    fn vc(&self, v: usize, row: usize, o: usize) -> u32 {
        let (to_j, to_row) = self.target(v, row, o);
        self.level.vc(to_row, to_j)
    }
}
