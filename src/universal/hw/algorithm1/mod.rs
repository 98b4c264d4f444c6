//! [CMSV] Routing Algorithm 1 as hardware, round after round: the butterfly of bufferless
//! switches that never delay a packet and discard every packet at an out link more than B
//! want (the forward pass), then acknowledge the delivered copies by replaying that pass in
//! reverse (the backward pass). Modelled register by register; the waveform and the Verilog
//! (`templates/cmsv_*.v`) come from one register layout ([`layout`]). [`run`] drives it round
//! by round.
//!
//! - **Forward.** Switch ⟨i, w⟩ (level i, column w), i < lg n, routes on address bit
//!   lg n − 1 − i. Its requesters are, at level 0, the J injection lanes its input drives in
//!   the cycle a copy's delay ends and, above, its 2B forward lane registers (in port 0's B
//!   lanes, then in port 1's). For out link d the k-th requester in that order takes lane k
//!   of the link; if more than B want it, none crosses (`discard` says so for a cycle). The
//!   router writes its own column bit, which is the source's, in place of the bit it used,
//!   so a delivered copy carries its source's address: the way back. A copy with delay δ
//!   crosses hop h in pass cycle δ + h, as [`crate::universal::batch`]'s flights do.
//! - **Mirror.** An output switch (level lg n) writes each forward cycle's arrivals at that
//!   cycle's address of its mirror memory; in the backward pass it reads them back in the
//!   reverse order, so the acknowledgement of an arrival in forward cycle t leaves the output
//!   in backward cycle P − 1 − t (P = C_r + lg n, the pass length).
//! - **Backward.** Switch ⟨i, w⟩, i ≥ 1, routes acknowledgements on address bit lg n − i to
//!   level i − 1 and writes back its column bit, the destination's. Every link thus carries,
//!   in backward cycle P − 1 − t, the acknowledgements of the copies that crossed it in
//!   forward cycle t: never more than B, so none is discarded ([CMSV] §2: acknowledgements
//!   cannot be lost). The `ack_discard` registers check it and stay 0. The lanes of level 0
//!   hold the acknowledgements that reach the sources.
//! - **Round controller.** Every output switch keeps its own copy (no signal crosses the
//!   network): the phase, the pass cycle (counting up forward, down backward, so it is the
//!   mirror's address in both) and whether round 0 is over (P₀ = C + lg n, P₁ = C₁ + lg n).

mod rounds;
mod verilog;

pub use rounds::{Alg1Hardware, HwRound, run, stimulus_line};

use super::Registers;
use crate::error::{Error, Result};

/// Most packets a hardware run carries (ids of at most 16 bits).
pub const MAX_PACKETS: usize = 1 << 16;
/// Largest butterfly the hardware model builds (it is for waveforms and co-simulation).
pub const MAX_INPUTS: u32 = 1024;
/// Longest pass the mirror memories hold, in cycles.
pub const MAX_PASS: u64 = 4096;
/// Most cycles of a hardware run (its waveform and stimulus grow with them).
pub const MAX_CYCLES: u64 = 1 << 16;

/// One lane: a packet (copy) or an acknowledgement with its address and packet id, or
/// nothing. Forward, the address is the destination with the bits already routed on
/// replaced by the source's; backward, the reverse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lane {
    pub valid: bool,
    pub addr: u32,
    pub id: u32,
}

/// The round controller each output switch keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Controller {
    /// In the backward (acknowledgement) pass.
    pub backward: bool,
    /// The pass cycle forward; P − 1 − the pass cycle backward: the mirror's address.
    pub count: u32,
    /// Round 0 is over: passes last P₁.
    pub later: bool,
}

impl Controller {
    fn next(self, passes: [u32; 2]) -> Controller {
        let last = passes[usize::from(self.later)] - 1;
        match (self.backward, self.count) {
            (false, c) if c == last => Controller {
                backward: true,
                ..self
            },
            (false, c) => Controller {
                count: c + 1,
                ..self
            },
            (true, 0) => Controller {
                backward: false,
                count: 0,
                later: true,
            },
            (true, c) => Controller {
                count: c - 1,
                ..self
            },
        }
    }
}

/// The butterfly of Algorithm 1 switches: registers of every switch.
#[derive(Clone, Debug)]
pub struct Alg1Butterfly {
    pub n: u32,
    pub log_n: u32,
    pub bandwidth: u32,
    /// Injection lanes per input (the Verilog's; the model takes any number).
    pub lanes_in: u32,
    /// Bits of a packet id: enough for the run's packets.
    pub id_bits: u32,
    /// Pass lengths P₀ (round 0) and P₁ (later rounds).
    pub passes: [u32; 2],
    /// `lanes[(level − 1)·n + w]`: the 2B forward lane registers of ⟨level, w⟩, level ≥ 1.
    lanes: Vec<Vec<Lane>>,
    /// `acks[level·n + w]`: the 2B backward lane registers of ⟨level, w⟩, level < lg n.
    acks: Vec<Vec<Lane>>,
    /// `discard[level·n + w]`: forward out links that discarded in the last cycle.
    discard: Vec<[bool; 2]>,
    /// `ack_discard[(level − 1)·n + w]`: backward out links that would have discarded.
    ack_discard: Vec<[bool; 2]>,
    /// `mirror[w·depth + a]`: output w's mirror memory, entry a (2B lanes).
    mirror: Vec<Vec<Lane>>,
    ctl: Controller,
    /// Second banks, where a cycle computes the next state.
    next_lanes: Vec<Vec<Lane>>,
    next_acks: Vec<Vec<Lane>>,
    cycle: u64,
}

/// One router of a switch: per out link d, the requesters (in order) that want it, each in
/// lane k of the link with address bit `rb` replaced by `colbit`; or, if more than `b` want
/// it, none. Returns which out links discarded.
fn route(
    requesters: &[Lane],
    rb: u32,
    colbit: bool,
    b: usize,
    mut cross: impl FnMut(usize, usize, Lane),
) -> [bool; 2] {
    let bit = 1u32 << rb;
    let mut over = [false; 2];
    for (d, over) in over.iter_mut().enumerate() {
        let wants = |l: &&Lane| l.valid && ((l.addr & bit != 0) ^ colbit) == (d == 1);
        if requesters.iter().filter(wants).count() > b {
            *over = true;
            continue;
        }
        for (k, lane) in requesters.iter().filter(wants).enumerate() {
            let addr = if colbit {
                lane.addr | bit
            } else {
                lane.addr & !bit
            };
            cross(d, k, Lane { addr, ..*lane });
        }
    }
    over
}

impl Alg1Butterfly {
    /// A butterfly of `n` inputs (a power of two, 4..=1024), bandwidth `b` (1..=8), `j`
    /// injection lanes per input (1..=64), ids for `packets` packets (1..=[`MAX_PACKETS`])
    /// and passes of `passes` cycles (lg n + 1 ..= [`MAX_PASS`]), all registers reset.
    pub fn new(n: u32, b: u32, j: u32, packets: usize, passes: [u64; 2]) -> Result<Self> {
        if !n.is_power_of_two() || !(4..=MAX_INPUTS).contains(&n) {
            return Err(Error::invalid(
                "inputs",
                n,
                format!("a power of two from 4 to {MAX_INPUTS}"),
            ));
        }
        if !(1..=8).contains(&b) {
            return Err(Error::invalid("bandwidth", b, "1..=8 lanes per link"));
        }
        if !(1..=64).contains(&j) {
            return Err(Error::invalid("injection lanes", j, "1..=64"));
        }
        if !(1..=MAX_PACKETS).contains(&packets) {
            return Err(Error::invalid(
                "packets",
                packets,
                format!("1..={MAX_PACKETS} (16-bit ids)"),
            ));
        }
        let log_n = n.trailing_zeros();
        for p in passes {
            if !(u64::from(log_n) + 1..=MAX_PASS).contains(&p) {
                return Err(Error::invalid(
                    "pass",
                    p,
                    format!(
                        "{}..={MAX_PASS} cycles (delays C_r + lg n; a smaller collection or α shortens it)",
                        log_n + 1
                    ),
                ));
            }
        }
        let passes = passes.map(|p| p as u32);
        let depth = passes[0].max(passes[1]) as usize;
        let (cells, lanes) = ((n * log_n) as usize, vec![Lane::default(); 2 * b as usize]);
        Ok(Alg1Butterfly {
            n,
            log_n,
            bandwidth: b,
            lanes_in: j,
            id_bits: count_bits(packets as u32),
            passes,
            lanes: vec![lanes.clone(); cells],
            acks: vec![lanes.clone(); cells],
            discard: vec![[false; 2]; cells],
            ack_discard: vec![[false; 2]; cells],
            mirror: vec![lanes.clone(); n as usize * depth],
            ctl: Controller::default(),
            next_lanes: vec![lanes.clone(); cells],
            next_acks: vec![lanes; cells],
            cycle: 0,
        })
    }

    /// Entries of each mirror memory: the longer pass.
    pub fn depth(&self) -> u32 {
        self.passes[0].max(self.passes[1])
    }

    /// Cycles committed.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The round controller (every output switch's copy).
    pub fn controller(&self) -> Controller {
        self.ctl
    }

    /// The copies the last level registered at the last edge (delivered).
    pub fn delivered(&self) -> impl Iterator<Item = Lane> + '_ {
        let base = ((self.log_n - 1) * self.n) as usize;
        self.lanes[base..]
            .iter()
            .flatten()
            .copied()
            .filter(|l| l.valid)
    }

    /// The acknowledgements level 0 registered at the last edge (back at their sources).
    pub fn acknowledged(&self) -> impl Iterator<Item = Lane> + '_ {
        self.acks[..self.n as usize]
            .iter()
            .flatten()
            .copied()
            .filter(|l| l.valid)
    }

    /// Whether a backward router found more than B acknowledgements for a link in the last
    /// cycle (never, if the mirror replays the forward pass).
    pub fn ack_discarded(&self) -> bool {
        self.ack_discard.iter().any(|d| d[0] || d[1])
    }

    /// One clock cycle: `inject[x]` are input x's injection lanes this cycle. Every switch
    /// routes from the registers of the last edge and the injections; then all registers
    /// commit.
    pub fn step(&mut self, inject: &[Vec<Lane>]) {
        let (n, log_n, b) = (self.n, self.log_n, self.bandwidth as usize);
        let mut next_lanes = std::mem::take(&mut self.next_lanes);
        let mut next_acks = std::mem::take(&mut self.next_acks);
        for regs in next_lanes.iter_mut().chain(next_acks.iter_mut()) {
            regs.fill(Lane::default());
        }
        for level in 0..log_n {
            // forward out of <level, w>: straight to <level + 1, w>, cross to w ^ 2^rb
            let rb = log_n - 1 - level;
            for w in 0..n {
                let requesters: &[Lane] = if level == 0 {
                    &inject[w as usize]
                } else {
                    &self.lanes[((level - 1) * n + w) as usize]
                };
                self.discard[(level * n + w) as usize] =
                    route(requesters, rb, w >> rb & 1 == 1, b, |d, k, lane| {
                        let to = if d == 0 { w } else { w ^ (1 << rb) };
                        next_lanes[(level * n + to) as usize][d * b + k] = lane;
                    });
            }
        }
        let depth = self.depth() as usize;
        for level in 1..=log_n {
            // backward out of <level, w>: to <level - 1, w> in port 0, or w ^ 2^rb in port 1
            let rb = log_n - level;
            for w in 0..n {
                let requesters: &[Lane] = match (level == log_n, self.ctl.backward) {
                    (true, true) => &self.mirror[w as usize * depth + self.ctl.count as usize],
                    (true, false) => &[],
                    (false, _) => &self.acks[(level * n + w) as usize],
                };
                self.ack_discard[((level - 1) * n + w) as usize] =
                    route(requesters, rb, w >> rb & 1 == 1, b, |p, k, lane| {
                        let to = if p == 0 { w } else { w ^ (1 << rb) };
                        next_acks[((level - 1) * n + to) as usize][p * b + k] = lane;
                    });
            }
        }
        if !self.ctl.backward {
            let base = ((log_n - 1) * n) as usize;
            for w in 0..n as usize {
                let at = w * depth + self.ctl.count as usize;
                self.mirror[at].copy_from_slice(&next_lanes[base + w]);
            }
        }
        self.next_lanes = std::mem::replace(&mut self.lanes, next_lanes);
        self.next_acks = std::mem::replace(&mut self.acks, next_acks);
        self.ctl = self.ctl.next(self.passes);
        self.cycle += 1;
    }

    /// The value of every declared register element of switch ⟨level, w⟩, in [`layout`]'s
    /// order.
    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        let lanes = |regs: &[Lane], out: &mut Vec<u64>| {
            out.extend(regs.iter().map(|l| u64::from(l.valid)));
            out.extend(regs.iter().map(|l| u64::from(l.addr)));
            out.extend(regs.iter().map(|l| u64::from(l.id)));
        };
        let flags = |d: [bool; 2], out: &mut Vec<u64>| out.extend(d.map(u64::from));
        let at = |l: u32| (l * self.n + w) as usize;
        if level > 0 {
            lanes(&self.lanes[at(level - 1)], out);
            flags(self.ack_discard[at(level - 1)], out);
        }
        if level < self.log_n {
            lanes(&self.acks[at(level)], out);
            flags(self.discard[at(level)], out);
        } else {
            out.push(u64::from(self.ctl.backward));
            out.push(u64::from(self.ctl.count));
            out.push(u64::from(self.ctl.later));
            let depth = self.depth() as usize;
            for entry in &self.mirror[w as usize * depth..(w as usize + 1) * depth] {
                let valid = entry
                    .iter()
                    .enumerate()
                    .fold(0u64, |v, (i, l)| v | u64::from(l.valid) << i);
                out.push(valid);
                out.extend(entry.iter().map(|l| u64::from(l.addr)));
                out.extend(entry.iter().map(|l| u64::from(l.id)));
            }
        }
    }
}

/// Bits that count `0..values` (the round controller's count for mirrors of `values`
/// entries; a packet id for `values` packets).
pub fn count_bits(values: u32) -> u32 {
    (32 - values.saturating_sub(1).leading_zeros()).max(1)
}

/// The registers of a switch at `level` of a `log_n`-level butterfly of bandwidth `b` with
/// `iw`-bit ids, whose mirrors hold `depth` entries: (element name, width, Verilog
/// expression of the element in the switch's registers).
pub fn layout(level: u32, log_n: u32, b: u32, iw: u32, depth: u32) -> Vec<(String, u32, String)> {
    let mut regs = Vec::new();
    let r = 2 * b;
    let lane = |i: u32| format!("p{}_b{}", i / b, i % b);
    let lanes = |regs: &mut Vec<_>, reg: &str| {
        for i in 0..r {
            let name = format!("{reg}_valid_{}", lane(i));
            regs.push((name, 1, format!("{reg}_valid_q[{i}]")));
        }
        for i in 0..r {
            let name = format!("{reg}_addr_{}", lane(i));
            regs.push((name, log_n, format!("{reg}_addr_q[{i}*DW +: DW]")));
        }
        for i in 0..r {
            let name = format!("{reg}_id_{}", lane(i));
            regs.push((name, iw, format!("{reg}_id_q[{i}*IW +: IW]")));
        }
    };
    let flags = |regs: &mut Vec<_>, reg: &str| {
        for d in 0..2 {
            regs.push((format!("{reg}_o{d}"), 1, format!("{reg}_q[{d}]")));
        }
    };
    if level > 0 {
        lanes(&mut regs, "lane");
        flags(&mut regs, "ack_discard");
    }
    if level < log_n {
        lanes(&mut regs, "ack");
        flags(&mut regs, "discard");
    } else {
        regs.push(("backward".into(), 1, "backward_q".into()));
        regs.push(("count".into(), count_bits(depth), "count_q".into()));
        regs.push(("later".into(), 1, "later_q".into()));
        for a in 0..depth {
            regs.push((
                format!("mirror{a}_valid"),
                r,
                format!("mirror_valid_q[{a}]"),
            ));
            for i in 0..r {
                let name = format!("mirror{a}_addr_{}", lane(i));
                regs.push((name, log_n, format!("mirror_addr_q[{a}][{i}*DW +: DW]")));
            }
            for i in 0..r {
                let name = format!("mirror{a}_id_{}", lane(i));
                regs.push((name, iw, format!("mirror_id_q[{a}][{i}*IW +: IW]")));
            }
        }
    }
    regs
}

impl Registers for Alg1Butterfly {
    fn shape(&self) -> (u32, u32) {
        (self.log_n, self.n)
    }

    fn layout(&self, level: u32) -> Vec<(String, u32, String)> {
        layout(
            level,
            self.log_n,
            self.bandwidth,
            self.id_bits,
            self.depth(),
        )
    }

    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        self.values(level, w, out);
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_counts_up_forward_and_down_backward() {
        let mut ctl = Controller::default();
        let mut seen = Vec::new();
        for _ in 0..12 {
            seen.push((ctl.backward, ctl.count, ctl.later));
            ctl = ctl.next([3, 2]);
        }
        let f = |c, l| (false, c, l);
        let b = |c, l| (true, c, l);
        assert_eq!(
            seen,
            [
                f(0, false),
                f(1, false),
                f(2, false),
                b(2, false),
                b(1, false),
                b(0, false),
                f(0, true),
                f(1, true),
                b(1, true),
                b(0, true),
                f(0, true),
                f(1, true)
            ]
        );
    }
}
