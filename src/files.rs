//! Files written atomically: through a temporary beside the target, renamed into place, so a
//! reader never sees half a file and a failed run leaves the old file as it was.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (its directory created if missing).
pub fn write_atomic(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> Result<()> {
    let path = path.as_ref();
    let mut file = AtomicFile::create(path)?;
    file.writer()
        .write_all(bytes.as_ref())
        .map_err(|e| Error::io(path.display(), e))?;
    file.commit()
}

/// A file written through a temporary beside it and renamed into place by
/// [`AtomicFile::commit`] (dropped uncommitted, the temporary is removed). Its size is held to
/// the output limit ([`crate::limits::output_limit`]): writing past it is an error, so a file
/// whose size no estimate foresaw still stops before it fills the disk.
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary written and renamed; `None` when the target is not a regular file (a
    /// device such as /dev/null, a pipe): it is written in place, and never replaced.
    tmp: Option<PathBuf>,
    out: Option<Limited>,
}

/// A buffered file that refuses to grow past `limit` bytes.
struct Limited {
    file: std::io::BufWriter<std::fs::File>,
    written: u64,
    limit: u64,
    why: String,
}

impl std::io::Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written + buf.len() as u64 > self.limit {
            return Err(std::io::Error::other(format!(
                "the file would pass {}, the limit ({})",
                crate::limits::bytes(self.limit),
                self.why
            )));
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl AtomicFile {
    /// Opens the temporary for `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        }
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| Error::io(path.display(), e))?;
            return Ok(AtomicFile {
                path,
                tmp: None,
                out: Some(Limited {
                    file: std::io::BufWriter::new(file),
                    written: 0,
                    limit: u64::MAX,
                    why: String::new(),
                }),
            });
        }
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        // A new file, never through a link someone left at that name.
        let _ = std::fs::remove_file(&tmp);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(tmp.display(), e))?;
        let (limit, why) = crate::limits::output_limit(&path);
        Ok(AtomicFile {
            path,
            tmp: Some(tmp),
            out: Some(Limited {
                file: std::io::BufWriter::new(file),
                written: 0,
                limit,
                why,
            }),
        })
    }

    /// The file's final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut dyn std::io::Write {
        self.out.as_mut().expect("open until committed")
    }

    /// Flushes and renames into place.
    pub fn commit(mut self) -> Result<()> {
        let flushed = match self.out.take() {
            Some(out) => out.file.into_inner().map(drop).map_err(|e| e.into_error()),
            None => Ok(()),
        };
        let result = match &self.tmp {
            Some(tmp) => flushed.and_then(|()| std::fs::rename(tmp, &self.path)),
            None => flushed,
        };
        if let Err(e) = result {
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(Error::io(self.path.display(), e));
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.is_some()
            && let Some(tmp) = &self.tmp
        {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A directory of its own under the system's temporary directory, removed with everything in
/// it when dropped (also when an error or an interrupt unwinds past it).
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `<temp>/flitforge-<name>-<pid>-<k>`, `k` the first free number.
    pub fn new(name: &str) -> Result<Self> {
        let base = std::env::temp_dir();
        for k in 0u32.. {
            let path = base.join(format!("flitforge-{name}-{}-{k}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(path.display(), e)),
            }
        }
        unreachable!("some number is free")
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
