//! The butterfly-family switch of `switch::logic` and `switch::edge` in bit planes: the same
//! next-state logic, evaluated for 64 switches of a level at once, one bit per switch (row) in
//! every word, the way a wide datapath computes it. It runs the subset of networks in which
//! that logic is pure Boolean algebra over a few registers per VC: a radix-2 butterfly
//! ([CMS] §1.2) with worms of any length L in depth-1 VC registers, wormhole flow control,
//! the combinational `ready` wires of the default back-pressure, no faulty switch and at most
//! [`MAX_VCS`] VCs per link ([`Planes::supports`] names what else it refuses).
//!
//! For each input VC `j` of a level (level 0: `j = vc`; above it `j = port · B + vc`, port 0
//! being the link from the column whose routing bit is 0) and each word of 64 columns the
//! planes hold:
//! - `full`: the register holds a flit; `head`, `tail`: it is its worm's header, its tail;
//! - `act`: `ACTIVE`: its worm holds an output VC (at the last level: the worm drains), from
//!   the header's grant until the tail leaves; a full register that is not `ACTIVE` holds a
//!   `ROUTING` header;
//! - `dir`: the direction the worm's routing digit names
//!   ([`crate::topology::Topology::route_digit`]);
//! - `hold[v]`: one-hot, the output VC an `ACTIVE` register holds;
//! - per direction `o`, the one-hot round-robin pointers of VC allocation (`rr`) and of the
//!   link (`lrr`) over the switch's input VCs.
//!
//! A cycle settles as the general kernel's does, from the last level up to the sources, and
//! each level's clock edge follows its evaluation: the level above reads the registers it
//! feeds as they are after their departures, where "ready" (empty, or its flit leaves) is
//! "empty", and "accepts a new worm" (idle, or its tail leaves) is "empty and not `ACTIVE`".
//! A header carries its worm's message id and destination into each register it enters, in a
//! scalar array; a body flit moves in the planes alone (its register already names its worm),
//! and only a worm's head injected and its head and tail arriving reach the books, which count
//! a worm by them (and a header's waits, the general kernel's `Stalled` cycles, as the cycles
//! from its injection to its arrival that it did not cross a link). The
//! rules, word by word, are those of the module doc of `switch::logic` with `B` output VCs
//! per direction: the k-th requester in round-robin order gets the k-th free output VC.
//!
//! The run is the one the general kernel gives: the same flits move at the same clock edges,
//! and the report is the same (`tests/suite/planes.rs` holds them equal report for report, every
//! message's record included). A run on two threads is a pipeline of levels
//! ([`Planes::pipelined`]): the upper levels on one thread, the lower ones with the sources
//! and the books on the other; the run and its report are the same.

use super::transfer::Transfer;
use super::{Fabric, Headers};
use crate::config::{Backpressure, FlowControl, SimConfig};
use crate::error::Result;
use crate::flit::FlitSlot;
use crate::topology::TopologyKind;

mod below;
mod injection;
mod links;
mod part;
mod pipeline;
mod registers;
mod schedule;
mod word;

pub use injection::Injection;
pub(crate) use pipeline::Lower;

use links::LinkCounts;
use part::Part;
use registers::Level;

/// Most VCs per link the bit-plane kernel takes.
pub const MAX_VCS: usize = 8;
/// Most input VCs of one switch: two ports of [`MAX_VCS`].
const MAX_NV: usize = 2 * MAX_VCS;

/// A butterfly run in bit planes ([`Planes::supports`]), on one thread ([`Planes::cycle`]) or
/// on two as a pipeline of levels ([`Planes::pipelined`]).
#[derive(Clone, Debug)]
pub struct Planes {
    part: Part,
    /// Of a pipelined run ([`Planes::pipelined`]): its batches and its split.
    schedule: schedule::Schedule,
    /// Of a pipelined run: the headers entering the split's level in the last cycle (grown
    /// by the first batches, at most one per register).
    crossings: Vec<(u32, registers::Slot)>,
    /// Of a pipelined run: the lists of arrivals into the last level its ring hands over,
    /// kept from batch to batch for their room.
    landings: Vec<Vec<pipeline::Landed>>,
}

impl Planes {
    /// Why the bit-plane kernel cannot run `config` on `fabric`, if it cannot.
    pub fn supports(config: &SimConfig, fabric: &Fabric) -> std::result::Result<(), String> {
        let refuse = |what: String| Err(what);
        if config.topology != TopologyKind::Butterfly || fabric.topo.graph.is_some() {
            return refuse(format!(
                "a butterfly (this run: --topology {})",
                config.topology.name()
            ));
        }
        if config.mode != FlowControl::Wormhole {
            return refuse(format!(
                "wormhole flow control (this run: --mode {})",
                config.mode.name()
            ));
        }
        if config.effective_depth() != 1 {
            return refuse(format!(
                "depth-1 VC registers (this run: {} flits per register)",
                config.effective_depth()
            ));
        }
        if config.backpressure != Backpressure::Combinational {
            return refuse("combinational back-pressure (this run: registered)".into());
        }
        if let Some(a) = config.switch_queue {
            return refuse(format!(
                "no per-switch queue bound (this run: --switch-queue {a})"
            ));
        }
        if config.vcs as usize > MAX_VCS {
            return refuse(format!(
                "at most {MAX_VCS} VCs per link (this run: --vcs {})",
                config.vcs
            ));
        }
        if fabric.paths.is_some() {
            return refuse("routing by destination (this run: given paths)".into());
        }
        let switches = fabric.topo.node_count() as u32;
        if let Some(s) = (0..switches).find(|&s| fabric.is_faulty(s)) {
            return refuse(format!(
                "no faulty switch (this run: switch {} is faulty)",
                fabric.topo.scope(s)
            ));
        }
        Ok(())
    }

    /// Bytes the registers of `fabric`'s network take.
    pub fn bytes(config: &SimConfig, fabric: &Fabric) -> u64 {
        let (n, b) = (fabric.topo.n as usize, config.vcs as usize);
        let levels = u64::from(fabric.topo.levels);
        Level::bytes(b, b, n)
            + levels.saturating_sub(1) * Level::bytes(2 * b, b, n)
            + LinkCounts::bytes(levels.saturating_sub(1) as usize, b, n)
            + pipeline::bytes(b, n)
    }

    /// The empty registers of `fabric`'s network (which [`Planes::supports`]; an allocation
    /// that fails is an error).
    pub fn new(config: &SimConfig, fabric: &Fabric) -> Result<Self> {
        Ok(Planes {
            part: Part::new(config, fabric)?,
            schedule: schedule::Schedule::new(),
            crossings: Vec::new(),
            landings: Vec::new(),
        })
    }

    /// Flits held by all registers.
    pub fn flits_in_network(&self) -> u64 {
        self.part.held
    }

    /// Body flits that reached their destination's register since the last call: the books
    /// see heads and tails only.
    pub fn take_body_arrivals(&mut self) -> u64 {
        std::mem::take(&mut self.part.body_arrivals)
    }

    /// Flits carried per link so far (the general kernel's link order).
    pub fn link_flits(&self) -> Vec<u64> {
        self.part.links.totals()
    }

    /// Every header held by a register, with the links it crossed (its level).
    pub fn stored_headers(&self) -> impl Iterator<Item = FlitSlot> + '_ {
        self.part.stored_headers()
    }

    /// One cycle on this thread: every level from the last evaluates and commits its
    /// departures and the arrivals they cause, appending the transfers the books read to
    /// `events`: the heads' and tails' arrivals into the last level (no `Delivered`: the
    /// books count a flit delivered where it enters the last level, which it leaves at the
    /// next edge; no `Stalled`: the books count a header's waits when it arrives). Returns
    /// whether a flit left a register. Then the sources write level 0 ([`LevelZero`]).
    pub fn cycle(&mut self, events: &mut Vec<Transfer>) -> bool {
        let part = &mut self.part;
        let moved = part.cycle(events);
        part.links.end_cycle();
        moved
    }
}

/// Level 0 as the sources write it: a run's on one thread ([`Planes`]), or a pipelined
/// run's lower levels' ([`Lower`]).
pub(crate) trait LevelZero {
    /// Level 0's injection VCs as the sources read and write them (the sources'
    /// `InjectionRegisters`), each header looking up its destination in `headers`.
    fn injection<'a>(&'a mut self, headers: Headers<'a>) -> Injection<'a>;
}

impl LevelZero for Planes {
    fn injection<'a>(&'a mut self, headers: Headers<'a>) -> Injection<'a> {
        self.part.level_zero().injection(headers)
    }
}

impl LevelZero for Lower<'_> {
    fn injection<'a>(&'a mut self, headers: Headers<'a>) -> Injection<'a> {
        Lower::injection(self, headers)
    }
}
