//! What a Verilog simulator takes to build a network's RTL, checked before it is launched: the
//! simulators elaborate every switch instance apart, and their memory grows with the switches
//! and with each switch's input VCs and buffer slots, far beyond the Verilog's size (the
//! switch modules are parameterised; a 64-input butterfly's RTL is 0.45 MB of text whichever
//! its B, but Verilator takes 1.1 GiB to build it at B = 1 and 6.2 GiB at B = 4).

use crate::config::SimConfig;
use crate::cosim::Simulator;
use crate::error::Result;
use crate::sim::Simulation;

/// The size of a network's RTL as a simulator's build sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildSize {
    /// The network's inputs, which a refusal names (none for a graph read from a file, which
    /// is sized by its file).
    pub inputs: Option<u32>,
    pub switches: u64,
    /// Input VCs of the switch with the most input ports (its ports × B), and their depth.
    pub vcs_per_switch: u64,
    pub depth: u64,
}

/// KiB a simulator's build takes per switch, fixed, per input VC, per input VC squared, and
/// per input VC and buffer slot past the first; and its fixed KiB. Upper bounds of builds
/// measured on 30 November (Verilator 5.006 `--binary --timing -O3 -j 2`, Icarus Verilog 11.0
/// `iverilog -g2012`), in KiB of peak resident memory per switch:
///
/// | network | switches | Verilator | Icarus |
/// |---|---:|---:|---:|
/// | 64 inputs, B = 1 | 448 | 2 554 | 596 |
/// | 64 inputs, B = 2 | 448 | 5 248 | 727 |
/// | 64 inputs, B = 4 | 448 | 14 546 | 1 025 |
/// | 64 inputs, B = 2, depth 8 | 448 | 7 991 | 1 032 |
/// | 64 inputs, dilation 2, B = 2 | 448 | 14 099 | – |
/// | 256 inputs, B = 1 | 2 304 | 2 631 | 597 |
/// | 1024 inputs, B = 1 | 11 264 | 2 164 (23.3 GiB, 345 s) | 604 (6.5 GiB) |
///
/// (The flit's width changed nothing: B = 2 at 64 bits took what it took at 8.)
const VERILATOR: ([u64; 4], u64) = ([1024, 768, 133, 102], 128 << 10);
const ICARUS: ([u64; 4], u64) = ([512, 72, 0, 12], 64 << 10);

impl BuildSize {
    /// The build size of `sim`'s network.
    pub fn of(sim: &Simulation) -> Self {
        let topo = &sim.fabric.topo;
        let in_ports = match &topo.graph {
            Some(g) => (0..g.switches).map(|s| g.in_ports(s)).max().unwrap_or(0),
            None => topo.ports(),
        };
        BuildSize {
            inputs: (sim.config.topology != crate::topology::TopologyKind::Graph)
                .then_some(sim.config.inputs),
            switches: topo.node_count() as u64,
            vcs_per_switch: u64::from(in_ports) * u64::from(sim.config.vcs),
            depth: u64::from(sim.config.effective_depth()),
        }
    }

    /// The build size of a valid `config`'s network, where the configuration alone tells it
    /// (a level-by-level network, [`SimConfig::network_floor`]).
    pub fn of_config(config: &SimConfig) -> Option<Self> {
        let (switches, _) = config.network_floor();
        (switches > 0).then(|| BuildSize {
            inputs: Some(config.inputs),
            switches,
            vcs_per_switch: u64::from(config.switch_radix())
                * u64::from(config.multiplicity())
                * u64::from(config.vcs),
            depth: u64::from(config.effective_depth()),
        })
    }

    /// Bytes of memory `simulator` takes at most to build the RTL (a bound from measured
    /// builds, above).
    pub fn memory(&self, simulator: Simulator) -> u64 {
        let ([fixed, per_vc, per_vc_squared, per_slot], base) = match simulator {
            Simulator::Verilator => VERILATOR,
            Simulator::Icarus => ICARUS,
        };
        let v = self.vcs_per_switch;
        let per_switch = fixed
            + per_vc * v
            + per_vc_squared * v * v
            + per_slot * v * self.depth.saturating_sub(1);
        self.switches
            .saturating_mul(per_switch)
            .saturating_add(base)
            .saturating_mul(1024)
    }

    /// Refuses to launch `simulator` on an RTL whose build would not fit the memory limit
    /// ([`crate::limits`]).
    pub fn check(&self, simulator: Simulator) -> Result<()> {
        let what = format!(
            "{}'s build of {} switches of {} input VCs",
            simulator.name(),
            self.switches,
            self.vcs_per_switch
        );
        let estimate = crate::limits::Estimate::new().with(what, self.memory(simulator));
        match self.inputs {
            Some(n) => estimate.check_memory("inputs", n),
            None => estimate.check_memory("graph", format!("{} switches", self.switches)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds lie above every measured build (the table of [`VERILATOR`]), below twice it.
    #[test]
    fn bounds_cover_the_measured_builds_closely() {
        // (switches, input VCs, depth, Verilator KiB, Icarus KiB; 0: not measured)
        let measured: [(u64, u64, u64, u64, u64); 7] = [
            (448, 2, 1, 1_144_468, 267_028),
            (448, 4, 1, 2_351_272, 325_868),
            (448, 8, 1, 6_516_804, 459_156),
            (448, 4, 8, 3_579_964, 462_304),
            (448, 8, 1, 6_316_376, 0),
            (2_304, 2, 1, 6_062_520, 1_376_264),
            (11_264, 2, 1, 24_379_596, 6_799_456),
        ];
        for (switches, vcs_per_switch, depth, verilator, icarus) in measured {
            let size = BuildSize {
                inputs: None,
                switches,
                vcs_per_switch,
                depth,
            };
            for (simulator, kib) in [
                (Simulator::Verilator, verilator),
                (Simulator::Icarus, icarus),
            ] {
                if kib == 0 {
                    continue;
                }
                let bound = size.memory(simulator) / 1024;
                assert!(bound >= kib, "{simulator:?} {size:?}: {bound} < {kib}");
                assert!(bound < 2 * kib, "{simulator:?} {size:?}: {bound} KiB");
            }
        }
    }
}
