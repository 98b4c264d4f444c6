//! VCD waveforms of a greedy store-and-forward run ([LM] §IV): every register
//! [`Fabric::greedy_layout`] declares, per switch below the outputs, under
//! `tb.net.l{level}_c{column}`, with the timing of [`crate::wave`] (cycle `c` commits at
//! `10c + 15` ns). The reset state is the loaded input queues.

use crate::error::Result;
use crate::flit::clog2;
use crate::switch::Fabric;
use crate::switch::layout::Register;
use crate::topology::NodeId;
use crate::wave::{ScopeFilter, ScopedVcd, SignalDecl};
use std::io::Write;

/// Writes a greedy run's waveform cycle by cycle.
pub struct GreedyVcd<W: Write> {
    vcd: ScopedVcd<W>,
    /// Per dumped element: switch, register, index.
    elements: Vec<(NodeId, Register, Vec<u32>)>,
    values: Vec<u64>,
}

fn read(fabric: &Fabric, elements: &[(NodeId, Register, Vec<u32>)], values: &mut Vec<u64>) {
    values.clear();
    values.extend(
        elements
            .iter()
            .map(|(s, reg, index)| fabric.read_greedy_register(*s, reg, index)),
    );
}

impl<W: Write> GreedyVcd<W> {
    /// Declares the registers of the switches `filter` admits (globs over `l{level}_c{column}`)
    /// for a problem of `packets` packets and writes the current (loaded) state.
    pub fn new(
        writer: W,
        fabric: &Fabric,
        packets: u32,
        filter: &ScopeFilter,
        header: &str,
    ) -> Result<Self> {
        let topo = &fabric.topo;
        let layout = fabric.greedy_layout(clog2(u64::from(packets)));
        let mut scopes = Vec::new();
        let mut elements = Vec::new();
        for s in 0..topo.node_id(topo.last_level(), 0) {
            let node = topo.node(s);
            let scope = format!("l{}_c{}", node.level, node.column);
            if !filter.matches(&scope) {
                continue;
            }
            let mut decls = Vec::new();
            for register in &layout {
                for k in 0..register.elements() {
                    let index = register.index_of(k);
                    decls.push(SignalDecl {
                        name: register.element_name(&index),
                        width: register.width,
                        encoding: None,
                    });
                    elements.push((s, register.clone(), index));
                }
            }
            scopes.push((scope, decls));
        }
        let mut values = Vec::new();
        read(fabric, &elements, &mut values);
        let vcd = ScopedVcd::new(writer, header, &[], &scopes, &values)?;
        Ok(GreedyVcd {
            vcd,
            elements,
            values,
        })
    }

    /// Records the registers clock edge `cycle` (0-based) committed.
    pub fn sample(&mut self, fabric: &Fabric, cycle: u64) -> Result<()> {
        read(fabric, &self.elements, &mut self.values);
        self.vcd.sample(cycle, &[], &self.values)
    }

    /// Writes the last falling clock edge and flushes the output.
    pub fn finish(self) -> Result<()> {
        self.vcd.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multibutterfly::faults::Faults;
    use crate::multibutterfly::greedy::{GreedyConfig, GreedyRouter};
    use crate::topology::butterfly;

    #[test]
    fn the_waveform_shows_the_queues_move() {
        let topo = butterfly(4).unwrap();
        let faults = Faults::none(&topo);
        let mut r = GreedyRouter::new(topo, &faults, GreedyConfig::default(), 2, 1).unwrap();
        // Two packets per input, all to output 3.
        r.load(&[3; 8]).unwrap();
        let mut out = Vec::new();
        let mut vcd =
            GreedyVcd::new(&mut out, r.fabric(), 8, &ScopeFilter::default(), "test").unwrap();
        let outcome = r.run(|f, c| vcd.sample(f, c)).unwrap();
        vcd.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        for signal in [
            " q_count ",
            " q_packet_s0 ",
            " q_packet_s5 ",
            "$scope module l1_c3 $end",
        ] {
            assert!(text.contains(signal), "{signal} missing");
        }
        assert!(!text.contains("l2_c0"), "outputs hold no registers");
        assert_eq!(outcome.packets, 8);
        let last = format!("#{}", crate::wave::commit_time(outcome.completion - 1));
        assert!(text.contains(&last), "{last} missing");
    }
}
