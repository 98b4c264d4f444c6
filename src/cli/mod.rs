//! The command-line layer: one module per command family, each a thin layer over the library.
//! Every command takes only its own flags (shared groups are flattened where they apply), every
//! flag's help shows its default, and flags with no effect on the chosen run are refused.

/// Whether a command's report goes to standard output (`--json -`): its summary lines then go
/// to standard error, so the output stays one JSON document.
static REPORT_ON_STDOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A line on stderr (progress, files written, errors), like `eprintln!` but never a panic
/// when stderr is closed.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that ignores a closed pipe (`flitforge ... | head`) instead of panicking, and
/// writes to standard error while the report goes to standard output.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if crate::cli::REPORT_ON_STDOUT.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = writeln!(std::io::stderr(), $($arg)*);
        } else {
            let _ = writeln!(std::io::stdout(), $($arg)*);
        }
    }};
}

mod args;
mod bench;
mod cms;
mod experiment;
mod files;
mod fpga;
mod hdl;
mod multibutterfly;
mod network;
mod progress;
mod shard;
mod silicon;
mod sorter;
mod sweep;
mod topology;
mod universal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use flitforge::Result;
use std::process::ExitCode;

/// Routing-network switches modelled cycle by cycle, the way hardware builds them.
///
/// Every switch is a clocked state machine (per-virtual-channel flit registers, valid bits,
/// allocation state) advanced by a two-phase clock. Runs are reproducible from their seed.
/// Papers are cited by key ([CMS], [BB], [LM], [SV], [CMSV]: docs/references.md).
#[derive(Parser)]
#[command(name = "flitforge", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    limits: LimitArgs,
}

/// The resource limits every command checks its estimates against (`flitforge::limits`).
#[derive(clap::Args, Clone, Default)]
#[command(next_help_heading = "Limits")]
struct LimitArgs {
    /// Memory a command may plan to use, e.g. 8G (K, M, G, T: powers of 1024); work estimated
    /// to need more is refused before it starts. [default: 90 % of the memory available,
    /// within the address-space limit]
    #[arg(long, global = true, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Largest output file a command writes, e.g. 20G; a waveform or report estimated to be
    /// larger is refused before the run. [default: the smaller of 4 GiB and the free space
    /// where it goes]
    #[arg(long, global = true, value_name = "SIZE")]
    max_output: Option<String>,
    /// Largest input file read (--config, --messages, shard files). [default: 256 MiB]
    #[arg(long, global = true, value_name = "SIZE")]
    max_input: Option<String>,
}

impl LimitArgs {
    fn apply(&self) -> Result<()> {
        let size = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|t| flitforge::limits::parse_size(flag, t))
                .transpose()
        };
        flitforge::limits::set(flitforge::limits::Overrides {
            memory: size("max-memory", &self.max_memory)?,
            output: size("max-output", &self.max_output)?,
            input: size("max-input", &self.max_input)?,
        });
        Ok(())
    }
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a network and report latency, throughput and drops (one JSON schema for every
    /// topology: docs/report-schema.md).
    ///
    /// Flags override a --config file (TOML, or a report's "config" as JSON), which overrides
    /// the defaults. Examples:
    ///   flitforge sim --inputs 1024 --traffic random-permutation --seed 1 --json out.json
    ///   flitforge sim --mode drop --vcs 1 --traffic uniform --q 4 --retry-backoff 8
    ///   flitforge sim --traffic bernoulli --rate 0.3 --cycles 10000
    ///   flitforge sim --topology benes --middle 5 --traffic transpose
    ///   flitforge sim --topology pruned-butterfly --inputs 256 --json - | jq .makespan_cycles
    #[command(verbatim_doc_comment)]
    Sim(network::SimArgs),
    /// Run the built-in default (64-input butterfly, B = 2, L = 4, W = 32, random permutation,
    /// wormhole) and print a readable summary.
    Demo {
        /// Also write the report as JSON ("-": standard output). [default: not written]
        #[arg(long, value_name = "FILE|-")]
        json: Option<String>,
        /// Also write the waveform of every switch as VCD. [default: not written]
        #[arg(long, value_name = "FILE.vcd")]
        vcd: Option<String>,
    },
    /// Print a topology's switch and link counts, and per level what it has: for splitter
    /// networks the measured (α, β) expansion of each level's splitters ([LM] §I-C), for the
    /// pruned butterfly widths and capacities ([BB] §3.1), for the sorting fat-tree its
    /// sorters and channels ([BB] §4.2).
    ///
    /// Expansion is exact by enumeration for splitters of at most 20 inputs, an upper bound
    /// from sampled and greedily grown sets above that.
    Topology(topology::TopologyArgs),
    /// Generate the Verilog of a network or circuit (one module per switch kind, the top, a
    /// testbench replaying the model's injections, a FuseSoC core) and list the files.
    Rtl(hdl::RtlArgs),
    /// Run the model and the generated Verilog under a simulator and compare their waveforms
    /// signal by signal and cycle by cycle. Exit 0 when identical, 1 at the first divergence.
    Cosim(hdl::CosimArgs),
    /// Regenerate the reference Verilog in rtl/ and the reference model waveforms in waves/
    /// (a test fails on any byte difference until they are regenerated and committed).
    Reference {
        /// Repository root to write under.
        #[arg(long, default_value = ".", value_name = "DIR")]
        root: String,
    },
    /// Run a paper's experiment; each writes CSV, Markdown and SVG charts into
    /// results/<experiment>/ (or --out).
    ///
    /// Examples:
    ///   flitforge experiment leighton-maggs --trials 500 --seed 1
    ///   flitforge experiment fault-tolerance --sizes 64,256,1024,4096
    ///   flitforge experiment pruned-butterfly --sizes 16,64,256,1024 --trials 3
    ///   flitforge experiment flexible-sorter
    #[command(verbatim_doc_comment)]
    Experiment {
        #[command(subcommand)]
        which: experiment::ExperimentKind,
    },
    /// The virtual-channel algorithms of [CMS] on one problem: the lower-bound instance
    /// (Theorem 2.2.1), random leveled networks, offline schedules (footnote 5, Theorem 2.1.6)
    /// and the randomised butterfly algorithm (§3.1). Each writes files `sim --topology graph`
    /// replays.
    ///
    /// Examples:
    ///   flitforge cms lower-bound --vcs 2 --congestion 6 --dilation 11 --out lb
    ///   flitforge cms leveled --width 8 --levels 16 --messages 64 --out lev
    ///   flitforge cms schedule --graph lb/graph.json --paths lb/paths.json --vcs 2 --flits 10 --out sched
    ///   flitforge cms butterfly --inputs 256 --q 8 --flits 8 --vcs 2 --beta 1
    #[command(verbatim_doc_comment)]
    Cms {
        #[command(subcommand)]
        which: cms::CmsCommand,
    },
    /// The universal continuous-routing protocols of [SV] on any network: messages generated
    /// at every cycle with a given link load, a warm-up, a measured window with streaming
    /// statistics, and a stability verdict (buffers that grow are reported, not waited on).
    ///
    /// Examples:
    ///   flitforge universal growing-rank --topology butterfly --inputs 64 --load 0.3
    ///   flitforge universal trial --topology mesh --inputs 64 --load 0.005 --bandwidth 2 --flits 8
    #[command(verbatim_doc_comment)]
    Universal {
        #[command(subcommand)]
        which: universal::UniversalCommand,
    },
    /// Place random faults on a multibutterfly-family network and propagate them ([LM] §III-A
    /// and §IV): the experiments' "both links" rule, or the theory's erasure and "half the
    /// links" rules with the inputs and outputs that survive against Theorem 3.4.
    ///
    /// Examples:
    ///   flitforge faults --faults 1000 --seed 3
    ///   flitforge faults --topology splitter --dilation 5 --inputs 1024 --faults 40 --rules theory --alpha 0.125 --beta 4
    #[command(verbatim_doc_comment)]
    Faults(multibutterfly::FaultArgs),
    /// Route one problem on a multibutterfly-family network: [LM] §IV's greedy
    /// store-and-forward (default) or Upfal's wave algorithm ([LM] §II-A, --algorithm upfal).
    ///
    /// Examples:
    ///   flitforge multibutterfly --problem 10T --faults 100 --seed 2
    ///   flitforge multibutterfly --topology butterfly --problem 1T
    ///   flitforge multibutterfly --algorithm upfal --inputs 256 --dilation 4 --permutations 2
    #[command(verbatim_doc_comment)]
    Multibutterfly(multibutterfly::RouteArgs),
    /// Sort r random words on the cycle-level flexible sorter of [BB] §4.1 (Theorem 2) and
    /// report the cycles; the output is checked against a software sort.
    ///
    /// Example (s = 8 rings of l/s = 8 cells, 32 words of 8 bits, waveform):
    ///   flitforge sort --s 8 --l 64 --r 32 --bits 8 --seed 1 --vcd sort.vcd
    #[command(verbatim_doc_comment)]
    Sort(sorter::SortArgs),
    /// Build the network for an iCE40 board: a traffic generator at every input and a checker
    /// at every output on chip, PASS/FAIL LEDs against the model's prediction (or the counters
    /// over the UART), through yosys, nextpnr-ice40 and icepack to a bitstream; fpga.json has
    /// LUTs, flip-flops, logic cells, Fmax and whether it fits.
    ///
    /// Examples:
    ///   flitforge fpga --inputs 8 --vcs 2 --flits 4 --flit-bits 8 --device hx8k --out build/fpga
    ///   flitforge fpga --inputs 4 --cycles 2000 --simulate iverilog --out build/fpga4
    ///   flitforge fpga --largest --device all --out build/largest
    #[command(verbatim_doc_comment)]
    Fpga(fpga::FpgaArgs),
    /// Measure emitted circuits on OSU standard cells: yosys maps each size onto the Liberty
    /// library (cells, flip-flops, cell area), OpenSTA times it (register-to-register and
    /// through-port critical paths), qflow places and routes it with --place-route (die
    /// area, routed wire length). Writes silicon.csv, silicon.md and log-log charts with the
    /// fitted exponent; results are cached by configuration hash, so a sweep resumes.
    ///
    /// Examples:
    ///   flitforge silicon --circuit butterfly --sizes 4,8 --out build/si-bfly
    ///   flitforge silicon --circuit pruned-butterfly --sizes 16 --place-route --out build/si-pb
    ///   flitforge silicon --circuit flexible-sorter --sizes 8 --columns 2 --out build/si-fsort
    #[command(verbatim_doc_comment)]
    Silicon(silicon::SiliconArgs),
    /// Measure simulation speed: switch-cycles per second of a VC network (invariant checks
    /// off), or with --topology pruned-butterfly vertex-cycles per second of the bit-serial
    /// network routing a random permutation.
    Bench(bench::BenchArgs),
    /// Combine the shard directories of one sharded run (`experiment ... --shard K/N` or
    /// `sim --sweep ... --shard K/N`) into the files of the unsharded run, byte for byte.
    ///
    /// Example (four shards, here one after another; anywhere in practice):
    ///   for k in 0 1 2 3; do flitforge experiment leighton-maggs --shard $k/4 --out s$k; done
    ///   flitforge merge s0 s1 s2 s3 --out results/leighton-maggs
    #[command(verbatim_doc_comment)]
    Merge(shard::MergeArgs),
}

/// What a shard's recorded command line runs.
enum Replayable {
    Experiment(Box<experiment::ExperimentKind>),
    Sweep(Box<network::SimArgs>),
}

/// The command a recorded command line runs (`merge` replays a shard's).
fn replay_target(argv: &[String]) -> Result<Replayable> {
    let parsed = matches(argv.iter().map(Into::into)).and_then(|m| Cli::from_arg_matches(&m));
    match parsed {
        Ok(Cli {
            command: Command::Experiment { which },
            ..
        }) => Ok(Replayable::Experiment(Box::new(which))),
        Ok(Cli {
            command: Command::Sim(args),
            ..
        }) if args.sweep.sweep.is_some() => Ok(Replayable::Sweep(Box::new(args))),
        Ok(_) => Err(flitforge::Error::invalid(
            "shards",
            argv.join(" "),
            "the shards of an experiment or of sim --sweep",
        )),
        Err(e) => Err(flitforge::Error::invalid(
            "shards",
            argv.join(" "),
            e.to_string(),
        )),
    }
}

/// The command line as typed, with the program named `flitforge` (for file headers).
pub fn command_line() -> String {
    std::iter::once("flitforge".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Sim(args) => network::sim(&args),
        Command::Demo { json, vcd } => network::demo(json, vcd),
        Command::Topology(args) => topology::topology(&args),
        Command::Rtl(args) => hdl::rtl(&args),
        Command::Cosim(args) => hdl::cosim(&args),
        Command::Reference { root } => hdl::reference(&root),
        Command::Experiment { which } => experiment::run(which),
        Command::Cms { which } => cms::run(&which),
        Command::Universal { which } => universal::run(&which),
        Command::Faults(a) => multibutterfly::faults(&a),
        Command::Multibutterfly(a) => multibutterfly::route(&a),
        Command::Sort(a) => sorter::sort(&a),
        Command::Fpga(a) => fpga::run(&a),
        Command::Silicon(a) => silicon::silicon(&a),
        Command::Bench(a) => bench::bench(&a),
        Command::Merge(a) => shard::merge(&a),
    }
}

/// The defaults a command's flags start from, as config keys and values.
fn base_defaults(command: &str) -> serde_json::Value {
    let network = match command {
        "bench" => flitforge::bench::default_config(),
        "fpga" => fpga::defaults(),
        "sim" | "topology" | "rtl" | "cosim" => flitforge::config::SimConfig::default(),
        _ => return serde_json::Value::Null,
    };
    let mut v = serde_json::to_value(network).unwrap_or_default();
    let traffic = v["traffic"].clone();
    v["traffic"] = traffic["pattern"].clone();
    for key in ["rate", "destinations", "q", "region"] {
        if !traffic[key].is_null() {
            v[key] = traffic[key].clone();
        }
    }
    v
}

/// Appends `[default: …]` to every flag whose help does not show one: taken from the
/// command's base configuration, or `off` for a switch. Clap shows the defaults it knows.
fn show_defaults(mut cmd: clap::Command, base: &serde_json::Value) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && a.get_default_values().is_empty())
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        cmd = cmd.mut_arg(&id, |a| {
            let help = a.get_help().map(ToString::to_string).unwrap_or_default();
            if help.contains("[default:") || id == "help" || id == "version" {
                return a;
            }
            let shown = match base.get(&id) {
                _ if matches!(a.get_action(), clap::ArgAction::SetTrue) => "off".to_string(),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Null) | None => match id.as_str() {
                    "rate" => "none, required with --traffic bernoulli or lfsr".to_string(),
                    "cycles" => "none, batch traffic runs to completion".to_string(),
                    _ => return a,
                },
                Some(v) => v.to_string(),
            };
            a.help(format!("{help} [default: {shown}]"))
        });
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let base = base_defaults(&name);
        cmd = cmd.mut_subcommand(&name, |s| show_defaults(s, &base));
    }
    cmd
}

/// A command line (after `flitforge`) as the options it sets, defaults included, one
/// `command option=values` entry each, sorted: command lines that spell the same run
/// differently (options in another order, `--inputs=64`, a fixed default given or left out)
/// give the same list; an option whose default the command computes from others (no default
/// to clap) is absent where it is left out. `None` where it does not parse.
pub fn canonical_args(args: &[String]) -> Option<Vec<String>> {
    fn walk(cmd: &clap::Command, m: &clap::ArgMatches, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if let Ok(Some(values)) = m.try_get_raw(id) {
                let values: Vec<String> = values.map(|v| v.to_string_lossy().into()).collect();
                out.push(format!("{path} {id}={}", values.join(",")));
            }
        }
        if let Some((name, sub)) = m.subcommand()
            && let Some(sub_cmd) = cmd.find_subcommand(name)
        {
            walk(sub_cmd, sub, &format!("{path} {name}"), out);
        }
    }
    let cmd = parser();
    let argv = std::iter::once("flitforge").chain(args.iter().map(String::as_str));
    let parsed = (cmd.clone())
        .try_get_matches_from(joined(&cmd, argv.map(Into::into)))
        .ok()?;
    let mut out = Vec::new();
    walk(&cmd, &parsed, "flitforge", &mut out);
    out.sort();
    Some(out)
}

/// The command line's parser: the derived commands with their defaults shown and
/// [`settle`]d. Runs, merges and shard comparisons all read command lines with it
/// ([`matches`]).
fn parser() -> clap::Command {
    settle(show_defaults(Cli::command(), &serde_json::Value::Null))
}

/// `argv` (the program first) as [`parser`] reads it ([`joined`]).
fn matches(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> clap::error::Result<clap::ArgMatches> {
    let cmd = parser();
    cmd.clone().try_get_matches_from(joined(&cmd, argv))
}

/// `argv` with a value that starts with a minus and a digit joined to the option before it
/// (`--sweep -0.1,0.2` as `--sweep=-0.1,0.2`, `--max-memory -5G`, `--shard -1/2`): clap
/// takes a lone negative number for a value ([`settle`]), but a list or a size that starts
/// with one for flags (`-0`, `-5`), and the value's own range check names it better.
fn joined(
    cmd: &clap::Command,
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    // The commands the words so far name, the root first: an option is looked up in them.
    let mut commands = vec![cmd];
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    for arg in argv {
        let word = arg.to_str();
        let negative = word.is_some_and(|a| {
            a.strip_prefix('-')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
        });
        let join = negative
            && (args.last().and_then(|o| o.to_str()))
                .and_then(|o| o.strip_prefix("--"))
                .and_then(|name| option_of(&commands, name))
                .is_some_and(|a| a.get_action().takes_values());
        match args.last_mut() {
            Some(option) if join => {
                option.push("=");
                option.push(&arg);
            }
            _ => {
                let sub = (word.filter(|w| !w.starts_with('-')))
                    .and_then(|w| commands.last().and_then(|c| c.find_subcommand(w)));
                commands.extend(sub);
                args.push(arg);
            }
        }
    }
    args
}

/// The option `--name` of one of `commands` (a command and the ones above it).
fn option_of<'a>(commands: &[&'a clap::Command], name: &str) -> Option<&'a clap::Arg> {
    commands
        .iter()
        .rev()
        .find_map(|c| c.get_arguments().find(|a| a.get_long() == Some(name)))
}

/// What every command of the tree takes, which the derive cannot say once for all: a
/// negative number after a flag (`--rate -0.1`) is its value, then refused as any value
/// out of its range is, rather than taken for an unknown flag (a list that starts with one
/// is joined to its flag first, [`joined`]); and the one-paragraph
/// summary that a list of commands shows is one line, wrapped to the terminal (the full text
/// keeps its lines, for the examples).
fn settle(mut cmd: clap::Command) -> clap::Command {
    cmd = cmd.mut_args(|a| match a.get_action().takes_values() {
        true => a.allow_negative_numbers(true),
        false => a,
    });
    if let Some(about) = cmd.get_about().map(ToString::to_string)
        && about.contains('\n')
    {
        let line = about.split_whitespace().collect::<Vec<_>>().join(" ");
        cmd = cmd.about(line.trim_end_matches('.').to_string());
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(&name, settle);
    }
    cmd
}

/// A value that does not parse as its option's type (`--watchdog -1`, a number too large
/// for it): clap's message, followed by the option's help, which states what it takes.
fn with_range(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = arg.split_whitespace().next()?.strip_prefix("--")?;
    // The (sub)commands the command line names, and the option in one of them.
    let root = parser();
    let mut commands = vec![&root];
    for word in std::env::args().skip(1).filter(|w| !w.starts_with('-')) {
        commands.extend(commands.last().and_then(|c| c.find_subcommand(&word)));
    }
    let help = option_of(&commands, long)?.get_help()?.to_string();
    // One line, its first 300 characters or so (the range comes first).
    let mut line = String::new();
    for word in help.split_whitespace() {
        if line.len() > 300 {
            line.push_str(" …");
            break;
        }
        line.push_str(if line.is_empty() { "" } else { " " });
        line.push_str(word);
    }
    let help = line;
    let rendered = e.render().to_string();
    let (first, rest) = rendered.split_once('\n').unwrap_or((&rendered, ""));
    Some(format!("{first}\n  --{long}: {help}\n{}", rest.trim_end()))
}

/// Parses the command line, runs the command, maps errors to exit codes (2: bad input).
pub fn main() -> ExitCode {
    let to_stdout = std::env::args()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0] == "--json" && w[1] == "-")
        || std::env::args().any(|a| a == "--json=-");
    REPORT_ON_STDOUT.store(to_stdout, std::sync::atomic::Ordering::Relaxed);
    let cli = match matches(std::env::args_os()).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => match with_range(&e) {
            Some(text) => {
                note!("{text}");
                return ExitCode::from(2);
            }
            None => e.exit(),
        },
    };
    let result = flitforge::interrupt::install()
        .and_then(|()| cli.limits.apply())
        .and_then(|()| run(cli))
        .and_then(|()| files::finish_dirs());
    if result.is_err() {
        files::rollback_dirs();
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(flitforge::Error::Interrupted { signal, kept }) => {
            let kept = if kept.is_empty() {
                "no file was written or replaced (every output is renamed into place only once complete), child processes and temporary directories are gone".to_string()
            } else {
                kept
            };
            let e = flitforge::Error::Interrupted { signal, kept };
            note!("flitforge: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
        Err(e) => {
            note!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{joined, parser};

    fn join(line: &str) -> Vec<String> {
        let argv = line.split(' ').map(std::ffi::OsString::from);
        let out = joined(&parser(), argv);
        out.into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// A value that starts with a minus and a digit is joined to an option that takes one,
    /// never to a flag, whatever command the option belongs to.
    #[test]
    fn negative_values_join_options_that_take_one() {
        assert_eq!(
            join("flitforge sim --sweep -0.1,0.2 --force"),
            ["flitforge", "sim", "--sweep=-0.1,0.2", "--force"]
        );
        assert_eq!(
            join("flitforge --max-memory -5G sim"),
            ["flitforge", "--max-memory=-5G", "sim"]
        );
        assert_eq!(
            join("flitforge merge --force -0 -1"),
            ["flitforge", "merge", "--force", "-0", "-1"]
        );
        assert_eq!(
            join("flitforge experiment leighton-maggs --shard -1/4"),
            ["flitforge", "experiment", "leighton-maggs", "--shard=-1/4"]
        );
    }
}
