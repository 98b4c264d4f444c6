//! The k-ary n-fly against [Pat81]'s recursion for unbuffered delta networks, and the
//! command line that measures it.

use crate::common;

use flitforge::delta::{self, PatelConfig};
use flitforge::shard::Jobs;

/// Every input sends one message at cycle 0 to a uniformly random output, no retry: the
/// delivered fraction of N = 1024 averaged over seeds is within 0.01 of Patel's value and
/// within a few standard errors of it, for radix 2 and 4.
#[test]
fn delivered_fraction_follows_patels_recursion() {
    let config = PatelConfig {
        sizes: vec![1024],
        radices: vec![2, 4],
        trials: 40,
        seed: 7,
    };
    let trials = delta::run_jobs(&config, &mut Jobs::all(0), &|_, _| {})
        .unwrap()
        .unwrap();
    let rows = delta::rows(&trials);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r.trials, 40);
        assert!(
            r.difference.abs() < 0.01 && r.z.abs() < 4.0,
            "k = {}: measured {} ± {}, Patel {}",
            r.radix,
            r.measured,
            r.std_error,
            r.predicted
        );
    }
}

/// The command: every message is either delivered or dropped, none retried.
#[test]
fn the_unbuffered_run_from_the_command_line() {
    let out = common::flitforge(&[
        "sim",
        "--topology",
        "kary-fly",
        "--radix",
        "2",
        "--inputs",
        "1024",
        "--mode",
        "drop",
        "--vcs",
        "1",
        "--flits",
        "1",
        "--traffic",
        "uniform",
        "--q",
        "1",
        "--max-attempts",
        "1",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &report["messages"];
    let delivered = m["delivered"].as_u64().unwrap();
    assert_eq!(delivered + m["dropped"].as_u64().unwrap(), 1024);
    assert_eq!(report["details"]["retried"], 0);
    let fraction = delivered as f64 / 1024.0;
    assert!((fraction - delta::patel(2, 10)).abs() < 0.05, "{fraction}");
}

/// `--radix` belongs to the k-ary n-fly, and its sizes are powers of the radix.
#[test]
fn bad_radix_and_sizes_are_refused() {
    for (args, names) in [
        (&["--topology", "kary-fly", "--radix", "3"][..], "radix"),
        (
            &["--topology", "kary-fly", "--radix", "4", "--inputs", "32"][..],
            "inputs",
        ),
        (&["--topology", "butterfly", "--radix", "4"][..], "radix"),
    ] {
        let mut full = vec!["sim"];
        full.extend(args);
        let out = common::flitforge(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

/// `experiment patel` writes its table, CSV, JSON and chart.
#[test]
fn experiment_writes_its_files() {
    let dir = std::path::PathBuf::from(common::temp("kary-fly", "patel"));
    let _ = std::fs::remove_dir_all(&dir);
    let out = common::flitforge(&[
        "experiment",
        "patel",
        "--sizes",
        "16,64",
        "--trials",
        "5",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["patel.md", "patel.csv", "patel.json", "patel.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.join("patel.csv")).unwrap();
    // radix 2: 16, 64; radix 4: 16, 64.
    assert_eq!(csv.lines().count(), 5, "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}
