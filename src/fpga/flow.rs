//! The iCE40 flow: yosys `synth_ice40` → nextpnr-ice40 → icepack, with every tool's log kept
//! and the figures read from their machine-readable reports.

use super::board::Device;
use crate::error::{Error, Result};
use crate::tools;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The synthesis script: ABC9 with the flip-flops' enables visible to it (`-dff`), which
/// measured best on flitforge's switches, and a clock enable only where it serves four
/// flip-flops or more (`-dffe_min_ce_use 4`): a smaller enable is folded into the flip-flop's
/// input LUT, which then packs into the flip-flop's logic cell, instead of a flip-flop alone
/// in a cell with its enable net routed to it. On the 8-input board top that is 116 cells
/// fewer and 86.8 MHz against 74.3 (see docs/fpga.md).
pub const SYNTH: &str = "synth_ice40 -abc9 -dff -dffe_min_ce_use 4";

/// What synthesis produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Synthesis {
    pub luts: u64,
    pub dffs: u64,
    pub carries: u64,
    pub brams: u64,
    pub seconds: f64,
}

/// What place and route produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlaceRoute {
    /// The design was placed and routed on the device.
    pub fits: bool,
    pub logic_cells: u64,
    pub logic_cells_available: u64,
    /// Highest clock frequency the routed design meets (nextpnr's timing analysis).
    pub fmax_mhz: Option<f64>,
    /// The first line of nextpnr's log explaining a failure.
    pub failure: Option<String>,
    pub seconds: f64,
}

/// Synthesises `top` from `sources` in `dir` (log `yosys.log`, netlist `top.json`).
pub fn synthesise(dir: &Path, sources: &[&str], top: &str) -> Result<Synthesis> {
    synthesise_module(dir, sources, top, &[])
}

/// [`synthesise`] with `top`'s parameters set to `params` (name, Verilog value).
pub fn synthesise_module(
    dir: &Path,
    sources: &[&str],
    top: &str,
    params: &[(String, String)],
) -> Result<Synthesis> {
    let started = Instant::now();
    let chparam: String = params
        .iter()
        .map(|(n, v)| format!("chparam -set {n} {v} {top}; "))
        .collect();
    let script = format!(
        "read_verilog {}; {chparam}{SYNTH} -top {top} -json top.json; tee -q -o stat.json stat -json",
        sources.join(" ")
    );
    tools::yosys(dir, &script)?;
    let path = dir.join("stat.json");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?;
    let stat: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::parse(path.display(), e))?;
    let cells = &stat["design"]["num_cells_by_type"];
    let count = |prefix: &str| -> u64 {
        cells
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.starts_with(prefix))
                    .filter_map(|(_, v)| v.as_u64())
                    .sum()
            })
            .unwrap_or(0)
    };
    Ok(Synthesis {
        luts: count("SB_LUT4"),
        dffs: count("SB_DFF"),
        carries: count("SB_CARRY"),
        brams: count("SB_RAM40"),
        seconds: crate::stats::round_to(started.elapsed().as_secs_f64(), 2),
    })
}

/// Places and routes `top.json` in `dir` on `device` with the pins of `pcf` aiming at
/// `target_mhz` (log `nextpnr.log`, report `nextpnr.json`, layout `top.asc`). A design that
/// does not fit is a result (`fits: false`), not an error.
pub fn place_route(
    dir: &Path,
    device: Device,
    pcf: Option<&str>,
    target_mhz: f64,
) -> Result<PlaceRoute> {
    let started = Instant::now();
    let board = device.board();
    let freq = format!("{target_mhz}");
    let mut args = vec![
        board.nextpnr_device,
        "--package",
        board.package,
        "--json",
        "top.json",
        "--asc",
        "top.asc",
        "--report",
        "nextpnr.json",
        "--freq",
        &freq,
        "--seed",
        "1",
        "--timing-allow-fail",
        "--log",
        "nextpnr.log",
        "-q",
    ];
    match pcf {
        Some(p) => args.extend(["--pcf", p]),
        None => args.push("--pcf-allow-unconstrained"),
    }
    let _ = std::fs::remove_file(dir.join("nextpnr.json"));
    let out = tools::run(dir, "nextpnr-ice40", &args)?;
    let mut result = PlaceRoute {
        logic_cells_available: u64::from(board.logic_cells),
        seconds: 0.0,
        ..PlaceRoute::default()
    };
    let log = std::fs::read_to_string(dir.join("nextpnr.log")).unwrap_or_default();
    if let Ok(text) = std::fs::read_to_string(dir.join("nextpnr.json"))
        && let Ok(report) = serde_json::from_str::<serde_json::Value>(&text)
    {
        let lc = &report["utilization"]["ICESTORM_LC"];
        result.logic_cells = lc["used"].as_u64().unwrap_or(0);
        result.fmax_mhz = report["fmax"]
            .as_object()
            .and_then(|m| {
                m.values()
                    .filter_map(|v| v["achieved"].as_f64())
                    .reduce(f64::min)
            })
            .map(|f| crate::stats::round_to(f, 2));
    }
    if let Some(used) = log
        .lines()
        .find(|l| l.contains("ICESTORM_LC:"))
        .and_then(|l| l.split("ICESTORM_LC:").nth(1))
        .and_then(|rest| rest.trim().split('/').next())
        .and_then(|n| n.trim().parse().ok())
        && result.logic_cells == 0
    {
        result.logic_cells = used;
    }
    result.fits = out.status.success() && dir.join("top.asc").exists();
    if !result.fits {
        result.failure = log
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
            .find(|l| l.contains("ERROR"))
            .map(|l| l.trim().to_string())
            .or_else(|| Some(format!("nextpnr-ice40: {}", out.status)));
    }
    result.seconds = crate::stats::round_to(started.elapsed().as_secs_f64(), 2);
    Ok(result)
}

/// Packs `top.asc` into the bitstream `top.bin`.
/// The files synthesis, place and route and packing write, in that order.
pub const OUTPUTS: [&str; 7] = [
    "yosys.log",
    "stat.json",
    "top.json",
    "nextpnr.log",
    "nextpnr.json",
    "top.asc",
    "top.bin",
];

pub fn pack(dir: &Path) -> Result<()> {
    tools::tool(dir, "icepack", &["top.asc", "top.bin"]).map(|_| ())
}

/// Versions of the tools, for the report.
pub fn versions() -> serde_json::Value {
    serde_json::json!({
        "yosys": tools::version("yosys", "-V"),
        "nextpnr": tools::version("nextpnr-ice40", "--version"),
    })
}
