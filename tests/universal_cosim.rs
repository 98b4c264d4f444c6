//! [CMSV] Routing Algorithm 1's switch as Verilog against its register model: a forward pass
//! on the butterfly, bit-exact waveforms under Icarus Verilog and Verilator. These tests need
//! iverilog and verilator; without them they fail with the install command (scripts/test
//! installs them).

use flitforge::cosim::Simulator;
use flitforge::rng::{Stream, stream};
use flitforge::universal::hw;
use rand::RngExt;

fn workdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-ucosim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// q copies per input to random outputs with delays in 0..delays.
fn copies(n: u32, q: u32, delays: u64, seed: u64) -> (Vec<u32>, Vec<(u32, u64)>) {
    let mut rng = stream(seed, Stream::Test);
    let mut sources = Vec::new();
    let mut copies = Vec::new();
    for x in 0..n {
        for _ in 0..q {
            sources.push(x);
            copies.push((rng.random_range(0..n), rng.random_range(0..delays)));
        }
    }
    (sources, copies)
}

fn identical(n: u32, b: u32, q: u32, seed: u64, simulator: Simulator) {
    let (sources, copies) = copies(n, q, 6, seed);
    let pass = hw::pass(n, b, &sources, &copies, "cargo test").unwrap();
    assert!(!pass.delivered.is_empty());
    let name = format!("n{n}-b{b}-{}", simulator.name());
    let dir = workdir(&name);
    let verdict = pass
        .bundle
        .run(simulator, &dir)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        verdict.divergence.is_none(),
        "{name}: {verdict}\nfiles kept in {}",
        dir.display()
    );
    assert!(verdict.signals > 0 && verdict.cycles > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn algorithm1_switches_are_identical_under_icarus() {
    for (n, b, q, seed) in [
        (4, 1, 3, 1),
        (8, 1, 4, 2),
        (8, 2, 6, 3),
        (16, 2, 4, 4),
        (16, 3, 8, 5),
    ] {
        identical(n, b, q, seed, Simulator::Icarus);
    }
}

#[test]
fn algorithm1_switches_are_identical_under_verilator() {
    identical(8, 2, 6, 7, Simulator::Verilator);
}

/// The generated Verilog lints clean under Verilator -Wall and synthesises with yosys.
#[test]
fn algorithm1_verilog_lints_clean_and_synthesises() {
    let (sources, copies) = copies(8, 2, 3, 9);
    let pass = hw::pass(8, 2, &sources, &copies, "cargo test").unwrap();
    let dir = workdir("lint");
    pass.bundle.design.write(&dir).unwrap();
    let files = [
        "ff_cmsv_first.v",
        "ff_cmsv_mid.v",
        "ff_cmsv_last.v",
        "ff_cmsv_net.v",
    ];
    let lint = std::process::Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "ff_cmsv_net"])
        .args(files)
        .current_dir(&dir)
        .output()
        .expect("verilator: install with apt-get install -y verilator");
    assert!(
        lint.status.success() && lint.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&lint.stderr)
    );
    let script = format!(
        "read_verilog {}; synth -top ff_cmsv_net; stat",
        files.join(" ")
    );
    let synth = std::process::Command::new("yosys")
        .args(["-q", "-p", &script])
        .current_dir(&dir)
        .output()
        .expect("yosys: install with apt-get install -y yosys");
    assert!(
        synth.status.success(),
        "{}",
        String::from_utf8_lossy(&synth.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
