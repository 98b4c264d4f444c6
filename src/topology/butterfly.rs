//! Radix-2 butterflies ([CMS] §1.2, [LM] §I and §I-A).
//!
//! Column (= [LM]'s row) `w` is a `log n`-bit number, bit position `p` (0-based, MSB first) is
//! `(w >> (log_n - 1 - p)) & 1`. Between levels `i` and `i + 1` the cross link flips 0-based
//! position `i`, which is [CMS]'s 1-based position `i + 1`; the link's direction is the head
//! column's bit at that position, as [`Topology::route_digit`] requires.

use super::{Link, NodeId, Topology, TopologyKind, assemble, check_inputs};
use crate::error::{Error, Result};

/// Largest dilation / multiplicity a builder accepts.
pub(super) const MAX_MULTIPLICITY: u32 = 8;

/// Checks a multiplicity parameter (`dilation` or `multiplicity`) against `1..=8`.
pub(super) fn check_multiplicity(name: &str, d: u32) -> Result<()> {
    if !(1..=MAX_MULTIPLICITY).contains(&d) {
        return Err(Error::invalid(name, d, "1 to 8"));
    }
    Ok(())
}

/// Links of a leveled network in which every node at level `l` has a straight and a cross
/// neighbour at level `l + 1`, the cross one differing in 0-based bit position `flip(l)`.
/// Direction `b` goes to the head whose bit `flip(l)` is `b`; each edge gets `d` lanes.
pub(super) fn bit_flip_links(
    n: u32,
    log_n: u32,
    levels: u32,
    d: u32,
    flip: impl Fn(u32) -> u32,
) -> Vec<Link> {
    let mut links = Vec::with_capacity((levels as usize - 1) * n as usize * 2 * d as usize);
    for level in 0..levels - 1 {
        let mask = 1u32 << (log_n - 1 - flip(level));
        for col in 0..n {
            let tail = level * n + col;
            for direction in 0..2u8 {
                let head_col = if direction == 0 {
                    col & !mask
                } else {
                    col | mask
                };
                let head = (level + 1) * n + head_col;
                for lane in 0..d as u16 {
                    links.push(Link {
                        tail,
                        head,
                        direction,
                        lane,
                        head_port: 0,
                    });
                }
            }
        }
    }
    links
}

/// The `n`-input butterfly of [CMS] §1.2: nodes ⟨w, i⟩ on levels `0..=log n`, ⟨w, i⟩ linked
/// to ⟨w', i + 1⟩ iff `w' = w` or `w'` differs from `w` exactly in bit position `i + 1` (1-based,
/// position 1 = MSB). Multiplicity 1.
pub fn butterfly(n: u32) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    let links = bit_flip_links(n, log_n, log_n + 1, 1, |l| l);
    Ok(assemble(TopologyKind::Butterfly, n, log_n + 1, 1, links))
}

/// The `d`-dilated butterfly ([LM] §I-A): every butterfly edge is a channel of `d` parallel
/// links (lanes `0..d`). `d` must be in `1..=8`.
pub fn dilated_butterfly(n: u32, d: u32) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    check_multiplicity("dilation", d)?;
    let links = bit_flip_links(n, log_n, log_n + 1, d, |l| l);
    Ok(assemble(TopologyKind::Dilated, n, log_n + 1, d, links))
}

/// [LM]'s label `(row, level)` of `node`.
///
/// The mapping from [CMS]'s ⟨w, i⟩ (our `column`, `level`) to [LM]'s `(r, l)` is the identity
/// `r = w`, `l = i`: [CMS] links ⟨w, i⟩ to the column differing in 1-based position `i + 1`,
/// [LM] links `(r, l)` to `r^l`, `r` with 0-based bit `l` complemented. Both number bits from the
/// most significant end (docs/interpretations.md, 'Butterfly labels'), so [CMS]'s position
/// `i + 1` *is* [LM]'s bit `i`, and the two edge sets coincide (test
/// `row_level_mapping_matches_lm_labels`).
pub fn row_level_of(topo: &Topology, node: NodeId) -> (u32, u32) {
    let node = topo.node(node);
    (node.column, node.level)
}

/// Node id of [LM]'s switch `(row, level)`; inverse of [`row_level_of`] (identity mapping,
/// see there).
pub fn node_of_row_level(topo: &Topology, row: u32, level: u32) -> NodeId {
    topo.node_id(level, row)
}

/// The wrap-around butterfly of [CMS] §1.2 as a pure graph: ⟨w, 0⟩ is identified with
/// ⟨w, log n⟩, so there are `n log n` nodes, id `level * n + column` with levels
/// `0..log_n`, and the edges leaving level `log_n - 1` enter level 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrappedButterfly {
    pub n: u32,
    pub log_n: u32,
    /// Directed edges `(tail, head)`, two per node (straight first, then cross).
    pub edges: Vec<(u32, u32)>,
}

/// Builds the [`WrappedButterfly`] with `n` columns.
pub fn wrapped_butterfly(n: u32) -> Result<WrappedButterfly> {
    let log_n = check_inputs(n)?;
    let mut edges = Vec::with_capacity(2 * n as usize * log_n as usize);
    for level in 0..log_n {
        let next = (level + 1) % log_n;
        let mask = 1u32 << (log_n - 1 - level);
        for col in 0..n {
            let tail = level * n + col;
            edges.push((tail, next * n + col));
            edges.push((tail, next * n + (col ^ mask)));
        }
    }
    Ok(WrappedButterfly { n, log_n, edges })
}

impl WrappedButterfly {
    /// Number of nodes, `n log n`.
    pub fn node_count(&self) -> usize {
        self.n as usize * self.log_n as usize
    }

    /// The unique path of `log n` edges from ⟨source, 0⟩ around to ⟨destination, 0⟩
    /// (= ⟨destination, log n⟩): at level `i` set bit position `i + 1` (1-based) of the column to
    /// the destination's. Returns the `log n + 1` node ids visited.
    ///
    /// # Panics
    /// If `source` or `destination` is not below `n`.
    pub fn path(&self, source: u32, destination: u32) -> Vec<u32> {
        assert!(
            source < self.n && destination < self.n,
            "column out of range"
        );
        let mut col = source;
        let mut path = Vec::with_capacity(self.log_n as usize + 1);
        path.push(col);
        for level in 0..self.log_n {
            let mask = 1u32 << (self.log_n - 1 - level);
            col = (col & !mask) | (destination & mask);
            path.push(((level + 1) % self.log_n) * self.n + col);
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn links_per_level(t: &Topology) -> Vec<usize> {
        let mut counts = vec![0; t.depth() as usize];
        for l in &t.links {
            counts[t.node(l.tail).level as usize] += 1;
        }
        counts
    }

    #[test]
    fn butterfly_node_and_link_counts() {
        for log_n in 1..=10 {
            let n = 1u32 << log_n;
            let t = butterfly(n).unwrap();
            assert_eq!(t.node_count(), (n * (log_n + 1)) as usize);
            assert_eq!(t.levels, log_n + 1);
            assert_eq!(links_per_level(&t), vec![2 * n as usize; log_n as usize]);
        }
    }

    #[test]
    fn butterfly_edge_rule_straight_and_cross_bit_i_plus_1() {
        let t = butterfly(16).unwrap();
        for l in &t.links {
            let (tail, head) = (t.node(l.tail), t.node(l.head));
            assert_eq!(head.level, tail.level + 1);
            let diff = tail.column ^ head.column;
            // 1-based position i + 1 = mask 1 << (log n - (i + 1)).
            let cross = 1u32 << (t.log_n - (tail.level + 1));
            assert!(diff == 0 || diff == cross, "{l:?}");
            assert_eq!(u32::from(l.direction), (head.column & cross != 0) as u32);
        }
    }

    #[test]
    fn row_level_mapping_matches_lm_labels() {
        let t = butterfly(32).unwrap();
        let log_n = t.log_n;
        let mut lm_edges = BTreeSet::new();
        for l in 0..log_n {
            for r in 0..t.n {
                let r_l = r ^ (1 << (log_n - 1 - l)); // bit l (0 = MSB) complemented
                for r2 in [r, r_l] {
                    let edge = (
                        node_of_row_level(&t, r, l),
                        node_of_row_level(&t, r2, l + 1),
                    );
                    lm_edges.insert(edge);
                }
            }
        }
        let ours: BTreeSet<_> = t.links.iter().map(|l| (l.tail, l.head)).collect();
        assert_eq!(ours.len(), t.links.len());
        assert_eq!(lm_edges, ours);
        for node in 0..t.node_count() as u32 {
            let (r, l) = row_level_of(&t, node);
            assert_eq!(node_of_row_level(&t, r, l), node);
        }
    }

    #[test]
    fn butterfly_path_columns_reach_destination_and_are_unique() {
        let t = butterfly(16).unwrap();
        let (n, log_n) = (t.n, t.log_n);
        for s in 0..n {
            // Number of paths from <s, 0> to every node, by dynamic programming over levels.
            let mut count = vec![0u32; t.node_count()];
            count[s as usize] = 1;
            for l in &t.links {
                count[l.head as usize] += count[l.tail as usize];
            }
            for dst in 0..n {
                let cols = t.path_columns(s, dst, 0);
                assert_eq!(cols.len(), log_n as usize + 1);
                assert_eq!(*cols.last().unwrap(), dst);
                let mut col = s;
                for i in 0..log_n {
                    let mask = 1 << (log_n - (i + 1)); // bit position i + 1 (1-based)
                    col = (col & !mask) | (dst & mask);
                    assert_eq!(cols[i as usize + 1], col);
                }
                assert_eq!(
                    count[t.node_id(log_n, dst) as usize],
                    1,
                    "unique path {s}->{dst}"
                );
            }
        }
    }

    #[test]
    fn dilated_butterfly_has_d_parallel_lanes() {
        for d in 1..=8 {
            let t = dilated_butterfly(16, d).unwrap();
            assert_eq!(t.kind, TopologyKind::Dilated);
            assert_eq!(links_per_level(&t), vec![2 * 16 * d as usize; 4]);
            for node in 0..(t.depth() * t.n) {
                for dir in 0..2 {
                    let lane0 = t.links[t.out_link(node, dir, 0) as usize];
                    for id in t.lanes(node, dir) {
                        let link = t.links[id as usize];
                        assert_eq!((link.tail, link.head), (lane0.tail, lane0.head));
                        assert_eq!(link.direction, dir);
                    }
                }
            }
        }
    }

    #[test]
    fn invalid_inputs_and_dilation_are_rejected() {
        for n in [0, 1, 3, 12, 1 << 21] {
            assert!(
                matches!(butterfly(n), Err(Error::Invalid { .. })),
                "n = {n}"
            );
            assert!(matches!(
                dilated_butterfly(n, 2),
                Err(Error::Invalid { .. })
            ));
            assert!(matches!(wrapped_butterfly(n), Err(Error::Invalid { .. })));
        }
        for d in [0, 9] {
            assert!(
                matches!(dilated_butterfly(8, d), Err(Error::Invalid { .. })),
                "d = {d}"
            );
        }
    }

    #[test]
    fn wrapped_butterfly_nodes_degrees_and_paths() {
        for log_n in 1..=6 {
            let n = 1u32 << log_n;
            let w = wrapped_butterfly(n).unwrap();
            assert_eq!(w.node_count(), (n * log_n) as usize);
            let mut out = vec![0; w.node_count()];
            let mut inn = vec![0; w.node_count()];
            for &(a, b) in &w.edges {
                out[a as usize] += 1;
                inn[b as usize] += 1;
            }
            assert!(out.iter().chain(&inn).all(|&c| c == 2));
            let edges: BTreeSet<_> = w.edges.iter().copied().collect();
            for s in 0..n {
                for dst in 0..n {
                    let p = w.path(s, dst);
                    assert_eq!(p.len(), log_n as usize + 1);
                    assert_eq!((p[0], *p.last().unwrap()), (s, dst));
                    assert!(p.windows(2).all(|e| edges.contains(&(e[0], e[1]))));
                }
            }
        }
    }
}
