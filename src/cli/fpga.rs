//! `flitforge fpga`: the board top, from options to bitstream.

use super::args::{NetworkArgs, RunFlags, SwitchArgs, TrafficArgs};
use super::command_line;
use super::files::{write, written};
use super::progress::Step;
use clap::Args;
use flitforge::config::SimConfig;
use flitforge::cosim::Simulator;
use flitforge::fpga::{self, Device, StatusPort};
use flitforge::run::RunConfig;
use flitforge::traffic::Destinations;
use flitforge::{Error, Result};
use std::path::Path;

#[derive(Args, Clone)]
pub struct FpgaArgs {
    #[command(flatten)]
    net: NetworkArgs,
    #[command(flatten)]
    switch: SwitchArgs,
    #[command(flatten)]
    traffic: TrafficArgs,
    /// iCE40 device and board: hx1k (iCEstick), hx8k (iCE40-HX8K breakout), up5k
    /// (iCEBreaker); with --largest also "all".
    #[arg(long, default_value = "hx8k", value_parser = ["hx1k", "hx8k", "up5k", "all"])]
    device: String,
    /// Directory for the Verilog, the pin constraints, the tools' logs, the bitstream
    /// (top.bin) and fpga.json.
    #[arg(long, value_name = "DIR", default_value = "build/fpga")]
    out: String,
    /// Write into a non-empty directory another command wrote.
    #[arg(long)]
    force: bool,
    /// Clock frequency nextpnr's timing-driven placement aims at, in MHz (it reports the Fmax
    /// it reaches either way).
    #[arg(long, value_name = "MHZ", default_value_t = 100.0)]
    target_mhz: f64,
    /// How the board reports: PASS/FAIL LEDs against the model's prediction compiled in
    /// (leds), or those and the counters printed over the UART at 115 200 baud (uart, about
    /// 300 LUT4 more).
    #[arg(long, default_value = "leds", value_parser = ["leds", "uart"])]
    status: String,
    /// Co-simulate the whole top (generators, network, checkers, status line) against the
    /// model under this simulator before building. [default: none, build only]
    #[arg(long, value_parser = ["iverilog", "verilator"])]
    simulate: Option<String>,
    /// Find the largest butterfly (2, 4, 8, ... inputs, the other options as given) that
    /// places and routes on the device; writes largest.json and largest.md.
    #[arg(long)]
    largest: bool,
}

/// The board top's defaults: an 8-input butterfly, B = 2, L = 4, W = 8, registered
/// back-pressure, on-chip traffic at rate 0.25 with uniform destinations for 100 000 cycles.
pub fn defaults() -> SimConfig {
    fpga::experiment::top_config(8, Destinations::Uniform, 100_000)
}

impl FpgaArgs {
    fn config(&self) -> Result<SimConfig> {
        let flags = RunFlags {
            net: &self.net,
            switch: Some(&self.switch),
            serial: None,
            traffic: &self.traffic,
        };
        match flags.resolve(defaults())? {
            RunConfig::Network(config) => {
                fpga::check(&config)?;
                Ok(config)
            }
            other => Err(Error::invalid(
                "topology",
                other.topology(),
                "butterfly, dilated or splitter with fpga",
            )),
        }
    }
}

fn devices(name: &str, largest: bool) -> Result<Vec<Device>> {
    match (name, Device::from_name(name)) {
        ("all", _) if largest => Ok(vec![Device::Hx1k, Device::Up5k, Device::Hx8k]),
        ("all", _) => Err(Error::invalid(
            "device",
            "all",
            "hx1k, hx8k or up5k (all only with --largest)",
        )),
        (_, Some(d)) => Ok(vec![d]),
        _ => Err(Error::invalid("device", name, Device::NAMES.join(", "))),
    }
}

fn status_port(name: &str) -> StatusPort {
    if name == "uart" {
        StatusPort::Uart
    } else {
        StatusPort::Leds
    }
}

fn progress(line: &str) {
    note!("fpga: {line}");
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Error::parse("report", e))? + "\n";
    write(path, &text)
}

fn summary(report: &fpga::FpgaReport) -> String {
    format!(
        "{}: {} LUT4, {} flip-flops, {}/{} logic cells ({:.0} %), {}, Fmax {}",
        report.device.name(),
        report.luts,
        report.dffs,
        report.logic_cells,
        report.logic_cells_available,
        report.utilisation * 100.0,
        if report.fits { "fits" } else { "does not fit" },
        report
            .fmax_mhz
            .map_or("-".to_string(), |f| format!("{f:.1} MHz"))
    )
}

pub fn run(args: &FpgaArgs) -> Result<()> {
    let config = args.config()?;
    let command = command_line();
    if !(1.0..=1000.0).contains(&args.target_mhz) {
        return Err(Error::invalid("target-mhz", args.target_mhz, "1 to 1000"));
    }
    if config.inputs > fpga::MAX_INPUTS {
        return Err(Error::invalid(
            "inputs",
            config.inputs,
            format!(
                "2..={} for an iCE40 board (the largest device holds far fewer)",
                fpga::MAX_INPUTS
            ),
        ));
    }
    let out = super::files::experiment_dir(
        "fpga",
        Some(&args.out),
        args.force,
        &super::args::run_input_files(&args.net, &args.traffic)?,
    )?;
    if args.largest {
        super::args::refuse(
            &[
                ("inputs", args.net.inputs.is_some()),
                ("simulate", args.simulate.is_some()),
            ],
            "without --largest (it tries 2, 4, 8, ... inputs and builds only)",
        )?;
        return largest(args, &config, &out, &command);
    }
    let device = devices(&args.device, false)?[0];
    let status = status_port(&args.status);
    if let Some(sim) = &args.simulate {
        let simulator = match sim.as_str() {
            "verilator" => Simulator::Verilator,
            _ => Simulator::Icarus,
        };
        let dir = out.join(format!("cosim-{}", simulator.name()));
        let verdict = {
            let _step = Step::start(&format!(
                "fpga: co-simulating the whole top under {}",
                simulator.name()
            ));
            fpga::cosim(&config, device, status, simulator, &dir, &command)?
        };
        say!("{verdict}");
        if !verdict.identical() {
            return Err(Error::Diverged);
        }
    }
    let report = fpga::build(
        &config,
        device,
        status,
        &out,
        &command,
        args.target_mhz,
        &mut progress,
    )?;
    let json = out.join("fpga.json");
    write_json(&json, &report)?;
    say!("fpga {}", summary(&report));
    let p = &report.prediction;
    say!(
        "status line predicted: generated={:x} delivered={:x} errors=0 last={:x} done",
        p.generated,
        p.delivered,
        p.last
    );
    for f in &report.files {
        written(&out.join(f));
    }
    match &report.bitstream {
        Some(_) => {}
        None => say!(
            "no bitstream: {}",
            report
                .failure
                .as_deref()
                .unwrap_or("place and route failed")
        ),
    }
    Ok(())
}

/// The largest butterfly that fits each device.
fn largest(args: &FpgaArgs, config: &SimConfig, out: &Path, command: &str) -> Result<()> {
    let mut rows = Vec::new();
    let mut table = String::from(
        "| device | inputs | LUT4 | flip-flops | logic cells | fits | Fmax (MHz) |\n|---|---:|---:|---:|---:|---|---:|\n",
    );
    for device in devices(&args.device, true)? {
        let capacity = u64::from(device.board().logic_cells);
        let mut best: Option<u32> = None;
        let mut inputs = 2u32;
        while inputs <= 64 {
            let c = SimConfig {
                inputs,
                ..config.clone()
            };
            let dir = out.join(device.name()).join(format!("n{inputs}"));
            progress(&format!("{}: trying {inputs} inputs", device.name()));
            let report = fpga::build(
                &c,
                device,
                status_port(&args.status),
                &dir,
                command,
                args.target_mhz,
                &mut |_| {},
            )?;
            write_json(&dir.join("fpga.json"), &report)?;
            say!("largest: {inputs} inputs on {}", summary(&report));
            table.push_str(&format!(
                "| {} | {inputs} | {} | {} | {}/{} | {} | {} |\n",
                device.name(),
                report.luts,
                report.dffs,
                report.logic_cells,
                report.logic_cells_available,
                if report.fits { "yes" } else { "no" },
                report.fmax_mhz.map_or("-".into(), |f| format!("{f:.1}"))
            ));
            let fits = report.fits;
            let luts = report.luts;
            rows.push(report);
            if !fits {
                break;
            }
            best = Some(inputs);
            if luts > capacity {
                break;
            }
            inputs *= 2;
        }
        say!(
            "largest butterfly on the {}: {}",
            device.name(),
            best.map_or("none".to_string(), |n| format!("{n} inputs"))
        );
    }
    write_json(&out.join("largest.json"), &rows)?;
    write(out.join("largest.md"), &table)
}
