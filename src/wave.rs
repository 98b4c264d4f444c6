//! VCD waveforms of the model: every register the switch layout declares
//! ([`crate::switch::layout`]), per switch, under the same hierarchy and names the generated
//! Verilog uses, so the two waveforms compare signal by signal.
//!
//! Hierarchy: `tb` holds `clk` and `rst`; `tb.net.l{level}_c{column}` holds one switch's
//! registers, each array element flattened to its own signal ([`Register::element_name`]).
//! Enumerated registers get a companion string signal `<element>_name` with the decoded value
//! (shown as text by GTKWave and Surfer; a comparison with a simulator's waveform skips it).
//!
//! Timing (timescale 1 ns, period 10 ns): `rst` is high and every register at its reset value
//! from 0 ns; the reset edge is at 5 ns and `rst` falls at 10 ns; cycle `c` (0-based) commits at
//! the rising edge at `10 c + 15` ns, where the registers take the values they hold after cycle
//! `c`; `clk` falls at `10 c + 20` ns.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::flit::FlitBits;
use crate::sim::Simulation;
use crate::switch::layout::{Register, SwitchKind, SwitchLayout};
use crate::topology::NodeId;
use std::io::Write;
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// Clock period in ns.
pub const PERIOD_NS: u64 = 10;

/// Time (ns) of the rising edge at which cycle `cycle` commits.
pub fn commit_time(cycle: u64) -> u64 {
    PERIOD_NS * cycle + PERIOD_NS + PERIOD_NS / 2
}

/// Which switches a waveform shows: comma-separated glob patterns (`*`, `?`) over the switch
/// scope names `l{level}_c{column}`, e.g. `l0_*,l3_c1?`. Empty means all.
#[derive(Clone, Debug, Default)]
pub struct ScopeFilter {
    patterns: Vec<String>,
}

impl ScopeFilter {
    /// Whether every switch matches (no pattern).
    pub fn is_all(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Parses a comma-separated pattern list.
    pub fn new(spec: &str) -> Result<Self> {
        let patterns: Vec<String> = spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        for p in &patterns {
            if !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '?'))
            {
                return Err(Error::invalid(
                    "vcd-scope",
                    p,
                    "glob patterns of letters, digits, '_', '*' and '?' over names like l2_c5",
                ));
            }
        }
        Ok(ScopeFilter { patterns })
    }

    /// Whether switch scope `name` is shown.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.is_empty()
            || self
                .patterns
                .iter()
                .any(|p| glob(p.as_bytes(), name.as_bytes()))
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

/// Scope name of switch `s` in the waveform and in the Verilog netlist.
pub fn switch_scope(sim: &Simulation, s: NodeId) -> String {
    sim.fabric.topo.scope(s)
}

/// The register layouts of `sim`'s switch kinds, and the index of each switch's among them.
fn switch_layouts(sim: &Simulation) -> (Vec<SwitchLayout>, Vec<u32>) {
    let f = &sim.fabric;
    let (w, id_bits) = (sim.config.flit_bits, sim.header_layout.id_bits());
    let mut kinds: Vec<SwitchKind> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let of_switch = (0..f.topo.node_count() as NodeId)
        .map(|s| {
            let kind = f.kind_of(s);
            *index.entry(kind).or_insert_with(|| {
                kinds.push(kind);
                kinds.len() as u32 - 1
            })
        })
        .collect();
    let layouts = kinds.into_iter().map(|k| f.layout(k, w, id_bits)).collect();
    (layouts, of_switch)
}

/// What a waveform of a VC network's run takes, estimated before the writer allocates
/// anything ([`estimate`]).
#[derive(Clone, Debug)]
pub struct WaveEstimate {
    /// Switches the scope filter admits.
    pub switches: u64,
    /// Signals declared.
    pub signals: u64,
    /// The writer's memory (its signal table).
    pub memory: u64,
    /// Bytes of VCD.
    pub bytes: u64,
}

/// Bytes a declared signal takes in the VCD header, and in the writer's table.
const HEADER_BYTES_PER_SIGNAL: u64 = 40;
const MEMORY_PER_SIGNAL: u64 = 200;

/// Estimates the waveform of `sim`'s run (before it starts) for the switches `filter` admits:
/// the header, the reset values, and per flit hop the slot signals of the VC it leaves and the
/// one it enters (a header hop also changes the VC state, owner and allocation): about
/// `W + 60` bytes a flit hop and 60 more a header hop, with one flit hop per level for every
/// flit offered; with random lane choice every switch's LFSR changes every cycle. Measured runs
/// with uniform traffic come out 10–40 % below it; the file's size limit
/// ([`crate::files::AtomicFile`]) catches what it misses.
pub fn estimate(sim: &Simulation, filter: &ScopeFilter) -> WaveEstimate {
    let f = &sim.fabric;
    let w = sim.config.flit_bits;
    let (layouts, kind_of) = switch_layouts(sim);
    let per_kind: Vec<(u64, u64)> = layouts
        .iter()
        .map(|layout| {
            let mut signals = 0u64;
            let mut reset_bytes = 0u64;
            for reg in &layout.registers {
                let n = u64::from(reg.elements());
                let companion = u64::from(reg.encoding.is_some());
                signals += n * (1 + companion);
                reset_bytes += n * (u64::from(reg.width) + 6 + companion * 12);
            }
            (signals, reset_bytes)
        })
        .collect();
    let (mut switches, mut signals, mut reset) = (0u64, 0u64, 0u64);
    let all = filter.is_all();
    for s in 0..f.topo.node_count() as NodeId {
        if !all && !filter.matches(&switch_scope(sim, s)) {
            continue;
        }
        let (n, bytes) = per_kind[kind_of[s as usize] as usize];
        switches += 1;
        signals += n;
        reset += bytes;
    }
    let share = switches as f64 / f.topo.node_count().max(1) as f64;
    let messages = sim.offered_estimate() as f64;
    let levels = f64::from(f.topo.levels);
    let flit_hops = messages * f64::from(sim.config.flits) * levels * share;
    let header_hops = messages * levels * share;
    let cycles = sim.cycle_estimate();
    let lfsr = if sim.config.lane_choice == crate::config::LaneChoice::Random {
        cycles as f64 * switches as f64 * 24.0
    } else {
        0.0
    };
    let body = flit_hops * f64::from(w + 60) + header_hops * 60.0 + lfsr + cycles as f64 * 30.0;
    WaveEstimate {
        switches,
        signals,
        memory: signals.saturating_mul(MEMORY_PER_SIGNAL),
        bytes: signals
            .saturating_mul(HEADER_BYTES_PER_SIGNAL)
            .saturating_add(reset)
            .saturating_add(body.min(u64::MAX as f64 / 2.0) as u64),
    }
}

/// What [`estimate`] comes to at least for every switch of a run of `config`, from the
/// configuration alone ([`SimConfig::network_floor`]): in every switch, one input port's VCs
/// and in each of their buffer slots its valid, head and tail bits and its flit (the layout
/// declares every input port's), and nothing dumped after the declarations. For a check
/// before the network is built.
pub fn floor(config: &SimConfig) -> WaveEstimate {
    let switches = config.network_floor().0;
    let slots = u64::from(config.vcs) * u64::from(config.effective_depth());
    let signals = switches.saturating_mul(4 * slots);
    WaveEstimate {
        switches,
        signals,
        memory: signals.saturating_mul(MEMORY_PER_SIGNAL),
        bytes: signals.saturating_mul(HEADER_BYTES_PER_SIGNAL),
    }
}

/// One dumped register element.
struct Signal {
    id: IdCode,
    /// Companion string signal of an enumerated register.
    name_id: Option<IdCode>,
    switch: NodeId,
    kind: usize,
    register: usize,
    index: Vec<u32>,
    last: Option<FlitBits>,
}

/// Writes a model's waveform cycle by cycle.
pub struct VcdWriter<W: Write> {
    out: vcd::Writer<W>,
    layouts: Vec<SwitchLayout>,
    signals: Vec<Signal>,
    clk: IdCode,
    id_bits: u32,
}

fn io(e: std::io::Error) -> Error {
    Error::io("VCD output", e)
}

impl<W: Write> VcdWriter<W> {
    /// Declares the signals of the switches `filter` admits and writes the reset state.
    /// `command` is named in the header comment with the configuration hash.
    pub fn new(writer: W, sim: &Simulation, filter: &ScopeFilter, command: &str) -> Result<Self> {
        let f = &sim.fabric;
        let id_bits = sim.header_layout.id_bits();
        let (layouts, kind_of) = switch_layouts(sim);
        let mut out = vcd::Writer::new(writer);
        out.comment(&format!(
            "flitforge {} | {command} | config {}",
            env!("CARGO_PKG_VERSION"),
            sim.config.config_hash()
        ))
        .map_err(io)?;
        out.timescale(1, TimescaleUnit::NS).map_err(io)?;
        out.add_module("tb").map_err(io)?;
        let clk = out.add_wire(1, "clk").map_err(io)?;
        let rst = out.add_wire(1, "rst").map_err(io)?;
        out.add_module("net").map_err(io)?;
        let mut signals = Vec::new();
        for s in 0..f.topo.node_count() as NodeId {
            let scope = switch_scope(sim, s);
            if !filter.matches(&scope) {
                continue;
            }
            let kind = kind_of[s as usize] as usize;
            out.add_module(&scope).map_err(io)?;
            for (r, reg) in layouts[kind].registers.iter().enumerate() {
                for k in 0..reg.elements() {
                    let index = reg.index_of(k);
                    let name = reg.element_name(&index);
                    let id = out
                        .add_var(VarType::Reg, reg.width, &name, None)
                        .map_err(io)?;
                    let name_id = match reg.encoding {
                        Some(_) => Some(
                            out.add_var(VarType::String, 1, &format!("{name}_name"), None)
                                .map_err(io)?,
                        ),
                        None => None,
                    };
                    signals.push(Signal {
                        id,
                        name_id,
                        switch: s,
                        kind,
                        register: r,
                        index,
                        last: None,
                    });
                }
            }
            out.upscope().map_err(io)?;
        }
        out.upscope().map_err(io)?;
        out.upscope().map_err(io)?;
        out.enddefinitions().map_err(io)?;
        let mut writer = VcdWriter {
            out,
            layouts,
            signals,
            clk,
            id_bits,
        };
        writer.out.timestamp(0).map_err(io)?;
        writer.out.change_scalar(clk, Value::V0).map_err(io)?;
        writer.out.change_scalar(rst, Value::V1).map_err(io)?;
        writer.dump_changes(sim)?;
        writer.out.timestamp(PERIOD_NS / 2).map_err(io)?;
        writer.out.change_scalar(clk, Value::V1).map_err(io)?;
        writer.out.timestamp(PERIOD_NS).map_err(io)?;
        writer.out.change_scalar(clk, Value::V0).map_err(io)?;
        writer.out.change_scalar(rst, Value::V0).map_err(io)?;
        Ok(writer)
    }

    /// Records the registers after the cycle `sim` just completed.
    pub fn sample(&mut self, sim: &Simulation) -> Result<()> {
        let cycle = sim.cycle() - 1;
        self.out.timestamp(commit_time(cycle)).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V1).map_err(io)?;
        self.dump_changes(sim)?;
        self.out
            .timestamp(commit_time(cycle) + PERIOD_NS / 2)
            .map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)
    }

    /// Flushes the output.
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(io)
    }

    fn dump_changes(&mut self, sim: &Simulation) -> Result<()> {
        for sig in &mut self.signals {
            let reg: &Register = &self.layouts[sig.kind].registers[sig.register];
            let value = sim
                .fabric
                .read_register(sig.switch, reg, &sig.index, self.id_bits, sim);
            if sig.last.as_ref() == Some(&value) {
                continue;
            }
            self.out
                .change_vector(sig.id, value.iter().by_vals().rev().map(Value::from))
                .map_err(io)?;
            if let (Some(id), Some(names)) = (sig.name_id, reg.encoding) {
                let code = value
                    .iter()
                    .by_vals()
                    .rev()
                    .fold(0usize, |a, b| a << 1 | usize::from(b));
                self.out
                    .change_string(id, names.get(code).copied().unwrap_or("?"))
                    .map_err(io)?;
            }
            sig.last = Some(value);
        }
        Ok(())
    }
}

/// One signal of a [`ScopedVcd`]: its name, width and, for enumerated registers, the value
/// names (dumped as a companion `<name>_name` string).
#[derive(Clone, Debug)]
pub struct SignalDecl {
    pub name: String,
    pub width: u32,
    pub encoding: Option<&'static [&'static str]>,
}

/// The companion string signal of an enumerated register, with the value names.
type EnumSignal = (IdCode, &'static [&'static str]);

/// A waveform of scoped register values with the timing of this module: `tb` holds `clk`,
/// `rst` and the testbench inputs (changed at the falling edge before the cycle that reads
/// them), `tb.net.<scope>` the registers (changed at the rising edge that commits them).
/// Models other than the butterfly fabric (the pruned butterfly, the flexible sorter) use it.
pub struct ScopedVcd<W: Write> {
    out: vcd::Writer<W>,
    clk: IdCode,
    rst: IdCode,
    inputs: Vec<(IdCode, u32)>,
    last_inputs: Vec<Option<u64>>,
    /// Per signal: its code, width and the enumerated companion string.
    signals: Vec<(IdCode, u32, Option<EnumSignal>)>,
    last: Vec<Option<u64>>,
    last_time: u64,
}

impl<W: Write> ScopedVcd<W> {
    /// Declares `inputs` under `tb` and every scope's signals under `tb.net.<scope>` (an empty
    /// scope name puts them directly under `tb.net`), then writes the reset state `values`.
    pub fn new(
        writer: W,
        header: &str,
        inputs: &[(&str, u32)],
        scopes: &[(String, Vec<SignalDecl>)],
        values: &[u64],
    ) -> Result<Self> {
        let mut out = vcd::Writer::new(writer);
        out.comment(&format!(
            "flitforge {} | {header}",
            env!("CARGO_PKG_VERSION")
        ))
        .map_err(io)?;
        out.timescale(1, TimescaleUnit::NS).map_err(io)?;
        out.add_module("tb").map_err(io)?;
        let clk = out.add_wire(1, "clk").map_err(io)?;
        let rst = out.add_wire(1, "rst").map_err(io)?;
        let mut ins = Vec::new();
        for &(name, width) in inputs {
            ins.push((out.add_wire(width, name).map_err(io)?, width));
        }
        out.add_module("net").map_err(io)?;
        let mut signals = Vec::new();
        for (scope, decls) in scopes {
            if !scope.is_empty() {
                out.add_module(scope).map_err(io)?;
            }
            for d in decls {
                let id = out
                    .add_var(VarType::Reg, d.width, &d.name, None)
                    .map_err(io)?;
                let name_id = match d.encoding {
                    Some(names) => Some((
                        out.add_var(VarType::String, 1, &format!("{}_name", d.name), None)
                            .map_err(io)?,
                        names,
                    )),
                    None => None,
                };
                signals.push((id, d.width, name_id));
            }
            if !scope.is_empty() {
                out.upscope().map_err(io)?;
            }
        }
        out.upscope().map_err(io)?;
        out.upscope().map_err(io)?;
        out.enddefinitions().map_err(io)?;
        let n = signals.len();
        let mut w = ScopedVcd {
            out,
            clk,
            rst,
            last_inputs: vec![None; ins.len()],
            inputs: ins,
            signals,
            last: vec![None; n],
            last_time: PERIOD_NS / 2,
        };
        w.out.timestamp(0).map_err(io)?;
        w.out.change_scalar(clk, Value::V0).map_err(io)?;
        w.out.change_scalar(rst, Value::V1).map_err(io)?;
        w.dump_inputs(&vec![0; w.inputs.len()])?;
        w.dump(values)?;
        w.out.timestamp(PERIOD_NS / 2).map_err(io)?;
        w.out.change_scalar(clk, Value::V1).map_err(io)?;
        Ok(w)
    }

    /// Records cycle `cycle` (0-based): its `inputs` from the falling edge before it, and the
    /// register `values` it committed at its rising edge.
    pub fn sample(&mut self, cycle: u64, inputs: &[u64], values: &[u64]) -> Result<()> {
        let t = commit_time(cycle);
        self.out.timestamp(t - PERIOD_NS / 2).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)?;
        if cycle == 0 {
            self.out.change_scalar(self.rst, Value::V0).map_err(io)?;
        }
        self.dump_inputs(inputs)?;
        self.out.timestamp(t).map_err(io)?;
        self.out.change_scalar(self.clk, Value::V1).map_err(io)?;
        self.last_time = t;
        self.dump(values)
    }

    /// The writer (what has been written so far, for a writer in memory).
    pub fn writer(&mut self) -> &mut W {
        self.out.writer()
    }

    /// Writes the last falling clock edge and flushes.
    pub fn finish(mut self) -> Result<()> {
        self.out
            .timestamp(self.last_time + PERIOD_NS / 2)
            .map_err(io)?;
        self.out.change_scalar(self.clk, Value::V0).map_err(io)?;
        self.out.flush().map_err(io)
    }

    fn vector(&mut self, id: IdCode, width: u32, value: u64) -> Result<()> {
        self.out
            .change_vector(
                id,
                (0..width).rev().map(|b| Value::from((value >> b) & 1 == 1)),
            )
            .map_err(io)
    }

    fn dump_inputs(&mut self, inputs: &[u64]) -> Result<()> {
        for (i, &v) in inputs.iter().enumerate() {
            if self.last_inputs[i] != Some(v) {
                let (id, width) = self.inputs[i];
                self.vector(id, width, v)?;
                self.last_inputs[i] = Some(v);
            }
        }
        Ok(())
    }

    fn dump(&mut self, values: &[u64]) -> Result<()> {
        for (i, &v) in values.iter().enumerate() {
            if self.last[i] == Some(v) {
                continue;
            }
            let (id, width, name_id) = self.signals[i];
            self.vector(id, width, v)?;
            if let Some((nid, names)) = name_id {
                let text = names.get(v as usize).copied().unwrap_or("?");
                self.out.change_string(nid, text).map_err(io)?;
            }
            self.last[i] = Some(v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_patterns() {
        let f = ScopeFilter::new("l0_*, l3_c1?").unwrap();
        assert!(
            f.matches("l0_c5") && f.matches("l3_c12") && !f.matches("l3_c1") && !f.matches("l1_c0")
        );
        assert!(ScopeFilter::new("").unwrap().matches("l9_c9"));
        assert!(ScopeFilter::new("net.l0").is_err());
    }

    #[test]
    fn commit_edges_follow_the_reset_edge() {
        assert_eq!((commit_time(0), commit_time(3)), (15, 45));
    }
}
