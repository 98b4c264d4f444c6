//! The lower-bound table ([CMS] Theorem 2.2.1, Q000-2): every release policy on the instance
//! against (L − D)·M/B.

use super::*;

pub(super) const LOWER_BOUND_GRID: [(u32, u32, u32); 8] = [
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

pub(super) fn lower_bound_trial(b: u32, c: u32, d: u32, seed: u64) -> Result<LowerBoundTrial> {
    let lb = lower_bound::generate(b, c, d)?;
    let p = &lb.problem;
    let flits = 2 * p.dilation();
    let bound = lb.bound(flits);
    let mut makespans = Vec::new();
    for (name, releases) in lower_bound::policies(p, b, flits, seed)? {
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

pub(super) fn lower_bound_table(trials: &[LowerBoundTrial], out: &mut Results) {
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
