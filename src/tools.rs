//! The external tools flitforge drives, all from Debian packages: simulators (Icarus Verilog,
//! Verilator), synthesis (yosys), iCE40 place and route (nextpnr-ice40, icepack). A missing
//! tool is an exit-2 error naming the package to install.

use crate::error::{Error, Result};
use std::path::Path;
use std::process::{Command, Output};

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

/// Runs `program` in `dir` and returns its output whatever its exit status.
pub fn run(dir: &Path, program: &str, args: &[&str]) -> Result<Output> {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| {
            if program.starts_with("./") {
                Error::io(program, e)
            } else {
                missing(program, e)
            }
        })
}

/// Runs `program` in `dir`; a non-zero exit is an error carrying its output. Returns stdout.
pub fn tool(dir: &Path, program: &str, args: &[&str]) -> Result<String> {
    let out = run(dir, program, args)?;
    if !out.status.success() {
        return Err(Error::parse(
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
    Err(Error::parse(
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
