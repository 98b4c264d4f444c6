//! Independent jobs on the threads of one machine, or split over machines.
//!
//! An experiment's trials are jobs numbered `0..n` whose results depend only on their index
//! (every trial derives its own seed), so they can run anywhere. [`Jobs`] runs a batch of them
//! in one of three ways: all of them here ([`Jobs::all`]); only shard `k` of `n` — the jobs
//! with index ≡ k (mod n) — keeping their results for a shard file ([`Jobs::shard`]); or none,
//! replaying results that shard files brought ([`Jobs::replay`]). The experiment code is the
//! same in all three, so a merge of every shard gives exactly the files of the unsharded run.

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Shard `index` of `count`: the jobs whose index is `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// Most shards one run may be split into.
pub const MAX_SHARDS: u32 = 65_536;

impl FromStr for Shard {
    type Err = Error;

    /// `K/N` with `0 <= K < N <= 65536`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(
                "shard",
                s,
                format!("K/N with integers 0 <= K < N <= {MAX_SHARDS}, e.g. 0/4"),
            )
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether job `j` belongs to this shard.
    pub fn owns(&self, j: usize) -> bool {
        j % self.count as usize == self.index as usize
    }
}

/// Job results by batch name and job index, as a shard file holds them.
pub type Results = BTreeMap<String, BTreeMap<usize, serde_json::Value>>;

enum Mode {
    All,
    Shard(Shard),
    Replay,
}

/// Most worker threads a batch starts.
pub const MAX_THREADS: usize = 1024;

/// Where a run keeps the results of the jobs it finished, so that an interrupted run continues
/// where it stopped ([`Jobs::with_checkpoint`]).
struct Checkpoint {
    path: PathBuf,
    /// What the results belong to (the options the command line sets, the digests of the
    /// files it names, the shard), checked when a run resumes.
    key: Vec<String>,
    /// The command line as given (without --resume and --force), for a refusal to name.
    command: String,
    /// Whether the run resumed from it (its results are an earlier run's work).
    resumed: bool,
}

impl Checkpoint {
    /// Writes `results` to the checkpoint file (atomically).
    fn write(&self, results: &Results) -> Result<()> {
        let file = CheckpointFile {
            schema: 1,
            flitforge: env!("CARGO_PKG_VERSION").to_string(),
            key: self.key.clone(),
            command: self.command.clone(),
            results: results.clone(),
        };
        let text =
            serde_json::to_string(&file).map_err(|e| Error::parse(self.path.display(), e))? + "\n";
        crate::files::write_atomic(&self.path, text)
    }
}

/// What a checkpoint file holds.
#[derive(Serialize, Deserialize)]
pub struct CheckpointFile {
    pub schema: u32,
    pub flitforge: String,
    /// What the results belong to ([`Jobs::with_checkpoint`]).
    #[serde(alias = "args")]
    pub key: Vec<String>,
    /// The command line as given, without --resume and --force (absent from a checkpoint of
    /// an earlier build).
    #[serde(default)]
    pub command: String,
    pub results: Results,
}

/// Runs batches of independent jobs: all here, one shard of them, or none (replaying results).
pub struct Jobs {
    mode: Mode,
    threads: usize,
    results: Results,
    checkpoint: Option<Checkpoint>,
}

impl Jobs {
    /// Every job, on `threads` workers (0 = all cores).
    pub fn all(threads: usize) -> Self {
        Jobs {
            mode: Mode::All,
            threads,
            results: Results::new(),
            checkpoint: None,
        }
    }

    /// The jobs of `shard`, on `threads` workers; their results are kept ([`Jobs::results`]).
    pub fn shard(shard: Shard, threads: usize) -> Self {
        Jobs {
            mode: Mode::Shard(shard),
            threads,
            results: Results::new(),
            checkpoint: None,
        }
    }

    /// No job runs: every result comes from `results` (the union of every shard's).
    pub fn replay(results: Results) -> Self {
        Jobs {
            mode: Mode::Replay,
            threads: 1,
            results,
            checkpoint: None,
        }
    }

    /// Keeps the result of every job that finishes in the file `path` (rewritten atomically
    /// every few seconds, when a batch ends and when it stops on an interrupt or an I/O
    /// error; removed where it stops on any other error, which would come back at the same
    /// job, unless the run resumed from it),
    /// labelled `key` (what a resumed run must match) and `command` (the command line, as a
    /// refusal names it); the jobs whose results `resumed` holds (a checkpoint read back) do not
    /// run again. A result read back equals the one computed (JSON keeps every field, and
    /// floats round-trip exactly), so a resumed run's files are the ones an uninterrupted run
    /// writes, byte for byte, as a merge of shards is.
    pub fn with_checkpoint(
        mut self,
        path: PathBuf,
        key: Vec<String>,
        command: String,
        resumed: Results,
    ) -> Self {
        if !matches!(self.mode, Mode::Replay) {
            let from = !resumed.is_empty();
            self.results = resumed;
            self.checkpoint = Some(Checkpoint {
                path,
                key,
                command,
                resumed: from,
            });
        }
        self
    }

    /// Reads a checkpoint file written with the key `key` ([`Jobs::with_checkpoint`]) by the
    /// command line `command`.
    pub fn read_checkpoint(path: &Path, key: &[String], command: &str) -> Result<Results> {
        let text = crate::limits::read_input_text(&path.to_string_lossy())?;
        let file: CheckpointFile =
            serde_json::from_str(&text).map_err(|e| Error::parse(path.display(), e))?;
        let version = env!("CARGO_PKG_VERSION");
        if file.flitforge == version && file.key != key && file.command == command {
            return Err(Error::invalid(
                "resume",
                path.display(),
                "the checkpoint of this command line: this command wrote it, but a file it reads (a --config, a graph, a message list) has changed since (--force starts over)",
            ));
        }
        if file.flitforge != version || file.key != key {
            return Err(Error::invalid(
                "resume",
                path.display(),
                format!(
                    "the checkpoint of this command line (it holds `flitforge {}` of flitforge {})",
                    match file.command.is_empty() {
                        true => file.key.join(" "),
                        false => file.command,
                    },
                    file.flitforge
                ),
            ));
        }
        Ok(file.results)
    }

    fn save_checkpoint(&self) -> Result<()> {
        match &self.checkpoint {
            Some(c) => c.write(&self.results),
            None => Ok(()),
        }
    }

    /// The shard this runs, if it runs one.
    pub fn sharded(&self) -> Option<Shard> {
        match self.mode {
            Mode::Shard(s) => Some(s),
            _ => None,
        }
    }

    /// The results this shard computed.
    pub fn results(&self) -> &Results {
        &self.results
    }

    /// Runs jobs `0..jobs` of `batch` (a name unique within the experiment). Returns every
    /// result in job order, or `None` when this runs one shard (the results are kept for its
    /// file and the experiment cannot be assembled here). `progress` is told how many of the
    /// jobs run here are done, and of how many.
    pub fn map<T>(
        &mut self,
        batch: &str,
        jobs: usize,
        progress: &(dyn Fn(usize, usize) + Sync),
        job: impl Fn(usize) -> Result<T> + Sync,
    ) -> Result<Option<Vec<T>>>
    where
        T: Send + Serialize + DeserializeOwned,
    {
        let decode = |j: usize, v: &serde_json::Value| {
            T::deserialize(v).map_err(|e| Error::parse(batch, format!("job {j}: {e}")))
        };
        let encode = |j: usize, r: &T| {
            serde_json::to_value(r).map_err(|e| Error::parse(batch, format!("job {j}: {e}")))
        };
        let shard = match self.mode {
            Mode::Replay => {
                let empty = BTreeMap::new();
                let kept = self.results.get(batch).unwrap_or(&empty);
                if let Some((&extra, _)) = kept.range(jobs..).next() {
                    return Err(Error::invalid(
                        "shards",
                        format!("job {extra} of {batch}"),
                        format!("jobs 0..{jobs} (the shards are of another configuration)"),
                    ));
                }
                let out = (0..jobs)
                    .map(|j| {
                        let v = kept.get(&j).ok_or_else(|| {
                            Error::invalid(
                                "shards",
                                format!("job {j} of {batch} missing"),
                                "every shard 0..N of one run",
                            )
                        })?;
                        decode(j, v)
                    })
                    .collect::<Result<Vec<T>>>()?;
                progress(jobs, jobs);
                return Ok(Some(out));
            }
            Mode::Shard(shard) => Some(shard),
            Mode::All => None,
        };
        let mine: Vec<usize> = (0..jobs)
            .filter(|&j| shard.is_none_or(|s| s.owns(j)))
            .collect();
        let keep = shard.is_some() || self.checkpoint.is_some();
        let known = self.results.entry(batch.to_string()).or_default().clone();
        if let Some((&extra, _)) = known.range(jobs..).next() {
            return Err(Error::invalid(
                "resume",
                format!("job {extra} of {batch}"),
                format!("a checkpoint of jobs 0..{jobs} (it is of another configuration)"),
            ));
        }
        let todo: Vec<usize> = mine
            .iter()
            .copied()
            .filter(|j| !known.contains_key(j))
            .collect();
        let before = mine.len() - todo.len();
        let finished = Mutex::new((known, std::time::Instant::now()));
        let outcome = parallel_with(
            todo.len(),
            self.threads,
            &|d| progress(before + d, mine.len()),
            |i| job(todo[i]),
            &|i, r: &T| {
                if !keep {
                    return Ok(());
                }
                let v = encode(todo[i], r)?;
                let mut f = finished.lock().unwrap_or_else(|p| p.into_inner());
                f.0.insert(todo[i], v);
                if let Some(c) = &self.checkpoint
                    && f.1.elapsed().as_secs() >= 5
                {
                    f.1 = std::time::Instant::now();
                    let mut snapshot = self.results.clone();
                    snapshot.insert(batch.to_string(), f.0.clone());
                    c.write(&snapshot)?;
                }
                Ok(())
            },
        );
        let (finished, _) = finished.into_inner().unwrap_or_else(|p| p.into_inner());
        let count = finished.len();
        if keep {
            self.results.insert(batch.to_string(), finished.clone());
        }
        let new = match outcome {
            Ok(new) => new,
            // Only an interrupt or an I/O failure may go otherwise when the command runs
            // again: any other error (bad input found by a job, a deadlock) comes back at the
            // same job, and this run's checkpoint would only stand in the way of the
            // corrected command. (One it resumed from holds an earlier run's work: it stays.)
            Err(e) if !matches!(e, Error::Interrupted { .. } | Error::Io { .. }) => {
                if let Some(c) = self.checkpoint.as_ref().filter(|c| !c.resumed) {
                    let _ = std::fs::remove_file(&c.path);
                }
                return Err(e);
            }
            Err(e) => {
                if self.results.values().any(|b| !b.is_empty()) {
                    self.save_checkpoint()?;
                }
                let what = match &self.checkpoint {
                    // (An earlier batch with no jobs may have written one.)
                    Some(c) if !c.path.exists() => {
                        "no job had finished, so nothing is saved: the same command starts over"
                            .to_string()
                    }
                    Some(c) => format!(
                        "{count} of {} jobs of batch `{batch}` are saved in {}; the same command with --resume continues",
                        mine.len(),
                        c.path.display()
                    ),
                    None => String::new(),
                };
                return Err(e.kept(what));
            }
        };
        if self.checkpoint.is_some() {
            self.save_checkpoint()?;
        }
        if shard.is_some() {
            return Ok(None);
        }
        // Every job's result, in order: the ones run now, the others from the checkpoint.
        let mut new: BTreeMap<usize, T> = todo.into_iter().zip(new).collect();
        (0..jobs)
            .map(|j| match new.remove(&j) {
                Some(r) => Ok(r),
                None => decode(j, &finished[&j]),
            })
            .collect::<Result<Vec<T>>>()
            .map(Some)
    }
}

/// Runs `jobs` independent jobs on `threads` workers (0 = all cores, at most
/// [`MAX_THREADS`]) and returns their results in job order; `progress` is told how many are
/// done after each that succeeds. Stops at the first error (a panicking job is an [`Error::Invariant`],
/// SIGINT or SIGTERM an [`Error::Interrupted`]); the error returned is that of the
/// lowest-numbered failed job.
pub fn parallel<T: Send>(
    jobs: usize,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
    job: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    parallel_with(jobs, threads, progress, job, &|_, _| Ok(()))
}

/// [`parallel`], calling `done(i, result)` as each job finishes successfully (an error there
/// stops the batch like a failed job).
pub fn parallel_with<T: Send>(
    jobs: usize,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
    job: impl Fn(usize) -> Result<T> + Sync,
    done_with: &(dyn Fn(usize, &T) -> Result<()> + Sync),
) -> Result<Vec<T>> {
    if threads > MAX_THREADS {
        return Err(Error::invalid(
            "threads",
            threads,
            format!("0..={MAX_THREADS} (0: every core)"),
        ));
    }
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
    .min(jobs.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<(usize, Result<T>)>> = Mutex::new(Vec::new());
    let push = |i: usize, r: Result<T>| {
        failed.fetch_or(r.is_err(), Ordering::Relaxed);
        results
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push((i, r));
    };
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= jobs || failed.load(Ordering::Relaxed) {
                break;
            }
            if let Err(e) = crate::interrupt::check() {
                push(i, Err(e));
                break;
            }
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| job(i))).unwrap_or_else(|_| {
                Err(Error::Invariant {
                    cycle: 0,
                    message: format!("job {i} panicked (a bug; see the message above)"),
                })
            });
            let r = match r {
                Ok(v) => done_with(i, &v).map(|()| v),
                e => e,
            };
            // (A failed or interrupted job is not done.)
            let finished = r.is_ok();
            push(i, r);
            if finished {
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            }
        }
    };
    let spawned: Result<()> = std::thread::scope(|scope| {
        for _ in 0..threads {
            std::thread::Builder::new()
                .spawn_scoped(scope, worker)
                .map_err(|e| {
                    failed.store(true, Ordering::Relaxed);
                    Error::invalid(
                        "threads",
                        threads,
                        format!("a number of threads this machine can start ({e})"),
                    )
                })?;
        }
        Ok(())
    });
    spawned?;
    let mut results = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut out = Vec::with_capacity(results.len());
    for (i, r) in results {
        match r {
            Ok(v) if i == out.len() => out.push(v),
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
    if out.len() < jobs {
        // A job after an error stopped; the error is above. (Unreachable otherwise.)
        return Err(Error::Invariant {
            cycle: 0,
            message: format!("{} of {jobs} jobs ran", out.len()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse() {
        assert_eq!(
            "1/4".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 4 }
        );
        for bad in ["4/4", "0/0", "x/2", "1", "-1/3", "0/70000"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_replay_to_the_unsharded_results() {
        let job = |j: usize| Ok((j as f64).sqrt() / 3.0);
        let all = Jobs::all(2).map("b", 10, &|_, _| {}, job).unwrap().unwrap();
        let mut results = Results::new();
        for k in 0..3 {
            let mut s = Jobs::shard(Shard { index: k, count: 3 }, 1);
            assert!(s.map("b", 10, &|_, _| {}, job).unwrap().is_none());
            for (batch, r) in s.results() {
                results.entry(batch.clone()).or_default().extend(r.clone());
            }
        }
        let replayed: Vec<f64> = Jobs::replay(results.clone())
            .map("b", 10, &|_, _| {}, |_| -> Result<f64> { unreachable!() })
            .unwrap()
            .unwrap();
        assert_eq!(all, replayed, "floats survive the JSON round trip exactly");
        results.get_mut("b").unwrap().remove(&4);
        assert!(
            Jobs::replay(results)
                .map("b", 10, &|_, _| {}, |_| -> Result<f64> { unreachable!() })
                .is_err()
        );
    }
}
