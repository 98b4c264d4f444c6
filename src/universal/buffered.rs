//! [CMSV] Theorem 1.7: store-and-forward routing with buffers of A packets per link, in
//! rounds. Each forward pass is [SV]'s growing-rank protocol on shortest paths, with every
//! link's buffer bounded; where arrivals would overflow a buffer, Algorithm 2's rule keeps the
//! A packets of lowest discard rank and discards the others. A backward pass acknowledges the
//! delivered packets, and the undelivered ones try again in the next round.

use super::batch::{Collection, budget, check_alpha};
use super::pass_wave::{LinkEvent, PassWave, Signals};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::stats::round6;
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// Most rounds before a run is abandoned (the lowest discard rank always gets through, so
/// every round delivers at least one packet).
const MAX_ROUNDS: u32 = 100_000;

/// Most queue entries the forward passes may scan in all before a run is abandoned.
const MAX_WORK: u64 = 1 << 36;

/// The growing ranks' (m, K): [SV]'s generic choice. Every packet of a round is born at its
/// start, so m does not change the order (fewest links crossed first, then k, then the id).
pub const GROWING_M: u64 = 20;
pub const GROWING_K: u64 = 128;

/// The signals of Theorem 1.7's waveform for `c` with buffers of `a`.
pub fn wave_signals(c: &Collection, a: u32) -> Signals {
    Signals {
        lanes: 1,
        messages: c.messages() as u64,
        ranks: Some(GROWING_M * GROWING_K * (u64::from(c.dilation) + 1)),
        buffers: Some(a),
    }
}

/// A run of Theorem 1.7's algorithm.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BufferedRun {
    pub messages: u64,
    pub congestion: u32,
    pub dilation: u32,
    /// Buffer size A, and the range T·A of the discard ranks (T: Lemma 3.4's budget at
    /// bandwidth A and L = 1).
    pub buffers: u32,
    pub discard_ranks: u64,
    /// Per round: packets delivered, packets discarded, and the forward pass's cycles.
    pub delivered: Vec<u64>,
    pub discarded: Vec<u64>,
    pub pass_cycles: Vec<u64>,
    /// Forward and backward passes of every round.
    pub makespan: u64,
    /// (C·D^(1/A) + lg n)/A, the theorem's rounds.
    pub rounds_shape: f64,
    /// The two readings of the theorem's time: (C·D^(1/A) + lg n)(C + D + lg n)/A and
    /// (C·D^(1/A)/A + lg n)(C + D + lg n).
    pub shape: f64,
    pub shape_alt: f64,
}

/// [CMSV] Theorem 1.7 on `c` (shortest paths) with buffers of `a` packets per link; its
/// forward passes written to `wave` if given (per link and cycle: the packet sent and its
/// growing rank, the packets discarded and the buffer's occupancy; see [`wave_signals`]).
pub fn theorem_1_7(
    c: &Collection,
    a: u32,
    alpha: f64,
    seed: u64,
    mut wave: Option<&mut PassWave>,
) -> Result<BufferedRun> {
    if !(1..=64).contains(&a) {
        return Err(Error::invalid("buffers", a, "1..=64 packets"));
    }
    check_alpha(alpha)?;
    let n = c.messages();
    let t = budget(c, c.congestion, a, 1, alpha);
    let ranks = t * u64::from(a);
    let mut rng: Rng = stream(seed, Stream::Protocol);
    // drawn once: the discard rank (Algorithm 2's rule) and the growing rank's offset k
    let discard: Vec<u64> = (0..n).map(|_| rng.random_range(0..ranks)).collect();
    let offset: Vec<u64> = (0..n).map(|_| rng.random_range(1..=GROWING_K)).collect();
    let links = c.links() as usize;
    // queue[e]: packets waiting to cross link e; `held[e]` of them have crossed a link
    // already and sit in e's buffer (the others wait in their source's injection buffer)
    let mut queue: Vec<Vec<u32>> = vec![Vec::new(); links];
    let mut held = vec![0u32; links];
    let mut hop = vec![0u32; n];
    let mut done = vec![false; n];
    let mut active: Vec<u32> = (0..n as u32).collect();
    let mut run = BufferedRun {
        messages: n as u64,
        congestion: c.congestion,
        dilation: c.dilation,
        buffers: a,
        discard_ranks: ranks,
        delivered: Vec::new(),
        discarded: Vec::new(),
        pass_cycles: Vec::new(),
        makespan: 0,
        rounds_shape: 0.0,
        shape: 0.0,
        shape_alt: 0.0,
    };
    let mut busy: Vec<u32> = Vec::new();
    let mut moves: Vec<(u32, u32)> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    let mut work = 0u64;
    let mut events = Vec::new();
    while !active.is_empty() {
        if run.delivered.len() as u32 >= MAX_ROUNDS {
            return Err(Error::Incomplete(format!(
                "Theorem 1.7: {} packets undelivered after {MAX_ROUNDS} rounds",
                active.len()
            )));
        }
        for &p in &active {
            hop[p as usize] = 0;
            let e = c.paths[p as usize][0];
            if queue[e as usize].is_empty() {
                busy.push(e);
            }
            queue[e as usize].push(p);
        }
        let (mut delivered, mut discarded, mut cycles) = (0u64, 0u64, 0u64);
        while !busy.is_empty() {
            if work > MAX_WORK {
                return Err(Error::Incomplete(format!(
                    "Theorem 1.7: more than {MAX_WORK} queue entries scanned, {} packets still undelivered",
                    active.len()
                )));
            }
            // compute: every busy link sends its lowest growing rank, (m(h − 1)K + k, id)
            moves.clear();
            for &e in &busy {
                let q = &mut queue[e as usize];
                work += q.len() as u64;
                let rank = |p: u32| {
                    (
                        GROWING_M * GROWING_K * u64::from(hop[p as usize]) + offset[p as usize],
                        p,
                    )
                };
                let (i, _) = q
                    .iter()
                    .enumerate()
                    .min_by_key(|&(_, &p)| rank(p))
                    .expect("a busy link has a packet");
                let p = q.swap_remove(i);
                if hop[p as usize] > 0 {
                    held[e as usize] -= 1;
                }
                if wave.is_some() {
                    let (rank, _) = rank(p);
                    events.push(LinkEvent::Won {
                        link: e,
                        worm: p,
                        rank,
                    });
                }
                moves.push((p, e));
            }
            // commit: every move lands at once
            busy.retain(|&e| !queue[e as usize].is_empty());
            touched.clear();
            for &(p, _) in &moves {
                let path = &c.paths[p as usize];
                hop[p as usize] += 1;
                let h = hop[p as usize] as usize;
                if h == path.len() {
                    done[p as usize] = true;
                    delivered += 1;
                    continue;
                }
                let e = path[h] as usize;
                if queue[e].is_empty() {
                    busy.push(e as u32);
                }
                queue[e].push(p);
                held[e] += 1;
                if held[e] as usize == a as usize + 1 {
                    touched.push(e as u32);
                }
            }
            // overflowing buffers keep their A lowest discard ranks (Algorithm 2's rule)
            for &e in &touched {
                let q = &mut queue[e as usize];
                if wave.is_some() {
                    events.push(LinkEvent::Cut {
                        link: e,
                        flits: u64::from(held[e as usize] - a),
                    });
                }
                while held[e as usize] > a {
                    let (i, _) = q
                        .iter()
                        .enumerate()
                        .filter(|&(_, &p)| hop[p as usize] > 0)
                        .max_by_key(|&(_, &p)| (discard[p as usize], p))
                        .expect("an overflowing buffer holds packets");
                    q.swap_remove(i);
                    held[e as usize] -= 1;
                    discarded += 1;
                }
            }
            busy.retain(|&e| !queue[e as usize].is_empty());
            if let Some(w) = wave.as_deref_mut() {
                // the buffers of the links sent from and arrived at
                for &(p, e) in &moves {
                    events.push(LinkEvent::Held {
                        link: e,
                        packets: held[e as usize],
                    });
                    if let Some(&next) = c.paths[p as usize].get(hop[p as usize] as usize) {
                        events.push(LinkEvent::Held {
                            link: next,
                            packets: held[next as usize],
                        });
                    }
                }
                w.sample(run.delivered.len() as u32, cycles, &events)?;
                events.clear();
            }
            cycles += 1;
        }
        active.retain(|&p| !done[p as usize]);
        run.delivered.push(delivered);
        run.discarded.push(discarded);
        run.pass_cycles.push(cycles);
        // the backward pass replays the forward one for the acknowledgements
        run.makespan += 2 * cycles;
    }
    let (cc, d, af) = (f64::from(c.congestion), f64::from(c.dilation), f64::from(a));
    let lg_n = (n.max(2) as f64).log2();
    let head = cc * d.powf(1.0 / af);
    run.rounds_shape = round6((head + lg_n) / af);
    run.shape = round6((head + lg_n) * (cc + d + lg_n) / af);
    run.shape_alt = round6((head / af + lg_n) * (cc + d + lg_n));
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::{Net, NetKind};

    #[test]
    fn every_packet_arrives_and_a_bigger_buffer_discards_less() {
        let net = Net::new(NetKind::Torus, 64, 2, 1).unwrap();
        let c = Collection::random(&net, 4, 5).unwrap();
        let small = theorem_1_7(&c, 1, 1.0, 5, None).unwrap();
        let large = theorem_1_7(&c, 16, 1.0, 5, None).unwrap();
        for r in [&small, &large] {
            assert_eq!(r.delivered.iter().sum::<u64>(), 256);
            assert!(r.pass_cycles.iter().all(|&p| p >= 1));
            assert_eq!(r.makespan, 2 * r.pass_cycles.iter().sum::<u64>());
        }
        let lost = |r: &BufferedRun| r.discarded.iter().sum::<u64>();
        assert!(lost(&large) <= lost(&small), "{large:?} {small:?}");
        assert!(lost(&small) > 0);
        assert_eq!(
            theorem_1_7(&c, 2, 1.0, 9, None).unwrap().delivered,
            theorem_1_7(&c, 2, 1.0, 9, None).unwrap().delivered
        );
    }
}
