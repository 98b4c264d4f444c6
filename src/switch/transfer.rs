//! The flit events of a clock edge ([`Transfer`]) as the edge's threads write them
//! ([`Transfers`]): what the simulator books into messages and statistics, and what waveforms
//! and checks observe.

use crate::flit::FlitSlot;

/// What happened to a flit at a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferKind {
    /// Written into a level-0 injection VC by the source.
    Injected,
    /// Crossed output VC `ov` into the input VC `to`.
    Crossed { ov: u32 },
    /// Left a last-level register into the destination.
    Delivered,
    /// Discarded (drop mode).
    Discarded,
    /// Did not move: a header (flit 0) at the front of its VC that waited this cycle for an
    /// output VC or a link (a store-and-forward header still waiting for its own packet to
    /// arrive is not counted).
    Stalled,
}

/// One flit event of a clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub flit: FlitSlot,
    /// Input VC the flit left (or, for `Stalled`, stayed in); [`NONE`] for injections.
    pub from: u32,
    /// Input VC the flit enters, [`NONE`] if none.
    pub to: u32,
    pub kind: TransferKind,
}

/// A clock edge's transfers as runs, one per thread that committed departures, then the
/// sources' injections: in order, the list one thread gives. A run is written by one thread
/// only, with no header next to another thread's. A parallel edge also sorts out each run's
/// transfers by the part of the network they enter, for the threads that write them there.
#[derive(Clone, Debug, Default)]
pub struct Transfers {
    runs: Vec<Vec<Transfer>>,
    /// Per run, per part: the indices of the run's transfers into that part (empty when the
    /// edge was not split).
    into: Vec<Vec<Vec<u32>>>,
    injected: Vec<Transfer>,
}

impl Transfers {
    /// Empties every run, keeping its storage.
    pub fn clear(&mut self) {
        for run in &mut self.runs {
            run.clear();
        }
        for into in &mut self.into {
            into.clear();
        }
        self.injected.clear();
    }

    /// Every transfer, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Transfer> {
        self.runs.iter().flatten().chain(&self.injected)
    }

    /// The departures' runs, in order (one per thread that committed them).
    pub fn runs(&self) -> &[Vec<Transfer>] {
        &self.runs
    }

    /// The sources' injections, where [`Sources::commit`](crate::source::Sources::commit)
    /// writes them.
    pub fn injected(&self) -> &[Transfer] {
        &self.injected
    }

    /// The sources' injections, to be written.
    pub fn injected_mut(&mut self) -> &mut Vec<Transfer> {
        &mut self.injected
    }

    /// Parts the runs were sorted out for (1: not sorted out).
    pub(crate) fn parts(&self) -> usize {
        self.into.first().map_or(1, |into| into.len().max(1))
    }

    /// Per run, the indices of its transfers into each part.
    pub(crate) fn sorted(&self) -> &[Vec<Vec<u32>>] {
        &self.into
    }

    /// `count` empty runs, each with `parts` empty index lists (reusing the storage of the
    /// present ones), to be filled and put back in order with [`Transfers::put_back`].
    pub(crate) fn take_runs(
        &mut self,
        count: usize,
        parts: usize,
    ) -> Vec<(Vec<Transfer>, Vec<Vec<u32>>)> {
        self.runs.resize_with(count, Vec::new);
        self.into.resize_with(count, Vec::new);
        let runs = std::mem::take(&mut self.runs);
        let into = std::mem::take(&mut self.into);
        runs.into_iter()
            .zip(into)
            .map(|(mut run, mut into)| {
                run.clear();
                into.resize_with(parts, Vec::new);
                for list in &mut into {
                    list.clear();
                }
                (run, into)
            })
            .collect()
    }

    /// One empty run, not sorted out, to be written in place.
    pub(crate) fn only_run(&mut self) -> &mut Vec<Transfer> {
        self.runs.truncate(1);
        self.into.truncate(1);
        if self.runs.is_empty() {
            self.runs.push(Vec::new());
            self.into.push(Vec::new());
        }
        self.runs[0].clear();
        self.into[0].clear();
        &mut self.runs[0]
    }

    pub(crate) fn put_back(&mut self, run: Vec<Transfer>, into: Vec<Vec<u32>>) {
        self.runs.push(run);
        self.into.push(into);
    }
}

/// Marker for "no input VC".
pub const NONE: u32 = u32::MAX;
