//! Export one session to Markdown, with its photos written beside it.
//!
//! ```text
//! cargo run --example export_markdown -- DATA_DIR SESSION_ID OUT_DIR
//! ```
//! Writes `OUT_DIR/<session>.md` and `OUT_DIR/<session>-<line>-<ordinal>.<ext>` for each photo, read
//! from the transcripts by their recorded offsets and checked against their blake3. Failed uploads
//! read `[image not displayed]`; side chains (sub-agents) are left out.

use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;

use scrollback::history::{self, HistoryEntry, Position};
use serde_json::Value;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(data_dir), Some(session), Some(out_dir)) = (args.next(), args.next(), args.next()) else {
        anyhow::bail!("usage: export_markdown DATA_DIR SESSION_ID OUT_DIR");
    };
    let session = session.to_string_lossy().into_owned();
    std::fs::create_dir_all(&out_dir)?;
    let conn = scrollback::store::open(&data_dir)?;

    // Every page, newest first, following `before`; then oldest first.
    let mut entries: Vec<HistoryEntry> = Vec::new();
    let mut at = Position::Newest;
    loop {
        let Some(page) = history::history(&conn, &session, at, history::MAX_LIMIT, false)? else {
            anyhow::bail!("no session {session} in {}", data_dir.display());
        };
        let mut page_entries = page.entries;
        page_entries.append(&mut entries);
        entries = page_entries;
        match page.before {
            Some(before) => at = Position::Before(before),
            None => break,
        }
    }

    let mut md = format!("# Session {session}\n\n");
    let mut photos = 0;
    for entry in &entries {
        let Some(raw) = &entry.entry else { continue };
        let line: Value = serde_json::from_str(raw.get())?;
        let Some(content) = line.get("message").and_then(|m| m.get("content")) else { continue };
        let who = entry.role.as_deref().or(entry.kind.as_deref()).unwrap_or("entry");
        writeln!(md, "### {who} · {}\n", entry.timestamp.as_deref().unwrap_or("")).unwrap();
        let blocks = match content {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => writeln!(md, "{}\n", block["text"].as_str().unwrap_or("")).unwrap(),
                Some("image" | "image_url" | "input_image") => match block.get("ref").and_then(Value::as_str) {
                    Some(reference) => {
                        let record = scrollback::store::media_by_ref(&conn, &reference.parse()?)?;
                        let name =
                            format!("{session}-{}-{}.{}", entry.line, record.ordinal.unwrap_or(0), record.extension());
                        let mut bytes = Vec::new();
                        let read = scrollback::media::open(&record).and_then(|mut r| {
                            r.read_to_end(&mut bytes).map_err(|e| scrollback::media::into_error(e, &record))
                        });
                        match read {
                            Ok(_) => {
                                std::fs::write(out_dir.join(&name), &bytes)?;
                                writeln!(md, "![photo]({name})\n").unwrap();
                                photos += 1;
                            }
                            Err(e) => writeln!(md, "*[photo unavailable: {e}]*\n").unwrap(),
                        }
                    }
                    None => writeln!(md, "*{}*\n", history::NOT_DISPLAYED).unwrap(),
                },
                Some("tool_use") => writeln!(md, "> tool call: `{}`\n", block["name"].as_str().unwrap_or("?")).unwrap(),
                Some("tool_result") => writeln!(md, "> tool result\n").unwrap(),
                _ => {}
            }
        }
    }
    let path = out_dir.join(format!("{session}.md"));
    std::fs::write(&path, md)?;
    println!("{} ({} entries, {photos} photos)", path.display(), entries.len());
    Ok(())
}
