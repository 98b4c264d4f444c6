//! The network top `ff_net.v`: the switch instances level by level (a graph network's by
//! switch, each with its route table) and the link wires between them, rendered from the
//! topology and the switches' port layout.

use super::switch;
use crate::config::LaneChoice;
use crate::sim::Simulation;
use crate::switch::layout::SwitchKind;
use crate::topology::{NO_TERMINAL, NodeId, RouteField};
use askama::Template;

/// A link's wires (`lk{id}_…`) and the comment naming its ends.
struct LinkWire {
    id: u32,
    comment: String,
}

/// One switch instance of the top: its module, name, parameters and port connections.
struct Instance {
    module: String,
    name: String,
    /// Parameter overrides, `#(...) ` or empty.
    params: String,
    ports: Vec<(&'static str, String)>,
}

/// The switch instances of one level.
struct Level {
    level: u32,
    switches: Vec<Instance>,
}

#[derive(Template)]
#[template(path = "net.v", escape = "none")]
pub(super) struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    b: u32,
    w: u32,
    /// Injection VCs of the network: terminals · B.
    inj_vcs: u32,
    /// Delivery VCs of the network: last-level switches · their input VCs.
    pub(super) ej_vcs: u32,
    links: Vec<LinkWire>,
    levels: Vec<Level>,
}

/// The network top of `sim`'s network: a leveled network's switch instances level by level
/// and its link wires (a graph network's: [`graph_net_template`]).
pub(super) fn net_template<'a>(
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
    let (total, bits) = (entries.len() * bits as usize, bits as usize);
    let text = super::hex::digits(total, |at| entries[at / bits] >> (at % bits) & 1 == 1);
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
