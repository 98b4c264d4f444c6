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
use crate::wave::SignalDecl;
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

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
    /// [SV] §4.1's recovery from a bad scenario: overflow stacks.
    pub overflow: Option<Overflow>,
}

/// [SV] §4.1: a packet that has waited T cycles since its (protocol) birth leaves its queue
/// for the link's overflow stack; each cycle a link pops its stack's top with probability
/// 1/(γ·|E|) (|E| the links), suspends the packet for m·T cycles and puts it back in the
/// queue with a new birth and rank. Statistics keep the original birth.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Overflow {
    pub t: u64,
    pub gamma: f64,
}

impl Overflow {
    /// The defaults of the proof's constants: T = ⌈4(D + lg(N + |E|))⌉ and
    /// γ = 2/(1/e − λ) (λ held below 1/e − 0.01).
    pub fn defaults(dilation: u32, generators: u64, links: u32, load: f64) -> Overflow {
        let lg = ((generators + u64::from(links)) as f64).log2();
        let gap = (1.0 / std::f64::consts::E - load).max(0.01);
        Overflow {
            t: (4.0 * (f64::from(dilation) + lg)).ceil() as u64,
            gamma: 2.0 / gap,
        }
    }
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
        if let Some(o) = self.overflow {
            if !(1..=1 << 24).contains(&o.t) {
                return Err(Error::invalid("stack-age", o.t, "1..=16777216 cycles"));
            }
            if !(o.gamma.is_finite() && o.gamma >= 1.0) {
                return Err(Error::invalid("stack-gamma", o.gamma, "at least 1"));
            }
        }
        Ok(())
    }
}

/// A queue entry: (rank, generator, sequence, slab slot, ticket), the lowest first. An entry
/// whose ticket is not its packet's current one is stale (the packet went to a stack) and
/// is skipped.
type Entry = Reverse<(u64, u32, u64, u32, u64)>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Queued,
    Stacked,
    Suspended,
}

struct Packet {
    /// Birth for the statistics (the generation cycle).
    birth: u64,
    /// Birth for the protocol: reset when the packet comes back from a stack.
    rank_birth: u64,
    rank: u64,
    generator: u32,
    seq: u64,
    hop: u32,
    path: Box<[u32]>,
    measured: bool,
    ticket: u64,
    life: u64,
    place: Place,
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
    tickets: u64,
    /// Overflow stacks: packets by protocol birth (for ageing), per link a stack, links with
    /// a non-empty stack, and suspended packets by release cycle.
    ages: VecDeque<(u64, u32, u64)>,
    stacks: Vec<Vec<u32>>,
    stacked_links: Vec<u32>,
    suspended: BTreeMap<u64, Vec<u32>>,
    /// Packets moved to a stack so far.
    pub stacked: u64,
    /// Live packets in each link's queue (its heap also holds stale entries).
    queued_len: Vec<u64>,
    /// Waveform state, once asked for: what each link sent in the last cycle (rank before
    /// the crossing, generator << 32 | sequence).
    sent: Option<Vec<Option<(u64, u64)>>>,
}

impl GrowingRankNet {
    /// The protocol on a network of `links` data links, drawing offsets from `seed`.
    pub fn new(params: GrowingRank, links: u32, seed: u64) -> Result<Self> {
        params.check()?;
        let stacks = if params.overflow.is_some() { links } else { 0 };
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
            tickets: 0,
            ages: VecDeque::new(),
            stacks: (0..stacks).map(|_| Vec::new()).collect(),
            stacked_links: Vec::new(),
            suspended: BTreeMap::new(),
            stacked: 0,
            queued_len: vec![0; links as usize],
            sent: None,
        })
    }

    fn enqueue(&mut self, slot: u32) {
        self.tickets += 1;
        let p = self.packets[slot as usize].as_mut().expect("live packet");
        p.ticket = self.tickets;
        p.place = Place::Queued;
        let l = p.path[p.hop as usize];
        self.queues[l as usize].push(Reverse((p.rank, p.generator, p.seq, slot, p.ticket)));
        self.queued_len[l as usize] += 1;
        if !self.queued[l as usize] {
            self.queued[l as usize] = true;
            self.active.push(l);
        }
    }

    /// Gives a packet a (new) protocol birth in `cycle` and queues it.
    fn born(&mut self, slot: u32, cycle: u64) {
        let k = self.rng.random_range(1..=u64::from(self.params.k));
        self.tickets += 1;
        let p = self.packets[slot as usize].as_mut().expect("live packet");
        p.rank_birth = cycle;
        // (a packet back from a stack restarts its rank as if generated at its link)
        p.rank = cycle * u64::from(self.params.k) + k;
        p.life = self.tickets;
        if self.params.overflow.is_some() {
            self.ages.push_back((cycle, slot, p.life));
        }
        self.enqueue(slot);
    }

    /// [SV] §4.1 at the end of a cycle: packets past their age go to their link's stack, each
    /// non-empty stack may release its top into suspension, and suspended packets whose time
    /// is up return to their queue.
    fn overflow(&mut self, o: Overflow, cycle: u64) {
        while let Some(&(birth, slot, life)) = self.ages.front() {
            if birth + o.t > cycle {
                break;
            }
            self.ages.pop_front();
            let Some(p) = self.packets[slot as usize].as_mut() else {
                continue;
            };
            if p.life != life || p.place != Place::Queued {
                continue;
            }
            p.place = Place::Stacked;
            p.ticket = 0; // its queue entry is stale now
            let l = p.path[p.hop as usize] as usize;
            self.queued_len[l] -= 1;
            if self.stacks[l].is_empty() {
                self.stacked_links.push(l as u32);
            }
            self.stacks[l].push(slot);
            self.stacked += 1;
        }
        let pop = 1.0 / (o.gamma * self.queues.len() as f64);
        let release = cycle + u64::from(self.params.m) * o.t;
        let mut keep = 0;
        for i in 0..self.stacked_links.len() {
            let l = self.stacked_links[i] as usize;
            if self.rng.random_bool(pop) {
                let slot = self.stacks[l].pop().expect("a listed stack has a packet");
                if let Some(p) = self.packets[slot as usize].as_mut() {
                    p.place = Place::Suspended;
                }
                self.suspended.entry(release).or_default().push(slot);
            }
            if !self.stacks[l].is_empty() {
                self.stacked_links[keep] = l as u32;
                keep += 1;
            }
        }
        self.stacked_links.truncate(keep);
        if let Some(slots) = self.suspended.remove(&cycle) {
            for slot in slots {
                self.born(slot, cycle);
            }
        }
    }
}

impl Protocol for GrowingRankNet {
    fn inject(&mut self, m: NewMessage) {
        if m.path.is_empty() {
            return;
        }
        let packet = Packet {
            birth: m.birth,
            rank_birth: m.birth,
            rank: 0,
            generator: m.generator,
            seq: m.seq,
            hop: 0,
            path: m.path,
            measured: m.measured,
            ticket: 0,
            life: 0,
            place: Place::Queued,
        };
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
        self.born(slot, m.birth);
    }

    fn step(&mut self, cycle: u64, delivered: &mut dyn FnMut(Delivery)) -> Result<()> {
        // evaluate: every non-empty queue sends its lowest rank
        self.moving.clear();
        if let Some(sent) = self.sent.as_mut() {
            sent.fill(None);
        }
        let mut keep = 0;
        for i in 0..self.active.len() {
            let l = self.active[i];
            let q = &mut self.queues[l as usize];
            while let Some(Reverse((_, _, _, slot, ticket))) = q.pop() {
                let live = self.packets[slot as usize]
                    .as_ref()
                    .is_some_and(|p| p.ticket == ticket);
                if live {
                    self.moving.push(slot);
                    self.crossings[l as usize] += 1;
                    self.queued_len[l as usize] -= 1;
                    if let Some(sent) = self.sent.as_mut()
                        && let Some(p) = &self.packets[slot as usize]
                    {
                        sent[l as usize] = Some((p.rank, u64::from(p.generator) << 32 | p.seq));
                    }
                    break;
                }
            }
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
                    generator: p.generator,
                    seq: p.seq,
                    birth: p.birth,
                    cycle,
                    hops: p.hop,
                    flits: 1,
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
        if let Some(o) = self.params.overflow {
            self.overflow(o, cycle);
        }
        Ok(())
    }

    fn buffered(&self) -> u64 {
        self.buffered
    }

    fn crossings(&self) -> &[u64] {
        &self.crossings
    }

    fn wave_scopes(&self, net: &super::Net) -> Vec<(String, Vec<SignalDecl>)> {
        let sig = |name: &str, width: u32| SignalDecl {
            name: name.into(),
            width,
            encoding: None,
        };
        (0..net.data_links())
            .map(|l| {
                (
                    super::continuous::link_scope(net, l),
                    vec![
                        sig("queue", 32),
                        sig("sent", 1),
                        sig("sent_rank", 64),
                        sig("sent_packet", 64),
                        sig("stack", 32),
                    ],
                )
            })
            .collect()
    }

    fn wave_values(&mut self, out: &mut Vec<u64>) {
        let links = self.queues.len();
        let sent = self.sent.get_or_insert_with(|| vec![None; links]);
        for (l, (&queued, sent)) in self.queued_len.iter().zip(sent.iter()).enumerate() {
            out.push(queued);
            match *sent {
                Some((rank, packet)) => out.extend([1, rank, packet]),
                None => out.extend([0, 0, 0]),
            }
            out.push(self.stacks.get(l).map_or(0, |s| s.len() as u64));
        }
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
            burst: None,
        }
    }

    #[test]
    fn an_undelayed_packet_takes_its_path_length() {
        // a tiny load: almost every packet crosses one link per cycle
        let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
        let traffic = Traffic::at_load(&net, 0.01, 1).unwrap();
        let mut p = GrowingRankNet::new(
            GrowingRank {
                m: 4,
                k: 8,
                overflow: None,
            },
            net.data_links(),
            1,
        )
        .unwrap();
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
            let mut p = GrowingRankNet::new(
                GrowingRank {
                    m: 4,
                    k: 8,
                    overflow: None,
                },
                net.data_links(),
                3,
            )
            .unwrap();
            let o = run(&net, &traffic, window(), 3, &mut p).unwrap();
            assert_eq!(o.stability.stable, stable, "load {load}: {o:?}");
        }
    }

    #[test]
    fn overflow_stacks_take_old_packets_and_give_them_back() {
        use crate::universal::continuous::Burst;
        let net = Net::new(NetKind::Mesh, 16, 2, 1).unwrap();
        let traffic = Traffic::at_load(&net, 0.3, 1).unwrap();
        let w = Window {
            warmup: 2000,
            window: 4000,
            drain: 4000,
            max_buffered: 1_000_000,
            burst: Some(Burst {
                cycles: 1000,
                factor: 6.0,
            }),
        };
        let overflow = Overflow { t: 40, gamma: 1.0 };
        let params = GrowingRank {
            m: 4,
            k: 8,
            overflow: Some(overflow),
        };
        let mut p = GrowingRankNet::new(params, net.data_links(), 9).unwrap();
        // conservation is checked every cycle: stacked and suspended packets stay counted
        let o = run(&net, &traffic, w, 9, &mut p).unwrap();
        assert!(p.stacked > 0, "{o:?}");
        let r = o.recovery.unwrap();
        assert_eq!(r.means.len(), 20);
        assert!(r.recovered_after.is_some(), "{r:?}");
    }
}
