//! `experiment cole-maggs-sitaraman`: the claims of [CMS] measured on the switch model, each
//! table beside the paper's bound and the constant that fits it.
//!
//! - offline: the refined schedule of [CMS] Theorem 2.1.6 against C, D and B, with the naive
//!   colouring of footnote 5 and the online run (everything released at once) beside it;
//! - lower-bound: [CMS] Theorem 2.2.1's instance under every policy against (L − D)·M/B;
//! - speed-up: T(1)/T(B) against B·D^(1−1/B) (leveled networks) and B·lg^(1−1/B) n (the
//!   butterfly algorithm) ([CMS] §1.2);
//! - vct: B VCs of one flit against one VC of B flits (virtual cut-through, [CMS] §1.4) and
//!   against worms of L/B flits;
//! - butterfly: the algorithm of [CMS] §3.1 against n, q, L and B (Theorem 3.1.1), with the
//!   per-round checks of Invariant 3.1.2 and Lemmas 3.1.4 and 3.1.5;
//! - survivors: one-shot circuit switching on the butterfly against n/lg^(1/B) n ([CMS] §1.3).
//!
//! Every trial is a job of [`Jobs`]: the tables do not depend on the number of threads.

mod bound;
mod offline;
mod rounds;
mod speedup;
mod survivors;

use self::bound::{LOWER_BOUND_GRID, lower_bound_table, lower_bound_trial};
use self::offline::{OFFLINE_GRID, offline_table, offline_trial};
use self::rounds::{ButterflyTrial, butterfly_grid, butterfly_table};
use self::speedup::{SPEEDUP_D, speedup_tables, speedup_trial};
use self::survivors::{
    SURVIVOR_TRIALS, SURVIVOR_VCS, SurvivorTrial, survivor_sizes, survivors_table,
};
use super::butterfly::{self, ButterflyConfig, PassMode};
use super::schedule::{self, RMode};
use super::{Problem, lower_bound, random_leveled};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::rng::trial_seed;
use crate::shard::Jobs;
use serde::{Deserialize, Serialize};

/// The experiment's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CmsConfig {
    /// Trials (independent problems) per row.
    pub trials: u32,
    pub seed: u64,
    /// Virtual channels B of the offline, speed-up and butterfly tables.
    pub vcs: Vec<u32>,
    /// β of the butterfly algorithm.
    pub beta: f64,
    /// Largest butterfly (inputs n) of the butterfly and survivors tables.
    pub max_inputs: u32,
}

impl Default for CmsConfig {
    fn default() -> Self {
        CmsConfig {
            trials: 10,
            seed: 1,
            vcs: vec![1, 2, 3, 4],
            beta: 1.0,
            max_inputs: 16384,
        }
    }
}

pub use crate::tables::{Results, Table};
use crate::tables::{f2, f3, fit, mean};

// ---- the whole experiment ----

impl CmsConfig {
    pub fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.trials) {
            return Err(Error::invalid("trials", self.trials, "1..=1000"));
        }
        let mut distinct = self.vcs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if self.vcs.first() != Some(&1)
            || self.vcs.iter().any(|&b| !(1..=8).contains(&b))
            || distinct.len() != self.vcs.len()
        {
            return Err(Error::invalid(
                "vcs",
                format!("{:?}", self.vcs),
                "distinct values starting with 1 (the speed-up is T(1)/T(B)), each 1..=8",
            ));
        }
        if !(self.beta.is_finite() && (0.01..=1e6).contains(&self.beta)) {
            return Err(Error::invalid("beta", self.beta, "0.01..=1000000"));
        }
        if !self.max_inputs.is_power_of_two() || !(16..=16384).contains(&self.max_inputs) {
            return Err(Error::invalid(
                "max-inputs",
                self.max_inputs,
                "a power of two in 16..=16384",
            ));
        }
        Ok(())
    }
}

/// Runs every table with `jobs`: `None` when `jobs` runs one shard.
pub fn run(
    config: &CmsConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Results>> {
    config.check()?;
    let t = config.trials as usize;
    let seed = |table: u64, row: usize, trial: usize| {
        trial_seed(config.seed, table, row as u64, trial as u64)
    };
    let offline = jobs.map("offline", OFFLINE_GRID.len() * t, progress, |j| {
        let (d, m) = OFFLINE_GRID[j / t];
        offline_trial(config, d, m, seed(1, j / t, j % t))
    })?;
    let lower = jobs.map("lower-bound", LOWER_BOUND_GRID.len(), progress, |j| {
        let (b, c, d) = LOWER_BOUND_GRID[j];
        lower_bound_trial(b, c, d, seed(2, j, 0))
    })?;
    let speedup = jobs.map("speed-up", SPEEDUP_D.len() * t, progress, |j| {
        speedup_trial(config, SPEEDUP_D[j / t], seed(3, j / t, j % t))
    })?;
    let grid = butterfly_grid(&config.vcs, config.max_inputs);
    let fly = jobs.map("butterfly", grid.len() * t, progress, |j| {
        let (n, q, l, b, pass_mode) = grid[j / t];
        let run = butterfly::run(&ButterflyConfig {
            inputs: n,
            q,
            flits: l,
            vcs: b,
            beta: config.beta,
            seed: seed(4, j / t, j % t),
            pass_mode,
        })?;
        Ok(ButterflyTrial {
            n,
            q,
            l,
            b,
            pass_mode,
            run,
        })
    })?;
    let per = (SURVIVOR_TRIALS * config.trials) as usize;
    let sizes = survivor_sizes(config);
    let survivors = jobs.map(
        "survivors",
        sizes.len() * SURVIVOR_VCS.len() * per,
        progress,
        |j| {
            let row = j / per;
            let (b, n) = (SURVIVOR_VCS[row / sizes.len()], sizes[row % sizes.len()]);
            Ok(SurvivorTrial {
                n,
                b,
                delivered: butterfly::survivors(n, b, seed(5, row, j % per))?,
            })
        },
    )?;
    let (Some(offline), Some(lower), Some(speedup), Some(fly), Some(survivors)) =
        (offline, lower, speedup, fly, survivors)
    else {
        return Ok(None);
    };
    let mut out = Results::default();
    offline_table(&offline, config, &mut out);
    lower_bound_table(&lower, &mut out);
    speedup_tables(&speedup, config, &mut out);
    butterfly_table(&fly, config, &mut out);
    survivors_table(&survivors, config, &mut out);
    Ok(Some(out))
}

impl Results {
    /// The tables as one Markdown report.
    pub fn to_markdown(&self, config: &CmsConfig) -> String {
        let mut s = format!(
            "# [CMS] on the switch model: schedules, lower bound, speed-up, butterfly algorithm\n\n\
             Seed {}, {} trials per row, B ∈ {:?}, β = {}, butterflies up to n = {}. Every run is the cycle-level switch \
             model (wormhole, B VCs of one flit per link, B flits per link per cycle) with \
             every invariant checked.\n\n",
            config.seed, config.trials, config.vcs, config.beta, config.max_inputs
        );
        for t in &self.tables {
            s.push_str(&t.to_markdown());
            s.push('\n');
        }
        s.push_str("## Fitted constants\n\n| fit | c |\n|---|---:|\n");
        for (name, c) in &self.constants {
            s.push_str(&format!("| {name} | {c:.3} |\n"));
        }
        s
    }
}
