//! OpenCode's sessions (1.2 and later): rows of a SQLite database,
//! `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode/opencode.db`; a build of another
//! channel than `latest` or `beta` writes `opencode-<channel>.db` beside it).
//!
//! Read from OpenCode's own source (anomalyco/opencode, MIT; docs/formats.md names each file):
//! `storage/db.ts` (where the file is, WAL), the migrations and `session/session.sql.ts` (the
//! tables), `session/message-v2.ts` (what a message's and a part's `data` hold), `session/index.ts`
//! (how rows are written: upserts in place) and `id/id.ts` (ids).
//!
//! The tables: `session` (`id`, `title`, `directory`, `parent_id`, `time_created`, `time_updated`,
//! ...), `message` (`id`, `session_id`, `time_created`, `data`) and `part` (`id`, `message_id`,
//! `session_id`, `data`), where `data` is the object as JSON text without its ids. A message's data
//! has its `role`, its `time`, and on an answer `modelID`, `providerID` and `tokens`; a part's has
//! its `type`: `text`, `reasoning`, `file` (a pasted image is one, its `url` a `data:` URL), `tool`
//! (`tool`, `callID`, and `state` with `status`, `input`, `output` or `error`, and `attachments`),
//! `step-start`, `step-finish` (`tokens`, `cost`: one model call), `subtask`, `agent`, `retry`,
//! `compaction`, `snapshot`, `patch`. Rows change in place: a tool part goes from `pending` to
//! `completed`, a text part is written empty and then whole.
//!
//! A database is not a file of lines, so scrollback reads each session as a document it renders
//! from the rows ([`Rows::render`]), one JSON line a row, in OpenCode's own order (messages by
//! time and id, each message's parts by id after it):
//! - the session: `{"session":{...its columns...}}`;
//! - a message: `{"message":DATA,"id":ID,"time":MS,"steps":N}`, `N` its `step-finish` parts;
//! - a part: `{"part":DATA,"id":ID,"messageID":ID,"role":ROLE,"model":MODEL,"time":MS}`, with
//!   its message's role, model and time.
//!
//! `DATA` is the row's `data` column byte for byte, so a part's payload is [`PART_PREFIX`] bytes
//! less into the column than into the line: a photo is read back from the column itself with
//! SQLite's incremental blob I/O ([`Rows::payload_row`]), never copied. The JSON tree older builds
//! kept under `storage/` (imported into the database by 1.2) is not read.
//!
//! OpenCode 2 writes its sessions to other tables of the same database, `session_v2` and
//! `session_message` (a row a message, its parts inside it), and copies the 1.x sessions into them
//! once, ids kept: each session is read from those tables if it is there, else from the 1.x ones
//! (see `opencode/v2.rs`), so none is read twice and none written by a 1.x build after the copy is missed.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::usage::count;
use super::{
    BlockPlaces, Cell, Columns, FileContext, Format, Media, Meta, MetaError, Part, Rows, SearchText, Side, Tokens,
    Typed, Usage, Who, first_chars, parse_object, str_at, title_rank,
};
use crate::codec::scan::STRIPPED_MEDIA_MARKER;

mod v2;

/// OpenCode's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenCode;

/// Image blocks are numbered under a part (a `file` part is one; a tool's attachments are below it),
/// and under an OpenCode 2 row (a person's files, then its tools' files, in the row's order).
// A file part (`{type: "file", mime, url}`; 2's `{type: "file", uri, mime}`) is a photo when its
// data URL is an image's.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["part"], &["row"]]).with_url_images(&["file"]);

/// What a part's line begins with: its `data` column follows.
pub const PART_PREFIX: &str = r#"{"part":"#;

/// The titles a session has before OpenCode names it.
const PLACEHOLDER_TITLES: [&str; 2] = ["New session - ", "Child session - "];

impl Format for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn display_name(&self) -> &'static str {
        "OpenCode"
    }

    /// The database: `opencode.db`, or a channel's `opencode-<channel>.db`.
    fn is_transcript(&self, path: &Path) -> bool {
        path.file_name().and_then(|n| n.to_str()).is_some_and(is_database_name)
    }

    /// The directory `storage` beside the database: the JSON tree of builds before 1.2, which 1.2
    /// imported into the database and left in place.
    fn not_read(&self, path: &Path) -> Option<&'static str> {
        (path.file_name().is_some_and(|n| n == "storage")).then_some(
            "OpenCode's JSON tree from before 1.2, which OpenCode 1.2 imported into opencode.db (the database is read)",
        )
    }

    fn database(&self) -> Option<&'static dyn Rows> {
        Some(&OpenCode)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session and its directory, from the rendered document's first line; else the path's last
    /// component (a session's path is `<database>/<session id>`).
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let session = first_line()
            .and_then(|l| serde_json::from_str::<Value>(&l).ok())
            .and_then(|v| v.get("session").cloned())
            .unwrap_or(Value::Null);
        let nonempty = |key: &str| str_at(&session, key).filter(|s| !s.trim().is_empty()).map(str::to_owned);
        FileContext {
            session: nonempty("id").unwrap_or(name),
            project: nonempty("directory"),
            ..FileContext::default()
        }
    }

    /// 0: a session is one document (a sub-agent's child session is a session of its own).
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, _line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&Value::Object(top), file))
    }

    /// A person's text part: a user message's, not one OpenCode wrote for them (`synthetic`); an
    /// OpenCode 2 `user` row's text.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if let Some(row) = line.get("row") {
            return v2::typed_input(line, row);
        }
        let part = line.get("part")?;
        if str_at(line, "role") != Some("user") || str_at(part, "type") != Some("text") || is_synthetic(part) {
            return None;
        }
        let text = str_at(part, "text")?;
        (!text.trim().is_empty()).then(|| Typed { text: text.to_owned(), images: Vec::new() })
    }

    /// A `step-finish` part (one model call's counts), a message that has none (`"steps":0`), or
    /// an OpenCode 2 row with its `tokens`.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["step-finish", r#""steps":0"#, r#""tokens""#]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        if let Some(row) = line.get("row") {
            return v2::parts(line, row);
        }
        line.get("part").map(parts).unwrap_or_default()
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        if let Some(row) = line.get("row") {
            return v2::who(line, row);
        }
        let part = line.get("part")?;
        let shown = matches!(
            str_at(part, "type")?,
            "text" | "reasoning" | "file" | "tool" | "subtask" | "agent" | "compaction" | "retry"
        );
        if !shown {
            return None;
        }
        Some(match (str_at(line, "role"), str_at(part, "type")) {
            (_, Some("compaction" | "retry")) => Who::new("OpenCode", Side::Note),
            (Some("user"), _) if is_synthetic(part) => Who::new("OpenCode", Side::Note),
            (Some("user"), _) => Who::new("You", Side::User),
            _ => Who::new("OpenCode", Side::Assistant),
        })
    }

    /// `opencode --session ID` (run in the session's directory).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("opencode --session {}", super::shell_word(id)))
    }

    /// `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode` (OpenCode takes its data directory
    /// from `xdg-basedir` on every system).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        nonempty("XDG_DATA_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| nonempty("HOME").map(|home| home.join(".local/share")))
            .map(|data| data.join("opencode"))
            .into_iter()
            .collect()
    }
}

/// Whether a file's name is one of OpenCode's databases: `opencode.db`, `opencode-<channel>.db`.
fn is_database_name(name: &str) -> bool {
    name == "opencode.db"
        || name.strip_prefix("opencode-").and_then(|n| n.strip_suffix(".db")).is_some_and(|channel| {
            !channel.is_empty() && channel.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

/// Each count of a session's rows that changes when one of them is written (`time_updated` moves
/// on every upsert), added or removed. The times are summed as integers modulo 2^32, exactly: a
/// floating sum (`total`) of epoch milliseconds passes 2^53 at about 5,000 rows, past which a
/// row written again 1 ms later left the sum unchanged. Each term is below 2^32, so the sum of
/// 2^31 rows cannot overflow, and a value of another type (text, a real) counts as its integer.
const STAMP_COLUMNS: &str = "s.time_updated,
       (SELECT count(*) FROM message WHERE session_id = s.id),
       (SELECT sum(CAST(time_updated AS INTEGER) % 4294967296) FROM message WHERE session_id = s.id),
       (SELECT count(*) FROM part WHERE session_id = s.id),
       (SELECT sum(CAST(time_updated AS INTEGER) % 4294967296) FROM part WHERE session_id = s.id)";

/// The most bytes of a session's column (its directory, version, ids) read whole: a longer value is
/// no path or id OpenCode wrote, and is read as absent.
const COLUMN_BYTES: i64 = 4096;

/// The bytes of a longer title that are read (by blob I/O, never the whole value): a title is cut
/// to far fewer characters where it is made.
const TITLE_BYTES: usize = 1024;

/// The most bytes of a message's `data` read as JSON for its role and model (a larger one is
/// rendered all the same, without them).
const MESSAGE_JSON_BYTES: i64 = 8 << 20;

/// A column as text, whatever SQLite type a row gave it (an id or role written as a number is its
/// digits); a blob or NULL is none.
fn text_of(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

/// A column as epoch milliseconds, whatever type a row gave it: an integer, a finite real, or text
/// of digits; anything else (`"1 failed"`) is none, and that row is rendered without its time.
fn millis_of(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<i64>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Integer(n) => Some(n),
        ValueRef::Real(f) if f.is_finite() && f.abs() < 9.0e18 => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(|t| t.trim().parse().ok()),
        _ => None,
    })
}

/// The first [`TITLE_BYTES`] of a long text value, by blob I/O, cut at a character's boundary.
fn head_of(conn: &Connection, table: &str, column: &str, rowid: i64) -> Option<String> {
    let blob = conn.blob_open(rusqlite::MAIN_DB, table, column, rowid, true).ok()?;
    let mut buf = vec![0u8; TITLE_BYTES.min(blob.len())];
    let n = blob.read_at(&mut buf, 0).ok()?;
    buf.truncate(n);
    let text = String::from_utf8_lossy(&buf);
    Some(text.trim_end_matches('\u{FFFD}').to_owned())
}

fn stamp_of(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<i64> {
    let mut hasher = blake3::Hasher::new();
    for i in at..at + 5 {
        let v: rusqlite::types::Value = r.get(i)?;
        hasher.update(format!("{v:?};").as_bytes());
    }
    let first = u64::from_le_bytes(hasher.finalize().as_bytes()[..8].try_into().expect("8 bytes"));
    Ok(((first >> 2) | 1) as i64)
}

impl Rows for OpenCode {
    fn database_of(&self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?.to_str()?;
        let main = name.strip_suffix("-wal").unwrap_or(name);
        is_database_name(main).then(|| path.with_file_name(main))
    }

    /// The sessions of OpenCode 2's tables, then those of the 1.x tables that are not in them, in
    /// one statement.
    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
        let v2 = format!("SELECT s.id, {}, s.time_created FROM session_v2 s", v2::STAMP_COLUMNS);
        let v1 = format!("SELECT s.id, {STAMP_COLUMNS}, s.time_created FROM session s");
        let sql = match (v2::has_tables(conn)?, v2::has_table(conn, "session")?) {
            (true, true) => format!("{v2} UNION ALL {v1} WHERE s.id NOT IN (SELECT id FROM session_v2) ORDER BY 7"),
            (true, false) => format!("{v2} ORDER BY 7"),
            // (No table at all: the statement fails, and the database is said not to be OpenCode's.)
            (false, _) => format!("{v1} ORDER BY 7"),
        };
        let mut stmt = conn.prepare(&sql)?;
        let mut sessions = Vec::new();
        for row in stmt.query_map([], |r| Ok((text_of(r, 0)?, stamp_of(r, 1)?)))? {
            // A session with no id (a blob, NULL) is none OpenCode wrote, and cannot be named.
            if let (Some(id), stamp) = row? {
                sessions.push((id, stamp));
            }
        }
        Ok(sessions)
    }

    fn stamp(&self, conn: &Connection, session: &str) -> rusqlite::Result<Option<i64>> {
        if v2::has_tables(conn)?
            && let Some(stamp) = conn
                .query_row(&format!("SELECT {} FROM session_v2 s WHERE s.id = ?1", v2::STAMP_COLUMNS), [session], |r| {
                    stamp_of(r, 0)
                })
                .optional()?
        {
            return Ok(Some(stamp));
        }
        if !v2::has_table(conn, "session")? {
            return Ok(None);
        }
        conn.query_row(&format!("SELECT {STAMP_COLUMNS} FROM session s WHERE s.id = ?1"), [session], |r| stamp_of(r, 0))
            .optional()
    }

    fn render(&self, conn: &Connection, session: &str, out: &mut dyn Write) -> std::io::Result<()> {
        let sql = |e: rusqlite::Error| std::io::Error::other(format!("reading OpenCode's database: {e}"));
        if v2::has_tables(conn).map_err(sql)? && header(conn, "session_v2", session, out)? {
            return v2::render(conn, session, out);
        }
        if !v2::has_table(conn, "session").map_err(sql)? || !header(conn, "session", session, out)? {
            return Ok(());
        }
        // A row of any type in any column is rendered: a value that is not what OpenCode writes
        // (a time as text, an id as a number) is read as what it says or as absent, so one odd row
        // is at most one invalid line, never a session left out.
        let mut messages = conn
            .prepare(&format!(
                "SELECT rowid, id, time_created,
                        CASE WHEN octet_length(data) < {MESSAGE_JSON_BYTES} AND json_valid(data)
                             THEN json_extract(data, '$.role') END,
                        CASE WHEN octet_length(data) < {MESSAGE_JSON_BYTES} AND json_valid(data)
                             THEN json_extract(data, '$.modelID') END
                 FROM message WHERE session_id = ?1 ORDER BY time_created, id"
            ))
            .map_err(sql)?;
        type MessageRow = (i64, String, Option<i64>, Option<String>, Option<String>);
        let rows: Vec<MessageRow> = messages
            .query_map([session], |r| {
                Ok((r.get(0)?, text_of(r, 1)?.unwrap_or_default(), millis_of(r, 2)?, text_of(r, 3)?, text_of(r, 4)?))
            })
            .map_err(sql)?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql)?;
        // A part's type, read only from a small part (`octet_length` reads no photo's bytes) that is
        // JSON (a row that is not is rendered all the same, and recorded as an invalid line).
        let mut parts = conn
            .prepare(
                "SELECT rowid, id, CASE WHEN octet_length(data) < 65536 AND json_valid(data)
                                        THEN json_extract(data, '$.type') END
                 FROM part WHERE message_id = ?1 ORDER BY id",
            )
            .map_err(sql)?;
        for (rowid, id, time, role, model) in rows {
            let time = time.map_or_else(|| "null".to_owned(), |t| t.to_string());
            let part_rows: Vec<(i64, String, Option<String>)> = parts
                .query_map([&id], |r| Ok((r.get(0)?, text_of(r, 1)?.unwrap_or_default(), text_of(r, 2)?)))
                .map_err(sql)?
                .collect::<rusqlite::Result<_>>()
                .map_err(sql)?;
            let steps = part_rows.iter().filter(|p| p.2.as_deref() == Some("step-finish")).count();
            out.write_all(br#"{"message":"#)?;
            copy_column(conn, "message", rowid, out)?;
            writeln!(out, r#","id":{},"time":{time},"steps":{steps}}}"#, json_string(&id))?;
            for (part_rowid, part_id, _) in part_rows {
                out.write_all(PART_PREFIX.as_bytes())?;
                copy_column(conn, "part", part_rowid, out)?;
                writeln!(
                    out,
                    r#","id":{},"messageID":{},"role":{},"model":{},"time":{time}}}"#,
                    json_string(&part_id),
                    json_string(&id),
                    serde_json::to_string(&role).unwrap_or_default(),
                    serde_json::to_string(&model).unwrap_or_default(),
                )?;
            }
        }
        Ok(())
    }

    /// Before it named them `session_v2`, a pre-release build of OpenCode 2 kept its sessions in
    /// `session` and their messages in `session_message` (no `session_v2`): those messages are
    /// not read.
    fn tables_not_read(&self, conn: &Connection) -> rusqlite::Result<Option<&'static str>> {
        let early = v2::has_table(conn, "session_message")?
            && !v2::has_table(conn, "session_v2")?
            && conn.query_row("SELECT EXISTS (SELECT 1 FROM session_message)", [], |r| r.get::<_, bool>(0))?;
        Ok(early.then_some(
            "a pre-release build of OpenCode 2 wrote messages to session_message with no session_v2 table: \
             those are not read (OpenCode 2.0 and later are)",
        ))
    }

    /// A 1.x part's row (its id `prt_...`), else an OpenCode 2 message's (`msg_...`).
    fn payload_row(&self, conn: &Connection, uuid: &str, offset: u64) -> rusqlite::Result<Option<Cell>> {
        if v2::has_table(conn, "part")?
            && let Some(at) = offset.checked_sub(PART_PREFIX.len() as u64)
            && let Some(rowid) =
                conn.query_row("SELECT rowid FROM part WHERE id = ?1", [uuid], |r| r.get(0)).optional()?
        {
            return Ok(Some(Cell { table: "part", column: "data", rowid, offset: at }));
        }
        v2::payload_row(conn, uuid, offset)
    }
}

/// Writes the header line of `session` from `table` (`session`, or OpenCode 2's `session_v2`, which
/// has the same columns): whether it is there.
fn header(conn: &Connection, table: &'static str, session: &str, out: &mut dyn Write) -> std::io::Result<bool> {
    let sql = |e: rusqlite::Error| std::io::Error::other(format!("reading OpenCode's database: {e}"));
    // Every column's length is looked at before its value is read (`octet_length` reads none of
    // it): a value no bigger than a path is read whole, a longer title only its head, anything
    // else longer not at all.
    let header: Option<(Value, Option<i64>)> = conn
        .query_row(
            &format!(
                "SELECT s.id,
                        CASE WHEN octet_length(s.title) <= {COLUMN_BYTES} THEN s.title END,
                        CASE WHEN octet_length(s.directory) <= {COLUMN_BYTES} THEN s.directory END,
                        CASE WHEN octet_length(s.parent_id) <= {COLUMN_BYTES} THEN s.parent_id END,
                        CASE WHEN octet_length(s.version) <= {COLUMN_BYTES} THEN s.version END,
                        s.time_created, s.time_updated,
                        (SELECT CASE WHEN octet_length(worktree) <= {COLUMN_BYTES} THEN worktree END
                         FROM project WHERE id = s.project_id),
                        CASE WHEN typeof(s.title) = 'text' AND octet_length(s.title) > {COLUMN_BYTES}
                             THEN s.rowid END
                 FROM {table} s WHERE s.id = ?1"
            ),
            [session],
            |r| {
                Ok((
                    serde_json::json!({
                        "id": text_of(r, 0)?,
                        "title": text_of(r, 1)?,
                        "directory": text_of(r, 2)?,
                        "parentID": text_of(r, 3)?,
                        "version": text_of(r, 4)?,
                        "timeCreated": millis_of(r, 5)?,
                        "timeUpdated": millis_of(r, 6)?,
                        "worktree": text_of(r, 7)?,
                    }),
                    r.get::<_, Option<i64>>(8)?,
                ))
            },
        )
        .optional()
        .map_err(sql)?;
    let Some((mut header, long_title)) = header else { return Ok(false) };
    if let Some(rowid) = long_title {
        header["title"] = head_of(conn, table, "title", rowid).map_or(Value::Null, Value::String);
    }
    writeln!(out, "{}", serde_json::json!({ "session": header }))?;
    Ok(true)
}

/// A string as JSON.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Copies the `data` column of row `rowid` of `table` to `out` in blocks, by SQLite's blob I/O (a
/// photo's part can be megabytes), in the caller's transaction.
fn copy_column(conn: &Connection, table: &str, rowid: i64, out: &mut dyn Write) -> std::io::Result<()> {
    let blob = conn
        .blob_open(rusqlite::MAIN_DB, table, "data", rowid, true)
        .map_err(|e| std::io::Error::other(format!("reading OpenCode's {table} row {rowid}: {e}")))?;
    let mut buf = vec![0u8; 64 << 10];
    let mut at = 0;
    loop {
        let n = blob.read_at(&mut buf, at).map_err(|e| std::io::Error::other(format!("reading {table}: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
        at += n;
    }
}

/// Whether OpenCode wrote a user message's part itself (a file's contents it read for the person).
fn is_synthetic(part: &Value) -> bool {
    part.get("synthetic") == Some(&Value::Bool(true))
}

/// Tokens of one model call (a `step-finish` part's, or an answer's): `input` is uncached input,
/// `cache.read` and `cache.write` the cached input, `reasoning` the thinking. Builds disagree on
/// whether `output` holds the reasoning; `total` (the provider's) says, where it is given: if it is
/// the sum with `output` alone, `output` holds it, else the reasoning is added to `output`.
fn tokens(t: &Value) -> Tokens {
    let cache = t.get("cache").unwrap_or(&Value::Null);
    let (input, output, reasoning) = (count(t, "input"), count(t, "output"), count(t, "reasoning"));
    let (read, write) = (count(cache, "read"), count(cache, "write"));
    let total = count(t, "total");
    let holds_reasoning = total != 0 && total == input + output + read + write;
    Tokens {
        input,
        output: if holds_reasoning { output } else { output + reasoning },
        cache_read: read,
        cache_write: write,
        cache_write_1h: 0,
        reasoning: reasoning.min(if holds_reasoning { output } else { output + reasoning }),
    }
}

/// A line's part list, as a reader takes it in.
fn parts(part: &Value) -> Vec<Part> {
    let text = |k: &str| str_at(part, k).filter(|t| !t.trim().is_empty()).map(str::to_owned);
    match str_at(part, "type") {
        Some("text") if is_synthetic(part) => {
            text("text").map(|t| Part::Context { label: "Context for the model".into(), text: t }).into_iter().collect()
        }
        Some("text") => text("text").map(Part::Text).into_iter().collect(),
        Some("reasoning") => text("text").map(Part::Thinking).into_iter().collect(),
        Some("file") => vec![file_part(part)],
        Some("tool") => {
            let state = part.get("state").unwrap_or(&Value::Null);
            let input = state.get("input").unwrap_or(&Value::Null);
            let mut call = super::parts::tool_call_with_id(
                str_at(part, "tool").unwrap_or("tool"),
                &shared_names(input),
                str_at(part, "callID"),
            );
            call.input = input.clone();
            let mut out = vec![Part::ToolCall(call)];
            let status = str_at(state, "status");
            if matches!(status, Some("completed" | "error")) {
                let error = status == Some("error");
                let said = if error { str_at(state, "error") } else { str_at(state, "output") };
                let media = match state.get("attachments") {
                    Some(Value::Array(files)) => files.iter().map(file_media).collect(),
                    _ => Vec::new(),
                };
                out.push(Part::ToolResult {
                    call: str_at(part, "callID").map(str::to_owned),
                    text: said.unwrap_or("").to_owned(),
                    error,
                    label: None,
                    media,
                });
            }
            out
        }
        Some("subtask") => {
            let what = text("description").or_else(|| text("prompt")).unwrap_or_default();
            let agent = text("agent").unwrap_or_else(|| "sub-agent".into());
            vec![Part::Note(format!("Sub-agent {agent}: {what}"))]
        }
        Some("agent") => text("name").map(|n| Part::Note(format!("Agent: {n}"))).into_iter().collect(),
        Some("compaction") => vec![Part::Note("Context compacted".into())],
        Some("retry") => {
            let why = part.get("error").and_then(|e| e.get("data")).and_then(|d| str_at(d, "message"));
            vec![Part::Note(format!("Retried: {}", why.unwrap_or("the call failed")))]
        }
        _ => Vec::new(),
    }
}

/// OpenCode's tools name their inputs in camel case (`filePath`, `oldString`, `newString`): the
/// names the shared rule of a tool call's subject and diff reads (`file_path`, `old_string`,
/// `new_string`) are added beside them.
fn shared_names(input: &Value) -> Value {
    let Value::Object(map) = input else { return input.clone() };
    let mut out = map.clone();
    for (theirs, shared) in [("filePath", "file_path"), ("oldString", "old_string"), ("newString", "new_string")] {
        if let Some(v) = map.get(theirs)
            && !map.contains_key(shared)
        {
            out.insert(shared.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// A `file` part: a photo or a file whose bytes the line holds (its `url` a `data:` URL, which the
/// stored line holds as a marker and the rendered one as its media URL), else a mention of a file
/// by its path (a `file://` URL).
fn file_part(part: &Value) -> Part {
    let url = str_at(part, "url").unwrap_or("");
    if !url.is_empty() && !url.starts_with("file:") {
        return Part::Media(file_media(part));
    }
    let name = str_at(part, "filename").or_else(|| part.get("source").and_then(|s| str_at(s, "path"))).unwrap_or(url);
    Part::Note(format!("File: {name}"))
}

/// A file part as media: a photo (an image block, which the rendered line annotates) or a file.
fn file_media(part: &Value) -> Media {
    let mime = str_at(part, "mime");
    if mime.is_some_and(|m| m.starts_with("image/")) {
        let mut media = Media::image(part);
        if media.mime_type.is_none() {
            media.mime_type = mime.map(str::to_owned);
        }
        // The line's own `url` (its `data:` URL, or the marker left where it was) is no link to it.
        if media.url.as_deref().is_some_and(|u| u.starts_with("data:") || u == STRIPPED_MEDIA_MARKER) {
            media.url = None;
        }
        media
    } else {
        let mut media = Media::file(part);
        if media.mime_type.is_none() {
            media.mime_type = mime.map(str::to_owned);
        }
        media
    }
}

fn describe(line: &Value, file: &FileContext) -> Meta {
    let mut meta = Meta::default();
    let mut text = SearchText::default();
    let ms = line.get("time").and_then(Value::as_i64);
    if let Some(session) = line.get("session") {
        meta.columns.kind = Some("session".into());
        meta.columns.timestamp = session.get("timeCreated").and_then(Value::as_i64).and_then(super::millis_iso);
        meta.cwd = str_at(session, "directory").map(str::to_owned);
        let title = str_at(session, "title").map(str::trim).filter(|t| !t.is_empty());
        meta.title = title
            .filter(|t| !PLACEHOLDER_TITLES.iter().any(|p| t.starts_with(p)))
            .map(|t| (title_rank::AI, first_chars(t.to_owned(), 200)));
        if let Some((_, t)) = &meta.title {
            text.said(t);
        }
    } else if let Some(message) = line.get("message") {
        let role = str_at(message, "role");
        meta.columns = Columns {
            uuid: str_at(line, "id").map(str::to_owned),
            parent_uuid: str_at(message, "parentID").map(str::to_owned),
            kind: Some("message".into()),
            role: role.map(str::to_owned),
            timestamp: ms.and_then(super::millis_iso),
            is_sidechain: false,
        };
        meta.cwd.clone_from(&file.project);
        // An answer that wrote no `step-finish` part states its counts on itself.
        let steps = line.get("steps").and_then(Value::as_u64).unwrap_or(0);
        if role == Some("assistant")
            && steps == 0
            && let Some(t) = message.get("tokens").map(tokens).filter(|t| t.total() != 0)
        {
            meta.usage.push(Usage {
                key: format!("opencode:{}", str_at(line, "id").unwrap_or("")),
                model: str_at(message, "modelID").map(str::to_owned),
                tokens: t,
                ..Usage::default()
            });
        }
    } else if let Some(row) = line.get("row") {
        return v2::describe(line, row, file);
    } else if let Some(part) = line.get("part") {
        let kind = str_at(part, "type");
        let role = str_at(line, "role");
        meta.columns = Columns {
            uuid: str_at(line, "id").map(str::to_owned),
            parent_uuid: str_at(line, "messageID").map(str::to_owned),
            kind: kind.map(str::to_owned),
            role: role.map(str::to_owned),
            timestamp: ms.and_then(super::millis_iso),
            is_sidechain: false,
        };
        meta.cwd.clone_from(&file.project);
        match kind {
            Some("text") if role == Some("user") && is_synthetic(part) => {
                text.output(str_at(part, "text").unwrap_or(""));
            }
            Some("text") => {
                let said = str_at(part, "text").unwrap_or("");
                text.said(said);
                if role == Some("user") && !said.trim().is_empty() {
                    meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(said.trim().to_owned(), 200)));
                }
            }
            Some("reasoning") => text.said(str_at(part, "text").unwrap_or("")),
            Some("tool") => {
                let state = part.get("state").unwrap_or(&Value::Null);
                text.call(str_at(part, "tool"), state.get("input"));
                for key in ["output", "error"] {
                    if let Some(s) = str_at(state, key) {
                        text.output(s);
                    }
                }
            }
            Some("subtask") => {
                for key in ["description", "prompt"] {
                    text.said(str_at(part, key).unwrap_or(""));
                }
            }
            Some("step-finish") => {
                if let Some(t) = part.get("tokens").map(tokens).filter(|t| t.total() != 0) {
                    meta.usage.push(Usage {
                        key: format!("opencode:{}", str_at(line, "id").unwrap_or("")),
                        model: str_at(line, "model").map(str::to_owned),
                        tokens: t,
                        ..Usage::default()
                    });
                }
            }
            _ => {}
        }
    } else {
        meta.columns.kind = Some("unknown".into());
    }
    text.finish(&mut meta);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(line: &str) -> Meta {
        OpenCode.describe(line, 1, &FileContext { project: Some("/w/app".into()), ..FileContext::default() }).unwrap()
    }

    fn value(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    const HEADER: &str = r#"{"session":{"id":"ses_1","title":"Fix the red button","directory":"/w/app","parentID":null,"version":"1.2.3","timeCreated":1780000000000,"timeUpdated":1780000009000,"worktree":"/w/app"}}"#;
    const ASKED: &str = r#"{"part":{"type":"text","text":"why is the button red?"},"id":"prt_1","messageID":"msg_1","role":"user","model":null,"time":1780000000100}"#;
    const PHOTO: &str = r#"{"part":{"type":"file","mime":"image/png","filename":"shot.png","url":"STRIPPED_MEDIA_MARKER"},"id":"prt_2","messageID":"msg_1","role":"user","model":null,"time":1780000000100}"#;
    const READ: &str = r#"{"part":{"type":"text","text":"Called the Read tool","synthetic":true},"id":"prt_3","messageID":"msg_1","role":"user","model":null,"time":1780000000100}"#;
    const TOOL: &str = r#"{"part":{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{"command":"grep -rn btn src"},"output":"src/App.css:12: .btn { color: red }","title":"grep","metadata":{},"time":{"start":1,"end":2}}},"id":"prt_4","messageID":"msg_2","role":"assistant","model":"claude-sonnet-4-5","time":1780000001000}"#;
    const STEP: &str = r#"{"part":{"type":"step-finish","reason":"stop","cost":0.01,"tokens":{"input":1200,"output":85,"reasoning":15,"cache":{"read":3000,"write":100}}},"id":"prt_5","messageID":"msg_2","role":"assistant","model":"claude-sonnet-4-5","time":1780000001000}"#;
    const ANSWER: &str = r#"{"message":{"role":"assistant","time":{"created":1780000001000},"parentID":"msg_1","modelID":"gpt-5","providerID":"openai","tokens":{"total":1300,"input":1000,"output":300,"reasoning":120,"cache":{"read":0,"write":0}}},"id":"msg_2","time":1780000001000,"steps":0}"#;

    #[test]
    fn the_database_and_its_log_are_found_by_name_and_the_old_json_tree_is_named_not_read() {
        for (name, db) in [("opencode.db", true), ("opencode-local.db", true), ("opencode.db-wal", false)] {
            assert_eq!(OpenCode.is_transcript(Path::new(name)), db, "{name}");
        }
        assert!(!OpenCode.is_transcript(Path::new("opencode-.db")) && !OpenCode.is_transcript(Path::new("x.db")));
        assert_eq!(OpenCode.database_of(Path::new("/d/opencode.db-wal")), Some(PathBuf::from("/d/opencode.db")));
        assert_eq!(OpenCode.database_of(Path::new("/d/opencode.db-shm")), None);
        assert!(
            OpenCode.not_read(Path::new("/d/storage")).is_some() && OpenCode.not_read(Path::new("/d/log")).is_none()
        );
        let var = |n: &str| (n == "HOME").then(|| OsString::from("/home/a"));
        assert_eq!(OpenCode.default_roots(&var), [PathBuf::from("/home/a/.local/share/opencode")]);
    }

    #[test]
    fn the_session_line_titles_it_and_a_placeholder_is_no_title() {
        let m = meta(HEADER);
        assert_eq!(m.title, Some((title_rank::AI, "Fix the red button".into())));
        assert_eq!(
            (m.cwd.as_deref(), m.columns.timestamp.as_deref()),
            (Some("/w/app"), Some("2026-05-28T20:26:40.000Z"))
        );
        let placeholder = HEADER.replace("Fix the red button", "New session - 2026-05-28T20:26:40.000Z");
        assert_eq!(meta(&placeholder).title, None);
        let mut first = || Some(HEADER.to_owned());
        let context = OpenCode.file_context(Path::new("/d/opencode.db/ses_1"), &mut first);
        assert_eq!((context.session.as_str(), context.project.as_deref()), ("ses_1", Some("/w/app")));
    }

    #[test]
    fn parts_are_a_persons_words_photos_context_and_the_answer_s_tool_calls_with_results() {
        let asked = meta(ASKED);
        assert_eq!((asked.columns.uuid.as_deref(), asked.columns.role.as_deref()), (Some("prt_1"), Some("user")));
        assert_eq!(asked.title.unwrap().1, "why is the button red?");
        assert_eq!(OpenCode.typed_input(None, false, &value(ASKED)).unwrap().text, "why is the button red?");
        assert_eq!(OpenCode.who(&value(ASKED), false).unwrap().side, Side::User);
        assert!(matches!(&OpenCode.parts(&value(PHOTO))[..], [Part::Media(m)] if m.image));
        assert!(OpenCode.typed_input(None, false, &value(READ)).is_none(), "OpenCode wrote it");
        assert_eq!(OpenCode.who(&value(READ), false).unwrap().side, Side::Note);
        assert!(meta(READ).title.is_none());
        let tool = OpenCode.parts(&value(TOOL));
        assert!(matches!(&tool[0], Part::ToolCall(c) if c.subject == "$ grep -rn btn src"));
        assert!(matches!(&tool[1], Part::ToolResult { call: Some(c), error: false, .. } if c == "call_1"));
        let m = meta(TOOL);
        assert_eq!((m.tools.as_deref(), m.columns.kind.as_deref()), (Some("bash"), Some("tool")));
        assert!(m.tool_text.unwrap().contains("color: red"));
        assert!(OpenCode.who(&value(STEP), false).is_none() && OpenCode.who(&value(HEADER), false).is_none());
        let edit = r#"{"part":{"type":"tool","callID":"c2","tool":"edit","state":{"status":"completed","input":{"filePath":"src/App.css","oldString":"red","newString":"blue"},"output":"","title":"src/App.css","metadata":{},"time":{"start":1,"end":2}}},"id":"prt_6","messageID":"msg_2","role":"assistant","model":null,"time":1}"#;
        let parts = OpenCode.parts(&value(edit));
        assert!(
            matches!(&parts[0], Part::ToolCall(c) if c.subject == "src/App.css" && c.lines == Some((1, 1)) && c.input.get("file_path").is_none()),
            "{parts:?}"
        );
    }

    #[test]
    fn only_a_pre_release_opencode_2_s_messages_are_said_not_read() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE session (id text PRIMARY KEY);").unwrap();
        assert_eq!(OpenCode.tables_not_read(&conn).unwrap(), None);
        conn.execute_batch("CREATE TABLE session_message (id text PRIMARY KEY, seq integer);").unwrap();
        assert_eq!(OpenCode.tables_not_read(&conn).unwrap(), None, "a later 1.x build's empty table");
        conn.execute_batch("INSERT INTO session_message VALUES ('msg_1', 0);").unwrap();
        assert!(OpenCode.tables_not_read(&conn).unwrap().unwrap().contains("pre-release"));
        conn.execute_batch("CREATE TABLE session_v2 (id text PRIMARY KEY);").unwrap();
        assert_eq!(OpenCode.tables_not_read(&conn).unwrap(), None, "OpenCode 2's tables are read");
    }

    const V2_USER: &str = r#"{"row":{"time":{"created":1780000000100},"text":"why is the logo blurry?","files":[{"mime":"image/png","source":{"type":"inline"},"name":"logo.png","data":"STRIPPED_MEDIA_MARKER"},{"mime":"text/plain","source":{"type":"uri","uri":"file:///w/app/notes.txt"},"name":"notes.txt"}]},"id":"msg_1","type":"user","seq":0,"time":1780000000100}"#;
    const V2_ANSWER: &str = r#"{"row":{"time":{"created":1780000001000,"completed":1780000004000},"agent":"build","model":{"id":"claude-sonnet-4-5","providerID":"anthropic"},"content":[{"type":"reasoning","text":"Look at its size."},{"type":"tool","id":"call_1","name":"read","state":{"status":"completed","input":{"filePath":"/w/app/logo.png"},"content":[{"type":"text","text":"Image read"},{"type":"file","uri":"STRIPPED_MEDIA_MARKER","mime":"image/png"}]},"time":{"created":1780000001100}},{"type":"tool","id":"call_2","name":"shell","state":{"status":"error","input":{"command":"convert"},"error":{"type":"tool.execution","message":"not found"}},"time":{"created":1780000001200}},{"type":"text","text":"It is drawn at half its size."}],"cost":0.01,"tokens":{"input":800,"output":30,"reasoning":5,"cache":{"read":100,"write":0}}},"id":"msg_2","type":"assistant","seq":3,"time":1780000001000}"#;
    const V2_SHELL: &str = r#"{"row":{"time":{"created":1780000005000},"shellID":"sh_1","command":"git status","status":"exited","exit":1,"output":{"output":"fatal: not a git repository","cursor":0,"size":28,"truncated":false}},"id":"msg_3","type":"shell","seq":5,"time":1780000005000}"#;

    #[test]
    fn opencode_2_s_rows_are_read_by_their_type() {
        let user = meta(V2_USER);
        assert_eq!(user.title, Some((title_rank::FIRST_USER_TEXT, "why is the logo blurry?".into())));
        assert_eq!((user.columns.uuid.as_deref(), user.columns.role.as_deref()), (Some("msg_1"), Some("user")));
        assert_eq!(user.columns.timestamp.as_deref(), Some("2026-05-28T20:26:40.100Z"));
        assert_eq!(OpenCode.typed_input(None, false, &value(V2_USER)).unwrap().text, "why is the logo blurry?");
        let parts = OpenCode.parts(&value(V2_USER));
        assert!(
            matches!(&parts[..], [Part::Text(_), Part::Media(m), Part::Note(n)] if m.image && n == "File: notes.txt"),
            "{parts:?}"
        );
        assert_eq!(OpenCode.who(&value(V2_USER), false).unwrap().side, Side::User);

        let answer = meta(V2_ANSWER);
        assert_eq!(answer.usage.len(), 1);
        assert_eq!(answer.usage[0].key, "opencode:msg_2");
        assert_eq!(answer.usage[0].model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!((answer.usage[0].tokens.input, answer.usage[0].tokens.output), (800, 35));
        assert!(answer.text.unwrap().contains("half its size") && answer.tool_text.unwrap().contains("not found"));
        assert!(OpenCode.usage_markers().iter().any(|m| V2_ANSWER.contains(m)));
        let parts = OpenCode.parts(&value(V2_ANSWER));
        let kinds: Vec<&str> = parts
            .iter()
            .map(|p| match p {
                Part::Thinking(_) => "thinking",
                Part::ToolCall(_) => "call",
                Part::ToolResult { error: false, media, .. } if media.len() == 1 && media[0].image => "result+photo",
                Part::ToolResult { error: true, text, .. } if text == "not found" => "error",
                Part::Text(_) => "text",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["thinking", "call", "result+photo", "call", "error", "text"]);
        assert_eq!(OpenCode.who(&value(V2_ANSWER), false).unwrap().side, Side::Assistant);
        assert!(OpenCode.typed_input(None, false, &value(V2_ANSWER)).is_none());

        let shell = OpenCode.parts(&value(V2_SHELL));
        assert_eq!(shell[0], Part::Command { name: "!".into(), args: "git status".into() });
        assert_eq!(shell[1], Part::Output { text: "fatal: not a git repository".into(), error: true });
        assert!(meta(V2_SHELL).tool_text.unwrap().contains("not a git repository"));
        // A turn that ended well is bookkeeping; one that failed is said.
        let idle = |outcome: &str| {
            value(&format!(
                r#"{{"row":{{"outcome":"{outcome}","error":{{"type":"x","message":"quota"}}}},"id":"msg_9","type":"idle","seq":9,"time":1}}"#
            ))
        };
        assert!(OpenCode.who(&idle("succeeded"), false).is_none());
        assert_eq!(OpenCode.parts(&idle("failed")), [Part::Note("Failed: quota".into())]);
    }

    #[test]
    fn usage_is_each_step_s_and_an_answer_s_own_only_where_it_has_no_step() {
        let step = meta(STEP);
        assert_eq!(step.usage.len(), 1);
        let u = &step.usage[0];
        assert_eq!((u.key.as_str(), u.model.as_deref()), ("opencode:prt_5", Some("claude-sonnet-4-5")));
        assert_eq!(
            u.tokens,
            Tokens { input: 1200, output: 100, cache_read: 3000, cache_write: 100, reasoning: 15, cache_write_1h: 0 }
        );
        // The provider's total says `output` holds the reasoning already.
        let answer = meta(ANSWER);
        assert_eq!(answer.usage[0].tokens.output, 300);
        assert_eq!(answer.usage[0].tokens.reasoning, 120);
        assert_eq!(answer.usage[0].model.as_deref(), Some("gpt-5"));
        assert!(meta(&ANSWER.replace(r#""steps":0"#, r#""steps":1"#)).usage.is_empty(), "its steps count");
        for marker in OpenCode.usage_markers() {
            assert!(STEP.contains(marker) || ANSWER.contains(marker));
        }
    }
}
