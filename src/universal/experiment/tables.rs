//! The tables and charts of `experiment scheideler-voecking`, one builder per table, from the
//! trials [`super::run`] collected.

use super::{
    FailTrial, NETWORKS, RECOVERY, RecoveryTrial, SAF_LOADS, SafTrial, SvConfig, ThresholdTrial,
};
use crate::plot::{Chart, Marker};
use crate::tables::{Results, Table, f2, f3, mean};
use crate::universal::continuous::TAIL_POINTS;
use crate::universal::growing_rank;
use crate::universal::stability::Regression;

pub(super) fn saf_table(trials: &[SafTrial], config: &SvConfig, out: &mut Results) {
    let t = config.trials as usize;
    let mut table = Table::new(
        "growing-rank",
        "Store-and-forward with growing ranks ([SV] Theorem 2.4) against the link load λ",
        &format!(
            "{} terminals, uniform destinations. In theorem: Theorem 2.4's condition holds with ε ≤ 0.9 for some (m, K) (K a power of two, m ≤ 4096; \
             only up to λ ≈ 0.33), the smallest of which is used; else (20, 128), where ε > 0.9. Stable: trials whose buffers did not grow over the window and drained. \
             Time / D₀: mean routing time (delivery − birth + 1) over the path length; the theorem promises O(D₀) \
             for λ < 1/e (the butterfly: O(lg n) for input rates below 2/e; node-symmetric networks: O(D)). \
             Delay: routing time − D₀.",
            config.terminals
        ),
        &[
            "network",
            "λ",
            "in theorem",
            "(m, K)",
            "stable",
            "time / D₀",
            "delay",
            "p99 time",
        ],
    );
    let mut chart = Chart::new(
        "Growing-rank store-and-forward ([SV] Thm 2.4): mean routing time / D0 against λ",
        "link load λ",
        "routing time / D0",
    );
    let loads = SAF_LOADS.len();
    for (ni, kind) in NETWORKS.iter().enumerate() {
        let mut points = Vec::new();
        for (li, &load) in SAF_LOADS.iter().enumerate() {
            let rows = &trials[(ni * loads + li) * t..(ni * loads + li + 1) * t];
            let stable = rows.iter().filter(|r| r.stable).count();
            let stretch = mean(rows.iter().map(|r| r.stretch));
            if stable == t {
                points.push((load, stretch));
            }
            table.rows.push(vec![
                kind.name().into(),
                f2(load),
                growing_rank::theorem_parameters(load).is_some().to_string(),
                format!("({}, {})", rows[0].m, rows[0].k),
                format!("{stable}/{t}"),
                f3(stretch),
                f3(mean(rows.iter().map(|r| r.delay))),
                format!("{:.1}", mean(rows.iter().map(|r| r.p99 as f64))),
            ]);
        }
        chart = chart.series(kind.name(), points, Marker::LinePoints);
    }
    let e = 1.0 / std::f64::consts::E;
    chart = chart.series(
        "λ = 1/e (Theorem 2.4's limit)",
        vec![(e, 1.0), (e, 4.0)],
        Marker::Dashed,
    );
    out.tables.push(table);
    out.charts.push(("growing-rank.svg".into(), chart.to_svg()));
}

/// Rows of the tail table: the first loads of [`SAF_LOADS`], Theorem 2.4's region
/// (0.1, 0.2, 0.3 < 1/e); the chart shows the last of them.
const TAIL_LOADS: usize = 3;

/// [SV] Theorem 2.4's tail (Q003-1): a packet arrives within m·D₀ + t with probability at
/// least 1 − 2^(−at + b). Measured: P(T − D₀ > t), which bounds P(T − m·D₀ > t) from above,
/// pooled over the trials, its geometric decay fitted, and the largest T/D₀ against m.
pub(super) fn tail_table(trials: &[SafTrial], config: &SvConfig, out: &mut Results) {
    let t = config.trials as usize;
    let loads = SAF_LOADS.len();
    let mut header = vec![
        "network".to_string(),
        "λ".into(),
        "m".into(),
        "messages".into(),
    ];
    header.extend(TAIL_POINTS.iter().map(|p| format!("P(T − D₀ > {p})")));
    header.extend(["decay a per cycle".into(), "largest T / D₀".into()]);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "growing-rank-tail",
        "Store-and-forward with growing ranks: the tail of the routing time ([SV] Theorem 2.4)",
        &format!(
            "{} terminals, uniform destinations, λ inside Theorem 2.4's region, (m, K) as in growing-rank. \
             Theorem 2.4: a packet with path length D₀ arrives within m·D₀ + t with probability at least \
             1 − 2^(−at + b). The columns give P(T − D₀ > t) over the messages born in the windows of all \
             trials (one still out after the drain counts as exceeding every t), an \
             upper bound on P(T − m·D₀ > t) since m ≥ 1. Decay: a of the least-squares fit \
             log₂ P(T − D₀ > t) ≈ b − a·t over the points with P > 0. Largest T / D₀ below m: no packet \
             came near the m·D₀ after which the theorem's tail starts.",
            config.terminals
        ),
        &header,
    );
    let mut chart = Chart::new(
        "Growing-rank store-and-forward ([SV] Thm 2.4): P(T - D0 > t), λ = 0.3",
        "t (cycles lost to contention)",
        "P(T - D0 > t)",
    );
    chart.log_y = true;
    for (ni, kind) in NETWORKS.iter().enumerate() {
        for (li, &load) in SAF_LOADS.iter().enumerate().take(TAIL_LOADS) {
            let rows = &trials[(ni * loads + li) * t..(ni * loads + li + 1) * t];
            let measured: u64 = rows.iter().map(|r| r.measured).sum();
            let p: Vec<f64> = (0..TAIL_POINTS.len())
                .map(|k| {
                    let over: u64 = rows
                        .iter()
                        .map(|r| r.tail.get(k).copied().unwrap_or(0))
                        .sum();
                    over as f64 / measured.max(1) as f64
                })
                .collect();
            let points: Vec<(f64, f64)> = TAIL_POINTS
                .iter()
                .zip(&p)
                .filter(|(_, p)| **p > 0.0)
                .map(|(&x, &p)| (x as f64, p))
                .collect();
            let mut fit = Regression::default();
            for &(x, p) in &points {
                fit.add(x, p.log2());
            }
            let mut row = vec![
                kind.name().to_string(),
                f2(load),
                rows[0].m.to_string(),
                measured.to_string(),
            ];
            row.extend(p.iter().map(|&p| {
                if p > 0.0 {
                    format!("{p:.2e}")
                } else {
                    "0".into()
                }
            }));
            row.push(if points.len() >= 2 {
                f3(-fit.slope())
            } else {
                "-".into()
            });
            row.push(f3(rows.iter().map(|r| r.stretch_max).fold(0.0, f64::max)));
            table.rows.push(row);
            if li + 1 == TAIL_LOADS {
                chart = chart.series(kind.name(), points, Marker::LinePoints);
            }
        }
    }
    out.tables.push(table);
    out.charts
        .push(("growing-rank-tail.svg".into(), chart.to_svg()));
}

pub(super) fn fail_table(trials: &[FailTrial], config: &SvConfig, out: &mut Results) {
    let t = config.trials as usize;
    let nb = config.bandwidths.len();
    let mut table = Table::new(
        "trial-failures",
        "Wormhole trials at Theorem 3.1's load: failed trials against 3/(2^B − 1)",
        &format!(
            "{} terminals, L = {}, λ_B = B/(12e·L·(2D)^(1/B)) with D the network's longest path; R = 2D + L − 1. \
             Theorem 3.1: at most 3/(2^B − 1) failed trials per worm in expectation, routing time about \
             R·(1 + 3/(2^B − 1)) at most. Variable lengths: the same runs with every worm's length uniform in \
             1..=2L − 1, so that only the expectation L is known (the theorem's results hold so, [SV] §3); \
             a worm longer than L retries every 2D + its length − 1 cycles.",
            config.terminals, config.flits
        ),
        &[
            "network",
            "B",
            "λ_B",
            "R",
            "stable",
            "failed trials",
            "bound 3/(2^B−1)",
            "time",
            "bound R(1 + 3/(2^B−1))",
            "stable, variable lengths",
            "failed trials, variable lengths",
            "time, variable lengths",
        ],
    );
    for (ni, kind) in NETWORKS.iter().enumerate() {
        for (bi, &b) in config.bandwidths.iter().enumerate() {
            let rows = &trials[(ni * nb + bi) * t..(ni * nb + bi + 1) * t];
            let bound = 3.0 / (2f64.powi(b as i32) - 1.0);
            table.rows.push(vec![
                kind.name().into(),
                b.to_string(),
                format!("{:.5}", rows[0].load),
                rows[0].period.to_string(),
                format!("{}/{t}", rows.iter().filter(|r| r.stable).count()),
                format!("{:.4}", mean(rows.iter().map(|r| r.failed))),
                f3(bound),
                f2(mean(rows.iter().map(|r| r.latency))),
                f2(rows[0].period as f64 * (1.0 + bound)),
                format!("{}/{t}", rows.iter().filter(|r| r.variable_stable).count()),
                format!("{:.4}", mean(rows.iter().map(|r| r.variable_failed))),
                f2(mean(rows.iter().map(|r| r.variable_latency))),
            ]);
        }
    }
    out.tables.push(table);
}

pub(super) fn threshold_table(trials: &[ThresholdTrial], config: &SvConfig, out: &mut Results) {
    let t = config.trials as usize;
    let nb = config.bandwidths.len();
    let mut table = Table::new(
        "trial-threshold",
        "Wormhole trials: the largest stable load against Theorem 3.1's λ_B and the cap B/L",
        &format!(
            "Doubling from λ_B until a run is unstable (its buffers grow over the {}-cycle window) or the load \
             passes B/L: the largest stable load, the first unstable one (−1: none below the cap), their ratio \
             to λ_B. Theorem 3.1 guarantees λ_B; λ ≤ B/L is necessary.",
            config.window
        ),
        &[
            "network",
            "B",
            "λ_B",
            "largest stable",
            "first unstable",
            "stable / λ_B",
            "B/L",
        ],
    );
    let mut chart = Chart::new(
        "Wormhole trials ([SV] Thm 3.1): largest stable load against B",
        "link bandwidth B",
        "link load λ",
    );
    chart.log_y = true;
    let mut theorem = Vec::new();
    for (ni, kind) in NETWORKS.iter().enumerate() {
        let mut points = Vec::new();
        for (bi, &b) in config.bandwidths.iter().enumerate() {
            let rows = &trials[(ni * nb + bi) * t..(ni * nb + bi + 1) * t];
            let stable = mean(rows.iter().map(|r| r.stable));
            let unstable: Vec<f64> = rows
                .iter()
                .map(|r| r.unstable)
                .filter(|&u| u > 0.0)
                .collect();
            points.push((f64::from(b), stable.max(1e-6)));
            if ni == 0 {
                theorem.push((f64::from(b), rows[0].theorem));
            }
            table.rows.push(vec![
                kind.name().into(),
                b.to_string(),
                format!("{:.5}", rows[0].theorem),
                format!("{stable:.5}"),
                if unstable.is_empty() {
                    "-1".into()
                } else {
                    format!("{:.5}", mean(unstable))
                },
                f2(stable / rows[0].theorem),
                f3(f64::from(b) / f64::from(config.flits)),
            ]);
        }
        chart = chart.series(kind.name(), points, Marker::LinePoints);
    }
    chart = chart
        .series("λ_B (butterfly's D)", theorem, Marker::Dashed)
        .series(
            "B/L",
            config
                .bandwidths
                .iter()
                .map(|&b| (f64::from(b), f64::from(b) / f64::from(config.flits)))
                .collect(),
            Marker::Dashed,
        );
    out.tables.push(table);
    out.charts
        .push(("trial-threshold.svg".into(), chart.to_svg()));
}

pub(super) fn recovery_table(trials: &[RecoveryTrial], config: &SvConfig, out: &mut Results) {
    let t = config.trials as usize;
    let mut table = Table::new(
        "recovery",
        "Recovery from a bad scenario ([SV] §4): overflow stacks against none",
        &format!(
            "{} terminals. The generation rate is multiplied by F for cycles 2000..4000; the window starts at 4000. Recovered: the first window cycle from which the messages born in every later twentieth of the window are routed within twice the steady time (the window's last quarter); the profile's resolution is a twentieth of the window. Theorem: the recovery time with stacks, m·T (Theorem 4.1, T = ⌈4(D + lg(N + |E|))⌉) or 2RT (Theorem 4.3, T = ⌈4 lg(N + D + L)⌉). Stacked: messages moved to an overflow stack.",
            config.terminals
        ),
        &[
            "protocol",
            "network",
            "λ",
            "F",
            "stacks",
            "recovered after",
            "theorem",
            "first twentieth",
            "steady",
            "stacked",
        ],
    );
    for (ri, &(wormhole, kind, load, factor)) in RECOVERY.iter().enumerate() {
        for stacks in [false, true] {
            let row = ri * 2 + usize::from(stacks);
            let rows = &trials[row * t..(row + 1) * t];
            let recovered: Vec<f64> = rows
                .iter()
                .filter_map(|r| r.recovered.map(|x| x as f64))
                .collect();
            table.rows.push(vec![
                if wormhole {
                    "trial (B = 2)".into()
                } else {
                    "growing-rank".into()
                },
                kind.name().into(),
                f3(load),
                format!("{factor}"),
                if stacks { "yes".into() } else { "no".into() },
                if recovered.len() == t {
                    format!("{:.0}", mean(recovered))
                } else {
                    format!("{}/{t} not in the window", t - recovered.len())
                },
                rows[0].theorem.to_string(),
                f2(mean(rows.iter().map(|r| r.first))),
                f2(mean(rows.iter().map(|r| r.steady))),
                format!("{:.0}", mean(rows.iter().map(|r| r.stacked as f64))),
            ]);
        }
    }
    out.tables.push(table);
}
