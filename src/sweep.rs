//! Load curves: one run per offered load of continuous Bernoulli traffic ([SV] §1.2), latency
//! and accepted throughput against the load, and the saturation point read off the curve.
//! Every load is an independent job ([`crate::shard::Jobs`]), so a curve can be sharded.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use crate::shard::Jobs;
use crate::sim::Simulation;
use crate::stats::Summary;
use crate::traffic::Traffic;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A network that accepts less than this fraction of the load its sources drew is saturated:
/// more than 1 − `SATURATED` (5 %) of the messages drawn still wait at their sources at the
/// end, or were dropped.
pub const SATURATED: f64 = 0.95;

/// Most loads one sweep may have.
pub const MAX_LOADS: usize = 1000;

/// One load of the curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    /// Messages per input per cycle.
    pub rate: f64,
    /// Flits per input per cycle offered (rate × L).
    pub offered: f64,
    /// Flits per input per cycle delivered.
    pub accepted: f64,
    pub latency: Summary,
    pub network_latency: Summary,
    pub delivered: u64,
    /// Messages still queued at their sources at the end (grows past saturation).
    pub waiting: u64,
    /// Messages dropped after their last attempt (drop mode).
    pub dropped: u64,
    /// Messages the sources drew (the offered load as it fell: at a low load and a short
    /// run, well off rate × cycles by chance).
    pub released: u64,
}

impl LoadPoint {
    /// How far the network is from saturation: the fraction of the messages drawn it may
    /// refuse ([`SATURATED`]) less the fraction it refused, left waiting at the sources or
    /// dropped (negative: saturated). Against the messages drawn rather than the nominal
    /// load, so that a low load whose coins fell short is not taken for one the network
    /// refused; against those refused rather than those delivered, so that a short run's
    /// worms still in flight at its end count as accepted.
    fn margin(&self) -> f64 {
        match self.released {
            0 => 1.0 - SATURATED,
            drawn => (1.0 - SATURATED) - (self.waiting + self.dropped) as f64 / drawn as f64,
        }
    }
}

/// A load curve and its saturation point.
#[derive(Clone, Debug, Serialize)]
pub struct LoadCurve {
    /// The run at every load but its rate, which is the first load's (recorded as a
    /// report's, so a config file reads it back: [`SimConfig::to_value`]).
    #[serde(serialize_with = "as_recorded")]
    pub config: SimConfig,
    pub points: Vec<LoadPoint>,
    /// The offered load (flits per input per cycle) at which the network first accepts less
    /// than [`SATURATED`] of the load its sources drew ([`LoadPoint::released`], of which
    /// more than the rest still waits at the end), interpolated between the two loads around
    /// the crossing (the lowest load if it saturates already); `None` if no load saturates.
    pub saturation: Option<f64>,
}

fn as_recorded<S: serde::Serializer>(
    config: &SimConfig,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&config.to_value(), s)
}

/// Checks the loads: 1 to [`MAX_LOADS`] probabilities in (0, 1], increasing.
pub fn check_rates(rates: &[f64]) -> Result<()> {
    if rates.is_empty() || rates.len() > MAX_LOADS {
        return Err(Error::invalid(
            "sweep",
            rates.len(),
            format!("1 to {MAX_LOADS} loads"),
        ));
    }
    for (i, &r) in rates.iter().enumerate() {
        if !(r > 0.0 && r <= 1.0) {
            return Err(Error::invalid(
                "sweep",
                r,
                "injection probabilities in (0, 1]",
            ));
        }
        if i > 0 && r <= rates[i - 1] {
            return Err(Error::invalid("sweep", r, "increasing loads"));
        }
    }
    Ok(())
}

/// How many loads of `rates` may run at once within the memory limit
/// ([`crate::limits::memory_limit`]): each is checked on its own when it is validated, and
/// those running together must fit side by side (at least one, at most one per core).
pub fn loads_at_once(base: &SimConfig, rates: &[f64]) -> usize {
    let largest = rates
        .iter()
        .map(|&rate| {
            let (network, records) = SimConfig {
                traffic: Traffic::Bernoulli { rate },
                ..base.clone()
            }
            .memory_estimate();
            network.saturating_add(records)
        })
        .max()
        .unwrap_or(0);
    crate::limits::jobs_at_once(largest, rates.len())
}

/// Runs `base` at every load of `rates` (Bernoulli traffic, the base's cycles and seed).
/// `None` when `jobs` runs one shard.
pub fn load_curve(
    base: &SimConfig,
    rates: &[f64],
    jobs: &mut Jobs,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<LoadCurve>> {
    check_rates(rates)?;
    if base.cycles.is_none() {
        return Err(Error::invalid(
            "cycles",
            "none",
            "a horizon for the sweep's continuous traffic (--cycles)",
        ));
    }
    let configs: Vec<SimConfig> = rates
        .iter()
        .map(|&rate| SimConfig {
            traffic: Traffic::Bernoulli { rate },
            ..base.clone()
        })
        .collect();
    for c in &configs {
        c.validate()?;
    }
    let points = jobs.map("loads", configs.len(), progress, |i| {
        let c = &configs[i];
        let mut sim = Simulation::new(c.clone())?;
        sim.prefer_bit_planes();
        let r = sim.run()?;
        Ok(LoadPoint {
            rate: rates[i],
            offered: rates[i] * f64::from(c.flits),
            accepted: r.throughput.flits_per_input_cycle,
            latency: r.latency,
            network_latency: r.network_latency,
            delivered: r.delivered,
            waiting: r.waiting,
            dropped: r.dropped,
            released: r.offered,
        })
    })?;
    Ok(points.map(|points| LoadCurve {
        config: base.clone(),
        saturation: saturation(&points),
        points,
    }))
}

/// Where the network first accepts less than [`SATURATED`] of the load drawn
/// ([`LoadCurve::saturation`]), interpolated.
pub fn saturation(points: &[LoadPoint]) -> Option<f64> {
    let i = points.iter().position(|p| p.margin() < 0.0)?;
    if i == 0 {
        return Some(points[0].offered);
    }
    let (a, b) = (&points[i - 1], &points[i]);
    let t = a.margin() / (a.margin() - b.margin());
    Some(a.offered + t * (b.offered - a.offered))
}

impl LoadCurve {
    /// sweep.csv: one row per load.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "rate,offered,accepted,latency_mean,latency_p50,latency_p99,latency_max,network_latency_mean,delivered,waiting,dropped,released\n",
        );
        for p in &self.points {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                p.rate,
                p.offered,
                p.accepted,
                p.latency.mean,
                p.latency.p50,
                p.latency.p99,
                p.latency.max,
                p.network_latency.mean,
                p.delivered,
                p.waiting,
                p.dropped,
                p.released
            );
        }
        s
    }

    /// A readable table with the saturation point.
    pub fn markdown(&self) -> String {
        let c = &self.config;
        let mut s = format!(
            "# Load curve: {} n={} B={} L={} {} mode, {} cycles, seed {}\n\n| rate | offered | accepted | latency mean | p50 | p99 | waiting |\n|---:|---:|---:|---:|---:|---:|---:|\n",
            c.topology.name(),
            c.inputs,
            c.vcs,
            c.flits,
            c.mode.name(),
            c.cycles.unwrap_or(0),
            c.seed
        );
        for p in &self.points {
            let _ = writeln!(
                s,
                "| {} | {:.4} | {:.4} | {:.2} | {} | {} | {} |",
                p.rate,
                p.offered,
                p.accepted,
                p.latency.mean,
                p.latency.p50,
                p.latency.p99,
                p.waiting
            );
        }
        let _ = writeln!(
            s,
            "\n{}",
            match (self.saturation, self.points.first()) {
                (Some(x), Some(first)) if first.margin() < 0.0 => format!(
                    "Saturation at the lowest load, {x:.4} flits per input per cycle, or below it: the network accepts less than {SATURATED} of the load the sources drew."
                ),
                (Some(x), _) => format!(
                    "Saturation: the network accepts less than {SATURATED} of the load the sources drew (more than {:.0} % of the messages drawn still wait at the sources at the end, or were dropped) from an offered load of {x:.4} flits per input per cycle (interpolated between the loads around the crossing).",
                    (1.0 - SATURATED) * 100.0
                ),
                (None, _) => format!(
                    "No load saturates: the network accepts at least {SATURATED} of the load the sources drew up to the highest load."
                ),
            }
        );
        s
    }

    /// Latency and accepted throughput against offered load.
    pub fn charts(&self) -> Vec<(&'static str, String)> {
        let latency: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.delivered > 0)
            .map(|p| (p.offered, p.latency.mean))
            .collect();
        let accepted: Vec<(f64, f64)> = self
            .points
            .iter()
            .map(|p| (p.offered, p.accepted))
            .collect();
        let offered: Vec<(f64, f64)> = self.points.iter().map(|p| (p.offered, p.offered)).collect();
        let latency = Chart::new(
            "Mean latency against offered load",
            "offered load (flits per input per cycle)",
            "mean latency (cycles), delivered messages",
        )
        .series("mean latency", latency, Marker::LinePoints);
        let throughput = Chart::new(
            "Accepted against offered load",
            "offered load (flits per input per cycle)",
            "accepted (flits per input per cycle)",
        )
        .series("accepted", accepted, Marker::LinePoints)
        .series("offered", offered, Marker::Dashed);
        vec![
            ("latency-vs-load.svg", latency.to_svg()),
            ("throughput-vs-load.svg", throughput.to_svg()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(offered: f64, released: u64, waiting: u64) -> LoadPoint {
        LoadPoint {
            rate: offered,
            offered,
            accepted: offered,
            latency: Summary::default(),
            network_latency: Summary::default(),
            delivered: 1,
            waiting,
            dropped: 0,
            released,
        }
    }

    #[test]
    fn saturation_is_interpolated_at_the_crossing() {
        let pts = [
            point(0.1, 1000, 0),
            point(0.2, 1000, 40),
            point(0.4, 1000, 130),
        ];
        // Margin 0.01 at 0.2, -0.08 at 0.4: crossing at 0.2 + 0.2 * 0.01 / 0.09.
        let s = saturation(&pts).unwrap();
        assert!((s - (0.2 + 0.2 / 9.0)).abs() < 1e-12, "{s}");
        assert_eq!(saturation(&pts[..2]), None);
        assert!(check_rates(&[0.1, 0.1]).is_err());
        assert!(check_rates(&[0.0]).is_err());
        assert!(check_rates(&[]).is_err());
    }

    #[test]
    fn a_small_butterfly_saturates() {
        let base = SimConfig {
            inputs: 16,
            cycles: Some(1500),
            ..SimConfig::default()
        };
        let curve = load_curve(&base, &[0.05, 0.15, 0.5], &mut Jobs::all(2), &|_, _| {})
            .unwrap()
            .unwrap();
        assert_eq!(curve.points.len(), 3);
        assert!(curve.points[0].accepted > 0.9 * curve.points[0].offered);
        let s = curve.saturation.expect("a load of 0.5 x 4 flits saturates");
        assert!(s > 0.2 && s < 2.0, "{s}");
    }

    #[test]
    fn a_low_load_whose_coins_fell_short_is_not_saturated() {
        // At 0.01 these 16 inputs draw 143 messages in 1000 cycles, not 160: the network
        // delivers 0.035 flits per input and cycle of a nominal 0.04 (two worms are still in
        // flight at the end) and leaves none waiting.
        let base = SimConfig {
            inputs: 16,
            cycles: Some(1000),
            seed: 6,
            ..SimConfig::default()
        };
        let curve = load_curve(&base, &[0.01, 0.05], &mut Jobs::all(1), &|_, _| {})
            .unwrap()
            .unwrap();
        let low = &curve.points[0];
        assert!(low.accepted < SATURATED * low.offered, "{low:?}");
        assert_eq!(curve.saturation, None);
    }
}
