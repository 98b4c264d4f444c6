//! A whole network run cycle by cycle: the fabric of switches, the sources, the message table,
//! the clock, statistics and the checked invariants. Messages are drawn as the clock reaches
//! their release ([`Arrivals`]) and leave the table once finished, so a run's memory does not
//! grow with its length unless every record is kept ([`Simulation::keep_records`]).

mod books;
mod build;
mod cycle;
mod kernels;
mod messages;
mod pipelined;
mod report;

pub use build::build_topology;
use build::path_messages;
pub use kernels::Kernel;
pub use messages::{Message, MessageTable};

use crate::config::{Middle, SimConfig};
use crate::error::{Error, Result};
use crate::flit::{FlitBits, FlitSlot, HeaderLayout, HeaderValues, mask};
use crate::gang::Gang;
use crate::invariants;
use crate::kernel::Clock;
use crate::rng::{Stream, stream};
use crate::source::Sources;
use crate::stats::Report;
use crate::switch::planes::Planes;
use crate::switch::{Fabric, Header, SwitchParams, Transfer, Transfers};
use crate::topology::{Topology, TopologyKind};
use crate::traffic::{Arrivals, MessageSpec, Traffic};
use rand::RngExt;

/// Fewest inputs (terminals) for which [`Simulation::set_threads`] splits a cycle.
pub const MIN_PARALLEL_INPUTS: u32 = 256;

/// Most threads [`Simulation::set_threads`] starts.
pub const MAX_THREADS: usize = 1024;

/// A thread count [`Simulation::set_threads`] takes: 0..=[`MAX_THREADS`] (0: every core).
pub fn check_threads(threads: usize) -> Result<()> {
    if threads > MAX_THREADS {
        return Err(Error::invalid(
            "threads",
            threads,
            format!("0..={MAX_THREADS} (0: every core)"),
        ));
    }
    Ok(())
}

/// A network under simulation.
pub struct Simulation {
    pub config: SimConfig,
    pub header_layout: HeaderLayout,
    /// The general kernel's switches: the topology, and every register unless the bit-plane
    /// kernel runs the cycles ([`Simulation::bit_planes`]), when they stay empty.
    pub fabric: Fabric,
    pub sources: Sources,
    /// Released messages (finished ones fold into its tally). Read records through
    /// [`Simulation::records`]: a worm in flight counts its hops in its header.
    pub(crate) messages: MessageTable,
    arrivals: Arrivals,
    /// Scratch: the messages released this cycle.
    due: Vec<MessageSpec>,
    /// Messages released so far per source (the `k` of a header's id).
    sent_by: Vec<u64>,
    middle_rng: crate::rng::Rng,
    transfers: Transfers,
    clock: Clock,
    check_invariants: bool,
    counts: books::Counts,
    last_progress: u64,
    retry_rng: crate::rng::Rng,
    /// Most message records the memory limit leaves room for.
    max_held: u64,
    /// Threads asked for ([`Simulation::set_threads`]), 1 or more.
    threads: usize,
    /// The threads of a cycle ([`Simulation::set_threads`]); `None`: this one only.
    gang: Option<Gang>,
    /// With a gang: the levels from here on evaluate as one column run per thread
    /// ([`Fabric::plan_columns`]).
    column_from: u32,
    /// The bit-plane kernel, when it runs the cycles ([`Simulation::set_bit_planes`]).
    planes: Option<Box<Planes>>,
    /// A pipelined batch stopped on an error in the middle of a cycle: the run cannot go on.
    broken: bool,
}

impl Simulation {
    /// Validates `config`, builds its network and sets up its traffic (continuous patterns
    /// are drawn cycle by cycle as the run reaches them).
    pub fn new(mut config: SimConfig) -> Result<Self> {
        config.validate()?;
        let topo = build_topology(&config)?;
        // A graph file names its own terminals: every switch.
        config.inputs = topo.terminals();
        let arrivals = match &config.traffic {
            Traffic::File { path } => {
                Arrivals::list(crate::traffic::load_messages(path, config.inputs)?)
            }
            Traffic::Paths { path } => {
                let (paths, releases) = crate::topology::graph::read_paths(path, &topo)?;
                let specs = path_messages(&topo, &paths, &releases, path)?;
                let mut sim = Self::assemble(config, topo, Arrivals::list(specs), paths.len())?;
                sim.fabric.set_paths(std::sync::Arc::new(paths));
                return Ok(sim);
            }
            t => Arrivals::new(t, config.inputs, config.cycles.unwrap_or(0), config.seed)?,
        };
        Self::assemble(config, topo, arrivals, 0)
    }

    /// A graph network's run on the given `paths` (in `topo`'s link ids), released at
    /// `releases`: the messages follow them and nothing else routes them.
    pub fn with_paths(
        mut config: SimConfig,
        topo: Topology,
        paths: crate::topology::graph::Paths,
        releases: &[u64],
    ) -> Result<Self> {
        config.validate()?;
        config.inputs = topo.terminals();
        let specs = path_messages(&topo, &paths, releases, "paths")?;
        let mut sim = Self::assemble(config, topo, Arrivals::list(specs), paths.len())?;
        sim.fabric.set_paths(std::sync::Arc::new(paths));
        Ok(sim)
    }

    /// Builds the network of `config` and injects exactly `specs` (in release order).
    pub fn with_messages(config: SimConfig, specs: Vec<MessageSpec>) -> Result<Self> {
        for (i, s) in specs.iter().enumerate() {
            if s.source >= config.inputs
                || s.destination >= config.inputs
                || s.middle.unwrap_or(0) >= config.inputs
            {
                return Err(Error::invalid(
                    &format!("message {i} source/destination/middle"),
                    format!("{}/{}/{}", s.source, s.destination, s.middle.unwrap_or(0)),
                    format!("0..={}", config.inputs.saturating_sub(1)),
                ));
            }
        }
        config.validate()?;
        let topo = build_topology(&config)?;
        Self::assemble(config, topo, Arrivals::list(specs), 0)
    }

    /// The simulation of `config` on `topo` with `arrivals`; `paths`: how many given paths
    /// the headers index (0: none).
    fn assemble(
        config: SimConfig,
        topo: Topology,
        arrivals: Arrivals,
        paths: usize,
    ) -> Result<Self> {
        // A waiting message keeps its release below a flag bit (the message table's).
        let last = arrivals.last_release();
        if last > crate::traffic::MAX_CYCLE {
            return Err(Error::invalid(
                "release",
                last,
                format!("0..={} (2^40 cycles)", crate::traffic::MAX_CYCLE),
            ));
        }
        // Taken before the network is allocated (an address-space limit shrinks with it).
        let memory_limit = crate::limits::memory_limit().0;
        let header_layout = config.header_layout_with_paths(paths as u32)?;
        let fabric = Fabric::new(topo, SwitchParams::of(&config), config.seed)?;
        let sources = Sources::new(
            config.inputs,
            config.vcs,
            config.flits,
            config.link_bandwidth,
        );
        let mut sim = Simulation {
            header_layout,
            fabric,
            sources,
            messages: MessageTable::new(config.address_bits()),
            arrivals,
            due: Vec::new(),
            sent_by: vec![0; config.inputs as usize],
            middle_rng: stream(config.seed, Stream::Routing),
            transfers: Transfers::default(),
            clock: Clock::arbitrary(Vec::new()),
            check_invariants: cfg!(debug_assertions),
            counts: books::Counts::default(),
            last_progress: 0,
            retry_rng: stream(config.seed, Stream::Retry),
            max_held: memory_limit.saturating_sub(config.memory_estimate().0)
                / crate::config::RECORD_BYTES,
            threads: 1,
            gang: None,
            broken: false,
            column_from: u32::MAX,
            planes: None,
            config,
        };
        sim.clock = Clock::settled(&sim);
        Ok(sim)
    }

    /// Evaluate components in `order` (sweeping until stable) instead of the settle order.
    pub fn set_evaluation_order(&mut self, order: Vec<usize>) {
        let cycle = self.clock.cycle;
        self.clock = Clock::arbitrary(order);
        self.clock.cycle = cycle;
    }

    /// Completed cycles.
    pub fn cycle(&self) -> u64 {
        self.clock.cycle
    }

    /// The flit events of the last clock edge, in switch order, then the injections in input
    /// and VC order (on the bit-plane kernel only those its books read, in no promised order:
    /// the heads and tails arriving in the last level,
    /// [`TransferKind::Arrived`](crate::switch::TransferKind), and on two threads the headers
    /// injected; on one thread a worm's record starts as its header is written, unlisted).
    pub fn last_transfers(&self) -> impl Iterator<Item = &Transfer> {
        self.transfers.iter()
    }

    /// Keep every message's record for [`Simulation::report`]`(true)` and
    /// [`Simulation::records`] (set before running; without it a finished message's record is
    /// folded into the statistics and freed).
    pub fn keep_records(&mut self, on: bool) {
        self.messages.keep(on);
    }

    /// The routing fields of live message `id`.
    pub fn header(&self, id: u32) -> Header {
        self.messages.header(id)
    }

    /// The `W` data bits of a stored flit.
    pub fn flit_bits(&self, flit: FlitSlot) -> FlitBits {
        let Header { id, path, .. } = self.messages.header(flit.msg);
        if flit.seq == 0 {
            let m = &self
                .messages
                .get(flit.msg)
                .expect("a stored flit names a live message")
                .record;
            self.header_layout.header_bits(&HeaderValues {
                destination: m.destination,
                middle: m.middle,
                path,
                id,
                birth: m.release,
                copy: m.attempts.saturating_sub(1),
                ..HeaderValues::default()
            })
        } else {
            let id = id & mask(self.header_layout.id_bits()) as u32;
            self.header_layout.body_bits(id, flit.seq)
        }
    }

    /// Messages the run offers: a list's count, or the expected count of continuous traffic
    /// over its horizon (for estimates).
    pub fn offered_estimate(&self) -> u64 {
        if self.config.traffic.is_continuous() {
            self.config.offered_estimate()
        } else {
            u64::from(self.messages.issued()) + self.arrivals.remaining()
        }
    }

    /// Cycles the run is expected to take (for estimates): the cycle limit, else the last
    /// release plus the time the busiest source needs to send and the busiest destination to
    /// receive (one VC's worth of flits per cycle), and the worms to cross.
    pub fn cycle_estimate(&self) -> u64 {
        if let Some(c) = self.config.cycles {
            return c;
        }
        let (source, destination) = self.arrivals.busiest();
        let average = self.offered_estimate() / u64::from(self.config.inputs).max(1);
        let flits = u64::from(self.config.flits);
        let per_source = source.max(average) * flits * 2;
        let per_destination = destination * flits / u64::from(self.config.vcs).max(1);
        self.arrivals
            .last_release()
            .saturating_add(per_source.max(per_destination) + flits)
            .saturating_add(4 * u64::from(self.fabric.topo.levels))
    }

    /// On a graph network, the links message `id` (live) crosses: its given path, or the
    /// routing function's from its source to its destination.
    pub fn message_path(&self, id: u32) -> Option<Vec<u32>> {
        let g = self.fabric.topo.graph.as_ref()?;
        let header = self.messages.header(id);
        if let Some(paths) = &self.fabric.paths {
            return Some(paths.path(header.path as usize).to_vec());
        }
        let table = g.next_link.as_ref()?;
        let record = &self.messages.get(id)?.record;
        let terminals = g.terminal_switch.len();
        let mut s = g.terminal_switch[record.source as usize];
        let mut path = Vec::new();
        while path.len() <= self.fabric.topo.links.len() {
            let l = table[s as usize * terminals + record.destination as usize];
            if l == crate::topology::NO_TERMINAL {
                break;
            }
            path.push(l);
            s = self.fabric.topo.links[l as usize].head;
        }
        Some(path)
    }

    /// On a graph network with a batch of messages, the congestion and dilation of their
    /// paths.
    pub fn path_parameters(&self) -> Option<crate::stats::PathParameters> {
        let g = self.fabric.topo.graph.as_ref()?;
        let specs = self.arrivals.specs()?;
        let links = &self.fabric.topo.links;
        let mut load = vec![0u32; links.len()];
        let mut dilation = 0;
        for spec in specs {
            let hops = match (spec.path, &self.fabric.paths) {
                (Some(p), Some(paths)) => {
                    let path = paths.path(p as usize);
                    for &l in path {
                        load[l as usize] += 1;
                    }
                    path.len()
                }
                _ => {
                    let table = g.next_link.as_ref()?;
                    let terminals = g.terminal_switch.len();
                    let mut s = g.terminal_switch[spec.source as usize];
                    let mut hops = 0;
                    while hops <= links.len() {
                        let l = table[s as usize * terminals + spec.destination as usize];
                        if l == crate::topology::NO_TERMINAL {
                            break;
                        }
                        load[l as usize] += 1;
                        s = links[l as usize].head;
                        hops += 1;
                    }
                    hops
                }
            };
            dilation = dilation.max(hops as u32);
        }
        Some(crate::stats::PathParameters {
            congestion: load.into_iter().max().unwrap_or(0),
            dilation,
        })
    }

    /// Every message is delivered or dropped and the network is empty.
    pub fn finished(&self) -> bool {
        self.arrivals.exhausted()
            && self.sources.waiting() == 0
            && self.sources.sending() == 0
            && self.flits_in_network() == 0
    }

    /// Runs one cycle (on this thread). After an error in a run on two threads
    /// ([`Simulation::run`]) the registers may be past the cycle the error names: the run
    /// cannot go on, and this is refused.
    pub fn step(&mut self) -> Result<()> {
        self.check_unbroken()?;
        let cycle = self.clock.cycle;
        self.take_due(cycle)?;
        if self.planes.is_some() {
            // Admitted, booked and retired with the cycle.
            self.tick_planes(cycle);
            self.clock.cycle += 1;
        } else {
            self.admit_due(cycle);
            let mut clock = std::mem::replace(&mut self.clock, Clock::arbitrary(Vec::new()));
            clock.tick(self);
            self.clock = clock;
            self.account(cycle);
            if self.check_invariants {
                invariants::check(self, cycle)?;
            }
            self.messages.retire(self.transfers.bookable().flatten());
        }
        self.watchdog(cycle, self.flits_in_network(), self.planes.is_some())
    }

    /// Draws the messages released in `cycle` into `self.due`, checking first that their ids
    /// and records fit.
    fn take_due(&mut self, cycle: u64) -> Result<()> {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.arrivals.due(cycle, &mut due);
        if u64::from(self.messages.issued()) + due.len() as u64 > u64::from(u32::MAX) {
            return Err(Error::invalid(
                "cycles",
                self.config.cycles.unwrap_or(cycle),
                format!(
                    "a run of fewer than 2^32 messages (message ids are 32 bits); cycle {cycle} passes it"
                ),
            ));
        }
        // Checked before the cycle runs: each message admitted is one more held.
        let held = u64::from(self.messages.held()) + due.len() as u64;
        if held > self.max_held {
            return Err(Error::invalid(
                "traffic",
                self.config.traffic.name(),
                format!(
                    "a load whose live messages fit in {}: {held} are held at cycle {cycle} (a saturated network's source queues grow, and --per-message keeps every record)",
                    crate::limits::bytes(crate::limits::memory_limit().0),
                ),
            ));
        }
        self.due = due;
        Ok(())
    }

    /// After `cycle`, with `flits` in the network (`bit_planes`: on the bit-plane kernel): a
    /// deadlock if flits wait and none has moved for the watchdog's cycles.
    fn watchdog(&self, cycle: u64, flits: u64, bit_planes: bool) -> Result<()> {
        let in_network = flits > 0 || self.sources.sending() > 0;
        if in_network && cycle - self.last_progress >= self.config.watchdog {
            return Err(Error::Deadlock(match bit_planes {
                true => format!(
                    "deadlock: no flit moved for {} cycles (watchdog) at cycle {cycle}; the bit-plane kernel holds {flits} flits (--kernel general names the worms and their VCs)",
                    self.config.watchdog,
                ),
                false => invariants::deadlock_report(self, cycle),
            }));
        }
        Ok(())
    }

    /// Runs to the end: the cycle limit, or (batch traffic without a limit) until every message
    /// is delivered or dropped. Cycles in which the network is empty and nothing is released
    /// are skipped in one step ([`Simulation::skip_idle_cycles`]).
    pub fn run(&mut self) -> Result<Report> {
        self.run_loop(true, |_| Ok(()))
    }

    /// [`Simulation::run`], calling `watch` after every cycle it simulates (progress; on the
    /// bit-plane kernel on two threads, after every batch of cycles, some tens of
    /// milliseconds of them): idle cycles are skipped as by `run`.
    pub fn run_watched(&mut self, watch: impl FnMut(&Simulation) -> Result<()>) -> Result<Report> {
        self.run_loop(true, watch)
    }

    /// [`Simulation::run`], calling `observe` after every cycle (a waveform writer samples the
    /// registers there; on the bit-plane kernel on two threads, which has no waveform, after
    /// every batch of cycles), idle ones included.
    pub fn run_observed(
        &mut self,
        observe: impl FnMut(&Simulation) -> Result<()>,
    ) -> Result<Report> {
        self.run_loop(false, observe)
    }

    fn run_loop(
        &mut self,
        skip_idle: bool,
        mut observe: impl FnMut(&Simulation) -> Result<()>,
    ) -> Result<Report> {
        self.check_unbroken()?;
        loop {
            if self
                .config
                .cycles
                .is_some_and(|limit| self.clock.cycle >= limit)
            {
                break;
            }
            if !self.config.traffic.is_continuous() && self.finished() {
                break;
            }
            crate::interrupt::check()?;
            // (The network is seldom empty: the check is inlined, the skip is not.)
            if skip_idle
                && self.sources.sending() == 0
                && self.flits_in_network() == 0
                && self.skip_idle_cycles() > 0
            {
                // The limit may have been reached: check again.
                continue;
            }
            match self.pipelines() {
                true => self.run_pipelined()?,
                false => self.step()?,
            }
            observe(self)?;
        }
        Ok(self.report(false))
    }

    /// When no flit is in the network, no source has a message to send and the next release or
    /// retry is later than the current cycle, moves the clock to that cycle (or to the cycle
    /// limit, if sooner; to the limit where nothing is left to release or retry): the cycles in
    /// between would change nothing but the lane-choice LFSRs, which are advanced as far.
    /// Returns the cycles skipped.
    #[inline(never)]
    pub fn skip_idle_cycles(&mut self) -> u64 {
        if self.flits_in_network() > 0 || self.sources.sending() > 0 || !self.sources.queues_empty()
        {
            return 0;
        }
        let cycle = self.clock.cycle;
        let next = match (self.arrivals.next_release(), self.sources.next_retry()) {
            (Some(a), Some(r)) => a.min(r),
            (Some(t), None) | (None, Some(t)) => t,
            // Nothing will ever happen again: on to the cycle limit, if there is one.
            (None, None) => match self.config.cycles {
                Some(limit) => limit,
                None => return 0,
            },
        };
        let target = self.config.cycles.map_or(next, |limit| next.min(limit));
        if target <= cycle {
            return 0;
        }
        let skipped = target - cycle;
        self.fabric.skip_idle_cycles(skipped);
        self.clock.cycle = target;
        self.last_progress = target;
        skipped
    }

    /// Admits the messages released this cycle (`self.due`: [`Simulation::take_due`] has
    /// checked that they fit) and releases the retries due to their sources.
    fn admit_due(&mut self, cycle: u64) {
        let due = std::mem::take(&mut self.due);
        for spec in &due {
            self.admit(spec);
        }
        self.due = due;
        for msg in self.sources.due_retries(cycle) {
            let source = self.messages.get_mut(msg).record.source;
            self.sources.release(source, msg);
        }
    }

    /// Gives a released message its id, middle column and header, and queues it at its source.
    fn admit(&mut self, s: &MessageSpec) {
        let config = &self.config;
        let two_pass = matches!(
            config.topology,
            TopologyKind::Benes | TopologyKind::DoubledButterfly
        );
        let middle = match (two_pass, s.middle, config.middle) {
            (false, ..) => 0,
            (true, Some(c), _) | (true, None, Middle::Column(c)) => c,
            (true, None, Middle::Random) => self.middle_rng.random_range(0..config.inputs),
        };
        let k = &mut self.sent_by[s.source as usize];
        let bits = config.address_bits();
        let header = Header {
            destination: s.destination,
            middle,
            path: s.path.unwrap_or(0),
            id: (*k << bits | u64::from(s.source)) as u32,
        };
        *k += 1;
        let id = self.messages.push(s.release, header);
        self.sources.release(s.source, id);
    }

    /// Books the last clock edge's transfers into messages and statistics.
    fn account(&mut self, cycle: u64) {
        let progressed = books::Books::of(
            &mut self.messages,
            &mut self.sources,
            &mut self.counts,
            &mut self.retry_rng,
            &self.config,
        )
        .book_edge(&self.transfers, &self.fabric, cycle);
        self.progress(progressed, cycle);
    }

    /// After booking the edge at the end of `cycle`: whether anything moved (the watchdog).
    fn progress(&mut self, booked: bool, cycle: u64) {
        if booked || self.transfers.moved() {
            self.last_progress = cycle;
        }
    }
}

impl crate::switch::layout::Payload for Simulation {
    fn flit_bits(&self, flit: FlitSlot) -> FlitBits {
        Simulation::flit_bits(self, flit)
    }

    fn header_id(&self, msg: u32) -> u32 {
        self.messages.header(msg).id
    }
}
