//! Throughput benchmark of the switch model: switch-cycles per second, and side by side with
//! Verilator and BookSim ([`against`]).

pub mod against;

use crate::config::{FlowControl, SimConfig};
use crate::error::Result;
use crate::pruned::{Engine, PrunedConfig};
use crate::sim::{Kernel, Simulation};
use crate::topology::TopologyKind;
use crate::traffic::Traffic;
use std::time::Instant;

/// The benchmark configuration of the foundation issue: a 1024-input butterfly, B = 2, L = 4,
/// Bernoulli traffic at rate 0.3, 10 000 cycles, wormhole.
pub fn default_config() -> SimConfig {
    SimConfig {
        topology: TopologyKind::Butterfly,
        inputs: 1024,
        vcs: 2,
        flits: 4,
        mode: FlowControl::Wormhole,
        traffic: Traffic::Bernoulli { rate: 0.3 },
        cycles: Some(10_000),
        ..SimConfig::default()
    }
}

/// Most runs `--repeat` takes per side.
pub const MAX_REPEAT: usize = 50;

/// `repeat` runs per measurement are within 1..=[`MAX_REPEAT`].
pub fn check_repeat(repeat: usize) -> Result<()> {
    if (1..=MAX_REPEAT).contains(&repeat) {
        return Ok(());
    }
    Err(crate::error::Error::invalid(
        "repeat",
        repeat,
        format!("1..={MAX_REPEAT}"),
    ))
}

/// The median of `xs` (the mean of the middle two for an even count; NaN for none): the figure
/// a benchmark reports from repeated runs, which one slow run on a busy machine does not move.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The smallest and largest of `xs` (NaN, NaN for none).
pub fn range(xs: &[f64]) -> (f64, f64) {
    xs.iter()
        .fold((f64::NAN, f64::NAN), |(lo, hi), &x| (x.min(lo), x.max(hi)))
}

/// A measured run.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub switches: u64,
    pub cycles: u64,
    pub seconds: f64,
    pub switch_cycles_per_second: f64,
    pub flits_delivered_per_cycle: f64,
    /// Whether the bit-plane kernel ran the cycles (else the general one).
    pub bit_planes: bool,
    /// Threads that ran each cycle ([`Simulation::threads_running`]).
    pub threads: usize,
    /// On several threads, the round trip of a cache line between the first two, measured
    /// before the run ([`Simulation::threads_round_trip`], [`ROUND_TRIPS`]).
    pub round_trip: Option<std::time::Duration>,
}

/// Round trips [`run`] times between two threads (after as many untimed; at most
/// [`crate::gang::ROUND_TRIP_BUDGET`] in all).
pub const ROUND_TRIPS: u32 = 10_000;

impl BenchResult {
    /// The kernel that ran: "bit-planes" or "general".
    pub fn kernel(&self) -> &'static str {
        if self.bit_planes {
            "bit-planes"
        } else {
            "general"
        }
    }
}

/// Runs `config` with invariant checks off on `kernel` ([`Simulation::set_kernel`]) on
/// `threads` threads ([`Simulation::set_threads`]) and measures the cycle loop (not set-up).
pub fn run(config: SimConfig, threads: usize, kernel: Kernel) -> Result<BenchResult> {
    let mut sim = Simulation::new(config)?;
    sim.set_check_invariants(false);
    sim.set_threads(threads)?;
    sim.set_kernel(kernel)?;
    let round_trip = sim.threads_round_trip(ROUND_TRIPS);
    let start = Instant::now();
    // Every cycle stepped, idle ones too: the speed is of cycles simulated, not skipped.
    let report = sim.run_observed(|_| Ok(()))?;
    let seconds = start.elapsed().as_secs_f64();
    let switches = sim.fabric.topo.node_count() as u64;
    Ok(BenchResult {
        switches,
        cycles: report.cycles,
        seconds,
        switch_cycles_per_second: (switches * report.cycles) as f64 / seconds,
        flits_delivered_per_cycle: report.throughput.flits_per_input_cycle
            * f64::from(report.config.inputs),
        bit_planes: sim.bit_planes(),
        threads: sim.threads_running(),
        round_trip,
    })
}

/// The pruned-butterfly benchmark: the stage algorithm on the register-level network of a
/// 1024-leaf pruned butterfly routing a random permutation (seed 1).
pub fn default_pruned_config() -> PrunedConfig {
    PrunedConfig::new(1024, Traffic::RandomPermutation, 1)
}

/// Routes `config` on the cycle engine and measures vertex-cycles per second (reported as
/// switch-cycles: every vertex is a switch); `flits_delivered_per_cycle` is messages per cycle.
pub fn run_pruned(mut config: PrunedConfig) -> Result<BenchResult> {
    config.engine = Engine::Cycle;
    let router = config.router()?;
    let switches = router.graph.vertex_count() as u64;
    let start = Instant::now();
    let report = router.run(None)?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(BenchResult {
        switches,
        cycles: report.routing_cycles,
        seconds,
        switch_cycles_per_second: (switches * report.routing_cycles) as f64 / seconds,
        flits_delivered_per_cycle: report.delivered as f64 / report.routing_cycles.max(1) as f64,
        bit_planes: false,
        threads: 1,
        round_trip: None,
    })
}
