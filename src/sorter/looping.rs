//! Beneš-network control bits by the looping algorithm ([BB] §4.1).
//!
//! The network on `n = 2^D` lines (`D ≥ 1`) has `2D−1` stages on the dimensions
//! `D−1, D−2, …, 1, 0, 1, …, D−1` ([`stage_dims`]). A stage on dimension `e` has `n/2`
//! switches; switch `m` pairs the lines `x` and `x | 2^e`, where `x` has bit `e` clear and `m` is
//! `x` with bit `e` removed. Control `true` = cross (the two words swap lines). That makes
//! `n·lg n − n/2` switches, not the paper's loose `2n lg n` (docs/interpretations.md, 'Beneš
//! size').
//!
//! [`route`] 2-colours the outermost dimension (each input pair and each output pair splits
//! between the two half-size sub-networks), sets the first and last stage, and recurses into
//! the halves; no switch is forced straight (no Waksman reduction).

use crate::error::{Error, Result};

/// Largest permutation [`route`] accepts: `2^31` lines (indices must fit in `u32`).
pub const MAX_LINES: usize = 1 << 31;

/// Control bits of a Beneš network: `stages[k][m]` is switch `m` of stage `k`, on dimension
/// `stage_dims(dims)[k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenesControls {
    /// `D = lg n`.
    pub dims: u32,
    /// `2D−1` stages of `n/2` controls each; `true` = cross.
    pub stages: Vec<Vec<bool>>,
}

impl BenesControls {
    /// Lines `n = 2^D`.
    pub fn lines(&self) -> usize {
        1 << self.dims
    }

    /// Total switches `n·lg n − n/2`.
    pub fn switch_count(&self) -> usize {
        self.stages.iter().map(Vec::len).sum()
    }
}

/// The dimensions of the `2d−1` stages: `d−1, …, 1, 0, 1, …, d−1` (empty for `d = 0`).
pub fn stage_dims(d: u32) -> Vec<u32> {
    (0..d).rev().chain(1..d).collect()
}

/// The lower line `x` of switch `m` on dimension `e`: `m` with a zero bit inserted at `e`.
fn low_line(m: usize, e: u32) -> usize {
    let low = m & ((1 << e) - 1);
    ((m >> e) << (e + 1)) | low
}

/// Control bits realising `perm` (`perm[i]` = output line of input line `i`), by the looping
/// algorithm. `perm` must be a permutation of `0..n` with `n` a power of two, `2 ≤ n ≤ 2^31`.
pub fn route(perm: &[u32]) -> Result<BenesControls> {
    let n = perm.len();
    if n < 2 || !n.is_power_of_two() || n > MAX_LINES {
        return Err(Error::invalid(
            "permutation length",
            n,
            "a power of two from 2 to 2^31",
        ));
    }
    let mut seen = vec![false; n];
    for (i, &d) in perm.iter().enumerate() {
        let d = d as usize;
        if d >= n || std::mem::replace(&mut seen[d], true) {
            return Err(Error::invalid(
                "permutation",
                format!("entry {i} = {d}"),
                format!("each of 0..{n} exactly once"),
            ));
        }
    }
    let dims = n.trailing_zeros();
    let nstages = (2 * dims - 1) as usize;
    let mut stages = vec![vec![false; n / 2]; nstages];
    // Work list: (depth k, prefix of fixed top bits, local permutation on 2^(dims-k) lines).
    let mut work = vec![(0u32, 0usize, perm.to_vec())];
    let mut colour = Vec::new();
    let mut inv = Vec::new();
    while let Some((k, prefix, p)) = work.pop() {
        let d = dims - k;
        let size = p.len();
        let half = size / 2;
        // Switch m of a sub-network with this prefix is global switch prefix·half + m.
        let base = prefix * half;
        if d == 1 {
            stages[k as usize][base] = p[0] == 1;
            continue;
        }
        inv.clear();
        inv.resize(size, 0usize);
        for (i, &y) in p.iter().enumerate() {
            inv[y as usize] = i;
        }
        // colour[i] = sub-network (0 upper, 1 lower) carrying the word of local input i.
        colour.clear();
        colour.resize(size, u8::MAX);
        for start in 0..size {
            if colour[start] != u8::MAX {
                continue;
            }
            let mut i = start;
            loop {
                colour[i] = 0;
                let partner = i ^ half;
                colour[partner] = 1;
                // The other word bound for partner's output pair must take sub-network 0.
                let next = inv[(p[partner] as usize) ^ half];
                if colour[next] != u8::MAX {
                    debug_assert_eq!(colour[next], 0);
                    break;
                }
                i = next;
            }
        }
        let (first, last) = (k as usize, nstages - 1 - k as usize);
        let mask = half - 1;
        let mut subs = [vec![0u32; half], vec![0u32; half]];
        for (i, &y) in p.iter().enumerate() {
            let b = colour[i] as usize;
            let y = y as usize;
            if i < half {
                stages[first][base + i] = b == 1;
            }
            if b == 0 {
                // Leaves sub-network 0 on line y & mask; cross if it is bound for the lower half.
                stages[last][base + (y & mask)] = y >= half;
            }
            subs[b][i & mask] = (y & mask) as u32;
        }
        let [s0, s1] = subs;
        work.push((k + 1, prefix * 2, s0));
        work.push((k + 1, prefix * 2 + 1, s1));
    }
    Ok(BenesControls { dims, stages })
}

/// Push `data` (word on input line `i` at `data[i]`) through the network: the result has the
/// word from line `i` at index `perm[i]` for the `perm` the controls were routed from.
///
/// # Panics
/// If `data.len()` is not the number of lines, or the stage shapes are inconsistent.
pub fn apply<T: Copy>(c: &BenesControls, data: &[T]) -> Vec<T> {
    let n = c.lines();
    assert_eq!(data.len(), n, "data length must equal the Beneš lines");
    let dims = stage_dims(c.dims);
    assert_eq!(c.stages.len(), dims.len(), "expected 2D-1 stages");
    let mut out = data.to_vec();
    for (stage, &e) in c.stages.iter().zip(&dims) {
        assert_eq!(stage.len(), n / 2, "expected n/2 switches per stage");
        for (m, &cross) in stage.iter().enumerate() {
            if cross {
                let x = low_line(m, e);
                out.swap(x, x | (1 << e));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    use rand_chacha::ChaCha8Rng;

    fn check(perm: &[u32]) -> BenesControls {
        let c = route(perm).unwrap();
        let data: Vec<u32> = (0..perm.len() as u32).collect();
        let out = apply(&c, &data);
        for (i, &d) in perm.iter().enumerate() {
            assert_eq!(out[d as usize], i as u32, "perm {perm:?}");
        }
        c
    }

    #[test]
    fn stage_dimensions() {
        assert_eq!(stage_dims(1), vec![0]);
        assert_eq!(stage_dims(3), vec![2, 1, 0, 1, 2]);
        assert_eq!(stage_dims(5), vec![4, 3, 2, 1, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn switch_numbering() {
        assert_eq!(low_line(0, 0), 0);
        assert_eq!(low_line(3, 0), 6);
        assert_eq!(low_line(3, 1), 5);
        assert_eq!(low_line(5, 2), 9);
        for e in 0..4 {
            let lows: Vec<usize> = (0..8).map(|m| low_line(m, e)).collect();
            let want: Vec<usize> = (0..16).filter(|x| x & (1 << e) == 0).collect();
            assert_eq!(lows, want);
        }
    }

    #[test]
    fn identity_and_reversal() {
        for d in 1..=6 {
            let n = 1u32 << d;
            let id: Vec<u32> = (0..n).collect();
            let c = check(&id);
            assert!(
                c.stages.iter().flatten().all(|&x| !x),
                "identity needs no cross"
            );
            let rev: Vec<u32> = (0..n).rev().collect();
            check(&rev);
        }
        assert_eq!(route(&[1, 0]).unwrap().stages, vec![vec![true]]);
    }

    #[test]
    fn random_permutations_are_realised() {
        let mut rng = ChaCha8Rng::seed_from_u64(0xBE7E5);
        for d in 1..=10u32 {
            let n = 1u32 << d;
            let mut perm: Vec<u32> = (0..n).collect();
            for _ in 0..2000 {
                perm.shuffle(&mut rng);
                let c = check(&perm);
                assert_eq!(c.dims, d);
                assert_eq!(c.stages.len(), (2 * d - 1) as usize);
            }
        }
    }

    #[test]
    fn switch_count() {
        for d in 1..=10u32 {
            let n = 1usize << d;
            let id: Vec<u32> = (0..n as u32).collect();
            let c = route(&id).unwrap();
            assert_eq!(c.lines(), n);
            assert_eq!(c.switch_count(), n * d as usize - n / 2);
        }
    }

    #[test]
    fn columnsort_phases_on_the_benes_lines() {
        // Column-major index p = c·s + ρ ↔ line ℓ = ρ·w + c; σ(ℓ) = line(π(index(ℓ))).
        use crate::sorter::schedule::{Condition, schedule};
        for (s, w) in [(8u32, 2u32), (8, 4), (16, 8), (32, 32)] {
            let sched = schedule(s, w, Condition::Paper).unwrap();
            let line = |p: u32| (p % s) * w + p / s;
            let index = |l: u32| (l % w) * s + l / w;
            for pi in &sched.perms {
                let sigma: Vec<u32> = (0..s * w).map(|l| line(pi[index(l) as usize])).collect();
                let c = check(&sigma);
                assert_eq!(c.stages.len() as u32, 2 * (s * w).trailing_zeros() - 1);
            }
        }
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [&[][..], &[0], &[0, 1, 2], &[0, 0], &[1, 2], &[0, 1, 2, 4]] {
            let err = route(bad).unwrap_err().to_string();
            assert!(err.starts_with("invalid permutation"), "{err}");
        }
    }
}
