//! Experiments of [BB] §4: the flexible sorter's time against `r` (Theorem 2) and the sorting
//! fat-tree's routing time against `λ` and `N` (Theorem 3).
//!
//! Theorem 2: `T(r) = O((b + lg s)·r/s)` for `s ≤ r ≤ l`, the constant including the largest
//! phase count `max_w β(w)`. The experiment sorts random inputs on the cycle-level circuit for
//! every `r = s, 2s, …, l`, checks each output, and reports `T / ((b + lg s)·r/s)` and the
//! per-phase cost `T / (β(w)·w·(b + 1))`, which is the part that is linear in `r/s`.

use super::circuit::{FlexibleSorter, SorterParams, sort_cycles};
use super::fattree::FatTree;
use super::{SortConfig, check_sorted};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::shard::Jobs;
use crate::stats::Stat;
use crate::traffic::Traffic;
use serde::Serialize;

/// One sort of the flexible-sorter experiment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SortPoint {
    pub s: u32,
    pub l: u32,
    pub bits: u32,
    pub r: u32,
    pub w: u32,
    pub phases: u32,
    pub cycles: u64,
}

impl SortPoint {
    /// `T / ((b + lg s)·r/s)`, Theorem 2's ratio.
    pub fn theorem2_ratio(&self) -> f64 {
        self.cycles as f64
            / (f64::from(self.bits + self.s.trailing_zeros()) * f64::from(self.r)
                / f64::from(self.s))
    }

    /// `T / (β(w)·w·(b + 1))`: cycles per phase per column bit.
    pub fn per_phase(&self) -> f64 {
        self.cycles as f64 / (f64::from(self.phases) * f64::from(self.w) * f64::from(self.bits + 1))
    }
}

/// Sorts `r = s, 2s, …, l` random words (seed `seed + r`) on the circuit of every parameter set.
pub fn sorter_sweep(
    params: &[SorterParams],
    seed: u64,
    mut progress: impl FnMut(&SortPoint),
) -> Result<Vec<SortPoint>> {
    let mut out = Vec::new();
    for &p in params {
        p.validate()?;
        let mut sorter = FlexibleSorter::new(p)?;
        for r in (p.s..=p.l).step_by(p.s as usize) {
            let config = SortConfig {
                params: p,
                r,
                seed: seed + u64::from(r),
            };
            let words = config.words();
            let run = sorter.sort(&words, |_, _| Ok(()))?;
            check_sorted(&words, &run)?;
            debug_assert_eq!(run.cycles, sort_cycles(p, r)?);
            let point = SortPoint {
                s: p.s,
                l: p.l,
                bits: p.bits,
                r,
                w: run.w,
                phases: run.phases,
                cycles: run.cycles,
            };
            progress(&point);
            out.push(point);
        }
    }
    Ok(out)
}

/// The sorter sweep as CSV.
pub fn sorter_csv(points: &[SortPoint]) -> String {
    let mut s = String::from("s,l,bits,r,w,phases,cycles,theorem2_ratio,per_phase\n");
    for p in points {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{:.4},{:.4}\n",
            p.s,
            p.l,
            p.bits,
            p.r,
            p.w,
            p.phases,
            p.cycles,
            p.theorem2_ratio(),
            p.per_phase()
        ));
    }
    s
}

/// Least squares `y ≈ c·x` through the origin.
fn fit_through_origin(points: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (xy, xx) = points.fold((0.0, 0.0), |(a, b), (x, y)| (a + x * y, b + x * x));
    if xx > 0.0 { xy / xx } else { 0.0 }
}

/// Summary and charts of the sorter sweep: the fitted per-phase constant
/// `T ≈ C·β(w)·w·(b + 1)` and the range of Theorem 2's ratio per parameter set.
pub fn sorter_report(points: &[SortPoint]) -> (String, Vec<(&'static str, String)>) {
    let mut sets: Vec<(u32, u32, u32)> = points.iter().map(|p| (p.s, p.l, p.bits)).collect();
    sets.dedup();
    let mut text = String::from(
        "Theorem 2, T = O((b + lg s) r/s), constant max_w beta(w). T/((b + lg s) r/s) is not flat:\n\
         it follows beta(w), the Columnsort phase count of the closed ring length w; per phase the\n\
         cost is linear in the columns (the fitted C):\n    s     l  bits  fitted C in T = C beta(w) w (b+1)  T/((b+lg s) r/s) min..max  max beta\n",
    );
    let mut time = Chart::new("Flexible sorter: cycles against r", "r (words)", "cycles");
    time.log_y = true;
    let mut per = Chart::new(
        "Flexible sorter: cycles per phase per column bit",
        "r / s (columns)",
        "T / (beta(w) w (b+1))",
    );
    for &(s, l, bits) in &sets {
        let set: Vec<&SortPoint> = points
            .iter()
            .filter(|p| (p.s, p.l, p.bits) == (s, l, bits))
            .collect();
        let c = fit_through_origin(set.iter().map(|p| {
            (
                f64::from(p.phases) * f64::from(p.w) * f64::from(p.bits + 1),
                p.cycles as f64,
            )
        }));
        let lo = set
            .iter()
            .map(|p| p.theorem2_ratio())
            .fold(f64::INFINITY, f64::min);
        let hi = set.iter().map(|p| p.theorem2_ratio()).fold(0.0, f64::max);
        let beta = set.iter().map(|p| p.phases).max().unwrap_or(1);
        text.push_str(&format!(
            "{s:>5} {l:>5} {bits:>5}  {c:>33.3}  {lo:>11.1}..{hi:<11.1}  {beta:>8}\n"
        ));
        let mut widths: Vec<(u32, u32)> = set.iter().map(|p| (p.w, p.phases)).collect();
        widths.dedup();
        let phases: Vec<String> = widths
            .iter()
            .map(|&(w, b)| {
                let bound = super::schedule::paper_bound(s * w, s);
                format!("w={w}: {b} (paper bound {bound:.1})")
            })
            .collect();
        text.push_str(&format!("      phases beta(w): {}\n", phases.join(", ")));
        let name = format!("s = {s}, l = {l}, b = {bits}");
        time = time.series(
            &name,
            set.iter()
                .map(|p| (f64::from(p.r), p.cycles as f64))
                .collect(),
            Marker::LinePoints,
        );
        per = per.series(
            &name,
            set.iter()
                .map(|p| (f64::from(p.r / p.s), p.per_phase()))
                .collect(),
            Marker::LinePoints,
        );
    }
    (
        text,
        vec![
            ("sorter-cycles.svg", time.to_svg()),
            ("sorter-per-phase.svg", per.to_svg()),
        ],
    )
}

/// One routed message set on the sorting fat-tree.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TreePoint {
    pub n: u32,
    pub workload: String,
    pub seed: u64,
    pub lambda: f64,
    pub cycles: u64,
    pub ratio: f64,
}

/// The message sets the sorting fat-tree experiment routes.
pub const TREE_WORKLOADS: [(&str, Traffic); 5] = [
    ("random-permutation", Traffic::RandomPermutation),
    ("transpose", Traffic::Transpose),
    ("bit-reversal", Traffic::BitReversal),
    ("degree-2", Traffic::QRelation { q: 2 }),
    ("uniform-q1", Traffic::Uniform { q: 1 }),
];

/// Routes every workload on every size with `seeds` seeds.
pub fn tree_sweep(
    sizes: &[u32],
    seeds: u64,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<TreePoint>> {
    let points = tree_sweep_jobs(sizes, seeds, &mut Jobs::all(0), progress)?;
    Ok(points.expect("every job runs here"))
}

/// [`tree_sweep`] with its routings run by `jobs` (each size, workload and seed one job, in
/// that order): `None` when `jobs` runs one shard.
pub fn tree_sweep_jobs(
    sizes: &[u32],
    seeds: u64,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Vec<TreePoint>>> {
    if !(1..=crate::pruned::experiment::MAX_TRIALS).contains(&seeds) {
        return Err(Error::invalid(
            "trials",
            seeds,
            format!("1..={}", crate::pruned::experiment::MAX_TRIALS),
        ));
    }
    if let Some(&n) = sizes
        .iter()
        .find(|&&n| !(16..=1 << 20).contains(&n) || !n.is_power_of_two())
    {
        return Err(Error::invalid(
            "sizes",
            n,
            "powers of two from 16 to 2^20 (terminals of the sorting fat-tree)",
        ));
    }
    Error::check_distinct("sizes", sizes, "sizes")?;
    let trees = sizes
        .iter()
        .map(|&n| FatTree::new(n, 2 * n.trailing_zeros()))
        .collect::<Result<Vec<_>>>()?;
    let seeds = seeds as usize;
    let per_size = TREE_WORKLOADS.len() * seeds;
    jobs.map("routings", sizes.len() * per_size, progress, |j| {
        let (tree, n) = (&trees[j / per_size], sizes[j / per_size]);
        let (name, traffic) = &TREE_WORKLOADS[j % per_size / seeds];
        let seed = (j % seeds) as u64 + 1;
        let m: Vec<(u32, u32)> = traffic
            .messages(n, 0, seed)?
            .iter()
            .map(|x| (x.source, x.destination))
            .collect();
        let r = tree.route(&m)?;
        Ok(TreePoint {
            n,
            workload: (*name).to_string(),
            seed,
            lambda: r.load_factor_dir,
            cycles: r.routing_cycles,
            ratio: r.theorem3_ratio,
        })
    })
}

/// Summary and chart of the fat-tree sweep: `T / (λ lg N + lg² N)` per `N`.
pub fn tree_report(points: &[TreePoint]) -> (String, String, Vec<(&'static str, String)>) {
    let mut csv = String::from("n,workload,seed,lambda,cycles,theorem3_ratio\n");
    for p in points {
        csv.push_str(&format!(
            "{},{},{},{:.4},{},{:.4}\n",
            p.n, p.workload, p.seed, p.lambda, p.cycles, p.ratio
        ));
    }
    let mut sizes: Vec<u32> = points.iter().map(|p| p.n).collect();
    sizes.dedup();
    let mut text = String::from(
        "Theorem 3, T = O(lambda lg N + lg^2 N): T / (lambda lg N + lg^2 N) per N\n     N  runs  mean     max\n",
    );
    for &n in &sizes {
        let rs: Vec<f64> = points
            .iter()
            .filter(|p| p.n == n)
            .map(|p| p.ratio)
            .collect();
        let mean = rs.iter().sum::<f64>() / rs.len().max(1) as f64;
        let max = rs.iter().copied().fold(0.0, f64::max);
        text.push_str(&format!(
            "{n:>6}  {:>4}  {mean:>6.1}  {max:>6.1}\n",
            rs.len()
        ));
    }
    let mut chart = Chart::new(
        "Sorting fat-tree: T / (lambda lg N + lg^2 N) against N",
        "N (terminals)",
        "routing time / (lambda lg N + lg^2 N)",
    );
    chart.log_x = true;
    let mut names: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let stats: Vec<(f64, Stat)> = sizes
            .iter()
            .map(|&n| {
                let rs = points
                    .iter()
                    .filter(|p| p.n == n && p.workload == name)
                    .map(|p| p.ratio);
                (f64::from(n), Stat::of(rs))
            })
            .collect();
        chart = chart.series_with_sigma(
            &format!("{name}, mean ± σ"),
            stats.iter().map(|(n, s)| (*n, s.mean)).collect(),
            stats.iter().map(|(_, s)| s.sigma).collect(),
            Marker::LinePoints,
        );
    }
    (csv, text, vec![("fat-tree-ratio.svg", chart.to_svg())])
}
