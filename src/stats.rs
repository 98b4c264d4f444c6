//! Run statistics: per message timings, per run counts, latency percentiles, throughput and
//! link utilisation, serialised as byte-stable JSON.

use crate::config::SimConfig;
use serde::Serialize;

/// Where a message is at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Created, not yet released into its source queue.
    Pending,
    /// In a source queue or waiting for a retry.
    Waiting,
    /// Flits in the network or at the source mid-worm.
    InFlight,
    /// Tail arrived at the last-level (output) switch: [CMS]'s "at the destination". Its
    /// register drains into the destination one cycle later.
    Delivered,
    /// Given up after its last attempt was discarded (drop mode).
    Dropped,
}

/// One message and what happened to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MessageRecord {
    pub id: u32,
    pub source: u32,
    pub destination: u32,
    /// Middle column (Beneš routes; 0 elsewhere).
    pub middle: u32,
    /// Cycle it joined its source queue.
    pub release: u64,
    pub status: Status,
    /// Attempts started (more than one only in drop mode).
    pub attempts: u32,
    /// Cycle its header entered the network on the first attempt.
    pub injected: Option<u64>,
    /// Cycle its header reached the last level.
    pub head_arrival: Option<u64>,
    /// Cycle its tail reached the last level.
    pub tail_arrival: Option<u64>,
    /// Links its header crossed (last attempt). A worm's header counts them as it goes
    /// ([`Simulation::record`](crate::Simulation::record) reads them from there for a worm in
    /// flight).
    pub hops: u32,
    /// Cycles its header waited for an output VC or a link (not counting a store-and-forward
    /// header waiting for the rest of its own packet).
    pub stalled: u32,
}

impl MessageRecord {
    /// A message just released into its source's queue: not injected yet.
    pub fn waiting(id: u32, source: u32, destination: u32, middle: u32, release: u64) -> Self {
        MessageRecord {
            id,
            source,
            destination,
            middle,
            release,
            status: Status::Waiting,
            attempts: 0,
            injected: None,
            head_arrival: None,
            tail_arrival: None,
            hops: 0,
            stalled: 0,
        }
    }
}

/// Mean and order statistics of a sample (nearest-rank percentiles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

impl Summary {
    /// Summarises `values` (sorted in place).
    pub fn of(values: &mut [u64]) -> Self {
        if values.is_empty() {
            return Summary::default();
        }
        values.sort_unstable();
        let rank = |p: f64| {
            let r = (p * values.len() as f64).ceil() as usize;
            values[r.clamp(1, values.len()) - 1]
        };
        let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
        Summary {
            mean: round6(sum as f64 / values.len() as f64),
            p50: rank(0.50),
            p99: rank(0.99),
            max: values[values.len() - 1],
        }
    }
}

/// An exact histogram of small non-negative integers (latencies in cycles): one counter per
/// value up to the largest seen, so its memory follows the longest latency, not the number of
/// messages, and its percentiles equal [`Summary::of`] on the same values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        let i = usize::try_from(v).unwrap_or(usize::MAX);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
        self.sum += u128::from(v);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        self.n += other.n;
        self.sum += other.sum;
    }

    /// Values recorded.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// How many recorded values exceed `t`.
    pub fn exceeding(&self, t: u64) -> u64 {
        let from = usize::try_from(t).map_or(self.counts.len(), |t| t.saturating_add(1));
        self.counts.iter().skip(from).sum()
    }

    /// Mean and nearest-rank percentiles, as [`Summary::of`] gives them.
    pub fn summary(&self) -> Summary {
        if self.n == 0 {
            return Summary::default();
        }
        let rank = |p: f64| {
            let r = ((p * self.n as f64).ceil() as u64).clamp(1, self.n);
            let mut seen = 0;
            for (v, &c) in self.counts.iter().enumerate() {
                seen += c;
                if seen >= r {
                    return v as u64;
                }
            }
            (self.counts.len() - 1) as u64
        };
        Summary {
            mean: round6(self.sum as f64 / self.n as f64),
            p50: rank(0.50),
            p99: rank(0.99),
            max: (self.counts.len() - 1) as u64,
        }
    }
}

/// The statistics of finished messages, kept as counters and histograms so that their records
/// can be freed ([`MessageRecord`]s of delivered and dropped messages fold in here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub delivered: u64,
    pub dropped: u64,
    /// Of these, how many entered the network at least once.
    pub injected: u64,
    pub stalled_cycles: u64,
    /// Latest tail arrival.
    pub makespan: u64,
    /// Tail arrival minus release, delivered messages.
    pub latency: Histogram,
    /// Tail arrival minus first injection, delivered messages.
    pub network_latency: Histogram,
}

impl Tally {
    /// Folds in one record (any status: only delivered and dropped ones count as finished).
    #[inline]
    pub fn add(&mut self, r: &MessageRecord) {
        self.stalled_cycles += u64::from(r.stalled);
        self.injected += u64::from(r.injected.is_some());
        match r.status {
            Status::Delivered => {
                self.delivered += 1;
                if let Some(t) = r.tail_arrival {
                    self.makespan = self.makespan.max(t);
                    self.latency.add(t - r.release);
                    if let Some(i) = r.injected {
                        self.network_latency.add(t - i);
                    }
                }
            }
            Status::Dropped => self.dropped += 1,
            _ => {}
        }
    }
}

/// Accepted throughput.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Throughput {
    /// Flits delivered per input per cycle.
    pub flits_per_input_cycle: f64,
    /// Messages delivered per input per cycle.
    pub messages_per_input_cycle: f64,
}

/// Link utilisation: flits carried over flits the link could have carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Utilisation {
    pub mean: f64,
    pub max: f64,
}

/// The result of a run. Key order is fixed, so equal runs give byte-identical JSON.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Messages the traffic created.
    pub offered: u64,
    /// Messages whose header entered the network at least once.
    pub injected: u64,
    pub delivered: u64,
    /// Messages given up (drop mode).
    pub dropped: u64,
    /// Attempts started after the first (drop mode).
    pub retried: u64,
    /// Worms discarded in the network (drop mode), counting every attempt.
    pub discarded_worms: u64,
    /// Messages with flits in the network or mid-injection when the run ended.
    pub in_flight: u64,
    /// Messages still queued at their source when the run ended.
    pub waiting: u64,
    /// Cycle of the last tail arrival.
    pub makespan_cycles: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// Tail arrival minus release, over delivered messages only (near saturation the messages
    /// still queued or in flight would add a longer tail: see `in_flight` and `waiting`).
    pub latency: Summary,
    /// Tail arrival minus first injection, over delivered messages.
    pub network_latency: Summary,
    pub throughput: Throughput,
    /// Header stall cycles, summed over messages.
    pub stalled_cycles: u64,
    pub link_utilisation: Utilisation,
    pub config: SimConfig,
    pub seed: u64,
    /// A graph network's batch of messages: the congestion C and dilation D of their paths
    /// ([CMS] §1.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathParameters>,
    /// Per-message records, when requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<MessageRecord>>,
}

/// Congestion C (the most paths on one link) and dilation D (the longest path, in links) of a
/// set of paths, the parameters [CMS], [SV] and [CMSV] state their bounds in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PathParameters {
    pub congestion: u32,
    pub dilation: u32,
}

impl Report {
    /// Pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }

    /// A short human-readable summary.
    pub fn summary(&self) -> String {
        let c = &self.config;
        let paths = match &self.paths {
            Some(p) => format!(
                "\npaths: congestion C = {}, dilation D = {}",
                p.congestion, p.dilation
            ),
            None => String::new(),
        };
        let text = format!(
            "flitforge: {topo} n={n} B={b} L={l} W={w} mode={mode} traffic={traffic} seed={seed}\n\
             messages: {offered} offered, {inj} injected, {del} delivered, {drop} dropped, {retry} retried, {fl} in flight, {wait} waiting\n\
             makespan: {mk} cycles ({cyc} simulated)\n\
             latency (cycles): mean {lm:.2}, p50 {l50}, p99 {l99}, max {lmax}\n\
             throughput: {tf:.4} flits/input/cycle; link utilisation mean {um:.3}, max {ux:.3}; header stalls {st}",
            topo = c.topology.name(),
            n = c.inputs,
            b = c.vcs,
            l = c.flits,
            w = c.flit_bits,
            mode = c.mode.name(),
            traffic = c.traffic.name(),
            seed = self.seed,
            offered = self.offered,
            inj = self.injected,
            del = self.delivered,
            drop = self.dropped,
            retry = self.retried,
            fl = self.in_flight,
            wait = self.waiting,
            mk = self.makespan_cycles,
            cyc = self.cycles,
            lm = self.latency.mean,
            l50 = self.latency.p50,
            l99 = self.latency.p99,
            lmax = self.latency.max,
            tf = self.throughput.flits_per_input_cycle,
            um = self.link_utilisation.mean,
            ux = self.link_utilisation.max,
            st = self.stalled_cycles,
        );
        text + &paths
    }
}

/// Mean and (sample) standard deviation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stat {
    pub mean: f64,
    pub sigma: f64,
}

impl Stat {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Stat {
        let v: Vec<f64> = values.into_iter().collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n.max(1.0);
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Stat {
            mean,
            sigma: var.sqrt(),
        }
    }
}

/// Rounds to 6 decimals so JSON output does not depend on summation noise.
pub fn round6(x: f64) -> f64 {
    round_to(x, 6)
}

/// Rounds to `digits` decimals (measured figures in reports).
pub fn round_to(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        let s = Summary::of(&mut v);
        assert_eq!((s.p50, s.p99, s.max), (50, 99, 100));
        assert_eq!(s.mean, 50.5);
        assert_eq!(Summary::of(&mut []), Summary::default());
    }

    #[test]
    fn histogram_matches_the_sorted_summary() {
        let mut rng = crate::rng::stream(7, crate::rng::Stream::Traffic);
        use rand::RngExt;
        for len in [1usize, 2, 3, 99, 100, 101, 1000] {
            let mut v: Vec<u64> = (0..len).map(|_| rng.random_range(0..300)).collect();
            let mut h = Histogram::default();
            let (a, b) = v.split_at(len / 2);
            let mut h2 = Histogram::default();
            a.iter().for_each(|&x| h.add(x));
            b.iter().for_each(|&x| h2.add(x));
            h.merge(&h2);
            for t in [0, 1, 150, 299, 300, u64::MAX] {
                let over = v.iter().filter(|&&x| x > t).count() as u64;
                assert_eq!(h.exceeding(t), over, "{len} values over {t}");
            }
            assert_eq!(h.summary(), Summary::of(&mut v), "{len} values");
        }
        assert_eq!(Histogram::default().summary(), Summary::default());
    }
}
