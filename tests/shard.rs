//! Sharded experiments: `--shard K/N` runs, merged with `flitforge merge`, give the files of the
//! unsharded run byte for byte, whether the shards run one after another or under GNU parallel.

mod common;

use common::{flitforge, temp, text};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A small [LM] run: 64 inputs, two fault counts, a few trials per cell.
const LM: [&str; 12] = [
    "experiment",
    "leighton-maggs",
    "--inputs",
    "64",
    "--trials",
    "6",
    "--table1-trials",
    "10",
    "--faults",
    "0,4",
    "--table1-faults",
    "4,8",
];

fn files(dir: &str) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn run(args: &[&str]) {
    let o = flitforge(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
}

fn unsharded(name: &str) -> String {
    let full = temp("shard", name);
    run(&[&LM[..], &["--out", &full]].concat());
    full
}

fn merge(shards: &[String], name: &str) -> String {
    let merged = temp("shard", name);
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["--out", &merged]);
    run(&args);
    merged
}

#[test]
fn four_shards_merge_to_the_unsharded_files() {
    let full = unsharded("full");
    let shards: Vec<String> = (0..4)
        .map(|k| {
            let dir = temp("shard", &format!("s{k}"));
            run(&[&LM[..], &["--shard", &format!("{k}/4"), "--out", &dir]].concat());
            dir
        })
        .collect();
    // In any order.
    let reordered = [&shards[2], &shards[0], &shards[3], &shards[1]].map(|s| s.to_string());
    let merged = merge(&reordered, "merged");
    let (a, b) = (files(&full), files(&merged));
    assert!(a.contains_key("tables.md") && a.contains_key("trials.csv"));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(&b[name] == bytes, "{name} differs after the merge");
    }

    // Missing, repeated and foreign shards are refused (exit 2), naming the problem.
    let o = flitforge(&["merge", &shards[0], &shards[1], &shards[2]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("shard 3 is missing"),
        "{}",
        text(&o.stderr)
    );
    let o = flitforge(&["merge", &shards[0], &shards[0], &shards[1], &shards[2]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("given twice"),
        "{}",
        text(&o.stderr)
    );
    let other = temp("shard", "other");
    run(&[&LM[..], &["--seed", "2", "--shard", "3/4", "--out", &other]].concat());
    let o = flitforge(&["merge", &shards[0], &shards[1], &shards[2], &other]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("same run"), "{}", text(&o.stderr));
    for bad in ["4/4", "1/0", "one/4"] {
        let o = flitforge(&[&LM[..], &["--shard", bad]].concat());
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
        assert!(
            text(&o.stderr).contains("0 <= K < N"),
            "{}",
            text(&o.stderr)
        );
    }
}

/// The shards as independent processes under GNU parallel, two at a time.
#[test]
fn gnu_parallel_runs_the_shards() {
    let full = unsharded("full-parallel");
    let base = temp("shard", "parallel");
    let bin = env!("CARGO_BIN_EXE_flitforge");
    let command = format!("{bin} {} --shard {{}}/3 --out {base}-s{{}}", LM.join(" "));
    let status = Command::new("parallel")
        .args(["--jobs", "2", "--halt", "now,fail=1", &command, ":::", "0", "1", "2"])
        .status()
        .unwrap_or_else(|e| {
            panic!("GNU parallel is needed: apt-get install -y parallel (as root; scripts/test does it) [{e}]")
        });
    assert!(status.success());
    let shards: Vec<String> = (0..3).map(|k| format!("{base}-s{k}")).collect();
    assert!(Path::new(&shards[2]).join("shard.json").is_file());
    let merged = merge(&shards, "merged-parallel");
    assert_eq!(files(&full), files(&merged));
}

/// The other sharded commands go through the same merge: a pruned-butterfly sweep and a load
/// curve.
#[test]
fn pruned_butterfly_and_load_curve_shards_merge() {
    let cases: [(&str, Vec<&str>); 2] = [
        (
            "pb",
            vec![
                "experiment",
                "pruned-butterfly",
                "--sizes",
                "16,64",
                "--trials",
                "2",
            ],
        ),
        (
            "curve",
            vec![
                "sim",
                "--inputs",
                "16",
                "--cycles",
                "300",
                "--sweep",
                "0.05,0.1,0.2,0.4",
            ],
        ),
    ];
    for (name, args) in cases {
        let full = temp("shard", &format!("{name}-full"));
        run(&[&args[..], &["--out", &full]].concat());
        let shards: Vec<String> = (0..2)
            .map(|k| {
                let dir = temp("shard", &format!("{name}-s{k}"));
                run(&[&args[..], &["--shard", &format!("{k}/2"), "--out", &dir]].concat());
                dir
            })
            .collect();
        let merged = merge(&shards, &format!("{name}-merged"));
        assert_eq!(files(&full), files(&merged), "{name}");
    }
}
