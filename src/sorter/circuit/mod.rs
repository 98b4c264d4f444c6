//! The flexible sorter of Theorem 2 ([BB] §4.1) as a clocked state machine: `s` rings of `l/s`
//! cells (each cell two `(b+1)`-bit shift registers `D` and `X`, the extra bit a dummy flag that
//! sorts last), loop switches closing every ring at a power-of-two length `w`, a bit-serial
//! column sorter, an Omega network between the rings, and control stores holding the
//! precomputed Beneš control bits for every valid `w`.
//!
//! * **Column sorter.** Batcher's odd–even merge sort on `s` lines, bit-serial and MSB first:
//!   every comparator latches, at the first differing bit of a word, whether to exchange, and
//!   each layer is one register stage, so a column takes `depth = k(k+1)/2` cycles (`s = 2^k`)
//!   and columns stream back to back. It stands in for the [BP85] sorter of Lemma 9
//!   (interpretation: 'Column sorter', docs/interpretations.md): same interface, `O(log² s)`
//!   instead of `O(log s)` latency.
//! * **Sorting step.** Every ring streams its `w` words, cell 0 first, through the sorter and
//!   back into its top cell: `w·(b+1) + depth` cycles rotate each loop exactly once.
//! * **Permuting step** (interpretations 'In-ring exchanges' and 'Beneš traversal',
//!   docs/interpretations.md). The Beneš network on the `s·w` lines
//!   `ℓ = ρ·w + c` is simulated as: an Omega forward pass (ring dimensions, most significant
//!   first; `w·(b+1) + lg s` cycles), in-ring stages through the `X` registers (per cell
//!   dimension `j`: copy, rotate `X` down `2^j` cells, owners exchange, rotate back, non-owners
//!   copy; `2·2^j·(b+1) + 3` cycles), and an Omega reverse pass (the same switches traversed
//!   backwards, ring dimensions least significant first).
//! * **Control stores.** Every Omega switch and every cell holds its bits for every valid `w`
//!   in fields of increasing `w`, each field in the order the phases use them (the paper's
//!   layout). A store is modelled as its constant contents and a position register (`optr`
//!   per Omega stage, `cptr` per cell position, shared by the stores that advance together);
//!   advancing the position is shifting the register. Before the first permuting step the
//!   positions seek past the smaller fields; afterwards they shift back to 0 (interpretation:
//!   'Control-store rewind', docs/interpretations.md), so a sort of width `w` never pays for
//!   larger fields.
//!
//! Input enters bit-serially, `s` words (one column) per `b+1` cycles, with a dummy flag per
//! word, so any `r ≤ l` is sorted by padding the last column with dummies; output leaves
//! bit-serially in sorted column-major order, `s` words per `b+1` cycles, dummies last.

pub use super::controls::{Controls, SorterParams, inring_dims, sort_cycles};
use crate::error::{Error, Result};

mod datapath;

/// Controller states.
pub const STATE_NAMES: &[&str] = &[
    "IDLE", "CLEAR", "LOAD", "SEEK", "SORT", "OFWD", "INRING", "OREV", "DRAIN", "REWIND",
];
pub const IDLE: u8 = 0;
pub const CLEAR: u8 = 1;
pub const LOAD: u8 = 2;
pub const SEEK: u8 = 3;
pub const SORT: u8 = 4;
pub const OFWD: u8 = 5;
pub const INRING: u8 = 6;
pub const OREV: u8 = 7;
pub const DRAIN: u8 = 8;
pub const REWIND: u8 = 9;

/// Registers of the whole sorter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SorterRegs {
    pub state: u8,
    /// Cycle within the current step.
    pub count: u32,
    /// Current phase `k` of Columnsort.
    pub phase: u32,
    /// Index into the in-ring dimension list, and the sub-step (0..=4) within it.
    pub dim: u32,
    pub sub: u32,
    /// Columns loaded, `⌈r/s⌉`, and `lg w`: the loop switches close every ring at `w`.
    pub groups: u32,
    pub lg_w: u32,
    /// `D` and `X` of cell `(ρ, c)` at `ρ·(l/s) + c`.
    pub d: Vec<u64>,
    pub x: Vec<u64>,
    /// Sorter: per layer, the line registers, each comparator's decided/exchange state, and
    /// the first-bit marker.
    pub sline: Vec<Vec<bool>>,
    pub sdec: Vec<Vec<bool>>,
    pub sswap: Vec<Vec<bool>>,
    pub sfirst: Vec<bool>,
    /// Omega stage registers `o[k][position]` and the stage position registers.
    pub o: Vec<Vec<bool>>,
    pub optr: Vec<u32>,
    /// Cell-position store positions.
    pub cptr: Vec<u32>,
}

impl SorterRegs {
    /// Copies `other` into `self`, reusing the allocations.
    fn copy_from(&mut self, other: &SorterRegs) {
        let SorterRegs {
            state,
            count,
            phase,
            dim,
            sub,
            groups,
            lg_w,
            d,
            x,
            sline,
            sdec,
            sswap,
            sfirst,
            o,
            optr,
            cptr,
        } = other;
        (self.state, self.count, self.phase, self.dim) = (*state, *count, *phase, *dim);
        (self.sub, self.groups, self.lg_w) = (*sub, *groups, *lg_w);
        self.d.clone_from(d);
        self.x.clone_from(x);
        self.sline.clone_from(sline);
        self.sdec.clone_from(sdec);
        self.sswap.clone_from(sswap);
        self.sfirst.clone_from(sfirst);
        self.o.clone_from(o);
        self.optr.clone_from(optr);
        self.cptr.clone_from(cptr);
    }
}

/// External inputs for one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SorterInputs {
    /// Start a sort of `groups` columns (in IDLE).
    pub start: bool,
    pub groups: u32,
    /// One input bit per ring (LOAD).
    pub data: Vec<bool>,
}

/// The sorter circuit: controls and registers.
#[derive(Clone, Debug)]
pub struct FlexibleSorter {
    pub controls: Controls,
    pub regs: SorterRegs,
    /// The next-state buffer, kept between cycles so a cycle allocates nothing.
    next: SorterRegs,
    cycle: u64,
}

/// One sort's result: the words out (column-major, dummies removed) and the cycles taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortRun {
    pub output: Vec<u64>,
    pub cycles: u64,
    pub w: u32,
    pub phases: u32,
}

impl FlexibleSorter {
    /// A sorter with every register at reset.
    pub fn new(params: SorterParams) -> Result<Self> {
        let controls = Controls::new(params)?;
        let (s, cells) = (params.s as usize, params.cells() as usize);
        let depth = controls.depth() as usize;
        let regs = SorterRegs {
            state: IDLE,
            count: 0,
            phase: 0,
            dim: 0,
            sub: 0,
            groups: 0,
            lg_w: 0,
            d: vec![0; s * cells],
            x: vec![0; s * cells],
            sline: vec![vec![false; s]; depth],
            sdec: controls
                .comparators
                .iter()
                .map(|l| vec![false; l.len()])
                .collect(),
            sswap: controls
                .comparators
                .iter()
                .map(|l| vec![false; l.len()])
                .collect(),
            sfirst: vec![false; depth],
            o: vec![vec![false; s]; params.lg_s() as usize],
            optr: vec![0; params.lg_s() as usize],
            cptr: vec![0; cells],
        };
        Ok(FlexibleSorter {
            controls,
            next: regs.clone(),
            regs,
            cycle: 0,
        })
    }

    pub fn params(&self) -> SorterParams {
        self.controls.params
    }

    /// Cycles since reset.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The bit ring `ρ` presents at its port: the MSB of cell 0's `D`.
    pub fn port_out(&self, rho: u32) -> bool {
        let p = self.params();
        (self.regs.d[(rho * p.cells()) as usize] >> (p.word() - 1)) & 1 == 1
    }

    /// True while the output wires carry sorted words.
    pub fn draining(&self) -> bool {
        self.regs.state == DRAIN && self.regs.count < self.regs.groups * self.params().word()
    }

    /// The control bit Omega switch `(k, m)` currently reads.
    pub fn cross(&self, k: usize, m: usize) -> bool {
        let store = &self.controls.omega[k][m];
        store
            .get(self.regs.optr[k] as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Sorts `words` (each `< 2^bits`, `1 ≤ len ≤ l`): loads them, runs the controller to
    /// completion and collects the output. `observer` sees every cycle.
    pub fn sort(
        &mut self,
        words: &[u64],
        mut observer: impl FnMut(&FlexibleSorter, &SorterInputs) -> Result<()>,
    ) -> Result<SortRun> {
        let p = self.params();
        if words.is_empty() || words.len() > p.l as usize {
            return Err(Error::invalid(
                "r",
                words.len(),
                format!("1 to l = {}", p.l),
            ));
        }
        if let Some(&bad) = words.iter().find(|&&v| v >> p.bits != 0) {
            return Err(Error::invalid("word", bad, format!("below 2^{}", p.bits)));
        }
        if self.regs.state != IDLE {
            return Err(Error::invalid("sorter", "busy", "an idle sorter"));
        }
        let groups = (words.len() as u32).div_ceil(p.s);
        let dummy = 1u64 << p.bits;
        let word_at = |g: u32, rho: u32| {
            words
                .get((g * p.s + rho) as usize)
                .copied()
                .unwrap_or(dummy)
        };
        let start = self.cycle;
        let mut output = Vec::with_capacity(words.len());
        let mut t = 0u64;
        let mut before_perm: Vec<u64> = Vec::new();
        let mut inputs = SorterInputs {
            start: true,
            groups,
            data: vec![false; p.s as usize],
        };
        loop {
            crate::interrupt::check()?;
            inputs.start = t == 0;
            inputs.data.fill(false);
            if self.regs.state == LOAD {
                let g = self.regs.count / p.word();
                let bit = p.word() - 1 - self.regs.count % p.word();
                for rho in 0..p.s {
                    inputs.data[rho as usize] = (word_at(g, rho) >> bit) & 1 == 1;
                }
            }
            // Sample the output wires before the edge, as the consumer would.
            if self.draining() && self.regs.count.is_multiple_of(p.word()) {
                for rho in 0..p.s {
                    let base = (rho * p.cells()) as usize;
                    let v = self.regs.d[base];
                    if v & dummy == 0 {
                        output.push(v);
                    }
                }
            }
            let (was, phase) = (self.regs.state, self.regs.phase);
            self.step(&inputs);
            observer(self, &inputs)?;
            self.check_step(was, phase, &mut before_perm)?;
            t += 1;
            if self.regs.state == IDLE {
                break;
            }
            if t > 1 << 32 {
                return Err(Error::Invariant {
                    cycle: self.cycle,
                    message: "flexible sorter did not finish".into(),
                });
            }
        }
        Ok(SortRun {
            output,
            cycles: self.cycle - start,
            w: 1 << self.regs.lg_w,
            phases: self.controls.phases[self.regs.lg_w as usize],
        })
    }

    /// The array as words in column-major order (`p = c·s + ρ`) over the closed ring length.
    fn array(&self) -> Vec<u64> {
        let p = self.params();
        let w = 1u32 << self.regs.lg_w;
        (0..p.s * w)
            .map(|i| self.regs.d[((i % p.s) * p.cells() + i / p.s) as usize])
            .collect()
    }

    /// Checked as the controller leaves a step: after a sorting step every column is
    /// sorted; after a permuting step the array is the phase's permutation of the array before
    /// it.
    fn check_step(&self, was: u8, phase: u32, before_perm: &mut Vec<u64>) -> Result<()> {
        let now = self.regs.state;
        if was == now {
            return Ok(());
        }
        let p = self.params();
        let fail = |what: String| {
            Err(Error::Invariant {
                cycle: self.cycle,
                message: format!("flexible sorter, phase {phase}: {what}"),
            })
        };
        if was == SORT {
            let a = self.array();
            if let Some(c) = a.chunks(p.s as usize).position(|col| !col.is_sorted()) {
                return fail(format!("column {c} unsorted after the sorting step"));
            }
            *before_perm = a;
        } else if was == OREV {
            let perm = &self.controls.schedules[self.regs.lg_w as usize][phase as usize];
            let mut want = vec![0; before_perm.len()];
            for (i, &dst) in perm.iter().enumerate() {
                want[dst as usize] = before_perm[i];
            }
            if self.array() != want {
                return fail(
                    "the array is not the permutation of the array before the permuting step"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// One clock cycle: the controller and every register compute from the registered state
    /// and `inputs`, then commit.
    pub fn step(&mut self, inputs: &SorterInputs) {
        let p = self.params();
        let c = &self.controls;
        let mut n = std::mem::take(&mut self.next);
        n.copy_from(&self.regs);
        let r = &self.regs;
        let (s, cells, word) = (p.s, p.cells(), p.word());
        let w = 1u32 << r.lg_w;
        let lg_s = p.lg_s();
        let mask = (1u64 << word) - 1;
        let msb = |v: u64| (v >> (word - 1)) & 1;
        let idx = |rho: u32, col: u32| (rho * cells + col) as usize;
        // Shift the D chain of every ring once (closed at w), taking `port_in[ρ]` at the top.
        let shift_d = |n: &mut SorterRegs, port_in: &dyn Fn(u32) -> bool| {
            for rho in 0..s {
                for col in 0..w {
                    let inb = if col + 1 == w {
                        u64::from(port_in(rho))
                    } else {
                        msb(r.d[idx(rho, col + 1)])
                    };
                    n.d[idx(rho, col)] = ((r.d[idx(rho, col)] << 1) | inb) & mask;
                }
            }
        };
        let count_next = r.count + 1;
        match r.state {
            IDLE if inputs.start && inputs.groups >= 1 && inputs.groups <= cells => {
                n.groups = inputs.groups;
                n.lg_w = inputs.groups.next_power_of_two().trailing_zeros();
                n.state = CLEAR;
                n.count = 0;
            }
            CLEAR => {
                for rho in 0..s {
                    for col in 0..w {
                        n.d[idx(rho, col)] = 1 << p.bits;
                    }
                }
                n.state = LOAD;
                n.count = 0;
            }
            LOAD => {
                shift_d(&mut n, &|rho| inputs.data[rho as usize]);
                n.count = count_next;
                if count_next == r.groups * word {
                    n.state = SEEK;
                    n.count = 0;
                }
            }
            SEEK => {
                let lw = r.lg_w as usize;
                for k in 0..lg_s as usize {
                    if r.optr[k] < c.omega_offset[lw] {
                        n.optr[k] = r.optr[k] + 1;
                    }
                }
                for col in 0..cells as usize {
                    if r.cptr[col] < c.cell_offset[col][lw] {
                        n.cptr[col] = r.cptr[col] + 1;
                    }
                }
                n.count = count_next;
                if count_next == c.seek_len(r.lg_w) {
                    n.state = SORT;
                    n.count = 0;
                }
            }
            SORT => {
                let depth = c.depth();
                let last = &r.sline[depth as usize - 1];
                shift_d(&mut n, &|rho| last[rho as usize]);
                let first_in = r.count < w * word && r.count.is_multiple_of(word);
                self.column_sorter(&mut n, first_in);
                n.count = count_next;
                if count_next == w * word + depth {
                    n.count = 0;
                    if w == 1 {
                        n.state = DRAIN;
                    } else {
                        n.state = OFWD;
                    }
                }
            }
            OFWD | OREV => {
                let fwd = r.state == OFWD;
                let top = if fwd { lg_s as usize - 1 } else { 0 };
                let last = &r.o[top];
                shift_d(&mut n, &|rho| last[rho as usize]);
                self.omega_stages(&mut n, fwd);
                n.count = count_next;
                if count_next == w * word + lg_s {
                    n.count = 0;
                    if fwd {
                        n.state = INRING;
                        n.dim = 0;
                        n.sub = 0;
                    } else if r.phase + 1 == c.phases[r.lg_w as usize] {
                        n.state = DRAIN;
                    } else {
                        n.phase = r.phase + 1;
                        n.state = SORT;
                    }
                }
            }
            INRING => {
                // Dimension of in-ring step `dim` in lg w − 1, …, 0, …, lg w − 1 (no list per cycle).
                let j = if r.dim < r.lg_w {
                    r.lg_w - 1 - r.dim
                } else {
                    r.dim - r.lg_w + 1
                };
                let span = (1u32 << j) * word;
                let next_sub = self.inring_substep(&mut n, j, count_next, span);
                if next_sub {
                    n.count = 0;
                    if r.sub < 4 {
                        n.sub = r.sub + 1;
                    } else if r.dim + 1 < 2 * r.lg_w - 1 {
                        n.sub = 0;
                        n.dim = r.dim + 1;
                    } else {
                        n.sub = 0;
                        n.dim = 0;
                        n.state = OREV;
                    }
                }
            }
            DRAIN | REWIND => {
                if r.state == DRAIN {
                    shift_d(&mut n, &|_| false);
                }
                for k in 0..lg_s as usize {
                    n.optr[k] = r.optr[k].saturating_sub(1);
                }
                for col in 0..cells as usize {
                    n.cptr[col] = r.cptr[col].saturating_sub(1);
                }
                n.count = count_next;
                let drained = r.state == REWIND || count_next >= r.groups * word;
                let rewound = n.optr.iter().chain(&n.cptr).all(|&v| v == 0);
                if drained && rewound {
                    n.state = IDLE;
                    n.count = 0;
                    n.phase = 0;
                } else if drained && r.state == DRAIN {
                    n.state = REWIND;
                }
            }
            _ => {}
        }
        self.next = std::mem::replace(&mut self.regs, n);
        self.cycle += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn sorts_random_inputs_for_every_width() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let p = SorterParams {
            s: 8,
            l: 64,
            bits: 8,
        };
        let mut f = FlexibleSorter::new(p).unwrap();
        for r in [8usize, 16, 24, 32, 40, 64, 3, 1] {
            let words: Vec<u64> = (0..r).map(|_| rng.random_range(0..256)).collect();
            let run = f.sort(&words, |_, _| Ok(())).unwrap();
            let mut want = words.clone();
            want.sort_unstable();
            assert_eq!(run.output, want, "r = {r}");
            println!(
                "r = {r}: w = {}, {} phases, {} cycles",
                run.w, run.phases, run.cycles
            );
        }
    }

    #[test]
    fn cycle_formula_equals_the_circuit() {
        for (s, l, bits) in [(8, 64, 8), (16, 128, 3), (2, 2, 1), (4, 4, 32), (8, 8, 5)] {
            let p = SorterParams { s, l, bits };
            let mut f = FlexibleSorter::new(p).unwrap();
            for r in 1..=l {
                if r % s != 0 && r != 1 && r + 1 != l {
                    continue;
                }
                let words: Vec<u64> = (0..u64::from(r)).map(|i| i % 2).collect();
                let run = f.sort(&words, |_, _| Ok(())).unwrap();
                assert_eq!(run.cycles, sort_cycles(p, r).unwrap(), "s {s} l {l} r {r}");
            }
        }
    }
}
