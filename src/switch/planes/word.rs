//! The word-level logic of the bit-plane kernel ([`super`]): for one word of 64 switches of a
//! level, the round-robin VC allocation and link arbitration of [`crate::switch::logic`]
//! (rules 2 and 4) over one-hot pointer planes, and where leaving flits land in the next
//! level (the butterfly's bit flip, [CMS] §1.2).

// Bit-sliced logic indexes several planes by the same VC in one loop.
#![allow(clippy::needless_range_loop)]

use super::MAX_VCS;
use super::registers::at;

/// Rows whose bit `k` is 0, for `k < 6` (the bit picks a row within a word).
pub(super) const LOW_HALF: [u64; 6] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0F0F_0F0F_0F0F_0F0F,
    0x00FF_00FF_00FF_00FF,
    0x0000_FFFF_0000_FFFF,
    0x0000_0000_FFFF_FFFF,
];

/// Input VC `j` of a switch above level 0 on `port`, VC `v`.
#[inline(always)]
pub(super) fn port_vc(port: usize, v: usize, b: usize) -> usize {
    port * b + v
}

/// Where the flits leaving the registers of output VC `v` of one word of a level land in
/// the next: a flit of row `r` leaving in direction `o` enters row `r` with bit `k` set to
/// `o`, in input VC `port · B + v` where the port is `r`'s bit `k` (the butterfly's bit
/// flip, [CMS] §1.2). Below bit 6 the rows move within the word, into the planes of both
/// ports; from bit 6 on, whole words move, within one port's plane.
pub(super) struct Landing {
    /// The next level's two registers (plane indices, word-major) the word's flits enter.
    at: [usize; 2],
    /// `[x0, x1]` entering `at` from `[to0, to1]` leaving: `x0 = (to0 & m[0]) | ((to1 &
    /// m[1]) << shift)`, `x1 = ((to0 & m[2]) >> shift) | (to1 & m[3])` (the masks computed
    /// once for every plane).
    m: [u64; 4],
    shift: u32,
}

impl Landing {
    /// The landing of word `w`'s flits on VC `v` (B = `b`), routing bit `k`, into a level of
    /// `nv` input VCs per switch.
    #[inline(always)]
    pub(super) fn new(k: u32, w: usize, nv: usize, v: usize, b: usize) -> Self {
        let ports = [port_vc(0, v, b), port_vc(1, v, b)];
        if k >= 6 {
            let bit = 1usize << (k - 6);
            let j = ports[usize::from(w & bit != 0)];
            Landing {
                at: [at(j, w & !bit, nv), at(j, w | bit, nv)],
                m: [!0, 0, 0, !0],
                shift: 0,
            }
        } else {
            let low = LOW_HALF[k as usize];
            Landing {
                at: [at(ports[0], w, nv), at(ports[1], w, nv)],
                m: [low, low, !low, !low],
                shift: 1 << k,
            }
        }
    }

    /// Sets in the next level's `plane` the bits of the rows that the rows of the word in
    /// `to[o]` enter, leaving in direction `o`.
    #[inline(always)]
    pub(super) fn or(&self, plane: &mut [u64], [to0, to1]: [u64; 2]) {
        if to0 | to1 == 0 {
            return;
        }
        let ([m0, m1, m2, m3], shift) = (self.m, self.shift);
        plane[self.at[0]] |= (to0 & m0) | ((to1 & m1) << shift);
        plane[self.at[1]] |= ((to0 & m2) >> shift) | (to1 & m3);
    }
}

/// VC allocation of one direction (rule 2 of [`crate::switch::logic`]) for a word: the
/// requesters `req` in round-robin order from the one-hot `pointer` (its planes `j < nv` of
/// the word), the k-th of them given the k-th `free` output VC; the grants go to `grant` and
/// `granted_vc`, and the pointer moves past the last requester served.
#[inline(always)]
pub(super) fn allocate<const V: usize, const NV: usize>(
    nv: usize,
    b: usize,
    req: &[u64; NV],
    free: &[u64; V],
    pointer: &mut [u64],
    grant: &mut [u64; NV],
    granted_vc: &mut [[u64; V]; NV],
) {
    let (mut requesting, mut several) = (0, 0);
    for j in 0..nv {
        several |= requesting & req[j];
        requesting |= req[j];
    }
    if several == 0 {
        // No row has two requesters (the common case): each is its row's first, granted its
        // row's first free output VC, and the pointer moves past it.
        let (mut first, mut any_free) = ([0u64; V], 0u64);
        for v in 0..b {
            first[v] = free[v] & !any_free;
            any_free |= free[v];
        }
        let mut served = [0u64; NV];
        for j in 0..nv {
            let r = req[j] & any_free;
            for v in 0..b {
                granted_vc[j][v] |= r & first[v];
            }
            grant[j] |= r;
            served[j] = r;
        }
        return move_pointer::<NV>(nv, &served, pointer);
    }
    // rank[j][c]: requester j has exactly c requesters before it in round-robin order (c < B);
    // only rows with a requester need it. A row's only requester is its first whatever the
    // pointer; the order from the pointer ranks the rows with several. (No branch skips an
    // empty plane here or below: which are empty is as random as the traffic, and an empty
    // plane changes nothing.)
    let mut rank = [[0u64; V]; NV];
    for j in 0..nv {
        rank[j][0] = req[j] & !several;
    }
    for q in 0..nv {
        let at = pointer[q] & several;
        // count[c]: exactly c requests so far (count[b]: b or more).
        let mut count = [0u64; MAX_VCS + 1];
        count[0] = at;
        for step in 0..nv {
            let j = if q + step >= nv {
                q + step - nv
            } else {
                q + step
            };
            let r = req[j];
            for c in 0..b {
                rank[j][c] |= count[c];
            }
            count[b] |= count[b - 1] & r;
            for c in (1..b).rev() {
                count[c] = (count[c] & !r) | (count[c - 1] & r);
            }
            count[0] &= !r;
        }
    }
    // pick[c][v]: output VC v is the c-th free one.
    let mut pick = [[0u64; V]; V];
    let mut before = [0u64; MAX_VCS + 1];
    before[0] = !0;
    for v in 0..b {
        let f = free[v];
        for c in 0..b {
            pick[c][v] = f & before[c];
        }
        before[b] |= before[b - 1] & f;
        for c in (1..b).rev() {
            before[c] = (before[c] & !f) | (before[c - 1] & f);
        }
        before[0] &= !f;
    }
    // Who is granted, at which rank; the last one served moves the pointer.
    let mut ranked = [0u64; V];
    let mut granted_at = [[0u64; V]; NV];
    for j in 0..nv {
        let mut g = 0;
        for c in 0..b {
            let mut at = 0;
            for v in 0..b {
                let x = req[j] & rank[j][c] & pick[c][v];
                granted_vc[j][v] |= x;
                at |= x;
            }
            granted_at[j][c] = at;
            ranked[c] |= at;
            g |= at;
        }
        grant[j] |= g;
    }
    let mut later = 0u64;
    let mut last = [0u64; NV];
    for c in (0..b).rev() {
        for j in 0..nv {
            last[j] |= granted_at[j][c] & !later;
        }
        later |= ranked[c];
    }
    move_pointer::<NV>(nv, &last, pointer);
}

/// The one-hot `pointer` (planes `j < nv` of a word) moves past the requester in `served`
/// (at most one per row); rows with none keep it.
#[inline(always)]
fn move_pointer<const NV: usize>(nv: usize, served: &[u64; NV], pointer: &mut [u64]) {
    let any = served[..nv].iter().fold(0, |a, &s| a | s);
    if any == 0 {
        return;
    }
    let pointer = &mut pointer[..nv];
    for j in 0..nv {
        let from = if j == 0 { nv - 1 } else { j - 1 };
        pointer[j] = (pointer[j] & !any) | served[from];
    }
}

/// Link arbitration (rule 4 of [`crate::switch::logic`]) for a word: of the `candidates`, the
/// first in round-robin order from the one-hot `pointer` (planes `j < nv` of the word) wins;
/// the pointer moves past it.
#[inline(always)]
pub(super) fn round_robin_first<const NV: usize>(
    nv: usize,
    candidates: &[u64; NV],
    pointer: &mut [u64],
) -> [u64; NV] {
    // A row's only candidate is the first; the order from the pointer picks among several.
    let (mut candidate, mut contested) = (0, 0);
    for j in 0..nv {
        contested |= candidate & candidates[j];
        candidate |= candidates[j];
    }
    let mut first = [0u64; NV];
    for j in 0..nv {
        first[j] = candidates[j] & !contested;
    }
    for q in 0..nv {
        if contested == 0 {
            break;
        }
        let at = pointer[q] & contested;
        if at == 0 {
            continue;
        }
        let mut seen = 0u64;
        for step in 0..nv {
            let j = if q + step >= nv {
                q + step - nv
            } else {
                q + step
            };
            first[j] |= at & !seen & candidates[j];
            seen |= candidates[j];
        }
    }
    move_pointer::<NV>(nv, &first, pointer);
    first
}
