//! Flits per link, counted the way the bit-plane kernel ([`super`]) moves them: one small
//! vertical counter per link and output VC, bit `i` of the 64 rows' counts of a word in one
//! word, so that a level's crossings on an output VC in a cycle (at most one per link, each
//! output VC being held by one worm) add as one mask. Every [`FLUSH`] cycles, before any
//! counter can wrap, the counts move into the general kernel's per-link totals.

use crate::error::Result;
use crate::lines::Lines;

/// Bits per vertical counter.
const BITS: usize = 8;
/// Cycles between flushes: a counter gains at most one per cycle.
const FLUSH: u32 = (1 << BITS) - 1;

/// The flits each link carried ([`LinkCounts::totals`]).
#[derive(Clone, Debug)]
pub(super) struct LinkCounts {
    n: usize,
    b: usize,
    words: usize,
    /// `counters[((l · 2 + o) · B + v) · words + w]`: output VC `v` of direction `o` of
    /// the 64 switches of word `w` of level `l`, since the last flush.
    counters: Lines<[u64; BITS]>,
    /// Cycles counted since the last flush.
    since: u32,
    /// Per link, in the general kernel's order (`(l · n + row) · 2 + o`): flits counted up to
    /// the last flush.
    flushed: Lines<u64>,
}

impl LinkCounts {
    /// Bytes the counts of `levels` levels of links take (B = `b`, `n` switches a level):
    /// the counters, the flushed totals and the copy [`LinkCounts::totals`] returns.
    pub(super) fn bytes(levels: usize, b: usize, n: usize) -> u64 {
        let words = n.div_ceil(64);
        Lines::<[u64; BITS]>::bytes(levels * 2 * b * words)
            + Lines::<u64>::bytes(levels * 2 * n)
            + (levels * 2 * n * 8) as u64
    }

    /// Zero counts for `levels` levels of links.
    pub(super) fn new(levels: usize, b: usize, n: usize) -> Result<Self> {
        let words = n.div_ceil(64);
        Ok(LinkCounts {
            n,
            b,
            words,
            counters: Lines::new(levels * 2 * b * words, [0; BITS], "inputs", n)?,
            since: 0,
            flushed: Lines::new(levels * 2 * n, 0, "inputs", n)?,
        })
    }

    /// The counters of every level, to count a cycle's crossings ([`Counters::add`]).
    #[inline(always)]
    pub(super) fn counters(&mut self) -> Counters<'_> {
        Counters {
            counters: &mut self.counters,
            first: 0,
        }
    }

    /// The counters of the levels below `level` and those of the rest, apart: two threads
    /// count into them at once ([`super::pipeline`]).
    pub(super) fn split_at_level(&mut self, level: usize) -> (Counters<'_>, Counters<'_>) {
        let first = level * 2 * self.b * self.words;
        let (below, rest) = self.counters.split_at_mut(first);
        (
            Counters {
                counters: below,
                first: 0,
            },
            Counters {
                counters: rest,
                first,
            },
        )
    }

    /// Cycles that may still be counted before a flush is due: at least one.
    pub(super) fn room(&self) -> u32 {
        FLUSH - self.since
    }

    /// Ends a cycle's counting: flushes before a counter could wrap.
    #[inline(always)]
    pub(super) fn end_cycle(&mut self) {
        self.end_cycles(1);
    }

    /// Ends `cycles` cycles' counting (at most [`LinkCounts::room`]).
    #[inline(always)]
    pub(super) fn end_cycles(&mut self, cycles: u32) {
        debug_assert!(
            cycles <= self.room(),
            "a link counter flushed every {FLUSH} cycles"
        );
        self.since += cycles;
        if self.since == FLUSH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let (n, b, words) = (self.n, self.b, self.words);
        add_counts(&self.counters, n, b, words, &mut self.flushed);
        self.counters.fill([0; BITS]);
        self.since = 0;
    }

    /// Flits per link so far, in the general kernel's link order (of a network of these
    /// `n` switches a level).
    pub(super) fn totals(&self) -> Vec<u64> {
        let mut totals = self.flushed.to_vec();
        add_counts(&self.counters, self.n, self.b, self.words, &mut totals);
        totals
    }
}

/// The vertical counters of a run of levels of a [`LinkCounts`], as a cycle counts into them.
pub(super) struct Counters<'a> {
    counters: &'a mut [[u64; BITS]],
    /// The index of the first of them among all the levels' counters.
    first: usize,
}

impl Counters<'_> {
    /// One flit crosses the link of direction `o` of every row of word `w` of level `l` set in
    /// `rows`, on output VC `v`: counter `c = ((l · 2 + o) · B + v) · words + w`.
    #[inline(always)]
    pub(super) fn add(&mut self, c: usize, rows: u64) {
        let counter = &mut self.counters[c - self.first];
        let mut carry = rows;
        // Through every bit, without a branch: where the carry stops is as random as the
        // counts, and a mispredicted exit costs more than the bits left.
        for bit in counter.iter_mut() {
            let next = *bit & carry;
            *bit ^= carry;
            carry = next;
        }
        debug_assert_eq!(carry, 0, "a link counter flushed every {FLUSH} cycles");
    }
}

/// Adds `counters` (counts since the last flush of `n` switches a level, B = `b`, `words`
/// words a plane) to `totals` (per link).
fn add_counts(counters: &[[u64; BITS]], n: usize, b: usize, words: usize, totals: &mut [u64]) {
    for (c, counter) in counters.iter().enumerate() {
        let (lo, w) = (c / (b * words), c % words);
        let first = ((lo / 2) * n + w * 64) * 2 + lo % 2;
        for (i, &plane) in counter.iter().enumerate() {
            let mut rows = plane;
            while rows != 0 {
                totals[first + rows.trailing_zeros() as usize * 2] += 1 << i;
                rows &= rows - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts past several flushes equal a per-link tally, read between flushes too.
    #[test]
    fn vertical_counts_equal_a_per_link_tally() {
        let (levels, b, n) = (3, 2, 128);
        let mut counts = LinkCounts::new(levels, b, n).unwrap();
        let mut tally = vec![0u64; levels * 2 * n];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for cycle in 0..3 * FLUSH as usize + 17 {
            for (l, o, v, w) in
                (0..levels * 2 * b * 2).map(|c| (c / 8, c / 4 % 2, c / 2 % 2, c % 2))
            {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // An output VC carries at most one flit a cycle: every fifth cycle, all do.
                let rows = if cycle % 5 == 0 { !0 } else { x };
                counts.counters().add(((l * 2 + o) * b + v) * 2 + w, rows);
                for bit in 0..64 {
                    tally[(l * n + w * 64 + bit) * 2 + o] += rows >> bit & 1;
                }
            }
            counts.end_cycle();
            if cycle % 300 == 0 {
                assert_eq!(counts.totals(), tally, "cycle {cycle}");
            }
        }
        assert_eq!(counts.totals(), tally);
    }
}
