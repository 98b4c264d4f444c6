//! The generated Verilog against the model, under Icarus Verilog and Verilator: bit-exact
//! waveforms over a matrix of configurations, a deliberately broken arbitration rule that must
//! be reported, lint and synthesis of the generated files, and the reference files.
//! These tests need iverilog, verilator and yosys; without them they fail with the install
//! command (scripts/test installs them).

use flitforge::config::{Backpressure, FlowControl, LaneChoice, LinkBandwidth, SimConfig};
use flitforge::cosim::{self, Simulator};
use flitforge::topology::TopologyKind;
use flitforge::traffic::Traffic;
use std::path::PathBuf;

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn assert_identical(config: SimConfig, simulator: Simulator, name: &str) {
    let prepared =
        cosim::prepare(config.clone(), "cargo test").unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir = workdir(name);
    let verdict = cosim::run(&prepared, simulator, &dir).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        verdict.divergence.is_none(),
        "{name}: {verdict}\n{config:?}\nfiles kept in {}",
        dir.display()
    );
    assert!(verdict.signals > 0 && verdict.cycles > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The 72-configuration matrix, 24 per flow-control mode (one test each, so that the three
/// run side by side): B in {1, 2, 4}, L in {1, 4}, dilation 1 and 2 (butterfly, dilated and
/// splitter networks, Beneš), both link bandwidths and lane choices, n from 8 to 32 (and one
/// 64-input wormhole butterfly), random traffic seeds.
fn matrix(m: usize, mode: FlowControl) {
    let mut count = 0;
    for (bi, vcs) in [1u32, 2, 4].into_iter().enumerate() {
        for flits in [1u32, 4] {
            for (ti, (topology, dilation)) in [
                (TopologyKind::Butterfly, 1),
                (TopologyKind::Dilated, 2),
                (TopologyKind::Splitter, 2),
                (TopologyKind::Benes, 1),
            ]
            .into_iter()
            .enumerate()
            {
                let k = (m * 24 + bi * 8 + flits as usize * 2 + ti) as u64;
                // One 64-input network (wormhole, B = 4, L = 4, the butterfly): Icarus takes
                // ten seconds to elaborate one, and the sizes below reach every other feature
                // (a quarter at 32 inputs: the butterflies of one-flit messages and the
                // splitter networks of four-flit ones).
                let inputs = if (m, bi, flits, ti) == (0, 2, 4, 0) {
                    64
                } else {
                    [8, 16, 32, 16][(k % 4) as usize]
                };
                let config = SimConfig {
                    topology,
                    dilation,
                    inputs,
                    vcs,
                    flits,
                    flit_bits: 16,
                    vc_depth: 1 + (k % 2) as u32,
                    mode,
                    link_bandwidth: if k.is_multiple_of(3) {
                        LinkBandwidth::One
                    } else {
                        LinkBandwidth::PerVc
                    },
                    lane_choice: if k.is_multiple_of(2) {
                        LaneChoice::Random
                    } else {
                        LaneChoice::Lowest
                    },
                    traffic: if k.is_multiple_of(2) {
                        Traffic::Uniform { q: 2 }
                    } else {
                        Traffic::RandomPermutation
                    },
                    seed: k,
                    ..SimConfig::default()
                };
                assert_identical(config, Simulator::Icarus, &format!("matrix-{k}"));
                count += 1;
            }
        }
    }
    assert_eq!(count, 24);
}

#[test]
fn matrix_wormhole_is_identical_under_icarus_across_24_configurations() {
    matrix(0, FlowControl::Wormhole);
}

#[test]
fn matrix_store_forward_is_identical_under_icarus_across_24_configurations() {
    matrix(1, FlowControl::StoreForward);
}

#[test]
fn matrix_drop_is_identical_under_icarus_across_24_configurations() {
    matrix(2, FlowControl::Drop);
}

/// Registered back-pressure: 24 configurations over every flow-control mode, B in {1, 2, 4},
/// VC depth 1 to 3, both link bandwidths and lane choices, all four network families.
#[test]
fn registered_backpressure_is_identical_under_icarus_across_24_configurations() {
    let modes = [
        FlowControl::Wormhole,
        FlowControl::StoreForward,
        FlowControl::Drop,
    ];
    let families = [
        (TopologyKind::Butterfly, 1),
        (TopologyKind::Dilated, 2),
        (TopologyKind::Splitter, 2),
        (TopologyKind::Benes, 1),
    ];
    for k in 0..24u64 {
        let (topology, dilation) = families[(k % 4) as usize];
        let config = SimConfig {
            topology,
            dilation,
            inputs: [8, 16, 32][(k % 3) as usize],
            vcs: [1, 2, 4][((k / 4) % 3) as usize],
            flits: [1, 4, 5][((k / 3) % 3) as usize],
            flit_bits: 16,
            vc_depth: 1 + (k % 3) as u32,
            mode: modes[((k / 8) % 3) as usize],
            backpressure: Backpressure::Registered,
            link_bandwidth: if k % 5 == 0 {
                LinkBandwidth::One
            } else {
                LinkBandwidth::PerVc
            },
            lane_choice: if k % 2 == 1 {
                LaneChoice::Random
            } else {
                LaneChoice::Lowest
            },
            traffic: Traffic::Uniform {
                q: 2 + (k % 2) as u32,
            },
            seed: 100 + k,
            ..SimConfig::default()
        };
        assert_identical(config, Simulator::Icarus, &format!("registered-{k}"));
    }
}

/// Registered back-pressure under Verilator, two configurations (one test each, so that the
/// two builds run side by side).
fn registered_under_verilator(k: usize, topology: TopologyKind, mode: FlowControl) {
    let config = SimConfig {
        topology,
        inputs: 8,
        vcs: 2,
        flits: 4,
        flit_bits: 12,
        mode,
        backpressure: Backpressure::Registered,
        lane_choice: LaneChoice::Random,
        traffic: Traffic::Uniform { q: 3 },
        seed: 21 + k as u64,
        ..SimConfig::default()
    };
    assert_identical(
        config,
        Simulator::Verilator,
        &format!("registered-verilator-{k}"),
    );
}

#[test]
fn registered_backpressure_wormhole_butterfly_is_identical_under_verilator() {
    registered_under_verilator(0, TopologyKind::Butterfly, FlowControl::Wormhole);
}

#[test]
fn registered_backpressure_drop_dilated_is_identical_under_verilator() {
    registered_under_verilator(1, TopologyKind::Dilated, FlowControl::Drop);
}

#[test]
fn done_when_configuration_is_identical_under_both_simulators() {
    let config = SimConfig {
        inputs: 8,
        vcs: 2,
        flits: 4,
        traffic: Traffic::RandomPermutation,
        seed: 3,
        ..SimConfig::default()
    };
    assert_identical(config.clone(), Simulator::Icarus, "both-icarus");
    assert_identical(config, Simulator::Verilator, "both-verilator");
}

#[test]
fn drop_mode_on_a_dilated_network_is_identical_under_verilator() {
    let config = SimConfig {
        topology: TopologyKind::Dilated,
        dilation: 2,
        inputs: 8,
        vcs: 1,
        flits: 4,
        flit_bits: 12,
        mode: FlowControl::Drop,
        link_bandwidth: LinkBandwidth::One,
        lane_choice: LaneChoice::Random,
        traffic: Traffic::Uniform { q: 3 },
        seed: 11,
        ..SimConfig::default()
    };
    assert_identical(config, Simulator::Verilator, "drop-verilator");
}

/// The k-ary n-fly: 18 configurations over every flow-control mode, radix 2, 4 and 8, B in
/// {1, 2, 3}, one and several flits, both back-pressures and link bandwidths.
#[test]
fn kary_fly_is_identical_under_icarus_across_18_configurations() {
    let modes = [
        FlowControl::Wormhole,
        FlowControl::StoreForward,
        FlowControl::Drop,
    ];
    for k in 0..18u64 {
        let (radix, inputs) =
            [(2, 16), (4, 16), (8, 64), (2, 32), (4, 64), (2, 8)][(k % 6) as usize];
        let config = SimConfig {
            topology: TopologyKind::KaryFly,
            radix,
            inputs,
            vcs: [1, 2, 3][((k / 2) % 3) as usize],
            flits: [1, 4, 3][((k / 3) % 3) as usize],
            flit_bits: 16,
            vc_depth: 1 + (k % 2) as u32,
            mode: modes[((k / 6) % 3) as usize],
            backpressure: if k % 4 == 3 {
                Backpressure::Registered
            } else {
                Backpressure::Combinational
            },
            link_bandwidth: if k % 5 == 2 {
                LinkBandwidth::One
            } else {
                LinkBandwidth::PerVc
            },
            traffic: if k % 2 == 0 {
                Traffic::Uniform { q: 3 }
            } else {
                Traffic::RandomPermutation
            },
            seed: 200 + k,
            ..SimConfig::default()
        };
        assert_identical(config, Simulator::Icarus, &format!("kary-fly-{k}"));
    }
}

#[test]
fn kary_fly_is_identical_under_verilator() {
    let config = SimConfig {
        topology: TopologyKind::KaryFly,
        radix: 4,
        inputs: 16,
        vcs: 2,
        flits: 4,
        flit_bits: 12,
        mode: FlowControl::Drop,
        traffic: Traffic::Uniform { q: 3 },
        seed: 31,
        ..SimConfig::default()
    };
    assert_identical(config, Simulator::Verilator, "kary-fly-verilator");
}

/// A broken template (the round-robin pointer of VC allocation never advances) must be caught,
/// and the report must name the cycle, the signal and both values.
/// A 4×4 mesh with dimension-order routes (each switch's route table keyed by destination):
/// every flow-control mode, B in {1, 2}, both link bandwidths, one and several flits.
#[test]
fn mesh_is_identical_under_icarus_across_6_configurations() {
    let modes = [
        FlowControl::Wormhole,
        FlowControl::StoreForward,
        FlowControl::Drop,
    ];
    for k in 0..6u64 {
        let config = SimConfig {
            topology: TopologyKind::Mesh,
            inputs: 16,
            backpressure: Backpressure::Registered,
            vcs: 1 + (k % 2) as u32,
            flits: [1, 3, 4][(k % 3) as usize],
            vc_depth: if k == 1 { 4 } else { 1 + (k % 2) as u32 },
            flit_bits: 16,
            mode: modes[(k / 2) as usize],
            link_bandwidth: if k % 3 == 1 {
                LinkBandwidth::One
            } else {
                LinkBandwidth::PerVc
            },
            traffic: if k % 2 == 0 {
                Traffic::Uniform { q: 3 }
            } else {
                Traffic::RandomPermutation
            },
            seed: 300 + k,
            ..SimConfig::default()
        };
        assert_identical(config, Simulator::Icarus, &format!("mesh-{k}"));
    }
}

/// A graph file with given paths (route tables keyed by input port and path index) under
/// Icarus, [CMS]'s lower-bound instance under Icarus and Verilator, and the mesh under
/// Verilator.
#[test]
fn graph_networks_are_identical_under_both_simulators() {
    let dir = workdir("graph-files");
    std::fs::create_dir_all(&dir).unwrap();
    let graph = dir.join("g.json");
    let paths = dir.join("p.json");
    std::fs::write(
        &graph,
        r#"{"nodes": 6, "links": [[0,2],[1,2],[2,3],[2,4],[3,5],[4,5],[0,3],[1,4]]}"#,
    )
    .unwrap();
    std::fs::write(
        &paths,
        r#"[[0,2,3,5],[1,2,4,5],[0,3,5],[1,4,5],[0,2,4],{"nodes":[1,2,3],"release":2}]"#,
    )
    .unwrap();
    let on_paths = SimConfig {
        topology: TopologyKind::Graph,
        graph: Some(graph.display().to_string()),
        traffic: Traffic::Paths {
            path: paths.display().to_string(),
        },
        vcs: 2,
        flits: 3,
        flit_bits: 16,
        ..SimConfig::default()
    };
    assert_identical(on_paths.clone(), Simulator::Icarus, "graph-paths");
    // [CMS] Theorem 2.2.1's lower-bound instance (B = 2, C = 6, D = 5, L = 2D), released in
    // three waves: worms block on the primary links every B + 1 of them share.
    let lb = flitforge::cms::lower_bound::generate(2, 6, 5).unwrap();
    let (lb_graph, lb_paths) = (dir.join("lb-graph.json"), dir.join("lb-paths.json"));
    std::fs::write(&lb_graph, lb.problem.graph_json()).unwrap();
    let releases: Vec<u64> = (0..lb.problem.messages() as u64).map(|i| i % 3).collect();
    std::fs::write(&lb_paths, lb.problem.paths_json(&releases)).unwrap();
    let lower_bound = SimConfig {
        graph: Some(lb_graph.display().to_string()),
        traffic: Traffic::Paths {
            path: lb_paths.display().to_string(),
        },
        vcs: 2,
        flits: 10,
        ..on_paths.clone()
    };
    for simulator in [Simulator::Icarus, Simulator::Verilator] {
        assert_identical(lower_bound.clone(), simulator, "lower-bound");
    }
    let dropping = SimConfig {
        vcs: 1,
        mode: FlowControl::Drop,
        link_bandwidth: LinkBandwidth::One,
        ..on_paths
    };
    assert_identical(dropping, Simulator::Icarus, "graph-paths-drop");
    let mesh = SimConfig {
        topology: TopologyKind::Mesh,
        inputs: 16,
        backpressure: Backpressure::Registered,
        vcs: 2,
        flits: 4,
        vc_depth: 2,
        flit_bits: 16,
        traffic: Traffic::Uniform { q: 2 },
        seed: 7,
        ..SimConfig::default()
    };
    assert_identical(mesh, Simulator::Verilator, "mesh-verilator");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_arbitration_rule_yields_a_first_divergence_report() {
    let config = SimConfig {
        inputs: 8,
        vcs: 1,
        flits: 4,
        traffic: Traffic::Uniform { q: 3 },
        seed: 2,
        ..SimConfig::default()
    };
    let mut prepared = cosim::prepare(config, "cargo test").unwrap();
    let rule = "if (|(grant & req_c)) rr_d[c*RRW +: RRW] = past(last_won);";
    let mut mutated = 0;
    for (name, text) in &mut prepared.design.files {
        if name.starts_with("ff_switch") && text.contains(rule) {
            *text = text.replace(rule, "");
            mutated += 1;
        }
    }
    assert!(
        mutated > 0,
        "the rule to break was not found in the templates"
    );
    let dir = workdir("mutant");
    let verdict = cosim::run(&prepared, Simulator::Icarus, &dir).unwrap();
    let d = verdict.divergence.clone().expect("the mutant must diverge");
    assert!(
        d.signal.starts_with("tb.net.l") && d.signal.contains(".rr_ptr_d"),
        "{verdict}"
    );
    assert_ne!(d.model, d.rtl);
    let text = verdict.to_string();
    assert!(
        text.contains(&format!("at cycle {}", d.cycle))
            && text.contains("model=")
            && text.contains("rtl="),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn generated_verilog_lints_clean_and_synthesises() {
    let full = SimConfig {
        topology: TopologyKind::Splitter,
        dilation: 3,
        inputs: 8,
        vcs: 3,
        vc_depth: 2,
        flits: 4,
        flit_bits: 16,
        mode: FlowControl::Drop,
        link_bandwidth: LinkBandwidth::One,
        lane_choice: LaneChoice::Random,
        ..SimConfig::default()
    };
    let saf = SimConfig {
        inputs: 2,
        vcs: 1,
        flits: 1,
        flit_bits: 4,
        mode: FlowControl::StoreForward,
        ..SimConfig::default()
    };
    let mesh = SimConfig {
        topology: TopologyKind::Mesh,
        inputs: 9,
        vcs: 2,
        flits: 2,
        flit_bits: 12,
        backpressure: Backpressure::Registered,
        ..SimConfig::default()
    };
    for (name, config) in flitforge::rtl::reference::configs().into_iter().chain([
        ("full", full),
        ("saf2", saf),
        ("mesh9", mesh),
    ]) {
        let prepared = cosim::prepare(config, "cargo test").unwrap();
        let dir = workdir(&format!("lint-{name}"));
        prepared.design.write(&dir).unwrap();
        let mut sources: Vec<&str> = prepared.design.verilog_files();
        sources.retain(|f| *f != "tb.v");
        let mut args = vec!["--lint-only", "-Wall", "--top-module", "ff_net"];
        args.extend(&sources);
        cosim::tool(&dir, "verilator", &args)
            .unwrap_or_else(|e| panic!("{name}: verilator -Wall: {e}"));
        cosim::tool(
            &dir,
            "iverilog",
            &[&["-g2005", "-Wall", "-o", "/dev/null"], &sources[..]].concat(),
        )
        .unwrap_or_else(|e| panic!("{name}: iverilog: {e}"));
        if name == "butterfly8_b2_l4_w8" {
            let script = format!(
                "read_verilog {}; synth -top ff_net; stat",
                sources.join(" ")
            );
            cosim::tool(&dir, "yosys", &["-q", "-p", &script])
                .unwrap_or_else(|e| panic!("{name}: yosys: {e}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn reference_rtl_and_waves_are_up_to_date() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (rel, bytes) in flitforge::rtl::reference::files().unwrap() {
        let on_disk = std::fs::read(root.join(&rel)).unwrap_or_default();
        assert!(
            on_disk == bytes,
            "{} differs from what the model generates; run `flitforge reference` and commit",
            rel.display()
        );
    }
}
