//! `experiment cypher`: the claims of [CMSV] measured on random path collections of the
//! butterfly, a mesh, a torus and a random graph, each beside its bound.
//!
//! - algorithm1: Routing Algorithm 1's rounds, makespan and per-round survivors at the
//!   prescribed bandwidth, and below it (the failure mode) ([CMSV] Main Theorem 1, §2);
//! - algorithm2: Routing Algorithm 2's rounds against Lemma 3.4's budget T and its makespan
//!   against Main Theorem 2's (L·C·D^(1/B) + (D + L)·lg n)/B, with the trivial lower bound
//!   L·C/B + D + L and the speed-up over B = 1 ([CMSV] §3);
//! - butterfly: Theorem 1.14(a)'s deterministic algorithm against Algorithm 2 at equal q, L
//!   and B, beside q·L·lg^(1/B) n;
//! - corollaries: Corollaries 1.10 and 1.11 on the torus and Theorem 1.13's variant on the
//!   mesh, makespan against each bound's shape over D, L and B;
//! - one-phase and one-phase-capacity: Theorem 1.14(b) by Monte Carlo, the fraction of random
//!   worm sets the butterfly routes in one phase without delaying a worm, against the proof's
//!   bound, and the largest set that fits half the time against the theorem's shape;
//! - theorem-1.8, corollary-1.4 and theorem-1.7: the store-and-forward variants of §5.5
//!   (Algorithm 1 with stages of B' cycles; Algorithm 2 with L = 1 emulated by buffers of A;
//!   growing ranks with bounded buffers and discards) against their shapes.
//!
//! Every trial is a job of [`Jobs`]: the tables do not depend on the number of threads.

mod variants;

use super::batch::{self, Alg1Run, Alg2Run, Collection};
use super::buffered::{self, BufferedRun};
use super::phase;
use super::{Net, NetKind};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::rng::trial_seed;
use crate::shard::Jobs;
use crate::stats::round6;
use crate::tables::{Results, Table, f2, f3, fit, mean};
use serde::{Deserialize, Serialize};

/// The experiment's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CypherConfig {
    pub trials: u32,
    pub seed: u64,
    /// Messages per terminal of every table but butterfly and one-phase.
    pub q: u32,
    /// Flits per worm of the algorithm 2 and butterfly tables.
    pub flits: u32,
    /// Bandwidths of the algorithm 2, butterfly, corollaries and one-phase tables.
    pub bandwidths: Vec<u32>,
    /// α of the w.h.p. bounds.
    pub alpha: f64,
}

impl Default for CypherConfig {
    fn default() -> Self {
        CypherConfig {
            trials: 5,
            seed: 1,
            q: 4,
            flits: 8,
            bandwidths: vec![1, 2, 3, 4],
            alpha: 1.0,
        }
    }
}

/// (network, terminals) of the algorithm 1 and 2 tables.
pub const NETWORKS: [(NetKind, u32); 8] = [
    (NetKind::Butterfly, 64),
    (NetKind::Butterfly, 256),
    (NetKind::Butterfly, 1024),
    (NetKind::Mesh, 64),
    (NetKind::Mesh, 256),
    (NetKind::Torus, 256),
    (NetKind::RandomGraph, 64),
    (NetKind::RandomGraph, 256),
];

/// Bandwidths of Algorithm 1's failure-mode rows (beside the prescribed one).
pub const BELOW: [u32; 3] = [4, 2, 1];

/// (inputs, q) of the butterfly table.
pub const BUTTERFLY: [(u32, u32); 4] = [(64, 2), (64, 8), (256, 8), (1024, 8)];

/// (network, nodes) of the corollaries table: the torus (node- and edge-symmetric) and the
/// mesh at three diameters.
pub const COROLLARY_NETWORKS: [(NetKind, u32); 6] = [
    (NetKind::Torus, 64),
    (NetKind::Torus, 256),
    (NetKind::Torus, 1024),
    (NetKind::Mesh, 64),
    (NetKind::Mesh, 256),
    (NetKind::Mesh, 1024),
];

/// Worm lengths L of the corollaries table.
pub const COROLLARY_FLITS: [u32; 3] = [4, 8, 16];

/// Butterfly inputs n of the one-phase table (q = lg n worms per input, as in the proof of
/// Theorem 1.14(b)).
pub const ONE_PHASE_INPUTS: [u32; 3] = [64, 256, 1024];

/// Set sizes m of the one-phase table, as fractions n/2^k of the inputs.
pub const ONE_PHASE_SHIFTS: [u32; 7] = [6, 5, 4, 3, 2, 1, 0];

/// Random sets per trial of the one-phase table.
const ONE_PHASE_SAMPLES: u32 = 100;

/// Round 0's bandwidth B' of Theorem 1.8's failure-mode column (beside the prescribed one).
pub const SAF_BELOW: u32 = 4;

/// Buffer sizes A of the Corollary 1.4 table.
pub const BUFFERS: [u32; 3] = [1, 2, 4];

/// The store-and-forward variants on one collection: Theorem 1.8 at the prescribed B' and at
/// [`SAF_BELOW`], Corollary 1.4 at every A of [`BUFFERS`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SafRuns {
    pub prescribed: Alg1Run,
    pub below: Alg1Run,
    pub buffers: Vec<Alg2Run>,
    /// Theorem 1.7 at every A of [`BUFFERS`].
    pub buffered: Vec<BufferedRun>,
}

impl CypherConfig {
    pub fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.trials) {
            return Err(Error::invalid("trials", self.trials, "1..=1000"));
        }
        if !(1..=64).contains(&self.q) {
            return Err(Error::invalid("q", self.q, "1..=64"));
        }
        if !(1..=256).contains(&self.flits) {
            return Err(Error::invalid("flits", self.flits, "1..=256"));
        }
        if self.bandwidths.first() != Some(&1)
            || self.bandwidths.iter().any(|&b| !(1..=16).contains(&b))
        {
            return Err(Error::invalid(
                "bandwidths",
                format!("{:?}", self.bandwidths),
                "values in 1..=16 starting with 1 (speed-ups are over B = 1)",
            ));
        }
        Error::check_distinct("bandwidths", &self.bandwidths, "bandwidths")?;
        if !(self.alpha.is_finite() && (0.0..=16.0).contains(&self.alpha)) {
            return Err(Error::invalid("alpha", self.alpha, "0..=16"));
        }
        Ok(())
    }
}

fn collection(kind: NetKind, n: u32, q: u32, seed: u64) -> Result<Collection> {
    let net = Net::new(kind, n, 2, seed)?;
    Collection::random(&net, q, seed)
}

/// One butterfly comparison: the deterministic and the randomised algorithm on one collection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ButterflyPair {
    pub deterministic: Alg2Run,
    pub randomised: Alg2Run,
}

/// Runs every table with `jobs`: `None` when `jobs` runs one shard.
pub fn run(
    config: &CypherConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Results>> {
    config.check()?;
    let t = config.trials as usize;
    let seed = |table: u64, row: usize, trial: usize| {
        trial_seed(config.seed, table, row as u64, trial as u64)
    };
    let variants = 1 + BELOW.len();
    let alg1 = jobs.map("algorithm1", NETWORKS.len() * variants * t, progress, |j| {
        let row = j / t;
        let (kind, n) = NETWORKS[row / variants];
        let s = seed(1, row / variants, j % t);
        let c = collection(kind, n, config.q, s)?;
        let b = (row % variants).checked_sub(1).map(|i| BELOW[i]);
        batch::algorithm1(&c, b, config.alpha, s, None)
    })?;
    let nb = config.bandwidths.len();
    let alg2 = jobs.map("algorithm2", NETWORKS.len() * nb * t, progress, |j| {
        let row = j / t;
        let (kind, n) = NETWORKS[row / nb];
        let s = seed(2, row / nb, j % t);
        let c = collection(kind, n, config.q, s)?;
        batch::algorithm2(
            &c,
            config.bandwidths[row % nb],
            config.flits,
            config.alpha,
            false,
            s,
            None,
        )
    })?;
    let fly = jobs.map("butterfly", BUTTERFLY.len() * nb * t, progress, |j| {
        let row = j / t;
        let (n, q) = BUTTERFLY[row / nb];
        let b = config.bandwidths[row % nb];
        let s = seed(3, row / nb, j % t);
        let c = collection(NetKind::Butterfly, n, q, s)?;
        Ok(ButterflyPair {
            deterministic: batch::butterfly_deterministic(&c, n, q, b, config.flits, None)?,
            randomised: batch::algorithm2(&c, b, config.flits, config.alpha, false, s, None)?,
        })
    })?;
    let nl = COROLLARY_FLITS.len();
    let cor = jobs.map(
        "corollaries",
        COROLLARY_NETWORKS.len() * nl * nb * t,
        progress,
        |j| {
            let row = j / t;
            let (kind, n) = COROLLARY_NETWORKS[row / (nl * nb)];
            let l = COROLLARY_FLITS[row / nb % nl];
            let b = config.bandwidths[row % nb];
            let s = seed(4, row / nb, j % t);
            let c = collection(kind, n, config.q, s)?;
            if kind == NetKind::Mesh {
                batch::algorithm2_mesh(&c, n.isqrt(), config.q, b, l, config.alpha, false, s, None)
            } else {
                batch::algorithm2(&c, b, l, config.alpha, false, s, None)
            }
        },
    )?;
    let ns = ONE_PHASE_SHIFTS.len();
    let phase = jobs.map("one-phase", ONE_PHASE_INPUTS.len() * ns, progress, |j| {
        let n = ONE_PHASE_INPUTS[j / ns];
        let m = (n >> ONE_PHASE_SHIFTS[j % ns]).max(1);
        phase::max_loads(
            n,
            n.trailing_zeros(),
            m,
            ONE_PHASE_SAMPLES * config.trials,
            seed(5, j, 0),
        )
    })?;
    let saf = jobs.map("store-and-forward", NETWORKS.len() * t, progress, |j| {
        let (kind, n) = NETWORKS[j / t];
        let s = seed(6, j / t, j % t);
        let c = collection(kind, n, config.q, s)?;
        Ok(SafRuns {
            prescribed: batch::algorithm1_store_and_forward(&c, None, config.alpha, s, None)?,
            below: batch::algorithm1_store_and_forward(&c, Some(SAF_BELOW), config.alpha, s, None)?,
            buffers: BUFFERS
                .iter()
                .map(|&a| batch::algorithm2_buffers(&c, a, config.alpha, s, None))
                .collect::<Result<_>>()?,
            buffered: BUFFERS
                .iter()
                .map(|&a| buffered::theorem_1_7(&c, a, config.alpha, s, None))
                .collect::<Result<_>>()?,
        })
    })?;
    let (Some(alg1), Some(alg2), Some(fly), Some(cor), Some(phase), Some(saf)) =
        (alg1, alg2, fly, cor, phase, saf)
    else {
        return Ok(None);
    };
    let mut out = Results::default();
    alg1_table(&alg1, config, &mut out);
    alg2_table(&alg2, config, &mut out);
    butterfly_table(&fly, config, &mut out);
    variants::corollaries_table(&cor, config, &mut out);
    variants::one_phase_table(&phase, config, &mut out);
    variants::store_and_forward_tables(&saf, config, &mut out);
    Ok(Some(out))
}

/// A parameter over a row's trials (each trial's collection has its own C and D): its value,
/// or its range.
fn span(values: impl Iterator<Item = u32>) -> String {
    let (lo, hi) = values.fold((u32::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

fn name(kind: NetKind, n: u32) -> String {
    format!("{} {n}", kind.name())
}

fn alg1_table(runs: &[Alg1Run], config: &CypherConfig, out: &mut Results) {
    let t = config.trials as usize;
    let variants = 1 + BELOW.len();
    let mut table = Table::new(
        "algorithm1",
        "Routing Algorithm 1 ([CMSV] §2): rounds and makespan at the prescribed bandwidth and below it",
        &format!(
            "{} packets per terminal to uniform destinations. B prescribed = ⌈10 ln(CD)/ln ln(CD)⌉; m = \
             ⌈(α + 2) ln n/(2 ln(CD))⌉, k = ⌈lg(B·m)⌉ + 1, α = {}. Planned: the schedule of rounds 0..=k, \
             2(C + D) + 2k(C₁ + D) with C₁ = 2Bm. Conflicting after round 0: the most undelivered packets sharing \
             a link with an undelivered one (the analysis needs at most B·m). Rounds beyond k mean the w.h.p. \
             guarantee failed.",
            config.q, config.alpha
        ),
        &[
            "network",
            "C",
            "D",
            "B",
            "m",
            "k",
            "rounds",
            "beyond k",
            "makespan",
            "planned",
            "conflicting after round 0",
            "B·m",
        ],
    );
    for (ni, &(kind, n)) in NETWORKS.iter().enumerate() {
        for v in 0..variants {
            let rows = &runs[(ni * variants + v) * t..(ni * variants + v + 1) * t];
            let b = span(rows.iter().map(|r| r.bandwidth));
            table.rows.push(vec![
                name(kind, n),
                f2(mean(rows.iter().map(|r| f64::from(r.congestion)))),
                f2(mean(rows.iter().map(|r| f64::from(r.dilation)))),
                if v == 0 {
                    format!("{b} (prescribed)")
                } else {
                    b
                },
                span(rows.iter().map(|r| r.m)),
                span(rows.iter().map(|r| r.k)),
                f2(mean(rows.iter().map(|r| r.rounds.len() as f64))),
                f2(mean(rows.iter().map(|r| f64::from(r.extra_rounds)))),
                f2(mean(rows.iter().map(|r| r.makespan as f64))),
                f2(mean(rows.iter().map(|r| r.planned as f64))),
                f2(mean(
                    rows.iter().map(|r| r.rounds[0].max_conflicting as f64),
                )),
                span(rows.iter().map(|r| r.bandwidth * r.m)),
            ]);
        }
    }
    out.tables.push(table);
}

fn alg2_table(runs: &[Alg2Run], config: &CypherConfig, out: &mut Results) {
    let t = config.trials as usize;
    let nb = config.bandwidths.len();
    let mut table = Table::new(
        "algorithm2",
        "Routing Algorithm 2 ([CMSV] §3): rounds against Lemma 3.4's budget, makespan against Main Theorem 2",
        &format!(
            "{} worms of L = {} flits per terminal, ranks in [T·B] and delays in [D] drawn once; rounds of 4D + L \
             cycles. Shape: (L·C·D^(1/B) + (D + L) lg n)/B; lower bound L·C/B + D + L; speed-up: makespan at \
             B = 1 over makespan at B (the theorem's shape makes it superlinear in B).",
            config.q, config.flits
        ),
        &[
            "network",
            "B",
            "C",
            "D",
            "rounds",
            "budget T",
            "makespan",
            "shape",
            "makespan / shape",
            "makespan / lower bound",
            "speed-up",
        ],
    );
    let mut points = Vec::new();
    let mut chart = Chart::new(
        "Algorithm 2 ([CMSV] §3): makespan against (L·C·D^(1/B) + (D + L) lg n)/B",
        "shape (cycles)",
        "makespan (cycles)",
    );
    chart.log_x = true;
    chart.log_y = true;
    for (ni, &(kind, n)) in NETWORKS.iter().enumerate() {
        let base = mean(
            runs[(ni * nb) * t..(ni * nb + 1) * t]
                .iter()
                .map(|r| r.makespan as f64),
        );
        for (bi, &b) in config.bandwidths.iter().enumerate() {
            let rows = &runs[(ni * nb + bi) * t..(ni * nb + bi + 1) * t];
            let makespan = mean(rows.iter().map(|r| r.makespan as f64));
            let shape = mean(rows.iter().map(|r| r.shape));
            let lower = mean(rows.iter().map(|r| r.lower));
            points.push((shape, makespan));
            table.rows.push(vec![
                name(kind, n),
                b.to_string(),
                f2(mean(rows.iter().map(|r| f64::from(r.congestion)))),
                f2(mean(rows.iter().map(|r| f64::from(r.dilation)))),
                f2(mean(rows.iter().map(|r| r.delivered.len() as f64))),
                f2(mean(rows.iter().map(|r| r.budget as f64))),
                f2(makespan),
                f2(shape),
                f3(makespan / shape),
                f3(makespan / lower),
                f2(base / makespan),
            ]);
        }
    }
    let c = fit(&points);
    let (lo, hi) = points
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
    chart = chart.series("measured", points, Marker::Points).series(
        &format!("{c:.3} · shape"),
        vec![(lo, c * lo), (hi, c * hi)],
        Marker::Dashed,
    );
    out.tables.push(table);
    out.charts.push(("algorithm2.svg".into(), chart.to_svg()));
    out.constants
        .push(("algorithm2 makespan / shape".into(), round6(c)));
}

fn butterfly_table(runs: &[ButterflyPair], config: &CypherConfig, out: &mut Results) {
    let t = config.trials as usize;
    let nb = config.bandwidths.len();
    let mut table = Table::new(
        "butterfly",
        "The deterministic butterfly algorithm ([CMSV] Theorem 1.14(a)) against Algorithm 2",
        &format!(
            "q worms of L = {} flits per input to uniform outputs. Deterministic: ℓ = min(L, lg n), ⌈lg n/ℓ⌉ \
             concurrent passes, ranks i·n + bitrev(x), rounds of 2 lg n + L − 1 cycles. Shape of Theorem \
             1.14(a): (q·L·lg^(1/B) n + (L + lg n) lg n)/B.",
            config.flits
        ),
        &[
            "n",
            "q",
            "B",
            "deterministic rounds",
            "deterministic makespan",
            "Algorithm 2 rounds",
            "Algorithm 2 makespan",
            "shape",
            "deterministic / shape",
        ],
    );
    let l = f64::from(config.flits);
    for (gi, &(n, q)) in BUTTERFLY.iter().enumerate() {
        for (bi, &b) in config.bandwidths.iter().enumerate() {
            let rows = &runs[(gi * nb + bi) * t..(gi * nb + bi + 1) * t];
            let lg = f64::from(n.trailing_zeros());
            let bf = f64::from(b);
            let shape = (f64::from(q) * l * lg.powf(1.0 / bf) + (l + lg) * lg) / bf;
            let det = mean(rows.iter().map(|r| r.deterministic.makespan as f64));
            table.rows.push(vec![
                n.to_string(),
                q.to_string(),
                b.to_string(),
                f2(mean(
                    rows.iter().map(|r| r.deterministic.delivered.len() as f64),
                )),
                f2(det),
                f2(mean(
                    rows.iter().map(|r| r.randomised.delivered.len() as f64),
                )),
                f2(mean(rows.iter().map(|r| r.randomised.makespan as f64))),
                f2(shape),
                f3(det / shape),
            ]);
        }
    }
    out.tables.push(table);
}

/// The tables as one Markdown report.
pub fn to_markdown(results: &Results, config: &CypherConfig) -> String {
    let mut s = format!(
        "# [CMSV]: universal routing algorithms on random path collections\n\n\
         Seed {}, {} trials per row, q = {}, L = {}, α = {}. Every forward pass is simulated cycle by cycle \
         on the bufferless link arbiter; backward passes (acknowledgements replaying the forward pass) are \
         counted, not simulated: by construction they never put more than B on a link.\n\n",
        config.seed, config.trials, config.q, config.flits, config.alpha
    );
    for t in &results.tables {
        s.push_str(&t.to_markdown());
        s.push('\n');
    }
    s.push_str("## Fitted constants\n\n| fit | c |\n|---|---:|\n");
    for (name, c) in &results.constants {
        s.push_str(&format!("| {name} | {c:.3} |\n"));
    }
    s
}
