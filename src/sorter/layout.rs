//! The register layout of the flexible sorter, declared once: every register element with its
//! name and width. The waveform writer ([`super::wave`]) dumps these elements and the Verilog
//! back end ([`super::rtl`]) declares them, so names and widths match by construction.
//!
//! Names: controller `state count phase dim sub groups lg_w`; cells `d_r{ρ}_c{c}`,
//! `x_r{ρ}_c{c}`; column sorter `sl_t{layer}_n{line}`, `sd_t{layer}_k{comparator}` (decided),
//! `ss_t{layer}_k{comparator}` (exchange), `sf_t{layer}` (first-bit marker); Omega network
//! `o_k{stage}_p{position}`, `optr_k{stage}`; cell stores `cptr_c{c}`. The Omega switches'
//! current control bits `cross_k{stage}_m{switch}` are wires (store bit at `optr`).

use super::circuit::{Controls, FlexibleSorter};
use crate::flit::clog2;

/// Which state an element reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    State,
    Count,
    Phase,
    Dim,
    Sub,
    Groups,
    LgW,
    D(u32, u32),
    X(u32, u32),
    SLine(u32, u32),
    SDec(u32, u32),
    SSwap(u32, u32),
    SFirst(u32),
    O(u32, u32),
    Optr(u32),
    Cptr(u32),
    /// A wire: the control bit Omega switch `(k, m)` reads.
    Cross(u32, u32),
}

/// One dumped element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub width: u32,
    pub field: Field,
}

/// Widths of the controller's counters: `(count, phase, dim, groups, lg_w, ptr)`.
pub fn widths(c: &Controls) -> (u32, u32, u32, u32, u32, u32) {
    let p = c.params;
    let cells = p.cells();
    let ptr = c.ptr_bits();
    let longest = (1u64 << ptr) + u64::from(cells * p.word());
    let busiest = u64::from(cells * p.word() + c.depth() + p.lg_s()) + 2;
    let max_phases = c.phases.iter().copied().max().unwrap_or(1);
    (
        clog2(longest.max(busiest) + 1),
        clog2(u64::from(max_phases) + 1),
        clog2(u64::from(2 * cells.trailing_zeros()).max(2)),
        clog2(u64::from(cells) + 1),
        clog2(u64::from(cells.trailing_zeros()) + 1),
        ptr,
    )
}

/// Every element, in declaration order.
pub fn layout(c: &Controls) -> Vec<Element> {
    let p = c.params;
    let (cw, pw, dw, gw, lw, ptr) = widths(c);
    let mut out = Vec::new();
    let mut add = |name: String, width: u32, field: Field| out.push(Element { name, width, field });
    add("state".into(), 4, Field::State);
    add("count".into(), cw, Field::Count);
    add("phase".into(), pw, Field::Phase);
    add("dim".into(), dw, Field::Dim);
    add("sub".into(), 3, Field::Sub);
    add("groups".into(), gw, Field::Groups);
    add("lg_w".into(), lw, Field::LgW);
    for rho in 0..p.s {
        for col in 0..p.cells() {
            add(format!("d_r{rho}_c{col}"), p.word(), Field::D(rho, col));
        }
    }
    for rho in 0..p.s {
        for col in 0..p.cells() {
            add(format!("x_r{rho}_c{col}"), p.word(), Field::X(rho, col));
        }
    }
    for (t, layer) in c.comparators.iter().enumerate() {
        let t = t as u32;
        for line in 0..p.s {
            add(format!("sl_t{t}_n{line}"), 1, Field::SLine(t, line));
        }
        for q in 0..layer.len() as u32 {
            add(format!("sd_t{t}_k{q}"), 1, Field::SDec(t, q));
            add(format!("ss_t{t}_k{q}"), 1, Field::SSwap(t, q));
        }
        if t + 1 < c.comparators.len() as u32 {
            // The last layer's marker would feed nothing.
            add(format!("sf_t{t}"), 1, Field::SFirst(t));
        }
    }
    for k in 0..p.lg_s() {
        for x in 0..p.s {
            add(format!("o_k{k}_p{x}"), 1, Field::O(k, x));
        }
        add(format!("optr_k{k}"), ptr, Field::Optr(k));
    }
    for col in 0..p.cells() {
        add(format!("cptr_c{col}"), ptr, Field::Cptr(col));
    }
    for k in 0..p.lg_s() {
        for m in 0..p.s / 2 {
            add(format!("cross_k{k}_m{m}"), 1, Field::Cross(k, m));
        }
    }
    out
}

impl FlexibleSorter {
    /// The value of one element.
    pub fn read(&self, field: Field) -> u64 {
        let r = &self.regs;
        let cells = self.params().cells();
        let b = u64::from;
        match field {
            Field::State => u64::from(r.state),
            Field::Count => u64::from(r.count),
            Field::Phase => u64::from(r.phase),
            Field::Dim => u64::from(r.dim),
            Field::Sub => u64::from(r.sub),
            Field::Groups => u64::from(r.groups),
            Field::LgW => u64::from(r.lg_w),
            Field::D(rho, col) => r.d[(rho * cells + col) as usize],
            Field::X(rho, col) => r.x[(rho * cells + col) as usize],
            Field::SLine(t, line) => b(r.sline[t as usize][line as usize]),
            Field::SDec(t, q) => b(r.sdec[t as usize][q as usize]),
            Field::SSwap(t, q) => b(r.sswap[t as usize][q as usize]),
            Field::SFirst(t) => b(r.sfirst[t as usize]),
            Field::O(k, x) => b(r.o[k as usize][x as usize]),
            Field::Optr(k) => u64::from(r.optr[k as usize]),
            Field::Cptr(col) => u64::from(r.cptr[col as usize]),
            Field::Cross(k, m) => b(self.cross(k as usize, m as usize)),
        }
    }
}
