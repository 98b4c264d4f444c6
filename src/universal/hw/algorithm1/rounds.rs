//! Algorithm 1 in hardware round by round: the testbench's side. Each round's copies of the
//! packets not yet acknowledged are injected into [`Alg1Butterfly`] with [CMSV] Algorithm 1's
//! plan and draws, and the acknowledgements that come back decide the next round.

use super::{Alg1Butterfly, Lane, MAX_CYCLES, MAX_PASS};
use crate::error::{Error, Result};
use crate::universal::batch::{Alg1Plan, Collection};
use crate::universal::hw::ButterflyVcd;
use std::collections::BTreeSet;

/// One round of the hardware run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwRound {
    /// Packets still unacknowledged at the round's start, and their copies.
    pub active: u64,
    pub copies: u64,
    /// Copies the outputs registered, and packets acknowledged at their sources.
    pub delivered: u64,
    pub acknowledged: u64,
    /// Cycles of the forward and the backward pass.
    pub cycles: u64,
}

/// A run of Algorithm 1 in hardware, ready to co-simulate.
pub struct Alg1Hardware {
    pub plan: Alg1Plan,
    pub rounds: Vec<HwRound>,
    /// The model's waveform, the Verilog and the stimulus.
    pub bundle: crate::cosim::Bundle,
}

/// Most bytes a run keeps in memory: the model's waveform, the copies injected and the
/// stimulus (a quarter of the memory limit, at most 1 GiB).
fn memory_budget() -> u64 {
    (crate::limits::memory_limit().0 / 4).min(1 << 30)
}

/// Rounds at the copy cap in a row that acknowledge nothing before a run is abandoned.
const FUTILE_ROUNDS: u32 = 4;

/// Runs [CMSV] Algorithm 1 on the hardware butterfly of `n` inputs for the collection `c`
/// (drawn on that butterfly), with Algorithm 1's plan at `bandwidth` (`None`: prescribed)
/// and `alpha` and the draws of `seed`, exactly as [`crate::universal::batch::algorithm1`]
/// draws them, until every packet is acknowledged: each round injects copies of the packets
/// whose acknowledgements have not come back.
pub fn run(
    c: &Collection,
    n: u32,
    bandwidth: Option<u32>,
    alpha: f64,
    seed: u64,
    command: &str,
) -> Result<Alg1Hardware> {
    use crate::rng::{Rng, Stream, stream};
    let log_n = n.trailing_zeros();
    if c.dilation != log_n || c.sources.iter().chain(&c.destinations).any(|&t| t >= n) {
        return Err(Error::invalid(
            "inputs",
            n,
            "the butterfly the collection was drawn on",
        ));
    }
    // the flag that sizes the run: packets per input
    let q = c.messages() / n as usize;
    let plan = Alg1Plan::new(c, bandwidth, alpha)?;
    let passes = [0, 1].map(|r| plan.delays(r) + u64::from(log_n));
    if passes[0] > MAX_PASS {
        return Err(Error::invalid(
            "q",
            q,
            format!(
                "a collection whose congestion C + lg n is at most {MAX_PASS} cycles (round 0's pass; here {})",
                passes[0]
            ),
        ));
    }
    if passes[1] > MAX_PASS {
        return Err(Error::invalid(
            "alpha",
            alpha,
            format!(
                "an α whose later passes 2Bm + lg n last at most {MAX_PASS} cycles (here {})",
                passes[1]
            ),
        ));
    }
    let mut net = Alg1Butterfly::new(n, plan.bandwidth, 1, c.messages(), passes)?;
    let budget = memory_budget();
    let over_budget = |what: &str, r: u32| {
        Error::invalid(
            "q",
            q,
            format!(
                "a run that keeps at most {} in memory ({what} passed it in round {r}; fewer packets per input or a larger bandwidth)",
                crate::limits::bytes(budget)
            ),
        )
    };
    let mut model_vcd = Vec::new();
    let mut vcd = ButterflyVcd::new(&mut model_vcd, &net, command)?;
    let mut rng: Rng = stream(seed, Stream::Protocol);
    let mut active: Vec<u32> = (0..c.messages() as u32).collect();
    let mut acked = vec![false; c.messages()];
    // every copy injected: (cycle, input, lane)
    let mut injections: Vec<(u64, u32, Lane)> = Vec::new();
    let mut j = 1usize;
    let mut rounds = Vec::new();
    let mut futile = 0u32;
    let mut r = 0u32;
    while !active.is_empty() {
        let pass = u64::from(net.passes[usize::from(r > 0)]);
        if net.cycle() + 2 * pass > MAX_CYCLES || futile >= FUTILE_ROUNDS {
            return Err(Error::Incomplete(format!(
                "Algorithm 1 in hardware: {} packets unacknowledged after {r} rounds ({}; fewer packets per input or a larger bandwidth finish sooner)",
                active.len(),
                if futile >= FUTILE_ROUNDS {
                    format!("{futile} rounds of 2^k copies acknowledged none")
                } else {
                    format!("the next round would pass {MAX_CYCLES} cycles")
                }
            )));
        }
        let each = plan.copies(r);
        let (owners, delays) = plan.draw(r, each, &active, &mut rng);
        let stored = (injections.len() + owners.len()) * std::mem::size_of::<(u64, u32, Lane)>();
        if (stored + vcd.writer().len()) as u64 > budget {
            return Err(over_budget("the copies and the waveform", r));
        }
        let mut by_cycle = vec![vec![Vec::new(); n as usize]; pass as usize];
        for (&p, &delay) in owners.iter().zip(&delays) {
            let x = c.sources[p as usize];
            let lane = Lane {
                valid: true,
                addr: c.destinations[p as usize],
                id: p,
            };
            by_cycle[delay as usize][x as usize].push(lane);
            injections.push((net.cycle() + delay, x, lane));
        }
        // the injection lanes: the most copies one input starts in one cycle
        let most = by_cycle.iter().flatten().map(Vec::len).max().unwrap_or(0);
        if most > 64 {
            return Err(Error::invalid(
                "q",
                q,
                format!(
                    "a run whose inputs start at most 64 copies in one cycle (round {r} starts {most}; fewer packets per input)"
                ),
            ));
        }
        j = j.max(most);
        let (copies_delivered, round_acked) = round(&mut net, &mut vcd, &by_cycle, r)?;
        if vcd.writer().len() as u64 > budget {
            return Err(over_budget("the model's waveform", r));
        }
        for &p in &round_acked {
            acked[p as usize] = true;
        }
        futile = if r >= plan.k && round_acked.is_empty() {
            futile + 1
        } else {
            0
        };
        rounds.push(HwRound {
            active: active.len() as u64,
            copies: owners.len() as u64,
            delivered: copies_delivered,
            acknowledged: round_acked.len() as u64,
            cycles: 2 * pass,
        });
        active.retain(|&p| !acked[p as usize]);
        r += 1;
    }
    vcd.finish()?;
    net.lanes_in = j as u32;
    let cycles = net.cycle();
    // the stimulus: a line of n·J lanes per cycle
    let line = u64::from(n * net.lanes_in * (1 + log_n + net.id_bits)).div_ceil(4) + 1;
    if cycles * line + model_vcd.len() as u64 > budget {
        return Err(over_budget("the stimulus", r));
    }
    let mut stimulus_hex = String::with_capacity((cycles * line) as usize);
    // in cycle order; a stable sort keeps each input's lanes in the order they were drawn
    injections.sort_by_key(|i| i.0);
    let mut inject = vec![Vec::new(); n as usize];
    let mut next = injections.iter().peekable();
    for cycle in 0..cycles {
        inject.iter_mut().for_each(Vec::clear);
        while let Some(&(_, x, lane)) = next.next_if(|i| i.0 == cycle) {
            inject[x as usize].push(lane);
        }
        stimulus_hex.push_str(&stimulus_line(&net, &inject));
        stimulus_hex.push('\n');
    }
    let design = super::verilog::design(&net, command, cycles)?;
    Ok(Alg1Hardware {
        plan,
        rounds,
        bundle: crate::cosim::Bundle {
            model_vcd,
            design,
            stimulus_hex,
            cycles,
            build: None,
        },
    })
}

/// One round on `net`: its forward pass injecting `by_cycle[t][x]` at input x in pass cycle
/// t, then its backward pass, each cycle sampled into `vcd`. Checks that no acknowledgement
/// link is oversubscribed and that the packets acknowledged are those delivered; returns
/// the copies delivered and the packets acknowledged.
fn round(
    net: &mut Alg1Butterfly,
    vcd: &mut ButterflyVcd<&mut Vec<u8>>,
    by_cycle: &[Vec<Vec<Lane>>],
    r: u32,
) -> Result<(u64, BTreeSet<u32>)> {
    let mut delivered = BTreeSet::new();
    let mut copies = 0u64;
    let mut acked = BTreeSet::new();
    let idle = vec![Vec::new(); net.n as usize];
    for t in 0..2 * by_cycle.len() {
        net.step(by_cycle.get(t).unwrap_or(&idle));
        vcd.sample(net)?;
        if net.ack_discarded() {
            return Err(Error::Invariant {
                cycle: net.cycle() - 1,
                message: "an acknowledgement link was asked for by more than B: the backward pass does not mirror the forward one".into(),
            });
        }
        for lane in net.delivered() {
            copies += 1;
            delivered.insert(lane.id);
        }
        acked.extend(net.acknowledged().map(|l| l.id));
    }
    if delivered != acked {
        return Err(Error::Invariant {
            cycle: net.cycle() - 1,
            message: format!(
                "round {r}: {} packets delivered but {} acknowledged",
                delivered.len(),
                acked.len()
            ),
        });
    }
    Ok((copies, acked))
}

/// One cycle's injections as a `$readmemh` line: input x's lane l at bits
/// `(x·J + l)·LW`, LW = 1 + lg n + id bits, as {id, address, valid}; lanes past those
/// given are idle.
pub fn stimulus_line(net: &Alg1Butterfly, inject: &[Vec<Lane>]) -> String {
    let lw = 1 + net.log_n + net.id_bits;
    let mut fields = Vec::new();
    for lanes in inject {
        for l in 0..net.lanes_in as usize {
            let lane = lanes.get(l).copied().unwrap_or_default();
            fields.push((u64::from(lane.valid), 1));
            fields.push((u64::from(lane.addr), net.log_n));
            fields.push((u64::from(lane.id), net.id_bits));
        }
    }
    crate::universal::hw::hex_line(&fields, (net.n * net.lanes_in * lw) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::universal::batch::algorithm1;
    use crate::universal::{Net, NetKind};

    #[test]
    fn the_hardware_acknowledges_round_by_round_what_the_flight_model_delivers() {
        // the same collection, plan and draws: the register model (whose acknowledgements
        // decide the next round) and the pass kernel agree on every round's deliveries
        let mut later_rounds = 0;
        for (n, q, b, seed) in [(8, 4, 1, 1), (8, 6, 2, 2), (16, 4, 2, 3), (16, 8, 3, 4)] {
            let net = Net::new(NetKind::Butterfly, n, 2, seed).unwrap();
            let c = Collection::random(&net, q, seed).unwrap();
            let hw = run(&c, n, Some(b), 1.0, seed, "test").unwrap();
            let batch = algorithm1(&c, Some(b), 1.0, seed, None).unwrap();
            let got: Vec<(u64, u64)> = hw
                .rounds
                .iter()
                .map(|r| (r.active, r.acknowledged))
                .collect();
            let expect: Vec<(u64, u64)> = batch
                .rounds
                .iter()
                .map(|r| (r.active, r.delivered))
                .collect();
            assert_eq!(got, expect, "n {n}, q {q}, B {b}");
            let cycles: u64 = batch.rounds.iter().map(|r| r.cycles).sum();
            assert_eq!(hw.bundle.cycles, cycles);
            assert!(hw.rounds.iter().all(|r| r.delivered >= r.acknowledged));
            later_rounds += hw.rounds.len() - 1;
        }
        assert!(later_rounds > 0, "the cases exercise rounds after round 0");
    }
}
