//! Kilo Code's command line (Kilo CLI, a fork of OpenCode; its editor extension from 7.0 on runs it):
//! its sessions are rows of a SQLite database of OpenCode 1.2's tables, `$XDG_DATA_HOME/kilo/kilo.db`
//! (`~/.local/share/kilo/kilo.db`; a build of another channel writes `kilo-<channel>.db`).
//!
//! Read from Kilo's own source (Kilo-Org/kilocode, Apache-2.0: `packages/opencode/src/global/index.ts`
//! @ 30e1f287, the app's name `kilo` and its data directory; `src/storage/db.ts` @ f10b24fc,
//! `kilo.db`; `src/session/session.sql.ts` @ 18369fa0, the `session`, `message` and `part` tables of
//! OpenCode 1.2, with columns of Kilo's own added to `session`; `src/cli/cmd/tui/thread.ts` @ 1a32681b,
//! `kilo --session`): the tables, rows and JSON are OpenCode's, so every line is read as
//! [`OpenCode`]'s, the session rendered from the rows as OpenCode's is ([`Rows`]). Kilo's tasks of
//! the legacy extension (5.x, Roo Code's files in `kilocode.kilo-code`'s global storage) are
//! imported into this database by the 7.x extension; a root of them is read as Roo Code's.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use super::opencode::OpenCode;
use super::{BlockPlaces, Cell, FileContext, Format, Meta, MetaError, Part, Rows, Typed, Who};

/// Kilo CLI's format: OpenCode's, in Kilo's database.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kilo;

/// Whether a file's name is one of Kilo's databases: `kilo.db`, `kilo-<channel>.db`.
fn is_database_name(name: &str) -> bool {
    name == "kilo.db"
        || name.strip_prefix("kilo-").and_then(|n| n.strip_suffix(".db")).is_some_and(|channel| {
            !channel.is_empty() && channel.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

impl Format for Kilo {
    fn name(&self) -> &'static str {
        "kilo"
    }

    fn display_name(&self) -> &'static str {
        "Kilo Code"
    }

    /// The database: `kilo.db`, or a channel's `kilo-<channel>.db`.
    fn is_transcript(&self, path: &Path) -> bool {
        path.file_name().and_then(|n| n.to_str()).is_some_and(is_database_name)
    }

    fn database(&self) -> Option<&'static dyn Rows> {
        Some(&Kilo)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        OpenCode.block_places()
    }

    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        OpenCode.file_context(path, first_line)
    }

    fn file_key(&self, path: &Path, session: &str) -> i64 {
        OpenCode.file_key(path, session)
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        OpenCode.describe(stripped, line, file)
    }

    fn typed_input(&self, kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed> {
        OpenCode.typed_input(kind, is_sidechain, line)
    }

    fn usage_markers(&self) -> &'static [&'static str] {
        OpenCode.usage_markers()
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        OpenCode.parts(line)
    }

    /// As OpenCode's, Kilo speaking.
    fn who(&self, line: &Value, is_sidechain: bool) -> Option<Who> {
        let who = OpenCode.who(line, is_sidechain)?;
        Some(if who.name == OpenCode.display_name() { Who::new("Kilo", who.side) } else { who })
    }

    /// `kilo --session ID` (run in the session's directory).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("kilo --session {}", super::shell_word(id)))
    }

    /// `$XDG_DATA_HOME/kilo`, else `~/.local/share/kilo` (as OpenCode's, `xdg-basedir` on every system).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        OpenCode.default_roots(var).into_iter().map(|dir| dir.with_file_name("kilo")).collect()
    }
}

impl Rows for Kilo {
    fn database_of(&self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?.to_str()?;
        let main = name.strip_suffix("-wal").unwrap_or(name);
        is_database_name(main).then(|| path.with_file_name(main))
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
        OpenCode.sessions(conn)
    }

    fn stamp(&self, conn: &Connection, session: &str) -> rusqlite::Result<Option<i64>> {
        OpenCode.stamp(conn, session)
    }

    fn render(&self, conn: &Connection, session: &str, out: &mut dyn Write) -> std::io::Result<()> {
        OpenCode.render(conn, session, out)
    }

    fn payload_row(&self, conn: &Connection, uuid: &str, offset: u64) -> rusqlite::Result<Option<Cell>> {
        OpenCode.payload_row(conn, uuid, offset)
    }

    fn tables_not_read(&self, conn: &Connection) -> rusqlite::Result<Option<&'static str>> {
        OpenCode.tables_not_read(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Side;

    #[test]
    fn kilos_databases_are_its_own_and_it_speaks_as_kilo() {
        for (name, db) in [("kilo.db", true), ("kilo-beta.db", true), ("opencode.db", false), ("kilo-.db", false)] {
            assert_eq!(Kilo.is_transcript(Path::new(name)), db, "{name}");
        }
        assert!(!OpenCode.is_transcript(Path::new("kilo.db")), "each reads its own");
        assert_eq!(Kilo.database_of(Path::new("/d/kilo.db-wal")), Some(PathBuf::from("/d/kilo.db")));
        assert_eq!(Kilo.database_of(Path::new("/d/opencode.db-wal")), None);
        let var = |name: &str| (name == "HOME").then(|| OsString::from("/home/a"));
        assert_eq!(Kilo.default_roots(&var), [PathBuf::from("/home/a/.local/share/kilo")]);
        let xdg = |name: &str| (name == "XDG_DATA_HOME").then(|| OsString::from("/x/data"));
        assert_eq!(Kilo.default_roots(&xdg), [PathBuf::from("/x/data/kilo")]);
        let answer: Value = serde_json::json!({"part": {"type": "text", "text": "Done."}, "role": "assistant"});
        let who = Kilo.who(&answer, false).unwrap();
        assert_eq!((who.name.as_str(), who.side), ("Kilo", Side::Assistant));
        assert_eq!(Kilo.resume_command("ses_1").as_deref(), Some("kilo --session ses_1"));
    }
}
