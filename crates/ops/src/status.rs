//! How a data directory stands: what the index holds ([`scrollback_read::status`]) and what it holds
//! from each transcript root, the sends still pending in the acceptance record, the live writer, how
//! changes are noticed, damage a reader met, and whether an engine runs sent messages. For
//! `scrollback status` and `GET /api/status` alike.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use scrollback_core::error::Result;
use scrollback_index::roots::Root;
use scrollback_read::status::{IndexStatus, RootCount};

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
    /// The transcript roots followed, each with what the index holds from it.
    pub roots: Vec<RootStatus>,
    /// The data directory.
    pub data_dir: PathBuf,
    /// Whether an engine runs sent messages (a server's `--engine` or `--demo`); without one, the
    /// server takes no message.
    pub engine: bool,
}

/// A transcript root, whether its directory exists now, and what the index holds from it.
#[derive(Debug, Clone)]
pub struct RootStatus {
    /// The root.
    pub root: Root,
    /// Whether its directory exists (looked at when the status is made).
    pub exists: bool,
    /// What the index holds from it; `None` when the index could not be read.
    pub count: Option<RootCount>,
}

/// Each of `roots` as the index names it: its format's name and its directory, absolute (as the
/// indexer holds roots, and so the files' paths under them).
pub fn root_names(roots: &[Root]) -> Vec<(&'static str, PathBuf)> {
    roots.iter().map(|r| (r.format.name(), std::path::absolute(&r.dir).unwrap_or_else(|_| r.dir.clone()))).collect()
}

/// Each of `roots` with `counts`, what the index holds from each (in their order).
pub fn with_counts(roots: &[Root], counts: Vec<RootCount>) -> Vec<RootStatus> {
    roots.iter().zip(counts).map(|(root, c)| RootStatus::new(root, Some(c))).collect()
}

/// Each of `roots` with what the index read on `conn` holds from it.
pub fn roots(conn: &Connection, roots: &[Root]) -> Result<Vec<RootStatus>> {
    let names = root_names(roots);
    let names: Vec<(&str, &Path)> = names.iter().map(|(f, d)| (*f, d.as_path())).collect();
    Ok(with_counts(roots, scrollback_read::status::root_counts(conn, &names)?))
}

impl RootStatus {
    /// `root` as it stands now, with `count`.
    pub fn new(root: &Root, count: Option<RootCount>) -> RootStatus {
        RootStatus { root: root.clone(), exists: root.exists(), count }
    }
}

/// The status of `data_dir` for a one-off command: its index read on `conn` (with what it holds from
/// each of `root_list`), and its acceptance record if it has one (nothing is created).
pub fn of_data_dir(conn: &Connection, data_dir: &Path, root_list: &[Root]) -> Result<Status> {
    let index = scrollback_read::status::index_status(conn, data_dir)?;
    let roots = roots(conn, root_list)?;
    let sends_pending = match scrollback_accept::AcceptStore::open_if_any(data_dir)? {
        Some(store) => store.pending_count()?,
        None => 0,
    };
    Ok(Status {
        index: Some(index),
        sends_pending,
        writer: WriterState::None,
        watcher: None,
        index_damage: None,
        roots,
        data_dir: data_dir.to_owned(),
        engine: false,
    })
}
