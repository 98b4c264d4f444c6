//! SIGINT and SIGTERM: an interrupted co-simulation leaves no simulator running and no
//! temporary directory, and exits 130; an interrupted experiment keeps the trials it finished,
//! and `--resume` completes it into files byte-identical to an uninterrupted run.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("flitforge-interrupt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn start(dir: &Path, tmp: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_flitforge"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start flitforge")
}

/// Processes whose working directory is inside `dir`.
fn working_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cwd = entry.path().join("cwd");
        if let Ok(target) = std::fs::read_link(&cwd)
            && target.starts_with(dir)
        {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            found.push(format!(
                "{} {}",
                entry.file_name().to_string_lossy(),
                comm.trim()
            ));
        }
    }
    found
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < limit,
            "{what} did not happen in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_interrupted_cosim_leaves_no_child_and_no_temporary_directory() {
    let dir = scratch("cosim");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = start(
        &dir,
        &tmp,
        &["cosim", "--inputs", "16", "--simulator", "verilator"],
    );
    // Interrupt once the simulator is at work in its temporary directory.
    wait_for(
        "a simulator in the temporary directory",
        Duration::from_secs(120),
        || !working_in(&tmp).is_empty(),
    );
    signal(&child, "-INT");
    let out = child.wait_with_output_timeout();
    assert_eq!(out.0, Some(130), "{}", out.1);
    assert!(out.1.contains("interrupted by SIGINT"), "{}", out.1);
    assert_eq!(
        working_in(&tmp),
        Vec::<String>::new(),
        "processes left behind"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_experiment_resumes_to_identical_files() {
    let dir = scratch("resume");
    let args = |out: &str| {
        vec![
            "experiment".to_string(),
            "leighton-maggs".into(),
            "--trials".into(),
            "40".into(),
            "--table1-trials".into(),
            "100".into(),
            "--threads".into(),
            "2".into(),
            "--out".into(),
            out.into(),
        ]
    };
    let run = |a: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_flitforge"))
            .args(a)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    assert!(run(&args("whole")).status.success());
    // Interrupted once the first batch is saved, then resumed.
    let a: Vec<String> = args("parts");
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut child = start(&dir, &std::env::temp_dir(), &refs);
    let checkpoint = dir.join("parts/.flitforge-checkpoint.json");
    wait_for("a checkpoint", Duration::from_secs(300), || {
        checkpoint.exists()
    });
    signal(&child, "-TERM");
    let (code, err) = child.wait_with_output_timeout();
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("--resume"), "{err}");
    assert!(checkpoint.exists());
    // The same run spelled otherwise: options in another order, `--trials=40`, a default
    // given.
    let resumed: Vec<String> = [
        "experiment",
        "leighton-maggs",
        "--resume",
        "--out",
        "parts",
        "--table1-trials",
        "100",
        "--trials=40",
        "--threads",
        "2",
        "--seed",
        "1",
    ]
    .map(String::from)
    .into();
    let out = run(&resumed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !checkpoint.exists(),
        "the checkpoint is removed once complete"
    );
    let names = |d: &str| {
        let mut v: Vec<String> = std::fs::read_dir(dir.join(d))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names("whole"), names("parts"));
    for name in names("whole") {
        assert!(
            std::fs::read(dir.join("whole").join(&name)).unwrap()
                == std::fs::read(dir.join("parts").join(&name)).unwrap(),
            "{name} differs after resuming"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

trait WaitTimeout {
    /// Waits (at most 60 s) and returns the exit code and standard error.
    fn wait_with_output_timeout(&mut self) -> (Option<i32>, String);
}

impl WaitTimeout for Child {
    fn wait_with_output_timeout(&mut self) -> (Option<i32>, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut e) = self.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                return (status.code(), err);
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = self.kill();
                panic!("no exit 60 s after the signal");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
