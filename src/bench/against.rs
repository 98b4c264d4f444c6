//! The model's speed side by side with two other ways to simulate the same network: its own
//! generated RTL compiled by Verilator (tracing off, replaying the model's injections), and
//! BookSim2 (a binary the user built from its public source) on its radix-2 butterfly `fly`.
//!
//! The semantics differ, and the report says so. The RTL is the model, cycle for cycle
//! (co-simulation holds them equal), so its accepted throughput is the model's. BookSim's
//! input-queued router has a routing / VC-allocation / switch-allocation pipeline and a credit
//! loop that flitforge's one-cycle flit step ([CMS] §1.1) does not: the same offered load
//! runs at a different latency and saturates elsewhere, so both sides' accepted throughput is
//! reported beside their speed.

use super::{BenchResult, run};
use crate::config::SimConfig;
use crate::cosim::Simulator;
use crate::error::{Error, Result};
use crate::rtl::stimulus::Stimulus;
use crate::rtl::{RtlDesign, STIMULUS_FILE};
use crate::sim::{Kernel, Simulation};
use crate::traffic::Traffic;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// The offered loads of the comparison (messages per input per cycle).
pub const LOADS: [f64; 3] = [0.01, 0.1, 0.3];
/// The virtual-channel counts of the comparison.
pub const VCS: [u32; 3] = [1, 2, 4];

/// What the model is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Against {
    Verilator,
    Booksim,
}

impl Against {
    pub fn name(self) -> &'static str {
        match self {
            Against::Verilator => "verilator",
            Against::Booksim => "booksim",
        }
    }

    /// The network the comparison runs unless flags say otherwise: the 64-input butterfly
    /// (B = 2, L = 4, W = 8, 20 000 cycles) for Verilator; for BookSim the 1024-terminal
    /// butterfly with one-flit messages, one-flit VC registers and one flit per link per
    /// cycle (BookSim's channel), 5 000 cycles.
    pub fn default_config(self) -> SimConfig {
        use crate::config::LinkBandwidth;
        match self {
            Against::Verilator => SimConfig {
                inputs: 64,
                vcs: 2,
                flits: 4,
                flit_bits: 8,
                traffic: Traffic::Bernoulli { rate: 0.3 },
                cycles: Some(20_000),
                ..SimConfig::default()
            },
            Against::Booksim => SimConfig {
                inputs: 1024,
                vcs: 1,
                flits: 1,
                vc_depth: 1,
                link_bandwidth: LinkBandwidth::One,
                traffic: Traffic::Bernoulli { rate: 0.3 },
                cycles: Some(5_000),
                ..SimConfig::default()
            },
        }
    }
}

/// One simulator's runs of a point.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub tool: String,
    /// Network cycles simulated (by each run).
    pub cycles: u64,
    /// Wall-clock seconds of the simulation loop (not set-up, not compilation): the median of
    /// the runs' times.
    pub seconds: f64,
    /// The median of `runs` (for an even count, the mean of the middle two: then not quite
    /// `cycles / seconds`).
    pub cycles_per_second: f64,
    /// Cycles per second of each run, in the order they ran (each after a run of the other
    /// side, so that a machine whose speed drifts slows both alike).
    pub runs: Vec<f64>,
    /// Accepted flits per input (terminal) per cycle.
    pub accepted: f64,
}

impl Side {
    /// A side whose runs each simulated `cycles` cycles in `seconds`.
    fn of(tool: String, runs: &[(u64, f64)], accepted: f64) -> Side {
        let seconds: Vec<f64> = runs.iter().map(|&(_, s)| s).collect();
        let rates: Vec<f64> = runs.iter().map(|&(c, s)| c as f64 / s).collect();
        Side {
            tool,
            cycles: runs.first().map_or(0, |&(c, _)| c),
            seconds: super::median(&seconds),
            cycles_per_second: super::median(&rates),
            runs: rates,
            accepted,
        }
    }

    /// The median cycles per second, with the range of the runs when there are several.
    fn cell(&self) -> String {
        let (lo, hi) = super::range(&self.runs);
        match self.runs.len() {
            0 | 1 => format!("{:.0}", self.cycles_per_second),
            _ => format!("{:.0} ({lo:.0}–{hi:.0})", self.cycles_per_second),
        }
    }
}

/// One point of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub inputs: u32,
    pub rate: f64,
    pub vcs: u32,
    /// The kernel that ran the model ("bit-planes" or "general").
    pub kernel: &'static str,
    pub model: Side,
    pub other: Side,
    /// Model cycles per second over the other's (medians).
    pub speedup: f64,
}

/// The model's side of a point: the cycles and seconds of its runs so far, each of `config`
/// on one thread with invariant checks off, on `kernel` ([`run`]).
struct ModelRuns {
    kernel: Kernel,
    runs: Vec<(u64, f64)>,
    accepted: f64,
    /// The kernel that ran ([`BenchResult::kernel`]).
    ran: &'static str,
}

impl ModelRuns {
    fn new(kernel: Kernel) -> Self {
        ModelRuns {
            kernel,
            runs: Vec::new(),
            accepted: f64::NAN,
            ran: "general",
        }
    }

    fn run(&mut self, config: &SimConfig) -> Result<()> {
        let r: BenchResult = run(config.clone(), 1, self.kernel)?;
        self.runs.push((r.cycles, r.seconds));
        self.accepted = r.flits_delivered_per_cycle / f64::from(config.inputs);
        self.ran = r.kernel();
        Ok(())
    }

    fn side(&self) -> Side {
        Side::of("flitforge".into(), &self.runs, self.accepted)
    }
}

fn row(config: &SimConfig, kernel: &'static str, model: Side, other: Side) -> Row {
    let rate = match config.traffic {
        Traffic::Bernoulli { rate } => rate,
        _ => f64::NAN,
    };
    Row {
        inputs: config.inputs,
        rate,
        vcs: config.vcs,
        kernel,
        speedup: model.cycles_per_second / other.cycles_per_second,
        model,
        other,
    }
}

/// The pause before each timed run of `bench --against verilator` ([`verilator`]).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// The model against its own RTL under Verilator (`--binary -O3`, no tracing), in `dir`: the
/// testbench replays the model's injections, so both run the same cycles of the same traffic.
/// The RTL is compiled once; then the two sides run in turn, `repeat` times each.
pub fn verilator(config: &SimConfig, dir: &Path, repeat: usize, kernel: Kernel) -> Result<Row> {
    super::check_repeat(repeat)?;
    let mut sim = Simulation::new(config.clone())?;
    crate::rtl::check_supported(&sim)?;
    crate::rtl::build::BuildSize::of(&sim).check(Simulator::Verilator)?;
    sim.set_check_invariants(false);
    let mut stimulus = Stimulus::default();
    sim.run_observed(|s| {
        stimulus.sample(s);
        Ok(())
    })?;
    let report = sim.report(false);
    let mut design = RtlDesign::new(
        &sim,
        "flitforge bench --against verilator",
        stimulus.cycles(),
    )?;
    design.without_waveform();
    design.write(dir)?;
    crate::files::write_atomic(dir.join(STIMULUS_FILE), stimulus.to_hex())?;
    crate::tools::verilator_tb(dir, &design.verilog_files(), &["-O3"])?;
    let mut model = ModelRuns::new(kernel);
    // One untimed run of each side first: the compilation just ended, and a run of tenths of
    // a second would time its aftermath (and the binaries' first loading). Then each timed
    // run starts after a pause: for a tenth of a second or two after a simulation process
    // exits, this machine runs the next one up to a third slower, which would count against
    // whichever side runs next (the model's runs, of about 50 ms, most).
    run(config.clone(), 1, kernel)?;
    crate::tools::tool(dir, "./obj/Vtb", &[])?;
    let settle = || std::thread::sleep(SETTLE);
    let mut runs = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        settle();
        model.run(config)?;
        settle();
        let start = Instant::now();
        crate::tools::tool(dir, "./obj/Vtb", &[])?;
        runs.push((stimulus.cycles(), start.elapsed().as_secs_f64()));
    }
    let other = Side::of(
        crate::tools::version("verilator", "--version").unwrap_or_else(|| "verilator".into()),
        &runs,
        report.throughput.flits_per_input_cycle,
    );
    Ok(row(config, model.ran, model.side(), other))
}

/// The BookSim2 configuration equivalent to `config`: the k = 2 butterfly `fly` with
/// destination-tag routing, `vcs` VCs of `vc_depth` flits, input-queued routers with
/// single-cycle allocation stages, uniform Bernoulli packets of L flits at the same rate,
/// one period of `cycles` cycles (BookSim's warm-up period; no latency threshold aborts it).
pub fn booksim_config(config: &SimConfig) -> Result<String> {
    let Traffic::Bernoulli { rate } = config.traffic else {
        return Err(Error::invalid(
            "traffic",
            config.traffic.name(),
            "bernoulli (BookSim's Bernoulli injection of uniform traffic)",
        ));
    };
    if config.topology != crate::topology::TopologyKind::Butterfly {
        return Err(Error::invalid(
            "topology",
            config.topology.name(),
            "butterfly (BookSim's fly)",
        ));
    }
    let cycles = config.cycles.unwrap_or(5_000);
    Ok(format!(
        "// Written by flitforge bench --against booksim.\n\
         topology = fly;\nk = 2;\nn = {n};\nrouting_function = dest_tag;\nrouter = iq;\n\
         num_vcs = {vcs};\nvc_buf_size = {depth};\nwait_for_tail_credit = 0;\n\
         vc_allocator = separable_input_first;\nsw_allocator = separable_input_first;\nalloc_iters = 1;\n\
         credit_delay = 0;\nrouting_delay = 0;\nvc_alloc_delay = 1;\nsw_alloc_delay = 1;\nst_final_delay = 1;\n\
         input_speedup = 1;\noutput_speedup = 1;\ninternal_speedup = 1.0;\n\
         traffic = uniform;\ninjection_process = bernoulli;\npacket_size = {flits};\ninjection_rate = {rate};\n\
         sim_type = latency;\nwarmup_periods = 1;\nsample_period = {cycles};\nmax_samples = 1;\nsim_count = 1;\n\
         latency_thres = -1.0;\nseed = {seed};\nprint_activity = 0;\n",
        n = config.inputs.trailing_zeros(),
        vcs = config.vcs,
        depth = config.effective_depth(),
        flits = config.flits,
        seed = config.seed,
    ))
}

/// The model against BookSim2 (`binary`), run in `dir` on [`booksim_config`], the two sides
/// in turn, `repeat` times each. BookSim's own figures are read from its output: "Time taken
/// is N cycles" (or, when it ends without a drain, the configured cycles), "Total run time S"
/// and the accepted flit rate.
pub fn booksim(
    config: &SimConfig,
    binary: &Path,
    dir: &Path,
    repeat: usize,
    kernel: Kernel,
) -> Result<Row> {
    super::check_repeat(repeat)?;
    let text = booksim_config(config)?;
    let program = std::fs::canonicalize(binary).map_err(|e| Error::io(binary.display(), e))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let file = dir.join("booksim.cfg");
    crate::files::write_atomic(&file, &text)?;
    let mut model = ModelRuns::new(kernel);
    let (mut runs, mut accepted) = (Vec::with_capacity(repeat), f64::NAN);
    for _ in 0..repeat {
        model.run(config)?;
        let out = crate::tools::run(dir, &program.to_string_lossy(), &["booksim.cfg"])?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        crate::files::write_atomic(dir.join("booksim.log"), &stdout)?;
        let after = |key: &str| -> Option<f64> {
            let line = stdout.lines().rev().find(|l| l.contains(key))?;
            let rest = &line[line.find(key)? + key.len()..];
            rest.split_whitespace().next()?.parse().ok()
        };
        // One period of `cycles` steps, then (when BookSim calls it stable) a drain it counts
        // in "Time taken".
        let cycles = after("Time taken is").unwrap_or(config.cycles.unwrap_or(5_000) as f64);
        let Some(seconds) = after("Total run time") else {
            return Err(Error::parse(
                file.display(),
                format!(
                    "BookSim printed no \"Total run time\" (exit {:?}); see {}",
                    out.status.code(),
                    dir.join("booksim.log").display()
                ),
            ));
        };
        runs.push((cycles as u64, seconds));
        accepted = after("Accepted flit rate average=").unwrap_or(f64::NAN);
    }
    let other = Side::of("booksim2".into(), &runs, accepted);
    Ok(row(config, model.ran, model.side(), other))
}

/// The offered load of `config` for a directory name (`0.3`, or `file` for other traffic).
pub fn rate_label(config: &SimConfig) -> String {
    match config.traffic {
        Traffic::Bernoulli { rate } => rate.to_string(),
        _ => config.traffic.name().to_string(),
    }
}

/// The comparison as a Markdown table, with what differs.
pub fn markdown(against: Against, rows: &[Row]) -> String {
    let other = against.name();
    let repeat = rows.first().map_or(1, |r| r.model.runs.len());
    let mut s = format!(
        "| inputs | load | VCs | flitforge kernel | flitforge cycles/s | {other} cycles/s | speed-up | flitforge accepted | {other} accepted |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|\n"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.1}× | {:.4} | {:.4} |",
            r.inputs,
            r.rate,
            r.vcs,
            r.kernel,
            r.model.cell(),
            r.other.cell(),
            r.speedup,
            r.model.accepted,
            r.other.accepted
        );
    }
    if repeat > 1 {
        let _ = writeln!(
            s,
            "\nCycles/s: the median of {repeat} runs per side, the two sides in turn (the range of the runs in brackets); the speed-up is the medians' ratio."
        );
    }
    s.push_str(match against {
        Against::Verilator => "\nOne thread each. The RTL replays the model's injections and is the model cycle for cycle (co-simulation), so its accepted throughput is the model's; Verilator's time is the simulation binary's run, not its compilation, and includes reading the stimulus file. Each side runs once untimed before the timed runs, and each timed run starts after a pause of 0.3 s.\n",
        Against::Booksim => "\nOne thread each. Accepted: flits per terminal per cycle. BookSim's input-queued router pipelines routing, VC and switch allocation and waits for credits; flitforge's switch moves a flit one hop per cycle ([CMS] §1.1) and reuses a register in the cycle it empties, so equal offered loads give different latencies and saturation points (with one-flit registers BookSim's credit loop saturates far below flitforge). BookSim's cycles include its drain after the measured period.\n",
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booksim_gets_the_same_network_and_load() {
        let c = Against::Booksim.default_config();
        let text = booksim_config(&c).unwrap();
        for line in [
            "topology = fly;",
            "k = 2;",
            "n = 10;",
            "num_vcs = 1;",
            "vc_buf_size = 1;",
            "packet_size = 1;",
            "injection_rate = 0.3;",
            "sample_period = 5000;",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        let other = SimConfig {
            traffic: Traffic::Transpose,
            ..c
        };
        assert!(booksim_config(&other).is_err());
    }
}
