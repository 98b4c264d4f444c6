//! Helpers the command-line tests share: run the binary, a per-process scratch directory, and
//! output as text.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `flitforge` with `args` and returns its output.
pub fn flitforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flitforge"))
        .args(args)
        .output()
        .expect("run flitforge")
}

/// A path named `name` in this test binary's scratch directory `flitforge-<suite>-<pid>`.
pub fn temp(suite: &str, name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("flitforge-{suite}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

/// Bytes as (lossy) text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
