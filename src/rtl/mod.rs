//! Verilog from the same model: askama templates in `templates/` rendered from the topology,
//! the switch parameters and the register layout ([`crate::switch::layout`]). Every declared
//! register element becomes a signal of the same name and width as in the model's waveform
//! ([`crate::wave`]), so the two compare by construction.
//!
//! Files: one module per switch kind (`ff_switch_inject.v`, `ff_switch.v`,
//! `ff_switch_eject.v`; a graph network's `ff_node_i{in}_o{out}.v` per in and out degree, each
//! instance with its route table), the network top `ff_net.v`, the testbench `tb.v` replaying
//! the model's injections from `stimulus.hex`, and a FuseSoC core `flitforge.core`.

pub mod build;
pub(crate) mod hex;
mod net;
pub mod reference;
pub mod stimulus;
mod switch;

use net::net_template;
use switch::switch_template;

use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::switch::layout::SwitchKind;
use crate::topology::NodeId;
use askama::Template;
use std::path::{Path, PathBuf};

#[derive(Template)]
#[template(path = "tb.v", escape = "none")]
struct TbTemplate<'a> {
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    w: u32,
    inj_vcs: u32,
    ej_vcs: u32,
    cycles: u64,
    stimulus: &'a str,
    dumpfile: &'a str,
}

/// Name of the stimulus file the testbench reads.
pub const STIMULUS_FILE: &str = "stimulus.hex";
/// Name of the VCD the testbench writes.
pub const RTL_VCD_FILE: &str = "rtl.vcd";

/// The Verilog of one configured network.
pub struct RtlDesign {
    /// File name and contents, in a fixed order.
    pub files: Vec<(String, String)>,
}

pub(crate) fn render(t: &impl Template) -> Result<String> {
    t.render()
        .map_err(|e| Error::invalid("template", e, "a template that renders"))
}

/// The parameter overrides of the first instance of `module` in `net` (a generated network
/// top: `    module #(.NAME(value), ...) instance (`).
pub fn instance_params(net: &str, module: &str) -> Vec<(String, String)> {
    let Some(line) = net
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{module} #(")))
    else {
        return Vec::new();
    };
    let inner = line
        .split_once("#(")
        .and_then(|(_, rest)| rest.split_once(") "))
        .map_or("", |(p, _)| p);
    inner
        .split("),")
        .filter_map(|p| {
            let p = p.trim().trim_start_matches('.');
            let (name, value) = p.split_once('(')?;
            Some((name.to_string(), value.trim_end_matches(')').to_string()))
        })
        .collect()
}

/// Checks that the RTL back end supports `sim`'s configuration.
pub fn check_supported(sim: &Simulation) -> Result<()> {
    if let Some(g) = &sim.fabric.topo.graph
        && let Some(s) = (0..g.switches).find(|&s| g.in_ports(s) == 0)
    {
        return Err(Error::invalid(
            "graph",
            format!("switch {} without input ports", g.labels[s as usize]),
            "a graph whose every switch has a terminal or an in link, for RTL",
        ));
    }
    if let Some(a) = sim.config.switch_queue {
        return Err(Error::invalid(
            "switch-queue",
            a,
            "unset for RTL: the per-switch store-and-forward threshold has no Verilog yet",
        ));
    }
    Ok(())
}

/// Bytes of Verilog [`RtlDesign::new`] writes for `sim`'s network (the stimulus aside): the
/// switch modules (a mirror line per declared register element), and in the top two wire
/// lines per link and an instance per switch.
pub fn size_estimate(sim: &Simulation) -> u64 {
    let f = &sim.fabric;
    let w = sim.config.flit_bits;
    // a graph network's route tables: a hex digit per 4 bits in every instance
    let tables: u64 = match &f.topo.graph {
        Some(g) => (0..g.switches)
            .map(|s| {
                let bits = switch::RouteKey::of(sim).entries(g.in_ports(s))
                    * u64::from(switch::direction_bits(g.out_degree(s)));
                bits / 4 + 16
            })
            .sum(),
        None => 0,
    };
    let modules: u64 = switch_kinds(sim)
        .iter()
        .map(|&k| {
            let elements: u64 = f
                .layout(k, w, sim.header_layout.id_bits())
                .registers
                .iter()
                .map(|r| u64::from(r.elements()))
                .sum();
            30_000 + elements * 100
        })
        .sum();
    let switches = f.topo.node_count() as u64;
    let ports = switches * u64::from(f.topo.ports()) * 10 * 14;
    modules + wiring_bytes(switches, f.topo.links.len() as u64) + ports + tables
}

/// Bytes of the top's wiring: two wire lines a link, an instance's lines a switch (its port
/// connections aside).
fn wiring_bytes(switches: u64, links: u64) -> u64 {
    links
        .saturating_mul(220)
        .saturating_add(switches.saturating_mul(400))
}

/// Bytes of Verilog [`size_estimate`] comes to at least, from the configuration alone
/// ([`SimConfig::network_floor`](crate::config::SimConfig::network_floor)), for a check before
/// the network is built.
pub fn size_floor(config: &crate::config::SimConfig) -> u64 {
    let (switches, links) = config.network_floor();
    wiring_bytes(switches, links)
}

/// The switch kinds of `sim`'s network, one module each, in order of first appearance (a
/// graph network's switches by their in and out degrees).
fn switch_kinds(sim: &Simulation) -> Vec<SwitchKind> {
    let f = &sim.fabric;
    if f.topo.graph.is_none() {
        let mut kinds = vec![SwitchKind::Inject, SwitchKind::Route, SwitchKind::Eject];
        if f.topo.levels < 3 {
            kinds.retain(|&k| k != SwitchKind::Route);
        }
        return kinds;
    }
    let mut seen = std::collections::HashSet::new();
    (0..f.topo.node_count() as NodeId)
        .map(|s| f.kind_of(s))
        .filter(|&k| seen.insert(k))
        .collect()
}

impl RtlDesign {
    /// Generates the Verilog for `sim`'s network, with a testbench for `cycles` cycles of
    /// stimulus. `command` is named in every file's header.
    pub fn new(sim: &Simulation, command: &str, cycles: u64) -> Result<Self> {
        check_supported(sim)?;
        let version = env!("CARGO_PKG_VERSION");
        let hash = sim.config.config_hash();
        let mut files = Vec::new();
        for kind in switch_kinds(sim) {
            let t = switch_template(sim, kind, version, command, &hash);
            files.push((format!("{}.v", t.module), render(&t)?));
        }
        let net = net_template(sim, version, command, &hash);
        files.push(("ff_net.v".to_string(), render(&net)?));
        let c = &sim.config;
        let topo = &sim.fabric.topo;
        let tb = TbTemplate {
            version,
            command,
            config_hash: &hash,
            w: c.flit_bits,
            inj_vcs: topo.terminals() * c.vcs,
            ej_vcs: net.ej_vcs,
            cycles: cycles.max(1),
            stimulus: STIMULUS_FILE,
            dumpfile: RTL_VCD_FILE,
        };
        files.push(("tb.v".to_string(), render(&tb)?));
        let sources: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        files.push((
            "flitforge.core".to_string(),
            fusesoc_core(&sources, &hash, "ff_net"),
        ));
        Ok(RtlDesign { files })
    }

    /// The Verilog sources, testbench last.
    pub fn verilog_files(&self) -> Vec<&str> {
        self.files
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| n.ends_with(".v"))
            .collect()
    }

    /// Drops the testbench's waveform dump (`$dumpfile`, `$dumpvars`), to time the RTL alone.
    pub fn without_waveform(&mut self) {
        for (name, text) in &mut self.files {
            if name == "tb.v" {
                *text = text
                    .lines()
                    .filter(|l| !l.contains("$dumpfile(") && !l.contains("$dumpvars("))
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
        }
    }

    /// Writes every file into `dir` (created if missing) and returns their paths.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        let mut paths = Vec::new();
        for (name, text) in &self.files {
            let path = dir.join(name);
            crate::files::write_atomic(&path, text)?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// A FuseSoC CAPI2 core: `lint` runs Verilator's lint, `sim` runs the testbench in Icarus.
pub(crate) fn fusesoc_core(sources: &[&str], hash: &str, top: &str) -> String {
    let files: String = sources
        .iter()
        .filter(|s| **s != "tb.v")
        .map(|s| format!("      - {s}\n"))
        .collect();
    format!(
        "CAPI=2:\n# Generated by flitforge -- configuration hash {hash}\nname: flitforge:net:{top}:0.1.0\ndescription: flitforge network and testbench\n\nfilesets:\n  rtl:\n    file_type: verilogSource\n    files:\n{files}  tb:\n    file_type: verilogSource\n    files:\n      - tb.v\n  stimulus:\n    files:\n      - stimulus.hex: {{file_type: user, copyto: stimulus.hex}}\n\ntargets:\n  default:\n    filesets: [rtl]\n    toplevel: {top}\n  lint:\n    default_tool: verilator\n    filesets: [rtl]\n    toplevel: {top}\n    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]\n  sim:\n    default_tool: icarus\n    filesets: [rtl, tb, stimulus]\n    toplevel: tb\n    tools:\n      icarus:\n        iverilog_options: [-g2005]\n"
    )
}
