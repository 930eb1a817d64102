//! Export one session to Markdown, with its photos written beside it.
//!
//! ```text
//! cargo run --example export_markdown -- DATA_DIR SESSION_ID OUT_DIR
//! ```
//! Writes `OUT_DIR/<session>.md` and `OUT_DIR/<session>-<line>-<ordinal>.<ext>` for each photo (those
//! inside tool results included), read from the transcripts by their recorded offsets and checked
//! against their blake3. Failed uploads read `[image not displayed]`; side chains (sub-agents) are
//! left out.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use scrollback::http::ApiUrls;
use scrollback::read::history::{self, HistoryEntry, Position};
use scrollback::read::render::NOT_DISPLAYED;
use scrollback::read::{index, media};
use serde_json::Value;

/// What is written: the Markdown so far, and where photos go.
struct Export<'a> {
    conn: &'a Connection,
    session: &'a str,
    out_dir: &'a Path,
    md: String,
    photos: usize,
}

impl Export<'_> {
    /// Writes one content block (recursing into a tool result's own blocks).
    fn block(&mut self, line: i64, block: &Value) -> anyhow::Result<()> {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => writeln!(self.md, "{}\n", block["text"].as_str().unwrap_or("")).unwrap(),
            Some("image" | "image_url" | "input_image") => match block.get("ref").and_then(Value::as_str) {
                Some(reference) => self.photo(line, reference)?,
                None => writeln!(self.md, "*{NOT_DISPLAYED}*\n").unwrap(),
            },
            Some("tool_use") => {
                writeln!(self.md, "> tool call: `{}`\n", block["name"].as_str().unwrap_or("?")).unwrap()
            }
            Some("tool_result") => {
                writeln!(self.md, "> tool result\n").unwrap();
                self.content(line, &block["content"])?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes `message.content` or a tool result's content: a string or an array of blocks.
    fn content(&mut self, line: i64, content: &Value) -> anyhow::Result<()> {
        match content {
            Value::String(text) => writeln!(self.md, "{text}\n").unwrap(),
            Value::Array(blocks) => {
                for block in blocks {
                    self.block(line, block)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes one photo's verified bytes beside the Markdown, and links it.
    fn photo(&mut self, line: i64, reference: &str) -> anyhow::Result<()> {
        let record = index::media_by_ref(self.conn, &reference.parse()?)?;
        let name = format!("{}-{line}-{}.{}", self.session, record.ordinal.unwrap_or(0), record.extension());
        let mut bytes = Vec::new();
        let read =
            media::open(&record).and_then(|mut r| r.read_to_end(&mut bytes).map_err(|e| media::into_error(e, &record)));
        match read {
            Ok(_) => {
                std::fs::write(self.out_dir.join(&name), &bytes)?;
                writeln!(self.md, "![photo]({name})\n").unwrap();
                self.photos += 1;
            }
            Err(e) => writeln!(self.md, "*[photo unavailable: {e}]*\n").unwrap(),
        }
        Ok(())
    }
}

/// Every entry of a session, oldest first: pages newest first, following `before`.
fn all_entries(conn: &Connection, session: &str) -> anyhow::Result<Option<Vec<HistoryEntry>>> {
    let mut entries: Vec<HistoryEntry> = Vec::new();
    let mut at = Position::Newest;
    loop {
        let Some(page) = history::history(conn, session, at, history::MAX_LIMIT, false)? else {
            return Ok(None);
        };
        let mut page_entries = page.entries;
        page_entries.append(&mut entries);
        entries = page_entries;
        match page.before {
            Some(before) => at = Position::Before(before),
            None => return Ok(Some(entries)),
        }
    }
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(data_dir), Some(session), Some(out_dir)) = (args.next(), args.next(), args.next()) else {
        anyhow::bail!("usage: export_markdown DATA_DIR SESSION_ID OUT_DIR");
    };
    let session = session.to_string_lossy().into_owned();
    std::fs::create_dir_all(&out_dir)?;
    let conn = index::open(&data_dir)?;
    let Some(entries) = all_entries(&conn, &session)? else {
        anyhow::bail!("no session {session} in {}", data_dir.display());
    };

    let mut export =
        Export { conn: &conn, session: &session, out_dir: &out_dir, md: format!("# Session {session}\n\n"), photos: 0 };
    for entry in &entries {
        let Some(rendered) = entry.render(&ApiUrls) else { continue };
        let line: Value = serde_json::from_str(&rendered)?;
        let Some(content) = line.get("message").and_then(|m| m.get("content")) else { continue };
        let who = entry.columns.role.as_deref().or(entry.columns.kind.as_deref()).unwrap_or("entry");
        writeln!(export.md, "### {who} · {}\n", entry.columns.timestamp.as_deref().unwrap_or("")).unwrap();
        export.content(entry.line, content)?;
    }
    let path = out_dir.join(format!("{session}.md"));
    std::fs::write(&path, &export.md)?;
    println!("{} ({} entries, {} photos)", path.display(), entries.len(), export.photos);
    Ok(())
}
