//! [LM] §IV's experiments reproduced: Table I (how often randomly placed
//! faults propagate back to an input), Table II (greedy store-and-forward completion time) and
//! Table III (percentage of packets never delayed). The fault-scaling measurement is
//! [`super::tolerance`].
//!
//! Every trial draws from its own seed, derived from the run seed, the table, the row and the
//! trial number, so trials run on any number of threads in any order and the tables come out
//! byte-identical.

use super::faults::{
    FaultDraw, Faults, InputRule, Interior, place_random, place_until_inputs_survive, propagate,
};
use super::greedy::{GreedyConfig, GreedyRouter, Problem};
pub use super::tables::{FailureRow, Stat, Tables, Trial};
use crate::error::{Error, Result};
use crate::rng::Rng;
pub use crate::rng::trial_seed;
use crate::shard::Jobs;
pub use crate::shard::parallel;
use crate::topology::{
    FirstMatching, SplitterWiring, Topology, WiringGenerator, butterfly, dilated_butterfly,
    modified_splitter, random_splitter,
};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// A network row of Tables II and III.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Row {
    /// `0 (nor)`: the butterfly.
    Butterfly,
    /// `0 (dil)`: the 2-dilated butterfly.
    Dilated,
    /// `0`: the randomly-wired splitter network of multiplicity 2.
    Splitter,
    /// `f*`: the modified network with `f` random faults.
    Modified(u32),
}

impl Row {
    /// The label the paper's tables use.
    pub fn label(&self) -> String {
        match self {
            Row::Butterfly => "0 (nor)".into(),
            Row::Dilated => "0 (dil)".into(),
            Row::Splitter => "0".into(),
            Row::Modified(f) => format!("{f}*"),
        }
    }

    /// A key naming the row in trial seeds, so a row's trials do not depend on which other
    /// rows are run (`--faults 100` alone reproduces the `100*` row).
    pub fn seed_key(&self) -> u64 {
        match self {
            Row::Butterfly => u64::MAX,
            Row::Dilated => u64::MAX - 1,
            Row::Splitter => u64::MAX - 2,
            Row::Modified(f) => u64::from(*f),
        }
    }

    /// Whether the network and the transpose problems are the same in every trial.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Row::Butterfly | Row::Dilated)
    }
}

/// Parameters of the Leighton–Maggs experiments (defaults: the set-up of [LM] §IV).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeightonMaggsConfig {
    /// N ([LM]: 1024).
    pub inputs: u32,
    /// Trials per cell of Tables II and III ([LM]: 500).
    pub trials: u32,
    /// Trials per row of Table I ([LM]: 2000).
    pub table1_trials: u32,
    /// Fault counts of the modified rows of Tables II and III.
    pub faults: Vec<u32>,
    /// Fault counts of Table I.
    pub table1_faults: Vec<u32>,
    pub seed: u64,
    pub wiring: SplitterWiring,
    pub greedy: GreedyConfig,
    pub interior: Interior,
    /// How the faults of a row are drawn ([LM] §IV places "faults at random").
    pub fault_draw: FaultDraw,
    pub input_rule: InputRule,
    /// Fault placements tried per routing trial before the row is given up (each placement
    /// that reaches an input is discarded, §IV).
    pub max_placements: u32,
    /// Worker threads; 0 = all cores. The result does not depend on it (so it is not part
    /// of the recorded configuration).
    #[serde(skip)]
    pub threads: usize,
}

impl Default for LeightonMaggsConfig {
    fn default() -> Self {
        LeightonMaggsConfig {
            inputs: 1024,
            trials: 500,
            table1_trials: 2000,
            faults: vec![0, 1, 10, 100, 250, 500, 750, 1000],
            table1_faults: vec![10, 100, 250, 500, 750, 1000],
            seed: 1,
            // The interpretation that reproduces the structure of the published tables
            // (docs/interpretations.md, 'Wiring of random splitters').
            wiring: SplitterWiring {
                generator: WiringGenerator::ButterflyPlusRandom,
                first_matching: FirstMatching::Identity,
                ..SplitterWiring::default()
            },
            greedy: GreedyConfig::default(),
            interior: Interior::default(),
            fault_draw: FaultDraw::WithReplacement,
            input_rule: InputRule::All,
            max_placements: 100_000,
            threads: 0,
        }
    }
}

impl LeightonMaggsConfig {
    /// The rows of Tables II and III.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows = vec![Row::Butterfly, Row::Dilated, Row::Splitter];
        rows.extend(self.faults.iter().map(|&f| Row::Modified(f)));
        rows
    }

    /// Checks the parameters against their ranges.
    pub fn validate(&self) -> Result<()> {
        if !(8..=crate::topology::MAX_INPUTS).contains(&self.inputs)
            || !self.inputs.is_power_of_two()
        {
            return Err(Error::invalid(
                "inputs",
                self.inputs,
                "a power of two from 8 to 1048576",
            ));
        }
        if !(1..=1_000_000).contains(&self.trials) {
            return Err(Error::invalid("trials", self.trials, "1..=1000000"));
        }
        if self.table1_trials > 1_000_000 {
            return Err(Error::invalid(
                "table1-trials",
                self.table1_trials,
                "0..=1000000",
            ));
        }
        if self.max_placements == 0 {
            return Err(Error::invalid("max-placements", 0, "at least 1"));
        }
        self.greedy.validate()?;
        // (Before the probe below builds a network of that size.)
        super::run::network_estimate(self.inputs, 2).check_memory("inputs", self.inputs)?;
        let probe = modified_splitter(self.inputs, self.wiring, 0)?;
        let (first, last) = self.interior.switch_levels(&probe)?;
        let interior = (last - first + 1) * self.inputs;
        let table1 = if self.table1_trials > 0 {
            &self.table1_faults[..]
        } else {
            &[]
        };
        Error::check_distinct("faults", &self.faults, "fault counts")?;
        Error::check_distinct("table1-faults", table1, "fault counts")?;
        for &f in self.faults.iter().chain(table1) {
            if f > interior {
                return Err(Error::invalid(
                    "faults",
                    f,
                    format!(
                        "0..={interior} (the interior switches of the {}-input network)",
                        self.inputs
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What one trial allocates: a network routing [LM]'s problems, up to 10 copies at once
    /// (a Table I trial, faults alone, takes less).
    pub fn trial_estimate(&self) -> crate::limits::Estimate {
        super::run::routing_estimate(self.inputs, 2, self.greedy.max_held, 10)
    }

    /// How many trials run at once, one a worker thread: `threads` (0: a core each, but no
    /// more than the memory holds). Refused where one trial, or the `threads` asked for, do
    /// not fit the memory limit.
    pub fn trials_at_once(&self) -> Result<usize> {
        if self.threads > crate::shard::MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                self.threads,
                format!("0..={} (0: every core)", crate::shard::MAX_THREADS),
            ));
        }
        let trial = self.trial_estimate();
        trial.check_memory("inputs", self.inputs)?;
        let trials = trial_count(self).max(1);
        if self.threads == 0 {
            return Ok(crate::limits::jobs_at_once(trial.total(), trials));
        }
        let at_once = self.threads.min(trials);
        crate::limits::Estimate::new()
            .with(
                format!("for {at_once} trials at once"),
                trial.total().saturating_mul(at_once as u64),
            )
            .check_memory("threads", self.threads)?;
        Ok(at_once)
    }
}

/// Builds the network of `row` for a trial seed.
fn network(row: Row, config: &LeightonMaggsConfig, seed: u64) -> Result<Topology> {
    let n = config.inputs;
    match row {
        Row::Butterfly => butterfly(n),
        Row::Dilated => dilated_butterfly(n, 2),
        Row::Splitter => random_splitter(n, 2, config.wiring, seed),
        Row::Modified(_) => modified_splitter(n, config.wiring, seed),
    }
}

/// One routing trial: network, faults, the four problems.
fn routing_trial(row: Row, config: &LeightonMaggsConfig, seed: u64) -> Result<Trial> {
    let mut rng = Rng::seed_from_u64(seed);
    let topo = network(row, config, seed)?;
    let (faults, placements) = match row {
        Row::Modified(f) => place_until_inputs_survive(
            &topo,
            f,
            config.interior,
            config.fault_draw,
            config.input_rule,
            config.max_placements,
            &mut rng,
        )?,
        _ => (Faults::none(&topo), 1),
    };
    let n = topo.n;
    let mut router = GreedyRouter::new(topo, &faults, config.greedy, 10, seed)?;
    let mut completion = [0; 4];
    let mut never_delayed = [0.0; 2];
    for (p, problem) in Problem::TABLE.iter().enumerate() {
        let outcome = router.route(&problem.destinations(n, &mut rng))?;
        completion[p] = outcome.completion;
        if problem.copies == 1 {
            never_delayed[usize::from(problem.transpose)] = outcome.never_delayed_percent();
        }
    }
    Ok(Trial {
        seed,
        placements,
        propagated: faults.propagated_count() as u32,
        completion,
        never_delayed,
    })
}

/// Runs Tables I–III on `config.threads` threads. `progress(done, total)` is told after every
/// trial.
pub fn leighton_maggs(
    config: &LeightonMaggsConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Tables> {
    let tables = leighton_maggs_jobs(config, &mut Jobs::all(config.threads), progress)?;
    Ok(tables.expect("every job runs here"))
}

/// [`leighton_maggs`] with its trials run by `jobs`: `None` when `jobs` runs one shard.
pub fn leighton_maggs_jobs(
    config: &LeightonMaggsConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Tables>> {
    leighton_maggs_batches(config, jobs, "", progress)
}

/// The number of trials [`leighton_maggs`] runs for `config`.
pub fn trial_count(config: &LeightonMaggsConfig) -> usize {
    config.table1_faults.len() * config.table1_trials as usize
        + config.rows().len() * config.trials as usize
}

/// [`leighton_maggs_jobs`] with `prefix` before its batch names, so that several
/// configurations share one set of shards.
pub(super) fn leighton_maggs_batches(
    config: &LeightonMaggsConfig,
    jobs: &mut Jobs,
    prefix: &str,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Tables>> {
    config.validate()?;
    let rows = config.rows();
    let t1 = config.table1_trials as usize;
    let t2 = config.trials as usize;
    // No Table I trials: Table I is not run.
    let table1_jobs = config.table1_faults.len() * t1;
    let total = table1_jobs + rows.len() * t2;
    let report = |done, _| progress(done, total);
    let failures = jobs.map(&format!("{prefix}table1"), table1_jobs, &report, |j| {
        let (row, trial) = (j / t1, j % t1);
        let f = config.table1_faults[row];
        let seed = trial_seed(config.seed, 1, u64::from(f), trial as u64);
        let mut rng = Rng::seed_from_u64(seed);
        let topo = modified_splitter(config.inputs, config.wiring, seed)?;
        let mut faults = place_random(&topo, f, config.interior, config.fault_draw, &mut rng)?;
        let propagated = propagate(&topo, &mut faults, config.input_rule);
        Ok((faults.faulty_inputs(&topo) > 0, propagated))
    })?;
    let report = |done, _| progress(table1_jobs + done, total);
    let flat = jobs.map(&format!("{prefix}routing"), rows.len() * t2, &report, |j| {
        let (row, trial) = (j / t2, j % t2);
        routing_trial(
            rows[row],
            config,
            trial_seed(config.seed, 2, rows[row].seed_key(), trial as u64),
        )
    })?;
    let (Some(failures), Some(flat)) = (failures, flat) else {
        return Ok(None);
    };
    let table1 = config
        .table1_faults
        .iter()
        .take(if t1 == 0 { 0 } else { usize::MAX })
        .enumerate()
        .map(|(r, &faults)| {
            let cells = &failures[r * t1..(r + 1) * t1];
            FailureRow {
                faults,
                trials: t1 as u32,
                reached_inputs: cells.iter().filter(|c| c.0).count() as u32,
                propagated: cells.iter().map(|c| c.1 as f64).sum::<f64>() / t1.max(1) as f64,
            }
        })
        .collect();
    let trials: Vec<Vec<Trial>> = flat.chunks(t2.max(1)).map(<[Trial]>::to_vec).collect();
    let deterministic_cells_equal = rows.iter().zip(&trials).all(|(row, ts)| {
        !row.is_fixed()
            || ts.iter().all(|t| {
                t.completion[2..] == ts[0].completion[2..]
                    && t.never_delayed[1] == ts[0].never_delayed[1]
            })
    });
    Ok(Some(Tables {
        config: config.clone(),
        table1,
        rows,
        trials,
        deterministic_cells_equal,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn small() -> LeightonMaggsConfig {
        LeightonMaggsConfig {
            inputs: 64,
            trials: 6,
            table1_trials: 20,
            faults: vec![0, 10],
            table1_faults: vec![10, 40],
            ..LeightonMaggsConfig::default()
        }
    }

    #[test]
    fn tables_do_not_depend_on_the_thread_count() {
        let one = leighton_maggs(
            &LeightonMaggsConfig {
                threads: 1,
                ..small()
            },
            &|_, _| {},
        )
        .unwrap();
        let three = leighton_maggs(
            &LeightonMaggsConfig {
                threads: 3,
                ..small()
            },
            &|_, _| {},
        )
        .unwrap();
        assert_eq!(one.markdown(), three.markdown());
        assert_eq!(one.trials_csv(), three.trials_csv());
        assert!(one.deterministic_cells_equal);
        assert_eq!(one.rows.len(), 5);
        assert_eq!(one.table1.len(), 2);
        let md = one.markdown();
        for label in [
            "| 0 (nor) |",
            "| 0 (dil) |",
            "| 0 |",
            "| 0* |",
            "| 10* |",
            "| 40* |",
        ] {
            assert!(md.contains(label), "{label} missing:\n{md}");
        }
        assert!(one.chart().starts_with("<svg"));
    }

    #[test]
    fn progress_counts_every_trial() {
        let seen = AtomicUsize::new(0);
        leighton_maggs(&small(), &|done, total| {
            assert!(done <= total);
            seen.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(seen.into_inner(), 2 * 20 + 5 * 6);
    }

    #[test]
    fn bad_parameters_are_refused() {
        for bad in [
            LeightonMaggsConfig {
                inputs: 100,
                ..small()
            },
            LeightonMaggsConfig {
                trials: 0,
                ..small()
            },
            LeightonMaggsConfig {
                faults: vec![64 * 5 + 1],
                ..small()
            },
        ] {
            assert!(matches!(
                leighton_maggs(&bad, &|_, _| {}),
                Err(Error::Invalid { .. })
            ));
        }
    }
}
