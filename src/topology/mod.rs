//! Topologies as pure graphs: switches on levels, directed links between consecutive levels,
//! and each network's routing rule. No clocks and no flits here (see [`crate::switch`]).
//!
//! Every network in this module has `n` switches per level, node id `level * n + column`, and
//! every switch below the last level has `radix` *directions* (output groups) of `d` links each:
//! direction `b` leads to the child whose routed address digit equals `b` (radix 2: "up" = 0,
//! "down" = 1 in [LM]'s splitter terms). A header is routed at level `l` by reading one digit of
//! its destination (or, in the first half of a Beneš network, of its middle column): see
//! [`Topology::route_digit`]. That makes the routing rule a constant bit-select per level, which
//! is exactly what the generated Verilog does.
//!
//! Terminals: a level-0 switch has `inject_ports` injection ports, one per input terminal
//! (input `t` enters switch `t / inject_ports`); a last-level switch drains every register into
//! the destination its ports lead to ([`Topology::ejection_terminal`]). The papers' butterflies
//! have one terminal per column at both ends; the k-ary n-fly has k ([`kary_fly`]).

mod benes;
mod butterfly;
pub mod colouring;
mod fly;
pub mod graph;
mod modified;
pub mod pruned;
mod splitter;

pub use benes::{benes, doubled_butterfly};
pub use butterfly::{
    WrappedButterfly, butterfly, dilated_butterfly, node_of_row_level, row_level_of,
    wrapped_butterfly,
};
pub use fly::{MAX_RADIX, check_kary_fly, check_radix, kary_fly};
pub use modified::modified_splitter;
pub use splitter::{
    Expansion, FirstMatching, SplitterWiring, WiringGenerator, expansion, parallel_links,
    random_splitter,
};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Index of a switch (node): `level * n + column`.
pub type NodeId = u32;
/// Index of a directed link in [`Topology::links`].
pub type LinkId = u32;

/// Largest supported number of inputs (2^20).
pub const MAX_INPUTS: u32 = 1 << 20;

/// The network families flitforge builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// Radix-2 butterfly ([CMS] §1.2).
    Butterfly,
    /// d-dilated butterfly: every butterfly edge is a channel of d wires ([LM] §I-B).
    Dilated,
    /// Randomly-wired splitter network of multiplicity d ([LM] §I-B/C).
    Splitter,
    /// Beneš network: two butterflies back to back ([CMS] §1.3.3).
    Benes,
    /// The network of [CMS] §3.1's two passes: two butterflies in series, the second with the
    /// first's cross rule ([`doubled_butterfly`]).
    DoubledButterfly,
    /// [LM] §IV's modified splitter network (multiplicity 2): an extra input level of four
    /// random matchings and 4×4 complete bipartite graphs in place of the last two splitter
    /// levels ([`modified_splitter`]).
    ModifiedSplitter,
    /// The k-ary n-fly: k^n terminals, n stages of k^(n−1) radix-k switches, k terminals per
    /// first-stage switch and k per last-stage switch, whose output ports contend ([`kary_fly`]).
    KaryFly,
    /// A `k × k` mesh, links both ways between neighbours, dimension-order paths
    /// ([`graph::mesh`]).
    Mesh,
    /// A `k × k` torus ([`graph::mesh`]).
    Torus,
    /// The wrap-around butterfly of [CMS] §1.2 as a network, one-pass bit-fixing paths
    /// ([`graph::wrapped_butterfly`]).
    WrappedButterfly,
    /// A random strongly connected graph, shortest paths ([`graph::random_graph`]).
    RandomGraph,
    /// A graph read from a file, messages on paths read from a file ([`graph::read_graph`]).
    Graph,
}

impl TopologyKind {
    /// All kinds with their command-line names, for help texts and errors.
    pub const ALL: [(&'static str, TopologyKind); 12] = [
        ("butterfly", TopologyKind::Butterfly),
        ("dilated", TopologyKind::Dilated),
        ("splitter", TopologyKind::Splitter),
        ("benes", TopologyKind::Benes),
        ("doubled-butterfly", TopologyKind::DoubledButterfly),
        ("modified-splitter", TopologyKind::ModifiedSplitter),
        ("kary-fly", TopologyKind::KaryFly),
        ("mesh", TopologyKind::Mesh),
        ("torus", TopologyKind::Torus),
        ("wrapped-butterfly", TopologyKind::WrappedButterfly),
        ("random-graph", TopologyKind::RandomGraph),
        ("graph", TopologyKind::Graph),
    ];

    /// Whether networks of this kind are graphs with path routing ([`graph`]) rather than
    /// leveled networks routed by address digits.
    pub fn is_graph(self) -> bool {
        matches!(
            self,
            TopologyKind::Mesh
                | TopologyKind::Torus
                | TopologyKind::WrappedButterfly
                | TopologyKind::RandomGraph
                | TopologyKind::Graph
        )
    }

    /// Command-line name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// A switch position: level (0 = inputs) and column (row, in [LM]'s words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Node {
    pub level: u32,
    pub column: u32,
}

/// A directed link from `tail` (level l) to `head` (level l + 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Link {
    pub tail: NodeId,
    pub head: NodeId,
    /// Output direction at the tail (radix 2: 0 = up, 1 = down).
    pub direction: u8,
    /// Index among the `d` links of that direction at the tail.
    pub lane: u16,
    /// Input port index at the head (position in [`Topology::in_links`] of the head).
    pub head_port: u16,
}

/// Which out links of a switch may carry a packet on ([LM] §I-B and §IV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LinkClass {
    /// Any of the `d` links of the direction one address bit names (a splitter level).
    Direction,
    /// Any out link (level −1 of the modified splitter network: random matchings).
    Any,
    /// The one link whose head column is the destination (the modified network's 4×4
    /// complete bipartite stage), see [`Topology::exact_link`].
    Exact,
}

/// Which header field a level's routing digit is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RouteField {
    /// The destination column.
    Destination,
    /// The middle column (first half of a Beneš network).
    Middle,
}

/// A leveled network: `levels` levels of `n` switches, links only from level l to l + 1.
#[derive(Clone, Debug)]
pub struct Topology {
    pub kind: TopologyKind,
    /// Switches per level, a power of two (the number of inputs, except for the k-ary n-fly:
    /// [`Topology::terminals`]).
    pub n: u32,
    /// `log2 n`.
    pub log_n: u32,
    /// Number of switch levels (butterfly: log n + 1; Beneš: 2 log n + 1).
    pub levels: u32,
    /// Links per direction (1 for butterfly and Beneš, d for dilated and splitter networks).
    pub multiplicity: u32,
    /// Directions per switch below the last level, a power of two (2 but for the k-ary n-fly).
    pub radix: u32,
    /// Injection ports of a level-0 switch: the input terminals it serves.
    pub inject_ports: u32,
    /// All links, sorted by (tail, direction, lane), so that the out links of a node are the
    /// contiguous range starting at `tail * ports` (see [`Topology::out_link`],
    /// [`Topology::ports`]).
    pub links: Vec<Link>,
    /// In links of every node above level 0, [`Topology::ports`] per node, ordered by head
    /// port: `in_links[(node - n) * ports + port]` (a graph network: [`GraphShape`]).
    pub in_links: Vec<LinkId>,
    /// A graph network's shape; `None` for a leveled network.
    pub graph: Option<std::sync::Arc<GraphShape>>,
}

/// The shape of a graph network ([`graph::Graph`] as a [`Topology`]): switches renumbered so
/// that each evaluation level is a contiguous range (topological levels of an acyclic graph, one
/// level for a cyclic one, which only registered back-pressure can run), links sorted by tail.
#[derive(Clone, Debug)]
pub struct GraphShape {
    pub switches: u32,
    /// Switches `level_start[l]..level_start[l + 1]` form evaluation level `l`.
    pub level_start: Vec<u32>,
    pub cyclic: bool,
    /// Per switch (by id), its name in waveforms and netlists.
    pub labels: Vec<String>,
    /// Terminal `t` (a message's source or destination) is switch `terminal_switch[t]`, which
    /// has an injection port (port 0).
    pub terminal_switch: Vec<u32>,
    /// The terminal of each switch, [`NO_TERMINAL`] if none.
    pub switch_terminal: Vec<u32>,
    /// Out links of switch `s`: `out_start[s]..out_start[s + 1]`.
    pub out_start: Vec<u32>,
    /// In links of switch `s` in port order: `in_links[in_start[s]..in_start[s + 1]]`.
    pub in_start: Vec<u32>,
    /// The id each switch of the graph as given (generated or read) has here.
    pub switch_of: Vec<u32>,
    /// The id each link of the graph as given has here.
    pub link_of: Vec<u32>,
    /// The next link towards every terminal, `next_link[s * terminals + t]` ([`NO_TERMINAL`]
    /// at the terminal itself or where none leads): the routing function of generated
    /// networks. `None`: messages carry their paths ([`graph::Paths`]).
    pub next_link: Option<Vec<u32>>,
}

/// No terminal, or no link.
pub const NO_TERMINAL: u32 = u32::MAX;

impl GraphShape {
    /// The evaluation level of switch `s`.
    pub fn level_of(&self, s: u32) -> u32 {
        (self.level_start.partition_point(|&start| start <= s) - 1) as u32
    }

    /// Input ports of switch `s`: its injection port if it is a terminal, then its in links.
    pub fn in_ports(&self, s: u32) -> u32 {
        u32::from(self.switch_terminal[s as usize] != NO_TERMINAL) + self.in_start[s as usize + 1]
            - self.in_start[s as usize]
    }

    /// Out links of switch `s`.
    pub fn out_degree(&self, s: u32) -> u32 {
        self.out_start[s as usize + 1] - self.out_start[s as usize]
    }
}

impl Topology {
    /// Out links of a switch below the last level, and in links of one above level 0:
    /// `radix * multiplicity`.
    pub fn ports(&self) -> u32 {
        self.radix * self.multiplicity
    }

    /// Input (and output) terminals: `n * inject_ports`.
    pub fn terminals(&self) -> u32 {
        match &self.graph {
            Some(g) => g.terminal_switch.len() as u32,
            None => self.n * self.inject_ports,
        }
    }

    /// Bits of a terminal address (a destination or middle column).
    pub fn address_bits(&self) -> u32 {
        self.terminals().trailing_zeros()
    }

    /// The switch input terminal `t` enters (at level 0 of a leveled network), and its
    /// injection port there.
    pub fn injection_port(&self, t: u32) -> (NodeId, u32) {
        match &self.graph {
            Some(g) => (g.terminal_switch[t as usize], 0),
            None => (t / self.inject_ports, t % self.inject_ports),
        }
    }

    /// The destination terminal that in port `port` of last-level switch `node` drains into:
    /// the switch's column for the papers' butterflies (every port delivers to the one
    /// terminal), `column * radix + port` for the k-ary n-fly (one terminal per port).
    pub fn ejection_terminal(&self, node: NodeId, port: u32) -> u32 {
        if let Some(g) = &self.graph {
            // A graph network delivers at the destination's switch, whatever the port.
            return g.switch_terminal[node as usize];
        }
        let column = node - self.last_level() * self.n;
        match self.kind {
            TopologyKind::KaryFly => column * self.radix + port / self.multiplicity,
            _ => column,
        }
    }

    /// Ejection ports of a last-level switch: one per destination terminal it serves.
    pub fn ejection_ports(&self) -> u32 {
        match self.kind {
            TopologyKind::KaryFly => self.radix,
            _ => 1,
        }
    }

    /// Number of switches.
    pub fn node_count(&self) -> usize {
        match &self.graph {
            Some(g) => g.switches as usize,
            None => (self.n as usize) * (self.levels as usize),
        }
    }

    /// Node id of `(level, column)`.
    pub fn node_id(&self, level: u32, column: u32) -> NodeId {
        match &self.graph {
            Some(g) => g.level_start[level as usize] + column,
            None => level * self.n + column,
        }
    }

    /// Position of a node id (a graph network: its evaluation level and index there).
    pub fn node(&self, id: NodeId) -> Node {
        match &self.graph {
            Some(g) => {
                let level = g.level_of(id);
                Node {
                    level,
                    column: id - g.level_start[level as usize],
                }
            }
            None => Node {
                level: id / self.n,
                column: id % self.n,
            },
        }
    }

    /// The name of switch `s` in waveforms and netlists: `l{level}_c{column}`, or a graph
    /// network's label.
    pub fn scope(&self, s: NodeId) -> String {
        match &self.graph {
            Some(g) => g.labels[s as usize].clone(),
            None => {
                let node = self.node(s);
                format!("l{}_c{}", node.level, node.column)
            }
        }
    }

    /// The last level (outputs).
    pub fn last_level(&self) -> u32 {
        self.levels - 1
    }

    /// Routing rule: at `level` (below the last), the header's direction is the digit of
    /// `log2 radix` bits of `field` whose lowest bit is `shift`: `(value >> shift) & (radix - 1)`.
    /// Radix 2: one bit, position `log_n - 1 - shift` counted from the most significant.
    pub fn route_digit(&self, level: u32) -> (RouteField, u32) {
        debug_assert!(level < self.last_level());
        let msb = |bit: u32| self.log_n - 1 - bit;
        match self.kind {
            TopologyKind::Benes | TopologyKind::DoubledButterfly if level < self.log_n => {
                (RouteField::Middle, msb(level))
            }
            TopologyKind::DoubledButterfly => (RouteField::Destination, msb(level - self.log_n)),
            // Level 0 is [LM]'s level −1 (any link: the bit only orders the matchings); the
            // Exact stage's direction is the destination's second-lowest bit.
            TopologyKind::ModifiedSplitter => {
                (RouteField::Destination, msb(level.saturating_sub(1)))
            }
            // Second butterfly mirrored: between levels log n + j and log n + j + 1 the cross
            // link flips bit position log n - j (1-based), i.e. 0-based log n - 1 - j.
            TopologyKind::Benes => (RouteField::Destination, msb(2 * self.log_n - 1 - level)),
            // Stage s sets the destination's digit s, most significant first.
            TopologyKind::KaryFly => {
                let digit = self.radix.trailing_zeros();
                (
                    RouteField::Destination,
                    (self.last_level() - 1 - level) * digit,
                )
            }
            _ => (RouteField::Destination, msb(level)),
        }
    }

    /// How a switch at `level` (below the last) may choose its out link.
    pub fn link_class(&self, level: u32) -> LinkClass {
        match self.kind {
            TopologyKind::ModifiedSplitter if level == 0 => LinkClass::Any,
            TopologyKind::ModifiedSplitter if level + 2 == self.levels => LinkClass::Exact,
            _ => LinkClass::Direction,
        }
    }

    /// The out link of `node` (at an [`LinkClass::Exact`] level) whose head is output
    /// `destination`: direction = the destination's bit 1, lane = its bit 0.
    pub fn exact_link(&self, node: NodeId, destination: u32) -> LinkId {
        self.out_link(node, ((destination >> 1) & 1) as u8, destination & 1)
    }

    /// Direction (radix 2: 0 = up, 1 = down) a header for `destination` via `middle` takes at
    /// `level`.
    pub fn direction(&self, level: u32, destination: u32, middle: u32) -> u8 {
        let (field, shift) = self.route_digit(level);
        let value = match field {
            RouteField::Destination => destination,
            RouteField::Middle => middle,
        };
        ((value >> shift) & (self.radix - 1)) as u8
    }

    /// Out link `lane` of `node` in `direction` (node below the last level; a graph network's
    /// directions are its out links).
    pub fn out_link(&self, node: NodeId, direction: u8, lane: u32) -> LinkId {
        if let Some(g) = &self.graph {
            return g.out_start[node as usize] + u32::from(direction) + lane;
        }
        let m = self.multiplicity;
        node * self.ports() + direction as u32 * m + lane
    }

    /// The out links of `node` in `direction`.
    pub fn lanes(&self, node: NodeId, direction: u8) -> std::ops::Range<LinkId> {
        let first = self.out_link(node, direction, 0);
        first..first + self.multiplicity
    }

    /// In link at input `port` of `node` (node above level 0; a graph network's ports count
    /// the injection port first).
    pub fn in_link(&self, node: NodeId, port: u32) -> LinkId {
        if let Some(g) = &self.graph {
            let first = u32::from(g.switch_terminal[node as usize] != NO_TERMINAL);
            return self.in_links[(g.in_start[node as usize] + port - first) as usize];
        }
        self.in_links[((node - self.n) * self.ports() + port) as usize]
    }

    /// Number of link hops from an input to an output.
    pub fn depth(&self) -> u32 {
        self.levels - 1
    }

    /// Follows the routing rule from input `source` and returns the columns visited, one per
    /// level, choosing lane 0 wherever there is a choice (and direction by the routing bit at an
    /// [`LinkClass::Any`] level).
    pub fn path_columns(&self, source: u32, destination: u32, middle: u32) -> Vec<u32> {
        let mut node = self.injection_port(source).0;
        let mut cols = vec![self.node(node).column];
        for level in 0..self.last_level() {
            let link = match self.link_class(level) {
                LinkClass::Exact => self.links[self.exact_link(node, destination) as usize],
                _ => {
                    let dir = self.direction(level, destination, middle);
                    self.links[self.out_link(node, dir, 0) as usize]
                }
            };
            node = link.head;
            cols.push(self.node(node).column);
        }
        cols
    }
}

/// Builds a network of `kind` with `n` inputs: `d` is the multiplicity of dilated and splitter
/// networks, `radix` the switch radix of the k-ary n-fly, `wiring` and `seed` draw the random
/// splitters (ignored where they do not apply).
pub fn build(
    kind: TopologyKind,
    n: u32,
    d: u32,
    radix: u32,
    wiring: SplitterWiring,
    seed: u64,
) -> Result<Topology> {
    match kind {
        TopologyKind::Butterfly => butterfly(n),
        TopologyKind::Dilated => dilated_butterfly(n, d),
        TopologyKind::Splitter => random_splitter(n, d, wiring, seed),
        TopologyKind::Benes => benes(n),
        TopologyKind::DoubledButterfly => doubled_butterfly(n),
        TopologyKind::ModifiedSplitter => modified_splitter(n, wiring, seed),
        TopologyKind::KaryFly => kary_fly(n, radix),
        TopologyKind::Mesh => Topology::routed(kind, graph::mesh(n, false)?),
        TopologyKind::Torus => Topology::routed(kind, graph::mesh(n, true)?),
        TopologyKind::WrappedButterfly => Topology::routed(kind, graph::wrapped_butterfly(n)?),
        TopologyKind::RandomGraph => {
            Topology::routed(kind, graph::random_graph(n, d.clamp(1, 4), seed)?)
        }
        TopologyKind::Graph => Err(Error::invalid(
            "topology",
            "graph",
            "a graph from --graph FILE (build it with graph::read_graph)",
        )),
    }
}

/// Checks that `n` is a power of two in `2..=2^20`.
pub fn check_inputs(n: u32) -> Result<u32> {
    if !(2..=MAX_INPUTS).contains(&n) || !n.is_power_of_two() {
        return Err(Error::invalid(
            "inputs",
            n,
            "a power of two from 2 to 1048576 (2^20)",
        ));
    }
    Ok(n.trailing_zeros())
}

/// Sorts the links, numbers the head ports and builds the in-link table of a radix-2 network
/// with one terminal per level-0 switch ([`assemble_shaped`]).
pub(crate) fn assemble(
    kind: TopologyKind,
    n: u32,
    levels: u32,
    multiplicity: u32,
    links: Vec<Link>,
) -> Topology {
    assemble_shaped(kind, n, levels, multiplicity, 2, 1, links)
}

/// Sorts the links, numbers the head ports and builds the in-link table. Shared by every builder
/// so port numbering is the same everywhere: a switch's input ports are ordered by (tail column,
/// direction, lane). Every node below the last level must have exactly `multiplicity` links per
/// direction (of `radix`) and every node above level 0 exactly `radix * multiplicity` in links.
pub(crate) fn assemble_shaped(
    kind: TopologyKind,
    n: u32,
    levels: u32,
    multiplicity: u32,
    radix: u32,
    inject_ports: u32,
    mut links: Vec<Link>,
) -> Topology {
    let log_n = n.trailing_zeros();
    let per_node = (radix * multiplicity) as usize;
    links.sort_unstable_by_key(|l| (l.tail, l.direction, l.lane));
    debug_assert_eq!(links.len(), (levels as usize - 1) * n as usize * per_node);
    let mut filled = vec![0u16; (levels as usize - 1) * n as usize];
    let mut in_links = vec![0 as LinkId; links.len()];
    for (id, link) in links.iter_mut().enumerate() {
        let slot = (link.head - n) as usize;
        let port = filled[slot];
        filled[slot] += 1;
        link.head_port = port;
        in_links[slot * per_node + port as usize] = id as LinkId;
    }
    debug_assert!(filled.iter().all(|&f| f as usize == per_node));
    Topology {
        kind,
        n,
        log_n,
        levels,
        multiplicity,
        radix,
        inject_ports,
        links,
        in_links,
        graph: None,
    }
}
