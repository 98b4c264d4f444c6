//! `flitforge bench --against`: the Verilator comparison runs end to end on a small network
//! (the full grids are benchmarks, not tests), and BookSim needs its binary.

mod common;

use common::{flitforge, temp, text};

#[test]
fn against_verilator_smoke() {
    let out = temp("bench", "verilator");
    let o = flitforge(&[
        "bench",
        "--against",
        "verilator",
        "--inputs",
        "4",
        "--vcs",
        "1",
        "--rate",
        "0.1",
        "--cycles",
        "300",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(format!("{out}/bench.md")).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| 4 |")).collect();
    assert_eq!(rows.len(), 1, "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/bench.json")).unwrap())
            .unwrap();
    let row = &json["rows"][0];
    assert_eq!(row["other"]["cycles"], 300);
    assert_eq!(row["model"]["cycles"], 300);
    assert!(row["speedup"].as_f64().unwrap() > 0.0);
    // The RTL is the model cycle for cycle: the same accepted throughput.
    assert_eq!(row["model"]["accepted"], row["other"]["accepted"]);
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
