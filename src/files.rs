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
/// [`AtomicFile::commit`] (dropped uncommitted, the temporary is removed).
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<std::io::BufWriter<std::fs::File>>,
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
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io(tmp.display(), e))?;
        Ok(AtomicFile {
            path,
            tmp,
            out: Some(std::io::BufWriter::new(file)),
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
            Some(out) => out.into_inner().map(drop).map_err(|e| e.into_error()),
            None => Ok(()),
        };
        let result = flushed.and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(Error::io(self.path.display(), e));
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
