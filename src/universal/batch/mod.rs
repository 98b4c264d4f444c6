//! [CMSV]: universal routing of a batch of messages on given paths, in rounds of a forward
//! pass (worms never wait; contention discards or cuts them) and a backward pass that replays
//! the forward one in reverse for the delivered heads, acknowledging them (by construction it
//! never puts more than B on a link, so it is counted, not simulated).
//!
//! - [`algorithm1`] ([CMSV] §2, Routing Algorithm 1): packets (L = 1) send 2^r copies in round
//!   r, each after a random delay; where more than B copies want a link in a cycle, all of
//!   them are discarded.
//! - [`algorithm2`] ([CMSV] §3, Routing Algorithm 2): worms with a random rank and delay drawn
//!   once; where more than B want a link the B lowest ranks win and the rest are cut.
//! - [`butterfly_deterministic`] ([CMSV] Theorem 1.14(a)): Algorithm 2 on the butterfly with
//!   ranks from the input's bit-reversed address and no random delay, in concurrent passes.

use super::Net;
use super::bufferless::{Contention, Flight, arbitrate};
use super::pass_wave::{LinkEvent, PassWave};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::stats::round6;
use rand::RngExt;
use serde::{Deserialize, Serialize};

mod worms;

pub(crate) use worms::budget;
pub use worms::{
    Alg2Run, algorithm2, algorithm2_buffers, algorithm2_mesh, butterfly_deterministic,
};

/// Most copies or worms one pass carries.
pub const MAX_COPIES: u64 = 1 << 24;

/// Most copy-cycles one forward pass of Algorithm 1 (or Theorem 1.8) may simulate: every copy
/// is visited in every cycle of the pass.
pub const MAX_PASS_WORK: u64 = 1 << 34;
/// Most rounds before a run is reported as not finishing.
pub const MAX_ROUNDS: u32 = 100_000;

/// A batch: one message per path.
#[derive(Clone, Debug)]
pub struct Collection {
    pub paths: Vec<Box<[u32]>>,
    /// Terminal each message starts at (its generator) and the terminal it is for.
    pub sources: Vec<u32>,
    pub destinations: Vec<u32>,
    /// Congestion C (most paths on one link) and dilation D (longest path).
    pub congestion: u32,
    pub dilation: u32,
    links: u32,
}

impl Collection {
    /// Data links of the network the paths run on.
    pub fn links(&self) -> u32 {
        self.links
    }

    /// `q` messages from every terminal of `net`, each to a uniformly random destination (any
    /// other terminal; any output of the butterfly), drawn from `seed`.
    pub fn random(net: &Net, q: u32, seed: u64) -> Result<Collection> {
        if !(1..=1024).contains(&q) {
            return Err(Error::invalid("q", q, "1..=1024 messages per terminal"));
        }
        let n = net.terminals;
        if u64::from(n) * u64::from(q) > MAX_COPIES {
            return Err(Error::invalid(
                "q",
                q,
                format!("at most {MAX_COPIES} messages in all"),
            ));
        }
        let mut rng: Rng = stream(seed, Stream::Traffic);
        let mut paths = Vec::with_capacity((n * q) as usize);
        let mut sources = Vec::with_capacity((n * q) as usize);
        let mut destinations = Vec::with_capacity((n * q) as usize);
        let mut path = Vec::new();
        for s in 0..n {
            for _ in 0..q {
                let t = net.random_destination(s, &mut rng);
                path.clear();
                net.path_into(s, t, &mut path);
                paths.push(path.as_slice().into());
                sources.push(s);
                destinations.push(t);
            }
        }
        Ok(Collection::new(
            net.data_links(),
            paths,
            sources,
            destinations,
        ))
    }

    fn new(
        links: u32,
        paths: Vec<Box<[u32]>>,
        sources: Vec<u32>,
        destinations: Vec<u32>,
    ) -> Collection {
        let mut load = vec![0u32; links as usize];
        for p in &paths {
            for &l in p.iter() {
                load[l as usize] += 1;
            }
        }
        Collection {
            congestion: load.iter().copied().max().unwrap_or(0),
            dilation: paths.iter().map(|p| p.len() as u32).max().unwrap_or(0),
            paths,
            sources,
            destinations,
            links,
        }
    }

    pub fn messages(&self) -> usize {
        self.paths.len()
    }

    /// Per link, the messages whose path uses it.
    fn users(&self) -> Vec<Vec<u32>> {
        let mut users = vec![Vec::new(); self.links as usize];
        for (m, p) in self.paths.iter().enumerate() {
            for &l in p.iter() {
                users[l as usize].push(m as u32);
            }
        }
        users
    }
}

/// ln(CD) and ln ln(CD) with CD at least e^e, so that both are at least 1 (the prescriptions
/// below need CD > e; tiny instances are clamped).
pub(crate) fn logs(c: u32, d: u32) -> (f64, f64) {
    let cd = (f64::from(c) * f64::from(d)).max(std::f64::consts::E.powf(std::f64::consts::E));
    (cd.ln(), cd.ln().ln())
}

/// One forward pass of Algorithm 1: copy i follows `paths[i]` from cycle `delays[i]`, one
/// link per cycle, never delayed; where more than `b` copies want a link in a cycle, all of
/// them are discarded there. Which copies arrived after `cycles` cycles.
pub fn forward_pass_discard_all(
    paths: &[&[u32]],
    delays: &[u64],
    b: u32,
    cycles: u64,
) -> Vec<bool> {
    forward_pass(paths, delays, b, cycles, None).expect("no waveform to write")
}

/// A forward pass's waveform: each copy's packet, the round, and the waveform.
type PassTrace<'a, 'w> = (&'a [u32], u32, &'a mut PassWave<'w>);

/// [`forward_pass_discard_all`], writing each cycle to `trace`'s waveform (every copy as its
/// packet) if given.
fn forward_pass(
    paths: &[&[u32]],
    delays: &[u64],
    b: u32,
    cycles: u64,
    mut trace: Option<PassTrace>,
) -> Result<Vec<bool>> {
    let mut flights: Vec<Flight> = paths
        .iter()
        .zip(delays)
        .map(|(p, &delay)| {
            let mut f = Flight::new(1);
            f.restart(delay, p.len() as u32);
            f
        })
        .collect();
    let mut requests = Vec::new();
    // winners and discards in two lists: the arbiter's two callbacks cannot share one
    let (mut events, mut cuts) = (Vec::new(), Vec::new());
    for cycle in 0..cycles {
        requests.clear();
        for (i, f) in flights.iter().enumerate() {
            f.requests(cycle, paths[i], (0, 0, 0), i as u32, &mut requests);
        }
        let owners = trace.as_ref().map(|t| t.0);
        arbitrate(
            &mut requests,
            b,
            Contention::DiscardAll,
            |q| {
                if let Some(owners) = owners {
                    events.push(LinkEvent::Won {
                        link: q.link,
                        worm: owners[q.worm as usize],
                        rank: 0,
                    });
                }
            },
            |q| {
                flights[q.worm as usize].cut(q.flit, q.hop);
                if owners.is_some() {
                    cuts.push(LinkEvent::Cut {
                        link: q.link,
                        flits: 1,
                    });
                }
            },
        );
        if let Some((_, round, wave)) = trace.as_mut() {
            events.append(&mut cuts);
            wave.sample(*round, cycle, &events)?;
            events.clear();
        }
    }
    Ok(flights
        .iter()
        .zip(paths)
        .map(|(f, p)| f.complete(p.len() as u32))
        .collect())
}

/// One round of Algorithm 1.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Alg1Round {
    /// Delay range C_r and copies per active packet.
    pub delays: u64,
    pub copies_each: u64,
    pub active: u64,
    pub delivered: u64,
    /// After the round: the most undelivered packets sharing a link with one undelivered
    /// packet (itself included), against the analysis's B·m/2^r.
    pub max_conflicting: u64,
    pub bound: f64,
    /// Forward and backward pass: 2(C_r + D) (in cycles: times B' in Theorem 1.8's round 0).
    pub cycles: u64,
}

/// A run of Algorithm 1.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Alg1Run {
    pub messages: u64,
    pub congestion: u32,
    pub dilation: u32,
    /// B (prescribed ⌈10 ln(CD)/ln ln(CD)⌉ unless given), m, k.
    pub bandwidth: u32,
    pub prescribed_bandwidth: u32,
    pub m: u32,
    pub k: u32,
    pub rounds: Vec<Alg1Round>,
    pub makespan: u64,
    /// The schedule of rounds 0..=k: 2(C + D) + 2k(C₁ + D) (Theorem 1.8: 2(C + D)·B' + 2k(C₁ + D)).
    pub planned: u64,
    /// Rounds run beyond round k (the w.h.p. guarantee failed).
    pub extra_rounds: u32,
}

/// [CMSV] Algorithm 1 on `c`: bandwidth `bandwidth` (`None`: the prescribed
/// ⌈10 ln(CD)/ln ln(CD)⌉), exponent `alpha`, draws from `seed`; its forward passes written to
/// `wave` if given.
pub fn algorithm1(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg1Run> {
    algorithm1_rounds(c, bandwidth, alpha, false, seed, wave)
}

/// [CMSV] Theorem 1.8: Algorithm 1 turned into store-and-forward routing on links that carry
/// one packet per cycle. Round 0 is Algorithm 1's first round at bandwidth B' (`bandwidth`,
/// `None`: the prescribed ⌈10 ln(CD)/ln ln(CD)⌉) with every step a stage of B' cycles and
/// buffers of B' packets; later rounds send one copy per packet with delays in
/// [⌈240e²(α + 2) lg n⌉] and stages of one cycle (bandwidth 1). `cycles` and `makespan` count
/// cycles, stages times their length. The waveform, if given, shows one step per sample.
pub fn algorithm1_store_and_forward(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg1Run> {
    algorithm1_rounds(c, bandwidth, alpha, true, seed, wave)
}

/// Algorithm 1's prescription for a collection ([CMSV] §2): B, m, k and each round's delay
/// range and copies; the hardware ([`crate::universal::hw::algorithm1`]) follows it too.
#[derive(Clone, Copy, Debug)]
pub struct Alg1Plan {
    /// B, the prescribed one unless given.
    pub bandwidth: u32,
    /// ⌈10 ln(CD)/ln ln(CD)⌉.
    pub prescribed_bandwidth: u32,
    /// ⌈(α + 2) ln n/(2 ln(CD))⌉, n the number of packets.
    pub m: u32,
    /// The last planned round, ⌈lg(B·m)⌉ + 1.
    pub k: u32,
    /// Round 0's delay range C (at least 1) and later rounds' C₁.
    pub delays0: u64,
    pub delays1: u64,
    /// Theorem 1.8's variant (round 0 in stages of B' cycles, later rounds one copy each).
    store_and_forward: bool,
}

impl Alg1Plan {
    /// Algorithm 1's plan for `c` at bandwidth `bandwidth` (`None`: prescribed) and
    /// exponent `alpha` (Theorem 1.8's store-and-forward variant plans inside
    /// [`algorithm1_store_and_forward`]).
    pub fn new(c: &Collection, bandwidth: Option<u32>, alpha: f64) -> Result<Alg1Plan> {
        Alg1Plan::with(c, bandwidth, alpha, false)
    }

    fn with(
        c: &Collection,
        bandwidth: Option<u32>,
        alpha: f64,
        store_and_forward: bool,
    ) -> Result<Alg1Plan> {
        check_alpha(alpha)?;
        let n = c.messages() as u64;
        let (ln, lnln) = logs(c.congestion, c.dilation);
        let prescribed = ((10.0 * ln / lnln).ceil() as u32).clamp(1, 4096);
        let b = bandwidth.unwrap_or(prescribed);
        if !(1..=4096).contains(&b) {
            return Err(Error::invalid("bandwidth", b, "1..=4096"));
        }
        let m = (((alpha + 2.0) * (n.max(2) as f64).ln() / (2.0 * ln)).ceil() as u32).max(1);
        let bm = u64::from(b) * u64::from(m);
        // later rounds' delay range: Algorithm 1's 2Bm, or Theorem 1.8's 240e²(α + 2) lg n
        let delays1 = if store_and_forward {
            (240.0 * std::f64::consts::E.powi(2) * (alpha + 2.0) * (n.max(2) as f64).log2()).ceil()
                as u64
        } else {
            2 * bm
        };
        Ok(Alg1Plan {
            bandwidth: b,
            prescribed_bandwidth: prescribed,
            m,
            k: (bm as f64).log2().ceil() as u32 + 1,
            delays0: u64::from(c.congestion).max(1),
            delays1,
            store_and_forward,
        })
    }

    /// Round r's delay range C_r.
    pub fn delays(&self, r: u32) -> u64 {
        if r == 0 { self.delays0 } else { self.delays1 }
    }

    /// Round r's copies per active packet, the bandwidth of its links and the cycles of one
    /// of its steps.
    fn round_shape(&self, r: u32) -> (u64, u32, u64) {
        match (self.store_and_forward, r) {
            (false, _) => (self.copies(r), self.bandwidth, 1),
            (true, 0) => (1, self.bandwidth, u64::from(self.bandwidth)),
            (true, _) => (1, 1, 1),
        }
    }

    /// Algorithm 1's copies per active packet in round r: 2^r up to round k.
    pub fn copies(&self, r: u32) -> u64 {
        1u64 << r.min(self.k).min(40)
    }

    /// Round r's copies of the `active` packets, `each` per packet: each copy's owner and
    /// delay, drawn in order from `rng`.
    pub fn draw(&self, r: u32, each: u64, active: &[u32], rng: &mut Rng) -> (Vec<u32>, Vec<u64>) {
        let range = self.delays(r);
        let mut owners = Vec::with_capacity(active.len() * each as usize);
        let mut delays = Vec::with_capacity(owners.capacity());
        for &p in active {
            for _ in 0..each {
                owners.push(p);
                delays.push(rng.random_range(0..range));
            }
        }
        (owners, delays)
    }
}

fn algorithm1_rounds(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    store_and_forward: bool,
    seed: u64,
    mut wave: Option<&mut PassWave>,
) -> Result<Alg1Run> {
    let plan = Alg1Plan::with(c, bandwidth, alpha, store_and_forward)?;
    let n = c.messages() as u64;
    let (cc, d) = (c.congestion, c.dilation);
    let (b, m, k) = (plan.bandwidth, plan.m, plan.k);
    let bm = u64::from(b) * u64::from(m);
    let planned = 2 * (u64::from(cc) + u64::from(d)) * plan.round_shape(0).2
        + 2 * u64::from(k) * (plan.delays1 + u64::from(d));
    let mut rng: Rng = stream(seed, Stream::Protocol);
    let users = c.users();
    let mut active: Vec<u32> = (0..n as u32).collect();
    let mut done = vec![false; n as usize];
    let mut rounds = Vec::new();
    let mut makespan = 0u64;
    let mut r = 0u32;
    while !active.is_empty() {
        if r >= MAX_ROUNDS {
            return Err(Error::Incomplete(format!(
                "Algorithm 1: {} packets undelivered after {MAX_ROUNDS} rounds (B = {b})",
                active.len()
            )));
        }
        let delays = plan.delays(r);
        let (each, width, stage) = plan.round_shape(r);
        if active.len() as u64 * each > MAX_COPIES {
            return Err(Error::invalid(
                "bandwidth",
                b,
                format!(
                    "a bandwidth for which round {r} sends at most {MAX_COPIES} copies ({} packets x {each})",
                    active.len()
                ),
            ));
        }
        let (owners, delays_of) = plan.draw(r, each, &active, &mut rng);
        let pass = delays + u64::from(d);
        let work = owners.len() as u64 * pass;
        if work > MAX_PASS_WORK {
            return Err(Error::invalid(
                "alpha",
                alpha,
                format!(
                    "a run whose round {r} simulates at most {MAX_PASS_WORK} copy-cycles ({} copies x {pass} cycles = {work}; fewer packets or a smaller α shorten it)",
                    owners.len()
                ),
            ));
        }
        let paths: Vec<&[u32]> = owners.iter().map(|&p| &*c.paths[p as usize]).collect();
        let trace = wave.as_deref_mut().map(|w| (owners.as_slice(), r, w));
        let arrived = forward_pass(&paths, &delays_of, width, pass, trace)?;
        let before = active.len() as u64;
        for (&p, &a) in owners.iter().zip(&arrived) {
            if a {
                done[p as usize] = true;
            }
        }
        active.retain(|&p| !done[p as usize]);
        // the analysis's measure: undelivered packets sharing a link with an undelivered one
        let mut stamp = vec![u32::MAX; n as usize];
        let mut max_conflicting = 0u64;
        for &p in &active {
            let mut count = 0u64;
            for &l in c.paths[p as usize].iter() {
                for &q in &users[l as usize] {
                    if !done[q as usize] && stamp[q as usize] != p {
                        stamp[q as usize] = p;
                        count += 1;
                    }
                }
            }
            max_conflicting = max_conflicting.max(count);
        }
        makespan += 2 * pass * stage;
        rounds.push(Alg1Round {
            delays,
            copies_each: each,
            active: before,
            delivered: before - active.len() as u64,
            max_conflicting,
            // (the analysis's measure: Algorithm 1's rounds, and Theorem 1.8's round 0)
            bound: if store_and_forward && r > 0 {
                0.0
            } else {
                round6(bm as f64 / f64::from(1u32 << r.min(31)))
            },
            cycles: 2 * pass * stage,
        });
        r += 1;
    }
    Ok(Alg1Run {
        messages: n,
        congestion: cc,
        dilation: d,
        bandwidth: b,
        prescribed_bandwidth: plan.prescribed_bandwidth,
        m,
        k,
        extra_rounds: (rounds.len() as u32).saturating_sub(k + 1),
        rounds,
        makespan,
        planned,
    })
}

pub(super) fn check_alpha(alpha: f64) -> Result<()> {
    if alpha.is_finite() && (0.0..=16.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::invalid("alpha", alpha, "0..=16"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::NetKind;

    #[test]
    fn algorithm1_delivers_everything_and_its_copies_double() {
        let net = Net::new(NetKind::Butterfly, 64, 2, 1).unwrap();
        let c = Collection::random(&net, 4, 3).unwrap();
        let run = algorithm1(&c, None, 1.0, 3, None).unwrap();
        assert_eq!(run.rounds.iter().map(|r| r.delivered).sum::<u64>(), 256);
        assert_eq!(run.rounds[0].copies_each, 1);
        if run.rounds.len() > 1 {
            assert_eq!(run.rounds[1].copies_each, 2);
        }
        assert_eq!(
            run.makespan,
            run.rounds.iter().map(|r| r.cycles).sum::<u64>()
        );
        // one copy per link per cycle: B = 1 discards every collision, still finishes
        let run = algorithm1(&c, Some(1), 1.0, 3, None).unwrap();
        assert_eq!(run.rounds.iter().map(|r| r.delivered).sum::<u64>(), 256);
    }
}
