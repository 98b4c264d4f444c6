//! [SV] §2's store-and-forward switch with growing ranks as hardware, on the butterfly:
//! modelled register by register, with its waveform and its Verilog (`templates/rank_*.v`)
//! from one register layout ([`layout`]); the Verilog is in `rank_verilog.rs`.
//!
//! Switch ⟨i, w⟩ (i < lg n) has a queue of Q slots per out link d (straight, cross). In every
//! cycle each queue sends its lowest (rank, key) — at level 0 this cycle's injections bound
//! for d compete too, as a packet may cross its first link in its birth cycle — and the
//! packet's rank grows by m·K on the link. At the edge the packets that crossed into the
//! switch (and, at level 0, the injections not sent) take the lowest slots that were free
//! at the last edge, in port order. The key is (generator, sequence number), so ranks tie
//! as in [`crate::universal::growing_rank`]. Level lg n registers what arrives: delivery.
//! A queue has Q slots where the protocol's is unbounded: Q is sized from the run and a
//! sticky `overflow` register says if a packet ever found none.

pub use super::rank_verilog::design;
use super::{ButterflyVcd, Registers, hex_line};
use crate::error::{Error, Result};
use crate::rng::{Stream, stream};
use rand::RngExt;

/// Bits of a packet's id (wraps).
pub const ID_BITS: u32 = 16;
/// Bits of the sequence-number part of a key.
pub const SEQ_BITS: u32 = 16;

/// A packet in a slot or on a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub valid: bool,
    pub rank: u64,
    /// generator · 2^16 + sequence number.
    pub key: u64,
    pub dest: u32,
    pub id: u32,
}

/// The second register bank and the scratch of [`RankButterfly::step`].
#[derive(Clone, Debug, Default)]
struct Spare {
    queues: Vec<Packet>,
    overflow: Vec<bool>,
    arrived: Vec<Packet>,
    crossing: Vec<(u32, u32, u32, Packet)>,
    sent_in: Vec<bool>,
}

/// The butterfly's registers.
#[derive(Clone, Debug)]
pub struct RankButterfly {
    pub n: u32,
    pub log_n: u32,
    /// Slots per queue, injection lanes per input, rank growth per link m·K.
    pub slots: u32,
    pub lanes_in: u32,
    pub step: u64,
    /// `queues[((level·n + w)·2 + d)·Q + s]`, level < lg n.
    queues: Vec<Packet>,
    overflow: Vec<bool>,
    /// `arrived[w·2 + p]`: what crossed into output switch w through in port p.
    arrived: Vec<Packet>,
    cycle: u64,
    /// Most slots one queue needed (a slot sent from is reused only a cycle later).
    pub most: u32,
    spare: Spare,
}

impl RankButterfly {
    pub fn new(n: u32, slots: u32, lanes_in: u32, step: u64) -> Result<Self> {
        if !n.is_power_of_two() || !(4..=64).contains(&n) {
            return Err(Error::invalid("inputs", n, "a power of two in 4..=64"));
        }
        if !(1..=4096).contains(&slots) {
            return Err(Error::invalid("slots", slots, "1..=4096 per queue"));
        }
        let log_n = n.trailing_zeros();
        Ok(RankButterfly {
            n,
            log_n,
            slots,
            lanes_in,
            step,
            queues: vec![Packet::default(); (n * log_n * 2 * slots) as usize],
            overflow: vec![false; (n * log_n) as usize],
            arrived: vec![Packet::default(); (2 * n) as usize],
            spare: Spare {
                queues: vec![Packet::default(); (n * log_n * 2 * slots) as usize],
                overflow: vec![false; (n * log_n) as usize],
                arrived: vec![Packet::default(); (2 * n) as usize],
                crossing: Vec::new(),
                sent_in: vec![false; lanes_in as usize],
            },
            cycle: 0,
            most: 0,
        })
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Whether some queue ever overflowed.
    pub fn overflowed(&self) -> bool {
        self.overflow.iter().any(|&o| o)
    }

    /// Packets delivered at the last edge.
    pub fn delivered(&self) -> impl Iterator<Item = Packet> + '_ {
        self.arrived.iter().copied().filter(|p| p.valid)
    }

    fn queue(&self, level: u32, w: u32, d: u32) -> std::ops::Range<usize> {
        let base = (((level * self.n + w) * 2 + d) * self.slots) as usize;
        base..base + self.slots as usize
    }

    /// One clock cycle with `inject[x]` at input x (J lanes).
    pub fn step(&mut self, inject: &[Vec<Packet>]) {
        // the next state in a second bank of registers, and scratch kept between cycles: no
        // allocation per cycle
        let mut spare = std::mem::take(&mut self.spare);
        spare.queues.copy_from_slice(&self.queues);
        spare.overflow.copy_from_slice(&self.overflow);
        spare.arrived.fill(Packet::default());
        // what crossed each link this cycle: into <level + 1, to> port d
        spare.crossing.clear();
        let (next, next_overflow, next_arrived, crossing, sent_in) = (
            &mut spare.queues,
            &mut spare.overflow,
            &mut spare.arrived,
            &mut spare.crossing,
            &mut spare.sent_in,
        );
        let mut most = self.most;
        for level in 0..self.log_n {
            let bit = 1u32 << (self.log_n - 1 - level);
            for w in 0..self.n {
                let colbit = w & bit != 0;
                let dir = |p: &Packet| u32::from((p.dest & bit != 0) ^ colbit);
                sent_in.fill(false);
                for d in 0..2 {
                    let q = self.queue(level, w, d);
                    // candidates: slots, then (level 0) the injections bound for d
                    let mut best: Option<(usize, Packet)> = None;
                    let slots = self.queues[q.clone()].iter().copied().enumerate();
                    let injected: &[Packet] = if level == 0 { &inject[w as usize] } else { &[] };
                    let lanes = injected
                        .iter()
                        .copied()
                        .enumerate()
                        .map(|(x, p)| (self.slots as usize + x, p))
                        .filter(|(_, p)| dir(p) == d);
                    for (c, p) in slots.chain(lanes) {
                        if p.valid && best.is_none_or(|(_, b)| (p.rank, p.key) < (b.rank, b.key)) {
                            best = Some((c, p));
                        }
                    }
                    if let Some((c, p)) = best {
                        if c < self.slots as usize {
                            next[q.start + c].valid = false;
                        } else {
                            sent_in[c - self.slots as usize] = true;
                        }
                        let to = if d == 0 { w } else { w ^ bit };
                        let mut moved = p;
                        moved.rank = p.rank.wrapping_add(self.step);
                        crossing.push((level + 1, to, d, moved));
                    }
                }
                if level == 0 {
                    for (p, sent) in inject[w as usize].iter().zip(sent_in.iter()) {
                        if p.valid && !sent {
                            let used = self.insert(next, next_overflow, level, w, dir(p), *p);
                            most = most.max(used);
                        }
                    }
                }
            }
        }
        // arrivals through in port 0 before port 1, as the Verilog takes them
        crossing.sort_by_key(|&(level, to, port, _)| (level, to, port));
        for &(level, to, port, p) in crossing.iter() {
            if level == self.log_n {
                next_arrived[(to * 2 + port) as usize] = p;
            } else {
                let bit = 1u32 << (self.log_n - 1 - level);
                let d = u32::from((p.dest & bit != 0) ^ (to & bit != 0));
                let used = self.insert(next, next_overflow, level, to, d, p);
                most = most.max(used);
            }
        }
        std::mem::swap(&mut self.queues, &mut spare.queues);
        std::mem::swap(&mut self.overflow, &mut spare.overflow);
        std::mem::swap(&mut self.arrived, &mut spare.arrived);
        self.spare = spare;
        self.cycle += 1;
        self.most = most;
    }

    /// Returns the slots the queue needs for it (its slot's index + 1).
    fn insert(
        &self,
        next: &mut [Packet],
        overflow: &mut [bool],
        level: u32,
        w: u32,
        d: u32,
        p: Packet,
    ) -> u32 {
        let q = self.queue(level, w, d);
        let free = q.clone().find(|&s| !self.queues[s].valid && !next[s].valid);
        match free {
            Some(s) => {
                next[s] = p;
                (s - q.start + 1) as u32
            }
            None => {
                overflow[(level * self.n + w) as usize] = true;
                self.slots
            }
        }
    }

    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        if level < self.log_n {
            for d in 0..2 {
                let q = &self.queues[self.queue(level, w, d)];
                out.extend(q.iter().map(|p| u64::from(p.valid)));
                out.extend(q.iter().map(|p| p.rank));
                out.extend(q.iter().map(|p| p.key));
                out.extend(q.iter().map(|p| u64::from(p.dest)));
                out.extend(q.iter().map(|p| u64::from(p.id)));
            }
            out.push(u64::from(self.overflow[(level * self.n + w) as usize]));
        } else {
            let a = &self.arrived[(w * 2) as usize..(w * 2 + 2) as usize];
            out.extend(a.iter().map(|p| u64::from(p.valid)));
            out.extend(a.iter().map(|p| p.rank));
            out.extend(a.iter().map(|p| p.key));
            out.extend(a.iter().map(|p| u64::from(p.dest)));
            out.extend(a.iter().map(|p| u64::from(p.id)));
        }
    }
}

/// The registers of a butterfly with the field widths of its design.
struct WithWidths<'a>(&'a RankButterfly, Widths);

impl Registers for WithWidths<'_> {
    fn shape(&self) -> (u32, u32) {
        (self.0.log_n, self.0.n)
    }

    fn layout(&self, level: u32) -> Vec<(String, u32, String)> {
        layout(level, self.0.log_n, self.0.slots, self.1)
    }

    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>) {
        self.0.values(level, w, out);
    }

    fn cycle(&self) -> u64 {
        self.0.cycle
    }
}

/// Field widths of a design: rank, key, destination, id.
#[derive(Clone, Copy, Debug)]
pub struct Widths {
    pub rw: u32,
    pub kw: u32,
    pub dw: u32,
    pub iw: u32,
}

/// The registers of a switch at `level`: (element name, width, Verilog expression).
pub fn layout(level: u32, log_n: u32, slots: u32, w: Widths) -> Vec<(String, u32, String)> {
    let mut regs = Vec::new();
    let fields = [
        ("valid", 1),
        ("rank", w.rw),
        ("key", w.kw),
        ("dest", w.dw),
        ("id", w.iw),
    ];
    if level < log_n {
        for d in 0..2 {
            for (f, (name, width)) in fields.iter().enumerate() {
                let packed = ["qv_q", "qr_q", "qk_q", "qd_q", "qi_q"][f];
                for s in 0..slots {
                    let i = d * slots + s;
                    let expr = if *width == 1 && f == 0 {
                        format!("{packed}[{i}]")
                    } else {
                        format!("{packed}[{i}*{width} +: {width}]")
                    };
                    regs.push((format!("q{d}_{name}_s{s}"), *width, expr));
                }
            }
        }
        regs.push(("overflow".into(), 1, "overflow_q".into()));
    } else {
        for (f, (name, width)) in fields.iter().enumerate() {
            let packed = ["av_q", "ar_q", "ak_q", "ad_q", "ai_q"][f];
            for p in 0..2 {
                let expr = if f == 0 {
                    format!("{packed}[{p}]")
                } else {
                    format!("{packed}[{p}*{width} +: {width}]")
                };
                regs.push((format!("arrive_{name}_p{p}"), *width, expr));
            }
        }
    }
    regs
}

/// A packet to inject: its input, birth cycle, first rank and destination.
#[derive(Clone, Copy, Debug)]
pub struct Injection {
    pub source: u32,
    pub birth: u64,
    pub rank: u64,
    pub seq: u64,
    pub dest: u32,
}

/// A run of the hardware: the co-simulation bundle and every delivery as
/// (generator, sequence, cycle).
pub struct RankRun {
    pub bundle: crate::cosim::Bundle,
    pub delivered: Vec<(u32, u64, u64)>,
    pub slots: u32,
}

/// A simulation's end state, deliveries, waveform and stimulus.
type Simulated = (RankButterfly, Vec<(u32, u64, u64)>, Vec<u8>, String);

fn simulate(
    n: u32,
    slots: u32,
    step: u64,
    packets: &[Injection],
    cycles: u64,
    widths: Option<Widths>,
    command: &str,
) -> Result<Simulated> {
    let mut per = std::collections::BTreeMap::new();
    for p in packets {
        *per.entry((p.source, p.birth)).or_insert(0u32) += 1;
    }
    let j = per.values().copied().max().unwrap_or(1).max(1);
    let mut net = RankButterfly::new(n, slots, j, step)?;
    let mut vcd_bytes = Vec::new();
    let mut lines = crate::rtl::hex::Lines::default();
    let mut delivered = Vec::new();
    let mut vcd = match widths {
        Some(w) => Some(ButterflyVcd::new(
            &mut vcd_bytes,
            &WithWidths(&net, w),
            command,
        )?),
        None => None,
    };
    let mut next = 0;
    for cycle in 0..cycles {
        let mut inject = vec![vec![Packet::default(); j as usize]; n as usize];
        let mut used = vec![0usize; n as usize];
        while next < packets.len() && packets[next].birth == cycle {
            let p = packets[next];
            let x = p.source as usize;
            inject[x][used[x]] = Packet {
                valid: true,
                rank: p.rank,
                key: u64::from(p.source) << SEQ_BITS | p.seq,
                dest: p.dest,
                id: next as u32 & ((1 << ID_BITS) - 1),
            };
            used[x] += 1;
            next += 1;
        }
        if let Some(w) = widths {
            let lw = 1 + w.rw + w.kw + w.dw + w.iw;
            let mut fields = Vec::new();
            for lanes in &inject {
                for p in lanes {
                    fields.extend([
                        (u64::from(p.valid), 1),
                        (p.rank, w.rw),
                        (p.key, w.kw),
                        (u64::from(p.dest), w.dw),
                        (u64::from(p.id), w.iw),
                    ]);
                }
            }
            lines.push(hex_line(&fields, (n * j * lw) as usize));
        }
        net.step(&inject);
        if let (Some(v), Some(w)) = (vcd.as_mut(), widths) {
            v.sample(&WithWidths(&net, w))?;
        }
        delivered.extend(net.delivered().map(|p| {
            (
                (p.key >> SEQ_BITS) as u32,
                p.key & ((1 << SEQ_BITS) - 1),
                cycle,
            )
        }));
    }
    if let Some(v) = vcd {
        v.finish()?;
    }
    Ok((net, delivered, vcd_bytes, lines.to_hex()))
}

/// Runs `packets` (sorted by birth) on an `n`-input butterfly with rank step `step` for
/// `cycles` cycles: first with roomy queues to size them, then with Q = the most any queue
/// held, recording the waveform, the stimulus and the Verilog.
pub fn run(
    n: u32,
    step: u64,
    packets: &[Injection],
    cycles: u64,
    command: &str,
) -> Result<RankRun> {
    if packets.windows(2).any(|p| p[0].birth > p[1].birth) {
        return Err(Error::invalid(
            "packets",
            "unsorted",
            "packets sorted by birth",
        ));
    }
    if packets.iter().any(|p| p.seq >= 1 << SEQ_BITS) {
        return Err(Error::invalid(
            "packets",
            "a sequence number",
            "below 2^16 per generator",
        ));
    }
    // no queue holds more than every packet
    let roomy = (packets.len() as u32).clamp(1, 4096);
    let (sizing, ..) = simulate(n, roomy, step, packets, cycles, None, command)?;
    if sizing.overflowed() {
        return Err(Error::invalid(
            "packets",
            packets.len(),
            "queues of at most 4096 packets",
        ));
    }
    let slots = sizing.most.max(1);
    let max_rank =
        packets.iter().map(|p| p.rank).max().unwrap_or(0) + step * u64::from(n.trailing_zeros());
    let widths = Widths {
        rw: (64 - max_rank.leading_zeros()).max(1),
        kw: n.trailing_zeros() + SEQ_BITS,
        dw: n.trailing_zeros(),
        iw: ID_BITS,
    };
    let (net, delivered, vcd, hex) =
        simulate(n, slots, step, packets, cycles, Some(widths), command)?;
    if net.overflowed() {
        return Err(Error::Invariant {
            cycle: net.cycle(),
            message: format!("a queue of {slots} slots overflowed after sizing"),
        });
    }
    Ok(RankRun {
        bundle: crate::cosim::Bundle {
            model_vcd: vcd,
            design: design(&net, widths, command, cycles)?,
            stimulus_hex: hex,
            cycles,
            build: None,
        },
        delivered,
        slots,
    })
}

/// Random packets at rate `p` per input per cycle for `cycles` cycles to uniform outputs,
/// each with the rank [`crate::universal::growing_rank`] would draw for it with `k` offsets
/// and seed `seed` (traffic from the seed's test stream).
pub fn random_injections(n: u32, p: f64, cycles: u64, k: u32, seed: u64) -> Vec<Injection> {
    let mut traffic = stream(seed, Stream::Test);
    let mut ranks = stream(seed, Stream::Protocol);
    let mut seq = vec![0u64; n as usize];
    let mut out = Vec::new();
    for birth in 0..cycles {
        for x in 0..n {
            if traffic.random_bool(p) {
                let dest = traffic.random_range(0..n);
                let kk = ranks.random_range(1..=u64::from(k));
                out.push(Injection {
                    source: x,
                    birth,
                    rank: birth * u64::from(k) + kk,
                    seq: seq[x as usize],
                    dest,
                });
                seq[x as usize] += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::continuous::{Delivery, NewMessage, Protocol};
    use crate::universal::growing_rank::{GrowingRank, GrowingRankNet};
    use crate::universal::{Net, NetKind};

    #[test]
    fn the_register_model_delivers_when_the_protocol_does() {
        let (n, m, k, seed) = (8u32, 4u32, 8u32, 3u64);
        let ps = random_injections(n, 0.45, 60, k, seed);
        let cycles = 120;
        let hw = run(n, u64::from(m * k), &ps, cycles, "test").unwrap();
        // the protocol's kernel on the same packets, with the same rank draws
        let net = Net::new(NetKind::Butterfly, n, 2, 1).unwrap();
        let mut proto = GrowingRankNet::new(
            GrowingRank {
                m,
                k,
                overflow: None,
            },
            net.data_links(),
            seed,
        )
        .unwrap();
        let mut expect = Vec::new();
        let mut next = 0;
        for cycle in 0..cycles {
            while next < ps.len() && ps[next].birth == cycle {
                let p = ps[next];
                let mut path = Vec::new();
                net.path_into(p.source, p.dest, &mut path);
                proto.inject(NewMessage {
                    generator: p.source,
                    source: p.source,
                    seq: p.seq,
                    birth: p.birth,
                    path: path.into(),
                    flits: 1,
                    measured: true,
                });
                next += 1;
            }
            proto
                .step(cycle, &mut |d: Delivery| {
                    expect.push((d.generator, d.seq, d.cycle))
                })
                .unwrap();
        }
        let mut got = hw.delivered.clone();
        got.sort_unstable();
        expect.sort_unstable();
        assert_eq!(got.len(), ps.len(), "every packet delivered");
        assert_eq!(got, expect);
        assert!(hw.slots >= 2, "contention makes queues: {}", hw.slots);
    }
}
