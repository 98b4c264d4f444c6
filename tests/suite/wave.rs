//! The model's VCD: the declared registers of every switch under `tb.net.l{level}_c{column}`,
//! values that agree with the model's registers after every cycle, a scope filter, and
//! byte-stable output.

use flitforge::Simulation;
use flitforge::config::{FlowControl, SimConfig};
use flitforge::switch::layout::Register;
use flitforge::traffic::Traffic;
use flitforge::wave::{ScopeFilter, VcdWriter, commit_time};
use std::collections::BTreeMap;
use vcd::{Command, IdCode, ScopeItem, Value};

fn config() -> SimConfig {
    SimConfig {
        inputs: 8,
        vcs: 2,
        flits: 4,
        flit_bits: 8,
        mode: FlowControl::Wormhole,
        traffic: Traffic::Uniform { q: 2 },
        seed: 5,
        ..SimConfig::default()
    }
}

/// Runs `config` writing a waveform; returns the VCD text and, per cycle, every switch's
/// register values as the model reads them (scope/name -> bits, MSB first).
fn run(config: SimConfig, filter: &str) -> (Vec<u8>, Vec<BTreeMap<String, String>>) {
    let mut sim = Simulation::new(config).unwrap();
    let mut out = Vec::new();
    let mut expected = Vec::new();
    {
        let mut vcd =
            VcdWriter::new(&mut out, &sim, &ScopeFilter::new(filter).unwrap(), "test").unwrap();
        sim.run_observed(|s| {
            expected.push(snapshot(s));
            vcd.sample(s)
        })
        .unwrap();
        vcd.finish().unwrap();
    }
    (out, expected)
}

fn snapshot(sim: &Simulation) -> BTreeMap<String, String> {
    let f = &sim.fabric;
    let id_bits = sim.header_layout.id_bits();
    let mut values = BTreeMap::new();
    for s in 0..f.topo.node_count() as u32 {
        let node = f.topo.node(s);
        let layout = f.layout(f.switch_kind(node.level), sim.config.flit_bits, id_bits);
        for reg in &layout.registers {
            for k in 0..reg.elements() {
                let index = reg.index_of(k);
                let bits = f.read_register(s, reg, &index, id_bits, sim);
                let text: String = bits
                    .iter()
                    .by_vals()
                    .rev()
                    .map(|b| if b { '1' } else { '0' })
                    .collect();
                values.insert(
                    format!(
                        "l{}_c{}.{}",
                        node.level,
                        node.column,
                        Register::element_name(reg, &index)
                    ),
                    text,
                );
            }
        }
    }
    values
}

/// Parses a VCD into (signal path -> id) and, per timestamp, the value of every id.
fn parse(
    text: &[u8],
) -> (
    BTreeMap<String, IdCode>,
    BTreeMap<u64, BTreeMap<IdCode, String>>,
) {
    let mut parser = vcd::Parser::new(text);
    let header = parser.parse_header().unwrap();
    let mut ids = BTreeMap::new();
    fn walk(items: &[ScopeItem], path: &str, ids: &mut BTreeMap<String, IdCode>) {
        for item in items {
            match item {
                ScopeItem::Scope(s) => walk(&s.items, &format!("{path}{}.", s.identifier), ids),
                ScopeItem::Var(v) => {
                    ids.insert(format!("{path}{}", v.reference), v.code);
                }
                _ => {}
            }
        }
    }
    walk(&header.items, "", &mut ids);
    let mut times = BTreeMap::new();
    let mut now = 0;
    let mut state: BTreeMap<IdCode, String> = BTreeMap::new();
    for cmd in parser {
        match cmd.unwrap() {
            Command::Timestamp(t) => {
                times.insert(now, state.clone());
                now = t;
            }
            Command::ChangeVector(id, v) => {
                state.insert(
                    id,
                    v.iter()
                        .map(|b| if b == Value::V1 { '1' } else { '0' })
                        .collect(),
                );
            }
            Command::ChangeScalar(id, v) => {
                state.insert(id, if v == Value::V1 { "1" } else { "0" }.to_string());
            }
            Command::ChangeString(id, s) => {
                state.insert(id, s);
            }
            _ => {}
        }
    }
    times.insert(now, state);
    (ids, times)
}

#[test]
fn waveform_matches_the_model_registers_every_cycle() {
    let (vcd, expected) = run(config(), "");
    let (ids, times) = parse(&vcd);
    assert!(ids.contains_key("tb.clk") && ids.contains_key("tb.rst"));
    let declared = expected[0].len();
    let signals = ids
        .keys()
        .filter(|k| k.starts_with("tb.net.") && !k.ends_with("_name"))
        .count();
    assert_eq!(
        signals, declared,
        "every declared register element is dumped"
    );
    assert!(ids.keys().any(|k| k.starts_with("tb.net.l3_c7.")));
    for (cycle, regs) in expected.iter().enumerate() {
        let at = &times[&commit_time(cycle as u64)];
        for (name, value) in regs {
            let id = ids[&format!("tb.net.{name}")];
            assert_eq!(&at[&id], value, "cycle {cycle}: {name}");
        }
    }
    // Enumerated registers decode to their names.
    let state = ids["tb.net.l1_c0.vc_state_p0_v0_name"];
    let seen: Vec<&str> = times
        .values()
        .filter_map(|m| m.get(&state))
        .map(String::as_str)
        .collect();
    assert!(
        seen.contains(&"IDLE") && seen.iter().any(|s| *s == "ROUTING" || *s == "ACTIVE"),
        "{seen:?}"
    );
}

#[test]
fn scope_filter_limits_the_switches() {
    let (vcd, _) = run(config(), "l0_*,l3_c7");
    let (ids, _) = parse(&vcd);
    let scopes: std::collections::BTreeSet<&str> = ids
        .keys()
        .filter_map(|k| k.strip_prefix("tb.net."))
        .filter_map(|k| k.split('.').next())
        .collect();
    let mut want: Vec<String> = (0..8).map(|c| format!("l0_c{c}")).collect();
    want.push("l3_c7".into());
    assert_eq!(
        scopes.into_iter().map(String::from).collect::<Vec<_>>(),
        want
    );
    assert!(ScopeFilter::new("l0_*;rm").is_err());
}

#[test]
fn waveform_is_byte_stable_for_a_seed() {
    let drop = SimConfig {
        mode: FlowControl::Drop,
        vcs: 1,
        ..config()
    };
    assert_eq!(run(drop.clone(), "").0, run(drop, "").0);
}

/// The k-ary n-fly: radix-4 switches declare a pointer per direction and four input ports,
/// and the waveform follows the model's registers every cycle.
#[test]
fn kary_fly_waveform_matches_the_model_registers_every_cycle() {
    let config = SimConfig {
        topology: flitforge::topology::TopologyKind::KaryFly,
        inputs: 16,
        radix: 4,
        ..config()
    };
    let (vcd, expected) = run(config, "");
    let (ids, times) = parse(&vcd);
    // Two stages of four switches and the ejection level.
    for scope in ["l0_c3", "l1_c0", "l2_c3"] {
        assert!(
            ids.keys()
                .any(|k| k.starts_with(&format!("tb.net.{scope}.")))
        );
    }
    assert!(!ids.keys().any(|k| k.starts_with("tb.net.l3_")));
    for d in 0..4 {
        assert!(ids.contains_key(&format!("tb.net.l1_c2.rr_ptr_d{d}")));
    }
    assert!(ids.contains_key("tb.net.l0_c1.vc_state_p3_v1"));
    for (cycle, regs) in expected.iter().enumerate() {
        let at = &times[&commit_time(cycle as u64)];
        for (name, value) in regs {
            let id = ids[&format!("tb.net.{name}")];
            assert_eq!(&at[&id], value, "cycle {cycle}: {name}");
        }
    }
}
