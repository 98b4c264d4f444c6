//! The speed-up table (T(1)/T(B), [CMS] §1.2, Q000-3) and the virtual-cut-through table
//! ([CMS] §1.4, Q000-4).

use super::offline::{DEGREE, OFFLINE_FLITS, WIDTH, never_blocks};
use super::*;

/// Dilations of the speed-up and virtual-cut-through tables.
pub(super) const SPEEDUP_D: [u32; 3] = [8, 16, 32];
pub(super) const SPEEDUP_M: u32 = 64;
pub(super) const SPEEDUP_N: u32 = 64;

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

pub(super) fn speedup_trial(config: &CmsConfig, d: u32, seed: u64) -> Result<SpeedupTrial> {
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

pub(super) fn speedup_tables(trials: &[SpeedupTrial], config: &CmsConfig, out: &mut Results) {
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
