//! Sharded experiments: `--shard K/N` runs, merged with `flitforge merge`, give the files of the
//! unsharded run byte for byte, whether the shards run one after another or under GNU parallel.

use crate::common;

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

/// Runs `args` as shards 0..n of n, into directories named `{name}{k}`.
fn shards(args: &[&str], n: usize, name: &str) -> Vec<String> {
    (0..n)
        .map(|k| {
            let dir = temp("shard", &format!("{name}{k}"));
            run(&[args, &["--shard", &format!("{k}/{n}"), "--out", &dir]].concat());
            dir
        })
        .collect()
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
    let shards = shards(&LM, 4, "s");
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
    // The same run spelled differently (options in another order, `--name=value`, a default
    // given) is one run.
    let respelled = temp("shard", "respelled");
    let mut args: Vec<String> = vec!["experiment".into(), "leighton-maggs".into()];
    for pair in LM[2..].chunks(2).rev() {
        args.push(format!("{}={}", pair[0], pair[1]));
    }
    args.extend(["--seed", "1", "--shard", "3/4", "--out", &respelled].map(String::from));
    run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let again = merge(
        &[&shards[0], &shards[1], &shards[2], &respelled].map(|s| s.to_string()),
        "merged-respelled",
    );
    assert!(
        files(&again) == b,
        "a respelled shard changed the merged files"
    );
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
        let shards = shards(&args, 2, &format!("{name}-s"));
        let merged = merge(&shards, &format!("{name}-merged"));
        assert_eq!(files(&full), files(&merged), "{name}");
    }
}

/// The rest of a sweep's configuration file.
const CURVE: &str = "cycles = 200\n[traffic]\npattern = \"bernoulli\"\nrate = 0.1\n";

/// A merge reads the shards' input files again: one changed since the shards ran is refused,
/// and so is an output directory that is one of the shards.
#[test]
fn a_merge_refuses_changed_inputs_and_writing_over_a_shard() {
    let config = format!("{}.toml", temp("shard", "curve-config"));
    std::fs::write(&config, format!("inputs = 16\n{CURVE}")).unwrap();
    let args = ["sim", "--config", &config, "--sweep", "0.1,0.2"];
    let shards = shards(&args, 2, "cfg-s");
    let o = flitforge(&["merge", &shards[0], &shards[1], "--out", &shards[0]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not one of the command's inputs"),
        "{}",
        text(&o.stderr)
    );
    assert!(Path::new(&shards[0]).join("shard.json").is_file());
    std::fs::write(&config, format!("inputs = 64\n{CURVE}")).unwrap();
    let merged = temp("shard", "cfg-merged");
    let o = flitforge(&["merge", &shards[0], &shards[1], "--out", &merged]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("contents differ"),
        "{}",
        text(&o.stderr)
    );
    std::fs::write(&config, format!("inputs = 16\n{CURVE}")).unwrap();
    let full = temp("shard", "cfg-full");
    run(&[&args[..], &["--out", &full]].concat());
    assert_eq!(files(&full), files(&merge(&shards, "cfg-merged")));
}

/// Slurm daemons of a one-node test cluster on localhost, killed when dropped.
struct Cluster {
    conf: String,
    daemons: Vec<std::process::Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in &mut self.daemons {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn need(program: &str) {
    if Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map_or(true, |o| !o.status.success())
    {
        panic!("{program} is needed: apt-get install -y slurm-wlm (as root; scripts/test does it)");
    }
}

/// slurmctld and slurmd on 127.0.0.1 with their own configuration, state and ports (no
/// munge: auth/none), as the user running the test.
fn cluster(name: &str) -> Cluster {
    for p in ["slurmctld", "slurmd", "sbatch", "squeue"] {
        need(p);
    }
    let root = temp("shard", name);
    for sub in ["state", "spool"] {
        std::fs::create_dir_all(format!("{root}/{sub}")).unwrap();
    }
    let host = text(&Command::new("hostname").arg("-s").output().unwrap().stdout)
        .trim()
        .to_string();
    let user = text(&Command::new("id").arg("-un").output().unwrap().stdout)
        .trim()
        .to_string();
    let port = 20_000 + (std::process::id() % 10_000) * 2;
    let conf = format!("{root}/slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=flitforge\nSlurmctldHost={host}(127.0.0.1)\nAuthType=auth/none\nCredType=cred/none\n\
             SlurmUser={user}\nSlurmdUser={user}\nStateSaveLocation={root}/state\nSlurmdSpoolDir={root}/spool\n\
             SlurmctldPidFile={root}/ctld.pid\nSlurmdPidFile={root}/d.pid\nSlurmctldPort={port}\nSlurmdPort={}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\nMpiDefault=none\n\
             JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             SlurmctldLogFile={root}/ctld.log\nSlurmdLogFile={root}/d.log\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN\n\
             PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            port + 1
        ),
    )
    .unwrap();
    let daemon = |program: &str| {
        Command::new(program)
            .args(["-D", "-f", &conf])
            .env("SLURM_CONF", &conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    Cluster {
        daemons: vec![daemon("slurmctld"), daemon("slurmd")],
        conf,
    }
}

/// A Slurm job array, one task per shard, on a one-node cluster brought up for the test.
#[test]
fn a_slurm_job_array_runs_the_shards() {
    let full = unsharded("full-slurm");
    let c = cluster("slurm");
    let base = temp("shard", "slurm-s");
    let script = format!("{base}.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} {} --shard \"$SLURM_ARRAY_TASK_ID/3\" --out \"{base}$SLURM_ARRAY_TASK_ID\"\n",
            env!("CARGO_BIN_EXE_flitforge"),
            LM.join(" ")
        ),
    )
    .unwrap();
    let sbatch = |args: &[&str]| {
        Command::new("sbatch")
            .args(args)
            .env("SLURM_CONF", &c.conf)
            .output()
            .unwrap()
    };
    // The controller takes a moment to come up and register the node.
    let start = std::time::Instant::now();
    let job = loop {
        let o = sbatch(&[
            "--parsable",
            "--array=0-2",
            &format!("--output={base}%a.log"),
            &script,
        ]);
        if o.status.success() {
            break text(&o.stdout).trim().to_string();
        }
        assert!(
            start.elapsed().as_secs() < 30,
            "sbatch: {}",
            text(&o.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-j", &job])
            .env("SLURM_CONF", &c.conf)
            .output()
            .unwrap();
        if q.status.success() && text(&q.stdout).trim().is_empty() {
            break;
        }
        assert!(start.elapsed().as_secs() < 120, "the array did not finish");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let shards: Vec<String> = (0..3).map(|k| format!("{base}{k}")).collect();
    for s in &shards {
        assert!(
            Path::new(s).join("shard.json").is_file(),
            "{s}: {}",
            std::fs::read_to_string(format!("{s}.log")).unwrap_or_default()
        );
    }
    let merged = merge(&shards, "merged-slurm");
    assert_eq!(files(&full), files(&merged));
}

/// A load curve from a configuration file that names no traffic (or cycles) is the one the
/// same flags give: the sweep's Bernoulli traffic, not the file defaults' permutation.
#[test]
fn a_sweep_of_a_config_file_without_traffic_is_the_flags_sweep() {
    let config = format!("{}.toml", temp("shard", "bare-config"));
    std::fs::write(&config, "inputs = 16\nvcs = 1\n").unwrap();
    let loads = ["--sweep", "0.05,0.2"];
    let from_file = temp("shard", "bare-from-file");
    run(&[
        &["sim", "--config", &config][..],
        &loads,
        &["--out", &from_file],
    ]
    .concat());
    let from_flags = temp("shard", "bare-from-flags");
    run(&[
        &["sim", "--inputs", "16", "--vcs", "1"][..],
        &loads,
        &["--out", &from_flags],
    ]
    .concat());
    assert_eq!(files(&from_file), files(&from_flags));
}
