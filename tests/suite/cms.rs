//! [CMS] on the switch model: no schedule beats the lower bound of Theorem 2.2.1, offline
//! schedules of multiplex at most B never block, and the commands write what `sim` replays.

use crate::common;

use common::{flitforge, temp, text};
use flitforge::cms::lower_bound;
use flitforge::cms::schedule::{self, RMode};

/// Theorem 2.2.1: on the instance, every policy's makespan is at least (L − D)·M/B — for all
/// at once, random releases, the naive, greedy-B and refined schedules and one at a time,
/// with L = 2D and with L = 3D.
#[test]
fn no_policy_beats_the_lower_bound() {
    for (b, c, d) in [(1, 2, 9), (1, 4, 7), (2, 3, 11), (2, 6, 5), (3, 4, 13)] {
        let lb = lower_bound::generate(b, c, d).unwrap();
        let p = &lb.problem;
        for flits in [2 * p.dilation(), 3 * p.dilation()] {
            let bound = lb.bound(flits);
            assert!(bound > 0.0);
            for seed in [1, 2] {
                for (name, releases) in lower_bound::policies(p, b, flits, seed).unwrap() {
                    let out = p.simulate(p.config(b, flits), &releases).unwrap();
                    assert!(
                        out.makespan as f64 >= bound,
                        "B = {b}, C = {c}, D = {d}, L = {flits}: {name} took {} < {bound}",
                        out.makespan
                    );
                    assert_eq!(out.delivered, p.messages() as u64);
                }
            }
        }
    }
}

/// On the instance, any B + 1 messages share a link, so a refined schedule has classes of at
/// most B base messages' copies... and it never blocks.
#[test]
fn refined_schedules_on_the_lower_bound_instance_never_block() {
    let lb = lower_bound::generate(2, 6, 11).unwrap();
    let p = &lb.problem;
    let flits = 2 * p.dilation();
    for mode in [RMode::Adaptive, RMode::Paper] {
        let s = schedule::refine(p, 2, mode, 7).unwrap();
        assert!(s.multiplex <= 2);
        let out = p
            .simulate(p.config(2, flits), &s.releases(flits, p.dilation()))
            .unwrap();
        assert_eq!((out.blocked, out.slowed), (0, 0), "{mode:?}");
        assert_eq!(out.makespan, s.length(flits, p.dilation()));
    }
}

#[test]
fn the_commands_write_what_sim_replays() {
    let lb = temp("cms", "lb");
    let o = flitforge(&[
        "cms",
        "lower-bound",
        "--vcs",
        "2",
        "--congestion",
        "3",
        "--dilation",
        "5",
        "--out",
        &lb,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("(L - D)·M/B = "));
    let sched = temp("cms", "sched");
    let graph = format!("{lb}/graph.json");
    let o = flitforge(&[
        "cms",
        "schedule",
        "--graph",
        &graph,
        "--paths",
        &format!("{lb}/paths.json"),
        "--vcs",
        "2",
        "--flits",
        "6",
        "--out",
        &sched,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("0 worms blocked"));
    let o = flitforge(&[
        "sim",
        "--topology",
        "graph",
        "--graph",
        &graph,
        "--paths",
        &format!("{sched}/paths.json"),
        "--vcs",
        "2",
        "--flits",
        "6",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["details"]["stalled_cycles"], 0);
    assert_eq!(r["details"]["congestion"], 3);
    assert_eq!(r["details"]["dilation"], 5);
    let o = flitforge(&[
        "cms",
        "butterfly",
        "--inputs",
        "16",
        "--q",
        "2",
        "--flits",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("all 32 messages delivered"));
    // Bad input: exit 2 naming the value and the range.
    let o = flitforge(&[
        "cms",
        "lower-bound",
        "--vcs",
        "2",
        "--congestion",
        "4",
        "--out",
        &lb,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("a multiple of B + 1 = 3"));
    let o = flitforge(&["cms", "butterfly", "--inputs", "12"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The experiment writes its tables, charts and summary, the same bytes on one thread and on
/// two.
#[test]
fn the_experiment_writes_every_table_whatever_the_threads() {
    let one = temp("cms", "exp1");
    let two = temp("cms", "exp2");
    for (dir, threads) in [(&one, "1"), (&two, "2")] {
        let o = flitforge(&[
            "experiment",
            "cole-maggs-sitaraman",
            "--trials",
            "1",
            "--vcs",
            "1,2",
            "--max-inputs",
            "64",
            "--threads",
            threads,
            "--out",
            dir,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    for f in [
        "cole-maggs-sitaraman.md",
        "offline.csv",
        "lower-bound.csv",
        "speed-up.csv",
        "vct.csv",
        "butterfly.csv",
        "survivors.csv",
        "summary.json",
        "offline.svg",
        "lower-bound.svg",
        "speed-up.svg",
        "butterfly.svg",
        "survivors.svg",
    ] {
        let a = std::fs::read(format!("{one}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
        let b = std::fs::read(format!("{two}/{f}")).unwrap();
        assert!(a == b, "{f} differs between 1 and 2 threads");
    }
}
