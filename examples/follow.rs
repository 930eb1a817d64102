//! Follow a session live in the terminal: its last entries, then each new one as it is indexed.
//!
//! ```text
//! cargo run --example follow -- DATA_DIR SESSION_ID
//! ```
//! Reads the index read-only, so it runs beside `scrollback serve` (which keeps the index current):
//! the newest page first, then a catch-up from its `after` cursor twice a second.

use std::path::PathBuf;
use std::time::Duration;

use scrollback::http::ApiUrls;
use scrollback::read::history::{self, HistoryEntry, Position};
use scrollback::read::render::NOT_DISPLAYED;
use serde_json::Value;

fn summary(entry: &HistoryEntry) -> String {
    if let Some(reason) = entry.invalid() {
        return format!("(invalid line: {reason})");
    }
    let Some(rendered) = entry.render(&ApiUrls) else { return String::new() };
    let Ok(line) = serde_json::from_str::<Value>(&rendered) else { return String::new() };
    let content = line.get("message").and_then(|m| m.get("content"));
    let mut parts = Vec::new();
    match content {
        Some(Value::String(text)) => parts.push(text.clone()),
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => parts.push(block["text"].as_str().unwrap_or("").to_owned()),
                    Some("image") if block.get("ref").is_some() => {
                        parts.push(format!("[photo {}]", block["url"].as_str().unwrap_or("")))
                    }
                    Some("image") => parts.push(NOT_DISPLAYED.to_owned()),
                    Some("tool_use") => parts.push(format!("[tool {}]", block["name"].as_str().unwrap_or("?"))),
                    Some("tool_result") => parts.push("[tool result]".to_owned()),
                    _ => {}
                }
            }
        }
        _ => parts.push(line.get("summary").and_then(Value::as_str).unwrap_or("").to_owned()),
    }
    let text = parts.join(" ").replace('\n', " ");
    text.chars().take(160).collect()
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(data_dir), Some(session)) = (args.next().map(PathBuf::from), args.next()) else {
        anyhow::bail!("usage: follow DATA_DIR SESSION_ID");
    };
    let session = session.to_string_lossy().into_owned();
    let conn = scrollback::read::index::open(&data_dir)?;
    let mut at = Position::Newest;
    loop {
        let Some(page) = history::history(&conn, &session, at, 10, false)? else {
            anyhow::bail!("no session {session} in {}", data_dir.display());
        };
        for entry in &page.entries {
            let who = entry.columns.role.as_deref().or(entry.columns.kind.as_deref()).unwrap_or("?");
            println!("{:>5} {:<9} {}", entry.line, who, summary(entry));
        }
        if let Some(after) = page.after {
            at = Position::After(after);
        }
        if page.entries.is_empty() {
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}
