//! How far the choices [LM] §IV leaves open move its Tables I–III: every combination of
//! splitter wiring, first matching of level −1, lane choice, fault draw and interior levels,
//! run with the same trial seeds (so differences are not sampling noise between variants), and
//! for every cell the spread of its mean across each choice.

use super::experiment::{LeightonMaggsConfig, leighton_maggs_batches, trial_count};
use super::faults::{FaultDraw, Interior};
use super::tables::{Tables, fx, name_of};
use crate::config::LaneChoice;
use crate::error::Result;
use crate::shard::Jobs;
use crate::stats::Stat;
use crate::topology::{FirstMatching, WiringGenerator};
use std::fmt::Write as _;

/// One open choice and the values the grid tries.
#[derive(Clone, Debug)]
pub struct Axis {
    pub name: &'static str,
    pub values: Vec<String>,
}

/// Every variant's tables, in grid order (the last axis fastest).
#[derive(Clone, Debug)]
pub struct Variants {
    pub axes: Vec<Axis>,
    /// `runs[v]`: the value index per axis of variant `v`, and its tables.
    pub runs: Vec<(Vec<usize>, Tables)>,
}

const WIRINGS: [WiringGenerator; 3] = [
    WiringGenerator::Configuration,
    WiringGenerator::Rounds,
    WiringGenerator::ButterflyPlusRandom,
];
const FIRST_MATCHINGS: [FirstMatching; 2] = [FirstMatching::Identity, FirstMatching::Random];
const LANE_CHOICES: [LaneChoice; 3] = [
    LaneChoice::Lowest,
    LaneChoice::Random,
    LaneChoice::LeastLoaded,
];
const FAULT_DRAWS: [FaultDraw; 2] = [FaultDraw::WithReplacement, FaultDraw::Distinct];

/// The axes of the grid for `base`'s network size: interior levels are [LM]'s default
/// `0..lg N − 2` or `1..lg N − 2` (the first splitter level kept fault-free).
pub fn axes(base: &LeightonMaggsConfig) -> Vec<Axis> {
    let top = base.inputs.trailing_zeros() as i32 - 2;
    vec![
        Axis {
            name: "wiring",
            values: WIRINGS.iter().map(|&w| name_of(w)).collect(),
        },
        Axis {
            name: "first matching",
            values: FIRST_MATCHINGS.iter().map(|&m| name_of(m)).collect(),
        },
        Axis {
            name: "lane choice",
            values: LANE_CHOICES.iter().map(|&l| name_of(l)).collect(),
        },
        Axis {
            name: "fault draw",
            values: FAULT_DRAWS.iter().map(|&d| name_of(d)).collect(),
        },
        Axis {
            name: "interior",
            values: vec![format!("0..{top}"), format!("1..{top}")],
        },
    ]
}

/// The configuration of the variant with value indices `choice` (one per axis of [`axes`]).
fn variant(base: &LeightonMaggsConfig, choice: &[usize]) -> LeightonMaggsConfig {
    let mut c = base.clone();
    c.wiring.generator = WIRINGS[choice[0]];
    c.wiring.first_matching = FIRST_MATCHINGS[choice[1]];
    c.greedy.lane_choice = LANE_CHOICES[choice[2]];
    c.fault_draw = FAULT_DRAWS[choice[3]];
    c.interior = Interior {
        levels: (choice[4] == 1).then_some((1, base.inputs.trailing_zeros() as i32 - 2)),
    };
    c
}

/// Every combination of the axes' values, the last axis fastest.
fn grid(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.values.len()).map(move |v| {
                    let mut c = prefix.clone();
                    c.push(v);
                    c
                })
            })
            .collect();
    }
    out
}

/// Trials all variants of `base` run together.
pub fn total_trials(base: &LeightonMaggsConfig) -> usize {
    let axes = axes(base);
    grid(&axes)
        .iter()
        .map(|c| trial_count(&variant(base, c)))
        .sum()
}

/// Runs every variant of `base` (its trial counts, seed, sizes and admission; the open choices
/// from the grid) with its trials run by `jobs`: `None` when `jobs` runs one shard.
pub fn variants_jobs(
    base: &LeightonMaggsConfig,
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Variants>> {
    let axes = axes(base);
    let choices = grid(&axes);
    let configs: Vec<LeightonMaggsConfig> = choices.iter().map(|c| variant(base, c)).collect();
    for c in &configs {
        c.validate()?;
    }
    let total: usize = configs.iter().map(trial_count).sum();
    let mut runs = Vec::with_capacity(configs.len());
    let mut done = 0;
    let mut complete = true;
    for (v, (choice, config)) in choices.into_iter().zip(&configs).enumerate() {
        let report = |d: usize, _| progress(done + d, total);
        match leighton_maggs_batches(config, jobs, &format!("v{v}/"), &report)? {
            Some(tables) => runs.push((choice, tables)),
            None => complete = false,
        }
        done += trial_count(config);
    }
    Ok(complete.then_some(Variants { axes, runs }))
}

/// A cell of Tables I–III: its table, network row and problem column, and its value.
struct Cell {
    table: &'static str,
    network: String,
    problem: String,
    value: Stat,
}

/// The cells of one variant's tables, in the tables' order. Table I's value is the percentage
/// of placements reaching an input, with its binomial standard error as σ.
fn cells(t: &Tables) -> Vec<Cell> {
    let mut out = Vec::new();
    for r in &t.table1 {
        let p = r.percent();
        out.push(Cell {
            table: "I",
            network: format!("{}*", r.faults),
            problem: "reached inputs".into(),
            value: Stat {
                mean: p,
                sigma: (p * (100.0 - p) / f64::from(r.trials.max(1))).sqrt(),
            },
        });
    }
    for (i, row) in t.rows.iter().enumerate() {
        for (p, name) in ["1", "10", "1T", "10T"].iter().enumerate() {
            out.push(Cell {
                table: "II",
                network: row.label(),
                problem: (*name).into(),
                value: t.completion(i, p),
            });
        }
    }
    for (i, row) in t.rows.iter().enumerate() {
        for (p, name) in ["1", "1T"].iter().enumerate() {
            out.push(Cell {
                table: "III",
                network: row.label(),
                problem: (*name).into(),
                value: t.never_delayed(i, p),
            });
        }
    }
    out
}

impl Variants {
    /// `variants.csv`: one line per variant and cell.
    pub fn csv(&self) -> String {
        let mut o = String::new();
        for a in &self.axes {
            let _ = write!(o, "{},", a.name.replace(' ', "_"));
        }
        o.push_str("table,network,problem,mean,sigma\n");
        for (choice, tables) in &self.runs {
            let prefix: String = choice
                .iter()
                .zip(&self.axes)
                .map(|(&v, a)| format!("{},", a.values[v]))
                .collect();
            for c in cells(tables) {
                let _ = writeln!(
                    o,
                    "{prefix}{},{},{},{},{}",
                    c.table,
                    c.network,
                    c.problem,
                    fx(c.value.mean, 3),
                    fx(c.value.sigma, 3)
                );
            }
        }
        o
    }

    /// `variants.md`: per cell and open choice, how far the cell's mean moves between the
    /// choice's values (each value's mean over every other combination), and which value
    /// gives the largest.
    pub fn markdown(&self) -> String {
        let Some((_, first)) = self.runs.first() else {
            return String::new();
        };
        let c = &first.config;
        let mut o = format!(
            "# [LM] §IV: how the open choices move Tables I–III\n\nN = {}, seed {}, {} trials per cell of Tables II and III and {} per row of Table I, {} variants: every combination of\n\n",
            c.inputs,
            c.seed,
            c.trials,
            c.table1_trials,
            self.runs.len()
        );
        for a in &self.axes {
            let _ = writeln!(o, "- {}: {}", a.name, a.values.join(", "));
        }
        o.push_str(
            "\nEvery variant runs the same trial seeds. A cell below is the spread of a table cell's mean between the values of one choice (each value's mean over all combinations of the other choices), with the value that gives the largest mean in parentheses; 0 where the choice does not touch the cell. Table I is the percentage of placements reaching an input; Table II the completion time; Table III the percentage never delayed.\n\n| table | network | problem |",
        );
        for a in &self.axes {
            let _ = write!(o, " {} |", a.name);
        }
        o.push_str("\n|---|---|---|");
        o.push_str(&"---:|".repeat(self.axes.len()));
        o.push('\n');
        let per_run: Vec<Vec<Cell>> = self.runs.iter().map(|(_, t)| cells(t)).collect();
        for (k, cell) in per_run[0].iter().enumerate() {
            let _ = write!(
                o,
                "| {} | {} | {} |",
                cell.table, cell.network, cell.problem
            );
            for (a, axis) in self.axes.iter().enumerate() {
                let means: Vec<f64> = (0..axis.values.len())
                    .map(|v| {
                        let of: Vec<f64> = self
                            .runs
                            .iter()
                            .zip(&per_run)
                            .filter(|((choice, _), _)| choice[a] == v)
                            .map(|(_, cs)| cs[k].value.mean)
                            .collect();
                        of.iter().sum::<f64>() / of.len().max(1) as f64
                    })
                    .collect();
                let (hi, lo) = means
                    .iter()
                    .enumerate()
                    .fold((0, f64::INFINITY), |(h, lo), (v, &m)| {
                        (if m > means[h] { v } else { h }, lo.min(m))
                    });
                let spread = means[hi] - lo;
                if spread < 0.005 {
                    o.push_str(" 0 |");
                } else {
                    let _ = write!(o, " {} ({}) |", fx(spread, 2), axis.values[hi]);
                }
            }
            o.push('\n');
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_covers_every_combination_once() {
        let base = LeightonMaggsConfig {
            inputs: 64,
            ..LeightonMaggsConfig::default()
        };
        let axes = axes(&base);
        let g = grid(&axes);
        assert_eq!(g.len(), 3 * 2 * 3 * 2 * 2);
        let mut sorted = g.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), g.len());
        let v = variant(&base, &[2, 0, 1, 1, 1]);
        assert_eq!(v.wiring.generator, WiringGenerator::ButterflyPlusRandom);
        assert_eq!(v.wiring.first_matching, FirstMatching::Identity);
        assert_eq!(v.greedy.lane_choice, LaneChoice::Random);
        assert_eq!(v.fault_draw, FaultDraw::Distinct);
        assert_eq!(v.interior.levels, Some((1, 4)));
    }

    #[test]
    fn variants_run_and_report_every_cell() {
        let base = LeightonMaggsConfig {
            inputs: 64,
            trials: 2,
            table1_trials: 4,
            faults: vec![0, 10],
            table1_faults: vec![10],
            threads: 2,
            ..LeightonMaggsConfig::default()
        };
        let v = variants_jobs(&base, &mut Jobs::all(2), &|_, _| {})
            .unwrap()
            .unwrap();
        assert_eq!(v.runs.len(), 72);
        let md = v.markdown();
        // 1 Table I row, 5 networks × 4 problems, 5 × 2.
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| I")).count(),
            1 + 20 + 10
        );
        assert!(
            md.contains("| II | 0 (nor) | 1T | 0 | 0 | 0 | 0 | 0 |"),
            "{md}"
        );
        let csv = v.csv();
        assert_eq!(csv.lines().count(), 1 + 72 * 31);
        assert!(csv.starts_with("wiring,first_matching,lane_choice,fault_draw,interior,table"));
    }
}
