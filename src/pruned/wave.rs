//! VCD waveforms of the pruned-butterfly network: every register [`super::switch::layout`]
//! declares, per vertex, under `tb.net.l{level}_n{node}_k{index}` — the instance names of the
//! generated Verilog — with the timing of [`crate::wave`] (cycle `c` commits at `10c + 15` ns).
//! The direction bits are `dir` (1 = right). The current stage is the testbench wire
//! `tb.stage`, as in the generated testbench; the comparison with a simulator looks only
//! under `tb.net`.

use super::element::Element;
use super::switch::{ESTATE_NAMES, Inputs, PrunedNet, VertexKind, layout};
use crate::error::Result;
use crate::topology::pruned::Vertex;
use crate::wave::{ScopeFilter, ScopedVcd, SignalDecl};
use std::io::Write;

/// Scope (and Verilog instance) name of a vertex.
pub fn vertex_scope(v: Vertex) -> String {
    format!("l{}_n{}_k{}", v.level, v.node, v.index)
}

/// Writes a pruned-butterfly network's waveform cycle by cycle.
pub struct PrunedVcd<W: Write> {
    vcd: ScopedVcd<W>,
    /// Per dumped element: vertex and element.
    elements: Vec<(usize, Element)>,
    values: Vec<u64>,
}

fn read(net: &PrunedNet, elements: &[(usize, Element)], values: &mut Vec<u64>) {
    values.clear();
    values.extend(elements.iter().map(|&(v, e)| net.regs[v].get(e)));
}

impl<W: Write> PrunedVcd<W> {
    /// Declares the registers of the vertices `filter` admits (globs over scope names) and
    /// writes the reset state. `header` goes into the VCD comment.
    pub fn new(writer: W, net: &PrunedNet, filter: &ScopeFilter, header: &str) -> Result<Self> {
        let g = &net.graph;
        let mut scopes = Vec::new();
        let mut elements = Vec::new();
        for id in 0..g.vertex_count() {
            let v = g.vertex(id);
            let scope = vertex_scope(v);
            if !filter.matches(&scope) {
                continue;
            }
            let mut decls = Vec::new();
            for register in layout(VertexKind::of(v.level, g.levels()), &net.format) {
                for k in 0..register.elements() {
                    let index = register.index_of(k);
                    decls.push(SignalDecl {
                        name: register.element_name(&index),
                        width: register.width,
                        encoding: register.encoding.map(|_| ESTATE_NAMES),
                    });
                    elements.push((id, Element::of(&register, &index)));
                }
            }
            scopes.push((scope, decls));
        }
        let mut values = Vec::new();
        read(net, &elements, &mut values);
        let stage_bits = super::rtl::stage_bits(g);
        let vcd = ScopedVcd::new(writer, header, &[("stage", stage_bits)], &scopes, &values)?;
        Ok(PrunedVcd {
            vcd,
            elements,
            values,
        })
    }

    /// Records the inputs of the cycle `net` just completed and the registers it committed.
    pub fn sample(&mut self, net: &PrunedNet, inputs: &Inputs) -> Result<()> {
        read(net, &self.elements, &mut self.values);
        self.vcd
            .sample(net.cycle() - 1, &[u64::from(inputs.stage)], &self.values)
    }

    /// Writes the last falling clock edge and flushes the output.
    pub fn finish(self) -> Result<()> {
        self.vcd.finish()
    }
}
