//! Which kernel runs a simulation's cycles, chosen before the first: the general one (every
//! switch's registers, one switch at a time, on a gang of threads if asked) or the bit-plane
//! kernel ([`Planes`]), and what the rest of the simulation reads of whichever runs.

use super::{MIN_PARALLEL_INPUTS, Simulation, check_threads};
use crate::error::{Error, Result};
use crate::gang::Gang;
use crate::switch::planes::{LevelZero, Planes};

/// Which kernel runs a simulation's cycles ([`Simulation::set_kernel`]); the run is the same
/// on either.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// The bit-plane kernel where it models the network and nothing needs the general
    /// kernel's registers ([`Simulation::prefer_bit_planes`]), else the general kernel.
    #[default]
    Auto,
    /// Every switch's registers, one switch at a time (waveforms, invariant checks, any
    /// number of threads).
    General,
    /// 64 switches of a level per machine word ([`Planes`]).
    BitPlanes,
}

impl Kernel {
    /// The names `--kernel` takes.
    pub const NAMES: [&str; 3] = ["auto", "general", "bit-planes"];

    /// The kernel named `name` (one of [`Kernel::NAMES`]).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "auto" => Ok(Kernel::Auto),
            "general" => Ok(Kernel::General),
            "bit-planes" => Ok(Kernel::BitPlanes),
            other => Err(Error::invalid("kernel", other, Kernel::NAMES.join(", "))),
        }
    }
}

/// A gang of `threads` threads, or why this machine cannot start them.
fn start_gang(threads: usize) -> Result<Gang> {
    Gang::new(threads).map_err(|e| {
        Error::invalid(
            "threads",
            threads,
            format!("a thread count this machine can start ({e})"),
        )
    })
}

impl Simulation {
    /// Runs each cycle on `threads` threads (0: every core; 1: this thread only), a [`Gang`]
    /// that spins between a cycle's phases. The run is the same, byte for byte, on any number
    /// of threads: a switch reads only registered state and the registers of the level it
    /// feeds as they are after their departures, and writes only its own registers.
    ///
    /// On the general kernel: the evaluation (by runs of columns where the levels allow,
    /// [`Fabric::plan_columns`], else level by level), the departures and the arrivals, each
    /// thread owning the same runs of switches in all of them; the sources of the inputs of
    /// a thread's run of level 0 decide and commit on that thread (where those runs start
    /// words of the sources' bitmap), and the admissions and booking run on this thread,
    /// whose core keeps their state. On the bit-plane kernel ([`Simulation::set_bit_planes`]),
    /// two threads at most, as a pipeline of levels ([`Planes::pipelined`]): the upper
    /// levels on the other thread, the lower ones, the sources and the books on this one
    /// ([`Simulation::run`] runs the cycles so; [`Simulation::step`] runs one on this
    /// thread). Networks of fewer than [`MIN_PARALLEL_INPUTS`] inputs run on this thread
    /// (splitting costs more than it saves). On an error nothing changes.
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        check_threads(threads)?;
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            t => t,
        };
        if self.planes.is_some() {
            if self.pipelines_on(threads) != self.gang.is_some() {
                self.gang = self.planes_gang(threads)?;
            }
            self.threads = threads;
            return Ok(());
        }
        let gang = match threads > 1
            && self.config.inputs >= MIN_PARALLEL_INPUTS
            && self.config.mode != crate::config::FlowControl::Greedy
        {
            true => Some(start_gang(threads)?),
            false => None,
        };
        self.threads = threads;
        self.gang = None;
        self.column_from = u32::MAX;
        self.sources.set_cut(None);
        let Some(gang) = gang else {
            return Ok(());
        };
        self.column_from = self.fabric.plan_columns(threads as u32);
        // Level 0 evaluates by runs (not inside a column run) that are the edge's
        // segments, and each run's inputs start a word of the sources' bitmap.
        let cut = self
            .fabric
            .level_zero_inputs(threads as u32)
            .filter(|bounds| {
                self.column_from > 0 && bounds[..threads].iter().all(|b| b.is_multiple_of(64))
            });
        self.sources.set_cut(cut);
        self.gang = Some(gang);
        Ok(())
    }

    /// Whether the bit-plane kernel runs on two threads, a pipeline of levels, when
    /// `threads` are asked for.
    fn pipelines_on(&self, threads: usize) -> bool {
        threads > 1 && self.config.inputs >= MIN_PARALLEL_INPUTS
    }

    /// The bit-plane kernel's threads for `threads` asked: a gang of two for its pipeline,
    /// or none.
    fn planes_gang(&self, threads: usize) -> Result<Option<Gang>> {
        self.pipelines_on(threads)
            .then(|| start_gang(2))
            .transpose()
    }

    /// Whether the run has started (a cycle has run, or a message been released).
    fn started(&self) -> bool {
        self.clock.cycle > 0 || self.messages.issued() > 0
    }

    /// Check invariants after every cycle (on by default in debug builds). The checks read
    /// the general kernel's registers: turning them on before the first cycle turns the
    /// bit-plane kernel off; once it has run a cycle there is nothing to check, and they stay
    /// off.
    pub fn set_check_invariants(&mut self, on: bool) {
        if on && self.planes.is_some() {
            // Refused once the bit-plane kernel has run a cycle: the general registers are
            // stale, there is nothing to check against. (Should the general kernel's threads
            // fail to start, it runs on this thread, checked.)
            let _ = self.set_bit_planes(false);
            if self.planes.is_some() {
                return;
            }
        }
        self.check_invariants = on;
    }

    /// Runs the cycles on the bit-plane kernel ([`Planes`]: 64 switches of a level per machine
    /// word, the same next-state logic; on two threads if [`Simulation::set_threads`] asks
    /// for more than one) or (`false`) on the general one. Set before the first cycle. The
    /// bit-plane kernel keeps only the registers the books read: invariant checks,
    /// waveforms, and [`Simulation::last_transfers`]' crossings inside the network and body
    /// flits need the general kernel. Refused (exit 2) for a network it does not model
    /// ([`Planes::supports`]), once the run has started, or with invariant checks on; on an
    /// error the kernel stays as it was (but for the general kernel's threads failing to
    /// start, which leaves it on this thread).
    pub fn set_bit_planes(&mut self, on: bool) -> Result<()> {
        let started = self.started();
        if !on {
            if self.planes.is_some() {
                if started {
                    return Err(Error::invalid(
                        "kernel",
                        "general",
                        "the kernel chosen before the first cycle (the run has started)",
                    ));
                }
                self.planes = None;
                self.gang = None;
                self.sources.set_cut(None);
                self.max_held +=
                    Planes::bytes(&self.config, &self.fabric).div_ceil(crate::config::RECORD_BYTES);
                // The general kernel's threads.
                self.set_threads(self.threads)?;
            }
            return Ok(());
        }
        let refuse = |why: String| Err(Error::invalid("kernel", "bit-planes", why));
        if started && self.planes.is_none() {
            return refuse("the kernel chosen before the first cycle (the run has started)".into());
        }
        if self.planes.is_some() {
            return Ok(());
        }
        if self.check_invariants {
            return refuse(
                "a run without invariant checks (they read the general kernel's registers)".into(),
            );
        }
        if let Err(what) = Planes::supports(&self.config, &self.fabric) {
            return refuse(format!("a network it models: {what}"));
        }
        // Its registers come beside the general kernel's, which stay allocated: out of the
        // memory limit's room for message records.
        let needs = Planes::bytes(&self.config, &self.fabric);
        let records = needs.div_ceil(crate::config::RECORD_BYTES);
        if records > self.max_held {
            let (limit, from) = crate::limits::memory_limit();
            return refuse(format!(
                "memory for its registers: {} more than the network and its messages leave of {} ({from})",
                crate::limits::bytes(needs),
                crate::limits::bytes(limit)
            ));
        }
        let planes = Planes::new(&self.config, &self.fabric)?;
        // Its threads, started before anything changes.
        let gang = self.planes_gang(self.threads)?;
        self.planes = Some(Box::new(planes));
        self.gang = gang;
        self.column_from = u32::MAX;
        self.sources.set_cut(None);
        self.max_held -= records;
        Ok(())
    }

    /// Runs on the bit-plane kernel if it models this network and nothing needs the general
    /// kernel's registers (invariant checks off, before the first cycle). Returns whether it
    /// does. For runs whose only output is the report.
    pub fn prefer_bit_planes(&mut self) -> bool {
        self.planes.is_some() || self.set_bit_planes(true).is_ok()
    }

    /// Runs the cycles on `kernel`: [`Kernel::Auto`] as [`Simulation::prefer_bit_planes`],
    /// [`Kernel::BitPlanes`] as [`Simulation::set_bit_planes`] (refused where it does not
    /// model the network).
    pub fn set_kernel(&mut self, kernel: Kernel) -> Result<()> {
        match kernel {
            Kernel::Auto => {
                self.prefer_bit_planes();
                Ok(())
            }
            Kernel::General => self.set_bit_planes(false),
            Kernel::BitPlanes => self.set_bit_planes(true),
        }
    }

    /// Threads that run the cycles ([`Simulation::set_threads`]: fewer than asked where the
    /// network is small, and two at most on the bit-plane kernel, whose [`Simulation::step`]
    /// runs on this thread).
    pub fn threads_running(&self) -> usize {
        self.gang.as_ref().map_or(1, Gang::threads)
    }

    /// The mean round trip of a cache line between the cores of this thread and the first
    /// other thread that runs the cycles, over up to `trips` ([`Gang::round_trip`]): the floor
    /// under every exchange between them (a pipelined cycle of the bit-plane kernel makes
    /// two). None on one thread, for no trips, and with more threads than cores.
    pub fn threads_round_trip(&mut self, trips: u32) -> Option<std::time::Duration> {
        self.gang.as_mut()?.round_trip(trips)
    }

    /// Whether the bit-plane kernel runs the cycles ([`Simulation::set_bit_planes`]).
    pub fn bit_planes(&self) -> bool {
        self.planes.is_some()
    }

    /// Flits held by the network's registers.
    pub fn flits_in_network(&self) -> u64 {
        match &self.planes {
            Some(p) => p.flits_in_network(),
            None => self.fabric.flits_in_network(),
        }
    }

    /// Flits carried per link so far.
    pub fn link_flits(&self) -> std::borrow::Cow<'_, [u64]> {
        match &self.planes {
            Some(p) => p.link_flits().into(),
            None => self.fabric.link_flits().into(),
        }
    }

    /// Every header held by a register, with the links it crossed.
    pub(super) fn stored_headers(&self) -> Box<dyn Iterator<Item = crate::flit::FlitSlot> + '_> {
        match &self.planes {
            Some(p) => Box::new(p.stored_headers()),
            None => Box::new(self.fabric.stored_headers()),
        }
    }

    /// One cycle on the bit-plane kernel, its messages admitted, booked and retired: the
    /// levels from the last, each committing as it goes, then the sources decide from level
    /// 0's registers and write into them ([`Simulation::send_and_book`]; on two threads,
    /// [`Simulation::run`] runs cycles as a pipeline of levels instead). A worm's record
    /// starts where the source writes its header, and the books see its head and tail
    /// arrive (the tail's arrival is the worm's `gone`); the body flits that reach their
    /// destination are counted here.
    pub(super) fn tick_planes(&mut self, cycle: u64) {
        self.admit_due(cycle);
        let Some(mut planes) = self.planes.take() else {
            return;
        };
        self.transfers.clear();
        // Its one run holds only transfers the books read; crossings inside the network
        // count.
        let moved = planes.cycle(self.transfers.only_run());
        let body_arrivals = planes.take_body_arrivals();
        self.send_and_book(cycle, &mut *planes, moved, body_arrivals);
        self.planes = Some(planes);
    }

    /// The end of a cycle on the bit-plane kernel, its levels run (`moved`: a flit left a
    /// register; `body_arrivals`: body flits reached their destination's register): the
    /// sources write level 0 (`zero`), each worm booked as it starts, the records beside the
    /// headers the sources read; then the books take the edge, and the finished messages
    /// retire.
    pub(super) fn send_and_book(
        &mut self,
        cycle: u64,
        zero: &mut impl LevelZero,
        moved: bool,
        body_arrivals: u64,
    ) {
        let parking = self.messages.parking();
        let (headers, mut starts) = self.messages.injection();
        let mut injection = zero.injection(headers);
        let retried = &mut self.counts.retried;
        // (Where chunks of records are put aside, a worm that starts may take one: a check
        // that the usual run does not make.)
        macro_rules! send {
            ($parking:literal) => {
                self.sources.send_into(&mut injection, |start| {
                    *retried += u64::from(starts.start::<$parking>(start.msg, cycle));
                    if let Some(next) = start.next {
                        starts.prefetch(next);
                    }
                })
            };
        }
        match parking {
            true => send!(true),
            false => send!(false),
        }
        // A body flit written moves as a crossing does (the watchdog's progress).
        self.transfers
            .add_moved(u64::from(moved) + injection.written);
        self.counts.flits_delivered += body_arrivals;
        self.account(cycle);
        self.messages.retire(self.transfers.bookable().flatten());
    }
}
