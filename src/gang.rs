//! A gang of threads that runs the parallel phases of one simulation together: between
//! phases its helpers spin instead of sleeping, so a phase of a few microseconds starts on
//! every thread at once (a thread pool whose idle workers sleep pays a wake-up per phase,
//! which is comparable to the phase itself on this kind of network).
//!
//! Helpers poll for a millisecond after a phase (spinning, then yielding their core once
//! every 64 polls), then park: an idle gang costs no CPU. With more threads than cores they
//! park after the spin, leaving the cores to the threads with work.
//! A phase is a closure called once on every thread with the thread's index; the caller
//! takes index 0 and returns when every thread has returned. Phases take the gang mutably,
//! so one runs at a time and none starts another.

use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A phase, with its lifetime erased (see [`Gang::broadcast`]).
type Job = &'static (dyn Fn(usize) + Sync);

/// What the caller and the helpers share, on cache lines of its own: helpers poll it while
/// the caller works, and a line shared with the caller's data would bounce between cores.
#[repr(align(128))]
struct State {
    /// The current phase; written by the caller only while every helper waits for the next
    /// epoch.
    job: UnsafeCell<Option<Job>>,
    /// Phases started.
    epoch: AtomicU64,
    /// Helpers that finished the current phase.
    done: AtomicUsize,
    /// A helper's phase panicked.
    panicked: AtomicBool,
    stop: AtomicBool,
    /// The CPU the caller ran on as it published the current phase (`usize::MAX`: unknown;
    /// written only where the gang has a core per thread, [`move_off`]).
    caller_cpu: AtomicUsize,
    /// The gang has no more threads than the machine has cores.
    spare_cores: bool,
}

// SAFETY: `job` is written by the caller before it publishes a new epoch (release) and read by
// helpers after they see it (acquire); the caller writes it again only after every helper has
// reported the phase done (acquire on `done`). There is one caller at a time: a phase needs
// the gang mutably.
unsafe impl Sync for State {}

/// How long a waiting thread spins before it starts to yield its core once every 64 polls:
/// about the gap between two phases of a cycle (a helper may be off its core when there are
/// more threads than cores).
const SPIN_FOR: Duration = Duration::from_micros(20);

/// How long a helper keeps polling (yielding its core once every 64 polls after
/// [`SPIN_FOR`]) before it parks, when the gang has a core per thread. It spans a cycle's
/// serial work between two phases (tens of microseconds of admissions and booking): a helper
/// parked there costs the next phase a wake-up, which on a virtual machine is itself tens of
/// microseconds. Measured on 2 cores (1024-input butterfly, 5000 cycles, 2 threads): parking
/// after [`SPIN_FOR`], the first phase of a cycle waited 36 µs on average for the helper, and
/// the run took 1.50–1.56 s; polling for this long, 1.31–1.38 s.
const PARK_AFTER: Duration = Duration::from_millis(1);

/// A fixed set of threads (the caller and `threads − 1` helpers).
pub struct Gang {
    state: Arc<State>,
    helpers: Vec<JoinHandle<()>>,
}

impl Gang {
    /// Starts `threads − 1` helper threads (none for one thread).
    pub fn new(threads: usize) -> std::io::Result<Gang> {
        // With more threads than cores, a polling helper takes a core from a thread with work.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spare_cores = threads <= cores;
        let state = Arc::new(State {
            job: UnsafeCell::new(None),
            epoch: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            caller_cpu: AtomicUsize::new(usize::MAX),
            spare_cores,
        });
        let mut gang = Gang {
            state,
            helpers: Vec::new(),
        };
        let park_after = match spare_cores {
            true => PARK_AFTER,
            false => SPIN_FOR,
        };
        for index in 1..threads.max(1) {
            let state = Arc::clone(&gang.state);
            let handle = std::thread::Builder::new()
                .name(format!("flitforge-gang-{index}"))
                .spawn(move || helper(&state, index, park_after))?;
            gang.helpers.push(handle);
        }
        Ok(gang)
    }

    /// Threads of the gang, the caller's included.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Calls `phase(k)` on thread `k` of the gang for every `k`, the caller taking 0, and
    /// returns when all have returned. A panic in any of them is raised here.
    pub fn broadcast<F: Fn(usize) + Sync>(&mut self, phase: &F) {
        if self.helpers.is_empty() {
            return phase(0);
        }
        let job: &(dyn Fn(usize) + Sync) = phase;
        // SAFETY: the helpers call `job` only within this call: it returns after every helper
        // has reported the phase done, and clears the slot before `phase`'s borrow ends.
        let job: Job = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job) };
        let state = &*self.state;
        // SAFETY: every helper waits for the next epoch (the last phase's `done` count is
        // complete), so nothing reads the slot now.
        unsafe { *state.job.get() = Some(job) };
        state.done.store(0, Ordering::Relaxed);
        if state.spare_cores {
            state
                .caller_cpu
                .store(current_cpu().unwrap_or(usize::MAX), Ordering::Relaxed);
        }
        state.epoch.fetch_add(1, Ordering::Release);
        for h in &self.helpers {
            h.thread().unpark();
        }
        let own = catch_unwind(AssertUnwindSafe(|| phase(0)));
        // A helper may be off its core (more threads than cores): then give it the core.
        let mut backoff = Backoff::default();
        while state.done.load(Ordering::Acquire) < self.helpers.len() {
            backoff.pause();
        }
        // SAFETY: every helper is done with the phase.
        unsafe { *state.job.get() = None };
        let helper_panicked = state.panicked.swap(false, Ordering::Relaxed);
        if let Err(panic) = own {
            resume_unwind(panic);
        }
        if helper_panicked {
            panic!("a simulation thread panicked");
        }
    }

    /// The mean time a cache line takes from the caller's core to the first helper's and back,
    /// over up to `trips` round trips after as many untimed, within [`ROUND_TRIP_BUDGET`]:
    /// the least that any exchange between two of the gang's threads costs (a pipelined cycle
    /// makes two, [`crate::switch::planes`]). None for a gang of one thread, for no trips, and
    /// where the gang has more threads than cores (two threads on one core would time the
    /// switches between them). On a virtual machine it changes as the host moves its CPUs.
    pub fn round_trip(&mut self, trips: u32) -> Option<Duration> {
        if self.helpers.is_empty() || trips == 0 || !self.state.spare_cores {
            return None;
        }
        let ball = Ball(AtomicU64::new(0));
        // The trips timed, and their nanoseconds (the caller's).
        let timed = AtomicU64::new(0);
        let nanos = AtomicU64::new(0);
        let warm = u64::from(trips);
        self.broadcast(&|k| match k {
            // The caller serves the ball as 2i + 1 and the helper returns it as 2i + 2, until
            // the caller sends [`STOP`].
            0 => {
                let began = Instant::now();
                let mut start = began;
                let mut i = 0;
                while i < 2 * warm {
                    if i == warm {
                        start = Instant::now();
                    }
                    ball.0.store(2 * i + 1, Ordering::Release);
                    ball.wait_for(2 * i + 2);
                    i += 1;
                    if i.is_multiple_of(64) && began.elapsed() > ROUND_TRIP_BUDGET {
                        break;
                    }
                }
                // Out of time before the timed trips: every trip counts.
                let (from, trips) = match i > warm {
                    true => (start, i - warm),
                    false => (began, i),
                };
                nanos.store(from.elapsed().as_nanos() as u64, Ordering::Relaxed);
                timed.store(trips, Ordering::Relaxed);
                ball.0.store(STOP, Ordering::Release);
            }
            1 => {
                let mut i = 0;
                while ball.wait_for(2 * i + 1) {
                    ball.0.store(2 * i + 2, Ordering::Release);
                    i += 1;
                }
            }
            _ => {}
        });
        let timed = timed.into_inner();
        (timed > 0).then(|| Duration::from_nanos(nanos.into_inner() / timed))
    }

    /// Runs `f` on every task, thread `k` taking tasks `k`, `k + threads`, ..., and returns
    /// the results in task order.
    pub fn map<T: Send, R: Send>(&mut self, tasks: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
        let slots: Vec<Slot<T, R>> = tasks.into_iter().map(Slot::new).collect();
        let threads = self.threads();
        self.broadcast(&|k| {
            for slot in slots.iter().skip(k).step_by(threads) {
                // SAFETY: slot `i` is touched by thread `i % threads` alone during the phase.
                unsafe { slot.run(&f) };
            }
        });
        slots.into_iter().map(Slot::result).collect()
    }
}

/// A task of [`Gang::map`] and then its result: written by the one thread whose index the
/// task's position gives, read by the caller after the phase.
struct Slot<T, R>(UnsafeCell<Result<R, Option<T>>>);

// SAFETY: a slot is accessed by one thread at a time: during a phase only by the thread that
// owns its index, after it (the phase's end is an acquire of every helper's release) only by
// the caller.
unsafe impl<T: Send, R: Send> Sync for Slot<T, R> {}

impl<T, R> Slot<T, R> {
    fn new(task: T) -> Self {
        Slot(UnsafeCell::new(Err(Some(task))))
    }

    /// Runs the task.
    ///
    /// # Safety
    /// No other thread accesses the slot meanwhile.
    unsafe fn run(&self, f: &impl Fn(T) -> R) {
        // SAFETY: exclusive access, by the contract.
        let cell = unsafe { &mut *self.0.get() };
        if let Err(task) = cell
            && let Some(task) = task.take()
        {
            *cell = Ok(f(task));
        }
    }

    fn result(self) -> R {
        match self.0.into_inner() {
            Ok(r) => r,
            Err(_) => panic!("every task ran"),
        }
    }
}

impl Drop for Gang {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Release);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl std::fmt::Debug for Gang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gang({} threads)", self.threads())
    }
}

/// The counter [`Gang::round_trip`]'s two threads pass between them, on a line of its own.
#[repr(align(128))]
struct Ball(AtomicU64);

/// The ball's value that ends [`Gang::round_trip`].
const STOP: u64 = u64::MAX;

/// Most time [`Gang::round_trip`] takes: where a trip is slow (the other thread off its
/// core), fewer trips are timed.
pub const ROUND_TRIP_BUDGET: Duration = Duration::from_millis(20);

impl Ball {
    /// Polls until the ball reads `value` (true) or [`STOP`] (false) ([`Backoff`]: both
    /// threads may share a core).
    fn wait_for(&self, value: u64) -> bool {
        let mut backoff = Backoff::default();
        loop {
            match self.0.load(Ordering::Acquire) {
                v if v == value => return true,
                STOP => return false,
                _ => backoff.pause(),
            }
        }
    }
}

/// The pause between two polls of a value another thread writes: a spin, and once the wait
/// has lasted [`SPIN_FOR`], a yield of the core once every 64 polls (the other thread may be
/// off its core: more threads than cores, or a busy machine). The clock is read once in 64
/// polls, from the 64th on where no start is given ([`Backoff::since`]).
#[derive(Default)]
pub(crate) struct Backoff {
    polls: u32,
    since: Option<Instant>,
}

impl Backoff {
    /// A wait that began at `start`.
    pub(crate) fn since(start: Instant) -> Self {
        Backoff {
            polls: 0,
            since: Some(start),
        }
    }

    /// One poll's pause.
    #[inline]
    pub(crate) fn pause(&mut self) {
        self.polls = self.polls.wrapping_add(1);
        match self.polls.is_multiple_of(64)
            && self.since.get_or_insert_with(Instant::now).elapsed() > SPIN_FOR
        {
            true => std::thread::yield_now(),
            false => std::hint::spin_loop(),
        }
    }
}

/// A helper's life: wait for a phase (spin, then poll yielding, and after `park_after`
/// park), run its share, report. Where the gang has a core per thread, a helper that gave up
/// its core while it waited (one that only spun ran beside the caller) first leaves the
/// caller's CPU if it finds itself there ([`move_off`]).
fn helper(state: &State, index: usize, park_after: Duration) {
    let mut seen = 0;
    loop {
        let waiting = Instant::now();
        let mut spins = 0u32;
        let mut yielded = false;
        loop {
            let epoch = state.epoch.load(Ordering::Acquire);
            if epoch != seen {
                seen = epoch;
                break;
            }
            if state.stop.load(Ordering::Acquire) {
                return;
            }
            spins = spins.wrapping_add(1);
            // The clock is read once in 64 spins.
            if !spins.is_multiple_of(64) {
                std::hint::spin_loop();
                continue;
            }
            let waited = waiting.elapsed();
            if waited < SPIN_FOR {
                std::hint::spin_loop();
            } else if waited < park_after {
                std::thread::yield_now();
                yielded = true;
            } else {
                // Woken by the next phase (or the gang's end); a spurious wake-up loops.
                std::thread::park();
                yielded = true;
            }
        }
        if state.spare_cores && (yielded || waiting.elapsed() > SPIN_FOR) {
            move_off(state.caller_cpu.load(Ordering::Relaxed));
        }
        // SAFETY: the caller wrote the slot before publishing the epoch just seen, and keeps
        // it until this helper reports done.
        let job = unsafe { *state.job.get() };
        if let Some(job) = job
            && catch_unwind(AssertUnwindSafe(|| job(index))).is_err()
        {
            state.panicked.store(true, Ordering::Relaxed);
        }
        state.done.fetch_add(1, Ordering::Release);
    }
}

/// The CPU this thread runs on, where the system says (Linux only).
fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    return nix::sched::sched_getcpu().ok();
    #[cfg(not(target_os = "linux"))]
    None
}

/// Moves this thread off `cpu` if it runs there and may run elsewhere, leaving where it may
/// run as it was (Linux only). Linux tends to wake a thread on its waker's CPU: a helper
/// woken by the caller then shares the caller's core, each running only while the other
/// yields, until the scheduler balances them out (measured on 2 cores, pipelined levels of
/// a 1024-input butterfly: about 60 µs a cycle instead of 16, for the first 10–80 ms of a
/// run). Aimed at a gang of two: the kernel picks the CPU it moves to among the others, not
/// by their load, so with more helpers two of them may still share one.
#[cfg(target_os = "linux")]
fn move_off(cpu: usize) {
    use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
    use nix::unistd::Pid;
    if current_cpu() != Some(cpu) {
        return;
    }
    let me = Pid::from_raw(0);
    let Ok(allowed) = sched_getaffinity(me) else {
        return;
    };
    let mut elsewhere = allowed;
    let others = (0..CpuSet::count()).any(|c| c != cpu && allowed.is_set(c).unwrap_or(false));
    if !others || elsewhere.unset(cpu).is_err() {
        return;
    }
    // Leaving its own CPU out of a thread's set moves it at once; the set then comes back
    // whole, and the thread stays where it went.
    if sched_setaffinity(me, &elsewhere).is_ok() {
        let _ = sched_setaffinity(me, &allowed);
    }
}

#[cfg(not(target_os = "linux"))]
fn move_off(_: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_runs_every_phase_and_results_keep_task_order() {
        let mut gang = Gang::new(3).unwrap();
        assert_eq!(gang.threads(), 3);
        for round in 0..200u64 {
            let hits = AtomicU64::new(0);
            gang.broadcast(&|k| {
                hits.fetch_add(1 << (8 * k), Ordering::Relaxed);
            });
            assert_eq!(hits.into_inner(), 0x01_01_01, "round {round}");
            let squares = gang.map((0..7u64).collect(), |x| x * x + round);
            assert_eq!(squares, (0..7).map(|x| x * x + round).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_panicking_phase_is_raised_to_the_caller_and_the_gang_goes_on() {
        let mut gang = Gang::new(2).unwrap();
        for fails in [vec![1], vec![0], vec![0, 1]] {
            let r = catch_unwind(AssertUnwindSafe(|| {
                gang.broadcast(&|k| assert!(!fails.contains(&k), "thread {k} fails"));
            }));
            assert!(r.is_err(), "{fails:?}");
            // The next phase runs clean.
            assert_eq!(gang.map(vec![1, 2], |x| x + 1), vec![2, 3]);
        }
    }

    #[test]
    fn parked_helpers_wake_for_the_next_phase() {
        // A missed wake-up would hang the phase: the test fails instead after a while.
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut gang = Gang::new(3).unwrap();
            for pause in [Duration::ZERO, SPIN_FOR * 2, PARK_AFTER * 3, PARK_AFTER * 3] {
                std::thread::sleep(pause);
                let hits = AtomicU64::new(0);
                gang.broadcast(&|_| {
                    hits.fetch_add(1, Ordering::Relaxed);
                });
                assert_eq!(hits.into_inner(), 3, "after {pause:?}");
            }
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(Duration::from_secs(30))
            .expect("every phase ran, helpers parked or not");
    }

    #[test]
    fn the_round_trip_passes_the_ball_between_the_first_two_threads() {
        assert_eq!(Gang::new(1).unwrap().round_trip(100), None);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for threads in [2, 3] {
            let mut gang = Gang::new(threads).unwrap();
            let started = Instant::now();
            // With more threads than cores, none (a third thread sits the volley out).
            match gang.round_trip(1000) {
                Some(trip) => {
                    assert!(threads <= cores);
                    assert!(
                        trip > Duration::ZERO && trip < ROUND_TRIP_BUDGET,
                        "{trip:?}"
                    );
                }
                None => assert!(threads > cores, "{threads} threads, {cores} cores"),
            }
            assert_eq!(gang.round_trip(0), None);
            // Within its budget, however busy the machine (the phase's start and end aside).
            assert!(started.elapsed() < ROUND_TRIP_BUDGET * 50);
            assert_eq!(gang.map(vec![1, 2, 3], |x| x * 2), vec![2, 4, 6]);
        }
    }

    #[test]
    fn one_thread_runs_on_the_caller() {
        let mut gang = Gang::new(1).unwrap();
        let caller = std::thread::current().id();
        gang.broadcast(&|k| {
            assert_eq!(k, 0);
            assert_eq!(std::thread::current().id(), caller);
        });
    }
}
