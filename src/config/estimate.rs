//! What a run of a configuration needs before it is allocated: the messages it offers, the
//! bytes of its network and of the message records alive at once, checked against the
//! memory limit (`crate::limits`) with the flag to blame.

use super::{LinkBandwidth, SimConfig};
use crate::error::Result;
use crate::traffic::Traffic;

impl SimConfig {
    /// Refuses a run whose network and live records would not fit the memory limit, naming
    /// what makes them large: the inputs, q, the run's length or its traffic.
    pub(super) fn check_memory(&self) -> Result<()> {
        let (network, messages) = self.memory_estimate();
        let estimate = crate::limits::Estimate::new()
            .with("network", network)
            .with("message records", messages);
        match (&self.traffic, messages > network) {
            (_, false) => estimate.check_memory("inputs", self.inputs),
            (Traffic::Uniform { q } | Traffic::QRelation { q }, true) => {
                estimate.check_memory("q", q)
            }
            // Past the window, the records alive at once grow with the run only where the
            // source queues do.
            (t, true) if t.is_continuous() && !self.records_grow_with_cycles() => {
                estimate.check_memory("inputs", self.inputs)
            }
            (t, true) if t.is_continuous() => estimate.check_memory(
                "cycles",
                self.cycles.map_or("none".into(), |c| c.to_string()),
            ),
            (t, true) => estimate.check_memory("traffic", t.name()),
        }
    }

    /// Messages the run offers, as far as the configuration tells (a file's are counted when
    /// it is read): continuous traffic `n · rate · cycles`, batch patterns their count.
    pub fn offered_estimate(&self) -> u64 {
        let n = u64::from(self.inputs);
        match &self.traffic {
            Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. } => {
                (n as f64 * rate.clamp(0.0, 1.0) * self.cycles.unwrap_or(0) as f64) as u64
            }
            Traffic::Uniform { q } | Traffic::QRelation { q } => n * u64::from(*q),
            _ => n,
        }
    }

    /// Switches and links the network has at least, known from the configuration alone (the
    /// networks built level by level; none for the graph networks: a mesh, a torus, the
    /// wrapped butterfly, a random graph, a graph file; none for the modified splitter, which
    /// only `multibutterfly` routes): the estimates that need the built network (its Verilog,
    /// its waveform) refuse from these before a network too large for them is built. Call it
    /// on a valid configuration (its values are multiplied).
    pub fn network_floor(&self) -> (u64, u64) {
        use crate::topology::TopologyKind as T;
        match self.topology {
            T::Butterfly
            | T::Dilated
            | T::Splitter
            | T::Benes
            | T::DoubledButterfly
            | T::KaryFly => (
                u64::from(self.levels()) * u64::from(self.columns()),
                self.link_count(),
            ),
            _ => (0, 0),
        }
    }

    /// Rough bytes a run needs: (links and their VC registers, message records). The network
    /// part grows linearly with n log n. Records are freed once their message finishes, so for
    /// continuous traffic they are those alive at once: n · rate over a window of a few times
    /// a message's unloaded latency, plus, when the offered flits exceed what an input's link
    /// can carry, the excess that piles up in the source queues over the whole run. (A network
    /// that saturates below its link bandwidth exceeds the estimate; the run then stops with
    /// an error when its records pass the limit, [`Simulation`](crate::Simulation).)
    pub fn memory_estimate(&self) -> (u64, u64) {
        let n = u64::from(self.inputs);
        let links = self.link_count();
        let vcs = (links + n) * u64::from(self.vcs);
        let per_vc = 28 + 8 * u64::from(self.effective_depth());
        let (window, excess) = self.record_window();
        let messages = match &self.traffic {
            Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. } => {
                let rate = rate.clamp(0.0, 1.0);
                let cycles = self.cycles.unwrap_or(0);
                (n as f64 * (cycles.min(window) as f64 * rate + cycles as f64 * excess)) as u64
            }
            Traffic::Uniform { q } | Traffic::QRelation { q } => n * u64::from(*q),
            _ => n,
        };
        (links * 24 + vcs * per_vc, messages * RECORD_BYTES)
    }

    /// For continuous traffic, the window over which an input's messages are alive at once
    /// (a few times a message's unloaded latency), and the messages per input and cycle
    /// offered beyond what its link carries, which pile up at the source.
    fn record_window(&self) -> (u64, f64) {
        let window = 4 * u64::from(self.levels() + self.flits);
        let link = match self.link_bandwidth {
            LinkBandwidth::PerVc => f64::from(self.vcs),
            LinkBandwidth::One => 1.0,
        };
        let rate = match &self.traffic {
            Traffic::Bernoulli { rate } | Traffic::Lfsr { rate, .. } => rate.clamp(0.0, 1.0),
            _ => 0.0,
        };
        (window, (rate - link / f64::from(self.flits)).max(0.0))
    }

    /// Whether a longer run keeps more records alive ([`SimConfig::memory_estimate`]): it
    /// is shorter than the window, or its sources' queues grow.
    fn records_grow_with_cycles(&self) -> bool {
        let (window, excess) = self.record_window();
        self.cycles.is_some_and(|c| c < window) || excess > 0.0
    }
}

/// Bytes one live message costs (its header, release and source-queue entry, and its record
/// once its worm has started), for estimates (measured: about 200).
pub const RECORD_BYTES: u64 = 256;
/// Memory one message's record takes in a `--per-message` report as it is built (measured:
/// about 2 700 bytes), and bytes of JSON it adds to the file (about 310).
pub const REPORTED_RECORD_BYTES: u64 = 3000;
pub const REPORTED_RECORD_JSON: u64 = 350;
