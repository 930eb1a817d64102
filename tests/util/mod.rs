//! Test helpers: a temporary transcript tree and data directory, a runner for the real binary, a
//! transcript generator, and the index invariants every suite checks. `fixtures` writes each
//! agent's transcripts (and one session of every agent), from `lines`, which writes one line of
//! each agent's transcripts; `server` runs the real `serve`; `corpus` finds the real transcripts
//! outside the repository. (The scanner's oracle is core's: `crates/core/tests/scanner/`.)

pub mod corpus;
pub mod fixtures;
pub mod lines;
pub mod postgres;
pub mod server;

pub use corpus::{corpus, jsonl_files};
pub use server::{SILENT_ENGINE, Server};

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;
use scrollback::codec::scan::{Encoding, MediaKind, STRIPPED_MEDIA_MARKER, Span};

/// A transcript root and a data directory in a fresh temporary directory. Nothing outside it is
/// read or written: the binary runs with `HOME` pointing inside it.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub data: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&root).unwrap();
        Env { dir, root, data }
    }

    /// Copies every `*.jsonl` of the corpus folder `dir` into the tree's `corpus/`.
    pub fn copy_corpus(&self, dir: &Path) {
        for path in jsonl_files(dir) {
            self.write(
                &format!("corpus/{}", path.file_name().unwrap().to_str().unwrap()),
                std::fs::read(&path).unwrap(),
            );
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes (replacing) a transcript.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Appends to a transcript.
    pub fn append(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = OpenOptions::new().create(true).append(true).open(path).unwrap();
        f.write_all(bytes.as_ref()).unwrap();
    }

    /// The real binary, with this environment's directories and a private `HOME`.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scrollback"));
        cmd.env("HOME", self.dir.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("FACTORY_HOME_OVERRIDE")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("COPILOT_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("QWEN_HOME")
            .env_remove("QWEN_RUNTIME_DIR")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("SCROLLBACK_TRANSCRIPTS", &self.root)
            .env("SCROLLBACK_DATA_DIR", &self.data)
            .env("RUST_LOG", "scrollback=error");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// `scrollback index`, which must succeed; returns its summary line.
    pub fn index(&self) -> String {
        let out = self.run(&["index"]);
        assert!(out.status.success(), "index failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Each session the index lists, by id: its id, agent, title and project.
    pub fn sessions_listed(&self) -> Vec<(String, String, Option<String>, Option<String>)> {
        self.conn()
            .prepare("SELECT id, agent, title, project FROM sessions ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// `scrollback usage --json ARGS`, which must succeed: its report.
    pub fn usage_report(&self, args: &[&str]) -> serde_json::Value {
        let out = self.run(&[&["usage", "--json"][..], args].concat());
        assert!(out.status.success(), "usage failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// `scrollback index` over the roots `args` (`--root FORMAT:DIR`, …), which must succeed;
    /// returns its summary line.
    pub fn index_roots(&self, args: &[String]) -> String {
        let mut all = vec!["index"];
        all.extend(args.iter().map(String::as_str));
        let out = self.run(&all);
        assert!(out.status.success(), "index failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The decoded bytes of every photo with a ref in the transcript at `path`, by `scrollback
    /// media`, in line order.
    pub fn photos_of(&self, path: &Path) -> Vec<Vec<u8>> {
        media_rows(&self.conn(), path)
            .iter()
            .filter_map(|row| row.reference.clone())
            .map(|r| self.media(&r).unwrap_or_else(|e| panic!("{r}: {e:?}")))
            .collect()
    }

    /// `scrollback media REF -o FILE`: the bytes, or the exit code and message.
    pub fn media(&self, reference: &str) -> Result<Vec<u8>, (i32, String)> {
        let out_path = self.dir.path().join("media.out");
        let _ = std::fs::remove_file(&out_path);
        let out = self.run(&["media", reference, "-o", out_path.to_str().unwrap()]);
        if out.status.success() {
            Ok(std::fs::read(&out_path).unwrap())
        } else {
            assert!(!out_path.exists(), "a failed media call must leave no file");
            Err((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned()))
        }
    }

    pub fn conn(&self) -> Connection {
        scrollback::read::index::open(&self.data).unwrap()
    }
}

/// Row counts of every table.
pub fn counts(conn: &Connection) -> Vec<(String, i64)> {
    scrollback::read::index::table_counts(conn).unwrap()
}

/// One media row as the tests compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRow {
    pub reference: Option<String>,
    pub ordinal: Option<u32>,
    pub kind: String,
    pub media_type: Option<String>,
    pub encoding: String,
    pub blake3: String,
    pub line: u64,
}

/// Every media row of a file, in line and offset order.
pub fn media_rows(conn: &Connection, path: &Path) -> Vec<MediaRow> {
    let mut stmt = conn
        .prepare(
            "SELECT CASE WHEN m.ordinal IS NOT NULL THEN e.session_id || '/' || e.uuid || '/' || m.ordinal END,
                    m.ordinal, m.kind, m.media_type, m.encoding, m.blake3, e.line
             FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
             WHERE f.path = ?1 ORDER BY m.offset",
        )
        .unwrap();
    stmt.query_map([path.to_str().unwrap()], |r| {
        Ok(MediaRow {
            reference: r.get(0)?,
            ordinal: r.get(1)?,
            kind: r.get(2)?,
            media_type: r.get(3)?,
            encoding: r.get(4)?,
            blake3: r.get(5)?,
            line: r.get::<_, i64>(6)? as u64,
        })
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// Checks the index's invariants against the files on disk:
/// - every live file's entries cover its bytes up to the checkpoint, line after line;
/// - each stored line with its payloads put back is the original line, byte for byte;
/// - no payload byte is in SQLite (the stored line holds the marker instead);
/// - each media row's bytes, read at its offset and decoded, hash to its blake3;
/// - each session's row keeps ids between which all its entries are (what search counts within).
///
/// Returns the number of lines checked.
pub fn check_invariants(data: &Path) -> u64 {
    let conn = scrollback::read::index::open(data).unwrap();
    // (Each as `session: kept first..last, entries min..max`.)
    let outside: Vec<String> = conn
        .prepare(
            "SELECT s.id || ': kept ' || coalesce(s.first_entry, 'none') || '..' || coalesce(s.last_entry, 'none')
                    || ', entries ' || min(e.id) || '..' || max(e.id)
             FROM sessions s JOIN entries e ON e.session_id = s.id GROUP BY s.id
             HAVING s.first_entry IS NULL OR s.last_entry IS NULL OR min(e.id) < s.first_entry OR max(e.id) > s.last_entry",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(outside.is_empty(), "sessions whose entries lie outside the ids their rows keep: {outside:?}");
    let mut files = conn.prepare("SELECT id, path, checkpoint, lines FROM files WHERE state = 'live'").unwrap();
    let files: Vec<(i64, String, i64, i64)> = files
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut checked = 0;
    for (file_id, path, checkpoint, lines) in files {
        let bytes = read_transcript(Path::new(&path));
        assert!(checkpoint as usize <= bytes.len(), "{path}: checkpoint {checkpoint} past the end");
        let mut stmt = conn
            .prepare("SELECT id, line, offset, length, stored_line(stripped), invalid FROM entries WHERE file_id = ?1 ORDER BY line")
            .unwrap();
        type Row = (i64, i64, i64, i64, Option<String>, Option<String>);
        let entries: Vec<Row> = stmt
            .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(entries.len() as i64, lines, "{path}: one entry per line");
        // A JSON document (Gemini's legacy chats) has records, in order, between which its structure lies.
        let document = path.ends_with(".json");
        let mut expect_at = 0usize;
        for (n, (entry_id, line, offset, length, stripped, invalid)) in entries.into_iter().enumerate() {
            assert_eq!(line, n as i64 + 1, "{path}: line numbers run on");
            let (offset, length) = (offset as usize, length as usize);
            if expect_at == 0 && bytes.starts_with(b"\xEF\xBB\xBF") {
                expect_at = 3;
            }
            let original = &bytes[offset..offset + length];
            if document {
                assert!(offset >= expect_at, "{path}: record {line} starts after the previous one");
                assert!(original.starts_with(b"{") && original.ends_with(b"}"), "{path}: record {line} is an object");
                expect_at = offset + length;
            } else {
                assert_eq!(offset, expect_at, "{path}: line {line} starts where the previous one ended");
                let mut end = offset + length;
                if bytes.get(end) == Some(&b'\r') {
                    end += 1;
                }
                assert_eq!(bytes.get(end), Some(&b'\n'), "{path}: line {line} ends with a newline");
                expect_at = end + 1;
            }
            let Some(stripped) = stripped else {
                assert!(invalid.is_some(), "{path}: line {line} has neither text nor a reason");
                continue;
            };
            let spans = spans_of(&conn, entry_id, offset as u64);
            for span in &spans {
                let payload = &original[span.offset as usize..(span.offset + span.len) as usize];
                if payload.len() > STRIPPED_MEDIA_MARKER.len() + 16 {
                    assert!(
                        !stripped.as_bytes().windows(payload.len()).any(|w| w == payload),
                        "payload stored in SQLite"
                    );
                }
            }
            let restored = scrollback::codec::scan::restore(stripped.as_bytes(), &spans, |i| {
                original[spans[i].offset as usize..(spans[i].offset + spans[i].len) as usize].to_vec()
            })
            .expect("markers where the spans say");
            assert!(restored == original, "{path}: line {line} restored differs from the original");
            checked += 1;
        }
        if document {
            assert_eq!(checkpoint as usize, bytes.len(), "{path}: a document is read whole");
        } else {
            assert_eq!(expect_at, checkpoint as usize, "{path}: checkpoint just after the last line");
        }
    }
    let mut stmt = conn.prepare("SELECT blake3 FROM media").unwrap();
    let hashes: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap();
    for hash in hashes {
        let record = scrollback::read::index::media_by_hash(&conn, &hash.parse().unwrap()).unwrap();
        if record.file_live {
            let mut bytes = Vec::new();
            scrollback::read::media::open(&record).unwrap().read_to_end(&mut bytes).unwrap();
            assert_eq!(blake3::hash(&bytes).to_hex().as_str(), hash);
            assert_eq!(bytes.len() as u64, record.decoded_length);
        }
    }
    checked
}

/// A transcript's bytes: decompressed, for a zstd-compressed one (Codex's `.jsonl.zst`).
pub fn read_transcript(path: &Path) -> Vec<u8> {
    // `<database>/<session>`: a session of an agent's database, as its format renders it.
    if let Some((rows, db, session)) = scrollback::format::session_of_database(path).filter(|(_, db, _)| db.is_file()) {
        let conn = scrollback::db::open_agent_database(db).unwrap();
        let mut out = tempfile::tempfile().unwrap();
        scrollback::db::render_session(rows, &conn, session, path, &mut out).unwrap();
        let mut bytes = Vec::new();
        std::io::Seek::rewind(&mut out).unwrap();
        std::io::Read::read_to_end(&mut out, &mut bytes).unwrap();
        return bytes;
    }
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        return zstd::stream::decode_all(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    bytes
}

/// The spans of an entry, from its media rows, relative to the line.
fn spans_of(conn: &Connection, entry_id: i64, line_offset: u64) -> Vec<Span> {
    let mut stmt = conn
        .prepare("SELECT offset, length, encoding, decoded_length, blake3, ordinal FROM media WHERE entry_id = ?1 ORDER BY offset")
        .unwrap();
    stmt.query_map([entry_id], |r| {
        let encoding: String = r.get(2)?;
        let hash: String = r.get(4)?;
        Ok(Span {
            offset: r.get::<_, i64>(0)? as u64 - line_offset,
            len: r.get::<_, i64>(1)? as u64,
            encoding: Encoding::parse(&encoding).unwrap(),
            media_type: None,
            kind: MediaKind::File,
            ordinal: r.get(5)?,
            decoded_len: r.get::<_, i64>(3)? as u64,
            blake3: blake3::Hash::from_hex(hash).unwrap(),
        })
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// Deterministic bytes that start like a PNG file.
pub fn fake_png(seed: u64, len: usize) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Base64 written the way some encoders do: `/` escaped as `\/`, and wrapped with `\n` escapes.
pub fn b64_escaped(bytes: &[u8], wrap: usize) -> String {
    let plain = b64(bytes);
    let mut out = String::new();
    for (i, c) in plain.chars().enumerate() {
        if i > 0 && i % wrap == 0 {
            out.push_str("\\n");
        }
        if c == '/' {
            out.push_str("\\/");
        } else {
            out.push(c);
        }
    }
    out
}

/// An Anthropic image block, `type` first.
pub fn image_block(media_type: &str, data: &str) -> String {
    format!(r#"{{"type":"image","source":{{"type":"base64","media_type":"{media_type}","data":"{data}"}}}}"#)
}

/// The same block with every key order reversed: `data` comes before `type`.
pub fn image_block_reversed(media_type: &str, data: &str) -> String {
    format!(r#"{{"source":{{"data":"{data}","media_type":"{media_type}","type":"base64"}},"type":"image"}}"#)
}

/// A user line with the given `message.content` (JSON) and extra top-level fields (JSON, or "").
pub fn user_line(session: &str, uuid: &str, content: &str, extra: &str) -> String {
    let extra = if extra.is_empty() { String::new() } else { format!(",{extra}") };
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"cwd":"/work/demo","sessionId":"{session}","type":"user","uuid":"{uuid}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":{content}}}{extra}}}"#
    )
}

pub fn hash_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A tmpfs mounted for one test, unmounted when dropped.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`64m`) at `dir`, if this machine lets the test do it (root, or the
    /// capability); `None` otherwise.
    pub fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status();
        status.is_ok_and(|s| s.success()).then(|| Tmpfs(dir.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}
