//! Co-simulation: the model's waveform against the generated Verilog's, under a real
//! simulator, signal by signal and cycle by cycle.
//!
//! Normalised before comparing (Icarus and Verilator legitimately differ): only signals under
//! the network scope `tb.net` that the model declares are compared (Verilator's extra `TOP`
//! scope and any extra wires are ignored), values are compared at the commit edges after reset
//! release, and vectors printed shorter than declared are zero-extended.

use crate::SimConfig;
use crate::error::{Error, Result};
use crate::rtl::build::BuildSize;
use crate::rtl::stimulus::Stimulus;
use crate::rtl::{RTL_VCD_FILE, RtlDesign, STIMULUS_FILE};
use crate::sim::Simulation;
use crate::wave::{ScopeFilter, VcdWriter, commit_time};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use vcd::{IdCode, ScopeItem, Value};

/// A Verilog simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simulator {
    Icarus,
    Verilator,
}

impl Simulator {
    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Simulator::Icarus => "iverilog",
            Simulator::Verilator => "verilator",
        }
    }
}

/// The first signal on which model and RTL differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub cycle: u64,
    pub signal: String,
    pub model: String,
    pub rtl: String,
}

/// The verdict of one co-simulation.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub simulator: Simulator,
    pub signals: usize,
    pub cycles: u64,
    pub divergence: Option<Divergence>,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.divergence {
            None => write!(
                f,
                "cosim: identical ({} signals, {} cycles, {})",
                self.signals,
                self.cycles,
                self.simulator.name()
            ),
            Some(d) => write!(
                f,
                "cosim: DIVERGED under {} at cycle {}: {} model={} rtl={}",
                self.simulator.name(),
                d.cycle,
                d.signal,
                d.model,
                d.rtl
            ),
        }
    }
}

/// A model run prepared for co-simulation: its waveform and the RTL files.
pub struct Prepared {
    pub model_vcd: Vec<u8>,
    pub design: RtlDesign,
    /// What the simulators take to build the design.
    pub build: BuildSize,
    pub stimulus: Stimulus,
}

/// Runs the model of `config`, recording its waveform and stimulus, and generates the RTL.
pub fn prepare(config: SimConfig, command: &str) -> Result<Prepared> {
    prepare_with(config, command, true)
}

/// Runs the model of `config` recording the stimulus the testbench replays, and generates the
/// RTL; with `waveform`, also records the model's waveform (in memory, for a comparison). The
/// memory both take is checked first ([`crate::limits`]).
pub fn prepare_with(config: SimConfig, command: &str, waveform: bool) -> Result<Prepared> {
    // What the configuration alone tells, before the network is built (once it is known
    // valid: the floors multiply its values); then the estimate.
    config.validate()?;
    let floor = waveform.then(|| crate::wave::floor(&config));
    preparation(&config, 0, crate::rtl::size_floor(&config), floor)
        .check_memory("inputs", config.inputs)?;
    let mut sim = Simulation::new(config)?;
    crate::rtl::check_supported(&sim)?;
    let wave = waveform.then(|| crate::wave::estimate(&sim, &ScopeFilter::default()));
    let verilog = crate::rtl::size_estimate(&sim);
    preparation(&sim.config, stimulus_bytes(&sim), verilog, wave)
        .check_memory("inputs", sim.config.inputs)?;
    let mut model_vcd = Vec::new();
    let mut stimulus = Stimulus::default();
    if waveform {
        let mut vcd = VcdWriter::new(&mut model_vcd, &sim, &ScopeFilter::default(), command)?;
        sim.run_observed(|s| {
            stimulus.sample(s);
            vcd.sample(s)
        })?;
        vcd.finish()?;
    } else {
        sim.run_observed(|s| {
            stimulus.sample(s);
            Ok(())
        })?;
    }
    let design = RtlDesign::new(&sim, command, stimulus.cycles())?;
    Ok(Prepared {
        model_vcd,
        design,
        build: BuildSize::of(&sim),
        stimulus,
    })
}

/// The memory a preparation takes: the network, the `stimulus`, the `verilog` and, where the
/// model's waveform is recorded, `wave`.
fn preparation(
    config: &SimConfig,
    stimulus: u64,
    verilog: u64,
    wave: Option<crate::wave::WaveEstimate>,
) -> crate::limits::Estimate {
    let mut memory = crate::limits::Estimate::new()
        .with("network", config.memory_estimate().0)
        .with("stimulus", stimulus)
        .with("Verilog", verilog);
    if let Some(w) = wave {
        memory.add(format!("model waveform ({} signals)", w.signals), w.memory);
        memory.add("model waveform text", w.bytes);
    }
    memory
}

/// Bytes of the stimulus a run records (hex lines, and the file they are joined into): per
/// cycle, every injection VC's valid, head and tail bits and its flit.
pub fn stimulus_bytes(sim: &Simulation) -> u64 {
    let per_cycle = u64::from(sim.config.inputs)
        * u64::from(sim.config.vcs)
        * u64::from(sim.config.flit_bits + 3).div_ceil(4);
    sim.cycle_estimate()
        .saturating_mul(per_cycle + 1)
        .saturating_mul(2)
}

/// Everything a co-simulation needs, whichever network produced it: the model's waveform, the
/// design and the stimulus its testbench replays.
pub struct Bundle {
    pub model_vcd: Vec<u8>,
    pub design: RtlDesign,
    pub stimulus_hex: String,
    pub cycles: u64,
    /// For a network's RTL (a VC network's, the pruned butterfly's), what the simulators take
    /// to build it, checked before they are launched. None for the sorter's and the
    /// protocols' circuits, bounded by their own sizes' checks.
    pub build: Option<BuildSize>,
}

impl Bundle {
    /// Refuses a `simulator` whose build of the design would not fit the memory limit.
    pub fn check_build(&self, simulator: Simulator) -> Result<()> {
        self.build.map_or(Ok(()), |b| b.check(simulator))
    }

    /// Runs `simulator` in `dir` and compares (see [`run_files`]), its build checked first
    /// ([`Bundle::check_build`]).
    pub fn run(&self, simulator: Simulator, dir: &Path) -> Result<Verdict> {
        self.check_build(simulator)?;
        run_files(
            &self.model_vcd,
            &self.design,
            &self.stimulus_hex,
            self.cycles,
            simulator,
            dir,
        )
    }
}

impl From<Prepared> for Bundle {
    fn from(p: Prepared) -> Self {
        Bundle {
            cycles: p.stimulus.cycles(),
            stimulus_hex: p.stimulus.to_hex(),
            model_vcd: p.model_vcd,
            design: p.design,
            build: Some(p.build),
        }
    }
}

/// Writes the RTL, stimulus and model waveform into `dir`, runs `simulator` there and compares
/// (its build checked first, [`BuildSize::check`]).
pub fn run(prepared: &Prepared, simulator: Simulator, dir: &Path) -> Result<Verdict> {
    prepared.build.check(simulator)?;
    run_files(
        &prepared.model_vcd,
        &prepared.design,
        &prepared.stimulus.to_hex(),
        prepared.stimulus.cycles(),
        simulator,
        dir,
    )
}

/// Writes `design`, the stimulus and the model waveform into `dir`, runs `simulator` on the
/// testbench there for `cycles` cycles and compares the waveforms under `tb.net`.
pub fn run_files(
    model_vcd: &[u8],
    design: &RtlDesign,
    stimulus_hex: &str,
    cycles: u64,
    simulator: Simulator,
    dir: &Path,
) -> Result<Verdict> {
    design.write(dir)?;
    let path = dir.join(STIMULUS_FILE);
    crate::files::write_atomic(&path, stimulus_hex)?;
    simulate_and_compare(model_vcd, design, cycles, simulator, dir, "tb.")
}

/// Writes `design` and the model waveform into `dir`, runs `simulator` on its testbench `tb`
/// and compares the waveforms at the first `cycles` commit edges. The model's `tb.net` is the
/// RTL's `{rtl_scope}net` (`tb.` for a testbench that holds the network itself).
pub fn simulate_and_compare(
    model_vcd: &[u8],
    design: &RtlDesign,
    cycles: u64,
    simulator: Simulator,
    dir: &Path,
    rtl_scope: &str,
) -> Result<Verdict> {
    design.write(dir)?;
    let path = dir.join("model.vcd");
    crate::files::write_atomic(&path, model_vcd)?;
    let sources = design.verilog_files();
    match simulator {
        Simulator::Icarus => {
            tool(
                dir,
                "iverilog",
                &[&["-g2005", "-o", "sim.vvp"], &sources[..]].concat(),
            )?;
            tool(dir, "vvp", &["-n", "sim.vvp"])?;
        }
        Simulator::Verilator => {
            // A co-simulation runs a few hundred cycles: the C++ compile is nearly all its
            // time, and unoptimised it takes 40 % less CPU (the waveform is the same).
            crate::tools::verilator_tb(
                dir,
                &sources,
                &[
                    "--trace",
                    "-MAKEFLAGS",
                    "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
                ],
            )?;
            tool(dir, "./obj/Vtb", &[])?;
        }
    }
    let rtl = std::fs::read(dir.join(RTL_VCD_FILE))
        .map_err(|e| Error::io(dir.join(RTL_VCD_FILE).display(), e))?;
    compare_scoped(model_vcd, &rtl, cycles, simulator, rtl_scope)
}

pub use crate::tools::tool;

/// A parsed waveform: signal paths under `tb.` (with widths) and every change.
struct Waveform {
    signals: BTreeMap<String, (IdCode, u32)>,
    changes: Vec<(u64, IdCode, String)>,
}

fn parse(text: &[u8], what: &str) -> Result<Waveform> {
    let err = |e: std::io::Error| Error::parse(what, e);
    let mut parser = vcd::Parser::new(text);
    let header = parser.parse_header().map_err(err)?;
    let mut signals = BTreeMap::new();
    fn walk(items: &[ScopeItem], path: &str, out: &mut BTreeMap<String, (IdCode, u32)>) {
        for item in items {
            match item {
                ScopeItem::Scope(s) => walk(&s.items, &format!("{path}{}.", s.identifier), out),
                ScopeItem::Var(v) if v.var_type != vcd::VarType::String => {
                    // Verilator's TOP scope, and anything above the testbench, is dropped.
                    let full = format!("{path}{}", v.reference);
                    let key = match full.find("tb.") {
                        Some(at) => full[at..].to_string(),
                        None => full,
                    };
                    out.entry(key).or_insert((v.code, v.size));
                }
                _ => {}
            }
        }
    }
    walk(&header.items, "", &mut signals);
    let mut changes = Vec::new();
    let mut now = 0;
    for cmd in parser {
        let bits = |v: &mut dyn Iterator<Item = Value>| -> String {
            v.map(|b| match b {
                Value::V0 => '0',
                Value::V1 => '1',
                Value::X => 'x',
                Value::Z => 'z',
            })
            .collect()
        };
        match cmd.map_err(err)? {
            vcd::Command::Timestamp(t) => now = t,
            vcd::Command::ChangeScalar(id, v) => {
                changes.push((now, id, bits(&mut std::iter::once(v))))
            }
            vcd::Command::ChangeVector(id, v) => changes.push((now, id, bits(&mut v.iter()))),
            _ => {}
        }
    }
    Ok(Waveform { signals, changes })
}

/// Zero-extends a VCD vector to `width` (simulators may print it shorter).
fn widen(value: &str, width: u32) -> String {
    let w = width as usize;
    if value.len() >= w {
        return value.to_string();
    }
    let fill = if value.starts_with('x') || value.starts_with('z') {
        &value[..1]
    } else {
        "0"
    };
    format!("{}{value}", fill.repeat(w - value.len()))
}

/// Compares two waveforms under `tb.net` at the commit edges of `cycles` cycles.
pub fn compare(model: &[u8], rtl: &[u8], cycles: u64, simulator: Simulator) -> Result<Verdict> {
    compare_scoped(model, rtl, cycles, simulator, "tb.")
}

/// [`compare`], with the RTL's network under `{rtl_scope}net` instead of `tb.net`.
pub fn compare_scoped(
    model: &[u8],
    rtl: &[u8],
    cycles: u64,
    simulator: Simulator,
    rtl_scope: &str,
) -> Result<Verdict> {
    let model = parse(model, "model waveform")?;
    let mut rtl = parse(rtl, "RTL waveform")?;
    if rtl_scope != "tb." {
        rtl.signals = std::mem::take(&mut rtl.signals)
            .into_iter()
            .filter_map(|(name, v)| {
                name.strip_prefix(rtl_scope)
                    .map(|rest| (format!("tb.{rest}"), v))
            })
            .collect();
    }
    let declared: Vec<(&String, IdCode, u32)> = model
        .signals
        .iter()
        .filter(|(name, _)| name.starts_with("tb.net."))
        .map(|(name, &(id, width))| (name, id, width))
        .collect();
    let verdict = |divergence| Verdict {
        simulator,
        signals: declared.len(),
        cycles,
        divergence,
    };
    let mut compared = Vec::with_capacity(declared.len());
    for (name, mid, width) in declared.iter().copied() {
        match rtl.signals.get(name) {
            Some(&(rid, _)) => compared.push((name, mid, rid, width)),
            None => {
                return Ok(verdict(Some(Divergence {
                    cycle: 0,
                    signal: name.clone(),
                    model: "declared".into(),
                    rtl: "missing".into(),
                })));
            }
        }
    }
    let mut model_now: HashMap<IdCode, String> = HashMap::new();
    let mut rtl_now: HashMap<IdCode, String> = HashMap::new();
    let (mut mi, mut ri) = (0, 0);
    for cycle in 0..cycles {
        let t = commit_time(cycle);
        while mi < model.changes.len() && model.changes[mi].0 <= t {
            let (_, id, v) = &model.changes[mi];
            model_now.insert(*id, v.clone());
            mi += 1;
        }
        while ri < rtl.changes.len() && rtl.changes[ri].0 <= t {
            let (_, id, v) = &rtl.changes[ri];
            rtl_now.insert(*id, v.clone());
            ri += 1;
        }
        for (name, mid, rid, width) in &compared {
            let m = widen(model_now.get(mid).map_or("", String::as_str), *width);
            let r = widen(rtl_now.get(rid).map_or("", String::as_str), *width);
            if m != r {
                return Ok(verdict(Some(Divergence {
                    cycle,
                    signal: (*name).clone(),
                    model: m,
                    rtl: r,
                })));
            }
        }
    }
    Ok(verdict(None))
}
