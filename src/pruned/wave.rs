//! VCD waveforms of the pruned-butterfly network: every register [`super::switch::layout`]
//! declares, per vertex, under `tb.net.l{level}_n{node}_k{index}` — the instance names of the
//! generated Verilog — with the timing of [`crate::wave`] (cycle `c` commits at `10c + 15` ns).
//! The testbench-level inputs `stage` and the leaf landing wires are not registers and are
//! not dumped; the direction bits are (`dir`, 1 = right).

use super::switch::{ESTATE_NAMES, PrunedNet, VertexKind, layout};
use crate::error::{Error, Result};
use crate::switch::layout::Register;
use crate::topology::pruned::Vertex;
use crate::wave::{PERIOD_NS, ScopeFilter, commit_time};
use std::io::Write;
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// Scope (and Verilog instance) name of a vertex.
pub fn vertex_scope(v: Vertex) -> String {
    format!("l{}_n{}_k{}", v.level, v.node, v.index)
}

struct Signal {
    id: IdCode,
    name_id: Option<IdCode>,
    vertex: usize,
    register: Register,
    index: Vec<u32>,
    last: Option<u64>,
}

/// Writes a pruned-butterfly network's waveform cycle by cycle.
pub struct PrunedVcd<W: Write> {
    out: vcd::Writer<W>,
    signals: Vec<Signal>,
    clk: IdCode,
}

fn io(e: std::io::Error) -> Error {
    Error::io("VCD output", e)
}

impl<W: Write> PrunedVcd<W> {
    /// Declares the registers of the vertices `filter` admits (globs over scope names) and
    /// writes the reset state. `header` goes into the VCD comment.
    pub fn new(writer: W, net: &PrunedNet, filter: &ScopeFilter, header: &str) -> Result<Self> {
        let g = &net.graph;
        let mut out = vcd::Writer::new(writer);
        out.comment(&format!(
            "flitforge {} | {header}",
            env!("CARGO_PKG_VERSION")
        ))
        .map_err(io)?;
        out.timescale(1, TimescaleUnit::NS).map_err(io)?;
        out.add_module("tb").map_err(io)?;
        let clk = out.add_wire(1, "clk").map_err(io)?;
        let rst = out.add_wire(1, "rst").map_err(io)?;
        out.add_module("net").map_err(io)?;
        let mut signals = Vec::new();
        for id in 0..g.vertex_count() {
            let v = g.vertex(id);
            let scope = vertex_scope(v);
            if !filter.matches(&scope) {
                continue;
            }
            out.add_module(&scope).map_err(io)?;
            for register in layout(VertexKind::of(v.level, g.levels()), &net.format) {
                for k in 0..register.elements() {
                    let index = register.index_of(k);
                    let name = register.element_name(&index);
                    let sid = out
                        .add_var(VarType::Reg, register.width, &name, None)
                        .map_err(io)?;
                    let name_id = match register.encoding {
                        Some(_) => Some(
                            out.add_var(VarType::String, 1, &format!("{name}_name"), None)
                                .map_err(io)?,
                        ),
                        None => None,
                    };
                    signals.push(Signal {
                        id: sid,
                        name_id,
                        vertex: id,
                        register: register.clone(),
                        index,
                        last: None,
                    });
                }
            }
            out.upscope().map_err(io)?;
        }
        out.upscope().map_err(io)?;
        out.upscope().map_err(io)?;
        out.enddefinitions().map_err(io)?;
        let mut w = PrunedVcd { out, signals, clk };
        w.out.timestamp(0).map_err(io)?;
        w.out.change_scalar(clk, Value::V0).map_err(io)?;
        w.out.change_scalar(rst, Value::V1).map_err(io)?;
        w.dump(net)?;
        w.out.timestamp(PERIOD_NS / 2).map_err(io)?;
        w.out.change_scalar(clk, Value::V1).map_err(io)?;
        w.out.timestamp(PERIOD_NS).map_err(io)?;
        w.out.change_scalar(clk, Value::V0).map_err(io)?;
        w.out.change_scalar(rst, Value::V0).map_err(io)?;
        Ok(w)
    }

    /// Records the registers after the cycle `net` just completed.
    pub fn sample(&mut self, net: &PrunedNet) -> Result<()> {
        let t = commit_time(net.cycle() - 1);
        self.out.timestamp(t).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V1).map_err(io)?;
        self.dump(net)?;
        self.out.timestamp(t + PERIOD_NS / 2).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)
    }

    /// Flushes the output.
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(io)
    }

    fn dump(&mut self, net: &PrunedNet) -> Result<()> {
        for s in &mut self.signals {
            let value = net.regs[s.vertex].read(&s.register, &s.index);
            if s.last == Some(value) {
                continue;
            }
            let width = s.register.width;
            self.out
                .change_vector(
                    s.id,
                    (0..width).rev().map(|b| Value::from((value >> b) & 1 == 1)),
                )
                .map_err(io)?;
            if let Some(id) = s.name_id {
                let name = ESTATE_NAMES.get(value as usize).copied().unwrap_or("?");
                self.out.change_string(id, name).map_err(io)?;
            }
            s.last = Some(value);
        }
        Ok(())
    }
}
