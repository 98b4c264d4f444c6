//! The run's statistics: the report of a simulation so far, and the message records it holds.

use super::Simulation;
use super::messages::Message;
use crate::config::LinkBandwidth;
use crate::stats::{MessageRecord, Report, Status, Throughput, Utilisation, round6};

impl Simulation {
    /// The run's statistics so far; with `per_message`, the records held (every message's
    /// with [`Simulation::keep_records`]).
    pub fn report(&self, per_message: bool) -> Report {
        let cycles = self.clock.cycle;
        let n = u64::from(self.config.inputs);
        let mut tally = self.messages.tally.clone();
        if self.bit_planes() {
            // The waits of the headers in the network, which their records count when they
            // arrive: by header, as a saturated run holds many more records (waiting at their
            // sources) than the network holds headers.
            tally.stalled_cycles += self
                .header_hops()
                .into_iter()
                .filter_map(|(id, hop)| {
                    let m = self.messages.get(id)?;
                    Some(u64::from(self.waits_so_far(&m, hop)))
                })
                .sum::<u64>();
        }
        let (mut in_flight, mut waiting) = (0, self.arrivals.remaining());
        for m in self.messages.started() {
            tally.add(&m.record);
            match m.record.status {
                Status::InFlight => in_flight += 1,
                Status::Waiting | Status::Pending => waiting += 1,
                _ => {}
            }
        }
        // The others wait at their sources.
        waiting += u64::from(self.messages.never_started());
        let bandwidth = match self.config.link_bandwidth {
            LinkBandwidth::PerVc => u64::from(self.config.vcs),
            LinkBandwidth::One => 1,
        };
        let capacity = (cycles.max(1) * bandwidth) as f64;
        let link_flits = self.link_flits();
        let max_link = link_flits.iter().copied().max().unwrap_or(0);
        let total_link: u64 = link_flits.iter().sum();
        let per_input_cycle = (n * cycles.max(1)) as f64;
        Report {
            offered: u64::from(self.messages.issued()) + self.arrivals.remaining(),
            injected: tally.injected,
            delivered: tally.delivered,
            dropped: tally.dropped,
            retried: self.counts.retried,
            discarded_worms: self.counts.discarded_worms,
            in_flight,
            waiting,
            makespan_cycles: tally.makespan,
            cycles,
            latency: tally.latency.summary(),
            network_latency: tally.network_latency.summary(),
            throughput: Throughput {
                flits_per_input_cycle: round6(self.counts.flits_delivered as f64 / per_input_cycle),
                messages_per_input_cycle: round6(tally.delivered as f64 / per_input_cycle),
            },
            stalled_cycles: tally.stalled_cycles,
            link_utilisation: Utilisation {
                mean: round6(total_link as f64 / (capacity * link_flits.len().max(1) as f64)),
                max: round6(max_link as f64 / capacity),
            },
            config: self.config.clone(),
            seed: self.config.seed,
            paths: self.path_parameters(),
            messages: per_message.then(|| self.records().collect()),
        }
    }

    /// The records still held, in id (release) order: every message's with
    /// [`Simulation::keep_records`], else those not finished. A worm's header counts its
    /// links (and on the bit-plane kernel its waits) as it goes: the record of a worm in
    /// flight takes them from there.
    pub fn records(&self) -> impl Iterator<Item = MessageRecord> + '_ {
        let hops = self.header_hops();
        self.messages
            .live()
            .map(move |m| match hops.get(&m.record.id) {
                Some(&hop) => self.as_it_stands(&m, hop),
                None => m.record.clone(),
            })
    }

    /// The record of message `id`, if held (with the links its header crossed and the
    /// cycles it waited so far, as [`Simulation::records`]).
    pub fn record(&self, id: u32) -> Option<MessageRecord> {
        let m = self.messages.get(id)?;
        if header_in_network(&m.record)
            && let Some(flit) = self.stored_headers().find(|f| f.msg == id)
        {
            return Some(self.as_it_stands(&m, flit.hop));
        }
        Some(m.record.clone())
    }

    /// The messages whose header a register holds, with the links it has crossed (none when
    /// no live record's header can be in the network).
    fn header_hops(&self) -> std::collections::BTreeMap<u32, u16> {
        if !self
            .messages
            .started()
            .any(|m| header_in_network(&m.record))
        {
            return Default::default();
        }
        self.stored_headers()
            .map(|flit| (flit.msg, flit.hop))
            .collect()
    }

    /// The record of `m`, whose header a register holds having crossed `hop` links: with
    /// those links, and on the bit-plane kernel (whose books count a header's waits when it
    /// arrives) the cycles it has waited so far.
    fn as_it_stands(&self, m: &Message, hop: u16) -> MessageRecord {
        let mut record = m.record.clone();
        record.hops = u32::from(hop);
        if self.bit_planes() {
            record.stalled += self.waits_so_far(m, hop);
        }
        record
    }

    /// The cycles the header of `m`, held by a register having crossed `hop` links, has
    /// waited that its record does not count (the bit-plane kernel's; none once it arrived).
    fn waits_so_far(&self, m: &Message, hop: u16) -> u32 {
        match header_in_network(&m.record) {
            // Up to the last cycle run.
            true => m.header_waits(self.clock.cycle.saturating_sub(1), hop),
            false => 0,
        }
    }
}

/// Whether the header of `record`'s message may be inside the network, counting its hops (it
/// was injected and has neither reached its destination's register nor been discarded).
fn header_in_network(record: &MessageRecord) -> bool {
    record.status == Status::InFlight && record.head_arrival.is_none()
}
