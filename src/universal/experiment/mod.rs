//! `experiment scheideler-voecking`: the claims of [SV] measured under continuous traffic on
//! the butterfly, a mesh, a torus (node-symmetric) and a random graph, each beside the
//! theorem's bound.
//!
//! - growing-rank: [SV] Theorem 2.4 (and its butterfly and node-symmetric corollaries): the
//!   routing time over D₀ and the stability of store-and-forward with growing ranks against
//!   the link load λ, inside (λ < 1/e) and beyond the theorem's region;
//! - growing-rank-tail: Theorem 2.4's tail, P(T − D₀ > t) against t on a log scale (it
//!   bounds P(T − m·D₀ > t), which the theorem makes geometric), and the largest T/D₀
//!   against m;
//! - trial-failures: [SV] Theorem 3.1: failed trials per worm at the theorem's load
//!   λ_B = B/(12e·L·(2D)^(1/B)) against 3/(2^B − 1), and the routing time against
//!   R·(1 + 3/(2^B − 1));
//! - trial-threshold: the largest stable load found (doubling from λ_B) against λ_B and the
//!   cap B/L ([SV] §1: λ ≤ B/L is necessary);
//! - recovery: [SV] §4's bad scenario (a burst of F times the rate just before the window)
//!   with and without overflow stacks: when newly born messages are routed as fast as in the
//!   steady state again, against the recovery times m·T (Theorem 4.1) and 2RT (Theorem 4.3).
//!
//! Every trial is a job of [`Jobs`]: the tables do not depend on the number of threads.

use super::continuous::{self, Burst, Outcome, Traffic, Window};
use super::growing_rank::{self, GrowingRank, GrowingRankNet, Overflow};
use super::trial::{TrialNet, TrialOverflow, TrialParams};
use super::{Net, NetKind};
use crate::error::{Error, Result};
use crate::rng::trial_seed;
use crate::shard::Jobs;
use crate::stats::round6;
use crate::tables::Results;
use serde::{Deserialize, Serialize};

mod tables;

/// The experiment's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvConfig {
    /// Trials (independent seeds) per row.
    pub trials: u32,
    pub seed: u64,
    /// Terminals of every network (a power of 4 so that the butterfly, the mesh and the torus
    /// all have it).
    pub terminals: u32,
    /// Cycles of each measured window.
    pub window: u64,
    /// Link bandwidths B of the wormhole tables.
    pub bandwidths: Vec<u32>,
    /// Flits per worm L.
    pub flits: u32,
}

impl Default for SvConfig {
    fn default() -> Self {
        SvConfig {
            trials: 3,
            seed: 1,
            terminals: 64,
            window: 10_000,
            bandwidths: vec![1, 2, 3, 4],
            flits: 8,
        }
    }
}

/// The networks of every table.
pub const NETWORKS: [NetKind; 4] = [
    NetKind::Butterfly,
    NetKind::Mesh,
    NetKind::Torus,
    NetKind::RandomGraph,
];

/// Link loads of the store-and-forward table: inside Theorem 2.4's region (λ < 1/e) and
/// beyond it, up to the necessary λ ≤ 1.
pub const SAF_LOADS: [f64; 9] = [0.1, 0.2, 0.3, 0.36, 0.5, 0.7, 0.9, 0.95, 1.05];

/// Most messages in the system before a run stops as unstable (`overflow`): fixed, so that
/// the tables do not depend on the machine; at most about 1.3 GB per run (L = 256).
const MAX_BUFFERED: u64 = 1 << 20;

/// Most doublings of the wormhole threshold search.
const MAX_DOUBLINGS: u32 = 12;

impl SvConfig {
    pub fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.trials) {
            return Err(Error::invalid("trials", self.trials, "1..=1000"));
        }
        if !(16..=1024).contains(&self.terminals)
            || !self.terminals.is_power_of_two()
            || !self.terminals.trailing_zeros().is_multiple_of(2)
        {
            return Err(Error::invalid(
                "terminals",
                self.terminals,
                "a power of 4 in 16..=1024 (a butterfly's inputs and a square mesh; the link loads walk every pair's path)",
            ));
        }
        if !(1000..=10_000_000).contains(&self.window) {
            return Err(Error::invalid(
                "window",
                self.window,
                "1000..=10000000 cycles",
            ));
        }
        if self.bandwidths.is_empty() || self.bandwidths.iter().any(|&b| !(1..=16).contains(&b)) {
            return Err(Error::invalid(
                "bandwidths",
                format!("{:?}", self.bandwidths),
                "one or more of 1..=16",
            ));
        }
        Error::check_distinct("bandwidths", &self.bandwidths, "bandwidths")?;
        if !(1..=256).contains(&self.flits) {
            return Err(Error::invalid("flits", self.flits, "1..=256"));
        }
        Ok(())
    }

    fn window(&self, warmup: u64) -> Window {
        Window {
            warmup: warmup.max(1000),
            window: self.window,
            drain: self.window,
            max_buffered: MAX_BUFFERED,
            burst: None,
        }
    }

    /// Theorem 3.1's load for bandwidth `b` on a network of dilation `d`.
    fn theorem_load(&self, b: u32, d: u32) -> f64 {
        f64::from(b)
            / (12.0
                * std::f64::consts::E
                * f64::from(self.flits)
                * (2.0 * f64::from(d)).powf(1.0 / f64::from(b)))
    }
}

fn net(kind: NetKind, terminals: u32, seed: u64) -> Result<Net> {
    Net::new(kind, terminals, 2, seed)
}

/// One store-and-forward run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SafTrial {
    pub stable: bool,
    pub stretch: f64,
    pub delay: f64,
    pub p99: u64,
    pub m: u32,
    pub k: u32,
    /// Measured messages (born in the window), and how many of them lost more than t cycles
    /// to contention for each t of [`TAIL_POINTS`](continuous::TAIL_POINTS) (one still out after the drain: every t).
    pub measured: u64,
    pub tail: Vec<u64>,
    pub stretch_max: f64,
}

/// One wormhole run at the theorem's load.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailTrial {
    pub stable: bool,
    pub failed: f64,
    pub latency: f64,
    pub load: f64,
    pub period: u64,
    /// The same with worm lengths uniform in 1..=2L − 1 (Q003-12: only the expected length
    /// is known).
    pub variable_stable: bool,
    pub variable_failed: f64,
    pub variable_latency: f64,
}

/// One wormhole threshold search: the largest stable load and the first unstable one.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThresholdTrial {
    pub theorem: f64,
    pub stable: f64,
    pub unstable: f64,
}

fn saf_trial(
    kind: NetKind,
    load: f64,
    config: &SvConfig,
    seed: u64,
    wiring: u64,
) -> Result<SafTrial> {
    let net = net(kind, config.terminals, wiring)?;
    let traffic = Traffic::at_load(&net, load, 1)?;
    let (m, k) = growing_rank::theorem_parameters(load).unwrap_or((20, 128));
    let mut p = GrowingRankNet::new(
        GrowingRank {
            m,
            k,
            overflow: None,
        },
        net.data_links(),
        seed,
    )?;
    let w = config.window(10 * u64::from(net.dilation()));
    let o = continuous::run(&net, &traffic, w, seed, &mut p)?;
    Ok(SafTrial {
        stable: o.stability.stable,
        stretch: o.stretch,
        delay: o.delay.mean,
        p99: o.latency.p99,
        m,
        k,
        measured: o.measured,
        tail: {
            let undrained = o.measured.saturating_sub(o.delivered_measured);
            o.delay_tail.iter().map(|&k| k + undrained).collect()
        },
        stretch_max: o.stretch_max,
    })
}

/// A wormhole run at `load` with bandwidth `b`; with `variable_lengths`, worms of 1..=2L − 1
/// flits.
fn trial_run(
    net: &Net,
    b: u32,
    load: f64,
    variable_lengths: bool,
    config: &SvConfig,
    seed: u64,
) -> Result<Outcome> {
    let params = TrialParams {
        bandwidth: b,
        flits: config.flits,
        dilation: net.dilation(),
        overflow: None,
        variable_lengths,
    };
    let mut traffic = Traffic::at_load(net, load, config.flits)?;
    traffic.variable_lengths = variable_lengths;
    let mut p = TrialNet::new(params, net, seed)?;
    continuous::run(
        net,
        &traffic,
        config.window(10 * params.period()),
        seed,
        &mut p,
    )
}

fn fail_trial(
    kind: NetKind,
    b: u32,
    config: &SvConfig,
    seed: u64,
    wiring: u64,
) -> Result<FailTrial> {
    let net = net(kind, config.terminals, wiring)?;
    let d = net.dilation();
    let load = config.theorem_load(b, d);
    let o = trial_run(&net, b, load, false, config, seed)?;
    let v = trial_run(&net, b, load, true, config, seed)?;
    Ok(FailTrial {
        stable: o.stability.stable,
        failed: o.failed_trials_mean,
        latency: o.latency.mean,
        load,
        period: 2 * u64::from(d) + u64::from(config.flits) - 1,
        variable_stable: v.stability.stable,
        variable_failed: v.failed_trials_mean,
        variable_latency: v.latency.mean,
    })
}

fn threshold_trial(
    kind: NetKind,
    b: u32,
    config: &SvConfig,
    seed: u64,
    wiring: u64,
) -> Result<ThresholdTrial> {
    let net = net(kind, config.terminals, wiring)?;
    let theorem = config.theorem_load(b, net.dilation());
    let cap = f64::from(b) / f64::from(config.flits);
    let mut stable = 0.0;
    let mut unstable = f64::INFINITY;
    let mut load = theorem;
    for _ in 0..MAX_DOUBLINGS {
        if load > cap {
            break;
        }
        if trial_run(&net, b, load, false, config, seed)?
            .stability
            .stable
        {
            stable = load;
            load *= 2.0;
        } else {
            unstable = load;
            break;
        }
    }
    Ok(ThresholdTrial {
        theorem: round6(theorem),
        stable: round6(stable),
        unstable: if unstable.is_finite() {
            round6(unstable)
        } else {
            -1.0
        },
    })
}

/// The bad scenarios of the recovery table: (protocol is wormhole, network, load, burst
/// factor). The burst lasts the second half of a 4000-cycle warm-up; the window is twice the
/// configured one (store-and-forward) or the configured one (wormhole, B = 2).
pub const RECOVERY: [(bool, NetKind, f64, f64); 4] = [
    (false, NetKind::Butterfly, 0.3, 6.0),
    (false, NetKind::Mesh, 0.3, 6.0),
    (true, NetKind::Butterfly, 0.02, 8.0),
    (true, NetKind::Mesh, 0.01, 8.0),
];

/// One bad-scenario run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecoveryTrial {
    /// Window cycle from which new messages are routed within twice the steady time.
    pub recovered: Option<u64>,
    pub first: f64,
    pub steady: f64,
    pub stacked: u64,
    /// The theorem's recovery time: m·T or 2RT.
    pub theorem: u64,
}

/// One run of a [`RECOVERY`] scenario (protocol is wormhole, network, load, burst factor).
fn recovery_trial(
    (wormhole, kind, load, factor): (bool, NetKind, f64, f64),
    stacks: bool,
    config: &SvConfig,
    seed: u64,
    wiring: u64,
) -> Result<RecoveryTrial> {
    let net = net(kind, config.terminals, wiring)?;
    let d = net.dilation();
    let flits = if wormhole { config.flits } else { 1 };
    let traffic = Traffic::at_load(&net, load, flits)?;
    let generators = u64::from(net.terminals) * u64::from(traffic.generators);
    let window = Window {
        warmup: 4000,
        window: if wormhole {
            config.window
        } else {
            2 * config.window
        },
        drain: config.window,
        max_buffered: MAX_BUFFERED,
        burst: Some(Burst {
            cycles: 2000,
            factor,
        }),
    };
    let (o, stacked, theorem) = if wormhole {
        let overflow = TrialOverflow::defaults(generators, d, flits, load);
        let params = TrialParams {
            bandwidth: 2,
            flits,
            dilation: d,
            overflow: stacks.then_some(overflow),
            variable_lengths: false,
        };
        let mut p = TrialNet::new(params, &net, seed)?;
        let o = continuous::run(&net, &traffic, window, seed, &mut p)?;
        (
            o,
            p.counters.stacked,
            2 * params.period() * u64::from(overflow.t),
        )
    } else {
        let (m, k) = growing_rank::theorem_parameters(load).unwrap_or((20, 128));
        let overflow = Overflow::defaults(d, generators, net.data_links(), load);
        let params = GrowingRank {
            m,
            k,
            overflow: stacks.then_some(overflow),
        };
        let mut p = GrowingRankNet::new(params, net.data_links(), seed)?;
        let o = continuous::run(&net, &traffic, window, seed, &mut p)?;
        (o, p.stacked, u64::from(m) * overflow.t)
    };
    let r = o.recovery.expect("a burst gives a recovery profile");
    Ok(RecoveryTrial {
        recovered: r.recovered_after,
        first: r.means[0].unwrap_or(0.0),
        steady: r.steady,
        stacked,
        theorem,
    })
}

/// Runs every table with `jobs`: `None` when `jobs` runs one shard.
pub fn run(
    config: &SvConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Results>> {
    config.check()?;
    let t = config.trials as usize;
    let seed = |table: u64, row: usize, trial: usize| {
        trial_seed(config.seed, table, row as u64, trial as u64)
    };
    // a random graph's wiring depends on the trial only: every row of a trial sees one graph
    let wiring = |trial: usize| trial_seed(config.seed, 0, 0, trial as u64);
    let loads = SAF_LOADS.len();
    let saf = jobs.map("growing-rank", NETWORKS.len() * loads * t, progress, |j| {
        let row = j / t;
        saf_trial(
            NETWORKS[row / loads],
            SAF_LOADS[row % loads],
            config,
            seed(1, row, j % t),
            wiring(j % t),
        )
    })?;
    let nb = config.bandwidths.len();
    let fails = jobs.map("trial-failures", NETWORKS.len() * nb * t, progress, |j| {
        let row = j / t;
        fail_trial(
            NETWORKS[row / nb],
            config.bandwidths[row % nb],
            config,
            seed(2, row, j % t),
            wiring(j % t),
        )
    })?;
    let thresholds = jobs.map("trial-threshold", NETWORKS.len() * nb * t, progress, |j| {
        let row = j / t;
        threshold_trial(
            NETWORKS[row / nb],
            config.bandwidths[row % nb],
            config,
            seed(3, row, j % t),
            wiring(j % t),
        )
    })?;
    let recovery = jobs.map("recovery", RECOVERY.len() * 2 * t, progress, |j| {
        let row = j / t;
        recovery_trial(
            RECOVERY[row / 2],
            row % 2 == 1,
            config,
            seed(4, row / 2, j % t),
            wiring(j % t),
        )
    })?;
    let (Some(saf), Some(fails), Some(thresholds), Some(recovery)) =
        (saf, fails, thresholds, recovery)
    else {
        return Ok(None);
    };
    let mut out = Results::default();
    tables::saf_table(&saf, config, &mut out);
    tables::tail_table(&saf, config, &mut out);
    tables::fail_table(&fails, config, &mut out);
    tables::threshold_table(&thresholds, config, &mut out);
    tables::recovery_table(&recovery, config, &mut out);
    Ok(Some(out))
}

/// The tables as one Markdown report.
pub fn to_markdown(results: &Results, config: &SvConfig) -> String {
    let mut s = format!(
        "# [SV] under continuous traffic: growing ranks and wormhole trials\n\n\
         Seed {}, {} trials per row, {} terminals, {}-cycle windows. Generators at every terminal create \
         messages with uniform destinations at the rate that loads the busiest link with λ.\n\n",
        config.seed, config.trials, config.terminals, config.window
    );
    for t in &results.tables {
        s.push_str(&t.to_markdown());
        s.push('\n');
    }
    s
}
