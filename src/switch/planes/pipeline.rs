//! A bit-plane run on two threads as a pipeline of levels ([`Planes::pipelined`]). A cycle
//! settles from the last level down (each level reads the one it feeds past its
//! departures), and a level's registers change only at its own evaluation and at the
//! evaluation of the level below it (its arrivals). So with the levels from `m` up on one
//! thread (the upper levels) and those below `m` on the other (the lower levels, with the
//! sources and the books), only level `m` is touched by both, and the two threads need
//! each other only there:
//! - level `m − 1` of cycle `t` reads level `m` past its departures of cycle `t`: the
//!   lower thread waits for the upper one's level `m` of cycle `t`;
//! - level `m` of cycle `t + 1` holds the arrivals of cycle `t` from level `m − 1`: the upper
//!   thread waits for the lower one's level `m − 1` of cycle `t`.
//!
//! Everything else overlaps: while the lower thread runs the rest of cycle `t` (the levels
//! below `m − 1`, the sources, the admissions and the books), the upper one runs the levels
//! above `m` of cycle `t + 1`. The registers after each cycle are those of a run on one
//! thread, and the books get the same transfers in the same order: the heads' and tails'
//! arrivals into the last level, which only the upper thread's levels make, handed over per
//! cycle ([`Handoff`]).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::below::{Below, Leaving, Next, Sink};
use super::links::Counters;
use super::part::{
    Landings, Shape, Zero, cycle_level, deliver, evaluate_down, evaluate_into, landing, next_of,
};
use super::registers::{Level, Slot};
use super::schedule::Batch;
use super::{Headers, Injection, Planes};
use crate::flit::FlitSlot;
use crate::gang::{Backoff, Gang};
use crate::switch::{Transfer, TransferKind};

/// Handoffs in flight: the upper thread's levels may run some cycles ahead of its level m
/// ([`Upper::run`]), whose handoff the lower thread reads; a level more than `RING − 2`
/// cycles ahead of the lower thread waits.
const RING: usize = 16;

/// What the upper levels did in one cycle, for the books (on lines of its own: the upper
/// thread writes one while the lower thread reads another).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Handoff {
    /// The heads' and tails' arrivals into the last level.
    events: Vec<Landed>,
    /// Body flits that entered the last level.
    body_arrivals: u64,
    /// Flits that left the network from the last level.
    left: u64,
    /// Whether a flit left a register.
    moved: bool,
}

/// A head's or tail's arrival into the last level as the upper thread hands it over: half
/// the bytes of its [`Transfer`], which the lower thread rebuilds ([`Landed::transfer`]).
/// Measured (1024 inputs, 1 VC, one-flit messages, Bernoulli 0.3): some 300 a cycle, whose
/// lines the upper thread writes and the lower thread reads; at half the bytes, two threads
/// ran 1–3 % faster.
#[derive(Clone, Copy, Debug)]
pub(super) struct Landed {
    msg: u32,
    from: u32,
    /// The input VC it entered, and (bit 31) whether it is a head.
    to_head: u32,
}

/// Bit 31 of [`Landed::to_head`].
const HEAD: u32 = 1 << 31;

impl Landings for Vec<Landed> {
    #[inline(always)]
    fn landed(&mut self, flit: FlitSlot, head: bool, from: u32, to: u32) {
        debug_assert!(to < HEAD, "input VCs are numbered below 2^31");
        self.push(Landed {
            msg: flit.msg,
            from,
            to_head: to | (u32::from(head) * HEAD),
        });
    }
}

impl Landed {
    /// The books' transfer, in a network of `s`'s shape: a head has crossed every link
    /// before the last level, a tail is its message's last flit.
    #[inline(always)]
    fn transfer(&self, s: &Shape) -> Transfer {
        let head = u16::from(self.to_head & HEAD != 0);
        Transfer {
            flit: landing(self.msg, head, s.flits, s.log_n as u16),
            from: self.from,
            to: self.to_head & !HEAD,
            kind: TransferKind::Arrived,
        }
    }
}

/// What the two threads share: the handoffs, and how far each has gone.
#[repr(align(128))]
struct Shared {
    ring: [UnsafeCell<Handoff>; RING],
    /// Cycles of the batch whose level `m − 1` has committed (the lower thread's), on a
    /// line of its own (as the next two: one thread polls it while the other writes
    /// handoffs).
    lower_done: Padded<AtomicU64>,
    /// Cycles of the batch whose level `m` has committed (the upper thread's).
    upper_done: Padded<AtomicU64>,
    /// Either thread has stopped: the other stops waiting.
    stop: Padded<AtomicBool>,
}

#[repr(align(128))]
struct Padded<T>(T);

// SAFETY: handoff `c % RING` is the upper thread's from its delivery of cycle `c` (which
// waits until the lower thread has run level `m − 1` of cycle `c − RING + 1`, after its books
// of cycle `c − RING`, the handoff's last use) until its level `m` has run cycle `c`
// (published with release); then the lower thread's (after an acquire of that), for its
// books of cycle `c`, which come before it runs level `m − 1` of cycle `c + 1`.
unsafe impl Sync for Shared {}

/// Level `m`, which both threads write in turn ([`Shared`]'s counters say whose turn it is),
/// and the headers the lower thread's level `m − 1` sent into it in its last cycle: their
/// slots' indices and slots, which the upper thread writes into level `m` before it runs
/// it (a list the lower thread writes in order and the upper one reads in order, rather than
/// a line of level `m`'s slots per header moving between the cores).
#[derive(Clone, Copy)]
struct Boundary {
    level: *mut Level,
    crossings: *mut Vec<(u32, Slot)>,
}

// SAFETY: the level is only reached through [`Lower::cycle`] and [`Upper::run`], each
// within its turn; the `Planes` it points into outlive both threads' work.
unsafe impl Send for Boundary {}

/// Level `m` as the lower thread's level `m − 1` reads and writes it: its planes directly,
/// its headers' slots through the crossings list ([`Boundary`]).
struct Handing<'a> {
    next: Next<'a>,
    crossings: &'a mut Vec<(u32, Slot)>,
}

impl Below for Handing<'_> {
    #[inline(always)]
    fn ready_idle(&self, v: usize, w: usize) -> [(u64, u64); 2] {
        self.next.ready_idle(v, w)
    }
}

impl Sink for Handing<'_> {
    fn last(&self) -> bool {
        // Level m is below the last.
        false
    }

    #[inline(always)]
    fn enter(&mut self, v: usize, w: usize, leaving: &Leaving) {
        self.next.enter(v, w, leaving);
    }

    #[inline(always)]
    fn header(&mut self, v: usize, row: usize, o: usize, slot: Slot) {
        let (j, row) = self.next.target(v, row, o);
        self.crossings.push(((j * self.next.n + row) as u32, slot));
    }

    fn vc(&self, _: usize, _: usize, _: usize) -> u32 {
        unreachable!("only a flit entering the last level is numbered")
    }
}

/// Bytes a pipelined run takes beside the registers (B = `b`, `n` switches a level): the
/// list of the headers crossing into level `m`, and the ring's lists of arrivals into the
/// last level, each at most one per register of a level (kept from batch to batch).
pub(super) fn bytes(b: usize, n: usize) -> u64 {
    let entries = 2 * b * n;
    (entries * (std::mem::size_of::<(u32, Slot)>() + RING * std::mem::size_of::<Landed>())) as u64
}

/// Writes the headers that level `m − 1` sent into `level` (level `m`) into its worm
/// slots, emptying the list ([`Boundary`]).
fn take_crossings(crossings: &mut Vec<(u32, Slot)>, level: &mut Level) {
    for (at, slot) in crossings.drain(..) {
        level.slot[at as usize] = slot;
    }
}

/// Waits until `counter` reaches `at_least`, adding to `waited` the nanoseconds it waited;
/// false if `stop` is set first.
fn wait(counter: &AtomicU64, at_least: u64, stop: &AtomicBool, waited: &mut u64) -> bool {
    if counter.load(Ordering::Acquire) >= at_least {
        return true;
    }
    let start = Instant::now();
    let mut backoff = Backoff::since(start);
    loop {
        if counter.load(Ordering::Acquire) >= at_least {
            *waited += start.elapsed().as_nanos() as u64;
            return true;
        }
        if stop.load(Ordering::Acquire) {
            // The other thread may have reached `at_least` just before it stopped.
            return counter.load(Ordering::Acquire) >= at_least;
        }
        backoff.pause();
    }
}

/// Sets `stop` when dropped: a thread that ends, or panics, releases the other's wait.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The lower levels of a pipelined run ([`Planes::pipelined`]), with the sources' level 0:
/// the calling thread's, cycle by cycle.
pub(crate) struct Lower<'a> {
    /// A copy: the calling thread writes the flit count beside the part's own.
    shape: Shape,
    /// Levels `0..m`.
    levels: &'a mut [Level],
    boundary: Boundary,
    links: Counters<'a>,
    held: &'a mut u64,
    shared: &'a Shared,
    /// Cycles of the batch run so far.
    cycle: u64,
    /// Never written: the lower levels feed no last level.
    no_events: Vec<Transfer>,
    /// Nanoseconds waited for the upper thread.
    waited: u64,
}

/// What the upper levels did in a cycle ([`Lower::cycle`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct UpperCycle {
    /// Whether a flit left one of their registers.
    pub(crate) moved: bool,
    /// Body flits that reached their destination's register.
    pub(crate) body_arrivals: u64,
}

impl Lower<'_> {
    /// The lower levels' next cycle, once the upper levels have run theirs: level `m − 1`
    /// into level `m` (then the upper thread may go on), then the levels below it. Returns
    /// whether a flit left one of their registers, and what the upper levels did in the
    /// cycle, their transfers for the books appended to `events`. Then the sources write
    /// level 0 ([`Lower::injection`]).
    pub(crate) fn cycle(&mut self, events: &mut Vec<Transfer>) -> (bool, UpperCycle) {
        let t = self.cycle;
        let shared = self.shared;
        assert!(
            wait(
                &shared.upper_done.0,
                t + 1,
                &shared.stop.0,
                &mut self.waited
            ),
            "the upper levels' thread stopped"
        );
        let m = self.levels.len();
        let s = &self.shape;
        let mut body_arrivals = 0;
        // SAFETY: the upper thread has committed level m of this cycle and taken the
        // crossings, and will touch neither before `lower_done` says this cycle's level
        // m − 1 has committed.
        let (level, crossings) =
            unsafe { (&mut *self.boundary.level, &mut *self.boundary.crossings) };
        let mut handing = Handing {
            next: next_of(s, m - 1, level),
            crossings,
        };
        let mut moved = cycle_level(
            s,
            m - 1,
            &mut self.levels[m - 1],
            &mut handing,
            &mut self.links,
            &mut self.no_events,
            &mut body_arrivals,
        );
        shared.lower_done.0.store(t + 1, Ordering::Release);
        moved |= evaluate_down(
            s,
            self.levels,
            0,
            &mut self.links,
            &mut self.no_events,
            &mut body_arrivals,
        );
        debug_assert!(self.no_events.is_empty() && body_arrivals == 0);
        // SAFETY: the upper thread published cycle t (awaited above) and writes this handoff
        // again only for cycle t + RING ([`Shared`]).
        let handoff = unsafe { &mut *shared.ring[t as usize % RING].get() };
        events.extend(handoff.events.iter().map(|e| e.transfer(s)));
        *self.held -= handoff.left;
        self.cycle += 1;
        let upper = UpperCycle {
            moved: handoff.moved,
            body_arrivals: handoff.body_arrivals,
        };
        (moved, upper)
    }

    /// Level 0's injection VCs as the sources read and write them, each header looking up
    /// its destination in `headers`.
    pub(crate) fn injection<'b>(&'b mut self, headers: Headers<'b>) -> Injection<'b> {
        Zero {
            shape: &self.shape,
            level: &mut self.levels[0],
            held: self.held,
        }
        .injection(headers)
    }

    /// Flits the network holds at the end of the last cycle taken.
    pub(crate) fn flits_in_network(&self) -> u64 {
        *self.held
    }
}

/// The upper levels of a pipelined run: levels `m..`, on the other thread.
struct Upper<'a> {
    /// A copy, on this thread's lines (the calling thread writes the flit count beside the
    /// part's own).
    shape: Shape,
    /// Levels `m + 1..`, the last included.
    levels: &'a mut [Level],
    boundary: Boundary,
    links: Counters<'a>,
    shared: &'a Shared,
}

impl Upper<'_> {
    /// Runs `cycles` cycles of the upper levels, or until the lower thread stops; returns
    /// the cycles begun and the nanoseconds it waited for the lower thread.
    ///
    /// Level by level, not cycle by cycle: level `l` may run cycle `c` once level `l + 1`
    /// has run it (its departures) and level `l − 1` has run cycle `c − 1` (its arrivals),
    /// so a level high above `m` may run several cycles ahead of level `m`, which waits for
    /// the lower thread. This thread runs level `m` as soon as it may (the lower thread
    /// waits for it), else the level whose next cycle is earliest among those that may run:
    /// where the lower thread's work runs long in a cycle, this one runs ahead rather than
    /// wait, and catches up where it runs short.
    fn run(mut self, cycles: u64) -> (u64, u64) {
        let shared = self.shared;
        let mut waited = 0;
        let _stop = StopOnDrop(&shared.stop.0);
        let s = self.shape;
        let last = s.log_n as usize;
        let m = last - self.levels.len();
        // done[l − m]: cycles level l has run (level `last`: delivered).
        let mut done = vec![0u64; last - m + 1];
        let handoff = |c: u64| {
            // SAFETY: cycle c's handoff is this thread's from its delivery (the first of its
            // levels to run cycle c, no sooner than the lower thread is done with the
            // handoff's last cycle) until level m has run cycle c ([`Shared`]).
            unsafe { &mut *shared.ring[c as usize % RING].get() }
        };
        while done[0] < cycles {
            // Read once for both choices below: were the second read newer, this thread
            // could wait for a cycle of the lower thread's that waits for this one's level m.
            let lower_done = shared.lower_done.0.load(Ordering::Acquire);
            // Level m, once the lower thread's level m − 1 has run the cycle before.
            let c = done[0];
            if done[1] > c && lower_done >= c {
                // SAFETY: the lower thread has committed level m − 1 of cycle c − 1 and will
                // not touch level m or the crossings again before `upper_done` says level m
                // has run cycle c.
                let (boundary, crossings) =
                    unsafe { (&mut *self.boundary.level, &mut *self.boundary.crossings) };
                take_crossings(crossings, boundary);
                let h = handoff(c);
                h.moved |= evaluate_into(
                    &s,
                    m,
                    boundary,
                    &mut self.levels[0],
                    &mut self.links,
                    &mut h.events,
                    &mut h.body_arrivals,
                );
                done[0] = c + 1;
                shared.upper_done.0.store(c + 1, Ordering::Release);
                continue;
            }
            // Else the level above it whose next cycle is earliest among those that may run.
            let mut next = None;
            for k in 1..done.len() {
                let c = done[k];
                let may = c < cycles
                    && done[k - 1] >= c
                    && match k == done.len() - 1 {
                        // The delivery opens cycle c's handoff, whose last use was cycle
                        // c − RING: the lower thread has read it once its level m − 1 has
                        // run a cycle more.
                        true => c + 2 <= lower_done + RING as u64,
                        false => done[k + 1] > c,
                    };
                if may && next.is_none_or(|(_, best)| c < best) {
                    next = Some((k, c));
                }
            }
            let Some((k, c)) = next else {
                // Nothing may run until the lower thread runs another cycle.
                if !wait(
                    &shared.lower_done.0,
                    lower_done + 1,
                    &shared.stop.0,
                    &mut waited,
                ) {
                    return (done.iter().copied().max().unwrap_or(0), waited);
                }
                continue;
            };
            let h = handoff(c);
            if k == done.len() - 1 {
                let left = deliver(&mut self.levels[k - 1], s.words);
                h.events.clear();
                (h.left, h.moved, h.body_arrivals) = (left, left > 0, 0);
            } else {
                let (cur, above) = self.levels[k - 1..].split_at_mut(1);
                h.moved |= evaluate_into(
                    &s,
                    m + k,
                    &mut cur[0],
                    &mut above[0],
                    &mut self.links,
                    &mut h.events,
                    &mut h.body_arrivals,
                );
            }
            done[k] = c + 1;
        }
        (done.iter().copied().max().unwrap_or(0), waited)
    }
}

/// Of a pipelined batch ([`Planes::pipelined`]): what the lower thread returned, and
/// whether the upper thread changed a register in a cycle the lower thread did not run (its
/// levels run up to `RING − 2` cycles ahead; where the network is empty, as at every end but
/// an error's, those cycles change nothing).
pub(crate) struct Pipelined<R> {
    pub(crate) result: R,
    pub(crate) overran: bool,
}

impl Planes {
    /// Runs up to `cycles` cycles (at most [`Planes::batch_room`]) on `gang`'s two threads
    /// as a pipeline ([`super::pipeline`]): levels `m..` on the other thread, and on this one
    /// `run`, which runs the cycles one by one ([`Lower::cycle`], [`Lower::injection`]) and
    /// may stop early. Then the next batch's size and split follow from this one's
    /// ([`super::schedule::Schedule::after_batch`]).
    pub(crate) fn pipelined<R: Send>(
        &mut self,
        gang: &mut Gang,
        cycles: u64,
        run: impl FnOnce(&mut Lower<'_>) -> R + Send,
    ) -> Pipelined<R> {
        let start = Instant::now();
        let m = self.schedule.split();
        assert_eq!(gang.threads(), 2, "a pipeline of two threads");
        let part = &mut self.part;
        let s = &part.shape;
        assert!(
            (1..s.log_n as usize).contains(&m) && cycles <= u64::from(part.links.room()),
            "a split between levels 1 and log n − 1, and a batch within the link counters' room"
        );
        let top = part.levels.last().expect("a network has levels");
        assert!(
            u64::from(top.vc_base) + (top.nv * s.n) as u64 <= u64::from(HEAD),
            "input VCs numbered below 2^31, as the handoffs write them ([`Landed`])"
        );
        // The lists of arrivals of the last batch, cleared, kept for their room.
        let mut kept = std::mem::take(&mut self.landings).into_iter();
        let mut shared = Shared {
            ring: std::array::from_fn(|_| {
                UnsafeCell::new(Handoff {
                    events: kept.next().unwrap_or_default(),
                    ..Handoff::default()
                })
            }),
            lower_done: Padded(AtomicU64::new(0)),
            upper_done: Padded(AtomicU64::new(0)),
            stop: Padded(AtomicBool::new(false)),
        };
        let (lower_links, upper_links) = part.links.split_at_level(m);
        let (lower_levels, upper_levels) = part.levels.split_at_mut(m);
        let (boundary, upper_levels) = upper_levels.split_at_mut(1);
        let crossings = &mut self.crossings;
        let boundary = Boundary {
            level: &mut boundary[0] as *mut Level,
            crossings: crossings as *mut Vec<(u32, Slot)>,
        };
        enum Task<'a, F> {
            Lower(Lower<'a>, F),
            Upper(Upper<'a>, u64),
        }
        let tasks = vec![
            Task::Lower(
                Lower {
                    shape: *s,
                    levels: lower_levels,
                    boundary,
                    links: lower_links,
                    held: &mut part.held,
                    shared: &shared,
                    cycle: 0,
                    no_events: Vec::new(),
                    waited: 0,
                },
                run,
            ),
            Task::Upper(
                Upper {
                    shape: *s,
                    levels: upper_levels,
                    boundary,
                    links: upper_links,
                    shared: &shared,
                },
                cycles,
            ),
        ];
        let mut done = gang
            .map(tasks, |task| match task {
                Task::Lower(mut lower, run) => {
                    let _stop = StopOnDrop(&shared.stop.0);
                    let r = run(&mut lower);
                    (Some(r), (lower.cycle, lower.waited))
                }
                Task::Upper(upper, cycles) => (None, upper.run(cycles)),
            })
            .into_iter();
        let (Some((Some(result), (ran, lower_waited))), Some((None, (begun, upper_waited)))) =
            (done.next(), done.next())
        else {
            unreachable!("the lower thread's result, then the upper one's")
        };
        let overran = (ran..begun).any(|t| {
            let h = shared.ring[t as usize % RING].get_mut();
            h.moved || h.left > 0 || !h.events.is_empty()
        });
        // The headers that entered level m in the last cycle name their worms there.
        take_crossings(crossings, &mut part.levels[m]);
        part.links.end_cycles(ran as u32);
        let log_n = part.shape.log_n as usize;
        self.landings = shared
            .ring
            .into_iter()
            .map(|h| {
                let mut events = h.into_inner().events;
                events.clear();
                events
            })
            .collect();
        let batch = Batch {
            asked: cycles,
            ran,
            elapsed: start.elapsed().as_nanos() as u64,
            lower_waited,
            upper_waited,
        };
        self.schedule.after_batch(batch, log_n);
        Pipelined { result, overran }
    }

    /// Pins the first of the upper thread's levels (clamped to `1..log n − 1`; batches no
    /// longer move it as the threads wait, [`Planes::pipelined`]).
    pub fn pin_split(&mut self, m: usize) {
        self.schedule.pin(m, self.part.shape.log_n as usize);
    }

    /// Most cycles the next pipelined batch may run ([`Planes::pipelined`]): some tens of
    /// milliseconds at the last batch's speed, within the link counters' room before their
    /// flush.
    pub fn batch_room(&self) -> u64 {
        self.schedule.batch().min(u64::from(self.part.links.room()))
    }
}
