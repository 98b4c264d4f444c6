//! The resolved configuration of a run: one serde struct, read from TOML (unknown keys
//! rejected) or built from command-line flags, validated in one place, and written back into
//! every JSON report so a run can be repeated from its output alone.

use crate::error::{Error, Result};
use crate::flit::{HeaderLayout, ProtocolFields};
use crate::topology::{SplitterWiring, TopologyKind, check_inputs, check_kary_fly};
use crate::traffic::{MAX_CYCLE, Traffic};
use serde::{Deserialize, Serialize};

mod estimate;

pub use estimate::{RECORD_BYTES, REPORTED_RECORD_BYTES, REPORTED_RECORD_JSON};

/// How a switch treats a header that cannot get a virtual channel on its next link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowControl {
    /// The header waits in its VC register and the body stalls behind it ([CMS] §1.1).
    Wormhole,
    /// Whole packets hop: a header asks for the next link only once its tail has arrived in
    /// the same VC buffer (depth raised to `L`), so every hop buffers the complete packet.
    StoreForward,
    /// The header is discarded with the rest of its worm behind it; the source learns it by a
    /// negative acknowledgement and retries ([SV] §3.1, [CMSV] §3).
    Drop,
    /// [LM] §IV's greedy store-and-forward of one-flit packets: one FIFO queue per switch,
    /// every queued packet may leave on any free eligible link (no head-of-line blocking), a
    /// link is used only when its head held fewer than `switch_queue` packets at the end of the
    /// previous cycle, outputs always accept (docs/interpretations.md, 'Greedy step'). Routed by
    /// [`crate::multibutterfly::greedy`], not by `sim`.
    Greedy,
}

impl FlowControl {
    /// The mode as the CLI and config files spell it.
    pub fn name(self) -> &'static str {
        match self {
            FlowControl::Wormhole => "wormhole",
            FlowControl::StoreForward => "store-forward",
            FlowControl::Drop => "drop",
            FlowControl::Greedy => "greedy",
        }
    }
}

/// How many flits a physical link carries per cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkBandwidth {
    /// B flits, one per virtual channel ([CMS]'s flit step).
    PerVc,
    /// One flit per link per cycle, B buffers ([CMS] §1.4 "Remarks").
    One,
}

/// How a switch learns that the virtual channel it feeds can take a flit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backpressure {
    /// The papers' flit step ([CMS] §1.1): a VC register is ready when it has room or its own
    /// front flit leaves in the same cycle, and a VC whose worm's tail leaves can take the next
    /// worm's header in that cycle (same-cycle reuse). The `ready` signals run combinationally
    /// from the outputs back to the sources, so the clock period of the hardware grows with the
    /// number of levels, and a cyclic network has no consistent value for them.
    #[default]
    Combinational,
    /// The downstream VC's `ready` and `accept` are decoded from its registers as they stood
    /// after the previous clock edge: a VC takes a flit only if it had room after the last
    /// edge, and a new worm only if it was idle after the last edge. No combinational path
    /// runs from one switch's inputs through another switch, so the critical path does not
    /// depend on the network's size, and cyclic networks are well defined. With depth 1 a VC carries a flit every other cycle (depth 2 restores one per
    /// cycle), and a VC freed by a tail is reused one cycle later than with `combinational`.
    Registered,
}

impl Backpressure {
    /// The name the CLI and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Backpressure::Combinational => "combinational",
            Backpressure::Registered => "registered",
        }
    }
}

/// Which free edge of the logical direction a header takes on dilated and splitter networks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaneChoice {
    /// The lowest-index edge with a free VC, then its lowest free VC.
    Lowest,
    /// The scan over edges starts at a pseudo-random edge drawn from a 16-bit LFSR per switch
    /// (greedy mode: the LFSR picks uniformly among the eligible links).
    Random,
    /// Greedy mode only: the eligible link whose head held the fewest packets at the end of the
    /// previous cycle (lowest index on ties).
    LeastLoaded,
}

/// Middle column of a Beneš route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Middle {
    /// Uniformly random per message (seeded).
    Random,
    /// The same given column for every message.
    Column(u32),
}

/// A complete run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    pub topology: TopologyKind,
    /// Number of inputs n (terminals: a power of two for leveled networks, `k²` for a mesh or
    /// torus, `n` columns of the wrap-around butterfly, the switches of a random graph; a graph
    /// file's switches).
    pub inputs: u32,
    /// Multiplicity d of dilated and splitter networks.
    pub dilation: u32,
    /// Switch radix k of the k-ary n-fly.
    pub radix: u32,
    /// Links out of every switch of a random graph.
    pub degree: u32,
    /// The graph file of a `graph` network ([`crate::topology::graph::read_graph`]).
    pub graph: Option<String>,
    pub wiring: SplitterWiring,
    /// Virtual channels per link, B.
    pub vcs: u32,
    /// Flits one VC register holds.
    pub vc_depth: u32,
    /// Flits per message, L.
    pub flits: u32,
    /// Bits per flit, W.
    pub flit_bits: u32,
    pub mode: FlowControl,
    pub link_bandwidth: LinkBandwidth,
    pub backpressure: Backpressure,
    pub lane_choice: LaneChoice,
    pub middle: Middle,
    /// Store-and-forward only: per-switch admission threshold A. A header may enter a switch
    /// only while that switch held fewer than A packets at the end of the previous cycle (the
    /// rule of [LM] §IV; several packets admitted in one cycle may take a switch past A, by
    /// at most its in-degree · B − 1). Without it the bound is per edge and hard: B packet
    /// buffers at the head of every link.
    pub switch_queue: Option<u32>,
    /// Drop mode: attempts per message before it is given up and reported dropped.
    pub max_attempts: u32,
    /// Drop mode: a retry starts a uniformly random 0..=this many cycles after the negative
    /// acknowledgement (0..=1 000 000).
    pub retry_backoff: u64,
    pub traffic: Traffic,
    /// Cycle limit; the injection horizon for continuous traffic. Batch traffic runs until
    /// every message is delivered or dropped when absent.
    pub cycles: Option<u64>,
    pub seed: u64,
    /// Cycles without any flit moving, while messages remain, before a deadlock is reported.
    pub watchdog: u64,
    pub protocol: ProtocolFields,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            topology: TopologyKind::Butterfly,
            inputs: 64,
            dilation: 2,
            radix: 2,
            degree: 2,
            graph: None,
            wiring: SplitterWiring::default(),
            vcs: 2,
            vc_depth: 1,
            flits: 4,
            flit_bits: 32,
            mode: FlowControl::Wormhole,
            link_bandwidth: LinkBandwidth::PerVc,
            backpressure: Backpressure::Combinational,
            lane_choice: LaneChoice::Lowest,
            middle: Middle::Random,
            switch_queue: None,
            max_attempts: 16,
            retry_backoff: 0,
            traffic: Traffic::RandomPermutation,
            cycles: None,
            seed: 1,
            watchdog: 10_000,
            protocol: ProtocolFields::default(),
        }
    }
}

impl SimConfig {
    /// The multiplicity the topology actually uses.
    pub fn multiplicity(&self) -> u32 {
        match self.topology {
            TopologyKind::Dilated | TopologyKind::Splitter => self.dilation,
            TopologyKind::ModifiedSplitter => 2,
            _ => 1,
        }
    }

    /// Directions per switch: the radix of the k-ary n-fly, 2 for the papers' networks, the
    /// most links out of a graph network's switches.
    pub fn switch_radix(&self) -> u32 {
        match self.topology {
            TopologyKind::KaryFly => self.radix,
            TopologyKind::Mesh | TopologyKind::Torus => 4,
            TopologyKind::RandomGraph => self.degree.clamp(1, 4),
            TopologyKind::Graph => crate::topology::graph::MAX_DEGREE,
            _ => 2,
        }
    }

    /// Switches per level: `inputs`, or `inputs / k` for the k-ary n-fly.
    pub fn columns(&self) -> u32 {
        match self.topology {
            TopologyKind::KaryFly => (self.inputs / self.radix.max(1)).max(1),
            _ => self.inputs,
        }
    }

    /// Switch levels of the topology: for a graph network, the switches a typical path visits
    /// (for estimates).
    pub fn levels(&self) -> u32 {
        let log_n = self.inputs.max(2).trailing_zeros();
        let side = (f64::from(self.inputs).sqrt().ceil() as u32).max(2);
        match self.topology {
            TopologyKind::Benes | TopologyKind::DoubledButterfly => 2 * log_n + 1,
            TopologyKind::KaryFly => log_n / self.radix.max(2).trailing_zeros().max(1) + 1,
            TopologyKind::Mesh => 2 * side + 1,
            TopologyKind::Torus => side + 1,
            TopologyKind::RandomGraph | TopologyKind::Graph => 2 * self.address_bits() + 1,
            _ => log_n + 1,
        }
    }

    /// Bits of a terminal address: `⌈lg inputs⌉`.
    pub fn address_bits(&self) -> u32 {
        self.inputs.max(2).next_power_of_two().trailing_zeros()
    }

    /// Links of the network (for estimates).
    pub fn link_count(&self) -> u64 {
        let n = u64::from(self.inputs);
        match self.topology {
            TopologyKind::Mesh | TopologyKind::Torus => 4 * n,
            TopologyKind::WrappedButterfly => 2 * n * u64::from(self.address_bits()),
            TopologyKind::RandomGraph => n * u64::from(self.degree.clamp(1, 4)),
            TopologyKind::Graph => n * u64::from(crate::topology::graph::MAX_DEGREE),
            _ => {
                u64::from(self.levels() - 1)
                    * u64::from(self.columns())
                    * u64::from(self.switch_radix() * self.multiplicity())
            }
        }
    }

    /// Depth of a VC buffer as the switches build it (store-and-forward holds whole packets).
    pub fn effective_depth(&self) -> u32 {
        match self.mode {
            FlowControl::StoreForward => self.vc_depth.max(self.flits),
            _ => self.vc_depth,
        }
    }

    /// The header layout this configuration implies (a run on given paths adds their index:
    /// [`SimConfig::header_layout_with_paths`]).
    pub fn header_layout(&self) -> Result<HeaderLayout> {
        self.header_layout_with_paths(0)
    }

    /// The header layout with a path-index field for `paths` paths (0: none).
    pub fn header_layout_with_paths(&self, paths: u32) -> Result<HeaderLayout> {
        HeaderLayout::new(
            self.flit_bits,
            self.address_bits(),
            matches!(
                self.topology,
                TopologyKind::Benes | TopologyKind::DoubledButterfly
            ),
            self.protocol,
            if paths > 1 {
                paths.next_power_of_two().trailing_zeros()
            } else {
                u32::from(paths == 1)
            },
        )
    }

    /// A stable 64-bit FNV-1a hash of the configuration as reports record it
    /// ([`SimConfig::to_value`]), named in generated files so that a waveform or a netlist can
    /// be traced to the run that produced it.
    pub fn config_hash(&self) -> String {
        config_hash(&self.to_value())
    }

    /// The keys that have no effect on this run, each with the setting it needs to have one.
    /// They are left out of reports and refused in config files and on the command line.
    pub fn inapplicable(&self) -> Vec<(&'static str, &'static str)> {
        use TopologyKind::*;
        let mut keys = Vec::new();
        if !matches!(self.topology, Dilated | Splitter) {
            keys.push(("dilation", "topology dilated or splitter"));
            keys.push(("lane_choice", "topology dilated or splitter"));
        }
        if self.topology != Splitter {
            keys.push(("wiring", "topology splitter"));
        }
        if self.topology != KaryFly {
            keys.push(("radix", "topology kary-fly"));
        }
        if self.topology != RandomGraph {
            keys.push(("degree", "topology random-graph"));
        }
        if self.topology != Graph {
            keys.push(("graph", "topology graph"));
        }
        if !matches!(self.topology, Benes | DoubledButterfly) {
            keys.push(("middle", "topology benes or doubled-butterfly"));
        }
        if self.mode != FlowControl::StoreForward {
            keys.push(("switch_queue", "mode store-forward"));
        }
        if self.mode != FlowControl::Drop {
            keys.push(("max_attempts", "mode drop"));
            keys.push(("retry_backoff", "mode drop"));
        }
        keys
    }

    /// The configuration as reports record it and config files accept it: every key that
    /// applies to this run, none that does not ([`SimConfig::inapplicable`]).
    pub fn to_value(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            for (key, _) in self.inapplicable() {
                map.remove(key);
            }
        }
        value
    }

    /// Reads a configuration from its JSON form (a report's `config`, or a parsed config file
    /// named `source`): missing keys take their defaults, unknown keys and keys that do not
    /// apply to the run are refused.
    pub fn from_value(value: serde_json::Value, source: &str) -> Result<Self> {
        let config: SimConfig =
            serde_json::from_value(value.clone()).map_err(|e| Error::parse(source, e))?;
        refuse_inapplicable(&value, &config.inapplicable(), source)?;
        Ok(config)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<()> {
        match self.topology {
            // The builders' own checks, so that a bad size is refused before anything is sized.
            TopologyKind::KaryFly => {
                check_kary_fly(self.inputs, self.radix)?;
            }
            TopologyKind::Mesh | TopologyKind::Torus | TopologyKind::RandomGraph => {
                crate::topology::graph::check_terminals(self.topology, self.inputs, self.degree)?;
            }
            TopologyKind::WrappedButterfly => {
                check_inputs(self.inputs)?;
                if self.inputs < 4 {
                    return Err(Error::invalid(
                        "inputs",
                        self.inputs,
                        "a power of two from 4 for the wrap-around butterfly",
                    ));
                }
            }
            TopologyKind::Graph => {
                if self.graph.is_none() {
                    return Err(Error::invalid(
                        "graph",
                        "none",
                        "a graph file (--graph FILE) with --topology graph",
                    ));
                }
                if !matches!(self.traffic, Traffic::Paths { .. }) {
                    return Err(Error::invalid(
                        "traffic",
                        self.traffic.name(),
                        "paths (--paths FILE) with --topology graph: its messages follow given paths",
                    ));
                }
            }
            _ => {
                check_inputs(self.inputs)?;
            }
        }
        if matches!(self.traffic, Traffic::Paths { .. }) && !self.topology.is_graph() {
            return Err(Error::invalid(
                "paths",
                "given",
                "a graph network (--topology mesh, torus, wrapped-butterfly, random-graph or graph)",
            ));
        }
        if matches!(
            self.topology,
            TopologyKind::Mesh
                | TopologyKind::Torus
                | TopologyKind::WrappedButterfly
                | TopologyKind::RandomGraph
        ) && self.backpressure == Backpressure::Combinational
        {
            return Err(Error::invalid(
                "backpressure",
                "combinational",
                format!(
                    "registered on the {} (its links form cycles, around which same-cycle ready signals have no consistent value)",
                    self.topology.name()
                ),
            ));
        }
        range("vcs", self.vcs, 1, 16)?;
        range("vc-depth", self.vc_depth, 1, 64)?;
        range("flits", self.flits, 1, 4096)?;
        range("dilation", self.dilation, 1, 8)?;
        range("max-attempts", self.max_attempts, 1, 1_000_000)?;
        if self.mode == FlowControl::Greedy {
            return Err(Error::invalid(
                "mode",
                "greedy",
                "wormhole, store-forward or drop (the greedy store-and-forward of [LM] is run by `flitforge multibutterfly` and `flitforge experiment leighton-maggs`)",
            ));
        }
        if self.lane_choice == LaneChoice::LeastLoaded {
            return Err(Error::invalid(
                "lane-choice",
                "least-loaded",
                "lowest or random (least-loaded is a choice of the greedy store-and-forward)",
            ));
        }
        if self.topology == TopologyKind::ModifiedSplitter {
            return Err(Error::invalid(
                "topology",
                "modified-splitter",
                "a network whose switches route by direction bits (the modified splitter network's matchings and 4x4 stage are routed by the greedy store-and-forward of `flitforge multibutterfly` and `flitforge experiment leighton-maggs`)",
            ));
        }
        if !(1..=MAX_CYCLE).contains(&self.watchdog) {
            return Err(Error::invalid(
                "watchdog",
                self.watchdog,
                format!("1..={MAX_CYCLE} cycles (2^40)"),
            ));
        }
        if let Some(c) = self.cycles
            && !(1..=MAX_CYCLE).contains(&c)
        {
            return Err(Error::invalid(
                "cycles",
                c,
                format!("1..={MAX_CYCLE} (2^40)"),
            ));
        }
        if self.mode == FlowControl::StoreForward {
            // A store-and-forward VC buffers a whole packet in an 8-bit-counted FIFO.
            range("flits", self.flits, 1, 255).map_err(|_| {
                Error::invalid("flits", self.flits, "1..=255 with --mode store-forward")
            })?;
        }
        if self.retry_backoff > 1_000_000 {
            return Err(Error::invalid(
                "retry-backoff",
                self.retry_backoff,
                "0..=1000000 cycles",
            ));
        }
        if let Some(a) = self.switch_queue {
            if self.mode != FlowControl::StoreForward {
                return Err(Error::invalid(
                    "switch-queue",
                    a,
                    "only with --mode store-forward",
                ));
            }
            range("switch-queue", a, 1, 65_535)?;
        }
        if let Middle::Column(c) = self.middle
            && c >= self.inputs
        {
            return Err(Error::invalid(
                "middle",
                c,
                format!("0..={}", self.inputs - 1),
            ));
        }
        self.traffic.validate()?;
        if self.traffic.is_continuous() && self.cycles.is_none() {
            return Err(Error::invalid(
                "cycles",
                "none",
                "a cycle count (--cycles C) for continuous traffic",
            ));
        }
        self.header_layout()?;
        self.check_memory()
    }
}

/// Refuses every key of `value` (a configuration as JSON) that `inapplicable` lists as
/// `(key, what it needs)`, naming `source`.
pub fn refuse_inapplicable(
    value: &serde_json::Value,
    inapplicable: &[(&str, &str)],
    source: &str,
) -> Result<()> {
    if let Some(map) = value.as_object() {
        for (key, needs) in inapplicable {
            if let Some(v) = map.get(*key) {
                return Err(Error::invalid(
                    &key.replace('_', "-"),
                    v,
                    format!("no value: it applies only with {needs} ({source})"),
                ));
            }
        }
    }
    Ok(())
}

fn range(name: &str, value: u32, lo: u32, hi: u32) -> Result<()> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(name, value, format!("{lo}..={hi}")))
    }
}

pub use crate::digest::config_hash;
