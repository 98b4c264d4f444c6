//! The bit-serial vertex switch of the pruned butterfly as a clocked state machine ([BB]
//! §3.3), and the whole network of them under a two-phase clock.
//!
//! Every vertex above the leaves has two halves that never run in the same phase:
//!
//! * the **expansion** half (downwards): latches `V` and `A` of its (≤ 2) inputs, decides at
//!   the first header bit by rules (a)–(d) of §3.3 with its **direction bit**, strips that bit,
//!   and while two active packets tie on the bits seen so far sends the identical bits down
//!   both edges, resolving when a distinguishing bit arrives (the input carrying 0 wins);
//! * the **compression** half (upwards): even levels read the front `Hc` bit to pick an
//!   up-port and strip it, odd levels pass the packet straight up; two packets for one up-edge
//!   set the sticky `conflict` register (Corollary 1 says it stays 0).
//!
//! Leaves only register the compression packets their controller hands them. A vertex on the
//! current stage's peak level (input `stage`) is in *P-mode*: its expansion inputs come from
//! the root-sorter injection ports instead of its parents, and its compression half ignores
//! its children (the root sorter reads those wires).
//!
//! Every wire between vertices is a register output, so a cycle is: all vertices compute from
//! registered values and the external inputs, then all commit.

use super::frame::FrameFormat;
use crate::flit::clog2;
use crate::switch::layout::{Axis, Register};
use crate::topology::pruned::{PrunedButterfly, Vertex};

/// `estate` encoding.
pub const ESTATE_NAMES: &[&str] = &["IDLE", "HEAD", "ROUTE", "COMPARE"];
const IDLE: u8 = 0;
const HEAD: u8 = 1;
const ROUTE: u8 = 2;
const COMPARE: u8 = 3;

/// Registers of one vertex. Unused fields of a kind stay 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VertexRegs {
    /// Direction bit (`true` = right); reset left, never reset again (interpretation:
    /// 'Direction bits', docs/interpretations.md).
    pub dir: bool,
    /// Expansion frame position of the current input bit.
    pub epos: u16,
    pub estate: u8,
    pub pres: [bool; 2],
    pub act: [bool; 2],
    /// The contested port while two active packets are compared.
    pub cbit: bool,
    /// `A` bit each output sends.
    pub oa: [bool; 2],
    pub used: [bool; 2],
    /// Which input drives each output.
    pub sel: [bool; 2],
    /// One-bit delay line per input.
    pub d1: [bool; 2],
    /// Down-port outputs (0 = left child, 1 = right child).
    pub dn: [bool; 2],
    /// Sticky: a comparison still tied at the end of a frame.
    pub tie_err: bool,
    /// Compression frame position.
    pub cpos: u16,
    /// Which children's packets are being forwarded.
    pub cpres: [bool; 2],
    /// Up-port each child's packet takes (even levels).
    pub csel: [bool; 2],
    /// Up-port outputs.
    pub up: [bool; 2],
    /// Sticky: two packets wanted one up-edge.
    pub conflict: bool,
}

/// External inputs of the network for one cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Current stage: vertices of this level are in P-mode.
    pub stage: u32,
    /// Root-sorter injection bits per vertex above the leaves (by dense id), per logical input.
    pub inject: Vec<[bool; 2]>,
    /// Compression bits each leaf's controller hands its up-port registers.
    pub source: Vec<[bool; 2]>,
}

/// How often each case of the §3.3 decision table fired, over all vertices (statistics, not
/// registers): a single active packet, two active packets for different ports, two for the
/// same port (rule b, a conflict), active and sidetracked (rule c), a single sidetracked
/// packet (rule d), two sidetracked packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RuleCounts {
    pub single_active: u64,
    pub two_active_split: u64,
    pub conflict: u64,
    pub active_beats_sidetracked: u64,
    pub single_sidetracked: u64,
    pub two_sidetracked: u64,
}

impl RuleCounts {
    /// Counts one decision.
    pub fn count(&mut self, present: [bool; 2], active: [bool; 2], bits: [bool; 2]) {
        let field = match (present, active) {
            ([true, false], [true, _]) | ([false, true], [_, true]) => &mut self.single_active,
            ([true, false], _) | ([false, true], _) => &mut self.single_sidetracked,
            ([true, true], [true, true]) if bits[0] != bits[1] => &mut self.two_active_split,
            ([true, true], [true, true]) => &mut self.conflict,
            ([true, true], [a, b]) if a != b => &mut self.active_beats_sidetracked,
            _ => &mut self.two_sidetracked,
        };
        *field += 1;
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &RuleCounts) {
        self.single_active += other.single_active;
        self.two_active_split += other.two_active_split;
        self.conflict += other.conflict;
        self.active_beats_sidetracked += other.active_beats_sidetracked;
        self.single_sidetracked += other.single_sidetracked;
        self.two_sidetracked += other.two_sidetracked;
    }

    /// True when every case fired at least once.
    pub fn all_fired(&self) -> bool {
        [
            self.single_active,
            self.two_active_split,
            self.conflict,
            self.active_beats_sidetracked,
            self.single_sidetracked,
            self.two_sidetracked,
        ]
        .iter()
        .all(|&c| c > 0)
    }
}

/// The switch kinds of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VertexKind {
    /// Level 0: expansion half only.
    Root,
    /// Odd level: both halves, one up-port.
    Odd,
    /// Even level ≥ 2 (not a leaf): both halves, two up-ports.
    Even,
    /// Level `L`: the two up-port registers.
    Leaf,
}

/// The whole network of bit-serial vertices.
#[derive(Clone, Debug)]
pub struct PrunedNet {
    pub graph: PrunedButterfly,
    pub format: FrameFormat,
    pub regs: Vec<VertexRegs>,
    next: Vec<VertexRegs>,
    /// Per vertex: (parent id, parent down-port) for each logical expansion input.
    parents: Vec<[Option<(u32, u8)>; 2]>,
    /// Per vertex: (child id, child up-port) for each child.
    children: Vec<[Option<(u32, u8)>; 2]>,
    cycle: u64,
    /// Per level above the leaves: the input frame lengths of its expansion and compression
    /// halves (per-level constants, computed once).
    frame_lens: Vec<(u32, u32)>,
    /// Decisions taken so far, by case.
    pub rules: RuleCounts,
}

impl VertexKind {
    /// The kind of the vertices of `level` in an `L`-level network.
    pub fn of(level: u32, log_n: u32) -> Self {
        match level {
            0 => VertexKind::Root,
            l if l == log_n => VertexKind::Leaf,
            l if l % 2 == 1 => VertexKind::Odd,
            _ => VertexKind::Even,
        }
    }

    /// Up-ports of the kind ([BB] §3.1): none at the roots, one at odd levels, two at even
    /// levels and the leaves.
    pub fn up_ports(self) -> u32 {
        match self {
            VertexKind::Root => 0,
            VertexKind::Odd => 1,
            VertexKind::Even | VertexKind::Leaf => 2,
        }
    }

    /// Verilog module / layout name.
    pub fn module(self) -> &'static str {
        match self {
            VertexKind::Root => "ff_pb_root",
            VertexKind::Odd => "ff_pb_odd",
            VertexKind::Even => "ff_pb_even",
            VertexKind::Leaf => "ff_pb_leaf",
        }
    }
}

fn reg(name: &'static str, width: u32, dims: Vec<(Axis, u32)>, doc: &'static str) -> Register {
    Register {
        name,
        width,
        dims,
        encoding: None,
        doc,
    }
}

/// Widths of the position counters: `(epos, cpos)`.
pub fn counter_widths(format: &FrameFormat) -> (u32, u32) {
    (
        clog2(u64::from(format.expansion_len(0)) + 2),
        clog2(u64::from(format.compression_len(format.log_n)) + 1),
    )
}

/// The register layout of a vertex kind, declared once for the waveform and the Verilog.
pub fn layout(kind: VertexKind, format: &FrameFormat) -> Vec<Register> {
    let mut regs = expansion_layout(kind, format);
    regs.extend(compression_layout(kind, format));
    regs
}

/// The expansion half's registers (none at the leaves).
pub fn expansion_layout(kind: VertexKind, format: &FrameFormat) -> Vec<Register> {
    let (ew, _) = counter_widths(format);
    let x2 = || vec![(Axis::InPort, 2)];
    let o2 = || vec![(Axis::OutPort, 2)];
    let mut regs = Vec::new();
    if kind != VertexKind::Leaf {
        regs.push(reg("dir", 1, vec![], "direction bit, 1 = right (rule d)"));
        regs.push(reg("epos", ew, vec![], "expansion frame position"));
        regs.push(Register {
            encoding: Some(ESTATE_NAMES),
            ..reg("estate", 2, vec![], "expansion state")
        });
        regs.push(reg("pres", 1, x2(), "input carries a packet"));
        regs.push(reg("act", 1, x2(), "input packet is active"));
        regs.push(reg("cbit", 1, vec![], "contested port while comparing"));
        regs.push(reg("oa", 1, o2(), "A bit the output sends"));
        regs.push(reg("used", 1, o2(), "output carries a packet"));
        regs.push(reg("sel", 1, o2(), "input driving the output"));
        regs.push(reg("d1", 1, x2(), "one-bit delay per input"));
        regs.push(reg("dn", 1, o2(), "down-port output wire"));
        regs.push(reg(
            "tie_err",
            1,
            vec![],
            "comparison unresolved at frame end",
        ));
    }
    regs
}

/// The compression half's registers (the leaves: their up-port registers; none at the roots).
pub fn compression_layout(kind: VertexKind, format: &FrameFormat) -> Vec<Register> {
    let (_, cw) = counter_widths(format);
    let x2 = || vec![(Axis::InPort, 2)];
    let o2 = || vec![(Axis::OutPort, 2)];
    let mut regs = Vec::new();
    match kind {
        VertexKind::Root => {}
        VertexKind::Leaf => regs.push(reg("up", 1, o2(), "up-port output wire")),
        VertexKind::Odd | VertexKind::Even => {
            regs.push(reg("cpos", cw, vec![], "compression frame position"));
            regs.push(reg("cpres", 1, x2(), "child packet being forwarded"));
            if kind == VertexKind::Even {
                regs.push(reg("csel", 1, x2(), "up-port of the child's packet"));
                regs.push(reg("up", 1, o2(), "up-port output wire"));
            } else {
                regs.push(reg(
                    "up",
                    1,
                    vec![(Axis::OutPort, 1)],
                    "up-port output wire",
                ));
            }
            regs.push(reg("conflict", 1, vec![], "two packets for one up-edge"));
        }
    }
    regs
}

impl PrunedNet {
    /// A network on `graph` with every register at its reset value (direction bits left).
    pub fn new(graph: PrunedButterfly, format: FrameFormat) -> Self {
        let count = graph.vertex_count();
        let mut parents = vec![[None; 2]; count];
        let mut children = vec![[None; 2]; count];
        for id in 0..count {
            let v = graph.vertex(id);
            for x in 0..2 {
                if let Some(p) = graph.up(v, x) {
                    parents[id][x as usize] = Some((graph.id(p) as u32, (v.node & 1) as u8));
                }
                if let Some(c) = graph.down(v, x) {
                    children[id][x as usize] =
                        Some((graph.id(c) as u32, graph.up_port_towards(v) as u8));
                }
            }
        }
        let graph_levels = graph.levels();
        PrunedNet {
            regs: vec![VertexRegs::default(); count],
            next: vec![VertexRegs::default(); count],
            graph,
            format,
            parents,
            children,
            cycle: 0,
            frame_lens: (0..graph_levels)
                .map(|m| (format.expansion_len(m), format.compression_len(m + 1)))
                .collect(),
            rules: RuleCounts::default(),
        }
    }

    /// Cycles completed since reset.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Advances the clock `cycles` cycles of idle inputs on an idle network, which leave every
    /// register unchanged (the caller checks [`PrunedNet::idle`]).
    pub fn skip_idle(&mut self, cycles: u64) {
        debug_assert!(self.idle());
        self.cycle += cycles;
    }

    /// Idle inputs for `stage`.
    pub fn idle_inputs(&self, stage: u32) -> Inputs {
        Inputs {
            stage,
            inject: vec![[false; 2]; self.graph.level_offset(self.graph.levels())],
            source: vec![[false; 2]; self.graph.leaves() as usize],
        }
    }

    /// The bits arriving at leaf `l` from its parents (logical inputs 0 and 1).
    pub fn leaf_inputs(&self, leaf: u32) -> [bool; 2] {
        self.expansion_inputs(self.graph.id(self.graph.leaf(leaf)))
    }

    /// The bits arriving at vertex `v` from its children (the root sorter reads them in P-mode).
    pub fn child_wires(&self, v: Vertex) -> [bool; 2] {
        let c = self.children[self.graph.id(v)];
        c.map(|c| c.is_some_and(|(id, x)| self.regs[id as usize].up[x as usize]))
    }

    fn expansion_inputs(&self, id: usize) -> [bool; 2] {
        self.parents[id].map(|p| p.is_some_and(|(pid, o)| self.regs[pid as usize].dn[o as usize]))
    }

    /// True when every vertex is idle and every wire carries 0.
    pub fn idle(&self) -> bool {
        self.regs
            .iter()
            .all(|r| r.estate == IDLE && r.cpos == 0 && r.dn == [false; 2] && r.up == [false; 2])
    }

    /// Any sticky error register set: `(tie_err, conflict)` counts.
    pub fn errors(&self) -> (usize, usize) {
        (
            self.regs.iter().filter(|r| r.tie_err).count(),
            self.regs.iter().filter(|r| r.conflict).count(),
        )
    }

    /// One clock cycle: every vertex computes its next state from registered values and
    /// `inputs`, then all commit.
    pub fn step(&mut self, inputs: &Inputs) {
        let l = self.graph.levels();
        let leaves = self.graph.level_offset(l);
        for (id, leaf) in (leaves..self.regs.len()).enumerate() {
            self.next[leaf] = VertexRegs {
                up: inputs.source[id],
                ..self.regs[leaf]
            };
        }
        for level in 0..l {
            let pmode = inputs.stage == level;
            let (exp_len, comp_len) = self.frame_lens[level as usize];
            let ids = self.graph.level_offset(level)..self.graph.level_offset(level + 1);
            for id in ids {
                let mut r = self.regs[id];
                let exp_in = if pmode {
                    inputs.inject[id]
                } else {
                    self.expansion_inputs(id)
                };
                if r.estate == HEAD && r.epos == 2 {
                    self.rules.count(r.pres, r.act, exp_in);
                }
                expansion_next(&mut r, exp_in, exp_len);
                if level > 0 {
                    let comp_in = if pmode {
                        [false; 2]
                    } else {
                        self.children[id].map(|c| {
                            c.is_some_and(|(cid, x)| self.regs[cid as usize].up[x as usize])
                        })
                    };
                    compression_next(&mut r, comp_in, comp_len, level.is_multiple_of(2));
                }
                self.next[id] = r;
            }
        }
        std::mem::swap(&mut self.regs, &mut self.next);
        self.cycle += 1;
    }
}

/// Next state of the expansion half. `len` = input frame length at this level.
fn expansion_next(r: &mut VertexRegs, inp: [bool; 2], len: u32) {
    let pos = u32::from(r.epos);
    match r.estate {
        IDLE => {
            r.dn = [false; 2];
            if inp[0] || inp[1] {
                r.pres = inp;
                r.act = [false; 2];
                r.epos = 1;
                r.estate = HEAD;
            }
        }
        HEAD if pos == 1 => {
            r.act = [r.pres[0] && inp[0], r.pres[1] && inp[1]];
            r.epos = 2;
        }
        HEAD => {
            decide(r, inp);
            r.dn = r.used;
            r.epos = 3;
        }
        _ if pos <= len => {
            r.dn = if pos == 3 {
                [r.oa[0] && r.used[0], r.oa[1] && r.used[1]]
            } else {
                let d = r.d1;
                [0, 1].map(|o| r.used[o] && d[usize::from(r.sel[o])])
            };
            r.d1 = inp;
            if r.estate == COMPARE && pos < len && inp[0] != inp[1] {
                // The input carrying 0 has the smaller key and keeps the contested port.
                let winner = !inp[1];
                let c = usize::from(r.cbit);
                r.sel[c] = winner;
                r.sel[1 - c] = !winner;
                r.estate = ROUTE;
            }
            r.epos += 1;
        }
        _ => {
            if r.estate == COMPARE {
                r.tie_err = true;
            }
            *r = VertexRegs {
                dir: r.dir,
                tie_err: r.tie_err,
                cpos: r.cpos,
                cpres: r.cpres,
                csel: r.csel,
                up: r.up,
                conflict: r.conflict,
                ..VertexRegs::default()
            };
        }
    }
}

/// Rules (a)–(d) of [BB] §3.3 at the first header bit `g` (interpretation: 'Rules (c) and (d)',
/// docs/interpretations.md).
fn decide(r: &mut VertexRegs, g: [bool; 2]) {
    let mut route = |input: usize, port: bool, active: bool| {
        let o = usize::from(port);
        r.used[o] = true;
        r.sel[o] = input == 1;
        r.oa[o] = active;
    };
    r.estate = ROUTE;
    match (r.pres, r.act) {
        ([true, false], [a, _]) | ([false, true], [_, a]) => {
            let x = usize::from(r.pres[1]);
            if a {
                route(x, g[x], true);
            } else {
                route(x, r.dir, false);
                r.dir = !r.dir;
            }
        }
        ([true, true], [true, true]) if g[0] != g[1] => {
            route(0, g[0], true);
            route(1, g[1], true);
        }
        ([true, true], [true, true]) => {
            // Rule (b): undecided until a distinguishing bit; both outputs carry input 0's
            // (identical) bits, the contested port carries A = 1, the other A = 0.
            route(0, g[0], true);
            route(0, !g[0], false);
            r.cbit = g[0];
            r.estate = COMPARE;
        }
        ([true, true], [a0, a1]) if a0 != a1 => {
            // Rule (c): the active packet takes its port, the sidetracked one the other.
            let x = usize::from(a1);
            route(x, g[x], true);
            route(1 - x, !g[x], false);
        }
        ([true, true], _) => {
            route(0, false, false);
            route(1, true, false);
        }
        _ => unreachable!("decide runs only with a packet present"),
    }
}

/// Next state of the compression half. `len` = input frame length at this level;
/// `strip` for even levels, which consume one `Hc` bit to choose the up-port.
fn compression_next(r: &mut VertexRegs, inp: [bool; 2], len: u32, strip: bool) {
    let pos = u32::from(r.cpos);
    let forward = |r: &VertexRegs, bits: [bool; 2]| -> [bool; 2] {
        let mut up = [false; 2];
        for x in 0..2 {
            if r.cpres[x] && bits[x] {
                up[usize::from(r.csel[x])] = true;
            }
        }
        up
    };
    if pos == 0 {
        r.up = [false; 2];
        if inp[0] || inp[1] {
            r.cpres = inp;
            r.csel = [false; 2];
            if !strip && inp[0] && inp[1] {
                r.conflict = true;
                r.cpres[1] = false;
            }
            if !strip {
                r.up = forward(r, inp);
            }
            r.cpos = 1;
        }
    } else if pos == 1 && strip {
        r.csel = inp;
        if r.cpres == [true, true] && inp[0] == inp[1] {
            r.conflict = true;
            r.cpres[1] = false;
        }
        r.up = forward(r, r.cpres);
        r.cpos = 2;
    } else if pos < len {
        r.up = forward(r, inp);
        r.cpos += 1;
    } else {
        r.up = [false; 2];
        r.cpres = [false; 2];
        r.csel = [false; 2];
        r.cpos = 0;
    }
}
