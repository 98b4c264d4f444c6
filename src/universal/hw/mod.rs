//! Switches of the universal protocols as hardware: register-level models whose registers are
//! declared once and drive the waveform and the Verilog (`templates/cmsv_*.v`,
//! `templates/rank_*.v`), each checked against the protocol's kernel and co-simulated.
//!
//! - [`algorithm1`]: [CMSV] Algorithm 1's bufferless discard-all switch, with the
//!   acknowledgement pass and the round controller;
//! - [`growing_rank`]: [SV] §2's store-and-forward switch with growing ranks.

pub mod algorithm1;
pub mod growing_rank;
mod rank_verilog;

use crate::error::Result;
use crate::rtl::{RTL_VCD_FILE, STIMULUS_FILE, fusesoc_core, render};
use crate::wave::{ScopedVcd, SignalDecl};
use askama::Template;

/// A butterfly of switches modelled register by register: every switch ⟨level, w⟩ declares
/// its register elements once ([`Registers::layout`]: name, width, Verilog expression), which
/// drive the waveform and the Verilog mirrors alike.
pub trait Registers {
    /// (lg n, n): levels 0..=lg n of n switches.
    fn shape(&self) -> (u32, u32);
    fn layout(&self, level: u32) -> Vec<(String, u32, String)>;
    /// The values of switch ⟨level, w⟩'s elements, in layout order.
    fn values(&self, level: u32, w: u32, out: &mut Vec<u64>);
    /// Cycles committed.
    fn cycle(&self) -> u64;
}

/// The waveform of a [`Registers`] butterfly: every element under `tb.net.l{i}_c{w}`.
pub struct ButterflyVcd<W: std::io::Write> {
    vcd: ScopedVcd<W>,
    values: Vec<u64>,
}

fn all_values(net: &dyn Registers, out: &mut Vec<u64>) {
    let (log_n, n) = net.shape();
    for level in 0..=log_n {
        for w in 0..n {
            net.values(level, w, out);
        }
    }
}

impl<W: std::io::Write> ButterflyVcd<W> {
    /// Declares every switch's registers and writes the reset state.
    pub fn new(writer: W, net: &dyn Registers, header: &str) -> Result<Self> {
        let (log_n, n) = net.shape();
        let mut scopes = Vec::new();
        for level in 0..=log_n {
            let decls: Vec<SignalDecl> = net
                .layout(level)
                .into_iter()
                .map(|(name, width, _)| SignalDecl {
                    name,
                    width,
                    encoding: None,
                })
                .collect();
            for w in 0..n {
                scopes.push((scope(level, w), decls.clone()));
            }
        }
        let mut values = Vec::new();
        all_values(net, &mut values);
        let vcd = ScopedVcd::new(writer, header, &[], &scopes, &values)?;
        Ok(ButterflyVcd { vcd, values })
    }

    /// Records the registers `net` committed in the cycle it just completed.
    pub fn sample(&mut self, net: &dyn Registers) -> Result<()> {
        self.values.clear();
        all_values(net, &mut self.values);
        self.vcd.sample(net.cycle() - 1, &[], &self.values)
    }

    /// The writer (what has been written so far, for a writer in memory).
    pub fn writer(&mut self) -> &mut W {
        self.vcd.writer()
    }

    pub fn finish(self) -> Result<()> {
        self.vcd.finish()
    }
}

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
    crate::rtl::hex::of_bits(&bits)
}
