//! The experiments' greedy store-and-forward routing ([LM] §IV; docs/interpretations.md,
//! 'Greedy step') and their routing problems, run on the switch model's
//! [`FlowControl::Greedy`] mode under the two-phase clock.

use super::faults::Faults;
use crate::config::{FlowControl, LaneChoice, LinkBandwidth};
use crate::error::{Error, Result};
use crate::kernel::{Clock, Clocked};
use crate::rng::Rng;
use crate::switch::{Fabric, Header, SwitchParams, Transfer, TransferKind};
use crate::topology::Topology;
use bitvec::prelude::*;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A routing problem of [LM] §IV: `copies` problems at once, each one packet per input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    /// Transpose (destination = source rotated by ⌊lg N / 2⌋ bits) instead of independent
    /// uniformly random destinations.
    pub transpose: bool,
    /// Problems routed at once (packets per input, all present at step 0).
    pub copies: u32,
}

impl Problem {
    /// The four problems of Tables II and III: `1`, `10`, `1T`, `10T`.
    pub const TABLE: [Problem; 4] = [
        Problem {
            transpose: false,
            copies: 1,
        },
        Problem {
            transpose: false,
            copies: 10,
        },
        Problem {
            transpose: true,
            copies: 1,
        },
        Problem {
            transpose: true,
            copies: 10,
        },
    ];

    /// Destination of every packet, packet `k·N + i` being input `i`'s packet of problem `k`.
    /// Random destinations are drawn from `rng` (outputs may receive several packets).
    pub fn destinations(&self, n: u32, rng: &mut Rng) -> Vec<u32> {
        let log_n = n.trailing_zeros();
        let r = log_n / 2;
        (0..self.copies)
            .flat_map(|_| 0..n)
            .map(|i| {
                if self.transpose {
                    if r == 0 {
                        i
                    } else {
                        ((i << r) | (i >> (log_n - r))) & (n - 1)
                    }
                } else {
                    rng.random_range(0..n)
                }
            })
            .collect()
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            self.copies,
            if self.transpose { "T" } else { "" }
        )
    }
}

impl FromStr for Problem {
    type Err = Error;

    /// `C` or `CT` with `C` in 1..=64: `1`, `10`, `1T`, `10T`, ...
    fn from_str(s: &str) -> Result<Self> {
        let (count, transpose) = match s.strip_suffix(['T', 't']) {
            Some(c) => (c, true),
            None => (s, false),
        };
        match count.parse::<u32>() {
            Ok(copies @ 1..=64) => Ok(Problem { transpose, copies }),
            _ => Err(Error::invalid(
                "problem",
                s,
                "C or CT with C = 1..=64 packets per input (1, 10, 1T, 10T)",
            )),
        }
    }
}

/// Parameters of the greedy routing (defaults: admission at most 4 as in [LM] §IV, the lowest
/// link as in docs/interpretations.md, 'Link choice').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GreedyConfig {
    /// A link may be used only if its head held at most this many packets at the end of the
    /// previous step ([LM]: 4).
    pub max_held: u32,
    /// Which of the eligible links a packet takes (docs/interpretations.md, 'Link choice').
    pub lane_choice: LaneChoice,
    /// Steps without any packet moving, while packets remain, before a deadlock is reported.
    pub watchdog: u64,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig {
            max_held: 4,
            lane_choice: LaneChoice::Lowest,
            watchdog: 1000,
        }
    }
}

impl GreedyConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<()> {
        if !(1..=1000).contains(&self.max_held) {
            return Err(Error::invalid("max-held", self.max_held, "1..=1000"));
        }
        if self.watchdog == 0 {
            return Err(Error::invalid("watchdog", 0, "at least 1 step"));
        }
        Ok(())
    }
}

/// What a greedy routing measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GreedyOutcome {
    pub packets: u32,
    /// Steps until the last packet was delivered (Table II).
    pub completion: u64,
    /// Packets that moved in every step from the first until delivery: circuit switching's
    /// locked-down paths (Table III).
    pub never_delayed: u32,
    /// Longest queue any switch above the inputs held.
    pub max_queue: u32,
}

impl GreedyOutcome {
    /// Percentage of packets never delayed.
    pub fn never_delayed_percent(&self) -> f64 {
        100.0 * f64::from(self.never_delayed) / f64::from(self.packets.max(1))
    }
}

/// A network (with its faults) ready to route problems greedily; reusable across problems.
pub struct GreedyRouter {
    fabric: Fabric,
    config: GreedyConfig,
    headers: Vec<Header>,
    transfers: Vec<Transfer>,
    delayed: BitVec,
    delivered: BitVec,
    undelivered: u32,
    max_queue: u32,
}

impl GreedyRouter {
    /// Builds the switch model of `topo` in greedy mode with `faults` marked, its input queues
    /// deep enough for `max_packets_per_input`.
    pub fn new(
        topo: Topology,
        faults: &Faults,
        config: GreedyConfig,
        max_packets_per_input: u32,
        seed: u64,
    ) -> Result<Self> {
        config.validate()?;
        // An admitted head held at most max_held and gains at most its in-degree in a step.
        let depth = (config.max_held + 2 * topo.multiplicity).max(max_packets_per_input);
        let params = SwitchParams {
            vcs: 1,
            depth,
            flits: 1,
            mode: FlowControl::Greedy,
            bandwidth: LinkBandwidth::PerVc,
            backpressure: Default::default(),
            lane_choice: config.lane_choice,
            switch_queue: Some(config.max_held + 1),
        };
        let mut fabric = Fabric::new(topo, params, seed)?;
        for s in faults.faulty.iter_ones() {
            fabric.set_faulty(s as u32, true);
        }
        Ok(GreedyRouter {
            fabric,
            config,
            headers: Vec::new(),
            transfers: Vec::new(),
            delayed: BitVec::new(),
            delivered: BitVec::new(),
            undelivered: 0,
            max_queue: 0,
        })
    }

    /// The switch model.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Routes packet `k` from input `k mod N` to `destinations[k]` (all present at step 0, each
    /// input's queue in packet order) until every packet is delivered. Checks that every packet
    /// reaches its own output exactly once and none is lost in a queue.
    pub fn route(&mut self, destinations: &[u32]) -> Result<GreedyOutcome> {
        self.load(destinations)?;
        self.run(|_, _| Ok(()))
    }

    /// Loads the packets of [`GreedyRouter::route`] into the input queues (the state a
    /// waveform starts from).
    pub fn load(&mut self, destinations: &[u32]) -> Result<()> {
        let n = self.fabric.topo.n;
        if self.fabric.flits_in_network() > 0 {
            return Err(Error::invalid(
                "load",
                "a second problem",
                "one problem at a time (route the loaded one first)",
            ));
        }
        if let Some((k, &d)) = destinations.iter().enumerate().find(|(_, d)| **d >= n) {
            return Err(Error::invalid(
                &format!("destination of packet {k}"),
                d,
                format!("0..={}", n - 1),
            ));
        }
        self.headers.clear();
        self.headers.extend(
            destinations
                .iter()
                .enumerate()
                .map(|(k, &destination)| Header {
                    destination,
                    middle: 0,
                    path: 0,
                    id: k as u32,
                }),
        );
        self.delayed.clear();
        self.delayed.resize(destinations.len(), false);
        self.delivered.clear();
        self.delivered.resize(destinations.len(), false);
        self.undelivered = destinations.len() as u32;
        self.max_queue = 0;
        for k in 0..destinations.len() as u32 {
            self.fabric.enqueue(k % n, k)?;
        }
        Ok(())
    }

    /// Clocks the loaded problem until every packet is delivered, calling `observe` with the
    /// fabric and the 0-based cycle after every clock edge (a waveform writer samples there).
    pub fn run(
        &mut self,
        mut observe: impl FnMut(&Fabric, u64) -> Result<()>,
    ) -> Result<GreedyOutcome> {
        let packets = self.headers.len() as u32;
        let mut clock = Clock::settled(self);
        let mut idle = 0;
        while self.undelivered > 0 {
            crate::interrupt::check()?;
            clock.tick(self);
            let moved = self.account(clock.cycle)?;
            observe(&self.fabric, clock.cycle - 1)?;
            idle = if moved { 0 } else { idle + 1 };
            if idle >= self.config.watchdog {
                return Err(Error::Deadlock(self.deadlock_report(clock.cycle)));
            }
        }
        Ok(GreedyOutcome {
            packets,
            completion: clock.cycle,
            never_delayed: packets - self.delayed.count_ones() as u32,
            max_queue: self.max_queue,
        })
    }

    /// Books the last clock edge; returns whether any packet moved.
    fn account(&mut self, cycle: u64) -> Result<bool> {
        let n = self.fabric.topo.n;
        let mut moved = false;
        for t in &self.transfers {
            let k = t.flit.msg as usize;
            match t.kind {
                TransferKind::Stalled => self.delayed.set(k, true),
                TransferKind::Crossed { .. } => {
                    moved = true;
                    if self.fabric.is_ejection_vc(t.to) {
                        let (output, _) = self.fabric.vc_switch(t.to);
                        let column = output % n;
                        if column != self.headers[k].destination || self.delivered[k] {
                            return Err(Error::Invariant {
                                cycle,
                                message: format!(
                                    "packet {k} for output {} delivered at output {column}{}",
                                    self.headers[k].destination,
                                    if self.delivered[k] { " twice" } else { "" }
                                ),
                            });
                        }
                        self.delivered.set(k, true);
                        self.undelivered -= 1;
                    }
                }
                _ => {}
            }
        }
        let queued = (n..self.fabric.topo.node_count() as u32)
            .map(|s| self.fabric.occupancy(s))
            .fold((0u64, 0u32), |(sum, max), q| {
                (sum + u64::from(q), max.max(q))
            });
        let at_inputs: u64 = (0..n).map(|s| u64::from(self.fabric.occupancy(s))).sum();
        self.max_queue = self.max_queue.max(queued.1);
        if queued.0 + at_inputs != u64::from(self.undelivered)
            || self.fabric.flits_in_network() != u64::from(self.undelivered)
        {
            return Err(Error::Invariant {
                cycle,
                message: format!(
                    "{} packets undelivered but {} queued (registers count {}): a packet was lost or duplicated",
                    self.undelivered,
                    queued.0 + at_inputs,
                    self.fabric.flits_in_network()
                ),
            });
        }
        Ok(moved)
    }

    /// Names the blocked packets (up to 10) and where they wait.
    fn deadlock_report(&self, cycle: u64) -> String {
        let topo = &self.fabric.topo;
        let mut blocked = Vec::new();
        for s in 0..topo.node_count() as u32 {
            for &k in self.fabric.queued(s) {
                if blocked.len() < 10 {
                    let node = topo.node(s);
                    blocked.push(format!(
                        "packet {k} (to output {}) in switch level {} row {}",
                        self.headers[k as usize].destination, node.level, node.column
                    ));
                }
            }
        }
        format!(
            "deadlock at step {cycle}: no packet moved for {} steps with {} undelivered; blocked: {}",
            self.config.watchdog,
            self.undelivered,
            blocked.join("; ")
        )
    }
}

impl Clocked for GreedyRouter {
    fn components(&self) -> usize {
        self.fabric.topo.node_count()
    }

    /// Any order settles a greedy cycle (switches read only registers); ascending ids.
    fn settle_order(&self) -> Vec<usize> {
        (0..self.components()).collect()
    }

    fn evaluate(&mut self, c: usize) -> bool {
        self.fabric
            .evaluate_switch(c as u32, crate::switch::Headers::all(&self.headers))
    }

    fn commit(&mut self) {
        self.transfers.clear();
        self.fabric.commit_departures(&mut self.transfers);
        self.fabric
            .commit_arrivals(&self.transfers, crate::switch::Headers::all(&self.headers));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multibutterfly::faults::{FaultDraw, InputRule, Interior, place_random, propagate};
    use crate::rng::{Stream, stream};
    use crate::topology::{
        SplitterWiring, butterfly, dilated_butterfly, modified_splitter, random_splitter,
    };

    fn route(
        topo: Topology,
        faults: Option<&Faults>,
        problem: Problem,
        seed: u64,
    ) -> GreedyOutcome {
        let none = Faults::none(&topo);
        let faults = faults.unwrap_or(&none);
        let mut rng = stream(seed, Stream::Traffic);
        let dest = problem.destinations(topo.n, &mut rng);
        let mut r =
            GreedyRouter::new(topo, faults, GreedyConfig::default(), problem.copies, seed).unwrap();
        r.route(&dest).unwrap()
    }

    #[test]
    fn problems_parse_and_transpose_rotates_half_the_bits() {
        let p: Problem = "10T".parse().unwrap();
        assert_eq!(
            (p.copies, p.transpose, p.to_string()),
            (10, true, "10T".into())
        );
        assert!("0".parse::<Problem>().is_err() && "x".parse::<Problem>().is_err());
        let mut rng = stream(1, Stream::Test);
        let d = Problem::TABLE[2].destinations(1024, &mut rng);
        assert_eq!(d[1], 32);
        assert_eq!(d[0b00001_00010], 0b00010_00001);
        let mut sorted = d.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1024).collect::<Vec<_>>());
        assert_eq!(Problem::TABLE[1].destinations(64, &mut rng).len(), 640);
    }

    #[test]
    fn a_lone_packet_is_never_delayed() {
        let t = butterfly(16).unwrap();
        let mut r = GreedyRouter::new(
            t,
            &Faults::none(&butterfly(16).unwrap()),
            GreedyConfig::default(),
            1,
            1,
        )
        .unwrap();
        let out = r.route(&[9]).unwrap();
        assert_eq!((out.completion, out.never_delayed), (4, 1));
    }

    #[test]
    fn butterfly_transpose_is_deterministic_and_congested() {
        // [LM] §IV: transpose is the butterfly's worst case (sqrt N packets through one
        // middle switch).
        let a = route(butterfly(256).unwrap(), None, Problem::TABLE[2], 1);
        let b = route(butterfly(256).unwrap(), None, Problem::TABLE[2], 2);
        assert_eq!(a, b);
        assert!(a.completion >= 16, "{a:?}");
        let random = route(butterfly(256).unwrap(), None, Problem::TABLE[0], 1);
        assert!(random.completion < a.completion, "{random:?} vs {a:?}");
        let d = route(
            dilated_butterfly(256, 2).unwrap(),
            None,
            Problem::TABLE[2],
            1,
        );
        assert!(d.completion < a.completion);
    }

    #[test]
    fn every_network_delivers_every_problem() {
        for p in Problem::TABLE {
            for seed in 0..2 {
                let nets = [
                    butterfly(64).unwrap(),
                    dilated_butterfly(64, 2).unwrap(),
                    random_splitter(64, 2, SplitterWiring::default(), seed).unwrap(),
                    modified_splitter(64, SplitterWiring::default(), seed).unwrap(),
                ];
                for t in nets {
                    let out = route(t, None, p, seed);
                    assert_eq!(out.packets, 64 * p.copies);
                    assert!(out.completion >= 6 && out.never_delayed <= out.packets);
                    assert!(out.max_queue <= 4 + 4, "{out:?}");
                }
            }
        }
    }

    #[test]
    fn faults_are_routed_around() {
        let mut rng = stream(3, Stream::Test);
        let mut routed = 0;
        for seed in 0..20 {
            let t = modified_splitter(256, SplitterWiring::default(), seed).unwrap();
            let mut f =
                place_random(&t, 60, Interior::default(), FaultDraw::Distinct, &mut rng).unwrap();
            propagate(&t, &mut f, InputRule::All);
            if f.faulty_inputs(&t) > 0 {
                continue;
            }
            for lane_choice in [
                LaneChoice::Lowest,
                LaneChoice::Random,
                LaneChoice::LeastLoaded,
            ] {
                let config = GreedyConfig {
                    lane_choice,
                    ..GreedyConfig::default()
                };
                let mut r = GreedyRouter::new(t.clone(), &f, config, 10, seed).unwrap();
                let dest = Problem::TABLE[1].destinations(256, &mut rng);
                let out = r.route(&dest).unwrap();
                assert_eq!(out.packets, 2560);
                // No packet ever entered a faulty switch: the router's queues there stay empty.
                assert!(
                    f.faulty
                        .iter_ones()
                        .all(|s| r.fabric().occupancy(s as u32) == 0)
                );
            }
            routed += 1;
        }
        assert!(routed > 10);
    }

    #[test]
    fn a_full_input_queue_and_bad_destinations_are_refused() {
        let t = butterfly(8).unwrap();
        let f = Faults::none(&t);
        let mut r = GreedyRouter::new(t, &f, GreedyConfig::default(), 1, 1).unwrap();
        assert!(matches!(r.route(&[8]), Err(Error::Invalid { .. })));
        let bad = GreedyConfig {
            max_held: 0,
            ..GreedyConfig::default()
        };
        assert!(GreedyRouter::new(butterfly(8).unwrap(), &f, bad, 1, 1).is_err());
    }
}
