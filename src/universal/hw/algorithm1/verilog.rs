//! The Verilog of [CMSV] Algorithm 1's butterfly (`templates/cmsv_router.v`,
//! `cmsv_switch.v`, `cmsv_net.v`): a router module used forward and backward, three switch
//! modules whose register mirrors come from [`super::layout`], the network and a
//! testbench.

use super::{Alg1Butterfly, count_bits, layout};
use crate::error::Result;
use crate::rtl::{RtlDesign, render};
use crate::universal::hw::{finish_design, scope};
use askama::Template;

#[derive(Template)]
#[template(path = "cmsv_router.v", escape = "none")]
struct RouterTemplate<'a> {
    version: &'a str,
    command: &'a str,
}

#[derive(Template)]
#[template(path = "cmsv_switch.v", escape = "none")]
struct SwitchTemplate<'a> {
    module: &'a str,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    params: Vec<(&'static str, &'static str)>,
    first: bool,
    last: bool,
    b: u32,
    r_in: u32,
    dw: u32,
    iw: u32,
    depth: u32,
    aw: u32,
    passes: (u32, u32),
    mirrors: Vec<(String, u32, String)>,
}

struct NetSwitch {
    name: String,
    column: u32,
    module: &'static str,
    first: bool,
    last: bool,
    params: String,
    /// Forward in: (valid, address, id) expressions.
    ins: (String, String, String),
    /// Acknowledgements in (levels below lg n).
    backs: (String, String, String),
}

#[derive(Template)]
#[template(path = "cmsv_net.v", escape = "none")]
struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    n: u32,
    j: u32,
    lw: u32,
    b: u32,
    dw: u32,
    iw: u32,
    switches: Vec<NetSwitch>,
}

/// The switch modules' parameters: declaration and comment.
const FORWARD_PARAMS: [(&str, &str); 2] = [
    (
        "parameter integer RB = 0",
        "forward: the address bit this level routes on",
    ),
    (
        "parameter [0:0] COLBIT = 1'b0",
        "this switch's column bit there (the source's)",
    ),
];
const BACKWARD_PARAMS: [(&str, &str); 2] = [
    (
        "parameter integer BACK_RB = 0",
        "backward: the address bit acknowledgements route on",
    ),
    (
        "parameter [0:0] BACK_COLBIT = 1'b0",
        "this switch's column bit there (the destination's)",
    ),
];

/// `{cross[B·width ..], straight[0 .. B·width]}`: in port 1's lanes above in port 0's.
fn join(prefix: &str, straight: &str, cross: &str, b: u32, width: u32) -> String {
    let w = b * width;
    format!("{{{prefix}_{cross}[{w} +: {w}], {prefix}_{straight}[0 +: {w}]}}")
}

/// The Verilog of `net`'s butterfly (the router, three switch modules, the network and a
/// testbench that replays `cycles` lines of stimulus).
pub fn design(net: &Alg1Butterfly, command: &str, cycles: u64) -> Result<RtlDesign> {
    let version = env!("CARGO_PKG_VERSION");
    let (n, log_n, b, dw, iw, j) = (
        net.n,
        net.log_n,
        net.bandwidth,
        net.log_n,
        net.id_bits,
        net.lanes_in,
    );
    let depth = net.depth();
    let mut files = vec![(
        "ff_cmsv_router.v".to_string(),
        render(&RouterTemplate { version, command })?,
    )];
    let kinds = [
        (
            "ff_cmsv_first",
            "an input switch (its input's injection lanes; acknowledgements end here)",
            true,
            false,
            0,
        ),
        ("ff_cmsv_mid", "a switch between levels", false, false, 1),
        (
            "ff_cmsv_last",
            "an output switch (delivery, the mirror memory, the round controller)",
            false,
            true,
            log_n,
        ),
    ];
    for (module, kind_doc, first, last, level) in kinds {
        let mut params = Vec::new();
        if !last {
            params.extend(FORWARD_PARAMS);
        }
        if !first {
            params.extend(BACKWARD_PARAMS);
        }
        let t = SwitchTemplate {
            module,
            kind_doc,
            version,
            command,
            params,
            first,
            last,
            b,
            r_in: if first { j } else { 2 * b },
            dw,
            iw,
            depth,
            aw: count_bits(depth),
            passes: (net.passes[0], net.passes[1]),
            mirrors: layout(level, log_n, b, iw, depth),
        };
        files.push((format!("{module}.v"), render(&t)?));
    }
    let lw = 1 + dw + iw;
    let mut switches = Vec::new();
    for level in 0..=log_n {
        for w in 0..n {
            let (first, last) = (level == 0, level == log_n);
            let ins = if first {
                let lanes: Vec<u32> = (0..j).rev().map(|l| (w * j + l) * lw).collect();
                let field = |off: u32, width: u32| {
                    let parts: Vec<String> = lanes
                        .iter()
                        .map(|at| format!("inj[{} +: {width}]", at + off))
                        .collect();
                    format!("{{{}}}", parts.join(", "))
                };
                (field(0, 1), field(1, dw), field(1 + dw, iw))
            } else {
                // forward in port 0 from <level - 1, w>, port 1 from <level - 1, w ^ bit>
                let bit = 1u32 << (log_n - level);
                let (straight, cross) = (scope(level - 1, w), scope(level - 1, w ^ bit));
                (
                    join("ov", &straight, &cross, b, 1),
                    join("oa", &straight, &cross, b, dw),
                    join("oi", &straight, &cross, b, iw),
                )
            };
            let mut params = Vec::new();
            let backs = if last {
                Default::default()
            } else {
                // acknowledgements back along out link 0 from <level + 1, w>, along out
                // link 1 from <level + 1, w ^ bit>
                let rb = log_n - 1 - level;
                params.push(format!(".RB({rb}), .COLBIT(1'b{})", w >> rb & 1));
                let (straight, cross) = (scope(level + 1, w), scope(level + 1, w ^ (1 << rb)));
                (
                    join("bv", &straight, &cross, b, 1),
                    join("ba", &straight, &cross, b, dw),
                    join("bi", &straight, &cross, b, iw),
                )
            };
            if !first {
                let rb = log_n - level;
                params.push(format!(".BACK_RB({rb}), .BACK_COLBIT(1'b{})", w >> rb & 1));
            }
            switches.push(NetSwitch {
                name: scope(level, w),
                column: w,
                module: match (first, last) {
                    (true, _) => "ff_cmsv_first",
                    (_, true) => "ff_cmsv_last",
                    _ => "ff_cmsv_mid",
                },
                first,
                last,
                params: params.join(", "),
                ins,
                backs,
            });
        }
    }
    let netv = NetTemplate {
        description: format!(
            "{n}-input butterfly of [CMSV] Algorithm 1 switches, B = {b}, {j} injection lanes per input, passes of {} and {} cycles",
            net.passes[0], net.passes[1]
        ),
        version,
        command,
        n,
        j,
        lw,
        b,
        dw,
        iw,
        switches,
    };
    files.push(("ff_cmsv_net.v".to_string(), render(&netv)?));
    finish_design(
        &mut files,
        "[CMSV] Algorithm 1 (forward and acknowledgement passes, round after round)",
        "ff_cmsv_net",
        command,
        cycles,
        n * j * lw,
    )?;
    Ok(RtlDesign { files })
}
