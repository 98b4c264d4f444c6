//! The external tools flitforge drives, all from Debian packages: simulators (Icarus Verilog,
//! Verilator), synthesis (yosys), iCE40 place and route (nextpnr-ice40, icepack). A missing
//! tool is an exit-2 error naming the package to install. Every tool runs in its own process
//! group, killed with everything it started when SIGINT or SIGTERM stops flitforge
//! ([`crate::interrupt`]).

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The Debian package that provides `program`.
pub fn package_of(program: &str) -> &str {
    match program {
        "vvp" | "iverilog" => "iverilog",
        "icepack" | "icetime" | "icepll" => "fpga-icestorm",
        "sta" => "opensta",
        "graywolf" | "qrouter" => "qflow",
        p => p,
    }
}

/// The error for a tool that cannot be started.
fn missing(program: &str, e: std::io::Error) -> Error {
    let package = package_of(program);
    Error::invalid(
        "tool",
        program,
        format!(
            "an installed {package}: apt-get install -y {package} (as root; scripts/test does it) [{e}]"
        ),
    )
}

/// Runs `program` in `dir` and returns its output whatever its exit status. On SIGINT or
/// SIGTERM the program's process group is killed and the result is
/// [`Error::Interrupted`].
pub fn run(dir: &Path, program: &str, args: &[&str]) -> Result<Output> {
    crate::interrupt::check()?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            if program.starts_with("./") {
                Error::io(program, e)
            } else {
                missing(program, e)
            }
        })?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let _registered = crate::interrupt::Group::register(child.id() as i32);
    let mut poll = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(Error::io(program, e)),
        }
        if let Err(e) = crate::interrupt::check() {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            // Reaped first: an unreaped leader still counts as a member of its group.
            let _ = child.wait();
            kill_group(group);
            break Err(e);
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(20));
    };
    // The group may hold children the program left behind (a make's compilers).
    kill_group(group);
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok(Output {
        status: status?,
        stdout,
        stderr,
    })
}

/// Kills every process of `group` and waits (up to 2 s) until none is left.
fn kill_group(group: nix::unistd::Pid) {
    use nix::sys::signal::{Signal, killpg};
    if killpg(group, Signal::SIGKILL).is_err() {
        return;
    }
    for _ in 0..200 {
        if killpg(group, None).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `program` in `dir`; a non-zero exit is an error carrying its output. Returns stdout.
pub fn tool(dir: &Path, program: &str, args: &[&str]) -> Result<String> {
    let out = run(dir, program, args)?;
    if !out.status.success() {
        return Err(Error::tool_output(
            format!("{program} in {}", dir.display()),
            format!(
                "{}\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs yosys on `script` in `dir`, logging to `yosys.log`; a failure is an error with the
/// first lines yosys printed.
pub fn yosys(dir: &Path, script: &str) -> Result<()> {
    let out = run(dir, "yosys", &["-q", "-l", "yosys.log", "-p", script])?;
    if out.status.success() {
        return Ok(());
    }
    Err(Error::tool_output(
        format!("yosys in {} (see yosys.log)", dir.display()),
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .take(5)
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

/// Builds the testbench `tb` of `sources` in `dir` into `dir/obj/Vtb` with Verilator
/// (`--binary --timing`, two jobs), plus `flags` (`--trace` for a waveform, `-O3` for speed).
pub fn verilator_tb(dir: &Path, sources: &[&str], flags: &[&str]) -> Result<()> {
    let common = [
        "--binary",
        "--timing",
        "-j",
        "2",
        "-Wno-fatal",
        "--top-module",
        "tb",
        "-Mdir",
        "obj",
    ];
    tool(dir, "verilator", &[&common[..], flags, sources].concat()).map(|_| ())
}

/// The first line `program version_flag` prints, if it runs.
pub fn version(program: &str, flag: &str) -> Option<String> {
    let out = Command::new(program).arg(flag).output().ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines().next().map(|l| l.trim().to_string())
}
