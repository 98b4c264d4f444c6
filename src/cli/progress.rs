//! Progress of long work: an indicatif bar when standard error is a terminal, otherwise one
//! line at most every few seconds (logs of CI jobs and batch runs stay short).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds between two progress lines on a non-terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Progress of one piece of work with a known or growing number of steps.
pub struct Progress {
    what: String,
    unit: &'static str,
    bar: Option<ProgressBar>,
    started: Instant,
    last_line: std::sync::Mutex<Option<Instant>>,
}

impl Progress {
    /// Starts reporting `what`, counted in `unit`.
    pub fn new(what: &str, unit: &'static str) -> Self {
        Self::since(what, unit, Instant::now())
    }

    /// Reports `what`, counted in `unit`, begun at `started` (its times count from there).
    fn since(what: &str, unit: &'static str, started: Instant) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            let template =
                format!("{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit}, {{elapsed}} (eta {{eta}})");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(what.to_string());
            bar.set_elapsed(started.elapsed());
            bar
        });
        Progress {
            what: what.to_string(),
            unit,
            bar,
            started,
            last_line: std::sync::Mutex::new(None),
        }
    }

    /// `done` of `total` steps are complete (`total` 0: not known).
    pub fn update(&self, done: u64, total: u64) {
        match &self.bar {
            Some(bar) => {
                // Worker threads may report out of order: the bar only moves forward.
                bar.set_length(total.max(done));
                if done > bar.position() {
                    bar.set_position(done);
                }
            }
            None => {
                let Ok(mut last) = self.last_line.lock() else {
                    return;
                };
                let due = last.is_none_or(|t| t.elapsed() >= LINE_EVERY);
                if due || done == total {
                    *last = Some(Instant::now());
                    let of = if total == 0 {
                        String::new()
                    } else {
                        format!("/{total}")
                    };
                    note!(
                        "{}: {done}{of} {} ({:.0} s)",
                        self.what,
                        self.unit,
                        self.started.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// Ends the bar and prints how long the work took.
    pub fn finish(self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        note!(
            "{}: done in {:.1} s",
            self.what,
            self.started.elapsed().as_secs_f64()
        );
    }
}

/// Progress of a run that may be short: nothing is shown until it has taken two seconds.
pub struct Ticker {
    what: String,
    unit: &'static str,
    started: Instant,
    shown: Option<Progress>,
}

impl Ticker {
    /// Starts timing `what`, counted in `unit`.
    pub fn new(what: &str, unit: &'static str) -> Self {
        Ticker {
            what: what.to_string(),
            unit,
            started: Instant::now(),
            shown: None,
        }
    }

    /// `done` of `total` (0: not known) are complete; call it as often as convenient.
    pub fn tick(&mut self, done: u64, total: u64) {
        if self.shown.is_none() && self.started.elapsed() >= Duration::from_secs(2) {
            self.shown = Some(Progress::since(&self.what, self.unit, self.started));
        }
        if let Some(p) = &self.shown {
            p.update(done, total);
        }
    }

    /// Ends the progress display, if it was shown.
    pub fn finish(self) {
        if let Some(p) = self.shown {
            p.finish();
        }
    }
}

/// A step of work without a count (a tool run, a build): a spinner with the elapsed time on
/// a terminal, otherwise a line when it starts and one every few seconds while it runs, until
/// the returned guard is dropped.
pub struct Step {
    what: String,
    started: Instant,
    spinner: Option<ProgressBar>,
    stop: Option<std::sync::mpsc::Sender<()>>,
}

impl Step {
    /// Announces `what` and keeps the user informed until the guard drops.
    pub fn start(what: &str) -> Self {
        if std::io::stderr().is_terminal() {
            let spinner = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                spinner.set_style(style);
            }
            spinner.set_message(what.to_string());
            spinner.enable_steady_tick(Duration::from_millis(200));
            return Step {
                what: what.to_string(),
                started: Instant::now(),
                spinner: Some(spinner),
                stop: None,
            };
        }
        note!("{what} ...");
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (label, started) = (what.to_string(), Instant::now());
        std::thread::spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(LINE_EVERY * 2)
            {
                note!("{label} ... {:.0} s", started.elapsed().as_secs_f64());
            }
        });
        Step {
            what: what.to_string(),
            started,
            spinner: None,
            stop: Some(stop),
        }
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if let Some(s) = &self.spinner {
            s.finish_and_clear();
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
            let seconds = self.started.elapsed().as_secs_f64();
            let how = if std::thread::panicking() || flitforge::interrupt::received().is_some() {
                "stopped after"
            } else {
                "done in"
            };
            note!("{}: {how} {seconds:.1} s", self.what);
        }
    }
}
