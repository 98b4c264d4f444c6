//! One greedy routing of [LM] §IV as a whole configuration: the network, its faults, the
//! problem and the routing rules, everything a report's `config` records and a config file
//! accepts (`docs/report-schema.md`). Upfal's wave algorithm (§II-A) is configured by
//! [`super::upfal::UpfalConfig`] alone.

use super::faults::{self, FaultDraw, Faults, InputRule, Interior};
use super::greedy::{GreedyConfig, GreedyRouter, Problem};
use crate::error::{Error, Result};
use crate::rng::{Stream, stream};
use crate::topology::{self, SplitterWiring, Topology, TopologyKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Fault placements drawn until every input survives before the run gives up.
pub const MAX_PLACEMENTS: u32 = 100_000;

/// A greedy store-and-forward routing on one of [LM]'s networks with random faults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GreedyRunConfig {
    /// modified-splitter, splitter, butterfly or dilated.
    pub topology: TopologyKind,
    /// Inputs N, a power of two.
    pub inputs: u32,
    /// Multiplicity d (splitter and dilated networks).
    pub dilation: u32,
    /// How random splitters are wired (splitter and modified-splitter networks).
    pub wiring: SplitterWiring,
    /// Random faults placed on the interior levels.
    pub faults: u32,
    /// Where the faults may go (with faults).
    pub interior: Interior,
    /// How the faults are drawn (with faults).
    pub fault_draw: FaultDraw,
    /// The modified network's rule at its matching level (with faults).
    pub input_rule: InputRule,
    /// Packets per input and their destinations: `1`, `10`, `1T`, `10T`, ...
    pub problem: Problem,
    /// The routing rules.
    pub greedy: GreedyConfig,
    /// Seed of the wiring, the faults and the destinations.
    pub seed: u64,
}

impl Default for GreedyRunConfig {
    fn default() -> Self {
        GreedyRunConfig {
            topology: TopologyKind::ModifiedSplitter,
            inputs: 1024,
            dilation: 2,
            wiring: SplitterWiring::default(),
            faults: 0,
            interior: Interior::default(),
            fault_draw: FaultDraw::Distinct,
            input_rule: InputRule::default(),
            problem: Problem {
                transpose: false,
                copies: 1,
            },
            greedy: GreedyConfig::default(),
            seed: 1,
        }
    }
}

/// A network built, its faults placed and its problem drawn, ready to route.
pub struct PreparedRun {
    pub router: GreedyRouter,
    pub faults: Faults,
    /// Placements drawn until every input survived.
    pub placements: u32,
    pub destinations: Vec<u32>,
}

impl GreedyRunConfig {
    /// Keys without effect on this run, with what they need (never recorded, refused in a
    /// config file).
    pub fn inapplicable(&self) -> Vec<(&'static str, &'static str)> {
        use TopologyKind::*;
        let mut keys = Vec::new();
        if !matches!(self.topology, Dilated | Splitter) {
            keys.push(("dilation", "topology dilated or splitter"));
        }
        if !matches!(self.topology, Splitter | ModifiedSplitter) {
            keys.push(("wiring", "topology splitter or modified-splitter"));
        }
        if self.faults == 0 {
            keys.push(("interior", "faults above 0"));
            keys.push(("fault_draw", "faults above 0"));
        }
        if self.faults == 0 || self.topology != ModifiedSplitter {
            keys.push(("input_rule", "faults above 0 on topology modified-splitter"));
        }
        keys
    }

    /// The configuration as a report records it (`algorithm` names the run).
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            for (key, _) in self.inapplicable() {
                map.remove(key);
            }
            map.insert("algorithm".into(), Value::from("greedy"));
        }
        value
    }

    /// Reads a report's `config` (without its `algorithm` key); keys without effect are
    /// refused, naming `source`.
    pub fn from_value(value: Value, source: &str) -> Result<Self> {
        let config: GreedyRunConfig =
            serde_json::from_value(value.clone()).map_err(|e| Error::parse(source, e))?;
        crate::config::refuse_inapplicable(&value, &config.inapplicable(), source)?;
        Ok(config)
    }

    /// Checks the ranges (the topology builders check the sizes).
    pub fn validate(&self) -> Result<()> {
        if matches!(
            self.topology,
            TopologyKind::Benes | TopologyKind::DoubledButterfly | TopologyKind::KaryFly
        ) {
            return Err(Error::invalid(
                "topology",
                self.topology.name(),
                "modified-splitter, splitter, butterfly or dilated",
            ));
        }
        if !(1..=8).contains(&self.dilation) {
            return Err(Error::invalid("dilation", self.dilation, "1..=8"));
        }
        self.greedy.validate()?;
        topology::check_inputs(self.inputs)?;
        self.memory_estimate().check_memory("inputs", self.inputs)
    }

    /// What the routing allocates: the switch model in greedy mode (per switch a queue deep
    /// enough for the problem's copies, per link its registers) and the packets.
    pub fn memory_estimate(&self) -> crate::limits::Estimate {
        let m = match self.topology {
            TopologyKind::Splitter | TopologyKind::Dilated => self.dilation,
            TopologyKind::ModifiedSplitter => 2,
            _ => 1,
        };
        routing_estimate(self.inputs, m, self.greedy.max_held, self.problem.copies)
    }

    /// The network this run routes on.
    pub fn network(&self) -> Result<Topology> {
        self.validate()?;
        topology::build(
            self.topology,
            self.inputs,
            self.dilation,
            2,
            self.wiring,
            self.seed,
        )
    }

    /// Builds the network, places faults until every input survives, draws the problem and
    /// loads it: the state a waveform starts from.
    pub fn prepare(&self) -> Result<PreparedRun> {
        let topo = self.network()?;
        let mut rng = stream(self.seed, Stream::Routing);
        let (faults, placements) = faults::place_until_inputs_survive(
            &topo,
            self.faults,
            self.interior,
            self.fault_draw,
            self.input_rule,
            MAX_PLACEMENTS,
            &mut rng,
        )?;
        let destinations = self
            .problem
            .destinations(topo.n, &mut stream(self.seed, Stream::Traffic));
        let mut router =
            GreedyRouter::new(topo, &faults, self.greedy, self.problem.copies, self.seed)?;
        router.load(&destinations)?;
        Ok(PreparedRun {
            router,
            faults,
            placements,
            destinations,
        })
    }
}

/// What greedy routing of `copies` packets per input allocates on an `inputs`-input network of
/// multiplicity `m` (admission bound `max_held`): per switch a queue deep enough for the
/// problem's copies, per link its registers, and the packets (measured within 15 % on
/// [LM]'s modified network at 16 384 and 65 536 inputs: 112 and 414 MB at peak).
pub(crate) fn routing_estimate(
    inputs: u32,
    m: u32,
    max_held: u32,
    copies: u32,
) -> crate::limits::Estimate {
    let depth = u64::from(max_held.saturating_add(2 * m).max(copies));
    network_estimate(inputs, m)
        .with("queues", switches(inputs) * depth * 8)
        .with("packets", u64::from(inputs) * u64::from(copies) * 64)
}

/// Switches of an `inputs`-input network of the multibutterfly family (lg N + 2 levels,
/// counting the 4x4 stage's).
fn switches(inputs: u32) -> u64 {
    u64::from(inputs) * (u64::from(inputs.trailing_zeros()) + 2)
}

/// What an `inputs`-input network of multiplicity `m` takes before anything is routed on
/// it: its switches and its links.
pub(crate) fn network_estimate(inputs: u32, m: u32) -> crate::limits::Estimate {
    let switches = switches(inputs);
    crate::limits::Estimate::new()
        .with("switches", switches * 64)
        .with("links", switches * 2 * u64::from(m) * 48)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips_and_refuses_keys_without_effect() {
        let config = GreedyRunConfig {
            topology: TopologyKind::Butterfly,
            inputs: 64,
            ..GreedyRunConfig::default()
        };
        let mut value = config.to_value();
        assert!(value.get("dilation").is_none() && value.get("interior").is_none());
        value.as_object_mut().unwrap().remove("algorithm");
        assert_eq!(
            GreedyRunConfig::from_value(value.clone(), "t").unwrap(),
            config
        );
        value["wiring"] = serde_json::to_value(SplitterWiring::default()).unwrap();
        let e = GreedyRunConfig::from_value(value, "t").unwrap_err();
        assert!(e.to_string().contains("wiring"), "{e}");
    }

    #[test]
    fn a_prepared_run_routes_every_packet() {
        let config = GreedyRunConfig {
            inputs: 64,
            faults: 4,
            ..GreedyRunConfig::default()
        };
        let mut run = config.prepare().unwrap();
        let out = run.router.run(|_, _| Ok(())).unwrap();
        assert_eq!(out.packets, 64);
        assert!(run.faults.placed_count() == 4 && run.placements >= 1);
    }
}
