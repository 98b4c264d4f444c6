//! Many random runs in every flow-control mode with every invariant checked each cycle: no
//! flit lost or duplicated, worms contiguous and in order, link capacity respected, and every
//! message ends delivered or reported dropped.

use flitforge::Simulation;
use flitforge::config::{FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use flitforge::rng::{Stream, stream};
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;
use rand::RngExt;

fn random_config(seed: u64) -> SimConfig {
    let mut rng = stream(seed, Stream::Test);
    let modes = [
        FlowControl::Wormhole,
        FlowControl::StoreForward,
        FlowControl::Drop,
    ];
    let topologies = [
        TopologyKind::Butterfly,
        TopologyKind::Dilated,
        TopologyKind::Splitter,
        TopologyKind::Benes,
    ];
    let traffic = match rng.random_range(0..5) {
        0 => Traffic::RandomPermutation,
        1 => Traffic::Transpose,
        2 => Traffic::BitReversal,
        3 => Traffic::Uniform {
            q: rng.random_range(1..4),
        },
        _ => Traffic::QRelation {
            q: rng.random_range(1..4),
        },
    };
    SimConfig {
        topology: topologies[rng.random_range(0..4)],
        inputs: 1 << rng.random_range(1..7),
        dilation: rng.random_range(1..3),
        vcs: rng.random_range(1..5),
        vc_depth: rng.random_range(1..3),
        flits: rng.random_range(1..7),
        mode: modes[(seed % 3) as usize],
        link_bandwidth: if rng.random_bool(0.25) {
            LinkBandwidth::One
        } else {
            LinkBandwidth::PerVc
        },
        lane_choice: if rng.random_bool(0.5) {
            LaneChoice::Random
        } else {
            LaneChoice::Lowest
        },
        switch_queue: (seed % 3 == 1 && rng.random_bool(0.5)).then(|| rng.random_range(1..4)),
        max_attempts: 1000,
        retry_backoff: rng.random_range(0..4),
        traffic,
        seed,
        ..SimConfig::default()
    }
}

#[test]
fn conservation_over_random_runs_in_all_three_modes() {
    let mut by_mode = [0; 3];
    for seed in 0..600 {
        let c = random_config(seed);
        let mut sim = Simulation::new(c.clone()).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        sim.set_check_invariants(true);
        let report = sim
            .run()
            .unwrap_or_else(|e| panic!("seed {seed} {c:?}: {e}"));
        assert_eq!(
            report.delivered + report.dropped,
            report.offered,
            "seed {seed}: every message ends delivered or dropped"
        );
        assert_eq!((report.in_flight, report.waiting), (0, 0));
        if c.mode != FlowControl::Drop {
            assert_eq!(report.delivered, report.offered, "seed {seed}: {c:?}");
        }
        assert_eq!(sim.fabric.flits_in_network(), 0);
        by_mode[(seed % 3) as usize] += 1;
    }
    assert!(by_mode.iter().all(|&k| k == 200));
}

#[test]
fn continuous_traffic_conserves_flits_and_accounts_for_every_message() {
    for (seed, mode) in [
        (1, FlowControl::Wormhole),
        (2, FlowControl::StoreForward),
        (3, FlowControl::Drop),
    ] {
        let c = SimConfig {
            inputs: 64,
            mode,
            traffic: Traffic::Bernoulli { rate: 0.3 },
            cycles: Some(400),
            max_attempts: 3,
            seed,
            ..SimConfig::default()
        };
        let mut sim = Simulation::new(c).unwrap();
        sim.set_check_invariants(true);
        let r = sim.run().unwrap();
        assert_eq!(r.delivered + r.dropped + r.in_flight + r.waiting, r.offered);
        assert!(r.delivered > 0 && r.cycles == 400);
    }
}
