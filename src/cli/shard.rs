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
    /// Continue an interrupted run of the same command from the trials it saved in its
    /// output directory (.flitforge-checkpoint.json); the files it writes are those an
    /// uninterrupted run writes, byte for byte.
    #[arg(long)]
    resume: bool,
}

/// The checkpoint file inside an experiment's directory.
pub const CHECKPOINT_FILE: &str = ".flitforge-checkpoint.json";

/// What a shard file holds.
#[derive(Serialize, Deserialize)]
struct ShardFile {
    schema: u32,
    flitforge: String,
    experiment: String,
    /// The experiment's command line after `flitforge`, without --shard, --out, --force and
    /// --threads (none changes a result).
    args: Vec<String>,
    /// The files `args` names, each as `path#digest` of its contents ([`input_digests`]).
    #[serde(default)]
    inputs: Vec<String>,
    /// What the results belong to where the command says it by value (a sweep: its
    /// resolved configuration, loads and the digest of a graph file it names), which
    /// [`same_run`] compares instead of `args` and `inputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    identity: Option<Vec<String>>,
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

    /// Whether --resume was given.
    pub fn resumes(&self) -> bool {
        self.resume
    }

    /// The job runner: the replayed results of a merge, or one shard or every trial, saving
    /// the finished ones in `dir`'s checkpoint (read back with --resume; an existing one is
    /// refused without --resume unless `force`). The checkpoint is removed once the command
    /// succeeds.
    pub fn jobs(
        &self,
        dir: &Path,
        threads: usize,
        replay: &mut Replay,
        force: bool,
    ) -> Result<Jobs> {
        self.jobs_keyed(dir, threads, replay, force, None)
    }

    /// [`ShardArgs::jobs`] for a command that says what its results belong to by value
    /// (`identity`: a sweep's resolved configuration, loads and the digest of a graph file it
    /// names): a checkpoint is resumed by the same identity, however the command line spells
    /// it, defaults included.
    pub fn jobs_keyed(
        &self,
        dir: &Path,
        threads: usize,
        replay: &mut Replay,
        force: bool,
        identity: Option<&[String]>,
    ) -> Result<Jobs> {
        if let Some(results) = replay.take() {
            if self.resume {
                return Err(Error::invalid(
                    "resume",
                    "given",
                    "no value with merge (a merge runs no trial)",
                ));
            }
            return Ok(Jobs::replay(results));
        }
        if threads > flitforge::shard::MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                threads,
                format!("0..={} (0: every core)", flitforge::shard::MAX_THREADS),
            ));
        }
        let jobs = match &self.shard {
            Some(s) => Jobs::shard(s.parse()?, threads),
            None => Jobs::all(threads),
        };
        let path = dir.join(CHECKPOINT_FILE);
        // The results depend on the options the command line sets, less those that change
        // none (in any order or spelling, a fixed default given or left out: canonical_args),
        // or on what the command says they belong to (`identity`), ...
        let given = replay_args(std::env::args().skip(1));
        let mut key = match identity {
            Some(identity) => identity.to_vec(),
            None => {
                let mut key = super::canonical_args(&given).unwrap_or_else(|| given.clone());
                // ... on the contents of the files it names, ...
                key.extend(input_digests(&given)?);
                key
            }
        };
        // ... and on which shard runs.
        if let Some(s) = &self.shard {
            key.push(format!("--shard={s}"));
        }
        // The command line as a refusal names it (--resume and --force aside).
        let command = std::env::args()
            .skip(1)
            .filter(|a| a != "--resume" && a != "--force")
            .collect::<Vec<_>>()
            .join(" ");
        let resumed = if self.resume {
            if !path.exists() {
                return Err(Error::invalid(
                    "resume",
                    dir.display(),
                    format!(
                        "the directory of an interrupted run (it has no {CHECKPOINT_FILE}; run without --resume)"
                    ),
                ));
            }
            Jobs::read_checkpoint(&path, &key, &command)?
        } else {
            if path.exists() && !force {
                return Err(Error::invalid(
                    "out",
                    dir.display(),
                    "a directory without an interrupted run's checkpoint: --resume continues that run, --force starts over",
                ));
            }
            Results::new()
        };
        super::files::remove_on_success(&path);
        Ok(jobs.with_checkpoint(path, key, command, resumed))
    }
}

/// Writes `dir/shard.json` for a run of `jobs` that computed one shard of `experiment`.
pub fn write_shard(
    dir: &Path,
    experiment: &str,
    jobs: &Jobs,
    identity: Option<&[String]>,
) -> Result<()> {
    let shard = jobs
        .sharded()
        .ok_or_else(|| Error::parse(experiment, "not a sharded run"))?;
    let args = replay_args(std::env::args().skip(1));
    let file = ShardFile {
        schema: 1,
        flitforge: env!("CARGO_PKG_VERSION").to_string(),
        experiment: experiment.to_string(),
        inputs: input_digests(&args)?,
        identity: identity.map(<[String]>::to_vec),
        args,
        shard,
        results: jobs.results().clone(),
    };
    let text = serde_json::to_string(&file).map_err(|e| Error::parse(SHARD_FILE, e))? + "\n";
    write(dir.join(SHARD_FILE), &text)?;
    let done: usize = jobs.results().values().map(|b| b.len()).sum();
    let (command, unit) = match experiment {
        "sweep" => ("sim --sweep".to_string(), "load"),
        _ => (format!("experiment {experiment}"), "trial"),
    };
    let plural = if done == 1 { "" } else { "s" };
    say!(
        "{command}: shard {shard} ({done} {unit}{plural}); `flitforge merge` its {} directories",
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
            "--shard" | "--out" | "--threads" | "--max-memory" | "--max-output" | "--max-input" => {
                skip_value = !a.contains('=')
            }
            "--force" | "--resume" => {}
            _ => out.push(a),
        }
    }
    out
}

/// Whether two shards (of this build: [`merge`] checks) come from one run: the same
/// experiment and shard count, and the same identity where they record one (a sweep's
/// resolved configuration, loads and graph file's digest), else command lines that set the
/// same options ([`super::canonical_args`]: in any order or spelling) on the same input
/// files.
fn same_run(a: &ShardFile, b: &ShardFile) -> bool {
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    let options = |f: &ShardFile| super::canonical_args(&f.args).unwrap_or_else(|| f.args.clone());
    (a.experiment.as_str(), a.shard.count) == (b.experiment.as_str(), b.shard.count)
        && match (&a.identity, &b.identity) {
            (Some(x), Some(y)) => x == y,
            _ => sorted(&a.inputs) == sorted(&b.inputs) && options(a) == options(b),
        }
}

/// Every file a command line names (a value that is an existing file: a configuration, a
/// message list, a graph), as `path#digest`, the digest a 64-bit FNV-1a hash of its
/// contents: a shard or a checkpoint is only combined with runs of the same inputs.
pub(super) fn input_digests(args: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for a in args {
        let value = match a.split_once('=') {
            Some((name, value)) if name.starts_with("--") => value,
            _ => a.as_str(),
        };
        let path = Path::new(value);
        if value.starts_with("--") || !path.is_file() {
            continue;
        }
        out.push(format!("{value}#{}", flitforge::digest::file_hash(path)?));
    }
    Ok(out)
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
    let mut shard_dirs = Vec::new();
    for dir in &args.shards {
        let path = if Path::new(dir).is_dir() {
            PathBuf::from(dir).join(SHARD_FILE)
        } else {
            PathBuf::from(dir)
        };
        shard_dirs.push(match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.display().to_string(),
            _ => ".".to_string(),
        });
        let text = flitforge::limits::read_input_text(&path.to_string_lossy())?;
        let file: ShardFile =
            serde_json::from_str(&text).map_err(|e| Error::parse(path.display(), e))?;
        // The merge replays the shards' command line on this build, which reads it (and fills
        // in its defaults) as theirs did only if it is theirs.
        if file.flitforge != env!("CARGO_PKG_VERSION") {
            return Err(Error::invalid(
                "shards",
                path.display(),
                format!(
                    "shards of this build, flitforge {} (this one is of flitforge {}): every machine runs the same build",
                    env!("CARGO_PKG_VERSION"),
                    file.flitforge
                ),
            ));
        }
        if let Some(f) = &first
            && !same_run(f, &file)
        {
            return Err(Error::invalid(
                "shards",
                path.display(),
                format!(
                    "a shard of the same run as {}: `flitforge {}` in {} shards, flitforge {}, on the same input files (this one ran `flitforge {}` in {} shards, flitforge {})",
                    shard_dirs[0],
                    f.args.join(" "),
                    f.shard.count,
                    f.flitforge,
                    file.args.join(" "),
                    file.shard.count,
                    file.flitforge,
                ),
            ));
        }
        if file.shard.index >= file.shard.count {
            return Err(Error::invalid(
                "shards",
                path.display(),
                format!(
                    "a shard file as a run wrote it: shard K/N with K < N (it says {})",
                    file.shard
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
    // The merged files are written by the command the shards ran, which reads its input
    // files again: they must be the ones the shards read.
    let now = input_digests(&first.args)?;
    if let Some(changed) = first.inputs.iter().find(|d| !now.contains(d)) {
        let path = changed
            .rsplit_once('#')
            .map_or(changed.as_str(), |(p, _)| p);
        let why = match std::path::Path::new(path).is_file() {
            true => "its contents differ".to_string(),
            // A path the shards' command line gave is read from where merge runs.
            false => match std::env::current_dir() {
                Ok(here) => format!("there is no such file from {}", here.display()),
                Err(_) => "there is no such file here".to_string(),
            },
        };
        return Err(Error::invalid(
            "shards",
            path,
            format!("the input files the shards read, unchanged ({why})"),
        ));
    }
    // The shards are inputs: the merged files go elsewhere.
    let out = (args.out.clone()).unwrap_or_else(|| format!("results/{}", first.experiment));
    let inputs: Vec<&str> = shard_dirs.iter().map(String::as_str).collect();
    super::files::not_over_input("out", &out, &inputs)?;
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
        super::Replayable::Sweep(args) => super::sweep::sweep(&args, &mut Some(results)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_digests_follow_the_named_files_contents() {
        let path =
            std::env::temp_dir().join(format!("flitforge-digest-{}.toml", std::process::id()));
        let name = path.display().to_string();
        std::fs::write(&path, "inputs = 16\n").unwrap();
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let before = input_digests(&args(&["sim", "--config", &name, "--inputs", "16"])).unwrap();
        assert_eq!(before.len(), 1);
        assert!(before[0].starts_with(&format!("{name}#")));
        let eq = input_digests(&args(&["sim", &format!("--config={name}")])).unwrap();
        assert_eq!(before, eq);
        std::fs::write(&path, "inputs = 64\n").unwrap();
        let after = input_digests(&args(&["sim", "--config", &name])).unwrap();
        assert_ne!(before, after);
        std::fs::remove_file(&path).unwrap();
        assert!(
            input_digests(&args(&["sim", "--config", &name]))
                .unwrap()
                .is_empty()
        );
    }

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
