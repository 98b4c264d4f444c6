//! The offline table ([CMS] Theorem 2.1.6, Q000-1): refined and naive schedules on random
//! leveled networks against C, D and B.

use super::*;

/// Dilations and message counts of the offline table (leveled networks 8 switches wide,
/// out-degree 2).
pub(super) const OFFLINE_GRID: [(u32, u32); 8] = [
    (4, 32),
    (4, 128),
    (8, 32),
    (8, 128),
    (16, 32),
    (16, 128),
    (32, 32),
    (32, 128),
];
pub(super) const WIDTH: u32 = 8;
pub(super) const DEGREE: u32 = 2;
/// Flits per worm of the offline, speed-up and virtual-cut-through tables.
pub(super) const OFFLINE_FLITS: u32 = 8;

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
pub(super) fn congestion(p: &Problem) -> u32 {
    p.resource_users()
        .iter()
        .map(|u| u.len() as u32)
        .max()
        .unwrap_or(0)
}

/// Runs a schedule and checks that it never blocks.
pub(super) fn never_blocks(
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

pub(super) fn offline_trial(config: &CmsConfig, d: u32, m: u32, seed: u64) -> Result<OfflineTrial> {
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

pub(super) fn offline_table(trials: &[OfflineTrial], config: &CmsConfig, out: &mut Results) {
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
