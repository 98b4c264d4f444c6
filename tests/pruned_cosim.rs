//! The pruned butterfly's generated Verilog against the model, under Icarus and Verilator.

use flitforge::cosim::{self, Simulator};
use flitforge::pruned::PrunedConfig;
use flitforge::traffic::Traffic;

fn cosim(config: &PrunedConfig, simulator: Simulator, tag: &str) {
    let prepared = config.prepare("test").unwrap();
    let dir = std::env::temp_dir().join(format!("ff-pb-cosim-{tag}-{}", std::process::id()));
    let verdict = cosim::run_files(
        &prepared.model_vcd,
        &prepared.design,
        &prepared.stimulus.to_hex(),
        prepared.stimulus.cycles(),
        simulator,
        &dir,
    )
    .unwrap();
    println!("{verdict}");
    assert!(
        verdict.divergence.is_none(),
        "{verdict} (files kept in {})",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn permutation_16_icarus() {
    cosim(
        &PrunedConfig::new(16, Traffic::RandomPermutation, 1),
        Simulator::Icarus,
        "p16",
    );
}
