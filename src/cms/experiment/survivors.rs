//! The circuit-switching survivors table ([CMS] §1.3, Q000-9).

use super::*;

pub(super) const SURVIVOR_SIZES: [u32; 6] = [16, 64, 256, 1024, 4096, 16384];
pub(super) const SURVIVOR_VCS: [u32; 3] = [1, 2, 3];
/// Trials per survivors row per trial of the other tables (one-shot runs: cheap).
pub(super) const SURVIVOR_TRIALS: u32 = 2;

pub(super) fn survivor_sizes(config: &CmsConfig) -> Vec<u32> {
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

pub(super) fn survivors_table(trials: &[SurvivorTrial], config: &CmsConfig, out: &mut Results) {
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
