//! The switch modules (`ff_switch_inject.v`, `ff_switch.v`, `ff_switch_eject.v`, and a graph
//! network's `ff_node_i{in}_o{out}.v`): the template's parameters and the mirror signals that
//! give every declared register element ([`crate::switch::layout`]) its name in the waveform.

use crate::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::clog2;
use crate::sim::Simulation;
use crate::switch::layout::{Register, SwitchKind, SwitchLayout};
use crate::topology::{NO_TERMINAL, NodeId};
use askama::Template;

/// One mirror signal: a declared register element and the storage bits that hold it.
struct Mirror {
    name: String,
    width: u32,
    expr: String,
}

/// The switch module: `templates/switch.v`, which includes its registers
/// (`switch_registers.v`), its combinational helper functions (`switch_functions.v`) and,
/// beyond the module, the crossbar's data path (`switch_xbar.v`).
#[derive(Template)]
#[template(path = "switch.v", escape = "none")]
pub(super) struct SwitchTemplate<'a> {
    pub(super) module: String,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    eject: bool,
    /// A graph network's switch: directions from the route table `ROUTES`.
    node: bool,
    /// A node's route table: bits of a direction (out links and EJ, all ones).
    dwe: u32,
    /// Entries of the route table.
    route_keys: u32,
    /// The route table is indexed per input port too (given paths).
    per_port: bool,
    /// Verilog of the route-table index of `flit` (and input VC `i` if per port).
    route_index: String,
    /// What the route key is, for the module's comment.
    key_doc: &'static str,
    nv: u32,
    no: u32,
    nout: u32,
    m: u32,
    /// Directions (switch radix): 2 but for the k-ary n-fly.
    radix: u32,
    /// Bits of a routing digit, `log2 radix`.
    dw: u32,
    b: u32,
    depth: u32,
    w: u32,
    cw: u32,
    idw: u32,
    id_bits: u32,
    id_offset: u32,
    rrw: u32,
    flits: u32,
    store_forward: bool,
    drop_mode: bool,
    link_one: bool,
    random_lane: bool,
    registered: bool,
    /// One flit per worm: every flit is a header and a tail.
    single_flit: bool,
    /// Text of the back-pressure mode for the header comment.
    backpressure: &'static str,
    /// Allocation stages: min(input VCs, output VCs per direction).
    stages: u32,
    /// Verilog expression of the lane the scan starts at, `lfsr % M` (a bit-select when M is
    /// a power of two).
    lane_draw: String,
    mirrors: Vec<Mirror>,
}

fn kind_doc(kind: SwitchKind) -> &'static str {
    match kind {
        SwitchKind::Inject => "level-0 switch, fed by the sources through its injection ports",
        SwitchKind::Route => "interior switch of a leveled butterfly-family network",
        SwitchKind::Eject => "last-level switch, draining into the destination every cycle",
        SwitchKind::Node { out_ports: 0, .. } => {
            "graph-network switch without out links: every worm that enters it is delivered"
        }
        SwitchKind::Node { .. } => {
            "graph-network switch: worms take the out link the route table names, or leave here"
        }
    }
}

/// How a graph network's switches find a header's direction: a route table (a ROM, the
/// module's `ROUTES` parameter) read at a key the header carries. A routing function by
/// destination keys it by the `dest` field; given paths by the input port and the `path`
/// field (the message's path index): an edge-simple path enters a switch at most once per
/// in link, so (port, path) names one hop of one path.
#[derive(Clone, Copy, Debug)]
pub(super) struct RouteKey {
    /// Given paths: keyed by input port and path index.
    pub(super) per_port: bool,
    /// Offset and width of the header field.
    offset: u32,
    bits: u32,
}

impl RouteKey {
    pub(super) fn of(sim: &Simulation) -> RouteKey {
        let per_port = sim.fabric.paths.is_some();
        let name = if per_port { "path" } else { "dest" };
        let (offset, bits) = sim
            .header_layout
            .field(name)
            .map_or((0, 0), |fl| (fl.offset, fl.width));
        RouteKey {
            per_port,
            offset,
            bits,
        }
    }

    /// Route-table entries per input port (per switch when not per port).
    fn stride(self) -> u64 {
        1 << self.bits
    }

    /// Entries of the route table of a switch with `in_ports` input ports.
    pub(super) fn entries(self, in_ports: u32) -> u64 {
        self.stride()
            * if self.per_port {
                u64::from(in_ports)
            } else {
                1
            }
    }

    /// The Verilog index expression (see `route_of` in templates/switch_functions.v).
    fn index(self, b: u32) -> String {
        let key = if self.bits == 0 {
            "32'd0".to_string()
        } else {
            format!(
                "{{ {{{}{{1'b0}}}}, flit[{} +: {}] }}",
                32 - self.bits,
                self.offset,
                self.bits
            )
        };
        if self.per_port {
            format!("(i / {b}) * {} + {key}", self.stride())
        } else {
            key
        }
    }
}

/// Bits of a node's direction: its `out_ports` out links and EJ (all ones).
pub(super) fn direction_bits(out_ports: u32) -> u32 {
    clog2(u64::from(out_ports) + 1)
}

/// The route table of graph switch `s`, entry 0 first: the out port (link order) a header
/// takes, or EJ (all ones: its path ends here); entries no header names are 0. The same
/// directions as the model's arrival lookup ([`crate::switch`]).
pub(super) fn route_table(sim: &Simulation, s: NodeId) -> Vec<u32> {
    let topo = &sim.fabric.topo;
    let g = topo.graph.as_ref().expect("a graph network");
    let key = RouteKey::of(sim);
    let ej = (1u32 << direction_bits(g.out_degree(s))) - 1;
    let first = g.out_start[s as usize];
    let mut table = vec![0u32; key.entries(g.in_ports(s)) as usize];
    match (&sim.fabric.paths, &g.next_link) {
        (Some(paths), _) => {
            for p in 0..paths.len() {
                let links = paths.path(p);
                let Some(&l0) = links.first() else { continue };
                // where each hop's header enters: the source's injection port (0), then the
                // head of every link
                let (mut here, mut port) = (topo.links[l0 as usize].tail, 0u64);
                for hop in 0..=links.len() {
                    let next = links.get(hop);
                    if here == s {
                        table[(port * key.stride() + p as u64) as usize] =
                            next.map_or(ej, |&l| l - first);
                    }
                    if let Some(&l) = next {
                        let link = &topo.links[l as usize];
                        (here, port) = (link.head, u64::from(link.head_port));
                    }
                }
            }
        }
        (None, Some(next)) => {
            let terminals = g.terminal_switch.len();
            for (t, entry) in table.iter_mut().enumerate().take(terminals) {
                let l = next[s as usize * terminals + t];
                *entry = if l == NO_TERMINAL { ej } else { l - first };
            }
        }
        (None, None) => table.fill(ej),
    }
    table
}

pub(super) fn switch_template<'a>(
    sim: &Simulation,
    kind: SwitchKind,
    version: &'a str,
    command: &'a str,
    hash: &'a str,
) -> SwitchTemplate<'a> {
    let f = &sim.fabric;
    let p = f.params;
    let w = sim.config.flit_bits;
    let id_bits = sim.header_layout.id_bits();
    let layout = f.layout(kind, w, id_bits);
    let nv = layout.in_ports * p.vcs;
    let multiplicity = f.topo.multiplicity;
    let nout = layout.out_ports;
    let no = nout * p.vcs;
    let geometry = Geometry {
        b: p.vcs,
        no,
        ns: match (kind, p.mode) {
            (SwitchKind::Eject, _) | (SwitchKind::Node { out_ports: 0, .. }, _) => 2,
            (_, FlowControl::Drop) => 4,
            _ => 3,
        },
        depth: p.depth,
        w,
        cw: clog2(u64::from(p.depth) + 1),
        idw: id_bits.max(1),
        opw: clog2(nout.into()),
        ovw: clog2(p.vcs.into()),
        rrw: clog2(nv.into()),
    };
    let (node, directions) = match kind {
        SwitchKind::Node { out_ports, .. } => (true, out_ports),
        _ => (false, f.topo.radix),
    };
    let key = RouteKey::of(sim);
    SwitchTemplate {
        module: layout.module.clone(),
        kind_doc: kind_doc(kind),
        version,
        command,
        config_hash: hash,
        eject: kind == SwitchKind::Eject || nout == 0,
        node,
        dwe: direction_bits(nout),
        route_keys: key.entries(layout.in_ports) as u32,
        per_port: key.per_port,
        route_index: key.index(p.vcs),
        key_doc: if key.per_port {
            "input port, path index"
        } else {
            "destination"
        },
        nv,
        no,
        nout,
        m: multiplicity,
        radix: directions,
        dw: f.topo.radix.trailing_zeros(),
        b: p.vcs,
        depth: p.depth,
        w,
        cw: geometry.cw,
        idw: geometry.idw,
        id_bits,
        id_offset: sim.header_layout.field("id").map_or(0, |fl| fl.offset),
        rrw: geometry.rrw,
        flits: p.flits,
        store_forward: p.mode == FlowControl::StoreForward,
        drop_mode: p.mode == FlowControl::Drop,
        link_one: p.bandwidth == LinkBandwidth::One,
        random_lane: p.lane_choice == LaneChoice::Random,
        registered: p.backpressure == Backpressure::Registered,
        single_flit: p.flits == 1,
        backpressure: match p.backpressure {
            Backpressure::Combinational => {
                "combinational (ready runs through the switch in the same cycle)"
            }
            Backpressure::Registered => {
                "registered (in_ready and in_accept decode this switch's own registers)"
            }
        },
        stages: nv.min(multiplicity * p.vcs),
        lane_draw: lane_draw(multiplicity),
        mirrors: mirrors(&layout, &geometry),
    }
}

/// `lfsr_q % m` as Verilog, a zero-extended bit-select when `m` is a power of two.
fn lane_draw(m: u32) -> String {
    if m == 1 {
        "16'd0".to_string()
    } else if m.is_power_of_two() {
        let bits = m.trailing_zeros();
        format!("{{ {{{}{{1'b0}}}}, lfsr_q[{}:0] }}", 16 - bits, bits - 1)
    } else {
        format!("lfsr_q % 16'd{m}")
    }
}

/// Storage geometry of a switch's packed registers.
struct Geometry {
    b: u32,
    /// Output VCs.
    no: u32,
    /// Bits of the one-hot VC state.
    ns: u32,
    depth: u32,
    w: u32,
    cw: u32,
    idw: u32,
    opw: u32,
    ovw: u32,
    rrw: u32,
}

/// The storage expression of every declared register element.
fn mirrors(layout: &SwitchLayout, g: &Geometry) -> Vec<Mirror> {
    let mut out = Vec::new();
    for reg in &layout.registers {
        for k in 0..reg.elements() {
            let index = reg.index_of(k);
            out.push(Mirror {
                name: reg.element_name(&index),
                width: reg.width,
                expr: storage(reg, &index, g),
            });
        }
    }
    out
}

/// Where the Verilog keeps element `index` of `reg` (the registers of templates/switch_registers.v).
fn storage(reg: &Register, index: &[u32], g: &Geometry) -> String {
    let vc = || index[0] * g.b + index[1];
    let slot = || vc() * g.depth + index[2];
    let slice = |name: &str, i: u32, width: u32| format!("{name}[{} +: {width}]", i * width);
    // The hardware leaves stale bits where nothing reads them (an empty FIFO slot, the output
    // VC of a worm that left); the declared register is zero there, as in the model.
    let valid = || format!("{} > {}'d{}", slice("count_q", vc(), g.cw), g.cw, index[2]);
    // The VC state is stored one-hot: IDLE, ROUTING, ACTIVE, DROPPING (eject: IDLE, ACTIVE).
    let state_bit = |k: u32| format!("state_q[{}]", vc() * g.ns + k);
    let idle = || state_bit(0);
    let masked =
        |cond: String, expr: String, width: u32| format!("({cond}) ? {expr} : {{{width}{{1'b0}}}}");
    match reg.name {
        "vc_valid" => valid(),
        "vc_head" => masked(valid(), format!("head_q[{}]", slot()), 1),
        "vc_tail" => masked(valid(), format!("tail_q[{}]", slot()), 1),
        "vc_flit" => masked(valid(), slice("flit_q", slot(), g.w), g.w),
        "vc_state" => match g.ns {
            2 => format!("{{{}, 1'b0}}", state_bit(1)),
            3 => format!("{{{}, {}}}", state_bit(2), state_bit(1)),
            _ => format!(
                "{{{a} | {d}, {r} | {d}}}",
                a = state_bit(2),
                r = state_bit(1),
                d = state_bit(3)
            ),
        },
        "vc_owner" => masked(format!("!{}", idle()), slice("owner_q", vc(), g.idw), g.idw),
        // A switch without out links delivers every worm it holds.
        "vc_eject" if g.ns == 2 => state_bit(1),
        "vc_eject" => format!("eject_q[{}]", vc()),
        // Stored one-hot (`held_q`, cleared with the tail): the declared numbers encode it.
        "vc_out_port" => encode(&slice("held_q", vc(), g.no), g.no, g.opw, |o| o / g.b),
        "vc_out_vc" => encode(&slice("held_q", vc(), g.no), g.no, g.ovw, |o| o % g.b),
        "out_alloc_valid" => format!("alloc_valid_q[{}]", index[0] * g.b + index[1]),
        "out_alloc_in" => masked(
            format!("alloc_valid_q[{}]", index[0] * g.b + index[1]),
            slice("alloc_in_q", index[0] * g.b + index[1], g.rrw),
            g.rrw,
        ),
        "rr_ptr" => slice("rr_q", index[0], g.rrw),
        "link_rr_ptr" => slice("link_rr_q", index[0], g.rrw),
        "lfsr" => "lfsr_q".to_string(),
        other => format!("UNMAPPED_REGISTER_{other}"),
    }
}

/// Verilog of the `width`-bit number `value(o)` of the set bit `o` of the `n`-bit one-hot
/// vector `onehot` (zero if none is set): one OR-reduction per bit.
fn encode(onehot: &str, n: u32, width: u32, value: impl Fn(u32) -> u32) -> String {
    let bits: Vec<String> = (0..width)
        .rev()
        .map(|b| {
            let mask: String = (0..n)
                .rev()
                .map(|o| if value(o) >> b & 1 == 1 { '1' } else { '0' })
                .collect();
            format!("|({onehot} & {n}'b{mask})")
        })
        .collect();
    format!("{{{}}}", bits.join(", "))
}
