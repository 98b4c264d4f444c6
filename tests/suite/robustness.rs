//! Bad input is refused, never crashes: a table of more than a hundred bad command lines, each
//! answered with exit 2 and a short message naming the flag and what it allows, without a file
//! left behind; the reported crashes and blow-ups, each refused (or completed) in seconds
//! under an 8 GiB address-space limit; property tests over configurations and message files.

use crate::common;

use flitforge::config::{Backpressure, FlowControl, LinkBandwidth, SimConfig};
use flitforge::topology::TopologyKind;
use flitforge::traffic::{MessageSpec, Traffic};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A fresh scratch directory, the working directory of the command.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "flitforge-robustness-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs flitforge in `dir` under an 8 GiB address-space limit, stopped (SIGTERM) after 60 s.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 8388608 && exec timeout 60 \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_flitforge"))
        .args(args)
        .current_dir(dir);
    cmd.output().expect("run flitforge")
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// Input files the table's rows read, written into the scratch directory first.
const INPUTS: &[(&str, &str)] = &[
    (
        "late.json",
        r#"[{"source": 0, "destination": 1, "release": 18446744073709551615}]"#,
    ),
    (
        "far.json",
        r#"[{"source": 9, "destination": 1, "release": 0}]"#,
    ),
    ("bad.json", r#"[{"source": 0, "destination": "#),
    ("cfg.toml", "inputs = 12\n"),
    ("good.toml", "inputs = 16\n"),
    ("keys.toml", "inputs = 16\nbogus = 3\n"),
    ("dilation.toml", "topology = \"butterfly\"\ndilation = 3\n"),
    ("long.toml", ""),
    ("g.json", r#"{"nodes": 3, "links": [[0, 1], [1, 2]]}"#),
    ("gp.json", "[[0, 1, 2]]"),
    ("nolink.json", "[[0, 2]]"),
    (
        "labels.json",
        r#"{"nodes": 3, "links": [[0, 1], [1, 2]], "labels": ["a", "b", "2c"]}"#,
    ),
    (
        "cyclic.json",
        r#"{"nodes": 3, "links": [[0, 1], [1, 2], [2, 0]]}"#,
    ),
];

/// (arguments, what the message must name)
fn table() -> Vec<(Vec<&'static str>, &'static str)> {
    let rows: Vec<(&str, &str)> = vec![
        // sim: the network
        ("sim --inputs 0", "inputs"),
        ("sim --inputs 3", "inputs"),
        ("sim --inputs 2097152", "inputs"),
        ("sim --inputs 4294967295", "inputs"),
        ("sim --topology dilated --dilation 0", "dilation"),
        ("sim --topology dilated --dilation 9", "dilation"),
        ("sim --topology splitter --dilation 100", "dilation"),
        ("sim --topology kary-fly --radix 3", "radix"),
        ("sim --topology kary-fly --radix 32", "radix"),
        ("sim --topology kary-fly --radix 4 --inputs 32", "inputs"),
        ("sim --topology kary-fly --radix 0", "radix"),
        ("sim --radix 4", "radix"),
        ("sim --dilation 2", "dilation"),
        ("sim --topology torus", "backpressure"),
        ("sim --topology graph", "graph"),
        (
            "sim --topology graph --graph bad.json --paths gp.json",
            "bad.json",
        ),
        (
            "sim --topology graph --graph g.json --paths far.json",
            "far.json",
        ),
        (
            "sim --topology graph --graph g.json --paths nolink.json",
            "link",
        ),
        (
            "sim --topology graph --graph labels.json --paths gp.json",
            "labels",
        ),
        (
            "sim --topology graph --graph cyclic.json --paths gp.json",
            "backpressure",
        ),
        ("sim --topology butterfly --paths gp.json", "paths"),
        (
            "sim --topology mesh --inputs 15 --backpressure registered",
            "inputs",
        ),
        (
            "sim --topology mesh --inputs 16384 --backpressure registered",
            "inputs",
        ),
        (
            "sim --topology random-graph --inputs 8 --degree 9 --backpressure registered",
            "degree",
        ),
        (
            "sim --topology wrapped-butterfly --inputs 2 --backpressure registered",
            "inputs",
        ),
        ("sim --topology modified-splitter", "topology"),
        // sim: the switches
        ("sim --vcs 0", "vcs"),
        ("sim --vcs 17", "vcs"),
        ("sim --vcs 4294967295", "vcs"),
        ("sim --vc-depth 0", "vc-depth"),
        ("sim --vc-depth 65", "vc-depth"),
        ("sim --flits 0", "flits"),
        ("sim --flits 4097", "flits"),
        ("sim --flits 300 --mode store-forward", "flits"),
        ("sim --flit-bits 3", "flit"),
        ("sim --flit-bits 100000", "flit"),
        ("sim --mode greedy", "mode"),
        ("sim --mode teleport", "mode"),
        ("sim --link-bandwidth two", "link-bandwidth"),
        ("sim --backpressure maybe", "backpressure"),
        ("sim --lane-choice random", "lane-choice"),
        (
            "sim --topology dilated --lane-choice least-loaded",
            "lane-choice",
        ),
        ("sim --middle 3", "middle"),
        ("sim --topology benes --middle 64", "middle"),
        ("sim --topology benes --middle x", "middle"),
        ("sim --switch-queue 2", "switch-queue"),
        ("sim --mode store-forward --switch-queue 0", "switch-queue"),
        (
            "sim --mode store-forward --switch-queue 70000",
            "switch-queue",
        ),
        ("sim --max-attempts 3", "max-attempts"),
        ("sim --mode drop --max-attempts 0", "max-attempts"),
        ("sim --mode drop --max-attempts 1000001", "max-attempts"),
        ("sim --mode drop --retry-backoff 1000001", "retry-backoff"),
        ("sim --watchdog 0", "watchdog"),
        ("sim --watchdog 1099511627777", "watchdog"),
        // sim: traffic
        ("sim --traffic bernoulli --cycles 10", "rate"),
        ("sim --traffic bernoulli --rate 1.5 --cycles 10", "rate"),
        ("sim --traffic bernoulli --rate=-0.1 --cycles 10", "rate"),
        ("sim --traffic bernoulli --rate nan --cycles 10", "rate"),
        ("sim --traffic bernoulli --rate inf --cycles 10", "rate"),
        ("sim --traffic bernoulli --rate 0.1", "cycles"),
        ("sim --traffic uniform --q 0", "q"),
        ("sim --traffic uniform --q 100000", "q"),
        ("sim --traffic q-relation --q 5000", "q"),
        ("sim --traffic hot-region --region 0", "region"),
        ("sim --traffic hot-region --region 65", "region"),
        (
            "sim --traffic lfsr --rate 0.1 --cycles 10 --inputs 131072",
            "inputs",
        ),
        ("sim --traffic file", "messages"),
        ("sim --traffic file --messages missing.json", "missing.json"),
        ("sim --traffic file --messages late.json", "release"),
        (
            "sim --traffic file --messages far.json --inputs 8",
            "source",
        ),
        ("sim --traffic file --messages bad.json", "bad.json"),
        ("sim --traffic file --messages /dev/zero", "max-input"),
        ("sim --rate 0.5", "rate"),
        ("sim --q 3", "q"),
        ("sim --region 3", "region"),
        ("sim --cycles 1099511627777", "cycles"),
        (
            "sim --traffic bernoulli --rate 0.1 --cycles 2000000 --inputs 1048576 --per-message",
            "per-message",
        ),
        ("sim --destinations uniform", "destinations"),
        ("sim --traffic teleport", "traffic"),
        // sim: outputs and files
        ("sim --config missing.toml", "missing.toml"),
        ("sim --config /dev/zero", "max-input"),
        ("sim --config cfg.toml", "inputs"),
        ("sim --config keys.toml", "bogus"),
        ("sim --config dilation.toml", "dilation"),
        ("sim --config long.toml --json long.toml", "json"),
        (
            "sim --traffic file --messages far.json --json far.json",
            "json",
        ),
        (
            "sim --topology graph --graph g.json --paths gp.json --backpressure registered --json g.json",
            "json",
        ),
        (
            "sim --topology graph --graph g.json --paths gp.json --backpressure registered --vcd gp.json",
            "vcd",
        ),
        ("sim --json same.json --vcd same.json", "vcd"),
        ("demo --json same.json --vcd same.json", "vcd"),
        ("sim --json .", "json"),
        ("sim --vcd -", "vcd"),
        // (A row ending in a space gives its last flag an empty value.)
        ("sim --json ", "json"),
        ("sim --sweep 0.1 --out ", "out"),
        ("experiment patel --out ", "out"),
        ("sim --vcd x.vcd --vcd-scope nomatch*", "vcd-scope"),
        ("sim --vcd x.vcd --vcd-scope l0;rm", "vcd-scope"),
        ("sim --vcd-scope l0_*", "vcd"),
        ("sim --threads 1025", "threads"),
        ("sim --threads 100000", "threads"),
        ("sim --engine golden", "engine"),
        (
            "sim --per-message --topology pruned-butterfly",
            "per-message",
        ),
        (
            "sim --inputs 65536 --traffic uniform --q 1024 --flits 1 --per-message --json f.json",
            "q",
        ),
        (
            "sim --inputs 4096 --traffic bernoulli --rate 0.01 --cycles 100000 --vcd big.vcd",
            "vcd",
        ),
        (
            "sim --inputs 1024 --vcs 16 --vc-depth 64 --flit-bits 256 --vcd /dev/null",
            "vcd",
        ),
        // Refused from the configuration, before the network is built.
        ("rtl --inputs 1048576 --out big", "out"),
        ("cosim --inputs 1048576", "inputs"),
        ("sim --inputs 1048576 --cycles 10 --vcd big.vcd", "vcd"),
        // A simulator's build that would not fit, refused before it is launched.
        (
            "--max-memory 16G cosim --inputs 1024 --simulator verilator",
            "inputs",
        ),
        (
            "--max-memory 16G bench --against verilator --inputs 1024 --flit-bits 16 --out bv",
            "inputs",
        ),
        (
            "--max-memory 16G cosim --topology pruned-butterfly --inputs 65536",
            "inputs",
        ),
        ("--max-memory 12Q sim", "max-memory"),
        ("--max-output 0 sim", "max-output"),
        ("--max-input=-5 sim", "max-input"),
        ("--max-memory 1M sim --inputs 1024", "inputs"),
        ("--max-memory 100M bench --inputs 1048576", "inputs"),
        (
            "--max-memory 10M experiment leighton-maggs --inputs 1048576 --trials 1 --out lm",
            "inputs",
        ),
        ("sim --sweep 0.1,nan --out sw", "sweep"),
        ("sim --sweep 0.5,0.1 --out sw", "sweep"),
        ("sim --sweep -0.1,0.2 --out sw", "sweep"),
        // Its files would go over its configuration.
        (
            "sim --sweep 0.1 --config good.toml --out . --force",
            "good.toml is one",
        ),
        (
            "experiment leighton-maggs --inputs 256 --faults 0,10,0 --trials 5 --out lm",
            "faults",
        ),
        (
            "experiment sorting-fat-tree --sizes 16,16 --out sft",
            "sizes",
        ),
        (
            "experiment pruned-butterfly --sizes 64,16,64 --out pb",
            "sizes",
        ),
        (
            "experiment fault-tolerance --sizes 64,64 --trials 3 --out ft",
            "sizes",
        ),
        (
            "bench --against booksim --booksim /etc/passwd --rate 0.1 --vcs 1",
            "executable",
        ),
        ("bench --threads -1,2", "threads"),
        ("sim --sweep 0.1 --json x.json", "json"),
        ("sim --shard 0/2", "shard"),
        ("sim --sweep 0.1 --shard 3/2 --out sw", "shard"),
        ("sim --sweep 0.1 --threads 5000 --out sw", "threads"),
        ("sim --sweep 0.1 --threads 2 --out sw", "threads"),
        ("sim --sweep 0.1 --allow-partial --out sw", "allow-partial"),
        ("sim --inputs 8 --json ./r2.json --vcd r2.json", "r2.json"),
        ("sim --traffic bernoulli --rate -0.1 --cycles 100", "rate"),
        ("sim --cycles 0", "cycles"),
        ("bench --cycles 0", "cycles"),
        ("experiment patel --threads 99999 --out p", "threads"),
        (
            "sim --inputs 16 --cycles 0 --sweep 0.1,0.2 --out sw",
            "cycles",
        ),
        ("sim --resume", "resume"),
        ("sim --topology pruned-butterfly --inputs 32", "inputs"),
        ("sim --topology pruned-butterfly --inputs 262144", "inputs"),
        ("sim --topology sorting-fat-tree --inputs 8", "inputs"),
        ("sim --topology sorting-fat-tree --vcd x.vcd", "vcd"),
        // rtl, cosim, fpga
        (
            "rtl --switch-queue 2 --mode store-forward --out r",
            "switch-queue",
        ),
        ("rtl --inputs 2097152 --out r", "inputs"),
        ("rtl --topology sorting-fat-tree --out r", "topology"),
        ("rtl --circuit flexible-sorter --inputs 8 --out r", "inputs"),
        ("rtl --s 8 --out r", "s, l, r, bits"),
        ("cosim --simulator modelsim", "simulator"),
        (
            "cosim --inputs 8 --keep k --circuit flexible-sorter --s 3",
            "s",
        ),
        ("fpga --inputs 128 --out f", "inputs"),
        ("fpga --device ecp5 --out f", "device"),
        ("fpga --target-mhz 0 --out f", "target-mhz"),
        ("fpga --target-mhz 5000 --out f", "target-mhz"),
        ("fpga --largest --inputs 8 --out f", "inputs"),
        // sort
        ("sort --s 3", "s"),
        ("sort --s 128", "s"),
        ("sort --s 8 --l 12", "l"),
        ("sort --bits 0", "bits"),
        ("sort --bits 65", "bits"),
        ("sort --s 8 --l 64 --r 65", "r"),
        ("sort --s 64 --l 4096 --bits 32 --vcd s.vcd", "vcd"),
        // multibutterfly and faults
        ("multibutterfly --inputs 1048576 --problem 64", "inputs"),
        ("multibutterfly --inputs 3", "inputs"),
        ("multibutterfly --problem 65", "problem"),
        ("multibutterfly --problem 0", "problem"),
        ("multibutterfly --problem X", "problem"),
        ("multibutterfly --max-held 0", "max-held"),
        ("multibutterfly --max-held 1001", "max-held"),
        ("multibutterfly --topology benes", "topology"),
        ("multibutterfly --json o.json --vcd o.json", "vcd"),
        (
            "multibutterfly --algorithm upfal --permutations 0",
            "permutations",
        ),
        ("faults --faults 100000000", "faults"),
        (
            "faults --topology splitter --dilation 5 --rules theory --beta 4 --alpha 2",
            "alpha",
        ),
        ("faults --rules theory --beta 0", "beta"),
        ("faults --interior 0..99", "interior"),
        ("topology --alpha 0", "alpha"),
        // experiments
        (
            "experiment pruned-butterfly --trials 4294967295 --out e",
            "trials",
        ),
        ("experiment pruned-butterfly --trials 0 --out e", "trials"),
        ("experiment pruned-butterfly --sizes 8 --out e", "sizes"),
        (
            "experiment sorting-fat-tree --trials 1000000 --out e",
            "trials",
        ),
        ("experiment sorting-fat-tree --sizes 3 --out e", "sizes"),
        (
            "experiment fault-tolerance --sizes 1024 --trials 20000 --threads 100000 --out e",
            "threads",
        ),
        ("experiment fault-tolerance --trials 0 --out e", "trials"),
        ("experiment fault-tolerance --sizes 4 --out e", "sizes"),
        (
            "experiment leighton-maggs --threads 5000 --out e",
            "threads",
        ),
        ("experiment leighton-maggs --trials 0 --out e", "trials"),
        (
            "experiment leighton-maggs --trials 4294967295 --out e",
            "trials",
        ),
        ("experiment leighton-maggs --inputs 4 --out e", "inputs"),
        (
            "experiment leighton-maggs --table1-trials 0 --table1-faults 10 --out e",
            "table1-faults",
        ),
        ("experiment leighton-maggs --shard 5/4 --out e", "shard"),
        ("experiment leighton-maggs --resume --out e", "resume"),
        ("experiment patel --radices 3 --out e", "radix"),
        ("experiment cypher --bandwidths 1,2,1 --out e", "bandwidths"),
        // A value that does not parse as its type: the option's help says what it takes.
        ("sim --watchdog -1", "1..=2^40"),
        ("--max-memory 8G sim --watchdog -1", "1..=2^40"),
        (
            "experiment fault-tolerance --trials 18446744073709551616 --out e",
            "1..=100000",
        ),
        ("--max-memory -5G sim", "max-memory"),
        ("sim --sweep 0.1 --shard -1/2 --out e", "shard"),
        (
            "experiment scheideler-voecking --bandwidths 2,2 --out e",
            "bandwidths",
        ),
        ("experiment patel --sizes 8,32 --radices 4 --out e", "sizes"),
        ("experiment patel --trials 0 --out e", "trials"),
        ("experiment patel --sizes 1048576 --out e", "sizes"),
        ("experiment flexible-sorter --s 3 --out e", "s"),
        ("experiment flexible-sorter --bits 99 --out e", "bits"),
        ("merge nowhere", "nowhere"),
        // bench and silicon
        ("bench --threads 5000", "threads"),
        ("bench --against booksim", "booksim"),
        (
            "bench --against booksim --booksim nowhere --out b",
            "nowhere",
        ),
        (
            "bench --against booksim --booksim /bin/true --traffic transpose --out b",
            "transpose",
        ),
        (
            "bench --against verilator --traffic transpose --out b",
            "transpose",
        ),
        ("silicon --circuit butterfly --sizes 3 --out si", "sizes"),
        ("silicon --circuit butterfly --sizes 4096 --out si", "sizes"),
    ];
    rows.into_iter()
        .map(|(a, n)| (a.split(' ').collect(), n))
        .collect()
}

#[test]
fn a_hundred_kinds_of_bad_input_exit_2_with_a_short_message_and_no_file() {
    let rows = table();
    assert!(rows.len() >= 100, "{} rows", rows.len());
    let mut failures = Vec::new();
    for (k, (args, names)) in rows.iter().enumerate() {
        let dir = scratch(&format!("row{k}"));
        for (name, text) in INPUTS {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let before = files(&dir);
        let started = Instant::now();
        let out = run_in(&dir, args);
        let took = started.elapsed();
        let err = common::text(&out.stderr);
        let after = files(&dir);
        let line = args.join(" ");
        let short: String = err.chars().take(300).collect();
        if out.status.code() != Some(2) {
            failures.push(format!("{line}: exit {:?}: {short}", out.status.code()));
        } else if !err.contains(names) {
            failures.push(format!("{line}: message does not name {names}: {short}"));
        } else if err.contains("panicked") || err.len() > 600 {
            failures.push(format!("{line}: {} bytes: {short}", err.len()));
        } else if before != after {
            failures.push(format!("{line}: left files {after:?}"));
        } else if took > Duration::from_secs(30) {
            failures.push(format!("{line}: took {took:?}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A directory a command writes into may not hold a file that its `--config` file names.
#[test]
fn an_output_directory_holding_a_configured_input_is_refused() {
    let dir = scratch("configured");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(
        dir.join("out/m.json"),
        r#"[{"source": 0, "destination": 1, "release": 0}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("c.toml"),
        "inputs = 8\n[traffic]\npattern = \"file\"\npath = \"out/m.json\"\n",
    )
    .unwrap();
    for command in ["rtl --out out --force", "cosim --keep out"] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.extend(["--config", "c.toml"]);
        let out = run_in(&dir, &args);
        let err = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("out/m.json"), "{command}: {err}");
        assert_eq!(files(&dir.join("out")), ["m.json"], "{command}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reported blow-ups that are not bad input complete, quickly and correctly.
#[test]
fn long_idle_stretches_are_skipped() {
    let dir = scratch("idle");
    std::fs::write(
        dir.join("m.json"),
        r#"[{"source": 0, "destination": 1, "release": 0}, {"source": 3, "destination": 2, "release": 1000000000}]"#,
    )
    .unwrap();
    let started = Instant::now();
    let out = run_in(
        &dir,
        &[
            "sim",
            "--inputs",
            "1024",
            "--topology",
            "dilated",
            "--lane-choice",
            "random",
            "--traffic",
            "file",
            "--messages",
            "m.json",
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(10));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["messages"]["delivered"], 2);
    assert!(r["makespan_cycles"].as_u64().unwrap() > 1_000_000_000);
    // Nothing to release, ever: on to the cycle limit at once.
    let started = Instant::now();
    let out = run_in(
        &dir,
        &[
            "sim",
            "--traffic",
            "bernoulli",
            "--rate",
            "0",
            "--cycles",
            "1099511627776",
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(10));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["details"]["cycles"], 1_099_511_627_776u64, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A message list given to the library is held to the latest release a run may reach, as a
/// message file is (its releases are kept below a flag bit).
#[test]
fn a_library_message_list_past_the_latest_release_is_refused() {
    let late = |release| {
        vec![MessageSpec {
            source: 0,
            destination: 1,
            release,
            path: None,
            middle: None,
        }]
    };
    let config = SimConfig {
        inputs: 16,
        ..SimConfig::default()
    };
    let max = flitforge::traffic::MAX_CYCLE;
    for release in [max + 1, u64::MAX] {
        let Err(e) = flitforge::Simulation::with_messages(config.clone(), late(release)) else {
            panic!("a release of {release} is refused");
        };
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains(&release.to_string()), "{e}");
    }
    assert!(flitforge::Simulation::with_messages(config, late(max)).is_ok());
}

/// A run cut short by --cycles says so and exits 3, unless --allow-partial.
#[test]
fn an_incomplete_run_is_not_a_success() {
    let dir = scratch("partial");
    let args = ["sim", "--traffic", "uniform", "--q", "64", "--cycles", "10"];
    let out = run_in(&dir, &args);
    assert_eq!(out.status.code(), Some(3));
    assert!(common::text(&out.stderr).contains("incomplete run"));
    let mut allowed = args.to_vec();
    allowed.push("--allow-partial");
    assert!(run_in(&dir, &allowed).status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rtl --out` does not write into a directory it did not create; with --force it does, and a
/// second design into its own directory removes the first one's extra files.
#[test]
fn rtl_keeps_out_of_other_peoples_directories() {
    let dir = scratch("rtl");
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/ff_net.v"), "// mine\n").unwrap();
    let out = run_in(&dir, &["rtl", "--inputs", "8", "--out", "mine"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(dir.join("mine/ff_net.v")).unwrap(),
        "// mine\n"
    );
    assert!(
        run_in(&dir, &["rtl", "--inputs", "8", "--out", "mine", "--force"])
            .status
            .success()
    );
    assert!(
        run_in(&dir, &["rtl", "--inputs", "8", "--out", "own"])
            .status
            .success()
    );
    assert!(dir.join("own/ff_switch.v").exists());
    assert!(
        run_in(&dir, &["rtl", "--inputs", "2", "--out", "own"])
            .status
            .success()
    );
    assert!(
        !dir.join("own/ff_switch.v").exists(),
        "a stale file of the 8-input design"
    );
    assert!(dir.join("own/ff_net.v").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

fn small_config() -> impl Strategy<Value = SimConfig> {
    (
        0usize..5,
        1u32..6,
        1u32..4,
        1u32..4,
        1u32..6,
        0usize..3,
        any::<bool>(),
        any::<bool>(),
        0u64..1000,
    )
        .prop_map(
            |(topology, log_n, vcs, depth, flits, mode, one, registered, seed)| {
                let topology = [
                    TopologyKind::Butterfly,
                    TopologyKind::Dilated,
                    TopologyKind::Splitter,
                    TopologyKind::Benes,
                    TopologyKind::KaryFly,
                ][topology];
                SimConfig {
                    topology,
                    inputs: 1 << log_n,
                    dilation: 2,
                    vcs,
                    vc_depth: depth,
                    flits,
                    flit_bits: 16,
                    mode: [
                        FlowControl::Wormhole,
                        FlowControl::StoreForward,
                        FlowControl::Drop,
                    ][mode],
                    link_bandwidth: if one {
                        LinkBandwidth::One
                    } else {
                        LinkBandwidth::PerVc
                    },
                    backpressure: if registered {
                        Backpressure::Registered
                    } else {
                        Backpressure::Combinational
                    },
                    traffic: Traffic::Uniform { q: 2 },
                    seed,
                    ..SimConfig::default()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any configuration in range either is refused with an input error or runs to the end
    /// with every invariant checked and every message delivered.
    #[test]
    fn every_configuration_runs_or_is_refused(config in small_config()) {
        match flitforge::Simulation::new(config) {
            Err(e) => prop_assert_eq!(e.exit_code(), 2, "{}", e),
            Ok(mut sim) => {
                sim.set_check_invariants(true);
                let r = sim.run().unwrap();
                prop_assert_eq!(r.delivered + r.dropped, r.offered);
            }
        }
    }

    /// Any bytes as a message file are read or refused with an input error, never a panic.
    #[test]
    fn any_message_file_is_read_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let path = std::env::temp_dir().join(format!("flitforge-prop-{}.json", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        if let Err(e) = flitforge::traffic::load_messages(path.to_str().unwrap(), 16) {
            prop_assert_eq!(e.exit_code(), 2);
        }
    }

    /// Message lists with any sources, destinations and releases: those in range run and
    /// deliver every message; the rest are refused.
    #[test]
    fn any_message_list_runs_or_is_refused(
        specs in proptest::collection::vec((0u32..20, 0u32..20, 0u64..3000), 1..40)
    ) {
        let specs: Vec<MessageSpec> = specs
            .into_iter()
            .map(|(source, destination, release)| MessageSpec { source, destination, release, path: None, middle: None })
            .collect();
        let config = SimConfig { inputs: 16, ..SimConfig::default() };
        match flitforge::Simulation::with_messages(config, specs.clone()) {
            Err(e) => {
                prop_assert_eq!(e.exit_code(), 2);
                prop_assert!(specs.iter().any(|s| s.source >= 16 || s.destination >= 16));
            }
            Ok(mut sim) => {
                let r = sim.run().unwrap();
                prop_assert_eq!(r.delivered, specs.len() as u64);
            }
        }
    }

    /// Any text as a config file is read or refused with an input error.
    #[test]
    fn any_config_text_is_read_or_refused(text in "[a-z_ =\\[\\]{}\"0-9.\n]{0,120}") {
        let path = std::env::temp_dir().join(format!("flitforge-prop-{}.toml", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        if let Err(e) = flitforge::run::RunConfig::from_file(path.to_str().unwrap()) {
            prop_assert_eq!(e.exit_code(), 2);
        }
    }
}
