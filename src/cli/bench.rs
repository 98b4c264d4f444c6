//! `flitforge bench`: the model's speed, alone or beside Verilator and BookSim.

use super::args::{NetworkArgs, RunFlags, SwitchArgs, TrafficArgs};
use super::files::write;
use clap::Args;
use flitforge::run::RunConfig;
use flitforge::sim::Kernel;
use flitforge::{Error, Result};

/// `flitforge bench`.
#[derive(Args, Clone, Default)]
pub struct BenchArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub traffic: TrafficArgs,
    /// Compare with the same network under another simulator: `verilator` (the generated RTL,
    /// tracing off; default network 64 inputs, B = 2, L = 4, W = 8, 20 000 cycles) or
    /// `booksim` (BookSim2's fly, needs --booksim; default 1024 terminals, one-flit messages
    /// and VC registers, one flit per link, 5 000 cycles), over Bernoulli traffic. Without
    /// --rate and --vcs, every load 0.01, 0.1, 0.3 for 1, 2 and 4 VCs. Writes bench.md and
    /// bench.json into --out.
    /// [default: none, the model alone in switch-cycles/s]
    #[arg(long, value_name = "SIMULATOR", value_parser = ["verilator", "booksim"], help_heading = "Comparison")]
    pub against: Option<String>,
    /// A BookSim2 binary built from its public source (`make` in booksim2/src). [default:
    /// none; required with --against booksim]
    #[arg(long, value_name = "PATH", help_heading = "Comparison")]
    pub booksim: Option<String>,
    /// Where the comparison builds and writes. [default: results/bench-<SIMULATOR>]
    #[arg(long, value_name = "DIR", help_heading = "Comparison")]
    pub out: Option<String>,
    /// Write into a non-empty directory another command wrote.
    #[arg(long, help_heading = "Comparison")]
    pub force: bool,
    /// Threads running each cycle (0: every core): the general kernel (--kernel) splits
    /// each level's switches among them, the bit-plane kernel uses two at most, as a
    /// pipeline of levels; the run is the same on any number, and networks under 256 inputs
    /// run on one.
    /// A list (`1,2`) runs each count in turn and prints the speed-up over the first. On
    /// several threads each run first times a cache line's round trip between the first two
    /// threads' cores and prints it: threads that wait on each other every cycle gain only
    /// what it allows (on a virtual machine it changes as the host moves its CPUs).
    /// Comparisons run one thread, like the simulators they are compared with.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        value_name = "THREADS[,THREADS...]"
    )]
    pub threads: Vec<usize>,
    /// VC networks: the kernel that runs the cycles (the run is the same on either).
    /// bit-planes: 64 switches of a level per machine word, for butterflies with wormhole
    /// flow control, depth-1 VC registers, combinational back-pressure, up to 8 VCs and no
    /// faults (refused elsewhere); general: one switch at a time; auto: bit-planes where it
    /// applies and nothing reads every register (--vcd, --check, and a debug build's
    /// checks), else general. [default: auto]
    #[arg(long, value_parser = flitforge::sim::Kernel::NAMES)]
    pub kernel: Option<String>,
    /// Runs per measurement, 1..=50: the runs of the sides being compared (thread counts, or
    /// the model and the other simulator) alternate, and each side reports the median of its
    /// runs with their range, so that one slow run on a busy machine does not decide.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: usize,
}

/// Whether `path` is a file its owner, group or anyone may execute.
fn executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What `--booksim` must name.
const BOOKSIM_BINARY: &str = "the path of a BookSim2 binary (build it from the public booksim/booksim2 source: make in src/, needs flex bison g++)";

/// `bench --against`: the model beside Verilator or BookSim over loads and VC counts.
fn bench_against(args: &BenchArgs, against: &str, kernel: Kernel) -> Result<()> {
    use flitforge::bench::against::{self, Against, LOADS, VCS};
    use flitforge::traffic::Traffic;
    let against = match against {
        "booksim" => Against::Booksim,
        _ => Against::Verilator,
    };
    let booksim = match (against, &args.booksim) {
        (Against::Booksim, None) => {
            return Err(Error::invalid("booksim", "none", BOOKSIM_BINARY));
        }
        (Against::Booksim, Some(path)) if !executable(std::path::Path::new(path)) => {
            return Err(Error::invalid(
                "booksim",
                path,
                format!("an executable file: {BOOKSIM_BINARY}"),
            ));
        }
        (Against::Booksim, Some(path)) => Some(path.clone()),
        (Against::Verilator, Some(_)) => {
            return Err(Error::invalid(
                "booksim",
                "given",
                "no value: --booksim applies only with --against booksim",
            ));
        }
        (Against::Verilator, None) => None,
    };
    let flags = RunFlags {
        net: &args.net,
        switch: Some(&args.switch),
        serial: None,
        traffic: &args.traffic,
    };
    let RunConfig::Network(base) = flags.resolve(against.default_config())? else {
        return Err(Error::invalid(
            "topology",
            args.net.topology.as_deref().unwrap_or("?"),
            "butterfly (a VC network)",
        ));
    };
    // Speeds compare over a stream of messages at a load (BookSim takes only Bernoulli
    // injection of uniform traffic): --rate picks one, else every load of LOADS.
    if !matches!(base.traffic, Traffic::Bernoulli { .. }) {
        return Err(Error::invalid(
            "traffic",
            base.traffic.name(),
            "bernoulli with --against (the comparison runs Bernoulli traffic; --rate picks one load)",
        ));
    }
    let rates: Vec<f64> = match args.traffic.rate {
        Some(_) => vec![f64::NAN],
        None => LOADS.to_vec(),
    };
    let vcs: Vec<u32> = match args.switch.vcs {
        Some(v) => vec![v],
        None => VCS.to_vec(),
    };
    // Every point's configuration, and Verilator's build of each, checked before the first
    // point runs.
    let mut points = Vec::with_capacity(vcs.len() * rates.len());
    for &b in &vcs {
        for &rate in &rates {
            let mut config = base.clone();
            config.vcs = b;
            if !rate.is_nan() {
                config.traffic = Traffic::Bernoulli { rate };
            }
            config.validate()?;
            if booksim.is_none()
                && let Some(size) = flitforge::rtl::build::BuildSize::of_config(&config)
            {
                size.check(flitforge::cosim::Simulator::Verilator)?;
            }
            points.push(config);
        }
    }
    let name = format!("bench-{}", against.name());
    let dir = super::files::experiment_dir(
        &name,
        args.out.as_deref(),
        args.force,
        &super::args::run_input_files(&args.net, &args.traffic)?,
    )?;
    let progress =
        super::progress::Progress::new(&format!("bench --against {}", against.name()), "points");
    let mut rows = Vec::new();
    for config in &points {
        let work = dir.join(format!(
            "b{}-rate{}",
            config.vcs,
            against::rate_label(config)
        ));
        let row = match &booksim {
            Some(path) => {
                let binary = std::path::Path::new(path);
                against::booksim(config, binary, &work, args.repeat, kernel)?
            }
            None => against::verilator(config, &work, args.repeat, kernel)?,
        };
        rows.push(row);
        progress.update(rows.len() as u64, points.len() as u64);
    }
    progress.finish();
    let md = against::markdown(against, &rows);
    write(dir.join("bench.md"), &md)?;
    let json =
        serde_json::to_string_pretty(&serde_json::json!({ "against": against, "rows": rows }))
            .unwrap_or_default();
    write(dir.join("bench.json"), &format!("{json}\n"))?;
    say!("{md}");
    Ok(())
}

/// `flitforge bench`: switch-cycles (or vertex-cycles) per second.
pub fn bench(args: &BenchArgs) -> Result<()> {
    flitforge::bench::check_repeat(args.repeat)?;
    let kernel = Kernel::parse(args.kernel.as_deref().unwrap_or("auto"))?;
    // Every count is checked before the first run, which may take a while.
    for &t in &args.threads {
        flitforge::sim::check_threads(t)?;
    }
    if let Some(against) = &args.against {
        if args.threads != [1] {
            return Err(Error::invalid(
                "threads",
                list(&args.threads),
                "1 with --against (each simulator runs one thread)",
            ));
        }
        return bench_against(args, against, kernel);
    }
    for (flag, given) in [
        ("booksim", args.booksim.is_some()),
        ("out", args.out.is_some()),
        ("force", args.force),
    ] {
        if given {
            return Err(Error::invalid(flag, "given", "only with --against"));
        }
    }
    let flags = RunFlags {
        net: &args.net,
        switch: Some(&args.switch),
        serial: None,
        traffic: &args.traffic,
    };
    match flags.resolve(flitforge::bench::default_config())? {
        RunConfig::Network(config) => {
            // Round by round, every thread count once: a drifting machine slows them alike.
            let mut rates = vec![Vec::new(); args.threads.len()];
            // Per count, the threads that ran (the same in every round), and the round trips
            // between the first two.
            let mut ran = args.threads.clone();
            let mut trips = vec![Vec::new(); args.threads.len()];
            for _ in 0..args.repeat {
                for (((&threads, rates), ran), trips) in args
                    .threads
                    .iter()
                    .zip(&mut rates)
                    .zip(&mut ran)
                    .zip(&mut trips)
                {
                    let r = flitforge::bench::run(config.clone(), threads, kernel)?;
                    *ran = r.threads;
                    let trip = r.round_trip.map(|t| t.as_nanos() as f64);
                    say!(
                        "bench: {} switches x {} cycles in {:.3} s = {:.1} million switch-cycles/s ({:.1} flits delivered/cycle; {} kernel{}{})",
                        r.switches,
                        r.cycles,
                        r.seconds,
                        r.switch_cycles_per_second / 1e6,
                        r.flits_delivered_per_cycle,
                        r.kernel(),
                        running(&args.threads, threads, r.threads),
                        trip.map_or(String::new(), |t| format!(
                            "; {t:.0} ns round trip between cores"
                        ))
                    );
                    rates.push(r.switch_cycles_per_second / 1e6);
                    trips.extend(trip);
                }
            }
            summarize(args, "switch-cycles", &rates, &ran, &trips);
        }
        RunConfig::PrunedButterfly(mut config) => {
            if args.kernel.is_some() {
                return Err(Error::invalid(
                    "kernel",
                    "given",
                    "no value: --kernel chooses how VC networks run (the pruned butterfly has its own engine)",
                ));
            }
            if args.threads != [1] {
                return Err(Error::invalid(
                    "threads",
                    list(&args.threads),
                    "1 with --topology pruned-butterfly (threads split VC networks)",
                ));
            }
            if args.net.inputs.is_none() && args.net.config.is_none() {
                config.inputs = flitforge::bench::default_pruned_config().inputs;
            }
            let mut rates = vec![Vec::new()];
            for _ in 0..args.repeat {
                let r = flitforge::bench::run_pruned(config.clone())?;
                say!(
                    "bench: {} vertices x {} cycles in {:.3} s = {:.1} million vertex-cycles/s",
                    r.switches,
                    r.cycles,
                    r.seconds,
                    r.switch_cycles_per_second / 1e6
                );
                rates[0].push(r.switch_cycles_per_second / 1e6);
            }
            summarize(args, "vertex-cycles", &rates, &[1], &[Vec::new()]);
        }
        _ => {
            return Err(Error::invalid(
                "topology",
                "sorting-fat-tree",
                "a network with a register-level model (the sorting fat-tree is modelled at the message level)",
            ));
        }
    }
    Ok(())
}

/// The thread counts as given.
fn list(threads: &[usize]) -> String {
    let counts: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    counts.join(",")
}

/// " on N threads" when several counts are compared.
fn on_threads(all: &[usize], threads: usize) -> String {
    match (all.len(), threads) {
        (1, _) => String::new(),
        (_, 1) => " on 1 thread".into(),
        (_, 0) => " on every core".into(),
        (_, t) => format!(" on {t} threads"),
    }
}

/// [`on_threads`], and how many ran where that is fewer (a small network, or the bit-plane
/// kernel's two threads at most).
fn running(all: &[usize], threads: usize, ran: usize) -> String {
    let asked = on_threads(all, threads);
    if ran == threads.max(1) {
        return asked;
    }
    let unit = if ran == 1 { "thread" } else { "threads" };
    format!("{asked}, {ran} {unit} running")
}

/// Per thread count, the median of its runs (`rates`, millions of `unit` per second) with
/// their range, and the speed-up of each count over the first; nothing for a single run.
/// `ran`: per count, the threads that ran ([`running`]); `trips`: per count, the round trips
/// between its first two threads (ns; none on one thread). Threads that wait on each other
/// gain only as much as the round trip allows, and on a virtual machine it varies with the
/// host's placement of the virtual CPUs: the median is shown beside the speed-up.
fn summarize(args: &BenchArgs, unit: &str, rates: &[Vec<f64>], ran: &[usize], trips: &[Vec<f64>]) {
    use flitforge::bench::{median, range};
    if args.repeat == 1 && rates.len() == 1 {
        return;
    }
    let first = median(&rates[0]);
    for (k, (((&threads, runs), &ran), trips)) in args
        .threads
        .iter()
        .zip(rates)
        .zip(ran)
        .zip(trips)
        .enumerate()
    {
        let (m, (lo, hi)) = (median(runs), range(runs));
        let speedup = match k {
            0 => String::new(),
            _ => format!(
                ", {:.2}× the speed{}",
                m / first,
                on_threads(&args.threads, args.threads[0])
            ),
        };
        let trip = match trips.is_empty() {
            true => String::new(),
            false => {
                let (lo, hi) = range(trips);
                format!(
                    "; round trip between cores {:.0} ns ({lo:.0}–{hi:.0})",
                    median(trips)
                )
            }
        };
        say!(
            "bench: median of {} run{}{}: {m:.1} million {unit}/s ({lo:.1}–{hi:.1}){speedup}{trip}",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            running(&args.threads, threads, ran),
        );
    }
}
