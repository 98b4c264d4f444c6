//! Errors with the bad value and the allowed range, and the exit codes the CLI maps them to.

use std::fmt::Display;

/// Result alias used across flitforge.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong. User-input errors exit with code 2, simulation failures
/// (deadlock, violated invariant) with code 1.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter outside its allowed range.
    #[error("invalid {name} = {value}: expected {allowed}")]
    Invalid {
        name: String,
        value: String,
        allowed: String,
    },
    /// A file that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A malformed configuration or message-list file.
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// No flit moved for the watchdog limit while messages remained.
    #[error("{0}")]
    Deadlock(String),
    /// Co-simulation found the model and the RTL different (reported before this error).
    #[error("co-simulation diverged")]
    Diverged,
    /// A checked invariant failed (a bug in a switch model or protocol).
    #[error("invariant violated at cycle {cycle}: {message}")]
    Invariant { cycle: u64, message: String },
    /// A batch run ended at its cycle limit with messages neither delivered nor dropped.
    #[error("{0}")]
    Incomplete(String),
    /// SIGINT or SIGTERM stopped the work ([`crate::interrupt`]); `kept` says what remains.
    #[error("interrupted by {}{}", crate::interrupt::name(*signal), if kept.is_empty() { String::new() } else { format!("; {kept}") })]
    Interrupted { signal: i32, kept: String },
}

/// Longest value an error message quotes (a parse error must not echo a whole input).
const MAX_QUOTED: usize = 160;
/// Longest parse message an error carries (a parser may echo its input).
const MAX_PARSE_MESSAGE: usize = 400;
/// Longest output of a failed external tool an error carries.
const MAX_TOOL_OUTPUT: usize = 4000;

/// `text` cut to `max` characters, with the length it had.
fn cut(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({} bytes)", text.len())
}

fn quoted(text: String) -> String {
    cut(text, MAX_QUOTED)
}

impl Error {
    /// A value outside its allowed range: `invalid("inputs", 12, "a power of two from 2 to 2^20")`.
    pub fn invalid(name: &str, value: impl Display, allowed: impl Display) -> Self {
        Error::Invalid {
            name: name.to_string(),
            value: quoted(value.to_string()),
            allowed: allowed.to_string(),
        }
    }

    /// Refuses a list given to `--name` that holds a value twice (a table would get the
    /// same row twice): `what` names its values.
    pub fn check_distinct<T: PartialEq + Copy + Display>(
        name: &str,
        list: &[T],
        what: &str,
    ) -> Result<()> {
        match (1..list.len()).find_map(|i| list[..i].contains(&list[i]).then_some(list[i])) {
            Some(v) => Err(Error::invalid(
                name,
                v,
                format!("distinct {what} (this one is given twice)"),
            )),
            None => Ok(()),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Display, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            source,
        }
    }

    /// A parse error in `path`.
    pub fn parse(path: impl Display, message: impl Display) -> Self {
        Error::Parse {
            path: quoted(path.to_string()),
            message: cut(message.to_string(), MAX_PARSE_MESSAGE),
        }
    }

    /// A failed external tool `what` and what it printed (the first 4000 characters).
    pub fn tool_output(what: impl Display, output: impl Display) -> Self {
        Error::Parse {
            path: quoted(what.to_string()),
            message: cut(output.to_string(), MAX_TOOL_OUTPUT),
        }
    }

    /// An [`Error::Interrupted`] with what the interrupted command kept; other errors as they
    /// are.
    pub fn kept(self, what: impl Display) -> Self {
        match self {
            Error::Interrupted { signal, .. } => Error::Interrupted {
                signal,
                kept: what.to_string(),
            },
            e => e,
        }
    }

    /// Process exit code: 2 for bad input, 1 for a failed simulation, 3 for a batch run cut
    /// short by its cycle limit, 128 + the signal for an interrupt (130 SIGINT, 143 SIGTERM).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Invalid { .. } | Error::Io { .. } | Error::Parse { .. } => 2,
            Error::Deadlock(_) | Error::Invariant { .. } | Error::Diverged => 1,
            Error::Incomplete(_) => 3,
            Error::Interrupted { signal, .. } => 128 + signal,
        }
    }
}
