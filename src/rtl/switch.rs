//! The switch modules (`ff_switch_inject.v`, `ff_switch.v`, `ff_switch_eject.v`): the
//! template's parameters and the mirror signals that give every declared register element
//! ([`crate::switch::layout`]) its name in the waveform.

use crate::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth};
use crate::flit::clog2;
use crate::sim::Simulation;
use crate::switch::layout::{Register, SwitchKind, SwitchLayout};
use askama::Template;

/// One mirror signal: a declared register element and the storage bits that hold it.
struct Mirror {
    name: String,
    width: u32,
    expr: String,
}

#[derive(Template)]
#[template(path = "switch.v", escape = "none")]
pub(super) struct SwitchTemplate<'a> {
    pub(super) module: &'a str,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    eject: bool,
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
    }
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
    let nout = layout.out_ports;
    let no = nout * p.vcs;
    let geometry = Geometry {
        b: p.vcs,
        no,
        ns: match (kind, p.mode) {
            (SwitchKind::Eject, _) => 2,
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
    let module: &'static str = layout.module;
    SwitchTemplate {
        module,
        kind_doc: kind_doc(kind),
        version,
        command,
        config_hash: hash,
        eject: kind == SwitchKind::Eject,
        nv,
        no,
        nout,
        m: f.topo.multiplicity,
        radix: f.topo.radix,
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
        stages: nv.min(f.topo.multiplicity * p.vcs),
        lane_draw: lane_draw(f.topo.multiplicity),
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

/// Where the Verilog keeps element `index` of `reg` (see templates/switch.v).
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
