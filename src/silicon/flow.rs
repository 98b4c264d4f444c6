//! The standard-cell flow, all from Debian packages: yosys maps a design onto a Liberty
//! library (`synth -flatten`, `dfflibmap`, `abc` with buffering and gate sizing), OpenSTA
//! times the netlist without parasitics, and qflow (graywolf, qrouter) places and routes small
//! designs for a die area and a routed wire length.

use super::Library;
use crate::error::{Error, Result};
use crate::tools;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;

/// The flow's revision, part of every cached result's configuration hash: a change to the
/// flow that changes its figures bumps it, so old cached results are not reused.
/// 2: ABC buffers high-fan-out nets and sizes gates ([`ABC_CONSTRAINTS`]).
pub const FLOW_REVISION: u32 = 2;

/// ABC's timing constraints: every input driven by a 2× buffer and every output loaded by
/// about one gate input (0.01 pF). With them ABC buffers high-fan-out nets and sizes gates
/// towards [`ABC_DELAY_PS`], as a standard-cell flow does; without them one inverter would
/// drive a broadcast control signal to every cell and the critical path would measure that
/// unbuffered net, not the logic.
pub const ABC_CONSTRAINTS: &str = "set_driving_cell BUFX2\nset_load 0.01\n";

/// ABC's delay target, ps: 10 ns, loose enough that sizing repairs slow nets rather than
/// upsizing every gate.
pub const ABC_DELAY_PS: u32 = 10_000;

/// What synthesis onto a library measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Synthesis {
    pub cells: u64,
    pub flops: u64,
    /// Sum of the cells' Liberty areas (no wires), µm².
    pub cell_area_um2: f64,
    pub seconds: f64,
}

/// Critical paths from OpenSTA, ns: the shortest clock period each kind of path allows
/// (arrival plus the capturing flip-flop's setup time; ports with zero external delay).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// The longest of the four below: the circuit's minimum clock period.
    pub critical_path_ns: f64,
    pub reg_to_reg_ns: Option<f64>,
    pub input_to_reg_ns: Option<f64>,
    pub reg_to_output_ns: Option<f64>,
    /// A combinational path straight through the circuit, if it has one.
    pub input_to_output_ns: Option<f64>,
}

/// Place and route by qflow: the die (core plus pin ring) and the routed wire length.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlaceRoute {
    pub die_area_um2: f64,
    pub die_width_um: f64,
    pub die_height_um: f64,
    pub wire_length_um: f64,
    /// Nets qrouter could not route (0 on success).
    pub failed_routes: u64,
    pub seconds: f64,
}

/// Synthesises `sources` (in `dir`) with top `top` onto `library`; writes `net.v` (the mapped
/// netlist), `stat.txt` and `yosys.log` into `dir`.
pub fn synthesise(dir: &Path, sources: &[&str], top: &str, library: Library) -> Result<Synthesis> {
    synthesise_with(dir, sources, top, &[], library)
}

/// [`synthesise`] with `top`'s parameters set to `params` (name, Verilog value).
pub fn synthesise_with(
    dir: &Path,
    sources: &[&str],
    top: &str,
    params: &[(String, String)],
    library: Library,
) -> Result<Synthesis> {
    let started = Instant::now();
    let chparam: String = params
        .iter()
        .map(|(n, v)| format!("chparam -set {n} {v} {top}; "))
        .collect();
    let lib = library.liberty()?;
    let lib = lib.display();
    crate::files::write_atomic(dir.join("abc.constr"), ABC_CONSTRAINTS)?;
    let script = format!(
        "read_verilog {}; {chparam}hierarchy -top {top}; setattr -mod -unset keep_hierarchy *; \
         synth -top {top} -flatten; dfflibmap -liberty {lib}; \
         abc -D {ABC_DELAY_PS} -constr abc.constr -liberty {lib}; \
         opt_clean -purge; splitnets -ports; insbuf -buf {buf}; opt_clean; \
         tee -q -o stat.txt stat -liberty {lib}; write_verilog -noattr -noexpr net.v",
        sources.join(" "),
        buf = library.buffer(),
    );
    tools::yosys(dir, &script)?;
    let path = dir.join("stat.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?;
    let mut s = parse_stat(&text).ok_or_else(|| Error::parse(path.display(), "no statistics"))?;
    s.seconds = crate::stats::round_to(started.elapsed().as_secs_f64(), 2);
    Ok(s)
}

/// Cells, flip-flops (cells named `DFF…`) and chip area of yosys's `stat -liberty` output
/// (the last module printed, which is the top after flattening).
pub fn parse_stat(text: &str) -> Option<Synthesis> {
    let start = text.rfind("Number of cells:")?;
    let body = &text[start..];
    let cells = body.split_whitespace().nth(3)?.parse().ok()?;
    let mut flops = 0;
    for line in body.lines().skip(1) {
        let mut w = line.split_whitespace();
        match (w.next(), w.next().and_then(|n| n.parse::<u64>().ok())) {
            (Some(cell), Some(n)) if cell.starts_with("DFF") => flops += n,
            (Some(_), Some(_)) => {}
            _ => break,
        }
    }
    let area = body
        .lines()
        .find(|l| l.contains("Chip area"))?
        .rsplit(':')
        .next()?
        .trim()
        .parse()
        .ok()?;
    Some(Synthesis {
        cells,
        flops,
        cell_area_um2: area,
        seconds: 0.0,
    })
}

/// The OpenSTA script timing `net.v`'s `top` against a relaxed clock on port `clk`.
fn sta_script(library: &Path, top: &str, clock: Option<&str>) -> String {
    let mut s = format!(
        "read_liberty {}\nread_verilog net.v\nlink_design {top}\n",
        library.display()
    );
    match clock {
        Some(clk) => s.push_str(&format!(
            "create_clock -name clk -period {PERIOD} [get_ports {clk}]\n\
             set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports {clk}]]\n"
        )),
        None => s.push_str(&format!(
            "create_clock -name clk -period {PERIOD}\nset_input_delay 0 -clock clk [all_inputs]\n"
        )),
    }
    s.push_str("set_output_delay 0 -clock clk [all_outputs]\n");
    // Reset is a global net a real chip buffers and synchronises on its own: not a data path.
    s.push_str(
        "set resets [get_ports -quiet {rst reset rst_n}]\nif {[llength $resets] > 0} { set_false_path -from $resets }\n",
    );
    for (name, from, to) in [
        (
            "reg_to_reg",
            "[all_registers -clock_pins]",
            "[all_registers -data_pins]",
        ),
        ("input_to_reg", "[all_inputs]", "[all_registers -data_pins]"),
        (
            "reg_to_output",
            "[all_registers -clock_pins]",
            "[all_outputs]",
        ),
        ("input_to_output", "[all_inputs]", "[all_outputs]"),
    ] {
        s.push_str(&format!(
            "puts \"@@ {name}\"\nreport_checks -path_delay max -from {from} -to {to} -format end\n"
        ));
    }
    s.push_str("puts \"@@ path\"\nreport_checks -path_delay max -digits 3\nexit\n");
    s
}

/// The relaxed clock period the paths are measured against, ns.
const PERIOD: f64 = 1000.0;

/// Times `dir/net.v` with OpenSTA; writes `sta.tcl` and `sta.log` (the critical path in full).
pub fn time(dir: &Path, top: &str, library: Library, clock: Option<&str>) -> Result<Timing> {
    let script = sta_script(&library.liberty()?, top, clock);
    crate::files::write_atomic(dir.join("sta.tcl"), &script)?;
    let out = tools::tool(dir, "sta", &["-no_init", "-no_splash", "-exit", "sta.tcl"])?;
    crate::files::write_atomic(dir.join("sta.log"), &out)?;
    parse_timing(&out).ok_or_else(|| {
        Error::parse(
            format!("OpenSTA in {} (see sta.log)", dir.display()),
            "no timed path",
        )
    })
}

/// The four path groups of the STA script's output: per group the endpoint line
/// `pin (cell)  required  actual  slack (MET)`; the path's period is `PERIOD − slack`.
pub fn parse_timing(text: &str) -> Option<Timing> {
    let mut t = Timing::default();
    for section in text.split("@@ ").skip(1) {
        let name = section.lines().next()?.trim();
        let slack = section.lines().find_map(|l| {
            let l = l.trim();
            if !(l.ends_with("(MET)") || l.ends_with("(VIOLATED)")) {
                return None;
            }
            let w: Vec<&str> = l.split_whitespace().collect();
            w.get(w.len().checked_sub(2)?)?.parse::<f64>().ok()
        });
        let ns = slack.map(|s| crate::stats::round_to(PERIOD - s, 3));
        match name {
            "reg_to_reg" => t.reg_to_reg_ns = ns,
            "input_to_reg" => t.input_to_reg_ns = ns,
            "reg_to_output" => t.reg_to_output_ns = ns,
            "input_to_output" => t.input_to_output_ns = ns,
            _ => {}
        }
    }
    t.critical_path_ns = [
        t.reg_to_reg_ns,
        t.input_to_reg_ns,
        t.reg_to_output_ns,
        t.input_to_output_ns,
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    (t.critical_path_ns > 0.0).then_some(t)
}

/// Places and routes `source` (one Verilog file holding every module) with qflow in `dir`
/// (`source/`, `synthesis/`, `layout/`, `log/`, qflow's own synthesis script): the die from
/// the routed DEF's `DIEAREA`, the wire length from its routed nets.
pub fn place_route(dir: &Path, source: &str, top: &str, library: Library) -> Result<PlaceRoute> {
    let started = Instant::now();
    for sub in ["source", "synthesis", "layout", "log"] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| Error::io(d.display(), e))?;
    }
    crate::files::write_atomic(dir.join("source").join(format!("{top}.v")), source)?;
    let out = tools::run(
        dir,
        "qflow",
        &["synthesize", "place", "route", top, "-T", library.name()],
    )?;
    let log =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    crate::files::write_atomic(dir.join("qflow.log"), &log)?;
    let def = dir.join("layout").join(format!("{top}.def"));
    let text = std::fs::read_to_string(&def).map_err(|_| {
        Error::parse(
            format!("qflow in {} (see qflow.log and log/)", dir.display()),
            format!("no routed layout {}", def.display()),
        )
    })?;
    let mut pr = parse_def(&text).ok_or_else(|| Error::parse(def.display(), "no DIEAREA"))?;
    pr.failed_routes = failed_routes(&log);
    pr.seconds = crate::stats::round_to(started.elapsed().as_secs_f64(), 2);
    Ok(pr)
}

/// Nets qrouter failed to route, from its last `Final:` line ("No failed routes!" or
/// "Failed net routes: N"); `u64::MAX` when it never finished.
fn failed_routes(log: &str) -> u64 {
    let Some(last) = log
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("Final:"))
    else {
        return u64::MAX;
    };
    if last.contains("No failed routes") {
        return 0;
    }
    last.rsplit(':')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(u64::MAX)
}

/// Die area and routed wire length of a DEF file: `DIEAREA ( x0 y0 ) ( x1 y1 )` and, in
/// `NETS`, the Manhattan length of every routed segment `( x y ) ( x' y' )` (a `*` repeats
/// the previous coordinate), in the file's `UNITS DISTANCE MICRONS`.
pub fn parse_def(text: &str) -> Option<PlaceRoute> {
    let units: f64 = text
        .lines()
        .find(|l| l.trim_start().starts_with("UNITS DISTANCE MICRONS"))
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        .unwrap_or(100.0);
    let die = text
        .lines()
        .find(|l| l.trim_start().starts_with("DIEAREA"))?;
    let nums: Vec<f64> = die
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    if nums.len() < 4 {
        return None;
    }
    let (w, h) = ((nums[2] - nums[0]) / units, (nums[3] - nums[1]) / units);
    let mut length = 0.0;
    if let Some(start) = text.find("\nNETS") {
        let end = text[start..]
            .find("END NETS")
            .map_or(text.len(), |e| start + e);
        let nets = text[start..end].replace(" NEW ", " + NEW ");
        for segment in nets.split(['+', ';']) {
            let segment = segment.trim_start();
            if !(segment.starts_with("ROUTED") || segment.starts_with("NEW")) {
                continue;
            }
            let mut prev: Option<(f64, f64)> = None;
            let mut rest = segment;
            while let Some(open) = rest.find('(') {
                let Some(close) = rest[open..].find(')') else {
                    break;
                };
                let coords: Vec<&str> = rest[open + 1..open + close].split_whitespace().collect();
                rest = &rest[open + close + 1..];
                let coordinate = |i: usize, last: Option<f64>| match coords.get(i) {
                    Some(&"*") => last,
                    Some(w) => w.parse::<f64>().ok(),
                    None => None,
                };
                let (Some(x), Some(y)) = (
                    coordinate(0, prev.map(|p| p.0)),
                    coordinate(1, prev.map(|p| p.1)),
                ) else {
                    continue;
                };
                if let Some((px, py)) = prev {
                    length += (x - px).abs() + (y - py).abs();
                }
                prev = Some((x, y));
            }
        }
    }
    Some(PlaceRoute {
        die_area_um2: (w * h).round(),
        die_width_um: crate::stats::round_to(w, 2),
        die_height_um: crate::stats::round_to(h, 2),
        wire_length_um: (length / units).round(),
        failed_routes: 0,
        seconds: 0.0,
    })
}

/// Versions of the tools, for reports.
pub fn versions() -> serde_json::Value {
    serde_json::json!({
        "yosys": tools::version("yosys", "-V"),
        "opensta": tools::version("sta", "-version"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_yosys_statistics() {
        let text = "=== ff_net ===\n\n   Number of wires:  10\n   Number of cells:               4260\n     AND2X1    12\n     DFFPOSX1                      600\n     DFFSR  4\n\n   Chip area for module '\\ff_net': 163206.000000\n";
        let s = parse_stat(text).unwrap();
        assert_eq!((s.cells, s.flops, s.cell_area_um2), (4260, 604, 163206.0));
    }

    #[test]
    fn parses_opensta_path_groups() {
        let text = "@@ reg_to_reg\nEndpoint  Delay Delay Slack\n---\n_1_/D (DFFPOSX1)   999.79    5.90   993.89 (MET)\n\n@@ input_to_reg\n_2_/D (DFFPOSX1)  999.82 2.14 997.67 (MET)\n@@ reg_to_output\nx (output) 1000.00 4.20 995.80 (MET)\n@@ input_to_output\nNo paths found.\n@@ path\n";
        let t = parse_timing(text).unwrap();
        assert_eq!(t.reg_to_reg_ns, Some(6.11));
        assert_eq!(t.reg_to_output_ns, Some(4.2));
        assert_eq!(t.input_to_output_ns, None);
        assert_eq!(t.critical_path_ns, 6.11);
    }

    #[test]
    fn parses_a_routed_def() {
        let def = "UNITS DISTANCE MICRONS 100 ;\nDIEAREA ( -320 -300 ) ( 26880 18300 ) ;\nNETS 1 ;\n- a\n  ( PIN a ) ( BUFX2_1 A )\n+ ROUTED metal2 ( 100 200 ) M2_M1 ( * 500 ) ( 300 * )\n  NEW metal1 ( 0 0 ) ( 100 0 ) ;\nEND NETS\n";
        let p = parse_def(def).unwrap();
        assert_eq!(p.die_area_um2, (272.0f64 * 186.0).round());
        assert_eq!(p.wire_length_um, 6.0);
        assert_eq!(failed_routes("x\nFinal: No failed routes!\n"), 0);
        assert_eq!(failed_routes("Final: Failed net routes: 3\n"), 3);
        assert_eq!(failed_routes("graywolf died\n"), u64::MAX);
    }
}
