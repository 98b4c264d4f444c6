//! `rtl`, `cosim` and `reference`: the Verilog of a network or circuit, its co-simulation
//! against the model, and the reference files the tests hold byte-stable.

use super::args::{NetworkArgs, RunFlags, SerialArgs, SorterArgs, SwitchArgs, TrafficArgs};
use super::command_line;
use super::files::{write, written};
use super::progress::Step;
use clap::Args;
use flitforge::config::SimConfig;
use flitforge::cosim::{self, Simulator};
use flitforge::rtl::build::BuildSize;
use flitforge::run::RunConfig;
use flitforge::sorter::SortConfig;
use flitforge::{Error, Result};

/// The design flags of `rtl` and `cosim`: a network, or the flexible sorter circuit.
#[derive(Args, Clone, Default)]
pub struct DesignArgs {
    /// A circuit instead of a network: the flexible sorter of [BB] §4.1, sized by --s, --l,
    /// --r, --bits and seeded by --seed. [default: none, a network]
    #[arg(long, value_parser = ["flexible-sorter"])]
    pub circuit: Option<String>,
    #[command(flatten)]
    pub sorter: SorterArgs,
    #[command(flatten)]
    pub net: NetworkArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub serial: SerialArgs,
    #[command(flatten)]
    pub traffic: TrafficArgs,
}

/// Runs the model these flags describe, recording its stimulus (and, with `waveform`, its
/// waveform), and generates its Verilog. What the configuration alone tells is checked
/// first: the build of each of `simulators`, and for a VC network the Verilog's size against
/// `out`, the directory `rtl` writes into.
fn prepare(
    args: &DesignArgs,
    waveform: bool,
    out: Option<&str>,
    simulators: &[Simulator],
) -> Result<cosim::Bundle> {
    let command = command_line();
    let from_file = match &args.net.config {
        Some(path) => Some(RunConfig::from_file(path)?),
        None => None,
    };
    let circuit_file = matches!(from_file, Some(RunConfig::FlexibleSorter(_)));
    if args.circuit.is_some() && from_file.is_some() && !circuit_file {
        return Err(Error::invalid(
            "config",
            args.net.config.as_deref().unwrap_or_default(),
            "a flexible-sorter configuration with --circuit flexible-sorter",
        ));
    }
    if args.circuit.is_some() || circuit_file {
        let only = "with a network (the flexible sorter takes --s, --l, --r, --bits, --seed)";
        let t = &args.traffic;
        let mut given = vec![
            ("topology", args.net.topology.is_some()),
            ("inputs", args.net.inputs.is_some()),
            ("dilation", args.net.dilation.is_some()),
            ("body-bits", args.serial.body_bits.is_some()),
            ("traffic", t.traffic.is_some()),
            ("rate", t.rate.is_some()),
            ("q", t.q.is_some()),
            ("region", t.region.is_some()),
            ("messages", t.messages.is_some()),
            ("destinations", t.destinations.is_some()),
            ("cycles", t.cycles.is_some()),
        ];
        given.extend(args.switch.given());
        super::args::refuse(&given, only)?;
        let (base, from_file) = match from_file {
            Some(RunConfig::FlexibleSorter(c)) => (c, true),
            _ => (SortConfig::default(), false),
        };
        let config = args.sorter.config(base, args.traffic.seed, from_file)?;
        return Ok(config.prepare(&command)?.into());
    }
    if args.sorter.given() {
        return Err(Error::invalid(
            "s, l, r, bits",
            "given",
            "no value without --circuit flexible-sorter",
        ));
    }
    let flags = RunFlags {
        net: &args.net,
        switch: Some(&args.switch),
        serial: Some(&args.serial),
        traffic: &args.traffic,
    };
    Ok(match flags.resolve(SimConfig::default())? {
        RunConfig::Network(c) => {
            c.validate()?;
            if let Some(out) = out {
                flitforge::limits::Estimate::new()
                    .with("Verilog, at least", flitforge::rtl::size_floor(&c))
                    .check_output("out", std::path::Path::new(out))?;
            }
            if let Some(build) = BuildSize::of_config(&c) {
                simulators.iter().try_for_each(|&s| build.check(s))?;
            }
            cosim::prepare_with(c, &command, waveform)?.into()
        }
        RunConfig::PrunedButterfly(c) => {
            let vertices = c.validate()?.vertex_count() as u64;
            let build = BuildSize::pruned(c.inputs, vertices);
            simulators.iter().try_for_each(|&s| build.check(s))?;
            c.prepare_with(&command, waveform)?.into()
        }
        _ => {
            return Err(Error::invalid(
                "topology",
                "sorting-fat-tree",
                "a network with a register-level model (the sorting fat-tree is modelled at the message level; its node circuit is --circuit flexible-sorter)",
            ));
        }
    })
}

/// `flitforge rtl`.
#[derive(Args, Clone)]
pub struct RtlArgs {
    #[command(flatten)]
    pub design: DesignArgs,
    /// Directory to write into (created if missing); a non-empty one only if `rtl` wrote it
    /// (its earlier files are replaced, the ones this design does not have removed) or with
    /// --force.
    #[arg(long, value_name = "DIR", default_value = "flitforge-rtl")]
    pub out: String,
    /// Write into a non-empty directory another command (or you) wrote; files of the same
    /// names are replaced.
    #[arg(long)]
    pub force: bool,
}

/// `flitforge rtl`: writes the design and lists the files.
pub fn rtl(args: &RtlArgs) -> Result<()> {
    // The directory first (a refused run removes it again): a non-empty one is refused
    // before the model runs.
    let dir = super::files::experiment_dir(
        "rtl",
        Some(&args.out),
        args.force,
        &super::args::run_input_files(&args.design.net, &args.design.traffic)?,
    )?;
    let bundle = prepare(&args.design, false, Some(&args.out), &[])?;
    let size: u64 = bundle
        .design
        .files
        .iter()
        .map(|(_, text)| text.len() as u64)
        .sum::<u64>()
        + bundle.stimulus_hex.len() as u64;
    flitforge::limits::Estimate::new()
        .with("Verilog and stimulus", size)
        .check_output("out", std::path::Path::new(&args.out))?;
    for path in bundle.design.write(&dir)? {
        written(&path);
    }
    write(
        dir.join(flitforge::rtl::STIMULUS_FILE),
        &bundle.stimulus_hex,
    )?;
    Ok(())
}

/// `flitforge cosim`.
#[derive(Args, Clone)]
pub struct CosimArgs {
    #[command(flatten)]
    pub design: DesignArgs,
    /// Simulator(s) to run.
    #[arg(long, default_value = "iverilog", value_parser = ["iverilog", "verilator", "both"])]
    pub simulator: String,
    /// Keep the generated files, waveforms and simulator output in DIR/<simulator>.
    /// [default: none, a temporary directory removed afterwards]
    #[arg(long, value_name = "DIR")]
    pub keep: Option<String>,
}

/// `flitforge cosim`: exit 0 when identical, 1 at the first divergence.
pub fn cosim(args: &CosimArgs) -> Result<()> {
    let sims: &[Simulator] = match args.simulator.as_str() {
        "verilator" => &[Simulator::Verilator],
        "both" => &[Simulator::Icarus, Simulator::Verilator],
        _ => &[Simulator::Icarus],
    };
    // The kept directory first (a refused run removes it again).
    let kept = match &args.keep {
        Some(d) => Some(super::files::experiment_dir(
            "cosim",
            Some(d),
            false,
            &super::args::run_input_files(&args.design.net, &args.design.traffic)?,
        )?),
        None => None,
    };
    let bundle = {
        let _step = Step::start("cosim: running the model and generating the Verilog");
        prepare(&args.design, true, None, sims)?
    };
    // Every simulator's build checked before the first runs (a graph's only now).
    for &sim in sims {
        bundle.check_build(sim)?;
    }
    let mut identical = true;
    for &sim in sims {
        // Removed when it goes out of scope, also when an error or interrupt unwinds.
        let temp;
        let dir = match &kept {
            Some(d) => d.join(sim.name()),
            None => {
                temp = flitforge::files::TempDir::new(&format!("cosim-{}", sim.name()))?;
                temp.path().to_path_buf()
            }
        };
        let verdict = {
            let what = match sim {
                Simulator::Verilator => "cosim: building and running under Verilator",
                _ => "cosim: running under Icarus Verilog",
            };
            let _step = Step::start(what);
            bundle.run(sim, &dir)?
        };
        say!("{verdict}");
        identical &= verdict.divergence.is_none();
    }
    if identical {
        Ok(())
    } else {
        Err(Error::Diverged)
    }
}

/// `flitforge reference`: regenerates rtl/ and waves/ under `root`.
pub fn reference(root: &str) -> Result<()> {
    let _step = Step::start("reference: regenerating rtl/ and waves/");
    for path in flitforge::rtl::reference::write(std::path::Path::new(root))? {
        written(&path);
    }
    Ok(())
}
