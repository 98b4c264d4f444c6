//! The `flitforge` command: the done-when run, the demo, byte-stable JSON, the watchdog, and
//! clear errors (exit code 2, no panic) for bad input.

use crate::common;

use common::flitforge;
use std::process::{Command, Output};

fn temp(name: &str) -> String {
    common::temp("cli", name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn sim_1024_random_permutation_delivers_all_and_writes_the_json_keys() {
    let json = temp("out1024.json");
    let o = flitforge(&[
        "sim",
        "--topology",
        "butterfly",
        "--inputs",
        "1024",
        "--vcs",
        "2",
        "--flits",
        "4",
        "--traffic",
        "random-permutation",
        "--seed",
        "1",
        "--json",
        &json,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in [
        "schema",
        "topology",
        "config",
        "config_hash",
        "seed",
        "messages",
        "makespan_cycles",
        "latency",
        "details",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    for key in ["mean", "p50", "p99", "max"] {
        assert!(v["latency"].get(key).is_some(), "missing latency.{key}");
    }
    assert_eq!(v["messages"]["delivered"], 1024);
    assert_eq!(v["details"]["injected"], 1024);
    assert_eq!(v["messages"]["dropped"], 0);
    assert_eq!(v["seed"], 1);
    assert_eq!(v["config"]["inputs"], 1024);
}

#[test]
fn same_seed_gives_byte_identical_json_files() {
    let (a, b) = (temp("a.json"), temp("b.json"));
    for path in [&a, &b] {
        let o = flitforge(&[
            "sim",
            "--inputs",
            "64",
            "--traffic",
            "uniform",
            "--q",
            "4",
            "--mode",
            "drop",
            "--vcs",
            "1",
            "--seed",
            "9",
            "--per-message",
            "--json",
            path,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn sim_writes_a_waveform_on_request() {
    let path = temp("demo.vcd");
    let o = flitforge(&["demo", "--vcd", &path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("$comment\n    flitforge ") && text.contains("$scope module l6_c63 $end")
    );
    let o = flitforge(&["sim", "--vcd-scope", "l0_*"]);
    assert_eq!(o.status.code(), Some(2), "--vcd-scope needs --vcd");
}

#[test]
fn a_missing_simulator_is_an_error_that_says_how_to_install_it() {
    let empty = std::env::temp_dir().join(format!("flitforge-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_flitforge"))
        .args(["cosim", "--inputs", "4", "--simulator", "verilator"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("apt-get install -y verilator"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn demo_prints_a_summary() {
    let o = flitforge(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("butterfly n=64 B=2 L=4") && out.contains("64 delivered"),
        "{out}"
    );
}

#[test]
fn config_file_round_trips_and_flags_override_it() {
    let toml_path = temp("run.toml");
    std::fs::write(
        &toml_path,
        "inputs = 16\nvcs = 1\nmode = \"drop\"\n[traffic]\npattern = \"q-relation\"\nq = 2\n",
    )
    .unwrap();
    let json = temp("cfg.json");
    let o = flitforge(&[
        "sim", "--config", &toml_path, "--flits", "3", "--json", &json,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["config"]["inputs"], 16);
    assert_eq!(v["config"]["flits"], 3);
    assert_eq!(v["config"]["mode"], "drop");
    assert_eq!(v["config"]["traffic"]["pattern"], "q-relation");
    assert_eq!(v["messages"]["offered"], 32);
}

#[test]
fn message_list_from_json_file() {
    let path = temp("msgs.json");
    std::fs::write(&path, r#"{"messages": [{"source": 0, "destination": 7}, {"source": 3, "destination": 3, "release": 5}]}"#).unwrap();
    let o = flitforge(&[
        "sim",
        "--inputs",
        "8",
        "--traffic",
        "file",
        "--messages",
        &path,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 delivered"));
}

#[test]
fn bad_input_is_a_clear_error_with_exit_code_2() {
    let bad_toml = temp("bad.toml");
    std::fs::write(&bad_toml, "inputs = [\n").unwrap();
    let unknown_key = temp("unknown.toml");
    std::fs::write(&unknown_key, "inputs = 8\nvirtual_channels = 2\n").unwrap();
    let bad_json = temp("bad.json");
    std::fs::write(&bad_json, "[{\"source\": 0,").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--inputs", "12"], "inputs = 12"),
        (vec!["--inputs", "2097152"], "2^20"),
        (vec!["--vcs", "0"], "vcs = 0"),
        (vec!["--flits", "0"], "flits = 0"),
        (
            vec!["--inputs", "1024", "--flit-bits", "8"],
            "flit-bits = 8: expected 10..=256",
        ),
        (vec!["--topology", "torus"], "torus"),
        (vec!["--traffic", "zipf"], "zipf"),
        (
            vec!["--traffic", "bernoulli", "--rate", "1.5", "--cycles", "10"],
            "1.5",
        ),
        (vec!["--traffic", "bernoulli", "--cycles", "10"], "--rate"),
        (vec!["--config", &bad_toml], "bad.toml"),
        (vec!["--config", &unknown_key], "virtual_channels"),
        (
            vec![
                "--inputs",
                "8",
                "--traffic",
                "file",
                "--messages",
                &bad_json,
            ],
            "bad.json",
        ),
        (
            vec!["--inputs", "1048576", "--vcs", "16", "--vc-depth", "64"],
            "GiB network",
        ),
        (
            vec![
                "--traffic",
                "bernoulli",
                "--rate",
                "1",
                "--cycles",
                "40000000",
                "--inputs",
                "4096",
            ],
            "invalid cycles = 40000000",
        ),
        (
            vec!["--mode", "store-forward", "--flits", "256"],
            "1..=255 with --mode store-forward",
        ),
        (
            vec!["--mode", "drop", "--retry-backoff", "18446744073709551615"],
            "0..=1000000",
        ),
        (vec!["--rate", "0.3"], "only with --traffic bernoulli"),
        (
            vec!["--traffic", "transpose", "--q", "3"],
            "only with --traffic uniform or q-relation",
        ),
        (vec!["--middle", "west"], "middle = west"),
    ];
    for (args, needle) in cases {
        let mut full = vec!["sim"];
        full.extend(args.iter().copied());
        let o = flitforge(&full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {err}");
        assert!(
            err.contains(needle),
            "{full:?}: expected {needle:?} in {err}"
        );
        assert!(!err.contains("panicked"), "{full:?}: {err}");
    }
}
