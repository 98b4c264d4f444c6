//! Tests of the wormhole trial protocol: undisturbed timing, variable lengths, the
//! accounting of trials, overload and overflow stacks.

use super::*;
use crate::universal::continuous::{Traffic, Window, run};
use crate::universal::{Net, NetKind};

/// Trials on a butterfly of dilation 4 (its depth for 16 inputs).
fn params(
    bandwidth: u32,
    flits: u32,
    overflow: Option<TrialOverflow>,
    variable_lengths: bool,
) -> TrialParams {
    TrialParams {
        bandwidth,
        flits,
        dilation: 4,
        overflow,
        variable_lengths,
    }
}

fn window() -> Window {
    Window {
        warmup: 500,
        window: 4000,
        drain: 20_000,
        max_buffered: 100_000,
        burst: None,
    }
}

#[test]
fn an_undisturbed_worm_arrives_in_d_plus_l_minus_one() {
    let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
    let params = params(2, 8, None, false);
    let traffic = Traffic::at_load(&net, 0.002, 8).unwrap();
    let mut p = TrialNet::new(params, &net, 1).unwrap();
    let o = run(&net, &traffic, window(), 1, &mut p).unwrap();
    assert!(o.stability.stable, "{o:?}");
    assert_eq!(o.latency.p50, 4 + 8 - 1);
    assert_eq!(o.delivered_measured, o.measured);
    assert!(o.failed_trials_mean < 0.05, "{o:?}");
}

#[test]
fn variable_length_worms_have_mean_l_and_all_arrive() {
    // lengths uniform in 1..=2L − 1: an undisturbed worm of l flits takes D + l − 1, so
    // the routing times spread around the fixed-length run's D + L − 1
    let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
    let params = params(2, 8, None, true);
    let mut traffic = Traffic::at_load(&net, 0.02, 8).unwrap();
    traffic.variable_lengths = true;
    let mut p = TrialNet::new(params, &net, 1).unwrap();
    let o = run(&net, &traffic, window(), 1, &mut p).unwrap();
    assert!(o.stability.stable, "{o:?}");
    assert_eq!(o.delivered_measured, o.measured);
    assert!(o.latency.max >= 4 + 12 - 1, "long worms: {o:?}");
    assert!(o.latency.p50 < 4 + 8 - 1 + 2, "{o:?}");
    assert!((o.latency.mean - (4.0 + 8.0 - 1.0)).abs() < 1.0, "{o:?}");
}

#[test]
fn a_worm_longer_than_2l_minus_1_is_refused() {
    let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
    let params = params(2, 4, None, true);
    let mut p = TrialNet::new(params, &net, 1).unwrap();
    let mut path = Vec::new();
    net.path_into(0, 5, &mut path);
    p.inject(NewMessage {
        generator: 0,
        source: 0,
        seq: 0,
        birth: 0,
        path: path.into(),
        flits: 8,
        measured: true,
    });
    let e = p.step(0, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("flits = 8") && e.contains("1..=7"), "{e}");
}

#[test]
fn every_trial_is_a_success_a_cut_or_a_lost_acknowledgement() {
    let net = Net::new(NetKind::Mesh, 16, 2, 1).unwrap();
    let params = TrialParams {
        bandwidth: 1,
        flits: 4,
        dilation: net.dilation(),
        overflow: None,
        variable_lengths: false,
    };
    let traffic = Traffic::at_load(&net, 0.01, 4).unwrap();
    let mut p = TrialNet::new(params, &net, 5).unwrap();
    let o = run(&net, &traffic, window(), 5, &mut p).unwrap();
    assert!(o.stability.stable, "{o:?}");
    let c = p.counters;
    assert!(c.cuts > 0 && c.acks_lost > 0, "{c:?}");
    // every delivered worm had one successful trial; the rest failed or are running
    assert!(c.successes <= c.trials);
    assert!(o.failed_trials_mean > 0.0);
}

#[test]
fn overload_is_reported_unstable_within_the_window() {
    // B/L = 1/4 is the hard cap of the link load for wormhole routing
    let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
    let params = params(1, 4, None, false);
    let traffic = Traffic::at_load(&net, 0.4, 4).unwrap();
    let mut p = TrialNet::new(params, &net, 2).unwrap();
    let o = run(&net, &traffic, window(), 2, &mut p).unwrap();
    assert!(!o.stability.stable, "{o:?}");
    assert!(o.cycles <= 500 + 4000, "decided at the window's end: {o:?}");
}

#[test]
fn a_worm_that_keeps_failing_goes_to_its_generators_stack() {
    use crate::universal::continuous::Burst;
    let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
    let params = params(1, 4, Some(TrialOverflow { t: 3, pop: 0.05 }), false);
    let traffic = Traffic::at_load(&net, 0.02, 4).unwrap();
    let w = Window {
        warmup: 2000,
        window: 4000,
        drain: 20_000,
        max_buffered: 100_000,
        burst: Some(Burst {
            cycles: 1000,
            factor: 10.0,
        }),
    };
    let mut p = TrialNet::new(params, &net, 4).unwrap();
    let o = run(&net, &traffic, w, 4, &mut p).unwrap();
    assert!(p.counters.stacked > 0, "{:?}", p.counters);
    // every measured worm came back from its stack and was delivered
    assert_eq!(o.delivered_measured, o.measured, "{o:?}");
}
