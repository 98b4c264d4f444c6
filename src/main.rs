//! The `flitforge` command: a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use flitforge::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth, Middle, SimConfig};
use flitforge::cosim::{self, Simulator};
use flitforge::pruned::{Engine, PrunedConfig};
use flitforge::sorter::{SortConfig, SorterParams};
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;
use flitforge::wave::{ScopeFilter, VcdWriter};
use flitforge::{Error, Result, Simulation};
use serde::de::DeserializeOwned;
use std::process::ExitCode;

/// Routing-network switches modelled cycle by cycle, the way hardware builds them.
///
/// Every switch is a clocked state machine (per-virtual-channel flit registers, valid bits,
/// allocation state) advanced by a two-phase clock. Runs are reproducible from their seed.
#[derive(Parser)]
#[command(name = "flitforge", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a network cycle by cycle and report latency, throughput and drops.
    ///
    /// Flags override a --config file, which overrides the defaults (64-input butterfly,
    /// B = 2, L = 4, W = 32, random permutation, wormhole). Examples:
    ///   flitforge sim --inputs 1024 --traffic random-permutation --seed 1 --json out.json
    ///   flitforge sim --mode drop --vcs 1 --traffic uniform --q 4 --retry-backoff 8
    ///   flitforge sim --traffic bernoulli --rate 0.3 --cycles 10000
    ///   flitforge sim --topology benes --middle 5 --traffic transpose
    #[command(verbatim_doc_comment)]
    Sim(SimArgs),
    /// Run the built-in default (64-input butterfly, B = 2, L = 4, random permutation,
    /// wormhole) and print a readable summary.
    Demo {
        /// Also write the statistics as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Also write the waveform of every switch as VCD.
        #[arg(long, value_name = "FILE.vcd")]
        vcd: Option<String>,
    },
    /// Print a topology's switch and link counts and, for splitter-based networks, the
    /// measured (α, β) expansion of each level's splitters (seed 002 §I-C).
    ///
    /// Exact by enumeration for splitters of at most 20 inputs, an upper bound from sampled
    /// and greedily grown sets above that.
    Topology {
        #[command(flatten)]
        args: SimArgs,
        /// Largest input set, as a fraction α of a splitter's inputs (default 0.25).
        #[arg(long, value_name = "ALPHA")]
        alpha: Option<f64>,
    },
    /// Generate the Verilog of a network (one module per switch kind, the network top, a
    /// testbench replaying the model's injections, a FuseSoC core) and print the file list.
    Rtl {
        #[command(flatten)]
        args: SimArgs,
        /// Directory to write into (created if missing).
        #[arg(long, value_name = "DIR", default_value = "flitforge-rtl")]
        out: String,
    },
    /// Run the model and the generated Verilog under a simulator and compare their waveforms
    /// signal by signal and cycle by cycle. Exit 0 when identical, 1 at the first divergence.
    Cosim {
        #[command(flatten)]
        args: SimArgs,
        /// Simulator(s) to run.
        #[arg(long, default_value = "iverilog", value_parser = ["iverilog", "verilator", "both"])]
        simulator: String,
        /// Keep the generated files, waveforms and simulator output in DIR/<simulator>.
        #[arg(long, value_name = "DIR")]
        keep: Option<String>,
    },
    /// Regenerate the reference Verilog in rtl/ and the reference model waveforms in waves/
    /// (a test fails on any byte difference until they are regenerated and committed).
    Reference {
        /// Repository root to write under.
        #[arg(long, default_value = ".", value_name = "DIR")]
        root: String,
    },
    /// Run a paper's experiment and write CSV, Markdown or text summaries and SVG charts.
    ///
    /// Examples:
    ///   flitforge experiment leighton-maggs --trials 500 --seed 1 --out lm
    ///   flitforge experiment fault-tolerance --sizes 64,256,1024,4096 --out ft
    ///   flitforge experiment pruned-butterfly --sizes 16,64,256,1024 --seeds 3 --out results
    ///   flitforge experiment flexible-sorter --out results
    #[command(verbatim_doc_comment)]
    Experiment {
        #[command(subcommand)]
        which: experiments::ExperimentKind,
    },
    /// Place random faults on a multibutterfly-family network and propagate them (seed 002
    /// §III-A and §IV): the experiments' "both links" rule, or the theory's erasure and
    /// "half the links" rules with the inputs and outputs that survive against Theorem 3.4.
    ///
    /// Examples:
    ///   flitforge faults --faults 1000 --seed 3
    ///   flitforge faults --network splitter --d 5 --inputs 1024 --faults 40 --rules theory --alpha 0.125 --beta 4
    #[command(verbatim_doc_comment)]
    Faults(seed002::FaultArgs),
    /// Route one problem on a multibutterfly-family network: seed 002 §IV's greedy
    /// store-and-forward (default) or Upfal's wave algorithm (§II-A, --algorithm upfal).
    ///
    /// Examples:
    ///   flitforge multibutterfly --problem 10T --faults 100 --seed 2
    ///   flitforge multibutterfly --network butterfly --problem 1T
    ///   flitforge multibutterfly --algorithm upfal --inputs 256 --d 4 --permutations 2
    #[command(verbatim_doc_comment)]
    Multibutterfly(seed002::RouteArgs),
    /// Sort r random words on the cycle-level flexible sorter of seed 001 §4.1 (Theorem 2) and
    /// report the cycles; the output is checked against a software sort.
    ///
    /// Example (s = 8 rings of l/s = 8 cells, 32 words of 8 bits, waveform):
    ///   flitforge sort --s 8 --l 64 --r 32 --bits 8 --seed 1 --vcd sort.vcd
    #[command(verbatim_doc_comment)]
    Sort {
        #[command(flatten)]
        sorter: SorterArgs,
        /// Seed of the random words.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write every register (cells, loop closure, sorter, Omega switches, controller) as VCD.
        #[arg(long, value_name = "FILE.vcd")]
        vcd: Option<String>,
        /// Write the result as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
    },
    /// Build the network for an iCE40 board: a traffic generator at every input and a checker
    /// at every output on chip, the run's counters printed over the UART, through yosys,
    /// nextpnr-ice40 and icepack to a bitstream; fpga.json has LUTs, flip-flops, logic cells,
    /// Fmax, whether it fits, and the model's prediction of the status line.
    ///
    /// Defaults: 8-input butterfly, B = 2, L = 4, W = 8, registered back-pressure, on-chip
    /// traffic (--traffic lfsr) at rate 0.25 with uniform destinations for 100 000 cycles.
    /// Examples:
    ///   flitforge fpga --inputs 8 --vcs 2 --flits 4 --flit-bits 8 --backpressure registered --device hx8k --out build/fpga
    ///   flitforge fpga --inputs 4 --cycles 2000 --simulate iverilog --out build/fpga4
    ///   flitforge fpga --largest --device all --out build/largest
    #[command(verbatim_doc_comment)]
    Fpga(fpga_cli::FpgaArgs),
    /// Measure switch-cycles per second (default: 1024-input butterfly, B = 2, L = 4,
    /// Bernoulli 0.3, 10 000 cycles, wormhole; invariant checks off). With --topology
    /// pruned-butterfly: vertex-cycles per second of the bit-serial network routing a
    /// 1024-leaf random permutation.
    Bench(SimArgs),
}

/// The flexible sorter's parameters (seed 001 §4.1).
#[derive(Args, Clone, Default)]
struct SorterArgs {
    /// Rings (words per column), a power of two from 2 to 64 (default 8).
    #[arg(long = "s", value_name = "S")]
    s: Option<u32>,
    /// Capacity l in words: s times a power of two up to 64 (default 8·s).
    #[arg(long = "l", value_name = "L")]
    l: Option<u32>,
    /// Words to sort, 1..=l (default l); the last column is padded with dummies.
    #[arg(long = "r", value_name = "R")]
    r: Option<u32>,
    /// Key bits per word, 1..=32 (default 8).
    #[arg(long, value_name = "B")]
    bits: Option<u32>,
}

impl SorterArgs {
    fn given(&self) -> bool {
        self.s.is_some() || self.l.is_some() || self.r.is_some() || self.bits.is_some()
    }

    fn config(&self, seed: u64) -> Result<SortConfig> {
        let s = self.s.unwrap_or(8);
        let l = self.l.unwrap_or(s.saturating_mul(8));
        let c = SortConfig {
            params: SorterParams {
                s,
                l,
                bits: self.bits.unwrap_or(8),
            },
            r: self.r.unwrap_or(l),
            seed,
        };
        c.validate()?;
        Ok(c)
    }
}

#[derive(Args, Clone, Default)]
struct SimArgs {
    /// A circuit instead of a network (rtl, cosim): the flexible sorter of seed 001 §4.1,
    /// with --s, --l, --r, --bits and --seed.
    #[arg(long, value_parser = ["flexible-sorter"])]
    circuit: Option<String>,
    #[command(flatten)]
    sorter: SorterArgs,
    /// TOML file with any SimConfig keys (unknown keys are rejected).
    #[arg(long, value_name = "FILE.toml")]
    config: Option<String>,
    /// Network family. The pruned butterfly (seed 001 §3) routes a message set with its
    /// stage algorithm on bit-serial switches and takes only --inputs (a power of 4 from 16
    /// to 65536), --traffic, --seed, --engine, --body-bits, --json and --vcd.
    /// The sorting fat-tree (seed 001 §4.2–4.3) routes a message set at the message level
    /// with the flexible sorter's cycle counts and takes --inputs (a power of two from 16),
    /// --traffic, --seed, --body-bits (word bits b, default 2 lg N) and --json.
    #[arg(long, value_parser = ["butterfly", "dilated", "splitter", "benes", "pruned-butterfly", "sorting-fat-tree"])]
    topology: Option<String>,
    /// Pruned butterfly: move batches bit by bit through the register-level switches (cycle)
    /// or as whole messages through the abstract model with the same cycle counts (golden).
    #[arg(long, value_parser = ["cycle", "golden"])]
    engine: Option<String>,
    /// Pruned butterfly: message body bits b (default 2 lg N; the body carries the message
    /// index).
    #[arg(long, value_name = "B")]
    body_bits: Option<u32>,
    /// Number of inputs n: a power of two from 2 to 2^20.
    #[arg(long, value_name = "N")]
    inputs: Option<u32>,
    /// Multiplicity d of dilated and splitter networks (1..=8).
    #[arg(long, value_name = "D")]
    dilation: Option<u32>,
    /// Virtual channels per link, B (1..=16).
    #[arg(long, value_name = "B")]
    vcs: Option<u32>,
    /// Flits one VC register holds (1..=64; store-and-forward raises it to L).
    #[arg(long, value_name = "K")]
    vc_depth: Option<u32>,
    /// Flits per message, L (1..=4096).
    #[arg(long, value_name = "L")]
    flits: Option<u32>,
    /// Bits per flit, W: at least the header (log2 n destination bits, twice that on a Beneš
    /// network), at most 256.
    #[arg(long, value_name = "W")]
    flit_bits: Option<u32>,
    /// Flow control: a blocked header waits (wormhole), whole packets hop (store-forward), or
    /// the worm is discarded and retried after a negative acknowledgement (drop).
    #[arg(long, value_parser = ["wormhole", "store-forward", "drop"])]
    mode: Option<String>,
    /// Flits per link per cycle: one per VC (per-vc) or one in all (one, seed 000 §1.4).
    #[arg(long, value_parser = ["per-vc", "one"])]
    link_bandwidth: Option<String>,
    /// How a switch learns that the VC it feeds has room: combinationally in the same cycle
    /// (the papers' flit step; the clock period grows with the levels) or from registers set
    /// at the previous edge (hardware that closes timing at any size; depth 1 then carries a
    /// flit every other cycle per VC). Default: combinational.
    #[arg(long, value_parser = ["combinational", "registered"])]
    backpressure: Option<String>,
    /// Which free edge of a direction a header takes on dilated and splitter networks.
    #[arg(long, value_parser = ["lowest", "random"])]
    lane_choice: Option<String>,
    /// Beneš middle column: "random" per message, or a column number for all.
    #[arg(long, value_name = "random|COLUMN")]
    middle: Option<String>,
    /// Store-and-forward: per-switch queue bound A (default: per edge, B packets per link).
    #[arg(long, value_name = "A")]
    switch_queue: Option<u32>,
    /// Drop mode: attempts per message before it is reported dropped.
    #[arg(long, value_name = "K")]
    max_attempts: Option<u32>,
    /// Drop mode: retry after a uniformly random 0..=K cycles of back-off.
    #[arg(long, value_name = "K")]
    retry_backoff: Option<u64>,
    /// Traffic pattern.
    #[arg(long, value_parser = ["random-permutation", "transpose", "bit-reversal", "identity", "uniform", "q-relation", "bernoulli", "file", "hot-region", "lfsr"])]
    traffic: Option<String>,
    /// LFSR traffic (the on-chip generators of `flitforge fpga`): where messages go.
    #[arg(long, value_parser = ["uniform", "transpose", "bit-reversal", "identity", "random-permutation"])]
    destinations: Option<String>,
    /// Hot-region traffic: every input sends to a leaf drawn from 0..R (default 4).
    #[arg(long, value_name = "R")]
    region: Option<u32>,
    /// Bernoulli injection probability per input per cycle, in [0, 1].
    #[arg(long, value_name = "P")]
    rate: Option<f64>,
    /// Messages per input (uniform) or per input and output (q-relation).
    #[arg(long, value_name = "Q")]
    q: Option<u32>,
    /// JSON message list for --traffic file: [{"source": 0, "destination": 5, "release": 0}, ...].
    #[arg(long, value_name = "FILE.json")]
    messages: Option<String>,
    /// Cycles to simulate (required for Bernoulli traffic; batch traffic runs to completion).
    #[arg(long, value_name = "C")]
    cycles: Option<u64>,
    /// Seed of every random choice (traffic, wiring, Beneš middles, back-off, LFSRs).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Cycles without any flit moving before a deadlock is reported.
    #[arg(long, value_name = "K")]
    watchdog: Option<u64>,
    /// Write the statistics (and the full resolved configuration) as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write every register of every switch as a VCD waveform (GTKWave, Surfer).
    #[arg(long, value_name = "FILE.vcd")]
    vcd: Option<String>,
    /// Limit the waveform to some switches: comma-separated globs over scope names
    /// l{level}_c{column}, e.g. "l0_*,l2_c1?".
    #[arg(long, value_name = "PATTERNS", requires = "vcd")]
    vcd_scope: Option<String>,
    /// Include every message's record in the JSON.
    #[arg(long)]
    per_message: bool,
    /// Check every invariant after every cycle (always on in debug builds).
    #[arg(long)]
    check: bool,
}

/// `println!` that ignores a closed pipe (`flitforge ... | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod experiments;
mod fpga_cli;
mod seed001;
mod seed002;

/// Parses a kebab-case enum value the way the config file spells it.
fn parse_name<T: DeserializeOwned>(flag: &str, value: &str, allowed: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(value.to_string()))
        .map_err(|_| Error::invalid(flag, value, allowed))
}

impl SimArgs {
    /// The configuration these flags describe, starting from `base` (or the --config file).
    fn resolve(&self, base: SimConfig) -> Result<SimConfig> {
        let mut c = match &self.config {
            Some(path) => SimConfig::from_toml_file(path)?,
            None => base,
        };
        match self.topology.as_deref() {
            Some("pruned-butterfly") | Some("sorting-fat-tree") | None => {}
            Some(t) => {
                c.topology = parse_name::<TopologyKind>(
                    "topology",
                    t,
                    "butterfly|dilated|splitter|benes|pruned-butterfly",
                )?
            }
        }
        if !self.is_pruned() && !self.is_fat_tree() {
            for (flag, given) in [
                ("engine", self.engine.is_some()),
                ("body-bits", self.body_bits.is_some()),
            ] {
                if given {
                    return Err(Error::invalid(
                        flag,
                        "given",
                        "only with --topology pruned-butterfly",
                    ));
                }
            }
        }
        macro_rules! set {
            ($($field:ident),*) => { $(if let Some(v) = self.$field { c.$field = v; })* };
        }
        set!(
            inputs,
            dilation,
            vcs,
            vc_depth,
            flits,
            flit_bits,
            max_attempts,
            retry_backoff,
            seed,
            watchdog
        );
        if let Some(v) = self.cycles {
            c.cycles = Some(v);
        }
        if let Some(v) = self.switch_queue {
            c.switch_queue = Some(v);
        }
        if let Some(m) = &self.mode {
            c.mode = parse_name::<FlowControl>("mode", m, "wormhole|store-forward|drop")?;
        }
        if let Some(m) = &self.link_bandwidth {
            c.link_bandwidth = parse_name::<LinkBandwidth>("link-bandwidth", m, "per-vc|one")?;
        }
        if let Some(m) = &self.backpressure {
            c.backpressure =
                parse_name::<Backpressure>("backpressure", m, "combinational|registered")?;
        }
        if let Some(m) = &self.lane_choice {
            c.lane_choice = parse_name::<LaneChoice>("lane-choice", m, "lowest|random")?;
        }
        if let Some(m) = &self.middle {
            c.middle =
                match m.as_str() {
                    "random" => Middle::Random,
                    col => Middle::Column(col.parse().map_err(|_| {
                        Error::invalid("middle", col, "\"random\" or a column number")
                    })?),
                };
        }
        let configured_q = match c.traffic {
            Traffic::Uniform { q } | Traffic::QRelation { q } => q,
            _ => 1,
        };
        if let Some(t) = &self.traffic {
            c.traffic = match t.as_str() {
                "bernoulli" => Traffic::Bernoulli {
                    rate: self.rate.ok_or_else(|| {
                        Error::invalid(
                            "rate",
                            "none",
                            "--rate P in [0, 1] with --traffic bernoulli",
                        )
                    })?,
                },
                "lfsr" => Traffic::Lfsr {
                    rate: self.rate.ok_or_else(|| {
                        Error::invalid("rate", "none", "--rate P in [0, 1] with --traffic lfsr")
                    })?,
                    destinations: match &self.destinations {
                        Some(d) => parse_name(
                            "destinations",
                            d,
                            &flitforge::traffic::Destinations::NAMES.join("|"),
                        )?,
                        None => Default::default(),
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
                        Error::invalid(
                            "messages",
                            "none",
                            "--messages FILE.json with --traffic file",
                        )
                    })?,
                },
                other => serde_json::from_value(serde_json::json!({ "pattern": other }))
                    .map_err(|_| Error::invalid("traffic", other, Traffic::NAMES.join("|")))?,
            };
        } else {
            match (&mut c.traffic, self.rate, self.q, &self.messages) {
                (Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. }, Some(r), _, _) => {
                    *rate = r
                }
                (Traffic::Uniform { q } | Traffic::QRelation { q }, _, Some(v), _) => *q = v,
                (Traffic::File { path }, _, _, Some(p)) => path.clone_from(p),
                (Traffic::HotRegion { region }, _, _, _) if self.region.is_some() => {
                    *region = self.region.unwrap_or(*region)
                }
                _ => {}
            }
        }
        if let (None, Traffic::Lfsr { destinations, .. }, Some(d)) =
            (&self.traffic, &mut c.traffic, &self.destinations)
        {
            *destinations = parse_name(
                "destinations",
                d,
                &flitforge::traffic::Destinations::NAMES.join("|"),
            )?;
        }
        let pattern = c.traffic.name();
        let unused = [
            (
                "rate",
                self.rate.is_some() && !matches!(pattern, "bernoulli" | "lfsr"),
                "--traffic bernoulli or lfsr",
            ),
            (
                "destinations",
                self.destinations.is_some() && pattern != "lfsr",
                "--traffic lfsr",
            ),
            (
                "q",
                self.q.is_some() && !matches!(pattern, "uniform" | "q-relation"),
                "--traffic uniform or q-relation",
            ),
            (
                "messages",
                self.messages.is_some() && pattern != "file",
                "--traffic file",
            ),
            (
                "region",
                self.region.is_some() && pattern != "hot-region",
                "--traffic hot-region",
            ),
        ];
        for (flag, ignored, needs) in unused {
            if ignored {
                return Err(Error::invalid(
                    flag,
                    format!("given with traffic {pattern}"),
                    format!("only with {needs}"),
                ));
            }
        }
        Ok(c)
    }
}

impl SimArgs {
    /// Whether these flags select the pruned butterfly.
    fn is_pruned(&self) -> bool {
        self.topology.as_deref() == Some("pruned-butterfly")
    }

    /// Whether these flags select the sorting fat-tree.
    fn is_fat_tree(&self) -> bool {
        self.topology.as_deref() == Some("sorting-fat-tree")
    }

    /// Flags the pruned butterfly and the sorting fat-tree do not take.
    fn refuse_network_flags(&self, selected: &str, allowed: &str) -> Result<()> {
        let unused = [
            ("config", self.config.is_some()),
            ("dilation", self.dilation.is_some()),
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
            ("cycles", self.cycles.is_some()),
            ("watchdog", self.watchdog.is_some()),
            ("per-message", self.per_message),
            ("check", self.check),
        ];
        match unused.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(Error::invalid(
                flag,
                format!("given with {selected}"),
                allowed,
            )),
            None => Ok(()),
        }
    }

    /// The pruned-butterfly run these flags describe; flags it does not use are refused.
    fn pruned(&self) -> Result<PrunedConfig> {
        self.refuse_network_flags(
            "--topology pruned-butterfly",
            "only --inputs, --traffic (with --q, --region or --messages), --seed, --engine, --body-bits, --json, --vcd, --vcd-scope",
        )?;
        let c = self.resolve(SimConfig::default())?;
        let mut p = PrunedConfig::new(c.inputs, c.traffic, c.seed);
        p.body_bits = self.body_bits;
        if let Some(e) = &self.engine {
            p.engine = parse_name::<Engine>("engine", e, "cycle|golden")?;
        }
        Ok(p)
    }
}

/// The command line as typed, with the program named `flitforge` (for file headers).
fn command_line() -> String {
    std::iter::once("flitforge".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

fn write(path: &str, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// Runs the model these flags describe, recording its waveform and stimulus, and generates
/// its Verilog.
fn prepare_design(args: &SimArgs) -> Result<cosim::Bundle> {
    let command = command_line();
    if args.circuit.is_some() {
        args.refuse_network_flags(
            "--circuit flexible-sorter",
            "only --s, --l, --r, --bits and --seed with --circuit",
        )?;
        for (flag, given) in [
            ("topology", args.topology.is_some()),
            ("inputs", args.inputs.is_some()),
            ("traffic", args.traffic.is_some()),
            ("engine", args.engine.is_some()),
            ("body-bits", args.body_bits.is_some()),
        ] {
            if given {
                return Err(Error::invalid(
                    flag,
                    "given with --circuit flexible-sorter",
                    "only --s, --l, --r, --bits and --seed",
                ));
            }
        }
        return Ok(args
            .sorter
            .config(args.seed.unwrap_or(1))?
            .prepare(&command)?
            .into());
    }
    if args.sorter.given() {
        return Err(Error::invalid(
            "s, l, r, bits",
            "given",
            "only with --circuit flexible-sorter (or the sort command)",
        ));
    }
    Ok(if args.is_pruned() {
        args.pruned()?.prepare(&command)?.into()
    } else {
        cosim::prepare(args.resolve(SimConfig::default())?, &command)?.into()
    })
}

fn simulate(config: SimConfig, args: &SimArgs) -> Result<()> {
    let mut sim = Simulation::new(config)?;
    if args.check {
        sim.set_check_invariants(true);
    }
    let mut report = match &args.vcd {
        None => sim.run()?,
        Some(path) => {
            let filter = ScopeFilter::new(args.vcd_scope.as_deref().unwrap_or(""))?;
            let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
            let command = command_line();
            let mut vcd = VcdWriter::new(std::io::BufWriter::new(file), &sim, &filter, &command)?;
            let report = sim.run_observed(|s| vcd.sample(s))?;
            vcd.finish()?;
            say!("waveform written to {path}");
            report
        }
    };
    say!("{}", report.summary());
    if let Some(path) = &args.json {
        if args.per_message {
            report = sim.report(true);
        }
        write(path, &report.to_json())?;
        say!("statistics written to {path}");
    }
    Ok(())
}

fn describe_topology(config: &SimConfig, alpha: f64) -> Result<()> {
    use flitforge::topology::{expansion, parallel_links};
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(Error::invalid("alpha", alpha, "(0, 1]"));
    }
    config.validate()?;
    let topo = flitforge::sim::build_topology(config)?;
    say!(
        "{}: n = {}, {} levels, {} switches, {} links ({} per level, multiplicity {}), {} parallel links",
        topo.kind.name(),
        topo.n,
        topo.levels,
        topo.node_count(),
        topo.links.len(),
        topo.links.len() as u32 / (topo.levels - 1),
        topo.multiplicity,
        parallel_links(&topo)
    );
    let splitter_levels = topo.log_n.min(topo.levels - 1);
    say!(
        "level  inputs/splitter  min up  min down  (expansion at alpha = {alpha}, over all splitters)"
    );
    for level in 0..splitter_levels {
        let (mut up, mut down, mut exact) = (f64::INFINITY, f64::INFINITY, true);
        for block in 0..1u32 << level {
            let e = expansion(&topo, level, block, alpha);
            up = up.min(e.up);
            down = down.min(e.down);
            exact &= e.exact;
        }
        let how = if exact { "exact" } else { "upper bound" };
        say!(
            "{level:>5}  {:>15}  {up:>6.3}  {down:>8.3}  {how}",
            topo.n >> level
        );
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Sim(args) | Command::Topology { args, .. } | Command::Bench(args)
            if args.circuit.is_some() || args.sorter.given() =>
        {
            Err(Error::invalid(
                "circuit",
                "given",
                "only with rtl and cosim (sort the flexible sorter with `flitforge sort`)",
            ))
        }
        Command::Sim(args) if args.is_pruned() => seed001::simulate_pruned(&args),
        Command::Sim(args) if args.is_fat_tree() => seed001::simulate_fat_tree(&args),
        Command::Sim(args) => simulate(args.resolve(SimConfig::default())?, &args),
        Command::Demo { json, vcd } => {
            let args = SimArgs {
                json,
                vcd,
                ..SimArgs::default()
            };
            simulate(SimConfig::default(), &args)
        }
        Command::Topology { args, alpha: None } if args.is_fat_tree() => {
            seed001::describe_fat_tree(&args)
        }
        Command::Rtl { args, .. } | Command::Cosim { args, .. } | Command::Bench(args)
            if args.is_fat_tree() =>
        {
            Err(Error::invalid(
                "topology",
                "sorting-fat-tree",
                "a network with a register-level model here (the sorting fat-tree is modelled at the message level; its node circuit is --circuit flexible-sorter)",
            ))
        }
        Command::Topology { args, alpha } if args.is_pruned() => {
            if let Some(a) = alpha {
                return Err(Error::invalid(
                    "alpha",
                    a,
                    "no value with --topology pruned-butterfly (it has no splitters)",
                ));
            }
            seed001::describe_pruned(args.pruned()?.inputs)
        }
        Command::Topology { args, alpha } => {
            let alpha = alpha.unwrap_or(0.25);
            describe_topology(&args.resolve(SimConfig::default())?, alpha)
        }
        Command::Rtl { args, out } => {
            let bundle = prepare_design(&args)?;
            let dir = std::path::Path::new(&out);
            for path in bundle.design.write(dir)? {
                say!("{}", path.display());
            }
            let stim = dir.join(flitforge::rtl::STIMULUS_FILE);
            write(&stim.to_string_lossy(), &bundle.stimulus_hex)?;
            say!("{}", stim.display());
            Ok(())
        }
        Command::Cosim {
            args,
            simulator,
            keep,
        } => {
            let bundle = prepare_design(&args)?;
            let sims: &[Simulator] = match simulator.as_str() {
                "verilator" => &[Simulator::Verilator],
                "both" => &[Simulator::Icarus, Simulator::Verilator],
                _ => &[Simulator::Icarus],
            };
            let mut identical = true;
            for &sim in sims {
                let dir = match &keep {
                    Some(d) => std::path::PathBuf::from(d).join(sim.name()),
                    None => std::env::temp_dir().join(format!(
                        "flitforge-cosim-{}-{}",
                        std::process::id(),
                        sim.name()
                    )),
                };
                let verdict = bundle.run(sim, &dir)?;
                say!("{verdict}");
                identical &= verdict.divergence.is_none();
                if keep.is_none() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
            if identical {
                Ok(())
            } else {
                Err(Error::Diverged)
            }
        }
        Command::Fpga(args) => fpga_cli::run(&args),
        Command::Sort {
            sorter,
            seed,
            vcd,
            json,
        } => seed001::sort(&sorter, seed, vcd.as_deref(), json.as_deref()),
        Command::Experiment { which } => experiments::run(which),
        Command::Faults(a) => seed002::faults(&a),
        Command::Multibutterfly(a) => seed002::route(&a),
        Command::Reference { root } => {
            for path in flitforge::rtl::reference::write(std::path::Path::new(&root))? {
                say!("{}", path.display());
            }
            Ok(())
        }
        Command::Bench(args) if args.is_pruned() => {
            let mut config = args.pruned()?;
            if args.inputs.is_none() {
                config.inputs = flitforge::bench::default_pruned_config().inputs;
            }
            let r = flitforge::bench::run_pruned(config)?;
            say!(
                "bench: {} vertices x {} cycles in {:.3} s = {:.1} million vertex-cycles/s",
                r.switches,
                r.cycles,
                r.seconds,
                r.switch_cycles_per_second / 1e6
            );
            Ok(())
        }
        Command::Bench(args) => {
            let config = args.resolve(flitforge::bench::default_config())?;
            let r = flitforge::bench::run(config)?;
            say!(
                "bench: {} switches x {} cycles in {:.3} s = {:.1} million switch-cycles/s ({:.1} flits delivered/cycle)",
                r.switches,
                r.cycles,
                r.seconds,
                r.switch_cycles_per_second / 1e6,
                r.flits_delivered_per_cycle
            );
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
