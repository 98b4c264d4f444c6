//! Switches of the butterfly family as registers plus next-state logic ([CMS] §1.1). All
//! registers of all switches live here as flat arrays (one entry per input virtual channel, per
//! output VC, per switch), which keeps a cycle cache-friendly; the per-switch view that
//! waveforms and Verilog need is [`layout`].
//!
//! Per input port of a switch: B VC registers, each a FIFO of `depth` flits of one message,
//! with its state ([`VcState`]), owner and, once allocated, the output VC its worm holds. Per
//! output VC: which input VC holds it. Per output direction: a round-robin pointer. Level 0
//! switches have one input port, the injection port fed by the source; the last level's switches
//! drain their registers every cycle into the destination (ejection).
//!
//! Next-state logic: `logic` (and `greedy` for [LM]'s store-and-forward); the clock edge:
//! `edge`, whose flit events are `transfer`; the flat arrays' layout: `shape`.

mod edge;
mod greedy;
mod header;
pub mod layout;
mod logic;
pub mod planes;
mod shape;
mod transfer;

pub use header::{HEADER_CHUNK_BITS, Header, HeaderChunk, Headers};
pub(crate) use shape::Shape;
pub use transfer::{NONE, Transfer, TransferKind, Transfers};

use crate::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use crate::error::Result;
use crate::flit::FlitSlot;
use crate::limits::vec_of;
use crate::topology::{LinkClass, LinkId, NodeId, RouteField, Topology};

/// State of one input virtual channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum VcState {
    /// No worm owns the VC.
    Idle = 0,
    /// The owner's header is at the front, waiting for an output VC.
    Routing = 1,
    /// The owner holds an output VC; its flits follow the header.
    Active = 2,
    /// Drop mode: the owner's header was discarded here; the rest of the worm is discarded as it
    /// arrives.
    Dropping = 3,
}

impl VcState {
    /// Names for decoded waveforms, indexed by the encoding.
    pub const NAMES: [&'static str; 4] = ["IDLE", "ROUTING", "ACTIVE", "DROPPING"];

    fn from_u8(v: u8) -> Self {
        match v {
            1 => VcState::Routing,
            2 => VcState::Active,
            3 => VcState::Dropping,
            _ => VcState::Idle,
        }
    }
}

/// Parameters every switch of a fabric shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchParams {
    pub vcs: u32,
    pub depth: u32,
    pub flits: u32,
    pub mode: FlowControl,
    pub bandwidth: LinkBandwidth,
    pub backpressure: Backpressure,
    pub lane_choice: LaneChoice,
    pub switch_queue: Option<u32>,
}

impl SwitchParams {
    /// The switch parameters of a run configuration.
    pub fn of(config: &SimConfig) -> Self {
        SwitchParams {
            vcs: config.vcs,
            depth: config.effective_depth(),
            flits: config.flits,
            mode: config.mode,
            bandwidth: config.link_bandwidth,
            backpressure: config.backpressure,
            lane_choice: config.lane_choice,
            switch_queue: config.switch_queue,
        }
    }
}

/// Sentinel in [`Vc::grant`] and [`Vc::out`]: no output VC.
pub(crate) const NO_GRANT: u32 = u32::MAX;
/// Sentinel in [`Vc::grant`]: the header is discarded (drop mode).
pub(crate) const DROP: u32 = u32::MAX - 1;
/// Sentinel in [`Vc::out`]: the worm leaves the network here (its VC drains every cycle).
pub(crate) const EJECT: u32 = u32::MAX - 2;
/// [`Vc::flags`]: the front flit leaves in the cycle being evaluated (combinational).
pub(crate) const LEAVING: u8 = 1;
/// [`Vc::flags`]: the VC belongs to a faulty switch.
pub(crate) const FAULTY: u8 = 2;

/// The registers of one input virtual channel, plus its combinational outputs, in one
/// 16-byte record so that a switch's VCs share a cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vc {
    /// Flits held.
    pub count: u8,
    /// FIFO position of the front flit.
    pub front: u8,
    /// [`VcState`] encoding.
    pub state: u8,
    /// [`LEAVING`] | [`FAULTY`].
    pub flags: u8,
    /// Owning message.
    pub owner: u32,
    /// Output VC held (`ACTIVE`), [`EJECT`] for a worm leaving the network here; while
    /// `ROUTING` (and after, if its worm is dropped) the header's direction, looked up when
    /// it arrived (a graph network's: the index of the out link its path takes); else
    /// [`NO_GRANT`].
    pub out: u32,
    /// Combinational: output VC granted to the header this cycle, [`DROP`] or [`NO_GRANT`].
    pub grant: u32,
}

impl Vc {
    const IDLE: Vc = Vc {
        count: 0,
        front: 0,
        state: 0,
        flags: 0,
        owner: 0,
        out: NO_GRANT,
        grant: NO_GRANT,
    };

    #[inline]
    pub fn leaving(&self) -> bool {
        self.flags & LEAVING != 0
    }
}

/// The registers and combinational signals of every switch of a network.
///
/// Output VCs are numbered `ov = link << vc_shift | vc`, so the link of an output VC is a shift
/// away; `vc_shift = ceil(log2 B)`.
#[derive(Clone, Debug)]
pub struct Fabric {
    pub topo: Topology,
    pub params: SwitchParams,
    pub(crate) shape: Shape,
    pub(crate) vc_shift: u32,
    /// `down[ov]`: the input VC at the head of output VC `ov`.
    pub(crate) down: Vec<u32>,
    /// Input VCs, indexed by [`Fabric::vc_base`] + `port * B + vc`.
    pub(crate) vcs: Vec<Vc>,
    /// FIFO storage, `depth` slots per input VC.
    pub(crate) fifo: Vec<FlitSlot>,
    /// Per output VC: the input VC holding it, plus one (0 = free).
    pub(crate) alloc: Vec<u32>,
    /// Round-robin pointer per switch direction (`radix` per switch), and its proposed next
    /// value (set by the evaluation of every switch holding a flit, taken at the clock edge).
    pub(crate) rr: Vec<u16>,
    pub(crate) rr_next: Vec<u16>,
    /// Round-robin pointer per link (one flit per link per cycle), and its proposed next value.
    pub(crate) link_rr: Vec<u16>,
    pub(crate) link_rr_next: Vec<u16>,
    /// Flits carried per link so far (counted where they depart).
    pub(crate) link_flits: Vec<u64>,
    /// Lane-choice LFSR per switch.
    pub(crate) lfsr: Vec<u16>,
    /// The seed the LFSRs were reset from.
    seed: u64,
    /// Packets (non-idle input VCs) per switch, for the per-switch store-and-forward bound.
    pub(crate) occupancy: Vec<u16>,
    /// First input VC of the last level.
    pub(crate) last_base: u32,
    /// Per level below the last: the header field and right shift of its routing digit
    /// ([`Topology::route_digit`]), computed once.
    pub(crate) route: Vec<(RouteField, u32)>,
    /// Flits held by all registers.
    pub(crate) held: u64,
    /// Flits held per switch: a switch holding none has nothing to evaluate or commit (its
    /// VCs are idle and their combinational signals are clear), so the cycle skips it.
    pub(crate) switch_flits: Vec<u32>,
    /// The switch of every input VC ([`Fabric::vc_switch`], tabulated for the clock edge).
    pub(crate) vc_node: Vec<u32>,
    /// Greedy mode: each switch's packet queue, `depth` message ids per switch, oldest first;
    /// its length is the switch's [`Fabric::occupancy`].
    pub(crate) queue: Vec<u32>,
    /// Greedy mode, combinational: the out link granted to each queue slot, or [`NO_GRANT`].
    pub(crate) queue_grant: Vec<u32>,
    /// Link class of every level below the last ([`Topology::link_class`]), computed once.
    pub(crate) classes: Vec<LinkClass>,
    /// The paths messages follow, if they carry them ([`Fabric::set_paths`]).
    pub(crate) paths: Option<std::sync::Arc<crate::topology::graph::Paths>>,
    /// A cyclic network's registers as the last clock edge left them, which its evaluation
    /// reads for the VCs a switch feeds (registered back-pressure reads nothing else).
    pub(crate) prev: Vec<Vc>,
    /// The cut of a multi-threaded evaluation by columns, if planned.
    pub(crate) columns: Option<logic::ColumnPlan>,
    /// The cut of a multi-threaded clock edge, kept from one edge to the next.
    pub(crate) edge: Option<edge::EdgeCut>,
}

impl Fabric {
    /// Builds an idle fabric on `topo`. `seed` initialises the lane-choice LFSRs. The arrays
    /// sized by the network are reserved first: a failed allocation is an error naming the
    /// size, not an abort.
    pub fn new(topo: Topology, params: SwitchParams, seed: u64) -> Result<Self> {
        let b = params.vcs as usize;
        let total_vcs = topo.terminals() as usize * b + topo.links.len() * b;
        let vc_shift = params.vcs.next_power_of_two().trailing_zeros();
        let ovs = topo.links.len() << vc_shift;
        let inputs = topo.terminals();
        let shape = Shape::of(&topo, params.vcs);
        let pointers = shape.pointer_count(&topo);
        let mut f = Fabric {
            shape,
            vc_shift,
            down: vec_of(ovs, NO_GRANT, "inputs", inputs)?,
            vcs: vec_of(total_vcs, Vc::IDLE, "inputs", inputs)?,
            fifo: if params.mode == FlowControl::Greedy {
                Vec::new()
            } else {
                vec_of(
                    total_vcs * params.depth as usize,
                    FlitSlot::default(),
                    "inputs",
                    inputs,
                )?
            },
            alloc: vec_of(ovs, 0, "inputs", inputs)?,
            rr: vec![0; pointers],
            rr_next: vec![0; pointers],
            link_rr: vec![0; topo.links.len()],
            link_rr_next: vec![0; topo.links.len()],
            link_flits: vec_of(topo.links.len(), 0, "inputs", inputs)?,
            lfsr: (0..topo.node_count())
                .map(|s| lfsr_seed(seed, s as u64))
                .collect(),
            seed,
            occupancy: vec![0; topo.node_count()],
            last_base: 0,
            route: match topo.graph {
                Some(_) => Vec::new(),
                None => (0..topo.last_level())
                    .map(|level| topo.route_digit(level))
                    .collect(),
            },
            held: 0,
            switch_flits: vec![0; topo.node_count()],
            vc_node: Vec::new(),
            queue: Vec::new(),
            queue_grant: Vec::new(),
            classes: match topo.graph {
                Some(_) => Vec::new(),
                None => (0..topo.last_level())
                    .map(|level| topo.link_class(level))
                    .collect(),
            },
            paths: None,
            prev: Vec::new(),
            columns: None,
            edge: None,
            topo,
            params,
        };
        if params.mode == FlowControl::Greedy {
            // Packets live in the switch queues; the VC records only carry the fault flags.
            let slots = f.topo.node_count() * params.depth as usize;
            f.queue = vec![0; slots];
            f.queue_grant = vec![NO_GRANT; slots];
        }
        for link in 0..f.topo.links.len() {
            let l = f.topo.links[link];
            let base = f.vc_base(l.head) + u32::from(l.head_port) * params.vcs;
            for v in 0..params.vcs {
                f.down[(link << vc_shift) + v as usize] = base + v;
            }
        }
        // A graph network has no level that only delivers: its VCs deliver by message.
        f.last_base = match f.topo.graph {
            Some(_) => total_vcs as u32,
            None => f.vc_base(f.topo.node_id(f.topo.last_level(), 0)),
        };
        f.vc_node = (0..f.topo.node_count() as u32)
            .flat_map(|s| std::iter::repeat_n(s, f.vc_count(s) as usize))
            .collect();
        Ok(f)
    }

    /// Index of the first input VC of switch `s`; its VCs are `port * B + vc` above it.
    pub fn vc_base(&self, s: NodeId) -> u32 {
        self.shape.base(s)
    }

    /// Number of input VCs of switch `s`.
    pub fn vc_count(&self, s: NodeId) -> u32 {
        self.shape.count(s)
    }

    /// The out links of switch `s`.
    pub fn switch_links(&self, s: NodeId) -> std::ops::Range<u32> {
        self.shape.links(s)
    }

    /// The injection VC `vc` of input terminal `t` (level-0 switches hold their terminals'
    /// ports in terminal order; a graph network's terminal switch has its injection port
    /// first).
    pub fn injection_vc(&self, t: u32, vc: u32) -> u32 {
        match &self.topo.graph {
            None => t * self.params.vcs + vc,
            Some(g) => self.vc_base(g.terminal_switch[t as usize]) + vc,
        }
    }

    /// The injection VC `ivc` as the terminal's slot `terminal * B + vc` (the order of the
    /// network top's injection bus).
    pub fn injection_slot(&self, ivc: u32) -> u32 {
        match &self.topo.graph {
            Some(g) => {
                let (s, local) = self.shape.switch_of(ivc);
                g.switch_terminal[s as usize] * self.params.vcs + local
            }
            None => ivc,
        }
    }

    /// Messages follow the paths of `paths` (internal link ids; a header names its path),
    /// on a graph network without a routing function, or instead of it.
    pub fn set_paths(&mut self, paths: std::sync::Arc<crate::topology::graph::Paths>) {
        self.paths = Some(paths);
    }

    /// The destination terminal input VC `ivc` of a last-level switch drains into.
    pub fn ejection_terminal(&self, ivc: u32) -> u32 {
        let (s, local) = self.vc_switch(ivc);
        self.topo.ejection_terminal(s, local / self.params.vcs)
    }

    /// Total input VCs of the fabric.
    pub fn total_vcs(&self) -> usize {
        self.vcs.len()
    }

    /// The switch owning input VC `ivc` and its local index there.
    pub fn vc_switch(&self, ivc: u32) -> (NodeId, u32) {
        self.shape.switch_of(ivc)
    }

    /// Whether input VC `ivc` delivers into a destination: it belongs to a last-level switch, or
    /// (a graph network) its worm leaves the network there.
    pub fn is_ejection_vc(&self, ivc: u32) -> bool {
        ivc >= self.last_base || (self.topo.graph.is_some() && self.vcs[ivc as usize].out == EJECT)
    }

    /// Flits carried per link so far.
    pub fn link_flits(&self) -> &[u64] {
        &self.link_flits
    }

    /// Output VC number of (`link`, `vc`).
    pub fn output_vc(&self, link: LinkId, vc: u32) -> u32 {
        link << self.vc_shift | vc
    }

    /// Link and VC of output VC `ov`.
    pub fn output_vc_parts(&self, ov: u32) -> (LinkId, u32) {
        (ov >> self.vc_shift, ov & ((1 << self.vc_shift) - 1))
    }

    /// Number of output VC slots (`links << vc_shift`; some are unused when B is not a power
    /// of two).
    pub fn output_vc_count(&self) -> u32 {
        self.down.len() as u32
    }

    /// Input VC at the head of output VC `ov`.
    pub fn down(&self, ov: u32) -> u32 {
        self.down[ov as usize]
    }

    /// Flits held by input VC `ivc`.
    pub fn count(&self, ivc: u32) -> u32 {
        u32::from(self.vcs[ivc as usize].count)
    }

    /// Flit `k` (0 = front) of input VC `ivc`.
    pub fn flit(&self, ivc: u32, k: u32) -> Option<FlitSlot> {
        if k >= self.count(ivc) {
            return None;
        }
        let depth = self.params.depth;
        let pos = (u32::from(self.vcs[ivc as usize].front) + k) % depth;
        Some(self.fifo[(ivc * depth + pos) as usize])
    }

    /// State of input VC `ivc`.
    pub fn state(&self, ivc: u32) -> VcState {
        VcState::from_u8(self.vcs[ivc as usize].state)
    }

    /// Owner (message index) of input VC `ivc`, if any.
    pub fn owner(&self, ivc: u32) -> Option<u32> {
        (self.state(ivc) != VcState::Idle).then(|| self.vcs[ivc as usize].owner)
    }

    /// Output VC the worm in `ivc` holds, if allocated.
    pub fn out_vc(&self, ivc: u32) -> Option<u32> {
        let o = self.vcs[ivc as usize].out;
        (self.state(ivc) == VcState::Active && o != NO_GRANT && o != EJECT).then_some(o)
    }

    /// Input VC holding output VC `ov`, if any.
    pub fn allocated_to(&self, ov: u32) -> Option<u32> {
        self.alloc[ov as usize].checked_sub(1)
    }

    /// Round-robin pointer of switch `s`, direction `dir`.
    pub fn rr(&self, s: NodeId, dir: u8) -> u32 {
        u32::from(self.rr[self.shape.pointers(s).start + dir as usize])
    }

    /// Round-robin pointer of link `l` (one-flit-per-link bandwidth).
    pub fn link_rr(&self, l: LinkId) -> u32 {
        u32::from(self.link_rr[l as usize])
    }

    /// Lane-choice LFSR of switch `s`.
    pub fn lfsr(&self, s: NodeId) -> u16 {
        self.lfsr[s as usize]
    }

    /// Advances every lane-choice LFSR by `cycles` steps, as that many idle cycles would
    /// (they step every cycle with random lane choice).
    pub fn skip_idle_cycles(&mut self, cycles: u64) {
        debug_assert_eq!(self.held, 0, "only an idle fabric skips cycles");
        if self.params.lane_choice == LaneChoice::Random {
            let leap = crate::lfsr::Leap::new(cycles);
            for v in &mut self.lfsr {
                *v = leap.apply(*v);
            }
        }
    }

    /// Reset value of switch `s`'s lane-choice LFSR.
    pub fn lfsr_reset(&self, s: NodeId) -> u16 {
        lfsr_seed(self.seed, u64::from(s))
    }

    /// Whether input VC `ivc` passes its front flit on in the cycle being evaluated.
    pub fn leaving(&self, ivc: u32) -> bool {
        self.vcs[ivc as usize].leaving()
    }

    /// Marks switch `s` faulty (or repaired): a faulty switch forwards nothing, and no output
    /// VC into it is ever free ([LM] §III).
    pub fn set_faulty(&mut self, s: NodeId, faulty: bool) {
        let base = self.vc_base(s) as usize;
        let count = self.vc_count(s) as usize;
        for vc in &mut self.vcs[base..base + count] {
            vc.flags = if faulty {
                vc.flags | FAULTY
            } else {
                vc.flags & !FAULTY
            };
        }
    }

    /// Whether switch `s` is faulty.
    pub fn is_faulty(&self, s: NodeId) -> bool {
        self.vcs[self.vc_base(s) as usize].flags & FAULTY != 0
    }

    /// Total flits held by all registers.
    pub fn flits_in_network(&self) -> u64 {
        self.held
    }

    /// Every header held by a VC register, with the links it crossed to get there (its
    /// `hop`): the headers of the worms in flight. Empty in greedy mode, whose packets are
    /// queued by message.
    pub fn stored_headers(&self) -> impl Iterator<Item = FlitSlot> + '_ {
        let vcs = match self.params.mode {
            FlowControl::Greedy => 0,
            _ => self.vcs.len() as u32,
        };
        (0..vcs)
            .flat_map(move |ivc| (0..self.count(ivc)).filter_map(move |k| self.flit(ivc, k)))
            .filter(|flit| flit.seq == 0)
    }
}

/// Copies a switch's round-robin pointers (one per direction or out link: a handful). The
/// usual counts are copied as fixed-size arrays: a copy of a slice of unknown length is a
/// call into `memcpy` for every switch holding a flit, twice a cycle.
#[inline(always)]
pub(crate) fn copy_pointers(dst: &mut [u16], src: &[u16]) {
    match (dst, src) {
        ([d0, d1], [s0, s1]) => (*d0, *d1) = (*s0, *s1),
        ([d0], [s0]) => *d0 = *s0,
        ([d0, d1, d2, d3], [s0, s1, s2, s3]) => (*d0, *d1, *d2, *d3) = (*s0, *s1, *s2, *s3),
        (dst, src) => dst.copy_from_slice(src),
    }
}

/// Bit `k` set where `counts[k] != 0`, for up to 64 counts: the switches holding a flit among
/// 64, found without a branch per switch (whose outcome is a coin toss at moderate load). A
/// full chunk is a fixed-size array, which the compiler turns into vector compares.
#[inline(always)]
pub(crate) fn occupied_mask(counts: &[u32]) -> u64 {
    fn mask(counts: &[u32]) -> u64 {
        (counts.iter().enumerate()).fold(0, |m, (k, &c)| m | u64::from(c != 0) << k)
    }
    match <&[u32; 64]>::try_from(counts) {
        // Eight at a time: an empty group (most, at low load) costs one vector OR.
        Ok(chunk) => (chunk.chunks_exact(8).enumerate()).fold(0, |m, (g, group)| {
            if group.iter().fold(0, |a, &c| a | c) == 0 {
                m
            } else {
                m | mask(group) << (8 * g)
            }
        }),
        Err(_) => mask(counts),
    }
}

/// Bit `j` set where `vcs[j]` holds a flit, for up to 64 VCs ([`occupied_mask`]'s reason).
#[inline(always)]
pub(crate) fn held_mask(vcs: &[Vc]) -> u64 {
    (vcs.iter().enumerate()).fold(0, |m, (j, vc)| m | u64::from(vc.count != 0) << j)
}

/// A non-zero 16-bit LFSR seed for switch `s`.
fn lfsr_seed(seed: u64, s: u64) -> u16 {
    crate::lfsr::seed(seed, crate::lfsr::Purpose::LaneChoice, s)
}

/// One step of the lane-choice LFSR ([`crate::lfsr::next`]).
pub fn lfsr_next(v: u16) -> u16 {
    crate::lfsr::next(v)
}
