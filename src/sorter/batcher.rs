//! Batcher's odd–even merge sort network, a reference column sorter for `s = 2^k` lines
//! (flitforge does not model the internals of the [BP85] sorter that [BB] Lemma 9 uses; this is
//! a structural stand-in for it: docs/interpretations.md, 'Column sorter').

/// The comparator layers of Batcher's odd–even merge sort on `s = 2^k` lines. A comparator
/// `(i, j)` has `i < j` and puts the minimum on `i`, the maximum on `j`; the comparators of one
/// layer touch disjoint lines. There are `k(k+1)/2` layers ([`depth`]); `s = 1` has none.
///
/// # Panics
/// If `s` is not a power of two.
pub fn odd_even_merge_sort(s: u32) -> Vec<Vec<(u32, u32)>> {
    assert!(
        s.is_power_of_two(),
        "odd-even merge sort needs s = 2^k, got {s}"
    );
    let mut layers = Vec::new();
    let mut p = 1;
    // Merge sorted runs of p into runs of 2p; k runs over p, p/2, …, 1.
    while p < s {
        let mut k = p;
        while k >= 1 {
            let mut layer = Vec::new();
            let mut j = k % p;
            while j + k < s {
                for i in 0..k.min(s - j - k) {
                    let (a, b) = (i + j, i + j + k);
                    if a / (2 * p) == b / (2 * p) {
                        layer.push((a, b));
                    }
                }
                j += 2 * k;
            }
            layers.push(layer);
            k /= 2;
        }
        p *= 2;
    }
    layers
}

/// Layers of [`odd_even_merge_sort`]: `k(k+1)/2` for `s = 2^k`.
///
/// # Panics
/// If `s` is not a power of two.
pub fn depth(s: u32) -> u32 {
    assert!(
        s.is_power_of_two(),
        "odd-even merge sort needs s = 2^k, got {s}"
    );
    let k = s.trailing_zeros();
    k * (k + 1) / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn run<T: Ord + Copy>(layers: &[Vec<(u32, u32)>], data: &mut [T]) {
        for layer in layers {
            for &(i, j) in layer {
                let (i, j) = (i as usize, j as usize);
                if data[i] > data[j] {
                    data.swap(i, j);
                }
            }
        }
    }

    #[test]
    fn zero_one_principle_exhaustive() {
        for k in 0..=4 {
            let s = 1u32 << k;
            let net = odd_even_merge_sort(s);
            for bits in 0u32..(1 << s) {
                let mut data: Vec<u32> = (0..s).map(|i| (bits >> i) & 1).collect();
                run(&net, &mut data);
                assert!(data.is_sorted(), "s={s} input {bits:#b}");
            }
        }
    }

    #[test]
    fn random_inputs_32_and_64() {
        let mut rng = ChaCha8Rng::seed_from_u64(64);
        for s in [32u32, 64] {
            let net = odd_even_merge_sort(s);
            let mut perm: Vec<u32> = (0..s).collect();
            for run_no in 0..20_000 {
                let mut data: Vec<u32> = if run_no % 2 == 0 {
                    (0..s).map(|_| rng.random_range(0..2)).collect()
                } else {
                    perm.shuffle(&mut rng);
                    perm.clone()
                };
                let mut want = data.clone();
                want.sort_unstable();
                run(&net, &mut data);
                assert_eq!(data, want, "s={s}");
            }
        }
    }

    #[test]
    fn shape() {
        for k in 0..=10u32 {
            let s = 1u32 << k;
            let net = odd_even_merge_sort(s);
            assert_eq!(net.len() as u32, k * (k + 1) / 2);
            assert_eq!(depth(s), k * (k + 1) / 2);
            for layer in &net {
                let mut used = vec![false; s as usize];
                for &(i, j) in layer {
                    assert!(i < j && j < s);
                    assert!(!std::mem::replace(&mut used[i as usize], true));
                    assert!(!std::mem::replace(&mut used[j as usize], true));
                }
            }
        }
        let count = |s| odd_even_merge_sort(s).iter().map(Vec::len).sum::<usize>();
        assert_eq!(count(8), 19);
        assert_eq!(count(16), 63);
    }
}
