//! The board top: its on-chip generators make the model's `lfsr` traffic, so the network's
//! waveform co-simulates identically and the counters it reports equal the model's
//! prediction; one small design goes through yosys, nextpnr-ice40 and icepack. These tests
//! need iverilog, verilator, yosys, nextpnr-ice40 and fpga-icestorm (scripts/test installs
//! them); without them they fail with the install command.

use flitforge::config::{Backpressure, SimConfig};
use flitforge::cosim::Simulator;
use flitforge::fpga::{self, Device, StatusPort};
use flitforge::traffic::{Destinations, Traffic};
use std::path::PathBuf;

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flitforge-fpga-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(inputs: u32, destinations: Destinations, rate: f64, horizon: u64) -> SimConfig {
    SimConfig {
        inputs,
        vcs: 2,
        flits: 4,
        flit_bits: 8,
        backpressure: Backpressure::Registered,
        traffic: Traffic::Lfsr { rate, destinations },
        cycles: Some(horizon),
        seed: 5,
        ..SimConfig::default()
    }
}

#[test]
fn the_whole_top_cosimulates_and_prints_the_predicted_counters() {
    for (k, (c, status, simulator)) in [
        (
            config(4, Destinations::Uniform, 0.3, 200),
            StatusPort::Uart,
            Simulator::Icarus,
        ),
        (
            SimConfig {
                vcs: 1,
                flits: 3,
                flit_bits: 10,
                backpressure: Backpressure::Combinational,
                ..config(8, Destinations::Transpose, 0.2, 150)
            },
            StatusPort::Leds,
            Simulator::Icarus,
        ),
        (
            config(4, Destinations::RandomPermutation, 0.5, 120),
            StatusPort::Leds,
            Simulator::Verilator,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = workdir(&format!("top{k}"));
        let verdict = fpga::cosim(&c, Device::Hx8k, status, simulator, &dir, "cargo test")
            .unwrap_or_else(|e| panic!("top {k}: {e}"));
        assert!(
            verdict.identical(),
            "top {k}: {verdict}\nfiles kept in {}",
            dir.display()
        );
        assert!(verdict.prediction.generated > 10, "top {k}: some traffic");
        // the whole top, generators, checkers and status printer included, lints clean
        let mut sources: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|f| f.starts_with("ff_") && f.ends_with(".v"))
            .collect();
        sources.sort();
        assert!(
            sources.iter().any(|f| f == "ff_top.v"),
            "top {k}: {sources:?}"
        );
        // (and so does the form synthesis reads, the crossbar's stage modules included)
        for define in [None, Some("-DSYNTHESIS")] {
            let mut args = vec!["--lint-only", "-Wall", "--top-module", "ff_top"];
            args.extend(define);
            args.extend(sources.iter().map(String::as_str));
            flitforge::cosim::tool(&dir, "verilator", &args)
                .unwrap_or_else(|e| panic!("top {k}: verilator -Wall {define:?}: {e}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_small_top_goes_through_yosys_nextpnr_and_icepack() {
    let dir = workdir("flow");
    let report = fpga::build(
        &config(2, Destinations::Uniform, 0.2, 500),
        Device::Hx1k,
        StatusPort::Leds,
        &dir,
        "cargo test",
        50.0,
        &mut |_| {},
    )
    .unwrap();
    assert!(report.fits, "{report:?}");
    assert!(report.luts > 100 && report.dffs > 50, "{report:?}");
    assert!(report.fmax_mhz.is_some_and(|f| f > 12.0), "{report:?}");
    let bin = std::fs::metadata(dir.join("top.bin")).unwrap();
    assert!(bin.len() > 10_000, "a bitstream");
    let pcf = std::fs::read_to_string(dir.join("board.pcf")).unwrap();
    assert!(
        pcf.contains("set_io clk 21")
            && pcf.contains("set_io led[0] 95")
            && !pcf.contains("set_io tx"),
        "{pcf}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_top_refuses_what_it_cannot_carry() {
    let bernoulli = SimConfig {
        traffic: Traffic::Bernoulli { rate: 0.1 },
        ..config(4, Destinations::Uniform, 0.1, 100)
    };
    let e = fpga::check(&bernoulli).unwrap_err().to_string();
    assert!(e.contains("traffic") && e.contains("lfsr"), "{e}");
    let benes = SimConfig {
        topology: flitforge::topology::TopologyKind::Benes,
        ..config(4, Destinations::Uniform, 0.1, 100)
    };
    assert!(
        fpga::check(&benes)
            .unwrap_err()
            .to_string()
            .contains("topology")
    );
    let one = SimConfig {
        link_bandwidth: flitforge::config::LinkBandwidth::One,
        ..config(4, Destinations::Uniform, 0.1, 100)
    };
    assert!(
        fpga::check(&one)
            .unwrap_err()
            .to_string()
            .contains("link-bandwidth")
    );
}

#[test]
fn status_lines_parse() {
    let line = "ff generated=0000012b delivered=0000012b errors=00000000 last=00000163 done";
    assert_eq!(
        fpga::top::parse_status(line),
        Some(([0x12b, 0x12b, 0, 0x163], true))
    );
    assert_eq!(
        fpga::top::parse_status(&line.replace("done", "run")).map(|p| p.1),
        Some(false)
    );
    assert_eq!(fpga::top::parse_status("garbage"), None);
}

#[test]
fn counters_are_sized_from_the_prediction_with_room_to_spare() {
    let p = |generated, last| fpga::Prediction {
        generated,
        delivered: generated,
        errors: 0,
        last,
    };
    // small runs keep the LED heartbeat's 23 bits
    assert_eq!(fpga::top::counter_bits(&p(300, 400), 300, 4), 23);
    // twice the largest value fits: 0x30d9b needs 18 bits, one more to spare
    assert_eq!(
        fpga::top::counter_bits(&p(0x30d9b, 0x1bb56), 100_000, 4),
        23
    );
    assert_eq!(fpga::top::counter_bits(&p(1 << 24, 5), 1000, 4), 26);
    // the horizon counts too, and nothing exceeds the status line's 32 bits
    assert_eq!(fpga::top::counter_bits(&p(1, 1), 1 << 25, 5), 27);
    assert_eq!(
        fpga::top::counter_bits(&p(1, 1), u64::from(u32::MAX), 5),
        32
    );
}

/// The crossbar synthesis maps (two kept stages, `ifdef SYNTHESIS`) and the one block
/// simulators run are the same function, proved by yosys for switches of 1 to 9 input VCs
/// (padding, one and several groups of four, one-bit flits).
#[test]
fn the_crossbar_synthesis_maps_is_the_one_simulators_run() {
    let dir = workdir("xbar");
    std::fs::create_dir_all(&dir).unwrap();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/rtl/butterfly8_b2_l4_w8/ff_switch.v"
    );
    std::fs::copy(source, dir.join("ff_switch.v")).unwrap();
    for (nv, no, w, sw) in [
        (1, 4, 8, 1),
        (2, 4, 8, 1),
        (3, 2, 3, 2),
        (4, 4, 8, 2),
        (4, 2, 1, 2),
        (5, 3, 2, 3),
        (6, 2, 3, 3),
        (7, 2, 1, 3),
        (8, 8, 4, 3),
        (9, 2, 2, 4),
        (3, 2, 2, 3),
    ] {
        let top = format!(
            "hierarchy -top ff_switch_xbar -chparam NV {nv} -chparam NO {no} -chparam W {w} -chparam SW {sw}"
        );
        let script = format!(
            "read_verilog -nosynthesis ff_switch.v; {top}; proc; flatten; rename ff_switch_xbar gold; \
             design -stash gold; \
             read_verilog ff_switch.v; {top}; setattr -mod -unset keep_hierarchy *; proc; flatten; \
             rename ff_switch_xbar gate; design -stash gate; \
             design -copy-from gold -as gold gold; design -copy-from gate -as gate gate; \
             equiv_make gold gate equiv; hierarchy -top equiv; select -assert-min 1 t:$equiv; \
             equiv_simple; equiv_status -assert"
        );
        flitforge::tools::yosys(&dir, &script)
            .unwrap_or_else(|e| panic!("{nv} input VCs, {no} output VCs: {e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
