//! The butterfly-algorithm table ([CMS] §3.1, Theorem 3.1.1, Q000-5).

use super::*;

/// (n, q, L, B, pass mode) rows: the base point (64, 4, 8, 2, doubled), one parameter varied
/// at a time, and the base point with the second pass round the wrap-around butterfly.
pub(super) fn butterfly_grid(vcs: &[u32], max_inputs: u32) -> Vec<(u32, u32, u32, u32, PassMode)> {
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

pub(super) fn butterfly_table(trials: &[ButterflyTrial], config: &CmsConfig, out: &mut Results) {
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
