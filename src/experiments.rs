//! `flitforge experiment`: every paper's experiment behind one subcommand. Seed 001's run
//! through [`crate::seed001`]; seed 002's (Tables I–III, fault scaling) are here, with the
//! progress bar and the files they write.

use crate::seed002::{WiringArgs, interior};
use crate::{SorterArgs, parse_name, seed001, write};
use clap::{Args, Subcommand};
use flitforge::multibutterfly::experiment::{self, LeightonMaggsConfig, Tables};
use flitforge::multibutterfly::greedy::GreedyConfig;
use flitforge::multibutterfly::tolerance::{self, FaultToleranceConfig};
use flitforge::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::time::Instant;

/// The experiments of `flitforge experiment`.
#[derive(Subcommand)]
pub enum ExperimentKind {
    /// Seed 001 §3: pruned-butterfly routing time against λ and N (Theorem 1).
    ///
    /// Random sets, permutations, degree-d sets and a hot region, fitted to Theorem 1's
    /// O(λ log² N).
    PrunedButterfly(Seed001Experiment),
    /// Seed 001 §4.1: flexible-sorter cycles against Theorem 2.
    ///
    /// Cycles of the circuit for r = s, 2s, ..., l, against Theorem 2's O((b + log s) r/s);
    /// default circuits (b, s, l) = (8, 8, 64), (8, 16, 256), or one given with --s, --l,
    /// --bits.
    FlexibleSorter(Seed001Experiment),
    /// Seed 001 §4.3: sorting fat-tree routing time against Theorem 3.
    ///
    /// Routing time against λ and N, against Theorem 3's O(λ log N + log² N) (default sizes
    /// 256..16384).
    SortingFatTree(Seed001Experiment),
    /// Seed 002 §IV: Tables I-III (fault failure rate, greedy completion time, never delayed).
    ///
    /// N = 1024, d = 2: how often random faults reach an input (2000 trials per row), greedy
    /// completion time (mean and σ over 500 trials for each network and the problems 1, 10,
    /// 1T, 10T) and the percentage of packets never delayed. Writes tables.md (laid out like
    /// the paper), table1.csv, table2.csv, table3.csv, trials.csv (every trial), summary.json
    /// and completion-vs-faults.svg. Trials run on all cores; the result does not depend on the
    /// number of threads.
    LeightonMaggs(LeightonMaggsArgs),
    /// Seed 002 §IV: random faults tolerated before one reaches an input, vs (N lg N)^(3/4).
    ///
    /// For N from 64 to 4096 (default), fresh modified networks and random fault orders;
    /// writes fault-tolerance.md, .csv and .svg.
    FaultTolerance(FaultToleranceArgs),
    /// The emitted hardware on iCE40 devices: LUT4, flip-flops and Fmax of one switch per
    /// back-pressure mode (inside a harness that registers every port), the board tops of 4-
    /// and 8-input butterflies with on-chip generators and checkers, the largest butterfly top
    /// each device holds, the pruned-butterfly vertices and the flexible sorter. Writes
    /// fpga.md, fpga.csv and fpga.json; takes about 15 minutes.
    Fpga {
        /// Output directory (created if missing).
        #[arg(long, value_name = "DIR", default_value = "experiment-fpga")]
        out: String,
    },
}

/// Options of seed 001's experiments.
#[derive(Args)]
pub struct Seed001Experiment {
    /// Network sizes N, comma-separated (pruned butterfly: powers of 4 from 16 to 65536,
    /// default 16..4096; sorting fat-tree: powers of two from 16, default 256..16384).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u32>,
    #[command(flatten)]
    sorter: SorterArgs,
    /// Seeds per workload and size (1..=S).
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Engine: golden (abstract model, same cycle counts, fast) or cycle (bit by bit).
    #[arg(long, default_value = "golden", value_parser = ["cycle", "golden"])]
    engine: String,
    /// Output directory (created if missing; default experiment-<name>).
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
}

/// Runs the experiment `which` names.
pub fn run(which: ExperimentKind) -> Result<()> {
    match which {
        ExperimentKind::Fpga { out } => {
            use flitforge::fpga::experiment;
            let dir = Path::new(&out);
            let started = Instant::now();
            let rows = experiment::run(dir, &mut |step| eprintln!("experiment fpga: {step}"))?;
            let table = experiment::markdown(&rows);
            write(&dir.join("fpga.md").to_string_lossy(), &table)?;
            let mut csv = String::from("design,device,luts,dffs,logic_cells,fits,fmax_mhz\n");
            for r in &rows {
                csv.push_str(&format!(
                    "\"{}\",{},{},{},{},{},{}\n",
                    r.design,
                    r.device.name(),
                    r.luts,
                    r.dffs,
                    r.logic_cells.map_or(String::new(), |c| c.to_string()),
                    r.fits,
                    r.fmax_mhz.map_or(String::new(), |f| f.to_string())
                ));
            }
            write(&dir.join("fpga.csv").to_string_lossy(), &csv)?;
            let json = serde_json::to_string_pretty(&rows).map_err(|e| Error::parse("rows", e))?;
            write(&dir.join("fpga.json").to_string_lossy(), &(json + "\n"))?;
            say!("{table}");
            say!(
                "experiment fpga: {} designs in {:.0} s; written fpga.md, fpga.csv, fpga.json in {}",
                rows.len(),
                started.elapsed().as_secs_f64(),
                dir.display()
            );
            Ok(())
        }
        ExperimentKind::PrunedButterfly(e) => seed001::pruned_experiment(
            e.sizes,
            &e.sorter,
            e.seeds,
            &e.engine,
            e.out.as_deref().unwrap_or("experiment-pruned-butterfly"),
        ),
        ExperimentKind::FlexibleSorter(e) => seed001::sorter_experiment(
            "flexible-sorter",
            e.sizes,
            &e.sorter,
            e.seeds,
            &e.engine,
            e.out.as_deref().unwrap_or("experiment-flexible-sorter"),
        ),
        ExperimentKind::SortingFatTree(e) => seed001::sorter_experiment(
            "sorting-fat-tree",
            e.sizes,
            &e.sorter,
            e.seeds,
            &e.engine,
            e.out.as_deref().unwrap_or("experiment-sorting-fat-tree"),
        ),
        ExperimentKind::LeightonMaggs(a) => leighton_maggs(&a),
        ExperimentKind::FaultTolerance(a) => fault_tolerance(&a),
    }
}

/// A progress bar on standard error (hidden when it is not a terminal).
fn progress_bar(what: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} trials, {elapsed} (eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// `experiment leighton-maggs` options.
#[derive(Args)]
pub struct LeightonMaggsArgs {
    /// Trials per cell of Tables II and III (seed 002: 500).
    #[arg(long, default_value_t = 500)]
    trials: u32,
    /// Trials per row of Table I (seed 002: 2000; 0 skips Table I).
    #[arg(long, default_value_t = 2000)]
    table1_trials: u32,
    /// Run seed; every trial's seed derives from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Inputs N (seed 002: 1024).
    #[arg(long, default_value_t = 1024)]
    inputs: u32,
    /// Fault counts of the modified rows of Tables II and III.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,1,10,100,250,500,750,1000"
    )]
    faults: Vec<u32>,
    /// Fault counts of Table I.
    #[arg(long, value_delimiter = ',', default_value = "10,100,250,500,750,1000")]
    table1_faults: Vec<u32>,
    #[command(flatten)]
    wiring: WiringArgs,
    /// Interior levels FIRST..LAST (seed 002 numbering; default 0..lgN-2).
    #[arg(long, value_name = "FIRST..LAST", allow_hyphen_values = true)]
    interior: Option<String>,
    /// Level −1 rule: all or pairs.
    #[arg(long, default_value = "all", value_parser = ["all", "pairs"])]
    input_rule: String,
    /// Admission: a head may have held at most this many packets (seed 002: 4).
    #[arg(long, default_value_t = 4)]
    max_held: u32,
    /// lowest, random or least-loaded.
    #[arg(long, default_value = "lowest", value_parser = ["lowest", "random", "least-loaded"])]
    lane_choice: String,
    /// Worker threads (default: all cores; the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Output directory (created if missing).
    #[arg(long, default_value = "experiment-leighton-maggs", value_name = "DIR")]
    out: String,
}

/// `experiment leighton-maggs`.
pub fn leighton_maggs(args: &LeightonMaggsArgs) -> Result<()> {
    let config = LeightonMaggsConfig {
        inputs: args.inputs,
        trials: args.trials,
        table1_trials: args.table1_trials,
        faults: args.faults.clone(),
        table1_faults: args.table1_faults.clone(),
        seed: args.seed,
        wiring: args.wiring.wiring()?,
        greedy: GreedyConfig {
            max_held: args.max_held,
            lane_choice: parse_name(
                "lane-choice",
                &args.lane_choice,
                "lowest|random|least-loaded",
            )?,
            ..GreedyConfig::default()
        },
        interior: interior(args.interior.as_deref())?,
        input_rule: parse_name("input-rule", &args.input_rule, "all|pairs")?,
        threads: args.threads,
        ..LeightonMaggsConfig::default()
    };
    config.validate()?;
    let dir = Path::new(&args.out);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let bar = progress_bar("Tables I-III");
    let start = Instant::now();
    let tables = experiment::leighton_maggs(&config, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    write_tables(dir, &tables)?;
    say!("{}", tables.markdown());
    eprintln!("Tables I-III: {seconds:.1} s");
    if !tables.deterministic_cells_equal {
        return Err(Error::Invariant {
            cycle: 0,
            message:
                "a deterministic cell (butterfly or dilated, transpose) differed between trials"
                    .into(),
        });
    }
    Ok(())
}

fn write_tables(dir: &Path, tables: &Tables) -> Result<()> {
    let files = [
        ("tables.md", tables.markdown()),
        ("table1.csv", tables.table1_csv()),
        ("table2.csv", tables.table2_csv()),
        ("table3.csv", tables.table3_csv()),
        ("trials.csv", tables.trials_csv()),
        ("completion-vs-faults.svg", tables.chart()),
    ];
    for (name, text) in files {
        if name == "table1.csv" && tables.table1.is_empty() {
            continue;
        }
        let path = dir.join(name);
        write(&path.to_string_lossy(), &text)?;
        eprintln!("{}", path.display());
    }
    let json = serde_json::json!({
        "config": tables.config, "table1": tables.table1,
        "deterministic_cells_equal": tables.deterministic_cells_equal,
    });
    let path = dir.join("summary.json");
    write(&path.to_string_lossy(), &format!("{json:#}\n"))?;
    eprintln!("{}", path.display());
    Ok(())
}

/// `experiment fault-tolerance` options.
#[derive(Args)]
pub struct FaultToleranceArgs {
    /// Network sizes N, comma-separated powers of two (8..=65536).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,128,256,512,1024,2048,4096"
    )]
    sizes: Vec<u32>,
    /// Random fault orders (and networks) per size.
    #[arg(long, default_value_t = 100)]
    trials: u32,
    /// Run seed; every trial's seed derives from it and N.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    wiring: WiringArgs,
    /// Interior levels FIRST..LAST (seed 002 numbering; default 0..lgN-2).
    #[arg(long, value_name = "FIRST..LAST", allow_hyphen_values = true)]
    interior: Option<String>,
    /// Level −1 rule: all or pairs.
    #[arg(long, default_value = "all", value_parser = ["all", "pairs"])]
    input_rule: String,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Output directory (created if missing).
    #[arg(long, default_value = "experiment-fault-tolerance", value_name = "DIR")]
    out: String,
}

/// `experiment fault-tolerance`.
pub fn fault_tolerance(args: &FaultToleranceArgs) -> Result<()> {
    let config = FaultToleranceConfig {
        sizes: args.sizes.clone(),
        trials: args.trials,
        seed: args.seed,
        wiring: args.wiring.wiring()?,
        interior: interior(args.interior.as_deref())?,
        input_rule: parse_name("input-rule", &args.input_rule, "all|pairs")?,
        threads: args.threads,
    };
    let dir = Path::new(&args.out);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let bar = progress_bar("fault tolerance");
    let rows = tolerance::fault_tolerance(&config, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    let md = tolerance::tolerance_markdown(&rows, &config);
    let files = [
        ("fault-tolerance.md", md.clone()),
        ("fault-tolerance.csv", tolerance::tolerance_csv(&rows)),
        ("fault-tolerance.svg", tolerance::tolerance_chart(&rows)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        write(&path.to_string_lossy(), &text)?;
        eprintln!("{}", path.display());
    }
    say!("{md}");
    Ok(())
}
