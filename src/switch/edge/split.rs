//! The clock edge on several threads: the switches cut into segments of consecutive switches,
//! each owned by one thread of a gang, which commits its segments' departures and then writes
//! the flits that arrive in them. On a leveled network the segments are the runs of columns by
//! which the threads evaluate, so a switch's registers stay in one core's cache all cycle.

use super::Landing;
use crate::config::FlowControl;
use crate::gang::Gang;
use crate::switch::Fabric;
use crate::switch::header::Headers;
use crate::switch::transfer::{NONE, Transfers};

impl Fabric {
    /// [`Fabric::commit_departures`] into `transfers`, with the switches cut into segments of
    /// consecutive switches, each owned by one thread of `gang` (on a leveled network, the
    /// runs of columns by which the threads evaluate): a switch's departures touch only its
    /// own registers, and each segment's transfers make one run of `transfers`, in switch
    /// order.
    pub fn commit_departures_split(&mut self, transfers: &mut Transfers, gang: Option<&mut Gang>) {
        let threads = gang.as_ref().map_or(1, |g| g.threads());
        self.commit_departures_then(transfers, gang, vec![(); threads], |()| ());
    }

    /// [`Fabric::commit_departures_split`], thread k of `gang` then calling `then` with
    /// `after[k]` (one per thread; all on this thread if the edge is not split): the sources
    /// of the inputs whose injection VCs thread k owns commit there. Returns the results of
    /// `then` in order.
    pub(crate) fn commit_departures_then<T: Send, U: Send>(
        &mut self,
        transfers: &mut Transfers,
        gang: Option<&mut Gang>,
        after: Vec<T>,
        then: impl Fn(T) -> U + Sync,
    ) -> Vec<U> {
        let switches = self.switch_flits.len();
        let gang = gang.filter(|g| {
            g.threads() > 1
                && switches >= g.threads()
                && self.params.mode != FlowControl::Greedy
                && after.len() == g.threads()
        });
        let Some(gang) = gang else {
            // One thread books every transfer: sorting out the ones to book saves it nothing.
            self.commit_departures(transfers.only_run());
            return after.into_iter().map(then).collect();
        };
        let threads = gang.threads();
        let cut = self.edge_cut(threads);
        let segments = cut.owner.len();
        // A graph network's crossings may all deliver: booking reads every transfer.
        let apart = self.topo.graph.is_none();
        let lists = transfers.take_runs(segments, threads, apart);
        let (shared, runs) = self.departure_runs(&cut.switches);
        // Each segment's list is moved to its owner (its length is written per flit: two
        // lists' headers side by side would share a cache line between the threads). A
        // segment that feeds more than one also sorts out its transfers by the thread that
        // owns the segment they enter, for the arrivals.
        let mut tasks: Vec<(Vec<_>, T)> = after.into_iter().map(|a| (Vec::new(), a)).collect();
        for (j, (run, list)) in runs.into_iter().zip(lists).enumerate() {
            tasks[cut.owner[j]].0.push((j, run, list));
        }
        let edge = &cut;
        let then = &then;
        let done = gang.map(tasks, |(task, after)| {
            let mut done = Vec::with_capacity(task.len());
            for (j, mut run, mut list) in task {
                run.depart_all(&shared, &mut list.run, apart.then_some(&mut list.events));
                if edge.feeds[j] == Feeds::Many {
                    for (i, t) in list.run.iter().enumerate() {
                        if t.to != NONE {
                            list.into[edge.owner[edge.segment_of(t.to)]].push(i as u32);
                        }
                    }
                }
                done.push((j, run.left, list));
            }
            (done, then(after))
        });
        let mut back: Vec<_> = (0..segments).map(|_| None).collect();
        let mut results = Vec::with_capacity(threads);
        for (runs, result) in done {
            for (j, left, list) in runs {
                self.held -= left;
                back[j] = Some((list, left));
            }
            results.push(result);
        }
        for (list, left) in back.into_iter().flatten() {
            transfers.put_back(list, left);
        }
        self.edge = Some(cut);
        self.step_lfsrs();
        results
    }

    /// Whether the clock edge of `threads` threads is cut into runs of columns (a leveled
    /// network whose levels `threads` cuts into equal runs of columns).
    pub(crate) fn cut_by_columns(&self, threads: usize) -> bool {
        let t = &self.topo;
        let parts = threads as u32;
        t.graph.is_none()
            && self.params.mode != FlowControl::Greedy
            && parts <= t.n
            && t.n.is_multiple_of(parts)
            && self.switch_flits.len() == (t.levels * t.n) as usize
    }

    /// The cut of the clock edge of `threads` threads ([`EdgeCut`]): the one kept from the
    /// last edge, else a new one (taken: give it back to [`Fabric::edge`] when done).
    fn edge_cut(&mut self, threads: usize) -> EdgeCut {
        match self.edge.take() {
            Some(cut) if cut.threads == threads => cut,
            _ => self.new_edge_cut(threads),
        }
    }

    /// A leveled network whose levels `threads` cuts into equal runs of columns is cut into
    /// those runs, level by level, run k of every level owned by thread k: the cut by which
    /// the threads evaluate ([`Fabric::plan_columns`], [`Fabric::evaluate_level`]), so that
    /// a switch's registers stay with one thread all cycle. Any other network is cut into
    /// one run of consecutive switches per thread.
    fn new_edge_cut(&self, threads: usize) -> EdgeCut {
        let t = &self.topo;
        let switches = self.switch_flits.len();
        let parts = threads as u32;
        let mut bounds: Vec<usize> = if self.cut_by_columns(threads) {
            (0..t.levels)
                .flat_map(|level| {
                    (0..parts).map(move |k| (t.node_id(level, 0) + k * t.n / parts) as usize)
                })
                .collect()
        } else {
            (0..threads).map(|k| k * switches / threads).collect()
        };
        bounds.push(switches);
        let segments = bounds.len() - 1;
        let owner: Vec<usize> = (0..segments).map(|j| j % threads).collect();
        let local = (0..segments).map(|j| j / threads).collect();
        let vcs: Vec<usize> = bounds
            .iter()
            .map(|&s| match s == switches {
                true => self.vcs.len(),
                false => self.shape.base(s as u32) as usize,
            })
            .collect();
        let segment_of = |s: u32| bounds.partition_point(|&b| b <= s as usize) - 1;
        let feeds = bounds
            .windows(2)
            .map(|w| {
                // The last level's switches deliver: their `links` are not links.
                let mut heads = (w[0] as u32..w[1] as u32)
                    .filter(|&s| self.shape.base(s) < self.last_base)
                    .flat_map(|s| self.shape.links(s))
                    .map(|l| segment_of(t.links[l as usize].head));
                match heads.next() {
                    None => Feeds::Nothing,
                    Some(first) if heads.all(|j| j == first) => Feeds::One(first),
                    Some(_) => Feeds::Many,
                }
            })
            .collect();
        EdgeCut {
            threads,
            switches: bounds,
            vcs,
            owner,
            local,
            feeds,
        }
    }

    /// [`Fabric::commit_arrivals`] for the transfers of [`Fabric::commit_departures_split`]
    /// (and the injections after them), each thread of `gang` writing the flits addressed to
    /// the segments of the edge's cut it owns (a VC receives at most one flit per cycle, so
    /// the order of the writes does not matter). A thread reads the whole run of a segment
    /// that feeds only one it owns, and from a segment that feeds several the transfers the
    /// departures sorted out for it.
    pub fn commit_arrivals_split(
        &mut self,
        transfers: &Transfers,
        headers: Headers<'_>,
        gang: Option<&mut Gang>,
    ) {
        let parts = transfers.parts();
        let gang = gang.filter(|g| parts > 1 && g.threads() > 1);
        let Some(gang) = gang.filter(|_| self.params.mode != FlowControl::Greedy) else {
            for run in transfers.runs().iter().chain(transfers.injected()) {
                self.commit_arrivals(run, headers);
            }
            return;
        };
        let threads = gang.threads();
        let cut = self.edge_cut(threads);
        debug_assert_eq!(
            cut.owner.len(),
            transfers.runs().len(),
            "the departures' cut"
        );
        let (arrival, landings) = self.landings(headers, &cut.switches);
        let mut tasks: Vec<(usize, Vec<Landing<'_>>)> =
            (0..threads).map(|k| (k, Vec::new())).collect();
        for (j, landing) in landings.into_iter().enumerate() {
            tasks[cut.owner[j]].1.push(landing);
        }
        let edge = &cut;
        let arrived: u64 = gang
            .map(tasks, |(me, mut lands)| {
                let runs = transfers.runs().iter().zip(transfers.sorted());
                for (j, (run, into)) in runs.enumerate() {
                    match edge.feeds[j] {
                        Feeds::Nothing => {}
                        Feeds::One(d) if edge.owner[d] == me => {
                            let land = &mut lands[edge.local[d]];
                            for t in run.iter().filter(|t| t.to != NONE) {
                                land.write(&arrival, t);
                            }
                        }
                        Feeds::One(_) => {}
                        Feeds::Many => {
                            for &i in &into[me] {
                                let t = &run[i as usize];
                                lands[edge.local[edge.segment_of(t.to)]].write(&arrival, t);
                            }
                        }
                    }
                }
                // The injections: list `me` only, if the sources were cut as the threads own
                // the injection VCs.
                let injected = transfers.injected();
                let injected = match transfers.injected_by_thread() {
                    true => &injected[me..=me],
                    false => injected,
                };
                for t in injected.iter().flatten().filter(|t| t.to != NONE) {
                    let d = edge.segment_of(t.to);
                    if edge.owner[d] == me {
                        lands[edge.local[d]].write(&arrival, t);
                    } else {
                        // A flit skipped here would be lost.
                        assert!(
                            !transfers.injected_by_thread(),
                            "injection VC {} is not thread {me}'s",
                            t.to
                        );
                    }
                }
                lands.iter().map(|l| l.arrived).sum::<u64>()
            })
            .into_iter()
            .sum();
        self.held += arrived;
        self.edge = Some(cut);
    }
}

/// The cut of a clock edge into segments of consecutive switches, each owned by one thread
/// ([`Fabric::commit_departures_split`], [`Fabric::commit_arrivals_split`]).
#[derive(Clone, Debug)]
pub(crate) struct EdgeCut {
    threads: usize,
    /// Segment `j` is switches `switches[j]..switches[j + 1]`,
    switches: Vec<usize>,
    /// whose input VCs start at `vcs[j]` (one past the last: the VC count),
    vcs: Vec<usize>,
    /// owned by thread `owner[j]`,
    owner: Vec<usize>,
    /// as its `local[j]`-th segment,
    local: Vec<usize>,
    /// and its flits cross into `feeds[j]`.
    feeds: Vec<Feeds>,
}

impl EdgeCut {
    /// The segment of input VC `ivc`.
    #[inline]
    fn segment_of(&self, ivc: u32) -> usize {
        self.vcs.partition_point(|&b| b <= ivc as usize) - 1
    }
}

/// Where the flits crossing the links out of a segment go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feeds {
    /// Nowhere: its switches have no out links (they deliver).
    Nothing,
    /// Into this segment only.
    One(usize),
    /// Into several.
    Many,
}
