//! The universal continuous-routing protocols of [SV]: the commands' reports, their refusals
//! of bad input, and the experiment's tables, the same bytes on any number of threads and
//! when run as shards.

use crate::common;

use common::{flitforge, temp, text};

#[test]
fn growing_rank_reports_a_stable_run_as_json() {
    let o = flitforge(&[
        "universal",
        "growing-rank",
        "--topology",
        "mesh",
        "--inputs",
        "16",
        "--load",
        "0.3",
        "--window",
        "2000",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let out = &v["outcome"];
    assert_eq!(out["stability"]["stable"], true, "{v:#}");
    assert_eq!(out["measured"], out["delivered_measured"]);
    // Theorem 2.4's (m, K) for λ = 0.3
    assert_eq!(v["params"]["m"], 64);
    assert_eq!(v["params"]["k"], 1024);
    assert!(out["latency"]["mean"].as_f64().unwrap() >= 1.0);
    assert!(text(&o.stderr).contains("stable"));
}

#[test]
fn an_overloaded_wormhole_run_is_reported_unstable_at_the_windows_end() {
    let o = flitforge(&[
        "universal",
        "trial",
        "--topology",
        "butterfly",
        "--inputs",
        "16",
        "--load",
        "0.2",
        "--bandwidth",
        "1",
        "--flits",
        "4",
        "--warmup",
        "500",
        "--window",
        "3000",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"]["stability"]["stable"], false, "{v:#}");
    assert_eq!(v["outcome"]["stability"]["reason"], "growing");
    assert!(v["outcome"]["cycles"].as_u64().unwrap() <= 3500);
    assert!(text(&o.stderr).contains("UNSTABLE (growing)"));
}

#[test]
fn bad_input_exits_2_naming_the_value_and_the_range() {
    for (args, expect) in [
        (vec!["--load", "0"], "invalid load = 0"),
        (vec!["--load", "0.1", "--inputs", "12"], "power of two"),
        (vec!["--load", "0.1", "--window", "5"], "invalid window = 5"),
        (vec!["--load", "100"], "a link load in (0, 32]"),
    ] {
        let mut full = vec!["universal", "growing-rank"];
        full.extend(args);
        let o = flitforge(&full);
        assert_eq!(o.status.code(), Some(2), "{full:?}");
        assert!(
            text(&o.stderr).contains(expect),
            "{full:?}: {}",
            text(&o.stderr)
        );
    }
}

const FILES: [&str; 10] = [
    "scheideler-voecking.md",
    "growing-rank.csv",
    "growing-rank-tail.csv",
    "growing-rank-tail.svg",
    "trial-failures.csv",
    "trial-threshold.csv",
    "recovery.csv",
    "growing-rank.svg",
    "trial-threshold.svg",
    "summary.json",
];

fn experiment(out: &str, extra: &[&str]) {
    let mut args = vec![
        "experiment",
        "scheideler-voecking",
        "--trials",
        "1",
        "--terminals",
        "16",
        "--window",
        "1000",
        "--bandwidths",
        "1,2",
        "--out",
        out,
    ];
    args.extend(extra);
    let o = flitforge(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn the_experiment_is_the_same_on_any_threads_and_as_shards() {
    let one = temp("universal", "one");
    let two = temp("universal", "two");
    experiment(&one, &["--threads", "1"]);
    experiment(&two, &["--threads", "2"]);
    let s0 = temp("universal", "s0");
    let s1 = temp("universal", "s1");
    experiment(&s0, &["--shard", "0/2"]);
    experiment(&s1, &["--shard", "1/2"]);
    let merged = temp("universal", "merged");
    let o = flitforge(&["merge", &s0, &s1, "--out", &merged]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for f in FILES {
        let a = std::fs::read(format!("{one}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
        for other in [&two, &merged] {
            let b = std::fs::read(format!("{other}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert!(a == b, "{f} differs in {other}");
        }
    }
    let md = std::fs::read_to_string(format!("{one}/scheideler-voecking.md")).unwrap();
    assert!(
        md.contains("[SV] Theorem 2.4") && md.contains("3/(2^B − 1)"),
        "{md}"
    );
    // the tail: P(T − D₀ > t) never grows with t, and no packet beats D₀
    let tail = std::fs::read_to_string(format!("{one}/growing-rank-tail.csv")).unwrap();
    let mut lines = tail.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first = header.iter().position(|h| h.contains("> 0)")).unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 4 * 3, "{tail}");
    for row in &rows {
        let p: Vec<f64> = row[first..first + 9]
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(p.windows(2).all(|w| w[1] <= w[0]) && p[0] <= 1.0, "{row:?}");
        let largest: f64 = row.last().unwrap().parse().unwrap();
        assert!(largest >= 1.0, "{row:?}");
    }
}

#[test]
fn the_cmsv_algorithms_deliver_every_message_and_report_their_rounds() {
    let o = flitforge(&[
        "universal",
        "algorithm1",
        "--topology",
        "mesh",
        "--inputs",
        "16",
        "--q",
        "2",
        "--bandwidth",
        "1",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rounds = v["run"]["rounds"].as_array().unwrap();
    let delivered: u64 = rounds
        .iter()
        .map(|r| r["delivered"].as_u64().unwrap())
        .sum();
    assert_eq!(delivered, 32);
    // round r sends 2^r copies of every undelivered packet (capped at round k)
    assert_eq!(rounds[0]["copies_each"], 1);
    // Theorem 1.7: every packet delivered; both passes counted
    let o = flitforge(&[
        "universal",
        "buffered",
        "--topology",
        "torus",
        "--inputs",
        "16",
        "--q",
        "4",
        "--buffers",
        "1",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sum = |k: &str| {
        v["run"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("delivered"), 64, "{v:#}");
    assert_eq!(
        v["run"]["makespan"].as_u64().unwrap(),
        2 * sum("pass_cycles")
    );
    // Theorem 1.8: one copy a round; round 0's steps last B' cycles
    let o = flitforge(&[
        "universal",
        "algorithm1",
        "--topology",
        "mesh",
        "--inputs",
        "16",
        "--q",
        "2",
        "--bandwidth",
        "2",
        "--store-and-forward",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &v["run"];
    let rounds = run["rounds"].as_array().unwrap();
    assert_eq!(
        rounds
            .iter()
            .map(|r| r["delivered"].as_u64().unwrap())
            .sum::<u64>(),
        32
    );
    assert!(rounds.iter().all(|r| r["copies_each"] == 1), "{v:#}");
    let first = 2 * (rounds[0]["delays"].as_u64().unwrap() + run["dilation"].as_u64().unwrap());
    assert_eq!(rounds[0]["cycles"].as_u64().unwrap(), 2 * first, "{v:#}");
    for (topology, extra) in [
        ("butterfly", vec!["--bandwidth", "2", "--flits", "4"]),
        (
            "butterfly",
            vec!["--bandwidth", "2", "--flits", "4", "--deterministic"],
        ),
        (
            "mesh",
            vec!["--bandwidth", "2", "--flits", "4", "--mesh-tailored"],
        ),
        ("torus", vec!["--buffers", "2"]),
    ] {
        let mut args = vec![
            "universal",
            "algorithm2",
            "--topology",
            topology,
            "--inputs",
            "16",
            "--q",
            "4",
            "--json",
            "-",
        ];
        args.extend(extra);
        let o = flitforge(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let run = &v["run"];
        let delivered: u64 = run["delivered"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .sum();
        assert_eq!(delivered, 64, "{v:#}");
        assert!(run["makespan"].as_f64().unwrap() >= run["lower"].as_f64().unwrap());
    }
    let o = flitforge(&[
        "universal",
        "algorithm2",
        "--topology",
        "mesh",
        "--inputs",
        "16",
        "--deterministic",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--topology butterfly"),
        "{}",
        text(&o.stderr)
    );
    let o = flitforge(&[
        "universal",
        "algorithm2",
        "--topology",
        "torus",
        "--inputs",
        "16",
        "--mesh-tailored",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--topology mesh"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_cypher_experiment_is_the_same_on_any_threads() {
    let one = temp("universal", "cy1");
    let two = temp("universal", "cy2");
    for (dir, threads) in [(&one, "1"), (&two, "2")] {
        let o = flitforge(&[
            "experiment",
            "cypher",
            "--trials",
            "1",
            "--q",
            "1",
            "--bandwidths",
            "1,2",
            "--threads",
            threads,
            "--out",
            dir,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    for f in [
        "cypher.md",
        "algorithm1.csv",
        "algorithm2.csv",
        "butterfly.csv",
        "corollaries.csv",
        "one-phase.csv",
        "one-phase-capacity.csv",
        "theorem-1.7.csv",
        "theorem-1.8.csv",
        "corollary-1.4.csv",
        "algorithm2.svg",
        "corollaries.svg",
        "one-phase.svg",
        "summary.json",
    ] {
        let a = std::fs::read(format!("{one}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
        let b = std::fs::read(format!("{two}/{f}")).unwrap();
        assert!(a == b, "{f} differs between 1 and 2 threads");
    }
}

#[test]
fn the_protocols_state_is_written_as_a_waveform() {
    for (protocol, extra, signals) in [
        (
            "trial",
            vec!["--bandwidth", "2", "--flits", "4", "--load", "0.02"],
            vec!["lane1_rank", "lane0_ack", "cut", "live", "stacked"],
        ),
        (
            "growing-rank",
            vec!["--load", "0.4", "--overflow-stacks"],
            vec!["queue", "sent_rank", "sent_packet", "stack"],
        ),
    ] {
        let vcd = temp("universal", &format!("{protocol}.vcd"));
        let mut args = vec![
            "universal",
            protocol,
            "--topology",
            "butterfly",
            "--inputs",
            "8",
            "--warmup",
            "50",
            "--window",
            "200",
            "--drain",
            "200",
            "--vcd",
            &vcd,
        ];
        args.extend(extra);
        let o = flitforge(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let wave = std::fs::read_to_string(&vcd).unwrap();
        // links are scoped by their switches; acknowledgement links have their own scopes
        assert!(
            wave.contains("$scope module l0_l0_c0_l1_c0 $end"),
            "{protocol}"
        );
        for s in signals {
            assert!(wave.contains(&format!(" {s} $end")), "{protocol}: {s}");
        }
        if protocol == "trial" {
            assert!(wave.contains("$scope module ack"), "acknowledgement links");
        }
        // cycles commit at 10c + 15 ns
        assert!(wave.contains("\n#15\n"), "{protocol}");
    }
    // [CMSV]'s forward passes: the winners' ids and ranks lane by lane, the cuts
    let vcd = temp("universal", "algorithm2.vcd");
    let o = flitforge(&[
        "universal",
        "algorithm2",
        "--topology",
        "butterfly",
        "--inputs",
        "8",
        "--q",
        "4",
        "--bandwidth",
        "2",
        "--flits",
        "4",
        "--vcd",
        &vcd,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let wave = std::fs::read_to_string(&vcd).unwrap();
    assert!(wave.contains("$scope module l0_l0_c0_l1_c0 $end"));
    for s in ["round", "pass_cycle", "lane0_worm", "lane1_rank", "cut"] {
        assert!(wave.contains(&format!(" {s} $end")), "algorithm2: {s}");
    }
    // Algorithm 1 (its copies carry no rank; Theorem 1.8 by steps) and Theorem 1.7 (a
    // buffer's occupancy), on the torus
    for (command, extra, has, lacks) in [
        (
            "algorithm1",
            vec!["--bandwidth", "1"],
            "lane0_worm",
            "lane0_rank",
        ),
        (
            "algorithm1",
            vec!["--bandwidth", "2", "--store-and-forward"],
            "lane1_worm",
            "held",
        ),
        ("buffered", vec!["--buffers", "1"], "held", "lane1_worm"),
    ] {
        let vcd = temp("universal", &format!("{command}-{}.vcd", extra.len()));
        let mut args = vec![
            "universal",
            command,
            "--topology",
            "torus",
            "--inputs",
            "16",
            "--q",
            "2",
            "--vcd",
            &vcd,
        ];
        args.extend(&extra);
        let o = flitforge(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let wave = std::fs::read_to_string(&vcd).unwrap();
        for s in ["round", "pass_cycle", "cut", has] {
            assert!(
                wave.contains(&format!(" {s} $end")),
                "{command} {extra:?}: {s}"
            );
        }
        assert!(
            !wave.contains(&format!(" {lacks} $end")),
            "{command}: {lacks}"
        );
        // the signal takes a value other than 0 on some link
        assert!(nonzero(&wave, has), "{command} {extra:?}: {has} stays 0");
    }
}

/// Whether some signal named `name` of `wave` takes a value other than 0.
fn nonzero(wave: &str, name: &str) -> bool {
    let codes: Vec<&str> = wave
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 6 && f[0] == "$var" && f[4] == name).then(|| f[3])
        })
        .collect();
    wave.lines().any(|l| {
        l.split_once(' ').is_some_and(|(v, code)| {
            v.starts_with('b') && v[1..].contains('1') && codes.contains(&code)
        })
    })
}

/// `universal rtl` runs Algorithm 1 in hardware round by round, acknowledgements deciding
/// each next round, and agrees with `universal algorithm1` on the same butterfly and seed.
#[test]
fn the_algorithm1_hardware_agrees_with_the_batch_run_round_by_round() {
    let common = [
        "--inputs",
        "8",
        "--q",
        "4",
        "--bandwidth",
        "1",
        "--seed",
        "5",
    ];
    let out = temp("universal", "alg1-rtl");
    let mut args = vec!["universal", "rtl", "--out", &out, "--force"];
    args.extend(common);
    let o = flitforge(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report = text(&o.stdout);
    let acknowledged: Vec<u64> = report
        .lines()
        .filter(|l| l.starts_with("round "))
        .map(|l| {
            let (_, tail) = l.split_once(" delivered, ").unwrap();
            tail.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect();
    for file in [
        "ff_cmsv_router.v",
        "ff_cmsv_last.v",
        "ff_cmsv_net.v",
        "tb.v",
    ] {
        assert!(std::path::Path::new(&out).join(file).exists(), "{file}");
    }
    let mut args = vec!["universal", "algorithm1", "--json", "-"];
    args.extend(common);
    let o = flitforge(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let delivered: Vec<u64> = v["run"]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["delivered"].as_u64().unwrap())
        .collect();
    assert_eq!(acknowledged, delivered, "{report}");
    assert!(delivered.len() > 1, "B = 1 needs later rounds");
    let _ = std::fs::remove_dir_all(&out);
    for (args, expect) in [
        (vec!["--bandwidth", "9"], "invalid bandwidth = 9"),
        (vec!["--q", "0"], "invalid q = 0"),
        (vec!["--alpha", "20"], "invalid alpha = 20"),
    ] {
        let mut full = vec!["universal", "rtl"];
        full.extend(args);
        let o = flitforge(&full);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(expect), "{}", text(&o.stderr));
    }
}
