//! Opening a transcript for reading, in the one way that cannot block or mislead: without waiting
//! (`O_NONBLOCK`, so a FIFO or a device put where a transcript was answers at once), then checking
//! with `fstat` on the open descriptor that it is a regular file. Every transcript byte scrollback
//! reads, the writer's and the media reader's, comes through here.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading if it is a regular file; anything else (a FIFO, a device, a directory,
/// a socket) is an `InvalidInput` error, found without blocking.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_opens() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // With no writer, a blocking open would wait forever.
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(open_regular(dir.path()).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        let file = dir.path().join("f.jsonl");
        std::fs::write(&file, b"{}\n").unwrap();
        assert!(open_regular(&file).is_ok());
    }
}
