//! The pruned butterfly of [BB] §3.1 (with the edge set and channel capacity of
//! docs/interpretations.md, 'Edge set' and 'Channel capacity'): a complete binary tree of
//! `L + 1` levels whose node `(i, j)` holds `W_i = √N·2^(−⌊i/2⌋)` vertices `⟨i, j, k⟩`.
//! Channels at odd levels are straight matchings, channels at even levels are butterfly
//! crosses, so the channel above a level-`i` node has `cap_i = W_{i−1}` edges.
//!
//! Vertices are numbered densely, level by level: `id = offset(i) + j·W_i + k`.

use crate::error::{Error, Result};

/// A vertex `⟨level, node, index⟩` (`i`, `j`, `k` of the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vertex {
    pub level: u32,
    pub node: u32,
    pub index: u32,
}

impl std::fmt::Display for Vertex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{},{},{}>", self.level, self.node, self.index)
    }
}

/// Smallest and largest supported number of leaves.
pub const MIN_LEAVES: u32 = 16;
pub const MAX_LEAVES: u32 = 1 << 16;

/// An `N`-leaf pruned butterfly, `N` a power of 4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrunedButterfly {
    n: u32,
    log_n: u32,
    offsets: Vec<usize>,
}

impl PrunedButterfly {
    /// Builds the graph on `n` leaves: a power of 4 from 16 to 2^16.
    pub fn new(n: u32) -> Result<Self> {
        if !(MIN_LEAVES..=MAX_LEAVES).contains(&n)
            || !n.is_power_of_two()
            || !n.trailing_zeros().is_multiple_of(2)
        {
            return Err(Error::invalid(
                "inputs",
                n,
                "a power of 4 from 16 to 65536 for the pruned butterfly",
            ));
        }
        let log_n = n.trailing_zeros();
        let mut offsets = Vec::with_capacity(log_n as usize + 2);
        let mut total = 0usize;
        for i in 0..=log_n {
            offsets.push(total);
            total += (1usize << i) * (1usize << (log_n / 2 - i / 2));
        }
        offsets.push(total);
        Ok(PrunedButterfly { n, log_n, offsets })
    }

    /// Number of leaves `N`.
    pub fn leaves(&self) -> u32 {
        self.n
    }

    /// `L = lg N`, the leaf level.
    pub fn levels(&self) -> u32 {
        self.log_n
    }

    /// `√N`, the number of roots.
    pub fn roots(&self) -> u32 {
        1 << (self.log_n / 2)
    }

    /// Vertices per node at level `i`: `W_i = √N·2^(−⌊i/2⌋)`.
    pub fn width(&self, level: u32) -> u32 {
        1 << (self.log_n / 2 - level / 2)
    }

    /// `lg W_i`.
    pub fn width_bits(&self, level: u32) -> u32 {
        self.log_n / 2 - level / 2
    }

    /// Capacity of the channel between a level-`i` node and its parent (`i ≥ 1`):
    /// `√N·2^(−⌊(i−1)/2⌋) = W_{i−1}` (interpretation: 'Channel capacity',
    /// docs/interpretations.md).
    pub fn capacity(&self, level: u32) -> u32 {
        debug_assert!((1..=self.log_n).contains(&level));
        self.width(level - 1)
    }

    /// Number of vertices, `4N − 3√N`.
    pub fn vertex_count(&self) -> usize {
        self.offsets[self.log_n as usize + 1]
    }

    /// Number of edges, `6N − 6√N`.
    pub fn edge_count(&self) -> usize {
        (1..=self.log_n)
            .map(|i| (1usize << i) * self.capacity(i) as usize)
            .sum()
    }

    /// First id of level `i`.
    pub fn level_offset(&self, level: u32) -> usize {
        self.offsets[level as usize]
    }

    /// Dense id of `v`.
    pub fn id(&self, v: Vertex) -> usize {
        self.offsets[v.level as usize]
            + v.node as usize * self.width(v.level) as usize
            + v.index as usize
    }

    /// The vertex with dense id `id`.
    pub fn vertex(&self, id: usize) -> Vertex {
        let level = self.offsets.partition_point(|&o| o <= id) as u32 - 1;
        let w = self.width(level) as usize;
        let rel = id - self.offsets[level as usize];
        Vertex {
            level,
            node: (rel / w) as u32,
            index: (rel % w) as u32,
        }
    }

    /// All vertices of level `i`, by id.
    pub fn level_vertices(&self, level: u32) -> impl Iterator<Item = Vertex> + '_ {
        let w = self.width(level);
        (0..1u32 << level)
            .flat_map(move |node| (0..w).map(move |index| Vertex { level, node, index }))
    }

    /// Leaf `l` = `⟨L, l, 0⟩`.
    pub fn leaf(&self, l: u32) -> Vertex {
        Vertex {
            level: self.log_n,
            node: l,
            index: 0,
        }
    }

    /// Root `r` = `⟨0, 0, r⟩`.
    pub fn root(&self, r: u32) -> Vertex {
        Vertex {
            level: 0,
            node: 0,
            index: r,
        }
    }

    /// Up-ports of a level-`i` vertex: 2 at even `i ≥ 2`, 1 at odd `i`, 0 at the roots.
    pub fn up_degree(&self, level: u32) -> u32 {
        match level {
            0 => 0,
            i if i % 2 == 0 => 2,
            _ => 1,
        }
    }

    /// The parent vertex on up-port `x` of `v`: `x = 0` ↔ parent vertex `k`,
    /// `x = 1` ↔ `k + W_i` (even levels only).
    pub fn up(&self, v: Vertex, x: u32) -> Option<Vertex> {
        (x < self.up_degree(v.level)).then(|| Vertex {
            level: v.level - 1,
            node: v.node / 2,
            index: v.index + x * self.width(v.level),
        })
    }

    /// The child vertex on down-port `o` (0 = left, 1 = right) of `v`: vertex `k mod W_{i+1}`
    /// of child node `2j + o`.
    pub fn down(&self, v: Vertex, o: u32) -> Option<Vertex> {
        (v.level < self.log_n && o < 2).then(|| Vertex {
            level: v.level + 1,
            node: 2 * v.node + o,
            index: v.index % self.width(v.level + 1),
        })
    }

    /// Which up-port of child `down(v, o)` leads back to `v`.
    pub fn up_port_towards(&self, v: Vertex) -> u32 {
        v.index / self.width(v.level + 1)
    }

    /// Every edge as `(child, parent)`, ordered by child id then up-port.
    pub fn edges(&self) -> Vec<(Vertex, Vertex)> {
        let mut out = Vec::with_capacity(self.edge_count());
        for i in 1..=self.log_n {
            for v in self.level_vertices(i) {
                for x in 0..self.up_degree(i) {
                    if let Some(p) = self.up(v, x) {
                        out.push((v, p));
                    }
                }
            }
        }
        out
    }

    /// Level-`i` vertex of the unique path from leaf `l` to root `r` ([BB] §3.1):
    /// `⟨i, ⌊l / 2^(L−i)⌋, r mod W_i⟩`.
    pub fn path_vertex(&self, leaf: u32, root: u32, level: u32) -> Vertex {
        Vertex {
            level,
            node: leaf >> (self.log_n - level),
            index: root % self.width(level),
        }
    }

    /// The unique path from leaf `l` to vertex `h` of its level-`p` ancestor, leaf first.
    pub fn path_up(&self, leaf: u32, level: u32, h: u32) -> Vec<Vertex> {
        (level..=self.log_n)
            .rev()
            .map(|m| self.path_vertex(leaf, h, m))
            .collect()
    }

    /// Level of the lowest common ancestor of leaves `x` and `y` (`L` when equal): the number
    /// of leading address bits they share ("peak", [BB] §3.2).
    pub fn peak(&self, x: u32, y: u32) -> u32 {
        self.log_n - (32 - (x ^ y).leading_zeros())
    }

    /// Load factors of a message set over the channel cuts ([BB] §2; interpretation: 'Load
    /// factor', docs/interpretations.md).
    pub fn load_factors(&self, messages: impl IntoIterator<Item = (u32, u32)>) -> LoadFactors {
        // up[i][j], down[i][j]: crossings of the channel above node (i, j).
        let l = self.log_n as usize;
        let mut up: Vec<Vec<u32>> = (0..=l).map(|i| vec![0; 1 << i]).collect();
        let mut down = up.clone();
        for (s, d) in messages {
            let peak = self.peak(s, d);
            for i in peak + 1..=self.log_n {
                up[i as usize][(s >> (self.log_n - i)) as usize] += 1;
                down[i as usize][(d >> (self.log_n - i)) as usize] += 1;
            }
        }
        let (mut cut, mut dir) = (0.0f64, 0.0f64);
        for i in 1..=l {
            let cap = f64::from(self.capacity(i as u32));
            for j in 0..1 << i {
                let (u, d) = (f64::from(up[i][j]), f64::from(down[i][j]));
                cut = cut.max((u + d) / cap);
                dir = dir.max(u.max(d) / cap);
            }
        }
        LoadFactors { cut, dir }
    }

    /// Butterfly row of `v` when the pruned butterfly is embedded in the butterfly ([BB] §3.1,
    /// Figure 2; [LM]'s row labels): `j·2^(L−i) + spread(k)`, where `spread` moves bit `t` of
    /// `k` to bit `2t`.
    pub fn butterfly_row(&self, v: Vertex) -> u32 {
        let spread = (0..16).fold(0u32, |a, t| a | ((v.index >> t) & 1) << (2 * t));
        (v.node << (self.log_n - v.level)) + spread
    }
}

/// Load factors of a message set over the channel cuts ([BB] §2): `cut` counts both directions
/// of a channel together, `dir` the larger direction. `dir ≤ cut ≤ 2·dir`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LoadFactors {
    pub cut: f64,
    pub dir: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n16_counts_and_figure_1_path() {
        let g = PrunedButterfly::new(16).unwrap();
        assert_eq!(
            (g.vertex_count(), g.edge_count(), g.edges().len()),
            (52, 72, 72)
        );
        let path: Vec<String> = g.path_up(10, 0, 2).iter().map(|v| v.to_string()).collect();
        assert_eq!(
            path,
            ["<4,10,0>", "<3,5,0>", "<2,2,0>", "<1,1,2>", "<0,0,2>"]
        );
        for id in 0..g.vertex_count() {
            assert_eq!(g.id(g.vertex(id)), id);
        }
        assert!(PrunedButterfly::new(32).is_err() && PrunedButterfly::new(4).is_err());
    }
}
