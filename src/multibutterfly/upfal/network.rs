//! Upfal's network as step classes ([LM] §II-A): the splitter levels with their proper
//! 2d-edge-colourings and the front levels, grouped by (level parity, colour).

use super::{ANY, FrontLevels, UpfalConfig};
use crate::error::{Error, Result};
use crate::rng::{Stream, stream};
use crate::topology::colouring::colour;
use crate::topology::random_splitter;
use rand::seq::SliceRandom;

/// A link active in one step class.
#[derive(Clone, Copy, Debug)]
pub(super) struct Active {
    pub(super) tail: u32,
    pub(super) head: u32,
    /// The destination bit read at the tail's splitter level is `(dest >> shift) & 1`.
    pub(super) shift: u8,
    /// Direction the link serves (0 = up, 1 = down), or [`ANY`] on a front level.
    pub(super) want: u8,
    /// The head is an output (level `lg N`).
    pub(super) output: bool,
}

impl Active {
    pub(super) fn usable(&self, dest: u32) -> bool {
        self.want == ANY || ((dest >> self.shift) & 1) as u8 == self.want
    }
}

/// The network as step classes: `classes[parity · 2d + colour]` = the links of that colour whose
/// tail level (in the paper's numbering) has that parity (0 = even).
pub(super) struct Network {
    pub(super) n: u32,
    pub(super) perms: u32,
    /// `2d`.
    pub(super) colours: u32,
    /// Internal levels `0 ..= P − 1 + lg N`.
    pub(super) levels: u32,
    pub(super) classes: Vec<Vec<Active>>,
}

impl Network {
    pub(super) fn build(config: &UpfalConfig) -> Result<Self> {
        let n = config.inputs;
        let d = config.multiplicity;
        let topo = random_splitter(n, d, config.wiring, config.seed)?;
        let log_n = topo.log_n;
        let perms = config.permutations;
        let front = perms - 1;
        let colours = 2 * d;
        let mut classes = vec![Vec::new(); 2 * colours as usize];
        // Splitter levels: the links of a level are contiguous (sorted by tail). Colouring the
        // whole level at once colours each splitter (its connected components) separately.
        let per_level = (n * colours) as usize;
        let mut level0 = Vec::new();
        for level in 0..log_n {
            let links = &topo.links[level as usize * per_level..(level as usize + 1) * per_level];
            let edges: Vec<(u32, u32)> = links
                .iter()
                .map(|l| (l.tail - level * n, l.head - (level + 1) * n))
                .collect();
            let col = colour(n, &edges);
            let class = ((level % 2) * colours) as usize;
            let shift = (log_n - 1 - level) as u8;
            let output = level + 1 == log_n;
            for (l, &c) in links.iter().zip(&col) {
                if c >= colours {
                    return Err(Error::Invariant {
                        cycle: 0,
                        message: format!("colour {c} of a level-{level} link is not below 2d"),
                    });
                }
                classes[class + c as usize].push(Active {
                    tail: l.tail + front * n,
                    head: l.head + front * n,
                    shift,
                    want: l.direction,
                    output,
                });
            }
            if level == 0 {
                level0 = edges.into_iter().zip(col).collect();
            }
        }
        // Front level −f (internal level front − f) into level −f + 1. Matchings are drawn from
        // −1 outwards, so the network for P is a prefix of that for P + 1.
        let mut rng = stream(config.seed, Stream::Routing);
        for f in 1..perms {
            let j = front - f;
            let class = ((f % 2) * colours) as usize;
            let edges: Vec<((u32, u32), u32)> = match config.front {
                FrontLevels::Copies => level0.clone(),
                FrontLevels::Matchings => (0..colours)
                    .flat_map(|c| {
                        let mut m: Vec<u32> = (0..n).collect();
                        m.shuffle(&mut rng);
                        m.into_iter()
                            .enumerate()
                            .map(move |(row, o)| ((row as u32, o), c))
                    })
                    .collect(),
            };
            for ((tail, head), c) in edges {
                classes[class + c as usize].push(Active {
                    tail: j * n + tail,
                    head: (j + 1) * n + head,
                    shift: 0,
                    want: ANY,
                    output: false,
                });
            }
        }
        for class in &mut classes {
            class.sort_unstable_by_key(|a| a.tail);
        }
        let net = Network {
            n,
            perms,
            colours,
            levels: perms + log_n,
            classes,
        };
        net.check_colouring()?;
        Ok(net)
    }

    /// The paper's level number `k` of internal level `j`.
    pub(super) fn paper_level(&self, j: u32) -> i64 {
        i64::from(j) - i64::from(self.perms - 1)
    }

    /// The colouring is proper and steps are conflict-free: in every step class each switch is
    /// an end of at most one link, and the class has one link per switch of its tail levels
    /// (so every tail, and likewise every head, has exactly one link of each colour).
    pub(super) fn check_colouring(&self) -> Result<()> {
        let mut stamp = vec![0u32; (self.levels * self.n) as usize];
        for (index, class) in self.classes.iter().enumerate() {
            let parity = (index / self.colours as usize) as i64;
            let tail_levels = (0..self.levels - 1)
                .filter(|&j| self.paper_level(j).rem_euclid(2) == parity)
                .count();
            let mark = index as u32 + 1;
            for a in class {
                for node in [a.tail, a.head] {
                    if stamp[node as usize] == mark {
                        return Err(Error::Invariant {
                            cycle: 0,
                            message: format!(
                                "step class (parity {parity}, colour {}) touches switch {} twice",
                                index % self.colours as usize,
                                self.describe(node)
                            ),
                        });
                    }
                    stamp[node as usize] = mark;
                }
            }
            if class.len() != tail_levels * self.n as usize {
                return Err(Error::Invariant {
                    cycle: 0,
                    message: format!(
                        "step class (parity {parity}, colour {}) has {} links, expected {}",
                        index % self.colours as usize,
                        class.len(),
                        tail_levels * self.n as usize
                    ),
                });
            }
        }
        Ok(())
    }

    /// `(row r, level k)` in the paper's numbering.
    pub(super) fn describe(&self, node: u32) -> String {
        format!(
            "(row {}, level {})",
            node % self.n,
            self.paper_level(node / self.n)
        )
    }
}
