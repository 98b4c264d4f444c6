//! The Verilog of the growing-rank butterfly (`templates/rank_switch.v`, `rank_net.v`): three
//! switch modules whose register mirrors come from [`super::growing_rank::layout`], the
//! network and a testbench.

use super::growing_rank::{RankButterfly, Widths, layout};
use super::{finish_design, scope};
use crate::error::Result;
use crate::rtl::{RtlDesign, render};
use askama::Template;

#[derive(Template)]
#[template(path = "rank_switch.v", escape = "none")]
struct SwitchTemplate<'a> {
    module: &'a str,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    first: bool,
    last: bool,
    a: u32,
    q: u32,
    rw: u32,
    kw: u32,
    dw: u32,
    iw: u32,
    step: u64,
    mirrors: Vec<(String, u32, String)>,
}

struct NetSwitch {
    name: String,
    module: &'static str,
    last: bool,
    rb: u32,
    colbit: u32,
    ins: (String, String, String, String, String),
}

#[derive(Template)]
#[template(path = "rank_net.v", escape = "none")]
struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    n: u32,
    j: u32,
    lw: u32,
    rw: u32,
    kw: u32,
    dw: u32,
    iw: u32,
    switches: Vec<NetSwitch>,
}

/// The Verilog of `net` (three switch modules, the network, a testbench for `cycles` lines).
pub fn design(net: &RankButterfly, w: Widths, command: &str, cycles: u64) -> Result<RtlDesign> {
    let version = env!("CARGO_PKG_VERSION");
    let (n, j, q) = (net.n, net.lanes_in, net.slots);
    let kinds = [
        (
            "ff_rank_first",
            "a level-0 switch (queues fed by its input's injections)",
            true,
            false,
            j,
            0,
        ),
        ("ff_rank_mid", "a switch between levels", false, false, 2, 1),
        (
            "ff_rank_last",
            "an output switch (registers what is delivered)",
            false,
            true,
            2,
            net.log_n,
        ),
    ];
    let mut files = Vec::new();
    for (module, kind_doc, first, last, a, level) in kinds {
        let t = SwitchTemplate {
            module,
            kind_doc,
            version,
            command,
            first,
            last,
            a,
            q,
            rw: w.rw,
            kw: w.kw,
            dw: w.dw,
            iw: w.iw,
            step: net.step,
            mirrors: layout(level, net.log_n, q, w),
        };
        files.push((format!("{module}.v"), render(&t)?));
    }
    let lw = 1 + w.rw + w.kw + w.dw + w.iw;
    let mut switches = Vec::new();
    for level in 0..=net.log_n {
        for col in 0..n {
            let (module, ins) = if level == 0 {
                let field = |off: u32, width: u32| {
                    let parts: Vec<String> = (0..j)
                        .rev()
                        .map(|l| format!("inj[{} +: {width}]", (col * j + l) * lw + off))
                        .collect();
                    format!("{{{}}}", parts.join(", "))
                };
                (
                    "ff_rank_first",
                    (
                        field(0, 1),
                        field(1, w.rw),
                        field(1 + w.rw, w.kw),
                        field(1 + w.rw + w.kw, w.dw),
                        field(1 + w.rw + w.kw + w.dw, w.iw),
                    ),
                )
            } else {
                let bit = 1u32 << (net.log_n - level);
                let straight = scope(level - 1, col);
                let cross = scope(level - 1, col ^ bit);
                let join = |p: &str, width: u32| {
                    format!("{{{p}_{cross}[{width} +: {width}], {p}_{straight}[0 +: {width}]}}")
                };
                (
                    if level == net.log_n {
                        "ff_rank_last"
                    } else {
                        "ff_rank_mid"
                    },
                    (
                        join("ov", 1),
                        join("or", w.rw),
                        join("ok", w.kw),
                        join("od", w.dw),
                        join("oi", w.iw),
                    ),
                )
            };
            let last = level == net.log_n;
            let rb = if last { 0 } else { net.log_n - 1 - level };
            switches.push(NetSwitch {
                name: scope(level, col),
                module,
                last,
                rb,
                colbit: if last { 0 } else { (col >> rb) & 1 },
                ins,
            });
        }
    }
    let netv = NetTemplate {
        description: format!(
            "{n}-input butterfly of [SV] growing-rank store-and-forward switches, {q} slots per queue, rank step {}",
            net.step
        ),
        version,
        command,
        n,
        j,
        lw,
        rw: w.rw,
        kw: w.kw,
        dw: w.dw,
        iw: w.iw,
        switches,
    };
    files.push(("ff_rank_net.v".to_string(), render(&netv)?));
    finish_design(
        &mut files,
        "[SV] growing-rank store-and-forward",
        "ff_rank_net",
        command,
        cycles,
        n * j * lw,
    )?;
    Ok(RtlDesign { files })
}
