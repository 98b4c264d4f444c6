//! The flexible sorter of [BB] §4.1: the recursive Columnsort schedule with the fold shift
//! ([`schedule`]), Beneš control bits by the looping algorithm ([`looping`]), Batcher's
//! odd–even merge sort as the column sorter ([`batcher`]), and the circuit of Theorem 2 as a
//! clocked state machine ([`circuit`]) with its register layout ([`layout`]), waveform and
//! Verilog ([`rtl`]).

pub mod batcher;
pub mod circuit;
pub mod controls;
pub mod experiment;
pub mod fattree;
pub mod layout;
pub mod looping;
pub mod rtl;
pub mod schedule;

pub use circuit::{FlexibleSorter, SortRun, SorterParams};

use crate::error::{Error, Result};
use crate::rtl::RtlDesign;
use crate::wave::{ScopedVcd, SignalDecl};
use layout::{Field, layout, widths};
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// One sort: the circuit, how many words and the seed of their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SortConfig {
    pub params: SorterParams,
    /// Words to sort, `1 ≤ r ≤ l`.
    pub r: u32,
    pub seed: u64,
}

impl Default for SortConfig {
    /// s = 8 rings, l = 64 words of 8 bits, all 64 sorted, seed 1.
    fn default() -> Self {
        SortConfig {
            params: SorterParams {
                s: 8,
                l: 64,
                bits: 8,
            },
            r: 64,
            seed: 1,
        }
    }
}

/// A waveform writer for the sorter: every element of [`layout`] under `tb.net`, and the
/// testbench inputs `start`, `groups`, `din` under `tb`.
pub struct SorterVcd<W: std::io::Write> {
    vcd: ScopedVcd<W>,
    fields: Vec<Field>,
    values: Vec<u64>,
}

impl<W: std::io::Write> SorterVcd<W> {
    /// Declares every element and writes the reset state.
    pub fn new(writer: W, sorter: &FlexibleSorter, header: &str) -> Result<Self> {
        let elements = layout(&sorter.controls);
        let decls = elements
            .iter()
            .map(|e| SignalDecl {
                name: e.name.clone(),
                width: e.width,
                encoding: (e.field == Field::State).then_some(circuit::STATE_NAMES),
            })
            .collect();
        let fields: Vec<Field> = elements.iter().map(|e| e.field).collect();
        let values: Vec<u64> = fields.iter().map(|&f| sorter.read(f)).collect();
        let (.., gw, _, _) = widths(&sorter.controls);
        let s = sorter.params().s;
        let vcd = ScopedVcd::new(
            writer,
            header,
            &[("start", 1), ("groups", gw), ("din", s)],
            &[(String::new(), decls)],
            &values,
        )?;
        Ok(SorterVcd {
            vcd,
            fields,
            values,
        })
    }

    /// Records the cycle the sorter just completed with its inputs.
    pub fn sample(
        &mut self,
        sorter: &FlexibleSorter,
        inputs: &circuit::SorterInputs,
    ) -> Result<()> {
        self.values.clear();
        self.values
            .extend(self.fields.iter().map(|&f| sorter.read(f)));
        let din = inputs
            .data
            .iter()
            .enumerate()
            .fold(0u64, |a, (i, &b)| a | u64::from(b) << i);
        self.vcd.sample(
            sorter.cycle() - 1,
            &[u64::from(inputs.start), u64::from(inputs.groups), din],
            &self.values,
        )
    }

    /// Flushes.
    pub fn finish(self) -> Result<()> {
        self.vcd.finish()
    }
}

/// A sort prepared for co-simulation.
pub struct Prepared {
    pub model_vcd: Vec<u8>,
    pub design: RtlDesign,
    pub stimulus: rtl::SorterStimulus,
    pub run: SortRun,
}

impl From<Prepared> for crate::cosim::Bundle {
    fn from(p: Prepared) -> Self {
        crate::cosim::Bundle {
            cycles: p.stimulus.cycles(),
            stimulus_hex: p.stimulus.to_hex(),
            model_vcd: p.model_vcd,
            design: p.design,
            build: None,
        }
    }
}

impl SortConfig {
    /// Checks `r` against the circuit.
    pub fn validate(&self) -> Result<()> {
        self.params.validate()?;
        if self.r == 0 || self.r > self.params.l {
            return Err(Error::invalid(
                "r",
                self.r,
                format!("1 to l = {} words", self.params.l),
            ));
        }
        Ok(())
    }

    /// The `r` words, uniform in `0..2^bits`, from the seed.
    pub fn words(&self) -> Vec<u64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
        (0..self.r)
            .map(|_| rng.random_range(0..1u64 << self.params.bits))
            .collect()
    }

    /// A stable hash of the configuration.
    pub fn config_hash(&self) -> String {
        crate::config::config_hash(self)
    }

    /// The waveform of this sort, estimated before it runs: the header, then per cycle about
    /// half of every element's bits (the shift registers move every cycle; measured runs
    /// change 28–37 %). Returns (signals, bytes).
    pub fn waveform_estimate(&self) -> Result<(u64, u64)> {
        self.validate()?;
        let elements = layout(&FlexibleSorter::new(self.params)?.controls);
        let signals = elements.len() as u64;
        let per_cycle: u64 = elements.iter().map(|e| u64::from(e.width) + 6).sum::<u64>() / 2 + 30;
        let cycles = circuit::sort_cycles(self.params, self.r)?;
        Ok((
            signals,
            (signals * 40).saturating_add(cycles.saturating_mul(per_cycle)),
        ))
    }

    /// Sorts the words; with `vcd`, writes the waveform. Checks the output is the sorted input.
    pub fn run(&self, vcd: Option<&mut dyn std::io::Write>, command: &str) -> Result<SortRun> {
        self.validate()?;
        let mut sorter = FlexibleSorter::new(self.params)?;
        let words = self.words();
        let header = format!("{command} | config {}", self.config_hash());
        let run = match vcd {
            None => sorter.sort(&words, |_, _| Ok(()))?,
            Some(out) => {
                let mut w = SorterVcd::new(out, &sorter, &header)?;
                let run = sorter.sort(&words, |f, inputs| w.sample(f, inputs))?;
                w.finish()?;
                run
            }
        };
        check_sorted(&words, &run)?;
        Ok(run)
    }

    /// Sorts recording the waveform and the inputs, and generates the Verilog.
    pub fn prepare(&self, command: &str) -> Result<Prepared> {
        self.validate()?;
        // The model waveform is held in memory for the comparison.
        let (signals, bytes) = self.waveform_estimate()?;
        crate::limits::Estimate::new()
            .with(format!("model waveform ({signals} signals)"), bytes)
            .check_memory("r", self.r)?;
        let mut sorter = FlexibleSorter::new(self.params)?;
        let words = self.words();
        let hash = self.config_hash();
        let header = format!("{command} | config {hash}");
        let mut model_vcd = Vec::new();
        let mut stimulus = rtl::SorterStimulus::default();
        let run = {
            let mut w = SorterVcd::new(&mut model_vcd, &sorter, &header)?;
            let run = sorter.sort(&words, |f, inputs| {
                stimulus.sample(f, inputs);
                w.sample(f, inputs)
            })?;
            w.finish()?;
            run
        };
        check_sorted(&words, &run)?;
        let fresh = FlexibleSorter::new(self.params)?;
        let design = rtl::design(&fresh, command, &hash, stimulus.cycles())?;
        Ok(Prepared {
            model_vcd,
            design,
            stimulus,
            run,
        })
    }
}

/// The output must be the input multiset in ascending order.
pub fn check_sorted(words: &[u64], run: &SortRun) -> Result<()> {
    let mut want = words.to_vec();
    want.sort_unstable();
    if run.output != want {
        return Err(Error::Invariant {
            cycle: run.cycles,
            message: format!(
                "flexible sorter output is not the sorted input ({} words in, {} out)",
                words.len(),
                run.output.len()
            ),
        });
    }
    Ok(())
}
