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

/// Runs batches of independent jobs: all here, one shard of them, or none (replaying results).
pub struct Jobs {
    mode: Mode,
    threads: usize,
    results: Results,
}

impl Jobs {
    /// Every job, on `threads` workers (0 = all cores).
    pub fn all(threads: usize) -> Self {
        Jobs {
            mode: Mode::All,
            threads,
            results: Results::new(),
        }
    }

    /// The jobs of `shard`, on `threads` workers; their results are kept ([`Jobs::results`]).
    pub fn shard(shard: Shard, threads: usize) -> Self {
        Jobs {
            mode: Mode::Shard(shard),
            threads,
            results: Results::new(),
        }
    }

    /// No job runs: every result comes from `results` (the union of every shard's).
    pub fn replay(results: Results) -> Self {
        Jobs {
            mode: Mode::Replay,
            threads: 1,
            results,
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
        match self.mode {
            Mode::All => parallel(jobs, self.threads, &|d| progress(d, jobs), job).map(Some),
            Mode::Shard(shard) => {
                let mine: Vec<usize> = (0..jobs).filter(|&j| shard.owns(j)).collect();
                let out = parallel(
                    mine.len(),
                    self.threads,
                    &|d| progress(d, mine.len()),
                    |i| job(mine[i]),
                )?;
                let kept = self.results.entry(batch.to_string()).or_default();
                for (j, r) in mine.into_iter().zip(out) {
                    let v = serde_json::to_value(&r)
                        .map_err(|e| Error::parse(batch, format!("job {j}: {e}")))?;
                    kept.insert(j, v);
                }
                Ok(None)
            }
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
                        T::deserialize(v).map_err(|e| Error::parse(batch, format!("job {j}: {e}")))
                    })
                    .collect::<Result<Vec<T>>>()?;
                progress(jobs, jobs);
                Ok(Some(out))
            }
        }
    }
}

/// Runs `jobs` independent jobs on `threads` workers (0 = all cores) and returns their
/// results in job order; `progress` is told how many are done after each. Stops at the first
/// error (a panicking job is an [`Error::Invariant`]); the error returned is that of the
/// lowest-numbered failed job.
pub fn parallel<T: Send>(
    jobs: usize,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
    job: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
    .min(jobs.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<(usize, Result<T>)>> = Mutex::new(Vec::with_capacity(jobs));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= jobs || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let r = std::panic::catch_unwind(AssertUnwindSafe(|| job(i))).unwrap_or_else(
                        |_| {
                            Err(Error::Invariant {
                                cycle: 0,
                                message: format!("job {i} panicked (a bug; see the message above)"),
                            })
                        },
                    );
                    failed.fetch_or(r.is_err(), Ordering::Relaxed);
                    results
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push((i, r));
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
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
