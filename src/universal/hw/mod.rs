//! Switches of the universal protocols as hardware: register-level models whose registers are
//! declared once and drive the waveform and the Verilog (`templates/cmsv_*.v`,
//! `templates/rank_*.v`), each checked against the protocol's kernel and co-simulated.
//!
//! - [`algorithm1`]: [CMSV] Algorithm 1's bufferless discard-all switch (one forward pass);
//! - [`growing_rank`]: [SV] §2's store-and-forward switch with growing ranks.

pub mod algorithm1;
pub mod growing_rank;

use crate::error::Result;
use crate::rtl::{RTL_VCD_FILE, STIMULUS_FILE, fusesoc_core, render};
use askama::Template;

#[derive(Template)]
#[template(path = "universal_tb.v", escape = "none")]
struct TbTemplate<'a> {
    what: &'a str,
    top: &'a str,
    version: &'a str,
    command: &'a str,
    cycles: u64,
    width: u32,
    stimulus: &'a str,
    dumpfile: &'a str,
}

/// Appends the testbench of `top` (replaying `cycles` stimulus lines of `width` bits) and the
/// FuseSoC core of every file to a design's `files`.
fn finish_design(
    files: &mut Vec<(String, String)>,
    what: &str,
    top: &str,
    command: &str,
    cycles: u64,
    width: u32,
) -> Result<()> {
    let tb = TbTemplate {
        what,
        top,
        version: env!("CARGO_PKG_VERSION"),
        command,
        cycles: cycles.max(1),
        width,
        stimulus: STIMULUS_FILE,
        dumpfile: RTL_VCD_FILE,
    };
    files.push(("tb.v".to_string(), render(&tb)?));
    let sources: Vec<&str> = files.iter().map(|(f, _)| f.as_str()).collect();
    // the design is its files: their hash names the configuration
    let hash = crate::config::config_hash(&files);
    let core = fusesoc_core(&sources, &hash, top);
    files.push(("flitforge.core".to_string(), core));
    Ok(())
}

/// Scope and Verilog instance of butterfly switch ⟨level, w⟩.
pub fn scope(level: u32, w: u32) -> String {
    format!("l{level}_c{w}")
}

/// One `$readmemh` line of `width` bits: each (value, bits) field in turn from bit 0.
pub fn hex_line(fields: &[(u64, u32)], width: usize) -> String {
    let mut bits = vec![false; width];
    let mut at = 0usize;
    for &(value, n) in fields {
        for k in 0..n as usize {
            if at + k < width {
                bits[at + k] = (value >> k) & 1 == 1;
            }
        }
        at += n as usize;
    }
    (0..width.div_ceil(4))
        .rev()
        .map(|d| {
            let nibble = (0..4).fold(0u32, |a, k| {
                a | u32::from(bits.get(d * 4 + k).copied().unwrap_or(false)) << k
            });
            char::from_digit(nibble, 16).unwrap_or('0')
        })
        .collect()
}
