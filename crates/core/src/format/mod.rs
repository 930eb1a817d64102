//! Transcript formats: what each agent writes, in one file per agent.
//!
//! Everything scrollback knows about one agent's transcripts lives in that agent's file behind the
//! [`Format`] trait: where a line's content and image blocks are (so the scanner numbers image
//! ordinals there), which session and file key a path gives, a line's columns, search text and
//! title, what counts as a person's typed input (for reconcile), what a line says to a reader and
//! who said it (its [`Part`]s, which the viewer, the exports and the MCP tools lay out), and where
//! the agent keeps its transcripts by default. The writer, the readers, the viewer and the
//! reconcile rule ask the format; none of them knows a field name of any agent.
//!
//! Adding a format is adding one file beside [`claude`] that implements [`Format`], and one line in
//! [`FORMATS`]: its name, display name, default roots and usage rules come from there, to the CLI,
//! the OpenAPI document, the viewer and the usage ledger alike.
//!
//! A format does no I/O beyond reading the environment for its default roots, and never touches
//! SQLite.

pub mod antigravity;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod droid;
pub mod gemini;
pub(crate) mod gemini_parts;
pub mod kilo;
pub mod kiro;
pub(crate) mod loose;
pub mod opencode;
pub mod parts;
pub mod pi;
pub mod qwen;
pub mod usage;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use crate::codec::scan::BlockPlaces;
use crate::codec::scan::STRIPPED_MEDIA_MARKER;
use crate::codec::words;
pub use parts::{Media, Part, Side, ToolCall, Who};
pub use usage::{Tokens, Usage};

/// Where the entries of a JSON document ([`Format::document_records`]) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// The elements of the array at this key of its top-level object; the rest of that object is
    /// its header (what [`Format::file_context`]'s `first_line` reads, as one JSON line).
    At(&'static str),
    /// The elements of its top-level array; its header is `{}`.
    Elements,
    /// Its top-level object is its one entry (a file of totals its agent rewrites in place), and its
    /// header too.
    Whole,
}

/// What one agent writes. See the module documentation.
pub trait Format: Send + Sync + std::fmt::Debug {
    /// The agent's name, as stored with each session and entry and given to `--root NAME:DIR`.
    fn name(&self) -> &'static str;

    /// The agent's name as people know it ("Claude Code"), for the viewer, exports and help texts.
    fn display_name(&self) -> &'static str;

    /// Whether the file at `path` (found under one of this format's roots) is a transcript.
    fn is_transcript(&self, path: &Path) -> bool;

    /// Why the file at `path`, which is not a transcript scrollback reads, is one of this agent's
    /// all the same (a legacy format): logged once, so that nobody wonders where it went. (For a
    /// database format, whose root is looked at only at its top: a directory there.)
    fn not_read(&self, _path: &Path) -> Option<&'static str> {
        None
    }

    /// The other name of the transcript at `path` while its agent keeps it compressed, or no
    /// longer does (a format whose agent compresses cold transcripts in place names the pair, and
    /// which of the two is the plain one). `None`, the default: this agent never does.
    fn twin(&self, _path: &Path) -> Option<Twin> {
        None
    }

    /// `Some` if the transcript at `path` is one JSON document that its agent rewrites whole as the
    /// chat grows (not lines it appends), and where in it its entries are ([`Records`]), each at its
    /// own offset and length in the file. `None`, the default: a transcript of lines.
    fn document_records(&self, _path: &Path) -> Option<Records> {
        None
    }

    /// `Some` for an agent that keeps its sessions as rows of a SQLite database rather than as files
    /// (OpenCode): [`Format::is_transcript`] then names the database, and each of its sessions is
    /// read as a document the format renders from its rows, at the path `<database>/<session id>`.
    fn database(&self) -> Option<&'static dyn Rows> {
        None
    }

    /// Where a line's image blocks are: those under these places get ordinals (and so refs).
    fn block_places(&self) -> &'static BlockPlaces;

    /// What holds for every line of the file at `path`: its session (for lines that name none),
    /// and what its first line says of the whole file. `first_line` reads that line (stripped of
    /// nothing; `None` while it is incomplete); a format that needs only the path never calls it.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext;

    /// A small file beside the transcript at `path` in which the agent records its project's
    /// directory (Gemini CLI's `.project_root`, Kiro CLI's session metadata). The indexer reads it
    /// (the format does no I/O, and the file is read only if it is a regular one, up to 1 MiB); the
    /// directory [`Format::project_in`] finds in it is [`FileContext::project`] in place of what the
    /// path and first line say.
    fn project_file(&self, _path: &Path) -> Option<PathBuf> {
        None
    }

    /// The directory the text of a project file ([`Format::project_file`]) records: by default the
    /// text itself, trimmed, if it is one line that is not empty.
    fn project_in(&self, text: &str) -> Option<String> {
        let project = text.trim();
        (!project.is_empty() && !project.contains('\n')).then(|| project.to_owned())
    }

    /// The `file` part of the [`Order`](crate::codec::order::Order) of an entry of `session` in the file at `path`: 0 for the
    /// session's main transcript, else a number that depends on the file's name only.
    fn file_key(&self, path: &Path, session: &str) -> i64;

    /// The columns, search text and title of a stored (stripped) line, the `line`-th of a file
    /// whose context is `file`.
    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError>;

    /// What a person typed, if this history entry (its `type` column, whether it is a side chain,
    /// and its rendered line) carries it: the only entries that can back a sent message.
    fn typed_input(&self, kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed>;

    /// Words of which every stored line that states usage ([`Meta::usage`], or [`Meta::model`])
    /// contains at least one, matched as SQL `LIKE '%word%'` does (ASCII case ignored): the usage
    /// ledger is made again from the stored lines that contain one, never from the others.
    fn usage_markers(&self) -> &'static [&'static str];

    /// What a line says, as a reader takes it in: text, thinking, photos and files, tool calls and
    /// results, notes, in order (the line as rendered, whose image blocks carry their URLs; a
    /// stored line gives the same parts without them). A line that says nothing to a reader
    /// (metadata, token counts) has none.
    fn parts(&self, line: &Value) -> Vec<Part>;

    /// Who said a line (given whether it is on a side chain), as the viewer shows it: the byline
    /// and the side it stands on; `None` for a line the viewer does not show (bookkeeping, context
    /// the agent's harness wrote). The viewer lays out [`Format::parts`] under it.
    fn who(&self, line: &Value, is_sidechain: bool) -> Option<Who>;

    /// The command that resumes session `id` in the agent's own CLI (`claude --resume ID`), where
    /// it has one: what a reader copies to go on where the transcript stops.
    fn resume_command(&self, _id: &str) -> Option<String> {
        None
    }

    /// Where the agent keeps its transcripts when nothing says otherwise, from the environment
    /// (`var` reads a variable; `HOME` among them).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf>;
}

/// Every format scrollback reads, in the order their default roots are listed.
pub static FORMATS: &[&dyn Format] = &[
    &claude::Claude,
    &codex::Codex,
    &gemini::Gemini,
    &qwen::Qwen,
    &droid::Droid,
    &cursor::Cursor,
    &pi::Pi,
    &copilot::Copilot,
    &opencode::OpenCode,
    &kilo::Kilo,
    &kiro::Kiro,
    &antigravity::Antigravity,
    &cline::CLINE,
    &cline::ROO,
];

/// What an agent that keeps its sessions as rows of a SQLite database tells the indexer and the
/// media reader ([`Format::database`]). Every query runs on a read-only connection the caller opened
/// (and in its transaction, where it began one); none writes.
pub trait Rows: Send + Sync + std::fmt::Debug {
    /// The database a file beside it belongs to, for a file watcher: the database itself, or its
    /// write-ahead log (`-wal`). `None` for anything else (the `-shm` index changes on every read).
    fn database_of(&self, path: &Path) -> Option<PathBuf>;

    /// Every session and its stamp ([`Rows::stamp`]), in one statement (one snapshot).
    fn sessions(&self, conn: &rusqlite::Connection) -> rusqlite::Result<Vec<(String, i64)>>;

    /// A number that changes whenever one of the session's rows is written, added or deleted; `None`
    /// if the session is not there. Never 0.
    fn stamp(&self, conn: &rusqlite::Connection, session: &str) -> rusqlite::Result<Option<i64>>;

    /// Writes the session's document, a line each row (see the module documentation), to `out`:
    /// its payloads are streamed from the database, never held whole.
    fn render(&self, conn: &rusqlite::Connection, session: &str, out: &mut dyn std::io::Write) -> std::io::Result<()>;

    /// Where the payload `offset` bytes into the line of entry `uuid` is in the database: the table,
    /// the column, the row and the offset in that column's value. `None` if the entry holds none
    /// (or is gone).
    fn payload_row(&self, conn: &rusqlite::Connection, uuid: &str, offset: u64) -> rusqlite::Result<Option<Cell>>;

    /// What of the database is not read, if something is (tables of a later version of the agent):
    /// said once, so that nobody wonders where those sessions went.
    fn tables_not_read(&self, _conn: &rusqlite::Connection) -> rusqlite::Result<Option<&'static str>> {
        Ok(None)
    }
}

/// The session a transcript path names when it is `<database>/<session id>` (the parent a file some
/// format's [`Format::database`] names by its name): that format's rows, the database and the id.
pub fn session_of_database(path: &Path) -> Option<(&'static dyn Rows, &Path, &str)> {
    let db = path.parent()?;
    let session = path.file_name()?.to_str()?;
    let rows = FORMATS.iter().find_map(|f| f.database().filter(|_| f.is_transcript(db)))?;
    Some((rows, db, session))
}

/// A place in a database: the value of `column` in row `rowid` of `table`, from byte `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The table.
    pub table: &'static str,
    /// The column.
    pub column: &'static str,
    /// The row.
    pub rowid: i64,
    /// Bytes into the value.
    pub offset: u64,
}

/// Claude Code's format (and the Claude Agent SDK's, which writes the same).
pub static CLAUDE: &dyn Format = &claude::Claude;

/// The format taken when nothing names one: that of `--transcripts DIR` (a root given without a
/// format), of a path under no root, of an agent name this build does not know (an index a newer
/// one wrote), and of every row of an index from before formats were recorded (only Claude Code's
/// transcripts were read then, and the schema's `agent` columns default to its name). Claude Code's.
pub static DEFAULT: &dyn Format = &claude::Claude;

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
    /// The first words the person wrote: in the session's main transcript (the file named for it)
    /// where it has one indexed, else in any file of its lines (a renamed or copied transcript).
    pub const FIRST_USER_TEXT: u8 = 1;
    /// From this rank up the latest title (in conversation order) wins over an earlier one of the
    /// same rank; below it (the person's first words) the earliest stays. The sessions upsert
    /// states this rule in SQL with this constant, so both say the same.
    pub const LATEST_WINS_FROM: u8 = SUMMARY;

    /// Whether a title of rank `new` from the entry at `new_order` replaces one of rank `old` from
    /// `old_order`. Below [`LATEST_WINS_FROM`] a title from the main transcript (`file` 0) wins over
    /// one from another file, whatever their orders: the earliest of the other files titles a
    /// session only while its own transcript gives none.
    pub fn replaces(new: u8, new_order: &Order, old: u8, old_order: &Order) -> bool {
        let main = |o: &Order| o.file == 0;
        new > old
            || (new == old
                && if new >= LATEST_WINS_FROM {
                    new_order >= old_order
                } else {
                    (main(new_order), std::cmp::Reverse(new_order)) > (main(old_order), std::cmp::Reverse(old_order))
                })
    }
}

/// The other name of one transcript, which its agent compresses and decompresses in place
/// ([`Format::twin`]): both names are one transcript, whose rows follow it from one to the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Twin {
    /// The other name, beside it.
    pub path: PathBuf,
    /// Whether the other name is the plain (decompressed) one: while both exist, the plain one is
    /// read and the compressed one left out (the agent writes the new name whole before it deletes
    /// the old one).
    pub plain: bool,
}

/// What one file's first line (and its path) say of all its lines ([`Format::file_context`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileContext {
    /// The session of the lines that name none.
    pub session: String,
    /// The session this file's session was forked from.
    pub forked_from: Option<String>,
    /// Lines stamped before this instant are copies of the parent session's (a fork that copies
    /// its parent's history into the new file, as Codex's do).
    pub copies_before: Option<String>,
    /// The session's project as the path names it, for sessions whose lines name none.
    pub project: Option<String>,
    /// A title the file's header gives (a document's, see [`Format::document_records`]), stated
    /// with its first entry.
    pub title: Option<String>,
}

/// Why an entry is left out of history, search and counts although it is no copy of another
/// (stored in `entries.hidden`, the entry marked `duplicate` too). The names are a frozen format.
pub mod hidden {
    /// The agent wrote the same message twice: an event repeating a conversation item (Codex).
    pub const REPEAT: &str = "repeat";
    /// Copied from the parent session into a fork's file.
    pub const FORK: &str = "fork";
    /// Written again, changed, later in the file (Gemini rewrites a message as it grows).
    pub const REWRITTEN: &str = "rewritten";
    /// Undone by a rewind (Gemini's `$rewindTo`).
    pub const REWOUND: &str = "rewound";
    /// Replaced by a checkpoint of the whole conversation (Gemini's `$set.messages`).
    pub const REPLACED: &str = "replaced";
}

/// What a line does to the entries of its file written before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// It is the latest write of the message with its `uuid`: earlier ones are hidden
    /// ([`hidden::REWRITTEN`]).
    Rewrites,
    /// The message with this id, and every message after it, are undone ([`hidden::REWOUND`]);
    /// an id the file does not have undoes every message.
    RewindTo(String),
    /// Every message before it is replaced by the ones it holds ([`hidden::REPLACED`]).
    ReplacesAll,
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
    /// The git branch the line says its session is on, as written (an empty one too). A session's
    /// branch is the one its last line in conversation order with a branch gives; empty is none.
    pub git_branch: Option<String>,
    /// Plain text for search, with word boundaries marked ([`crate::codec::words::mark`]): what
    /// was said (a person's words, the agent's text and thinking, titles).
    pub text: Option<String>,
    /// Search text of the line's tool calls and results: each call's input as its string values
    /// (never its JSON), each result's output. Marked as `text` is.
    pub tool_text: Option<String>,
    /// The names of the tools the line calls, one per line.
    pub tools: Option<String>,
    /// A title this line gives its session, with its rank.
    pub title: Option<(u8, String)>,
    /// The sub-agent whose transcript this line is in.
    pub agent_id: Option<String>,
    /// The sub-agent this line's tool call ran.
    pub spawned_agent: Option<String>,
    /// Why the entry is left out of history and search, from the line alone ([`hidden`]).
    pub hidden: Option<&'static str>,
    /// What the line does to the entries before it.
    pub effect: Option<Effect>,
    /// The session this line's session was forked from.
    pub forked_from: Option<String>,
    /// The API responses whose usage the line states (most lines none, a Claude assistant line
    /// one, a Gemini checkpoint several). A synthetic or error response states none.
    pub usage: Vec<Usage>,
    /// The model the lines after this one are answered by, where the line sets it and its usage
    /// lines do not name one (Codex's `turn_context`).
    pub model: Option<String>,
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
/// knows it. On the wire as `{text, images}` with each history entry that carries one, so that a
/// client's reconcile compares without knowing any format.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Typed {
    /// The text, as written.
    pub text: String,
    /// One item per image, in order.
    pub images: Vec<Option<String>>,
}

/// What a person typed, from a message's `content` as a string or as blocks: its `text` blocks
/// joined by lines, and each `image` block's blake3 where the rendered line carries it; `None` if
/// nothing was typed.
pub(crate) fn typed_from_blocks(content: &Value) -> Option<Typed> {
    let typed = match content {
        Value::String(text) => Typed { text: text.clone(), images: Vec::new() },
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match str_at(block, "type") {
                    Some("text") => texts.push(str_at(block, "text").unwrap_or("")),
                    Some("image") => images.push(str_at(block, "blake3").map(str::to_owned)),
                    _ => {}
                }
            }
            Typed { text: texts.join("\n"), images }
        }
        _ => return None,
    };
    (!typed.text.trim().is_empty() || !typed.images.is_empty()).then_some(typed)
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

/// A line's search text as it is gathered, in the index's three full-text columns: what was said,
/// tool calls' input and output, and the names of the tools called ([`Meta::text`],
/// [`Meta::tool_text`], [`Meta::tools`]).
#[derive(Debug, Default)]
pub(crate) struct SearchText {
    said: String,
    tool: String,
    tools: String,
}

impl SearchText {
    /// What a person or the agent said (text, thinking, a title).
    pub(crate) fn said(&mut self, s: &str) {
        push_text(&mut self.said, s);
    }

    /// A tool's output, as text.
    pub(crate) fn output(&mut self, s: &str) {
        push_text(&mut self.tool, s);
    }

    /// A tool's output, as a JSON value's text ([`value_text`]).
    pub(crate) fn output_value(&mut self, v: &Value) {
        value_text(v, &mut self.tool);
    }

    /// A tool call: its name, and its input's string values (a JSON object's, at any depth; input
    /// that is not JSON as it is).
    pub(crate) fn call(&mut self, name: Option<&str>, input: Option<&Value>) {
        if let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) {
            push_text(&mut self.tools, name);
        }
        if let Some(input) = input {
            input_text(input, &mut self.tool);
        }
    }

    /// A tool call whose input is JSON text (or plain text, taken as it is).
    pub(crate) fn call_raw(&mut self, name: Option<&str>, input: Option<&str>) {
        match input.map(|i| (i, serde_json::from_str::<Value>(i))) {
            Some((_, Ok(v))) => self.call(name, Some(&v)),
            Some((raw, Err(_))) => {
                self.call(name, None);
                push_text(&mut self.tool, raw);
            }
            None => self.call(name, None),
        }
    }

    /// Into `meta`'s three columns, each marked and `None` when empty.
    pub(crate) fn finish(self, meta: &mut Meta) {
        meta.text = finish_text(self.said);
        meta.tool_text = finish_text(self.tool);
        meta.tools = finish_text(self.tools);
    }
}

/// Every string of a tool call's input, each on a line of its own (object keys and other scalars
/// left out: `{"command": "cargo test"}` is `cargo test`).
fn input_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => push_text(out, s),
        Value::Array(items) => items.iter().for_each(|i| input_text(i, out)),
        Value::Object(map) => map.values().for_each(|v| input_text(v, out)),
        _ => {}
    }
}

/// Search text as it is stored: word boundaries marked ([`words::mark`]), `None` when empty.
pub(crate) fn finish_text(text: String) -> Option<String> {
    let text = match words::mark(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(marked) => marked,
    };
    (!text.is_empty()).then_some(text)
}

/// A file key ([`Format::file_key`]) from a hash of the file's name: 1 ..= 2^52 - 1, never a main
/// transcript's 0, and exact as a double.
pub(crate) fn name_key(path: &Path) -> i64 {
    let name = path.file_name().unwrap_or(path.as_os_str());
    let hash = blake3::hash(name.as_encoded_bytes());
    let first = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
    ((first >> 12) | 1) as i64
}

/// HTML's element names: a person's text may begin with one (`<div> is not centred`), which no
/// harness injects.
const HTML_ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "bdi",
    "bdo",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "menu",
    "meta",
    "meter",
    "nav",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "script",
    "search",
    "section",
    "select",
    "slot",
    "small",
    "source",
    "span",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

/// The name of the tag `text` begins with, if it begins with one that is not HTML's: the mark of
/// a block an agent's harness put there (`<system-reminder>`, `<environment_context>`).
pub(crate) fn injected_tag(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('<')?;
    let end = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).unwrap_or(inner.len());
    let name = &inner[..end];
    (!name.is_empty() && !HTML_ELEMENTS.contains(&name.to_ascii_lowercase().as_str())).then_some(name)
}

/// `text` (trimmed) without the tagged blocks at its start: `<tag …>…</tag>`, one after another
/// (the context an agent's harness puts in front of what the person typed). HTML a person typed
/// (`<div>…</div> is not centred`) is theirs, and stays.
pub(crate) fn without_injected(text: &str) -> &str {
    let mut rest = text.trim();
    while let Some(name) = injected_tag(rest) {
        let close = format!("</{name}>");
        match rest.find(&close) {
            Some(at) => rest = rest[at + close.len()..].trim_start(),
            None => break,
        }
    }
    rest
}

/// The text of a JSON value for search: a string as it is, the strings of an array's items and of
/// an object's `text` fields (content parts), each on a line of its own.
pub(crate) fn value_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => push_text(out, s),
        Value::Array(items) => items.iter().for_each(|i| value_text(i, out)),
        Value::Object(map) => {
            if let Some(Value::String(s)) = map.get("text") {
                push_text(out, s);
            }
        }
        _ => {}
    }
}

/// `word` as one word of a POSIX shell's command line: as it is where it holds only characters no
/// shell reads specially, else in single quotes (a session id comes from a transcript, and a
/// command a person copies must not run anything it hides).
pub fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:@%+=,/".contains(&b)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The string at `key` of `v`, if it is one.
pub(crate) fn str_at<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Parses a stored line into a JSON object, or says why it is not one.
pub(crate) fn parse_object(stripped: &str) -> Result<serde_json::Map<String, Value>, MetaError> {
    match serde_json::from_str::<Value>(stripped) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(MetaError::NotObject),
        Err(e) => Err(MetaError::NotJson(e.to_string())),
    }
}

/// The id an entry gets when its line has none (formats whose lines carry no id): `L<line>`.
pub(crate) fn line_id(line: u64) -> String {
    format!("L{line}")
}

/// An epoch millisecond as the index's timestamps are written (`2026-06-01T10:00:00.000Z`); `None`
/// out of the calendar's range.
pub(crate) fn millis_iso(ms: i64) -> Option<String> {
    let t = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// A title made of a person's first words, as a reader takes it in: Markdown's marks taken off
/// (`## Fix the **parser**` reads "Fix the parser"; a link its text, code its code) and its blocks
/// and lines joined by single spaces. Words with no mark Markdown could mean are kept as they are;
/// so are words that are nothing but marks (`---`).
pub fn plain_title(words: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, TagEnd};
    let marked =
        |c: char| matches!(c, '*' | '_' | '`' | '#' | '>' | '[' | ']' | '<' | '~' | '\\' | '-' | '+' | '=' | '|');
    let numbered = words.lines().any(|l| {
        let l = l.trim_start();
        let digits = l.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && matches!(l.as_bytes().get(digits), Some(b'.' | b')'))
    });
    if !words.contains(marked) && !numbered {
        return words.to_owned();
    }
    let mut plain = String::with_capacity(words.len());
    for event in Parser::new_ext(words, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) | Event::Html(t) => plain.push_str(&t),
            Event::SoftBreak | Event::HardBreak | Event::Rule => plain.push(' '),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::TableCell,
            ) => plain.push(' '),
            _ => {}
        }
    }
    let joined = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.is_empty() { words.to_owned() } else { joined }
}

/// The most characters a session's title has, whatever made it (a person's first words, a custom
/// or agent's title, a summary): a title is listed with every session, so one transcript's 12 MB
/// title must not make every list that large. The same as the most a person may give.
pub const TITLE_MAX_CHARS: usize = 200;

/// `title` cut to [`TITLE_MAX_CHARS`] characters (at a character boundary).
pub fn bounded_title(title: &str) -> String {
    first_chars(title.to_owned(), TITLE_MAX_CHARS)
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
    fn a_title_reads_without_markdown_s_marks() {
        for (words, title) in [
            ("Fix the **parser**", "Fix the parser"),
            (
                "## A heading\n\nSome *emphasis*, **strong** and `inline code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> a quotation",
                "A heading Some emphasis, strong and inline code. one two first second a quotation",
            ),
            ("Read [the docs](https://example.com/docs) and ![a logo](logo.png)", "Read the docs and a logo"),
            ("Why does `a*b*c` fail?", "Why does a*b*c fail?"),
            ("```rust\nfn main() {}\n```\nwhy?", "fn main() {} why?"),
            ("<div> is not centred", "<div> is not centred"),
            ("| name | value |\n|---|---|\n| a | 1 |\n\n~~old~~ new", "name value a 1 old new"),
            // Marks Markdown does not take as marks stay.
            ("rename foo_bar_baz in claude-code", "rename foo_bar_baz in claude-code"),
            ("2 * 3 * 4 is 24", "2 * 3 * 4 is 24"),
            ("use *args and **kwargs", "use *args and **kwargs"),
            // No mark at all: kept as written, its lines too.
            ("What is in\nthis photo?", "What is in\nthis photo?"),
            ("---", "---"),
            ("", ""),
        ] {
            assert_eq!(plain_title(words), title, "{words:?}");
        }
    }

    #[test]
    fn a_harness_block_is_taken_off_and_html_a_person_typed_stays() {
        assert_eq!(without_injected("<system-reminder>be brief</system-reminder>\nWhy?"), "Why?");
        assert_eq!(without_injected("<ide_selection>x</ide_selection> <command-name>/a</command-name> b"), "b");
        assert_eq!(without_injected("<div> is not centred"), "<div> is not centred");
        assert_eq!(without_injected("<b>Bold</b> titles vanish"), "<b>Bold</b> titles vanish");
        assert_eq!(injected_tag("<DIV>x"), None);
        assert_eq!(injected_tag("<environment_context>"), Some("environment_context"));
    }

    #[test]
    fn a_resume_command_quotes_an_id_a_shell_would_read() {
        assert_eq!(CLAUDE.resume_command("5c0375b4-57a5").as_deref(), Some("claude --resume 5c0375b4-57a5"));
        assert_eq!(shell_word("a;rm -rf ~"), "'a;rm -rf ~'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(by_name("codex").and_then(|f| f.resume_command("x")).as_deref(), Some("codex resume x"));
        assert_eq!(by_name("gemini").and_then(|f| f.resume_command("x")).as_deref(), Some("gemini --resume x"));
    }

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

    #[test]
    fn the_default_is_claude_codes_and_every_format_has_a_display_name_and_usage_markers() {
        assert_eq!(DEFAULT.name(), "claude");
        for format in FORMATS {
            assert!(!format.display_name().is_empty(), "{} has no display name", format.name());
            assert!(format.usage_markers().iter().all(|m| !m.is_empty() && !m.contains(['%', '\'', '\\'])));
        }
    }
}
