//! `flitforge sort`, `rtl/cosim --circuit flexible-sorter`, `sim --topology sorting-fat-tree`
//! and the flexible-sorter experiment from the command line.

use crate::common;

use common::{flitforge, text};

fn temp(name: &str) -> String {
    common::temp("fscli", name)
}

#[test]
fn sort_writes_a_waveform_of_cells_loop_switches_omega_and_controller() {
    let vcd = temp("sort.vcd");
    let json = temp("sort.json");
    let o = flitforge(&[
        "sort", "--s", "8", "--l", "64", "--r", "32", "--bits", "8", "--seed", "1", "--vcd", &vcd,
        "--json", &json,
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("sorted r = 32 words in 3702 cycles (w = 4, 16 Columnsort phases)"),
        "{out}"
    );
    let v = std::fs::read_to_string(&vcd).unwrap();
    for signal in [
        " d_r0_c0 ",
        " x_r7_c7 ",
        " lg_w ",
        " o_k2_p7 ",
        " cross_k0_m3 ",
        " optr_k1 ",
        " state_name ",
        " sl_t5_n7 ",
    ] {
        assert!(v.contains(signal), "{signal} missing");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let output: Vec<u64> = serde_json::from_value(j["details"]["output"].clone()).unwrap();
    assert!(output.len() == 32 && output.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn rtl_writes_the_sorter_and_the_fat_tree_routes_a_permutation() {
    let dir = temp("fsrtl");
    let o = flitforge(&[
        "rtl",
        "--circuit",
        "flexible-sorter",
        "--s",
        "8",
        "--l",
        "64",
        "--bits",
        "8",
        "--out",
        &dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for f in ["ff_fsort.v", "tb.v", "flitforge.core", "stimulus.hex"] {
        assert!(std::path::Path::new(&dir).join(f).exists(), "{f}");
    }
    let o = flitforge(&[
        "sim",
        "--topology",
        "sorting-fat-tree",
        "--inputs",
        "1024",
        "--traffic",
        "random-permutation",
    ]);
    let out = text(&o.stdout);
    assert!(
        o.status.success() && out.contains("1024 messages, 1024 delivered"),
        "{out}{}",
        text(&o.stderr)
    );
    assert!(out.contains("Theorem 3"), "{out}");
}

#[test]
fn experiment_writes_csv_and_charts() {
    let dir = temp("fsx");
    let o = flitforge(&[
        "experiment",
        "flexible-sorter",
        "--s",
        "8",
        "--l",
        "32",
        "--bits",
        "4",
        "--out",
        &dir,
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("fitted C"), "{out}");
    assert_eq!(
        std::fs::read_to_string(format!("{dir}/runs.csv"))
            .unwrap()
            .lines()
            .count(),
        1 + 4
    );
    assert!(
        std::fs::read_to_string(format!("{dir}/sorter-cycles.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let o = flitforge(&[
        "experiment",
        "sorting-fat-tree",
        "--sizes",
        "256,1024",
        "--trials",
        "1",
        "--out",
        &format!("{dir}-tree"),
    ]);
    assert!(
        o.status.success() && text(&o.stdout).contains("Theorem 3"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bad_sorter_input_is_a_clear_error() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["sort", "--s", "6"], "invalid s = 6"),
        (vec!["sort", "--s", "8", "--l", "12"], "invalid l = 12"),
        (vec!["sort", "--s", "4", "--l", "8"], "(s, l)"),
        (vec!["sort", "--r", "65"], "invalid r = 65"),
        (vec!["sort", "--r", "0"], "invalid r = 0"),
        (vec!["sort", "--bits", "33"], "invalid bits = 33"),
        (vec!["rtl", "--s", "8"], "without --circuit flexible-sorter"),
        (
            vec!["sim", "--topology", "sorting-fat-tree", "--inputs", "12"],
            "inputs = 12",
        ),
        (
            vec!["sim", "--topology", "sorting-fat-tree", "--vcs", "2"],
            "invalid vcs",
        ),
        (
            vec!["cosim", "--topology", "sorting-fat-tree"],
            "message level",
        ),
    ];
    for (args, needle) in cases {
        let o = flitforge(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
    }
}
