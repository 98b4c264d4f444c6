//! The standard-cell flow's smoke test: one small circuit through yosys (OSU 0.18 µm
//! Liberty), OpenSTA and qflow's placer and router. Needs yosys, opensta, qflow and
//! qflow-tech-osu018 (scripts/test installs them); without them it fails with the install
//! command. The sweeps are `flitforge silicon` and `flitforge experiment vlsi`.

use crate::common;

use common::{flitforge, temp, text};

#[test]
fn a_small_sorter_is_synthesised_timed_placed_and_routed() {
    let out = temp("silicon", "fsort8");
    let _ = std::fs::remove_dir_all(&out);
    let args = [
        "silicon",
        "--circuit",
        "flexible-sorter",
        "--sizes",
        "8",
        "--bits",
        "2",
        "--place-route",
        "--out",
        &out,
    ];
    let o = flitforge(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(format!("{out}/silicon.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |name: &str| -> f64 {
        let i = header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        row[i]
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {:?}", row[i]))
    };
    assert_eq!(row[0], "flexible-sorter");
    assert!(get("cells") > 10.0 && get("flops") > 1.0);
    assert!(get("cell_area_um2") > 100.0);
    assert!(get("critical_path_ns") > 0.1 && get("critical_path_ns") < 100.0);
    assert!(get("die_area_um2") >= get("cell_area_um2"));
    assert!(get("wire_length_um") > 0.0);
    // A second run reads the cache instead of running the tools again.
    let again = flitforge(&args);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("cached"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(format!("{out}/silicon.csv")).unwrap(),
        csv
    );
}

#[test]
fn flags_without_effect_and_bad_sizes_are_refused() {
    for (args, needle) in [
        (
            vec!["silicon", "--circuit", "pruned-butterfly", "--vcs", "2"],
            "vcs",
        ),
        (
            vec!["silicon", "--circuit", "butterfly", "--bits", "4"],
            "bits",
        ),
        (
            vec!["silicon", "--circuit", "pruned-butterfly", "--sizes", "32"],
            "power of 4",
        ),
        (vec!["silicon", "--sizes", "1024"], "2 to 64"),
    ] {
        let o = flitforge(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(needle),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}
