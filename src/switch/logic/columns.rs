//! Evaluation by runs of columns on several threads: where a cut of every level into equal
//! runs of columns leaves each run feeding only the same run one level down, a thread
//! evaluates its run of all those levels with no synchronisation between them.

use super::Part;
use crate::config::FlowControl;
use crate::gang::Gang;
use crate::switch::Fabric;
use crate::topology::NodeId;

impl Fabric {
    /// Plans [`Fabric::evaluate_columns`] for `parts` threads: from the lowest level from
    /// which, with each level cut into `parts` equal runs of columns, every switch of run k
    /// feeds only switches of run k one level down (a butterfly cut in halves crosses between
    /// them only below level 0). Returns that level: `levels` if there is no plan (a graph
    /// network, or columns `parts` does not divide), the last level if every other level
    /// crosses the cut.
    pub fn plan_columns(&mut self, parts: u32) -> u32 {
        self.columns = None;
        let t = &self.topo;
        // Equal runs (the column of a switch then names its run as the cut does).
        if t.graph.is_some() || parts < 2 || !t.n.is_multiple_of(parts) {
            return t.levels;
        }
        let part = |s: NodeId| (s % t.n) * parts / t.n;
        let local = |level: u32| {
            self.level_switches(level).all(|s| {
                self.shape
                    .links(s)
                    .all(|l| part(t.links[l as usize].head) == part(s))
            })
        };
        let from = (0..t.last_level())
            .rev()
            .find(|&level| !local(level))
            .map_or(0, |level| level + 1);
        if from >= t.levels {
            return t.levels;
        }
        // Per level (from the first) and run: its first switch; then one past the last.
        let mut bounds: Vec<u32> = (from..t.levels)
            .flat_map(|level| (0..parts).map(move |k| t.node_id(level, 0) + k * t.n / parts))
            .collect();
        let end = t.node_id(t.levels - 1, 0) + t.n;
        bounds.push(end);
        let vc = |s: u32| {
            if s == end {
                self.vcs.len()
            } else {
                self.shape.base(s) as usize
            }
        };
        self.columns = Some(ColumnPlan {
            parts,
            vc: bounds.iter().map(|&s| vc(s)).collect(),
            rr: bounds
                .iter()
                .map(|&s| self.shape.pointers(s).start)
                .collect(),
            link: bounds
                .iter()
                .map(|&s| (self.shape.links(s).start as usize).min(self.link_rr.len()))
                .collect(),
            switches: bounds,
        });
        from
    }

    /// Evaluates the levels of the plan ([`Fabric::plan_columns`]; last first), run k of every
    /// level being thread k's task in `gang`: the runs depend on nothing outside themselves,
    /// so the levels need no synchronisation between them. The result is the level-by-level
    /// sweep's.
    pub fn evaluate_columns(&mut self, gang: &mut Gang) {
        debug_assert_ne!(self.params.mode, FlowControl::Greedy);
        let plan = self.columns.take().expect("planned");
        debug_assert_eq!(plan.parts as usize, gang.threads());
        {
            let (shared, vcs, _, rr_next, link_rr_next) = self.views();
            let cut = |bounds: &[usize]| bounds[0]..*bounds.last().expect("bounds");
            let vcs = split_at_bounds(&mut vcs[cut(&plan.vc)], &plan.vc);
            let rr = split_at_bounds(&mut rr_next[cut(&plan.rr)], &plan.rr);
            let link = split_at_bounds(&mut link_rr_next[cut(&plan.link)], &plan.link);
            // Regroup by column run: task k gets run k of every level, first level first.
            let parts = plan.parts as usize;
            let mut tasks: Vec<Vec<_>> = (0..parts).map(|_| Vec::new()).collect();
            for (i, ((v, r), l)) in vcs.into_iter().zip(rr).zip(link).enumerate() {
                tasks[i % parts].push((i, v, r, l));
            }
            let (plan, shared) = (&plan, &shared);
            gang.map(tasks, |mut task| {
                for at in (0..task.len()).rev() {
                    let (here, below) = task.split_at_mut(at + 1);
                    let (i, own, rr, link) = &mut here[at];
                    let i = *i;
                    let (below, below_start) = match below.first() {
                        Some((j, v, ..)) => (&**v, plan.vc[*j]),
                        None => (&[][..], plan.vc[i + 1]),
                    };
                    let mut part = Part {
                        own_start: plan.vc[i],
                        own_end: plan.vc[i + 1],
                        own,
                        cyclic: false,
                        below,
                        below_start,
                        rr_next: rr,
                        rr_start: plan.rr[i],
                        link_rr_next: link,
                        link_start: plan.link[i],
                    };
                    part.evaluate_range(shared, plan.switches[i]..plan.switches[i + 1]);
                }
            });
        }
        self.columns = Some(plan);
    }
}

/// `slice`, which holds the indices `bounds[0]..bounds[last]`, cut at the indices `bounds`.
fn split_at_bounds<'a, T>(mut slice: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len() - 1);
    for w in bounds.windows(2) {
        let (head, rest) = std::mem::take(&mut slice).split_at_mut(w[1] - w[0]);
        out.push(head);
        slice = rest;
    }
    out
}

/// The cut of [`Fabric::evaluate_columns`]: per level from the plan's first and run of
/// columns (level-major), the first switch, input VC, pointer and out link, and one past the
/// last run's.
#[derive(Clone, Debug)]
pub(crate) struct ColumnPlan {
    parts: u32,
    switches: Vec<u32>,
    vc: Vec<usize>,
    rr: Vec<usize>,
    link: Vec<usize>,
}
