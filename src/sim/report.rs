//! The run's statistics: the report of a simulation so far, and the message records it holds.

use super::Simulation;
use crate::config::LinkBandwidth;
use crate::stats::{MessageRecord, Report, Status, Throughput, Utilisation, round6};

impl Simulation {
    /// The run's statistics so far; with `per_message`, the records held (every message's
    /// with [`Simulation::keep_records`]).
    pub fn report(&self, per_message: bool) -> Report {
        let cycles = self.clock.cycle;
        let n = u64::from(self.config.inputs);
        let mut tally = self.messages.tally.clone();
        // The waits of headers in the network that their records have not counted yet (the
        // bit-plane kernel's: [`Simulation::stored_headers`]).
        if self.bit_planes() {
            tally.stalled_cycles += self
                .stored_headers()
                .map(|(_, waited)| u64::from(waited))
                .sum::<u64>();
        }
        let (mut in_flight, mut waiting) = (0, self.arrivals.remaining());
        for m in self.messages.live() {
            tally.add(&m.record);
            match m.record.status {
                Status::InFlight => in_flight += 1,
                Status::Waiting | Status::Pending => waiting += 1,
                _ => {}
            }
        }
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
        let headers: std::collections::BTreeMap<u32, (u16, u32)> =
            if self.messages.live().any(|m| header_in_network(&m.record)) {
                self.stored_headers()
                    .map(|(flit, waited)| (flit.msg, (flit.hop, waited)))
                    .collect()
            } else {
                Default::default()
            };
        self.messages.live().map(move |m| {
            let mut record = m.record.clone();
            if let Some(&(hop, waited)) = headers.get(&record.id) {
                record.hops = u32::from(hop);
                record.stalled += waited;
            }
            record
        })
    }

    /// The record of message `id`, if held (with the links its header crossed and the
    /// cycles it waited so far, as [`Simulation::records`]).
    pub fn record(&self, id: u32) -> Option<MessageRecord> {
        let mut record = self.messages.get(id)?.record.clone();
        if header_in_network(&record)
            && let Some((flit, waited)) = self.stored_headers().find(|(f, _)| f.msg == id)
        {
            record.hops = u32::from(flit.hop);
            record.stalled += waited;
        }
        Some(record)
    }
}

/// Whether the header of `record`'s message may be inside the network, counting its hops (it
/// was injected and has neither reached its destination's register nor been discarded).
fn header_in_network(record: &MessageRecord) -> bool {
    record.status == Status::InFlight && record.head_arrival.is_none()
}
