//! `flitforge experiment`: every paper's experiment behind one subcommand, each writing into
//! its own directory (results/<experiment>/ unless --out), with progress on standard error.

mod bay_bilardi;
mod leighton_maggs;

pub use bay_bilardi::{FlexibleSorterArgs, PrunedButterflyArgs, SortingFatTreeArgs};
use bay_bilardi::{flexible_sorter, pruned_butterfly, sorting_fat_tree};
pub use leighton_maggs::{FaultToleranceArgs, LeightonMaggsArgs};
use leighton_maggs::{fault_tolerance, leighton_maggs};

use super::files::{experiment_dir, write};
use super::progress::Progress;
use super::shard::{Replay, ShardArgs, write_shard};
use clap::{Args, Subcommand};
use flitforge::{Error, Result};
use std::path::Path;

/// The experiments of `flitforge experiment`.
#[derive(Subcommand)]
pub enum ExperimentKind {
    /// [BB] §3: pruned-butterfly routing time against λ and N (Theorem 1).
    ///
    /// Random sets, permutations, degree-d sets and a hot region, fitted to Theorem 1's
    /// O(λ log² N). Writes runs.csv, summary.json and charts.
    PrunedButterfly(PrunedButterflyArgs),
    /// [BB] §4.1: flexible-sorter cycles against Theorem 2.
    ///
    /// Cycles of the circuit for r = s, 2s, ..., l, against Theorem 2's O((b + log s) r/s);
    /// default circuits (b, s, l) = (8, 8, 64), (8, 16, 256), or one given with --s, --l,
    /// --bits. Writes runs.csv and charts.
    FlexibleSorter(FlexibleSorterArgs),
    /// [BB] §4.3: sorting fat-tree routing time against Theorem 3.
    ///
    /// Routing time against λ and N, against Theorem 3's O(λ log N + log² N). Writes runs.csv
    /// and charts.
    SortingFatTree(SortingFatTreeArgs),
    /// [LM] §IV: Tables I-III (fault failure rate, greedy completion time, never delayed).
    ///
    /// N = 1024, d = 2: how often random faults reach an input (2000 trials per row), greedy
    /// completion time (mean and σ over 500 trials for each network and the problems 1, 10,
    /// 1T, 10T) and the percentage of packets never delayed. Writes tables.md (laid out like
    /// the paper), table1.csv, table2.csv, table3.csv, trials.csv (every trial), summary.json
    /// and completion-vs-faults.svg. Trials run on all cores; the result does not depend on the
    /// number of threads. The wiring (butterfly-plus-random, first matching the identity) and
    /// the fault draw (with replacement) are the interpretations that reproduce the published
    /// structure; tables.md names them, and --variants measures how much each such choice
    /// moves every cell (variants.md, variants.csv).
    LeightonMaggs(LeightonMaggsArgs),
    /// [Pat81]: the unbuffered k-ary n-fly's delivered fraction against Patel's recursion.
    ///
    /// Drop mode, one VC, one-flit messages: every input sends one message at cycle 0 to a
    /// uniformly random output, a switch passes one per output and discards the rest, nothing
    /// is retried; p_n = 1 - (1 - p_(n-1)/k)^k predicts the fraction delivered. Each radix runs
    /// the sizes that are a power of it. Writes patel.md, patel.csv, patel.json and patel.svg.
    Patel(PatelArgs),
    /// [CMS]: offline schedules, the lower bound, the speed-up from B virtual channels, the
    /// butterfly algorithm and circuit-switching survivors, each against the paper's bound.
    ///
    /// Tables (Markdown in cole-maggs-sitaraman.md, one CSV each): offline (the refined
    /// schedule of Theorem 2.1.6 against C, D, B, beside the naive colouring and the online
    /// run; every schedule checked never to block), lower-bound (Theorem 2.2.1's instance
    /// under six release policies against (L - D)M/B), speed-up (T(1)/T(B) against
    /// B·D^(1-1/B) and B·lg^(1-1/B) n), vct (B VCs against virtual cut-through), butterfly
    /// (§3.1 against n, q, L, B with the per-round checks of Invariant 3.1.2 and Lemmas
    /// 3.1.4/3.1.5) and survivors (one-shot circuit switching against n/lg^(1/B) n); SVG
    /// charts with the bound and the fitted constant; summary.json. Trials run on all cores;
    /// the result does not depend on the number of threads.
    ColeMaggsSitaraman(CmsArgs),
    /// [SV]: growing-rank store-and-forward and wormhole trials under continuous traffic on
    /// the butterfly, a mesh, a torus and a random graph, each against its theorem.
    ///
    /// Tables (Markdown in scheideler-voecking.md, one CSV each): growing-rank (routing time
    /// over D₀ and stability against the link load λ, Theorem 2.4's region λ < 1/e and
    /// beyond), growing-rank-tail (P(T − D₀ > t) on a log scale, its geometric decay and the
    /// largest T/D₀, against Theorem 2.4's tail beyond m·D₀), trial-failures (failed trials
    /// per worm at Theorem 3.1's load against 3/(2^B - 1)), trial-threshold (the largest
    /// stable load against λ_B and B/L) and recovery (a burst before the window, with and
    /// without §4's overflow stacks, against the recovery times m·T and 2RT); SVG charts;
    /// summary.json. Trials run on all cores; the result does not depend on the number of
    /// threads.
    ScheidelerVoecking(SvArgs),
    /// [CMSV]: Routing Algorithms 1 and 2 and the deterministic butterfly algorithm on random
    /// path collections of the butterfly, meshes, a torus and random graphs, against the
    /// paper's bounds.
    ///
    /// Tables (Markdown in cypher.md, one CSV each): algorithm1 (rounds, makespan and
    /// survivors at the prescribed bandwidth and below it), algorithm2 (rounds against Lemma
    /// 3.4's budget, makespan against (L·C·D^(1/B) + (D + L) lg n)/B and the lower bound
    /// L·C/B + D + L, speed-up over B = 1), butterfly (Theorem 1.14(a)'s deterministic
    /// algorithm against Algorithm 2) and corollaries (Corollaries 1.10 and 1.11 on the torus
    /// and Theorem 1.13's variant on the mesh against D, L and B), one-phase and
    /// one-phase-capacity (Theorem 1.14(b) by Monte Carlo: random worm sets that fit one
    /// phase without delay), theorem-1.7, theorem-1.8 and corollary-1.4 (the
    /// store-and-forward variants against their shapes); charts with the fitted constants; summary.json. Trials run on all cores; the result does not depend on the
    /// number of threads.
    Cypher(CypherArgs),
    /// [LM] §IV: random faults tolerated before one reaches an input, vs (N lg N)^(3/4).
    ///
    /// Fresh modified splitter networks and random fault orders per size; writes
    /// fault-tolerance.md, .csv and .svg.
    FaultTolerance(FaultToleranceArgs),
    /// The emitted hardware on iCE40 devices: LUT4, flip-flops and Fmax of one switch per
    /// back-pressure mode (inside a harness that registers every port), the board tops of 4-
    /// and 8-input butterflies with on-chip generators and checkers, the largest butterfly top
    /// each device holds, the pruned-butterfly vertices and the flexible sorter. Writes
    /// fpga.md, fpga.csv and fpga.json; takes about 11 minutes on 2 cores.
    Fpga(FpgaExperimentArgs),
    /// The papers' VLSI claims ([BB] §3.2, §4.1-4.2, Theorems 1-3, Corollary 2; [LM] §I's
    /// Θ(N²) butterfly) on OSU standard cells: synthesises butterflies, pruned butterflies
    /// and Corollary 2's sorters (yosys, OpenSTA), extends them with the layout model to
    /// N = 2^20, and writes claims.md (one row per claim: ratios and a verdict), model.csv,
    /// silicon.csv, silicon.md and charts. Most of its time is yosys on the 256-leaf pruned
    /// butterfly (about 170 000 cells; 30 minutes here, on a shared 2-core machine); every
    /// circuit is cached by configuration hash, so a rerun resumes. --place-route adds qflow
    /// runs (a few minutes).
    Vlsi(super::silicon::VlsiArgs),
}

/// Where an experiment writes.
#[derive(Args, Clone)]
#[command(next_help_heading = "Output")]
pub struct OutDir {
    /// Output directory. [default: results/<experiment>]
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
    /// Write into a non-empty directory another command wrote.
    #[arg(long)]
    force: bool,
}

impl OutDir {
    pub(super) fn dir(&self, experiment: &str) -> Result<std::path::PathBuf> {
        // (No experiment reads a file.)
        experiment_dir(experiment, self.out.as_deref(), self.force, &[])
    }
}

/// `experiment patel` options.
#[derive(Args)]
pub struct PatelArgs {
    /// Terminals N, comma-separated powers of two from 2 to 65536 (each radix runs those that
    /// are a power of it).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "16,32,64,128,256,512,1024,2048,4096"
    )]
    sizes: Vec<u32>,
    /// Switch radices k, comma-separated powers of two from 2 to 16.
    #[arg(long, value_delimiter = ',', default_value = "2,4")]
    radices: Vec<u32>,
    /// Trials (independent destination draws) per radix and size, 1..=1000000.
    #[arg(long, default_value_t = 1000)]
    trials: u64,
    /// Seed of every trial's destinations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment cole-maggs-sitaraman` options.
#[derive(Args)]
pub struct CmsArgs {
    /// Trials (independent problems and draws) per row, 1..=1000.
    #[arg(long, default_value_t = 10)]
    trials: u32,
    /// Seed of every trial.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Virtual channels B, comma-separated, starting with 1 (speed-ups are T(1)/T(B)), each
    /// 1..=8.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
    vcs: Vec<u32>,
    /// β of the butterfly algorithm's Δ = ⌈β q_eff lg^(1/B) n / B⌉ colours, q_eff = max(q,
    /// ⌈lg n⌉) ([CMS] §3.1; the proof's β is in the thousands for B = 1); 0.01..=1000000.
    #[arg(long, default_value_t = 1.0)]
    beta: f64,
    /// Largest butterfly of the butterfly-algorithm and survivors tables, a power of two in
    /// 16..=16384.
    #[arg(long, default_value_t = 16384)]
    max_inputs: u32,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment scheideler-voecking` options.
#[derive(Args)]
pub struct SvArgs {
    /// Trials (independent seeds) per row, 1..=1000.
    #[arg(long, default_value_t = 3)]
    trials: u32,
    /// Seed of every trial.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Terminals of every network, a power of 4 in 16..=4096.
    #[arg(long, default_value_t = 64)]
    terminals: u32,
    /// Cycles of every measured window, 1000..=10000000.
    #[arg(long, default_value_t = 10_000)]
    window: u64,
    /// Link bandwidths B of the wormhole tables, comma-separated, each 1..=16.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
    bandwidths: Vec<u32>,
    /// Flits per worm L, 1..=256.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment cypher` options.
#[derive(Args)]
pub struct CypherArgs {
    /// Trials (independent collections and draws) per row, 1..=1000.
    #[arg(long, default_value_t = 5)]
    trials: u32,
    /// Seed of every trial.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Messages per terminal of every table but butterfly and one-phase, 1..=64.
    #[arg(long, default_value_t = 4)]
    q: u32,
    /// Flits per worm L of the algorithm2 and butterfly tables (corollaries runs L = 4, 8,
    /// 16), 1..=256.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// Link bandwidths B of the algorithm2, butterfly, corollaries and one-phase tables,
    /// comma-separated, starting with 1, each 1..=16.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
    bandwidths: Vec<u32>,
    /// α of the w.h.p. bounds (probability 1 - n^(-α)), 0..=16.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment fpga` options.
#[derive(Args)]
pub struct FpgaExperimentArgs {
    #[command(flatten)]
    out: OutDir,
}

/// Runs the experiment `which` names.
pub fn run(which: ExperimentKind) -> Result<()> {
    run_with(which, None)
}

/// Runs the experiment `which` names; with `replay`, from the results of its shards.
pub fn run_with(which: ExperimentKind, mut replay: Replay) -> Result<()> {
    if replay.is_some()
        && !matches!(
            which,
            ExperimentKind::LeightonMaggs(_)
                | ExperimentKind::FaultTolerance(_)
                | ExperimentKind::PrunedButterfly(_)
                | ExperimentKind::SortingFatTree(_)
                | ExperimentKind::Patel(_)
                | ExperimentKind::ColeMaggsSitaraman(_)
                | ExperimentKind::ScheidelerVoecking(_)
                | ExperimentKind::Cypher(_)
        )
    {
        return Err(Error::invalid(
            "shards",
            "this experiment",
            "shards of leighton-maggs, fault-tolerance, pruned-butterfly, sorting-fat-tree, patel, cole-maggs-sitaraman, scheideler-voecking or cypher",
        ));
    }
    let replay = &mut replay;
    match which {
        ExperimentKind::Fpga(a) => fpga(&a.out.dir("fpga")?),
        ExperimentKind::Vlsi(a) => super::silicon::vlsi(&a),
        ExperimentKind::PrunedButterfly(a) => pruned_butterfly(&a, replay),
        ExperimentKind::FlexibleSorter(a) => flexible_sorter(&a),
        ExperimentKind::SortingFatTree(a) => sorting_fat_tree(&a, replay),
        ExperimentKind::LeightonMaggs(a) => leighton_maggs(&a, replay),
        ExperimentKind::FaultTolerance(a) => fault_tolerance(&a, replay),
        ExperimentKind::Patel(a) => patel(&a, replay),
        ExperimentKind::ColeMaggsSitaraman(a) => cole_maggs_sitaraman(&a, replay),
        ExperimentKind::ScheidelerVoecking(a) => scheideler_voecking(&a, replay),
        ExperimentKind::Cypher(a) => cypher(&a, replay),
    }
}

/// Runs an experiment's trials with a progress bar on standard error: `Some(result)` when every
/// trial ran here or was replayed from shards, `None` when `jobs` ran one shard, whose file is
/// then written into `dir` as `experiment`'s.
fn run_trials<T>(
    experiment: &str,
    label: &str,
    unit: &'static str,
    dir: &Path,
    jobs: &mut flitforge::shard::Jobs,
    run: impl FnOnce(&mut flitforge::shard::Jobs, &(dyn Fn(usize, usize) + Sync)) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let progress = Progress::new(label, unit);
    let result = run(jobs, &|done, total| {
        progress.update(done as u64, total as u64);
    })?;
    progress.finish();
    if result.is_none() {
        write_shard(dir, experiment, jobs, None)?;
    }
    Ok(result)
}

/// `experiment cole-maggs-sitaraman`.
fn cole_maggs_sitaraman(args: &CmsArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::cms::experiment::{self as cms, CmsConfig};
    let config = CmsConfig {
        trials: args.trials,
        seed: args.seed,
        vcs: args.vcs.clone(),
        beta: args.beta,
        max_inputs: args.max_inputs,
    };
    config.check()?;
    let place = Place {
        shard: &args.shard,
        threads: args.threads,
        out: &args.out,
    };
    table_experiment(
        "cole-maggs-sitaraman",
        &config,
        place,
        replay,
        |jobs, progress| cms::run(&config, jobs, progress),
        |results| results.to_markdown(&config),
    )
}

/// `experiment scheideler-voecking`.
fn scheideler_voecking(args: &SvArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::universal::experiment::{self as sv, SvConfig};
    let config = SvConfig {
        trials: args.trials,
        seed: args.seed,
        terminals: args.terminals,
        window: args.window,
        bandwidths: args.bandwidths.clone(),
        flits: args.flits,
    };
    config.check()?;
    let place = Place {
        shard: &args.shard,
        threads: args.threads,
        out: &args.out,
    };
    table_experiment(
        "scheideler-voecking",
        &config,
        place,
        replay,
        |jobs, progress| sv::run(&config, jobs, progress),
        |results| sv::to_markdown(results, &config),
    )
}

/// `experiment cypher`.
fn cypher(args: &CypherArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::universal::cypher::{self, CypherConfig};
    let config = CypherConfig {
        trials: args.trials,
        seed: args.seed,
        q: args.q,
        flits: args.flits,
        bandwidths: args.bandwidths.clone(),
        alpha: args.alpha,
    };
    config.check()?;
    let place = Place {
        shard: &args.shard,
        threads: args.threads,
        out: &args.out,
    };
    table_experiment(
        "cypher",
        &config,
        place,
        replay,
        |jobs, progress| cypher::run(&config, jobs, progress),
        |results| cypher::to_markdown(results, &config),
    )
}

/// Where an experiment runs: its shard, its threads, its output directory.
struct Place<'a> {
    shard: &'a ShardArgs,
    threads: usize,
    out: &'a OutDir,
}

/// Runs an experiment of tables against bounds ([CMS], [SV], [CMSV]): its trials here (or one
/// shard of them, or replayed from shards), then `name`.md, one CSV per table, its charts and
/// summary.json (the configuration, the tables and the fitted constants).
fn table_experiment<C: serde::Serialize>(
    name: &str,
    config: &C,
    place: Place,
    replay: &mut Replay,
    run: impl FnOnce(
        &mut flitforge::shard::Jobs,
        &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Option<flitforge::tables::Results>>,
    markdown: impl FnOnce(&flitforge::tables::Results) -> String,
) -> Result<()> {
    let dir = place.out.dir(name)?;
    let mut jobs = place
        .shard
        .jobs(&dir, place.threads, replay, place.out.force)?;
    let label = format!("experiment {name}");
    let Some(results) = run_trials(name, &label, "trials", &dir, &mut jobs, run)? else {
        return Ok(());
    };
    let md = markdown(&results);
    write(dir.join(format!("{name}.md")), &md)?;
    for t in &results.tables {
        write(dir.join(format!("{}.csv", t.name)), &t.to_csv())?;
    }
    for (file, svg) in &results.charts {
        write(dir.join(file), svg)?;
    }
    let constants: Vec<serde_json::Value> = results
        .constants
        .iter()
        .map(|(n, c)| serde_json::json!({"fit": n, "c": c}))
        .collect();
    let json =
        serde_json::json!({"config": config, "tables": results.tables, "constants": constants});
    write(dir.join("summary.json"), &format!("{json:#}\n"))?;
    say!("{md}");
    Ok(())
}

/// `experiment patel`.
fn patel(args: &PatelArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::delta;
    let config = delta::PatelConfig {
        sizes: args.sizes.clone(),
        radices: args.radices.clone(),
        trials: args.trials,
        seed: args.seed,
    };
    config.grid()?;
    let dir = args.out.dir("patel")?;
    let mut jobs = args
        .shard
        .jobs(&dir, args.threads, replay, args.out.force)?;
    let Some(trials) = run_trials(
        "patel",
        "experiment patel",
        "trials",
        &dir,
        &mut jobs,
        |jobs, progress| delta::run_jobs(&config, jobs, progress),
    )?
    else {
        return Ok(());
    };
    let rows = delta::rows(&trials);
    let table = delta::to_markdown(&rows, &config);
    write(dir.join("patel.md"), &table)?;
    write(dir.join("patel.csv"), &delta::to_csv(&rows))?;
    let json = serde_json::json!({ "config": config, "rows": rows });
    write(dir.join("patel.json"), &format!("{json:#}\n"))?;
    write(dir.join("patel.svg"), &delta::chart(&rows))?;
    say!("{table}");
    Ok(())
}

/// `experiment fpga`.
fn fpga(dir: &Path) -> Result<()> {
    use flitforge::fpga::experiment;
    let started = std::time::Instant::now();
    let rows = experiment::run(dir, &mut |step| note!("experiment fpga: {step}"))?;
    let table = experiment::markdown(&rows);
    let json = serde_json::to_string_pretty(&rows).map_err(|e| Error::parse("rows", e))?;
    write(dir.join("fpga.md"), &table)?;
    write(dir.join("fpga.csv"), &experiment::csv(&rows))?;
    write(dir.join("fpga.json"), &(json + "\n"))?;
    say!("{table}");
    note!(
        "experiment fpga: {} designs in {:.0} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
