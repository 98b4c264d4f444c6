//! `flitforge experiment pruned-butterfly`: routing time of the stage algorithm against the
//! load factor `λ(M)` and `N`, for random message sets, permutations and degree-`d` sets,
//! compared with Theorem 1's `O(λ log² N)` ([BB] §3.3).
//!
//! The main result is the ratio `T / (⌈λ⌉·L²)` per `N` (`λ = λ_dir`): Theorem 1 holds on the
//! sample when it stays bounded as `N` grows, which the second chart shows. The fit
//! `T ≈ a·L² + b·R·L` (`R` = rounds over all stages) separates the per-stage set-up, `O(L)`
//! per stage, from the per-round cost, `O(L)` per round; Lemma 6 bounds `R ≤ 2⌈λ⌉·L`.

use super::stage::{Costs, Engine, Message, Router};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::shard::Jobs;
use crate::stats::Stat;
use crate::traffic::Traffic;

/// One routed message set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// The workloads of the experiment: random sets with `q` messages per
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

/// Most trials (seeds) per workload and size.
pub const MAX_TRIALS: u64 = 10_000;

/// Routes every workload on every size with `seeds` seeds. `progress` is told each run.
pub fn run(
    sizes: &[u32],
    seeds: u64,
    engine: Engine,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Run>> {
    let runs = run_jobs(sizes, seeds, engine, &mut Jobs::all(0), progress)?;
    Ok(runs.expect("every job runs here"))
}

/// [`run`] with its routings run by `jobs` (each size, workload and seed one job, in that
/// order): `None` when `jobs` runs one shard.
pub fn run_jobs(
    sizes: &[u32],
    seeds: u64,
    engine: Engine,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Vec<Run>>> {
    if !(1..=MAX_TRIALS).contains(&seeds) {
        return Err(Error::invalid("trials", seeds, format!("1..={MAX_TRIALS}")));
    }
    let sizes = checked_sizes(sizes)?;
    let workloads = workloads();
    let per_size = workloads.len() * seeds as usize;
    jobs.map("routings", sizes.len() * per_size, progress, |j| {
        let n = sizes[j / per_size];
        let (name, traffic) = &workloads[j % per_size / seeds as usize];
        let seed = (j % seeds as usize) as u64 + 1;
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
        Ok(Run {
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
        })
    })
}

/// The sizes sorted; every size must be a power of 4 from 16 to 65536, given once.
pub fn checked_sizes(sizes: &[u32]) -> Result<Vec<u32>> {
    Error::check_distinct("sizes", sizes, "sizes")?;
    let mut out = sizes.to_vec();
    out.sort_unstable();
    if out.is_empty() {
        return Err(Error::invalid("sizes", "none", "at least one size"));
    }
    for &n in &out {
        if crate::topology::pruned::PrunedButterfly::new(n).is_err() {
            return Err(Error::invalid(
                "sizes",
                n,
                "powers of 4 from 16 to 65536 (e.g. 16,64,256,1024)",
            ));
        }
    }
    Ok(out)
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

/// The two-term least-squares fit `T ≈ a·L² + b·R·L` and the spread of `T / (⌈λ⌉·L²)`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    /// Set-up cycles per `L²` (per stage per level).
    pub a: f64,
    /// Cycles per round per level.
    pub b: f64,
    pub r_squared: f64,
    pub min_ratio: f64,
    pub max_ratio: f64,
}

fn l2(r: &Run) -> f64 {
    let l = f64::from(r.leaves.trailing_zeros());
    l * l
}

fn rl(r: &Run) -> f64 {
    f64::from(r.rounds) * f64::from(r.leaves.trailing_zeros())
}

/// Fits the runs (normal equations of the two-term model).
pub fn fit(runs: &[Run]) -> Fit {
    let (mut s11, mut s12, mut s22, mut s1t, mut s2t) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for r in runs {
        let (x1, x2, t) = (l2(r), rl(r), r.routing_cycles as f64);
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        s1t += x1 * t;
        s2t += x2 * t;
    }
    let det = s11 * s22 - s12 * s12;
    let (a, b) = if det.abs() > f64::EPSILON {
        ((s1t * s22 - s2t * s12) / det, (s2t * s11 - s1t * s12) / det)
    } else {
        (0.0, 0.0)
    };
    let mean = runs.iter().map(|r| r.routing_cycles as f64).sum::<f64>() / runs.len().max(1) as f64;
    let (ss_res, ss_tot) = runs.iter().fold((0.0, 0.0), |(x, y), r| {
        let t = r.routing_cycles as f64;
        (
            x + (t - a * l2(r) - b * rl(r)).powi(2),
            y + (t - mean).powi(2),
        )
    });
    let ratios = runs.iter().map(Run::ratio);
    Fit {
        a,
        b,
        r_squared: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        },
        min_ratio: ratios.clone().fold(f64::INFINITY, f64::min),
        max_ratio: ratios.fold(0.0, f64::max),
    }
}

/// A readable summary: the ratio per `N` (the Theorem 1 check), rounds against Lemma 6's
/// `2⌈λ⌉·L`, and the fit.
pub fn summary(runs: &[Run], fit: &Fit) -> String {
    let mut sizes: Vec<u32> = runs.iter().map(|r| r.leaves).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::from(
        "Theorem 1, T = O(lambda log^2 N): T / (ceil(lambda) (lg N)^2) per N\n     N  runs  ratio mean  ratio max  rounds / (2 ceil(lambda) lg N) max\n",
    );
    for n in sizes {
        let rs: Vec<&Run> = runs.iter().filter(|r| r.leaves == n).collect();
        let mean = rs.iter().map(|r| r.ratio()).sum::<f64>() / rs.len().max(1) as f64;
        let max = rs.iter().map(|r| r.ratio()).fold(0.0, f64::max);
        let rounds = rs
            .iter()
            .map(|r| rl(r) / (2.0 * r.scale()))
            .fold(0.0, f64::max);
        s.push_str(&format!(
            "{n:>6}  {:>4}  {mean:>10.2}  {max:>9.2}  {rounds:>10.2}\n",
            rs.len()
        ));
    }
    s.push_str(&format!(
        "fit: T = {:.2} (lg N)^2 + {:.2} R lg N (R = rounds over all stages), R^2 = {:.4}",
        fit.a, fit.b, fit.r_squared
    ));
    s
}

/// Two charts: time against `⌈λ⌉·L²` per `N` under the envelope `C·⌈λ⌉·L²` with the largest
/// measured ratio `C`, and the mean ratio against `N` per workload.
pub fn charts(runs: &[Run], fit: &Fit) -> Vec<(&'static str, String)> {
    let mut sizes: Vec<u32> = runs.iter().map(|r| r.leaves).collect();
    sizes.sort_unstable();
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
        &format!("{:.1} * ceil(lambda) (lg N)^2", fit.max_ratio),
        vec![(xmin, fit.max_ratio * xmin), (xmax, fit.max_ratio * xmax)],
        Marker::Dashed,
    );
    let mut ratio = Chart::new(
        "Theorem 1: T / (ceil(lambda) (lg N)^2) stays bounded",
        "N (leaves)",
        "routing time / (ceil(lambda) (lg N)^2)",
    );
    ratio.log_x = true;
    for (name, _) in workloads() {
        let stats: Vec<(f64, Stat)> = sizes
            .iter()
            .filter_map(|&n| {
                let rs: Vec<f64> = runs
                    .iter()
                    .filter(|r| r.leaves == n && r.workload == name)
                    .map(Run::ratio)
                    .collect();
                (!rs.is_empty()).then(|| (f64::from(n), Stat::of(rs)))
            })
            .collect();
        ratio = ratio.series_with_sigma(
            &format!("{name}, mean ± σ"),
            stats.iter().map(|(n, s)| (*n, s.mean)).collect(),
            stats.iter().map(|(_, s)| s.sigma).collect(),
            Marker::LinePoints,
        );
    }
    vec![
        ("time-vs-load.svg", time.to_svg()),
        ("ratio-vs-n.svg", ratio.to_svg()),
    ]
}
