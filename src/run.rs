//! One run of any network or circuit flitforge models, and the one report every run writes.
//!
//! A report (schema 1, `docs/report-schema.md`) has the same common keys at the same paths for
//! every topology: `schema`, `flitforge`, `topology`, `config`, `config_hash`, `seed`,
//! `messages{offered, delivered, dropped, in_flight}`, `makespan_cycles`, `latency` (or
//! `null` where the model does not time single messages), and what only this topology reports
//! under `details`. A report's `config` is exactly what a config file accepts
//! ([`RunConfig::from_value`]): it re-runs to the same report.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::multibutterfly::greedy::GreedyOutcome;
use crate::multibutterfly::run::GreedyRunConfig;
use crate::multibutterfly::upfal::{UpfalConfig, UpfalReport};
use crate::pruned::{PrunedConfig, RouteReport};
use crate::sorter::SortConfig;
use crate::sorter::circuit::SortRun;
use crate::sorter::fattree::{FatTreeConfig, FatTreeReport};
use crate::stats::{self, Summary};
use crate::traffic::Traffic;
use serde::Serialize;
use serde_json::{Value, json};

/// The report schema's version; it changes only when a common key changes meaning or place.
pub const SCHEMA: u32 = 1;

/// Topologies and circuits a report can describe, as `topology` spells them.
pub const TOPOLOGIES: &[&str] = &[
    "butterfly",
    "dilated",
    "splitter",
    "benes",
    "kary-fly",
    "mesh",
    "torus",
    "wrapped-butterfly",
    "random-graph",
    "graph",
    "modified-splitter",
    "pruned-butterfly",
    "sorting-fat-tree",
    "flexible-sorter",
];

/// What a report's `config` holds: a whole run, selected by its `topology` key.
#[derive(Clone, Debug, PartialEq)]
pub enum RunConfig {
    /// Butterfly, dilated, splitter and Beneš networks and the k-ary n-fly, of
    /// virtual-channel switches ([CMS], [LM]).
    Network(SimConfig),
    /// The pruned butterfly's stage algorithm on bit-serial switches ([BB] §3).
    PrunedButterfly(PrunedConfig),
    /// The sorting fat-tree's eight steps at the message level ([BB] §4.2–4.3).
    SortingFatTree(FatTreeConfig),
    /// One sort on the flexible sorter ([BB] §4.1).
    FlexibleSorter(SortConfig),
    /// Greedy store-and-forward routing of [LM] §IV around faults (`algorithm = "greedy"`).
    Greedy(GreedyRunConfig),
    /// Upfal's wave algorithm on a random multibutterfly, [LM] §II-A (`algorithm = "upfal"`).
    Upfal(UpfalConfig),
}

impl RunConfig {
    /// The files the run reads besides its configuration: a graph network's graph, a
    /// message list or a file of paths.
    pub fn input_files(&self) -> Vec<&str> {
        let (graph, traffic) = match self {
            RunConfig::Network(c) => (c.graph.as_deref(), Some(&c.traffic)),
            RunConfig::PrunedButterfly(c) => (None, Some(&c.traffic)),
            RunConfig::SortingFatTree(c) => (None, Some(&c.traffic)),
            _ => (None, None),
        };
        graph
            .into_iter()
            .chain(traffic.and_then(Traffic::file))
            .collect()
    }

    /// Reads a config file: TOML, or JSON (a report's `config` as it stands) when the file
    /// name ends in `.json` or the text starts with `{`.
    pub fn from_file(path: &str) -> Result<Self> {
        Self::from_value(read_config_file(path)?, path)
    }

    /// Reads a configuration from its JSON form; `algorithm` (`greedy` or `upfal`) selects one
    /// of [LM]'s packet routings, otherwise `topology` selects the run (default `butterfly`);
    /// missing keys take their defaults, unknown keys and keys that have no effect on the run
    /// are refused, naming `source`.
    pub fn from_value(mut value: Value, source: &str) -> Result<Self> {
        let Some(map) = value.as_object_mut() else {
            return Err(Error::parse(
                source,
                "expected a table of configuration keys",
            ));
        };
        match map.remove("algorithm") {
            None => {}
            Some(Value::String(a)) if a == "greedy" => {
                return Ok(RunConfig::Greedy(GreedyRunConfig::from_value(
                    value, source,
                )?));
            }
            Some(Value::String(a)) if a == "upfal" => {
                if let Some(t) = map.remove("topology").filter(|t| t != "splitter") {
                    return Err(Error::invalid(
                        "topology",
                        t,
                        "splitter with algorithm upfal",
                    ));
                }
                return Ok(RunConfig::Upfal(
                    serde_json::from_value(value).map_err(|e| Error::parse(source, e))?,
                ));
            }
            Some(other) => return Err(Error::invalid("algorithm", other, "greedy|upfal")),
        }
        let topology = match map.get("topology") {
            None => "butterfly".to_string(),
            Some(Value::String(t)) => t.clone(),
            Some(other) => return Err(Error::invalid("topology", other, TOPOLOGIES.join("|"))),
        };
        if matches!(
            topology.as_str(),
            "pruned-butterfly" | "sorting-fat-tree" | "flexible-sorter"
        ) {
            map.remove("topology");
        }
        let typed = |e: serde_json::Error| Error::parse(source, e);
        Ok(match topology.as_str() {
            "pruned-butterfly" => {
                RunConfig::PrunedButterfly(serde_json::from_value(value).map_err(typed)?)
            }
            "sorting-fat-tree" => {
                RunConfig::SortingFatTree(serde_json::from_value(value).map_err(typed)?)
            }
            "flexible-sorter" => {
                RunConfig::FlexibleSorter(serde_json::from_value(value).map_err(typed)?)
            }
            "butterfly" | "dilated" | "splitter" | "benes" | "kary-fly" | "mesh" | "torus"
            | "wrapped-butterfly" | "random-graph" | "graph" => {
                RunConfig::Network(SimConfig::from_value(value, source)?)
            }
            other => return Err(Error::invalid("topology", other, TOPOLOGIES.join("|"))),
        })
    }

    /// The configuration as a report records it (keys in alphabetical order).
    pub fn to_value(&self) -> Value {
        let (topology, rest) = match self {
            RunConfig::Network(c) => return c.to_value(),
            RunConfig::Greedy(c) => return c.to_value(),
            RunConfig::Upfal(c) => {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                v["algorithm"] = Value::from("upfal");
                v["topology"] = Value::from("splitter");
                return v;
            }
            RunConfig::PrunedButterfly(c) => ("pruned-butterfly", serde_json::to_value(c)),
            RunConfig::SortingFatTree(c) => ("sorting-fat-tree", serde_json::to_value(c)),
            RunConfig::FlexibleSorter(c) => ("flexible-sorter", serde_json::to_value(c)),
        };
        let mut out = serde_json::Map::new();
        out.insert("topology".into(), Value::from(topology));
        if let Ok(Value::Object(map)) = rest {
            out.extend(map);
        }
        Value::Object(out)
    }

    /// The topology or circuit, as the CLI and reports spell it.
    pub fn topology(&self) -> &'static str {
        match self {
            RunConfig::Network(c) => c.topology.name(),
            RunConfig::PrunedButterfly(_) => "pruned-butterfly",
            RunConfig::SortingFatTree(_) => "sorting-fat-tree",
            RunConfig::FlexibleSorter(_) => "flexible-sorter",
            RunConfig::Greedy(c) => c.topology.name(),
            RunConfig::Upfal(_) => "splitter",
        }
    }

    /// The hash generated files and reports name (16 hex digits).
    pub fn config_hash(&self) -> String {
        crate::config::config_hash(&self.to_value())
    }
}

/// Parses a TOML or JSON config file into its JSON form.
pub fn read_config_file(path: &str) -> Result<Value> {
    let text = crate::limits::read_input_text(path)?;
    if path.ends_with(".json") || text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|e| Error::parse(path, e))
    } else {
        let table: toml::Table = toml::from_str(&text).map_err(|e| Error::parse(path, e))?;
        serde_json::to_value(table).map_err(|e| Error::parse(path, e))
    }
}

/// Message counts every report has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Messages {
    /// Messages the traffic created (words, for a sorter).
    pub offered: u64,
    /// Messages that reached their destination.
    pub delivered: u64,
    /// Messages given up (drop mode); 0 where nothing can be dropped.
    pub dropped: u64,
    /// Messages still in the network or at their source when the run ended.
    pub in_flight: u64,
}

/// The report of one run (schema 1). Key order is fixed, so equal runs give equal bytes.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub schema: u32,
    /// The flitforge version that wrote it.
    pub flitforge: &'static str,
    pub topology: &'static str,
    pub config: Value,
    pub config_hash: String,
    pub seed: u64,
    pub messages: Messages,
    /// Cycle by which every delivered message had arrived (the routing time of a batch).
    pub makespan_cycles: u64,
    /// Release to tail arrival over delivered messages, where the model times messages.
    pub latency: Option<Summary>,
    /// What only this topology reports (`docs/report-schema.md`).
    pub details: Value,
}

impl RunReport {
    fn new(config: &RunConfig, seed: u64) -> Self {
        RunReport {
            schema: SCHEMA,
            flitforge: env!("CARGO_PKG_VERSION"),
            topology: config.topology(),
            config: config.to_value(),
            config_hash: config.config_hash(),
            seed,
            messages: Messages::default(),
            makespan_cycles: 0,
            latency: None,
            details: Value::Null,
        }
    }

    /// A run of a virtual-channel network.
    pub fn network(report: &stats::Report) -> Self {
        let config = RunConfig::Network(report.config.clone());
        let mut details = json!({
            "injected": report.injected,
            "waiting": report.waiting,
            "retried": report.retried,
            "discarded_worms": report.discarded_worms,
            "cycles": report.cycles,
            "network_latency": report.network_latency,
            "throughput": report.throughput,
            "stalled_cycles": report.stalled_cycles,
            "link_utilisation": report.link_utilisation,
        });
        if let Some(p) = &report.paths {
            details["congestion"] = json!(p.congestion);
            details["dilation"] = json!(p.dilation);
        }
        if let Some(records) = &report.messages {
            details["per_message"] = serde_json::to_value(records).unwrap_or_default();
        }
        RunReport {
            messages: Messages {
                offered: report.offered,
                delivered: report.delivered,
                dropped: report.dropped,
                in_flight: report.in_flight + report.waiting,
            },
            makespan_cycles: report.makespan_cycles,
            latency: Some(report.latency),
            details,
            ..Self::new(&config, report.seed)
        }
    }

    /// A pruned-butterfly run.
    pub fn pruned(config: &PrunedConfig, report: &RouteReport) -> Self {
        let run = RunConfig::PrunedButterfly(config.clone());
        RunReport {
            messages: counts(report.messages, report.delivered),
            makespan_cycles: report.routing_cycles,
            details: without(report, &["messages", "delivered", "routing_cycles"]),
            ..Self::new(&run, config.seed)
        }
    }

    /// A sorting fat-tree run.
    pub fn fat_tree(config: &FatTreeConfig, report: &FatTreeReport, bits: u32) -> Self {
        let run = RunConfig::SortingFatTree(config.clone());
        let mut details = without(report, &["messages", "delivered", "routing_cycles"]);
        details["bits"] = Value::from(bits);
        RunReport {
            messages: counts(report.messages, report.delivered),
            makespan_cycles: report.routing_cycles,
            details,
            ..Self::new(&run, config.seed)
        }
    }

    /// One sort on the flexible sorter: its words are the messages.
    pub fn sorter(config: &SortConfig, run: &SortRun) -> Self {
        let words = u64::from(config.r);
        RunReport {
            messages: Messages {
                offered: words,
                delivered: run.output.len() as u64,
                ..Messages::default()
            },
            makespan_cycles: run.cycles,
            details: json!({ "w": run.w, "phases": run.phases, "output": run.output }),
            ..Self::new(&RunConfig::FlexibleSorter(*config), config.seed)
        }
    }

    /// A greedy routing of [LM] §IV: every packet delivered (a stall is a deadlock error).
    pub fn greedy(
        config: &GreedyRunConfig,
        outcome: &GreedyOutcome,
        faults: (usize, usize),
        placements: u32,
    ) -> Self {
        let packets = u64::from(outcome.packets);
        RunReport {
            messages: Messages {
                offered: packets,
                delivered: packets,
                ..Messages::default()
            },
            makespan_cycles: outcome.completion,
            details: json!({
                "faults_placed": faults.0,
                "faults_propagated": faults.1,
                "placements": placements,
                "never_delayed": outcome.never_delayed,
                "never_delayed_percent": stats::round6(outcome.never_delayed_percent()),
                "max_queue": outcome.max_queue,
            }),
            ..Self::new(&RunConfig::Greedy(config.clone()), config.seed)
        }
    }

    /// Upfal's wave algorithm, [LM] §II-A: the makespan is the step of the last delivery.
    pub fn upfal(config: &UpfalConfig, report: &UpfalReport) -> Self {
        let packets = u64::from(config.inputs) * u64::from(config.permutations);
        RunReport {
            messages: Messages {
                offered: packets,
                delivered: u64::from(report.delivered),
                dropped: 0,
                in_flight: packets.saturating_sub(u64::from(report.delivered)),
            },
            makespan_cycles: report.steps,
            details: without(report, &["steps", "delivered"]),
            ..Self::new(&RunConfig::Upfal(*config), config.seed)
        }
    }

    /// Pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}

fn counts(offered: usize, delivered: usize) -> Messages {
    Messages {
        offered: offered as u64,
        delivered: delivered as u64,
        dropped: 0,
        in_flight: offered.saturating_sub(delivered) as u64,
    }
}

fn without(value: &impl Serialize, keys: &[&str]) -> Value {
    let mut v = serde_json::to_value(value).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        for k in keys {
            map.remove(*k);
        }
    }
    v
}
