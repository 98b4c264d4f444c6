//! The flexible sorter's build-time side ([BB] §4.1): its parameters, the control stores
//! precomputed from the Columnsort schedules by the looping algorithm and scattered to the
//! Omega switches and cells, and the exact cycle count of a sort without simulating
//! ([`sort_cycles`]).

use super::batcher::odd_even_merge_sort;
use super::looping;
use super::schedule::{Condition, phases, schedule};
use crate::error::{Error, Result};
use crate::flit::clog2;

/// Parameters of a `(b, s, l)`-flexible sorter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SorterParams {
    /// Rings (column height), a power of two ≥ 2.
    pub s: u32,
    /// Capacity in words; `l/s` cells per ring, a power of two.
    pub l: u32,
    /// Key bits per word (1..=32); every word carries one more bit, the dummy flag.
    pub bits: u32,
}

impl SorterParams {
    /// Cells per ring `l/s`.
    pub fn cells(&self) -> u32 {
        self.l / self.s
    }

    /// Bits per stored word, `b + 1`.
    pub fn word(&self) -> u32 {
        self.bits + 1
    }

    /// `lg s`.
    pub fn lg_s(&self) -> u32 {
        self.s.trailing_zeros()
    }

    /// Checks the ranges, and that Columnsort's recursion works for every `w ≤ l/s`.
    pub fn validate(&self) -> Result<()> {
        if !(2..=64).contains(&self.s) || !self.s.is_power_of_two() {
            return Err(Error::invalid("s", self.s, "a power of two from 2 to 64"));
        }
        if self.l < self.s
            || !self.l.is_multiple_of(self.s)
            || !self.cells().is_power_of_two()
            || self.cells() > 64
        {
            return Err(Error::invalid(
                "l",
                self.l,
                format!("s times a power of two from 1 to 64 (s = {})", self.s),
            ));
        }
        if !(1..=32).contains(&self.bits) {
            return Err(Error::invalid("bits", self.bits, "1 to 32"));
        }
        let mut w = 1;
        while w <= self.cells() {
            if phases(self.s * w, self.s, Condition::Paper).is_none() {
                return Err(Error::invalid(
                    "(s, l)",
                    format!("({}, {})", self.s, self.l),
                    format!(
                        "a pair for which Columnsort's recursion works for every w up to l/s (fails at w = {w}; s >= 8 always works)"
                    ),
                ));
            }
            w *= 2;
        }
        Ok(())
    }

    /// Rotate `x` left by one within `lg s` bits (the perfect shuffle).
    pub fn rotl(&self, x: u32) -> u32 {
        let k = self.lg_s();
        ((x << 1) | (x >> (k - 1))) & (self.s - 1)
    }

    /// Rotate `x` right by one within `lg s` bits.
    pub fn rotr(&self, x: u32) -> u32 {
        let k = self.lg_s();
        ((x >> 1) | ((x & 1) << (k - 1))) & (self.s - 1)
    }
}

/// The precomputed control stores and schedules of one sorter.
#[derive(Clone, Debug)]
pub struct Controls {
    pub params: SorterParams,
    /// `β(w)` per `lg w`.
    pub phases: Vec<u32>,
    /// Omega switch stores: `omega[k][m]`, all fields concatenated.
    pub omega: Vec<Vec<Vec<bool>>>,
    /// Start of each field (per `lg w`) in every Omega store.
    pub omega_offset: Vec<u32>,
    /// Cell stores: `cell[ρ][c]`.
    pub cell: Vec<Vec<Vec<bool>>>,
    /// Start of each field (per `lg w`) in the stores of cell position `c`: `cell_offset[c][lg w]`.
    pub cell_offset: Vec<Vec<u32>>,
    /// Column comparators, layer by layer.
    pub comparators: Vec<Vec<(u32, u32)>>,
    /// The Columnsort permutations per `lg w` (on column-major indices), for the checks.
    pub schedules: Vec<Vec<Vec<u32>>>,
}

/// The in-ring stage dimensions of width `w`: `lg w − 1, …, 0, …, lg w − 1`.
pub fn inring_dims(w: u32) -> Vec<u32> {
    looping::stage_dims(w.trailing_zeros())
}

impl Controls {
    /// Computes every control bit: for each `w = 2 … l/s`, the Columnsort schedule, each phase's
    /// permutation as a Beneš line permutation, its looping-algorithm controls, scattered to
    /// the Omega switches and cells ([BB] §4.1).
    pub fn new(params: SorterParams) -> Result<Self> {
        params.validate()?;
        let (s, c_max, lg_s) = (params.s, params.cells(), params.lg_s());
        let mut omega = vec![vec![Vec::new(); (s / 2) as usize]; lg_s as usize];
        let mut cell = vec![vec![Vec::new(); c_max as usize]; s as usize];
        let mut omega_offset = Vec::new();
        let mut cell_offset = vec![Vec::new(); c_max as usize];
        let mut phase_counts = Vec::new();
        let mut schedules = Vec::new();
        let mut w = 1;
        while w <= c_max {
            let sched = schedule(s, w, Condition::Paper)?;
            phase_counts.push(sched.phases() as u32);
            schedules.push(sched.perms.clone());
            omega_offset.push(omega[0].first().map_or(0, |v| v.len() as u32));
            for (c, off) in cell_offset.iter_mut().enumerate() {
                off.push(cell[0][c].len() as u32);
            }
            if w >= 2 {
                let lg_w = w.trailing_zeros();
                let dims = looping::stage_dims(lg_s + lg_w);
                for perm in &sched.perms {
                    // σ(ℓ) = line(π(index(ℓ))), line(p) = (p mod s)·w + ⌊p / s⌋.
                    let line = |p: u32| (p % s) * w + p / s;
                    let mut sigma = vec![0u32; (s * w) as usize];
                    for p in 0..s * w {
                        sigma[line(p) as usize] = line(perm[p as usize]);
                    }
                    let ctl = looping::route(&sigma)?;
                    let bit = |stage: usize, x: u32| {
                        let e = dims[stage];
                        let m = ((x >> (e + 1)) << e) | (x & ((1 << e) - 1));
                        ctl.stages[stage][m as usize]
                    };
                    // Omega forward pass: stages 0 .. lg s on ring bit lg s − 1 − k.
                    for k in 0..lg_s {
                        for m in 0..s / 2 {
                            let mut rho = 2 * m;
                            for _ in 0..=k {
                                rho = params.rotr(rho);
                            }
                            for c in 0..w {
                                omega[k as usize][m as usize].push(bit(k as usize, rho * w + c));
                            }
                        }
                    }
                    // Omega reverse pass: ring bit lg s − 1 − k is Beneš stage 2D − 2 − k.
                    let last = dims.len() - 1;
                    for k in 0..lg_s {
                        for m in 0..s / 2 {
                            let mut rho = 2 * m;
                            for _ in 0..(lg_s - 1 - k) {
                                rho = params.rotl(rho);
                            }
                            let stage = last - k as usize;
                            for c in 0..w {
                                omega[k as usize][m as usize].push(bit(stage, rho * w + c));
                            }
                        }
                    }
                    // In-ring stages: Beneš stages lg s … lg s + 2 lg w − 2; owners have bit j clear.
                    for (t, &j) in inring_dims(w).iter().enumerate() {
                        let stage = lg_s as usize + t;
                        for rho in 0..s {
                            for c in 0..w {
                                if c & (1 << j) == 0 {
                                    cell[rho as usize][c as usize].push(bit(stage, rho * w + c));
                                }
                            }
                        }
                    }
                }
            }
            w *= 2;
        }
        // Every store ends with a 0 read past its last field.
        for stage in &mut omega {
            for st in stage.iter_mut() {
                st.push(false);
            }
        }
        for ring in &mut cell {
            for st in ring.iter_mut() {
                st.push(false);
            }
        }
        Ok(Controls {
            params,
            phases: phase_counts,
            omega,
            omega_offset,
            cell,
            cell_offset,
            comparators: odd_even_merge_sort(s),
            schedules,
        })
    }

    /// Sorter depth (register stages).
    pub fn depth(&self) -> u32 {
        self.comparators.len() as u32
    }

    /// Seek length for `lg w`: the largest field offset any position register must skip.
    pub fn seek_len(&self, lg_w: u32) -> u32 {
        let o = self.omega_offset[lg_w as usize];
        let c = self
            .cell_offset
            .iter()
            .map(|v| v[lg_w as usize])
            .max()
            .unwrap_or(0);
        o.max(c).max(1)
    }

    /// Width of the position registers.
    pub fn ptr_bits(&self) -> u32 {
        let longest = self
            .omega
            .iter()
            .flatten()
            .chain(self.cell.iter().flatten())
            .map(Vec::len)
            .max()
            .unwrap_or(1);
        clog2(longest as u64 + 1)
    }
}

/// Cycles a sort of `r` words takes, from the `start` cycle to the return to IDLE, without
/// simulating (equal to the circuit's count, which depends only on `⌈r/s⌉`):
/// `2 + ⌈r/s⌉·(b+1) + seek + β·(w(b+1) + depth) + [w ≥ 2]·β·(2(w(b+1) + lg s) +
/// Σ_j (2·2^j·(b+1) + 3)) + max(⌈r/s⌉·(b+1), rewind)`. Needs only the phase counts, so it
/// also serves sorters too large to build (the sorting fat-tree's upper nodes).
pub fn sort_cycles(params: SorterParams, r: u32) -> Result<u64> {
    let (s, word) = (params.s, u64::from(params.word()));
    let groups = r.div_ceil(s).max(1);
    if groups > params.cells() {
        return Err(Error::invalid("r", r, format!("1 to l = {}", params.l)));
    }
    let lg_w = groups.next_power_of_two().trailing_zeros();
    let w = 1u32 << lg_w;
    let beta = |w: u32| {
        phases(s * w, s, Condition::Paper).ok_or_else(|| {
            Error::invalid(
                "(s, w)",
                format!("({s}, {w})"),
                "a width Columnsort supports",
            )
        })
    };
    let phase = u64::from(beta(w)?);
    // Store positions: Omega fields 2βw' for w' < w; cell c's fields β(w')·owners(c, w').
    let owners = |c: u32, w: u32| {
        inring_dims(w)
            .iter()
            .filter(|&&j| c & (1 << j) == 0)
            .count() as u64
    };
    let mut omega_off = 0u64;
    let mut cell_off = vec![0u64; params.cells() as usize];
    let mut wp = 2;
    while wp < w {
        let b = u64::from(beta(wp)?);
        omega_off += 2 * b * u64::from(wp);
        for c in 0..wp {
            cell_off[c as usize] += b * owners(c, wp);
        }
        wp *= 2;
    }
    let seek = omega_off
        .max(cell_off.iter().copied().max().unwrap_or(0))
        .max(1);
    let depth = u64::from(super::batcher::depth(s));
    let ww = u64::from(w) * word;
    let mut t = 2 + u64::from(groups) * word + seek + phase * (ww + depth);
    let mut rewind = 0;
    if w >= 2 {
        let inring: u64 = inring_dims(w)
            .iter()
            .map(|&j| 2 * (1u64 << j) * word + 3)
            .sum();
        t += phase * (2 * (ww + u64::from(params.lg_s())) + inring);
        rewind = omega_off + 2 * phase * u64::from(w);
        for c in 0..w {
            rewind = rewind.max(cell_off[c as usize] + phase * owners(c, w));
        }
    }
    Ok(t + (u64::from(groups) * word).max(rewind).max(1))
}
