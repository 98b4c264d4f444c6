//! A level evaluated on several threads, one run of consecutive switches each; at level 0 each
//! thread's sources (those of the inputs its run holds) then decide from the registers it has
//! just evaluated ([`RunView`]).

use super::{accepts_new_worm, ready};
use crate::flit::FlitSlot;
use crate::gang::Gang;
use crate::source::InjectionPort;
use crate::switch::{Fabric, SwitchParams, Vc};

impl Fabric {
    /// [`Fabric::evaluate_level`] on the threads of `gang`, thread k evaluating the k-th of
    /// equal runs of the level's switches and then calling `then` with what it evaluated
    /// and `after[k]` (one per thread), and returns what the calls returned in order. The
    /// sources of a level-0 run's inputs decide there, on the thread whose cache holds the
    /// registers they read ([`RunView`]).
    pub(crate) fn evaluate_level_then<T: Send, U: Send>(
        &mut self,
        level: u32,
        gang: &mut Gang,
        after: Vec<T>,
        then: impl Fn(&RunView<'_>, T) -> U + Sync,
    ) -> Vec<U> {
        assert_eq!(after.len(), gang.threads(), "one task per thread");
        let switches = self.level_switches(level);
        let (shared, part) = self.level_part(level);
        // One run per thread, cut off from the last; thread k takes run k.
        let threads = gang.threads() as u32;
        let at = |k: u32| run_start(&switches, k, threads);
        let mut runs = Vec::with_capacity(threads as usize);
        let mut rest = part;
        for k in (1..threads).rev() {
            let (left, right) = rest.split_at(&shared, at(k));
            runs.push((right, at(k)..at(k + 1)));
            rest = left;
        }
        runs.push((rest, at(0)..at(1)));
        runs.reverse();
        let tasks: Vec<_> = runs.into_iter().zip(after).collect();
        gang.map(tasks, |((mut part, switches), after)| {
            part.evaluate_range(&shared, switches);
            let view = RunView {
                p: shared.p,
                fifo: shared.fifo,
                own: part.own,
                own_start: part.own_start,
            };
            then(&view, after)
        })
    }

    /// Where the clock edge is cut as the columns ([`Fabric::cut_by_columns`]), the bounds
    /// of the inputs whose injection VCs lie in each of the runs
    /// [`Fabric::evaluate_level_then`] cuts level 0 into for `threads` threads (then one past
    /// the last input): each such run is one segment of the edge, which its thread owns.
    pub(crate) fn level_zero_inputs(&self, threads: u32) -> Option<Vec<usize>> {
        if !self.cut_by_columns(threads as usize) {
            return None;
        }
        let switches = self.level_switches(0);
        // Input t's injection VC v is t * B + v.
        let mut bounds: Vec<usize> = (0..threads)
            .map(|k| (self.vc_base(run_start(&switches, k, threads)) / self.params.vcs) as usize)
            .collect();
        bounds.push(self.topo.terminals() as usize);
        Some(bounds)
    }
}

/// The first switch of run `k` of `switches` cut into `threads` equal runs.
fn run_start(switches: &std::ops::Range<u32>, k: u32, threads: u32) -> u32 {
    switches.start + k * (switches.end - switches.start) / threads
}

/// The input VCs of a run of level-0 switches just evaluated, as the sources of the run's
/// inputs read them (a leveled network: input `t`'s injection VC `v` is `t * B + v`).
pub(crate) struct RunView<'a> {
    p: SwitchParams,
    fifo: &'a [FlitSlot],
    own: &'a [Vc],
    own_start: usize,
}

impl RunView<'_> {
    fn vc(&self, ivc: u32) -> &Vc {
        &self.own[ivc as usize - self.own_start]
    }
}

impl InjectionPort for RunView<'_> {
    fn ready(&self, input: u32, vc: u32) -> bool {
        ready(&self.p, self.vc(input * self.p.vcs + vc))
    }

    fn accepts_new_worm(&self, input: u32, vc: u32) -> bool {
        let ivc = input * self.p.vcs + vc;
        accepts_new_worm(&self.p, self.fifo, ivc, self.vc(ivc))
    }
}
