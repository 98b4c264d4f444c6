//! The modified randomly-wired splitter network of [LM]'s experiments (§IV).

#[cfg(doc)]
use super::LinkClass;
use super::splitter::splitter_level;
use super::{FirstMatching, Link, SplitterWiring, Topology, TopologyKind, assemble, check_inputs};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use rand::RngExt;
use rand::seq::SliceRandom;

/// The modified randomly-wired splitter network of [LM] §IV (docs/interpretations.md, 'Modified
/// network'), multiplicity 2: switch level 0 is [LM]'s level −1, whose out links are 4 random
/// perfect matchings into level 1 (= [LM]'s level 0; link class [`LinkClass::Any`], matching `k`
/// is direction `k / 2`, lane `k % 2`, the first one the identity with
/// [`FirstMatching::Identity`], cleaned of parallel links like the splitters); levels 1
/// to `log n − 2` are the splitters of [LM]'s levels 0 to `log n − 3`; the last two splitter
/// levels are replaced by 4×4 complete bipartite graphs from every 4-row block of level
/// `log n − 1` ([LM]'s level `log n − 2`) to the 4 outputs of that block (class
/// [`LinkClass::Exact`]: the link to output `4b + k` is direction `k / 2`, lane `k % 2`). Same
/// depth and switch count as the unmodified network, out-degree 4 everywhere. `n` from 4 to
/// 2^20.
pub fn modified_splitter(n: u32, wiring: SplitterWiring, seed: u64) -> Result<Topology> {
    let log_n = check_inputs(n)?;
    if n < 4 {
        return Err(Error::invalid(
            "inputs",
            n,
            "a power of two from 4 to 1048576 for the modified splitter network",
        ));
    }
    const D: u32 = 2;
    let mut rng = stream(seed, Stream::Wiring);
    let mut links = Vec::with_capacity(log_n as usize * n as usize * 4);
    // Level −1: four random perfect matchings.
    let mut matchings: Vec<Vec<u32>> = (0..4)
        .map(|k| {
            let mut p: Vec<u32> = (0..n).collect();
            if k > 0 || wiring.first_matching == FirstMatching::Random {
                p.shuffle(&mut rng);
            }
            p
        })
        .collect();
    if wiring.cleanup {
        clean_up_matchings(&mut matchings, wiring.cleanup_budget, &mut rng);
    }
    for (k, p) in matchings.iter().enumerate() {
        for (i, &o) in p.iter().enumerate() {
            links.push(Link {
                tail: i as u32,
                head: n + o,
                direction: (k / 2) as u8,
                lane: (k % 2) as u16,
                head_port: 0,
            });
        }
    }
    for level in 0..log_n - 2 {
        splitter_level(n, level, level + 1, D, wiring, &mut rng, &mut links);
    }
    let at = log_n - 1;
    for row in 0..n {
        for k in 0..4u32 {
            links.push(Link {
                tail: at * n + row,
                head: (at + 1) * n + (row & !3) + k,
                direction: (k / 2) as u8,
                lane: (k % 2) as u16,
                head_port: 0,
            });
        }
    }
    Ok(assemble(
        TopologyKind::ModifiedSplitter,
        n,
        log_n + 1,
        D,
        links,
    ))
}

/// Removes parallel links between random perfect matchings: while input `i` reaches the same
/// output through matchings `j < k`, swap `k`'s images of `i` and of a random other input,
/// provided neither then has a parallel link; at most `budget` attempts per matching. Every
/// matching stays a permutation.
fn clean_up_matchings(matchings: &mut [Vec<u32>], budget: u32, rng: &mut Rng) {
    let n = matchings[0].len();
    let clash = |ms: &[Vec<u32>], i: usize, k: usize, o: u32| {
        (0..ms.len()).any(|j| j != k && ms[j][i] == o)
    };
    for k in 1..matchings.len() {
        let mut attempts = 0;
        for i in 0..n {
            while clash(&matchings[..k], i, usize::MAX, matchings[k][i]) {
                if attempts == budget {
                    break;
                }
                attempts += 1;
                let other = rng.random_range(0..n);
                if other == i {
                    continue;
                }
                let (oi, oo) = (matchings[k][i], matchings[k][other]);
                if !clash(matchings, i, k, oo) && !clash(matchings, other, k, oi) {
                    matchings[k].swap(i, other);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{LinkClass, parallel_links};

    #[test]
    fn modified_network_has_the_shape_of_lm_section_iv() {
        for seed in 0..5 {
            let t = modified_splitter(1024, SplitterWiring::default(), seed).unwrap();
            assert_eq!(
                (t.levels, t.multiplicity, t.node_count()),
                (11, 2, 11 * 1024)
            );
            assert_eq!(t.link_class(0), LinkClass::Any);
            assert_eq!(t.link_class(5), LinkClass::Direction);
            assert_eq!(t.link_class(9), LinkClass::Exact);
            // Level −1: four perfect matchings without parallel links.
            let level0 = Topology {
                links: t.links[..1024 * 4].to_vec(),
                ..t.clone()
            };
            assert_eq!(parallel_links(&level0), 0);
            for k in 0..4u32 {
                let mut heads: Vec<u32> = (0..1024)
                    .map(|i| t.links[t.out_link(i, (k / 2) as u8, k % 2) as usize].head)
                    .collect();
                heads.sort_unstable();
                assert_eq!(heads, (1024..2048).collect::<Vec<_>>());
            }
            // K_{4,4}: row 4b + i of level 9 reaches outputs 4b..4b+3, the Exact lane first.
            for row in [0u32, 5, 1023] {
                let node = t.node_id(9, row);
                for dest in (row & !3)..(row & !3) + 4 {
                    let link = t.links[t.exact_link(node, dest) as usize];
                    assert_eq!(t.node(link.head).column, dest);
                }
            }
            // Splitter levels route by the destination bits 0..7.
            for src in [0u32, 77, 1023] {
                for dest in [0u32, 500, 1023] {
                    let mut node = t.node_id(1, src);
                    for level in 1..9 {
                        let dir = t.direction(level, dest, 0);
                        node = t.links[t.out_link(node, dir, 1) as usize].head;
                    }
                    assert_eq!(t.node(node).column >> 2, dest >> 2);
                }
            }
        }
        assert!(modified_splitter(2, SplitterWiring::default(), 1).is_err());
        assert_eq!(
            modified_splitter(4, SplitterWiring::default(), 1)
                .unwrap()
                .levels,
            3
        );
    }

    #[test]
    fn first_matching_identity_keeps_rows() {
        let w = SplitterWiring {
            first_matching: FirstMatching::Identity,
            ..SplitterWiring::default()
        };
        let t = modified_splitter(256, w, 3).unwrap();
        for i in 0..256u32 {
            assert_eq!(t.links[t.out_link(i, 0, 0) as usize].head, 256 + i);
        }
        let level0 = Topology {
            links: t.links[..256 * 4].to_vec(),
            ..t.clone()
        };
        assert_eq!(parallel_links(&level0), 0);
        let random = modified_splitter(256, SplitterWiring::default(), 3).unwrap();
        assert!(
            (0..256u32).any(|i| random.links[random.out_link(i, 0, 0) as usize].head != 256 + i)
        );
    }
}
