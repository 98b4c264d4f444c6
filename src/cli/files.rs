//! How every command writes files: atomically (a temporary file renamed into place), never
//! over one of its inputs, each listed on standard error as `written <path>`; `-` for a report
//! means standard output. Experiments write into their own directory and refuse a non-empty
//! directory another command wrote unless `--force`.

use flitforge::{Error, Result};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The file that marks a directory as an experiment's own.
const MARKER: &str = ".flitforge-experiment";

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

/// Lists a file a command wrote (the same line everywhere, on standard error).
pub fn written(path: &Path) {
    eprintln!("written {}", path.display());
}

/// Refuses to write `output` over one of the command's `inputs`.
pub fn not_over_input(output: &str, inputs: &[&str]) -> Result<()> {
    let canon = |p: &str| std::fs::canonicalize(p).ok();
    if output == "-" {
        return Ok(());
    }
    match canon(output) {
        Some(out) if inputs.iter().any(|i| canon(i).as_ref() == Some(&out)) => Err(Error::invalid(
            "output",
            output,
            "a file that is not one of the command's inputs",
        )),
        _ => Ok(()),
    }
}

/// The directory an experiment writes into: `--out` or `results/<experiment>`. An existing
/// non-empty directory is refused unless this experiment wrote it or `force` is given.
pub fn experiment_dir(experiment: &str, out: Option<&str>, force: bool) -> Result<PathBuf> {
    let dir = PathBuf::from(out.map_or_else(|| format!("results/{experiment}"), str::to_string));
    if dir.is_file() {
        return Err(Error::invalid("out", dir.display(), "a directory"));
    }
    let owner = std::fs::read_to_string(dir.join(MARKER)).ok();
    let non_empty = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    if non_empty && owner.as_deref().map(str::trim) != Some(experiment) && !force {
        return Err(Error::invalid(
            "out",
            dir.display(),
            format!(
                "an empty or new directory, or one `experiment {experiment}` wrote (--force writes into it anyway){}",
                owner.map_or(String::new(), |o| format!(
                    "; it holds `experiment {}`",
                    o.trim()
                ))
            ),
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
    write_quietly(&dir.join(MARKER), &format!("{experiment}\n"))?;
    Ok(dir)
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
