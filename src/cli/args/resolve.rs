//! Resolving a command's network flags (over a configuration file or the defaults) into the
//! run they describe.

use super::{NetworkArgs, SerialArgs, SwitchArgs, TrafficArgs, parse_name, refuse};
use flitforge::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth, Middle, SimConfig};
use flitforge::pruned::PrunedConfig;
use flitforge::run::RunConfig;
use flitforge::sorter::fattree::FatTreeConfig;
use flitforge::topology::TopologyKind;
use flitforge::{Error, Result};

/// Network flags of the commands that take any network: which groups the command has.
pub struct RunFlags<'a> {
    pub net: &'a NetworkArgs,
    pub switch: Option<&'a SwitchArgs>,
    pub serial: Option<&'a SerialArgs>,
    pub traffic: &'a TrafficArgs,
}

/// The families of runs: a network of VC switches, or one of [BB]'s.
fn family(topology: &str) -> &'static str {
    match topology {
        "pruned-butterfly" => "pruned-butterfly",
        "sorting-fat-tree" => "sorting-fat-tree",
        "flexible-sorter" => "flexible-sorter",
        _ => "network",
    }
}

impl RunFlags<'_> {
    /// The run these flags describe: the config file (or `base` for VC networks, the
    /// defaults for the others), overridden by the flags. A file for a VC network that names
    /// no traffic takes `base`'s traffic, and its cycles unless it names them. Flags with no
    /// effect are refused.
    pub fn resolve(&self, base: SimConfig) -> Result<RunConfig> {
        let raw = match &self.net.config {
            Some(path) => Some((path, flitforge::run::read_config_file(path)?)),
            None => None,
        };
        let from_file = match &raw {
            Some((path, value)) => Some(RunConfig::from_value(value.clone(), path)?),
            None => None,
        };
        let topology = match (&self.net.topology, &from_file) {
            (Some(t), Some(file)) if family(t) != family(file.topology()) => {
                return Err(Error::invalid(
                    "topology",
                    t,
                    format!(
                        "{} or another topology of its family (the config file is for {})",
                        file.topology(),
                        file.topology()
                    ),
                ));
            }
            (Some(t), _) => t.clone(),
            (None, Some(file)) => file.topology().to_string(),
            (None, None) => base.topology.name().to_string(),
        };
        let switch_given = self.switch.map(SwitchArgs::given).unwrap_or_default();
        let body_bits = self.serial.and_then(|s| s.body_bits);
        let t = self.traffic;
        // A config file without traffic takes the command's (`sim --sweep`: Bernoulli; `bench`:
        // its benchmark's; `fpga`: the LFSR generators), with its cycles unless it names them,
        // not the file defaults'.
        let (base_traffic, base_cycles) = (base.traffic.clone(), base.cycles);
        let mut run = match from_file {
            Some(c) => c,
            None => match topology.as_str() {
                "pruned-butterfly" => RunConfig::PrunedButterfly(PrunedConfig::default()),
                "sorting-fat-tree" => RunConfig::SortingFatTree(FatTreeConfig::default()),
                _ => RunConfig::Network(base),
            },
        };
        match &mut run {
            RunConfig::Network(c) => {
                if self.net.topology.is_some() {
                    c.topology = parse_name::<TopologyKind>(
                        "topology",
                        &topology,
                        "butterfly|dilated|splitter|benes|doubled-butterfly|kary-fly|mesh|torus|wrapped-butterfly|random-graph|graph",
                    )?;
                }
                refuse(
                    &[("body-bits", body_bits.is_some())],
                    "with --topology pruned-butterfly or sorting-fat-tree",
                )?;
                if let Some((_, raw)) = raw.as_ref().filter(|(_, r)| r.get("traffic").is_none()) {
                    c.traffic = base_traffic;
                    if raw.get("cycles").is_none() {
                        c.cycles = base_cycles;
                    }
                }
                self.apply_network(c)?;
                if let Some((path, raw)) = &raw {
                    for (key, needs) in c.inapplicable() {
                        if raw.get(key).is_some() {
                            return Err(Error::invalid(
                                &key.replace('_', "-"),
                                format!("{} in {path}", raw[key]),
                                format!(
                                    "no value with the flags given: it applies only with {needs}"
                                ),
                            ));
                        }
                    }
                }
            }
            RunConfig::PrunedButterfly(_) | RunConfig::SortingFatTree(_) => {
                let only = "with a network of virtual-channel switches (--topology butterfly, dilated, splitter, benes, kary-fly, mesh, torus, wrapped-butterfly, random-graph or graph)";
                refuse(&switch_given, only)?;
                refuse(
                    &[
                        ("dilation", self.net.dilation.is_some()),
                        ("radix", self.net.radix.is_some()),
                        ("degree", self.net.degree.is_some()),
                        ("graph", self.net.graph.is_some()),
                        ("cycles", t.cycles.is_some()),
                    ],
                    only,
                )?;
            }
            RunConfig::FlexibleSorter(_) => {
                return Err(Error::invalid(
                    "config",
                    self.net.config.as_deref().unwrap_or("-"),
                    "a network's configuration (a flexible-sorter config runs with `flitforge sort --config`, `rtl --circuit flexible-sorter` and `cosim --circuit flexible-sorter`)",
                ));
            }
            RunConfig::Greedy(_) | RunConfig::Upfal(_) => {
                return Err(Error::invalid(
                    "config",
                    self.net.config.as_deref().unwrap_or("-"),
                    "a network's configuration (a config with an `algorithm` key runs with `flitforge multibutterfly --config`)",
                ));
            }
        }
        match &mut run {
            RunConfig::PrunedButterfly(c) => {
                c.inputs = self.net.inputs.unwrap_or(c.inputs);
                c.seed = t.seed.unwrap_or(c.seed);
                c.body_bits = body_bits.or(c.body_bits);
                t.apply(&mut c.traffic)?;
            }
            RunConfig::SortingFatTree(c) => {
                c.inputs = self.net.inputs.unwrap_or(c.inputs);
                c.seed = t.seed.unwrap_or(c.seed);
                c.body_bits = body_bits.or(c.body_bits);
                t.apply(&mut c.traffic)?;
            }
            _ => {}
        }
        Ok(run)
    }

    /// Applies the network, switch and traffic flags to a VC network's configuration.
    fn apply_network(&self, c: &mut SimConfig) -> Result<()> {
        let (n, t) = (self.net, self.traffic);
        let s = self.switch.cloned().unwrap_or_default();
        macro_rules! set {
            ($src:expr; $($field:ident),*) => { $(if let Some(v) = $src.$field { c.$field = v; })* };
        }
        set!(n; inputs, dilation, radix, degree);
        if let Some(g) = &n.graph {
            c.graph = Some(g.clone());
        }
        set!(s; vcs, vc_depth, flits, flit_bits, max_attempts, retry_backoff, watchdog);
        set!(t; seed);
        if let Some(v) = t.cycles {
            c.cycles = Some(v);
        }
        if let Some(v) = s.switch_queue {
            c.switch_queue = Some(v);
        }
        if let Some(m) = &s.mode {
            c.mode = parse_name::<FlowControl>("mode", m, "wormhole|store-forward|drop")?;
        }
        if let Some(m) = &s.link_bandwidth {
            c.link_bandwidth = parse_name::<LinkBandwidth>("link-bandwidth", m, "per-vc|one")?;
        }
        if let Some(m) = &s.backpressure {
            c.backpressure =
                parse_name::<Backpressure>("backpressure", m, "combinational|registered")?;
        }
        if let Some(m) = &s.lane_choice {
            c.lane_choice = parse_name::<LaneChoice>("lane-choice", m, "lowest|random")?;
        }
        if let Some(m) = &s.middle {
            c.middle =
                match m.as_str() {
                    "random" => Middle::Random,
                    col => Middle::Column(col.parse().map_err(|_| {
                        Error::invalid("middle", col, "\"random\" or a column number")
                    })?),
                };
        }
        t.apply(&mut c.traffic)?;
        let given = |key: &str| match key {
            "dilation" => n.dilation.is_some(),
            "radix" => n.radix.is_some(),
            "degree" => n.degree.is_some(),
            "graph" => n.graph.is_some(),
            "lane_choice" => s.lane_choice.is_some(),
            "middle" => s.middle.is_some(),
            "switch_queue" => s.switch_queue.is_some(),
            "max_attempts" => s.max_attempts.is_some(),
            "retry_backoff" => s.retry_backoff.is_some(),
            _ => false,
        };
        for (key, needs) in c.inapplicable() {
            if given(key) {
                let flag = key.replace('_', "-");
                return Err(Error::invalid(
                    &flag,
                    "given",
                    format!("no value: --{flag} applies only with {needs}"),
                ));
            }
        }
        Ok(())
    }
}
