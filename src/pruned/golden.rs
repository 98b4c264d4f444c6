//! Abstract, level-synchronous models of one expansion and one compression ([BB] §3.1, §3.3).
//! They move whole messages one level per step and are the oracles the bit-serial switches
//! ([`super::switch`]) are held equal to.
//!
//! * Model A, greedy-with-stopping: at a conflict the smaller key `(destination, h)` goes on,
//!   the other stops for good (tie-break: interpretation 'Greedy ties', docs/interpretations.md).
//! * Model B, greedy-with-sidetracking: rules (a)–(d) of §3.3 with the interpretations 'Rules
//!   (c) and (d)' (two sidetracked messages: input 0 left, input 1 right; `dir` toggles only
//!   under rule (d)) and 'Direction bits' (direction bits persist across batches and stages) of
//!   docs/interpretations.md.

use super::switch::RuleCounts;
use crate::topology::pruned::{PrunedButterfly, Vertex};

/// A message entering an expansion at a vertex of the injecting node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Vertex index `k` at the injecting node.
    pub index: u32,
    /// Logical input of that vertex (0 or 1).
    pub input: u32,
    pub destination: u32,
    /// Tie-break key `h` (rank at the injecting node).
    pub key: u32,
    pub active: bool,
}

/// Two active messages wanted the same down-edge of `vertex`, towards child `direction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub vertex: Vertex,
    pub direction: u32,
}

/// Where each message of an expansion ended, and what happened on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// Per entry: the leaf it reached; `u32::MAX` for a message model A stopped.
    pub leaf: Vec<u32>,
    /// Per entry: still active at the leaf.
    pub active: Vec<bool>,
    pub conflicts: Vec<Conflict>,
    /// Per level below the injecting node, per node: the entries that arrive there active,
    /// ascending. `active_sets[m - p - 1][node]`.
    pub active_sets: Vec<Vec<Vec<usize>>>,
    /// Decisions by case (model B; model A counts only the cases it meets).
    pub rules: RuleCounts,
}

/// Direction-bit value "left" (the reset value).
pub const LEFT: bool = false;

#[derive(Clone, Copy)]
struct Moving {
    entry: usize,
    vertex: Vertex,
    input: u32,
    active: bool,
}

fn key(entries: &[Entry], e: usize) -> (u32, u32) {
    (entries[e].destination, entries[e].key)
}

/// Routes one expansion injected at node `(level, node)` with model B. `dir` holds every
/// vertex's direction bit by dense id (`true` = right) and is updated.
pub fn expand_sidetracking(
    g: &PrunedButterfly,
    level: u32,
    node: u32,
    entries: &[Entry],
    dir: &mut [bool],
) -> Expansion {
    route(g, level, node, entries, Some(dir))
}

/// Routes one expansion with model A: losers stop. `leaf[e]` is the destination for messages
/// that arrive and `u32::MAX` for those that stopped.
pub fn expand_stopping(g: &PrunedButterfly, level: u32, node: u32, entries: &[Entry]) -> Expansion {
    route(g, level, node, entries, None)
}

fn route(
    g: &PrunedButterfly,
    level: u32,
    node: u32,
    entries: &[Entry],
    mut dir: Option<&mut [bool]>,
) -> Expansion {
    let l = g.levels();
    let mut out = Expansion {
        leaf: vec![u32::MAX; entries.len()],
        active: vec![false; entries.len()],
        ..Expansion::default()
    };
    let mut moving: Vec<Moving> = entries
        .iter()
        .enumerate()
        .map(|(e, m)| Moving {
            entry: e,
            vertex: Vertex {
                level,
                node,
                index: m.index,
            },
            input: m.input,
            active: m.active,
        })
        .collect();
    for m in level..l {
        moving.sort_by_key(|x| (x.vertex, x.input));
        let mut next = Vec::with_capacity(moving.len());
        let mut at = 0;
        while at < moving.len() {
            let end = moving[at..]
                .iter()
                .position(|x| x.vertex != moving[at].vertex)
                .map_or(moving.len(), |d| at + d);
            let group = &moving[at..end];
            assert!(
                group.len() <= 2,
                "more than two messages at {}",
                group[0].vertex
            );
            let v = group[0].vertex;
            let bit = |x: &Moving| (entries[x.entry].destination >> (l - 1 - m)) & 1;
            {
                let mut present = [false; 2];
                let mut active = [false; 2];
                let mut bits = [false; 2];
                for x in group {
                    let i = x.input as usize;
                    present[i] = true;
                    active[i] = x.active;
                    bits[i] = bit(x) == 1;
                }
                out.rules.count(present, active, bits);
            }
            // (moving message, down-port, active after this vertex)
            let mut sent: Vec<(Moving, u32, bool)> = Vec::with_capacity(2);
            match group {
                [a] if a.active => sent.push((*a, bit(a), true)),
                [a] => match dir.as_deref_mut() {
                    Some(d) => {
                        let id = g.id(v);
                        sent.push((*a, u32::from(d[id]), false));
                        d[id] = !d[id];
                    }
                    None => unreachable!("model A never forwards inactive messages"),
                },
                [a, b] if a.active && b.active => {
                    let (ba, bb) = (bit(a), bit(b));
                    if ba != bb {
                        sent.push((*a, ba, true));
                        sent.push((*b, bb, true));
                    } else {
                        out.conflicts.push(Conflict {
                            vertex: v,
                            direction: ba,
                        });
                        let (win, lose) = if key(entries, a.entry) < key(entries, b.entry) {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        sent.push((*win, ba, true));
                        if dir.is_some() {
                            sent.push((*lose, 1 - ba, false));
                        }
                    }
                }
                [a, b] if a.active || b.active => {
                    let (act, side) = if a.active { (a, b) } else { (b, a) };
                    let port = bit(act);
                    sent.push((*act, port, true));
                    sent.push((*side, 1 - port, false));
                }
                [a, b] => {
                    sent.push((*a, 0, false));
                    sent.push((*b, 1, false));
                }
                _ => unreachable!(),
            }
            for (x, port, active) in sent {
                let Some(child) = g.down(v, port) else {
                    unreachable!("vertex above the leaves has two children")
                };
                next.push(Moving {
                    entry: x.entry,
                    vertex: child,
                    input: g.up_port_towards(v),
                    active,
                });
            }
            at = end;
        }
        let mut sets = vec![Vec::new(); 1 << (m + 1)];
        for x in &next {
            if x.active {
                sets[x.vertex.node as usize].push(x.entry);
            }
        }
        for s in &mut sets {
            s.sort_unstable();
        }
        out.active_sets.push(sets);
        moving = next;
    }
    for x in moving {
        out.leaf[x.entry] = x.vertex.node;
        out.active[x.entry] = x.active;
    }
    out
}

/// Load factor of an expansion from node `(level, node)` to `destinations` ([BB] §3.1): the
/// largest `#destinations under u / cap(u)` over the nodes `u` below the injecting node.
pub fn expansion_load(g: &PrunedButterfly, level: u32, destinations: &[u32]) -> f64 {
    let l = g.levels();
    let mut worst = 0.0f64;
    for m in level + 1..=l {
        let mut count = std::collections::HashMap::new();
        for &d in destinations {
            *count.entry(d >> (l - m)).or_insert(0u32) += 1;
        }
        let most = count.values().copied().max().unwrap_or(0);
        worst = worst.max(f64::from(most) / f64::from(g.capacity(m)));
    }
    worst
}

/// Number of edge conflicts in a compression of messages `(leaf, h)` to vertices `h` of their
/// level-`level` ancestor (all moving in lockstep along the unique paths of [BB] §3.1).
pub fn compression_conflicts(g: &PrunedButterfly, level: u32, messages: &[(u32, u32)]) -> usize {
    let mut used = std::collections::HashSet::new();
    let mut conflicts = 0;
    for &(leaf, h) in messages {
        let path = g.path_up(leaf, level, h);
        for pair in path.windows(2) {
            if !used.insert((pair[0], pair[1])) {
                conflicts += 1;
            }
        }
    }
    conflicts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_entries(dests: &[u32]) -> Vec<Entry> {
        dests
            .iter()
            .enumerate()
            .map(|(h, &d)| Entry {
                index: h as u32,
                input: 0,
                destination: d,
                key: h as u32,
                active: true,
            })
            .collect()
    }

    /// Three batches from the root of N = 16 traced by hand under rules (a)–(d) of [BB] §3.3,
    /// the direction bits carried from one batch to the next.
    #[test]
    fn three_batches_from_the_root_of_16_land_as_traced() {
        let g = PrunedButterfly::new(16).unwrap();
        let mut dir = vec![LEFT; g.vertex_count()];
        let a = expand_sidetracking(&g, 0, 0, &root_entries(&[5, 5, 5, 7]), &mut dir);
        assert_eq!(a.leaf, [5, 5, 6, 7]);
        assert_eq!(a.active, [true, true, false, true]);
        let v330 = g.id(Vertex {
            level: 3,
            node: 3,
            index: 0,
        });
        assert!(dir[v330]);
        let b = expand_sidetracking(&g, 0, 0, &root_entries(&[8, 9, 9, 9]), &mut dir);
        assert_eq!(b.leaf, [8, 9, 10, 10]);
        assert_eq!(b.conflicts.len(), 2);
        let c = expand_sidetracking(&g, 0, 0, &root_entries(&[9, 9, 9, 9]), &mut dir);
        assert_eq!(c.leaf, [9, 9, 11, 11]);
        let stop = expand_stopping(&g, 0, 0, &root_entries(&[5, 5, 5, 7]));
        assert_eq!(stop.leaf, [5, 5, u32::MAX, 7]);
    }
}
