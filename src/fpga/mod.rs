//! Hardware for an FPGA board: the network with an on-chip traffic generator at every input
//! and a checker at every output, its counters printed over a UART, built for an iCE40 by
//! yosys, nextpnr-ice40 and icepack from Debian's packages.
//!
//! The generators make exactly the model's `lfsr` traffic ([`crate::traffic::Traffic::Lfsr`]),
//! so the model predicts the board's status line ([`predict`]), and the whole top co-simulates
//! against the model ([`cosim`]).

pub mod board;
pub mod experiment;
pub mod flow;
pub mod measure;
pub mod top;

pub use board::{Board, Device};

use crate::config::{LinkBandwidth, SimConfig};
use crate::cosim::{Simulator, Verdict};
use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::topology::TopologyKind;
use crate::traffic::Traffic;
use crate::wave::{ScopeFilter, VcdWriter};
use serde::Serialize;
use std::path::Path;

/// Most inputs a board top is built for: no iCE40 holds more than a few switches' worth, and
/// yosys would take hours on larger netlists.
pub const MAX_INPUTS: u32 = 64;

/// How the board reports its run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatusPort {
    /// PASS and FAIL LEDs: the model's prediction is compiled in and compared on chip.
    #[default]
    Leds,
    /// The LEDs, and the counters printed over the UART (115 200 baud) as a status line.
    Uart,
}

impl StatusPort {
    /// Command-line names.
    pub const NAMES: [&'static str; 2] = ["leds", "uart"];
}

/// Checks that `config` describes a network the board top can carry.
pub fn check(config: &SimConfig) -> Result<()> {
    config.validate()?;
    if !matches!(config.traffic, Traffic::Lfsr { .. }) {
        return Err(Error::invalid(
            "traffic",
            config.traffic.name(),
            "lfsr: the on-chip generators make the model's lfsr traffic (--rate, --destinations)",
        ));
    }
    if config.topology.is_graph() {
        return Err(Error::invalid(
            "topology",
            config.topology.name(),
            "a butterfly-family network (a graph network's delivery ports differ per switch; its board top, checkers per terminal switch, is not built yet — rtl and cosim carry it)",
        ));
    }
    if matches!(
        config.topology,
        TopologyKind::Benes | TopologyKind::DoubledButterfly | TopologyKind::ModifiedSplitter
    ) {
        return Err(Error::invalid(
            "topology",
            config.topology.name(),
            "butterfly, dilated or splitter (the random middle columns of a Beneš or doubled butterfly have no on-chip generator yet)",
        ));
    }
    if config.link_bandwidth != LinkBandwidth::PerVc {
        return Err(Error::invalid(
            "link-bandwidth",
            "one",
            "per-vc (the on-chip generators send one flit per VC per cycle)",
        ));
    }
    if let Some(a) = config.switch_queue {
        return Err(Error::invalid(
            "switch-queue",
            a,
            "unset: the per-switch store-and-forward threshold has no Verilog yet",
        ));
    }
    let horizon = config.cycles.unwrap_or(0);
    if horizon > u64::from(u32::MAX) {
        return Err(Error::invalid(
            "cycles",
            horizon,
            "at most 4294967295 (the top counts cycles in 32 bits)",
        ));
    }
    Ok(())
}

/// What the model says the board's status line will read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Prediction {
    pub generated: u64,
    pub delivered: u64,
    pub errors: u64,
    /// The cycle in which the last flit drained at its output (one after its tail arrived).
    pub last: u64,
}

impl Prediction {
    /// The values in the status line's order.
    pub fn values(&self) -> [u64; 4] {
        [self.generated, self.delivered, self.errors, self.last]
    }
}

/// Runs the model of `config` (on-chip traffic up to its horizon) until every message has
/// drained, calling `observe` after every cycle.
fn run_to_completion(
    config: &SimConfig,
    mut observe: impl FnMut(&Simulation) -> Result<()>,
) -> Result<(Simulation, Prediction)> {
    let mut sim = Simulation::new(config.clone())?;
    while !sim.finished() {
        sim.step()?;
        observe(&sim)?;
    }
    let report = sim.report(false);
    let prediction = Prediction {
        generated: report.offered,
        delivered: report.delivered,
        errors: 0,
        last: if report.delivered == 0 {
            0
        } else {
            report.makespan_cycles + 1
        },
    };
    Ok((sim, prediction))
}

/// The model's prediction of the board's status line for `config`.
pub fn predict(config: &SimConfig) -> Result<Prediction> {
    check(config)?;
    run_to_completion(config, |_| Ok(())).map(|(_, p)| p)
}

/// The result of a co-simulation of the whole board top.
#[derive(Clone, Debug)]
pub struct TopVerdict {
    /// The network's registers, model against RTL.
    pub waveform: Verdict,
    pub prediction: Prediction,
    /// The status line the simulated top printed, if any.
    pub line: Option<String>,
    /// The PASS LED when the run was done.
    pub pass: Option<bool>,
}

impl TopVerdict {
    /// The waveforms are identical and the printed counters equal the prediction.
    pub fn identical(&self) -> bool {
        self.waveform.divergence.is_none() && self.counters_match() && self.pass == Some(true)
    }

    /// The printed status line says done and carries the predicted values.
    pub fn counters_match(&self) -> bool {
        self.line
            .as_deref()
            .and_then(top::parse_status)
            .is_some_and(|(values, done)| done && values == self.prediction.values())
    }
}

impl std::fmt::Display for TopVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.waveform)?;
        let p = &self.prediction;
        let expected = format!(
            "generated={:x} delivered={:x} errors={:x} last={:x} done",
            p.generated, p.delivered, p.errors, p.last
        );
        match &self.line {
            Some(line) if self.counters_match() => write!(
                f,
                "counters: identical ({}); PASS LED {}",
                line.trim(),
                match self.pass {
                    Some(true) => "on",
                    Some(false) => "OFF",
                    None => "unknown",
                }
            ),
            Some(line) => write!(
                f,
                "counters: DIFFER: the top printed \"{}\", the model predicts {expected}",
                line.trim()
            ),
            None => write!(
                f,
                "counters: DIFFER: the top printed no status line; the model predicts {expected}"
            ),
        }
    }
}

/// Co-simulates the whole board top of `config` on `device` under `simulator` in `dir`: the
/// network's registers against the model's waveform, and the status line the top prints over
/// its UART against the model's prediction.
pub fn cosim(
    config: &SimConfig,
    device: Device,
    status: StatusPort,
    simulator: Simulator,
    dir: &Path,
    command: &str,
) -> Result<TopVerdict> {
    check(config)?;
    let mut model_vcd = Vec::new();
    let (sim, prediction) = {
        let probe = Simulation::new(config.clone())?;
        crate::rtl::build::BuildSize::of(&probe).check(simulator)?;
        let mut vcd = VcdWriter::new(&mut model_vcd, &probe, &ScopeFilter::default(), command)?;
        let out = run_to_completion(config, |s| vcd.sample(s))?;
        vcd.finish()?;
        out
    };
    let cycles = sim.cycle();
    // Room for the reduction trees and one status line (10 bits a character, 4 clocks a bit
    // in the testbench).
    let slack = u64::from(top::tree_latency(config.inputs)) + 10 * 4 * top::status_line_len() + 64;
    let design = top::design(
        &sim,
        &prediction,
        device,
        status,
        command,
        Some(cycles + slack),
    )?;
    let waveform =
        crate::cosim::simulate_and_compare(&model_vcd, &design, cycles, simulator, dir, "tb.top.")?;
    let text = std::fs::read_to_string(dir.join(top::UART_FILE)).unwrap_or_default();
    let line = text
        .lines()
        .find(|l| l.starts_with("ff "))
        .map(String::from);
    let pass = text
        .lines()
        .find_map(|l| l.strip_prefix("pass="))
        .map(|v| v.trim() == "1");
    Ok(TopVerdict {
        waveform,
        prediction,
        line,
        pass,
    })
}

/// Everything `flitforge fpga` measured.
#[derive(Clone, Debug, Serialize)]
pub struct FpgaReport {
    pub schema: u32,
    pub device: Device,
    pub status: StatusPort,
    pub board: &'static str,
    pub package: &'static str,
    pub luts: u64,
    pub dffs: u64,
    pub carries: u64,
    pub brams: u64,
    pub logic_cells: u64,
    pub logic_cells_available: u64,
    /// Logic cells used, as a fraction of the device's.
    pub utilisation: f64,
    pub fits: bool,
    pub fmax_mhz: Option<f64>,
    /// The board's oscillator, which clocks the design.
    pub clock_mhz: f64,
    pub failure: Option<String>,
    /// The bitstream, relative to the output directory.
    pub bitstream: Option<String>,
    /// Every file the build wrote, relative to the output directory (sources, tool logs and
    /// reports, netlist, placed design, bitstream).
    pub files: Vec<String>,
    /// What the status line will read, from the model.
    pub prediction: Prediction,
    pub synthesis_script: &'static str,
    pub seconds: serde_json::Value,
    pub tools: serde_json::Value,
    pub config: SimConfig,
    pub config_hash: String,
}

/// Builds the board top of `config` for `device` in `dir`: Verilog, pin constraints, synthesis,
/// place and route, and (when it fits) the bitstream `top.bin`. `target_mhz` steers nextpnr's
/// timing-driven placement (it reports the Fmax it reaches either way).
pub fn build(
    config: &SimConfig,
    device: Device,
    status: StatusPort,
    dir: &Path,
    command: &str,
    target_mhz: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<FpgaReport> {
    check(config)?;
    progress("model: predicting the status line");
    let (sim, prediction) = run_to_completion(config, |_| Ok(()))?;
    let design = top::design(&sim, &prediction, device, status, command, None)?;
    design.write(dir)?;
    let sources: Vec<&str> = design.verilog_files();
    progress(&format!("yosys: {} ({} files)", flow::SYNTH, sources.len()));
    let synthesis = flow::synthesise(dir, &sources, "ff_top")?;
    progress(&format!(
        "nextpnr-ice40: placing {} LUT4 and {} flip-flops on the {}",
        synthesis.luts,
        synthesis.dffs,
        device.name()
    ));
    let pr = flow::place_route(dir, device, Some(top::PCF_FILE), target_mhz)?;
    let bitstream = if pr.fits {
        progress("icepack: writing the bitstream");
        flow::pack(dir)?;
        Some("top.bin".to_string())
    } else {
        None
    };
    let mut files: Vec<String> = design.files.iter().map(|(n, _)| n.clone()).collect();
    files.extend(
        flow::OUTPUTS
            .iter()
            .filter(|f| dir.join(f).exists())
            .map(|f| f.to_string()),
    );
    let board = device.board();
    Ok(FpgaReport {
        schema: 1,
        device,
        status,
        board: board.name,
        package: board.package,
        luts: synthesis.luts,
        dffs: synthesis.dffs,
        carries: synthesis.carries,
        brams: synthesis.brams,
        logic_cells: pr.logic_cells,
        logic_cells_available: pr.logic_cells_available,
        utilisation: if pr.logic_cells_available == 0 {
            0.0
        } else {
            (pr.logic_cells as f64 / pr.logic_cells_available as f64 * 1e4).round() / 1e4
        },
        fits: pr.fits,
        fmax_mhz: pr.fmax_mhz,
        clock_mhz: board.clock_mhz,
        failure: pr.failure,
        bitstream,
        files,
        prediction,
        synthesis_script: flow::SYNTH,
        seconds: serde_json::json!({
            "synthesis": synthesis.seconds,
            "place_route": pr.seconds,
        }),
        tools: flow::versions(),
        config_hash: config.config_hash(),
        config: config.clone(),
    })
}
