//! `flitforge bench --against`: the Verilator comparison runs end to end on a small network
//! (the full grids are benchmarks, not tests), BookSim needs its binary (a stand-in checks
//! what is read from it), and repeated runs report medians.

use crate::common;

use common::{flitforge, temp, text};

/// One point of `bench --against` (1 VC, rate 0.1, 300 cycles) written into `out`, with
/// `flags` naming the other simulator: its row of bench.json.
fn one_point(flags: &[&str], out: &str) -> serde_json::Value {
    let mut args = vec![
        "bench", "--vcs", "1", "--rate", "0.1", "--cycles", "300", "--out", out,
    ];
    args.extend_from_slice(flags);
    let o = flitforge(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/bench.json")).unwrap())
            .unwrap();
    json["rows"][0].clone()
}

#[test]
fn against_verilator_smoke() {
    let out = temp("bench", "verilator");
    let row = one_point(
        &["--against", "verilator", "--inputs", "4", "--repeat", "2"],
        &out,
    );
    let md = std::fs::read_to_string(format!("{out}/bench.md")).unwrap();
    assert!(md.contains("median of 2 runs per side"), "{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| 4 |")).collect();
    assert_eq!(rows.len(), 1, "{md}");
    assert_eq!(row["other"]["cycles"], 300);
    assert_eq!(row["model"]["cycles"], 300);
    assert!(row["speedup"].as_f64().unwrap() > 0.0);
    // The RTL is the model cycle for cycle: the same accepted throughput.
    assert_eq!(row["model"]["accepted"], row["other"]["accepted"]);
    for side in ["model", "other"] {
        assert_eq!(row[side]["runs"].as_array().unwrap().len(), 2, "{row}");
    }
}

/// BookSim's figures are read from its output, run by run: a stand-in binary that prints the
/// lines BookSim2 prints checks the configuration written, the parsing and the medians.
#[test]
fn against_booksim_reads_its_figures() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("bench", "fake-booksim");
    std::fs::create_dir_all(&dir).unwrap();
    let fake = format!("{dir}/booksim");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         grep -q 'n = 4;' \"$1\" || exit 9\n\
         echo 'Time taken is 400 cycles'\n\
         echo 'Accepted flit rate average= 0.05 (1 samples)'\n\
         echo 'Total run time 0.25'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = format!("{dir}/out");
    let flags = ["--against", "booksim", "--booksim", &fake, "--inputs", "16"];
    let row = one_point(&[&flags[..], &["--repeat", "3"]].concat(), &out);
    assert_eq!(row["other"]["cycles"], 400);
    assert_eq!(row["other"]["cycles_per_second"], 1600.0);
    assert_eq!(
        row["other"]["runs"],
        serde_json::json!([1600.0, 1600.0, 1600.0])
    );
    assert_eq!(row["other"]["accepted"], 0.05);
    assert_eq!(row["model"]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(row["model"]["cycles"], 300);
    let cfg = std::fs::read_to_string(format!("{out}/b1-rate0.1/booksim.cfg")).unwrap();
    assert!(cfg.lines().any(|l| l == "injection_rate = 0.1;"), "{cfg}");
}

/// `bench args` exits 2 naming `what`; returns its output.
fn refused(args: &[&str], what: &str) -> std::process::Output {
    let o = flitforge(&[&["bench"], args].concat());
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    assert!(text(&o.stderr).contains(what), "{}", text(&o.stderr));
    o
}

#[test]
fn repeat_and_thread_lists_are_checked() {
    refused(&["--repeat", "0"], "repeat = 0");
    // A bad count is refused before the first run.
    let o = refused(
        &["--threads", "1,2000", "--cycles", "1000000"],
        "threads = 2000",
    );
    assert!(!text(&o.stdout).contains("bench:"), "{}", text(&o.stdout));
    refused(
        &["--against", "verilator", "--threads", "1,2"],
        "threads = 1,2",
    );
    // Thread counts alternate, and each gets its median and the speed-up over the first.
    let o = flitforge(&[
        "bench",
        "--inputs",
        "256",
        "--cycles",
        "20",
        "--threads",
        "1,2",
        "--repeat",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().filter(|l| l.contains("x 20 cycles")).count(),
        4,
        "{out}"
    );
    assert!(out.contains("median of 2 runs on 2 threads"), "{out}");
    assert!(out.contains("the speed on 1 thread"), "{out}");
    // The two threads' round trip, on their runs and their summary only (where they have a
    // core each).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("round trip between cores"))
            .count(),
        if cores >= 2 { 3 } else { 0 },
        "{out}"
    );
}

#[test]
fn against_booksim_needs_its_binary() {
    let o = flitforge(&[
        "bench",
        "--against",
        "booksim",
        "--out",
        &temp("bench", "b"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("BookSim2 binary"),
        "{}",
        text(&o.stderr)
    );
    let o = flitforge(&["bench", "--booksim", "/bin/true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("only with --against"),
        "{}",
        text(&o.stderr)
    );
}
