//! Measuring one module on an iCE40 as hardware people do: its LUTs and flip-flops from
//! synthesis of the module alone, and its Fmax from place and route inside a harness that
//! registers every port (inputs from a shift register fed by one pin, outputs folded into one
//! pin by a registered XOR tree), so that every timed path starts and ends at a flip-flop and
//! three pins suffice.

use super::board::Device;
use super::flow;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::Path;

/// A port of a Verilog module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub width: u32,
    pub input: bool,
}

/// The ports of module `module` in `text` (flitforge's generated Verilog: one port per line,
/// `input wire [W-1:0] name` or `output reg [W-1:0] name`, widths as integer expressions
/// `A-1` or `A*B-1`).
pub fn ports(text: &str, module: &str) -> Result<Vec<Port>> {
    let start = text
        .find(&format!("module {module} "))
        .ok_or_else(|| Error::parse(module, "module not found"))?;
    let body = &text[start..];
    let header_end = body
        .find(");")
        .ok_or_else(|| Error::parse(module, "no end of port list"))?;
    let mut out = Vec::new();
    for line in body[..header_end].lines() {
        let line = line.trim().trim_end_matches(',');
        let input = line.starts_with("input");
        if !input && !line.starts_with("output") {
            continue;
        }
        let line = line.split("//").next().unwrap_or("").trim();
        let width = match (line.find('['), line.find(']')) {
            (Some(a), Some(b)) => eval_width(&line[a + 1..b])?,
            _ => 1,
        };
        let name = line
            .split_whitespace()
            .last()
            .unwrap_or("")
            .trim_end_matches(',')
            .to_string();
        out.push(Port { name, width, input });
    }
    Ok(out)
}

/// Evaluates `E-1:0` where E is a product of integers.
fn eval_width(range: &str) -> Result<u32> {
    let msb = range.split(':').next().unwrap_or("").trim();
    let value = msb
        .split('-')
        .next()
        .unwrap_or("")
        .split('*')
        .map(|f| f.trim().parse::<u32>())
        .try_fold(1u32, |p, f| f.map(|f| p * f))
        .map_err(|e| Error::parse(range, e))?;
    Ok(if msb.contains('-') { value } else { value + 1 })
}

/// The harness around `module` with instance parameters `params` (name, Verilog value).
pub fn harness(module: &str, params: &[(String, String)], ports: &[Port]) -> String {
    let params = if params.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = params.iter().map(|(n, v)| format!(".{n}({v})")).collect();
        format!("#({}) ", list.join(", "))
    };
    let inputs: u32 = ports
        .iter()
        .filter(|p| p.input && p.name != "clk" && p.name != "rst")
        .map(|p| p.width)
        .sum::<u32>()
        .max(1);
    let outputs: u32 = ports
        .iter()
        .filter(|p| !p.input)
        .map(|p| p.width)
        .sum::<u32>()
        .max(1);
    let mut text = format!(
        "// Measurement harness for {module}: every port registered.\n`default_nettype none\nmodule ff_harness (input wire clk, input wire din, output reg dout);\n    reg [{inputs}-1:0] in_q;\n    reg rst_q;\n    wire [{outputs}-1:0] out_w;\n    reg [{outputs}-1:0] out_q;\n"
    );
    let mut at_in = 0;
    let mut at_out = 0;
    let mut conns = Vec::new();
    for p in ports {
        let conn = match (p.input, p.name.as_str()) {
            (true, "clk") => "clk".to_string(),
            (true, "rst") => "rst_q".to_string(),
            (true, _) => {
                let c = format!("in_q[{} +: {}]", at_in, p.width);
                at_in += p.width;
                c
            }
            (false, _) => {
                let c = format!("out_w[{} +: {}]", at_out, p.width);
                at_out += p.width;
                c
            }
        };
        conns.push(format!(".{}({conn})", p.name));
    }
    text.push_str(&format!(
        "    {module} {params}dut (\n        {}\n    );\n",
        conns.join(",\n        ")
    ));
    // Inputs shift in from the pin; outputs are registered, then XOR-folded four to one per
    // registered level down to the pin.
    // (reset takes the bit shifted out of the input register: a flip-flop of its own, which
    // synthesis cannot merge with an input and so cannot tie an input to reset)
    text.push_str(&format!(
        "    always @(posedge clk) begin\n        in_q <= {{in_q, din}};\n        rst_q <= in_q[{}];\n        out_q <= out_w;\n    end\n",
        inputs - 1
    ));
    let mut level = 0;
    let mut width = outputs;
    let mut prev = "out_q".to_string();
    while width > 1 {
        let next = width.div_ceil(4);
        let name = format!("fold{level}_q");
        text.push_str(&format!(
            "    reg [{next}-1:0] {name};\n    always @(posedge clk) begin\n"
        ));
        for k in 0..next {
            let hi = (4 * k + 3).min(width - 1);
            text.push_str(&format!(
                "        {name}[{k}] <= ^{prev}[{hi}:{}];\n",
                4 * k
            ));
        }
        text.push_str("    end\n");
        prev = name;
        width = next;
        level += 1;
    }
    text.push_str(&format!(
        "    always @(posedge clk) dout <= {prev}[0];\nendmodule\n`default_nettype wire\n"
    ));
    text
}

/// What one module measures.
#[derive(Clone, Debug, Serialize)]
pub struct ModuleFigures {
    pub luts: u64,
    pub dffs: u64,
    pub carries: u64,
    pub fmax_mhz: Option<f64>,
}

/// Measures `module` (from `sources` in `dir`) on `device`: synthesis of the module alone for
/// its cells, and place and route of the harness for Fmax. `params` are the instance
/// parameters (as the network instantiates it).
pub fn module(
    dir: &Path,
    sources: &[&str],
    module: &str,
    params: &[(String, String)],
    device: Device,
) -> Result<ModuleFigures> {
    let synthesis = flow::synthesise_module(dir, sources, module, params)?;
    let mut text = String::new();
    for s in sources {
        let path = dir.join(s);
        text.push_str(&std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?);
    }
    let h = harness(module, params, &ports(&text, module)?);
    let hpath = dir.join("ff_harness.v");
    crate::files::write_atomic(&hpath, h)?;
    let mut all: Vec<&str> = sources.to_vec();
    all.push("ff_harness.v");
    flow::synthesise(dir, &all, "ff_harness")?;
    let pr = flow::place_route(dir, device, None, 100.0)?;
    Ok(ModuleFigures {
        luts: synthesis.luts,
        dffs: synthesis.dffs,
        carries: synthesis.carries,
        fmax_mhz: if pr.fits { pr.fmax_mhz } else { None },
    })
}
