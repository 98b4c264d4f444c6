//! Verdicts on a claim's normalised ratio over growing sizes: what the numbers show, never
//! more.

use serde::Serialize;

/// What the numbers show.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Verdict {
    Holds(String),
    Fails(String),
    Inconclusive(String),
}

impl Verdict {
    /// The verdict as claims.md prints it.
    pub fn text(&self) -> String {
        match self {
            Verdict::Holds(w) => format!("**holds** — {w}"),
            Verdict::Fails(w) => format!("**fails** — {w}"),
            Verdict::Inconclusive(w) => format!("**inconclusive** — {w}"),
        }
    }
}

/// What a claim bounds: O (the ratio must stay bounded) or Θ (bounded and not vanishing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Upper,
    Tight,
}

/// Judges a ratio series over increasing sizes: bounded and flattening over its upper half
/// (growth ≤ 1.3 and the last step ≤ 1.1; for a Θ claim also no fall below ÷1.3 and a last
/// step of at least ÷1.1) holds; steady growth (or, for Θ, steady fall) fails; fewer than
/// three points, or change that is not steady, is inconclusive.
pub fn judge(points: &[(f64, f64)], bound: Bound) -> Verdict {
    if points.len() < 3 {
        return Verdict::Inconclusive(format!(
            "{} size(s) measured; three are needed to see a trend",
            points.len()
        ));
    }
    let tail = &points[points.len() / 2..];
    let tail = if tail.len() < 3 {
        &points[points.len() - 3..]
    } else {
        tail
    };
    let first = tail[0].1;
    let last = tail[tail.len() - 1].1;
    let growth = last / first;
    let step = last / tail[tail.len() - 2].1;
    let increasing = tail.windows(2).all(|w| w[1].1 > w[0].1);
    let decreasing = tail.windows(2).all(|w| w[1].1 < w[0].1);
    let tight = bound == Bound::Tight;
    let range = format!(
        "ratio {:.3} at {} to {:.3} at {} (×{growth:.2}; last step ×{step:.3})",
        first,
        size(tail[0].0),
        last,
        size(tail[tail.len() - 1].0)
    );
    let flat_below = !tight || (growth >= 1.0 / 1.3 && step >= 1.0 / 1.1);
    if growth <= 1.3 && step <= 1.1 && flat_below {
        Verdict::Holds(range)
    } else if increasing && growth > 1.3 {
        Verdict::Fails(format!("the ratio grows: {range}"))
    } else if tight && decreasing {
        Verdict::Fails(format!(
            "the ratio falls, so the quantity grows slower than the claimed order: {range}"
        ))
    } else {
        Verdict::Inconclusive(format!(
            "the ratio neither settles nor grows steadily: {range}"
        ))
    }
}

/// A size as claims.md prints it (powers of two from 1024 as 2^k).
pub fn size(x: f64) -> String {
    if x >= 1024.0 && (x as u64).is_power_of_two() {
        format!("2^{}", (x as u64).trailing_zeros())
    } else {
        format!("{x}")
    }
}

/// A ratio with three significant decimals, in scientific notation when large or small.
pub fn sig(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 1000.0 || x.abs() < 0.01 {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_numbers() {
        let flat: Vec<(f64, f64)> = (0..6)
            .map(|k| (f64::from(1 << k), 2.0 + 1.0 / f64::from(1 << k)))
            .collect();
        assert!(matches!(judge(&flat, Bound::Tight), Verdict::Holds(_)));
        let falling: Vec<(f64, f64)> = (0..6)
            .map(|k| (f64::from(1 << k), 1.0 / f64::from(1 << k)))
            .collect();
        assert!(matches!(judge(&falling, Bound::Upper), Verdict::Holds(_)));
        assert!(matches!(judge(&falling, Bound::Tight), Verdict::Fails(_)));
        let growing: Vec<(f64, f64)> = (0..6)
            .map(|k| (f64::from(1 << k), f64::from(1 << k)))
            .collect();
        assert!(matches!(judge(&growing, Bound::Upper), Verdict::Fails(_)));
        assert!(matches!(
            judge(&growing[..2], Bound::Upper),
            Verdict::Inconclusive(_)
        ));
    }
}
