//! Switches of the butterfly family as registers plus next-state logic (seed 000 §1.1, notes
//! §1.1–1.3). All registers of all switches live here as flat arrays (one entry per input
//! virtual channel, per output VC, per switch), which keeps a cycle cache-friendly; the
//! per-switch view that waveforms and Verilog need is [`layout`].
//!
//! Per input port of a switch: B VC registers, each a FIFO of `depth` flits of one message,
//! with its state ([`VcState`]), owner and, once allocated, the output VC its worm holds. Per
//! output VC: which input VC holds it. Per output direction: a round-robin pointer. Level 0
//! switches have one input port, the injection port fed by the source; the last level's switches
//! drain their registers every cycle into the destination (ejection).

pub mod layout;
mod logic;

pub use logic::{Header, NONE, Transfer, TransferKind};

use crate::config::{FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use crate::flit::FlitSlot;
use crate::topology::{LinkId, NodeId, Topology};

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
            lane_choice: config.lane_choice,
            switch_queue: config.switch_queue,
        }
    }
}

/// Sentinel in [`Fabric::grant`]: no output VC this cycle.
pub(crate) const NO_GRANT: u32 = u32::MAX;
/// Sentinel in [`Fabric::grant`]: the header is discarded (drop mode).
pub(crate) const DROP: u32 = u32::MAX - 1;

/// The registers and combinational signals of every switch of a network.
#[derive(Clone, Debug)]
pub struct Fabric {
    pub topo: Topology,
    pub params: SwitchParams,
    /// `down[ov]`: the input VC at the head of output VC `ov = link * B + vc`.
    down: Vec<u32>,
    // --- registers, per input VC (`ivc`) ---
    count: Vec<u8>,
    front: Vec<u8>,
    fifo: Vec<FlitSlot>,
    state: Vec<u8>,
    owner: Vec<u32>,
    out: Vec<u32>,
    // --- registers, per output VC ---
    alloc: Vec<u32>,
    // --- registers, per switch direction / link / switch ---
    rr: Vec<u16>,
    link_rr: Vec<u16>,
    lfsr: Vec<u16>,
    // --- next-state of the arbitration pointers, proposed during evaluation ---
    rr_next: Vec<u16>,
    link_rr_next: Vec<u16>,
    // --- combinational, recomputed every cycle ---
    leaving: Vec<bool>,
    grant: Vec<u32>,
    /// Packets (non-idle input VCs) per switch at the end of the previous cycle.
    occupancy: Vec<u16>,
}

impl Fabric {
    /// Builds an idle fabric on `topo`. `seed` initialises the lane-choice LFSRs.
    pub fn new(topo: Topology, params: SwitchParams, seed: u64) -> Self {
        let b = params.vcs as usize;
        let n = topo.n as usize;
        let total_vcs = n * b + topo.links.len() * b;
        let depth = params.depth as usize;
        let mut f = Fabric {
            down: Vec::with_capacity(topo.links.len() * b),
            count: vec![0; total_vcs],
            front: vec![0; total_vcs],
            fifo: vec![FlitSlot::default(); total_vcs * depth],
            state: vec![VcState::Idle as u8; total_vcs],
            owner: vec![0; total_vcs],
            out: vec![NO_GRANT; total_vcs],
            alloc: vec![0; topo.links.len() * b],
            rr: vec![0; topo.node_count() * 2],
            link_rr: vec![0; topo.links.len()],
            rr_next: vec![0; topo.node_count() * 2],
            link_rr_next: vec![0; topo.links.len()],
            lfsr: (0..topo.node_count())
                .map(|s| lfsr_seed(seed, s as u64))
                .collect(),
            leaving: vec![false; total_vcs],
            grant: vec![NO_GRANT; total_vcs],
            occupancy: vec![0; topo.node_count()],
            topo,
            params,
        };
        for link in 0..f.topo.links.len() {
            let l = f.topo.links[link];
            let base = f.vc_base(l.head) + u32::from(l.head_port) * params.vcs;
            f.down.extend((0..params.vcs).map(|v| base + v));
        }
        f
    }

    /// Index of the first input VC of switch `s`; its VCs are `port * B + vc` above it.
    pub fn vc_base(&self, s: NodeId) -> u32 {
        let b = self.params.vcs;
        let n = self.topo.n;
        if s < n {
            s * b
        } else {
            n * b + (s - n) * 2 * self.topo.multiplicity * b
        }
    }

    /// Number of input VCs of switch `s`.
    pub fn vc_count(&self, s: NodeId) -> u32 {
        self.topo.in_ports(self.topo.node(s).level) as u32 * self.params.vcs
    }

    /// Total input VCs of the fabric.
    pub fn total_vcs(&self) -> usize {
        self.count.len()
    }

    /// The switch owning input VC `ivc` and its local index there.
    pub fn vc_switch(&self, ivc: u32) -> (NodeId, u32) {
        let b = self.params.vcs;
        let n = self.topo.n;
        if ivc < n * b {
            (ivc / b, ivc % b)
        } else {
            let per = 2 * self.topo.multiplicity * b;
            let rel = ivc - n * b;
            (n + rel / per, rel % per)
        }
    }

    /// Input VC at the head of output VC `ov`.
    pub fn down(&self, ov: u32) -> u32 {
        self.down[ov as usize]
    }

    /// Flits held by input VC `ivc`.
    pub fn count(&self, ivc: u32) -> u32 {
        u32::from(self.count[ivc as usize])
    }

    /// Flit `k` (0 = front) of input VC `ivc`.
    pub fn flit(&self, ivc: u32, k: u32) -> Option<FlitSlot> {
        if k >= self.count(ivc) {
            return None;
        }
        let depth = self.params.depth;
        let pos = (u32::from(self.front[ivc as usize]) + k) % depth;
        Some(self.fifo[(ivc * depth + pos) as usize])
    }

    /// State of input VC `ivc`.
    pub fn state(&self, ivc: u32) -> VcState {
        VcState::from_u8(self.state[ivc as usize])
    }

    /// Owner (message index) of input VC `ivc`, if any.
    pub fn owner(&self, ivc: u32) -> Option<u32> {
        (self.state(ivc) != VcState::Idle).then(|| self.owner[ivc as usize])
    }

    /// Output VC (`link * B + vc`) the worm in `ivc` holds, if allocated.
    pub fn out_vc(&self, ivc: u32) -> Option<u32> {
        let o = self.out[ivc as usize];
        (self.state(ivc) == VcState::Active && o != NO_GRANT).then_some(o)
    }

    /// Input VC holding output VC `ov`, if any.
    pub fn allocated_to(&self, ov: u32) -> Option<u32> {
        self.alloc[ov as usize].checked_sub(1)
    }

    /// Round-robin pointer of switch `s`, direction `dir`.
    pub fn rr(&self, s: NodeId, dir: u8) -> u32 {
        u32::from(self.rr[s as usize * 2 + dir as usize])
    }

    /// Round-robin pointer of link `l` (one-flit-per-link bandwidth).
    pub fn link_rr(&self, l: LinkId) -> u32 {
        u32::from(self.link_rr[l as usize])
    }

    /// Lane-choice LFSR of switch `s`.
    pub fn lfsr(&self, s: NodeId) -> u16 {
        self.lfsr[s as usize]
    }

    /// Whether input VC `ivc` passes its front flit on in the cycle being evaluated.
    pub fn leaving(&self, ivc: u32) -> bool {
        self.leaving[ivc as usize]
    }

    /// Total flits held by all registers.
    pub fn flits_in_network(&self) -> u64 {
        self.count.iter().map(|&c| u64::from(c)).sum()
    }
}

/// A non-zero 16-bit LFSR seed for switch `s`.
fn lfsr_seed(seed: u64, s: u64) -> u16 {
    let mut z = seed ^ s.wrapping_mul(0xD134_2543_DE82_EF95);
    z = (z ^ (z >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let v = (z >> 48) as u16;
    if v == 0 { 0xACE1 } else { v }
}

/// One step of the 16-bit Galois LFSR x^16 + x^14 + x^13 + x^11 + 1 (maximal length).
pub fn lfsr_next(v: u16) -> u16 {
    let lsb = v & 1;
    let shifted = v >> 1;
    if lsb == 1 { shifted ^ 0xB400 } else { shifted }
}
