//! `flitforge experiment fpga`: the emitted hardware measured on iCE40 devices -- one switch
//! of each back-pressure mode, the board tops of 4- and 8-input networks, the largest
//! butterfly each device holds, the pruned-butterfly vertices and the flexible sorter.

use super::board::Device;
use super::measure::{self, ModuleFigures};
use super::{StatusPort, build};
use crate::config::{Backpressure, SimConfig};
use crate::error::{Error, Result};
use crate::rtl::RtlDesign;
use crate::traffic::{Destinations, Traffic};
use serde::Serialize;
use std::path::Path;

/// One measured design.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub design: String,
    pub device: Device,
    pub luts: u64,
    pub dffs: u64,
    /// Logic cells after place and route (board tops only).
    pub logic_cells: Option<u64>,
    pub fits: bool,
    pub fmax_mhz: Option<f64>,
}

/// The board top's configuration for `inputs` inputs (B = 2, L = 4, W = 8, registered).
pub fn top_config(inputs: u32, destinations: Destinations, horizon: u64) -> SimConfig {
    SimConfig {
        inputs,
        vcs: 2,
        flits: 4,
        flit_bits: 8,
        backpressure: Backpressure::Registered,
        traffic: Traffic::Lfsr {
            rate: 0.25,
            destinations,
        },
        cycles: Some(horizon),
        ..SimConfig::default()
    }
}

fn module_row(design: String, device: Device, f: ModuleFigures) -> Row {
    Row {
        design,
        device,
        luts: f.luts,
        dffs: f.dffs,
        logic_cells: None,
        fits: f.fmax_mhz.is_some(),
        fmax_mhz: f.fmax_mhz,
    }
}

fn write_design(design: &RtlDesign, dir: &Path) -> Result<Vec<String>> {
    design.write(dir)?;
    Ok(design
        .verilog_files()
        .into_iter()
        .filter(|f| *f != "tb.v")
        .map(String::from)
        .collect())
}

/// Runs every measurement into `out` and returns the rows.
pub fn run(out: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out.display(), e))?;
    let mut rows = Vec::new();
    let device = Device::Hx8k;
    let command = "flitforge experiment fpga";
    // One interior switch of the 8-input network, per back-pressure mode.
    for backpressure in [Backpressure::Combinational, Backpressure::Registered] {
        let name = match backpressure {
            Backpressure::Combinational => "combinational",
            Backpressure::Registered => "registered",
        };
        progress(&format!("switch, {name} back-pressure"));
        let config = SimConfig {
            backpressure,
            traffic: Traffic::Identity,
            cycles: None,
            ..top_config(8, Destinations::Uniform, 0)
        };
        let sim = crate::Simulation::new(config)?;
        let dir = out.join(format!("switch-{name}"));
        let files = write_design(&RtlDesign::new(&sim, command, 1)?, &dir)?;
        let sources: Vec<&str> = files.iter().map(String::as_str).collect();
        let f = measure::module(&dir, &sources, "ff_switch", &[], device)?;
        rows.push(module_row(
            format!("2x2 switch, B = 2, W = 8, depth 1, {name}"),
            device,
            f,
        ));
    }
    // Board tops.
    for (inputs, destinations) in [
        (4, Destinations::Uniform),
        (8, Destinations::Uniform),
        (8, Destinations::RandomPermutation),
    ] {
        progress(&format!(
            "board top, {inputs} inputs, {} destinations",
            destinations.name()
        ));
        let dir = out.join(format!("top{inputs}-{}", destinations.name()));
        let config = top_config(inputs, destinations, 10_000);
        let r = build(
            &config,
            device,
            StatusPort::Leds,
            &dir,
            command,
            100.0,
            &mut |_| {},
        )?;
        rows.push(Row {
            design: format!(
                "{inputs}-input butterfly + generators + checkers ({} destinations)",
                destinations.name()
            ),
            device,
            luts: r.luts,
            dffs: r.dffs,
            logic_cells: Some(r.logic_cells),
            fits: r.fits,
            fmax_mhz: r.fmax_mhz,
        });
    }
    // The largest butterfly top on every device.
    for dev in [Device::Hx1k, Device::Up5k, Device::Hx8k] {
        let mut inputs = 2;
        let mut best: Option<Row> = None;
        while inputs <= 16 {
            progress(&format!("largest on {}: {inputs} inputs", dev.name()));
            let dir = out.join(format!("largest-{}-n{inputs}", dev.name()));
            let config = top_config(inputs, Destinations::Uniform, 10_000);
            let r = build(
                &config,
                dev,
                StatusPort::Leds,
                &dir,
                command,
                100.0,
                &mut |_| {},
            )?;
            if !r.fits {
                break;
            }
            best = Some(Row {
                design: format!("largest butterfly top: {inputs} inputs"),
                device: dev,
                luts: r.luts,
                dffs: r.dffs,
                logic_cells: Some(r.logic_cells),
                fits: true,
                fmax_mhz: r.fmax_mhz,
            });
            inputs *= 2;
        }
        if let Some(row) = best {
            rows.push(row);
        }
    }
    // Pruned-butterfly vertices of a 16-leaf network.
    progress("pruned-butterfly vertices");
    let pruned = crate::pruned::PrunedConfig::new(16, Traffic::HotRegion { region: 1 }, 1)
        .prepare(command)?;
    let dir = out.join("pruned16");
    let files = write_design(&pruned.design, &dir)?;
    let net = std::fs::read_to_string(dir.join("ff_pb_net.v"))
        .map_err(|e| Error::io(dir.join("ff_pb_net.v").display(), e))?;
    for module in ["ff_pb_root", "ff_pb_odd", "ff_pb_even", "ff_pb_leaf"] {
        if !files.iter().any(|f| f == &format!("{module}.v")) {
            continue;
        }
        let params = crate::rtl::instance_params(&net, module);
        let f = measure::module(&dir, &[&format!("{module}.v")], module, &params, device)?;
        rows.push(module_row(
            format!("pruned-butterfly vertex {module} (16 leaves)"),
            device,
            f,
        ));
    }
    // The flexible sorter, s = 8, l = 64, 8-bit keys.
    progress("flexible sorter");
    let sorter = crate::sorter::SortConfig {
        params: crate::sorter::SorterParams {
            s: 8,
            l: 64,
            bits: 8,
        },
        r: 16,
        seed: 1,
    }
    .prepare(command)?;
    let dir = out.join("fsort");
    write_design(&sorter.design, &dir)?;
    let f = measure::module(&dir, &["ff_fsort.v"], "ff_fsort", &[], device)?;
    rows.push(module_row(
        "flexible sorter, s = 8, l = 64, b = 8".into(),
        device,
        f,
    ));
    Ok(rows)
}

/// The rows as CSV (one header line).
pub fn csv(rows: &[Row]) -> String {
    let mut csv = String::from("design,device,luts,dffs,logic_cells,fits,fmax_mhz\n");
    for r in rows {
        csv.push_str(&format!(
            "\"{}\",{},{},{},{},{},{}\n",
            r.design,
            r.device.name(),
            r.luts,
            r.dffs,
            r.logic_cells.map_or(String::new(), |c| c.to_string()),
            r.fits,
            r.fmax_mhz.map_or(String::new(), |f| f.to_string())
        ));
    }
    csv
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut t = String::from(
        "| design | device | LUT4 | flip-flops | logic cells | fits | Fmax (MHz) |\n|---|---|---:|---:|---:|---|---:|\n",
    );
    for r in rows {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.design,
            r.device.name(),
            r.luts,
            r.dffs,
            r.logic_cells.map_or("-".into(), |c| c.to_string()),
            if r.fits { "yes" } else { "no" },
            r.fmax_mhz.map_or("-".into(), |f| format!("{f:.1}"))
        ));
    }
    t
}
