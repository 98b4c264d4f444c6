//! The flexible sorter's generated Verilog against the model ([BB] §4.1): bit-exact
//! waveforms under Icarus and Verilator for r ∈ {8, 16, 32, 64} (every ring length w of
//! s = 8, l = 64), a broken comparator that must be reported, lint and synthesis.
//! These tests need iverilog, verilator and yosys; without them they fail with the install
//! command (scripts/test installs them).

use flitforge::cosim::{self, Bundle, Simulator};
use flitforge::sorter::{SortConfig, SorterParams};
use std::path::PathBuf;

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-fs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(s: u32, l: u32, bits: u32, r: u32) -> SortConfig {
    SortConfig {
        params: SorterParams { s, l, bits },
        r,
        seed: 1,
    }
}

fn assert_identical(c: SortConfig, simulator: Simulator) {
    let bundle: Bundle = c.prepare("cargo test").unwrap().into();
    let dir = workdir(&format!("{}-{}-{}", simulator.name(), c.params.s, c.r));
    let verdict = bundle.run(simulator, &dir).unwrap();
    assert!(
        verdict.divergence.is_none() && verdict.cycles > 0,
        "{c:?}: {verdict}\nfiles kept in {}",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn identical_under_icarus_for_every_ring_length() {
    for r in [8, 16, 32, 64] {
        assert_identical(config(8, 64, 8, r), Simulator::Icarus);
    }
    // Other shapes: s = 16 with 3-bit keys and a padded last column; s = 2; 32-bit keys.
    assert_identical(config(16, 64, 3, 45), Simulator::Icarus);
    assert_identical(config(2, 2, 1, 1), Simulator::Icarus);
    assert_identical(config(8, 8, 32, 5), Simulator::Icarus);
}

#[test]
fn identical_under_verilator_for_every_ring_length() {
    for r in [8, 16, 32, 64] {
        assert_identical(config(8, 64, 8, r), Simulator::Verilator);
    }
}

/// A comparator that decides the exchange from the wrong input is reported at the first
/// cycle its `ss` register differs.
#[test]
fn a_broken_comparator_is_reported() {
    let mut bundle: Bundle = config(8, 64, 8, 16).prepare("cargo test").unwrap().into();
    let mut mutated = 0;
    for (name, text) in &mut bundle.design.files {
        if name == "ff_fsort.v" {
            let before = text.clone();
            *text = text.replacen(
                "ss_t0_k1 <= dec ? swp : (port[",
                "ss_t0_k1 <= dec ? !swp : (port[",
                1,
            );
            mutated += usize::from(*text != before);
        }
    }
    assert_eq!(mutated, 1);
    let dir = workdir("mutant");
    let verdict = bundle.run(Simulator::Icarus, &dir).unwrap();
    let d = verdict.divergence.clone().expect("the mutant must diverge");
    assert!(d.signal.starts_with("tb.net.s"), "{verdict}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verilator --lint-only -Wall` and `iverilog -Wall` accept the sorter; yosys synthesises a
/// small one.
#[test]
fn generated_verilog_lints_clean_and_synthesises() {
    for (s, l, bits) in [(8, 64, 8), (16, 64, 3), (8, 16, 4)] {
        let prepared = config(s, l, bits, l).prepare("cargo test").unwrap();
        let dir = workdir(&format!("lint-{s}-{l}-{bits}"));
        prepared.design.write(&dir).unwrap();
        cosim::tool(
            &dir,
            "verilator",
            &[
                "--lint-only",
                "-Wall",
                "--top-module",
                "ff_fsort",
                "ff_fsort.v",
            ],
        )
        .unwrap_or_else(|e| panic!("({s}, {l}, {bits}): verilator: {e}"));
        cosim::tool(
            &dir,
            "iverilog",
            &["-g2005", "-Wall", "-o", "/dev/null", "ff_fsort.v"],
        )
        .unwrap_or_else(|e| panic!("({s}, {l}, {bits}): iverilog: {e}"));
        if (s, l) == (8, 16) {
            cosim::tool(
                &dir,
                "yosys",
                &[
                    "-q",
                    "-p",
                    "read_verilog ff_fsort.v; synth -top ff_fsort; tee -o stat.txt stat",
                ],
            )
            .unwrap_or_else(|e| panic!("yosys: {e}"));
            let stat = std::fs::read_to_string(dir.join("stat.txt")).unwrap();
            assert!(stat.contains("cells"), "{stat}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
