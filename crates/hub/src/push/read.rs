//! Reading, from the local index, what a push sends: the files' rows ([`LocalFile`]), a file's next
//! lines after its watermark with their media rows and failed images ([`Batch`]), sessions' rows,
//! copies, usage ledgers and the overview's sums ([`SessionRows`]), and a photo's bytes, verified against its blake3.
//! Strings come out as the hub takes them where the rows are gathered ([`text`]).
//!
//! It only reads, over a reader connection: it never writes the index and never talks to the hub.

use std::io::Read;

use rusqlite::{Connection, params};

use scrollback_core::error::Result;
use scrollback_read::index::{MEDIA_COLUMNS, media_record};
use scrollback_read::media;

/// Lines per transaction on the hub.
pub(super) const BATCH_LINES: i64 = 500;
/// A batch ends early past this many bytes of stored lines and search text.
const BATCH_BYTES: usize = 8 << 20;

/// Text as PostgreSQL takes it: it refuses NUL, which a JSON string may hold (`\u0000`), so each
/// one becomes U+FFFD. Every string a push sends goes through here where its row is gathered.
pub(super) fn text(s: &str) -> String {
    if s.contains('\0') { s.replace('\0', "\u{FFFD}") } else { s.to_owned() }
}

/// A file's row in the local index.
#[derive(Debug, Clone)]
pub(super) struct LocalFile {
    pub(super) id: i64,
    pub(super) path: String,
    pub(super) session_id: String,
    pub(super) agent: String,
    pub(super) state: String,
    pub(super) lines: i64,
    pub(super) checkpoint: i64,
    pub(super) indexed_at: String,
    pub(super) gone_at: Option<String>,
    pub(super) generation: i64,
}

/// Every file's row in the local index.
pub(super) fn local_files(conn: &Connection) -> Result<Vec<LocalFile>> {
    let mut stmt = conn.prepare(
        "SELECT id, path, session_id, agent, state, lines, checkpoint, indexed_at, gone_at, generation
         FROM files ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(LocalFile {
            id: r.get(0)?,
            path: text(&r.get::<_, String>(1)?),
            session_id: text(&r.get::<_, String>(2)?),
            agent: text(&r.get::<_, String>(3)?),
            state: text(&r.get::<_, String>(4)?),
            lines: r.get(5)?,
            checkpoint: r.get(6)?,
            indexed_at: text(&r.get::<_, String>(7)?),
            gone_at: r.get::<_, Option<String>>(8)?.map(|g| text(&g)),
            generation: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One line's row, as the hub takes it.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) off: i64,
    pub(super) local_id: i64,
    pub(super) session_id: String,
    pub(super) line: i64,
    pub(super) length: i64,
    pub(super) uuid: Option<String>,
    pub(super) parent_uuid: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) role: Option<String>,
    pub(super) timestamp: Option<String>,
    pub(super) is_sidechain: bool,
    pub(super) stripped: Option<String>,
    pub(super) text: Option<String>,
    pub(super) tool_text: Option<String>,
    pub(super) tools: Option<String>,
    pub(super) invalid: Option<String>,
    pub(super) sort_at: String,
    pub(super) sort_file: i64,
    pub(super) duplicate: bool,
    pub(super) agent_id: Option<String>,
    pub(super) spawned_agent: Option<String>,
    pub(super) agent: String,
    pub(super) hidden: Option<String>,
}

/// A file's next lines after an offset, with their media rows and failed images.
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) entries: Vec<Entry>,
    /// Each media row with its line's offset.
    pub(super) media: Vec<(i64, media::MediaRecord)>,
    /// (line offset, ordinal, reason).
    pub(super) failed: Vec<(i64, i32, String)>,
    /// It stopped at [`BATCH_BYTES`], not at the end of the file's lines.
    pub(super) cut: bool,
}

/// A file's lines after the offset `after`, with their media rows and failed images, as one
/// snapshot of the index.
pub(super) fn read_batch(conn: &Connection, file_id: i64, after: i64) -> Result<Batch> {
    // One snapshot for the batch's lines, media rows and failed images.
    let tx = conn.unchecked_transaction()?;
    let mut batch = Batch::default();
    read_entries(&tx, file_id, after, &mut batch)?;
    let (Some(first), Some(last)) = (batch.entries.first(), batch.entries.last()) else {
        return Ok(batch);
    };
    let (from, to) = (first.off, last.off);
    batch.media = media_rows(&tx, file_id, from, to)?;
    batch.failed = failed_images(&tx, file_id, from, to)?;
    tx.commit()?;
    Ok(batch)
}

/// A file's lines after the offset `after`, at most [`BATCH_LINES`] of them, into `batch`; it is
/// cut short past [`BATCH_BYTES`].
fn read_entries(conn: &Connection, file_id: i64, after: i64, batch: &mut Batch) -> Result<()> {
    let opt = |s: Option<String>| s.map(|s| text(&s));
    let mut stmt = conn.prepare_cached(
        "SELECT offset, id, session_id, line, length, uuid, parent_uuid, type, role, timestamp, is_sidechain,
                stored_line(stripped), text, invalid, sort_at, sort_file, duplicate, agent_id, spawned_agent, agent, hidden,
                tool_text, tools
         FROM entries WHERE file_id = ?1 AND offset > ?2 ORDER BY offset LIMIT ?3",
    )?;
    let mut rows = stmt.query(params![file_id, after, BATCH_LINES])?;
    let mut bytes = 0usize;
    while let Some(r) = rows.next()? {
        let entry = Entry {
            off: r.get(0)?,
            local_id: r.get(1)?,
            session_id: text(&r.get::<_, String>(2)?),
            line: r.get(3)?,
            length: r.get(4)?,
            uuid: opt(r.get(5)?),
            parent_uuid: opt(r.get(6)?),
            kind: opt(r.get(7)?),
            role: opt(r.get(8)?),
            timestamp: opt(r.get(9)?),
            is_sidechain: r.get::<_, i64>(10)? != 0,
            stripped: opt(r.get(11)?),
            text: opt(r.get(12)?),
            tool_text: opt(r.get(21)?),
            tools: opt(r.get(22)?),
            invalid: opt(r.get(13)?),
            sort_at: text(&r.get::<_, String>(14)?),
            sort_file: r.get(15)?,
            duplicate: r.get::<_, i64>(16)? != 0,
            agent_id: opt(r.get(17)?),
            spawned_agent: opt(r.get(18)?),
            agent: text(&r.get::<_, String>(19)?),
            hidden: opt(r.get(20)?),
        };
        bytes += entry.stripped.as_ref().map_or(0, String::len) + entry.text.as_ref().map_or(0, String::len);
        batch.entries.push(entry);
        if bytes > BATCH_BYTES {
            batch.cut = true;
            break;
        }
    }
    Ok(())
}

/// The media rows of a file's lines from offset `from` to `to`, each with its line's offset.
fn media_rows(conn: &Connection, file_id: i64, from: i64, to: i64) -> Result<Vec<(i64, media::MediaRecord)>> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM entries e JOIN media m ON m.entry_id = e.id JOIN files f ON f.id = e.file_id
         WHERE e.file_id = ?1 AND e.offset BETWEEN ?2 AND ?3 ORDER BY m.offset"
    ))?;
    let records = stmt.query_map(params![file_id, from, to], media_record)?;
    for record in records {
        let mut record = record?;
        record.media_type = record.media_type.map(|m| text(&m));
        out.push((record.line_offset as i64, record));
    }
    Ok(out)
}

/// The failed images of a file's lines from offset `from` to `to`: (line offset, ordinal, reason).
fn failed_images(conn: &Connection, file_id: i64, from: i64, to: i64) -> Result<Vec<(i64, i32, String)>> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT e.offset, fi.ordinal, fi.reason FROM entries e JOIN failed_images fi ON fi.entry_id = e.id
         WHERE e.file_id = ?1 AND e.offset BETWEEN ?2 AND ?3",
    )?;
    let failed = stmt.query_map(params![file_id, from, to], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    for f in failed {
        let (off, ordinal, reason): (i64, i32, String) = f?;
        out.push((off, ordinal, text(&reason)));
    }
    Ok(out)
}

/// A session's row in the index.
#[derive(Debug)]
pub(super) struct SessionRow {
    pub(super) project: Option<String>,
    pub(super) title: Option<String>,
    pub(super) title_rank: i64,
    pub(super) first_timestamp: Option<String>,
    pub(super) last_timestamp: Option<String>,
    pub(super) entries: i64,
    pub(super) images: i64,
    pub(super) sidechain_entries: i64,
    pub(super) agent: String,
    pub(super) forked_from: Option<String>,
    /// The git branch its transcript names last.
    pub(super) git_branch: Option<String>,
}

/// A session's entries that are copies of a line elsewhere, column by column: each one's file and
/// offset, and why it is hidden, if it is.
#[derive(Debug, Default)]
pub(super) struct Copies {
    pub(super) file_id: Vec<i64>,
    pub(super) off: Vec<i64>,
    pub(super) hidden: Vec<Option<String>>,
}

/// What a push sends of some sessions, gathered a session after another: each one's row, the
/// copies among their entries, their usage ledger and their rows of the overview's sums, so that
/// the hub takes them all in a few statements.
#[derive(Debug, Default)]
pub(super) struct SessionRows {
    /// Each session as the hub names it, with its row; `None` when the index no longer has it.
    pub(super) rows: Vec<(String, Option<SessionRow>)>,
    pub(super) copies: Copies,
    pub(super) usage: UsageRows,
    /// Their rows of each of [`SUMS`], in its order: JSON objects, one a row, each with its
    /// `session_id`.
    pub(super) sums: Vec<Vec<serde_json::Value>>,
}

impl SessionRows {
    /// Adds a session's row, copies, usage ledger and the overview's sums in the index.
    pub(super) fn read(&mut self, conn: &Connection, session: &str) -> Result<()> {
        let id = text(session);
        if self.rows.iter().any(|(held, _)| *held == id) {
            // Two ids the hub cannot tell apart (one with a NUL, one with U+FFFD where it was):
            // the hub holds the first's.
            return Ok(());
        }
        let row = session_row(conn, session)?;
        copies(conn, session, &mut self.copies)?;
        usage_rows(conn, session, &mut self.usage)?;
        self.sums.resize_with(SUMS.len(), Vec::new);
        for (table, rows) in SUMS.iter().zip(&mut self.sums) {
            table.rows(conn, session, &id, rows)?;
        }
        self.rows.push((id, row));
        Ok(())
    }
}

/// One of the overview's tables of sums, a session's rows of which the hub keeps as its host's
/// index has them: its name on the hub, its columns with their PostgreSQL types, and the query that
/// reads a session's rows from the index (`?1`), those columns in that order.
pub(super) struct SumsTable {
    pub(super) table: &'static str,
    pub(super) columns: &'static [(&'static str, &'static str)],
    select: &'static str,
}

/// The tables of sums a push sends with each session's row.
pub(super) const SUMS: &[SumsTable] = &[
    SumsTable {
        table: "stats_hours",
        columns: &[("hour", "text"), ("messages", "bigint"), ("prompts", "bigint")],
        select: "SELECT hour, messages, prompts FROM stats_hours WHERE session_id = ?1",
    },
    SumsTable {
        table: "tool_hours",
        columns: &[("hour", "text"), ("tool", "text"), ("calls", "bigint"), ("failures", "bigint")],
        select: "SELECT hour, tool, calls, failures FROM tool_hours WHERE session_id = ?1",
    },
    SumsTable {
        table: "response_hours",
        columns: &[("hour", "text"), ("model", "text"), ("bucket", "integer"), ("responses", "bigint")],
        select: "SELECT hour, model, bucket, responses FROM response_hours WHERE session_id = ?1",
    },
    SumsTable {
        table: "usage_hours",
        columns: &[
            ("hour", "text"),
            ("agent", "text"),
            ("model", "text"),
            ("tier", "text"),
            ("over", "bigint"),
            ("responses", "bigint"),
            ("input_tokens", "bigint"),
            ("output_tokens", "bigint"),
            ("cache_read_tokens", "bigint"),
            ("cache_write_tokens", "bigint"),
            ("cache_write_1h_tokens", "bigint"),
            ("reasoning_tokens", "bigint"),
        ],
        select: "SELECT hour, agent, model, tier, over, responses, input_tokens, output_tokens, cache_read_tokens,
                        cache_write_tokens, cache_write_1h_tokens, reasoning_tokens
                 FROM usage_hours WHERE session_id = ?1",
    },
    SumsTable {
        table: "edits",
        columns: &[
            ("local_id", "bigint"),
            ("ordinal", "integer"),
            ("timestamp", "text"),
            ("path", "text"),
            ("tool", "text"),
            ("added", "bigint"),
            ("removed", "bigint"),
        ],
        // An index's overview lists the edits of lines that are not copies (`stats`).
        select: "SELECT t.entry_id, t.ordinal, t.timestamp, t.path, t.tool, t.added, t.removed
                 FROM tool_events t JOIN entries e ON e.id = t.entry_id
                 WHERE t.session_id = ?1 AND t.path IS NOT NULL AND t.timestamp IS NOT NULL AND e.duplicate = 0",
    },
    SumsTable {
        table: "calls",
        columns: &[("local_id", "bigint"), ("calls", "bigint")],
        // Each line's tool calls, as a session's outline counts them (`history::outline`).
        select: "SELECT entry_id, count(*) FROM tool_events WHERE session_id = ?1 AND tool IS NOT NULL GROUP BY entry_id",
    },
];

impl SumsTable {
    /// A session's rows into `out`, each a JSON object keyed by the columns' names, with the
    /// session's id as the hub names it, `id`.
    fn rows(&self, conn: &Connection, session: &str, id: &str, out: &mut Vec<serde_json::Value>) -> Result<()> {
        use rusqlite::types::ValueRef;
        let mut stmt = conn.prepare_cached(self.select)?;
        let mut rows = stmt.query([session])?;
        while let Some(r) = rows.next()? {
            let mut row = serde_json::Map::new();
            row.insert("session_id".to_owned(), serde_json::Value::from(id));
            for (i, (name, _)) in self.columns.iter().enumerate() {
                let value = match r.get_ref(i)? {
                    ValueRef::Integer(n) => serde_json::Value::from(n),
                    ValueRef::Real(x) => serde_json::Value::from(x),
                    ValueRef::Text(t) => serde_json::Value::from(text(&String::from_utf8_lossy(t))),
                    ValueRef::Null | ValueRef::Blob(_) => serde_json::Value::Null,
                };
                row.insert((*name).to_owned(), value);
            }
            out.push(serde_json::Value::Object(row));
        }
        Ok(())
    }
}

/// A session's row, or `None` when the index no longer has it.
fn session_row(conn: &Connection, session: &str) -> Result<Option<SessionRow>> {
    let row = conn
        .prepare_cached(
            "SELECT project, title, title_rank, first_timestamp, last_timestamp, entries, images,
                    sidechain_entries, agent, forked_from, git_branch
             FROM sessions WHERE id = ?1",
        )?
        .query_row([session], |r| {
            let opt = |s: Option<String>| s.map(|s| text(&s));
            Ok(SessionRow {
                project: opt(r.get(0)?),
                title: opt(r.get(1)?),
                title_rank: r.get(2)?,
                first_timestamp: opt(r.get(3)?),
                last_timestamp: opt(r.get(4)?),
                entries: r.get(5)?,
                images: r.get(6)?,
                sidechain_entries: r.get(7)?,
                agent: text(&r.get::<_, String>(8)?),
                forked_from: opt(r.get(9)?),
                git_branch: opt(r.get(10)?),
            })
        });
    match row {
        Ok(row) => Ok(Some(row)),
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Which of a session's entries are copies, and why each is hidden, if it is, into `copies`.
fn copies(conn: &Connection, session: &str, copies: &mut Copies) -> Result<()> {
    let mut stmt =
        conn.prepare_cached("SELECT file_id, offset, hidden FROM entries WHERE session_id = ?1 AND duplicate = 1")?;
    let mut rows = stmt.query([session])?;
    while let Some(r) = rows.next()? {
        copies.file_id.push(r.get(0)?);
        copies.off.push(r.get(1)?);
        copies.hidden.push(r.get::<_, Option<String>>(2)?.map(|h| text(&h)));
    }
    Ok(())
}

/// Sessions' usage ledgers, column by column.
#[derive(Debug, Default)]
pub(super) struct UsageRows {
    pub(super) key: Vec<String>,
    pub(super) session_id: Vec<String>,
    pub(super) agent: Vec<String>,
    pub(super) model: Vec<Option<String>>,
    pub(super) request_id: Vec<Option<String>>,
    pub(super) timestamp: Vec<Option<String>>,
    pub(super) day: Vec<Option<String>>,
    pub(super) tier: Vec<Option<String>>,
    pub(super) tokens: [Vec<i64>; 6],
    pub(super) lines: Vec<i64>,
    /// The entry that stands for each response, as the index numbers it.
    pub(super) entry_id: Vec<i64>,
}

/// A session's usage ledger in the index, into `out`.
fn usage_rows(conn: &Connection, session: &str, out: &mut UsageRows) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT key, session_id, agent, model, request_id, timestamp, day, tier, input_tokens, output_tokens,
                cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, lines, entry_id
         FROM usage WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session])?;
    let opt = |s: Option<String>| s.map(|s| text(&s));
    while let Some(r) = rows.next()? {
        out.key.push(text(&r.get::<_, String>(0)?));
        out.session_id.push(text(&r.get::<_, String>(1)?));
        out.agent.push(text(&r.get::<_, String>(2)?));
        out.model.push(opt(r.get(3)?));
        out.request_id.push(opt(r.get(4)?));
        out.timestamp.push(opt(r.get(5)?));
        out.day.push(opt(r.get(6)?));
        out.tier.push(opt(r.get(7)?));
        for (i, column) in out.tokens.iter_mut().enumerate() {
            column.push(r.get(8 + i)?);
        }
        out.lines.push(r.get(14)?);
        out.entry_id.push(r.get(15)?);
    }
    Ok(())
}

/// A payload's decoded bytes, checked against its blake3 before they are handed out.
pub(super) fn read_verified(record: &media::MediaRecord) -> Result<Vec<u8>> {
    let mut reader = media::open(record)?;
    let mut bytes = Vec::with_capacity(record.decoded_length.min(64 << 20) as usize);
    // The reader fails at its end when the bytes do not match their length and blake3.
    reader.read_to_end(&mut bytes).map_err(|e| media::into_error(e, record))?;
    Ok(bytes)
}
