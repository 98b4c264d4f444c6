//! Verilog of the pruned butterfly from the same model: `templates/pb_vertex.v` rendered once
//! per vertex kind (root, odd, even, leaf), with its registers declared from
//! [`super::switch::layout`], the network `ff_pb_net` (`templates/pb_net.v`) and a testbench
//! (`templates/pb_tb.v`) replaying the recorded inputs of a model run.

use super::frame::FrameFormat;
use super::switch::{
    Inputs, PrunedNet, VertexKind, compression_layout, counter_widths, expansion_layout, layout,
};
use super::wave::vertex_scope;
use crate::error::Result;
use crate::flit::clog2;
use crate::rtl::{RTL_VCD_FILE, RtlDesign, STIMULUS_FILE, fusesoc_core, render};
use crate::switch::layout::Register;
use crate::topology::pruned::PrunedButterfly;
use askama::Template;

#[derive(Template)]
#[template(path = "pb_vertex.v", escape = "none")]
struct VertexTemplate<'a> {
    module: &'a str,
    kind_doc: &'a str,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    leaf: bool,
    comp: bool,
    ups: u32,
    ew: u32,
    cw: u32,
    /// Every register element: (name, width).
    regs: Vec<(String, u32)>,
    /// The expansion half's elements.
    exp_regs: Vec<(String, u32)>,
    /// The compression half's elements.
    comp_regs: Vec<(String, u32)>,
}

struct NetVertex {
    id: usize,
    name: String,
    module: &'static str,
    params: String,
    level: u32,
    ups: u32,
    leaf: bool,
    leaf_index: u32,
    par: String,
    ch: String,
}

#[derive(Template)]
#[template(path = "pb_net.v", escape = "none")]
struct NetTemplate<'a> {
    description: String,
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    sw: u32,
    n: u32,
    ni: usize,
    vertices: Vec<NetVertex>,
}

#[derive(Template)]
#[template(path = "pb_tb.v", escape = "none")]
struct TbTemplate<'a> {
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    sw: u32,
    n: u32,
    ni: usize,
    cycles: u64,
    stimulus: &'a str,
    dumpfile: &'a str,
}

/// Width of the `stage` input.
pub fn stage_bits(graph: &PrunedButterfly) -> u32 {
    clog2(u64::from(graph.levels()))
}

fn kind_doc(kind: VertexKind) -> &'static str {
    match kind {
        VertexKind::Root => "level-0 vertex (a root): expansion half only",
        VertexKind::Odd => "odd-level vertex: one parent, straight up-edge",
        VertexKind::Even => "even-level vertex: two parents (butterfly cross)",
        VertexKind::Leaf => "leaf: the up-port registers the leaf controller writes",
    }
}

/// Generates the Verilog of an `N`-leaf pruned butterfly with a testbench for `cycles` cycles.
pub fn design(
    graph: &PrunedButterfly,
    format: &FrameFormat,
    command: &str,
    config_hash: &str,
    cycles: u64,
) -> Result<RtlDesign> {
    let version = env!("CARGO_PKG_VERSION");
    let l = graph.levels();
    let (ew, cw) = counter_widths(format);
    let mut files = Vec::new();
    for kind in [
        VertexKind::Root,
        VertexKind::Odd,
        VertexKind::Even,
        VertexKind::Leaf,
    ] {
        let elements = |regs: Vec<Register>| -> Vec<(String, u32)> {
            regs.iter()
                .flat_map(|r| {
                    (0..r.elements()).map(move |k| (r.element_name(&r.index_of(k)), r.width))
                })
                .collect()
        };
        let t = VertexTemplate {
            module: kind.module(),
            kind_doc: kind_doc(kind),
            version,
            command,
            config_hash,
            leaf: kind == VertexKind::Leaf,
            comp: matches!(kind, VertexKind::Odd | VertexKind::Even),
            ups: kind.up_ports(),
            ew,
            cw,
            regs: elements(layout(kind, format)),
            exp_regs: elements(expansion_layout(kind, format)),
            comp_regs: elements(compression_layout(kind, format)),
        };
        files.push((format!("{}.v", kind.module()), render(&t)?));
    }
    let sw = stage_bits(graph);
    let ni = graph.level_offset(l);
    let mut vertices = Vec::with_capacity(graph.vertex_count());
    for id in 0..graph.vertex_count() {
        let v = graph.vertex(id);
        let kind = VertexKind::of(v.level, l);
        let par_bit = |x: u32| match graph.up(v, x) {
            Some(p) => format!("dn_{}[{}]", graph.id(p), v.node & 1),
            None => "1'b0".to_string(),
        };
        let ch = if v.level < l {
            let bit = |c: u32| match graph.down(v, c) {
                Some(child) => format!("up_{}[{}]", graph.id(child), graph.up_port_towards(v)),
                None => "1'b0".to_string(),
            };
            format!("{{{}, {}}}", bit(1), bit(0))
        } else {
            String::new()
        };
        let params = match kind {
            VertexKind::Leaf => String::new(),
            VertexKind::Root => format!("#(.ELEN({ew}'d{})) ", format.expansion_len(v.level)),
            _ => format!(
                "#(.ELEN({ew}'d{}), .CLEN({cw}'d{})) ",
                format.expansion_len(v.level),
                format.compression_len(v.level + 1)
            ),
        };
        vertices.push(NetVertex {
            id,
            name: vertex_scope(v),
            module: kind.module(),
            params,
            level: v.level,
            ups: kind.up_ports(),
            leaf: kind == VertexKind::Leaf,
            leaf_index: v.node,
            par: format!("{{{}, {}}}", par_bit(1), par_bit(0)),
            ch,
        });
    }
    let net = NetTemplate {
        description: format!(
            "{}-leaf pruned butterfly, {} vertices, bit-serial with direction bits",
            graph.leaves(),
            graph.vertex_count()
        ),
        version,
        command,
        config_hash,
        sw,
        n: graph.leaves(),
        ni,
        vertices,
    };
    files.push(("ff_pb_net.v".to_string(), render(&net)?));
    let tb = TbTemplate {
        version,
        command,
        config_hash,
        sw,
        n: graph.leaves(),
        ni,
        cycles: cycles.max(1),
        stimulus: STIMULUS_FILE,
        dumpfile: RTL_VCD_FILE,
    };
    files.push(("tb.v".to_string(), render(&tb)?));
    let sources: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    files.push((
        "flitforge.core".to_string(),
        fusesoc_core(&sources, config_hash, "ff_pb_net"),
    ));
    Ok(RtlDesign { files })
}

/// Records the network's inputs cycle by cycle as `$readmemh` lines (LSB first: `stage`,
/// `inj`, `src`).
#[derive(Clone, Debug, Default)]
pub struct PrunedStimulus {
    lines: crate::rtl::hex::Lines,
}

impl PrunedStimulus {
    /// Records the inputs of one cycle.
    pub fn sample(&mut self, net: &PrunedNet, inputs: &Inputs) {
        let sw = stage_bits(&net.graph) as usize;
        let mut bits: Vec<bool> = (0..sw).map(|b| (inputs.stage >> b) & 1 == 1).collect();
        bits.extend(inputs.inject.iter().flatten());
        bits.extend(inputs.source.iter().flatten());
        self.lines.push(crate::rtl::hex::of_bits(&bits));
    }

    /// Cycles recorded.
    pub fn cycles(&self) -> u64 {
        self.lines.cycles()
    }

    /// The `$readmemh` file.
    pub fn to_hex(&self) -> String {
        self.lines.to_hex()
    }
}
