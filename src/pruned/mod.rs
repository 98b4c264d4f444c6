//! The pruned butterfly of [BB] §3 as hardware: bit-serial vertex switches with direction
//! bits ([`switch`]), their packet formats ([`frame`]), the abstract greedy models they are
//! held equal to ([`golden`]), the stage algorithm that routes arbitrary message sets with
//! them ([`stage`]), and its waveform and Verilog back ends ([`wave`], [`rtl`]). The graph
//! itself is [`crate::topology::pruned`]; where flitforge reads the paper one way among several,
//! docs/interpretations.md says so.

pub mod element;
pub mod experiment;
pub mod frame;
pub mod golden;
pub mod report;
pub mod rtl;
pub mod stage;
pub mod switch;
pub mod wave;

pub use stage::{Costs, Engine, Message, RouteReport, Router};

use crate::error::{Error, Result};
use crate::rtl::RtlDesign;
use crate::rtl::build::BuildSize;
use crate::traffic::Traffic;
use crate::wave::ScopeFilter;
use serde::{Deserialize, Serialize};

/// A pruned-butterfly run: the network, the message set and the engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrunedConfig {
    /// Leaves `N`: a power of 4 from 16 to 65536.
    pub inputs: u32,
    /// Batch traffic (continuous Bernoulli traffic is refused).
    pub traffic: Traffic,
    pub seed: u64,
    /// Body bits `b` (default `2·lg N`); the body carries the message index.
    pub body_bits: Option<u32>,
    pub engine: Engine,
    pub costs: Costs,
}

impl Default for PrunedConfig {
    /// 64 leaves, a random permutation, seed 1.
    fn default() -> Self {
        PrunedConfig::new(64, Traffic::RandomPermutation, 1)
    }
}

impl PrunedConfig {
    /// A run on `inputs` leaves with the cycle engine, the default body width and costs.
    pub fn new(inputs: u32, traffic: Traffic, seed: u64) -> Self {
        PrunedConfig {
            inputs,
            traffic,
            seed,
            body_bits: None,
            engine: Engine::Cycle,
            costs: Costs::default(),
        }
    }

    /// Body bits in use.
    pub fn body_bits(&self) -> u32 {
        self.body_bits
            .unwrap_or(2 * self.inputs.max(2).trailing_zeros())
    }

    /// Refuses what the pruned butterfly cannot route: a stream of messages, an input count
    /// it is not built for. Returns the graph.
    pub fn validate(&self) -> Result<crate::topology::pruned::PrunedButterfly> {
        if self.traffic.is_continuous() {
            return Err(Error::invalid(
                "traffic",
                self.traffic.name(),
                "a batch pattern for the pruned butterfly (it routes message sets, not streams)",
            ));
        }
        crate::topology::pruned::PrunedButterfly::new(self.inputs)
    }

    /// The message set (sources and destinations only: the pruned butterfly routes a batch).
    pub fn messages(&self) -> Result<Vec<Message>> {
        self.validate()?;
        Ok(self
            .traffic
            .messages(self.inputs, 0, self.seed)?
            .into_iter()
            .map(|m| Message {
                source: m.source,
                destination: m.destination,
            })
            .collect())
    }

    /// A stable FNV-1a hash of the configuration's JSON form (as [`crate::SimConfig::config_hash`]).
    pub fn config_hash(&self) -> String {
        crate::config::config_hash(self)
    }

    /// Refuses a waveform on the golden engine (it moves whole messages, not bits).
    pub fn check_waveform(&self) -> Result<()> {
        match self.engine {
            Engine::Cycle => Ok(()),
            Engine::Golden => Err(Error::invalid(
                "engine",
                "golden",
                "cycle for a waveform (the golden engine moves whole messages)",
            )),
        }
    }

    /// A router for this configuration.
    pub fn router(&self) -> Result<Router> {
        Router::new(
            self.inputs,
            &self.messages()?,
            self.body_bits(),
            self.engine,
            self.costs,
        )
    }

    /// Routes the message set; with `vcd`, writes the waveform of the vertices `filter` admits
    /// (cycle engine only).
    pub fn run(
        &self,
        vcd: Option<(&mut dyn std::io::Write, &ScopeFilter)>,
        command: &str,
    ) -> Result<RouteReport> {
        let router = self.router()?;
        match vcd {
            None => router.run(None),
            Some((out, filter)) => {
                self.check_waveform()?;
                let header = format!("{command} | config {}", self.config_hash());
                let mut w = wave::PrunedVcd::new(out, &router.net, filter, &header)?;
                let report = router.run(Some(&mut |net, inputs| w.sample(net, inputs)))?;
                w.finish()?;
                Ok(report)
            }
        }
    }

    /// Runs the cycle engine recording its waveform and inputs, and generates the Verilog.
    pub fn prepare(&self, command: &str) -> Result<Prepared> {
        self.prepare_with(command, true)
    }

    /// Runs the cycle engine recording the inputs the testbench replays (and, with
    /// `waveform`, its waveform, for a comparison), and generates the Verilog.
    pub fn prepare_with(&self, command: &str, waveform: bool) -> Result<Prepared> {
        let mut config = self.clone();
        config.engine = Engine::Cycle;
        let router = config.router()?;
        let hash = config.config_hash();
        let header = format!("{command} | config {hash}");
        let mut model_vcd = Vec::new();
        let mut stimulus = rtl::PrunedStimulus::default();
        let report = if waveform {
            let mut w = wave::PrunedVcd::new(
                &mut model_vcd,
                &router.net,
                &ScopeFilter::default(),
                &header,
            )?;
            let report = router.run(Some(&mut |net, inputs| {
                stimulus.sample(net, inputs);
                w.sample(net, inputs)
            }))?;
            w.finish()?;
            report
        } else {
            router.run(Some(&mut |net, inputs| {
                stimulus.sample(net, inputs);
                Ok(())
            }))?
        };
        let graph = crate::topology::pruned::PrunedButterfly::new(config.inputs)?;
        let format = frame::FrameFormat {
            log_n: graph.levels(),
            body_bits: config.body_bits(),
        };
        let design = rtl::design(&graph, &format, command, &hash, stimulus.cycles())?;
        let build = BuildSize::pruned(config.inputs, graph.vertex_count() as u64);
        Ok(Prepared {
            model_vcd,
            design,
            build,
            stimulus,
            report,
        })
    }
}

/// A model run prepared for co-simulation.
pub struct Prepared {
    pub model_vcd: Vec<u8>,
    pub design: RtlDesign,
    /// What the simulators take to build the design.
    pub build: BuildSize,
    pub stimulus: rtl::PrunedStimulus,
    pub report: RouteReport,
}

impl From<Prepared> for crate::cosim::Bundle {
    fn from(p: Prepared) -> Self {
        crate::cosim::Bundle {
            cycles: p.stimulus.cycles(),
            stimulus_hex: p.stimulus.to_hex(),
            model_vcd: p.model_vcd,
            design: p.design,
            build: Some(p.build),
        }
    }
}
