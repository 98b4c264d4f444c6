//! Flag groups shared by several commands (each flattened where it applies, under its own help
//! heading), and how they become a run's configuration: flags override a config file, which
//! overrides the command's defaults; a flag with no effect on the chosen run is refused (exit
//! 2, naming it) and never recorded.

use clap::Args;
use flitforge::pruned::Engine;
use flitforge::sorter::{SortConfig, SorterParams};
use flitforge::traffic::{Destinations, Traffic};
use flitforge::{Error, Result};
use serde::de::DeserializeOwned;

mod resolve;

pub use resolve::RunFlags;

/// Parses a kebab-case enum value the way config files and reports spell it.
pub fn parse_name<T: DeserializeOwned>(flag: &str, value: &str, allowed: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(value.to_string()))
        .map_err(|_| Error::invalid(flag, value, allowed))
}

/// The first flag given (`true`) is refused: it has no effect here; `only` says where it has.
pub fn refuse(flags: &[(&str, bool)], only: &str) -> Result<()> {
    match flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(Error::invalid(
            flag,
            "given",
            format!("no value: --{flag} applies only {only}"),
        )),
        None => Ok(()),
    }
}

/// Which network, from a config file or flags.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Network")]
pub struct NetworkArgs {
    /// A run's configuration as TOML, or as JSON (a report's "config", as written); unknown
    /// keys and keys with no effect on the run are refused; flags override it; a file that
    /// names no traffic runs the command's (and its cycles, unless it names them).
    /// [default: none]
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// butterfly, dilated, splitter, benes: networks of virtual-channel switches ([CMS],
    /// [LM]); doubled-butterfly: two butterflies in series, worms through a middle column
    /// ([CMS] §3.1's two passes); kary-fly: the k-ary n-fly of the same switches (k terminals per first- and
    /// last-stage switch, contended output ports); mesh, torus, wrapped-butterfly,
    /// random-graph, graph: networks whose worms follow paths (dimension order, bit fixing,
    /// shortest, or given with --paths; [CMS] §1.1, [SV], [CMSV]); pruned-butterfly: the stage
    /// algorithm on bit-serial switches ([BB] §3); sorting-fat-tree: the eight-step algorithm
    /// at the message level ([BB] §4.2-4.3).
    #[arg(long, value_parser = ["butterfly", "dilated", "splitter", "benes", "doubled-butterfly", "kary-fly", "mesh", "torus", "wrapped-butterfly", "random-graph", "graph", "pruned-butterfly", "sorting-fat-tree"])]
    pub topology: Option<String>,
    /// Inputs n: a power of two from 2 to 2^20 (kary-fly: a power of the radix; mesh, torus:
    /// k * k switches, k up to 64; wrapped-butterfly: n columns, from 4; random-graph: 3 to
    /// 4096 switches; graph: its file's switches; pruned-butterfly: a power of 4 from 16 to
    /// 65536; sorting-fat-tree: from 16).
    #[arg(long, value_name = "N")]
    pub inputs: Option<u32>,
    /// Multiplicity d of dilated and splitter networks, 1..=8.
    #[arg(long, value_name = "D")]
    pub dilation: Option<u32>,
    /// kary-fly: switch radix k, a power of two from 2 to 16 (n = log_k inputs stages).
    #[arg(long, value_name = "K")]
    pub radix: Option<u32>,
    /// random-graph: links out of every switch, 1..=4 (a ring plus random chords).
    #[arg(long, value_name = "D")]
    pub degree: Option<u32>,
    /// graph: the network, a JSON {"nodes": N, "links": [[tail, head], ...]} or one
    /// `tail head` pair per line; its messages come from --paths. [default: none]
    #[arg(long, value_name = "FILE")]
    pub graph: Option<String>,
}

/// The virtual-channel switches and their flow control.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Switches (butterfly, dilated, splitter, benes, kary-fly)")]
pub struct SwitchArgs {
    /// Virtual channels per link, B, 1..=16 ([CMS] §1.1).
    #[arg(long, value_name = "B")]
    pub vcs: Option<u32>,
    /// Flits one VC register holds, 1..=64 (store-forward raises it to L).
    #[arg(long, value_name = "K")]
    pub vc_depth: Option<u32>,
    /// Flits per message, L, 1..=4096 (store-forward: 1..=255).
    #[arg(long, value_name = "L")]
    pub flits: Option<u32>,
    /// Bits per flit, W: at least the header (lg n destination bits, twice that on a Beneš
    /// network), at most 256.
    #[arg(long, value_name = "W")]
    pub flit_bits: Option<u32>,
    /// Flow control: a blocked header waits (wormhole), whole packets hop (store-forward), or
    /// the worm is discarded and retried after a negative acknowledgement (drop).
    #[arg(long, value_parser = ["wormhole", "store-forward", "drop"])]
    pub mode: Option<String>,
    /// Flits per link per cycle: one per VC (per-vc) or one in all (one, [CMS] §1.4).
    #[arg(long, value_parser = ["per-vc", "one"])]
    pub link_bandwidth: Option<String>,
    /// How a switch learns that the VC it feeds has room: in the same cycle (combinational,
    /// the papers' flit step; the clock period grows with the levels) or from registers set
    /// at the previous edge (registered: hardware that closes timing at any size; depth 1 then
    /// carries a flit every other cycle per VC).
    #[arg(long, value_parser = ["combinational", "registered"])]
    pub backpressure: Option<String>,
    /// Dilated and splitter networks: which free edge of a direction a header takes.
    #[arg(long, value_parser = ["lowest", "random"])]
    pub lane_choice: Option<String>,
    /// Beneš network and doubled butterfly: the middle column, "random" per message or one
    /// column for all.
    #[arg(long, value_name = "random|COLUMN")]
    pub middle: Option<String>,
    /// store-forward: per-switch admission bound A, 1..=65535 ([LM] §IV's rule).
    /// [default: none, B packets per link]
    #[arg(long, value_name = "A")]
    pub switch_queue: Option<u32>,
    /// drop: attempts per message before it is reported dropped, 1..=1000000.
    #[arg(long, value_name = "K")]
    pub max_attempts: Option<u32>,
    /// drop: a retry starts after a uniformly random 0..=K cycles of back-off, K <= 1000000.
    #[arg(long, value_name = "K")]
    pub retry_backoff: Option<u64>,
    /// Cycles without any flit moving before the run stops with a named deadlock,
    /// 1..=2^40.
    #[arg(long, value_name = "K")]
    pub watchdog: Option<u64>,
}

impl SwitchArgs {
    pub fn given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("vcs", self.vcs.is_some()),
            ("vc-depth", self.vc_depth.is_some()),
            ("flits", self.flits.is_some()),
            ("flit-bits", self.flit_bits.is_some()),
            ("mode", self.mode.is_some()),
            ("link-bandwidth", self.link_bandwidth.is_some()),
            ("backpressure", self.backpressure.is_some()),
            ("lane-choice", self.lane_choice.is_some()),
            ("middle", self.middle.is_some()),
            ("switch-queue", self.switch_queue.is_some()),
            ("max-attempts", self.max_attempts.is_some()),
            ("retry-backoff", self.retry_backoff.is_some()),
            ("watchdog", self.watchdog.is_some()),
        ]
    }
}

/// What the message set is.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Traffic")]
pub struct TrafficArgs {
    /// The message set (batch patterns) or stream (bernoulli, lfsr: need --rate and
    /// --cycles). lfsr is the on-chip generator of `flitforge fpga`.
    #[arg(long, value_parser = ["random-permutation", "transpose", "bit-reversal", "identity", "uniform", "q-relation", "bernoulli", "file", "hot-region", "lfsr", "paths"])]
    pub traffic: Option<String>,
    /// lfsr traffic: where messages go. [default: uniform]
    #[arg(long, value_parser = ["uniform", "transpose", "bit-reversal", "identity", "random-permutation"])]
    pub destinations: Option<String>,
    /// hot-region traffic: every input sends to a leaf drawn from 0..R, R from 1 to the
    /// number of inputs. [default: 4]
    #[arg(long, value_name = "R")]
    pub region: Option<u32>,
    /// bernoulli and lfsr traffic: injection probability per input per cycle, in [0, 1].
    #[arg(long, value_name = "P")]
    pub rate: Option<f64>,
    /// uniform: messages per input; q-relation: per input and output; 1..=1024.
    /// [default: 1]
    #[arg(long, value_name = "Q")]
    pub q: Option<u32>,
    /// file traffic: JSON message list [{"source": 0, "destination": 5, "release": 0}, ...].
    /// [default: none, required]
    #[arg(long, value_name = "FILE.json")]
    pub messages: Option<String>,
    /// Graph networks: one message per given path, a JSON list of switch sequences
    /// [[0, 1, 5], ...] or of {"nodes": [...]} / {"links": [...]} objects with an optional
    /// "release" (implies --traffic paths); each edge-simple, of at most 65 535 links.
    /// [default: none]
    #[arg(long, value_name = "FILE.json")]
    pub paths: Option<String>,
    /// Cycles to simulate, 1 to 2^40: required for bernoulli and lfsr traffic, a limit for
    /// batch traffic.
    #[arg(long, value_name = "C")]
    pub cycles: Option<u64>,
    /// Seed of every random choice (traffic, wiring, Beneš middles, back-off, LFSRs).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// Every file a network's command line reads, for the checks that keep its outputs off
/// them: those its flags name (its configuration, graph, messages and paths) and those its
/// `--config` file names (a graph, a message list, paths).
pub fn run_input_files(net: &NetworkArgs, traffic: &TrafficArgs) -> Result<Vec<String>> {
    let mut files: Vec<String> = [&net.config, &net.graph, &traffic.messages, &traffic.paths]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(path) = &net.config {
        let run = flitforge::run::RunConfig::from_file(path)?;
        files.extend(run.input_files().into_iter().map(String::from));
    }
    Ok(files)
}

impl TrafficArgs {
    /// Applies the traffic flags to `traffic`.
    fn apply(&self, traffic: &mut Traffic) -> Result<()> {
        let destinations = |d: &str| -> Result<Destinations> {
            parse_name("destinations", d, &Destinations::NAMES.join("|"))
        };
        let configured_q = match traffic {
            Traffic::Uniform { q } | Traffic::QRelation { q } => *q,
            _ => 1,
        };
        let named = match (&self.traffic, &self.paths) {
            (None, Some(_)) => Some("paths".to_string()),
            (t, _) => t.clone(),
        };
        if let Some(t) = &named {
            let needs = |flag: &str, what: &str| Error::invalid(flag, "none", what);
            *traffic = match t.as_str() {
                "bernoulli" => Traffic::Bernoulli {
                    rate: self.rate.ok_or_else(|| {
                        needs("rate", "--rate P in [0, 1] with --traffic bernoulli")
                    })?,
                },
                "lfsr" => Traffic::Lfsr {
                    rate: self
                        .rate
                        .ok_or_else(|| needs("rate", "--rate P in [0, 1] with --traffic lfsr"))?,
                    destinations: match &self.destinations {
                        Some(d) => destinations(d)?,
                        None => Destinations::default(),
                    },
                },
                "uniform" => Traffic::Uniform {
                    q: self.q.unwrap_or(configured_q),
                },
                "q-relation" => Traffic::QRelation {
                    q: self.q.unwrap_or(configured_q),
                },
                "hot-region" => Traffic::HotRegion {
                    region: self.region.unwrap_or(4),
                },
                "file" => Traffic::File {
                    path: self.messages.clone().ok_or_else(|| {
                        needs("messages", "--messages FILE.json with --traffic file")
                    })?,
                },
                "paths" => Traffic::Paths {
                    path: self
                        .paths
                        .clone()
                        .ok_or_else(|| needs("paths", "--paths FILE.json with --traffic paths"))?,
                },
                other => serde_json::from_value(serde_json::json!({ "pattern": other }))
                    .map_err(|_| Error::invalid("traffic", other, Traffic::NAMES.join("|")))?,
            };
        } else {
            match traffic {
                Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. } => {
                    *rate = self.rate.unwrap_or(*rate)
                }
                Traffic::Uniform { q } | Traffic::QRelation { q } => *q = self.q.unwrap_or(*q),
                Traffic::File { path } => {
                    if let Some(p) = &self.messages {
                        path.clone_from(p)
                    }
                }
                Traffic::Paths { path } => {
                    if let Some(p) = &self.paths {
                        path.clone_from(p)
                    }
                }
                Traffic::HotRegion { region } => *region = self.region.unwrap_or(*region),
                _ => {}
            }
            if let (
                Traffic::Lfsr {
                    destinations: d, ..
                },
                Some(given),
            ) = (&mut *traffic, &self.destinations)
            {
                *d = destinations(given)?;
            }
        }
        let pattern = traffic.name();
        for (flag, given, applies) in [
            (
                "rate",
                self.rate.is_some(),
                matches!(pattern, "bernoulli" | "lfsr"),
            ),
            (
                "destinations",
                self.destinations.is_some(),
                pattern == "lfsr",
            ),
            (
                "q",
                self.q.is_some(),
                matches!(pattern, "uniform" | "q-relation"),
            ),
            ("messages", self.messages.is_some(), pattern == "file"),
            ("paths", self.paths.is_some(), pattern == "paths"),
            ("region", self.region.is_some(), pattern == "hot-region"),
        ] {
            if given && !applies {
                let only = match flag {
                    "rate" => "with --traffic bernoulli or lfsr",
                    "destinations" => "with --traffic lfsr",
                    "q" => "with --traffic uniform or q-relation",
                    "messages" => "with --traffic file",
                    "paths" => "with --traffic paths",
                    _ => "with --traffic hot-region",
                };
                return Err(Error::invalid(
                    flag,
                    format!("given with traffic {pattern}"),
                    format!("no value: --{flag} applies only {only}"),
                ));
            }
        }
        Ok(())
    }
}

/// The bit-serial networks' word width.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Bit-serial networks (pruned-butterfly, sorting-fat-tree)")]
pub struct SerialArgs {
    /// Message body (pruned-butterfly) or word (sorting-fat-tree) bits b, 1..=64; the body
    /// carries the message index. [default: 2 lg N]
    #[arg(long, value_name = "B")]
    pub body_bits: Option<u32>,
}

/// The flexible sorter's parameters ([BB] §4.1).
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Flexible sorter")]
pub struct SorterArgs {
    /// Rings (words per column) s, a power of two from 2 to 64. [default: 8]
    #[arg(long = "s", value_name = "S")]
    pub s: Option<u32>,
    /// Capacity l in words: s times a power of two up to 64. [default: 8 s]
    #[arg(long = "l", value_name = "L")]
    pub l: Option<u32>,
    /// Words to sort r, 1..=l; the last column is padded with dummies. [default: l]
    #[arg(long = "r", value_name = "R")]
    pub r: Option<u32>,
    /// Key bits per word b, 1..=32. [default: 8]
    #[arg(long, value_name = "B")]
    pub bits: Option<u32>,
}

impl SorterArgs {
    /// Whether any sorter flag was given.
    pub fn given(&self) -> bool {
        self.s.is_some() || self.l.is_some() || self.r.is_some() || self.bits.is_some()
    }

    /// The sort these flags describe, starting from `base` (a config file's, or the
    /// defaults): a flag overrides its key; without --l, l follows a given --s (8 s) only when
    /// `base` is the default, and r follows l only when neither base nor flag set it.
    pub fn config(
        &self,
        base: SortConfig,
        seed: Option<u64>,
        from_file: bool,
    ) -> Result<SortConfig> {
        let s = self.s.unwrap_or(base.params.s);
        let l = match self.l {
            Some(l) => l,
            None if self.s.is_some() && !from_file => s.saturating_mul(8),
            None => base.params.l,
        };
        let r = match self.r {
            Some(r) => r,
            None if from_file => base.r,
            None => l,
        };
        let c = SortConfig {
            params: SorterParams {
                s,
                l,
                bits: self.bits.unwrap_or(base.params.bits),
            },
            r,
            seed: seed.unwrap_or(base.seed),
        };
        c.validate()?;
        Ok(c)
    }
}

/// The pruned butterfly's engine flag.
pub fn engine(name: &str) -> Result<Engine> {
    parse_name::<Engine>("engine", name, "cycle|golden")
}
