//! Transcript formats: what each agent writes, in one file per agent.
//!
//! Everything scrollback knows about one agent's transcripts lives in that agent's file behind the
//! [`Format`] trait: where a line's content and image blocks are (so the scanner numbers image
//! ordinals there), which session and file key a path gives, a line's columns, search text and
//! title, what counts as a person's typed input (for reconcile), and where the agent keeps its
//! transcripts by default. The writer, the readers and the reconcile rule ask the format; none of
//! them knows a field name of any agent.
//!
//! Adding a format is adding one file beside [`claude`] that implements [`Format`], and one line in
//! [`FORMATS`].
//!
//! A format does no I/O beyond reading the environment for its default roots, and never touches
//! SQLite.

pub mod claude;
pub(crate) mod loose;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use crate::codec::scan::BlockPlaces;
use crate::codec::scan::STRIPPED_MEDIA_MARKER;
use crate::codec::words;

/// What one agent writes. See the module documentation.
pub trait Format: Send + Sync + std::fmt::Debug {
    /// The agent's name, as stored with each session and entry and given to `--root NAME:DIR`.
    fn name(&self) -> &'static str;

    /// Where a line's image blocks are: those under these places get ordinals (and so refs).
    fn block_places(&self) -> &'static BlockPlaces;

    /// The session a file's path names, for lines that name none.
    fn session_from_path(&self, path: &Path) -> String;

    /// The `file` part of the [`Order`](crate::codec::order::Order) of an entry of `session` in the file at `path`: 0 for the
    /// session's main transcript, else a number that depends on the file's name only.
    fn file_key(&self, path: &Path, session: &str) -> i64;

    /// The columns, search text and title of a stored (stripped) line.
    fn describe(&self, stripped: &str) -> Result<Meta, MetaError>;

    /// What a person typed, if this history entry (its `type` column, whether it is a side chain,
    /// and its rendered line) carries it: the only entries that can back a sent message.
    fn typed_input(&self, kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed>;

    /// Where the agent keeps its transcripts when nothing says otherwise, from the environment
    /// (`var` reads a variable; `HOME` among them).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf>;
}

/// Every format scrollback reads, in the order their default roots are listed.
pub static FORMATS: &[&dyn Format] = &[&claude::Claude];

/// Claude Code's format (and the Claude Agent SDK's, which writes the same).
pub static CLAUDE: &dyn Format = &claude::Claude;

/// The format called `name`, if scrollback reads it.
pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

/// The names of every format, for messages.
pub fn names() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name()).collect()
}

/// Title ranks (which kind of line named the session); a higher rank wins.
pub mod title_rank {
    use crate::codec::order::Order;

    /// A title the person gave the session.
    pub const CUSTOM: u8 = 4;
    /// A title the agent made.
    pub const AI: u8 = 3;
    /// A summary line.
    pub const SUMMARY: u8 = 2;
    /// The first words the person wrote in the main transcript.
    pub const FIRST_USER_TEXT: u8 = 1;
    /// From this rank up the latest title (in conversation order) wins over an earlier one of the
    /// same rank; below it (the person's first words) the earliest stays. The sessions upsert
    /// states this rule in SQL with this constant, so both say the same.
    pub const LATEST_WINS_FROM: u8 = SUMMARY;

    /// Whether a title of rank `new` from the entry at `new_order` replaces one of rank `old` from
    /// `old_order`.
    pub fn replaces(new: u8, new_order: &Order, old: u8, old_order: &Order) -> bool {
        new > old
            || (new == old && if new >= LATEST_WINS_FROM { new_order >= old_order } else { new_order < old_order })
    }
}

/// The fields of a line that the index keeps as `entries` columns and gives back with each history
/// entry, as they were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    /// The entry's own id.
    pub uuid: Option<String>,
    /// The id of the entry it follows.
    pub parent_uuid: Option<String>,
    /// The line's kind (`type`).
    pub kind: Option<String>,
    /// The message's role.
    pub role: Option<String>,
    /// When it was written.
    pub timestamp: Option<String>,
    /// Whether it is on a side chain.
    pub is_sidechain: bool,
}

/// What the indexer reads of a line: its columns, and what it adds to its session and to search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// The session the line names.
    pub session_id: Option<String>,
    /// The `entries` columns.
    pub columns: Columns,
    /// The working directory: the session's project.
    pub cwd: Option<String>,
    /// Plain text for search, with word boundaries marked ([`crate::codec::words::mark`]).
    pub text: Option<String>,
    /// A title this line gives its session, with its rank.
    pub title: Option<(u8, String)>,
    /// The sub-agent whose transcript this line is in.
    pub agent_id: Option<String>,
    /// The sub-agent this line's tool call ran.
    pub spawned_agent: Option<String>,
}

/// Why a stored line gives no entry: it is not JSON, or it is JSON but not an object.
#[derive(Debug)]
pub enum MetaError {
    /// Not JSON (the parser's message).
    NotJson(String),
    /// Valid JSON, but not an object.
    NotObject,
}

/// What a person typed, as an entry carries it: its text, and each image's blake3 where the entry
/// knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typed {
    /// The text, as written.
    pub text: String,
    /// One item per image, in order.
    pub images: Vec<Option<String>>,
}

/// Appends `s` (trimmed) to search text on a line of its own; nothing for empty text or a payload's
/// marker.
pub(crate) fn push_text(out: &mut String, s: &str) {
    let s = s.trim();
    if s.is_empty() || s == STRIPPED_MEDIA_MARKER {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(s);
}

/// Search text as it is stored: word boundaries marked ([`words::mark`]), `None` when empty.
pub(crate) fn finish_text(text: String) -> Option<String> {
    let text = match words::mark(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(marked) => marked,
    };
    (!text.is_empty()).then_some(text)
}

/// The first `n` characters of `s`.
pub(crate) fn first_chars(s: String, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((at, _)) => s[..at].to_owned(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_found_by_its_name_once() {
        let names = names();
        for name in &names {
            assert_eq!(by_name(name).map(|f| f.name()), Some(*name));
            assert_eq!(names.iter().filter(|n| n == &name).count(), 1, "{name} registered twice");
        }
        assert!(by_name("nonesuch").is_none());
        assert_eq!(CLAUDE.name(), "claude");
    }
}
