//! What a run is built from: its network and, on given paths, its messages.

use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::topology::{Topology, TopologyKind};
use crate::traffic::MessageSpec;

/// Builds the topology a configuration names (a `graph` network from its file).
pub fn build_topology(config: &SimConfig) -> Result<Topology> {
    if config.topology == TopologyKind::Graph {
        let path = config.graph.as_deref().unwrap_or_default();
        let graph = crate::topology::graph::read_graph(path)?;
        let terminals: Vec<u32> = (0..graph.nodes).collect();
        let topo = Topology::from_graph(TopologyKind::Graph, &graph, &terminals, None)?;
        if topo.graph.as_ref().is_some_and(|g| g.cyclic)
            && config.backpressure == crate::config::Backpressure::Combinational
        {
            return Err(Error::invalid(
                "backpressure",
                "combinational",
                format!(
                    "registered for {path}: its links form cycles, around which same-cycle ready signals have no consistent value"
                ),
            ));
        }
        return Ok(topo);
    }
    crate::topology::build(
        config.topology,
        config.inputs,
        config.dilation,
        config.radix,
        config.wiring,
        config.seed,
    )
}

/// The messages of a run on given paths: one per path, from the terminal its first link
/// leaves to the one its last link reaches, released at `releases[i]`, in release order.
pub(super) fn path_messages(
    topo: &Topology,
    paths: &crate::topology::graph::Paths,
    releases: &[u64],
    file: &str,
) -> Result<Vec<MessageSpec>> {
    let Some(g) = &topo.graph else {
        return Err(Error::invalid("paths", file, "a graph network"));
    };
    let mut specs = Vec::with_capacity(paths.len());
    for i in 0..paths.len() {
        let hops = paths.path(i).len();
        if hops > usize::from(u16::MAX) {
            // A header counts the links it crossed in 16 bits (its position on its path).
            return Err(Error::invalid(
                &format!("path {i} of {file}"),
                format!("{hops} links"),
                format!("at most {} links", u16::MAX),
            ));
        }
        let (from, to) = paths.ends_on(i, &topo.links);
        let (source, destination) = (
            g.switch_terminal[from as usize],
            g.switch_terminal[to as usize],
        );
        if source == crate::topology::NO_TERMINAL || destination == crate::topology::NO_TERMINAL {
            return Err(Error::parse(
                file,
                format!(
                    "path {i} runs from switch {} to switch {}: both ends must be terminals",
                    g.labels[from as usize], g.labels[to as usize]
                ),
            ));
        }
        specs.push(MessageSpec {
            source,
            destination,
            release: releases.get(i).copied().unwrap_or(0),
            path: Some(i as u32),
            middle: None,
        });
    }
    Ok(specs)
}
