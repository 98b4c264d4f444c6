//! `flitforge` on the pruned butterfly: the "done when" run, byte-stable JSON and waveforms,
//! the experiment's files, and clear errors for flags and values it does not take.

use crate::common;

use common::{flitforge, text};

fn temp(name: &str) -> String {
    common::temp("pbcli", name)
}

const DONE_WHEN: [&str; 9] = [
    "sim",
    "--topology",
    "pruned-butterfly",
    "--inputs",
    "256",
    "--traffic",
    "random-permutation",
    "--seed",
    "1",
];

#[test]
fn sim_256_random_permutation_delivers_all_and_reports_sidetracks_and_stages() {
    let json = temp("pb256.json");
    let mut args = DONE_WHEN.to_vec();
    args.extend(["--json", &json]);
    let o = flitforge(&args);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("256 messages, 256 delivered"), "{out}");
    assert!(
        out.contains("sidetracked") && out.contains("8 stages"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["details"];
    assert_eq!(v["messages"]["delivered"], 256);
    assert_eq!(r["stages"], 8);
    assert_eq!(r["per_stage"].as_array().map(Vec::len), Some(8));
    assert!(r["sidetracked"].is_u64() && v["makespan_cycles"].as_u64() > Some(0));
    assert_eq!(
        (
            r["lemma6_violations"].clone(),
            r["lemma7_violations"].clone()
        ),
        (0.into(), 0.into())
    );
    assert_eq!(v["seed"], 1);
    assert_eq!(v["config"]["inputs"], 256);
}

#[test]
fn same_seed_gives_byte_identical_json_and_waveforms() {
    // The files name the command line, so both runs write the same paths.
    let (json, vcd) = (temp("same.json"), temp("same.vcd"));
    let mut files = Vec::new();
    for _ in 0..2 {
        let o = flitforge(&[
            "sim",
            "--topology",
            "pruned-butterfly",
            "--inputs",
            "16",
            "--traffic",
            "hot-region",
            "--region",
            "1",
            "--seed",
            "4",
            "--json",
            &json,
            "--vcd",
            &vcd,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        files.push((std::fs::read(&json).unwrap(), std::fs::read(&vcd).unwrap()));
    }
    assert!(files[0].0 == files[1].0, "the two JSON files differ");
    assert!(files[0].1 == files[1].1, "the two waveforms differ");
    let vcd = text(&files[0].1);
    assert!(
        vcd.contains(" dir $end") && vcd.contains("l3_n7_k1"),
        "direction bits dumped"
    );
}

#[test]
fn experiment_writes_csv_charts_and_a_fit() {
    let dir = temp("experiment");
    let o = flitforge(&[
        "experiment",
        "pruned-butterfly",
        "--sizes",
        "16,64",
        "--trials",
        "1",
        "--out",
        &dir,
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("fit: T = "), "{out}");
    let csv = std::fs::read_to_string(format!("{dir}/runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 8, "{csv}");
    for svg in ["time-vs-load.svg", "ratio-vs-n.svg"] {
        let s = std::fs::read_to_string(format!("{dir}/{svg}")).unwrap();
        assert!(s.starts_with("<svg") && s.contains("N = 64") || s.contains("hot-region-16"));
    }
}

#[test]
fn bad_input_is_a_clear_error_with_exit_code_2() {
    let pb = ["--topology", "pruned-butterfly"];
    let unwritten = temp("unwritten.vcd");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--inputs", "32"], "power of 4"),
        (vec!["--inputs", "4"], "inputs = 4"),
        (
            vec!["--traffic", "bernoulli", "--rate", "0.1"],
            "batch pattern",
        ),
        (vec!["--vcs", "2"], "invalid vcs"),
        (vec!["--mode", "drop"], "invalid mode"),
        (
            vec![
                "--traffic",
                "hot-region",
                "--region",
                "99",
                "--inputs",
                "64",
            ],
            "region = 99",
        ),
        (vec!["--body-bits", "0"], "body-bits = 0"),
        (vec!["--body-bits", "3", "--inputs", "16"], "at most 2^3"),
        (
            vec!["--engine", "golden", "--vcd", &unwritten],
            "engine = golden",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["sim"];
        full.extend(pb);
        full.extend(args.iter().copied());
        let o = flitforge(&full);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {err}");
        assert!(
            err.contains(needle),
            "{full:?}: expected {needle:?} in {err}"
        );
    }
    assert!(
        !std::path::Path::new(&unwritten).exists(),
        "a refused waveform leaves no file"
    );
    let o = flitforge(&["sim", "--engine", "golden"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("only with --topology pruned-butterfly"));
}
