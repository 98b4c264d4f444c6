//! The pruned butterfly's generated Verilog against the model ([BB] §3.3): bit-exact
//! waveforms under Icarus and Verilator for expansions, compressions and sidetracking-heavy
//! sets, a broken direction-bit rule that must be reported, lint and synthesis.
//! These tests need iverilog, verilator and yosys; without them they fail with the install
//! command (scripts/test installs them).

use flitforge::cosim::{self, Simulator, Verdict};
use flitforge::pruned::switch::RuleCounts;
use flitforge::pruned::{Prepared, PrunedConfig};
use flitforge::traffic::Traffic;
use std::path::PathBuf;

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-pb-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(prepared: &Prepared, simulator: Simulator, name: &str) -> (Verdict, PathBuf) {
    let dir = workdir(name);
    let verdict = cosim::run_files(
        &prepared.model_vcd,
        &prepared.design,
        &prepared.stimulus.to_hex(),
        prepared.stimulus.cycles(),
        simulator,
        &dir,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    (verdict, dir)
}

fn assert_identical(config: &PrunedConfig, simulator: Simulator, name: &str) -> RuleCounts {
    let prepared = config.prepare("cargo test").unwrap();
    let (verdict, dir) = run(&prepared, simulator, name);
    assert!(
        verdict.divergence.is_none() && verdict.cycles > 0,
        "{name}: {verdict}\nfiles kept in {}",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    prepared.report.rules
}

/// N = 16 and 64 under Icarus: permutations (expansions and compressions without conflicts),
/// transposes, and hot regions whose sets fire every case of the §3.3 decision table.
#[test]
fn model_and_rtl_are_identical_under_icarus() {
    let mut rules = RuleCounts::default();
    for (n, traffic, seed) in [
        (16, Traffic::RandomPermutation, 1),
        (16, Traffic::HotRegion { region: 1 }, 2),
        (16, Traffic::QRelation { q: 2 }, 1),
        (64, Traffic::RandomPermutation, 3),
        (64, Traffic::Transpose, 1),
        (64, Traffic::HotRegion { region: 1 }, 1),
        (64, Traffic::HotRegion { region: 16 }, 1),
    ] {
        let name = format!("icarus-{n}-{}-{seed}", traffic.name());
        let config = PrunedConfig::new(n, traffic, seed);
        rules.add(&assert_identical(&config, Simulator::Icarus, &name));
    }
    assert!(rules.all_fired(), "{rules:?}");
}

/// The "done when" commands under Verilator: N = 16 and N = 64 with sidetracking.
#[test]
fn model_and_rtl_are_identical_under_verilator() {
    for (n, traffic) in [
        (16, Traffic::HotRegion { region: 1 }),
        (64, Traffic::HotRegion { region: 16 }),
    ] {
        let name = format!("verilator-{n}");
        assert_identical(
            &PrunedConfig::new(n, traffic, 1),
            Simulator::Verilator,
            &name,
        );
    }
}

/// A vertex whose direction bit toggles under the wrong rule is reported at the first cycle
/// its `dir` register differs.
#[test]
fn a_broken_direction_bit_is_reported() {
    let mut prepared = PrunedConfig::new(16, Traffic::HotRegion { region: 1 }, 2)
        .prepare("cargo test")
        .unwrap();
    let mut mutated = 0;
    for (name, text) in &mut prepared.design.files {
        if name.starts_with("ff_pb_") && text.contains("if (!a) dir <= !dir;") {
            *text = text.replace("if (!a) dir <= !dir;", "if (a) dir <= !dir;");
            mutated += 1;
        }
    }
    assert_eq!(mutated, 3, "root, odd and even vertices carry the rule");
    let (verdict, dir) = run(&prepared, Simulator::Icarus, "mutant");
    let d = verdict.divergence.clone().expect("the mutant must diverge");
    assert!(d.signal.ends_with(".dir"), "{verdict}");
    assert!(verdict.to_string().contains("DIVERGED"), "{verdict}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verilator --lint-only -Wall` and `iverilog -Wall` accept the network; yosys synthesises it.
#[test]
fn generated_verilog_lints_clean_and_synthesises() {
    for n in [16, 64] {
        let prepared = PrunedConfig::new(n, Traffic::RandomPermutation, 1)
            .prepare("cargo test")
            .unwrap();
        let dir = workdir(&format!("lint-{n}"));
        prepared.design.write(&dir).unwrap();
        let mut sources = prepared.design.verilog_files();
        sources.retain(|f| *f != "tb.v");
        let mut args = vec!["--lint-only", "-Wall", "--top-module", "ff_pb_net"];
        args.extend(&sources);
        cosim::tool(&dir, "verilator", &args).unwrap_or_else(|e| panic!("{n}: verilator: {e}"));
        cosim::tool(
            &dir,
            "iverilog",
            &[&["-g2005", "-Wall", "-o", "/dev/null"], &sources[..]].concat(),
        )
        .unwrap_or_else(|e| panic!("{n}: iverilog: {e}"));
        if n == 16 {
            let script = format!(
                "read_verilog {}; synth -top ff_pb_net; tee -o stat.txt stat",
                sources.join(" ")
            );
            cosim::tool(&dir, "yosys", &["-q", "-p", &script])
                .unwrap_or_else(|e| panic!("{n}: yosys: {e}"));
            let stat = std::fs::read_to_string(dir.join("stat.txt")).unwrap();
            assert!(
                stat.contains("ff_pb_even") && stat.contains("cells"),
                "{stat}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
