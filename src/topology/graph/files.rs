//! Graph networks and their paths read from files.

use super::{Graph, Paths};
use crate::error::{Error, Result};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

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

/// Reads a graph file: JSON `{"nodes": N, "links": [[tail, head], ...], "labels": [...]}`
/// (labels optional), or text with one `tail head` pair per line (`#` starts a comment).
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
        let (tail, head) = (shape.switch_of[t as usize], shape.switch_of[h as usize]);
        (shape.out_start[tail as usize]..shape.out_start[tail as usize + 1])
            .find(|&l| topo.links[l as usize].head == head)
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
    // The messages name links as the file numbers them.
    let mut given = vec![None; topo.links.len()];
    for (user, &l) in shape.link_of.iter().enumerate() {
        given[l as usize] = Some(user as u32);
    }
    paths
        .check_links(&topo.links, |l| {
            given.get(l as usize).copied().flatten().unwrap_or(l)
        })
        .map_err(|e| Error::parse(path, e))?;
    Ok((paths, releases))
}
