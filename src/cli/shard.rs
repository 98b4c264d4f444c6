//! `--shard K/N` for the experiments whose trials are independent, and `flitforge merge`,
//! which assembles the shards into the files of the unsharded run ([`flitforge::shard`]).

use super::files::write;
use clap::Args;
use flitforge::shard::{Jobs, Results, Shard};
use flitforge::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The shard file's name inside a shard directory.
pub const SHARD_FILE: &str = "shard.json";

/// `--shard K/N`.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Distribution")]
pub struct ShardArgs {
    /// Run only shard K of N (the trials numbered K modulo N) and write DIR/shard.json;
    /// `flitforge merge` combines the N shard directories into the files this command writes
    /// unsharded, byte for byte. Run the shards anywhere: GNU parallel, a Slurm job array
    /// (docs/distributed.md). [default: every trial here]
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
}

/// What a shard file holds.
#[derive(Serialize, Deserialize)]
struct ShardFile {
    schema: u32,
    flitforge: String,
    experiment: String,
    /// The experiment's command line after `flitforge`, without --shard, --out, --force and
    /// --threads (none changes a result).
    args: Vec<String>,
    shard: Shard,
    results: Results,
}

/// Results that `merge` replays into an experiment instead of running its trials.
pub type Replay = Option<Results>;

impl ShardArgs {
    /// Whether --shard was given.
    pub fn given(&self) -> bool {
        self.shard.is_some()
    }

    /// The job runner: the replayed results of a merge, one shard, or every trial.
    pub fn jobs(&self, threads: usize, replay: &mut Replay) -> Result<Jobs> {
        if let Some(results) = replay.take() {
            return Ok(Jobs::replay(results));
        }
        Ok(match &self.shard {
            Some(s) => Jobs::shard(s.parse()?, threads),
            None => Jobs::all(threads),
        })
    }
}

/// Writes `dir/shard.json` for a run of `jobs` that computed one shard of `experiment`.
pub fn write_shard(dir: &Path, experiment: &str, jobs: &Jobs) -> Result<()> {
    let shard = jobs
        .sharded()
        .ok_or_else(|| Error::parse(experiment, "not a sharded run"))?;
    let file = ShardFile {
        schema: 1,
        flitforge: env!("CARGO_PKG_VERSION").to_string(),
        experiment: experiment.to_string(),
        args: replay_args(std::env::args().skip(1)),
        shard,
        results: jobs.results().clone(),
    };
    let text = serde_json::to_string(&file).map_err(|e| Error::parse(SHARD_FILE, e))? + "\n";
    write(dir.join(SHARD_FILE), &text)?;
    let done: usize = jobs.results().values().map(|b| b.len()).sum();
    say!(
        "experiment {experiment}: shard {shard} ({done} trials); `flitforge merge` its {} directories",
        shard.count
    );
    Ok(())
}

/// The command line without the options that do not change a result.
fn replay_args(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let name = a.split('=').next().unwrap_or("");
        match name {
            "--shard" | "--out" | "--threads" => skip_value = !a.contains('='),
            "--force" => {}
            _ => out.push(a),
        }
    }
    out
}

/// `flitforge merge` options.
#[derive(Args)]
pub struct MergeArgs {
    /// Shard directories (or their shard.json files), every shard K/N of one run once.
    #[arg(required = true, value_name = "DIR")]
    shards: Vec<String>,
    /// Output directory. [default: results/<experiment>]
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
    /// Write into a non-empty directory another command wrote.
    #[arg(long)]
    force: bool,
}

/// `flitforge merge`: checks that the shards are every shard of one run, then runs the
/// experiment with their results in place of its trials.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let mut first: Option<ShardFile> = None;
    let mut seen = Vec::new();
    let mut results = Results::new();
    for dir in &args.shards {
        let path = if Path::new(dir).is_dir() {
            PathBuf::from(dir).join(SHARD_FILE)
        } else {
            PathBuf::from(dir)
        };
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?;
        let file: ShardFile =
            serde_json::from_str(&text).map_err(|e| Error::parse(path.display(), e))?;
        if let Some(f) = &first
            && (
                f.experiment.as_str(),
                &f.args,
                f.shard.count,
                f.flitforge.as_str(),
            ) != (
                file.experiment.as_str(),
                &file.args,
                file.shard.count,
                file.flitforge.as_str(),
            )
        {
            return Err(Error::invalid(
                "shards",
                path.display(),
                format!(
                    "a shard of the same run: `flitforge {}` in {} shards, flitforge {}",
                    f.args.join(" "),
                    f.shard.count,
                    f.flitforge
                ),
            ));
        }
        if seen.contains(&file.shard.index) {
            return Err(Error::invalid(
                "shards",
                path.display(),
                format!("each shard once; shard {} is given twice", file.shard),
            ));
        }
        seen.push(file.shard.index);
        for (batch, r) in &file.results {
            results.entry(batch.clone()).or_default().extend(r.clone());
        }
        first.get_or_insert(file);
    }
    let first = first.ok_or_else(|| Error::invalid("shards", "none", "at least one"))?;
    if let Some(missing) = (0..first.shard.count).find(|k| !seen.contains(k)) {
        return Err(Error::invalid(
            "shards",
            format!("{} of {}", seen.len(), first.shard.count),
            format!(
                "all {} shards; shard {missing} is missing",
                first.shard.count
            ),
        ));
    }
    let mut argv = vec!["flitforge".to_string()];
    argv.extend(first.args.iter().cloned());
    if let Some(out) = &args.out {
        argv.extend(["--out".to_string(), out.clone()]);
    }
    if args.force {
        argv.push("--force".into());
    }
    let target = super::replay_target(&argv)?;
    say!(
        "merge: {} shards of `flitforge {}`",
        first.shard.count,
        first.args.join(" ")
    );
    match target {
        super::Replayable::Experiment(which) => super::experiment::run_with(*which, Some(results)),
        super::Replayable::Sweep(args) => super::network::sweep(&args, &mut Some(results)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_drops_only_what_does_not_change_results() {
        let args = [
            "experiment",
            "leighton-maggs",
            "--trials",
            "4",
            "--shard",
            "1/4",
            "--out=x",
            "--threads",
            "2",
            "--force",
            "--seed=3",
        ];
        assert_eq!(
            replay_args(args.iter().map(|s| s.to_string())),
            ["experiment", "leighton-maggs", "--trials", "4", "--seed=3"]
        );
    }
}
