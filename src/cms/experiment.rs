//! `experiment cole-maggs-sitaraman`: the claims of [CMS] measured on the switch model, each
//! table beside the paper's bound and the constant that fits it.
//!
//! - offline: the refined schedule of [CMS] Theorem 2.1.6 against C, D and B, with the naive
//!   colouring of footnote 5 and the online run (everything released at once) beside it;
//! - lower-bound: [CMS] Theorem 2.2.1's instance under every policy against (L − D)·M/B;
//! - speed-up: T(1)/T(B) against B·D^(1−1/B) (leveled networks) and B·lg^(1−1/B) n (the
//!   butterfly algorithm) ([CMS] §1.2);
//! - vct: B VCs of one flit against one VC of B flits (virtual cut-through, [CMS] §1.4) and
//!   against worms of L/B flits;
//! - butterfly: the algorithm of [CMS] §3.1 against n, q, L and B (Theorem 3.1.1), with the
//!   per-round checks of Invariant 3.1.2 and Lemmas 3.1.4 and 3.1.5;
//! - survivors: one-shot circuit switching on the butterfly against n/lg^(1/B) n ([CMS] §1.3).
//!
//! Every trial is a job of [`Jobs`]: the tables do not depend on the number of threads.

use super::butterfly::{self, ButterflyConfig, PassMode};
use super::schedule::{self, RMode};
use super::{Problem, lower_bound, random_leveled};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::rng::trial_seed;
use crate::shard::Jobs;
use crate::stats::round6;
use serde::{Deserialize, Serialize};

/// The experiment's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CmsConfig {
    /// Trials (independent problems) per row.
    pub trials: u32,
    pub seed: u64,
    /// Virtual channels B of the offline, speed-up and butterfly tables.
    pub vcs: Vec<u32>,
    /// β of the butterfly algorithm.
    pub beta: f64,
    /// Largest butterfly (inputs n) of the butterfly and survivors tables.
    pub max_inputs: u32,
}

impl Default for CmsConfig {
    fn default() -> Self {
        CmsConfig {
            trials: 10,
            seed: 1,
            vcs: vec![1, 2, 3, 4],
            beta: 1.0,
            max_inputs: 16384,
        }
    }
}

/// A table: a title, what it measures, column names and formatted cells.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub note: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(name: &str, title: &str, note: &str, columns: &[&str]) -> Self {
        Table {
            name: name.into(),
            title: title.into(),
            note: note.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn to_csv(&self) -> String {
        let mut s = self.columns.join(",") + "\n";
        for r in &self.rows {
            s.push_str(&r.join(","));
            s.push('\n');
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        let mut s = format!("## {}\n\n{}\n\n", self.title, self.note);
        s.push_str(&format!("| {} |\n", self.columns.join(" | ")));
        s.push_str(&format!("|{}\n", "---:|".repeat(self.columns.len())));
        for r in &self.rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        s
    }
}

/// Everything the experiment writes.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub tables: Vec<Table>,
    /// `(file name, SVG)`.
    pub charts: Vec<(String, String)>,
    /// Fitted constants, by name.
    pub constants: Vec<(String, f64)>,
}

/// Least-squares c in `y ≈ c·x`.
fn fit(points: &[(f64, f64)]) -> f64 {
    let (xy, xx) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x * y, b + x * x));
    if xx > 0.0 { round6(xy / xx) } else { 0.0 }
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.into_iter().collect();
    v.iter().sum::<f64>() / (v.len().max(1) as f64)
}

fn f2(x: f64) -> String {
    format!("{x:.2}")
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

// ---- offline schedule (Q000-1) ----

/// Dilations and message counts of the offline table (leveled networks 8 switches wide,
/// out-degree 2).
const OFFLINE_GRID: [(u32, u32); 8] = [
    (4, 32),
    (4, 128),
    (8, 32),
    (8, 128),
    (16, 32),
    (16, 128),
    (32, 32),
    (32, 128),
];
const WIDTH: u32 = 8;
const DEGREE: u32 = 2;
/// Flits per worm of the offline, speed-up and virtual-cut-through tables.
const OFFLINE_FLITS: u32 = 8;

/// One random leveled problem of the offline table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OfflineTrial {
    pub d: u32,
    pub m: u32,
    /// Congestion over links and injection ports.
    pub c: u32,
    /// One entry per B of [`CmsConfig::vcs`].
    pub per_b: Vec<OfflineB>,
}

/// Classes of each schedule and simulated makespans (cycles) for one B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OfflineB {
    pub b: u32,
    pub naive: u32,
    pub greedy_b: u32,
    pub adaptive: u32,
    pub paper: u32,
    pub t_naive: u64,
    pub t_adaptive: u64,
    pub t_paper: u64,
    pub t_online: u64,
}

/// Congestion over links and injection ports (what a schedule must respect).
fn congestion(p: &Problem) -> u32 {
    p.resource_users()
        .iter()
        .map(|u| u.len() as u32)
        .max()
        .unwrap_or(0)
}

/// Runs a schedule and checks that it never blocks.
fn never_blocks(
    p: &Problem,
    b: u32,
    flits: u32,
    s: &schedule::Schedule,
    what: &str,
) -> Result<u64> {
    let d = p.dilation();
    let out = p.simulate(p.config(b, flits), &s.releases(flits, d))?;
    if out.blocked > 0 || out.slowed > 0 || out.makespan > s.length(flits, d) {
        return Err(Error::Invariant {
            cycle: out.makespan,
            message: format!(
                "{what} schedule (B = {b}, multiplex {}): {} worms blocked, {} slowed",
                s.multiplex, out.blocked, out.slowed
            ),
        });
    }
    Ok(out.makespan)
}

fn offline_trial(config: &CmsConfig, d: u32, m: u32, seed: u64) -> Result<OfflineTrial> {
    let p = random_leveled(WIDTH, d, DEGREE, m, seed)?;
    let flits = OFFLINE_FLITS;
    let naive = schedule::greedy_colouring(&p, 1);
    let mut per_b = Vec::new();
    for &b in &config.vcs {
        let greedy_b = schedule::greedy_colouring(&p, b);
        let adaptive = schedule::refine(&p, b, RMode::Adaptive, seed)?;
        let paper = schedule::refine(&p, b, RMode::Paper, seed)?;
        let online = p.simulate(p.config(b, flits), &vec![0; p.messages()])?;
        per_b.push(OfflineB {
            b,
            naive: naive.classes,
            greedy_b: greedy_b.classes,
            adaptive: adaptive.classes,
            paper: paper.classes,
            t_naive: never_blocks(&p, b, flits, &naive, "naive")?,
            t_adaptive: never_blocks(&p, b, flits, &adaptive, "refined (adaptive r)")?,
            t_paper: never_blocks(&p, b, flits, &paper, "refined (paper r)")?,
            t_online: online.makespan,
        });
    }
    Ok(OfflineTrial {
        d,
        m,
        c: congestion(&p),
        per_b,
    })
}

fn offline_table(trials: &[OfflineTrial], config: &CmsConfig, out: &mut Results) {
    let mut t = Table::new(
        "offline",
        "Offline schedule against C, D and B ([CMS] Theorem 2.1.6, Q000-1)",
        &format!(
            "Random leveled networks ({WIDTH} switches per level, out-degree {DEGREE}), M random \
             paths from level 0 to level D, L = {OFFLINE_FLITS}; C counts links and injection \
             ports. Classes: naive = greedy colouring of the conflict graph (footnote 5); \
             greedy-B = at most B per link; refined = Lemma 2.1.5 with r chosen adaptively or \
             as the paper sets it. Makespans are simulated (cycles, the mean over {} trials) \
             and every scheduled run is checked never to block. Bound: Theorem 2.1.6 with the \
             proof's constants, κ·(L + D − 1); shape: (L + D)·C·(D lg D)^(1/B)/B (C > lg D) or \
             (L + D)·C·(D C)^(1/B)/B; c = refined makespan / shape.",
            config.trials
        ),
        &[
            "D",
            "M",
            "C",
            "B",
            "naive κ",
            "greedy-B κ",
            "refined κ",
            "paper-r κ",
            "T naive",
            "T refined",
            "T paper-r",
            "T online",
            "Thm 2.1.6 bound",
            "shape",
            "c",
        ],
    );
    // Per B: (shape, measured makespan) and (shape, Theorem 2.1.6 bound) points.
    type Points = Vec<(f64, f64)>;
    let mut series: Vec<(u32, Points, Points)> = Vec::new();
    for &(d, m) in &OFFLINE_GRID {
        let of: Vec<&OfflineTrial> = trials.iter().filter(|x| x.d == d && x.m == m).collect();
        if of.is_empty() {
            continue;
        }
        let c = mean(of.iter().map(|x| f64::from(x.c)));
        for (k, &b) in config.vcs.iter().enumerate() {
            let col = |f: &dyn Fn(&OfflineB) -> f64| mean(of.iter().map(|x| f(&x.per_b[k])));
            let t_ref = col(&|y| y.t_adaptive as f64);
            let cc = c.round() as u32;
            let bound = schedule::theorem_classes(cc, d, b) * f64::from(OFFLINE_FLITS + d - 1);
            let shape = schedule::theorem_shape(cc, d, OFFLINE_FLITS, b);
            t.rows.push(vec![
                d.to_string(),
                m.to_string(),
                f2(c),
                b.to_string(),
                f2(col(&|y| f64::from(y.naive))),
                f2(col(&|y| f64::from(y.greedy_b))),
                f2(col(&|y| f64::from(y.adaptive))),
                f2(col(&|y| f64::from(y.paper))),
                f2(col(&|y| y.t_naive as f64)),
                f2(t_ref),
                f2(col(&|y| y.t_paper as f64)),
                f2(col(&|y| y.t_online as f64)),
                format!("{bound:.0}"),
                format!("{shape:.0}"),
                f3(t_ref / shape),
            ]);
            let entry = match series.iter_mut().find(|s| s.0 == b) {
                Some(e) => e,
                None => {
                    series.push((b, Vec::new(), Vec::new()));
                    series.last_mut().expect("pushed")
                }
            };
            entry.1.push((shape, t_ref));
            entry.2.push((shape, bound));
        }
    }
    let mut chart = Chart::new(
        "Offline schedule ([CMS] Thm 2.1.6): refined makespan against its shape",
        "(L + D) C (D lg D)^(1/B) / B",
        "makespan (cycles)",
    );
    chart.log_x = true;
    chart.log_y = true;
    for (b, measured, bound) in &series {
        let c = fit(measured);
        out.constants.push((format!("offline B={b}"), c));
        let mut fitted: Vec<(f64, f64)> = measured.iter().map(|&(x, _)| (x, c * x)).collect();
        fitted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut bound = bound.clone();
        bound.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart = chart
            .series(
                &format!("B = {b}, measured"),
                measured.clone(),
                Marker::Points,
            )
            .series(&format!("B = {b}, fit c = {c:.3}"), fitted, Marker::Dashed)
            .series(&format!("B = {b}, Thm 2.1.6 bound"), bound, Marker::Line);
    }
    out.charts.push(("offline.svg".into(), chart.to_svg()));
    out.tables.push(t);
}

// ---- lower bound (Q000-2) ----

const LOWER_BOUND_GRID: [(u32, u32, u32); 8] = [
    (1, 2, 9),
    (1, 4, 9),
    (1, 2, 17),
    (2, 3, 9),
    (2, 6, 9),
    (2, 3, 17),
    (3, 4, 13),
    (3, 4, 25),
];

/// One lower-bound instance under every policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LowerBoundTrial {
    pub b: u32,
    pub c: u32,
    pub d: u32,
    pub flits: u32,
    pub messages: u64,
    pub bound: f64,
    /// (policy, makespan).
    pub makespans: Vec<(String, u64)>,
}

/// The release policies the lower-bound check runs: all at once, random releases, the naive
/// and refined schedules, and one message at a time.
pub fn lower_bound_policies(
    p: &Problem,
    b: u32,
    flits: u32,
    seed: u64,
) -> Result<Vec<(String, Vec<u64>)>> {
    use rand::RngExt;
    let m = p.messages();
    let d = p.dilation();
    let gap = u64::from(flits + d - 1);
    let mut rng = crate::rng::stream(seed, crate::rng::Stream::Traffic);
    let spread = (m as u64 * u64::from(flits)).div_ceil(u64::from(b)).max(1);
    let random: Vec<u64> = (0..m).map(|_| rng.random_range(0..spread)).collect();
    let naive = schedule::greedy_colouring(p, 1);
    let greedy_b = schedule::greedy_colouring(p, b);
    let refined = schedule::refine(p, b, RMode::Adaptive, seed)?;
    Ok(vec![
        ("online".into(), vec![0; m]),
        ("random releases".into(), random),
        ("naive colouring".into(), naive.releases(flits, d)),
        ("greedy-B colouring".into(), greedy_b.releases(flits, d)),
        ("refined schedule".into(), refined.releases(flits, d)),
        (
            "one at a time".into(),
            (0..m as u64).map(|i| i * gap).collect(),
        ),
    ])
}

fn lower_bound_trial(b: u32, c: u32, d: u32, seed: u64) -> Result<LowerBoundTrial> {
    let lb = lower_bound::generate(b, c, d)?;
    let p = &lb.problem;
    let flits = 2 * p.dilation();
    let bound = lb.bound(flits);
    let mut makespans = Vec::new();
    for (name, releases) in lower_bound_policies(p, b, flits, seed)? {
        let out = p.simulate(p.config(b, flits), &releases)?;
        if (out.makespan as f64) < bound {
            return Err(Error::Invariant {
                cycle: out.makespan,
                message: format!(
                    "{name} beat the lower bound of [CMS] Theorem 2.2.1: {} < (L - D)M/B = {bound}",
                    out.makespan
                ),
            });
        }
        makespans.push((name, out.makespan));
    }
    Ok(LowerBoundTrial {
        b,
        c,
        d: p.dilation(),
        flits,
        messages: p.messages() as u64,
        bound,
        makespans,
    })
}

fn lower_bound_table(trials: &[LowerBoundTrial], out: &mut Results) {
    let names: Vec<String> = trials
        .first()
        .map(|t| t.makespans.iter().map(|m| m.0.clone()).collect())
        .unwrap_or_default();
    let mut columns = vec!["B", "C", "D", "L", "M", "(L − D)M/B"];
    columns.extend(names.iter().map(String::as_str));
    columns.push("least / bound");
    let mut t = Table::new(
        "lower-bound",
        "The lower-bound instance against (L − D)·M/B ([CMS] Theorem 2.2.1, Q000-2)",
        "Every (B + 1)-set of the M' base messages shares a primary link; each base message is \
         copied C/(B + 1) times; L = 2D. Makespans (cycles) of every release policy on the \
         switch model; no policy may finish before the bound (checked). Least / bound is the \
         best policy's makespan over the bound.",
        &columns,
    );
    let mut points = Vec::new();
    for x in trials {
        let least = x.makespans.iter().map(|m| m.1).min().unwrap_or(0) as f64;
        let mut row = vec![
            x.b.to_string(),
            x.c.to_string(),
            x.d.to_string(),
            x.flits.to_string(),
            x.messages.to_string(),
            format!("{:.1}", x.bound),
        ];
        row.extend(x.makespans.iter().map(|m| m.1.to_string()));
        row.push(f3(least / x.bound));
        t.rows.push(row);
        points.push((x.bound, least));
    }
    let mut chart = Chart::new(
        "Lower-bound instance ([CMS] Thm 2.2.1): best makespan against (L - D)M/B",
        "(L - D) M / B",
        "best makespan over all policies (cycles)",
    );
    chart.log_x = true;
    chart.log_y = true;
    let mut line: Vec<(f64, f64)> = points.iter().map(|&(x, _)| (x, x)).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    let c = fit(&points);
    out.constants.push(("lower-bound best/bound".into(), c));
    chart = chart.series("best policy", points, Marker::Points).series(
        "(L - D)M/B",
        line,
        Marker::Dashed,
    );
    out.charts.push(("lower-bound.svg".into(), chart.to_svg()));
    out.tables.push(t);
}

// ---- speed-up (Q000-3) and virtual cut-through (Q000-4) ----

/// Dilations of the speed-up and virtual-cut-through tables.
const SPEEDUP_D: [u32; 3] = [8, 16, 32];
const SPEEDUP_M: u32 = 64;
const SPEEDUP_N: u32 = 64;

/// One problem of the speed-up and virtual-cut-through tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedupTrial {
    pub d: u32,
    /// One entry per B of [`CmsConfig::vcs`].
    pub per_b: Vec<SpeedupB>,
    /// B = 2 and B = 4 of the virtual-cut-through table.
    pub vct: Vec<VctB>,
}

/// Makespans (cycles) for one B: everything released at once, the refined offline schedule,
/// and the butterfly algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedupB {
    pub b: u32,
    pub online: u64,
    pub refined: u64,
    pub butterfly: u64,
}

/// Makespans (cycles, everything released at once) for one B: B VCs of one flit, one VC of B
/// flits (virtual cut-through), one VC of one flit with L/B-flit worms, and B VCs sharing one
/// flit per link per cycle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VctB {
    pub b: u32,
    pub vcs: u64,
    pub cut_through: u64,
    pub short_worms: u64,
    pub restricted: u64,
}

fn speedup_trial(config: &CmsConfig, d: u32, seed: u64) -> Result<SpeedupTrial> {
    let p = random_leveled(WIDTH, d, DEGREE, SPEEDUP_M, seed)?;
    let flits = OFFLINE_FLITS;
    let at_once = vec![0; p.messages()];
    let mut per_b = Vec::new();
    for &b in &config.vcs {
        let online = p.simulate(p.config(b, flits), &at_once)?.makespan;
        let refined = schedule::refine(&p, b, RMode::Adaptive, seed)?;
        let offline = never_blocks(&p, b, flits, &refined, "refined")?;
        let fly = butterfly::run(&ButterflyConfig {
            inputs: SPEEDUP_N,
            q: SPEEDUP_N.trailing_zeros(),
            flits,
            vcs: b,
            beta: config.beta,
            seed,
            pass_mode: PassMode::Doubled,
        })?;
        per_b.push(SpeedupB {
            b,
            online,
            refined: offline,
            butterfly: fly.makespan,
        });
    }
    let mut vct = Vec::new();
    let long = 4 * flits;
    for b in [2u32, 4] {
        let run = |vcs: u32, depth: u32, l: u32, one: bool| -> Result<u64> {
            let mut c = p.config(vcs, l);
            c.vc_depth = depth;
            if one {
                c.link_bandwidth = crate::config::LinkBandwidth::One;
            }
            Ok(p.simulate(c, &at_once)?.makespan)
        };
        vct.push(VctB {
            b,
            vcs: run(b, 1, long, false)?,
            cut_through: run(1, b, long, false)?,
            short_worms: run(1, 1, long / b, false)?,
            restricted: run(b, 1, long, true)?,
        });
    }
    Ok(SpeedupTrial { d, per_b, vct })
}

fn speedup_tables(trials: &[SpeedupTrial], config: &CmsConfig, out: &mut Results) {
    let lg_n = f64::from(SPEEDUP_N.trailing_zeros());
    let mut t = Table::new(
        "speed-up",
        "Speed-up from B virtual channels, T(1)/T(B) ([CMS] §1.2, Q000-3)",
        &format!(
            "Online and refined offline: random leveled networks ({WIDTH} wide, dilation D, M \
             = {SPEEDUP_M}, L = {OFFLINE_FLITS}); butterfly: the algorithm of §3.1 on n = \
             {SPEEDUP_N}, q = lg n, L = {OFFLINE_FLITS}, β = {} (the same in every D's rows). \
             Makespans are means over {} trials. Predicted: B·D^(1−1/B) (any network) and \
             B·lg^(1−1/B) n (butterfly), the ratios of the paper's bounds; c = least-squares \
             constant of speed-up ≈ c·prediction over all rows.",
            config.beta, config.trials
        ),
        &[
            "D",
            "B",
            "T online",
            "T refined",
            "T butterfly",
            "online T(1)/T(B)",
            "refined T(1)/T(B)",
            "butterfly T(1)/T(B)",
            "B·D^(1−1/B)",
            "B·lg^(1−1/B) n",
        ],
    );
    let mut online = Vec::new();
    let mut refined = Vec::new();
    let mut fly = Vec::new();
    let mut chart_points: Vec<(u32, Vec<(f64, f64)>)> = Vec::new();
    let mut fly_points = Vec::new();
    let mut vct_rows = Vec::new();
    for d in SPEEDUP_D {
        let of: Vec<&SpeedupTrial> = trials.iter().filter(|x| x.d == d).collect();
        if of.is_empty() {
            continue;
        }
        let col =
            |k: usize, f: &dyn Fn(&SpeedupB) -> u64| mean(of.iter().map(|x| f(&x.per_b[k]) as f64));
        let base = (
            col(0, &|y| y.online),
            col(0, &|y| y.refined),
            col(0, &|y| y.butterfly),
        );
        let mut pts = Vec::new();
        for (k, &b) in config.vcs.iter().enumerate() {
            let tb = (
                col(k, &|y| y.online),
                col(k, &|y| y.refined),
                col(k, &|y| y.butterfly),
            );
            let bf = f64::from(b);
            let pd = bf * f64::from(d).powf(1.0 - 1.0 / bf);
            let pn = bf * lg_n.powf(1.0 - 1.0 / bf);
            let s = (base.0 / tb.0, base.1 / tb.1, base.2 / tb.2);
            t.rows.push(vec![
                d.to_string(),
                b.to_string(),
                f2(tb.0),
                f2(tb.1),
                f2(tb.2),
                f3(s.0),
                f3(s.1),
                f3(s.2),
                f3(pd),
                f3(pn),
            ]);
            online.push((pd, s.0));
            refined.push((pd, s.1));
            fly.push((pn, s.2));
            pts.push((bf, s.1, pd));
            if d == SPEEDUP_D[0] {
                fly_points.push((bf, s.2, pn));
            }
        }
        chart_points.push((d, pts.iter().map(|&(b, s, _)| (b, s)).collect()));
        chart_points.push((d + 1_000_000, pts.iter().map(|&(b, _, p)| (b, p)).collect()));
        for (k, b) in [2u32, 4].iter().enumerate() {
            let m = |f: &dyn Fn(&VctB) -> u64| mean(of.iter().map(|x| f(&x.vct[k]) as f64));
            let (a, c, w, r) = (
                m(&|y| y.vcs),
                m(&|y| y.cut_through),
                m(&|y| y.short_worms),
                m(&|y| y.restricted),
            );
            vct_rows.push(vec![
                d.to_string(),
                b.to_string(),
                f2(a),
                f2(c),
                f2(w),
                f2(r),
                f3(c / a),
            ]);
        }
    }
    let (c_on, c_ref, c_fly) = (fit(&online), fit(&refined), fit(&fly));
    out.constants
        .push(("speed-up online vs B·D^(1-1/B)".into(), c_on));
    out.constants
        .push(("speed-up refined vs B·D^(1-1/B)".into(), c_ref));
    out.constants
        .push(("speed-up butterfly vs B·lg^(1-1/B) n".into(), c_fly));
    t.note.push_str(&format!(
        " Fitted: online c = {c_on:.3}, refined c = {c_ref:.3}, butterfly c = {c_fly:.3}."
    ));
    let mut chart = Chart::new(
        "Speed-up from B virtual channels ([CMS] §1.2): refined offline schedules",
        "B (virtual channels)",
        "T(1) / T(B)",
    );
    for (key, pts) in chart_points {
        chart = if key < 1_000_000 {
            chart.series(
                &format!("D = {key}, refined, measured"),
                pts,
                Marker::LinePoints,
            )
        } else {
            chart.series(
                &format!("D = {}, {c_ref:.3} · B·D^(1-1/B)", key - 1_000_000),
                pts.iter().map(|&(b, p)| (b, c_ref * p)).collect(),
                Marker::Dashed,
            )
        };
    }
    chart = chart
        .series(
            &format!("butterfly n = {SPEEDUP_N}, measured"),
            fly_points.iter().map(|&(b, s, _)| (b, s)).collect(),
            Marker::LinePoints,
        )
        .series(
            &format!("{c_fly:.3} · B·lg^(1-1/B) n"),
            fly_points.iter().map(|&(b, _, p)| (b, c_fly * p)).collect(),
            Marker::Dashed,
        );
    out.charts.push(("speed-up.svg".into(), chart.to_svg()));
    out.tables.push(t);

    let long = 4 * OFFLINE_FLITS;
    let mut v = Table::new(
        "vct",
        "B virtual channels against virtual cut-through ([CMS] §1.4, Q000-4)",
        &format!(
            "The speed-up problems (M = {SPEEDUP_M}), everything released at once, L = \
             {long}. Virtual cut-through: one VC holding B flits of one worm; the paper: it \
             behaves like wormhole routing of L/B-flit worms without VCs, a linear speed-up at \
             most. Restricted: B VCs sharing one flit per link per cycle. Makespans (cycles), \
             means over {} trials.",
            config.trials
        ),
        &[
            "D",
            "B",
            "B VCs × 1 flit",
            "1 VC × B flits (VCT)",
            "1 VC, L/B-flit worms",
            "B VCs, 1 flit/link/cycle",
            "VCT / B VCs",
        ],
    );
    v.rows = vct_rows;
    out.tables.push(v);
}

// ---- butterfly algorithm (Q000-5) ----

/// (n, q, L, B, pass mode) rows: the base point (64, 4, 8, 2, doubled), one parameter varied
/// at a time, and the base point with the second pass round the wrap-around butterfly.
fn butterfly_grid(vcs: &[u32], max_inputs: u32) -> Vec<(u32, u32, u32, u32, PassMode)> {
    let d = PassMode::Doubled;
    let mut g = Vec::new();
    for n in [16, 64, 256, 1024, 4096]
        .into_iter()
        .filter(|&n| n <= max_inputs)
    {
        g.push((n, 4, 8, 2, d));
    }
    for q in [1, 2, 8, 16] {
        g.push((64, q, 8, 2, d));
    }
    for l in [2, 4, 16, 32] {
        g.push((64, 4, l, 2, d));
    }
    for &b in vcs.iter().filter(|&&b| b != 2) {
        g.push((64, 4, 8, b, d));
    }
    g.push((64, 4, 8, 2, PassMode::Wrap));
    g
}

/// One run of the butterfly algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ButterflyTrial {
    pub n: u32,
    pub q: u32,
    pub l: u32,
    pub b: u32,
    pub pass_mode: PassMode,
    pub run: butterfly::ButterflyRun,
}

fn butterfly_table(trials: &[ButterflyTrial], config: &CmsConfig, out: &mut Results) {
    let mut t = Table::new(
        "butterfly",
        "The butterfly algorithm against n, q, L and B ([CMS] §3.1, Theorem 3.1.1, Q000-5)",
        &format!(
            "q-relations (q random permutations) on the doubled butterfly (the last row: the \
             second pass round the wrap-around butterfly), β = {}, means over \
             {} trials. Δ colours per round, the paper's 2⌈lg lg(nq)⌉ + 1 rounds against the \
             rounds used (mean and most). Shape: L(q + lg n) lg^(1/B) n lg lg(qn)/B; c = \
             makespan / shape. Per-round checks, worst over rounds and trials: Invariant \
             3.1.2 (most copies at an input or output, over q_eff = max(q, lg n)), Lemma 3.1.4 \
             (least fraction of an input's or output's messages on distinct colours; the \
             lemma: ≥ 3/4) and Lemma 3.1.5 (most of an input's or output's messages left by a \
             round; the lemma: ≤ 1/2). The lemmas hold w.h.p. for β large (β ≥ 11 134 for \
             B = 1, 123 for B = 2); at small β the table shows by how much they fail.",
            config.beta, config.trials
        ),
        &[
            "n",
            "q",
            "L",
            "B",
            "pass",
            "Δ",
            "paper rounds",
            "rounds (mean)",
            "rounds (most)",
            "round cycles",
            "makespan",
            "shape",
            "c",
            "copies / q_eff",
            "distinct ≥ 3/4",
            "left ≤ 1/2",
        ],
    );
    let mut keys: Vec<(u32, u32, u32, u32, PassMode)> = trials
        .iter()
        .map(|x| (x.n, x.q, x.l, x.b, x.pass_mode))
        .collect();
    keys.dedup();
    let mut by_n = Vec::new();
    let mut all = Vec::new();
    for (n, q, l, b, pass) in keys {
        let of: Vec<&ButterflyTrial> = trials
            .iter()
            .filter(|x| (x.n, x.q, x.l, x.b, x.pass_mode) == (n, q, l, b, pass))
            .collect();
        let first = &of[0].run;
        let shape = ButterflyConfig {
            inputs: n,
            q,
            flits: l,
            vcs: b,
            beta: config.beta,
            seed: 0,
            pass_mode: PassMode::Doubled,
        }
        .bound_shape();
        let makespan = mean(of.iter().map(|x| x.run.makespan as f64));
        let rounds = mean(of.iter().map(|x| x.run.rounds.len() as f64));
        let most = of.iter().map(|x| x.run.rounds.len()).max().unwrap_or(0);
        let rounds_of = || {
            of.iter()
                .flat_map(|x| x.run.rounds.iter().map(move |r| (x, r)))
        };
        let copies = rounds_of()
            .map(|(x, r)| {
                r.max_copies_per_input.max(r.max_copies_per_output) as f64 / f64::from(x.run.q_eff)
            })
            .fold(0.0, f64::max);
        let distinct = rounds_of()
            .map(|(_, r)| r.min_distinct_colour_fraction)
            .fold(1.0, f64::min);
        let left = rounds_of()
            .map(|(_, r)| r.max_remaining_fraction)
            .fold(0.0, f64::max);
        t.rows.push(vec![
            n.to_string(),
            q.to_string(),
            l.to_string(),
            b.to_string(),
            match pass {
                PassMode::Doubled => "doubled",
                PassMode::Wrap => "wrap",
            }
            .to_string(),
            first.colours.to_string(),
            first.paper_rounds.to_string(),
            f2(rounds),
            most.to_string(),
            first.round_cycles.to_string(),
            f2(makespan),
            format!("{shape:.1}"),
            f3(makespan / shape),
            f3(copies),
            f3(distinct),
            f3(left),
        ]);
        if pass == PassMode::Wrap {
            continue;
        }
        all.push((shape, makespan));
        if (q, l, b) == (4, 8, 2) {
            by_n.push((f64::from(n), makespan, shape));
        }
    }
    let c = fit(&all);
    out.constants
        .push(("butterfly makespan vs Thm 3.1.1 shape".into(), c));
    t.note.push_str(&format!(
        " Fitted over the doubled rows: makespan ≈ {c:.3} · shape."
    ));
    let chart = Chart::new(
        "Butterfly algorithm ([CMS] §3.1): makespan against n (q = 4, L = 8, B = 2)",
        "n (inputs)",
        "makespan (cycles)",
    );
    let mut chart = chart
        .series(
            "measured",
            by_n.iter().map(|&(n, m, _)| (n, m)).collect(),
            Marker::LinePoints,
        )
        .series(
            &format!("{c:.3} · L(q + lg n) lg^(1/B) n lg lg(qn)/B"),
            by_n.iter().map(|&(n, _, s)| (n, c * s)).collect(),
            Marker::Dashed,
        );
    chart.log_x = true;
    out.charts.push(("butterfly.svg".into(), chart.to_svg()));
    out.tables.push(t);
}

// ---- circuit-switching survivors (Q000-9) ----

const SURVIVOR_SIZES: [u32; 6] = [16, 64, 256, 1024, 4096, 16384];
const SURVIVOR_VCS: [u32; 3] = [1, 2, 3];
/// Trials per survivors row per trial of the other tables (one-shot runs: cheap).
const SURVIVOR_TRIALS: u32 = 2;

fn survivor_sizes(config: &CmsConfig) -> Vec<u32> {
    SURVIVOR_SIZES
        .into_iter()
        .filter(|&n| n <= config.max_inputs)
        .collect()
}

/// One one-shot run of the survivors table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurvivorTrial {
    pub n: u32,
    pub b: u32,
    pub delivered: u64,
}

fn survivors_table(trials: &[SurvivorTrial], config: &CmsConfig, out: &mut Results) {
    let sizes = survivor_sizes(config);
    let mut t = Table::new(
        "survivors",
        "Circuit switching on the butterfly: worms that survive one shot ([CMS] §1.3, Q000-9)",
        &format!(
            "Every input sends one worm at cycle 0 to a uniformly random output; a header that \
             finds no free VC is discarded (drop mode, no retry). Means over {} trials. Predicted Θ(n/lg n) for B = 1 (Kruskal–Snir) and Θ(n/lg^(1/B) n) with B \
             VCs (Koch); c = least-squares constant of survivors ≈ c·n/lg^(1/B) n, per B.",
            SURVIVOR_TRIALS * config.trials
        ),
        &[
            "n",
            "B",
            "survivors",
            "fraction",
            "n/lg^(1/B) n",
            "survivors / prediction",
        ],
    );
    let mut chart = Chart::new(
        "One-shot circuit switching on the butterfly: survivors",
        "n (inputs)",
        "fraction of worms delivered",
    );
    chart.log_x = true;
    for b in SURVIVOR_VCS {
        let mut pts = Vec::new();
        for &n in &sizes {
            let s = mean(
                trials
                    .iter()
                    .filter(|x| x.n == n && x.b == b)
                    .map(|x| x.delivered as f64),
            );
            let pred = f64::from(n) / f64::from(n.trailing_zeros()).powf(1.0 / f64::from(b));
            t.rows.push(vec![
                n.to_string(),
                b.to_string(),
                f2(s),
                f3(s / f64::from(n)),
                f2(pred),
                f3(s / pred),
            ]);
            pts.push((f64::from(n), s, pred));
        }
        let c = fit(&pts.iter().map(|&(_, s, p)| (p, s)).collect::<Vec<_>>());
        out.constants.push((format!("survivors B={b}"), c));
        chart = chart
            .series(
                &format!("B = {b}, measured"),
                pts.iter().map(|&(n, s, _)| (n, s / n)).collect(),
                Marker::Points,
            )
            .series(
                &format!("B = {b}, {c:.3}/lg^(1/B) n"),
                pts.iter().map(|&(n, _, p)| (n, c * p / n)).collect(),
                Marker::Dashed,
            );
    }
    out.charts.push(("survivors.svg".into(), chart.to_svg()));
    out.tables.push(t);
}

// ---- the whole experiment ----

impl CmsConfig {
    pub fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.trials) {
            return Err(Error::invalid("trials", self.trials, "1..=1000"));
        }
        let mut distinct = self.vcs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if self.vcs.first() != Some(&1)
            || self.vcs.iter().any(|&b| !(1..=8).contains(&b))
            || distinct.len() != self.vcs.len()
        {
            return Err(Error::invalid(
                "vcs",
                format!("{:?}", self.vcs),
                "distinct values starting with 1 (the speed-up is T(1)/T(B)), each 1..=8",
            ));
        }
        if !(self.beta.is_finite() && (0.01..=1e6).contains(&self.beta)) {
            return Err(Error::invalid("beta", self.beta, "0.01..=1000000"));
        }
        if !self.max_inputs.is_power_of_two() || !(16..=16384).contains(&self.max_inputs) {
            return Err(Error::invalid(
                "max-inputs",
                self.max_inputs,
                "a power of two in 16..=16384",
            ));
        }
        Ok(())
    }
}

/// Runs every table with `jobs`: `None` when `jobs` runs one shard.
pub fn run(
    config: &CmsConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Results>> {
    config.check()?;
    let t = config.trials as usize;
    let seed = |table: u64, row: usize, trial: usize| {
        trial_seed(config.seed, table, row as u64, trial as u64)
    };
    let offline = jobs.map("offline", OFFLINE_GRID.len() * t, progress, |j| {
        let (d, m) = OFFLINE_GRID[j / t];
        offline_trial(config, d, m, seed(1, j / t, j % t))
    })?;
    let lower = jobs.map("lower-bound", LOWER_BOUND_GRID.len(), progress, |j| {
        let (b, c, d) = LOWER_BOUND_GRID[j];
        lower_bound_trial(b, c, d, seed(2, j, 0))
    })?;
    let speedup = jobs.map("speed-up", SPEEDUP_D.len() * t, progress, |j| {
        speedup_trial(config, SPEEDUP_D[j / t], seed(3, j / t, j % t))
    })?;
    let grid = butterfly_grid(&config.vcs, config.max_inputs);
    let fly = jobs.map("butterfly", grid.len() * t, progress, |j| {
        let (n, q, l, b, pass_mode) = grid[j / t];
        let run = butterfly::run(&ButterflyConfig {
            inputs: n,
            q,
            flits: l,
            vcs: b,
            beta: config.beta,
            seed: seed(4, j / t, j % t),
            pass_mode,
        })?;
        Ok(ButterflyTrial {
            n,
            q,
            l,
            b,
            pass_mode,
            run,
        })
    })?;
    let per = (SURVIVOR_TRIALS * config.trials) as usize;
    let sizes = survivor_sizes(config);
    let survivors = jobs.map(
        "survivors",
        sizes.len() * SURVIVOR_VCS.len() * per,
        progress,
        |j| {
            let row = j / per;
            let (b, n) = (SURVIVOR_VCS[row / sizes.len()], sizes[row % sizes.len()]);
            Ok(SurvivorTrial {
                n,
                b,
                delivered: butterfly::survivors(n, b, seed(5, row, j % per))?,
            })
        },
    )?;
    let (Some(offline), Some(lower), Some(speedup), Some(fly), Some(survivors)) =
        (offline, lower, speedup, fly, survivors)
    else {
        return Ok(None);
    };
    let mut out = Results::default();
    offline_table(&offline, config, &mut out);
    lower_bound_table(&lower, &mut out);
    speedup_tables(&speedup, config, &mut out);
    butterfly_table(&fly, config, &mut out);
    survivors_table(&survivors, config, &mut out);
    Ok(Some(out))
}

impl Results {
    /// The tables as one Markdown report.
    pub fn to_markdown(&self, config: &CmsConfig) -> String {
        let mut s = format!(
            "# [CMS] on the switch model: schedules, lower bound, speed-up, butterfly algorithm\n\n\
             Seed {}, {} trials per row, B ∈ {:?}, β = {}, butterflies up to n = {}. Every run is the cycle-level switch \
             model (wormhole, B VCs of one flit per link, B flits per link per cycle) with \
             every invariant checked.\n\n",
            config.seed, config.trials, config.vcs, config.beta, config.max_inputs
        );
        for t in &self.tables {
            s.push_str(&t.to_markdown());
            s.push('\n');
        }
        s.push_str("## Fitted constants\n\n| fit | c |\n|---|---:|\n");
        for (name, c) in &self.constants {
            s.push_str(&format!("| {name} | {c:.3} |\n"));
        }
        s
    }

    /// Tables and constants as JSON.
    pub fn to_json(&self, config: &CmsConfig) -> serde_json::Value {
        serde_json::json!({
            "config": config,
            "tables": self.tables,
            "constants": self.constants.iter().map(|(n, c)| serde_json::json!({"fit": n, "c": c})).collect::<Vec<_>>(),
        })
    }
}
