//! The watchdog reports a deadlock, naming the blocked worms and their VCs, when no flit moves
//! for K cycles while messages remain in the network.

use flitforge::traffic::{MessageSpec, Traffic};
use flitforge::{Error, SimConfig, Simulation};

#[test]
fn a_worm_behind_a_dead_switch_is_reported_as_a_deadlock() {
    let config = SimConfig {
        inputs: 8,
        watchdog: 20,
        traffic: Traffic::Identity,
        ..SimConfig::default()
    };
    let worms = vec![MessageSpec {
        source: 0,
        destination: 0,
        release: 0,
        path: None,
        middle: None,
    }];
    let mut sim = Simulation::with_messages(config, worms).unwrap();
    // ⟨000, 2⟩ forwards nothing: the only path of worm 0 passes it.
    let dead = sim.fabric.topo.node_id(2, 0);
    sim.fabric.set_faulty(dead, true);
    assert!(sim.fabric.is_faulty(dead) && !sim.fabric.is_faulty(dead + 1));
    let err = sim.run().unwrap_err();
    assert!(matches!(err, Error::Deadlock(_)));
    assert_eq!(err.exit_code(), 1);
    let text = err.to_string();
    assert!(text.contains("no flit moved for 20 cycles"), "{text}");
    assert!(
        text.contains("worm 0 (0 -> 0)") && text.contains("l1_c0 port 0 vc 0 ROUTING"),
        "{text}"
    );
}
