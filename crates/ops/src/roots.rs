//! The transcript roots a data directory remembers: `roots.json` beside the index, written when
//! `index`, `rebuild` or `serve` is given its roots (`--root`, `--transcripts`), and read by every
//! command given none, so that `status` and the next `index` follow what the last one did. It is
//! not in the index, which is derived and may be rebuilt. Written privately (0600) and atomically
//! (a temporary file renamed into place); it never holds anything but the roots.

use std::io::Write;
use std::path::{Path, PathBuf};

use scrollback_core::error::{Error, Result};
use scrollback_index::roots::Root;

/// The file's name in the data directory.
pub const ROOTS_FILE: &str = "roots.json";

/// Where a command's roots came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Given on its command line (or in `SCROLLBACK_TRANSCRIPTS`).
    Given,
    /// Remembered in this file.
    Remembered(PathBuf),
    /// The defaults: every agent's own place for its transcripts.
    Defaults,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Given => f.write_str("given"),
            Origin::Remembered(path) => write!(f, "remembered in {}", path.display()),
            Origin::Defaults => f.write_str("the defaults (none given or remembered)"),
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Remembered {
    /// Each root as `FORMAT:DIR`.
    roots: Vec<String>,
}

/// The roots `data_dir` remembers, if it remembers any. A file that cannot be read as roots is an
/// error naming it, not a silent fall back to the defaults.
pub fn remembered(data_dir: &Path) -> Result<Option<Vec<Root>>> {
    let path = data_dir.join(ROOTS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let bad = |why: String| Error::io(&path, std::io::Error::new(std::io::ErrorKind::InvalidData, why));
    let file: Remembered = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let roots =
        file.roots.iter().map(|spec| Root::parse(spec)).collect::<std::result::Result<Vec<_>, _>>().map_err(bad)?;
    Ok((!roots.is_empty()).then_some(roots))
}

/// Remembers `roots` in `data_dir` (made absolute), replacing what it remembered. A root whose
/// directory is not UTF-8 cannot be written as JSON: then nothing is remembered, and it says so.
pub fn remember(data_dir: &Path, roots: &[Root]) -> Result<()> {
    let mut specs = Vec::with_capacity(roots.len());
    for root in roots {
        let dir = std::path::absolute(&root.dir).map_err(|e| Error::io(&root.dir, e))?;
        let Some(dir) = dir.to_str() else {
            return Err(Error::io(
                &root.dir,
                std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8: not remembered"),
            ));
        };
        specs.push(format!("{}:{dir}", root.format.name()));
    }
    scrollback_core::files::create_private_dir(data_dir).map_err(|e| Error::io(data_dir, e))?;
    let path = data_dir.join(ROOTS_FILE);
    let io = |e: std::io::Error| Error::io(&path, e);
    // NamedTempFile is created 0600.
    let mut tmp = tempfile::NamedTempFile::new_in(data_dir).map_err(io)?;
    serde_json::to_writer_pretty(&mut tmp, &Remembered { roots: specs }).map_err(|e| io(e.into()))?;
    tmp.write_all(b"\n").map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn roots_are_remembered_privately_and_read_back() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("tmp"), e))?;
        let data = dir.path().join("data");
        assert!(remembered(&data)?.is_none());
        let roots = [Root::parse("claude:/x/projects").unwrap(), Root::parse("codex:/y/sessions").unwrap()];
        remember(&data, &roots)?;
        let back: Vec<String> = remembered(&data)?.unwrap().iter().map(Root::spec).collect();
        assert_eq!(back, ["claude:/x/projects", "codex:/y/sessions"]);
        let mode = std::fs::metadata(data.join(ROOTS_FILE)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::write(data.join(ROOTS_FILE), "{\"roots\": [\"nonesuch:/z\"]}").unwrap();
        let err = remembered(&data).unwrap_err().to_string();
        assert!(err.contains(ROOTS_FILE) && err.contains("nonesuch"), "{err}");
        Ok(())
    }
}
