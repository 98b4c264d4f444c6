//! [CMSV] Routing Algorithm 1's forward pass as hardware: the butterfly of switches that
//! never delay a packet and discard every packet at an out link more than B want, modelled
//! register by register, with its waveform and its Verilog (`templates/cmsv_*.v`) from one
//! register layout ([`layout`]).
//!
//! Switch ⟨i, w⟩ (level i, column w) routes on destination bit lg n − 1 − i. Its requesters
//! are, at level 0, the J injection lanes its input drives in the cycle a copy's delay ends,
//! and above, its 2B lane registers (in port 0's B lanes, then in port 1's), which hold the
//! packets that crossed its in links at the previous edge. For out link d the k-th
//! requester (in that order) takes lane k of the link; if more than B want it, none crosses
//! (the `discard` register says so for a cycle). Level lg n only registers what arrives:
//! delivery. A copy with delay δ thus crosses hop h in cycle δ + h, exactly as
//! [`super::batch`]'s flights do.

use super::{ButterflyVcd, Registers, finish_design, hex_line, scope};
use crate::error::{Error, Result};
use crate::rtl::{RtlDesign, render};
use askama::Template;

/// Bits of a packet's id in the hardware (copy numbers wrap).
pub const ID_BITS: u32 = 16;
/// Largest butterfly the hardware model builds (it is for waveforms and co-simulation).
pub const MAX_INPUTS: u32 = 1024;

/// One lane: a packet (copy) with its destination and id, or nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lane {
    pub valid: bool,
    pub dest: u32,
    pub id: u32,
}

/// The butterfly of Algorithm 1 switches: registers of every switch.
#[derive(Clone, Debug)]
pub struct Alg1Butterfly {
    pub n: u32,
    pub log_n: u32,
    pub bandwidth: u32,
    /// Injection lanes per input.
    pub lanes_in: u32,
    /// `lanes[(level − 1)·n + w]`: the 2B lane registers of switch ⟨level, w⟩, level ≥ 1.
    lanes: Vec<Vec<Lane>>,
    /// `discard[level·n + w]`: out links that discarded in the last cycle, level < lg n.
    discard: Vec<[bool; 2]>,
    /// The second bank of lane registers, where a cycle computes the next state.
    next_lanes: Vec<Vec<Lane>>,
    cycle: u64,
}

impl Alg1Butterfly {
    /// A butterfly of `n` inputs (a power of two, 4..=1024), bandwidth `b` (1..=8) and `j`
    /// injection lanes per input (1..=64), all registers reset.
    pub fn new(n: u32, b: u32, j: u32) -> Result<Self> {
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
        let log_n = n.trailing_zeros();
        Ok(Alg1Butterfly {
            n,
            log_n,
            bandwidth: b,
            lanes_in: j,
            lanes: vec![vec![Lane::default(); 2 * b as usize]; (n * log_n) as usize],
            next_lanes: vec![vec![Lane::default(); 2 * b as usize]; (n * log_n) as usize],
            discard: vec![[false; 2]; (n * log_n) as usize],
            cycle: 0,
        })
    }

    /// Cycles committed.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The packets the last level registered at the last edge (delivered).
    pub fn delivered(&self) -> impl Iterator<Item = Lane> + '_ {
        let base = ((self.log_n - 1) * self.n) as usize;
        self.lanes[base..]
            .iter()
            .flatten()
            .copied()
            .filter(|l| l.valid)
    }

    /// One clock cycle: `inject[x]` are input x's injection lanes this cycle (at most J,
    /// unused ones invalid). Every switch routes from the registers of the last edge and the
    /// injections; then all registers commit.
    pub fn step(&mut self, inject: &[Vec<Lane>]) {
        let b = self.bandwidth as usize;
        // the next state in the second register bank: no allocation per cycle
        let mut next_lanes = std::mem::take(&mut self.next_lanes);
        for regs in &mut next_lanes {
            regs.fill(Lane::default());
        }
        for level in 0..self.log_n {
            let bit = 1u32 << (self.log_n - 1 - level);
            for w in 0..self.n {
                let requesters: &[Lane] = if level == 0 {
                    &inject[w as usize]
                } else {
                    &self.lanes[((level - 1) * self.n + w) as usize]
                };
                let colbit = w & bit != 0;
                for d in 0..2usize {
                    let wants = |l: &&Lane| l.valid && ((l.dest & bit != 0) ^ colbit) == (d == 1);
                    let over = requesters.iter().filter(wants).count() > b;
                    self.discard[(level * self.n + w) as usize][d] = over;
                    if over {
                        continue;
                    }
                    // out link d: straight to in port 0 of <level+1, w>, cross to in port 1 of
                    // <level+1, w ^ bit>
                    let to = if d == 0 { w } else { w ^ bit };
                    let regs = &mut next_lanes[(level * self.n + to) as usize];
                    for (k, lane) in requesters.iter().filter(wants).enumerate() {
                        regs[d * b + k] = *lane;
                    }
                }
            }
        }
        self.next_lanes = std::mem::replace(&mut self.lanes, next_lanes);
        self.cycle += 1;
    }

    /// The value of every declared register element of switch ⟨level, w⟩, in [`layout`]'s
    /// order.
    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        if level > 0 {
            let lanes = &self.lanes[((level - 1) * self.n + w) as usize];
            out.extend(lanes.iter().map(|l| u64::from(l.valid)));
            out.extend(lanes.iter().map(|l| u64::from(l.dest)));
            out.extend(lanes.iter().map(|l| u64::from(l.id)));
        }
        if level < self.log_n {
            let d = self.discard[(level * self.n + w) as usize];
            out.extend(d.iter().map(|&x| u64::from(x)));
        }
    }
}

/// The registers of a switch at `level` of a `log_n`-level butterfly: (element name, width,
/// Verilog expression of the element in the switch's packed registers).
pub fn layout(level: u32, log_n: u32, b: u32) -> Vec<(String, u32, String)> {
    let mut regs = Vec::new();
    let r = 2 * b;
    if level > 0 {
        let name = |what: &str, i: u32| format!("lane_{what}_p{}_b{}", i / b, i % b);
        for i in 0..r {
            regs.push((name("valid", i), 1, format!("lane_valid_q[{i}]")));
        }
        for i in 0..r {
            regs.push((name("dest", i), log_n, format!("lane_dest_q[{i}*DW +: DW]")));
        }
        for i in 0..r {
            regs.push((name("id", i), ID_BITS, format!("lane_id_q[{i}*IW +: IW]")));
        }
    }
    if level < log_n {
        for d in 0..2 {
            regs.push((format!("discard_o{d}"), 1, format!("discard_q[{d}]")));
        }
    }
    regs
}

impl Registers for Alg1Butterfly {
    fn shape(&self) -> (u32, u32) {
        (self.log_n, self.n)
    }

    fn layout(&self, level: u32) -> Vec<(String, u32, String)> {
        layout(level, self.log_n, self.bandwidth)
    }

    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        self.values(level, w, out);
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }
}

/// The injections of a run as `$readmemh` lines: per cycle, input x's lane l at bits
/// `(x·J + l)·LW`, LW = 1 + lg n + [`ID_BITS`], as {id, destination, valid}.
pub fn stimulus_line(net: &Alg1Butterfly, inject: &[Vec<Lane>]) -> String {
    let lw = 1 + net.log_n + ID_BITS;
    let mut fields = Vec::new();
    for lanes in inject {
        for lane in lanes {
            fields.push((u64::from(lane.valid), 1));
            fields.push((u64::from(lane.dest), net.log_n));
            fields.push((u64::from(lane.id), ID_BITS));
        }
    }
    hex_line(&fields, (net.n * net.lanes_in * lw) as usize)
}

#[derive(Template)]
#[template(path = "cmsv_switch.v", escape = "none")]
struct SwitchTemplate<'a> {
    module: &'a str,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    first: bool,
    last: bool,
    b: u32,
    r: u32,
    dw: u32,
    iw: u32,
    mirrors: Vec<(String, u32, String)>,
}

struct NetSwitch {
    name: String,
    module: &'static str,
    last: bool,
    rb: u32,
    colbit: u32,
    in_valid: String,
    in_dest: String,
    in_id: String,
}

#[derive(Template)]
#[template(path = "cmsv_net.v", escape = "none")]
struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    n: u32,
    j: u32,
    lw: u32,
    b: u32,
    dw: u32,
    iw: u32,
    switches: Vec<NetSwitch>,
}

/// The Verilog of `net`'s butterfly (three switch modules, the network and a testbench that
/// replays `cycles` lines of stimulus).
pub fn design(net: &Alg1Butterfly, command: &str, cycles: u64) -> Result<RtlDesign> {
    let version = env!("CARGO_PKG_VERSION");
    let (n, b, dw, iw, j) = (net.n, net.bandwidth, net.log_n, ID_BITS, net.lanes_in);
    let kinds = [
        (
            "ff_cmsv_first",
            "a level-0 switch (its input's injection lanes)",
            true,
            false,
            j,
            0,
        ),
        (
            "ff_cmsv_mid",
            "a switch between levels",
            false,
            false,
            2 * b,
            1,
        ),
        (
            "ff_cmsv_last",
            "an output switch (registers what is delivered)",
            false,
            true,
            2 * b,
            net.log_n,
        ),
    ];
    let mut files = Vec::new();
    for (module, kind_doc, first, last, r, level) in kinds {
        let t = SwitchTemplate {
            module,
            kind_doc,
            version,
            command,
            first,
            last,
            b,
            r,
            dw,
            iw,
            mirrors: layout(level, net.log_n, b),
        };
        files.push((format!("{module}.v"), render(&t)?));
    }
    let lw = 1 + dw + iw;
    let mut switches = Vec::new();
    for level in 0..=net.log_n {
        for w in 0..n {
            let (module, in_valid, in_dest, in_id) = if level == 0 {
                let lanes: Vec<u32> = (0..j).rev().map(|l| (w * j + l) * lw).collect();
                let field = |off: u32, width: u32| {
                    let parts: Vec<String> = lanes
                        .iter()
                        .map(|at| format!("inj[{} +: {width}]", at + off))
                        .collect();
                    format!("{{{}}}", parts.join(", "))
                };
                (
                    "ff_cmsv_first",
                    field(0, 1),
                    field(1, dw),
                    field(1 + dw, iw),
                )
            } else {
                let bit = 1u32 << (net.log_n - level);
                let straight = scope(level - 1, w);
                let cross = scope(level - 1, w ^ bit);
                let join = |p: &str, width: u32| {
                    format!(
                        "{{{p}_{cross}[{} +: {}], {p}_{straight}[0 +: {}]}}",
                        b * width,
                        b * width,
                        b * width
                    )
                };
                (
                    if level == net.log_n {
                        "ff_cmsv_last"
                    } else {
                        "ff_cmsv_mid"
                    },
                    join("ov", 1),
                    join("od", dw),
                    join("oi", iw),
                )
            };
            let rb = net.log_n.saturating_sub(1 + level);
            switches.push(NetSwitch {
                name: scope(level, w),
                module,
                last: level == net.log_n,
                rb: if level == net.log_n { 0 } else { rb },
                colbit: if level == net.log_n { 0 } else { (w >> rb) & 1 },
                in_valid,
                in_dest,
                in_id,
            });
        }
    }
    let netv = NetTemplate {
        description: format!(
            "{n}-input butterfly of [CMSV] Algorithm 1 switches, B = {b}, {j} injection lanes per input"
        ),
        version,
        command,
        n,
        j,
        lw,
        b,
        dw,
        iw,
        switches,
    };
    files.push(("ff_cmsv_net.v".to_string(), render(&netv)?));
    finish_design(
        &mut files,
        "[CMSV] Algorithm 1 forward pass",
        "ff_cmsv_net",
        command,
        cycles,
        n * j * lw,
    )?;
    Ok(RtlDesign { files })
}

/// A forward pass of Algorithm 1 on the butterfly, ready to co-simulate: the model's
/// waveform, the Verilog and the stimulus.
pub struct Pass {
    pub bundle: crate::cosim::Bundle,
    /// Ids of the copies delivered, in delivery order.
    pub delivered: Vec<u32>,
}

/// Runs one forward pass of `copies` (destination, delay) on an `n`-input butterfly of
/// bandwidth `b`, copy i injected at input `sources[i]` with id i: the waveform, the Verilog
/// and the stimulus for co-simulation, and the delivered copies.
pub fn pass(n: u32, b: u32, sources: &[u32], copies: &[(u32, u64)], command: &str) -> Result<Pass> {
    let log_n = n.trailing_zeros();
    let last = copies.iter().map(|c| c.1).max().unwrap_or(0);
    let cycles = last + u64::from(log_n) + 1;
    // injection lanes: the most copies one input starts in one cycle
    let mut starts = std::collections::BTreeMap::new();
    for (i, &(_, delay)) in copies.iter().enumerate() {
        *starts.entry((sources[i], delay)).or_insert(0u32) += 1;
    }
    let j = starts.values().copied().max().unwrap_or(1).max(1);
    let mut net = Alg1Butterfly::new(n, b, j)?;
    let mut vcd_bytes = Vec::new();
    let mut vcd = ButterflyVcd::new(&mut vcd_bytes, &net, command)?;
    let mut lines = Vec::new();
    let mut delivered = Vec::new();
    for cycle in 0..cycles {
        let mut inject = vec![vec![Lane::default(); j as usize]; n as usize];
        let mut used = vec![0usize; n as usize];
        for (i, &(dest, delay)) in copies.iter().enumerate() {
            if delay == cycle {
                let x = sources[i] as usize;
                inject[x][used[x]] = Lane {
                    valid: true,
                    dest,
                    id: i as u32 & ((1 << ID_BITS) - 1),
                };
                used[x] += 1;
            }
        }
        lines.push(stimulus_line(&net, &inject));
        net.step(&inject);
        vcd.sample(&net)?;
        delivered.extend(net.delivered().map(|l| l.id));
    }
    vcd.finish()?;
    let design = design(&net, command, cycles)?;
    let mut stimulus_hex = lines.join("\n");
    stimulus_hex.push('\n');
    Ok(Pass {
        bundle: crate::cosim::Bundle {
            model_vcd: vcd_bytes,
            design,
            stimulus_hex,
            cycles,
        },
        delivered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::batch::forward_pass_discard_all;
    use crate::universal::{Net, NetKind};

    #[test]
    fn the_register_model_delivers_what_the_flight_model_delivers() {
        // copies of random packets with random delays; the two models must agree on which
        // copies arrive
        use crate::rng::{Stream, stream};
        use rand::RngExt;
        let n = 16;
        let net = Net::new(NetKind::Butterfly, n, 2, 1).unwrap();
        for (b, seed) in [(1, 1), (2, 2), (3, 3)] {
            let mut rng = stream(seed, Stream::Test);
            let mut sources = Vec::new();
            let mut copies = Vec::new();
            let mut paths = Vec::new();
            for x in 0..n {
                for _ in 0..6 {
                    let dest = rng.random_range(0..n);
                    let delay = rng.random_range(0..6u64);
                    sources.push(x);
                    copies.push((dest, delay));
                    let mut p = Vec::new();
                    net.path_into(x, dest, &mut p);
                    paths.push(p);
                }
            }
            let pass = pass(n, b, &sources, &copies, "test").unwrap();
            let refs: Vec<&[u32]> = paths.iter().map(|p| p.as_slice()).collect();
            let delays: Vec<u64> = copies.iter().map(|c| c.1).collect();
            let arrived = forward_pass_discard_all(&refs, &delays, b, 6 + 4);
            let mut expect: Vec<u32> = (0..copies.len() as u32)
                .filter(|&i| arrived[i as usize])
                .collect();
            let mut got = pass.delivered.clone();
            expect.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expect, "B = {b}");
            assert!(!got.is_empty(), "B = {b}");
            if b == 1 {
                assert!(got.len() < copies.len(), "B = 1 discards: {}", got.len());
            }
        }
    }
}
