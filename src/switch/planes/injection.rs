//! Level 0 of the bit-plane kernel ([`super`]) as the sources see it: its injection VCs read
//! as "ready" and "accepts a new worm", and written by the sources themselves
//! ([`crate::source::InjectionRegisters`]), input by input or a word of 64 inputs at a time.

use super::Headers;
use super::part::{Shape, Zero};
use super::registers::{Level, Slot};
use crate::source::{InjectionPort, InjectionRegisters};

impl<'a> Zero<'a> {
    /// Level 0's injection VCs as the sources read and write them
    /// ([`crate::source::InjectionRegisters`]), each header looking up its destination in
    /// `headers`.
    pub(super) fn injection(self, headers: Headers<'a>) -> Injection<'a> {
        Injection {
            shape: self.shape,
            level: self.level,
            held: self.held,
            headers,
            written: 0,
        }
    }
}

/// Level 0 of a part of [`super::Planes`] open to the sources of its inputs.
pub struct Injection<'a> {
    shape: &'a Shape,
    level: &'a mut Level,
    held: &'a mut u64,
    headers: Headers<'a>,
    /// Flits written so far.
    pub written: u64,
}

impl Injection<'_> {
    /// Plane `vc`'s index of word `w` of the whole network's inputs.
    #[inline(always)]
    fn at(&self, vc: usize, w: usize) -> usize {
        self.level.at(vc, w)
    }
}

/// Level 0 is past its departures: "ready" is empty, "accepts a new worm" (idle) is empty
/// and not `ACTIVE`; an input's bit of its word ([`InjectionRegisters`]).
impl InjectionPort for Injection<'_> {
    #[inline(always)]
    fn ready(&self, input: u32, vc: u32) -> bool {
        self.ready_word(vc as usize, input as usize / 64) >> (input % 64) & 1 != 0
    }

    #[inline(always)]
    fn accepts_new_worm(&self, input: u32, vc: u32) -> bool {
        self.accepts_word(vc as usize, input as usize / 64) >> (input % 64) & 1 != 0
    }
}

impl InjectionRegisters for Injection<'_> {
    /// The flit enters injection VC `input · B + vc` (plane `vc` of level 0, row `input`); a
    /// header writes its worm's slot and first direction.
    #[inline(always)]
    fn write(&mut self, input: u32, vc: u32, msg: u32, seq: u16) {
        let s = self.shape;
        let (row, j) = (input as usize, vc as usize);
        let at = self.level.at(j, row / 64);
        let mask = 1u64 << (row % 64);
        let level = &mut *self.level;
        level.full[at] |= mask;
        if seq == 0 {
            let destination = self.headers.get(msg).destination;
            level.head[at] |= mask;
            level.dir[at] |= u64::from(destination >> (s.log_n - 1) & 1) << (row % 64);
            level.slot[j * s.n + row] = Slot { msg, destination };
        }
        if seq == s.flits - 1 {
            level.tail[at] |= mask;
        }
        *self.held += 1;
        self.written += 1;
    }

    #[inline(always)]
    fn ready_word(&self, vc: usize, w: usize) -> u64 {
        !self.level.full[self.at(vc, w)]
    }

    #[inline(always)]
    fn accepts_word(&self, vc: usize, w: usize) -> u64 {
        let at = self.at(vc, w);
        !(self.level.full[at] | self.level.act[at])
    }

    #[inline(always)]
    fn write_bodies(&mut self, vc: usize, w: usize, rows: u64, tails: u64) {
        let at = self.at(vc, w);
        self.level.full[at] |= rows;
        self.level.tail[at] |= tails;
        let count = u64::from(rows.count_ones());
        *self.held += count;
        self.written += count;
    }
}
