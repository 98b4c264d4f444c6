//! Algorithm 1 in hardware round by round: the testbench's side. Each round's copies of the
//! packets not yet acknowledged are injected into [`Alg1Butterfly`] with [CMSV] Algorithm 1's
//! plan and draws, and the acknowledgements that come back decide the next round.

use super::{Alg1Butterfly, Lane, MAX_CYCLES};
use crate::error::{Error, Result};
use crate::universal::batch::{Alg1Plan, Collection};
use crate::universal::hw::ButterflyVcd;

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

/// Runs [CMSV] Algorithm 1 on the hardware butterfly of `n` inputs for the collection `c`
/// (drawn on that butterfly), with Algorithm 1's plan at `bandwidth` (`None`: prescribed)
/// and `alpha` and the draws of `seed`, exactly as [`crate::universal::batch::algorithm1`]
/// draws them, until every packet is acknowledged. Each round's surviving packets are
/// injected from the acknowledgements the hardware returned.
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
    let plan = Alg1Plan::new(c, bandwidth, alpha)?;
    let passes = [0, 1].map(|r| plan.delays(r) + u64::from(log_n));
    let mut net = Alg1Butterfly::new(n, plan.bandwidth, 1, c.messages(), passes)?;
    let mut vcd_bytes = Vec::new();
    let mut vcd = ButterflyVcd::new(&mut vcd_bytes, &net, command)?;
    let mut rng: Rng = stream(seed, Stream::Protocol);
    let mut active: Vec<u32> = (0..c.messages() as u32).collect();
    let mut acked = vec![false; c.messages()];
    let mut injections: Vec<Vec<Vec<Lane>>> = Vec::new();
    let mut rounds = Vec::new();
    let mut r = 0u32;
    while !active.is_empty() {
        let pass = u64::from(net.passes[usize::from(r > 0)]);
        if net.cycle() + 2 * pass > MAX_CYCLES {
            return Err(Error::Incomplete(format!(
                "Algorithm 1 in hardware: {} packets unacknowledged after {} rounds, and the next would pass {MAX_CYCLES} cycles (a smaller collection, or a larger B, finishes sooner)",
                active.len(),
                r
            )));
        }
        let each = plan.copies(r);
        let (owners, delays) = plan.draw(r, each, &active, &mut rng);
        let mut by_cycle = vec![vec![Vec::new(); n as usize]; pass as usize];
        for (&p, &delay) in owners.iter().zip(&delays) {
            by_cycle[delay as usize][c.sources[p as usize] as usize].push(Lane {
                valid: true,
                addr: c.destinations[p as usize],
                id: p,
            });
        }
        let mut delivered = std::collections::BTreeSet::new();
        let mut copies_delivered = 0u64;
        let mut round_acked = std::collections::BTreeSet::new();
        let idle = vec![Vec::new(); n as usize];
        for t in 0..2 * pass {
            let inject = by_cycle.get(t as usize).unwrap_or(&idle);
            net.step(inject);
            vcd.sample(&net)?;
            injections.push(inject.clone());
            if net.ack_discarded() {
                return Err(Error::Invariant {
                    cycle: net.cycle() - 1,
                    message: "an acknowledgement link was asked for by more than B: the backward pass does not mirror the forward one".into(),
                });
            }
            for lane in net.delivered() {
                copies_delivered += 1;
                delivered.insert(lane.id);
            }
            round_acked.extend(net.acknowledged().map(|l| l.id));
        }
        if delivered != round_acked {
            return Err(Error::Invariant {
                cycle: net.cycle() - 1,
                message: format!(
                    "round {r}: {} packets delivered but {} acknowledged",
                    delivered.len(),
                    round_acked.len()
                ),
            });
        }
        for &p in &round_acked {
            acked[p as usize] = true;
        }
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
    // the injection lanes: the most copies one input starts in one cycle
    let j = injections
        .iter()
        .flatten()
        .map(Vec::len)
        .max()
        .unwrap_or(1)
        .max(1);
    net.lanes_in = u32::try_from(j).ok().filter(|&j| j <= 64).ok_or_else(|| {
        Error::invalid(
            "bandwidth",
            plan.bandwidth,
            format!("a run whose inputs start at most 64 copies in one cycle ({j})"),
        )
    })?;
    let mut stimulus_hex = String::new();
    for inject in &injections {
        stimulus_hex.push_str(&stimulus_line(&net, inject));
        stimulus_hex.push('\n');
    }
    let cycles = net.cycle();
    let design = super::verilog::design(&net, command, cycles)?;
    Ok(Alg1Hardware {
        plan,
        rounds,
        bundle: crate::cosim::Bundle {
            model_vcd: vcd_bytes,
            design,
            stimulus_hex,
            cycles,
        },
    })
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
