//! The universal protocols' switches as Verilog against their register models, on the
//! butterfly: [CMSV] Routing Algorithm 1's bufferless discard-all switch (forward and
//! acknowledgement passes, round after round, until every packet is acknowledged) and
//! [SV]'s growing-rank store-and-forward switch; bit-exact waveforms under Icarus Verilog and
//! Verilator, lint and synthesis. These tests need iverilog, verilator and yosys; without
//! them they fail with the install command (scripts/test installs them).

use flitforge::cosim::Simulator;
use flitforge::universal::batch::Collection;
use flitforge::universal::hw::algorithm1 as hw;
use flitforge::universal::{Net, NetKind};

fn workdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-ucosim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Algorithm 1 in hardware for q packets per input of an n-input butterfly at bandwidth b.
fn algorithm1(n: u32, b: u32, q: u32, seed: u64) -> hw::Alg1Hardware {
    let net = Net::new(NetKind::Butterfly, n, 2, seed).unwrap();
    let c = Collection::random(&net, q, seed).unwrap();
    hw::run(&c, n, Some(b), 1.0, seed, "cargo test").unwrap()
}

/// Co-simulates Algorithm 1's run; returns its rounds.
fn identical(n: u32, b: u32, q: u32, seed: u64, simulator: Simulator) -> usize {
    let run = algorithm1(n, b, q, seed);
    let name = format!("n{n}-b{b}-{}", simulator.name());
    let dir = workdir(&name);
    let verdict = run
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
    run.rounds.len()
}

#[test]
fn algorithm1_switches_are_identical_under_icarus() {
    let mut rounds = Vec::new();
    for (n, b, q, seed) in [
        (4, 1, 3, 1),
        (8, 1, 4, 2),
        (8, 2, 6, 3),
        (16, 2, 4, 4),
        (16, 3, 8, 5),
    ] {
        rounds.push(identical(n, b, q, seed, Simulator::Icarus));
    }
    // the acknowledgements decide later rounds: some runs have them
    assert!(rounds.iter().any(|&r| r > 2), "rounds: {rounds:?}");
}

#[test]
fn algorithm1_switches_are_identical_under_verilator() {
    assert!(identical(8, 1, 4, 7, Simulator::Verilator) > 1);
}

/// The generated Verilog of both switches lints clean under Verilator -Wall and synthesises
/// with yosys.
#[test]
fn the_verilog_lints_clean_and_synthesises() {
    use flitforge::universal::hw::growing_rank as rank;
    // B = 3 and mirrors of 15 entries (not a power of two: the count's range is wider)
    let run = algorithm1(8, 3, 4, 5);
    assert_eq!(run.plan.delays(0).max(run.plan.delays(1)) + 3, 15);
    let packets = rank::random_injections(4, 0.5, 6, 2, 9);
    let ranked = rank::run(4, 4, &packets, 12, "cargo test").unwrap();
    for (design, files, top) in [
        (
            &run.bundle.design,
            vec![
                "ff_cmsv_router.v",
                "ff_cmsv_first.v",
                "ff_cmsv_mid.v",
                "ff_cmsv_last.v",
                "ff_cmsv_net.v",
            ],
            "ff_cmsv_net",
        ),
        (
            &ranked.bundle.design,
            vec![
                "ff_rank_first.v",
                "ff_rank_mid.v",
                "ff_rank_last.v",
                "ff_rank_net.v",
            ],
            "ff_rank_net",
        ),
    ] {
        let dir = workdir(&format!("lint-{top}"));
        design.write(&dir).unwrap();
        let lint = std::process::Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", top])
            .args(&files)
            .current_dir(&dir)
            .output()
            .expect("verilator: install with apt-get install -y verilator");
        assert!(
            lint.status.success() && lint.stderr.is_empty(),
            "{top}: {}",
            String::from_utf8_lossy(&lint.stderr)
        );
        let script = format!("read_verilog {}; synth -top {top}; stat", files.join(" "));
        let synth = std::process::Command::new("yosys")
            .args(["-q", "-p", &script])
            .current_dir(&dir)
            .output()
            .expect("yosys: install with apt-get install -y yosys");
        assert!(
            synth.status.success(),
            "{top}: {}",
            String::from_utf8_lossy(&synth.stderr)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn rank_identical(n: u32, rate: f64, m: u32, k: u32, seed: u64, simulator: Simulator) {
    use flitforge::universal::hw::growing_rank as rank;
    let packets = rank::random_injections(n, rate, 24, k, seed);
    let run = rank::run(n, u64::from(m * k), &packets, 48, "cargo test").unwrap();
    assert_eq!(run.delivered.len(), packets.len());
    let name = format!("rank-n{n}-{}", simulator.name());
    let dir = workdir(&name);
    let verdict = run
        .bundle
        .run(simulator, &dir)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        verdict.divergence.is_none(),
        "{name}: {verdict}\nfiles kept in {}",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn growing_rank_switches_are_identical_under_icarus() {
    for (n, rate, m, k, seed) in [(4, 0.5, 2, 1, 1), (8, 0.4, 4, 8, 2), (16, 0.3, 3, 2, 3)] {
        rank_identical(n, rate, m, k, seed, Simulator::Icarus);
    }
}

#[test]
fn growing_rank_switches_are_identical_under_verilator() {
    rank_identical(8, 0.45, 4, 8, 4, Simulator::Verilator);
}
