//! The virtual-channel algorithms of [CMS]: worms of L flits on given edge-simple paths through
//! any network, B virtual channels per link.
//!
//! A [`Problem`] is a network and one path per message, with the parameters every bound of
//! [CMS] is stated in: congestion C and dilation D. On it run
//! - [`schedule`]: the naive colouring of [CMS] footnote 5 (A000-0) and the offline colour
//!   refinement of [CMS] Lemma 2.1.5 and Theorem 2.1.6 (A000-1), each a release schedule that
//!   the switch model then runs and checks: a class of at most B worms per link never blocks;
//! - [`lower_bound`]: the instance of [CMS] Theorem 2.2.1, on which no schedule beats
//!   (L − D)·M/B flit steps;
//! - [`butterfly`]: the randomised two-pass algorithm of [CMS] §3.1 on the doubled butterfly;
//! - [`experiment`]: the claims of [CMS] measured against their bounds.
//!
//! Every run is the same switch model as `flitforge sim` (wormhole, B VCs of depth one, B flits
//! per link per cycle: [CMS] §1.1), so a problem written out ([`Problem::graph_json`],
//! [`Problem::paths_json`]) replays with `sim --topology graph --graph G --paths P`.

pub mod butterfly;
pub mod experiment;
pub mod lower_bound;
pub mod schedule;

use crate::config::{Backpressure, FlowControl, LinkBandwidth, SimConfig};
use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::topology::graph::{Graph, Paths};
use crate::topology::{Topology, TopologyKind};
use crate::traffic::Traffic;

/// Most messages of a problem the algorithms here take.
pub const MAX_MESSAGES: usize = 1 << 20;
/// Most links (summed over all paths) of a problem.
pub const MAX_PATH_LINKS: usize = 1 << 24;

/// A routing problem of [CMS] §1.1: a network and, per message, an edge-simple path (link ids
/// of [`Problem::graph`], whose links are sorted by tail so that a link's id is its position
/// in the graph file [`Problem::graph_json`] writes).
#[derive(Clone, Debug)]
pub struct Problem {
    pub graph: Graph,
    pub paths: Paths,
}

/// What one simulated schedule did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Cycle of the last tail arrival (flit steps from cycle 0).
    pub makespan: u64,
    pub delivered: u64,
    /// Messages whose header waited for a VC at least once.
    pub blocked: u64,
    /// Header waits, summed over messages.
    pub stalled_cycles: u64,
    /// Messages that took longer than an unobstructed worm (path length + L − 1 cycles from
    /// release to tail arrival).
    pub slowed: u64,
}

impl Problem {
    /// A problem on `graph` (rebuilt with its links in tail order) with `paths` in `graph`'s
    /// link ids; the paths are checked (consecutive links, none twice).
    pub fn new(graph: Graph, paths: &Paths) -> Result<Self> {
        if paths.len() > MAX_MESSAGES {
            return Err(Error::invalid(
                "messages",
                paths.len(),
                format!("0..={MAX_MESSAGES}"),
            ));
        }
        paths.check(&graph)?;
        let normal = Graph::new(
            &graph.name,
            graph.nodes,
            graph.links.clone(),
            Some(graph.labels.clone()),
        )?;
        Ok(Problem {
            graph: normal,
            paths: paths.clone(),
        })
    }

    pub fn messages(&self) -> usize {
        self.paths.len()
    }

    /// Congestion C: the most paths on one link.
    pub fn congestion(&self) -> u32 {
        self.paths.congestion(self.graph.links.len())
    }

    /// Dilation D: the longest path, in links.
    pub fn dilation(&self) -> u32 {
        self.paths.dilation()
    }

    /// A problem from a graph file and a paths file (the formats of `sim --graph --paths`),
    /// with the paths' release cycles.
    pub fn read(graph_file: &str, paths_file: &str) -> Result<(Problem, Vec<u64>)> {
        let graph = crate::topology::graph::read_graph(graph_file)?;
        let terminals: Vec<u32> = (0..graph.nodes).collect();
        let topo = Topology::from_graph(TopologyKind::Graph, &graph, &terminals, None)?;
        let (in_topo, releases) = crate::topology::graph::read_paths(paths_file, &topo)?;
        let shape = topo.graph.as_ref().expect("a graph network");
        // Topology link ids back to the graph's (tail-sorted) ids.
        let mut sorted_of = vec![0u32; shape.link_of.len()];
        for (given, &t) in shape.link_of.iter().enumerate() {
            sorted_of[t as usize] = graph.given[given];
        }
        let mut paths = Paths::new();
        for i in 0..in_topo.len() {
            let p: Vec<u32> = in_topo
                .path(i)
                .iter()
                .map(|&l| sorted_of[l as usize])
                .collect();
            paths.push(&p);
        }
        Ok((Problem::new(graph, &paths)?, releases))
    }

    /// The switch where message `m` starts.
    pub fn source(&self, m: usize) -> u32 {
        self.graph.links[self.paths.path(m)[0] as usize].0
    }

    /// The resources message `m` holds a virtual channel of: the links of its path and, as
    /// resource `links + s`, the injection port of its source switch `s` (B VCs, like a
    /// link: a source starts at most B worms at once).
    pub fn resources_of(&self, m: usize) -> impl Iterator<Item = u32> + '_ {
        let port = self.graph.links.len() as u32 + self.source(m);
        self.paths
            .path(m)
            .iter()
            .copied()
            .chain(std::iter::once(port))
    }

    /// Per resource ([`Problem::resources_of`]), the messages that hold a VC of it, in
    /// message order.
    pub fn resource_users(&self) -> Vec<Vec<u32>> {
        let mut users = vec![Vec::new(); self.graph.links.len() + self.graph.nodes as usize];
        for m in 0..self.paths.len() {
            for r in self.resources_of(m) {
                users[r as usize].push(m as u32);
            }
        }
        users
    }

    /// Per link, the messages whose paths cross it, in message order.
    pub fn link_users(&self) -> Vec<Vec<u32>> {
        let mut users = self.resource_users();
        users.truncate(self.graph.links.len());
        users
    }

    /// The network as the switch model builds it: every switch a terminal.
    pub fn topology(&self) -> Result<Topology> {
        let terminals: Vec<u32> = (0..self.graph.nodes).collect();
        Topology::from_graph(TopologyKind::Graph, &self.graph, &terminals, None)
    }

    /// The run configuration of [CMS] §1.1: wormhole, `b` VCs of one flit per link, each
    /// moving a flit per cycle, `flits`-flit worms. A cyclic network runs under registered
    /// back-pressure with VCs of two flits, which moves a worm one hop per cycle as well (a
    /// freed VC is taken one cycle later).
    pub fn config(&self, b: u32, flits: u32) -> SimConfig {
        let cyclic = self.graph.is_cyclic();
        SimConfig {
            backpressure: if cyclic {
                Backpressure::Registered
            } else {
                Backpressure::Combinational
            },
            vc_depth: if cyclic { 2 } else { 1 },
            topology: TopologyKind::Graph,
            graph: Some(self.graph.name.clone()),
            traffic: Traffic::Paths {
                path: format!("{} paths", self.graph.name),
            },
            vcs: b,
            flits,
            flit_bits: 64,
            mode: FlowControl::Wormhole,
            link_bandwidth: LinkBandwidth::PerVc,
            ..SimConfig::default()
        }
    }

    /// Runs `config` (a [`Problem::config`], possibly changed) with message `i` released at
    /// `releases[i]`, every invariant checked; every message must be delivered.
    pub fn simulate(&self, config: SimConfig, releases: &[u64]) -> Result<Outcome> {
        let (out, _) = self.run(config, releases)?;
        if out.delivered != self.messages() as u64 {
            return Err(Error::Invariant {
                cycle: out.makespan,
                message: format!(
                    "{} of {} messages delivered",
                    out.delivered,
                    self.messages()
                ),
            });
        }
        Ok(out)
    }

    /// [`Problem::simulate`] for runs that may drop messages (drop mode): also returns, per
    /// message, the cycle its tail arrived (`None`: dropped).
    pub fn run(&self, config: SimConfig, releases: &[u64]) -> Result<(Outcome, Vec<Option<u64>>)> {
        let topo = self.topology()?;
        let shape = topo.graph.clone().expect("a graph network");
        if shape.cyclic && config.backpressure == Backpressure::Combinational {
            return Err(Error::invalid(
                "backpressure",
                "combinational",
                format!(
                    "registered for {}: its links form cycles, around which same-cycle ready signals have no consistent value",
                    self.graph.name
                ),
            ));
        }
        // The switch model takes its messages in release order.
        let mut order: Vec<usize> = (0..self.messages()).collect();
        order.sort_by_key(|&m| releases[m]);
        let mut paths = Paths::new();
        let mut sorted = Vec::with_capacity(order.len());
        for &m in &order {
            let p: Vec<u32> = self
                .paths
                .path(m)
                .iter()
                .map(|&l| shape.link_of[l as usize])
                .collect();
            paths.push(&p);
            sorted.push(releases[m]);
        }
        let flits = u64::from(config.flits);
        let mut sim = Simulation::with_paths(config, topo, paths, &sorted)?;
        sim.set_check_invariants(true);
        sim.keep_records(true);
        let report = sim.run()?;
        let mut out = Outcome {
            makespan: report.makespan_cycles,
            delivered: report.delivered,
            stalled_cycles: report.stalled_cycles,
            ..Outcome::default()
        };
        let mut arrivals = vec![None; self.messages()];
        for r in sim.records() {
            let m = order[r.id as usize];
            arrivals[m] = r.tail_arrival;
            out.blocked += u64::from(r.stalled > 0);
            let unobstructed = self.paths.path(m).len() as u64 + flits - 1;
            out.slowed += u64::from(
                r.tail_arrival
                    .is_none_or(|t| t.saturating_sub(r.release) > unobstructed),
            );
        }
        Ok((out, arrivals))
    }

    /// The network as a graph file (`sim --graph`).
    pub fn graph_json(&self) -> String {
        let v = serde_json::json!({
            "nodes": self.graph.nodes,
            "links": self.graph.links,
            "labels": self.graph.labels,
        });
        format!("{v}\n")
    }

    /// The paths as a paths file (`sim --paths`), message `i` released at `releases[i]`.
    pub fn paths_json(&self, releases: &[u64]) -> String {
        let mut s = String::from("[\n");
        for m in 0..self.messages() {
            let links: Vec<String> = self.paths.path(m).iter().map(u32::to_string).collect();
            s.push_str(&format!(
                "{{\"links\": [{}], \"release\": {}}}{}\n",
                links.join(", "),
                releases.get(m).copied().unwrap_or(0),
                if m + 1 < self.messages() { "," } else { "" }
            ));
        }
        s.push_str("]\n");
        s
    }
}

/// A random leveled problem: `levels + 1` levels of `width` switches, each switch linked to
/// `degree` distinct random switches of the next level, and `messages` paths, each a random
/// walk from a random switch of level 0 to the last level (dilation `levels`).
pub fn random_leveled(
    width: u32,
    levels: u32,
    degree: u32,
    messages: u32,
    seed: u64,
) -> Result<Problem> {
    use rand::RngExt;
    use rand::seq::SliceRandom;
    if !(1..=1024).contains(&width) || !(1..=256).contains(&levels) {
        return Err(Error::invalid(
            "leveled network",
            format!("{width} switches x {levels} levels"),
            "1..=1024 switches per level, 1..=256 levels",
        ));
    }
    if !(1..=width.min(crate::topology::graph::MAX_DEGREE / 2)).contains(&degree) {
        return Err(Error::invalid(
            "degree",
            degree,
            format!("1..={}", width.min(crate::topology::graph::MAX_DEGREE / 2)),
        ));
    }
    let most = MAX_MESSAGES.min(MAX_PATH_LINKS / levels as usize);
    if !(1..=most).contains(&(messages as usize)) {
        return Err(Error::invalid(
            "messages",
            messages,
            format!("1..={most} paths of {levels} links"),
        ));
    }
    let mut rng = crate::rng::stream(seed, crate::rng::Stream::Wiring);
    let node = |level: u32, i: u32| level * width + i;
    let mut links = Vec::new();
    let mut columns: Vec<u32> = (0..width).collect();
    for level in 0..levels {
        for i in 0..width {
            // In-degree stays within MAX_DEGREE: a switch's out links go to distinct
            // switches, and a shuffled prefix spreads them evenly enough; capped below.
            columns.shuffle(&mut rng);
            for &j in &columns[..degree as usize] {
                links.push((node(level, i), node(level + 1, j)));
            }
        }
    }
    // Keep every switch within MAX_DEGREE in links by re-aiming the excess.
    let mut indegree = vec![0u32; ((levels + 1) * width) as usize];
    for l in &mut links {
        let level = l.1 / width;
        while indegree[l.1 as usize] >= crate::topology::graph::MAX_DEGREE {
            l.1 = node(level, rng.random_range(0..width));
        }
        indegree[l.1 as usize] += 1;
    }
    let labels = (0..(levels + 1) * width)
        .map(|s| format!("l{}_c{}", s / width, s % width))
        .collect();
    let graph = Graph::new("leveled", (levels + 1) * width, links, Some(labels))?;
    let mut paths = Paths::new();
    let mut rng = crate::rng::stream(seed, crate::rng::Stream::Traffic);
    for _ in 0..messages {
        let mut at = rng.random_range(0..width);
        let mut p = Vec::with_capacity(levels as usize);
        for _ in 0..levels {
            let out = graph.out_links(at);
            let l = rng.random_range(out.start..out.end);
            p.push(l);
            at = graph.links[l as usize].1;
        }
        paths.push(&p);
    }
    Problem::new(graph, &paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unobstructed_worm_takes_d_plus_l_minus_1() {
        let p = random_leveled(4, 5, 2, 1, 3).unwrap();
        assert_eq!((p.congestion(), p.dilation()), (1, 5));
        let out = p.simulate(p.config(1, 4), &[0]).unwrap();
        assert_eq!(out.makespan, 5 + 4 - 1);
        assert_eq!((out.blocked, out.slowed, out.delivered), (0, 0, 1));
    }

    #[test]
    fn random_leveled_paths_are_walks_to_the_last_level() {
        let p = random_leveled(8, 6, 3, 50, 1).unwrap();
        assert_eq!(p.messages(), 50);
        assert_eq!(p.dilation(), 6);
        assert!(p.congestion() >= 2);
        let again = random_leveled(8, 6, 3, 50, 1).unwrap();
        assert_eq!(again.paths, p.paths);
    }
}
