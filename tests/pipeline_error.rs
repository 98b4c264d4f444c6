//! An error in the middle of a batch on two threads stops the run for good: the upper levels
//! of the pipeline may have run past the cycle the error names, so the simulation refuses to
//! go on. (A test binary of its own: it sets the process's memory limit.)

use flitforge::config::SimConfig;
use flitforge::limits::{self, Overrides};
use flitforge::sim::Simulation;
use flitforge::switch::planes::Planes;
use flitforge::traffic::Traffic;

#[test]
fn an_error_in_a_pipelined_batch_stops_the_run_for_good() {
    // A network saturated below its links' bandwidth (where the estimate of live messages
    // counts no growing queues): its sources' queues grow by hundreds of messages a cycle.
    let config = SimConfig {
        inputs: 1024,
        vcs: 1,
        flits: 1,
        vc_depth: 1,
        traffic: Traffic::Bernoulli { rate: 1.0 },
        cycles: Some(1000),
        ..SimConfig::default()
    };
    let planes = Planes::bytes(&config, &Simulation::new(config.clone()).unwrap().fabric);
    // Room for the estimate and the bit planes: the queues pass it inside the first batch
    // (at cycle 60).
    let (network, records) = config.memory_estimate();
    let limit = network + records + planes;
    limits::set(Overrides {
        memory: Some(limit),
        output: None,
        input: None,
    });
    let mut sim = Simulation::new(config).unwrap();
    sim.set_check_invariants(false);
    sim.set_threads(2).unwrap();
    sim.set_bit_planes(true).unwrap();
    let err = sim.run().unwrap_err().to_string();
    assert!(err.contains("live messages fit"), "{err}");
    let stopped = sim.cycle();
    assert!((1..1000).contains(&stopped), "stopped at cycle {stopped}");
    for again in [sim.step().unwrap_err(), sim.run().unwrap_err()] {
        let again = again.to_string();
        assert!(
            again.contains(&format!("stopped at cycle {stopped}"))
                && again.contains("start it again"),
            "{again}"
        );
    }
}
