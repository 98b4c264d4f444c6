//! Columnsort with the fold shift and its power-of-two recursive extension, flattened into a
//! schedule of "sort every physical column, then permute" phases ([BB] §4.1, Lemma 8;
//! Columnsort is [Lei85a]).
//!
//! Array convention: an `R × C` array is stored column-major, element `(row ρ, column c)` at
//! index `p = c·R + ρ`. The physical array of the sorter has `s` rows (rings) and `w` columns.
//! A permutation is a `Vec<u32>` with `perm[p]` = destination index of the element at `p`.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which Columnsort height restriction a level of the recursion must satisfy (interpretation:
/// 'Columnsort condition', docs/interpretations.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// The paper's `s ≥ 2^(1/3) r^(2/3)`, i.e. `R ≥ 2·C²` (the default).
    #[default]
    Paper,
    /// Leighton's weaker `R ≥ 2·(C−1)²`.
    Leighton,
}

impl Condition {
    /// Whether an `r × c` array (column height `r`, `c` columns) may be sorted by plain
    /// Columnsort under this condition. `C | R` is always required as well.
    pub fn holds(self, r: u32, c: u32) -> bool {
        let (r, c) = (u64::from(r), u64::from(c));
        let bound = match self {
            Condition::Paper => 2 * c * c,
            Condition::Leighton => 2 * c.saturating_sub(1).pow(2),
        };
        c >= 1 && r.is_multiple_of(c) && r >= bound
    }
}

/// Largest array [`schedule`] accepts: `s·w ≤ 2^20` words.
pub const MAX_WORDS: u64 = 1 << 20;

/// The identity permutation on `n` indices.
pub fn identity(n: u32) -> Vec<u32> {
    (0..n).collect()
}

/// Columnsort step 2, "transpose" `T` on an `r × c` array ([Lei85a]): the element at
/// column-major index `p` moves to `(p mod c)·r + ⌊p/c⌋` (read column-major, write row-major).
///
/// # Panics
/// If `c` is zero or does not divide `r`.
pub fn transpose(r: u32, c: u32) -> Vec<u32> {
    assert!(
        c >= 1 && r.is_multiple_of(c),
        "transpose needs C | R (R = {r}, C = {c})"
    );
    (0..r * c).map(|p| (p % c) * r + p / c).collect()
}

/// Columnsort step 4, "untranspose" `T⁻¹` on an `r × c` array ([Lei85a]).
///
/// # Panics
/// As [`transpose`].
pub fn untranspose(r: u32, c: u32) -> Vec<u32> {
    invert(&transpose(r, c))
}

/// Columnsort step 6, the fold variant of the shift `Sh` on an `r × c` array (interpretation:
/// 'Columnsort's shift', docs/interpretations.md). With `H = r/2`: old `(ρ ≥ H, c' < C−1)` →
/// `(ρ−H, c'+1)`; old `(ρ < H, c' ≥ 1)` → `(ρ+H, c')`; old `(ρ < H, 0)` stays; old
/// `(ρ ≥ H, C−1)` → `(ρ, 0)`. New column 0 is the top half of old column 0 over the bottom half
/// of old column `C−1`; no spare column is needed.
///
/// # Panics
/// If `r` is odd or `c` is zero.
pub fn fold_shift(r: u32, c: u32) -> Vec<u32> {
    assert!(
        r.is_multiple_of(2) && c >= 1,
        "fold shift needs R even and C ≥ 1 (R = {r}, C = {c})"
    );
    let h = r / 2;
    (0..r * c)
        .map(|p| {
            let (col, row) = (p / r, p % r);
            let (col2, row2) = if row >= h && col + 1 < c {
                (col + 1, row - h)
            } else if row < h && col >= 1 {
                (col, row + h)
            } else {
                // (ρ < H, 0) stays; (ρ ≥ H, C−1) keeps its row and moves to column 0.
                (0, row)
            };
            col2 * r + row2
        })
        .collect()
}

/// Columnsort step 8, the inverse `Sh⁻¹` of [`fold_shift`].
///
/// # Panics
/// As [`fold_shift`].
pub fn fold_unshift(r: u32, c: u32) -> Vec<u32> {
    invert(&fold_shift(r, c))
}

/// The inverse permutation: `invert(p)[p[i]] = i`.
pub fn invert(perm: &[u32]) -> Vec<u32> {
    let mut inv = vec![0; perm.len()];
    for (i, &d) in perm.iter().enumerate() {
        inv[d as usize] = i as u32;
    }
    inv
}

/// Apply `first`, then `then`: the result maps `p` to `then[first[p]]`.
pub fn compose(first: &[u32], then: &[u32]) -> Vec<u32> {
    first.iter().map(|&d| then[d as usize]).collect()
}

/// The virtual column height for a problem of `n` words on a sorter of column height `s`
/// (interpretation: 'Recursion', docs/interpretations.md): the smallest power of two `t` with
/// `s ≤ t < n`, `(n/t) | t` and the condition holding for the `t × (n/t)` virtual array. `None`
/// when there is none (always when `n ≤ s`).
pub fn choose_t(n: u32, s: u32, cond: Condition) -> Option<u32> {
    if s == 0 || !s.is_power_of_two() {
        return None;
    }
    let mut t = s;
    while t < n {
        if n.is_multiple_of(t) && cond.holds(t, n / t) {
            return Some(t);
        }
        t = t.checked_mul(2)?;
    }
    None
}

/// The number of column-sorting phases (= permutations) the recursion uses for `n` words
/// ([BB] Lemma 8): 1 if `n ≤ s`, else `4·phases(choose_t(n))`; `None` if some level finds no `t`.
pub fn phases(n: u32, s: u32, cond: Condition) -> Option<u32> {
    if n <= s {
        return Some(1);
    }
    phases(choose_t(n, s, cond)?, s, cond)?.checked_mul(4)
}

/// The paper's phase count `(lg r / lg(s/2))^(2/lg(3/2))` ([BB] Lemma 8).
/// It ignores integrality, so the true count [`phases`] may exceed it.
pub fn paper_bound(r: u32, s: u32) -> f64 {
    let exponent = 2.0 / 1.5f64.log2();
    (f64::from(r).log2() / (f64::from(s) / 2.0).log2()).powf(exponent)
}

/// The flattened schedule `seq(s·w)` (the recursion of [BB] Lemma 8, the permutations between
/// consecutive column sorts merged into one): executing it means, for each `k`, sorting every
/// physical column of `s` words and then applying `perms[k]`. The output is sorted in
/// column-major order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Column height (rings).
    pub s: u32,
    /// Columns.
    pub w: u32,
    /// One permutation on `s·w` column-major indices per phase.
    pub perms: Vec<Vec<u32>>,
}

impl Schedule {
    /// Words sorted: `s·w`.
    pub fn words(&self) -> u32 {
        self.s * self.w
    }

    /// Phases `β(w)` = number of permutations.
    pub fn phases(&self) -> usize {
        self.perms.len()
    }
}

/// Build the flattened schedule for an `s × w` physical array. `s ≥ 2` and `w ≥ 1` must be
/// powers of two with `s·w ≤ 2^20` (the schedule holds `β·s·w` indices), and every recursion
/// level must find a virtual column height ([`choose_t`]); `s = 4, w = 2` is rejected under
/// [`Condition::Paper`].
pub fn schedule(s: u32, w: u32, cond: Condition) -> Result<Schedule> {
    if s < 2 || !s.is_power_of_two() {
        return Err(Error::invalid("s", s, "a power of two >= 2"));
    }
    if w == 0 || !w.is_power_of_two() {
        return Err(Error::invalid("w", w, "a power of two >= 1"));
    }
    let n = u64::from(s) * u64::from(w);
    if n > MAX_WORDS {
        return Err(Error::invalid(
            "s·w",
            n,
            format!("at most 2^20 = {MAX_WORDS}"),
        ));
    }
    let n = n as u32;
    if phases(n, s, cond).is_none() {
        let rule = match cond {
            Condition::Paper => "R >= 2C^2",
            Condition::Leighton => "R >= 2(C-1)^2",
        };
        return Err(Error::invalid(
            "(s, w)",
            format!("({s}, {w})"),
            format!(
                "a pair for which every level of the Columnsort recursion has a power-of-two \
                 virtual column height R >= s with {rule}"
            ),
        ));
    }
    Ok(Schedule {
        s,
        w,
        perms: seq(n, s, cond),
    })
}

/// `seq(n)`, the schedule for `n` words (the caller has checked that [`phases`] succeeds).
fn seq(n: u32, s: u32, cond: Condition) -> Vec<Vec<u32>> {
    if n <= s {
        return vec![identity(n)];
    }
    let t = choose_t(n, s, cond).expect("checked by phases");
    let c = n / t;
    let inner: Vec<Vec<u32>> = seq(t, s, cond).iter().map(|p| lift(p, c)).collect();
    let top = [
        transpose(t, c),
        untranspose(t, c),
        fold_shift(t, c),
        fold_unshift(t, c),
    ];
    let mut out = Vec::with_capacity(4 * inner.len());
    for top_k in &top {
        let (last, rest) = inner.split_last().expect("seq is never empty");
        out.extend(rest.iter().cloned());
        out.push(compose(last, top_k));
    }
    out
}

/// Lift a permutation on `t` local indices to act identically inside each of `c` consecutive
/// blocks of `t` indices.
fn lift(inner: &[u32], c: u32) -> Vec<u32> {
    let t = inner.len() as u32;
    (0..c)
        .flat_map(|b| inner.iter().map(move |&q| b * t + q))
        .collect()
}

/// Run `sched` on `data` (column-major, `s·w` words) in software: sort every physical column,
/// then permute, once per phase.
///
/// # Panics
/// If `data.len() != s·w`.
pub fn run_software<T: Ord + Copy>(sched: &Schedule, data: &mut [T]) {
    assert_eq!(
        data.len(),
        sched.words() as usize,
        "data length must be s·w"
    );
    let mut tmp = data.to_vec();
    for perm in &sched.perms {
        for col in data.chunks_mut(sched.s as usize) {
            col.sort_unstable();
        }
        tmp.copy_from_slice(data);
        for (p, &d) in perm.iter().enumerate() {
            data[d as usize] = tmp[p];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const TABLE: [(u32, &[(u32, u32)]); 3] = [
        (8, &[(1, 1), (2, 4), (4, 16), (8, 64)]),
        (16, &[(1, 1), (2, 4), (4, 16), (8, 16), (16, 64)]),
        (32, &[(1, 1), (2, 4), (4, 4), (8, 16), (16, 16), (32, 16)]),
    ];

    fn is_permutation(p: &[u32]) -> bool {
        let mut seen = vec![false; p.len()];
        p.iter()
            .all(|&d| (d as usize) < p.len() && !std::mem::replace(&mut seen[d as usize], true))
    }

    fn sorts(sched: &Schedule, data: &[u32]) -> bool {
        let mut got = data.to_vec();
        run_software(sched, &mut got);
        let mut want = data.to_vec();
        want.sort_unstable();
        got == want
    }

    #[test]
    fn phase_count_table() {
        for (s, row) in TABLE {
            for &(w, beta) in row {
                assert_eq!(
                    phases(s * w, s, Condition::Paper),
                    Some(beta),
                    "s={s} w={w}"
                );
                let sched = schedule(s, w, Condition::Paper).unwrap();
                assert_eq!(sched.phases(), beta as usize);
                assert!(sched.perms.iter().all(|p| is_permutation(p)));
                assert!(sched.perms.iter().all(|p| p.len() == (s * w) as usize));
            }
        }
    }

    #[test]
    fn leighton_option() {
        assert_eq!(phases(8, 4, Condition::Leighton), Some(4));
        assert_eq!(phases(16, 4, Condition::Leighton), Some(16));
        assert_eq!(schedule(4, 2, Condition::Leighton).unwrap().phases(), 4);
        assert_eq!(schedule(4, 4, Condition::Leighton).unwrap().phases(), 16);
        assert_eq!(choose_t(8, 4, Condition::Paper), None);
        let err = schedule(4, 2, Condition::Paper).unwrap_err().to_string();
        assert!(err.contains("(s, w)") && err.contains("(4, 2)"), "{err}");
    }

    #[test]
    fn validation() {
        for (s, w) in [(0, 1), (1, 2), (3, 2), (6, 1)] {
            let err = schedule(s, w, Condition::Paper).unwrap_err().to_string();
            assert!(err.starts_with("invalid s ="), "{err}");
        }
        for w in [0, 3, 12] {
            let err = schedule(8, w, Condition::Paper).unwrap_err().to_string();
            assert!(err.starts_with("invalid w ="), "{err}");
        }
        assert!(schedule(1 << 16, 1 << 16, Condition::Paper).is_err());
    }

    #[test]
    fn width_one_is_one_identity_phase() {
        let sched = schedule(8, 1, Condition::Paper).unwrap();
        assert_eq!(sched.perms, vec![identity(8)]);
        assert!(sorts(&sched, &[5, 1, 7, 7, 0, 3, 2, 9]));
    }

    #[test]
    fn worked_example_inner_permutations() {
        // The 8×2 inner array of the s = 8, w = 4 example below.
        let t_in = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];
        let u_in = [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15];
        let sh_in = [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7];
        let us_in = [0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 8, 9, 10, 11];
        assert_eq!(transpose(8, 2), t_in);
        assert_eq!(untranspose(8, 2), u_in);
        assert_eq!(fold_shift(8, 2), sh_in);
        assert_eq!(fold_unshift(8, 2), us_in);
    }

    #[test]
    fn worked_example_schedule() {
        // s = 8, w = 4: virtual array 16 × 2 over inner 8 × 2.
        let sched = schedule(8, 4, Condition::Paper).unwrap();
        assert_eq!(choose_t(32, 8, Condition::Paper), Some(16));
        assert_eq!(choose_t(16, 8, Condition::Paper), Some(8));
        let t_top: Vec<u32> = (0..32).map(|p| (p % 2) * 16 + p / 2).collect();
        assert_eq!(transpose(16, 2), t_top);
        let sh_top: Vec<u32> = (0..32)
            .map(|p| match p {
                0..8 => p,
                8..16 => p + 8,
                16..24 => p + 8,
                _ => p - 16,
            })
            .collect();
        assert_eq!(fold_shift(16, 2), sh_top);
        let inner = [
            transpose(8, 2),
            untranspose(8, 2),
            fold_shift(8, 2),
            fold_unshift(8, 2),
        ]
        .map(|p| lift(&p, 2));
        let top = [
            t_top.clone(),
            invert(&t_top),
            sh_top.clone(),
            invert(&sh_top),
        ];
        for (k, perm) in sched.perms.iter().enumerate() {
            let (block, j) = (k / 4, k % 4);
            let want = if j == 3 {
                compose(&inner[3], &top[block])
            } else {
                inner[j].clone()
            };
            assert_eq!(perm, &want, "phase {}", k + 1);
        }
    }

    #[test]
    fn fixed_permutations_are_inverse_pairs() {
        for (r, c) in [(2, 1), (2, 2), (8, 2), (16, 4), (32, 4), (64, 8)] {
            let n = (r * c) as usize;
            let t = transpose(r, c);
            assert!(is_permutation(&t));
            assert_eq!(compose(&t, &untranspose(r, c)), identity(r * c));
            let sh = fold_shift(r, c);
            assert!(is_permutation(&sh));
            assert_eq!(compose(&sh, &fold_unshift(r, c)), identity(r * c));
            assert_eq!(sh.len(), n);
        }
    }

    #[test]
    fn exhaustive_zero_one_inputs() {
        for (s, w, cond) in [
            (2, 2, Condition::Leighton),
            (4, 2, Condition::Leighton),
            (4, 4, Condition::Leighton),
            (8, 2, Condition::Paper),
        ] {
            let sched = schedule(s, w, cond).unwrap();
            let n = s * w;
            for bits in 0u32..(1 << n) {
                let data: Vec<u32> = (0..n).map(|i| (bits >> i) & 1).collect();
                assert!(sorts(&sched, &data), "s={s} w={w} input {bits:#b}");
            }
        }
    }

    #[test]
    fn random_inputs_with_duplicates() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5027);
        for (s, row) in TABLE {
            for &(w, _) in row {
                let sched = schedule(s, w, Condition::Paper).unwrap();
                let n = (s * w) as usize;
                // Thousands for small arrays, fewer where one run is long.
                let runs = (4_000_000 / (n * sched.phases())).clamp(200, 3000);
                for run in 0..runs {
                    let data: Vec<u32> = match run % 4 {
                        0 => (0..n).map(|_| rng.random_range(0..2)).collect(),
                        1 => (0..n).map(|_| rng.random_range(0..4)).collect(),
                        2 => {
                            let mut v: Vec<u32> = (0..n as u32).collect();
                            v.shuffle(&mut rng);
                            v
                        }
                        _ => {
                            let k = rng.random_range(1..=n as u32);
                            (0..n).map(|_| rng.random_range(0..k)).collect()
                        }
                    };
                    assert!(sorts(&sched, &data), "s={s} w={w} input {data:?}");
                }
            }
        }
    }

    #[test]
    fn leighton_schedules_sort_random_inputs() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for (s, w) in [(4, 8), (8, 4), (8, 8)] {
            let sched = schedule(s, w, Condition::Leighton).unwrap();
            let n = (s * w) as usize;
            for _ in 0..1000 {
                let data: Vec<u32> = (0..n).map(|_| rng.random_range(0..3)).collect();
                assert!(sorts(&sched, &data), "s={s} w={w} input {data:?}");
            }
        }
    }

    #[test]
    fn paper_condition_at_every_level() {
        for (s, row) in TABLE {
            for &(w, _) in row {
                let mut n = s * w;
                while n > s {
                    let t = choose_t(n, s, Condition::Paper).unwrap();
                    let c = n / t;
                    assert!(
                        t >= s && t < n && t.is_multiple_of(c),
                        "s={s} w={w} n={n} t={t}"
                    );
                    assert!(t >= 2 * c * c, "s={s} w={w} n={n}: {t} × {c}");
                    n = t;
                }
                assert_eq!(n, s);
            }
        }
    }

    #[test]
    fn paper_bound_values() {
        // [BB] Lemma 8's count, rounded to one decimal.
        let want = [
            (8, &[4.0, 10.7, 22.9, 42.8][..]),
            (16, &[2.7, 5.7, 10.7, 18.1, 28.6]),
            (32, &[2.1, 4.0, 6.8, 10.7, 16.0, 22.9]),
        ];
        for (s, vals) in want {
            for (k, &v) in vals.iter().enumerate() {
                let got = paper_bound(s << k, s);
                assert!((got - v).abs() < 0.051, "s={s} w={}: {got} vs {v}", 1 << k);
            }
        }
    }
}
