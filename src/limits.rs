//! One resource guard for every command. Before work that grows with its input is allocated or
//! written, its size is estimated and held against a limit: memory against what the machine
//! has available (`MemAvailable`, and the address-space limit `ulimit -v` sets) or
//! `--max-memory`; each output file against the free space of its file system and a ceiling of
//! 4 GiB, or `--max-output`; each input file against `--max-input` (256 MiB). A request beyond
//! its limit is refused with the estimate and the limit (exit 2), so nothing aborts halfway.
//!
//! The limits are process-wide: the command line sets them once ([`set`]); a library user
//! gets the machine's.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;
use std::sync::RwLock;

/// Limits given on the command line; `None` takes the machine's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub memory: Option<u64>,
    pub output: Option<u64>,
    pub input: Option<u64>,
}

static OVERRIDES: RwLock<Overrides> = RwLock::new(Overrides {
    memory: None,
    output: None,
    input: None,
});

/// Largest output file written without `--max-output`: 4 GiB (no waveform viewer opens more).
pub const DEFAULT_MAX_OUTPUT: u64 = 4 << 30;
/// Largest input file read without `--max-input`: 256 MiB.
pub const DEFAULT_MAX_INPUT: u64 = 256 << 20;
/// Share of the available memory a command may plan to use.
const MEMORY_SHARE: f64 = 0.9;

/// Sets the process's limits (the command line's `--max-memory`, `--max-output`,
/// `--max-input`).
pub fn set(overrides: Overrides) {
    if let Ok(mut o) = OVERRIDES.write() {
        *o = overrides;
    }
}

fn overrides() -> Overrides {
    OVERRIDES.read().map(|o| *o).unwrap_or_default()
}

/// A number of bytes as people read it: `1.5 GiB`, `12.0 MiB`, `640 B`.
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if n >= size {
            return format!("{:.1} {unit}", n as f64 / size as f64);
        }
    }
    format!("{n} B")
}

/// Parses a size: bytes, or a number with K, M, G, T (powers of 1024; `KiB`, `GB` and the like
/// are read the same way), e.g. `8G`, `512MiB`, `1000000`.
pub fn parse_size(flag: &str, text: &str) -> Result<u64> {
    let bad = || {
        Error::invalid(
            flag,
            text,
            "a size in bytes, or with K, M, G or T (powers of 1024), e.g. 8G, from 1 to 2^60 bytes",
        )
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let scale: u64 = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(bad()),
    };
    let n = value * scale as f64;
    if !(1.0..=(1u64 << 60) as f64).contains(&n) {
        return Err(bad());
    }
    Ok(n as u64)
}

/// A field of `/proc/<file>` in kB, as bytes.
fn proc_kb(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory this process may still allocate: the machine's available memory, and what the
/// address-space limit leaves beyond the process's current size.
pub fn available_memory() -> u64 {
    let available = proc_kb("/proc/meminfo", "MemAvailable:").unwrap_or(u64::MAX);
    let address_space = match nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_AS)
    {
        Ok((soft, _)) if soft != nix::sys::resource::RLIM_INFINITY => {
            let used = proc_kb("/proc/self/status", "VmSize:").unwrap_or(0);
            soft.saturating_sub(used)
        }
        _ => u64::MAX,
    };
    available.min(address_space)
}

/// The memory limit: `--max-memory`, else 90 % of [`available_memory`] as it was when the
/// process first asked (so that the decisions of one run do not depend on what else is
/// allocated meanwhile, its own network included).
pub fn memory_limit() -> (u64, &'static str) {
    static AT_START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    match overrides().memory {
        Some(m) => (m, "--max-memory"),
        None => (
            *AT_START.get_or_init(|| (available_memory() as f64 * MEMORY_SHARE) as u64),
            "what this machine has available; --max-memory sets another limit",
        ),
    }
}

/// Free bytes on the file system that holds `path` (or its nearest existing ancestor).
pub fn free_disk(path: &Path) -> Option<u64> {
    let mut dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    loop {
        let probe = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir.as_path()
        };
        if probe.exists() {
            let s = nix::sys::statvfs::statvfs(probe).ok()?;
            return Some(s.blocks_available().saturating_mul(s.fragment_size()));
        }
        dir = probe.parent()?.to_path_buf();
    }
}

/// The limit for one output file at `path`: `--max-output`, else the smaller of 4 GiB and the
/// free space of its file system (none for a device such as /dev/null).
pub fn output_limit(path: &Path) -> (u64, String) {
    if let Some(m) = overrides().output {
        return (m, "--max-output".into());
    }
    // A device or pipe (/dev/null) stores nothing.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return (u64::MAX, "none for a device".into());
    }
    match free_disk(path) {
        Some(free) if free < DEFAULT_MAX_OUTPUT => (
            free,
            format!(
                "the free space where {} goes; --max-output sets another limit",
                path.display()
            ),
        ),
        _ => (
            DEFAULT_MAX_OUTPUT,
            "the ceiling on one output file; --max-output sets another limit".into(),
        ),
    }
}

/// The limit on one input file: `--max-input`, else 256 MiB.
pub fn input_limit() -> u64 {
    overrides().input.unwrap_or(DEFAULT_MAX_INPUT)
}

/// How many of `jobs` independent jobs of `bytes_each` to run at once: a core each, no more
/// than the memory limit holds, at least one.
pub fn jobs_at_once(bytes_each: u64, jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let fit = usize::try_from(memory_limit().0 / bytes_each.max(1)).unwrap_or(usize::MAX);
    cores.min(fit).min(jobs).max(1)
}

/// What a piece of work needs, in named parts.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    parts: Vec<(String, u64)>,
}

impl Estimate {
    pub fn new() -> Self {
        Estimate::default()
    }

    /// Adds `bytes` for `what` (builder style).
    pub fn with(mut self, what: impl Into<String>, bytes: u64) -> Self {
        self.add(what, bytes);
        self
    }

    pub fn add(&mut self, what: impl Into<String>, bytes: u64) {
        if bytes > 0 {
            self.parts.push((what.into(), bytes));
        }
    }

    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |t, (_, b)| t.saturating_add(*b))
    }

    fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(what, b)| format!("{} {what}", bytes(*b)))
            .collect();
        format!("about {} ({})", bytes(self.total()), parts.join(", "))
    }

    /// Refuses the work unless its memory fits [`memory_limit`]: an error on `flag`
    /// (shown with `value`), the flag that sizes the work.
    pub fn check_memory(&self, flag: &str, value: impl std::fmt::Display) -> Result<()> {
        let (limit, source) = memory_limit();
        if self.total() <= limit {
            return Ok(());
        }
        Err(Error::invalid(
            flag,
            value,
            format!(
                "a size this machine can hold: it needs {}, the limit is {} ({source})",
                self.describe(),
                bytes(limit)
            ),
        ))
    }

    /// Refuses an output file at `path` of this size unless it fits [`output_limit`].
    pub fn check_output(&self, flag: &str, path: &Path) -> Result<()> {
        let (limit, source) = output_limit(path);
        if self.total() <= limit {
            return Ok(());
        }
        Err(Error::invalid(
            flag,
            path.display(),
            format!(
                "an output that fits: it would be {}, the limit is {} ({source})",
                self.describe(),
                bytes(limit)
            ),
        ))
    }
}

/// Reads a whole input file of at most [`input_limit`] bytes (a device such as /dev/zero is
/// read only up to the limit).
pub fn read_input(path: &str) -> Result<Vec<u8>> {
    let limit = input_limit();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > limit
    {
        return Err(too_big(path, meta.len(), limit));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(path, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &str) -> Result<String> {
    String::from_utf8(read_input(path)?).map_err(|_| Error::parse(path, "not UTF-8 text"))
}

fn too_big(path: &str, size: u64, limit: u64) -> Error {
    Error::invalid(
        "input",
        path,
        format!(
            "a file of at most {} (--max-input raises it); it has {}{}",
            bytes(limit),
            if size > limit { "more than " } else { "" },
            bytes(size.min(limit))
        ),
    )
}

/// A vector of `len` copies of `value`, or an error on `flag` when the allocation fails (so a
/// size an estimate missed is an error, not an abort).
pub fn vec_of<T: Clone>(
    len: usize,
    value: T,
    flag: &str,
    shown: impl std::fmt::Display,
) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::invalid(
            flag,
            shown,
            format!(
                "a size this machine can allocate ({} elements of {} failed)",
                len,
                bytes(std::mem::size_of::<T>() as u64)
            ),
        )
    })?;
    v.resize(len, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_size("m", "1024").unwrap(), 1024);
        assert_eq!(parse_size("m", "8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("m", "512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("m", "1.5k").unwrap(), 1536);
        assert_eq!(parse_size("m", "2 GB").unwrap(), 2 << 30);
        for bad in ["", "x", "-1", "0", "8Q", "99999999T"] {
            assert!(parse_size("m", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn estimates_name_their_parts() {
        let e = Estimate::new()
            .with("network", 3 << 30)
            .with("records", 1 << 20);
        assert_eq!(e.total(), (3 << 30) + (1 << 20));
        assert!(e.describe().contains("3.0 GiB network"));
    }

    #[test]
    fn devices_are_read_only_up_to_the_limit() {
        let e = read_input("/dev/zero").unwrap_err().to_string();
        assert!(e.contains("--max-input"), "{e}");
    }
}
