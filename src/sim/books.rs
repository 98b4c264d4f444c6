//! Booking a clock edge's transfers: into the messages' records, the sources' retries (drop
//! mode, [CMS] §1.2) and the run's flit counts (the fabric counts the flits per link where
//! they depart).

use super::messages::MessageTable;
use crate::rng::Rng;
use crate::source::Sources;
use crate::stats::Status;
use crate::switch::{Fabric, Transfer, TransferKind, Transfers};
use rand::RngExt;

/// The run's flit counts.
#[derive(Default)]
pub(super) struct Counts {
    pub flits_delivered: u64,
    pub discarded_worms: u64,
    pub retried: u64,
}

/// What booking writes, and the run's parameters it reads.
pub(super) struct Books<'a> {
    pub messages: &'a mut MessageTable,
    pub sources: &'a mut Sources,
    pub counts: &'a mut Counts,
    pub retry_rng: &'a mut Rng,
    /// Flits per message, minus one: the tail's sequence number.
    pub tail: u16,
    pub max_attempts: u32,
    pub retry_backoff: u64,
}

impl<'a> Books<'a> {
    /// The books of a run of `config`.
    pub fn of(
        messages: &'a mut MessageTable,
        sources: &'a mut Sources,
        counts: &'a mut Counts,
        retry_rng: &'a mut Rng,
        config: &crate::config::SimConfig,
    ) -> Self {
        Books {
            messages,
            sources,
            counts,
            retry_rng,
            tail: (config.flits - 1) as u16,
            max_attempts: config.max_attempts,
            retry_backoff: config.retry_backoff,
        }
    }

    /// Books the edge's `transfers` that may change a record ([`Transfers::bookable`]) at
    /// the end of `cycle`; returns whether any of them moved a flit.
    pub fn book_edge(&mut self, transfers: &Transfers, fabric: &Fabric, cycle: u64) -> bool {
        let mut progressed = false;
        for list in transfers.bookable() {
            progressed |= self.book(list.iter(), cycle, |ivc| fabric.is_ejection_vc(ivc));
        }
        progressed
    }

    /// Books `transfers` (in the one-thread order: drop mode's retry draws follow it) of the
    /// edge at the end of `cycle`; `ejects(ivc)` tells whether a flit entering input VC `ivc`
    /// reached its destination's register. Returns whether any of them moved a flit.
    pub fn book<'t>(
        &mut self,
        transfers: impl Iterator<Item = &'t Transfer>,
        cycle: u64,
        ejects: impl Fn(u32) -> bool,
    ) -> bool {
        let tail = self.tail;
        let mut progressed = false;
        for t in transfers {
            if let TransferKind::Crossed { .. } = t.kind {
                // A flit inside the network touches its message's record only on reaching its
                // destination's register. A header carries the links it crossed
                // ([`FlitSlot::hop`](crate::flit::FlitSlot)): its record takes them then (or
                // when it is discarded), not at every link.
                progressed = true;
                if !ejects(t.to) {
                    continue;
                }
                let m = self.messages.get_mut(t.flit.msg);
                self.counts.flits_delivered += 1;
                m.arrive(t.flit, tail, cycle);
                continue;
            }
            if let TransferKind::Arrived = t.kind {
                // The bit-plane kernel's arrival (its flit leaves the network at the next
                // edge): a head brings its waits; the tail ends the worm that its head's
                // injection counted.
                progressed = true;
                let m = self.messages.get_mut(t.flit.msg);
                self.counts.flits_delivered += 1;
                let waits = m.header_waits(cycle, t.flit.hop);
                m.record.stalled += std::hint::select_unpredictable(t.flit.seq == 0, waits, 0);
                m.arrive(t.flit, tail, cycle);
                m.gone += u16::from(t.flit.seq == tail);
                continue;
            }
            let m = match t.kind {
                // A worm starts: its record is written on its first attempt.
                TransferKind::Injected if t.flit.seq == 0 => {
                    let (m, retry) = self.messages.start(t.flit.msg, cycle);
                    self.counts.retried += u64::from(retry);
                    m
                }
                _ => self.messages.get_mut(t.flit.msg),
            };
            match t.kind {
                TransferKind::Stalled => {
                    m.record.stalled += 1;
                    continue;
                }
                TransferKind::Injected => {
                    if t.flit.seq > 0 {
                        m.sent += 1;
                    }
                    let started = (t.flit.seq == 0).then_some(m.record.source);
                    // A message to its own terminal (a graph network) leaves where it enters.
                    if ejects(t.to) {
                        self.counts.flits_delivered += 1;
                        m.arrive(t.flit, tail, cycle);
                    }
                    // The message its source starts next, if it has waited long: its header
                    // and release, written when it was released, are read then.
                    if let Some(source) = started
                        && let Some(next) = self.sources.next_after_long_wait(source)
                    {
                        self.messages.prefetch(next);
                    }
                }
                TransferKind::Crossed { .. } | TransferKind::Arrived => {
                    unreachable!("booked above")
                }
                TransferKind::Delivered => m.gone += 1,
                TransferKind::Discarded => {
                    m.gone += 1;
                    if t.flit.seq == 0 {
                        self.counts.discarded_worms += 1;
                        m.record.hops = u32::from(t.flit.hop);
                    }
                    if t.flit.seq == tail {
                        if m.record.attempts < self.max_attempts {
                            m.record.status = Status::Waiting;
                            let backoff = match self.retry_backoff {
                                0 => 0,
                                w => self.retry_rng.random_range(0..=w),
                            };
                            self.sources.retry_at(cycle + 1 + backoff, m.record.id);
                        } else {
                            m.record.status = Status::Dropped;
                        }
                    }
                }
            }
            progressed = true;
        }
        progressed
    }
}
