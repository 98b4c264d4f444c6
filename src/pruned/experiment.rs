//! `flitforge experiment pruned-butterfly`: routing time of the stage algorithm against the
//! load factor `λ(M)` and `N`, for random message sets, permutations and degree-`d` sets,
//! compared with Theorem 1's `O(λ log² N)` (seed 001 §3.3; notes-001 §3.7 P3.10).
//!
//! The fit is `T ≈ C·⌈λ⌉·L²` (least squares through the origin, `λ = λ_dir`); Theorem 1 holds
//! on the sample when `T / (⌈λ⌉·L²)` stays bounded as `N` grows, which the second chart shows.

use super::stage::{Costs, Engine, Message, Router};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::traffic::Traffic;

/// One routed message set.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Run {
    pub leaves: u32,
    pub workload: String,
    pub seed: u64,
    pub messages: usize,
    pub degree: u32,
    pub lambda_dir: f64,
    pub lambda_cut: f64,
    pub rounds: u32,
    pub routing_cycles: u64,
    pub network_cycles: u64,
    pub sidetracked: usize,
    pub max_lambda_t: u32,
    pub max_stored_sidetracked: usize,
    pub lemma7_bound: usize,
}

impl Run {
    /// `T / (⌈λ⌉·L²)`.
    pub fn ratio(&self) -> f64 {
        self.routing_cycles as f64 / self.scale()
    }

    /// `⌈λ⌉·L²` (at least `L²`).
    pub fn scale(&self) -> f64 {
        let l = f64::from(self.leaves.trailing_zeros());
        self.lambda_dir.ceil().max(1.0) * l * l
    }
}

/// The workloads of the experiment (notes-001 §9.4): random sets with `q` messages per
/// source, permutations, degree-`d` sets and a hot region.
pub fn workloads() -> Vec<(&'static str, Traffic)> {
    vec![
        ("random-permutation", Traffic::RandomPermutation),
        ("transpose", Traffic::Transpose),
        ("bit-reversal", Traffic::BitReversal),
        ("uniform-q1", Traffic::Uniform { q: 1 }),
        ("uniform-q4", Traffic::Uniform { q: 4 }),
        ("degree-2", Traffic::QRelation { q: 2 }),
        ("degree-4", Traffic::QRelation { q: 4 }),
        ("hot-region-16", Traffic::HotRegion { region: 16 }),
    ]
}

/// Routes every workload on every size with `seeds` seeds. `progress` is told each run.
pub fn run(
    sizes: &[u32],
    seeds: u64,
    engine: Engine,
    mut progress: impl FnMut(&Run),
) -> Result<Vec<Run>> {
    if seeds == 0 {
        return Err(Error::invalid("seeds", 0, "at least 1"));
    }
    let mut runs = Vec::new();
    for &n in sizes {
        crate::topology::pruned::PrunedButterfly::new(n)?;
        for (name, traffic) in workloads() {
            for seed in 1..=seeds {
                let messages: Vec<Message> = traffic
                    .messages(n, 0, seed)?
                    .into_iter()
                    .map(|m| Message {
                        source: m.source,
                        destination: m.destination,
                    })
                    .collect();
                let body = 2 * n.trailing_zeros();
                let r = Router::new(n, &messages, body, engine, Costs::default())?.run(None)?;
                let row = Run {
                    leaves: n,
                    workload: name.to_string(),
                    seed,
                    messages: messages.len(),
                    degree: r.degree,
                    lambda_dir: r.load_factor_dir,
                    lambda_cut: r.load_factor_cut,
                    rounds: r.rounds,
                    routing_cycles: r.routing_cycles,
                    network_cycles: r.network_cycles,
                    sidetracked: r.sidetracked,
                    max_lambda_t: r.max_lambda_t,
                    max_stored_sidetracked: r.max_stored_sidetracked,
                    lemma7_bound: r.lemma7_bound,
                };
                progress(&row);
                runs.push(row);
            }
        }
    }
    Ok(runs)
}

/// The runs as CSV, one row each.
pub fn to_csv(runs: &[Run]) -> String {
    let mut s = String::from(
        "leaves,workload,seed,messages,degree,lambda_dir,lambda_cut,rounds,routing_cycles,network_cycles,sidetracked,max_lambda_t,max_stored_sidetracked,lemma7_bound,ratio\n",
    );
    for r in runs {
        s.push_str(&format!(
            "{},{},{},{},{},{:.4},{:.4},{},{},{},{},{},{},{},{:.4}\n",
            r.leaves,
            r.workload,
            r.seed,
            r.messages,
            r.degree,
            r.lambda_dir,
            r.lambda_cut,
            r.rounds,
            r.routing_cycles,
            r.network_cycles,
            r.sidetracked,
            r.max_lambda_t,
            r.max_stored_sidetracked,
            r.lemma7_bound,
            r.ratio()
        ));
    }
    s
}

/// The least-squares fit `T ≈ C·⌈λ⌉·L²` and its coefficient of determination.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    pub c: f64,
    pub r_squared: f64,
    pub min_ratio: f64,
    pub max_ratio: f64,
}

/// Fits the runs.
pub fn fit(runs: &[Run]) -> Fit {
    let (sxy, sxx) = runs.iter().fold((0.0, 0.0), |(a, b), r| {
        (
            a + r.scale() * r.routing_cycles as f64,
            b + r.scale() * r.scale(),
        )
    });
    let c = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let mean = runs.iter().map(|r| r.routing_cycles as f64).sum::<f64>() / runs.len().max(1) as f64;
    let (ss_res, ss_tot) = runs.iter().fold((0.0, 0.0), |(a, b), r| {
        let t = r.routing_cycles as f64;
        (a + (t - c * r.scale()).powi(2), b + (t - mean).powi(2))
    });
    let ratios = runs.iter().map(Run::ratio);
    Fit {
        c,
        r_squared: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        },
        min_ratio: ratios.clone().fold(f64::INFINITY, f64::min),
        max_ratio: ratios.fold(0.0, f64::max),
    }
}

/// Two charts: time against `⌈λ⌉·L²` with the fitted line, and the ratio against `N`.
pub fn charts(runs: &[Run], fit: &Fit) -> Vec<(&'static str, String)> {
    let mut sizes: Vec<u32> = runs.iter().map(|r| r.leaves).collect();
    sizes.dedup();
    let mut time = Chart::new(
        "Pruned butterfly: routing time against load factor and size",
        "ceil(lambda) * (lg N)^2",
        "routing time (cycles)",
    );
    time.log_x = true;
    time.log_y = true;
    for &n in &sizes {
        let points = runs
            .iter()
            .filter(|r| r.leaves == n)
            .map(|r| (r.scale(), r.routing_cycles as f64))
            .collect();
        time = time.series(&format!("N = {n}"), points, Marker::Points);
    }
    let xmax = runs.iter().map(Run::scale).fold(1.0, f64::max);
    let xmin = runs.iter().map(Run::scale).fold(xmax, f64::min);
    time = time.series(
        &format!("fit {:.1} * ceil(lambda) (lg N)^2", fit.c),
        vec![(xmin, fit.c * xmin), (xmax, fit.c * xmax)],
        Marker::Dashed,
    );
    let mut ratio = Chart::new(
        "Theorem 1: T / (ceil(lambda) (lg N)^2) stays bounded",
        "N (leaves)",
        "routing time / (ceil(lambda) (lg N)^2)",
    );
    ratio.log_x = true;
    for (name, _) in workloads() {
        let points = sizes
            .iter()
            .filter_map(|&n| {
                let rs: Vec<f64> = runs
                    .iter()
                    .filter(|r| r.leaves == n && r.workload == name)
                    .map(Run::ratio)
                    .collect();
                (!rs.is_empty()).then(|| (f64::from(n), rs.iter().sum::<f64>() / rs.len() as f64))
            })
            .collect();
        ratio = ratio.series(name, points, Marker::LinePoints);
    }
    vec![
        ("time-vs-load.svg", time.to_svg()),
        ("ratio-vs-n.svg", ratio.to_svg()),
    ]
}
