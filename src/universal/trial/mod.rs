//! [SV] §3: the wormhole trial protocol. Worms of L flits are never buffered in the network:
//! a trial injects flit j (0-based) in cycle s + j and every flit moves one link per cycle,
//! so flit j crosses hop h in cycle s + j + h. A link carries at most B flits of B distinct
//! worms per cycle (link bandwidth B); when more want it, the B with the smallest
//! (rank, generator, sequence) cross and every other is *cut* there: its flit and all later
//! flits of its worm vanish at that link (they never compete there), while the flits in front
//! go on and the flits behind still compete upstream. There is no reservation: a low-ranked
//! header preempts the body of a worm already using the link.
//!
//! A worm born in cycle t draws r ∈ [R] once, rank = t + r, with R = 2D + L − 1 (D the
//! network's longest path). Its first trial starts at its birth, the next R cycles after the
//! previous one. When all L flits reach the destination, a one-flit acknowledgement carrying
//! the worm's rank starts back along the reverse links in the next cycle and competes like a
//! data flit; the trial succeeds only if neither a flit nor the acknowledgement was cut. An
//! undisturbed trial delivers its tail D₀ + L − 1 cycles after it starts and has its
//! acknowledgement back after 2D₀ + L − 1 ≤ R.
//!
//! Each cycle every switch's out-link arbiter ranks the flits that want the link, from the
//! positions registered at the end of the previous cycle; then every winner moves at once.

use super::bufferless::{Contention, Flight, Request, arbitrate};
use super::continuous::{Delivery, NewMessage, Protocol};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::wave::SignalDecl;
use rand::RngExt;
use serde::Serialize;
use std::collections::BTreeMap;

/// Parameters of the protocol.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TrialParams {
    /// Link bandwidth B: flits of distinct worms one link carries per cycle.
    pub bandwidth: u32,
    /// Flits per worm L (with `variable_lengths`, their expectation).
    pub flits: u32,
    /// D, the longest path of the network: the trial period is R = 2D + L − 1.
    pub dilation: u32,
    /// [SV] §3's variable-length worms: lengths uniform in 1..=2L − 1, L their expectation
    /// (the traffic draws them; reported with the run).
    pub variable_lengths: bool,
    /// [SV] §4.2's recovery from a bad scenario: overflow stacks.
    pub overflow: Option<TrialOverflow>,
}

/// [SV] §4.2: a worm that failed T trials since its (protocol) birth goes to its generator's
/// overflow stack; each cycle a generator with a non-empty stack takes the top worm with
/// probability `pop` (the paper's λ/(6N)), suspends it for T·R cycles and puts it back in its
/// injection buffer with a new birth and rank. Statistics keep the original birth.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TrialOverflow {
    pub t: u32,
    pub pop: f64,
}

impl TrialOverflow {
    /// T = ⌈4·lg(N + D + L)⌉ and pop = λ/(6N), N the generators.
    pub fn defaults(generators: u64, dilation: u32, flits: u32, load: f64) -> TrialOverflow {
        let lg = ((generators + u64::from(dilation) + u64::from(flits)) as f64).log2();
        TrialOverflow {
            t: (4.0 * lg).ceil() as u32,
            pop: load / (6.0 * generators.max(1) as f64),
        }
    }
}

impl TrialParams {
    /// R = 2D + L − 1, the trial period and the range of rank offsets.
    pub fn period(&self) -> u64 {
        2 * u64::from(self.dilation) + u64::from(self.flits) - 1
    }

    /// The trial period of a worm of `flits` flits: R, or, for a worm longer than L, the
    /// 2D + flits − 1 cycles an undisturbed trial of it may take (its trials never overlap).
    pub fn trial_period(&self, flits: u32) -> u64 {
        self.period()
            .max(2 * u64::from(self.dilation) + u64::from(flits) - 1)
    }

    /// The longest worm the protocol takes: 2L − 1 flits.
    fn longest(&self) -> u32 {
        2 * self.flits - 1
    }

    pub fn check(&self) -> Result<()> {
        if !(1..=64).contains(&self.bandwidth) {
            return Err(Error::invalid(
                "bandwidth",
                self.bandwidth,
                "1..=64 flits per link per cycle",
            ));
        }
        if !(1..=4096).contains(&self.flits) {
            return Err(Error::invalid("flits", self.flits, "1..=4096"));
        }
        if self.dilation == 0 {
            return Err(Error::invalid(
                "dilation",
                0,
                "at least 1 (the longest path)",
            ));
        }
        if let Some(o) = self.overflow {
            if !(1..=1 << 16).contains(&o.t) {
                return Err(Error::invalid(
                    "stack-trials",
                    o.t,
                    "1..=65536 failed trials",
                ));
            }
            if !(o.pop.is_finite() && o.pop > 0.0 && o.pop <= 1.0) {
                return Err(Error::invalid(
                    "stack-pop",
                    o.pop,
                    "a probability in (0, 1]",
                ));
            }
        }
        Ok(())
    }
}

/// Events a run of the protocol counts.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TrialCounters {
    pub trials: u64,
    /// Flits cut (each counted at the link that cut it, with all that follow it).
    pub cuts: u64,
    /// Trials whose every flit arrived but whose acknowledgement was cut: the destination got
    /// a copy the source sends again.
    pub acks_lost: u64,
    pub successes: u64,
    /// Worms moved to an overflow stack.
    pub stacked: u64,
}

struct Worm {
    birth: u64,
    rank: u64,
    generator: u32,
    /// The terminal it starts at.
    source: u32,
    seq: u64,
    path: Box<[u32]>,
    flits: u32,
    measured: bool,
    failed: u32,
    /// Failed trials since the worm's (protocol) birth.
    since: u32,
    flight: Flight,
    ack_cut: bool,
}

/// The protocol's state.
pub struct TrialNet {
    params: TrialParams,
    rng: Rng,
    worms: Vec<Option<Worm>>,
    free: Vec<u32>,
    /// Worms in a trial.
    active: Vec<u32>,
    /// `calendar[c mod R]`: worms whose next trial starts in cycle c.
    calendar: Vec<Vec<u32>>,
    requests: Vec<Request>,
    crossings: Vec<u64>,
    data_links: u32,
    reverse: Vec<u32>,
    live: u64,
    pub counters: TrialCounters,
    /// Overflow stacks per generator, and suspended worms by release cycle.
    stacks: BTreeMap<u32, Vec<u32>>,
    suspended: BTreeMap<u64, Vec<u32>>,
    /// Waveform state, once asked for: what crossed each link (B lanes per link) and how many
    /// flits each link cut in the last cycle, and each terminal's generators.
    wave: Option<TrialWave>,
    links: u32,
    terminals: u32,
    /// A worm injected with a length outside 1..=2L − 1 (reported at the next step).
    bad_length: Option<u32>,
}

/// One flit on a link in the waveform: (worm, rank, flit index, acknowledgement).
type WaveLane = Option<(u64, u64, u32, bool)>;

struct TrialWave {
    lanes: Vec<WaveLane>,
    cuts: Vec<u64>,
}

impl TrialNet {
    /// The protocol on `net`'s links, drawing ranks from `seed`.
    pub fn new(params: TrialParams, net: &super::Net, seed: u64) -> Result<Self> {
        params.check()?;
        // every trial is due within the longest worm's trial period
        let slots = params.trial_period(params.longest());
        Ok(TrialNet {
            params,
            rng: stream(seed, Stream::Protocol),
            worms: Vec::new(),
            free: Vec::new(),
            active: Vec::new(),
            calendar: (0..slots).map(|_| Vec::new()).collect(),
            requests: Vec::new(),
            crossings: vec![0; net.data_links() as usize],
            data_links: net.data_links(),
            reverse: net.reverse.clone(),
            live: 0,
            counters: TrialCounters::default(),
            stacks: BTreeMap::new(),
            suspended: BTreeMap::new(),
            wave: None,
            links: net.links,
            terminals: net.terminals,
            bad_length: None,
        })
    }

    fn start_trial(&mut self, slot: u32, cycle: u64) {
        let w = self.worms[slot as usize].as_mut().expect("live worm");
        w.flight.restart(cycle, w.path.len() as u32);
        w.ack_cut = false;
        self.counters.trials += 1;
        self.active.push(slot);
    }

    /// [SV] §4.2 at the end of a cycle: every generator with a stacked worm releases its top
    /// one into suspension with probability `pop`; worms whose suspension ends are born again
    /// (new rank) and start a trial at once.
    fn overflow(&mut self, o: TrialOverflow, cycle: u64) {
        let release = cycle + u64::from(o.t) * self.params.period();
        let mut emptied = Vec::new();
        for (&g, stack) in self.stacks.iter_mut() {
            if self.rng.random_bool(o.pop) {
                let slot = stack.pop().expect("a kept stack has a worm");
                self.suspended.entry(release).or_default().push(slot);
                if stack.is_empty() {
                    emptied.push(g);
                }
            }
        }
        for g in emptied {
            self.stacks.remove(&g);
        }
        if let Some(slots) = self.suspended.remove(&cycle) {
            for slot in slots {
                let r = self.rng.random_range(0..self.params.period());
                // back in its injection buffer from the next cycle: that is its new birth
                let w = self.worms[slot as usize].as_mut().expect("live worm");
                w.rank = cycle + 1 + r;
                w.since = 0;
                self.start_trial(slot, cycle + 1);
            }
        }
    }
}

impl Protocol for TrialNet {
    fn inject(&mut self, m: NewMessage) {
        if m.path.is_empty() {
            return;
        }
        if !(1..=self.params.longest()).contains(&m.flits) {
            self.bad_length.get_or_insert(m.flits);
            return;
        }
        let r = self.rng.random_range(0..self.params.period());
        let worm = Worm {
            birth: m.birth,
            rank: m.birth + r,
            generator: m.generator,
            source: m.source,
            seq: m.seq,
            flight: Flight::new(m.flits),
            flits: m.flits,
            path: m.path,
            measured: m.measured,
            failed: 0,
            since: 0,
            ack_cut: false,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.worms[s as usize] = Some(worm);
                s
            }
            None => {
                self.worms.push(Some(worm));
                (self.worms.len() - 1) as u32
            }
        };
        self.live += 1;
        // the first trial starts in the birth cycle (its header may cross the first link now)
        self.start_trial(slot, m.birth);
    }

    fn step(&mut self, cycle: u64, delivered: &mut dyn FnMut(Delivery)) -> Result<()> {
        if let Some(flits) = self.bad_length {
            return Err(Error::invalid(
                "flits",
                flits,
                format!(
                    "worms of 1..={} flits (2L − 1, L = {})",
                    self.params.longest(),
                    self.params.flits
                ),
            ));
        }
        // the calendar holds every trial due within the longest trial period
        let slots = self.calendar.len() as u64;
        let due = std::mem::take(&mut self.calendar[(cycle % slots) as usize]);
        for &slot in &due {
            self.start_trial(slot, cycle);
        }
        let mut due = due;
        due.clear();
        self.calendar[(cycle % slots) as usize] = due;

        // evaluate: every flit that wants a link in this cycle
        self.requests.clear();
        for &slot in &self.active {
            let w = self.worms[slot as usize].as_ref().expect("live worm");
            let key = (w.rank, w.generator, w.seq);
            w.flight
                .requests(cycle, &w.path, key, slot, &mut self.requests);
            // the acknowledgement leaves the cycle after the tail arrives, one link a cycle
            let len = w.path.len() as u64;
            let ack_start = w.flight.tail_arrival(len as u32) + 1;
            if w.flight.complete(len as u32)
                && !w.ack_cut
                && (ack_start..ack_start + len).contains(&cycle)
            {
                let a = cycle - ack_start;
                self.requests.push(Request {
                    link: self.reverse[w.path[(len - 1 - a) as usize] as usize],
                    key,
                    worm: slot,
                    flit: 0,
                    hop: 0,
                    ack: true,
                });
            }
        }
        // arbitrate every link; losers are cut (data) or lost (acknowledgement)
        let mut requests = std::mem::take(&mut self.requests);
        let (worms, crossings, counters, data_links) = (
            &mut self.worms,
            &mut self.crossings,
            &mut self.counters,
            self.data_links,
        );
        if let Some(wave) = self.wave.as_mut() {
            wave.lanes.fill(None);
            wave.cuts.fill(0);
        }
        let (mut wave_lanes, mut wave_cuts) = match self.wave.as_mut() {
            Some(w) => (Some(&mut w.lanes), Some(&mut w.cuts)),
            None => (None, None),
        };
        let b = self.params.bandwidth as usize;
        arbitrate(
            &mut requests,
            self.params.bandwidth,
            Contention::RankPreempt,
            |r| {
                if !r.ack && r.link < data_links {
                    crossings[r.link as usize] += 1;
                }
                if let Some(all) = wave_lanes.as_mut() {
                    let lanes = &mut all[r.link as usize * b..(r.link as usize + 1) * b];
                    if let Some(free) = lanes.iter_mut().find(|l| l.is_none()) {
                        let id = u64::from(r.key.1) << 32 | r.key.2;
                        *free = Some((id, r.key.0, r.flit, r.ack));
                    }
                }
            },
            |r| {
                let w = worms[r.worm as usize].as_mut().expect("live worm");
                if r.ack {
                    w.ack_cut = true;
                } else {
                    let cut = w.flight.cut(r.flit, r.hop);
                    counters.cuts += cut;
                    if let Some(cuts) = wave_cuts.as_mut() {
                        cuts[r.link as usize] += cut;
                    }
                }
            },
        );
        self.requests = requests;

        // commit: trials that end in this cycle
        let mut keep = 0;
        for i in 0..self.active.len() {
            let slot = self.active[i];
            let w = self.worms[slot as usize].as_mut().expect("live worm");
            let len = w.path.len() as u32;
            let tail_arrival = w.flight.tail_arrival(len);
            let complete = w.flight.complete(len);
            let ended = if !complete {
                cycle >= tail_arrival
            } else {
                w.ack_cut || cycle >= tail_arrival + u64::from(len)
            };
            if !ended {
                self.active[keep] = slot;
                keep += 1;
                continue;
            }
            if complete && !w.ack_cut {
                self.counters.successes += 1;
                delivered(Delivery {
                    generator: w.generator,
                    seq: w.seq,
                    birth: w.birth,
                    cycle: tail_arrival,
                    hops: len,
                    flits: w.flits,
                    failed_trials: w.failed,
                    measured: w.measured,
                });
                self.worms[slot as usize] = None;
                self.free.push(slot);
                self.live -= 1;
            } else {
                if complete {
                    self.counters.acks_lost += 1;
                }
                w.failed += 1;
                w.since += 1;
                match self.params.overflow {
                    Some(o) if w.since >= o.t => {
                        self.counters.stacked += 1;
                        self.stacks.entry(w.generator).or_default().push(slot);
                    }
                    _ => {
                        let next = w.flight.start + self.params.trial_period(w.flits);
                        self.calendar[(next % slots) as usize].push(slot);
                    }
                }
            }
        }
        self.active.truncate(keep);
        if let Some(o) = self.params.overflow {
            self.overflow(o, cycle);
        }
        Ok(())
    }

    fn buffered(&self) -> u64 {
        self.live
    }

    fn crossings(&self) -> &[u64] {
        &self.crossings
    }

    fn wave_scopes(&self, net: &super::Net) -> Vec<(String, Vec<SignalDecl>)> {
        let sig = |name: String, width: u32| SignalDecl {
            name,
            width,
            encoding: None,
        };
        let mut scopes = Vec::new();
        for l in 0..net.links {
            let mut decls = Vec::new();
            for b in 0..self.params.bandwidth {
                decls.push(sig(format!("lane{b}_valid"), 1));
                decls.push(sig(format!("lane{b}_worm"), 64));
                decls.push(sig(format!("lane{b}_rank"), 64));
                decls.push(sig(format!("lane{b}_flit"), 16));
                decls.push(sig(format!("lane{b}_ack"), 1));
            }
            decls.push(sig("cut".into(), 16));
            scopes.push((super::continuous::link_scope(net, l), decls));
        }
        for t in 0..net.terminals {
            scopes.push((
                format!("t{t}"),
                vec![sig("live".into(), 32), sig("stacked".into(), 32)],
            ));
        }
        scopes
    }

    fn wave_values(&mut self, out: &mut Vec<u64>) {
        let links = self.links as usize;
        let b = self.params.bandwidth as usize;
        let wave = self.wave.get_or_insert_with(|| TrialWave {
            lanes: vec![None; links * b],
            cuts: vec![0; links],
        });
        for l in 0..links {
            for lane in &wave.lanes[l * b..(l + 1) * b] {
                match *lane {
                    Some((worm, rank, flit, ack)) => {
                        out.extend([1, worm, rank, u64::from(flit), u64::from(ack)])
                    }
                    None => out.extend([0, 0, 0, 0, 0]),
                }
            }
            out.push(wave.cuts[l].min(0xFFFF));
        }
        // per terminal: worms alive (waiting, in a trial, stacked or suspended) and stacked
        let terminals = self.terminals as usize;
        let mut live = vec![0u64; terminals];
        let mut stacked = vec![0u64; terminals];
        for w in self.worms.iter().flatten() {
            live[w.source as usize] += 1;
        }
        for stack in self.stacks.values() {
            for &slot in stack {
                if let Some(w) = &self.worms[slot as usize] {
                    stacked[w.source as usize] += 1;
                }
            }
        }
        for t in 0..terminals {
            out.push(live[t]);
            out.push(stacked[t]);
        }
    }
}

#[cfg(test)]
mod tests;
