//! `sim` and `demo`: a network run.

use super::args::{NetworkArgs, RunFlags, SerialArgs, SwitchArgs, TrafficArgs, engine};
use super::command_line;
use super::files::{AtomicFile, write};
use super::progress::Ticker;
use clap::Args;
use flitforge::config::SimConfig;
use flitforge::pruned::PrunedConfig;
use flitforge::run::{RunConfig, RunReport};
use flitforge::sim::Kernel;
use flitforge::sorter::fattree::FatTreeConfig;
use flitforge::wave::{ScopeFilter, VcdWriter};
use flitforge::{Error, Result, Simulation};

/// Where a run's report and waveform go.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Write the report (docs/report-schema.md) as JSON; "-" writes it to standard output
    /// instead of the summary. [default: not written]
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write every register of every switch as a VCD waveform (GTKWave, Surfer; not the
    /// sorting fat-tree). [default: not written]
    #[arg(long, value_name = "FILE.vcd")]
    pub vcd: Option<String>,
    /// Only the switches whose scope (l{level}_c{column}) matches one of these
    /// comma-separated globs, e.g. "l0_*,l2_c1?". [default: every switch]
    #[arg(long, value_name = "GLOBS", requires = "vcd")]
    pub vcd_scope: Option<String>,
    /// VC networks: every message's record in the report (details.per_message).
    #[arg(long)]
    pub per_message: bool,
    /// VC networks: check every invariant after every cycle (always on in debug builds).
    #[arg(long)]
    pub check: bool,
    /// VC networks: the kernel that runs the cycles (the run is the same on either).
    /// bit-planes: 64 switches of a level per machine word, for butterflies with wormhole
    /// flow control, depth-1 VC registers, combinational back-pressure, up to 8 VCs and no
    /// faults (refused elsewhere); general: one switch at a time; auto: bit-planes where it
    /// applies and nothing reads every register (--vcd, --check, and a debug build's
    /// checks), else general. [default: auto]
    #[arg(long, value_parser = flitforge::sim::Kernel::NAMES)]
    pub kernel: Option<String>,
    /// VC networks, batch traffic: exit 0 when --cycles ends the run before every message is
    /// delivered or dropped (without it the run reports what it did and exits 3).
    #[arg(long)]
    pub allow_partial: bool,
    /// pruned-butterfly: move batches bit by bit through the register-level switches (cycle)
    /// or as whole messages through the abstract model with the same cycle counts (golden).
    /// [default: cycle]
    #[arg(long, value_parser = ["cycle", "golden"])]
    pub engine: Option<String>,
    /// VC networks: threads running each cycle (0: every core). The general kernel
    /// (--kernel) splits each level's switches among them; the bit-plane kernel uses two at
    /// most, as a pipeline of levels: the upper levels on one, the lower ones with the
    /// sources and the message bookkeeping on the other, the split moving to even them. The
    /// run and its report are the same, byte for byte, on any number of threads, and so is
    /// its waveform but for the command line its header records; networks under 256 inputs
    /// run on one. A sweep (--sweep) takes 1: it runs its loads at once, one a core.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
}

/// `flitforge sim`.
#[derive(Args, Clone, Default)]
pub struct SimArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub serial: SerialArgs,
    #[command(flatten)]
    pub traffic: TrafficArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// `sim --sweep`: a load curve.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Load sweep")]
pub struct SweepArgs {
    /// Run a load curve instead of one run: Bernoulli traffic at each of these injection
    /// probabilities (messages per input per cycle, increasing), the other flags as given
    /// (a --config file's rate is replaced by each load), --cycles 2000 unless given.
    /// Writes sweep.csv, sweep.md, sweep.json (with the saturation point: where the network
    /// accepts less than 0.95 of the load its sources drew, more than 5 % of the messages
    /// drawn still waiting at the end or dropped) and latency-vs-load.svg,
    /// throughput-vs-load.svg into --out. Example:
    /// --sweep 0.02,0.05,0.1,0.15,0.2,0.25,0.3 [default: none, one run]
    #[arg(long, value_delimiter = ',', value_name = "RATES")]
    pub sweep: Option<Vec<f64>>,
    /// The sweep's output directory. [default: results/sweep]
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    /// Write into a non-empty directory another command wrote.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub shard: super::shard::ShardArgs,
}

impl SimArgs {
    pub(super) fn flags(&self) -> RunFlags<'_> {
        RunFlags {
            net: &self.net,
            switch: Some(&self.switch),
            serial: Some(&self.serial),
            traffic: &self.traffic,
        }
    }
}

/// `flitforge sim`: run, print the summary, write the report and the waveform.
pub fn sim(args: &SimArgs) -> Result<()> {
    if args.sweep.sweep.is_some() {
        return super::sweep::sweep(args, &mut None);
    }
    let s = &args.sweep;
    super::args::refuse(
        &[
            ("out", s.out.is_some()),
            ("force", s.force),
            ("shard", s.shard.given()),
            ("resume", s.shard.resumes()),
        ],
        "with --sweep",
    )?;
    let run = args.flags().resolve(SimConfig::default())?;
    let o = &args.out;
    let inputs = super::args::run_input_files(&args.net, &args.traffic)?;
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    super::files::outputs_apart(
        &[("json", o.json.as_deref()), ("vcd", o.vcd.as_deref())],
        &inputs,
    )?;
    if !matches!(run, RunConfig::Network(_)) {
        super::args::refuse(
            &[
                ("per-message", o.per_message),
                ("check", o.check),
                ("kernel", o.kernel.is_some()),
            ],
            "with --topology butterfly, dilated, splitter or benes",
        )?;
    }
    if !matches!(run, RunConfig::PrunedButterfly(_)) && o.engine.is_some() {
        return Err(Error::invalid(
            "engine",
            "given",
            "no value: --engine applies only with --topology pruned-butterfly",
        ));
    }
    let mut incomplete = None;
    let report = match run {
        RunConfig::Network(c) => {
            let (report, cut) = simulate(c, o)?;
            incomplete = cut;
            report
        }
        RunConfig::PrunedButterfly(mut c) => {
            if let Some(e) = &o.engine {
                c.engine = engine(e)?;
            }
            simulate_pruned(&c, o)?
        }
        RunConfig::SortingFatTree(c) => {
            if o.vcd.is_some() {
                return Err(Error::invalid(
                    "vcd",
                    "given with --topology sorting-fat-tree",
                    "no value: the sorting fat-tree is modelled at the message level",
                ));
            }
            simulate_fat_tree(&c, o.json.as_deref() == Some("-"))?
        }
        RunConfig::FlexibleSorter(_) | RunConfig::Greedy(_) | RunConfig::Upfal(_) => {
            unreachable!("resolve refuses circuits and packet routings")
        }
    };
    if let Some(path) = &o.json {
        write(path, &report.to_json())?;
    }
    match incomplete {
        Some(why) if !o.allow_partial => Err(Error::Incomplete(why)),
        _ => Ok(()),
    }
}

/// Refuses a run whose report or waveform would not fit (`flitforge::limits`), before it
/// starts: every record kept for --per-message, the JSON file, the waveform writer and its file.
fn check_outputs(sim: &Simulation, o: &OutputArgs, filter: &ScopeFilter) -> Result<()> {
    use flitforge::config::{RECORD_BYTES, REPORTED_RECORD_BYTES, REPORTED_RECORD_JSON};
    use flitforge::limits::Estimate;
    let offered = sim.offered_estimate();
    let network = sim.config.memory_estimate().0;
    let mut memory = Estimate::new().with("network", network);
    if o.per_message {
        memory.add("records kept", offered.saturating_mul(RECORD_BYTES));
        memory.add(
            "per-message report",
            offered.saturating_mul(REPORTED_RECORD_BYTES),
        );
        memory.check_memory("per-message", format!("{offered} messages"))?;
    }
    if let Some(path) = o.json.as_deref().filter(|p| *p != "-") {
        let records = if o.per_message { offered } else { 0 };
        Estimate::new()
            .with("report", 4096)
            .with(
                "per-message records",
                records.saturating_mul(REPORTED_RECORD_JSON),
            )
            .check_output("json", std::path::Path::new(path))?;
    }
    if let Some(path) = &o.vcd {
        let w = flitforge::wave::estimate(sim, filter);
        if w.switches == 0 {
            return Err(Error::invalid(
                "vcd-scope",
                o.vcd_scope.as_deref().unwrap_or_default(),
                "patterns that match at least one switch (scopes are named l{level}_c{column}, e.g. l0_c3)",
            ));
        }
        let what = format!(
            "waveform of {} switches over about {} cycles",
            w.switches,
            sim.cycle_estimate()
        );
        check_waveform(memory, &w, what, path)?;
    }
    Ok(())
}

/// Refuses a waveform `w` (its file described as `what`) whose writer does not fit beside
/// `memory` or whose file at `path` does not fit.
fn check_waveform(
    mut memory: flitforge::limits::Estimate,
    w: &flitforge::wave::WaveEstimate,
    what: String,
    path: &str,
) -> Result<()> {
    memory.add(format!("waveform writer ({} signals)", w.signals), w.memory);
    memory.check_memory("vcd", path)?;
    flitforge::limits::Estimate::new()
        .with(what, w.bytes)
        .check_output("vcd", std::path::Path::new(path))
}

/// A VC network run: the library's summary on standard output (unless the report goes there).
/// Also returns why the run is incomplete when batch traffic was cut short by --cycles.
fn simulate(config: SimConfig, o: &OutputArgs) -> Result<(RunReport, Option<String>)> {
    let filter = ScopeFilter::new(o.vcd_scope.as_deref().unwrap_or(""))?;
    if let Some(path) = &o.vcd
        && filter.is_all()
    {
        // What the configuration alone tells, before the network is built (once it is known
        // valid: the floor multiplies its values).
        config.validate()?;
        let w = flitforge::wave::floor(&config);
        let network =
            flitforge::limits::Estimate::new().with("network", config.memory_estimate().0);
        let what = format!(
            "declarations of at least {} switches' registers",
            w.switches
        );
        check_waveform(network, &w, what, path)?;
    }
    let mut sim = Simulation::new(config)?;
    check_outputs(&sim, o, &filter)?;
    sim.set_threads(o.threads)?;
    sim.keep_records(o.per_message);
    let kernel = Kernel::parse(o.kernel.as_deref().unwrap_or("auto"))?;
    if o.check {
        sim.set_check_invariants(true);
    }
    match (kernel, &o.vcd) {
        (Kernel::Auto | Kernel::General, Some(_)) => sim.set_kernel(Kernel::General)?,
        (Kernel::BitPlanes, Some(_)) => {
            return Err(Error::invalid(
                "kernel",
                "bit-planes",
                "general or auto with --vcd (a waveform samples every register)",
            ));
        }
        (Kernel::BitPlanes, None) => {
            // Asked for by name: a debug build's default checks give way (--check does not).
            if !o.check {
                sim.set_check_invariants(false);
            }
            sim.set_kernel(Kernel::BitPlanes)?;
        }
        (kernel, None) => sim.set_kernel(kernel)?,
    }
    let limit = sim.config.cycles.unwrap_or(0);
    let mut ticker = Ticker::new("sim", "cycles");
    // Every 16 cycles, or (a run on two threads reports after each batch of cycles) when
    // 16 more have passed.
    let mut shown = 0;
    let mut tick = |s: &Simulation| {
        if s.cycle() >= shown + 16 || s.cycle().is_multiple_of(16) {
            shown = s.cycle();
            ticker.tick(shown, limit);
        }
    };
    let stats = match &o.vcd {
        None => sim.run_watched(|s| {
            tick(s);
            Ok(())
        })?,
        Some(path) => {
            let mut file = AtomicFile::create(path)?;
            let command = command_line();
            let mut vcd = VcdWriter::new(file.writer(), &sim, &filter, &command)?;
            let report = sim.run_observed(|s| {
                tick(s);
                vcd.sample(s)
            })?;
            vcd.finish()?;
            file.commit()?;
            report
        }
    };
    ticker.finish();
    if o.json.as_deref() != Some("-") {
        say!("{}", stats.summary());
    }
    let incomplete = (!sim.config.traffic.is_continuous() && !sim.finished()).then(|| {
        format!(
            "incomplete run: --cycles {} ended it with {} of {} messages neither delivered nor dropped (the report counts them as in flight or waiting; --allow-partial accepts it)",
            sim.cycle(),
            stats.in_flight + stats.waiting,
            stats.offered
        )
    });
    let stats = if o.per_message {
        sim.report(true)
    } else {
        stats
    };
    Ok((RunReport::network(&stats), incomplete))
}

/// `sim --topology pruned-butterfly`: the stage algorithm.
fn simulate_pruned(config: &PrunedConfig, o: &OutputArgs) -> Result<RunReport> {
    let command = command_line();
    let report = match &o.vcd {
        None => config.run(None, &command)?,
        Some(path) => {
            config.check_waveform()?;
            let filter = ScopeFilter::new(o.vcd_scope.as_deref().unwrap_or(""))?;
            let mut file = AtomicFile::create(path)?;
            let report = config.run(Some((file.writer(), &filter)), &command)?;
            file.commit()?;
            report
        }
    };
    if o.json.as_deref() != Some("-") {
        say!("{}", report.summary());
    }
    Ok(RunReport::pruned(config, &report))
}

/// `sim --topology sorting-fat-tree`: the eight-step algorithm at the message level.
fn simulate_fat_tree(config: &FatTreeConfig, quiet: bool) -> Result<RunReport> {
    let (tree, r) = config.run()?;
    let n = config.inputs;
    if !quiet {
        say!(
            "sorting fat-tree, N = {n} ({} x {} meshes at depth {}): {} messages, {} delivered, {} colour class(es) of degree {}",
            tree.mesh,
            tree.mesh,
            tree.depth,
            r.messages,
            r.delivered,
            r.colours,
            r.degree
        );
        say!(
            "load factor {:.3} (per direction; {:.3} both ways); {} ascent and {} descent stages",
            r.load_factor_dir,
            r.load_factor_cut,
            r.ascent_stages,
            r.descent_stages
        );
        say!(
            "cycles: mesh {} + batching {} + ascent {} + peak sorts {} + descent {} = {}",
            r.mesh_cycles,
            r.batching_cycles,
            r.ascent_cycles,
            r.peak_sort_cycles,
            r.descent_cycles,
            r.routing_cycles
        );
        say!(
            "[BB] Theorem 3: T / (lambda lg N + lg^2 N) = {:.2}; sorter capacity exceeded {} times, Lemma 10 exceeded {} times",
            r.theorem3_ratio,
            r.capacity_violations,
            r.lemma10_violations
        );
    }
    Ok(RunReport::fat_tree(config, &r, tree.bits))
}

/// `flitforge demo`: the built-in default run.
pub fn demo(json: Option<String>, vcd: Option<String>) -> Result<()> {
    let out = OutputArgs {
        json,
        vcd,
        ..OutputArgs::default()
    };
    super::files::outputs_apart(
        &[("json", out.json.as_deref()), ("vcd", out.vcd.as_deref())],
        &[],
    )?;
    let (report, _) = simulate(SimConfig::default(), &out)?;
    if let Some(path) = &out.json {
        write(path, &report.to_json())?;
    }
    Ok(())
}
