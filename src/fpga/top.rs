//! The board top's Verilog: the network's modules ([`crate::rtl`]), a generator per input
//! (`ff_gen`), a checker per output (`ff_check`), pipelined reductions (`ff_tree`), the status
//! printer (`ff_status`), the top (`ff_top`) and the board's pin constraints.

use super::board::Device;
use super::{Prediction, StatusPort};
use crate::error::Result;
use crate::flit::{BODY_PATTERN, clog2};
use crate::lfsr::{self, Purpose};
use crate::rtl::{RtlDesign, render};
use crate::sim::Simulation;
use crate::traffic::{Traffic, lfsr_threshold};
use askama::Template;

/// Name of the status line file the top's testbench writes.
pub const UART_FILE: &str = "uart.txt";
/// Name of the pin constraints file.
pub const PCF_FILE: &str = "board.pcf";

/// Widths shared by the generator and the checker.
struct Widths {
    log_n: u32,
    w: u32,
    flits: u32,
    /// Flit index bits.
    sw: u32,
    /// Header id field bits (0 if the flit has no room for one).
    idw: u32,
}

impl Widths {
    fn of(sim: &Simulation) -> Self {
        let c = &sim.config;
        Widths {
            log_n: c.inputs.trailing_zeros(),
            w: c.flit_bits,
            flits: c.flits,
            sw: clog2(c.flits.into()),
            idw: sim.header_layout.id_bits(),
        }
    }
}

#[derive(Template)]
#[template(path = "fpga_gen.v", escape = "none")]
struct GenTemplate<'a> {
    version: &'a str,
    config_hash: &'a str,
    n: u32,
    log_n: u32,
    b: u32,
    w: u32,
    flits: u32,
    sw: u32,
    sw_started: u32,
    /// Bits of the pending count: one more than the model's peak needs, the top bit an
    /// overflow the generator reports as an error.
    pw: u32,
    /// Low bits of the pending count that hold every count up to B.
    low_bits: u32,
    kw: u32,
    idw: u32,
    idw_eff: u32,
    thresh: u16,
    pattern: String,
    /// Spacing of the destination bits in the destination register.
    spacing: u32,
}

#[derive(Template)]
#[template(path = "fpga_check.v", escape = "none")]
struct CheckTemplate<'a> {
    version: &'a str,
    config_hash: &'a str,
    log_n: u32,
    ej: u32,
    w: u32,
    flits: u32,
    sw: u32,
    cw: u32,
    idw: u32,
    idw_eff: u32,
    pattern: String,
}

#[derive(Template)]
#[template(path = "fpga_tree.v", escape = "none")]
struct TreeTemplate<'a> {
    version: &'a str,
}

#[derive(Template)]
#[template(path = "fpga_status.v", escape = "none")]
struct StatusTemplate<'a> {
    version: &'a str,
    line_doc: String,
    fields: Vec<&'static str>,
    len: usize,
    word_at: usize,
    chars: Vec<String>,
}

struct Gen {
    source: u32,
    arrive_seed: String,
    target_seed: String,
    uniform: u8,
    fixed: u32,
}

#[derive(Template)]
#[template(path = "fpga_top.v", escape = "none")]
struct TopTemplate<'a> {
    uart: bool,
    pred_generated: u64,
    pred_delivered: u64,
    pred_last: u64,
    description: String,
    board: &'a str,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    traffic: String,
    led_doc: String,
    div: u32,
    period: u32,
    horizon: u64,
    leds: u32,
    active_low: bool,
    n: u32,
    log_n: u32,
    b: u32,
    w: u32,
    ej: u32,
    lat: u32,
    sw_started: u32,
    cw: u32,
    sum_w: u32,
    leaves: u32,
    /// Bits of the cycle and event counters.
    cnt_w: u32,
    gens: Vec<Gen>,
}

#[derive(Template)]
#[template(path = "fpga_tb.v", escape = "none")]
struct TbTemplate<'a> {
    uart: bool,
    version: &'a str,
    config_hash: &'a str,
    uart_file: &'a str,
    dumpfile: &'a str,
    max_cycles: u64,
    leds: u32,
}

/// The fields of the status line, in order.
pub const STATUS_FIELDS: [&str; 4] = ["generated", "delivered", "errors", "last"];

/// UART speed of the board top.
pub const BAUD: u32 = 115_200;

/// The status line as `char_at` entries of `ff_status` ({kind, byte}: 0 a byte, 1 hex digit
/// byte[2:0] of value byte[5:3], 2 a letter of "done" or "run "), its text with `XXXXXXXX` for
/// each value, and the position of the done word.
fn status_line() -> (Vec<String>, String, usize) {
    let mut chars = Vec::new();
    let mut text = String::new();
    fn literal(s: &str, chars: &mut Vec<String>, text: &mut String) {
        chars.extend(s.bytes().map(|c| format!("{{2'd0, 8'h{c:02x}}}")));
        text.push_str(s);
    }
    literal("ff", &mut chars, &mut text);
    for (f, name) in STATUS_FIELDS.iter().enumerate() {
        literal(&format!(" {name}="), &mut chars, &mut text);
        chars.extend((0..8).map(|nibble| format!("{{2'd1, 8'h{:02x}}}", f << 3 | nibble)));
        text.push_str("XXXXXXXX");
    }
    literal(" ", &mut chars, &mut text);
    let word_at = chars.len();
    chars.extend("done".bytes().map(|c| format!("{{2'd2, 8'h{c:02x}}}")));
    text.push_str("done|run");
    chars.push("{2'd0, 8'h0d}".into());
    chars.push("{2'd0, 8'h0a}".into());
    (chars, text, word_at)
}

/// Characters in the status line (with its CR LF).
pub fn status_line_len() -> u64 {
    status_line().0.len() as u64
}

/// Parses a status line; `None` if it is not one.
pub fn parse_status(line: &str) -> Option<([u64; 4], bool)> {
    let mut values = [0u64; 4];
    let mut words = line.split_whitespace();
    if words.next()? != "ff" {
        return None;
    }
    for (k, name) in STATUS_FIELDS.iter().enumerate() {
        let (key, value) = words.next()?.split_once('=')?;
        if key != *name {
            return None;
        }
        values[k] = u64::from_str_radix(value, 16).ok()?;
    }
    let done = match words.next()? {
        "done" => true,
        "run" => false,
        _ => return None,
    };
    Some((values, done))
}

/// Bits of the top's cycle and event counters: room for twice the largest predicted value
/// and for the horizon plus the trees' latency (a board that departs from the model would
/// have to be off by a multiple of 2^bits to land on the prediction), at least the 23 of the
/// LED heartbeat, at most 32 (the status line's fields; the horizon is checked to fit).
pub fn counter_bits(prediction: &Prediction, horizon: u64, lat: u32) -> u32 {
    let largest = prediction
        .values()
        .into_iter()
        .max()
        .unwrap_or(0)
        .max(horizon + u64::from(lat));
    (clog2(largest + 1) + 1).clamp(23, 32)
}

/// Latency of a reduction tree over `n` values: a register per level plus the leaves'.
pub fn tree_latency(n: u32) -> u32 {
    1 + n.next_power_of_two().trailing_zeros()
}

/// The Verilog of the board top for `sim`'s network and traffic on `device`. The network's
/// own files come from [`RtlDesign`] (without its replaying testbench).
pub fn design(
    sim: &Simulation,
    prediction: &Prediction,
    device: Device,
    status: StatusPort,
    command: &str,
    with_testbench: Option<u64>,
) -> Result<RtlDesign> {
    let uart = status == StatusPort::Uart;
    let version = env!("CARGO_PKG_VERSION");
    let hash = sim.config.config_hash();
    let c = &sim.config;
    let Traffic::Lfsr { rate, destinations } = c.traffic else {
        unreachable!("the board top is built for on-chip (lfsr) traffic; checked by the caller")
    };
    let horizon = c.cycles.unwrap_or(0);
    let board = device.board();
    let wd = Widths::of(sim);
    let n = c.inputs;
    let b = c.vcs;
    // Delivery VCs per output terminal: every VC of a last-level switch (the papers'
    // butterflies), or those of one ejection port (the k-ary n-fly).
    let topo = &sim.fabric.topo;
    let ej = topo.ports() * b / topo.ejection_ports();
    let pattern = format!("{BODY_PATTERN:04X}");
    let idw_eff = wd.idw.max(1);
    let sw_started = clog2(u64::from(b) + 1);
    let cw = clog2(u64::from(ej) + 1);
    // The pending count holds the most messages the model ever saw waiting at one input
    // (`sim` has run to completion), with a spare top bit: set only if the board departs
    // from the model, and then reported as an error. It also holds the B starts of a cycle.
    debug_assert!(
        sim.finished(),
        "the generators are sized from a finished run"
    );
    let pw = (clog2(sim.sources.peak_waiting() as u64 + 1) + 1).max(sw_started);
    let network = RtlDesign::new(sim, command, 1)?;
    let mut files: Vec<(String, String)> = network
        .files
        .into_iter()
        .filter(|(name, _)| name.starts_with("ff_"))
        .collect();
    let generator = GenTemplate {
        version,
        config_hash: &hash,
        n,
        log_n: wd.log_n,
        b,
        w: wd.w,
        flits: wd.flits,
        sw: wd.sw,
        sw_started,
        pw,
        low_bits: pw.min(sw_started),
        kw: wd.idw.saturating_sub(wd.log_n).max(1),
        idw: wd.idw,
        idw_eff,
        thresh: lfsr_threshold(rate),
        pattern: pattern.clone(),
        spacing: 16 / wd.log_n.max(1),
    };
    files.push(("ff_gen.v".into(), render(&generator)?));
    let check = CheckTemplate {
        version,
        config_hash: &hash,
        log_n: wd.log_n,
        ej,
        w: wd.w,
        flits: wd.flits,
        sw: wd.sw,
        cw,
        idw: wd.idw,
        idw_eff,
        pattern,
    };
    files.push(("ff_check.v".into(), render(&check)?));
    files.push(("ff_tree.v".into(), render(&TreeTemplate { version })?));
    let (chars, line, word_at) = status_line();
    let div = (board.clock_mhz * 1e6 / f64::from(BAUD)).round() as u32;
    let printer = StatusTemplate {
        version,
        line_doc: line,
        fields: STATUS_FIELDS.to_vec(),
        len: chars.len(),
        word_at,
        chars,
    };
    if uart {
        files.push(("ff_status.v".into(), render(&printer)?));
    }
    let fixed = destinations.fixed(n, c.seed);
    let gens = (0..n)
        .map(|s| Gen {
            source: s,
            arrive_seed: format!("{:04X}", lfsr::seed(c.seed, Purpose::Arrivals, s.into())),
            target_seed: format!(
                "{:04X}",
                lfsr::seed(c.seed, Purpose::Destinations, s.into())
            ),
            uniform: u8::from(fixed.is_none()),
            fixed: fixed.as_ref().map_or(0, |t| t[s as usize]),
        })
        .collect();
    let lat = tree_latency(n);
    let cnt_w = counter_bits(prediction, horizon, lat);
    let top = TopTemplate {
        uart,
        pred_generated: prediction.generated,
        pred_delivered: prediction.delivered,
        pred_last: prediction.last,
        description: format!(
            "{}-input {} network, B = {b}, L = {}, W = {}, {} back-pressure",
            n,
            sim.fabric.topo.kind.name(),
            c.flits,
            c.flit_bits,
            match c.backpressure {
                crate::config::Backpressure::Combinational => "combinational",
                crate::config::Backpressure::Registered => "registered",
            }
        ),
        board: board.name,
        version,
        command,
        config_hash: &hash,
        traffic: format!(
            "rate {rate}, {} destinations, seed {}",
            destinations.name(),
            c.seed
        ),
        led_doc: board.led_doc(),
        div,
        period: (board.clock_mhz * 1e6) as u32,
        horizon,
        leds: board.led_pins.len() as u32,
        active_low: board.leds_active_low,
        n,
        log_n: wd.log_n,
        b,
        w: wd.w,
        ej,
        lat,
        sw_started,
        cw,
        sum_w: clog2(u64::from(n) * u64::from(ej) + 1),
        leaves: n.next_power_of_two(),
        cnt_w,
        gens,
    };
    files.push(("ff_top.v".into(), render(&top)?));
    files.push((PCF_FILE.into(), board.pcf(uart)));
    if let Some(max_cycles) = with_testbench {
        let tb = TbTemplate {
            uart,
            version,
            config_hash: &hash,
            uart_file: UART_FILE,
            dumpfile: crate::rtl::RTL_VCD_FILE,
            max_cycles,
            leds: board.led_pins.len() as u32,
        };
        files.push(("tb.v".into(), render(&tb)?));
    }
    Ok(RtlDesign { files })
}
