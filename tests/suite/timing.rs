//! Flit-step timing of [CMS] §1.1 on the butterfly.
//!
//! Convention: a message released at cycle 0 has its header written into the level-0 injection
//! VC at the clock edge of cycle 0 (hop 0); flit j (1-based) crosses hop h at cycle h + j - 1,
//! so on a path of D links the header reaches the last level at cycle D and the tail at
//! D + L - 1. The register there drains into the destination one cycle later.

use flitforge::Simulation;
use flitforge::config::{FlowControl, SimConfig};
use flitforge::stats::Status;
use flitforge::traffic::{MessageSpec, Traffic};

fn config(inputs: u32, vcs: u32, flits: u32) -> SimConfig {
    SimConfig {
        inputs,
        vcs,
        flits,
        traffic: Traffic::Identity,
        ..SimConfig::default()
    }
}

fn msg(source: u32, destination: u32) -> MessageSpec {
    MessageSpec {
        source,
        destination,
        release: 0,
        path: None,
        middle: None,
    }
}

#[test]
fn single_worm_arrives_at_d_plus_l_minus_1() {
    for (inputs, flits) in [(2u32, 1u32), (8, 4), (64, 4), (64, 9), (1024, 3)] {
        let d = inputs.trailing_zeros() as u64;
        for vcs in [1, 2, 4] {
            let mut sim =
                Simulation::with_messages(config(inputs, vcs, flits), vec![msg(inputs - 1, 0)])
                    .unwrap();
            sim.keep_records(true);
            sim.set_check_invariants(true);
            let report = sim.run().unwrap();
            let r = sim.record(0).unwrap();
            assert_eq!(r.injected, Some(0));
            assert_eq!(
                r.head_arrival,
                Some(d),
                "header after D = {d} steps (n = {inputs})"
            );
            assert_eq!(
                r.tail_arrival,
                Some(d + flits as u64 - 1),
                "tail after D + L - 1 steps"
            );
            assert_eq!((r.hops as u64, r.stalled), (d, 0));
            assert_eq!(report.makespan_cycles, d + flits as u64 - 1);
        }
    }
}

#[test]
fn single_worm_through_benes_takes_2_log_n_hops() {
    let c = SimConfig {
        topology: flitforge::topology::TopologyKind::Benes,
        ..config(16, 2, 4)
    };
    let mut sim = Simulation::with_messages(c, vec![msg(3, 12)]).unwrap();
    sim.keep_records(true);
    sim.run().unwrap();
    assert_eq!(sim.record(0).unwrap().tail_arrival, Some(8 + 3));
}

#[test]
fn identity_permutation_has_no_conflicts() {
    for mode in [
        FlowControl::Wormhole,
        FlowControl::Drop,
        FlowControl::StoreForward,
    ] {
        for vcs in [1, 2] {
            let c = SimConfig {
                mode,
                ..config(256, vcs, 5)
            };
            let report = Simulation::new(c).unwrap().run().unwrap();
            assert_eq!(report.delivered, 256);
            assert_eq!((report.stalled_cycles, report.retried), (0, 0));
            let hop = if mode == FlowControl::StoreForward {
                5
            } else {
                1
            };
            assert_eq!(report.makespan_cycles, 8 * hop + 5 - 1, "{mode:?}");
        }
    }
}

/// Inputs 0 and 4 of an 8-input butterfly to outputs 0 and 1: the paths 000-000-000-000 and
/// 100-000-000-001 share the link from ⟨000,1⟩ to ⟨000,2⟩, which both headers want at cycle 2.
#[test]
fn two_worms_sharing_an_edge_serialise_with_one_vc_and_not_with_two() {
    let worms = vec![msg(0, 0), msg(4, 1)];
    let mut two = Simulation::with_messages(config(8, 2, 4), worms.clone()).unwrap();
    two.keep_records(true);
    two.run().unwrap();
    for r in two.records() {
        assert_eq!((r.tail_arrival, r.stalled), (Some(6), 0), "B = 2: no wait");
    }

    let mut one = Simulation::with_messages(config(8, 1, 4), worms).unwrap();

    one.keep_records(true);
    one.run().unwrap();
    let mut tails: Vec<u64> = one.records().map(|r| r.tail_arrival.unwrap()).collect();
    tails.sort();
    // The loser's header enters the shared link in the cycle the winner's tail leaves the
    // register behind it (same-cycle reuse): exactly L cycles later.
    assert_eq!(
        tails,
        vec![6, 6 + 4],
        "B = 1: the second worm waits for the first one's tail"
    );
    let stalled: u32 = one.records().map(|r| r.stalled).sum();
    assert_eq!(stalled, 4);
}

#[test]
fn drop_mode_discards_the_loser_and_retries_it() {
    let c = SimConfig {
        mode: FlowControl::Drop,
        ..config(8, 1, 4)
    };
    let mut sim = Simulation::with_messages(c, vec![msg(0, 0), msg(4, 1)]).unwrap();
    sim.keep_records(true);
    sim.set_check_invariants(true);
    let report = sim.run().unwrap();
    assert_eq!(
        (report.delivered, report.discarded_worms, report.retried),
        (2, 1, 1)
    );
    let attempts: Vec<u32> = sim.records().map(|r| r.attempts).collect();
    assert!(
        attempts.contains(&1) && attempts.contains(&2),
        "{attempts:?}"
    );
}

#[test]
fn drop_mode_gives_up_after_max_attempts_and_reports_it() {
    // Two worms that always collide at a single-VC link, with one attempt each.
    let c = SimConfig {
        mode: FlowControl::Drop,
        max_attempts: 1,
        ..config(8, 1, 4)
    };
    let mut sim = Simulation::with_messages(c, vec![msg(0, 0), msg(4, 1)]).unwrap();
    sim.keep_records(true);
    let report = sim.run().unwrap();
    assert_eq!((report.delivered, report.dropped), (1, 1));
    assert!(sim.records().any(|r| r.status == Status::Dropped));
}

#[test]
fn store_and_forward_buffers_whole_packets_per_hop() {
    let c = SimConfig {
        mode: FlowControl::StoreForward,
        ..config(8, 1, 4)
    };
    let mut sim = Simulation::with_messages(c, vec![msg(5, 2)]).unwrap();
    sim.keep_records(true);
    sim.run().unwrap();
    // Each of the D = 3 hops waits for the whole packet (L cycles) before the header moves on:
    // the header enters hop h at cycle h * L, the tail arrives L - 1 cycles later.
    assert_eq!(sim.record(0).unwrap().head_arrival, Some(3 * 4));
    assert_eq!(sim.record(0).unwrap().tail_arrival, Some(3 * 4 + 3));
}

#[test]
fn one_flit_per_link_serialises_two_worms_that_share_the_injection_link() {
    use flitforge::config::LinkBandwidth;
    let run = |bandwidth| {
        let c = SimConfig {
            link_bandwidth: bandwidth,
            ..config(8, 2, 4)
        };
        let mut sim = Simulation::with_messages(c, vec![msg(0, 0), msg(0, 1)]).unwrap();
        sim.keep_records(true);
        sim.set_check_invariants(true);
        sim.run().unwrap().makespan_cycles
    };
    // B = 2 VCs at one flit per VC: both worms in lock-step, D + L - 1 = 6.
    assert_eq!(run(LinkBandwidth::PerVc), 6);
    // One flit per link: the eight flits alternate on the injection link; the last one is
    // injected at cycle 7 and needs D = 3 more hops.
    assert_eq!(run(LinkBandwidth::One), 7 + 3);
}

#[test]
fn dilated_channels_spread_worms_over_their_wires_before_sharing_one() {
    use flitforge::config::LinkBandwidth;
    use flitforge::topology::TopologyKind;
    // Worms 0 -> 0 and 4 -> 1 share the channel from ⟨000,1⟩ to ⟨000,2⟩ (2 wires).
    for vcs in [1, 2] {
        let c = SimConfig {
            topology: TopologyKind::Dilated,
            dilation: 2,
            link_bandwidth: LinkBandwidth::One,
            ..config(8, vcs, 8)
        };
        let mut sim = Simulation::with_messages(c, vec![msg(0, 0), msg(4, 1)]).unwrap();
        sim.keep_records(true);
        let report = sim.run().unwrap();
        assert_eq!(
            (report.makespan_cycles, report.stalled_cycles),
            (3 + 8 - 1, 0),
            "B = {vcs}"
        );
    }
}

/// Registered back-pressure: a VC register takes a flit only if it had room after the last
/// clock edge. The header is never blocked on an empty path, so it still arrives after D
/// steps; with depth 1 every VC carries a flit every other cycle (flit j is injected at cycle
/// 2j), and depth 2 restores one flit per cycle.
#[test]
fn registered_backpressure_halves_a_depth_one_worm_and_depth_two_restores_it() {
    use flitforge::config::Backpressure;
    for (inputs, flits) in [(8u32, 4u32), (64, 9)] {
        let d = inputs.trailing_zeros() as u64;
        for vcs in [1, 2] {
            for depth in [1u32, 2, 3] {
                let c = SimConfig {
                    backpressure: Backpressure::Registered,
                    vc_depth: depth,
                    ..config(inputs, vcs, flits)
                };
                let mut sim = Simulation::with_messages(c, vec![msg(inputs - 1, 0)]).unwrap();
                sim.keep_records(true);
                sim.set_check_invariants(true);
                sim.run().unwrap();
                let r = sim.record(0).unwrap();
                let spacing = if depth == 1 { 2 } else { 1 };
                assert_eq!(r.head_arrival, Some(d), "depth {depth}");
                assert_eq!(
                    r.tail_arrival,
                    Some(d + spacing * (flits as u64 - 1)),
                    "n = {inputs}, B = {vcs}, depth {depth}"
                );
            }
        }
    }
}

/// Registered back-pressure delays the reuse of a freed VC by one cycle: with B = 1, the
/// second of two worms sharing a link gets the VC one cycle after the first worm's tail has
/// left it (at combinational back-pressure, in that very cycle: L cycles after the first).
#[test]
fn registered_backpressure_reuses_a_freed_vc_one_cycle_later() {
    use flitforge::config::Backpressure;
    let run = |backpressure, depth| {
        let c = SimConfig {
            backpressure,
            vc_depth: depth,
            ..config(8, 1, 4)
        };
        let mut sim = Simulation::with_messages(c, vec![msg(0, 0), msg(4, 1)]).unwrap();
        sim.keep_records(true);
        sim.set_check_invariants(true);
        sim.run().unwrap();
        let mut tails: Vec<u64> = sim.records().map(|r| r.tail_arrival.unwrap()).collect();
        tails.sort();
        tails
    };
    assert_eq!(run(Backpressure::Combinational, 1), vec![6, 10]);
    // Depth 2 streams like combinational depth 1; the shared VC frees one cycle later.
    assert_eq!(run(Backpressure::Registered, 2), vec![6, 11]);
}

/// Registered back-pressure evaluates every switch from registered state only: any evaluation
/// order gives the same run in a single sweep.
#[test]
fn registered_backpressure_is_independent_of_evaluation_order() {
    use flitforge::config::Backpressure;
    use flitforge::kernel::Clocked;
    let c = SimConfig {
        backpressure: Backpressure::Registered,
        traffic: Traffic::Uniform { q: 3 },
        seed: 7,
        ..config(32, 2, 4)
    };
    let reference = Simulation::new(c.clone()).unwrap().run().unwrap();
    let mut sim = Simulation::new(c).unwrap();
    sim.keep_records(true);
    let mut order: Vec<usize> = (0..sim.components()).collect();
    order.reverse();
    sim.set_evaluation_order(order);
    let report = sim.run().unwrap();
    assert_eq!(
        serde_json::to_string(&report).unwrap(),
        serde_json::to_string(&reference).unwrap()
    );
}
