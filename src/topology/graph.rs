//! Networks as directed graphs with given paths: the model of [CMS] §1.1, [SV] §1 and [CMSV]
//! §1, where worms follow fixed edge-simple paths through any network. A [`Graph`] is switches
//! and directed links; a [`Paths`] set is, per message, the links it crosses in order. Their
//! congestion C (most paths on one link) and dilation D (longest path) are the parameters
//! every bound of those papers is stated in.
//!
//! Generators for the networks the papers use: meshes and tori with dimension-order paths, the
//! wrap-around butterfly with bit-fixing paths ([CMS] §1.2), random graphs with shortest
//! paths, and graphs read from a file. Every switch is a terminal: messages start and end at
//! switches.

use super::{GraphShape, Link, NO_TERMINAL, Topology, TopologyKind};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use rand::RngExt;
use serde::{Deserialize, Serialize};
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
        self.check_links(&links)
    }

    /// [`Paths::check`] against a network's links.
    pub fn check_links(&self, links: &[Link]) -> Result<()> {
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
                        format!("path {i}: link {l}"),
                        format!("a link of the graph, 0..{}", links.len()),
                    ));
                }
                if k > 0 && links[p[k - 1] as usize].head != links[l as usize].tail {
                    return Err(Error::invalid(
                        "paths",
                        format!("path {i}: link {} then link {l}", p[k - 1]),
                        "consecutive links (each from the switch the last one reached)",
                    ));
                }
                if p[..k].contains(&l) {
                    return Err(Error::invalid(
                        "paths",
                        format!("path {i}: link {l} twice"),
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

/// A generated network and its routing function.
#[derive(Clone, Debug)]
pub struct Routed {
    pub graph: Graph,
    routing: Routing,
}

#[derive(Clone, Debug)]
enum Routing {
    /// Dimension order on a `k × k` mesh or torus: x first, then y; on a torus the shorter way
    /// round, the positive direction on a tie.
    DimensionOrder { k: u32, torus: bool },
    /// Bit fixing on the wrap-around butterfly: one pass from ⟨source, 0⟩ to ⟨destination, 0⟩.
    BitFixing { n: u32, log_n: u32 },
    /// A shortest path, the next hop per destination from a breadth-first search.
    Shortest { next: Vec<u32> },
}

/// Checks the terminal count of a generated graph network before anything is built: a square
/// for a mesh or torus, 3..=4096 switches for a random graph (its routing table holds every
/// pair), and a degree of 1..=4.
pub fn check_terminals(kind: TopologyKind, inputs: u32, degree: u32) -> Result<()> {
    match kind {
        TopologyKind::Mesh => side(inputs).map(drop),
        TopologyKind::Torus => {
            let k = side(inputs)?;
            if k < 3 {
                return Err(Error::invalid(
                    "inputs",
                    inputs,
                    "a torus of side at least 3 (9 switches)",
                ));
            }
            Ok(())
        }
        TopologyKind::RandomGraph => {
            if !(3..=4096).contains(&inputs) {
                return Err(Error::invalid("inputs", inputs, "3..=4096 switches"));
            }
            if !(1..=4).contains(&degree) || degree >= inputs {
                return Err(Error::invalid(
                    "degree",
                    degree,
                    "1..=4 links out of every switch, fewer than the switches",
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Grid side `k` with `k * k = nodes`.
fn side(nodes: u32) -> Result<u32> {
    let k = (nodes as f64).sqrt().round() as u32;
    if k < 2 || k * k != nodes || k > 64 {
        return Err(Error::invalid(
            "inputs",
            nodes,
            "a square k * k with 2 <= k <= 64 (the switches of a k x k mesh or torus)",
        ));
    }
    Ok(k)
}

/// The `k × k` mesh (or torus) with `nodes = k²` switches, links both ways between
/// neighbours (on a torus also round the edges); switch `y·k + x` is labelled `x{x}_y{y}`.
pub fn mesh(nodes: u32, torus: bool) -> Result<Routed> {
    let k = side(nodes)?;
    if torus && k < 3 {
        return Err(Error::invalid(
            "inputs",
            nodes,
            "a torus of side at least 3 (9 switches)",
        ));
    }
    let id = |x: u32, y: u32| y * k + x;
    let mut links = Vec::new();
    for y in 0..k {
        for x in 0..k {
            let s = id(x, y);
            let mut to = |dx: i64, dy: i64| {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                let inside = (0..k as i64).contains(&nx) && (0..k as i64).contains(&ny);
                if inside || torus {
                    let wrap = |v: i64| v.rem_euclid(k as i64) as u32;
                    links.push((s, id(wrap(nx), wrap(ny))));
                }
            };
            to(1, 0);
            to(-1, 0);
            to(0, 1);
            to(0, -1);
        }
    }
    let labels = (0..nodes)
        .map(|s| format!("x{}_y{}", s % k, s / k))
        .collect();
    let name = if torus { "torus" } else { "mesh" };
    Ok(Routed {
        graph: Graph::new(name, nodes, links, Some(labels))?,
        routing: Routing::DimensionOrder { k, torus },
    })
}

/// The wrap-around butterfly of [CMS] §1.2 on `n` columns (`n lg n` switches ⟨w, i⟩, id
/// `i·n + w`): ⟨w, 0⟩ is ⟨w, lg n⟩, so every path of one pass ends where it can start again.
/// Terminals are the level-0 switches; the other switches only forward.
pub fn wrapped_butterfly(n: u32) -> Result<Routed> {
    let w = super::wrapped_butterfly(n)?;
    let log_n = w.log_n;
    if log_n < 2 {
        return Err(Error::invalid(
            "inputs",
            n,
            "4 or more columns for the wrap-around butterfly (2 columns give parallel links)",
        ));
    }
    let labels = (0..w.node_count() as u32)
        .map(|s| format!("l{}_c{}", s / n, s % n))
        .collect();
    Ok(Routed {
        graph: Graph::new(
            "wrapped-butterfly",
            w.node_count() as u32,
            w.edges.clone(),
            Some(labels),
        )?,
        routing: Routing::BitFixing { n, log_n },
    })
}

/// A random strongly connected graph on `nodes` switches with `degree` links out of every
/// switch (a directed ring plus `degree − 1` random chords per switch, no self-loop, no
/// parallel link), routed on shortest paths (ties: the lower next switch).
pub fn random_graph(nodes: u32, degree: u32, seed: u64) -> Result<Routed> {
    if !(3..=MAX_NODES).contains(&nodes) {
        return Err(Error::invalid("inputs", nodes, format!("3..={MAX_NODES}")));
    }
    if !(1..=4).contains(&degree) || degree >= nodes {
        return Err(Error::invalid(
            "degree",
            degree,
            "1..=4 links out of every switch, fewer than the switches",
        ));
    }
    let mut rng: Rng = stream(seed, Stream::Wiring);
    let mut links: Vec<(u32, u32)> = (0..nodes).map(|s| (s, (s + 1) % nodes)).collect();
    let mut in_degree = vec![1u32; nodes as usize];
    for s in 0..nodes {
        let mut chosen: Vec<u32> = vec![(s + 1) % nodes];
        let mut tries = 0;
        while chosen.len() < degree as usize && tries < 64 * degree {
            tries += 1;
            let h = rng.random_range(0..nodes);
            if h != s && !chosen.contains(&h) && in_degree[h as usize] < MAX_DEGREE {
                chosen.push(h);
                in_degree[h as usize] += 1;
                links.push((s, h));
            }
        }
    }
    let graph = Graph::new("random-graph", nodes, links, None)?;
    let next = shortest_next_hops(&graph);
    Ok(Routed {
        graph,
        routing: Routing::Shortest { next },
    })
}

/// For every (switch, destination) the next switch on a shortest path (`u32::MAX` if none), by
/// a breadth-first search backwards from every destination: `next[s · n + d]`.
fn shortest_next_hops(g: &Graph) -> Vec<u32> {
    let n = g.nodes as usize;
    let mut next = vec![u32::MAX; n * n];
    let mut dist = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for d in 0..n {
        dist.fill(u32::MAX);
        dist[d] = 0;
        queue.clear();
        queue.push_back(d as u32);
        while let Some(v) = queue.pop_front() {
            for &l in g.in_links(v) {
                let u = g.links[l as usize].0 as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v as usize] + 1;
                    queue.push_back(u as u32);
                }
            }
        }
        for u in 0..n {
            if u == d || dist[u] == u32::MAX {
                continue;
            }
            // The lowest-numbered neighbour one step closer.
            next[u * n + d] = g
                .out_links(u as u32)
                .map(|l| g.links[l as usize].1)
                .filter(|&h| dist[h as usize] + 1 == dist[u])
                .min()
                .unwrap_or(u32::MAX);
        }
    }
    next
}

impl Routed {
    /// Terminals: the switches messages start and end at (level 0 of the wrap-around
    /// butterfly, every switch otherwise).
    pub fn terminals(&self) -> u32 {
        match self.routing {
            Routing::BitFixing { n, .. } => n,
            _ => self.graph.nodes,
        }
    }

    /// The next link from switch `s` towards terminal `t` (`None` at `t`'s own switch).
    pub fn next_hop(&self, s: u32, t: u32) -> Option<u32> {
        let g = &self.graph;
        match self.routing {
            Routing::DimensionOrder { .. } => self.route(s, t).map(|p| p[0]),
            Routing::BitFixing { n, log_n } => {
                let (level, col) = (s / n, s % n);
                if level == 0 && col == t {
                    return None;
                }
                let mask = 1u32 << (log_n - 1 - level);
                let next_col = (col & !mask) | (t & mask);
                g.link(s, ((level + 1) % log_n) * n + next_col)
            }
            Routing::Shortest { ref next } => {
                let h = *next.get(s as usize * g.nodes as usize + t as usize)?;
                (h != u32::MAX).then(|| g.link(s, h)).flatten()
            }
        }
    }

    /// The path from terminal `source` to terminal `destination`; `None` when they are the
    /// same (a message to itself crosses no link).
    pub fn route(&self, source: u32, destination: u32) -> Option<Vec<u32>> {
        if source == destination {
            return None;
        }
        let g = &self.graph;
        let mut path = Vec::new();
        match self.routing {
            Routing::DimensionOrder { k, torus } => {
                let (mut x, mut y) = (source % k, source / k);
                let (tx, ty) = (destination % k, destination / k);
                let step = |from: u32, to: u32| -> i64 {
                    let d = to as i64 - from as i64;
                    if !torus {
                        return d.signum();
                    }
                    let fwd = d.rem_euclid(k as i64);
                    if fwd == 0 {
                        0
                    } else if fwd <= k as i64 - fwd {
                        1
                    } else {
                        -1
                    }
                };
                let wrap = |v: i64| v.rem_euclid(k as i64) as u32;
                while x != tx {
                    let nx = wrap(x as i64 + step(x, tx));
                    path.push(g.link(y * k + x, y * k + nx)?);
                    x = nx;
                }
                while y != ty {
                    let ny = wrap(y as i64 + step(y, ty));
                    path.push(g.link(y * k + x, ny * k + x)?);
                    y = ny;
                }
            }
            Routing::BitFixing { n, log_n } => {
                let mut col = source;
                for level in 0..log_n {
                    let mask = 1u32 << (log_n - 1 - level);
                    let next_col = (col & !mask) | (destination & mask);
                    let next_level = (level + 1) % log_n;
                    path.push(g.link(level * n + col, next_level * n + next_col)?);
                    col = next_col;
                }
            }
            Routing::Shortest { ref next } => {
                let n = g.nodes as usize;
                let mut at = source;
                while at != destination {
                    let h = next[at as usize * n + destination as usize];
                    if h == u32::MAX {
                        return None;
                    }
                    path.push(g.link(at, h)?);
                    at = h;
                }
            }
        }
        Some(path)
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

/// A graph file: `{"nodes": N, "links": [[tail, head], ...], "labels": [...]}` (labels
/// optional), or text with one `tail head` pair per line (`#` starts a comment; the switches
/// are 0 to the largest number named).
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct GraphFile {
    nodes: u32,
    links: Vec<(u32, u32)>,
    #[serde(default)]
    labels: Option<Vec<String>>,
}

/// Reads a graph file ([`GraphFile`]).
pub fn read_graph(path: &str) -> Result<Graph> {
    let text = crate::limits::read_input_text(path)?;
    if text.trim_start().starts_with('{') {
        let f: GraphFile = serde_json::from_str(&text).map_err(|e| Error::parse(path, e))?;
        return Graph::new("graph", f.nodes, f.links, f.labels);
    }
    let mut links = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let nums: Vec<u32> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::parse(path, format!("line {}: expected `tail head`", k + 1)))?;
        match nums[..] {
            [t, h] => links.push((t, h)),
            _ => {
                return Err(Error::parse(
                    path,
                    format!("line {}: expected `tail head`", k + 1),
                ));
            }
        }
    }
    let nodes = links.iter().map(|&(t, h)| t.max(h) + 1).max().unwrap_or(0);
    Graph::new("graph", nodes, links, None)
}

/// One message of a paths file: its switches in order (`nodes`, the first link between
/// consecutive ones taken) or its links (`links`), and its release cycle.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct PathEntry {
    #[serde(default)]
    nodes: Option<Vec<u32>>,
    #[serde(default)]
    links: Option<Vec<u32>>,
    #[serde(default)]
    release: u64,
}

/// Reads a paths file for the graph network `topo`: a JSON array of `{"nodes": [...]}` or
/// `{"links": [...]}` entries (switch and link numbers of the graph as given; an optional
/// `release` cycle), or of plain switch lists `[[0, 1, 5], ...]`. Returns the paths (in
/// `topo`'s link ids) and their releases, checked: consecutive links, none twice.
pub fn read_paths(path: &str, topo: &Topology) -> Result<(Paths, Vec<u64>)> {
    let Some(shape) = &topo.graph else {
        return Err(Error::invalid(
            "paths",
            path,
            "a file for a graph network (--topology mesh, torus, wrapped-butterfly, random-graph or graph)",
        ));
    };
    let text = crate::limits::read_input_text(path)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::parse(path, e))?;
    let Some(items) = value.as_array() else {
        return Err(Error::parse(path, "expected a JSON list of paths"));
    };
    let entries: Vec<PathEntry> = items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if v.is_array() {
                serde_json::from_value::<Vec<u32>>(v.clone()).map(|nodes| PathEntry {
                    nodes: Some(nodes),
                    links: None,
                    release: 0,
                })
            } else {
                serde_json::from_value(v.clone())
            }
            .map_err(|e| Error::parse(path, format!("path {i}: {e}")))
        })
        .collect::<Result<_>>()?;
    let switches = shape.switches;
    let link_between = |i: usize, t: u32, h: u32| -> Result<u32> {
        if t >= switches || h >= switches {
            return Err(Error::parse(
                path,
                format!("path {i}: switch {} is not one of 0..{switches}", t.max(h)),
            ));
        }
        let (t, h) = (shape.switch_of[t as usize], shape.switch_of[h as usize]);
        (shape.out_start[t as usize]..shape.out_start[t as usize + 1])
            .find(|&l| topo.links[l as usize].head == h)
            .ok_or_else(|| Error::parse(path, format!("path {i}: no link {t} -> {h}")))
    };
    let mut paths = Paths::new();
    let mut releases = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let links = match (&e.nodes, &e.links) {
            (Some(nodes), None) => nodes
                .windows(2)
                .map(|w| link_between(i, w[0], w[1]))
                .collect::<Result<Vec<u32>>>()?,
            (None, Some(links)) => links
                .iter()
                .map(|&l| {
                    shape.link_of.get(l as usize).copied().ok_or_else(|| {
                        Error::parse(
                            path,
                            format!("path {i}: no link {l} (0..{})", shape.link_of.len()),
                        )
                    })
                })
                .collect::<Result<Vec<u32>>>()?,
            _ => {
                return Err(Error::parse(
                    path,
                    format!("path {i}: give either \"nodes\" or \"links\""),
                ));
            }
        };
        if e.release > crate::traffic::MAX_CYCLE {
            return Err(Error::parse(
                path,
                format!(
                    "path {i}: release = {} is out of range 0..={}",
                    e.release,
                    crate::traffic::MAX_CYCLE
                ),
            ));
        }
        paths.push(&links);
        releases.push(e.release);
    }
    paths
        .check_links(&topo.links)
        .map_err(|e| Error::parse(path, e))?;
    Ok((paths, releases))
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
