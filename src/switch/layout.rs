//! The register layout of a switch, declared once: names, widths, array shape and enum
//! encodings. The waveform writer walks it to declare and dump VCD variables, the Verilog back
//! end walks it to declare `reg`s, so a signal has the same name and width in both by
//! construction. [`Fabric::read_register`] reads any element of any register of any switch.
//!
//! A VC's FIFO is declared as `depth` slots with slot 0 the front, i.e. a shifting FIFO (the
//! model stores it as a ring, an implementation detail). Not declared, because they are not
//! state: the per-switch packet count of the store-and-forward threshold (a population count of
//! the `vc_state` registers) and the fault marks used to model dead switches.

use super::{Fabric, VcState};
use crate::config::{LaneChoice, LinkBandwidth};
use crate::flit::{FlitBits, FlitSlot, clog2, mask};
use crate::topology::NodeId;
use bitvec::prelude::*;
use serde::Serialize;

/// What the model keeps by reference in its registers (a flit is a message and an index),
/// resolved to the bits the hardware stores.
pub trait Payload {
    /// The `W` data bits of a stored flit.
    fn flit_bits(&self, flit: FlitSlot) -> FlitBits;
    /// The id field of message `msg`'s header, before truncation.
    fn header_id(&self, msg: u32) -> u32;
}

/// One array axis of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Axis {
    /// Input port (level 0: the injection ports, one per input terminal).
    InPort,
    /// Virtual channel.
    Vc,
    /// Position in a VC's FIFO, 0 = front.
    Slot,
    /// Output port: `direction * d + lane` (last level: the ejection ports).
    OutPort,
    /// Output direction (radix 2: 0 = up, 1 = down).
    Direction,
}

/// One register (array) of a switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Register {
    pub name: &'static str,
    /// Bits per element.
    pub width: u32,
    /// Array shape, outermost first; empty for a scalar.
    pub dims: Vec<(Axis, u32)>,
    /// Names of the encoded values, for enumerated registers.
    pub encoding: Option<&'static [&'static str]>,
    pub doc: &'static str,
}

impl Axis {
    /// Letter used in flattened element names.
    pub fn letter(self) -> char {
        match self {
            Axis::InPort => 'p',
            Axis::Vc => 'v',
            Axis::Slot => 's',
            Axis::OutPort => 'o',
            Axis::Direction => 'd',
        }
    }
}

impl Register {
    /// The signal name of one element, as the waveform and the Verilog both spell it:
    /// `vc_flit_p1_v0_s0` for `vc_flit[in port 1][vc 0][slot 0]`, the bare name for a scalar.
    pub fn element_name(&self, index: &[u32]) -> String {
        let mut name = self.name.to_string();
        for (&(axis, _), i) in self.dims.iter().zip(index) {
            name.push('_');
            name.push(axis.letter());
            name.push_str(&i.to_string());
        }
        name
    }

    /// Number of elements.
    pub fn elements(&self) -> u32 {
        self.dims.iter().map(|&(_, n)| n).product()
    }

    /// The multi-index of element `k` (row-major, outermost first).
    pub fn index_of(&self, mut k: u32) -> Vec<u32> {
        let mut idx = vec![0; self.dims.len()];
        for (slot, &(_, n)) in idx.iter_mut().zip(&self.dims).rev() {
            *slot = k % n;
            k /= n;
        }
        idx
    }
}

/// The registers of the switches at one level class of a fabric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SwitchLayout {
    /// Module name of this switch kind in the generated Verilog.
    pub module: String,
    pub in_ports: u32,
    pub out_ports: u32,
    pub vcs: u32,
    pub depth: u32,
    pub registers: Vec<Register>,
}

/// Switch kinds: the three level classes of a leveled network, and a graph network's
/// switches by their shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum SwitchKind {
    /// Level 0: fed by the sources through the injection ports.
    Inject,
    /// Interior levels.
    Route,
    /// Last level: drains into the destination.
    Eject,
    /// A graph network's switch: `in_ports` input ports (its terminal's injection port first,
    /// if it has one), `out_ports` out links, and any of its VCs may deliver (a worm whose
    /// path ends here).
    Node { in_ports: u32, out_ports: u32 },
}

impl Fabric {
    /// The kind of switch at `level` (of a leveled network).
    pub fn switch_kind(&self, level: u32) -> SwitchKind {
        if level == 0 {
            SwitchKind::Inject
        } else if level == self.topo.last_level() {
            SwitchKind::Eject
        } else {
            SwitchKind::Route
        }
    }

    /// The kind of switch `s`.
    pub fn kind_of(&self, s: NodeId) -> SwitchKind {
        match &self.topo.graph {
            Some(g) => SwitchKind::Node {
                in_ports: g.in_ports(s),
                out_ports: g.out_degree(s),
            },
            None => self.switch_kind(self.topo.node(s).level),
        }
    }

    /// The register layout of the switches of `kind`. `flit_bits` is W, `id_bits` the width of
    /// the header's id field (the owner register holds the id truncated to it).
    pub fn layout(&self, kind: SwitchKind, flit_bits: u32, id_bits: u32) -> SwitchLayout {
        let p = self.params;
        let ports = self.topo.ports();
        let (in_ports, out_ports, directions) = match kind {
            SwitchKind::Inject => (self.topo.inject_ports, ports, self.topo.radix),
            SwitchKind::Route => (ports, ports, self.topo.radix),
            SwitchKind::Eject => (ports, self.topo.ejection_ports(), 0),
            SwitchKind::Node {
                in_ports,
                out_ports,
            } => (in_ports, out_ports, out_ports),
        };
        let in_vcs = u64::from(in_ports * p.vcs);
        let per_vc = vec![(Axis::InPort, in_ports), (Axis::Vc, p.vcs)];
        let per_slot = vec![
            (Axis::InPort, in_ports),
            (Axis::Vc, p.vcs),
            (Axis::Slot, p.depth),
        ];
        let reg = |name, width, dims: &Vec<(Axis, u32)>, doc| Register {
            name,
            width,
            dims: dims.clone(),
            encoding: None,
            doc,
        };
        let mut regs = vec![
            reg("vc_valid", 1, &per_slot, "FIFO slot holds a flit"),
            reg("vc_head", 1, &per_slot, "flit is a header"),
            reg("vc_tail", 1, &per_slot, "flit is a tail"),
            reg("vc_flit", flit_bits, &per_slot, "flit data bits"),
            Register {
                encoding: Some(&VcState::NAMES),
                ..reg("vc_state", 2, &per_vc, "VC state")
            },
            reg(
                "vc_owner",
                id_bits.max(1),
                &per_vc,
                "id of the owning message (truncated)",
            ),
        ];
        if let SwitchKind::Node { .. } = kind {
            regs.push(reg(
                "vc_eject",
                1,
                &per_vc,
                "the worm leaves the network here (its path ends)",
            ));
        }
        if kind != SwitchKind::Eject && out_ports > 0 {
            let per_out = vec![(Axis::OutPort, out_ports), (Axis::Vc, p.vcs)];
            regs.extend([
                reg(
                    "vc_out_port",
                    clog2(out_ports.into()),
                    &per_vc,
                    "output port held",
                ),
                reg("vc_out_vc", clog2(p.vcs.into()), &per_vc, "output VC held"),
                reg("out_alloc_valid", 1, &per_out, "output VC is held"),
                reg(
                    "out_alloc_in",
                    clog2(in_vcs),
                    &per_out,
                    "input VC (port*B+vc) holding it",
                ),
                reg(
                    "rr_ptr",
                    clog2(in_vcs),
                    &vec![(Axis::Direction, directions)],
                    "round-robin pointer",
                ),
            ]);
            if p.bandwidth == LinkBandwidth::One {
                let per_link = vec![(Axis::OutPort, out_ports)];
                regs.push(reg(
                    "link_rr_ptr",
                    clog2(in_vcs),
                    &per_link,
                    "link round-robin pointer",
                ));
            }
            if p.lane_choice == LaneChoice::Random {
                regs.push(reg("lfsr", 16, &vec![], "lane-choice LFSR"));
            }
        }
        let module = match kind {
            SwitchKind::Inject => "ff_switch_inject".to_string(),
            SwitchKind::Route => "ff_switch".to_string(),
            SwitchKind::Eject => "ff_switch_eject".to_string(),
            SwitchKind::Node {
                in_ports,
                out_ports,
            } => format!("ff_node_i{in_ports}_o{out_ports}"),
        };
        SwitchLayout {
            module,
            in_ports,
            out_ports,
            vcs: p.vcs,
            depth: p.depth,
            registers: regs,
        }
    }

    /// Reads element `index` of register `reg` of switch `s`. `payload` gives what the model
    /// stores by reference: a flit's data bits and a message's header id.
    pub fn read_register(
        &self,
        s: NodeId,
        reg: &Register,
        index: &[u32],
        id_bits: u32,
        payload: &dyn Payload,
    ) -> FlitBits {
        let b = self.params.vcs;
        let ivc = || self.vc_base(s) + index[0] * b + index[1];
        let slot = || self.flit(ivc(), index[2]);
        let value: u64 = match reg.name {
            "vc_valid" => slot().is_some().into(),
            "vc_head" => slot().is_some_and(|f| f.seq == 0).into(),
            "vc_tail" => slot()
                .is_some_and(|f| u32::from(f.seq) + 1 == self.params.flits)
                .into(),
            "vc_flit" => {
                return match slot() {
                    Some(f) => payload.flit_bits(f),
                    None => bitvec![u64, Lsb0; 0; reg.width as usize],
                };
            }
            "vc_state" => self.state(ivc()) as u64,
            "vc_owner" => self
                .owner(ivc())
                .map_or(0, |o| u64::from(payload.header_id(o)) & mask(id_bits)),
            "vc_eject" => (self.state(ivc()) == VcState::Active
                && self.vcs[ivc() as usize].out == super::EJECT)
                .into(),
            "vc_out_port" => self.out_vc(ivc()).map_or(0, |ov| {
                u64::from(self.output_vc_parts(ov).0 - self.first_link(s))
            }),
            "vc_out_vc" => self
                .out_vc(ivc())
                .map_or(0, |ov| u64::from(self.output_vc_parts(ov).1)),
            "out_alloc_valid" | "out_alloc_in" => {
                let ov = self.output_vc(self.first_link(s) + index[0], index[1]);
                match (reg.name, self.allocated_to(ov)) {
                    ("out_alloc_valid", held) => held.is_some().into(),
                    (_, Some(i)) => u64::from(i - self.vc_base(s)),
                    (_, None) => 0,
                }
            }
            "rr_ptr" => self.rr(s, index[0] as u8).into(),
            "link_rr_ptr" => self.link_rr(self.first_link(s) + index[0]).into(),
            "lfsr" => self.lfsr(s).into(),
            other => {
                debug_assert!(false, "register {other} is declared but not readable");
                0
            }
        };
        let mut bits = bitvec![u64, Lsb0; 0; reg.width as usize];
        let low = reg.width.min(64) as usize;
        bits[..low].store::<u64>(value & mask(reg.width));
        bits
    }

    /// The registers of a greedy-mode switch ([`crate::config::FlowControl::Greedy`], [LM]
    /// §IV): the queue length the admission rule reads, the queued packets (slot 0 = oldest)
    /// and, with random lane choice, the LFSR. `id_bits` is the width of a packet id.
    pub fn greedy_layout(&self, id_bits: u32) -> Vec<Register> {
        let p = self.params;
        let mut regs = vec![
            Register {
                name: "q_count",
                width: clog2(u64::from(p.depth) + 1),
                dims: vec![],
                encoding: None,
                doc: "packets queued (the admission rule reads it)",
            },
            Register {
                name: "q_packet",
                width: id_bits.max(1),
                dims: vec![(Axis::Slot, p.depth)],
                encoding: None,
                doc: "queued packet ids, slot 0 the oldest (0 where empty)",
            },
        ];
        if p.lane_choice == LaneChoice::Random {
            regs.push(Register {
                name: "lfsr",
                width: 16,
                dims: vec![],
                encoding: None,
                doc: "lane-choice LFSR",
            });
        }
        regs
    }

    /// Reads element `index` of greedy-mode register `reg` of switch `s`.
    pub fn read_greedy_register(&self, s: NodeId, reg: &Register, index: &[u32]) -> u64 {
        match reg.name {
            "q_count" => self.occupancy(s).into(),
            "q_packet" => self
                .queued(s)
                .get(index[0] as usize)
                .map_or(0, |&k| u64::from(k) & mask(reg.width)),
            "lfsr" => self.lfsr(s).into(),
            other => {
                debug_assert!(false, "register {other} is not a greedy-mode register");
                0
            }
        }
    }

    /// Id of the first out link of switch `s` (its out ports are consecutive links).
    fn first_link(&self, s: NodeId) -> u32 {
        self.shape.links(s).start
    }
}
