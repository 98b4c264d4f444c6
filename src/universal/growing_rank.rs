//! [SV] §2: store-and-forward routing with growing ranks. A packet born in cycle t draws
//! k ∈ [K] and starts with rank t·K + k; every link has an unbounded queue at its tail switch,
//! which sends its lowest-ranked packet each cycle (ties: generator, then the generator's
//! sequence number); a packet that crosses a link adds m·K to its rank. While a packet waits
//! at the h-th link of its path its rank is (birth + m(h − 1))·K + k: a deadline that grows
//! m cycles per hop, which is what makes a packet that delays another older in the sense of
//! the delay-sequence argument (Lemma 2.3).
//!
//! Per cycle each switch's out-link arbiters pick from the queues as registered at the end of
//! the previous cycle; then every winner moves to the queue of its next link (or is
//! delivered). A packet generated in cycle t may cross its first link in cycle t, so an
//! undelayed packet takes D₀ cycles.

use super::continuous::{Delivery, NewMessage, Protocol};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// (m, K) of Theorem 2.4: the smallest m with K a power of two whose ε =
/// e(1/K + m/(m − 1))(e·m)^(1/(m − 1))·λ is at most 0.9; `None` when λ ≥ 1/e needs m beyond
/// 4096 (the theorem's condition then fails).
pub fn theorem_parameters(load: f64) -> Option<(u32, u32)> {
    let e = std::f64::consts::E;
    for m in 2u32..=4096 {
        let m_f = f64::from(m);
        let mut k = 1u32;
        while k <= 1 << 20 {
            let eps = e
                * (1.0 / f64::from(k) + m_f / (m_f - 1.0))
                * (e * m_f).powf(1.0 / (m_f - 1.0))
                * load;
            if eps <= 0.9 {
                return Some((m, k));
            }
            k *= 2;
        }
    }
    None
}

/// Parameters of the protocol.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct GrowingRank {
    /// Rank step multiplier m ≥ 2.
    pub m: u32,
    /// Random offsets k ∈ 1..=K.
    pub k: u32,
}

impl GrowingRank {
    pub fn check(&self) -> Result<()> {
        if !(2..=1 << 16).contains(&self.m) {
            return Err(Error::invalid(
                "rank-step",
                self.m,
                "2..=65536 ([SV] §2: m ≥ 2)",
            ));
        }
        if !(1..=1 << 20).contains(&self.k) {
            return Err(Error::invalid("rank-offsets", self.k, "1..=1048576"));
        }
        Ok(())
    }
}

/// A queue entry: (rank, generator, sequence, slab slot), the lowest first.
type Entry = Reverse<(u64, u32, u64, u32)>;

struct Packet {
    birth: u64,
    rank: u64,
    generator: u32,
    seq: u64,
    hop: u32,
    path: Box<[u32]>,
    measured: bool,
}

/// The protocol's state: packets in a slab, a queue of slab slots per link.
pub struct GrowingRankNet {
    params: GrowingRank,
    rng: Rng,
    packets: Vec<Option<Packet>>,
    free: Vec<u32>,
    queues: Vec<BinaryHeap<Entry>>,
    /// Links whose queue is not empty, once each (`queued[l]` says whether listed).
    active: Vec<u32>,
    queued: Vec<bool>,
    crossings: Vec<u64>,
    moving: Vec<u32>,
    buffered: u64,
}

impl GrowingRankNet {
    /// The protocol on a network of `links` data links, drawing offsets from `seed`.
    pub fn new(params: GrowingRank, links: u32, seed: u64) -> Result<Self> {
        params.check()?;
        Ok(GrowingRankNet {
            params,
            rng: stream(seed, Stream::Protocol),
            packets: Vec::new(),
            free: Vec::new(),
            queues: (0..links).map(|_| BinaryHeap::new()).collect(),
            active: Vec::new(),
            queued: vec![false; links as usize],
            crossings: vec![0; links as usize],
            moving: Vec::new(),
            buffered: 0,
        })
    }

    fn enqueue(&mut self, slot: u32) {
        let p = self.packets[slot as usize].as_ref().expect("live packet");
        let l = p.path[p.hop as usize];
        self.queues[l as usize].push(Reverse((p.rank, p.generator, p.seq, slot)));
        if !self.queued[l as usize] {
            self.queued[l as usize] = true;
            self.active.push(l);
        }
    }
}

impl Protocol for GrowingRankNet {
    fn inject(&mut self, m: NewMessage) {
        let k = self.rng.random_range(1..=u64::from(self.params.k));
        let packet = Packet {
            birth: m.birth,
            rank: m.birth * u64::from(self.params.k) + k,
            generator: m.generator,
            seq: m.seq,
            hop: 0,
            path: m.path,
            measured: m.measured,
        };
        if packet.path.is_empty() {
            return;
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.packets[s as usize] = Some(packet);
                s
            }
            None => {
                self.packets.push(Some(packet));
                (self.packets.len() - 1) as u32
            }
        };
        self.buffered += 1;
        self.enqueue(slot);
    }

    fn step(&mut self, cycle: u64, delivered: &mut dyn FnMut(Delivery)) -> Result<()> {
        // evaluate: every non-empty queue sends its lowest rank
        self.moving.clear();
        let mut keep = 0;
        for i in 0..self.active.len() {
            let l = self.active[i];
            let q = &mut self.queues[l as usize];
            let Reverse((_, _, _, slot)) = q.pop().expect("an active link has a queue");
            self.moving.push(slot);
            self.crossings[l as usize] += 1;
            if q.is_empty() {
                self.queued[l as usize] = false;
            } else {
                self.active[keep] = l;
                keep += 1;
            }
        }
        self.active.truncate(keep);
        // commit: each winner joins its next link's queue or is delivered
        let step = u64::from(self.params.m) * u64::from(self.params.k);
        for i in 0..self.moving.len() {
            let slot = self.moving[i];
            let p = self.packets[slot as usize].as_mut().expect("live packet");
            p.hop += 1;
            p.rank += step;
            if p.hop as usize == p.path.len() {
                delivered(Delivery {
                    birth: p.birth,
                    cycle,
                    hops: p.hop,
                    failed_trials: 0,
                    measured: p.measured,
                });
                self.packets[slot as usize] = None;
                self.free.push(slot);
                self.buffered -= 1;
            } else {
                self.enqueue(slot);
            }
        }
        Ok(())
    }

    fn buffered(&self) -> u64 {
        self.buffered
    }

    fn crossings(&self) -> &[u64] {
        &self.crossings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::continuous::{Traffic, Window, run};
    use crate::universal::{Net, NetKind};

    #[test]
    fn theorem_parameters_match_the_published_table() {
        // the smallest m (K a power of two) with ε ≤ 0.9
        assert_eq!(theorem_parameters(0.05), Some((3, 2)));
        assert_eq!(theorem_parameters(0.10), Some((4, 8)));
        assert_eq!(theorem_parameters(0.20), Some((10, 32)));
        assert_eq!(theorem_parameters(0.40), None);
    }

    fn window() -> Window {
        Window {
            warmup: 200,
            window: 2000,
            drain: 2000,
            max_buffered: 100_000,
        }
    }

    #[test]
    fn an_undelayed_packet_takes_its_path_length() {
        // a tiny load: almost every packet crosses one link per cycle
        let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
        let traffic = Traffic::at_load(&net, 0.01, 1).unwrap();
        let mut p = GrowingRankNet::new(GrowingRank { m: 4, k: 8 }, net.data_links(), 1).unwrap();
        let o = run(&net, &traffic, window(), 1, &mut p).unwrap();
        assert!(o.stability.stable, "{o:?}");
        assert_eq!(o.latency.p50, 4);
        assert_eq!(o.delivered_measured, o.measured);
        assert!(o.measured > 0);
    }

    #[test]
    fn stable_below_one_and_unstable_above() {
        let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
        for (load, stable) in [(0.3, true), (0.9, true), (1.1, false)] {
            let traffic = Traffic::at_load(&net, load, 1).unwrap();
            let mut p =
                GrowingRankNet::new(GrowingRank { m: 4, k: 8 }, net.data_links(), 3).unwrap();
            let o = run(&net, &traffic, window(), 3, &mut p).unwrap();
            assert_eq!(o.stability.stable, stable, "load {load}: {o:?}");
        }
    }
}
