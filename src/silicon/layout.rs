//! A layout-area model in Thompson's grid model: wires on a grid of one track per routing
//! pitch, nodes as squares of their measured cell area. It extends the measured circuits to
//! sizes synthesis cannot reach (N up to 2^20):
//!
//! - butterfly: the standard layout ([LM] §I's Θ(N²d²)) — N rows of switches, lg N + 1
//!   columns, and between columns k and k + 1 a channel as wide as its density, 2^(k+1) links
//!   of d·B(W + 5) wires;
//! - pruned butterfly: the H-tree layout of [BB] §3.2, side S(n) = 2S(n/4) + c_ch·√n +
//!   √(node area), the node of an n-leaf subtree holding 3√n vertices (|V| = 4N − 3√N);
//! - sorting fat-tree: the recurrence of [BB] §4.2 with the corrected invariant
//!   (docs/interpretations.md, 'Sorting fat-tree area');
//! - flexible sorter: its row/column floor plan ([BB] §4.1), fitted to the measured sorters.
//!
//! Area = nodes (measured cells) + wires (modelled tracks); where the flow placed and routed a
//! circuit, the table shows the model beside the die.

use super::flow;
use super::{Circuit, Library, SiliconConfig};
use crate::error::{Error, Result};
use crate::rtl::RtlDesign;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One switch or vertex kind synthesised alone: its cell area and how many the circuit has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeArea {
    pub module: String,
    pub count: u64,
    pub cell_area_um2: f64,
}

/// The pruned butterfly's leaf vertex module.
pub const LEAF: &str = "ff_pb_leaf";

/// Mean cell area, weighted by count, of the nodes whose module `keep` admits.
pub fn mean_area(nodes: &[NodeArea], keep: impl Fn(&str) -> bool) -> Option<f64> {
    let kept = nodes.iter().filter(|a| keep(&a.module));
    let (total, count) = kept.fold((0.0, 0), |(t, c), a| {
        (t + a.count as f64 * a.cell_area_um2, c + a.count)
    });
    (count > 0).then(|| total / count as f64)
}

/// Cell area of the node kind `module`.
pub fn area_of(nodes: &[NodeArea], module: &str) -> Option<f64> {
    nodes
        .iter()
        .find(|a| a.module == module)
        .map(|a| a.cell_area_um2)
}

/// Instances of `module` in a generated top: lines `module [#(...)] name (`.
fn instances(top: &str, module: &str) -> u64 {
    let prefix = format!("{module} ");
    top.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(&prefix) && l.ends_with('('))
        .count() as u64
}

/// Synthesises every switch or vertex kind of `design` alone (with its first instance's
/// parameters) for the layout model's node areas.
pub fn node_areas(
    config: &SiliconConfig,
    design: &RtlDesign,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<NodeArea>> {
    let (top_file, modules): (&str, &[&str]) = match config.circuit {
        Circuit::Butterfly => (
            "ff_net.v",
            &["ff_switch_inject", "ff_switch", "ff_switch_eject"],
        ),
        Circuit::PrunedButterfly => (
            "ff_pb_net.v",
            &["ff_pb_root", "ff_pb_odd", "ff_pb_even", LEAF],
        ),
        Circuit::FlexibleSorter => return Ok(Vec::new()),
    };
    let top = design
        .files
        .iter()
        .find(|(n, _)| n == top_file)
        .map(|(_, t)| t.as_str())
        .ok_or_else(|| Error::parse(top_file, "not generated"))?;
    let mut out = Vec::new();
    for &module in modules {
        let count = instances(top, module);
        let file = format!("{module}.v");
        if count == 0 || !design.files.iter().any(|(n, _)| *n == file) {
            continue;
        }
        progress(&format!("yosys: {module} alone"));
        let sub = dir.join("nodes").join(module);
        std::fs::create_dir_all(&sub).map_err(|e| Error::io(sub.display(), e))?;
        let src = dir.join("src").join(&file);
        let text = std::fs::read_to_string(&src).map_err(|e| Error::io(src.display(), e))?;
        crate::files::write_atomic(sub.join(&file), text)?;
        let params = crate::rtl::instance_params(top, module);
        let s = flow::synthesise_with(&sub, &[&file], module, &params, config.library)?;
        out.push(NodeArea {
            module: module.to_string(),
            count,
            cell_area_um2: s.cell_area_um2,
        });
    }
    Ok(out)
}

/// The modelled layout of one circuit at one size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// Nodes: measured (or fitted) cell areas, µm².
    pub node_area_um2: f64,
    /// Bounding box of the layout, µm².
    pub area_um2: f64,
    pub width_um: f64,
    pub height_um: f64,
}

impl Layout {
    /// Area left to wires.
    pub fn wire_area_um2(&self) -> f64 {
        (self.area_um2 - self.node_area_um2).max(0.0)
    }
}

/// `y ≈ Σ c_j·f_j(x)`: least-squares coefficients of the basis `f` over `points`
/// (normal equations; at most as many basis functions as points are used).
pub fn fit(points: &[(f64, f64)], basis: &[fn(f64) -> f64]) -> Vec<f64> {
    let k = basis.len().min(points.len()).max(1);
    let rows: Vec<(Vec<f64>, f64)> = points
        .iter()
        .map(|&(x, y)| (basis[..k].iter().map(|b| b(x)).collect(), y))
        .collect();
    least_squares(&rows, k)
}

/// The `k` coefficients `c` minimising `Σ (y − c·f)²` over `rows` of features `f` and value `y`.
pub fn least_squares(rows: &[(Vec<f64>, f64)], k: usize) -> Vec<f64> {
    let mut a = vec![vec![0.0; k + 1]; k];
    for (f, y) in rows {
        for i in 0..k {
            for j in 0..k {
                a[i][j] += f[i] * f[j];
            }
            a[i][k] += f[i] * y;
        }
    }
    solve(a)
}

/// Evaluates a fit.
pub fn eval(coefficients: &[f64], basis: &[fn(f64) -> f64], x: f64) -> f64 {
    coefficients.iter().zip(basis).map(|(c, b)| c * b(x)).sum()
}

/// A node area as a function of lg N, fitted to measured sizes: constant + linear in lg N
/// (+ quadratic for leaves, whose registers hold O(lg N) records of O(lg N) bits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AreaFit {
    pub quadratic: bool,
    pub coefficients: Vec<f64>,
}

const LINEAR: [fn(f64) -> f64; 2] = [|_| 1.0, |x| x];
const QUADRATIC: [fn(f64) -> f64; 3] = [|_| 1.0, |x| x, |x| x * x];

impl AreaFit {
    /// Fits `(lg N, area)` points.
    pub fn new(points: &[(f64, f64)], quadratic: bool) -> Self {
        let basis: &[fn(f64) -> f64] = if quadratic { &QUADRATIC } else { &LINEAR };
        AreaFit {
            quadratic,
            coefficients: fit(points, basis),
        }
    }

    /// The area at `lg_n` (never below the smallest coefficient's floor of 1 µm²).
    pub fn at(&self, lg_n: f64) -> f64 {
        let basis: &[fn(f64) -> f64] = if self.quadratic { &QUADRATIC } else { &LINEAR };
        eval(&self.coefficients, basis, lg_n).max(1.0)
    }
}

/// Butterfly in the standard layout with `d` parallel links per edge (the d-dilated
/// butterfly; 1 for the butterfly), switches of area `switch_um2`, links of `link_wires`
/// wires each, on a grid of `pitch_um`.
pub fn butterfly(n: u64, d: u64, switch_um2: f64, link_wires: u64, pitch_um: f64) -> Layout {
    let lg = n.trailing_zeros() as u64;
    let wires = (d * link_wires) as f64 * pitch_um;
    // A switch must be tall enough for its two in- and two out-links.
    let side = switch_um2.sqrt().max(2.0 * wires);
    let height = n as f64 * side;
    let channels: f64 = (0..lg).map(|k| (1u64 << (k + 1)) as f64 * wires).sum();
    let width = (lg + 1) as f64 * side + channels;
    Layout {
        node_area_um2: (n * (lg + 1)) as f64 * switch_um2,
        area_um2: width * height,
        width_um: width,
        height_um: height,
    }
}

/// Pruned butterfly in the H-tree layout: side S(n) = 2S(n/4) + c_ch√n + √(3√n·vertex),
/// S(1) = √leaf; `lane_wires` wires per lane of a channel (both directions), four channels
/// of √n lanes crossing each recursion step.
pub fn pruned_butterfly(
    n: u64,
    vertex_um2: f64,
    leaf_um2: f64,
    lane_wires: u64,
    pitch_um: f64,
) -> Layout {
    let c_ch = 4.0 * lane_wires as f64 * pitch_um;
    let mut side = leaf_um2.sqrt();
    let mut nodes = n as f64 * leaf_um2;
    let mut m = 4u64;
    while m <= n {
        let root = (m as f64).sqrt();
        let node = 3.0 * root * vertex_um2;
        side = 2.0 * side + c_ch * root + node.sqrt();
        nodes += (n / m) as f64 * node;
        m *= 4;
    }
    Layout {
        node_area_um2: nodes,
        area_um2: side * side,
        width_um: side,
        height_um: side,
    }
}

/// Sorting fat-tree in [BB] §4.2's recurrence with the corrected invariant: meshes of
/// m × m terminals (m the largest power of two ≤ lg N) of side ξ·m·lg N at the bottom, every
/// node's sorter in a ξ√n × ξ√n·lg N rectangle; V(n) = max(ξ√n lg N, ξ√n + 2S(n/4)),
/// H(n) = ξ√n + 2·max(S(n/4), ξ√n lg N), S = max(V, H). `xi_um` calibrates ξ from a
/// measured sorter.
pub fn sorting_fat_tree(n: u64, xi_um: f64) -> Layout {
    let lg = n.trailing_zeros() as f64;
    let mut m = 1u64;
    while m * 2 <= lg as u64 {
        m *= 2;
    }
    // Start at the mesh whose terminal count m² is a power of 4 no larger than N.
    let mut size = (m * m).min(n);
    while size.trailing_zeros() % 2 != n.trailing_zeros() % 2 {
        size /= 2;
    }
    let mut side = xi_um * (size as f64).sqrt() * lg;
    let mut nodes = (n / size) as f64 * side * side;
    while size < n {
        size *= 4;
        let root = (size as f64).sqrt();
        let v = (xi_um * root * lg).max(xi_um * root + 2.0 * side);
        let h = xi_um * root + 2.0 * side.max(xi_um * root * lg);
        nodes += (n / size) as f64 * xi_um * root * xi_um * root * lg;
        side = v.max(h);
    }
    Layout {
        node_area_um2: nodes,
        area_um2: side * side,
        width_um: side,
        height_um: side,
    }
}

/// The flexible sorter's floor plan fitted to measured sorters: area ≈ c₁·l·b (the rings'
/// cells) + c₂·s²⌈b/lg s⌉ (the column sorter) + c₃·l·lg s (the Omega network's control).
pub fn sorter_basis(s: f64, l: f64, b: f64) -> [f64; 3] {
    let lg_s = s.log2().max(1.0);
    [l * b, s * s * (b / lg_s).ceil(), l * lg_s]
}

/// Fits the sorter model to `(s, l, b, area)` measurements (non-negative coefficients: a
/// negative one is dropped and the rest refitted).
pub fn fit_sorter(points: &[(f64, f64, f64, f64)]) -> [f64; 3] {
    let mut active = [true; 3];
    loop {
        let idx: Vec<usize> = (0..3).filter(|&i| active[i]).collect();
        let idx = &idx[..idx.len().min(points.len())];
        let rows: Vec<(Vec<f64>, f64)> = points
            .iter()
            .map(|&(s, l, b, area)| {
                let f = sorter_basis(s, l, b);
                (idx.iter().map(|&p| f[p]).collect(), area)
            })
            .collect();
        let c = least_squares(&rows, idx.len());
        if let Some(neg) = c.iter().position(|&x| x < 0.0) {
            active[idx[neg]] = false;
            continue;
        }
        let mut out = [0.0; 3];
        for (&p, &v) in idx.iter().zip(&c) {
            out[p] = v;
        }
        return out;
    }
}

/// Solves the normal equations `a` (k rows of k coefficients and the right-hand side) by
/// Gauss–Jordan elimination with partial pivoting; a singular column gets 0.
fn solve(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let k = a.len();
    for col in 0..k {
        let pivot = (col..k)
            .max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        if a[col][col].abs() < 1e-12 {
            continue;
        }
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let factor = row[col] / pivot_row[col];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= factor * p;
                }
            }
        }
    }
    (0..k)
        .map(|i| {
            if a[i][i].abs() < 1e-12 {
                0.0
            } else {
                a[i][k] / a[i][i]
            }
        })
        .collect()
}

/// The sorter model's area.
pub fn sorter_area(c: &[f64; 3], s: f64, l: f64, b: f64) -> f64 {
    sorter_basis(s, l, b)
        .iter()
        .zip(c)
        .map(|(f, c)| f * c)
        .sum()
}

/// The model's prediction for one measured circuit (its own node areas, its own size).
pub fn predict(m: &super::Measurement, library: Library) -> Result<Option<Layout>> {
    let pitch = library.wire_pitch_um()?;
    let c = &m.config;
    let n = u64::from(c.size);
    Ok(match c.circuit {
        Circuit::Butterfly => mean_area(&m.nodes, |_| true)
            .map(|switch| butterfly(n, 1, switch, link_wires(c), pitch)),
        Circuit::PrunedButterfly => {
            let vertex = mean_area(&m.nodes, |k| k != LEAF).unwrap_or(0.0);
            area_of(&m.nodes, LEAF).map(|leaf| pruned_butterfly(n, vertex, leaf, 2, pitch))
        }
        Circuit::FlexibleSorter => None,
    })
}

/// Wires of one butterfly link: per virtual channel the flit, head, tail, valid, ready and
/// accept lines.
pub fn link_wires(c: &SiliconConfig) -> u64 {
    u64::from(c.vcs) * (u64::from(c.flit_bits) + 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butterfly_layout_is_quadratic() {
        let a = |n| butterfly(n, 1, 1000.0, 26, 0.8).area_um2;
        let r = |n: u64| a(n) / (n as f64 * n as f64);
        assert!(
            r(1 << 20) / r(1 << 16) < 1.05,
            "{} {}",
            r(1 << 16),
            r(1 << 20)
        );
        assert!(a(1 << 10) > 4.0 * a(1 << 9) * 0.9);
    }

    #[test]
    fn h_tree_is_n_lg2_n() {
        let r = |n: u64| {
            let lg = n.trailing_zeros() as f64;
            pruned_butterfly(n, 100.0 * lg, 10.0 * lg * lg, 2, 0.8).area_um2 / (n as f64 * lg * lg)
        };
        assert!(
            r(1 << 20) / r(1 << 16) < 1.2,
            "{} {}",
            r(1 << 16),
            r(1 << 20)
        );
    }

    #[test]
    fn fat_tree_recurrence_closes() {
        let r = |n: u64| {
            let lg = n.trailing_zeros() as f64;
            sorting_fat_tree(n, 10.0).area_um2 / (n as f64 * lg * lg)
        };
        // The corrected invariant: area <= 6.25 xi^2 N lg^2 N.
        for k in [8, 12, 16, 20] {
            assert!(r(1 << k) <= 6.25 * 100.0 + 1e-6, "{k}: {}", r(1 << k));
        }
    }

    #[test]
    fn fits_recover_coefficients() {
        let pts: Vec<(f64, f64)> = (2..8).map(|x| (x as f64, 3.0 + 2.0 * x as f64)).collect();
        let f = AreaFit::new(&pts, false);
        assert!((f.at(10.0) - 23.0).abs() < 1e-6);
        let c = [2.0, 5.0, 1.0];
        let pts: Vec<_> = [
            (4.0, 8.0, 8.0),
            (8.0, 16.0, 8.0),
            (16.0, 32.0, 8.0),
            (8.0, 64.0, 6.0),
        ]
        .iter()
        .map(|&(s, l, b)| (s, l, b, sorter_area(&c, s, l, b)))
        .collect();
        let got = fit_sorter(&pts);
        for i in 0..3 {
            assert!((got[i] - c[i]).abs() < 1e-6, "{got:?}");
        }
    }
}
