//! [CMSV]'s worm algorithms on a [`Collection`]: Routing Algorithm 2 (§3) with its ranks,
//! delays and budget, its variants (Theorem 1.13 on the mesh, Corollary 1.4's buffers) and
//! Theorem 1.14(a)'s deterministic butterfly algorithm, all on one round loop.

use super::{Collection, MAX_ROUNDS, check_alpha};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::stats::round6;
use crate::universal::bufferless::{Contention, Flight, Request, arbitrate};
use crate::universal::pass_wave::{LinkEvent, PassWave};
use rand::RngExt;
use serde::{Deserialize, Serialize};

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
pub(crate) fn budget(c: &Collection, congestion: u32, b: u32, l: u32, alpha: f64) -> u64 {
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
    use crate::universal::{Net, NetKind};

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
