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
use super::bufferless::{Contention, Flight, Request, arbitrate};
use super::pass_wave::{LinkEvent, PassWave};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::stats::round6;
use rand::RngExt;
use serde::{Deserialize, Serialize};

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
    /// Terminal each message starts at (its generator).
    pub sources: Vec<u32>,
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
        let mut path = Vec::new();
        for s in 0..n {
            for _ in 0..q {
                let t = if net.self_destinations() {
                    rng.random_range(0..n)
                } else {
                    let t = rng.random_range(0..n - 1);
                    t + u32::from(t >= s)
                };
                path.clear();
                net.path_into(s, t, &mut path);
                paths.push(path.as_slice().into());
                sources.push(s);
            }
        }
        Ok(Collection::new(net.data_links(), paths, sources))
    }

    fn new(links: u32, paths: Vec<Box<[u32]>>, sources: Vec<u32>) -> Collection {
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
    for cycle in 0..cycles {
        requests.clear();
        for (i, f) in flights.iter().enumerate() {
            f.requests(cycle, paths[i], (0, 0, 0), i as u32, &mut requests);
        }
        arbitrate(
            &mut requests,
            b,
            Contention::DiscardAll,
            |_| {},
            |q| {
                flights[q.worm as usize].cut(q.flit, q.hop);
            },
        );
    }
    flights
        .iter()
        .zip(paths)
        .map(|(f, p)| f.complete(p.len() as u32))
        .collect()
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
/// ⌈10 ln(CD)/ln ln(CD)⌉), exponent `alpha`, draws from `seed`.
pub fn algorithm1(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    seed: u64,
) -> Result<Alg1Run> {
    algorithm1_rounds(c, bandwidth, alpha, false, seed)
}

/// [CMSV] Theorem 1.8: Algorithm 1 turned into store-and-forward routing on links that carry
/// one packet per cycle. Round 0 is Algorithm 1's first round at bandwidth B' (`bandwidth`,
/// `None`: the prescribed ⌈10 ln(CD)/ln ln(CD)⌉) with every step a stage of B' cycles and
/// buffers of B' packets; later rounds send one copy per packet with delays in
/// [⌈240e²(α + 2) lg n⌉] and stages of one cycle (bandwidth 1). `cycles` and `makespan` count
/// cycles, stages times their length.
pub fn algorithm1_store_and_forward(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    seed: u64,
) -> Result<Alg1Run> {
    algorithm1_rounds(c, bandwidth, alpha, true, seed)
}

fn algorithm1_rounds(
    c: &Collection,
    bandwidth: Option<u32>,
    alpha: f64,
    store_and_forward: bool,
    seed: u64,
) -> Result<Alg1Run> {
    check_alpha(alpha)?;
    let n = c.messages() as u64;
    let (cc, d) = (c.congestion, c.dilation);
    let (ln, lnln) = logs(cc, d);
    let prescribed = ((10.0 * ln / lnln).ceil() as u32).clamp(1, 4096);
    let b = bandwidth.unwrap_or(prescribed);
    if !(1..=4096).contains(&b) {
        return Err(Error::invalid("bandwidth", b, "1..=4096"));
    }
    let m = (((alpha + 2.0) * (n.max(2) as f64).ln() / (2.0 * ln)).ceil() as u32).max(1);
    let bm = u64::from(b) * u64::from(m);
    let k = (bm as f64).log2().ceil() as u32 + 1;
    // later rounds' delay range: Algorithm 1's 2Bm, or Theorem 1.8's 240e²(α + 2) lg n
    let c1 = if store_and_forward {
        (240.0 * std::f64::consts::E.powi(2) * (alpha + 2.0) * (n.max(2) as f64).log2()).ceil()
            as u64
    } else {
        2 * bm
    };
    // a step of round 0 lasts B' cycles in store-and-forward, one otherwise
    let stage0 = if store_and_forward { u64::from(b) } else { 1 };
    let planned =
        2 * (u64::from(cc) + u64::from(d)) * stage0 + 2 * u64::from(k) * (c1 + u64::from(d));
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
        let delays = if r == 0 { u64::from(cc).max(1) } else { c1 };
        let (each, width, stage) = match (store_and_forward, r) {
            (false, _) => (1u64 << r.min(k).min(40), b, 1),
            (true, 0) => (1, b, stage0),
            (true, _) => (1, 1, 1),
        };
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
        let mut owners = Vec::with_capacity(active.len() * each as usize);
        let mut delays_of = Vec::with_capacity(owners.capacity());
        for &p in &active {
            for _ in 0..each {
                owners.push(p);
                delays_of.push(rng.random_range(0..delays));
            }
        }
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
        let arrived = forward_pass_discard_all(&paths, &delays_of, width, pass);
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
        prescribed_bandwidth: prescribed,
        m,
        k,
        extra_rounds: (rounds.len() as u32).saturating_sub(k + 1),
        rounds,
        makespan,
        planned,
    })
}

/// A run of Algorithm 2 (or of the deterministic butterfly algorithm).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Alg2Run {
    pub messages: u64,
    pub congestion: u32,
    pub dilation: u32,
    pub bandwidth: u32,
    pub flits: u32,
    /// Algorithm 2: Lemma 3.4's round budget T = max(⌈4eℓC·D^(1/B)/(BD)⌉, ⌈(α + 1) lg n / B⌉),
    /// ℓ = min(2L, D). The deterministic butterfly algorithm: ⌈(q'·lg^(1/B) n + lg n)/B⌉, the
    /// shape of its per-pass claim.
    pub budget: u64,
    /// Worms delivered in each round.
    pub delivered: Vec<u64>,
    /// Rounds × round length.
    pub makespan: u64,
    pub round_cycles: u64,
    /// Main Theorem 2's shape (L·C·D^(1/B) + (D + L)·lg n)/B.
    pub shape: f64,
    /// The trivial lower bound L·C/B + D + L.
    pub lower: f64,
}

/// Lemma 3.4's round budget with `congestion` for C.
pub(super) fn budget(c: &Collection, congestion: u32, b: u32, l: u32, alpha: f64) -> u64 {
    let (cc, d) = (f64::from(congestion), f64::from(c.dilation.max(1)));
    let ell = (2.0 * f64::from(l)).min(d);
    let bf = f64::from(b);
    let lg_n = (c.messages().max(2) as f64).log2();
    let a = (4.0 * std::f64::consts::E * ell * cc * d.powf(1.0 / bf) / (bf * d)).ceil();
    let z = ((alpha + 1.0) * lg_n / bf).ceil();
    a.max(z) as u64
}

/// Runs rounds of forward passes in which worm `w` starts at `delay[w]` with key `key[w]`,
/// until every worm is delivered: the worms delivered per round.
fn rank_rounds(
    c: &Collection,
    b: u32,
    l: u32,
    pass: u64,
    mut wave: Option<&mut PassWave>,
    mut draw: impl FnMut(u32, &mut [u64], &mut [(u64, u32, u64)]),
) -> Result<Vec<u64>> {
    let n = c.messages();
    let mut delay = vec![0u64; n];
    let mut key = vec![(0u64, 0u32, 0u64); n];
    let mut flights: Vec<Flight> = (0..n).map(|_| Flight::new(l)).collect();
    let mut active: Vec<u32> = (0..n as u32).collect();
    let mut delivered = Vec::new();
    let mut requests: Vec<Request> = Vec::new();
    let (mut events, mut cuts) = (Vec::new(), Vec::new());
    let mut round = 0u32;
    while !active.is_empty() {
        if round >= MAX_ROUNDS {
            return Err(Error::Incomplete(format!(
                "{} worms undelivered after {MAX_ROUNDS} rounds",
                active.len()
            )));
        }
        draw(round, &mut delay, &mut key);
        for &w in &active {
            flights[w as usize].restart(delay[w as usize], c.paths[w as usize].len() as u32);
        }
        for cycle in 0..pass {
            requests.clear();
            for &w in &active {
                let f = &flights[w as usize];
                f.requests(
                    cycle,
                    &c.paths[w as usize],
                    key[w as usize],
                    w,
                    &mut requests,
                );
            }
            let tracing = wave.is_some();
            arbitrate(
                &mut requests,
                b,
                Contention::RankPreempt,
                |q| {
                    if tracing {
                        events.push(LinkEvent::Won {
                            link: q.link,
                            worm: q.worm,
                            rank: q.key.0,
                        });
                    }
                },
                |q| {
                    let flits = flights[q.worm as usize].cut(q.flit, q.hop);
                    if tracing {
                        cuts.push(LinkEvent::Cut {
                            link: q.link,
                            flits,
                        });
                    }
                },
            );
            if let Some(w) = wave.as_deref_mut() {
                events.append(&mut cuts);
                w.sample(round, cycle, &events)?;
                events.clear();
            }
        }
        let before = active.len();
        active.retain(|&w| !flights[w as usize].complete(c.paths[w as usize].len() as u32));
        delivered.push((before - active.len()) as u64);
        round += 1;
    }
    Ok(delivered)
}

fn check_worms(b: u32, l: u32) -> Result<()> {
    if !(1..=64).contains(&b) {
        return Err(Error::invalid("bandwidth", b, "1..=64"));
    }
    if !(1..=4096).contains(&l) {
        return Err(Error::invalid("flits", l, "1..=4096"));
    }
    Ok(())
}

/// [CMSV] Algorithm 2 on `c`: bandwidth `b`, worms of `l` flits; ranks in [T·B] and delays in
/// [D] drawn once from `seed` (or every round, with `redraw`).
pub fn algorithm2(
    c: &Collection,
    b: u32,
    l: u32,
    alpha: f64,
    redraw: bool,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg2Run> {
    check_worms(b, l)?;
    check_alpha(alpha)?;
    let t = budget(c, c.congestion, b, l, alpha);
    random_ranks(c, b, l, t, u64::from(c.dilation.max(1)), redraw, seed, wave)
}

/// [CMSV] Corollary 1.4: store-and-forward packets (L = 1) on links that carry one packet per
/// cycle, with buffers of `a` packets, emulating Algorithm 2 at bandwidth A: each step of
/// bandwidth A is a stage of A cycles. `makespan` and `round_cycles` count cycles; `shape`
/// is the corollary's C·D^(1/A) + D lg n and `lower` the trivial max(C, D).
pub fn algorithm2_buffers(
    c: &Collection,
    a: u32,
    alpha: f64,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg2Run> {
    let mut run = algorithm2(c, a, 1, alpha, false, seed, wave)?;
    let (cc, d) = (f64::from(c.congestion), f64::from(c.dilation));
    let lg_n = (c.messages().max(2) as f64).log2();
    run.makespan *= u64::from(a);
    run.round_cycles *= u64::from(a);
    run.shape = round6(cc * d.powf(1.0 / f64::from(a)) + d * lg_n);
    run.lower = cc.max(d);
    Ok(run)
}

/// [CMSV] Theorem 1.13: Algorithm 2 tailored to the 2-dimensional mesh of side `side` whose
/// collection `c` has `q` worms per node on dimension-order paths: start delays in [d·m]
/// (d = 2, m = `side`), and the array congestion q·m in Lemma 3.4's budget in place of C.
#[allow(clippy::too_many_arguments)]
pub fn algorithm2_mesh(
    c: &Collection,
    side: u32,
    q: u32,
    b: u32,
    l: u32,
    alpha: f64,
    redraw: bool,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg2Run> {
    check_worms(b, l)?;
    check_alpha(alpha)?;
    if c.messages() as u64 != u64::from(side) * u64::from(side) * u64::from(q) {
        return Err(Error::invalid(
            "collection",
            c.messages(),
            "q worms per node of a side x side mesh",
        ));
    }
    let t = budget(c, q.saturating_mul(side), b, l, alpha);
    let mut run = random_ranks(c, b, l, t, 2 * u64::from(side), redraw, seed, wave)?;
    // Theorem 1.13's shape, (q·L·m·d^(1/B) + (m·d + L)·d·lg m)/B with d = 2
    let (m, lf, bf) = (f64::from(side), f64::from(l), f64::from(b));
    run.shape = round6(
        (f64::from(q) * lf * m * 2f64.powf(1.0 / bf) + (2.0 * m + lf) * 2.0 * m.log2()) / bf,
    );
    Ok(run)
}

pub(super) fn check_alpha(alpha: f64) -> Result<()> {
    if alpha.is_finite() && (0.0..=16.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::invalid("alpha", alpha, "0..=16"))
    }
}

/// Rounds of Algorithm 2 with budget `t`: ranks in [t·B] and start delays in [`delays`],
/// drawn once from `seed` (or every round, with `redraw`). A forward pass lasts
/// `delays` + D + L cycles, a round twice the pass's first part plus L (4D + L for delays in
/// [D]: the backward pass replays the forward one without its last L cycles).
#[allow(clippy::too_many_arguments)]
fn random_ranks(
    c: &Collection,
    b: u32,
    l: u32,
    t: u64,
    delays: u64,
    redraw: bool,
    seed: u64,
    wave: Option<&mut PassWave>,
) -> Result<Alg2Run> {
    let d = u64::from(c.dilation.max(1));
    let ranks = t * u64::from(b);
    let mut rng: Rng = stream(seed, Stream::Protocol);
    let pass = delays + d + u64::from(l);
    let delivered = rank_rounds(c, b, l, pass, wave, |round, delay, key| {
        if round == 0 || redraw {
            for (w, (dl, k)) in delay.iter_mut().zip(key.iter_mut()).enumerate() {
                *k = (rng.random_range(0..ranks), w as u32, 0);
                *dl = rng.random_range(0..delays);
            }
        }
    })?;
    Ok(finish(
        c,
        b,
        l,
        t,
        delivered,
        2 * (delays + d) + u64::from(l),
    ))
}

fn finish(c: &Collection, b: u32, l: u32, budget: u64, delivered: Vec<u64>, round: u64) -> Alg2Run {
    let (cc, d, bf, lf) = (
        f64::from(c.congestion),
        f64::from(c.dilation),
        f64::from(b),
        f64::from(l),
    );
    let lg_n = (c.messages().max(2) as f64).log2();
    Alg2Run {
        messages: c.messages() as u64,
        congestion: c.congestion,
        dilation: c.dilation,
        bandwidth: b,
        flits: l,
        budget,
        makespan: delivered.len() as u64 * round,
        delivered,
        round_cycles: round,
        shape: round6((lf * cc * d.powf(1.0 / bf) + (d + lf) * lg_n) / bf),
        lower: round6(lf * cc / bf + d + lf),
    }
}

/// [CMSV] Theorem 1.14(a) on a butterfly of `n` inputs whose collection has `q` messages per
/// input (in [`Collection::random`]'s order): ℓ = min(L, lg n), P = ⌈lg n/ℓ⌉ passes of
/// q' = ⌈q/P⌉ worms per input; the i-th worm of a pass at input x has rank i·n + bitrev(x)
/// and pass j starts j·ℓ cycles into every round of 2 lg n + L − 1 cycles (no random delay).
pub fn butterfly_deterministic(
    c: &Collection,
    n: u32,
    q: u32,
    b: u32,
    l: u32,
    wave: Option<&mut PassWave>,
) -> Result<Alg2Run> {
    check_worms(b, l)?;
    if c.messages() != (n as usize) * (q as usize) || !n.is_power_of_two() {
        return Err(Error::invalid(
            "collection",
            c.messages(),
            "q messages per input of a butterfly",
        ));
    }
    let lg = n.trailing_zeros();
    let ell = l.min(lg).max(1);
    let passes = lg.div_ceil(ell);
    let per_pass = q.div_ceil(passes);
    let round = 2 * u64::from(lg) + u64::from(l) - 1;
    let bitrev = |x: u32| {
        if lg == 0 {
            0
        } else {
            x.reverse_bits() >> (32 - lg)
        }
    };
    // the forward passes of one round: the last pass starts (P − 1)ℓ in and takes lg n + L − 1
    // (less than a round: (P − 1)ℓ < lg n); the upward acknowledgements fill the rest
    let forward = u64::from(passes - 1) * u64::from(ell) + u64::from(lg) + u64::from(l) - 1;
    let delivered = rank_rounds(c, b, l, forward, wave, |round, delay, key| {
        if round == 0 {
            for w in 0..delay.len() {
                let (x, i) = (w as u32 / q, w as u32 % q);
                let (j, ip) = (i / per_pass, i % per_pass);
                delay[w] = u64::from(j) * u64::from(ell);
                key[w] = (
                    u64::from(ip) * u64::from(n) + u64::from(bitrev(x)),
                    w as u32,
                    0,
                );
            }
        }
    })?;
    // the claim per pass: O((q'·lg^(1/B) n + lg n)/B) rounds
    let claim = ((f64::from(per_pass) * f64::from(lg).powf(1.0 / f64::from(b)) + f64::from(lg))
        / f64::from(b))
    .ceil() as u64;
    Ok(finish(c, b, l, claim, delivered, round))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::NetKind;

    #[test]
    fn algorithm1_delivers_everything_and_its_copies_double() {
        let net = Net::new(NetKind::Butterfly, 64, 2, 1).unwrap();
        let c = Collection::random(&net, 4, 3).unwrap();
        let run = algorithm1(&c, None, 1.0, 3).unwrap();
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
        let run = algorithm1(&c, Some(1), 1.0, 3).unwrap();
        assert_eq!(run.rounds.iter().map(|r| r.delivered).sum::<u64>(), 256);
    }

    #[test]
    fn algorithm2_finishes_and_more_bandwidth_needs_fewer_rounds() {
        let net = Net::new(NetKind::Mesh, 64, 2, 1).unwrap();
        let c = Collection::random(&net, 2, 5).unwrap();
        let one = algorithm2(&c, 1, 8, 1.0, false, 5, None).unwrap();
        let four = algorithm2(&c, 4, 8, 1.0, false, 5, None).unwrap();
        for run in [&one, &four] {
            assert_eq!(run.delivered.iter().sum::<u64>(), 128);
            assert!(run.makespan as f64 >= run.lower, "{run:?}");
        }
        assert!(
            four.delivered.len() < one.delivered.len(),
            "{one:?} {four:?}"
        );
    }

    #[test]
    fn the_deterministic_butterfly_algorithm_finishes() {
        let net = Net::new(NetKind::Butterfly, 64, 2, 1).unwrap();
        let c = Collection::random(&net, 6, 7).unwrap();
        let run = butterfly_deterministic(&c, 64, 6, 2, 4, None).unwrap();
        assert_eq!(run.delivered.iter().sum::<u64>(), 384);
    }
}
