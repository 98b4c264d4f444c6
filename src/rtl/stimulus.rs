//! The stimulus a testbench replays: per cycle, per input and injection VC, the flit the
//! model's source wrote ({valid, head, tail, data}), as `$readmemh` lines.

use super::hex;
use crate::flit::FlitBits;
use crate::sim::Simulation;
use crate::switch::TransferKind;
use bitvec::prelude::*;

/// Records the injections of a run, cycle by cycle.
#[derive(Clone, Debug, Default)]
pub struct Stimulus {
    lines: hex::Lines,
}

impl Stimulus {
    /// Records the injections of the cycle `sim` just completed (on the general kernel: the
    /// bit-plane kernel lists a worm's head and tail only).
    pub fn sample(&mut self, sim: &Simulation) {
        assert!(
            !sim.bit_planes(),
            "a stimulus is recorded from a run on the general kernel"
        );
        let c = &sim.config;
        let slot = (c.flit_bits + 3) as usize;
        let slots = (c.inputs * c.vcs) as usize;
        let mut line: FlitBits = bitvec![u64, Lsb0; 0; slot * slots];
        for t in sim.last_transfers() {
            if t.kind != TransferKind::Injected {
                continue;
            }
            let base = sim.fabric.injection_slot(t.to) as usize * slot;
            let data = sim.flit_bits(t.flit);
            line[base..base + data.len()].copy_from_bitslice(&data);
            line.set(base + slot - 1, true);
            line.set(base + slot - 2, t.flit.seq == 0);
            line.set(base + slot - 3, u32::from(t.flit.seq) + 1 == c.flits);
        }
        self.lines.push(hex::digits(line.len(), |i| line[i]));
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
