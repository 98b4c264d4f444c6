//! The registers of the bit-plane kernel ([`super`]): a level's planes, one bit per switch,
//! and per register the worm whose flit it holds.

use crate::error::Result;
use crate::flit::FlitSlot;
use crate::lines::Lines;

/// Index of entry `j` of word `w` in a word-major plane of `nv` entries a word.
#[inline(always)]
pub(super) fn at(j: usize, w: usize, nv: usize) -> usize {
    w * nv + j
}

/// Word `w`'s run of a word-major plane of `nv` entries a word ([`at`]).
#[inline(always)]
pub(super) fn run(plane: &[u64], w: usize, nv: usize) -> &[u64] {
    &plane[at(0, w, nv)..][..nv]
}

/// [`run`], to write.
#[inline(always)]
pub(super) fn run_mut(plane: &mut [u64], w: usize, nv: usize) -> &mut [u64] {
    &mut plane[at(0, w, nv)..][..nv]
}

/// The registers of one level, word-major: the planes of a word of 64 switches lie together
/// ([`at`]: index `w · nv + j` for input VC `j` of word `w`), so that one word's rules read
/// one short run of each plane ([`run`]), whose length (the level's input VCs) is known where
/// the rules are compiled for it. Each plane owns its cache lines ([`Lines`]): a run on two
/// threads writes the upper and the lower levels at once.
#[derive(Clone, Debug)]
pub(super) struct Level {
    /// Input VCs per switch.
    pub(super) nv: usize,
    pub(super) full: Lines<u64>,
    pub(super) head: Lines<u64>,
    pub(super) tail: Lines<u64>,
    pub(super) act: Lines<u64>,
    pub(super) dir: Lines<u64>,
    /// `hold[(w · nv + j) · B + v]`: runs of `nv · B` a word.
    pub(super) hold: Lines<u64>,
    /// `rr[(w · 2 + o) · nv + j]`: the VC-allocation pointer of direction `o` points at `j`
    /// (run `w · 2 + o`).
    pub(super) rr: Lines<u64>,
    /// `lrr[(w · 2 + o) · nv + j]`: the pointer of link `o` points at `j`.
    pub(super) lrr: Lines<u64>,
    /// `slot[j * n + row]`: the worm whose flit register `j` of switch `row` holds.
    pub(super) slot: Lines<Slot>,
    /// The general kernel's number of the first input VC of the level.
    pub(super) vc_base: u32,
}

impl Level {
    /// Bytes of a level of `nv` input VCs per switch, B = `b`, `n` switches.
    pub(super) fn bytes(nv: usize, b: usize, n: usize) -> u64 {
        let words = n.div_ceil(64) as u64;
        // full, head, tail, act, dir, hold[B], and two pointers per direction.
        let plane = |count: u64| Lines::<u64>::bytes((count * nv as u64 * words) as usize);
        5 * plane(1) + plane(b as u64) + 2 * plane(2) + Lines::<Slot>::bytes(nv * n)
    }

    /// The general kernel's number of input VC `j` of switch `row`.
    #[inline(always)]
    pub(super) fn vc(&self, row: usize, j: usize) -> u32 {
        self.vc_base + (row * self.nv + j) as u32
    }

    /// Index of input VC `j` of word `w` in the planes `full`, `head`, `tail`, `act`, `dir`.
    #[inline(always)]
    pub(super) fn at(&self, j: usize, w: usize) -> usize {
        at(j, w, self.nv)
    }

    pub(super) fn new(nv: usize, b: usize, n: usize, words: usize, vc_base: u32) -> Result<Self> {
        let planes = |count: usize| Lines::new(count * words, 0u64, "inputs", n);
        let mut pointers = planes(2 * nv)?;
        // Every pointer starts at input VC 0.
        for pointer in pointers.chunks_exact_mut(nv) {
            pointer[0] = !0;
        }
        Ok(Level {
            nv,
            full: planes(nv)?,
            head: planes(nv)?,
            tail: planes(nv)?,
            act: planes(nv)?,
            dir: planes(nv)?,
            hold: planes(nv * b)?,
            rr: pointers.clone(),
            lrr: pointers,
            slot: Lines::new(nv * n, Slot::default(), "inputs", n)?,
            vc_base,
        })
    }
}

/// The worm a register holds a flit of: its message and destination, whose bits are the
/// routing digits, kept beside it so that a hop reads no message table. Written where a
/// header enters; the body flits that follow it into the same register belong to the same
/// worm (the output VC feeding it is held until the tail passes), so they write nothing.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Slot {
    pub(super) msg: u32,
    pub(super) destination: u32,
}

impl Slot {
    /// The header as the books see it, having crossed `hops` links.
    #[inline(always)]
    pub(super) fn head(&self, hops: usize) -> FlitSlot {
        FlitSlot {
            msg: self.msg,
            seq: 0,
            hop: hops as u16,
        }
    }
}
