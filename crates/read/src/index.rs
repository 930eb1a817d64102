//! Opening the index for reading, and looking payloads up: plain functions of a `&Connection`.
//! Nothing here writes (a reader connection refuses to).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::media::MediaRecord;
use scrollback_core::codec::refs::{ContentHash, MediaName, MediaRef};
use scrollback_core::codec::scan::{Encoding, MediaKind};
use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};

/// Opens the index in `data_dir` read-only.
pub fn open(data_dir: &Path) -> Result<Connection> {
    ConnectionKind::Reader.open(&data_dir.join(db::INDEX_FILE))
}

/// The columns [`media_record`] reads, over `media m JOIN entries e JOIN files f`.
pub const MEDIA_COLUMNS: &str = "m.id, f.path, f.state, m.offset, m.length, m.encoding, m.media_type,
     m.decoded_length, m.blake3, m.kind, m.ordinal, e.session_id, e.uuid, e.id, e.offset, f.vault";

fn bad_column(column: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, format!("{what} {value:?}").into())
}

/// One media row with its entry and file, from [`MEDIA_COLUMNS`].
pub fn media_record(r: &Row<'_>) -> rusqlite::Result<MediaRecord> {
    let encoding: String = r.get(5)?;
    let kind: String = r.get(9)?;
    Ok(MediaRecord {
        id: r.get(0)?,
        // A gone transcript's bytes are read from its vault link, where there is one: the same
        // inode, so every recorded offset holds.
        path: PathBuf::from(match (r.get::<_, String>(2)?.as_str(), r.get::<_, Option<String>>(15)?) {
            ("gone", Some(vault)) => vault,
            _ => r.get::<_, String>(1)?,
        }),
        file_live: r.get::<_, String>(2)? == "live" || r.get::<_, Option<String>>(15)?.is_some(),
        from_vault: r.get::<_, String>(2)? == "gone" && r.get::<_, Option<String>>(15)?.is_some(),
        offset: r.get::<_, i64>(3)? as u64,
        length: r.get::<_, i64>(4)? as u64,
        encoding: Encoding::parse(&encoding).ok_or_else(|| bad_column(5, "encoding", &encoding))?,
        media_type: r.get(6)?,
        decoded_length: r.get::<_, i64>(7)? as u64,
        blake3: r.get(8)?,
        kind: MediaKind::parse(&kind).ok_or_else(|| bad_column(9, "kind", &kind))?,
        ordinal: r.get(10)?,
        session_id: r.get(11)?,
        entry_uuid: r.get(12)?,
        entry_id: r.get(13)?,
        line_offset: r.get::<_, i64>(14)? as u64,
        held: None,
    })
}

/// The payload a ref names. A failed upload is [`Error::FailedUpload`]; anything else unknown is
/// [`Error::NotFound`]. When an entry appears in several files (a copied transcript), a live file wins.
pub fn media_by_ref(conn: &Connection, r: &MediaRef) -> Result<MediaRecord> {
    let found = conn
        .prepare_cached(&format!(
            "SELECT {MEDIA_COLUMNS}
             FROM entries e JOIN media m ON m.entry_id = e.id JOIN files f ON f.id = e.file_id
             WHERE e.uuid = ?2 AND e.session_id = ?1 AND m.ordinal = ?3
             ORDER BY f.state = 'live' DESC, e.id DESC LIMIT 1"
        ))?
        .query_row(params![r.session_id, r.entry_uuid, r.ordinal], media_record)
        .optional()?;
    if let Some(record) = found {
        return Ok(record);
    }
    let failed: Option<String> = conn
        .prepare_cached(
            "SELECT fi.reason FROM entries e JOIN failed_images fi ON fi.entry_id = e.id
             WHERE e.uuid = ?2 AND e.session_id = ?1 AND fi.ordinal = ?3 LIMIT 1",
        )?
        .query_row(params![r.session_id, r.entry_uuid, r.ordinal], |row| row.get(0))
        .optional()?;
    match failed {
        Some(reason) => Err(Error::FailedUpload { what: r.to_string(), reason }),
        None => Err(Error::NotFound(r.to_string())),
    }
}

/// A payload by the blake3 of its decoded bytes; a live file wins over a gone one.
pub fn media_by_hash(conn: &Connection, hash: &ContentHash) -> Result<MediaRecord> {
    conn.prepare_cached(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
         WHERE m.blake3 = ?1
         ORDER BY f.state = 'live' DESC, m.id DESC LIMIT 1"
    ))?
    .query_row([hash.as_str()], media_record)
    .optional()?
    .ok_or_else(|| Error::NotFound(hash.to_string()))
}

/// A payload by ref or by hash.
pub fn media_by_name(conn: &Connection, name: &MediaName) -> Result<MediaRecord> {
    match name {
        MediaName::Ref(r) => media_by_ref(conn, r),
        MediaName::Hash(h) => media_by_hash(conn, h),
    }
}

/// Every payload of a session, in line order.
pub fn media_of_session(conn: &Connection, session_id: &str) -> Result<Vec<MediaRecord>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM entries e JOIN media m ON m.entry_id = e.id JOIN files f ON f.id = e.file_id
         WHERE e.session_id = ?1
         ORDER BY e.file_id, e.line, m.offset"
    ))?;
    let rows = stmt.query_map([session_id], media_record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Row counts of every table, for checks and the CLI summary.
pub fn table_counts(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut out = Vec::new();
    for table in ["files", "sessions", "entries", "media", "failed_images", "entries_fts"] {
        let n: i64 = conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        out.push((table.to_owned(), n));
    }
    Ok(out)
}
