//! How every command writes files: atomically (a temporary file renamed into place), never
//! over one of its inputs, each listed on standard error as `written <path>`; `-` for a report
//! means standard output. Experiments write into their own directory and refuse a non-empty
//! directory another command wrote unless `--force`.

use flitforge::{Error, Result};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The file that marks a directory as a command's own: the command on its first line, then
/// the files its last complete run wrote there.
const MARKER: &str = ".flitforge-experiment";

/// A directory this process claimed ([`experiment_dir`]).
#[derive(Clone)]
struct Claim {
    dir: PathBuf,
    owner: String,
    /// The files of the previous run.
    previous: Vec<String>,
    /// Whether this process created it.
    created: bool,
    /// The marker as it was before this run claimed the directory.
    marker: Option<String>,
}

static CLAIMED: std::sync::Mutex<Vec<Claim>> = std::sync::Mutex::new(Vec::new());
/// Every file this process wrote and listed.
static WRITTEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Writes `text` to `path` atomically and lists it; `-` writes to standard output instead.
pub fn write(path: impl AsRef<Path>, text: &str) -> Result<()> {
    let path = path.as_ref();
    if path == Path::new("-") {
        let mut out = std::io::stdout();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        return Ok(());
    }
    write_quietly(path, text)?;
    written(path);
    Ok(())
}

/// Writes `text` to `path` atomically without listing it.
pub fn write_quietly(path: &Path, text: &str) -> Result<()> {
    flitforge::files::write_atomic(path, text)
}

/// Lists a file a command wrote (the same line everywhere, on standard error) and records it
/// as this run's ([`finish_dirs`]).
pub fn written(path: &Path) {
    note!("written {}", path.display());
    if let Ok(mut w) = WRITTEN.lock() {
        w.push(path.to_path_buf());
    }
}

/// Refuses, before any work, outputs that are no file's path (empty, or an existing
/// directory), one of the command's `inputs` or the same file as another output: `outputs`
/// are (flag, path) pairs; `-` (standard output) is exempt, and taken by `--json` only.
pub fn outputs_apart(outputs: &[(&str, Option<&str>)], inputs: &[&str]) -> Result<()> {
    if let Some((flag, _)) = outputs
        .iter()
        .find(|&&(flag, path)| flag != "json" && path == Some("-"))
    {
        return Err(Error::invalid(
            flag,
            "-",
            "the path of a file to write (standard output takes only --json -)",
        ));
    }
    let given: Vec<(&str, &str)> = outputs
        .iter()
        .filter_map(|&(flag, path)| path.map(|p| (flag, p)))
        .filter(|(_, p)| *p != "-")
        .collect();
    for (k, &(flag, path)) in given.iter().enumerate() {
        if path.is_empty() || Path::new(path).is_dir() {
            return Err(Error::invalid(
                flag,
                if path.is_empty() { "\"\"" } else { path },
                "the path of a file to write (not empty, not a directory)",
            ));
        }
        not_over_input(flag, path, inputs)?;
        let same = |other: &str| {
            other == path
                || matches!((resolved(other), resolved(path)), (Some(a), Some(b)) if a == b)
        };
        if let Some((first, _)) = given[..k].iter().find(|(_, p)| same(p)) {
            return Err(Error::invalid(
                flag,
                path,
                format!("a different file from --{first}"),
            ));
        }
    }
    Ok(())
}

/// Where `path` leads: the real path of its longest part that exists, followed by the rest
/// of it read by name (a file not written yet, in directories the write will make), so that
/// `r.json`, `./r.json`, `d/../r.json` and `new/r.json` against `./new/r.json` are one file
/// each.
fn resolved(path: &str) -> Option<PathBuf> {
    use std::path::Component;
    let parts: Vec<Component> = Path::new(path).components().collect();
    (0..=parts.len()).rev().find_map(|k| {
        let existing: PathBuf = parts[..k].iter().collect();
        let existing = match existing.as_os_str().is_empty() {
            true => PathBuf::from("."),
            false => existing,
        };
        let mut real = std::fs::canonicalize(existing).ok()?;
        for part in &parts[k..] {
            match part {
                Component::Normal(name) => real.push(name),
                Component::ParentDir => {
                    real.pop();
                }
                _ => {}
            }
        }
        Some(real)
    })
}

/// Refuses to write `output` (the value of `--flag`) over one of the command's `inputs`.
pub fn not_over_input(flag: &str, output: &str, inputs: &[&str]) -> Result<()> {
    if output == "-" {
        return Ok(());
    }
    match resolved(output) {
        Some(out) if inputs.iter().any(|i| resolved(i).as_ref() == Some(&out)) => {
            Err(Error::invalid(
                flag,
                output,
                "a file that is not one of the command's inputs",
            ))
        }
        _ => Ok(()),
    }
}

/// The directory an experiment (or `rtl`, `fpga`, a sweep) writes into: `--out` or
/// `results/<experiment>`. An existing non-empty directory is refused unless this command wrote
/// it or `force` is given. Once the command succeeds, [`finish_dirs`] removes the files an
/// earlier run of it left there that this run did not write again.
/// A directory that holds one of the command's `inputs` (a file of its own, not of a
/// subdirectory) is refused: the command's files could be written over it.
pub fn experiment_dir(
    experiment: &str,
    out: Option<&str>,
    force: bool,
    inputs: &[String],
) -> Result<PathBuf> {
    if out == Some("") {
        return Err(Error::invalid(
            "out",
            "\"\"",
            "the path of a directory (not empty)",
        ));
    }
    let dir = PathBuf::from(out.map_or_else(|| format!("results/{experiment}"), str::to_string));
    if dir.is_file() {
        return Err(Error::invalid("out", dir.display(), "a directory"));
    }
    let inside = resolved(&dir.to_string_lossy());
    if let Some(input) = inputs.iter().find(|i| {
        let parent = resolved(i).and_then(|i| i.parent().map(Path::to_path_buf));
        parent.is_some_and(|p| Some(&p) == inside.as_ref())
    }) {
        return Err(Error::invalid(
            "out",
            dir.display(),
            format!("a directory that holds none of the command's inputs ({input} is one)"),
        ));
    }
    let marker = std::fs::read_to_string(dir.join(MARKER)).ok();
    let owner = marker
        .as_deref()
        .and_then(|m| m.lines().next())
        .map(|l| l.trim().to_string());
    let non_empty = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    if non_empty && owner.as_deref() != Some(experiment) && !force {
        return Err(Error::invalid(
            "out",
            dir.display(),
            format!(
                "an empty or new directory, or one `{experiment}` wrote (--force writes into it anyway){}",
                owner.map_or(String::new(), |o| format!("; it holds `{o}`"))
            ),
        ));
    }
    let created = !dir.exists();
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
    // The previous run's files: this command's own, so removable once this run is complete.
    let previous: Vec<String> = match (&owner, &marker) {
        (Some(o), Some(m)) if o == experiment => m.lines().skip(1).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let text = std::iter::once(experiment.to_string())
        .chain(previous.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n");
    write_quietly(&dir.join(MARKER), &format!("{text}\n"))?;
    if let Ok(mut c) = CLAIMED.lock() {
        c.push(Claim {
            dir: dir.clone(),
            owner: experiment.to_string(),
            previous,
            created,
            marker,
        });
    }
    Ok(dir)
}

/// After a command failed: puts back the marker of every directory it claimed, and removes the
/// directories it created that hold nothing but their marker (a command refused before it
/// wrote anything leaves nothing behind).
pub fn rollback_dirs() {
    let claimed = CLAIMED.lock().map(|c| c.clone()).unwrap_or_default();
    for claim in &claimed {
        if let Some(m) = &claim.marker {
            let _ = write_quietly(&claim.dir.join(MARKER), m);
        }
    }
    for claim in claimed.iter().filter(|c| c.created) {
        let only_marker = std::fs::read_dir(&claim.dir).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|e| e.file_name() == std::ffi::OsStr::new(MARKER))
        });
        if only_marker {
            let _ = std::fs::remove_file(claim.dir.join(MARKER));
            let _ = std::fs::remove_dir(&claim.dir);
        }
    }
}

/// Files to remove once the command succeeds (an experiment's checkpoint).
static REMOVE_ON_SUCCESS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes `path` when the command succeeds ([`finish_dirs`]).
pub fn remove_on_success(path: &Path) {
    if let Ok(mut r) = REMOVE_ON_SUCCESS.lock() {
        r.push(path.to_path_buf());
    }
}

/// After a command succeeded: removes its checkpoints; in every directory it claimed, removes
/// the files the previous run listed that this run did not write, and lists this run's files
/// in the marker.
pub fn finish_dirs() -> Result<()> {
    for path in REMOVE_ON_SUCCESS
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default()
    {
        let _ = std::fs::remove_file(path);
    }
    let claimed = CLAIMED.lock().map(|c| c.clone()).unwrap_or_default();
    let written = WRITTEN.lock().map(|w| w.clone()).unwrap_or_default();
    for Claim {
        dir,
        owner,
        previous,
        ..
    } in claimed
    {
        let mut mine: Vec<String> = written
            .iter()
            .filter_map(|p| p.strip_prefix(&dir).ok())
            .filter(|rel| rel.components().count() >= 1)
            .map(|rel| rel.to_string_lossy().into_owned())
            .collect();
        mine.sort();
        mine.dedup();
        for stale in previous.iter().filter(|p| !mine.contains(p)) {
            // Only plain relative names inside the directory, never a path out of it.
            let rel = Path::new(stale);
            if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
                continue;
            }
            let path = dir.join(rel);
            // Not through a link out of the directory.
            let inside = matches!(
                (std::fs::canonicalize(&path), std::fs::canonicalize(&dir)),
                (Ok(p), Ok(d)) if p.starts_with(&d)
            );
            let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            if inside && !link && path.is_file() && std::fs::remove_file(&path).is_ok() {
                note!("removed {} (an earlier run's)", path.display());
            }
        }
        let text = std::iter::once(owner)
            .chain(mine)
            .collect::<Vec<_>>()
            .join("\n");
        write_quietly(&dir.join(MARKER), &format!("{text}\n"))?;
    }
    Ok(())
}

/// A file written atomically ([`flitforge::files::AtomicFile`]) and listed when committed.
pub struct AtomicFile(flitforge::files::AtomicFile);

impl AtomicFile {
    /// Opens the temporary for `path`.
    pub fn create(path: &str) -> Result<Self> {
        flitforge::files::AtomicFile::create(path).map(AtomicFile)
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut dyn std::io::Write {
        self.0.writer()
    }

    /// Flushes, renames into place and lists the file.
    pub fn commit(self) -> Result<()> {
        let path = self.0.path().to_path_buf();
        self.0.commit()?;
        written(&path);
        Ok(())
    }
}
