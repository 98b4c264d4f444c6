//! Universal routing protocols: any network, any paths, messages generated continuously
//! ([SV]) — the protocols that need no knowledge of the network beyond a path per message.
//!
//! - [`Net`]: a network for these protocols — a directed [`Graph`], the terminals where
//!   generators sit and messages are delivered, the oblivious path of every (source,
//!   destination) pair, and the reverse of every link (acknowledgements travel back along it;
//!   a link whose reverse the network lacks, as on the butterfly, gets an acknowledgement-only
//!   reverse link).
//! - [`continuous`]: the stochastic generation model of [SV] §1 (every generator creates a
//!   message with probability p in every cycle, destination uniform), its link load λ, the
//!   warm-up / measured-window / drain schedule, streaming latency statistics and the
//!   stability test.
//! - [`growing_rank`]: [SV] §2's store-and-forward protocol with growing ranks.
//! - [`trial`]: [SV] §3's wormhole protocol: bufferless worms that are cut, never delayed,
//!   retried every R = 2D + L − 1 cycles, and acknowledged by a flit that travels back and can
//!   itself be cut.
//!
//! Each cycle is the two-phase clock of the rest of flitforge: every switch decides, from the
//! state registered at the end of the previous cycle, which requests win its out links; then
//! every move commits at once.

pub mod batch;
pub mod buffered;
pub mod bufferless;
pub mod continuous;
pub mod cypher;
pub mod experiment;
pub mod growing_rank;
pub mod hw;
pub mod pass_wave;
pub mod phase;
pub mod stability;
pub mod trial;

use crate::error::{Error, Result};
use crate::topology::graph::{self, Graph, Routed};

/// Which network the protocols run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetKind {
    /// The butterfly of [SV] §2.2 (as in Leighton's book): inputs at level 0, outputs at
    /// level lg n, links from level i to i + 1; bit-fixing paths.
    Butterfly,
    /// The k × k mesh, dimension-order paths (x first) ([SV] §3.3).
    Mesh,
    /// The k × k torus, dimension-order paths the shorter way round (node-symmetric).
    Torus,
    /// A random directed graph (a ring plus random chords), shortest paths.
    RandomGraph,
}

impl NetKind {
    pub fn name(self) -> &'static str {
        match self {
            NetKind::Butterfly => "butterfly",
            NetKind::Mesh => "mesh",
            NetKind::Torus => "torus",
            NetKind::RandomGraph => "random-graph",
        }
    }
}

/// Largest number of terminals of a protocol network: its link loads are computed over every
/// (source, destination) pair.
pub const MAX_TERMINALS: u32 = 4096;

#[derive(Clone, Debug)]
enum Paths {
    /// Bit fixing on the leveled butterfly: input x at switch x of level 0, output y at switch
    /// y of level lg n.
    Butterfly {
        n: u32,
        log_n: u32,
    },
    Routed(Routed),
}

/// A network the universal protocols run on.
#[derive(Clone, Debug)]
pub struct Net {
    pub kind: NetKind,
    pub graph: Graph,
    /// Generators (sources) and destinations: `terminals` of each.
    pub terminals: u32,
    /// `reverse[l]`: the link from `l`'s head to its tail; ids at or above
    /// `graph.links.len()` are acknowledgement-only links the network lacks for data.
    pub reverse: Vec<u32>,
    /// Links in all, acknowledgement-only ones included.
    pub links: u32,
    /// The data link each acknowledgement-only link reverses (index: id − data links).
    pub ack_origin: Vec<u32>,
    paths: Paths,
}

impl Net {
    /// Builds the network of `kind` with `terminals` terminals (butterfly: inputs, a power of
    /// two from 4; mesh, torus: k², k ≥ 2 (torus ≥ 3); random graph: 3.. switches, `degree`
    /// links out of each, wired from `seed`).
    pub fn new(kind: NetKind, terminals: u32, degree: u32, seed: u64) -> Result<Net> {
        if !(2..=MAX_TERMINALS).contains(&terminals) {
            return Err(Error::invalid(
                "inputs",
                terminals,
                format!("2..={MAX_TERMINALS} terminals (the link loads cover every pair)"),
            ));
        }
        let (graph, paths) = match kind {
            NetKind::Butterfly => {
                if !terminals.is_power_of_two() || terminals < 4 {
                    return Err(Error::invalid(
                        "inputs",
                        terminals,
                        format!("a power of two from 4 to {MAX_TERMINALS}"),
                    ));
                }
                let n = terminals;
                let log_n = n.trailing_zeros();
                let mut links = Vec::with_capacity((2 * n * log_n) as usize);
                for level in 0..log_n {
                    for w in 0..n {
                        let bit = 1 << (log_n - 1 - level);
                        links.push((level * n + w, (level + 1) * n + w));
                        links.push((level * n + w, (level + 1) * n + (w ^ bit)));
                    }
                }
                let labels = (0..n * (log_n + 1))
                    .map(|s| format!("l{}_c{}", s / n, s % n))
                    .collect();
                let graph = Graph::new("butterfly", n * (log_n + 1), links, Some(labels))?;
                (graph, Paths::Butterfly { n, log_n })
            }
            NetKind::Mesh | NetKind::Torus => {
                let r = graph::mesh(terminals, kind == NetKind::Torus)?;
                (r.graph.clone(), Paths::Routed(r))
            }
            NetKind::RandomGraph => {
                let r = graph::random_graph(terminals, degree, seed)?;
                (r.graph.clone(), Paths::Routed(r))
            }
        };
        let data = graph.links.len() as u32;
        let mut reverse = vec![u32::MAX; data as usize];
        let mut ack_origin = Vec::new();
        for (l, &(t, h)) in graph.links.iter().enumerate() {
            reverse[l] = match graph.link(h, t) {
                Some(r) => r,
                None => {
                    ack_origin.push(l as u32);
                    data + ack_origin.len() as u32 - 1
                }
            };
        }
        let extra = ack_origin.len() as u32;
        Ok(Net {
            kind,
            graph,
            terminals,
            reverse,
            links: data + extra,
            ack_origin,
            paths,
        })
    }

    /// Links that carry data (the graph's).
    pub fn data_links(&self) -> u32 {
        self.graph.links.len() as u32
    }

    /// The reverse of link `l` (`l` a data link).
    pub fn reverse_of(&self, l: u32) -> u32 {
        self.reverse[l as usize]
    }

    /// Appends the path from terminal `source` to terminal `destination` to `out` (nothing
    /// when they are one switch).
    pub fn path_into(&self, source: u32, destination: u32, out: &mut Vec<u32>) {
        match &self.paths {
            Paths::Butterfly { n, log_n } => {
                let mut col = source;
                for level in 0..*log_n {
                    let bit = 1 << (log_n - 1 - level);
                    let next = (col & !bit) | (destination & bit);
                    // out links of (level, col): straight first, then cross
                    let base = self.graph.out_links(level * n + col).start;
                    out.push(base + u32::from(next != col));
                    col = next;
                }
            }
            Paths::Routed(r) => {
                if let Some(p) = r.route(source, destination) {
                    out.extend_from_slice(&p);
                }
            }
        }
    }

    /// A uniformly random destination for a message from terminal `s`: any terminal where
    /// [`Net::self_destinations`], else any other one.
    pub fn random_destination(&self, s: u32, rng: &mut crate::rng::Rng) -> u32 {
        use rand::RngExt;
        let n = self.terminals;
        if self.self_destinations() {
            rng.random_range(0..n)
        } else {
            let t = rng.random_range(0..n - 1);
            t + u32::from(t >= s)
        }
    }

    /// Whether a terminal sends to itself (the butterfly's input x and output x are different
    /// switches: a message from x to x crosses lg n links).
    pub fn self_destinations(&self) -> bool {
        self.kind == NetKind::Butterfly
    }

    /// The longest path of any pair, D.
    pub fn dilation(&self) -> u32 {
        match self.paths {
            Paths::Butterfly { log_n, .. } => log_n,
            Paths::Routed(_) => {
                let mut d = 0;
                let mut p = Vec::new();
                for s in 0..self.terminals {
                    for t in 0..self.terminals {
                        p.clear();
                        self.path_into(s, t, &mut p);
                        d = d.max(p.len() as u32);
                    }
                }
                d
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butterfly_paths_fix_one_bit_per_level_and_end_at_the_output() {
        let net = Net::new(NetKind::Butterfly, 16, 2, 1).unwrap();
        assert_eq!(net.dilation(), 4);
        assert_eq!(net.data_links(), 2 * 16 * 4);
        // no butterfly link has a data reverse: every one gets an acknowledgement link
        assert_eq!(net.links, 2 * net.data_links());
        let mut p = Vec::new();
        for s in 0..16 {
            for t in 0..16 {
                p.clear();
                net.path_into(s, t, &mut p);
                assert_eq!(p.len(), 4);
                let mut at = s;
                for &l in &p {
                    assert_eq!(net.graph.links[l as usize].0, at);
                    at = net.graph.links[l as usize].1;
                }
                assert_eq!(at, 4 * 16 + t);
            }
        }
    }

    #[test]
    fn mesh_links_are_each_others_reverse() {
        let net = Net::new(NetKind::Mesh, 16, 2, 1).unwrap();
        assert_eq!(net.links, net.data_links());
        for l in 0..net.data_links() {
            let r = net.reverse_of(l);
            assert_eq!(net.reverse_of(r), l);
            let (t, h) = net.graph.links[l as usize];
            assert_eq!(net.graph.links[r as usize], (h, t));
        }
        assert_eq!(net.dilation(), 6);
    }

    #[test]
    fn bad_sizes_are_refused_with_the_range() {
        let e = Net::new(NetKind::Butterfly, 12, 2, 1).unwrap_err();
        assert!(e.to_string().contains("power of two"), "{e}");
        let e = Net::new(NetKind::Mesh, 1 << 20, 2, 1).unwrap_err();
        assert!(e.to_string().contains("4096"), "{e}");
    }
}
