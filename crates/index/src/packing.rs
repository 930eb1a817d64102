//! How the writer packs the lines it stores ([`scrollback_core::pack`]): without a
//! dictionary until the index holds [`TRAIN_AFTER`] stored lines, then with one trained on the
//! newest of them, once, kept in `dictionaries` and used for every line after.
//!
//! Reading threads pack ahead with the dictionary of the moment (`Shared`); the writer packs what
//! was packed with another (or not at all) again as it inserts, so a row never names a dictionary
//! the index does not hold. When the dictionary is made, the lines stored before it (the first few
//! thousand, or all of an index from before version 14) are packed with it too.

use std::sync::{Arc, PoisonError, RwLock};

use rusqlite::{Connection, params};

use scrollback_core::db;
use scrollback_core::error::Result;
use scrollback_core::pack::{self, Dictionary};

/// A dictionary is trained once the index holds this many stored lines.
pub const TRAIN_AFTER: u64 = 2000;
/// It is trained on at most this many of the newest stored lines.
const SAMPLES: i64 = 5000;

/// The dictionary new lines are packed with, shared with the reading threads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shared(Arc<RwLock<Option<Dictionary>>>);

impl Shared {
    /// The dictionary of the moment, if the index has one.
    pub(crate) fn current(&self) -> Option<Dictionary> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set(&self, dictionary: Dictionary) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(dictionary);
    }
}

/// A stored line packed by a reading thread: with which dictionary (0: none), and the frame.
#[derive(Debug, Clone)]
pub struct Packed {
    /// The dictionary's id, 0 for none.
    pub dictionary: u32,
    /// The zstd frame.
    pub frame: Vec<u8>,
}

/// Packs `line` with `dictionary` (or none): what a reading thread does ahead of the writer.
pub(crate) fn pack_ahead(dictionary: Option<&Dictionary>, line: &str) -> Option<Packed> {
    let frame = pack::pack(dictionary, line).ok()?;
    Some(Packed { dictionary: dictionary.map_or(0, Dictionary::id), frame })
}

/// What the writer stores for `line`: the frame packed ahead if it was packed with `dictionary`,
/// else `line` packed now; the text itself if zstd fails (a row stays readable either way).
pub(crate) fn stored_value<'a>(
    dictionary: Option<&Dictionary>,
    line: &'a str,
    ahead: Option<&'a Packed>,
) -> StoredValue<'a> {
    let id = dictionary.map_or(0, Dictionary::id);
    if let Some(packed) = ahead.filter(|p| p.dictionary == id) {
        return StoredValue::Ahead(&packed.frame);
    }
    match pack::pack(dictionary, line) {
        Ok(frame) => StoredValue::Packed(frame),
        Err(e) => {
            tracing::warn!("a line is stored unpacked: {e}");
            StoredValue::Text(line)
        }
    }
}

/// A stored line as its row keeps it.
#[derive(Debug)]
pub(crate) enum StoredValue<'a> {
    /// A zstd frame packed ahead.
    Ahead(&'a [u8]),
    /// A zstd frame packed by the writer.
    Packed(Vec<u8>),
    /// Text, where packing failed.
    Text(&'a str),
}

impl rusqlite::ToSql for StoredValue<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            StoredValue::Ahead(frame) => frame.to_sql(),
            StoredValue::Packed(frame) => frame.to_sql(),
            StoredValue::Text(text) => text.to_sql(),
        }
    }
}

/// The writer's packing: the shared dictionary, and how many lines were stored since the index
/// last had a chance to train one.
#[derive(Debug, Default)]
pub(crate) struct Packing {
    shared: Shared,
    /// Stored lines towards [`TRAIN_AFTER`], while there is no dictionary.
    waiting: u64,
}

impl Packing {
    /// The index's packing as `conn` finds it: its newest dictionary (every one made known to the
    /// process), or how many lines it holds towards training one.
    pub(crate) fn open(conn: &Connection) -> Result<Packing> {
        let packing = Packing::default();
        match db::load_dictionaries(conn)? {
            Some(dictionary) => {
                packing.shared.set(dictionary);
                Ok(packing)
            }
            None => {
                let waiting: i64 = conn.query_row(
                    "SELECT count(*) FROM (SELECT 1 FROM entries WHERE stripped IS NOT NULL LIMIT ?1)",
                    [TRAIN_AFTER as i64],
                    |r| r.get(0),
                )?;
                Ok(Packing { waiting: waiting as u64, ..packing })
            }
        }
    }

    /// The dictionary shared with reading threads.
    pub(crate) fn shared(&self) -> Shared {
        self.shared.clone()
    }

    /// The dictionary new lines are packed with.
    pub(crate) fn current(&self) -> Option<Dictionary> {
        self.shared.current()
    }

    /// Whether [`Packing::stored`] of `lines` more lines will train a dictionary (which packs the
    /// lines stored so far again, in transactions of its own).
    pub(crate) fn will_train(&self, lines: u64) -> bool {
        self.current().is_none() && self.waiting + lines >= TRAIN_AFTER
    }

    /// Notes that a commit stored `lines` lines; trains the dictionary once there are enough. A
    /// dictionary that cannot be trained (too few or too alike lines) is tried again after as many
    /// lines again.
    pub(crate) fn stored(&mut self, conn: &Connection, lines: u64) -> Result<()> {
        if self.current().is_some() {
            return Ok(());
        }
        self.waiting += lines;
        if self.waiting < TRAIN_AFTER {
            return Ok(());
        }
        self.waiting = 0;
        let started = std::time::Instant::now();
        let samples: Vec<String> = {
            let mut stmt = conn.prepare(
                "SELECT stored_line(stripped) FROM entries WHERE stripped IS NOT NULL ORDER BY id DESC LIMIT ?1",
            )?;
            let rows = stmt.query_map([SAMPLES], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        match Dictionary::train(&samples) {
            Ok(dictionary) => {
                conn.execute(
                    "INSERT OR REPLACE INTO dictionaries (id, made_at, samples, bytes)
                     VALUES (?1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?2, ?3)",
                    params![dictionary.id(), samples.len() as i64, dictionary.bytes()],
                )?;
                pack::remember(&dictionary);
                let repacked = repack(conn, &dictionary)?;
                tracing::info!(
                    id = dictionary.id(),
                    samples = samples.len(),
                    bytes = dictionary.bytes().len(),
                    repacked,
                    seconds = started.elapsed().as_secs_f64(),
                    "a dictionary for stored lines was trained"
                );
                self.shared.set(dictionary);
            }
            Err(e) => tracing::info!(samples = samples.len(), "lines stay packed without a dictionary for now: {e}"),
        }
        Ok(())
    }
}

/// Packs every line stored before `dictionary` (without one, or as text by an older version) with
/// it, a few thousand rows a transaction: the lines a dictionary is trained on are the first few
/// thousand of a new index, and an index from before version 14 is packed once. Returns how many.
fn repack(conn: &Connection, dictionary: &Dictionary) -> Result<u64> {
    let mut after = 0i64;
    let mut repacked = 0u64;
    loop {
        let tx = conn.unchecked_transaction()?;
        let rows: Vec<(i64, String)> = {
            let mut stmt = tx.prepare_cached(
                "SELECT id, stored_line(stripped) FROM entries WHERE id > ?1 AND stripped IS NOT NULL ORDER BY id LIMIT 5000",
            )?;
            let rows = stmt.query_map([after], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let Some((last, _)) = rows.last() else { break };
        after = *last;
        {
            let mut update = tx.prepare_cached("UPDATE entries SET stripped = ?2 WHERE id = ?1")?;
            for (id, line) in &rows {
                if let Ok(frame) = pack::pack(Some(dictionary), line) {
                    update.execute(params![id, frame])?;
                    repacked += 1;
                }
            }
        }
        tx.commit()?;
    }
    Ok(repacked)
}
