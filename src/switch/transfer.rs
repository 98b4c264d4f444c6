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
    /// Entered its destination's register (the bit-plane kernel lists these, not its
    /// crossings, and no `Stalled` header: a header's waits are the cycles from its
    /// injection to its arrival in which it crossed no link).
    Arrived,
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

impl Transfer {
    /// A source writes `flit` into injection VC `to`.
    #[inline(always)]
    pub fn injected(flit: FlitSlot, to: u32) -> Self {
        Transfer {
            flit,
            from: NONE,
            to,
            kind: TransferKind::Injected,
        }
    }
}

/// A clock edge's transfers as runs, one per segment of switches whose departures a thread
/// committed, then the sources' injections: in order, the list one thread gives. A run is
/// written by one thread only, with no header next to another thread's. On a split edge, a
/// run whose flits enter the segments of several threads also sorts out its transfers by the
/// thread that writes them there.
///
/// On a split edge of a leveled network, the departures also copy out beside each run the
/// transfers the simulator books into messages ([`Transfers::bookable`]): all but the
/// crossings into registers that cannot deliver, which are most of the flits and change no
/// record.
#[derive(Clone, Debug, Default)]
pub struct Transfers {
    runs: Vec<Vec<Transfer>>,
    /// Per run, per thread: the indices of the run's transfers into the segments that thread
    /// writes (empty when the edge was not split, or the run's flits all enter one segment).
    into: Vec<Vec<Vec<u32>>>,
    /// Per run, its transfers to book, if `apart`.
    events: Vec<Vec<Transfer>>,
    /// Whether the departures wrote `events` (else every transfer is booked).
    apart: bool,
    /// Flits that left a register at a split edge.
    left: u64,
    /// The sources' injections, one list per part of the inputs (in input order).
    injected: Vec<Vec<Transfer>>,
    /// Whether injection list k enters only registers that thread k of a split edge writes
    /// (the arrivals check it).
    injected_by_thread: bool,
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
        for events in &mut self.events {
            events.clear();
        }
        self.apart = false;
        self.left = 0;
        for list in &mut self.injected {
            list.clear();
        }
        self.injected_by_thread = false;
    }

    /// Every transfer, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Transfer> {
        self.runs
            .iter()
            .flatten()
            .chain(self.injected.iter().flatten())
    }

    /// The transfers that may change a message's record, list by list in the order of
    /// [`Transfers::iter`]: every one but the crossings into registers that cannot deliver,
    /// when the departures sorted those out; else every one.
    pub fn bookable(&self) -> impl Iterator<Item = &[Transfer]> {
        let lists = match self.apart {
            true => &self.events,
            false => &self.runs,
        };
        lists.iter().chain(&self.injected).map(Vec::as_slice)
    }

    /// Whether a flit left a register at a split edge, or on the bit-plane kernel left one or
    /// was written by a source (a move that [`Transfers::bookable`] leaves out still moved a
    /// flit); one thread of the general kernel books every transfer and counts none here.
    pub(crate) fn moved(&self) -> bool {
        self.left > 0
    }

    /// The departures' runs, in order (one per segment of switches, [`Transfers`]).
    pub fn runs(&self) -> &[Vec<Transfer>] {
        &self.runs
    }

    /// The sources' injections, one list per part of the inputs, in input order.
    pub fn injected(&self) -> &[Vec<Transfer>] {
        &self.injected
    }

    /// The sources' injections as one list, to be written.
    pub fn injected_mut(&mut self) -> &mut Vec<Transfer> {
        self.injected.truncate(1);
        if self.injected.is_empty() {
            self.injected.push(Vec::new());
        }
        &mut self.injected[0]
    }

    /// Whether injection list k enters only registers that thread k of a split edge writes.
    pub(crate) fn injected_by_thread(&self) -> bool {
        self.injected_by_thread
    }

    /// `parts` empty injection lists (reusing the present ones' storage), to be written by
    /// as many threads and put back in order with [`Transfers::put_injected`]; list k enters
    /// only registers that thread k of a split edge writes.
    pub(crate) fn take_injected(&mut self, parts: usize) -> Vec<Vec<Transfer>> {
        self.injected.resize_with(parts, Vec::new);
        for list in &mut self.injected {
            list.clear();
        }
        self.injected_by_thread = true;
        std::mem::take(&mut self.injected)
    }

    /// Puts back a list of [`Transfers::take_injected`], after the ones put back before it.
    pub(crate) fn put_injected(&mut self, list: Vec<Transfer>) {
        self.injected.push(list);
    }

    /// Threads the runs were sorted out for (1: not sorted out).
    pub(crate) fn parts(&self) -> usize {
        self.into.first().map_or(1, |into| into.len().max(1))
    }

    /// Per run, the indices of its transfers into the segments of each thread.
    pub(crate) fn sorted(&self) -> &[Vec<Vec<u32>>] {
        &self.into
    }

    /// `count` empty runs, each with `parts` empty index lists and its empty list of
    /// transfers to book, to be written if `apart` (reusing the storage of the present ones),
    /// to be filled and put back in order with [`Transfers::put_back`].
    pub(crate) fn take_runs(&mut self, count: usize, parts: usize, apart: bool) -> Vec<Run> {
        self.runs.resize_with(count, Vec::new);
        self.into.resize_with(count, Vec::new);
        self.events.resize_with(count, Vec::new);
        self.apart = apart;
        let runs = std::mem::take(&mut self.runs);
        let into = std::mem::take(&mut self.into);
        let events = std::mem::take(&mut self.events);
        runs.into_iter()
            .zip(into)
            .zip(events)
            .map(|((mut run, mut into), mut events)| {
                run.clear();
                into.resize_with(parts, Vec::new);
                for list in &mut into {
                    list.clear();
                }
                events.clear();
                Run { run, into, events }
            })
            .collect()
    }

    /// One empty run, not sorted out, to be written in place (every transfer of it is
    /// booked).
    pub(crate) fn only_run(&mut self) -> &mut Vec<Transfer> {
        self.runs.truncate(1);
        self.into.truncate(1);
        self.events.clear();
        if self.runs.is_empty() {
            self.runs.push(Vec::new());
            self.into.push(Vec::new());
        }
        self.runs[0].clear();
        self.into[0].clear();
        self.apart = false;
        &mut self.runs[0]
    }

    /// Counts `left` flits that moved this edge beyond the transfers listed (a kernel whose
    /// lists hold only what the books read: [`Transfers::moved`], which asks only whether
    /// any did, so that the bit-plane kernel's levels give at most one each).
    pub(crate) fn add_moved(&mut self, left: u64) {
        self.left += left;
    }

    /// Puts back a run of [`Transfers::take_runs`], after the ones put back before it.
    pub(crate) fn put_back(&mut self, run: Run, left: u64) {
        self.runs.push(run.run);
        self.into.push(run.into);
        self.events.push(run.events);
        self.left += left;
    }
}

/// One run of [`Transfers`] as a thread writes it.
pub(crate) struct Run {
    pub run: Vec<Transfer>,
    /// Per thread: the indices of the run's transfers into the segments it writes.
    pub into: Vec<Vec<u32>>,
    /// The run's transfers to book.
    pub events: Vec<Transfer>,
}

/// Marker for "no input VC".
pub const NONE: u32 = u32::MAX;
