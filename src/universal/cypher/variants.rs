//! The tables of `experiment cypher` for [CMSV]'s variants and corollaries: Corollaries 1.10
//! and 1.11 on the torus and Theorem 1.13 on the mesh, Theorem 1.14(b)'s one-phase Monte
//! Carlo, and the store-and-forward variants (Theorems 1.7 and 1.8, Corollary 1.4).

use super::{
    BUFFERS, COROLLARY_FLITS, COROLLARY_NETWORKS, CypherConfig, NETWORKS, ONE_PHASE_INPUTS,
    ONE_PHASE_SAMPLES, ONE_PHASE_SHIFTS, SAF_BELOW, SafRuns, name, span,
};
use crate::plot::{Chart, Marker};
use crate::tables::{Results, Table, f2, f3, fit, mean};
use crate::universal::NetKind;
use crate::universal::batch::{self, Alg2Run};
use crate::universal::buffered::{self, BufferedRun};
use crate::universal::phase;

/// [CMSV] Corollaries 1.10 and 1.11 on the torus and Theorem 1.13 on the mesh: makespan
/// against each bound's shape in D (or the side m), L and B, with q worms per node. The
/// torus runs Algorithm 2; the mesh runs Theorem 1.13's tailored variant.
pub(super) fn corollaries_table(runs: &[Alg2Run], config: &CypherConfig, out: &mut Results) {
    let t = config.trials as usize;
    let nb = config.bandwidths.len();
    let nl = COROLLARY_FLITS.len();
    let q = f64::from(config.q);
    let mut table = Table::new(
        "corollaries",
        "Corollaries 1.10 and 1.11 on the torus, Theorem 1.13 on the mesh ([CMSV]): makespan against D, L and B",
        &format!(
            "{} worms per node to uniform destinations on dimension-order paths. Torus (node- and edge-symmetric, \
             degree Δ = 4): Algorithm 2; Corollary 1.10's shape (q·L·D^(1+1/B) + (D + L) lg n)/B and Corollary 1.11's \
             (q·L·D^(1+1/B)/Δ + (D + L) lg n)/B, the expected congestion q·D (resp. q·D/Δ) in place of C. Mesh of \
             side m, d = 2: Theorem 1.13's variant (start delays in [d·m], the array congestion q·m in the budget); \
             its shape (q·L·m·d^(1/B) + (m·d + L) d lg m)/B and, for comparison, Main Theorem 2's on the mesh \
             (q·L·m·(m·d)^(1/B) + (m·d + L) d lg m)/B. n: the number of worms. A bound's shape is right in D, L \
             and B where makespan / shape stays flat down the column.",
            config.q
        ),
        &[
            "network",
            "L",
            "B",
            "D",
            "C",
            "rounds",
            "makespan",
            "bound",
            "shape",
            "makespan / shape",
            "general bound",
            "general shape",
            "makespan / general shape",
        ],
    );
    let mut chart = Chart::new(
        "[CMSV] Cor. 1.11 (torus) and Thm 1.13 (mesh): makespan against the bound's shape",
        "shape (cycles)",
        "makespan (cycles)",
    );
    chart.log_x = true;
    chart.log_y = true;
    let mut fits = Vec::new();
    for kind in [NetKind::Torus, NetKind::Mesh] {
        let mut points = Vec::new();
        for (ni, &(k, n)) in COROLLARY_NETWORKS.iter().enumerate() {
            if k != kind {
                continue;
            }
            for (li, &l) in COROLLARY_FLITS.iter().enumerate() {
                for (bi, &b) in config.bandwidths.iter().enumerate() {
                    let row = (ni * nl + li) * nb + bi;
                    let rows = &runs[row * t..(row + 1) * t];
                    let makespan = mean(rows.iter().map(|r| r.makespan as f64));
                    let d = mean(rows.iter().map(|r| f64::from(r.dilation)));
                    let lg_n = (rows[0].messages.max(2) as f64).log2();
                    let (lf, bf) = (f64::from(l), f64::from(b));
                    let (bound, shape, general, general_shape) = if kind == NetKind::Torus {
                        let head = q * lf * d.powf(1.0 + 1.0 / bf);
                        let tail = (d + lf) * lg_n;
                        (
                            "Cor. 1.11",
                            (head / 4.0 + tail) / bf,
                            "Cor. 1.10",
                            (head + tail) / bf,
                        )
                    } else {
                        let m = f64::from(n.isqrt());
                        let tail = (2.0 * m + lf) * 2.0 * m.log2();
                        (
                            "Thm 1.13",
                            (q * lf * m * 2f64.powf(1.0 / bf) + tail) / bf,
                            "Main Thm 2 on the mesh",
                            (q * lf * m * (2.0 * m).powf(1.0 / bf) + tail) / bf,
                        )
                    };
                    points.push((shape, makespan));
                    table.rows.push(vec![
                        name(k, n),
                        l.to_string(),
                        b.to_string(),
                        f2(d),
                        f2(mean(rows.iter().map(|r| f64::from(r.congestion)))),
                        f2(mean(rows.iter().map(|r| r.delivered.len() as f64))),
                        f2(makespan),
                        bound.into(),
                        f2(shape),
                        f3(makespan / shape),
                        general.into(),
                        f2(general_shape),
                        f3(makespan / general_shape),
                    ]);
                }
            }
        }
        let c = fit(&points);
        let (lo, hi) = points
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
        let label = if kind == NetKind::Torus {
            "torus, Cor. 1.11"
        } else {
            "mesh, Thm 1.13"
        };
        chart = chart.series(label, points, Marker::Points).series(
            &format!("{c:.3} · shape ({label})"),
            vec![(lo, c * lo), (hi, c * hi)],
            Marker::Dashed,
        );
        fits.push((format!("{label}: makespan / shape"), c));
    }
    out.tables.push(table);
    out.charts.push(("corollaries.svg".into(), chart.to_svg()));
    out.constants.extend(fits);
}

/// [CMSV] Theorem 1.14(b) (Q004-5): the fraction of random sets of m worms that the butterfly
/// routes in one phase at bandwidth B, against the proof's upper bound, and the largest set
/// size that fits half the time against the per-phase capacity B·n·(lg lg n)^(2/B)/lg^(1/B) n
/// that the theorem's time bound implies.
pub(super) fn one_phase_table(loads: &[Vec<u32>], config: &CypherConfig, out: &mut Results) {
    let ns = ONE_PHASE_SHIFTS.len();
    let mut header = vec![
        "n".to_string(),
        "q".into(),
        "m".into(),
        "m / n".into(),
        "busiest link".into(),
    ];
    for b in &config.bandwidths {
        header.push(format!("P(one phase), B = {b}"));
        header.push(format!("bound, B = {b}"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "one-phase",
        "Random worm sets routed in one phase on the butterfly ([CMSV] Theorem 1.14(b))",
        &format!(
            "q = lg n worms per input to uniform outputs, as in the proof; {} random sets of m of the q·n \
             worms per row. Worms started together never delay one another only if no link carries more than B \
             of them: P(one phase) is the fraction of sets whose busiest link carries at most B. Bound: the \
             proof's exp(−(lg n/(3 lg lg n)) · m^(B+1)/((7n)^B (B+1)^(B+1))), read from the damaged text, for \
             m ≥ 7Bn/lg n ('-' below).",
            ONE_PHASE_SAMPLES * config.trials
        ),
        &header,
    );
    let mut capacity = Table::new(
        "one-phase-capacity",
        "The largest worm set that fits one phase half the time, against Theorem 1.14(b)'s shape",
        "Largest m of the one-phase table with P(one phase) ≥ 1/2. Theorem 1.14(b)'s time bound \
         Ω(q·L·lg^(1/B) n·(lg lg n)^(−2/B)/B) for q·n worms means at most B·n·(lg lg n)^(2/B)/lg^(1/B) n of them \
         per L-cycle phase, up to a constant.",
        &["n", "B", "largest m", "shape", "largest m / shape"],
    );
    let mut chart = Chart::new(
        "[CMSV] Thm 1.14(b): random worm sets routed in one phase, n = 1024",
        "m / n",
        "P(one phase)",
    );
    chart.log_x = true;
    for (ni, &n) in ONE_PHASE_INPUTS.iter().enumerate() {
        let lg = n.trailing_zeros();
        let rows = &loads[ni * ns..(ni + 1) * ns];
        let ms: Vec<u32> = ONE_PHASE_SHIFTS.iter().map(|&k| (n >> k).max(1)).collect();
        let fits = |r: &[u32], b: u32| {
            r.iter().filter(|&&l| l <= b).count() as f64 / r.len().max(1) as f64
        };
        for (r, &m) in rows.iter().zip(&ms) {
            let mut row = vec![
                n.to_string(),
                lg.to_string(),
                m.to_string(),
                f3(f64::from(m) / f64::from(n)),
                f2(mean(r.iter().map(|&l| f64::from(l)))),
            ];
            for &b in &config.bandwidths {
                row.push(f3(fits(r, b)));
                row.push(match phase::one_phase_bound(n, m, b) {
                    Some(p) => format!("{p:.2e}"),
                    None => "-".into(),
                });
            }
            table.rows.push(row);
        }
        for &b in &config.bandwidths {
            let largest = rows
                .iter()
                .zip(&ms)
                .filter(|(r, _)| fits(r, b) >= 0.5)
                .map(|(_, &m)| m)
                .max();
            let (lgf, bf) = (f64::from(lg), f64::from(b));
            let shape = bf * f64::from(n) * lgf.log2().powf(2.0 / bf) / lgf.powf(1.0 / bf);
            capacity.rows.push(vec![
                n.to_string(),
                b.to_string(),
                largest.map_or("none tried".into(), |m| m.to_string()),
                f2(shape),
                largest.map_or("-".into(), |m| f3(f64::from(m) / shape)),
            ]);
            if n == 1024 {
                let points = rows
                    .iter()
                    .zip(&ms)
                    .map(|(r, &m)| (f64::from(m) / f64::from(n), fits(r, b)))
                    .collect();
                chart = chart.series(&format!("B = {b}"), points, Marker::LinePoints);
            }
        }
    }
    out.tables.push(table);
    out.tables.push(capacity);
    out.charts.push(("one-phase.svg".into(), chart.to_svg()));
}

/// [CMSV] Theorem 1.8 and Corollary 1.4: the store-and-forward variants on links of one
/// packet per cycle, each against its bound's shape.
pub(super) fn store_and_forward_tables(runs: &[SafRuns], config: &CypherConfig, out: &mut Results) {
    let t = config.trials as usize;
    let below_rounds = format!("rounds, B' = {SAF_BELOW}");
    let below_makespan = format!("makespan, B' = {SAF_BELOW}");
    let mut thm = Table::new(
        "theorem-1.8",
        "Algorithm 1 as store-and-forward ([CMSV] Theorem 1.8)",
        &format!(
            "{} packets per terminal on links of one packet per cycle. Round 0: Algorithm 1's first round at \
             bandwidth B', every step a stage of B' cycles with buffers of B'; later rounds one copy per packet, \
             delays in [⌈240e²(α + 2) lg n⌉], stages of one cycle. Shape: (C + D)·ln(CD)/ln ln(CD) + \
             (D + lg n)·lg lg n. The B' = {SAF_BELOW} columns show what the later rounds cost when round 0 \
             leaves packets behind.",
            config.q
        ),
        &[
            "network",
            "C",
            "D",
            "prescribed B'",
            "rounds",
            "makespan",
            "shape",
            "makespan / shape",
            &below_rounds,
            &below_makespan,
        ],
    );
    let mut header = vec!["network".to_string(), "C".into(), "D".into()];
    for a in BUFFERS {
        header.push(format!("makespan, A = {a}"));
        header.push(format!("shape, A = {a}"));
        header.push(format!("makespan / shape, A = {a}"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut cor = Table::new(
        "corollary-1.4",
        "Store-and-forward with buffers of A packets ([CMSV] Corollary 1.4)",
        &format!(
            "{} packets per terminal on links of one packet per cycle with buffers of A: Algorithm 2 with L = 1 \
             at bandwidth A, each step a stage of A cycles. Shape: C·D^(1/A) + D lg n (optimal for C ≥ D lg n \
             and A ≥ lg D).",
            config.q
        ),
        &header,
    );
    for (ni, &(kind, n)) in NETWORKS.iter().enumerate() {
        let rows = &runs[ni * t..(ni + 1) * t];
        let shape = mean(rows.iter().map(|r| {
            let p = &r.prescribed;
            let (cc, d) = (f64::from(p.congestion), f64::from(p.dilation));
            let (ln, lnln) = batch::logs(p.congestion, p.dilation);
            let lg_n = (p.messages.max(2) as f64).log2();
            (cc + d) * ln / lnln + (d + lg_n) * lg_n.log2()
        }));
        let c = f2(mean(
            rows.iter().map(|r| f64::from(r.prescribed.congestion)),
        ));
        let d = f2(mean(rows.iter().map(|r| f64::from(r.prescribed.dilation))));
        let makespan = mean(rows.iter().map(|r| r.prescribed.makespan as f64));
        thm.rows.push(vec![
            name(kind, n),
            c.clone(),
            d.clone(),
            span(rows.iter().map(|r| r.prescribed.bandwidth)),
            f2(mean(rows.iter().map(|r| r.prescribed.rounds.len() as f64))),
            f2(makespan),
            f2(shape),
            f3(makespan / shape),
            f2(mean(rows.iter().map(|r| r.below.rounds.len() as f64))),
            f2(mean(rows.iter().map(|r| r.below.makespan as f64))),
        ]);
        let mut row = vec![name(kind, n), c, d];
        for ai in 0..BUFFERS.len() {
            let makespan = mean(rows.iter().map(|r| r.buffers[ai].makespan as f64));
            let shape = mean(rows.iter().map(|r| r.buffers[ai].shape));
            row.extend([f2(makespan), f2(shape), f3(makespan / shape)]);
        }
        cor.rows.push(row);
    }
    out.tables.push(thm);
    out.tables.push(cor);
    let mut buf = Table::new(
        "theorem-1.7",
        "Store-and-forward with buffers of A packets, growing ranks and discards ([CMSV] Theorem 1.7)",
        &format!(
            "{} packets per terminal on shortest paths, links of one packet per cycle, buffers of A. Forward pass: \
             growing ranks m·h·K + k with every packet born at the round's start, so each link sends the packet \
             that has crossed the fewest links (h), then the lowest k (uniform in 1..={}, drawn once), then the \
             lowest id, whatever m ({}); an overflowing buffer \
             keeps its A lowest discard ranks (uniform in [T·A], drawn once); backward pass: acknowledgements, as \
             long as the forward pass. Shapes: rounds (C·D^(1/A) + lg n)/A; time (C·D^(1/A) + lg n)(C + D + lg n)/A \
             or, in the other reading of the damaged text, (C·D^(1/A)/A + lg n)(C + D + lg n).",
            config.q,
            buffered::GROWING_K,
            buffered::GROWING_M
        ),
        &[
            "network",
            "A",
            "C",
            "D",
            "rounds",
            "rounds shape",
            "discarded",
            "makespan",
            "shape",
            "makespan / shape",
            "other reading",
            "makespan / other",
        ],
    );
    for (ni, &(kind, n)) in NETWORKS.iter().enumerate() {
        let rows = &runs[ni * t..(ni + 1) * t];
        for (ai, &a) in BUFFERS.iter().enumerate() {
            let runs: Vec<&BufferedRun> = rows.iter().map(|r| &r.buffered[ai]).collect();
            let makespan = mean(runs.iter().map(|r| r.makespan as f64));
            let shape = mean(runs.iter().map(|r| r.shape));
            let alt = mean(runs.iter().map(|r| r.shape_alt));
            buf.rows.push(vec![
                name(kind, n),
                a.to_string(),
                f2(mean(runs.iter().map(|r| f64::from(r.congestion)))),
                f2(mean(runs.iter().map(|r| f64::from(r.dilation)))),
                f2(mean(runs.iter().map(|r| r.delivered.len() as f64))),
                f2(mean(runs.iter().map(|r| r.rounds_shape))),
                f2(mean(
                    runs.iter().map(|r| r.discarded.iter().sum::<u64>() as f64),
                )),
                f2(makespan),
                f2(shape),
                f3(makespan / shape),
                f2(alt),
                f3(makespan / alt),
            ]);
        }
    }
    out.tables.push(buf);
}
