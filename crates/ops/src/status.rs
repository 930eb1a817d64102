//! How a data directory stands: what the index holds ([`scrollback_read::status`]), the sends still
//! pending in the acceptance record, the live writer, how changes are noticed, and damage a reader
//! met. For `scrollback status` and `GET /api/status` alike.

use std::path::Path;

use rusqlite::Connection;

use scrollback_core::error::Result;
use scrollback_index::roots::Root;
use scrollback_read::status::IndexStatus;

/// The live writer, as a server sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriterState {
    /// No live writer (a one-off command).
    None,
    /// It runs.
    Running,
    /// It died, for this reason.
    Failed(String),
}

impl WriterState {
    /// The name sent and printed (`none`, `running`, `failed`).
    pub fn as_str(&self) -> &'static str {
        match self {
            WriterState::None => "none",
            WriterState::Running => "running",
            WriterState::Failed(_) => "failed",
        }
    }
}

/// Everything status reports.
#[derive(Debug, Clone)]
pub struct Status {
    /// What the index holds; `None` when it is damaged (its counts are then unknown).
    pub index: Option<IndexStatus>,
    /// Sent messages the transcript does not back yet.
    pub sends_pending: i64,
    /// The live writer.
    pub writer: WriterState,
    /// How the live writer notices changes (`notify` or `poll`), if one runs.
    pub watcher: Option<&'static str>,
    /// What SQLite said when a reader found the index damaged.
    pub index_damage: Option<String>,
    /// The transcript roots followed (whether each exists is looked at when it is reported).
    pub roots: Vec<Root>,
}

/// The status of `data_dir` for a one-off command: its index read on `conn`, and its acceptance
/// record if it has one (nothing is created).
pub fn of_data_dir(conn: &Connection, data_dir: &Path) -> Result<Status> {
    let index = scrollback_read::status::index_status(conn, data_dir)?;
    let sends_pending = match crate::writer::accept_store_if_any(data_dir)? {
        Some(store) => store.pending_count()?,
        None => 0,
    };
    Ok(Status {
        index: Some(index),
        sends_pending,
        writer: WriterState::None,
        watcher: None,
        index_damage: None,
        roots: Vec::new(),
    })
}
