//! The [BB] experiments: pruned-butterfly routing time (§3, Theorem 1), flexible-sorter cycles
//! (§4.1, Theorem 2) and sorting fat-tree routing time (§4.3, Theorem 3).

use super::{OutDir, run_trials};
use crate::cli::args::{SorterArgs, engine};
use crate::cli::files::write;
use crate::cli::progress::Progress;
use crate::cli::shard::{Replay, ShardArgs};
use clap::Args;
use flitforge::Result;
use flitforge::sorter::{SortConfig, SorterParams};

/// `experiment pruned-butterfly` options.
#[derive(Args)]
pub struct PrunedButterflyArgs {
    /// Leaves N, comma-separated powers of 4 from 16 to 65536.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256,1024,4096")]
    sizes: Vec<u32>,
    /// Trials (seeds) per workload and size, 1..=10000.
    #[arg(long, default_value_t = 3)]
    trials: u64,
    /// golden (the abstract model, same cycle counts, fast) or cycle (bit by bit).
    #[arg(long, default_value = "golden", value_parser = ["cycle", "golden"])]
    engine: String,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment flexible-sorter` options.
#[derive(Args)]
pub struct FlexibleSorterArgs {
    /// Rings (words per column) s of the one circuit to measure, a power of two from 2 to 64.
    /// [default: two circuits, (b, s, l) = (8, 8, 64) and (8, 16, 256)]
    #[arg(long = "s", value_name = "S")]
    s: Option<u32>,
    /// Its capacity l in words: s times a power of two up to 64. [default: 8 s]
    #[arg(long = "l", value_name = "L")]
    l: Option<u32>,
    /// Its key bits per word b, 1..=32. [default: 8]
    #[arg(long, value_name = "B")]
    bits: Option<u32>,
    /// Seed of the words (the cycle counts do not depend on them).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment sorting-fat-tree` options.
#[derive(Args)]
pub struct SortingFatTreeArgs {
    /// Terminals N, comma-separated powers of two from 16 to 2^20.
    #[arg(long, value_delimiter = ',', default_value = "256,1024,4096,16384")]
    sizes: Vec<u32>,
    /// Trials (seeds) per workload and size, 1..=10000.
    #[arg(long, default_value_t = 3)]
    trials: u64,
    /// Worker threads, 0 for all cores (the tables do not depend on it).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    out: OutDir,
}

/// `experiment pruned-butterfly`.
pub(super) fn pruned_butterfly(args: &PrunedButterflyArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::pruned::experiment;
    let engine = engine(&args.engine)?;
    let sizes = experiment::checked_sizes(&args.sizes)?;
    let dir = args.out.dir("pruned-butterfly")?;
    let mut jobs = args
        .shard
        .jobs(&dir, args.threads, replay, args.out.force)?;
    let Some(runs) = run_trials(
        "pruned-butterfly",
        "experiment pruned-butterfly",
        "runs",
        &dir,
        &mut jobs,
        |jobs, progress| experiment::run_jobs(&sizes, args.trials, engine, jobs, progress),
    )?
    else {
        return Ok(());
    };
    let fit = experiment::fit(&runs);
    write(dir.join("runs.csv"), &experiment::to_csv(&runs))?;
    for (name, svg) in experiment::charts(&runs, &fit) {
        write(dir.join(name), &svg)?;
    }
    let json = serde_json::json!({
        "fit": fit, "runs": runs.len(), "sizes": sizes, "trials": args.trials, "engine": engine
    });
    write(dir.join("summary.json"), &format!("{json:#}\n"))?;
    say!("{}", experiment::summary(&runs, &fit));
    Ok(())
}

/// `experiment flexible-sorter`.
pub(super) fn flexible_sorter(args: &FlexibleSorterArgs) -> Result<()> {
    use flitforge::sorter::experiment;
    let one = SorterArgs {
        s: args.s,
        l: args.l,
        r: None,
        bits: args.bits,
    };
    let params = if one.given() {
        vec![one.config(SortConfig::default(), None, false)?.params]
    } else {
        vec![
            SorterParams {
                s: 8,
                l: 64,
                bits: 8,
            },
            SorterParams {
                s: 16,
                l: 256,
                bits: 8,
            },
        ]
    };
    let dir = args.out.dir("flexible-sorter")?;
    let progress = Progress::new("experiment flexible-sorter", "sorts");
    let total: u64 = params.iter().map(|p| u64::from(p.l / p.s)).sum();
    let mut done = 0;
    let points = experiment::sorter_sweep(&params, args.seed, |_| {
        done += 1;
        progress.update(done, total);
    })?;
    progress.finish();
    let (text, charts) = experiment::sorter_report(&points);
    write(dir.join("runs.csv"), &experiment::sorter_csv(&points))?;
    for (name, svg) in charts {
        write(dir.join(name), &svg)?;
    }
    say!("{text}");
    Ok(())
}

/// `experiment sorting-fat-tree`.
pub(super) fn sorting_fat_tree(args: &SortingFatTreeArgs, replay: &mut Replay) -> Result<()> {
    use flitforge::sorter::experiment;
    let dir = args.out.dir("sorting-fat-tree")?;
    let mut jobs = args
        .shard
        .jobs(&dir, args.threads, replay, args.out.force)?;
    let Some(points) = run_trials(
        "sorting-fat-tree",
        "experiment sorting-fat-tree",
        "runs",
        &dir,
        &mut jobs,
        |jobs, progress| experiment::tree_sweep_jobs(&args.sizes, args.trials, jobs, progress),
    )?
    else {
        return Ok(());
    };
    let (csv, text, charts) = experiment::tree_report(&points);
    write(dir.join("runs.csv"), &csv)?;
    for (name, svg) in charts {
        write(dir.join(name), &svg)?;
    }
    say!("{text}");
    Ok(())
}
