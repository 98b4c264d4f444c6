//! VCD waveforms of the pruned-butterfly network: every register [`super::switch::layout`]
//! declares, per vertex, under `tb.net.l{level}_n{node}_k{index}` — the instance names of the
//! generated Verilog — with the timing of [`crate::wave`] (cycle `c` commits at `10c + 15` ns).
//! The direction bits are `dir` (1 = right). The current stage is the testbench wire
//! `tb.stage`, as in the generated testbench; the comparison with a simulator looks only
//! under `tb.net`.

use super::switch::{ESTATE_NAMES, Inputs, PrunedNet, VertexKind, layout};
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
    rst: IdCode,
    stage: IdCode,
    stage_bits: u32,
    last_stage: Option<u32>,
    last_time: u64,
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
        let stage_bits = super::rtl::stage_bits(g);
        let stage = out.add_wire(stage_bits, "stage").map_err(io)?;
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
        let mut w = PrunedVcd {
            out,
            signals,
            clk,
            rst,
            stage,
            stage_bits,
            last_stage: None,
            last_time: PERIOD_NS / 2,
        };
        w.out.timestamp(0).map_err(io)?;
        w.out.change_scalar(clk, Value::V0).map_err(io)?;
        w.out.change_scalar(rst, Value::V1).map_err(io)?;
        w.out
            .change_vector(stage, (0..stage_bits).map(|_| Value::V0))
            .map_err(io)?;
        w.dump(net)?;
        w.out.timestamp(PERIOD_NS / 2).map_err(io)?;
        w.out.change_scalar(clk, Value::V1).map_err(io)?;
        Ok(w)
    }

    /// Records the inputs of the cycle `net` just completed (from the falling edge before it)
    /// and the registers it committed (at its rising edge).
    pub fn sample(&mut self, net: &PrunedNet, inputs: &Inputs) -> Result<()> {
        let t = commit_time(net.cycle() - 1);
        self.out.timestamp(t - PERIOD_NS / 2).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)?;
        if net.cycle() == 1 {
            self.out.change_scalar(self.rst, Value::V0).map_err(io)?;
        }
        if self.last_stage != Some(inputs.stage) {
            let bits = self.stage_bits;
            self.out
                .change_vector(
                    self.stage,
                    (0..bits)
                        .rev()
                        .map(|b| Value::from((inputs.stage >> b) & 1 == 1)),
                )
                .map_err(io)?;
            self.last_stage = Some(inputs.stage);
        }
        self.out.timestamp(t).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V1).map_err(io)?;
        self.last_time = t;
        self.dump(net)
    }

    /// Writes the last falling clock edge and flushes the output.
    pub fn finish(mut self) -> Result<()> {
        self.out
            .timestamp(self.last_time + PERIOD_NS / 2)
            .map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)?;
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
