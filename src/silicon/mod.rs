//! Silicon back end: the cell count, flip-flops, cell area and critical path of every circuit
//! flitforge emits, mapped onto the OSU standard-cell libraries qflow ships ([`flow`]), a
//! layout model that extends the measured areas to sizes synthesis cannot reach
//! ([`layout`]), and the papers' area and time claims held against both ([`claims`]).

pub mod claims;
pub mod flow;
pub mod layout;
pub mod sweep;
pub mod verdict;

use crate::config::{Backpressure, SimConfig};
use crate::error::{Error, Result};
use crate::rtl::RtlDesign;
use crate::sorter::SorterParams;
use crate::traffic::Traffic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where Debian's qflow technology packages put the OSU libraries.
const TECH: &str = "/usr/share/qflow/tech";

/// A standard-cell library from qflow's technology packages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    /// OSU 0.18 µm (TSMC 0.18 rules).
    Osu018,
    /// OSU 0.35 µm (MOSIS SCN4M_SUBM).
    Osu035,
    /// OSU 0.5 µm (MOSIS SCN3ME_SUBM).
    Osu050,
}

impl Library {
    pub const ALL: [Library; 3] = [Library::Osu018, Library::Osu035, Library::Osu050];

    /// The name the CLI and qflow use.
    pub fn name(self) -> &'static str {
        match self {
            Library::Osu018 => "osu018",
            Library::Osu035 => "osu035",
            Library::Osu050 => "osu050",
        }
    }

    /// The library named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The Debian package that holds it.
    pub fn package(self) -> String {
        format!("qflow-tech-{}", self.name())
    }

    fn file(self, ext: &str) -> Result<PathBuf> {
        let base = match self {
            Library::Osu050 if ext == "lib" => "osu05_stdcells".to_string(),
            l => format!("{}_stdcells", l.name()),
        };
        let path = Path::new(TECH)
            .join(self.name())
            .join(format!("{base}.{ext}"));
        if path.is_file() {
            Ok(path)
        } else {
            let package = self.package();
            Err(Error::invalid(
                "library",
                self.name(),
                format!(
                    "an installed {package} ({} missing): apt-get install -y qflow {package} (as root; scripts/test does it)",
                    path.display()
                ),
            ))
        }
    }

    /// The Liberty file (cell areas and delays).
    pub fn liberty(self) -> Result<PathBuf> {
        self.file("lib")
    }

    /// The LEF file (cell sizes and routing layers).
    pub fn lef(self) -> Result<PathBuf> {
        self.file("lef")
    }

    /// The buffer cell `insbuf` uses: cell, input pin, output pin.
    pub fn buffer(self) -> &'static str {
        "BUFX2 A Y"
    }

    /// The routing pitch of the second metal layer, µm: one wire track of the layout model.
    pub fn wire_pitch_um(self) -> Result<f64> {
        let path = self.lef()?;
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.display(), e))?;
        let layer = text
            .split("LAYER ")
            .find(|s| s.starts_with("metal2"))
            .ok_or_else(|| Error::parse(path.display(), "no LAYER metal2"))?;
        layer
            .lines()
            .find_map(|l| {
                let l = l.trim();
                l.strip_prefix("PITCH")?
                    .trim()
                    .trim_end_matches(';')
                    .trim()
                    .parse()
                    .ok()
            })
            .ok_or_else(|| Error::parse(path.display(), "no PITCH for metal2"))
    }
}

/// The circuits the silicon flow measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Circuit {
    /// A whole butterfly of virtual-channel switches ([CMS] §1.2), `size` = inputs N.
    Butterfly,
    /// A whole pruned butterfly of bit-serial vertices ([BB] §3), `size` = leaves N.
    PrunedButterfly,
    /// The flexible sorter ([BB] §4.1), `size` = rings s.
    FlexibleSorter,
}

impl Circuit {
    pub const ALL: [Circuit; 3] = [
        Circuit::Butterfly,
        Circuit::PrunedButterfly,
        Circuit::FlexibleSorter,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Circuit::Butterfly => "butterfly",
            Circuit::PrunedButterfly => "pruned-butterfly",
            Circuit::FlexibleSorter => "flexible-sorter",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The generated top module.
    pub fn top(self) -> &'static str {
        match self {
            Circuit::Butterfly => "ff_net",
            Circuit::PrunedButterfly => "ff_pb_net",
            Circuit::FlexibleSorter => "ff_fsort",
        }
    }

    /// What `size` counts.
    pub fn size_name(self) -> &'static str {
        match self {
            Circuit::Butterfly => "inputs N",
            Circuit::PrunedButterfly => "leaves N",
            Circuit::FlexibleSorter => "rings s",
        }
    }
}

/// One circuit at one size on one library: everything that decides the netlist.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiliconConfig {
    pub circuit: Circuit,
    pub size: u32,
    pub library: Library,
    /// Butterfly switches: virtual channels B, flit bits W, VC depth, back-pressure.
    pub vcs: u32,
    pub flit_bits: u32,
    pub vc_depth: u32,
    pub backpressure: Backpressure,
    /// Flexible sorter: columns l/s and key bits b.
    pub columns: u32,
    pub bits: u32,
    /// Also place and route with qflow.
    pub place_route: bool,
}

impl SiliconConfig {
    /// The reference circuit of `circuit` at `size`: butterfly switches with B = 2, W = 8,
    /// VC depth 1 (the FPGA experiments' switch), a sorter with 2 columns of 8-bit keys.
    pub fn new(circuit: Circuit, size: u32) -> Self {
        SiliconConfig {
            circuit,
            size,
            library: Library::Osu018,
            vcs: 2,
            flit_bits: 8,
            vc_depth: 1,
            backpressure: Backpressure::Combinational,
            columns: 2,
            bits: 8,
            place_route: false,
        }
    }

    /// The configuration as results record it: the keys that apply to the circuit.
    pub fn to_value(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            let drop: &[&str] = match self.circuit {
                Circuit::Butterfly => &["columns", "bits"],
                Circuit::PrunedButterfly => &[
                    "vcs",
                    "flit_bits",
                    "vc_depth",
                    "backpressure",
                    "columns",
                    "bits",
                ],
                Circuit::FlexibleSorter => &["vcs", "flit_bits", "vc_depth", "backpressure"],
            };
            for k in drop {
                map.remove(*k);
            }
        }
        v
    }

    /// The hash a measurement is cached under (configuration and flitforge version).
    pub fn config_hash(&self) -> String {
        let mut v = self.to_value();
        v["flitforge"] = serde_json::Value::from(env!("CARGO_PKG_VERSION"));
        v["flow"] = serde_json::Value::from(flow::FLOW_REVISION);
        crate::config::config_hash(&v)
    }

    /// A short label of the circuit's parameters.
    pub fn label(&self) -> String {
        match self.circuit {
            Circuit::Butterfly => format!(
                "B = {}, W = {}, depth {}, {} back-pressure",
                self.vcs,
                self.flit_bits,
                self.vc_depth,
                self.backpressure.name()
            ),
            Circuit::PrunedButterfly => "bit-serial vertices".into(),
            Circuit::FlexibleSorter => format!(
                "l = {}, b = {}",
                self.size.saturating_mul(self.columns),
                self.bits
            ),
        }
    }

    /// The butterfly's simulation configuration.
    pub fn network(&self) -> SimConfig {
        SimConfig {
            inputs: self.size,
            vcs: self.vcs,
            flit_bits: self.flit_bits,
            vc_depth: self.vc_depth,
            flits: 4,
            backpressure: self.backpressure,
            traffic: Traffic::Identity,
            cycles: None,
            ..SimConfig::default()
        }
    }

    /// The sorter's parameters.
    pub fn sorter(&self) -> SorterParams {
        SorterParams {
            s: self.size,
            l: self.size.saturating_mul(self.columns),
            bits: self.bits,
        }
    }

    /// Checks the size against what synthesis can take here (every netlist is estimated
    /// before it is built: yosys holds a flattened netlist in memory).
    pub fn validate(&self) -> Result<()> {
        let (lo, hi, what) = match self.circuit {
            Circuit::Butterfly => (2, 64, "a power of two from 2 to 64"),
            Circuit::PrunedButterfly => (16, 256, "a power of 4 from 16 to 256"),
            Circuit::FlexibleSorter => (2, 64, "a power of two from 2 to 64"),
        };
        let power_of_4 =
            self.size.is_power_of_two() && self.size.trailing_zeros().is_multiple_of(2);
        let shape = match self.circuit {
            Circuit::PrunedButterfly => power_of_4,
            _ => self.size.is_power_of_two(),
        };
        if !(lo..=hi).contains(&self.size) || !shape {
            return Err(Error::invalid(
                "sizes",
                self.size,
                format!(
                    "{what} for --circuit {} (the layout model of `experiment vlsi` goes further)",
                    self.circuit.name()
                ),
            ));
        }
        if self.circuit == Circuit::FlexibleSorter {
            crate::sorter::circuit::FlexibleSorter::new(self.sorter())?;
        }
        if self.circuit == Circuit::Butterfly {
            self.network().validate()?;
        }
        Ok(())
    }

    /// The Verilog of the circuit (no testbench needed: synthesis reads the top's sources).
    pub fn design(&self, command: &str) -> Result<RtlDesign> {
        self.validate()?;
        let hash = self.config_hash();
        match self.circuit {
            Circuit::Butterfly => {
                let sim = crate::Simulation::new(self.network())?;
                RtlDesign::new(&sim, command, 1)
            }
            Circuit::PrunedButterfly => {
                let graph = crate::topology::pruned::PrunedButterfly::new(self.size)?;
                let format = crate::pruned::frame::FrameFormat {
                    log_n: graph.levels(),
                    body_bits: crate::pruned::PrunedConfig {
                        inputs: self.size,
                        ..Default::default()
                    }
                    .body_bits(),
                };
                crate::pruned::rtl::design(&graph, &format, command, &hash, 1)
            }
            Circuit::FlexibleSorter => {
                let sorter = crate::sorter::circuit::FlexibleSorter::new(self.sorter())?;
                crate::sorter::rtl::design(&sorter, command, &hash, 1)
            }
        }
    }
}

/// What the flow measured of one circuit at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub config: SiliconConfig,
    pub config_hash: String,
    pub synthesis: flow::Synthesis,
    pub timing: flow::Timing,
    pub place_route: Option<flow::PlaceRoute>,
    /// Cell area of each switch or vertex kind synthesised alone, µm² (the layout model's
    /// node areas), with how many the circuit has.
    pub nodes: Vec<layout::NodeArea>,
    pub tools: serde_json::Value,
}

/// Synthesises, times and (if configured) places and routes one circuit in `dir`.
pub fn measure(
    config: &SiliconConfig,
    dir: &Path,
    command: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Measurement> {
    let design = config.design(command)?;
    let src = dir.join("src");
    design.write(&src)?;
    let sources: Vec<String> = design
        .verilog_files()
        .into_iter()
        .filter(|f| !f.ends_with("tb.v"))
        .map(|f| format!("src/{f}"))
        .collect();
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    let top = config.circuit.top();
    progress(&format!(
        "yosys: mapping {} {} onto {}",
        config.circuit.name(),
        config.size,
        config.library.name()
    ));
    let synthesis = flow::synthesise(dir, &sources, top, config.library)?;
    progress(&format!("OpenSTA: timing {} cells", synthesis.cells));
    let timing = flow::time(dir, top, config.library, Some("clk"))?;
    let nodes = layout::node_areas(config, &design, dir, progress)?;
    let place_route = if config.place_route {
        progress(&format!(
            "qflow: placing and routing {} cells (graywolf, qrouter)",
            synthesis.cells
        ));
        let text: String = design
            .files
            .iter()
            .filter(|(name, _)| name.ends_with(".v") && name != "tb.v")
            .map(|(_, verilog)| verilog.as_str())
            .collect();
        Some(flow::place_route(
            &dir.join("pnr"),
            &text,
            top,
            config.library,
        )?)
    } else {
        None
    };
    Ok(Measurement {
        config: config.clone(),
        config_hash: config.config_hash(),
        synthesis,
        timing,
        place_route,
        nodes,
        tools: flow::versions(),
    })
}
