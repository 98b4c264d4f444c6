//! The [LM] experiments: Tables I-III and the fault-tolerance curves of multibutterflies.

use super::{OutDir, run_trials};
use crate::cli::args::parse_name;
use crate::cli::files::write;
use crate::cli::multibutterfly::{WiringArgs, interior};
use crate::cli::shard::{Replay, ShardArgs};
use clap::Args;
use flitforge::multibutterfly::experiment::{self, LeightonMaggsConfig, Tables};
use flitforge::multibutterfly::greedy::GreedyConfig;
use flitforge::multibutterfly::tolerance::{self, FaultToleranceConfig};
use flitforge::multibutterfly::variants;
use flitforge::{Error, Result};
use std::path::Path;

/// How the [LM] experiments wire their networks and place and propagate faults.
#[derive(Args)]
pub struct FaultNetworkArgs {
    #[command(flatten)]
    wiring: WiringArgs,
    /// Interior levels FIRST..LAST in [LM]'s numbering. [default: 0..lg N - 2]
    #[arg(long, value_name = "FIRST..LAST", allow_hyphen_values = true)]
    interior: Option<String>,
    /// Level −1 rule: all or pairs.
    #[arg(long, default_value = "all", value_parser = ["all", "pairs"])]
    input_rule: String,
}

impl FaultNetworkArgs {
    /// The wiring the flags give, `default` where they are silent.
    fn wiring(
        &self,
        default: flitforge::topology::SplitterWiring,
    ) -> Result<flitforge::topology::SplitterWiring> {
        self.wiring.wiring_or(default)
    }

    fn interior(&self) -> Result<flitforge::multibutterfly::faults::Interior> {
        interior(self.interior.as_deref())
    }

    fn input_rule(&self) -> Result<flitforge::multibutterfly::faults::InputRule> {
        parse_name("input-rule", &self.input_rule, "all|pairs")
    }
}

/// `experiment leighton-maggs` options.
#[derive(Args)]
pub struct LeightonMaggsArgs {
    /// Trials per cell of Tables II and III, 1..=10^6 ([LM]: 500). [default: 500; with
    /// --variants: 50]
    #[arg(long)]
    trials: Option<u32>,
    /// Trials per row of Table I, 0..=10^6 ([LM]: 2000; 0 skips Table I).
    /// [default: 2000; with --variants: 200]
    #[arg(long)]
    table1_trials: Option<u32>,
    /// Run the grid of the choices [LM] leaves open instead of one configuration: wiring
    /// (configuration, rounds, butterfly-plus-random) × level −1's first matching × lane
    /// choice × fault draw × interior levels (0..lg N − 2, 1..lg N − 2), 72 variants with the
    /// same trial seeds; writes variants.md (how far each choice moves each cell) and
    /// variants.csv. About 10 minutes on 2 cores at the default trials.
    #[arg(
        long,
        conflicts_with_all = ["wiring", "first_matching", "lane_choice", "fault_draw", "interior"]
    )]
    variants: bool,
    /// Run seed; every trial's seed derives from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Inputs N, a power of two in 8..=2^20 ([LM]: 1024).
    #[arg(long, default_value_t = 1024)]
    inputs: u32,
    /// Fault counts of the modified rows of Tables II and III, distinct, each at most the
    /// network's interior switches.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,1,10,100,250,500,750,1000"
    )]
    faults: Vec<u32>,
    /// Fault counts of Table I (only the default with --table1-trials 0, which skips it).
    #[arg(long, value_delimiter = ',', default_value = "10,100,250,500,750,1000")]
    table1_faults: Vec<u32>,
    #[command(flatten)]
    network: FaultNetworkArgs,
    /// How a row's faults are drawn: with-replacement (F uniform draws, a switch drawn twice
    /// counts once: about 948 distinct of 1000) or distinct (exactly F). [LM] §IV says "at
    /// random"; see docs/interpretations.md, 'Fault placement'.
    #[arg(long, default_value = "with-replacement", value_parser = ["with-replacement", "distinct"])]
    fault_draw: String,
    /// Admission: a head may have held at most this many packets, 1..=1000 ([LM]: 4).
    #[arg(long, default_value_t = 4)]
    max_held: u32,
    /// lowest, random or least-loaded.
    #[arg(long, default_value = "lowest", value_parser = ["lowest", "random", "least-loaded"])]
    lane_choice: String,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment leighton-maggs`.
pub(super) fn leighton_maggs(args: &LeightonMaggsArgs, replay: &mut Replay) -> Result<()> {
    let (trials, table1_trials) = if args.variants {
        (50, 200)
    } else {
        (500, 2000)
    };
    let table1_trials = args.table1_trials.unwrap_or(table1_trials);
    // (The default, given or left out, is the same command line: `canonical_args`.)
    if table1_trials == 0 && args.table1_faults != LeightonMaggsConfig::default().table1_faults {
        let faults: Vec<String> = args.table1_faults.iter().map(u32::to_string).collect();
        return Err(Error::invalid(
            "table1-faults",
            faults.join(","),
            "none with --table1-trials 0 (Table I is skipped)",
        ));
    }
    let config = LeightonMaggsConfig {
        inputs: args.inputs,
        trials: args.trials.unwrap_or(trials),
        table1_trials,
        faults: args.faults.clone(),
        table1_faults: args.table1_faults.clone(),
        seed: args.seed,
        wiring: args.network.wiring(LeightonMaggsConfig::default().wiring)?,
        greedy: GreedyConfig {
            max_held: args.max_held,
            lane_choice: parse_name(
                "lane-choice",
                &args.lane_choice,
                "lowest|random|least-loaded",
            )?,
            ..GreedyConfig::default()
        },
        interior: args.network.interior()?,
        fault_draw: parse_name("fault-draw", &args.fault_draw, "with-replacement|distinct")?,
        input_rule: args.network.input_rule()?,
        threads: args.threads,
        ..LeightonMaggsConfig::default()
    };
    config.validate()?;
    // A merge runs no trial: only the trials a run makes need the memory.
    let threads = match replay {
        Some(_) => 1,
        None => config.trials_at_once()?,
    };
    let dir = args.out.dir("leighton-maggs")?;
    let mut jobs = args.shard.jobs(&dir, threads, replay, args.out.force)?;
    if args.variants {
        let Some(result) = run_trials(
            "leighton-maggs",
            "experiment leighton-maggs --variants",
            "trials",
            &dir,
            &mut jobs,
            |jobs, progress| variants::variants_jobs(&config, jobs, progress),
        )?
        else {
            return Ok(());
        };
        let md = result.markdown();
        write(dir.join("variants.md"), &md)?;
        write(dir.join("variants.csv"), &result.csv())?;
        say!("{md}");
        return Ok(());
    }
    let Some(tables) = run_trials(
        "leighton-maggs",
        "experiment leighton-maggs, Tables I-III",
        "trials",
        &dir,
        &mut jobs,
        |jobs, progress| experiment::leighton_maggs_jobs(&config, jobs, progress),
    )?
    else {
        return Ok(());
    };
    write_tables(&dir, &tables)?;
    say!("{}", tables.markdown());
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
        write(dir.join(name), &text)?;
    }
    let json = serde_json::json!({
        "config": tables.config, "table1": tables.table1,
        "deterministic_cells_equal": tables.deterministic_cells_equal,
    });
    write(dir.join("summary.json"), &format!("{json:#}\n"))
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
    /// Random fault orders (and networks) per size, 1..=100000.
    #[arg(long, default_value_t = 100)]
    trials: u32,
    /// Run seed; every trial's seed derives from it and N.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    network: FaultNetworkArgs,
    /// Worker threads, 0 for all cores (the result does not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment fault-tolerance`.
pub(super) fn fault_tolerance(args: &FaultToleranceArgs, replay: &mut Replay) -> Result<()> {
    let config = FaultToleranceConfig {
        sizes: args.sizes.clone(),
        trials: args.trials,
        seed: args.seed,
        wiring: args.network.wiring(Default::default())?,
        interior: args.network.interior()?,
        input_rule: args.network.input_rule()?,
        threads: args.threads,
    };
    let dir = args.out.dir("fault-tolerance")?;
    let mut jobs = args
        .shard
        .jobs(&dir, args.threads, replay, args.out.force)?;
    let Some(rows) = run_trials(
        "fault-tolerance",
        "experiment fault-tolerance",
        "trials",
        &dir,
        &mut jobs,
        |jobs, progress| tolerance::fault_tolerance_jobs(&config, jobs, progress),
    )?
    else {
        return Ok(());
    };
    let md = tolerance::tolerance_markdown(&rows, &config);
    let files = [
        ("fault-tolerance.md", md.clone()),
        ("fault-tolerance.csv", tolerance::tolerance_csv(&rows)),
        ("fault-tolerance.svg", tolerance::tolerance_chart(&rows)),
    ];
    for (name, text) in files {
        write(dir.join(name), &text)?;
    }
    say!("{md}");
    Ok(())
}
