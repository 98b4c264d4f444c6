//! The generated graph networks and their routing functions: meshes and tori with
//! dimension-order paths, the wrap-around butterfly with bit fixing ([CMS] §1.2), and random
//! graphs with shortest paths.

use super::{Graph, MAX_DEGREE, MAX_NODES};
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use crate::topology::TopologyKind;
use rand::RngExt;
use std::collections::VecDeque;

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
    let w = crate::topology::wrapped_butterfly(n)?;
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
