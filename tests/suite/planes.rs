//! The bit-plane kernel runs the general kernel's cycles: report for report, message record
//! for message record, over the networks it models.

use crate::common;

use flitforge::config::{LinkBandwidth, SimConfig};
use flitforge::sim::Simulation;
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;

/// The report (with every message's record) of `config` on the general kernel, its
/// invariants checked every cycle in debug builds, and on the bit-plane kernel.
fn both(config: &SimConfig) -> (String, String) {
    let mut general = Simulation::new(config.clone()).unwrap();
    general.keep_records(true);
    let general = general
        .run()
        .map(|_| general.report(true).to_json())
        .unwrap();
    let mut planes = Simulation::new(config.clone()).unwrap();
    planes.keep_records(true);
    planes.set_check_invariants(false);
    planes.set_bit_planes(true).unwrap();
    assert!(planes.bit_planes());
    let planes = planes.run().map(|_| planes.report(true).to_json()).unwrap();
    (general, planes)
}

fn config(
    inputs: u32,
    vcs: u32,
    flits: u32,
    bandwidth: LinkBandwidth,
    traffic: Traffic,
) -> SimConfig {
    SimConfig {
        inputs,
        vcs,
        flits,
        vc_depth: 1,
        link_bandwidth: bandwidth,
        traffic,
        cycles: Some(200),
        seed: 11 + u64::from(inputs) * 7 + u64::from(vcs) * 3 + u64::from(flits),
        ..SimConfig::default()
    }
}

/// Sizes whose routing bits pick rows within a word (n ≤ 64) and across words (n = 256:
/// levels 0 and 1 flip bits 7 and 6), every VC count of the per-word arrays (B = 3 and 5 in
/// arrays for 4 and 8), one-flit and longer worms, both link bandwidths, light to
/// saturating loads.
#[test]
fn the_bit_plane_kernel_gives_the_general_kernels_run() {
    let mut checked = 0;
    for inputs in [2, 8, 64, 256] {
        for vcs in [1, 2, 3, 4, 5, 8] {
            for flits in [1, 2, 4] {
                for bandwidth in [LinkBandwidth::One, LinkBandwidth::PerVc] {
                    for rate in [0.05, 0.4, 1.0] {
                        // Worms of L flits at rate p offer p · L flits per input and cycle.
                        let rate = rate / f64::from(flits);
                        let c = config(inputs, vcs, flits, bandwidth, Traffic::Bernoulli { rate });
                        let (general, planes) = both(&c);
                        assert_eq!(
                            general, planes,
                            "n {inputs}, B {vcs}, L {flits}, {bandwidth:?}, rate {rate}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 432);
}

/// Corners: the largest VC counts of their per-word arrays, long worms, words of rows at
/// n = 128 (k = 6 picks a word) and 1024, full load not scaled by the worm's length.
#[test]
fn corners_give_the_general_kernels_run() {
    for (inputs, vcs, flits) in [(128, 6, 17), (128, 7, 9), (1024, 6, 9), (1024, 7, 3)] {
        for bandwidth in [LinkBandwidth::One, LinkBandwidth::PerVc] {
            for rate in [0.3, 1.0] {
                let c = SimConfig {
                    cycles: Some(120),
                    ..config(inputs, vcs, flits, bandwidth, Traffic::Bernoulli { rate })
                };
                let (general, planes) = both(&c);
                assert_eq!(
                    general, planes,
                    "n {inputs}, B {vcs}, L {flits}, {bandwidth:?}, rate {rate}"
                );
            }
        }
    }
}

/// Batch patterns run to the end (no cycle limit), each message's record equal, the
/// watchdog never firing.
#[test]
fn batches_finish_alike() {
    for traffic in [
        Traffic::RandomPermutation,
        Traffic::Transpose,
        Traffic::QRelation { q: 4 },
    ] {
        for (vcs, flits) in [(1, 1), (2, 1), (2, 4)] {
            // A watchdog of one cycle: every cycle some flit must move (crossings inside the
            // network count, though the books never see them).
            let c = SimConfig {
                cycles: None,
                watchdog: 1,
                ..config(128, vcs, flits, LinkBandwidth::One, traffic.clone())
            };
            let (general, planes) = both(&c);
            assert_eq!(general, planes, "{traffic:?}, B {vcs}, L {flits}");
        }
    }
}

/// Between cycles too, the records and the report are the general kernel's: a header in the
/// network counts the cycles it has waited so far (the bit-plane kernel books them as it
/// arrives), and a header that has arrived counts them once.
#[test]
fn waits_in_flight_count_as_the_general_kernel_counts_them() {
    for (inputs, vcs, flits, threads) in [(64, 2, 3, 1), (256, 1, 1, 2), (256, 2, 4, 2)] {
        let c = config(
            inputs,
            vcs,
            flits,
            LinkBandwidth::One,
            Traffic::Bernoulli { rate: 0.6 },
        );
        let mut general = Simulation::new(c.clone()).unwrap();
        general.keep_records(true);
        let mut planes = Simulation::new(c.clone()).unwrap();
        planes.keep_records(true);
        planes.set_check_invariants(false);
        planes.set_bit_planes(true).unwrap();
        planes.set_threads(threads).unwrap();
        for cycle in 0..120 {
            general.step().unwrap();
            planes.step().unwrap();
            if cycle % 7 == 3 {
                let id = (cycle * 5) as u32;
                let record = |sim: &Simulation| format!("{:?}", sim.record(id));
                assert_eq!(record(&general), record(&planes), "message {id}");
                assert_eq!(
                    general.report(true).to_json(),
                    planes.report(true).to_json(),
                    "{inputs} inputs, B {vcs}, L {flits}, cycle {cycle}"
                );
            }
        }
    }
}

/// The report (with every message's record) of `config` on the bit-plane kernel on one
/// thread and on two (a pipeline of levels).
fn one_and_two_threads(config: &SimConfig) -> (String, String) {
    let run = |threads: usize| {
        let mut sim = Simulation::new(config.clone()).unwrap();
        sim.keep_records(true);
        sim.set_check_invariants(false);
        sim.set_threads(threads).unwrap();
        sim.set_bit_planes(true).unwrap();
        assert!(sim.bit_planes());
        assert_eq!(sim.threads_running(), threads, "{config:?}");
        sim.run().map(|_| sim.report(true).to_json()).unwrap()
    };
    (run(1), run(2))
}

/// On two threads (the upper levels on one, the lower ones with the sources and the books
/// on the other, the split moving as they wait) the run is the one-thread run: every VC
/// count of the per-word arrays, one-flit and long worms, both link bandwidths, light to
/// saturating loads, and words per level of 4 and 16.
#[test]
fn a_pipeline_of_levels_gives_the_one_thread_run() {
    for inputs in [256, 1024] {
        for (vcs, flits) in [(1, 1), (2, 3), (3, 1), (5, 6), (8, 2)] {
            for bandwidth in [LinkBandwidth::One, LinkBandwidth::PerVc] {
                for rate in [0.05, 1.0] {
                    let rate = rate / f64::from(flits);
                    let c = SimConfig {
                        cycles: Some(150),
                        ..config(inputs, vcs, flits, bandwidth, Traffic::Bernoulli { rate })
                    };
                    let (one, two) = one_and_two_threads(&c);
                    assert_eq!(
                        one, two,
                        "n {inputs}, B {vcs}, L {flits}, {bandwidth:?}, rate {rate}"
                    );
                }
            }
        }
    }
    // And the general kernel's, on one of them.
    let c = config(
        256,
        2,
        3,
        LinkBandwidth::One,
        Traffic::Bernoulli { rate: 0.2 },
    );
    assert_eq!(both(&c).0, one_and_two_threads(&c).1);
}

/// Wherever the pipeline splits the levels the run is the one-thread run.
#[test]
fn every_split_of_the_pipeline_gives_the_one_thread_run() {
    let c = SimConfig {
        cycles: Some(300),
        ..config(
            256,
            2,
            3,
            LinkBandwidth::One,
            Traffic::Bernoulli { rate: 0.2 },
        )
    };
    let (one, _) = one_and_two_threads(&c);
    for m in 1..8 {
        let mut sim = Simulation::new(c.clone()).unwrap();
        sim.keep_records(true);
        sim.set_check_invariants(false);
        sim.set_threads(2).unwrap();
        sim.set_bit_planes(true).unwrap();
        sim.pin_pipeline_split(m);
        sim.run().unwrap();
        assert_eq!(
            sim.report(true).to_json(),
            one,
            "levels {m}.. on the other thread"
        );
    }
}

/// Batches run to the end on two threads as on one (a watchdog of one cycle: the
/// pipeline's batches end where the network is empty, and its moves count as progress).
#[test]
fn a_pipeline_finishes_batches_alike() {
    for traffic in [Traffic::RandomPermutation, Traffic::QRelation { q: 3 }] {
        for (vcs, flits) in [(1, 1), (2, 4)] {
            let c = SimConfig {
                cycles: None,
                watchdog: 1,
                ..config(256, vcs, flits, LinkBandwidth::One, traffic.clone())
            };
            let (one, two) = one_and_two_threads(&c);
            assert_eq!(one, two, "{traffic:?}, B {vcs}, L {flits}");
        }
    }
}

/// What the bit-plane kernel does not model is refused, naming what it needs.
#[test]
fn other_networks_are_refused() {
    let refused = |c: SimConfig, needs: &str| {
        let mut sim = Simulation::new(c).unwrap();
        sim.set_check_invariants(false);
        let e = sim.set_bit_planes(true).unwrap_err().to_string();
        assert!(e.contains(needs), "{e}");
        assert!(!sim.prefer_bit_planes());
    };
    let base = config(16, 2, 4, LinkBandwidth::One, Traffic::RandomPermutation);
    refused(
        SimConfig {
            vc_depth: 2,
            ..base.clone()
        },
        "depth-1 VC registers",
    );
    refused(
        SimConfig {
            mode: flitforge::config::FlowControl::StoreForward,
            ..base.clone()
        },
        "wormhole",
    );
    refused(
        SimConfig {
            topology: TopologyKind::Benes,
            ..base.clone()
        },
        "a butterfly",
    );
    refused(
        SimConfig {
            vcs: 9,
            ..base.clone()
        },
        "at most 8 VCs per link (this run: --vcs 9)",
    );
    refused(
        SimConfig {
            backpressure: flitforge::config::Backpressure::Registered,
            ..base.clone()
        },
        "combinational back-pressure",
    );
    refused(
        SimConfig {
            mode: flitforge::config::FlowControl::Drop,
            ..base.clone()
        },
        "wormhole flow control (this run: --mode drop)",
    );
    // A faulty switch ([LM] §III) passes nothing: the general kernel models it.
    let mut sim = Simulation::new(base.clone()).unwrap();
    sim.set_check_invariants(false);
    sim.fabric.set_faulty(20, true);
    let e = sim.set_bit_planes(true).unwrap_err().to_string();
    assert!(
        e.contains("no faulty switch (this run: switch l1_c4 is faulty)"),
        "{e}"
    );
    // With invariant checks on, the general kernel runs.
    let mut sim = Simulation::new(base).unwrap();
    sim.set_check_invariants(true);
    assert!(sim.set_bit_planes(true).is_err());
    assert!(!sim.prefer_bit_planes());
}

/// `sim --kernel`: the same report from either kernel on one thread or two, byte for byte;
/// the bit-plane kernel refused (exit 2, naming what it needs) where it does not apply.
#[test]
fn sim_kernels_write_the_same_report() {
    let run = |kernel: &str, threads: &str| {
        let json = common::temp("planes", &format!("{kernel}-{threads}.json"));
        let out = common::flitforge(&[
            "sim",
            "--threads",
            threads,
            "--inputs",
            "256",
            "--vcs",
            "2",
            "--flits",
            "3",
            "--traffic",
            "bernoulli",
            "--rate",
            "0.2",
            "--cycles",
            "300",
            "--per-message",
            "--kernel",
            kernel,
            "--json",
            &json,
        ]);
        assert!(out.status.success(), "{}", common::text(&out.stderr));
        std::fs::read(json).unwrap()
    };
    let general = run("general", "1");
    assert_eq!(general, run("bit-planes", "1"));
    assert_eq!(general, run("auto", "1"));
    assert_eq!(general, run("bit-planes", "2"));
    assert_eq!(general, run("general", "2"));
    for (args, needs) in [
        (&["--vc-depth", "2"][..], "depth-1 VC registers"),
        (&["--vcd", "x.vcd"][..], "with --vcd"),
        (&["--check"][..], "without invariant checks"),
        (
            &["--topology", "dilated", "--dilation", "2"][..],
            "a butterfly",
        ),
    ] {
        let mut all = vec!["sim", "--inputs", "8", "--kernel", "bit-planes"];
        all.extend_from_slice(args);
        let out = common::flitforge(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = common::text(&out.stderr);
        assert!(stderr.contains(needs), "{args:?}: {stderr}");
    }
}

/// `bench --kernel` names the kernel that ran; where the flag means nothing it is refused.
#[test]
fn bench_names_its_kernel() {
    for kernel in ["general", "bit-planes"] {
        let out = common::flitforge(&[
            "bench", "--inputs", "16", "--cycles", "50", "--kernel", kernel,
        ]);
        assert!(out.status.success(), "{}", common::text(&out.stderr));
        let stdout = common::text(&out.stdout);
        assert!(stdout.contains(&format!("{kernel} kernel")), "{stdout}");
    }
    for args in [
        &[
            "bench",
            "--topology",
            "pruned-butterfly",
            "--kernel",
            "general",
        ][..],
        &[
            "sim", "--inputs", "16", "--sweep", "0.1,0.2", "--cycles", "50", "--kernel", "general",
        ][..],
    ] {
        let out = common::flitforge(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// Threads and the bit-plane kernel set in either order give the same layout; after the
/// first cycle a change between one thread and two is refused, and nothing changes.
#[test]
fn threads_and_the_kernel_set_in_any_order() {
    let c = config(
        256,
        2,
        2,
        LinkBandwidth::One,
        Traffic::Bernoulli { rate: 0.2 },
    );
    let reference = one_and_two_threads(&c).0;
    let fresh = || {
        let mut sim = Simulation::new(c.clone()).unwrap();
        sim.keep_records(true);
        sim.set_check_invariants(false);
        sim
    };
    let orders: [&dyn Fn(&mut Simulation); 4] = [
        &|s| {
            s.set_threads(2).unwrap();
            s.set_bit_planes(true).unwrap();
        },
        &|s| {
            s.set_bit_planes(true).unwrap();
            s.set_threads(2).unwrap();
        },
        &|s| {
            s.set_threads(2).unwrap();
            s.set_bit_planes(true).unwrap();
            s.set_threads(1).unwrap();
            s.set_threads(0).unwrap();
        },
        &|s| {
            s.set_threads(3).unwrap();
            s.prefer_bit_planes();
        },
    ];
    for (k, order) in orders.iter().enumerate() {
        let mut sim = fresh();
        order(&mut sim);
        assert!(sim.bit_planes(), "order {k}");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let expected = if k == 2 && cores == 1 { 1 } else { 2 };
        assert_eq!(sim.threads_running(), expected, "order {k}");
        sim.step().unwrap();
        // The registers are laid out alike for one thread and two: the count may change
        // once the run has started.
        if expected == 2 {
            sim.set_threads(1).unwrap();
            assert_eq!(sim.threads_running(), 1);
            sim.run_watched(|s| match s.cycle() {
                40.. => Err(flitforge::Error::invalid("cycle", 40, "a pause")),
                _ => Ok(()),
            })
            .unwrap_err();
            sim.set_threads(2).unwrap();
            assert_eq!(sim.threads_running(), 2);
        }
        let report = sim.run().map(|_| sim.report(true).to_json()).unwrap();
        assert_eq!(report, reference, "order {k}");
    }
    // Back to the general kernel, its threads take over.
    let mut sim = fresh();
    sim.set_threads(2).unwrap();
    sim.set_bit_planes(true).unwrap();
    sim.set_bit_planes(false).unwrap();
    assert!(!sim.bit_planes());
    assert_eq!(sim.threads_running(), 2);
}
