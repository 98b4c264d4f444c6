//! Verilog from the same model: askama templates in `templates/` rendered from the topology,
//! the switch parameters and the register layout ([`crate::switch::layout`]). Every declared
//! register element becomes a signal of the same name and width as in the model's waveform
//! ([`crate::wave`]), so the two compare by construction.
//!
//! Files: one module per switch kind (`ff_switch_inject.v`, `ff_switch.v`,
//! `ff_switch_eject.v`; a graph network's `ff_node_i{in}_o{out}.v` per in and out degree, each
//! instance with its route table), the network top `ff_net.v`, the testbench `tb.v` replaying
//! the model's injections from `stimulus.hex`, and a FuseSoC core `flitforge.core`.

pub mod reference;
pub mod stimulus;
mod switch;

use switch::switch_template;

use crate::config::LaneChoice;
use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::switch::layout::SwitchKind;
use crate::topology::{NO_TERMINAL, NodeId, RouteField};
use askama::Template;
use std::path::{Path, PathBuf};

struct LinkWire {
    id: u32,
    comment: String,
}

struct Instance {
    module: String,
    name: String,
    /// Parameter overrides, `#(...) ` or empty.
    params: String,
    ports: Vec<(&'static str, String)>,
}

struct Level {
    level: u32,
    switches: Vec<Instance>,
}

#[derive(Template)]
#[template(path = "net.v", escape = "none")]
struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    b: u32,
    w: u32,
    /// Injection VCs of the network: terminals · B.
    inj_vcs: u32,
    /// Delivery VCs of the network: last-level switches · their input VCs.
    ej_vcs: u32,
    links: Vec<LinkWire>,
    levels: Vec<Level>,
}

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
    let links = f.topo.links.len() as u64 * 220;
    let instances = f.topo.node_count() as u64 * (400 + u64::from(f.topo.ports()) * 10 * 14);
    modules + links + instances + tables
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

fn net_template<'a>(
    sim: &Simulation,
    version: &'a str,
    command: &'a str,
    hash: &'a str,
) -> NetTemplate<'a> {
    let f = &sim.fabric;
    let topo = &f.topo;
    let b = f.params.vcs;
    let w = sim.config.flit_bits;
    if topo.graph.is_some() {
        return graph_net_template(sim, version, command, hash);
    }
    let links = topo
        .links
        .iter()
        .enumerate()
        .map(|(id, l)| {
            let (t, h) = (topo.node(l.tail), topo.node(l.head));
            LinkWire {
                id: id as u32,
                comment: format!(
                    "l{}_c{} {} lane {} -> l{}_c{} port {}",
                    t.level,
                    t.column,
                    direction_name(topo.radix, l.direction),
                    l.lane,
                    h.level,
                    h.column,
                    l.head_port
                ),
            }
        })
        .collect();
    let mut levels = Vec::new();
    for level in 0..topo.levels {
        let kind = f.switch_kind(level);
        let module = f.layout(kind, w, 1).module;
        let mut switches = Vec::new();
        for column in 0..topo.n {
            let s: NodeId = topo.node_id(level, column);
            let mut ports: Vec<(&'static str, String)> = Vec::new();
            let ins: Vec<u32> = if level == 0 {
                Vec::new()
            } else {
                (0..topo.ports()).map(|p| topo.in_link(s, p)).collect()
            };
            // A level-0 switch's injection ports: its terminals' VCs, in terminal order.
            let inj = topo.inject_ports * b;
            for (port, signal) in [
                ("in_valid", "valid"),
                ("in_head", "head"),
                ("in_tail", "tail"),
                ("in_flit", "flit"),
            ] {
                let expr = if level == 0 {
                    let width = if signal == "flit" { inj * w } else { inj };
                    format!("inj_{signal}[{} +: {width}]", column * width)
                } else {
                    concat(ins.iter().map(|l| format!("lk{l}_{signal}")).collect())
                };
                ports.push((port, expr));
            }
            for (port, signal) in [("in_ready", "ready"), ("in_accept", "accept")] {
                let expr = if level == 0 {
                    format!("inj_{signal}[{} +: {inj}]", column * inj)
                } else {
                    concat(ins.iter().map(|l| format!("lk{l}_{signal}")).collect())
                };
                ports.push((port, expr));
            }
            if kind == SwitchKind::Eject {
                let ej = topo.ports() * b;
                for signal in ["valid", "head", "tail", "flit"] {
                    let width = if signal == "flit" { ej * w } else { ej };
                    ports.push((
                        out_port(signal),
                        format!("ej_{signal}[{} +: {width}]", column * width),
                    ));
                }
            } else {
                let outs: Vec<u32> = (0..topo.ports()).map(|o| s * topo.ports() + o).collect();
                for (port, signal) in [
                    ("out_valid", "valid"),
                    ("out_head", "head"),
                    ("out_tail", "tail"),
                    ("out_flit", "flit"),
                    ("out_ready", "ready"),
                    ("out_accept", "accept"),
                ] {
                    ports.push((
                        port,
                        concat(outs.iter().map(|l| format!("lk{l}_{signal}")).collect()),
                    ));
                }
            }
            // The lowest header bit of the level's routing digit.
            let route_bit = if level < topo.last_level() {
                let (field, shift) = topo.route_digit(level);
                let name = match field {
                    RouteField::Destination => "dest",
                    RouteField::Middle => "mid",
                };
                let offset = sim.header_layout.field(name).map_or(0, |fl| fl.offset);
                offset + shift
            } else {
                0
            };
            let params = match kind {
                SwitchKind::Eject => String::new(),
                _ if f.params.lane_choice == LaneChoice::Random => {
                    format!(
                        "#(.ROUTE_BIT({route_bit}), .LFSR_SEED(16'h{:04X})) ",
                        f.lfsr_reset(s)
                    )
                }
                _ => format!("#(.ROUTE_BIT({route_bit})) "),
            };
            switches.push(Instance {
                module: module.clone(),
                name: format!("l{level}_c{column}"),
                params,
                ports,
            });
        }
        levels.push(Level { level, switches });
    }
    NetTemplate {
        description: format!(
            "{}-input {} network, {}B = {}, W = {}, {} levels",
            topo.terminals(),
            topo.kind.name(),
            if topo.kind == crate::topology::TopologyKind::KaryFly {
                format!("k = {}, ", topo.radix)
            } else {
                String::new()
            },
            b,
            w,
            topo.levels
        ),
        version,
        command,
        config_hash: hash,
        b,
        w,
        inj_vcs: topo.terminals() * b,
        ej_vcs: topo.n * topo.ports() * b,
        links,
        levels,
    }
}

/// Concatenation of per-port wire groups, highest port first (port 0 in the low bits).
fn concat(groups: Vec<String>) -> String {
    format!(
        "{{{}}}",
        groups.into_iter().rev().collect::<Vec<_>>().join(", ")
    )
}

/// The top of a graph network: a switch per node, named by its label, ports in the model's
/// order (the terminal's injection port first, then the in links; the out links in link
/// order), every switch's input VCs on the delivery bus (a worm whose path ends there leaves
/// from its VC), and each switch's route table as its `ROUTES` parameter.
fn graph_net_template<'a>(
    sim: &Simulation,
    version: &'a str,
    command: &'a str,
    hash: &'a str,
) -> NetTemplate<'a> {
    let f = &sim.fabric;
    let topo = &f.topo;
    let g = topo.graph.as_ref().expect("a graph network");
    let b = f.params.vcs;
    let w = sim.config.flit_bits;
    let links = topo
        .links
        .iter()
        .enumerate()
        .map(|(id, l)| LinkWire {
            id: id as u32,
            comment: format!(
                "{} -> {} port {}",
                topo.scope(l.tail),
                topo.scope(l.head),
                l.head_port
            ),
        })
        .collect();
    let mut levels = Vec::new();
    let mut ej_base = 0u32;
    for level in 0..g.level_start.len().saturating_sub(1) {
        let mut switches = Vec::new();
        for s in g.level_start[level]..g.level_start[level + 1] {
            let kind = f.kind_of(s);
            let layout = f.layout(kind, w, 1);
            let nv = layout.in_ports * b;
            let terminal = g.switch_terminal[s as usize];
            let from_links = u32::from(terminal != NO_TERMINAL)..layout.in_ports;
            let ins: Vec<u32> = from_links.map(|p| topo.in_link(s, p)).collect();
            let mut ports: Vec<(&'static str, String)> = Vec::new();
            for signal in ["valid", "head", "tail", "flit", "ready", "accept"] {
                let width = if signal == "flit" { b * w } else { b };
                let mut groups = Vec::new();
                if terminal != NO_TERMINAL {
                    groups.push(format!("inj_{signal}[{} +: {width}]", terminal * width));
                }
                groups.extend(ins.iter().map(|l| format!("lk{l}_{signal}")));
                ports.push((in_port(signal), concat(groups)));
            }
            let (outs, delivery) = if layout.out_ports == 0 {
                (None, ["out_valid", "out_head", "out_tail", "out_flit"])
            } else {
                (
                    Some(g.out_start[s as usize]..g.out_start[s as usize + 1]),
                    ["ej_valid", "ej_head", "ej_tail", "ej_flit"],
                )
            };
            if let Some(outs) = outs {
                for signal in ["valid", "head", "tail", "flit", "ready", "accept"] {
                    let groups = outs.clone().map(|l| format!("lk{l}_{signal}")).collect();
                    ports.push((
                        match signal {
                            "ready" => "out_ready",
                            "accept" => "out_accept",
                            other => out_port(other),
                        },
                        concat(groups),
                    ));
                }
            }
            for (port, signal) in delivery.into_iter().zip(["valid", "head", "tail", "flit"]) {
                let (base, width) = if signal == "flit" {
                    (ej_base * w, nv * w)
                } else {
                    (ej_base, nv)
                };
                ports.push((port, format!("ej_{signal}[{base} +: {width}]")));
            }
            ej_base += nv;
            let mut params = Vec::new();
            if layout.out_ports > 0 {
                let bits = switch::direction_bits(layout.out_ports);
                params.push(format!(
                    ".ROUTES({})",
                    verilog_table(&switch::route_table(sim, s), bits)
                ));
                if f.params.lane_choice == LaneChoice::Random {
                    params.push(format!(".LFSR_SEED(16'h{:04X})", f.lfsr_reset(s)));
                }
            }
            switches.push(Instance {
                module: layout.module,
                name: topo.scope(s),
                params: if params.is_empty() {
                    String::new()
                } else {
                    format!("#({}) ", params.join(", "))
                },
                ports,
            });
        }
        levels.push(Level {
            level: level as u32,
            switches,
        });
    }
    NetTemplate {
        description: format!(
            "{}-terminal {} network of {} switches, B = {b}, W = {w}{}",
            topo.terminals(),
            topo.kind.name(),
            g.switches,
            if g.cyclic {
                ", cyclic (one evaluation level)"
            } else {
                ""
            }
        ),
        version,
        command,
        config_hash: hash,
        b,
        w,
        inj_vcs: topo.terminals() * b,
        ej_vcs: ej_base,
        links,
        levels,
    }
}

/// A route table as a Verilog constant: `entries.len() * bits` bits, entry 0 lowest, in hex.
fn verilog_table(entries: &[u32], bits: u32) -> String {
    let total = entries.len() as u64 * u64::from(bits);
    let digits = total.div_ceil(4) as usize;
    let mut hex = vec![0u8; digits];
    for (k, &e) in entries.iter().enumerate() {
        for bit in 0..bits {
            if e >> bit & 1 == 1 {
                let at = k as u64 * u64::from(bits) + u64::from(bit);
                hex[(at / 4) as usize] |= 1 << (at % 4);
            }
        }
    }
    let text: String = hex
        .iter()
        .rev()
        .map(|&d| char::from_digit(u32::from(d), 16).expect("a hex digit"))
        .collect();
    format!("{total}'h{text}")
}

fn in_port(signal: &str) -> &'static str {
    match signal {
        "valid" => "in_valid",
        "head" => "in_head",
        "tail" => "in_tail",
        "flit" => "in_flit",
        "ready" => "in_ready",
        _ => "in_accept",
    }
}

/// A link's direction as the netlist comments name it: up/down at radix 2, else its digit.
fn direction_name(radix: u32, direction: u8) -> String {
    match (radix, direction) {
        (2, 0) => "up".to_string(),
        (2, _) => "down".to_string(),
        (_, d) => format!("dir {d}"),
    }
}

fn out_port(signal: &str) -> &'static str {
    match signal {
        "valid" => "out_valid",
        "head" => "out_head",
        "tail" => "out_tail",
        _ => "out_flit",
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
