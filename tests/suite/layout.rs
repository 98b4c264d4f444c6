//! The register layout is declared once and is complete: every element of every declared
//! register of every switch kind can be read, fits its declared width, and agrees with the
//! model's state. The waveform writer and the Verilog back end walk this same layout.

use flitforge::Simulation;
use flitforge::config::{FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use flitforge::rtl::build::BuildSize;
use flitforge::switch::VcState;
use flitforge::switch::layout::SwitchKind;
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;
use std::collections::BTreeSet;

#[test]
fn every_register_element_reads_within_its_declared_width() {
    let config = SimConfig {
        topology: TopologyKind::Dilated,
        inputs: 16,
        vcs: 3,
        vc_depth: 2,
        flit_bits: 12,
        link_bandwidth: LinkBandwidth::One,
        lane_choice: LaneChoice::Random,
        traffic: Traffic::Uniform { q: 4 },
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config).unwrap();
    let id_bits = sim.header_layout.id_bits();
    let mut seen_states = BTreeSet::new();
    for _ in 0..12 {
        sim.step().unwrap();
        for s in 0..sim.fabric.topo.node_count() as u32 {
            let level = sim.fabric.topo.node(s).level;
            let kind = sim.fabric.switch_kind(level);
            let layout = sim.fabric.layout(kind, 12, id_bits);
            let names: BTreeSet<_> = layout.registers.iter().map(|r| r.name).collect();
            assert_eq!(
                names.len(),
                layout.registers.len(),
                "register names are unique"
            );
            for reg in &layout.registers {
                for k in 0..reg.elements() {
                    let index = reg.index_of(k);
                    let bits = sim.fabric.read_register(s, reg, &index, id_bits, &sim);
                    assert_eq!(bits.len(), reg.width as usize, "{}", reg.name);
                    if reg.name == "vc_state" {
                        let ivc = sim.fabric.vc_base(s) + index[0] * 3 + index[1];
                        let value = bits
                            .iter()
                            .by_vals()
                            .rev()
                            .fold(0, |acc, b| acc << 1 | u8::from(b));
                        assert_eq!(value, sim.fabric.state(ivc) as u8);
                        seen_states.insert(VcState::NAMES[value as usize]);
                    }
                }
            }
        }
    }
    assert!(
        seen_states.contains("ROUTING") && seen_states.contains("ACTIVE"),
        "{seen_states:?}"
    );
}

#[test]
fn layouts_differ_by_switch_kind_as_the_hardware_does() {
    let sim = Simulation::new(SimConfig {
        inputs: 8,
        ..SimConfig::default()
    })
    .unwrap();
    let inject = sim.fabric.layout(SwitchKind::Inject, 32, 29);
    let route = sim.fabric.layout(SwitchKind::Route, 32, 29);
    let eject = sim.fabric.layout(SwitchKind::Eject, 32, 29);
    assert_eq!((inject.in_ports, inject.out_ports), (1, 2));
    assert_eq!((route.in_ports, route.out_ports), (2, 2));
    assert_eq!((eject.in_ports, eject.out_ports), (2, 1));
    assert!(eject.registers.iter().all(|r| r.name != "out_alloc_valid"));
    let flit = route
        .registers
        .iter()
        .find(|r| r.name == "vc_flit")
        .unwrap();
    assert_eq!(flit.width, 32);
    assert_eq!(flit.elements(), 4, "2 ports x 2 VCs x depth 1");
}

/// Routing reads the destination and middle column from the header; the header flit's bits,
/// as the waveform and the Verilog hold them, carry exactly those values.
#[test]
fn header_flit_bits_carry_the_routing_fields() {
    let config = SimConfig {
        topology: TopologyKind::Benes,
        inputs: 64,
        flit_bits: 20,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(config).unwrap();
    sim.keep_records(true);
    sim.step().unwrap(); // batch traffic: every message is released at cycle 0
    let ids: Vec<u32> = sim.records().map(|r| r.id).collect();
    assert_eq!(ids.len(), 64);
    for id in ids {
        let h = sim.header(id);
        let bits = sim.flit_bits(flitforge::flit::FlitSlot {
            msg: id,
            seq: 0,
            hop: 0,
        });
        assert_eq!(
            sim.header_layout.read(&bits, "dest"),
            Some(u64::from(h.destination))
        );
        assert_eq!(
            sim.header_layout.read(&bits, "mid"),
            Some(u64::from(h.middle))
        );
        assert_eq!(sim.header_layout.read(&bits, "id"), Some(id as u64 & 0xff));
    }
}

/// The sizes known before a network is built (to refuse its Verilog or waveform early) never
/// exceed the estimates made from the built network, for every kind of network, and a
/// simulator's build is sized alike from either.
#[test]
fn floors_from_the_configuration_stay_below_the_estimates_of_the_network() {
    let base = SimConfig {
        inputs: 16,
        vcs: 2,
        vc_depth: 3,
        traffic: Traffic::Uniform { q: 2 },
        ..SimConfig::default()
    };
    let mut configs: Vec<SimConfig> = TopologyKind::ALL
        .iter()
        // (A graph is read from a file; the modified splitter is routed by `multibutterfly`.)
        .filter(|(_, t)| !matches!(t, TopologyKind::Graph | TopologyKind::ModifiedSplitter))
        .map(|&(_, topology)| SimConfig {
            topology,
            ..base.clone()
        })
        .collect();
    configs.extend([
        SimConfig {
            topology: TopologyKind::KaryFly,
            radix: 4,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::Dilated,
            dilation: 8,
            ..base.clone()
        },
        SimConfig {
            topology: TopologyKind::Splitter,
            dilation: 4,
            ..base.clone()
        },
        SimConfig {
            mode: FlowControl::StoreForward,
            flits: 4,
            vc_depth: 1,
            ..base.clone()
        },
    ]);
    for config in configs {
        let name = format!("{:?}", config.topology);
        let level_by_level = !matches!(
            config.topology,
            TopologyKind::Mesh
                | TopologyKind::Torus
                | TopologyKind::WrappedButterfly
                | TopologyKind::RandomGraph
        );
        if !level_by_level {
            assert_eq!(config.network_floor(), (0, 0), "{name}");
            assert_eq!(BuildSize::of_config(&config), None, "{name}");
            continue;
        }
        let sim = Simulation::new(config.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (switches, links) = config.network_floor();
        assert!(switches > 0, "{name}");
        assert!(switches <= sim.fabric.topo.node_count() as u64, "{name}");
        assert!(links <= sim.fabric.topo.links.len() as u64, "{name}");
        assert!(
            flitforge::rtl::size_floor(&config) <= flitforge::rtl::size_estimate(&sim),
            "{name}"
        );
        let floor = flitforge::wave::floor(&config);
        let estimate = flitforge::wave::estimate(&sim, &Default::default());
        assert!(floor.signals <= estimate.signals, "{name}");
        assert!(floor.memory <= estimate.memory, "{name}");
        assert!(floor.bytes <= estimate.bytes, "{name}");
        assert_eq!(
            BuildSize::of_config(&config),
            Some(BuildSize::of(&sim)),
            "{name}"
        );
    }
}
