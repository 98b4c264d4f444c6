//! Where each switch's registers sit in the fabric's flat arrays.

use crate::topology::{NodeId, Topology};

/// Where each switch's registers sit in the flat arrays: its input VCs (`port * B + vc` from
/// its first), its out links (contiguous ids) and its round-robin pointers (one per direction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A leveled network of `n` switches per level: a level-0 switch has `inject` input VCs,
    /// every other `per`; every switch `ports` out links and `radix` directions.
    Leveled {
        n: u32,
        inject: u32,
        per: u32,
        ports: u32,
        radix: u32,
    },
    /// A graph network: per switch (and one past the last) its first input VC and its first
    /// out link, which is also its first round-robin pointer (a direction per out link).
    Graph {
        vc_start: std::sync::Arc<[u32]>,
        link_start: std::sync::Arc<[u32]>,
    },
}

impl Shape {
    pub(super) fn of(topo: &Topology, vcs: u32) -> Self {
        match &topo.graph {
            None => Shape::Leveled {
                n: topo.n,
                inject: topo.inject_ports * vcs,
                per: topo.ports() * vcs,
                ports: topo.ports(),
                radix: topo.radix,
            },
            Some(g) => {
                let mut vc_start = Vec::with_capacity(g.switches as usize + 1);
                let mut next = 0;
                for s in 0..g.switches {
                    vc_start.push(next);
                    next += g.in_ports(s) * vcs;
                }
                vc_start.push(next);
                Shape::Graph {
                    vc_start: vc_start.into(),
                    link_start: g.out_start.clone().into(),
                }
            }
        }
    }

    /// Index of the first input VC of switch `s`.
    #[inline]
    pub(crate) fn base(&self, s: NodeId) -> u32 {
        match *self {
            Shape::Leveled { n, inject, per, .. } => {
                if s < n {
                    s * inject
                } else {
                    n * inject + (s - n) * per
                }
            }
            Shape::Graph { ref vc_start, .. } => vc_start[s as usize],
        }
    }

    /// Number of input VCs of switch `s`.
    #[inline]
    pub(crate) fn count(&self, s: NodeId) -> u32 {
        match *self {
            Shape::Leveled { n, inject, per, .. } => {
                if s < n {
                    inject
                } else {
                    per
                }
            }
            Shape::Graph { ref vc_start, .. } => vc_start[s as usize + 1] - vc_start[s as usize],
        }
    }

    /// The switch owning input VC `ivc` and its local index there.
    #[inline]
    pub(crate) fn switch_of(&self, ivc: u32) -> (NodeId, u32) {
        match *self {
            Shape::Leveled { n, inject, per, .. } => {
                let level0 = n * inject;
                if ivc < level0 {
                    (ivc / inject, ivc % inject)
                } else {
                    let rel = ivc - level0;
                    (n + rel / per, rel % per)
                }
            }
            Shape::Graph { ref vc_start, .. } => {
                let s = (vc_start.partition_point(|&v| v <= ivc) - 1) as u32;
                (s, ivc - vc_start[s as usize])
            }
        }
    }

    /// The out links of switch `s` (the last level of a leveled network has none in use).
    #[inline]
    pub(crate) fn links(&self, s: NodeId) -> std::ops::Range<u32> {
        match *self {
            Shape::Leveled { ports, .. } => s * ports..(s + 1) * ports,
            Shape::Graph { ref link_start, .. } => {
                link_start[s as usize]..link_start[s as usize + 1]
            }
        }
    }

    /// The round-robin pointers of switch `s`, one per direction.
    #[inline]
    pub(crate) fn pointers(&self, s: NodeId) -> std::ops::Range<usize> {
        match *self {
            Shape::Leveled { radix, .. } => {
                s as usize * radix as usize..(s as usize + 1) * radix as usize
            }
            Shape::Graph { ref link_start, .. } => {
                link_start[s as usize] as usize..link_start[s as usize + 1] as usize
            }
        }
    }

    /// Round-robin pointers of the network.
    pub(super) fn pointer_count(&self, topo: &Topology) -> usize {
        match self {
            Shape::Leveled { radix, .. } => topo.node_count() * *radix as usize,
            Shape::Graph { .. } => topo.links.len(),
        }
    }
}
