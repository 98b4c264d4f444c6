//! Runs are reproducible from their seed, and the clock kernel's result does not depend on the
//! order in which switches are evaluated.

use flitforge::Simulation;
use flitforge::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use flitforge::kernel::Clocked;
use flitforge::rng::{Stream, stream};
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;
use rand::seq::SliceRandom;

fn configs() -> Vec<SimConfig> {
    let base = SimConfig {
        inputs: 32,
        traffic: Traffic::Uniform { q: 3 },
        ..SimConfig::default()
    };
    vec![
        base.clone(),
        SimConfig {
            mode: FlowControl::Drop,
            vcs: 1,
            ..base.clone()
        },
        SimConfig {
            mode: FlowControl::StoreForward,
            switch_queue: Some(2),
            ..base.clone()
        },
        SimConfig {
            link_bandwidth: LinkBandwidth::One,
            vc_depth: 2,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::Splitter,
            lane_choice: LaneChoice::Random,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::Dilated,
            dilation: 3,
            vcs: 1,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::Benes,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::KaryFly,
            radix: 2,
            mode: FlowControl::Drop,
            ..base
        },
    ]
}

#[test]
fn same_seed_gives_byte_identical_json() {
    for c in configs() {
        let a = Simulation::new(c.clone()).unwrap().run().unwrap().to_json();
        let b = Simulation::new(c.clone()).unwrap().run().unwrap().to_json();
        assert_eq!(a, b);
        let other = Simulation::new(SimConfig {
            seed: c.seed + 1,
            ..c
        })
        .unwrap()
        .run()
        .unwrap()
        .to_json();
        assert_ne!(a, other, "a different seed changes the traffic");
    }
}

#[test]
fn shuffled_evaluation_order_gives_an_identical_run() {
    for (k, c) in configs().into_iter().enumerate() {
        let mut settled = Simulation::new(c.clone()).unwrap();
        let mut shuffled = Simulation::new(c).unwrap();
        settled.keep_records(true);
        shuffled.keep_records(true);
        let mut order: Vec<usize> = (0..shuffled.components()).collect();
        order.shuffle(&mut stream(k as u64, Stream::Test));
        shuffled.set_evaluation_order(order);
        while !settled.finished() {
            settled.step().unwrap();
            shuffled.step().unwrap();
            assert_eq!(
                settled.last_transfers().collect::<Vec<_>>(),
                shuffled.last_transfers().collect::<Vec<_>>(),
                "cycle {}",
                settled.cycle()
            );
        }
        assert!(shuffled.finished());
        assert_eq!(
            settled.report(true).to_json(),
            shuffled.report(true).to_json()
        );
    }
}

/// Freeing finished messages changes nothing a report shows: the streaming statistics equal
/// those computed from every kept record, and the table holds only the messages alive.
#[test]
fn streaming_statistics_equal_the_kept_records() {
    let mut configs = configs();
    configs.push(SimConfig {
        inputs: 64,
        traffic: Traffic::Bernoulli { rate: 0.2 },
        cycles: Some(1500),
        ..SimConfig::default()
    });
    configs.push(SimConfig {
        inputs: 64,
        mode: FlowControl::Drop,
        vcs: 1,
        traffic: Traffic::Bernoulli { rate: 0.05 },
        cycles: Some(1500),
        ..SimConfig::default()
    });
    for c in configs {
        let mut kept = Simulation::new(c.clone()).unwrap();
        kept.keep_records(true);
        let mut freed = Simulation::new(c.clone()).unwrap();
        let (a, b) = (kept.run().unwrap(), freed.run().unwrap());
        assert_eq!(a.to_json(), b.to_json(), "{c:?}");
        let held = freed.records().count() as u64;
        assert_eq!(kept.records().count() as u64, a.offered);
        // Below saturation (few messages left waiting), only a window of recent messages
        // is alive; past it, the source queues themselves grow.
        if a.offered > 1000 && a.waiting < 100 {
            assert!(
                held * 10 < a.offered,
                "{held} of {} records held",
                a.offered
            );
        }
    }
}

/// Threads split the evaluation (by runs of columns where the levels allow, else each level by
/// runs of switches), the clock edge and the sources; the run is the one a single thread
/// gives, cycle by cycle (networks of 512 inputs, so that every level is split; 3 threads do
/// not divide the columns and evaluate level by level). Also a stream with drop-mode retries
/// after a random back-off (booked in the one-thread order) and a graph network.
#[test]
fn any_number_of_threads_gives_an_identical_run() {
    let mut list: Vec<SimConfig> = configs()
        .into_iter()
        .map(|c| SimConfig {
            // The k-ary n-fly has inputs / k switches per level.
            inputs: if c.topology == TopologyKind::KaryFly {
                1024
            } else {
                512
            },
            traffic: Traffic::Uniform { q: 2 },
            ..c
        })
        .collect();
    list.push(SimConfig {
        inputs: 512,
        mode: FlowControl::Drop,
        vcs: 1,
        max_attempts: 4,
        retry_backoff: 3,
        traffic: Traffic::Bernoulli { rate: 0.4 },
        cycles: Some(300),
        ..SimConfig::default()
    });
    list.push(SimConfig {
        topology: TopologyKind::Torus,
        inputs: 256,
        backpressure: Backpressure::Registered,
        traffic: Traffic::Bernoulli { rate: 0.2 },
        cycles: Some(200),
        ..SimConfig::default()
    });
    for c in list {
        let mut one = Simulation::new(c.clone()).unwrap();
        one.keep_records(true);
        let mut many: Vec<Simulation> = [2, 3]
            .into_iter()
            .map(|t| {
                let mut s = Simulation::new(c.clone()).unwrap();
                s.set_threads(t).unwrap();
                s.keep_records(true);
                s
            })
            .collect();
        let limit = c.cycles.unwrap_or(u64::MAX);
        while !one.finished() && one.cycle() < limit {
            one.step().unwrap();
            for s in &mut many {
                s.step().unwrap();
                assert_eq!(
                    one.last_transfers().collect::<Vec<_>>(),
                    s.last_transfers().collect::<Vec<_>>(),
                    "{:?} cycle {}",
                    c.topology,
                    one.cycle()
                );
                assert_eq!(one.sources.waiting(), s.sources.waiting());
            }
        }
        for s in &many {
            assert_eq!(one.finished(), s.finished());
            assert_eq!(one.sources.peak_waiting(), s.sources.peak_waiting());
            assert_eq!(one.report(true).to_json(), s.report(true).to_json());
        }
    }
}

/// Skipping idle cycles changes nothing a report shows: a run with gaps in its releases (and a
/// cycle limit inside a gap, at a release, and after the last) gives the report of the same
/// run stepped through every cycle, for drop mode with back-off and random lane choice.
#[test]
fn skipping_idle_cycles_changes_nothing() {
    use flitforge::traffic::MessageSpec;
    let specs: Vec<MessageSpec> = [0u64, 3, 700, 701, 5000]
        .iter()
        .flat_map(|&release| {
            (0..6).map(move |k| MessageSpec {
                source: (k * 5 + release as u32) % 16,
                destination: (k * 3 + 1) % 16,
                release,
                path: None,
                middle: None,
            })
        })
        .collect();
    for cycles in [None, Some(500), Some(700), Some(701), Some(6000)] {
        for config in [
            SimConfig {
                inputs: 16,
                mode: FlowControl::Drop,
                vcs: 1,
                retry_backoff: 300,
                cycles,
                ..SimConfig::default()
            },
            SimConfig {
                topology: TopologyKind::Dilated,
                inputs: 16,
                lane_choice: LaneChoice::Random,
                cycles,
                ..SimConfig::default()
            },
        ] {
            let mut skipping = Simulation::with_messages(config.clone(), specs.clone()).unwrap();
            let mut stepping = Simulation::with_messages(config.clone(), specs.clone()).unwrap();
            skipping.keep_records(true);
            stepping.keep_records(true);
            let a = skipping.run().unwrap();
            let b = stepping.run_observed(|_| Ok(())).unwrap();
            assert_eq!(a.to_json(), b.to_json(), "{config:?}");
            assert_eq!(
                skipping.report(true).to_json(),
                stepping.report(true).to_json()
            );
            assert_eq!(skipping.fabric.lfsr(0), stepping.fabric.lfsr(0));
        }
    }
}

/// A header carries the links it crossed, and a record takes them from it: at the end of every
/// cycle each held record's hops equal the links its header crossed on its last attempt,
/// counted from the clock edges' transfers, for the worms in flight as for the finished ones.
#[test]
fn record_hops_are_the_links_the_header_crossed() {
    use flitforge::switch::TransferKind;
    use std::collections::BTreeMap;
    let mut configs = configs();
    // A graph network ejects by a VC's route, and delivers a message to its own switch where
    // it enters; a doubled butterfly's worms make two passes.
    configs.push(SimConfig {
        topology: TopologyKind::Torus,
        inputs: 16,
        backpressure: Backpressure::Registered,
        ..configs[0].clone()
    });
    configs.push(SimConfig {
        topology: TopologyKind::DoubledButterfly,
        ..configs[0].clone()
    });
    for c in configs {
        let c = SimConfig {
            traffic: Traffic::Bernoulli { rate: 0.4 },
            cycles: Some(120),
            ..c
        };
        let mut sim = Simulation::new(c.clone()).unwrap();
        sim.keep_records(true);
        let mut crossed: BTreeMap<u32, u32> = BTreeMap::new();
        for _ in 0..120 {
            sim.step().unwrap();
            for t in sim.last_transfers() {
                match t.kind {
                    TransferKind::Injected if t.flit.seq == 0 => {
                        crossed.insert(t.flit.msg, 0);
                    }
                    TransferKind::Crossed { .. } if t.flit.seq == 0 => {
                        *crossed.get_mut(&t.flit.msg).expect("injected first") += 1;
                    }
                    _ => {}
                }
            }
            for r in sim.records() {
                let want = crossed.get(&r.id).copied().unwrap_or(0);
                assert_eq!(
                    r.hops,
                    want,
                    "{:?} message {} cycle {}",
                    c.topology,
                    r.id,
                    sim.cycle()
                );
                if r.id % 16 == 0 {
                    assert_eq!(sim.record(r.id).unwrap().hops, want);
                }
            }
        }
        assert!(
            sim.records()
                .any(|r| r.hops > 0 && r.tail_arrival.is_none()),
            "{:?}: a worm in flight",
            c.topology
        );
    }
}
