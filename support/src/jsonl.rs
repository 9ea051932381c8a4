//! The raw-data file: JSON lines, a header object first, then one record a line, each
//! flushed as written so a run that fails keeps what it measured (doc/benchmarking.md
//! rule 10).

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A JSON-lines file being written.
pub struct JsonLines {
    out: BufWriter<File>,
    path: PathBuf,
}

impl JsonLines {
    /// Creates `path` (truncating it).
    pub fn create(path: impl Into<PathBuf>) -> Result<JsonLines, JsonLinesError> {
        let path = path.into();
        let file = File::create(&path).map_err(|source| JsonLinesError {
            path: path.clone(),
            source: source.into(),
        })?;
        Ok(JsonLines {
            out: BufWriter::new(file),
            path,
        })
    }

    /// Creates `<dir>/<prefix><unix seconds>.jsonl`, and `dir` if needed: the name every
    /// harness gives its raw data. A run started in the same second as another never
    /// overwrites its data: it takes `<prefix><unix seconds>-2.jsonl`, `-3`, and so on.
    pub fn create_stamped(dir: &Path, prefix: &str) -> Result<JsonLines, JsonLinesError> {
        std::fs::create_dir_all(dir).map_err(|source| JsonLinesError {
            path: dir.to_owned(),
            source: source.into(),
        })?;
        let stamp = unix_seconds();
        let mut attempt = 1;
        loop {
            let suffix = if attempt == 1 {
                String::new()
            } else {
                format!("-{attempt}")
            };
            let path = dir.join(format!("{prefix}{stamp}{suffix}.jsonl"));
            match File::create_new(&path) {
                Ok(file) => {
                    return Ok(JsonLines {
                        out: BufWriter::new(file),
                        path,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
                Err(source) => {
                    return Err(JsonLinesError {
                        path,
                        source: source.into(),
                    });
                }
            }
        }
    }

    /// Where it is being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `record` as one line and flushes it.
    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<(), JsonLinesError> {
        let fail = |source| JsonLinesError {
            path: self.path.clone(),
            source,
        };
        serde_json::to_writer(&mut self.out, record).map_err(|e| fail(e.into()))?;
        self.out.write_all(b"\n").map_err(|e| fail(e.into()))?;
        self.out.flush().map_err(|e| fail(e.into()))
    }
}

/// Seconds since 1970 now, as raw-data files are named.
pub fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The raw-data file could not be created or written.
#[derive(Debug)]
pub struct JsonLinesError {
    path: PathBuf,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl fmt::Display for JsonLinesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write raw data to {}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for JsonLinesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_is_one_line() {
        let dir = std::env::temp_dir().join(format!("salias-support-jsonl-{}", std::process::id()));
        let mut out = JsonLines::create_stamped(&dir, "t-").unwrap();
        out.write(&serde_json::json!({"a": "x\ny"})).unwrap();
        out.write(&[1, 2]).unwrap();
        let text = std::fs::read_to_string(out.path()).unwrap();
        assert_eq!(text, "{\"a\":\"x\\ny\"}\n[1,2]\n");
        let name = out.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("t-") && name.ends_with(".jsonl"), "{name}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_place_says_where() {
        let error = JsonLines::create("/proc/no/such/dir/x.jsonl")
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("cannot write raw data to /proc/no/such/dir/x.jsonl"),
            "{error}"
        );
    }
}
