//! [CMSV] Theorem 1.14(b) by Monte Carlo: how many random worms a butterfly can route in one
//! phase, without delaying any of them.
//!
//! Worms that start together on the butterfly move in lock step, level by level, along their
//! unique bit-fixing paths, so two of them meet on a link exactly when their paths share it.
//! A set of worms therefore fits into one phase (L cycles per level, no worm delayed) exactly
//! when no link carries more than B of them. The theorem's proof bounds the probability that a
//! random set of m worms does so, and concludes that an algorithm which never delays a worm
//! needs many phases.

use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use rand::RngExt;

/// Most worms × levels one job walks (samples × m × lg n).
const MAX_WORK: u64 = 1 << 32;

/// The busiest link's number of worms in each of `samples` random sets of `m` worms on the
/// butterfly with `n` inputs. A set is m distinct worms of the q·n that q worms per input make
/// (every subset equally likely), each to a uniformly random output.
pub fn max_loads(n: u32, q: u32, m: u32, samples: u32, seed: u64) -> Result<Vec<u32>> {
    if !(2..=1 << 16).contains(&n) || !n.is_power_of_two() {
        return Err(Error::invalid("inputs", n, "a power of two in 2..=65536"));
    }
    let worms = u64::from(n) * u64::from(q);
    if q == 0 || worms > 1 << 20 {
        return Err(Error::invalid(
            "q",
            q,
            "1 or more, with q·n at most 2^20 worms",
        ));
    }
    if !(1..=1 << 20).contains(&samples) {
        return Err(Error::invalid("samples", samples, "1..=1048576"));
    }
    if m == 0 || u64::from(m) > worms {
        return Err(Error::invalid("m", m, format!("1..={worms} (q·n)")));
    }
    let lg = n.trailing_zeros();
    let work = u64::from(samples) * u64::from(m) * u64::from(lg);
    if work > MAX_WORK {
        return Err(Error::invalid(
            "samples",
            samples,
            format!("samples x m x lg n at most {MAX_WORK}"),
        ));
    }
    let mut rng: Rng = stream(seed, Stream::Traffic);
    // a partial shuffle of any permutation of the worms draws a uniform subset
    let mut order: Vec<u32> = (0..worms as u32).collect();
    let mut load = vec![0u32; (2 * n * lg) as usize];
    let mut used = Vec::with_capacity((m * lg) as usize);
    let mut out = Vec::with_capacity(samples as usize);
    for _ in 0..samples {
        let mut busiest = 0;
        for k in 0..m as usize {
            let pick = rng.random_range(k..order.len());
            order.swap(k, pick);
            let mut col = order[k] / q;
            let destination = rng.random_range(0..n);
            for level in 0..lg {
                let bit = 1 << (lg - 1 - level);
                let next = (col & !bit) | (destination & bit);
                let link = ((level * n + col) * 2 + u32::from(next != col)) as usize;
                if load[link] == 0 {
                    used.push(link);
                }
                load[link] += 1;
                busiest = busiest.max(load[link]);
                col = next;
            }
        }
        for &l in &used {
            load[l] = 0;
        }
        used.clear();
        out.push(busiest);
    }
    Ok(out)
}

/// The proof's upper bound on the probability that m random worms fit into one phase at
/// bandwidth `b` on `n` inputs, exp(−(lg n / (3 lg lg n)) · m^(B+1) / ((7n)^B (B + 1)^(B+1)))
/// as far as the damaged text can be read; it assumes m ≥ 7Bn / lg n and lg lg n ≥ 2 (`None`
/// otherwise).
pub fn one_phase_bound(n: u32, m: u32, b: u32) -> Option<f64> {
    let lg = f64::from(n.trailing_zeros());
    let (nf, mf, bf) = (f64::from(n), f64::from(m), f64::from(b));
    if lg < 4.0 || mf < 7.0 * bf * nf / lg {
        return None;
    }
    let exponent = lg / (3.0 * lg.log2()) * mf.powf(bf + 1.0)
        / ((7.0 * nf).powf(bf) * (bf + 1.0).powf(bf + 1.0));
    Some((-exponent).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worm_always_fits_and_every_worm_of_a_full_set_shares_its_first_link() {
        let one = max_loads(64, 6, 1, 50, 3).unwrap();
        assert!(one.iter().all(|&l| l == 1));
        // q worms per input, all of them: each input's first-level links carry its q worms
        let all = max_loads(16, 4, 64, 20, 3).unwrap();
        assert!(all.iter().all(|&l| l >= 2), "{all:?}");
        assert_eq!(
            max_loads(64, 6, 10, 40, 9).unwrap(),
            max_loads(64, 6, 10, 40, 9).unwrap()
        );
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(max_loads(12, 1, 1, 1, 1).is_err());
        assert!(max_loads(16, 1, 17, 1, 1).is_err());
        assert!(max_loads(16, 0, 1, 1, 1).is_err());
    }

    #[test]
    fn the_bound_holds_only_from_7bn_over_lg_n() {
        assert_eq!(one_phase_bound(1024, 700, 1), None);
        let p = one_phase_bound(1024, 1024, 1).unwrap();
        assert!(p > 0.0 && p < 1e-10, "{p}");
        assert!(one_phase_bound(1024, 2048, 2).unwrap() < one_phase_bound(1024, 1500, 2).unwrap());
    }
}
