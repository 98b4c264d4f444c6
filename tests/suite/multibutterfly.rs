//! Multibutterflies ([LM]) from the command line and the library: the Leighton–Maggs
//! experiments, fault scaling, one greedy or Upfal routing, fault placement, and the errors for
//! bad values.

use crate::common;
use flitforge::multibutterfly::experiment::{LeightonMaggsConfig, Row, leighton_maggs};

use common::{flitforge, text};

fn temp(name: &str) -> String {
    common::temp("mb", name)
}

fn read(dir: &str, file: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(dir).join(file))
        .unwrap_or_else(|e| panic!("{dir}/{file}: {e}"))
}

#[test]
fn leighton_maggs_writes_the_three_tables_independent_of_threads() {
    let run = |threads: &str| {
        let dir = temp(&format!("lm{threads}"));
        let o = flitforge(&[
            "experiment",
            "leighton-maggs",
            "--inputs",
            "64",
            "--trials",
            "5",
            "--table1-trials",
            "30",
            "--faults",
            "0,20",
            "--table1-faults",
            "20,80",
            "--seed",
            "7",
            "--threads",
            threads,
            "--out",
            &dir,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        dir
    };
    let (one, two) = (run("1"), run("2"));
    for file in [
        "tables.md",
        "table1.csv",
        "table2.csv",
        "table3.csv",
        "trials.csv",
        "completion-vs-faults.svg",
        "summary.json",
    ] {
        assert_eq!(
            read(&one, file),
            read(&two, file),
            "{file} depends on threads"
        );
    }
    let md = read(&one, "tables.md");
    for needle in [
        "## Table I",
        "## Table II",
        "## Table III",
        "| 0 (nor) |",
        "| 0 (dil) |",
        "| 0 |",
        "| 20* |",
        "| 80* |",
        "equal in every trial: yes",
    ] {
        assert!(md.contains(needle), "{needle} missing:\n{md}");
    }
    let t2 = read(&one, "table2.csv");
    assert!(t2.starts_with("network,trials,1,sigma_1,10,sigma_10,1T,sigma_1T,10T,sigma_10T\n"));
    assert_eq!(t2.lines().count(), 1 + 5);
    assert_eq!(read(&one, "trials.csv").lines().count(), 1 + 5 * 5);
    assert!(read(&one, "summary.json").contains("\"deterministic_cells_equal\": true"));
}

#[test]
fn table_one_can_be_skipped_and_front_levels_chosen() {
    let dir = temp("lm-skip");
    let o = flitforge(&[
        "experiment",
        "leighton-maggs",
        "--inputs",
        "64",
        "--trials",
        "2",
        "--table1-trials",
        "0",
        "--faults",
        "5",
        "--out",
        &dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = read(&dir, "tables.md");
    assert!(!md.contains("Table I ") && md.contains("| 5* |"), "{md}");
    assert!(!std::path::Path::new(&dir).join("table1.csv").exists());
    let o = flitforge(&[
        "multibutterfly",
        "--algorithm",
        "upfal",
        "--inputs",
        "64",
        "--dilation",
        "3",
        "--permutations",
        "3",
        "--front",
        "matchings",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("192 packets in"));
}

#[test]
fn transpose_is_deterministic_on_the_1024_input_butterflies() {
    // The butterfly and dilated rows have no randomness in their network or in 1T/10T: every
    // trial must give the same completion time and the same circuit-switching percentage.
    let config = LeightonMaggsConfig {
        trials: 3,
        table1_trials: 0,
        faults: vec![],
        table1_faults: vec![],
        ..LeightonMaggsConfig::default()
    };
    let t = leighton_maggs(&config, &|_, _| {}).unwrap();
    assert!(t.deterministic_cells_equal);
    assert_eq!(t.rows, [Row::Butterfly, Row::Dilated, Row::Splitter]);
    for r in 0..2 {
        for p in [2, 3] {
            assert_eq!(t.completion(r, p).sigma, 0.0);
        }
    }
    // The transpose is the butterflies' worst case; the random splitter network is immune.
    let (nor, dil, random) = (t.completion(0, 3), t.completion(1, 3), t.completion(2, 3));
    assert!(
        nor.mean > dil.mean && dil.mean > 4.0 * random.mean,
        "{nor:?} {dil:?} {random:?}"
    );
}

#[test]
fn fault_tolerance_compares_with_n_log_n_to_the_three_quarters() {
    let dir = temp("ft");
    let o = flitforge(&[
        "experiment",
        "fault-tolerance",
        "--sizes",
        "64,256",
        "--trials",
        "6",
        "--out",
        &dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = read(&dir, "fault-tolerance.csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(2).unwrap().starts_with("256,6,"));
    assert!(read(&dir, "fault-tolerance.svg").contains("(N lg N)^(3/4)"));
    assert!(text(&o.stdout).contains("| 64 |"));
}

#[test]
fn one_greedy_routing_reports_completion_and_never_delayed() {
    let json = temp("route.json");
    let run: [&str; 11] = [
        "multibutterfly",
        "--topology",
        "modified-splitter",
        "--inputs",
        "256",
        "--faults",
        "30",
        "--problem",
        "10T",
        "--lane-choice",
        "least-loaded",
    ];
    let o = flitforge(&[&run[..], &["--json", &json]].concat());
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("problem 10T: 2560 packets"), "{out}");
    assert!(out.contains("faults: 30 placed"), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["messages"]["delivered"], 2560);
    assert!(j["makespan_cycles"].as_u64().unwrap() >= 8);
    // The same command again (without --json): the same bytes.
    assert_eq!(text(&flitforge(&run).stdout), out);
}

#[test]
fn upfal_routes_with_lemma_2_5_checked_and_potential_logged() {
    let json = temp("upfal.json");
    let o = flitforge(&[
        "multibutterfly",
        "--algorithm",
        "upfal",
        "--topology",
        "splitter",
        "--inputs",
        "128",
        "--dilation",
        "3",
        "--permutations",
        "2",
        "--json",
        &json,
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("256 packets in"), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(j["details"]["lemma_2_5_checks"].as_u64().unwrap() > 0);
    let potential = j["details"]["potential"].as_array().unwrap();
    assert!(potential.len() >= 2);
    assert_eq!(potential.last().unwrap().as_f64(), Some(0.0));
}

#[test]
fn faults_command_applies_either_rule_set() {
    let o = flitforge(&[
        "faults", "--inputs", "1024", "--faults", "1000", "--seed", "3",
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("1000 faults placed"), "{out}");
    let o = flitforge(&[
        "faults",
        "--topology",
        "splitter",
        "--dilation",
        "5",
        "--inputs",
        "256",
        "--faults",
        "10",
        "--rules",
        "theory",
        "--alpha",
        "0.125",
        "--beta",
        "4",
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("Theorem 3.4: >="), "{out}");
}

#[test]
fn bad_values_are_refused_with_the_allowed_range() {
    for (args, needle) in [
        (
            vec![
                "faults",
                "--topology",
                "splitter",
                "--dilation",
                "5",
                "--rules",
                "theory",
                "--beta",
                "2",
            ],
            "invalid beta = 2: expected 3 < beta <= d = 5",
        ),
        (
            vec!["multibutterfly", "--problem", "3X"],
            "invalid problem = 3X",
        ),
        (
            vec!["multibutterfly", "--interior", "0..12", "--faults", "3"],
            "invalid interior levels = 0..12: expected a range of levels within -1..8",
        ),
        (
            vec![
                "multibutterfly",
                "--topology",
                "modified-splitter",
                "--dilation",
                "3",
            ],
            "invalid dilation = 3: expected 2",
        ),
        (
            vec!["experiment", "leighton-maggs", "--trials", "0"],
            "invalid trials = 0: expected 1..=1000000",
        ),
        (
            vec![
                "experiment",
                "leighton-maggs",
                "--inputs",
                "64",
                "--faults",
                "321",
            ],
            "invalid faults = 321: expected 0..=320",
        ),
        (
            vec!["sim", "--topology", "modified-splitter"],
            "invalid value 'modified-splitter' for '--topology <TOPOLOGY>'",
        ),
        (
            vec![
                "multibutterfly",
                "--algorithm",
                "upfal",
                "--topology",
                "butterfly",
            ],
            "invalid topology = butterfly",
        ),
    ] {
        let o = flitforge(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
