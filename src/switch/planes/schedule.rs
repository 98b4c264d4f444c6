//! How a pipelined run ([`super::pipeline`]) is cut into batches and where its levels split
//! between its two threads, from what the last batches measured. Neither changes the run:
//! a batch's size changes when the run checks for an interrupt, the split which thread
//! computes a level.

/// Nanoseconds a pipelined batch aims at: between two batches a run checks for an interrupt
/// and reports progress.
const BATCH_TIME: u64 = 30_000_000;

/// Fewest cycles of a batch (where a cycle is slow): the first cycle of a batch does not
/// overlap the one before it.
const MIN_BATCH: u64 = 16;

/// Batches after a trial of a split that went back in which no move is tried
/// ([`Schedule::after_batch`]): the worse of two close splits runs one batch in `HOLD + 2`.
const HOLD: u32 = 16;

/// How much slower a cycle a trial's batch may run than the batch before it, in parts of
/// the latter, and stay ([`Schedule::after_batch`]): batches of the same split differ by
/// about this much.
const NOISE: u64 = 50;

/// The batches and the split of a pipelined run.
#[derive(Clone, Debug)]
pub(super) struct Schedule {
    /// The first of the upper thread's levels, and whether it stays there.
    split: usize,
    pinned: bool,
    /// The split a trial of `split` moved from, and the nanoseconds a cycle took there.
    trial: Option<(usize, u64)>,
    /// Batches to go before the next trial.
    hold: u32,
    /// Cycles of the next batch.
    batch: u64,
}

/// What a pipelined batch measured.
pub(super) struct Batch {
    /// Cycles asked for, and run (fewer where the network emptied).
    pub(super) asked: u64,
    pub(super) ran: u64,
    /// Nanoseconds the batch took, and those the lower and the upper thread waited.
    pub(super) elapsed: u64,
    pub(super) lower_waited: u64,
    pub(super) upper_waited: u64,
}

impl Schedule {
    /// The first batch: the split just above level 0, 64 cycles.
    pub(super) fn new() -> Self {
        Schedule {
            split: 1,
            pinned: false,
            trial: None,
            hold: 0,
            batch: 64,
        }
    }

    /// The first of the upper thread's levels in the next batch.
    pub(super) fn split(&self) -> usize {
        self.split
    }

    /// Cycles the next batch aims at: some tens of milliseconds at the last batch's speed
    /// ([`BATCH_TIME`]), at least [`MIN_BATCH`].
    pub(super) fn batch(&self) -> u64 {
        self.batch
    }

    /// Pins the split at `m` (clamped to `1..log_n − 1`): batches no longer move it.
    pub(super) fn pin(&mut self, m: usize, log_n: usize) {
        self.split = m.clamp(1, log_n - 1);
        self.pinned = true;
        self.trial = None;
    }

    /// After `batch` of a network of `log_n + 1` levels: the next batch's size and split. A
    /// level moved from the waiting thread's partner to it evens them out where the
    /// difference of their waits is more than a level's work (the upper thread's busy time
    /// over its levels, the last one's delivery counted as one). Where it is less than two
    /// levels' work the move is a trial: crossing level m costs each side more than the
    /// waits show, and where two splits are close the waits alone would swing between them
    /// every batch. A trial whose batch ran slower a cycle than the one before it (by more
    /// than [`NOISE`]) goes back, and no move is tried in the next [`HOLD`] batches. A batch
    /// that ended early (the network empty) may have run a few cycles only: it counts for
    /// neither.
    pub(super) fn after_batch(&mut self, batch: Batch, log_n: usize) {
        let Batch {
            asked,
            ran,
            elapsed,
            lower_waited,
            upper_waited,
        } = batch;
        let Some(per_cycle) = elapsed.checked_div(ran) else {
            return;
        };
        self.batch = (BATCH_TIME / per_cycle.max(1)).max(MIN_BATCH);
        if self.pinned || ran < asked {
            return;
        }
        if let Some((before, pace)) = self.trial.take() {
            if per_cycle > pace + pace / NOISE {
                self.split = before;
                self.hold = HOLD;
            }
            return;
        }
        if self.hold > 0 {
            self.hold -= 1;
            return;
        }
        let m = self.split;
        let busy = elapsed.saturating_sub(upper_waited);
        let level = busy / (log_n - m + 1) as u64;
        let (to, by) = if lower_waited > upper_waited + level && m + 1 < log_n {
            (m + 1, lower_waited - upper_waited)
        } else if upper_waited > lower_waited + level && m > 1 {
            (m - 1, upper_waited - lower_waited)
        } else {
            return;
        };
        if by <= 2 * level {
            self.trial = Some((m, per_cycle));
        }
        self.split = to;
    }
}
