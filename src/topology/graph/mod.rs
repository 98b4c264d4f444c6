//! Networks as directed graphs with given paths: the model of [CMS] §1.1, [SV] §1 and [CMSV]
//! §1, where worms follow fixed edge-simple paths through any network. A [`Graph`] is switches
//! and directed links; a [`Paths`] set is, per message, the links it crosses in order. Their
//! congestion C (most paths on one link) and dilation D (longest path) are the parameters
//! every bound of those papers is stated in.
//!
//! Generators for the networks the papers use ([`mesh`], [`wrapped_butterfly`],
//! [`random_graph`]): meshes and tori with dimension-order paths, the wrap-around butterfly
//! with bit-fixing paths ([CMS] §1.2), random graphs with shortest paths; and graphs and paths
//! read from files ([`read_graph`], [`read_paths`]). Every switch is a terminal: messages start
//! and end at switches.

mod files;
mod generate;

pub use files::{read_graph, read_paths};
pub use generate::{Routed, check_terminals, mesh, random_graph, wrapped_butterfly};

use super::{GraphShape, Link, NO_TERMINAL, Topology, TopologyKind};
use crate::error::{Error, Result};
use std::collections::VecDeque;

/// Largest number of switches of a graph network.
pub const MAX_NODES: u32 = 1 << 20;
/// Most links leaving one switch (its directions) and most entering it.
pub const MAX_DEGREE: u32 = 16;

/// A network as a directed graph: switches `0..nodes`, links sorted by tail (a switch's out
/// links are contiguous: [`Graph::out_links`]), each switch's in links in link order
/// ([`Graph::in_links`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// What generated it, for reports: `mesh`, `torus`, `wrapped-butterfly`, `random-graph`,
    /// `graph` (a file), `lower-bound`.
    pub name: String,
    pub nodes: u32,
    /// `(tail, head)` of every link, sorted by tail.
    pub links: Vec<(u32, u32)>,
    /// `out_start[s]..out_start[s + 1]`: the out links of switch `s`.
    pub out_start: Vec<u32>,
    /// `in_start[s]..in_start[s + 1]` index [`Graph::in_order`]: the in links of `s`.
    pub in_start: Vec<u32>,
    pub in_order: Vec<u32>,
    /// A short name per switch (waveform scopes, Verilog instances): `x3_y1` on a mesh,
    /// `l2_c5` on a butterfly, `s17` otherwise.
    pub labels: Vec<String>,
    /// The id (in [`Graph::links`]) of each link in the order it was given.
    pub given: Vec<u32>,
}

/// Switch labels name scopes in waveforms and instances in Verilog: one per switch, each a
/// distinct identifier of letters, digits and `_` (not starting with a digit), 1 to 64 long.
fn check_labels(labels: &[String], nodes: u32) -> Result<()> {
    if labels.len() != nodes as usize {
        return Err(Error::invalid(
            "labels",
            format!("{} labels", labels.len()),
            format!("one per switch ({nodes})"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for label in labels {
        let identifier = (1..=64).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !label.as_bytes()[0].is_ascii_digit();
        if !identifier || !seen.insert(label.as_str()) {
            return Err(Error::invalid(
                "labels",
                format!("{label:?}"),
                "distinct identifiers ([A-Za-z_][A-Za-z0-9_]*, at most 64 characters): they name waveform scopes and Verilog instances",
            ));
        }
    }
    Ok(())
}

impl Graph {
    /// Builds a graph from its links (any order; sorted by tail, stably). Refuses a link out of
    /// range, a self-loop and a switch of more than [`MAX_DEGREE`] out or in links.
    pub fn new(
        name: &str,
        nodes: u32,
        links: Vec<(u32, u32)>,
        labels: Option<Vec<String>>,
    ) -> Result<Self> {
        if !(1..=MAX_NODES).contains(&nodes) {
            return Err(Error::invalid(
                "nodes",
                nodes,
                format!("1..={MAX_NODES} switches"),
            ));
        }
        if let Some(&(t, h)) = links
            .iter()
            .find(|&&(t, h)| t >= nodes || h >= nodes || t == h)
        {
            return Err(Error::invalid(
                "links",
                format!("{t} -> {h}"),
                format!("links between distinct switches 0..{nodes}"),
            ));
        }
        let mut order: Vec<u32> = (0..links.len() as u32).collect();
        order.sort_by_key(|&l| links[l as usize].0);
        let mut given = vec![0u32; links.len()];
        for (id, &g) in order.iter().enumerate() {
            given[g as usize] = id as u32;
        }
        let links: Vec<(u32, u32)> = order.iter().map(|&g| links[g as usize]).collect();
        let mut out_start = vec![0u32; nodes as usize + 1];
        let mut in_degree = vec![0u32; nodes as usize];
        for &(t, h) in &links {
            out_start[t as usize + 1] += 1;
            in_degree[h as usize] += 1;
        }
        for s in 0..nodes as usize {
            let out = out_start[s + 1];
            if out > MAX_DEGREE || in_degree[s] > MAX_DEGREE {
                return Err(Error::invalid(
                    "links",
                    format!("switch {s} with {out} out and {} in links", in_degree[s]),
                    format!("at most {MAX_DEGREE} links out of and into every switch"),
                ));
            }
            out_start[s + 1] += out_start[s];
        }
        let mut in_start = vec![0u32; nodes as usize + 1];
        for s in 0..nodes as usize {
            in_start[s + 1] = in_start[s] + in_degree[s];
        }
        let mut fill = in_start.clone();
        let mut in_order = vec![0u32; links.len()];
        for (id, &(_, h)) in links.iter().enumerate() {
            in_order[fill[h as usize] as usize] = id as u32;
            fill[h as usize] += 1;
        }
        let labels = match labels {
            Some(l) => {
                check_labels(&l, nodes)?;
                l
            }
            None => (0..nodes).map(|s| format!("s{s}")).collect(),
        };
        Ok(Graph {
            name: name.to_string(),
            nodes,
            links,
            out_start,
            in_start,
            in_order,
            labels,
            given,
        })
    }

    /// The out links of switch `s` (contiguous ids).
    pub fn out_links(&self, s: u32) -> std::ops::Range<u32> {
        self.out_start[s as usize]..self.out_start[s as usize + 1]
    }

    /// The in links of switch `s`, in link order (its in ports 1.. in that order; port 0 is the
    /// terminal's injection port).
    pub fn in_links(&self, s: u32) -> &[u32] {
        &self.in_order[self.in_start[s as usize] as usize..self.in_start[s as usize + 1] as usize]
    }

    /// The in port (1-based; 0 is injection) at which link `l` enters its head.
    pub fn head_port(&self, l: u32) -> u32 {
        let h = self.links[l as usize].1;
        1 + self
            .in_links(h)
            .iter()
            .position(|&x| x == l)
            .expect("a link enters its head") as u32
    }

    /// The link from `tail` to `head`, if any (the first, for parallel links).
    pub fn link(&self, tail: u32, head: u32) -> Option<u32> {
        self.out_links(tail)
            .find(|&l| self.links[l as usize].1 == head)
    }

    /// Whether the links form a cycle (then only registered back-pressure has a meaning).
    pub fn is_cyclic(&self) -> bool {
        self.topological_levels().is_none()
    }

    /// Per switch, the length of the longest path reaching it (its level: every link goes to
    /// a higher level), or `None` if the graph has a cycle.
    pub fn topological_levels(&self) -> Option<Vec<u32>> {
        let n = self.nodes as usize;
        let mut indegree: Vec<u32> = (0..n)
            .map(|s| self.in_start[s + 1] - self.in_start[s])
            .collect();
        let mut level = vec![0u32; n];
        let mut queue: VecDeque<u32> = (0..n as u32)
            .filter(|&s| indegree[s as usize] == 0)
            .collect();
        let mut seen = 0;
        while let Some(s) = queue.pop_front() {
            seen += 1;
            for l in self.out_links(s) {
                let h = self.links[l as usize].1 as usize;
                level[h] = level[h].max(level[s as usize] + 1);
                indegree[h] -= 1;
                if indegree[h] == 0 {
                    queue.push_back(h as u32);
                }
            }
        }
        (seen == n).then_some(level)
    }
}

/// Per message, the links it crosses, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paths {
    links: Vec<u32>,
    start: Vec<u32>,
}

impl Paths {
    pub fn new() -> Self {
        Paths {
            links: Vec::new(),
            start: vec![0],
        }
    }

    pub fn push(&mut self, path: &[u32]) {
        self.links.extend_from_slice(path);
        self.start.push(self.links.len() as u32);
    }

    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The links of path `i`.
    pub fn path(&self, i: usize) -> &[u32] {
        &self.links[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Checks every path on `graph`: non-empty, consecutive links (each starts where the last
    /// ended), no link twice.
    pub fn check(&self, graph: &Graph) -> Result<()> {
        let links: Vec<Link> = graph
            .links
            .iter()
            .map(|&(tail, head)| Link {
                tail,
                head,
                direction: 0,
                lane: 0,
                head_port: 0,
            })
            .collect();
        self.check_links(&links, |l| l)
    }

    /// [`Paths::check`] against a network's links; `name` is how the user numbers link `l`
    /// (the messages name it so).
    pub fn check_links(&self, links: &[Link], name: impl Fn(u32) -> u32) -> Result<()> {
        for i in 0..self.len() {
            let p = self.path(i);
            if p.is_empty() {
                return Err(Error::invalid(
                    "paths",
                    format!("path {i}"),
                    "at least one link",
                ));
            }
            for (k, &l) in p.iter().enumerate() {
                if l as usize >= links.len() {
                    return Err(Error::invalid(
                        "paths",
                        format!("path {i}: link {}", name(l)),
                        format!("a link of the graph, 0..{}", links.len()),
                    ));
                }
                if k > 0 && links[p[k - 1] as usize].head != links[l as usize].tail {
                    return Err(Error::invalid(
                        "paths",
                        format!("path {i}: link {} then link {}", name(p[k - 1]), name(l)),
                        "consecutive links (each from the switch the last one reached)",
                    ));
                }
                if p[..k].contains(&l) {
                    return Err(Error::invalid(
                        "paths",
                        format!("path {i}: link {} twice", name(l)),
                        "edge-simple paths ([CMS] §1.1)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The switch path `i` starts at and the one it ends at.
    pub fn ends(&self, i: usize, graph: &Graph) -> (u32, u32) {
        let p = self.path(i);
        (
            graph.links[p[0] as usize].0,
            graph.links[p[p.len() - 1] as usize].1,
        )
    }

    /// [`Paths::ends`] on a network's links.
    pub fn ends_on(&self, i: usize, links: &[Link]) -> (u32, u32) {
        let p = self.path(i);
        (
            links[p[0] as usize].tail,
            links[p[p.len() - 1] as usize].head,
        )
    }

    /// Congestion C: the most paths crossing one link.
    pub fn congestion(&self, links: usize) -> u32 {
        let mut load = vec![0u32; links];
        for &l in &self.links {
            load[l as usize] += 1;
        }
        load.into_iter().max().unwrap_or(0)
    }

    /// Dilation D: the longest path, in links.
    pub fn dilation(&self) -> u32 {
        (0..self.len())
            .map(|i| self.path(i).len() as u32)
            .max()
            .unwrap_or(0)
    }
}

/// Most switch × terminal pairs a routing table holds (the next link of every switch towards
/// every terminal).
pub const MAX_ROUTES: u64 = 1 << 24;

impl Topology {
    /// A generated network with its routing function ([`Routed`]).
    pub fn routed(kind: TopologyKind, r: Routed) -> Result<Topology> {
        let terminals = r.terminals();
        let pairs = u64::from(r.graph.nodes) * u64::from(terminals);
        if pairs > MAX_ROUTES {
            return Err(Error::invalid(
                "inputs",
                terminals,
                format!(
                    "a network whose routing table (switches x terminals = {pairs}) has at most {MAX_ROUTES} entries"
                ),
            ));
        }
        let next = |s: u32, t: u32| r.next_hop(s, t);
        Topology::from_graph(
            kind,
            &r.graph,
            &(0..terminals).collect::<Vec<_>>(),
            Some(&next),
        )
    }

    /// A graph network: `graph` with the switches `terminals` (switch ids; terminal `t` is
    /// `terminals[t]`) and, for a network with a routing function, `next(switch, terminal)`,
    /// the link to take (`None` at the terminal itself). An acyclic graph's switches are
    /// renumbered level by level ([`GraphShape`]); a link keeps its order among its tail's.
    pub fn from_graph(
        kind: TopologyKind,
        graph: &Graph,
        terminals: &[u32],
        next: Option<&dyn Fn(u32, u32) -> Option<u32>>,
    ) -> Result<Topology> {
        let n = graph.nodes as usize;
        if terminals.is_empty() || terminals.iter().any(|&t| t >= graph.nodes) {
            return Err(Error::invalid(
                "terminals",
                terminals.len(),
                format!("at least one, each a switch 0..{n}"),
            ));
        }
        let levels = graph.topological_levels();
        let cyclic = levels.is_none();
        // new id -> old id, by (level, id) for an acyclic graph.
        let mut order: Vec<u32> = (0..graph.nodes).collect();
        if let Some(levels) = &levels {
            order.sort_by_key(|&s| (levels[s as usize], s));
        }
        let mut new_of = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let level_start: Vec<u32> = match &levels {
            None => vec![0, graph.nodes],
            Some(levels) => {
                let top = levels.iter().copied().max().unwrap_or(0);
                let mut start = vec![0u32; top as usize + 2];
                for &l in levels {
                    start[l as usize + 1] += 1;
                }
                for l in 0..=top as usize {
                    start[l + 1] += start[l];
                }
                start
            }
        };
        // Links by new tail, in their order among the tail's out links.
        let mut by_tail: Vec<u32> = (0..graph.links.len() as u32).collect();
        by_tail.sort_by_key(|&l| (new_of[graph.links[l as usize].0 as usize], l));
        let mut link_of = vec![0u32; graph.links.len()];
        for (new, &old) in by_tail.iter().enumerate() {
            link_of[old as usize] = new as u32;
        }
        let mut switch_terminal = vec![NO_TERMINAL; n];
        let terminal_switch: Vec<u32> = terminals.iter().map(|&t| new_of[t as usize]).collect();
        for (t, &s) in terminal_switch.iter().enumerate() {
            switch_terminal[s as usize] = t as u32;
        }
        let mut out_start = vec![0u32; n + 1];
        let mut in_degree = vec![0u32; n];
        for &old in &by_tail {
            let (t, h) = graph.links[old as usize];
            out_start[new_of[t as usize] as usize + 1] += 1;
            in_degree[new_of[h as usize] as usize] += 1;
        }
        let mut in_start = vec![0u32; n + 1];
        for s in 0..n {
            out_start[s + 1] += out_start[s];
            in_start[s + 1] = in_start[s] + in_degree[s];
        }
        let mut fill = in_start.clone();
        let mut in_links = vec![0u32; graph.links.len()];
        let mut links = Vec::with_capacity(graph.links.len());
        for (new, &old) in by_tail.iter().enumerate() {
            let (t, h) = graph.links[old as usize];
            let (t, h) = (new_of[t as usize], new_of[h as usize]);
            let slot = fill[h as usize];
            fill[h as usize] += 1;
            in_links[slot as usize] = new as u32;
            let first_port = u32::from(switch_terminal[h as usize] != NO_TERMINAL);
            links.push(Link {
                tail: t,
                head: h,
                direction: (new as u32 - out_start[t as usize]) as u8,
                lane: 0,
                head_port: (first_port + slot - in_start[h as usize]) as u16,
            });
        }
        let labels = order
            .iter()
            .map(|&old| graph.labels[old as usize].clone())
            .collect();
        let next_link = next.map(|next| {
            let count = terminals.len();
            let mut table = vec![NO_TERMINAL; n * count];
            for (new, &old) in order.iter().enumerate() {
                for t in 0..count {
                    if let Some(l) = next(old, t as u32) {
                        table[new * count + t] = link_of[l as usize];
                    }
                }
            }
            table
        });
        let radix = (0..n)
            .map(|s| out_start[s + 1] - out_start[s])
            .max()
            .unwrap_or(1)
            .max(1);
        let count = terminals.len() as u32;
        Ok(Topology {
            kind,
            n: count,
            log_n: count.next_power_of_two().trailing_zeros().max(1),
            levels: level_start.len() as u32 - 1,
            multiplicity: 1,
            radix,
            inject_ports: 1,
            links,
            in_links,
            graph: Some(std::sync::Arc::new(GraphShape {
                switches: graph.nodes,
                level_start,
                cyclic,
                labels,
                terminal_switch,
                switch_terminal,
                out_start,
                in_start,
                switch_of: new_of,
                link_of: graph.given.iter().map(|&l| link_of[l as usize]).collect(),
                next_link,
            })),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_links_and_dimension_order() {
        let m = mesh(16, false).unwrap();
        assert_eq!(m.graph.links.len(), 2 * 2 * 4 * 3);
        let p = m.route(0, 15).unwrap();
        assert_eq!(p.len(), 6);
        let mut ps = Paths::new();
        ps.push(&p);
        ps.check(&m.graph).unwrap();
        assert_eq!(ps.ends(0, &m.graph), (0, 15));
        // x first: 0 -> 1 -> 2 -> 3, then up.
        assert_eq!(m.graph.links[p[2] as usize], (2, 3));
        assert!(m.graph.is_cyclic());
    }

    #[test]
    fn torus_takes_the_short_way_round() {
        let t = mesh(25, true).unwrap();
        assert_eq!(t.graph.links.len(), 25 * 4);
        // x: 0 -> 4 is one step backwards round the edge.
        let p = t.route(0, 4).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(t.graph.links[p[0] as usize], (0, 4));
    }

    #[test]
    fn wrapped_butterfly_paths_have_lg_n_links_and_end_home() {
        let w = wrapped_butterfly(8).unwrap();
        for s in 0..8 {
            for d in 0..8 {
                if s == d {
                    continue;
                }
                let p = w.route(s, d).unwrap();
                assert_eq!(p.len(), 3);
                let mut ps = Paths::new();
                ps.push(&p);
                ps.check(&w.graph).unwrap();
                assert_eq!(ps.ends(0, &w.graph), (s, d));
            }
        }
        assert!(w.graph.is_cyclic());
    }

    #[test]
    fn random_graph_routes_every_pair() {
        let r = random_graph(40, 3, 9).unwrap();
        let mut ps = Paths::new();
        for s in 0..40 {
            for d in 0..40 {
                if let Some(p) = r.route(s, d) {
                    ps.push(&p);
                } else {
                    assert_eq!(s, d);
                }
            }
        }
        ps.check(&r.graph).unwrap();
        assert!(ps.dilation() < 40);
    }

    #[test]
    fn congestion_and_dilation() {
        let m = mesh(9, false).unwrap();
        let mut ps = Paths::new();
        ps.push(&m.route(0, 2).unwrap());
        ps.push(&m.route(1, 2).unwrap());
        ps.push(&m.route(0, 8).unwrap());
        assert_eq!(ps.dilation(), 4);
        assert_eq!(ps.congestion(m.graph.links.len()), 3);
    }

    #[test]
    fn bad_paths_are_refused() {
        let m = mesh(9, false).unwrap();
        let l01 = m.graph.link(0, 1).unwrap();
        let l12 = m.graph.link(1, 2).unwrap();
        let l10 = m.graph.link(1, 0).unwrap();
        let mut ps = Paths::new();
        ps.push(&[l01, l10, l01]);
        assert!(ps.check(&m.graph).is_err());
        let mut ps = Paths::new();
        ps.push(&[l12, l01]);
        assert!(ps.check(&m.graph).is_err());
    }

    #[test]
    fn levels_of_an_acyclic_graph() {
        let g = Graph::new("graph", 4, vec![(0, 1), (1, 2), (0, 2), (2, 3)], None).unwrap();
        assert_eq!(g.topological_levels().unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(g.head_port(2), 2);
    }
}
