//! Read queries on the index: plain functions of a `&Connection`. Nothing here writes.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::db;
use crate::error::{Error, Result};
use crate::media::MediaRecord;
use crate::scan::Encoding;

/// Opens the index in `data_dir` read-only.
pub fn open(data_dir: &Path) -> Result<Connection> {
    db::open_reader(&data_dir.join(db::INDEX_FILE))
}

/// A parsed media ref: `<sessionId>/<entryUuid>/<ordinal>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRef {
    /// The session.
    pub session_id: String,
    /// The entry's `uuid`.
    pub entry_uuid: String,
    /// The image ordinal under `message.content`.
    pub ordinal: u32,
}

impl std::str::FromStr for MediaRef {
    type Err = Error;

    fn from_str(s: &str) -> Result<MediaRef> {
        let bad = || Error::BadRef(s.chars().take(200).collect());
        let mut parts = s.split('/');
        let (Some(session), Some(uuid), Some(ordinal), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let valid = |p: &str| !p.is_empty() && p.len() <= 256 && !p.contains(['\0', '\\']) && p != "." && p != "..";
        if !valid(session) || !valid(uuid) || ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        Ok(MediaRef {
            session_id: session.to_owned(),
            entry_uuid: uuid.to_owned(),
            ordinal: ordinal.parse().map_err(|_| bad())?,
        })
    }
}

impl std::fmt::Display for MediaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.session_id, self.entry_uuid, self.ordinal)
    }
}

const MEDIA_COLUMNS: &str = "m.id, f.path, f.state, m.offset, m.length, m.encoding, m.media_type, m.decoded_length,
     m.blake3, m.kind, m.ordinal, e.session_id, e.uuid";

fn media_record(r: &Row<'_>) -> rusqlite::Result<MediaRecord> {
    let encoding: String = r.get(5)?;
    Ok(MediaRecord {
        id: r.get(0)?,
        path: PathBuf::from(r.get::<_, String>(1)?),
        file_live: r.get::<_, String>(2)? == "live",
        offset: r.get::<_, i64>(3)? as u64,
        length: r.get::<_, i64>(4)? as u64,
        encoding: Encoding::parse(&encoding).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                5,
                rusqlite::types::Type::Text,
                format!("encoding {encoding}").into(),
            )
        })?,
        media_type: r.get(6)?,
        decoded_length: r.get::<_, i64>(7)? as u64,
        blake3: r.get(8)?,
        kind: r.get(9)?,
        ordinal: r.get(10)?,
        session_id: r.get(11)?,
        entry_uuid: r.get(12)?,
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
        .query_row(
            "SELECT fi.reason FROM entries e JOIN failed_images fi ON fi.entry_id = e.id
             WHERE e.uuid = ?2 AND e.session_id = ?1 AND fi.ordinal = ?3 LIMIT 1",
            params![r.session_id, r.entry_uuid, r.ordinal],
            |row| row.get(0),
        )
        .optional()?;
    match failed {
        Some(reason) => Err(Error::FailedUpload { what: r.to_string(), reason }),
        None => Err(Error::NotFound(r.to_string())),
    }
}

/// A payload by the blake3 (hex) of its decoded bytes; a live file wins over a gone one.
pub fn media_by_hash(conn: &Connection, blake3: &str) -> Result<MediaRecord> {
    if blake3.len() != 64 || !blake3.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::NotFound(blake3.chars().take(80).collect()));
    }
    conn.prepare_cached(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
         WHERE m.blake3 = ?1
         ORDER BY f.state = 'live' DESC, m.id DESC LIMIT 1"
    ))?
    .query_row([blake3.to_ascii_lowercase()], media_record)
    .optional()?
    .ok_or_else(|| Error::NotFound(blake3.to_owned()))
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
    for table in ["files", "sessions", "entries", "media", "failed_images"] {
        let n: i64 = conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        out.push((table.to_owned(), n));
    }
    let fts: i64 = conn.query_row("SELECT count(*) FROM entries_fts", [], |r| r.get(0))?;
    out.push(("entries_fts".to_owned(), fts));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_parse_strictly() {
        let r: MediaRef = "s-1/u-2/3".parse().unwrap();
        assert_eq!((r.session_id.as_str(), r.entry_uuid.as_str(), r.ordinal), ("s-1", "u-2", 3));
        for bad in ["", "a/b", "a/b/c", "a/b/-1", "a/b/1/2", "../b/1", "a//1", "a/b/99999999999", "a\0/b/1"] {
            assert!(bad.parse::<MediaRef>().is_err(), "{bad:?}");
        }
    }
}
