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
    /// Switches (the pruned butterfly's vertices), each a module instance.
    pub switches: u64,
    pub kind: SwitchBuild,
}

/// What each switch of a [`BuildSize`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchBuild {
    /// A VC switch: the input VCs of the switch with the most input ports (its ports × B),
    /// and their depth.
    Vc { input_vcs: u64, depth: u64 },
    /// A vertex of the pruned butterfly, its direction-bit switch bit-serial ([BB] §3).
    Pruned,
}

/// KiB a simulator's build takes per VC switch, fixed, per input VC, per input VC squared,
/// and per input VC and buffer slot past the first; and its fixed KiB. Upper bounds of builds
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

/// KiB per pruned-butterfly vertex, and fixed, likewise: the 64-, 256- and 1024-input
/// networks (232, 976 and 4 000 vertices) took Verilator 253 920, 329 412 and 1 328 672 KiB,
/// Icarus 39 528, 146 096 and 582 380. (From 256 to 1024 inputs Verilator took 330 KiB a
/// vertex more; the bound allows 450, as no larger network was measured.)
const PRUNED_VERILATOR: (u64, u64) = (450, 192 << 10);
const PRUNED_ICARUS: (u64, u64) = (160, 16 << 10);

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
            kind: SwitchBuild::Vc {
                input_vcs: u64::from(in_ports) * u64::from(sim.config.vcs),
                depth: u64::from(sim.config.effective_depth()),
            },
        }
    }

    /// The build size of a valid `config`'s network, where the configuration alone tells it
    /// (a level-by-level network, [`SimConfig::network_floor`]).
    pub fn of_config(config: &SimConfig) -> Option<Self> {
        let (switches, _) = config.network_floor();
        (switches > 0).then(|| BuildSize {
            inputs: Some(config.inputs),
            switches,
            kind: SwitchBuild::Vc {
                input_vcs: u64::from(config.switch_radix())
                    * u64::from(config.multiplicity())
                    * u64::from(config.vcs),
                depth: u64::from(config.effective_depth()),
            },
        })
    }

    /// The build size of a pruned butterfly of `inputs` inputs and `vertices` vertices.
    pub fn pruned(inputs: u32, vertices: u64) -> Self {
        BuildSize {
            inputs: Some(inputs),
            switches: vertices,
            kind: SwitchBuild::Pruned,
        }
    }

    /// Bytes of memory `simulator` takes at most to build the RTL (a bound from measured
    /// builds, above).
    pub fn memory(&self, simulator: Simulator) -> u64 {
        let (per_switch, base) = match (self.kind, simulator) {
            (SwitchBuild::Vc { input_vcs, depth }, simulator) => {
                let ([fixed, per_vc, per_vc_squared, per_slot], base) = match simulator {
                    Simulator::Verilator => VERILATOR,
                    Simulator::Icarus => ICARUS,
                };
                let v = input_vcs;
                let per_switch = fixed
                    .saturating_add(per_vc.saturating_mul(v))
                    .saturating_add(per_vc_squared.saturating_mul(v.saturating_mul(v)))
                    .saturating_add(
                        per_slot.saturating_mul(v.saturating_mul(depth.saturating_sub(1))),
                    );
                (per_switch, base)
            }
            (SwitchBuild::Pruned, Simulator::Verilator) => PRUNED_VERILATOR,
            (SwitchBuild::Pruned, Simulator::Icarus) => PRUNED_ICARUS,
        };
        self.switches
            .saturating_mul(per_switch)
            .saturating_add(base)
            .saturating_mul(1024)
    }

    /// Refuses to launch `simulator` on an RTL whose build would not fit the memory limit
    /// ([`crate::limits`]).
    pub fn check(&self, simulator: Simulator) -> Result<()> {
        let what = match self.kind {
            SwitchBuild::Vc { input_vcs, .. } => format!(
                "{}'s build of {} switches of {input_vcs} input VCs",
                simulator.name(),
                self.switches
            ),
            SwitchBuild::Pruned => {
                format!("{}'s build of {} vertices", simulator.name(), self.switches)
            }
        };
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
        let vc = measured.map(|(switches, vcs, depth, verilator, icarus)| {
            let kind = SwitchBuild::Vc {
                input_vcs: vcs,
                depth,
            };
            (switches, kind, verilator, icarus)
        });
        let pruned = [
            (232, SwitchBuild::Pruned, 253_920, 39_528),
            (976, SwitchBuild::Pruned, 329_412, 146_096),
            (4_000, SwitchBuild::Pruned, 1_328_672, 582_380),
        ];
        for (switches, kind, verilator, icarus) in vc.into_iter().chain(pruned) {
            let size = BuildSize {
                inputs: None,
                switches,
                kind,
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
