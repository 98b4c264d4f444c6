//! Networks of two butterflies: the Beneš network, back to back ([CMS] §1.3.3), and the
//! doubled butterfly, in series ([CMS] §3.1).

use super::butterfly::bit_flip_links;
use super::{Topology, TopologyKind, assemble, check_inputs};
use crate::error::Result;

/// The `n`-input Beneš network (`n ≥ 2`), levels `0..=2 log n`, multiplicity 1. Levels
/// `0..=log n` are the butterfly of [`super::butterfly()`]; between levels `log n + j` and
/// `log n + j + 1` (`j = 0..log n`) the cross link flips 1-based bit position `log n - j`
/// (0-based `log n - 1 - j`), the mirror image. Direction `b` at level `l` leads to the head
/// column whose bit at the shift [`Topology::route_digit`]`(l)` names is `b`: headers are
/// routed by their middle column in the first half and by their destination in the second.
pub fn benes(n: u32) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    let levels = 2 * log_n + 1;
    let flip = |l: u32| if l < log_n { l } else { 2 * log_n - 1 - l };
    let links = bit_flip_links(n, log_n, levels, 1, flip);
    Ok(assemble(TopologyKind::Benes, n, levels, 1, links))
}

/// The `n`-input doubled butterfly (`n ≥ 2`), levels `0..=2 log n`: the butterfly of
/// [`super::butterfly()`] twice in series, the cross link between levels `l` and `l + 1`
/// flipping 1-based bit position `(l mod log n) + 1`. [CMS] §3.1 routes a worm in two passes,
/// to a random middle column at level `log n` and on to its destination; on these disjoint
/// passes worms of different sub-rounds never meet (the wrap-around butterfly, one pass's links
/// used twice, is the alternative). Headers are routed by their middle column through the
/// first butterfly and by their destination through the second.
pub fn doubled_butterfly(n: u32) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    let levels = 2 * log_n + 1;
    let links = bit_flip_links(n, log_n, levels, 1, |l| l % log_n);
    Ok(assemble(
        TopologyKind::DoubledButterfly,
        n,
        levels,
        1,
        links,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn doubled_butterfly_repeats_the_cross_rule_and_routes_through_the_middle() {
        let t = doubled_butterfly(16).unwrap();
        let log_n = t.log_n;
        for l in &t.links {
            let (tail, head) = (t.node(l.tail), t.node(l.head));
            let mask = 1u32 << (log_n - 1 - tail.level % log_n);
            let diff = tail.column ^ head.column;
            assert!(diff == 0 || diff == mask, "{l:?}");
        }
        for src in 0..16 {
            for mid in [0, 5, 15] {
                for dst in 0..16 {
                    let cols = t.path_columns(src, dst, mid);
                    assert_eq!(cols.len(), 9);
                    assert_eq!(cols[log_n as usize], mid, "{src}->{mid}->{dst}");
                    assert_eq!(cols[8], dst, "{src}->{mid}->{dst}");
                }
            }
        }
    }

    #[test]
    fn benes_node_and_link_counts() {
        for log_n in 1..=10 {
            let n = 1u32 << log_n;
            let t = benes(n).unwrap();
            assert_eq!(t.levels, 2 * log_n + 1);
            assert_eq!(t.node_count(), ((2 * log_n + 1) * n) as usize);
            let mut per_level = vec![0usize; t.depth() as usize];
            for l in &t.links {
                per_level[t.node(l.tail).level as usize] += 1;
            }
            assert_eq!(per_level, vec![2 * n as usize; 2 * log_n as usize]);
        }
    }

    #[test]
    fn benes_mirror_rule_and_directions() {
        let t = benes(16).unwrap();
        let log_n = t.log_n;
        for l in &t.links {
            let (tail, head) = (t.node(l.tail), t.node(l.head));
            assert_eq!(head.level, tail.level + 1);
            let i = tail.level;
            // 1-based position flipped: i + 1 in the first half, log n - j in the second.
            let pos = if i < log_n {
                i + 1
            } else {
                log_n - (i - log_n)
            };
            let mask = 1u32 << (log_n - pos);
            let diff = tail.column ^ head.column;
            assert!(diff == 0 || diff == mask, "{l:?}");
            // Level l and its mirror 2 log n - 1 - l flip the same bit.
            let bit = log_n - 1 - t.route_digit(i).1;
            assert_eq!(bit, pos - 1);
            assert_eq!(
                u32::from(l.direction),
                (head.column >> (log_n - 1 - bit)) & 1
            );
        }
    }

    #[test]
    fn benes_paths_pass_middle_and_reach_destination() {
        let t = benes(8).unwrap();
        for src in 0..8 {
            for mid in 0..8 {
                for dst in 0..8 {
                    let cols = t.path_columns(src, dst, mid);
                    assert_eq!(cols.len(), 7);
                    assert_eq!(cols[0], src);
                    assert_eq!(cols[t.log_n as usize], mid, "{src}->{mid}->{dst}");
                    assert_eq!(cols[6], dst, "{src}->{mid}->{dst}");
                }
            }
        }
    }

    #[test]
    fn benes_rejects_invalid_inputs() {
        for n in [0, 1, 6, 1 << 21] {
            assert!(matches!(benes(n), Err(Error::Invalid { .. })), "n = {n}");
        }
    }
}
