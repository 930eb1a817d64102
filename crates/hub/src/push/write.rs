//! Writing to the hub what `read.rs` gathered: a file's row (which carries its watermark), a
//! batch's lines with their media rows and failed images, the bytes of photos the hub lacks, and a
//! session's row, copies, usage ledger and the overview's sums, each inside the transaction the caller opens (the one
//! that moves the watermark), and what the hub holds of a file ([`HubFile`]).
//!
//! It never queries the local index, and sends a photo's bytes only as `read.rs` verified them.

use std::collections::HashSet;

use crate::Pg;
use crate::connection::{Hub, HubTransaction};

use scrollback_core::error::{Error, Result};
use scrollback_read::media;

use super::read::{Batch, Copies, Entry, LocalFile, SUMS, SessionRow, SessionRows, UsageRows, read_verified, text};

/// What the hub holds of one file of this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HubFile {
    pub(super) path: String,
    pub(super) state: String,
    pub(super) lines: i64,
    pub(super) checkpoint: i64,
    pub(super) indexed_at: String,
    pub(super) generation: i64,
    pub(super) last_off: i64,
}

impl HubFile {
    /// Whether the hub holds `file`'s row as the index has it now.
    pub(super) fn same_as(&self, file: &LocalFile) -> bool {
        file.path == self.path
            && file.state == self.state
            && file.lines == self.lines
            && file.checkpoint == self.checkpoint
            && file.indexed_at == self.indexed_at
            && file.generation == self.generation
    }
}

/// Deletes the hub's lines of a file (read again from its start here); the sessions they were of.
pub(super) fn drop_lines(tx: &mut HubTransaction<'_>, host: &str, file_id: i64) -> Result<Vec<String>> {
    let sessions =
        tx.query("SELECT DISTINCT session_id FROM entries WHERE host = $1 AND file_id = $2", &[&host, &file_id])?;
    tx.execute("DELETE FROM entries WHERE host = $1 AND file_id = $2", &[&host, &file_id])?;
    sessions.iter().map(|r| r.try_get::<_, String>(0)).collect::<Result<_, _>>().pg()
}

/// Writes a file's row: what the index says of it, with the watermark, line count and checkpoint
/// of `hub` (what the hub is to hold once the transaction commits).
pub(super) fn file_row(tx: &mut HubTransaction<'_>, host: &str, file: &LocalFile, hub: &HubFile) -> Result<()> {
    tx.execute(
        "INSERT INTO files (host, file_id, path, session_id, agent, state, lines, checkpoint, indexed_at,
                            gone_at, generation, last_off)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (host, file_id) DO UPDATE SET
            path = excluded.path, session_id = excluded.session_id, agent = excluded.agent,
            state = excluded.state, lines = excluded.lines, checkpoint = excluded.checkpoint,
            indexed_at = excluded.indexed_at, gone_at = excluded.gone_at,
            generation = excluded.generation, last_off = excluded.last_off",
        &[
            &host,
            &file.id,
            &text(&file.path),
            &text(&file.session_id),
            &file.agent,
            &file.state,
            &hub.lines,
            &hub.checkpoint,
            &hub.indexed_at,
            &file.gone_at,
            &file.generation,
            &hub.last_off,
        ],
    )?;
    Ok(())
}

/// Records files as sent, in one statement: each one's line count, checkpoint and indexing time, as
/// the index has them.
pub(super) fn files_sent(client: &mut Hub, host: &str, files: &[&LocalFile]) -> Result<()> {
    client.execute(
        "UPDATE files f SET lines = d.lines, checkpoint = d.checkpoint, indexed_at = d.indexed_at
         FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[]) AS d(file_id, lines, checkpoint, indexed_at)
         WHERE f.host = $1 AND f.file_id = d.file_id",
        &[
            &host,
            &files.iter().map(|f| f.id).collect::<Vec<_>>(),
            &files.iter().map(|f| f.lines).collect::<Vec<_>>(),
            &files.iter().map(|f| f.checkpoint).collect::<Vec<_>>(),
            &files.iter().map(|f| f.indexed_at.clone()).collect::<Vec<_>>(),
        ],
    )?;
    Ok(())
}

/// What [`send_photos`] sent.
#[derive(Debug, Default)]
pub(super) struct Photos {
    /// Payloads whose bytes were sent.
    pub(super) sent: u64,
    /// Their decoded bytes.
    pub(super) bytes: u64,
    /// Payloads whose bytes could not be read here.
    pub(super) unreadable: u64,
}

/// Sends the bytes of each payload whose blake3 the hub does not hold, one at a time, verified.
pub(super) fn send_photos(
    tx: &mut HubTransaction<'_>,
    host: &str,
    records: &[(i64, media::MediaRecord)],
) -> Result<Photos> {
    let hashes: Vec<&str> = records.iter().map(|(_, r)| r.blake3.as_str()).collect();
    if hashes.is_empty() {
        return Ok(Photos::default());
    }
    let held: HashSet<String> = tx
        .query("SELECT blake3 FROM blobs WHERE blake3 = ANY($1)", &[&hashes])?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .pg()?;
    let mut photos = Photos::default();
    let mut sent = HashSet::new();
    for (_, record) in records {
        if held.contains(&record.blake3) || !sent.insert(record.blake3.clone()) {
            continue;
        }
        let bytes = match read_verified(record) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!("{host}: photo {} not sent: {e}", record.blake3);
                photos.unreadable += 1;
                continue;
            }
        };
        tx.execute(
            "INSERT INTO blobs (blake3, media_type, length, bytes) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (blake3) DO NOTHING",
            &[&record.blake3, &record.media_type, &(bytes.len() as i64), &bytes],
        )?;
        photos.sent += 1;
        photos.bytes += bytes.len() as u64;
    }
    Ok(photos)
}

/// Sends a batch's lines (an upsert: a line sent again replaces itself), then their media rows and
/// failed images, replacing those the hub held for the same lines.
pub(super) fn send_rows(tx: &mut HubTransaction<'_>, host: &str, file_id: i64, batch: &Batch) -> Result<()> {
    let offs: Vec<i64> = batch.entries.iter().map(|e| e.off).collect();
    send_entries(tx, host, file_id, &offs, &batch.entries)?;
    for table in ["media", "failed_images"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE host = $1 AND file_id = $2 AND entry_off = ANY($3)"),
            &[&host, &file_id, &offs],
        )?;
    }
    if !batch.media.is_empty() {
        send_media(tx, host, file_id, &batch.media)?;
    }
    if !batch.failed.is_empty() {
        send_failed(tx, host, file_id, &batch.failed)?;
    }
    Ok(())
}

/// Upserts lines, `offs` being their offsets, column by column.
fn send_entries(tx: &mut HubTransaction<'_>, host: &str, file_id: i64, offs: &[i64], e: &[Entry]) -> Result<()> {
    let col = |f: &dyn Fn(&Entry) -> Option<String>| e.iter().map(f).collect::<Vec<Option<String>>>();
    tx.execute(
        "INSERT INTO entries (host, file_id, off, local_id, session_id, line, length, uuid, parent_uuid, type, role,
                              timestamp, is_sidechain, stripped, text, invalid, sort_at, sort_file, duplicate,
                              agent_id, spawned_agent, agent, hidden, tool_text, tools)
         SELECT $1, $2, * FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[],
                                      $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                                      $13::boolean[], $14::text[], $15::text[], $16::text[], $17::text[],
                                      $18::bigint[], $19::boolean[], $20::text[], $21::text[], $22::text[],
                                      $23::text[], $24::text[], $25::text[])
         ON CONFLICT (host, file_id, off) DO UPDATE SET
            local_id = excluded.local_id, session_id = excluded.session_id, line = excluded.line,
            length = excluded.length, uuid = excluded.uuid, parent_uuid = excluded.parent_uuid,
            type = excluded.type, role = excluded.role, timestamp = excluded.timestamp,
            is_sidechain = excluded.is_sidechain, stripped = excluded.stripped, text = excluded.text,
            invalid = excluded.invalid, sort_at = excluded.sort_at, sort_file = excluded.sort_file,
            duplicate = excluded.duplicate, agent_id = excluded.agent_id,
            spawned_agent = excluded.spawned_agent, agent = excluded.agent, hidden = excluded.hidden,
            tool_text = excluded.tool_text, tools = excluded.tools",
        &[
            &host,
            &file_id,
            &offs,
            &e.iter().map(|e| e.local_id).collect::<Vec<_>>(),
            &e.iter().map(|e| e.session_id.clone()).collect::<Vec<_>>(),
            &e.iter().map(|e| e.line).collect::<Vec<_>>(),
            &e.iter().map(|e| e.length).collect::<Vec<_>>(),
            &col(&|e| e.uuid.clone()),
            &col(&|e| e.parent_uuid.clone()),
            &col(&|e| e.kind.clone()),
            &col(&|e| e.role.clone()),
            &col(&|e| e.timestamp.clone()),
            &e.iter().map(|e| e.is_sidechain).collect::<Vec<_>>(),
            &col(&|e| e.stripped.clone()),
            &col(&|e| e.text.clone()),
            &col(&|e| e.invalid.clone()),
            &e.iter().map(|e| e.sort_at.clone()).collect::<Vec<_>>(),
            &e.iter().map(|e| e.sort_file).collect::<Vec<_>>(),
            &e.iter().map(|e| e.duplicate).collect::<Vec<_>>(),
            &col(&|e| e.agent_id.clone()),
            &col(&|e| e.spawned_agent.clone()),
            &e.iter().map(|e| e.agent.clone()).collect::<Vec<_>>(),
            &col(&|e| e.hidden.clone()),
            &col(&|e| e.tool_text.clone()),
            &col(&|e| e.tools.clone()),
        ],
    )?;
    Ok(())
}

/// Inserts media rows, each with its line's offset.
fn send_media(tx: &mut HubTransaction<'_>, host: &str, file_id: i64, m: &[(i64, media::MediaRecord)]) -> Result<()> {
    tx.execute(
        "INSERT INTO media (host, file_id, off, entry_off, ordinal, kind, length, encoding, media_type,
                            decoded_length, blake3)
         SELECT $1, $2, * FROM unnest($3::bigint[], $4::bigint[], $5::integer[], $6::text[], $7::bigint[],
                                      $8::text[], $9::text[], $10::bigint[], $11::text[])",
        &[
            &host,
            &file_id,
            &m.iter().map(|(_, r)| r.offset as i64).collect::<Vec<_>>(),
            &m.iter().map(|(off, _)| *off).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.ordinal.map(|o| o as i32)).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.kind.as_str().to_owned()).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.length as i64).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.encoding.as_str().to_owned()).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.media_type.as_deref().map(text)).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.decoded_length as i64).collect::<Vec<_>>(),
            &m.iter().map(|(_, r)| r.blake3.clone()).collect::<Vec<_>>(),
        ],
    )?;
    Ok(())
}

/// Inserts failed images: (line offset, ordinal, reason).
fn send_failed(tx: &mut HubTransaction<'_>, host: &str, file_id: i64, f: &[(i64, i32, String)]) -> Result<()> {
    tx.execute(
        "INSERT INTO failed_images (host, file_id, entry_off, ordinal, reason)
         SELECT $1, $2, * FROM unnest($3::bigint[], $4::integer[], $5::text[])",
        &[
            &host,
            &file_id,
            &f.iter().map(|f| f.0).collect::<Vec<_>>(),
            &f.iter().map(|f| f.1).collect::<Vec<_>>(),
            &f.iter().map(|f| f.2.clone()).collect::<Vec<_>>(),
        ],
    )?;
    Ok(())
}

/// Sends sessions' rows (or deletes them, when the index no longer has them), which of their
/// entries are copies or hidden, their usage ledgers and their sums: a few statements for all of
/// them, whatever their number.
pub(super) fn send_sessions(tx: &mut HubTransaction<'_>, host: &str, rows: &SessionRows) -> Result<()> {
    if rows.rows.is_empty() {
        return Ok(());
    }
    let ids: Vec<&String> = rows.rows.iter().map(|(id, _)| id).collect();
    let gone: Vec<&String> = rows.rows.iter().filter(|(_, row)| row.is_none()).map(|(id, _)| id).collect();
    if !gone.is_empty() {
        tx.execute("DELETE FROM sessions WHERE host = $1 AND id = ANY($2)", &[&host, &gone])?;
    }
    let present: Vec<(&String, &SessionRow)> =
        rows.rows.iter().filter_map(|(id, row)| row.as_ref().map(|row| (id, row))).collect();
    if !present.is_empty() {
        upsert_sessions(tx, host, &present)?;
    }
    mark_copies(tx, host, &ids, &rows.copies)?;
    send_usage(tx, host, &ids, &rows.usage)?;
    send_sums(tx, host, &ids, &rows.sums)
}

/// Replaces the sessions' rows of each table of the overview's sums ([`SUMS`]) with `sums` (their
/// rows of each, JSON objects with their `session_id`).
fn send_sums(tx: &mut HubTransaction<'_>, host: &str, ids: &[&String], sums: &[Vec<serde_json::Value>]) -> Result<()> {
    for (table, rows) in SUMS.iter().zip(sums) {
        let name = table.table;
        tx.execute(&format!("DELETE FROM {name} WHERE host = $1 AND session_id = ANY($2)"), &[&host, &ids])?;
        if !rows.is_empty() {
            let columns: Vec<&str> = table.columns.iter().map(|(c, _)| *c).collect();
            let typed: Vec<String> = table.columns.iter().map(|(c, t)| format!("{c} {t}")).collect();
            tx.execute(
                &format!(
                    "INSERT INTO {name} (host, session_id, {columns}) SELECT $1, session_id, {columns}
                     FROM json_to_recordset($2::text::json) AS x(session_id text, {typed})",
                    columns = columns.join(", "),
                    typed = typed.join(", "),
                ),
                &[&host, &serde_json::to_string(rows).map_err(|e| Error::Internal(e.to_string()))?],
            )?;
        }
    }
    Ok(())
}

/// Upserts sessions' rows, column by column.
fn upsert_sessions(tx: &mut HubTransaction<'_>, host: &str, rows: &[(&String, &SessionRow)]) -> Result<()> {
    let col = |f: &dyn Fn(&SessionRow) -> Option<String>| rows.iter().map(|(_, r)| f(r)).collect::<Vec<_>>();
    let num = |f: &dyn Fn(&SessionRow) -> i64| rows.iter().map(|(_, r)| f(r)).collect::<Vec<_>>();
    tx.execute(
        "INSERT INTO sessions (host, id, project, title, title_rank, first_timestamp, last_timestamp,
                               entries, images, sidechain_entries, agent, forked_from, git_branch)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[],
                                  $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::text[], $13::text[])
         ON CONFLICT (host, id) DO UPDATE SET
            project = excluded.project, title = excluded.title, title_rank = excluded.title_rank,
            first_timestamp = excluded.first_timestamp, last_timestamp = excluded.last_timestamp,
            entries = excluded.entries, images = excluded.images,
            sidechain_entries = excluded.sidechain_entries, agent = excluded.agent,
            forked_from = excluded.forked_from, git_branch = excluded.git_branch",
        &[
            &host,
            &rows.iter().map(|(id, _)| (*id).clone()).collect::<Vec<_>>(),
            &col(&|r| r.project.clone()),
            &col(&|r| r.title.clone()),
            &rows.iter().map(|(_, r)| r.title_rank as i32).collect::<Vec<_>>(),
            &col(&|r| r.first_timestamp.clone()),
            &col(&|r| r.last_timestamp.clone()),
            &num(&|r| r.entries),
            &num(&|r| r.images),
            &num(&|r| r.sidechain_entries),
            &rows.iter().map(|(_, r)| r.agent.clone()).collect::<Vec<_>>(),
            &col(&|r| r.forked_from.clone()),
            &col(&|r| r.git_branch.clone()),
        ],
    )?;
    Ok(())
}

/// Marks which of the sessions' lines are copies (and why each is hidden), and unmarks the others.
fn mark_copies(tx: &mut HubTransaction<'_>, host: &str, ids: &[&String], copies: &Copies) -> Result<()> {
    tx.execute(
        "UPDATE entries SET duplicate = false, hidden = NULL
         WHERE host = $1 AND session_id = ANY($2) AND duplicate
           AND (file_id, off) NOT IN (SELECT * FROM unnest($3::bigint[], $4::bigint[]))",
        &[&host, &ids, &copies.file_id, &copies.off],
    )?;
    // Without copies there is nothing to mark; and the join, planned on a table whose statistics
    // predate a big push, can scan all of `entries` (8 s over 100 sessions of 200,000 lines).
    if copies.file_id.is_empty() {
        return Ok(());
    }
    tx.execute(
        "UPDATE entries e SET duplicate = true, hidden = d.hidden
         FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS d(file_id, off, hidden)
         WHERE e.host = $1 AND e.file_id = d.file_id AND e.off = d.off
           AND (NOT e.duplicate OR e.hidden IS DISTINCT FROM d.hidden)",
        &[&host, &copies.file_id, &copies.off, &copies.hidden],
    )?;
    Ok(())
}

/// Replaces the sessions' usage ledgers.
fn send_usage(tx: &mut HubTransaction<'_>, host: &str, ids: &[&String], usage: &UsageRows) -> Result<()> {
    tx.execute("DELETE FROM usage WHERE host = $1 AND session_id = ANY($2)", &[&host, &ids])?;
    if !usage.key.is_empty() {
        tx.execute(
            "INSERT INTO usage (host, key, session_id, agent, model, request_id, timestamp, day, tier,
                                input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                                cache_write_1h_tokens, reasoning_tokens, lines, local_id)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                      $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[],
                                      $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[])
             ON CONFLICT (host, key) DO UPDATE SET
                session_id = excluded.session_id, agent = excluded.agent, model = excluded.model,
                request_id = excluded.request_id, timestamp = excluded.timestamp, day = excluded.day,
                tier = excluded.tier, input_tokens = excluded.input_tokens,
                output_tokens = excluded.output_tokens, cache_read_tokens = excluded.cache_read_tokens,
                cache_write_tokens = excluded.cache_write_tokens,
                cache_write_1h_tokens = excluded.cache_write_1h_tokens,
                reasoning_tokens = excluded.reasoning_tokens, lines = excluded.lines,
                local_id = excluded.local_id",
            &[
                &host,
                &usage.key,
                &usage.session_id,
                &usage.agent,
                &usage.model,
                &usage.request_id,
                &usage.timestamp,
                &usage.day,
                &usage.tier,
                &usage.tokens[0],
                &usage.tokens[1],
                &usage.tokens[2],
                &usage.tokens[3],
                &usage.tokens[4],
                &usage.tokens[5],
                &usage.lines,
                &usage.entry_id,
            ],
        )?;
    }
    Ok(())
}
