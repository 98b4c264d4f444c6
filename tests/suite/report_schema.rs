//! One report schema: every topology's `sim --json -` (and `sort --json -`) has the common
//! keys of docs/report-schema.md at the documented paths with the documented types, and its
//! topology's `details` keys; a report's `config` re-runs to a byte-identical report.

use crate::common;

use common::{flitforge, temp, text};
use serde_json::Value;

/// Every topology `sim` takes, with a small size it accepts.
const TOPOLOGIES: &[(&str, &str)] = &[
    ("butterfly", "16"),
    ("dilated", "16"),
    ("splitter", "16"),
    ("benes", "16"),
    ("kary-fly", "16"),
    ("doubled-butterfly", "16"),
    ("mesh", "16"),
    ("random-graph", "16"),
    ("pruned-butterfly", "16"),
    ("sorting-fat-tree", "16"),
];

/// The `(path, type)` rows of the table under `heading` in docs/report-schema.md.
fn documented(heading: &str) -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/report-schema.md"
    ))
    .unwrap();
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} missing"));
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string())
        })
        .collect()
}

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, key| v.get(key))
}

fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "integer" => v.is_u64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "object" => v.is_object(),
        "object or null" => v.is_object() || v.is_null(),
        "array" => v.is_array(),
        _ => panic!("undocumented type {ty}"),
    }
}

fn check(report: &Value, heading: &str, skip: &[&str]) {
    for (path, ty) in documented(heading) {
        if skip.contains(&path.as_str()) {
            continue;
        }
        let v = lookup(report, &path)
            .unwrap_or_else(|| panic!("{}: {path} missing ({heading})", report["topology"]));
        assert!(
            has_type(v, &ty),
            "{}: {path} = {v} is not {ty}",
            report["topology"]
        );
    }
}

fn report(args: &[&str]) -> Value {
    let o = flitforge(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn every_topology_reports_the_documented_common_keys_and_details() {
    for &(topology, inputs) in TOPOLOGIES {
        let mut args = vec!["sim", "--topology", topology, "--inputs", inputs];
        if matches!(topology, "mesh" | "random-graph") {
            // Cyclic networks run under registered back-pressure only.
            args.extend(["--backpressure", "registered"]);
        }
        let r = report(&[args.as_slice(), &["--json", "-"]].concat());
        check(&r, "## Common keys", &[]);
        assert_eq!(r["schema"], 1);
        assert_eq!(r["topology"], topology);
        assert_eq!(r["config"]["topology"], topology);
        assert_eq!(r["seed"], r["config"]["seed"]);
        assert_eq!(r["messages"]["delivered"], 16);
        let heading = match topology {
            "pruned-butterfly" => "### pruned-butterfly",
            "sorting-fat-tree" => "### sorting-fat-tree",
            _ => "### butterfly, dilated",
        };
        // Congestion and dilation: only where messages follow paths (graph networks).
        let graph = matches!(topology, "mesh" | "random-graph");
        let skip: &[&str] = if graph {
            &["details.per_message"]
        } else {
            &[
                "details.per_message",
                "details.congestion",
                "details.dilation",
            ]
        };
        check(&r, heading, skip);
        if !graph {
            assert!(r["details"].get("congestion").is_none(), "{topology}");
        }
    }
    let r = report(&["sort", "--r", "20", "--json", "-"]);
    check(&r, "## Common keys", &[]);
    check(&r, "### flexible-sorter", &[]);
    assert_eq!(r["topology"], "flexible-sorter");
    let r = report(&["sim", "--inputs", "8", "--per-message", "--json", "-"]);
    check(
        &r,
        "### butterfly, dilated",
        &["details.congestion", "details.dilation"],
    );
    let r = report(&["multibutterfly", "--inputs", "16", "--json", "-"]);
    check(&r, "## Common keys", &[]);
    check(&r, "### greedy routing", &[]);
    assert_eq!(r["topology"], "modified-splitter");
    assert_eq!(r["messages"]["delivered"], 16);
    let r = report(&[
        "multibutterfly",
        "--algorithm",
        "upfal",
        "--inputs",
        "16",
        "--json",
        "-",
    ]);
    check(&r, "## Common keys", &[]);
    check(&r, "### upfal routing", &[]);
    assert_eq!(r["config"]["algorithm"], "upfal");
}

#[test]
fn a_reports_config_reruns_to_the_same_report() {
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "sim",
            "--topology",
            "butterfly",
            "--inputs",
            "16",
            "--mode",
            "drop",
            "--vcs",
            "1",
        ],
        vec![
            "sim",
            "--topology",
            "dilated",
            "--inputs",
            "16",
            "--lane-choice",
            "random",
        ],
        vec![
            "sim",
            "--topology",
            "splitter",
            "--inputs",
            "16",
            "--dilation",
            "3",
        ],
        vec![
            "sim",
            "--topology",
            "benes",
            "--inputs",
            "16",
            "--middle",
            "3",
        ],
        vec![
            "sim",
            "--topology",
            "kary-fly",
            "--radix",
            "4",
            "--inputs",
            "64",
            "--mode",
            "drop",
        ],
        vec![
            "sim",
            "--topology",
            "pruned-butterfly",
            "--inputs",
            "16",
            "--engine",
            "golden",
        ],
        vec![
            "sim",
            "--topology",
            "sorting-fat-tree",
            "--inputs",
            "16",
            "--body-bits",
            "12",
        ],
        vec!["sort", "--s", "8", "--l", "32", "--r", "20", "--seed", "3"],
        vec![
            "multibutterfly",
            "--topology",
            "splitter",
            "--dilation",
            "3",
            "--inputs",
            "32",
            "--faults",
            "2",
            "--problem",
            "2T",
        ],
        vec![
            "multibutterfly",
            "--algorithm",
            "upfal",
            "--inputs",
            "16",
            "--permutations",
            "2",
        ],
    ];
    for (i, args) in runs.iter().enumerate() {
        let first = flitforge(&[args.as_slice(), &["--json", "-"]].concat());
        assert!(first.status.success(), "{args:?}: {}", text(&first.stderr));
        let v: Value = serde_json::from_slice(&first.stdout).unwrap();
        let config = temp("schema", &format!("config{i}.json"));
        std::fs::write(&config, v["config"].to_string()).unwrap();
        let again = flitforge(&[args[0], "--config", &config, "--json", "-"]);
        assert!(again.status.success(), "{args:?}: {}", text(&again.stderr));
        assert_eq!(text(&first.stdout), text(&again.stdout), "{args:?}");
    }
}

#[test]
fn flags_and_config_keys_without_effect_are_refused_and_never_recorded() {
    for (args, needle) in [
        (
            vec!["sim", "--dilation", "5"],
            "--dilation applies only with topology dilated",
        ),
        (
            vec!["sim", "--middle", "2"],
            "--middle applies only with topology benes",
        ),
        (
            vec!["sim", "--max-attempts", "3"],
            "--max-attempts applies only with mode drop",
        ),
        (
            vec!["sim", "--switch-queue", "3"],
            "--switch-queue applies only with mode store-forward",
        ),
        (
            vec!["sim", "--topology", "pruned-butterfly", "--vcs", "2"],
            "--vcs applies only",
        ),
        (
            vec!["sim", "--topology", "butterfly", "--body-bits", "9"],
            "--body-bits applies only",
        ),
        (vec!["sim", "--engine", "golden"], "--engine applies only"),
        (vec!["sim", "--rate", "0.5"], "--rate applies only"),
        (
            vec!["topology", "--alpha", "0.3"],
            "--alpha applies only with --topology splitter",
        ),
    ] {
        let o = flitforge(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(needle),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    let config = temp("schema", "inapplicable.toml");
    std::fs::write(&config, "topology = \"butterfly\"\ndilation = 4\n").unwrap();
    let o = flitforge(&["sim", "--config", &config]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("dilation"), "{}", text(&o.stderr));
    let r = report(&["sim", "--inputs", "8", "--json", "-"]);
    for key in [
        "dilation",
        "wiring",
        "lane_choice",
        "middle",
        "switch_queue",
        "max_attempts",
    ] {
        assert!(
            r["config"].get(key).is_none(),
            "a butterfly's config records {key}"
        );
    }
}
