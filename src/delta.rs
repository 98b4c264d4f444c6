//! Unbuffered delta networks: [Pat81]'s recursion for the fraction of requests a network of
//! k×k crossbar stages delivers, against the simulated k-ary n-fly
//! ([`crate::topology::kary_fly`]).
//!
//! The model of [Pat81]: every input sends one request in the same cycle to a uniformly random
//! output; a k×k switch passes one request per output and discards the others; nothing is
//! retried. If a stage's inputs carry a request with probability `p`, an output of the next
//! stage carries one with probability `1 − (1 − p/k)^k`, so after n stages
//! `p_n = 1 − (1 − p_{n−1}/k)^k` with `p_0 = 1`. The recursion treats the requests at a
//! stage as independent, which they are not quite in a finite network; the measurement says by
//! how much that matters.
//!
//! The simulated network is the same switch model as every other run, configured as the
//! unbuffered network: drop mode, one virtual channel, one-flit messages, one attempt
//! ([`trial_config`]).

use crate::config::{FlowControl, SimConfig};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::rng::trial_seed;
use crate::shard::Jobs;
use crate::sim::Simulation;
use crate::stats::{Stat, round6};
use crate::topology::{TopologyKind, check_kary_fly, check_radix};
use crate::traffic::Traffic;
use serde::{Deserialize, Serialize};

/// [Pat81]: the fraction of requests an n-stage network of k×k switches delivers when every
/// input sends one to a uniformly random output.
pub fn patel(k: u32, stages: u32) -> f64 {
    let k = f64::from(k);
    (0..stages).fold(1.0, |p, _| 1.0 - (1.0 - p / k).powf(k))
}

/// Largest network the experiment simulates.
pub const MAX_INPUTS: u32 = 1 << 16;

/// What `experiment patel` measures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatelConfig {
    /// Terminals; each radix runs the sizes that are a power of it.
    pub sizes: Vec<u32>,
    pub radices: Vec<u32>,
    /// Trials (independent destination draws) per radix and size.
    pub trials: u64,
    pub seed: u64,
}

impl Default for PatelConfig {
    fn default() -> Self {
        PatelConfig {
            sizes: (4..=12).map(|b| 1 << b).collect(),
            radices: vec![2, 4],
            trials: 1000,
            seed: 1,
        }
    }
}

impl PatelConfig {
    /// The (radix, size) pairs to run, radix by radix, sizes ascending: every size that is a
    /// power of the radix. Refuses sizes and radices out of range, and a size no radix takes.
    pub fn grid(&self) -> Result<Vec<(u32, u32)>> {
        if self.trials == 0 || self.trials > 1_000_000 {
            return Err(Error::invalid("trials", self.trials, "1..=1000000"));
        }
        let mut radices = self.radices.clone();
        radices.sort_unstable();
        radices.dedup();
        let mut sizes = self.sizes.clone();
        sizes.sort_unstable();
        sizes.dedup();
        if radices.is_empty() || sizes.is_empty() {
            return Err(Error::invalid(
                if radices.is_empty() {
                    "radices"
                } else {
                    "sizes"
                },
                "none",
                "at least one value",
            ));
        }
        for &k in &radices {
            check_radix(k)?;
        }
        let mut grid = Vec::new();
        for &n in &sizes {
            if !(2..=MAX_INPUTS).contains(&n) || !n.is_power_of_two() {
                return Err(Error::invalid(
                    "sizes",
                    n,
                    format!("powers of two from 2 to {MAX_INPUTS}"),
                ));
            }
            if !radices.iter().any(|&k| fits(n, k)) {
                return Err(Error::invalid(
                    "sizes",
                    n,
                    format!("a power of one of the radices {radices:?}"),
                ));
            }
        }
        for &k in &radices {
            grid.extend(sizes.iter().filter(|&&n| fits(n, k)).map(|&n| (k, n)));
        }
        Ok(grid)
    }
}

/// Whether `n` terminals make a k-ary n-fly: a power of `k`, at least `k`.
fn fits(n: u32, k: u32) -> bool {
    check_kary_fly(n, k).is_ok()
}

/// The unbuffered delta network of [Pat81] as a run of the switch model: the k-ary n-fly with
/// `inputs` terminals, drop mode, one VC, one-flit messages, one message per input to a
/// uniformly random output, released at cycle 0, never retried.
pub fn trial_config(radix: u32, inputs: u32, seed: u64) -> SimConfig {
    SimConfig {
        topology: TopologyKind::KaryFly,
        inputs,
        radix,
        vcs: 1,
        flits: 1,
        mode: FlowControl::Drop,
        max_attempts: 1,
        traffic: Traffic::Uniform { q: 1 },
        seed,
        ..SimConfig::default()
    }
}

/// One simulated network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub radix: u32,
    pub inputs: u32,
    pub seed: u64,
    pub delivered: u64,
}

/// Runs every trial of `config` with `jobs` (one job per radix, size and trial, in that
/// order): `None` when `jobs` runs one shard.
pub fn run_jobs(
    config: &PatelConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Vec<Trial>>> {
    let grid = config.grid()?;
    let t = config.trials as usize;
    jobs.map("patel", grid.len() * t, progress, |j| {
        let (radix, inputs) = grid[j / t];
        let seed = trial_seed(
            config.seed,
            u64::from(radix),
            u64::from(inputs),
            (j % t) as u64,
        );
        let mut sim = Simulation::new(trial_config(radix, inputs, seed))?;
        let report = sim.run()?;
        if report.delivered + report.dropped != u64::from(inputs) {
            return Err(Error::Invariant {
                cycle: report.cycles,
                message: format!(
                    "k = {radix}, N = {inputs}: {} delivered and {} dropped of {inputs} messages",
                    report.delivered, report.dropped
                ),
            });
        }
        Ok(Trial {
            radix,
            inputs,
            seed,
            delivered: report.delivered,
        })
    })
}

/// One radix and size: the measured delivered fraction against [`patel`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub radix: u32,
    pub inputs: u32,
    pub stages: u32,
    pub trials: usize,
    /// Mean delivered fraction over the trials.
    pub measured: f64,
    /// Its standard error (σ over the trials / √trials).
    pub std_error: f64,
    pub predicted: f64,
    /// measured − predicted.
    pub difference: f64,
    /// The difference in standard errors (0 when the standard error is 0).
    pub z: f64,
}

/// The rows of `trials`, in the order they ran.
pub fn rows(trials: &[Trial]) -> Vec<Row> {
    let mut keys: Vec<(u32, u32)> = trials.iter().map(|t| (t.radix, t.inputs)).collect();
    keys.dedup();
    keys.into_iter()
        .map(|(radix, inputs)| {
            let fractions: Vec<f64> = trials
                .iter()
                .filter(|t| t.radix == radix && t.inputs == inputs)
                .map(|t| t.delivered as f64 / f64::from(inputs))
                .collect();
            let n = fractions.len();
            let stat = Stat::of(fractions);
            let stages = inputs.trailing_zeros() / radix.trailing_zeros();
            let predicted = patel(radix, stages);
            let std_error = stat.sigma / (n as f64).sqrt();
            let difference = stat.mean - predicted;
            Row {
                radix,
                inputs,
                stages,
                trials: n,
                measured: round6(stat.mean),
                std_error: round6(std_error),
                predicted: round6(predicted),
                difference: round6(difference),
                z: round6(if std_error > 0.0 {
                    difference / std_error
                } else {
                    0.0
                }),
            }
        })
        .collect()
}

/// The rows as CSV.
pub fn to_csv(rows: &[Row]) -> String {
    let mut s =
        String::from("radix,inputs,stages,trials,measured,std_error,predicted,difference,z\n");
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.3}\n",
            r.radix,
            r.inputs,
            r.stages,
            r.trials,
            r.measured,
            r.std_error,
            r.predicted,
            r.difference,
            r.z
        ));
    }
    s
}

/// The rows as a Markdown report.
pub fn to_markdown(rows: &[Row], config: &PatelConfig) -> String {
    let mut s = String::from(
        "# Delivered fraction of the unbuffered k-ary n-fly against [Pat81]'s recursion\n\n",
    );
    s.push_str(&format!(
        "Every input sends one single-flit message at cycle 0 to a uniformly random output; a \
         switch passes one message per output and discards the rest (drop mode, one virtual \
         channel, no retry). Predicted: p_n = 1 - (1 - p_(n-1)/k)^k, p_0 = 1. Measured: mean \
         over {} trials per row (seed {}), ± its standard error; z = difference / standard \
         error.\n\n",
        config.trials, config.seed
    ));
    s.push_str("| k | N | stages | trials | measured | ± SE | predicted | difference | z |\n");
    s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.4} | {:.4} | {:.4} | {:+.4} | {:+.2} |\n",
            r.radix,
            r.inputs,
            r.stages,
            r.trials,
            r.measured,
            r.std_error,
            r.predicted,
            r.difference,
            r.z
        ));
    }
    let worst = rows
        .iter()
        .max_by(|a, b| a.difference.abs().total_cmp(&b.difference.abs()));
    if let Some(w) = worst {
        s.push_str(&format!(
            "\nLargest difference: {:+.4} (k = {}, N = {}, {:+.2} standard errors).\n",
            w.difference, w.radix, w.inputs, w.z
        ));
    }
    s
}

/// Delivered fraction against N, measured (± standard error) and predicted, per radix.
pub fn chart(rows: &[Row]) -> String {
    let mut c = Chart::new(
        "Unbuffered k-ary n-fly: delivered fraction against [Pat81]",
        "N (terminals)",
        "delivered fraction",
    );
    c.log_x = true;
    let mut radices: Vec<u32> = rows.iter().map(|r| r.radix).collect();
    radices.dedup();
    for k in radices {
        let of_k: Vec<&Row> = rows.iter().filter(|r| r.radix == k).collect();
        c = c.series_with_sigma(
            &format!("k = {k}, measured ± SE"),
            of_k.iter()
                .map(|r| (f64::from(r.inputs), r.measured))
                .collect(),
            of_k.iter().map(|r| r.std_error).collect(),
            Marker::Points,
        );
        c = c.series(
            &format!("k = {k}, [Pat81]"),
            of_k.iter()
                .map(|r| (f64::from(r.inputs), r.predicted))
                .collect(),
            Marker::Dashed,
        );
    }
    c.to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursion_values() {
        assert_eq!(patel(2, 0), 1.0);
        assert!((patel(2, 1) - 0.75).abs() < 1e-12);
        assert!((patel(2, 2) - (1.0 - 0.625f64 * 0.625)).abs() < 1e-12);
        assert!((patel(4, 1) - (1.0 - 0.75f64.powi(4))).abs() < 1e-12);
        // Monotone: more stages deliver less.
        assert!(patel(2, 10) < patel(2, 9));
        assert!((patel(2, 10) - 0.258_51).abs() < 1e-4);
    }

    #[test]
    fn grid_takes_the_powers_of_each_radix() {
        let c = PatelConfig {
            sizes: vec![16, 32, 64],
            radices: vec![4, 2],
            trials: 1,
            seed: 1,
        };
        assert_eq!(
            c.grid().unwrap(),
            vec![(2, 16), (2, 32), (2, 64), (4, 16), (4, 64)]
        );
        let bad = PatelConfig {
            sizes: vec![32],
            radices: vec![4],
            ..c.clone()
        };
        assert!(bad.grid().is_err());
        assert!(
            PatelConfig {
                radices: vec![3],
                ..c
            }
            .grid()
            .is_err()
        );
    }
}
