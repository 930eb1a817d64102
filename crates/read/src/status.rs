//! What the index holds and how it stands, for `scrollback status` and `GET /api/status`.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use scrollback_core::db;
use scrollback_core::error::{Error, Result};

/// What a team's hub holds (`serve --postgres`): its hosts, and the photos' bytes pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HubStatus {
    /// The hub's schema version.
    pub schema_version: i64,
    /// The hosts that pushed to it, by name.
    pub hosts: Vec<HostStatus>,
    /// Payloads whose bytes it holds (each once, whichever hosts hold it).
    pub blobs: i64,
    /// Their decoded bytes.
    pub blob_bytes: i64,
}

/// One host of a team's hub: when it pushed, and what its sessions' rows say they hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostStatus {
    /// Its name (`push --host`).
    pub name: String,
    /// When it first pushed (RFC 3339, UTC).
    pub first_push_at: String,
    /// When a push of it last sent something; `None` before its first push ended.
    pub last_push_at: Option<String>,
    /// Its sessions on the hub.
    pub sessions: i64,
    /// Their entries, as each session counts them (`sessions.entries`: those history shows).
    pub entries: i64,
    /// Their photos, as each session counts them (`sessions.images`).
    pub photos: i64,
}

/// Counts of what the index holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexStatus {
    /// Transcripts followed (their files exist).
    pub transcripts_live: i64,
    /// Transcripts seen gone (the index keeps their history).
    pub transcripts_gone: i64,
    /// Sessions.
    pub sessions: i64,
    /// Sessions of each agent, by name.
    pub agents: Vec<(String, i64)>,
    /// Entries history shows (copies left out), invalid lines included.
    pub entries: i64,
    /// Of those, lines that could not be indexed.
    pub invalid_lines: i64,
    /// Lines the index holds that history leaves out: copies of an entry and an agent's replays
    /// (`entries.duplicate`). With `entries`, every line indexed.
    pub hidden_lines: i64,
    /// Photos: image payloads under `message.content`, with a ref, of entries history shows.
    pub photos: i64,
    /// Every payload stripped from the lines the index holds, hidden ones included: photos, their
    /// copies (a tool's result carries its photo twice), documents and files. `index` counts these.
    pub payloads: i64,
    /// Bytes of the index's files (`index.sqlite3` and its write-ahead log).
    pub index_bytes: u64,
    /// Bytes free for an unprivileged user on the data directory's file system.
    pub free_bytes: Option<u64>,
    /// The vault of hard links.
    pub vault: VaultStatus,
}

/// The vault: whether it is on, its links, and what only it still holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VaultStatus {
    /// Why the writer keeps no links (another file system, refused, `--vault off`); `None` if on.
    pub off: Option<String>,
    /// Transcripts with a link.
    pub links: i64,
    /// Bytes of the links whose transcripts are gone: what only the vault still holds.
    pub only_in_vault_bytes: u64,
    /// The retention check: links that are missing, or that are no longer the inode of their row
    /// (each is logged by the writer when it opens; nothing is deleted to fix them).
    pub broken: Vec<String>,
}

/// The vault's state, and the retention check: every recorded link is stat'ed.
pub fn vault_status(conn: &Connection) -> Result<VaultStatus> {
    use std::os::unix::fs::MetadataExt;
    let off: Option<String> =
        conn.query_row("SELECT value FROM scrollback_meta WHERE key = 'vault:off'", [], |r| r.get(0)).optional()?;
    let mut stmt = conn.prepare("SELECT id, vault, dev, inode, state, size FROM files WHERE vault IS NOT NULL")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, i64>(5)?,
        ))
    })?;
    let mut status = VaultStatus { off, ..VaultStatus::default() };
    for row in rows {
        let (id, link, dev, inode, state, size) = row?;
        status.links += 1;
        // A link is the transcript's inode; a database's session is kept as the document rendered
        // from its rows, as long as what was read.
        let render = scrollback_core::files::is_render_of(Path::new(&link), dev, inode);
        match std::fs::metadata(&link) {
            Ok(meta)
                if (meta.dev() as i64, meta.ino() as i64) == (dev, inode) || (render && meta.len() as i64 == size) =>
            {
                if state == "gone" {
                    status.only_in_vault_bytes += meta.len();
                }
            }
            Ok(_) => status.broken.push(format!("file {id}: its vault link is another file than the one indexed")),
            Err(e) => status.broken.push(format!("file {id}: its vault link cannot be read ({e})")),
        }
    }
    Ok(status)
}

/// Reads the counts from `conn`, and the sizes from `data_dir`.
pub fn index_status(conn: &Connection, data_dir: &Path) -> Result<IndexStatus> {
    let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    let index = data_dir.join(db::INDEX_FILE);
    let mut index_bytes = 0;
    for suffix in ["", "-wal"] {
        let mut name = index.as_os_str().to_owned();
        name.push(suffix);
        index_bytes += std::fs::metadata(&name).map(|m| m.len()).unwrap_or(0);
    }
    // One statement, so one snapshot: the lines history shows are every line less the hidden ones.
    let (entries, hidden_lines) = conn.query_row(
        "SELECT lines - hidden, hidden FROM (SELECT (SELECT count(*) FROM entries) AS lines,
                (SELECT count(*) FROM entries WHERE duplicate <> 0) AS hidden)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(IndexStatus {
        transcripts_live: count("SELECT count(*) FROM files WHERE state = 'live'")?,
        transcripts_gone: count("SELECT count(*) FROM files WHERE state = 'gone'")?,
        sessions: count("SELECT count(*) FROM sessions")?,
        agents: conn
            .prepare("SELECT agent, count(*) FROM sessions GROUP BY agent ORDER BY agent")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?,
        entries,
        // Both counts walk a small partial index (`entries_hidden`, `entries_invalid`), and every
        // line is counted from the smallest index of all: never the entries table itself.
        invalid_lines: count("SELECT count(*) FROM entries WHERE duplicate = 0 AND invalid IS NOT NULL")?,
        hidden_lines,
        photos: count(
            "SELECT count(*) FROM media m JOIN entries e ON e.id = m.entry_id
             WHERE e.duplicate = 0 AND m.ordinal IS NOT NULL AND m.kind = 'image'",
        )?,
        payloads: count("SELECT count(*) FROM media")?,
        index_bytes,
        free_bytes: free_bytes(data_dir).ok(),
        vault: vault_status(conn)?,
    })
}

/// What the index holds from one transcript root: the followed transcripts under its directory
/// and their sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RootCount {
    /// Followed transcripts (their files exist) of the root's format under its directory.
    pub transcripts: i64,
    /// The sessions of those transcripts.
    pub sessions: i64,
}

/// For each root (a format's name and a directory), what the index holds from it, in their order. A
/// file under two nested roots of one format counts in both.
pub fn root_counts(conn: &Connection, roots: &[(&str, &Path)]) -> Result<Vec<RootCount>> {
    let mut stmt = conn.prepare(
        "SELECT count(*), count(DISTINCT session_id) FROM files
         WHERE state = 'live' AND agent = ?1 AND substr(path, 1, length(?2)) = ?2",
    )?;
    roots
        .iter()
        .map(|(format, dir)| {
            // Under the directory: its path and a separator, so that `/a/b` is not under `/a/bc`.
            let mut prefix = dir.to_string_lossy().into_owned();
            if !prefix.ends_with('/') {
                prefix.push('/');
            }
            let (transcripts, sessions) = stmt.query_row((format, &prefix), |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(RootCount { transcripts, sessions })
        })
        .collect()
}

/// Bytes available to an unprivileged user on the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Result<u64> {
    let stat = rustix::fs::statvfs(dir).map_err(|e| Error::io(dir, e.into()))?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}
