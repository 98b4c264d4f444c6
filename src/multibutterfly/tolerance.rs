//! How many random faults the modified splitter network tolerates before one reaches an input,
//! against [LM] §IV's claim of about (N lg N)^(3/4).

use super::experiment::trial_seed;
use super::faults::{Faults, InputRule, Interior, propagate};
use super::tables::fx;
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::rng::Rng;
use crate::shard::Jobs;
use crate::topology::{SplitterWiring, Topology, modified_splitter};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Parameters of the fault-scaling experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultToleranceConfig {
    /// Network sizes N (powers of two, 8..=65536).
    pub sizes: Vec<u32>,
    /// Random fault orders per size.
    pub trials: u32,
    pub seed: u64,
    pub wiring: SplitterWiring,
    pub interior: Interior,
    pub input_rule: InputRule,
    /// Worker threads; 0 = all cores. The result does not depend on it.
    #[serde(skip)]
    pub threads: usize,
}

impl Default for FaultToleranceConfig {
    fn default() -> Self {
        FaultToleranceConfig {
            sizes: vec![64, 128, 256, 512, 1024, 2048, 4096],
            trials: 100,
            seed: 1,
            wiring: SplitterWiring::default(),
            interior: Interior::default(),
            input_rule: InputRule::All,
            threads: 0,
        }
    }
}

/// One size's result: faults tolerated before one reaches an input.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tolerance {
    pub inputs: u32,
    /// Per trial: the largest prefix of a random fault order that no input is lost to.
    pub tolerated: Vec<u32>,
    pub mean: f64,
    pub median: f64,
    /// (N lg N)^(3/4).
    pub claim: f64,
}

impl Tolerance {
    /// Standard deviation of the tolerated counts over the trials.
    pub fn sigma(&self) -> f64 {
        crate::stats::Stat::of(self.tolerated.iter().map(|&t| f64::from(t))).sigma
    }
}

/// For each size and trial, draws a fresh modified network and a uniformly random order of its
/// interior switches, and finds by bisection the largest `f` such that the first `f` switches
/// of the order, propagated, leave every input healthy (propagation is monotone in the fault
/// set, so bisection is exact).
pub fn fault_tolerance(
    config: &FaultToleranceConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Tolerance>> {
    let rows = fault_tolerance_jobs(config, &mut Jobs::all(config.threads), progress)?;
    Ok(rows.expect("every job runs here"))
}

/// [`fault_tolerance`] with its trials run by `jobs`: `None` when `jobs` runs one shard.
pub fn fault_tolerance_jobs(
    config: &FaultToleranceConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Vec<Tolerance>>> {
    if config.sizes.is_empty() {
        return Err(Error::invalid("sizes", "none", "at least one size"));
    }
    Error::check_distinct("sizes", &config.sizes, "sizes")?;
    for &n in &config.sizes {
        if !(8..=65_536).contains(&n) || !n.is_power_of_two() {
            return Err(Error::invalid("sizes", n, "powers of two from 8 to 65536"));
        }
    }
    if !(1..=100_000).contains(&config.trials) {
        return Err(Error::invalid("trials", config.trials, "1..=100000"));
    }
    let t = config.trials as usize;
    let total = config.sizes.len() * t;
    let tolerated = jobs.map("tolerated", total, progress, |j| {
        let (size, trial) = (j / t, j % t);
        let n = config.sizes[size];
        // Keyed by N, so a size's trials do not depend on the other sizes asked for.
        let seed = trial_seed(config.seed, 3, u64::from(n), trial as u64);
        let mut rng = Rng::seed_from_u64(seed);
        let topo = modified_splitter(n, config.wiring, seed)?;
        let (first, last) = config.interior.switch_levels(&topo)?;
        let mut order: Vec<u32> = (topo.node_id(first, 0)..topo.node_id(last + 1, 0)).collect();
        order.shuffle(&mut rng);
        Ok(tolerated(&topo, &order, config.input_rule))
    })?;
    let Some(tolerated) = tolerated else {
        return Ok(None);
    };
    Ok(Some(
        config
            .sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let mut v = tolerated[i * t..(i + 1) * t].to_vec();
                let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / t as f64;
                let mut sorted = v.clone();
                sorted.sort_unstable();
                let median = if t % 2 == 1 {
                    f64::from(sorted[t / 2])
                } else {
                    (f64::from(sorted[t / 2 - 1]) + f64::from(sorted[t / 2])) / 2.0
                };
                v.shrink_to_fit();
                Tolerance {
                    inputs: n,
                    tolerated: v,
                    mean,
                    median,
                    claim: (f64::from(n) * f64::from(n.trailing_zeros())).powf(0.75),
                }
            })
            .collect(),
    ))
}

/// The largest `f` such that the first `f` switches of `order`, faulty and propagated, leave
/// every input healthy, by bisection (propagation is monotone in the fault set).
pub fn tolerated(topo: &Topology, order: &[u32], input_rule: InputRule) -> u32 {
    let survives = |f: usize| {
        let mut faults = Faults::at(topo, order[..f].iter().copied());
        propagate(topo, &mut faults, input_rule);
        faults.faulty_inputs(topo) == 0
    };
    let (mut lo, mut hi) = (0usize, order.len());
    if survives(hi) {
        return hi as u32;
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if survives(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo as u32
}

/// `fault-tolerance.csv`: one line per size.
pub fn tolerance_csv(rows: &[Tolerance]) -> String {
    let mut o = String::from(
        "inputs,trials,mean_tolerated,median_tolerated,min,max,claim_NlgN_3_4,ratio_mean_to_claim\n",
    );
    for r in rows {
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{}",
            r.inputs,
            r.tolerated.len(),
            fx(r.mean, 2),
            fx(r.median, 1),
            r.tolerated.iter().min().unwrap_or(&0),
            r.tolerated.iter().max().unwrap_or(&0),
            fx(r.claim, 1),
            fx(r.mean / r.claim, 3)
        );
    }
    o
}

/// A Markdown summary of the fault-scaling run.
pub fn tolerance_markdown(rows: &[Tolerance], config: &FaultToleranceConfig) -> String {
    let mut o = format!(
        "# Random faults the modified splitter network tolerates ([LM] §IV)\n\n{} random fault orders per size (seed {}); a trial's value is the largest number of faults, placed in that order on the interior levels, for which propagation leaves every input healthy. The paper's claim: about (N lg N)^(3/4).\n\n| N | mean | median | min | max | (N lg N)^(3/4) | mean / claim |\n|---:|---:|---:|---:|---:|---:|---:|\n",
        config.trials, config.seed
    );
    for r in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.inputs,
            fx(r.mean, 1),
            fx(r.median, 1),
            r.tolerated.iter().min().unwrap_or(&0),
            r.tolerated.iter().max().unwrap_or(&0),
            fx(r.claim, 1),
            fx(r.mean / r.claim, 3)
        );
    }
    o
}

/// Tolerated faults against N on log–log axes, with the claim as a dashed curve.
pub fn tolerance_chart(rows: &[Tolerance]) -> String {
    let mut chart = Chart::new(
        "Random faults tolerated before one reaches an input",
        "N (inputs)",
        "faults",
    );
    chart.log_x = true;
    chart.log_y = true;
    chart
        .series_with_sigma(
            "mean tolerated ± σ",
            rows.iter().map(|r| (f64::from(r.inputs), r.mean)).collect(),
            rows.iter().map(Tolerance::sigma).collect(),
            Marker::LinePoints,
        )
        .series(
            "median tolerated",
            rows.iter()
                .map(|r| (f64::from(r.inputs), r.median))
                .collect(),
            Marker::Points,
        )
        .series(
            "(N lg N)^(3/4)",
            rows.iter()
                .map(|r| (f64::from(r.inputs), r.claim))
                .collect(),
            Marker::Dashed,
        )
        .to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_grows_with_n_and_is_reproducible() {
        let config = FaultToleranceConfig {
            sizes: vec![64, 256],
            trials: 8,
            ..FaultToleranceConfig::default()
        };
        let a = fault_tolerance(&config, &|_, _| {}).unwrap();
        let b = fault_tolerance(
            &FaultToleranceConfig {
                threads: 1,
                ..config.clone()
            },
            &|_, _| {},
        )
        .unwrap();
        assert_eq!(a, b);
        assert!(a[1].mean > a[0].mean, "{a:?}");
        assert!(tolerance_csv(&a).lines().count() == 3);
        // Bisection agrees with adding faults one by one.
        let topo = modified_splitter(64, SplitterWiring::default(), 5).unwrap();
        let mut order: Vec<u32> = (64..64 * 6).collect();
        order.shuffle(&mut Rng::seed_from_u64(9));
        let first_failure = (1..=order.len())
            .find(|&f| {
                let mut faults = Faults::at(&topo, order[..f].iter().copied());
                propagate(&topo, &mut faults, InputRule::All);
                faults.faulty_inputs(&topo) > 0
            })
            .unwrap();
        let monotone = (first_failure..=order.len()).all(|f| {
            let mut faults = Faults::at(&topo, order[..f].iter().copied());
            propagate(&topo, &mut faults, InputRule::All);
            faults.faulty_inputs(&topo) > 0
        });
        assert!(monotone);
        assert_eq!(
            tolerated(&topo, &order, InputRule::All) as usize,
            first_failure - 1
        );
    }
}
