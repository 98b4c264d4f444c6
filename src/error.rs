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
}

impl Error {
    /// A value outside its allowed range: `invalid("inputs", 12, "a power of two from 2 to 2^20")`.
    pub fn invalid(name: &str, value: impl Display, allowed: impl Display) -> Self {
        Error::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
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
            path: path.to_string(),
            message: message.to_string(),
        }
    }

    /// Process exit code: 2 for bad input, 1 for a failed simulation.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Invalid { .. } | Error::Io { .. } | Error::Parse { .. } => 2,
            Error::Deadlock(_) | Error::Invariant { .. } | Error::Diverged => 1,
        }
    }
}
