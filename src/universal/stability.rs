//! The stability verdict and the recovery profile of a continuous run
//! ([`super::continuous`]): a streaming least-squares fit of the messages in the system over
//! the window, and the routing time of each twentieth of the window's births.

use super::continuous::{BUCKETS, Recovery};
use crate::stats::round6;

/// The recovery profile of a window's births.
pub(super) fn recovery(profile: &[(f64, u64); BUCKETS], window: u64) -> Recovery {
    let means: Vec<Option<f64>> = profile
        .iter()
        .map(|&(sum, n)| (n > 0).then(|| round6(sum / n as f64)))
        .collect();
    let tail = &profile[BUCKETS * 3 / 4..];
    let (sum, n) = tail.iter().fold((0.0, 0), |(s, c), &(x, k)| (s + x, c + k));
    let steady = if n == 0 { 0.0 } else { sum / n as f64 };
    let bucket = (window / BUCKETS as u64).max(1);
    // the first bucket from which every later one has deliveries within twice the steady
    // value (a bucket without any is not recovered)
    let first = (0..BUCKETS)
        .rev()
        .take_while(|&b| means[b].is_some_and(|m| m <= 2.0 * steady))
        .last();
    Recovery {
        bucket,
        means,
        steady: round6(steady),
        recovered_after: if n == 0 {
            None
        } else {
            first.map(|b| b as u64 * bucket)
        },
    }
}

/// Whether the messages in the system grew over the window: the fitted growth exceeds a
/// quarter of the mean occupancy (and a few messages) and the last quarter holds more than
/// the first. A stable network's occupancy is stationary after warm-up, so its fitted growth
/// is a small fraction of its mean; an overloaded one grows linearly.
pub(super) fn growing(regression: &Regression, quarters: &[f64; 4], window: u64) -> bool {
    let growth = regression.slope() * window as f64;
    growth > 0.25 * regression.mean_y() + 8.0 && quarters[3] > quarters[0]
}

/// Streaming least squares of y on x.
#[derive(Default)]
pub struct Regression {
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

impl Regression {
    pub fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
    }

    pub fn slope(&self) -> f64 {
        let d = self.n * self.sxx - self.sx * self.sx;
        if self.n < 2.0 || d == 0.0 {
            0.0
        } else {
            (self.n * self.sxy - self.sx * self.sy) / d
        }
    }

    fn mean_y(&self) -> f64 {
        if self.n == 0.0 { 0.0 } else { self.sy / self.n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_finds_a_slope() {
        let mut r = Regression::default();
        for x in 0..100 {
            r.add(x as f64, 3.0 + 0.5 * x as f64);
        }
        assert!((r.slope() - 0.5).abs() < 1e-9);
    }
}
