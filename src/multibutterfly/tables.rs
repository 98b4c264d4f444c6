//! The results of [LM]'s Tables I–III (§IV) and how they are written: CSV, a Markdown
//! layout like the paper's, and an SVG chart of completion time against faults.

use super::experiment::{LeightonMaggsConfig, Row};
use super::faults::FaultDraw;
use super::greedy::Problem;
use crate::plot::{Chart, Marker};
pub use crate::stats::Stat;
use serde::Serialize;
use std::fmt::Write as _;

/// One routing trial of one row: the four problems on one network.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Trial {
    pub seed: u64,
    /// Fault placements drawn until none reached an input (1 = the first).
    pub placements: u32,
    pub propagated: u32,
    /// Completion time of problems `1`, `10`, `1T`, `10T`.
    pub completion: [u64; 4],
    /// Percentage never delayed, problems `1` and `1T`.
    pub never_delayed: [f64; 2],
}

/// Table I row: fault count, trials and how many reached an input.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FailureRow {
    pub faults: u32,
    pub trials: u32,
    pub reached_inputs: u32,
    /// Mean switches made faulty by propagation.
    pub propagated: f64,
}

impl FailureRow {
    pub fn percent(&self) -> f64 {
        100.0 * f64::from(self.reached_inputs) / f64::from(self.trials.max(1))
    }
}

/// All of Tables I–III.
#[derive(Clone, Debug, Serialize)]
pub struct Tables {
    pub config: LeightonMaggsConfig,
    pub table1: Vec<FailureRow>,
    pub rows: Vec<Row>,
    /// `trials[row][trial]`.
    pub trials: Vec<Vec<Trial>>,
    /// Whether every deterministic cell (butterfly and dilated, transpose) had the same value in
    /// every trial.
    pub deterministic_cells_equal: bool,
}

impl Tables {
    /// Table II cell: completion time of `problem` (0..4) on `row`.
    pub fn completion(&self, row: usize, problem: usize) -> Stat {
        Stat::of(
            self.trials[row]
                .iter()
                .map(|t| t.completion[problem] as f64),
        )
    }

    /// Table III cell: percentage never delayed of problem `1` (0) or `1T` (1).
    pub fn never_delayed(&self, row: usize, problem: usize) -> Stat {
        Stat::of(self.trials[row].iter().map(|t| t.never_delayed[problem]))
    }
}

/// Formats a value with `digits` decimals.
pub(crate) fn fx(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

impl Tables {
    /// `table1.csv`: faults, trials, trials reaching an input, percentage, mean propagated.
    pub fn table1_csv(&self) -> String {
        let mut o = String::from("faults,trials,reached_inputs,percent,mean_propagated\n");
        for r in &self.table1 {
            let _ = writeln!(
                o,
                "{},{},{},{},{}",
                r.faults,
                r.trials,
                r.reached_inputs,
                fx(r.percent(), 2),
                fx(r.propagated, 2)
            );
        }
        o
    }

    /// `table2.csv`: one line per network, mean and σ of the completion time per problem.
    pub fn table2_csv(&self) -> String {
        let mut o =
            String::from("network,trials,1,sigma_1,10,sigma_10,1T,sigma_1T,10T,sigma_10T\n");
        for (r, row) in self.rows.iter().enumerate() {
            let _ = write!(o, "{},{}", row.label(), self.trials[r].len());
            for p in 0..4 {
                let s = self.completion(r, p);
                let _ = write!(o, ",{},{}", fx(s.mean, 2), fx(s.sigma, 2));
            }
            o.push('\n');
        }
        o
    }

    /// `table3.csv`: one line per network, mean and σ of the percentage never delayed for
    /// problems `1` and `1T`.
    pub fn table3_csv(&self) -> String {
        let mut o = String::from("network,trials,1,sigma_1,1T,sigma_1T\n");
        for (r, row) in self.rows.iter().enumerate() {
            let _ = write!(o, "{},{}", row.label(), self.trials[r].len());
            for p in 0..2 {
                let s = self.never_delayed(r, p);
                let _ = write!(o, ",{},{}", fx(s.mean, 2), fx(s.sigma, 2));
            }
            o.push('\n');
        }
        o
    }

    /// `trials.csv`: every routing trial.
    pub fn trials_csv(&self) -> String {
        let mut o = String::from(
            "row,trial,seed,placements,propagated,t_1,t_10,t_1T,t_10T,never_delayed_1,never_delayed_1T\n",
        );
        for (row, ts) in self.rows.iter().zip(&self.trials) {
            for (i, t) in ts.iter().enumerate() {
                let c = t.completion;
                let _ = writeln!(
                    o,
                    "{},{i},{},{},{},{},{},{},{},{},{}",
                    row.label(),
                    t.seed,
                    t.placements,
                    t.propagated,
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    fx(t.never_delayed[0], 3),
                    fx(t.never_delayed[1], 3)
                );
            }
        }
        o
    }

    /// The three tables laid out like the paper's, in Markdown.
    pub fn markdown(&self) -> String {
        let c = &self.config;
        let mut o = format!(
            "# [LM] §IV reproduced: N = {}, d = 2\n\nSeed {}; faults on levels {} of the modified network ([LM]'s numbering), drawn {}; input-level rule `{}`; admission: head held at most {} packets; link choice `{}`; wiring `{}`{}; level −1's first matching `{}`.\n\n",
            c.inputs,
            c.seed,
            match c.interior.levels {
                Some((a, b)) => format!("{a}..{b}"),
                None => format!("0..{}", c.inputs.trailing_zeros() - 2),
            },
            match c.fault_draw {
                FaultDraw::Distinct => "as distinct switches",
                FaultDraw::WithReplacement => "with replacement (a switch drawn twice counts once)",
            },
            name_of(c.input_rule),
            c.greedy.max_held,
            name_of(c.greedy.lane_choice),
            name_of(c.wiring.generator),
            if c.wiring.cleanup {
                " with parallel-link clean-up"
            } else {
                " without clean-up"
            },
            name_of(c.wiring.first_matching),
        );
        o.push_str(
            "Row labels, as in [LM]: `0 (nor)` the fault-free butterfly; `0 (dil)` the fault-free dilated butterfly (d = 2); `0` the fault-free randomly-wired splitter network (d = 2, without the modification); `F*` the modified splitter network with F random faults on its interior levels (`0*` fault-free). Problems (columns): `1` one packet per input to a uniformly random destination, `10` ten packets per input, `1T` the transpose permutation, `10T` ten copies of it. A cell shows the mean, σ below it.\n\n",
        );
        if !self.table1.is_empty() {
            let _ = writeln!(
                o,
                "## Table I — network failure rate\n\nPercentage of trials in which at least one fault propagated back to an input ({} trials per row).\n\n| faults | % reached inputs | mean propagated |\n|---:|---:|---:|",
                c.table1_trials
            );
            for r in &self.table1 {
                let _ = writeln!(
                    o,
                    "| {}* | {} | {} |",
                    r.faults,
                    fx(r.percent(), 2),
                    fx(r.propagated, 1)
                );
            }
        }
        let _ = writeln!(
            o,
            "\n## Table II — store-and-forward completion time\n\nMean over {} trials of the steps until every packet is delivered, σ below (omitted where every trial is the same).\n\n| network | 1 | 10 | 1T | 10T |\n|---|---:|---:|---:|---:|",
            c.trials
        );
        for (r, row) in self.rows.iter().enumerate() {
            let cells: Vec<String> = (0..4)
                .map(|p| cell(self.completion(r, p), row.is_fixed() && p >= 2, 2))
                .collect();
            let _ = writeln!(o, "| {} | {} |", row.label(), cells.join(" | "));
        }
        let _ = writeln!(
            o,
            "\n## Table III — average throughput (circuit switching)\n\nMean over {} trials of the percentage of messages never delayed (they locked down their paths), σ below.\n\n| network | 1 | 1T |\n|---|---:|---:|",
            c.trials
        );
        for (r, row) in self.rows.iter().enumerate() {
            let cells: Vec<String> = (0..2)
                .map(|p| cell(self.never_delayed(r, p), row.is_fixed() && p == 1, 2))
                .collect();
            let _ = writeln!(o, "| {} | {} |", row.label(), cells.join(" | "));
        }
        let _ = writeln!(
            o,
            "\nDeterministic cells (butterfly and dilated butterfly, transpose) equal in every trial: {}.",
            if self.deterministic_cells_equal {
                "yes"
            } else {
                "NO"
            }
        );
        o
    }

    /// Completion time against the number of faults (modified rows), one line per problem,
    /// with problem `10` on the fault-free butterfly, dilated and unmodified networks as dashed
    /// references (their transpose times, up to 272 steps on the butterfly, would flatten the
    /// plot; they are in Table II).
    pub fn chart(&self) -> String {
        let mut chart = Chart::new(
            &format!(
                "Greedy completion time vs faults ([LM] Table II, N = {})",
                self.config.inputs
            ),
            "random faults in the modified splitter network",
            "steps until every packet is delivered",
        );
        let modified: Vec<(usize, u32)> = self
            .rows
            .iter()
            .enumerate()
            .filter_map(|(r, row)| match row {
                Row::Modified(f) => Some((r, *f)),
                _ => None,
            })
            .collect();
        let max_f = modified.iter().map(|m| m.1).max().unwrap_or(0);
        for (p, problem) in Problem::TABLE.iter().enumerate() {
            let stats: Vec<(f64, Stat)> = modified
                .iter()
                .map(|&(r, f)| (f64::from(f), self.completion(r, p)))
                .collect();
            chart = chart.series_with_sigma(
                &format!("{problem} (modified), mean ± σ"),
                stats.iter().map(|(f, s)| (*f, s.mean)).collect(),
                stats.iter().map(|(_, s)| s.sigma).collect(),
                Marker::LinePoints,
            );
        }
        for (r, row) in self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| !matches!(row, Row::Modified(_)))
        {
            let y = self.completion(r, 1).mean;
            chart = chart.series(
                &format!("10, {}", row.label()),
                vec![(0.0, y), (f64::from(max_f), y)],
                Marker::Dashed,
            );
        }
        chart.to_svg()
    }
}

/// The kebab-case name a configuration file uses for an enum value.
/// The name a configuration file uses for `value` (its serde name).
pub(super) fn name_of(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn cell(s: Stat, fixed: bool, digits: usize) -> String {
    if fixed {
        fx(s.mean, digits)
    } else {
        format!("{}<br>σ {}", fx(s.mean, digits), fx(s.sigma, digits))
    }
}
