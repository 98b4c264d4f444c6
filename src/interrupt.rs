//! Clean interrupts. SIGINT and SIGTERM only raise a flag ([`install`]); long work polls it
//! ([`check`]) and unwinds with [`Error::Interrupted`], so temporary files and directories are
//! removed by their guards, a file being written never replaces the one it was to replace, and
//! an experiment saves the trials it finished. External tools run in their own process group
//! and are killed with it ([`crate::tools::run`]). A second signal ends the process at once.

use crate::error::{Error, Result};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The signal received (its number), 0 if none.
static RECEIVED: AtomicUsize = AtomicUsize::new(0);
/// The process groups of the external tools running now ([`Group`]).
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// SIGINT's number.
pub const SIGINT: i32 = signal_hook::consts::SIGINT;
/// SIGTERM's number.
pub const SIGTERM: i32 = signal_hook::consts::SIGTERM;

/// Makes SIGINT and SIGTERM set the flag [`check`] reads (a thread waits for them); a second
/// one kills the tools' process groups and exits with 128 + its number at once.
pub fn install() -> Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| Error::io("signal handlers", e))?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if RECEIVED.swap(signal as usize, Ordering::SeqCst) != 0 {
                    kill_groups();
                    std::process::exit(128 + signal);
                }
            }
        })
        .map_err(|e| Error::io("signal thread", e))?;
    Ok(())
}

/// A running tool's process group, known to the signal thread until dropped.
pub struct Group(i32);

impl Group {
    pub fn register(pgid: i32) -> Self {
        if let Ok(mut g) = GROUPS.lock() {
            g.push(pgid);
        }
        Group(pgid)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(mut g) = GROUPS.lock() {
            g.retain(|&p| p != self.0);
        }
    }
}

fn kill_groups() {
    let groups = GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for pgid in groups {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// The signal that asked the process to stop, if one did.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s as i32),
    }
}

/// [`Error::Interrupted`] once a signal asked the process to stop.
#[inline]
pub fn check() -> Result<()> {
    match received() {
        None => Ok(()),
        Some(signal) => Err(Error::Interrupted {
            signal,
            kept: String::new(),
        }),
    }
}

/// Raises the flag as a signal would (tests, and callers that stop on their own terms).
pub fn raise(signal: i32) {
    RECEIVED.store(signal as usize, Ordering::Relaxed);
}

/// The name of a signal number, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
