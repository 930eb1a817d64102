//! The layer order of the workspace, read from the code: which module (a top-level module of a
//! crate's `src/`, or a crate that is one layer whole) names which other, through a `crate::` path
//! or another crate's name. The crates' dependencies already hold the order between crates (Cargo
//! has no loops, and a crate names only what it depends on); these tests also hold it between the
//! modules inside one crate, as rust-analyzer's tidy tests keep its own rules. ARCHITECTURE.md
//! states the order. And what each agent writes is known in its format's file only: no other code
//! names an agent or one of its fields (`no_agent_is_named_outside_format`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom to top. A module may name modules of lower layers only; modules of one layer do not name
/// each other.
const LAYERS: &[&[&str]] = &[
    &["codec"],
    &["error", "files", "pack"],
    &["format"],
    &["db", "query"],
    &["events"],
    &["ingest", "read", "accept"],
    &["ops", "render"],
    &["hub"],
    &["mcp"],
    &["http", "demo"],
];

/// What a crate re-exports at its root, by the module it comes from.
const ROOT_NAMES: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("STRIPPED_MEDIA_MARKER", "codec"),
    ("ContentHash", "codec"),
    ("MediaName", "codec"),
    ("MediaRef", "codec"),
    ("Indexer", "ingest"),
    ("NoProgress", "ingest"),
    ("Progress", "ingest"),
    ("Summary", "ingest"),
    ("Tail", "ingest"),
    ("TailConfig", "ingest"),
    ("Root", "ingest"),
    ("MediaRecord", "read"),
];

/// Each crate of the workspace: its folder, the name other crates call it by, and the module its
/// files belong to (`None`: each top-level module of its `src/` is one).
const CRATES: &[(&str, &str, Option<&str>)] = &[
    ("crates/codec", "scrollback_codec", Some("codec")),
    ("crates/core", "scrollback_core", None),
    ("crates/index", "scrollback_index", Some("ingest")),
    ("crates/read", "scrollback_read", Some("read")),
    ("crates/render", "scrollback_render", Some("render")),
    ("crates/accept", "scrollback_accept", Some("accept")),
    ("crates/ops", "scrollback_ops", Some("ops")),
    ("crates/hub", "scrollback_hub", Some("hub")),
    ("crates/mcp", "scrollback_mcp", Some("mcp")),
    ("crates/http", "scrollback_http", Some("http")),
    (".", "scrollback", None),
];

/// Modules that are one top-level module of a crate that is otherwise one layer whole.
const INNER: &[(&str, &str)] = &[("scrollback_index", "events")];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file of a crate's `src/` belongs to; `None` for a crate root that is only a
/// facade (`lib.rs` of a crate of several modules) and the binary.
fn module_of(krate: &(&str, &str, Option<&str>), file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root().join(krate.0).join("src")).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_owned();
    if let Some((_, inner)) = INNER.iter().find(|(c, m)| *c == krate.1 && *m == first) {
        return Some((*inner).to_owned());
    }
    match (krate.2, first.as_str()) {
        (Some(whole), _) => Some(whole.to_owned()),
        (None, "lib" | "bin") => None,
        (None, name) => Some(name.to_owned()),
    }
}

/// The modules a file's code (not its comments) names, with `crate::` read in `krate`.
fn named(krate: &(&str, &str, Option<&str>), text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split(" // ").next().unwrap_or(code);
        for (prefix, owner) in CRATES.iter().map(|c| (format!("{}::", c.1), *c)).chain([("crate::".to_owned(), *krate)])
        {
            let mut rest = code;
            while let Some(at) = rest.find(&prefix) {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + prefix.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    for item in group[..end].split(',') {
                        out.insert(resolve(&owner, item.trim()));
                    }
                    rest = &group[end..];
                } else {
                    out.insert(resolve(&owner, rest));
                }
            }
        }
    }
    out.remove("");
    out
}

/// The module a path inside crate `owner` names.
fn resolve(owner: &(&str, &str, Option<&str>), path: &str) -> String {
    let first = first_segment(path);
    if let Some((_, inner)) = INNER.iter().find(|(c, m)| *c == owner.1 && *m == first) {
        return (*inner).to_owned();
    }
    match owner.2 {
        Some(whole) if !ROOT_NAMES.iter().any(|(n, _)| *n == path_head(path)) => whole.to_owned(),
        _ => first,
    }
}

fn path_head(path: &str) -> &str {
    let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(path.len());
    &path[..end]
}

fn first_segment(path: &str) -> String {
    let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(path.len());
    let name = &path[..end];
    match ROOT_NAMES.iter().find(|(n, _)| *n == name) {
        Some((_, module)) => (*module).to_owned(),
        None => name.to_owned(),
    }
}

/// Every module of the workspace and the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate.0).join("src"), &mut files);
        for file in files {
            let Some(module) = module_of(krate, &file) else { continue };
            let mut names = named(krate, &std::fs::read_to_string(&file).unwrap());
            names.remove(&module);
            graph.entry(module).or_default().extend(names);
        }
    }
    graph
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn no_folder_imports_one_that_imports_it_back() {
    let graph = graph();
    assert!(graph.len() >= 10, "the modules of src/ were not found: {graph:?}");
    // Depth-first search for a path back to where it started.
    fn back<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        from: &'a str,
        to: &str,
        path: &mut Vec<&'a str>,
    ) -> bool {
        path.push(from);
        for next in graph.get(from).into_iter().flatten() {
            if next == to || (!path.contains(&next.as_str()) && back(graph, next, to, path)) {
                return true;
            }
        }
        path.pop();
        false
    }
    for module in graph.keys() {
        let mut path = Vec::new();
        assert!(!back(&graph, module, module, &mut path), "an import loop: {} -> {module}", path.join(" -> "));
    }
}

#[test]
fn every_folder_imports_only_the_layers_below_it() {
    let graph = graph();
    for (module, names) in &graph {
        let layer =
            layer_of(module).unwrap_or_else(|| panic!("{module} has no layer: add it to LAYERS and ARCHITECTURE.md"));
        for name in names {
            let other = layer_of(name).unwrap_or_else(|| {
                panic!("{module} names {name}, which is no module of the workspace and no root re-export")
            });
            assert!(
                other < layer,
                "{module} (layer {layer}) names {name} (layer {other}): only lower layers may be named"
            );
        }
    }
}

#[test]
fn the_reader_of_imports_sees_grouped_and_rooted_paths() {
    let krate = |name: &str| CRATES.iter().find(|c| c.1 == name).unwrap();
    let names = named(
        krate("scrollback_core"),
        "use crate::{db, error::Result};\n// crate::http in a comment\nuse crate::codec::scan; let x = scrollback_index::Indexer::open;",
    );
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["codec", "db", "error", "ingest"]);
    let names = named(
        krate("scrollback_ops"),
        "use scrollback_accept::Accepted; use crate::chat; use scrollback_index::events::Event;",
    );
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["accept", "events", "ops"]);
}

/// Every `fn` name in the workspace's Rust files.
fn functions() -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in ["tests", "src", "crates"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut out = BTreeSet::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if let Some(at) = line.find("fn ") {
                let rest = &line[at + 3..];
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                out.insert(rest[..end].to_owned());
            }
        }
    }
    out
}

/// The test names a text cites: the last segment of each backticked path with `::` whose last
/// segment is a snake_case name (or a `{a, b}` group of them).
fn cited_tests(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 || !span.contains("::") {
            continue;
        }
        let last = match span.find("::{") {
            Some(at) => span[at + 3..].trim_end_matches('}').to_owned(),
            None => span.rsplit("::").next().unwrap_or("").to_owned(),
        };
        for name in last.split(',').map(str::trim) {
            let snake =
                name.contains('_') && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if snake {
                out.push(name.to_owned());
            }
        }
    }
    out
}

#[test]
fn every_test_the_invariants_name_exists() {
    let text = std::fs::read_to_string(root().join("docs/invariants.md")).unwrap();
    let cited = cited_tests(&text);
    assert!(cited.len() >= 50, "docs/invariants.md names too few tests to be the list: {}", cited.len());
    let functions = functions();
    let missing: Vec<&String> = cited.iter().filter(|name| !functions.contains(*name)).collect();
    assert!(missing.is_empty(), "docs/invariants.md names tests that do not exist: {missing:?}");
    assert_eq!(
        cited_tests("`a::b_c`, `x::tests::{d_e, f_g}`, `no_path`, `Kind::Html`, `m::n`"),
        ["b_c", "d_e", "f_g"],
        "the reader of citations"
    );
}

/// Field names and marks only one agent's transcripts have, by format: what code outside that
/// format's file must not name. A format's own name and display name come from the registry.
/// scrollback's own names (`sessionId`, `isSidechain`, `parentUuid`, `agentId`, the API's
/// `gitBranch`) are not among them, nor are model names (`claude-sonnet-4-5`): only a quoted name
/// (`"claude"`, `'claude'`) is an agent's.
const AGENT_FIELDS: &[(&str, &[&str])] = &[
    ("claude", &["$.gitBranch", "\"gitBranch\":\"", "toolUseResult", "isMeta", "queued_command"]),
    (
        "codex",
        &[
            "session_meta",
            "response_item",
            "event_msg",
            "turn_context",
            "token_count",
            "total_token_usage",
            ".jsonl.zst",
            "payload.git",
        ],
    ),
    ("gemini", &["displayContent", "functionResponse", "inlineData", "$rewindTo"]),
    ("qwen", &["systemPayload", "chat_compression", "toolCallResult", "QWEN_RUNTIME_DIR"]),
    ("droid", &["session_start", "compaction_state", "llm_only", "tokenUsage"]),
    ("cursor", &["user_query", "turn_ended", "agent-transcripts"]),
    ("pi", &["custom_message", "bashExecution", "model_change", "session_info"]),
    ("copilot", &["tool.execution_complete", "assistant.reasoning", "session.compaction_complete", "user.message"]),
    ("opencode", &["messageID", "callID", "session_message", "session_v2", "opencode.db"]),
    ("kilo", &["kilo.db"]),
    ("kiro", &["AssistantMessage", "ToolResults", "conversations_v2"]),
    ("antigravity", &["PLANNER_RESPONSE", "USER_INPUT", "step_index", ".system_generated"]),
    ("cline", &["api_req_started", "api_conversation_history", "ui_messages", "userRunSpan", "saoudrizwan"]),
    ("roo", &["rooveterinaryinc"]),
];

/// Agents whose name is also a word of scrollback's own (a history page's `cursor`): their name is
/// no mark, and code is checked for their fields (above) instead.
const NAMES_THAT_ARE_WORDS: &[&str] = &["cursor"];

/// Folders whose code may name an agent, and why.
const AGENT_FOLDERS: &[(&str, &str)] = &[
    ("crates/core/src/format/", "the formats themselves, one file per agent, and the registry"),
    ("src/demo/", "serve --demo's sample tree and its stand-in engine write Claude Code's transcripts, on purpose"),
];

/// What still names an agent outside its format, each with why it stays: (file, text of the line,
/// reason). A line of that file that holds that text may name an agent. An entry that lets nothing
/// through fails the test, so this list only shrinks.
const AGENT_NAMED_ANYWAY: &[(&str, &str, &str)] = &[
    (
        "crates/core/src/db.rs",
        "DEFAULT 'claude'",
        "a frozen migration (to schema 7): rows written before it are Claude Code's; a migration never changes",
    ),
    (
        "crates/core/src/db.rs",
        "json_extract(stripped, '$.gitBranch'), json_extract(stripped, '$.payload.git.branch')",
        "a frozen migration (to schema 11): sessions written before it get the git branch version 10 read \
         from the stored lines, by each agent's field; a migration never changes",
    ),
    (
        "crates/core/src/db.rs",
        "instr(stripped, '\"gitBranch\":\"') > 0 OR (type = 'session_meta'",
        "the same migration's filter, as version 10's query had it",
    ),
];

/// Whether `code` holds `mark` as a whole word where the mark begins or ends with a letter or a
/// digit: a display name as short as `Pi` is no part of `Pin` or `Pipes`.
fn holds_name(code: &str, mark: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(mark).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + mark.len()..].chars().next();
        let joined_before = mark.starts_with(word) && before.is_some_and(word);
        let joined_after = mark.ends_with(word) && after.is_some_and(word);
        !joined_before && !joined_after
    })
}

/// Every Rust file of the workspace's code: each crate's `src/` and the root package's.
fn workspace_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    rust_files(&root().join("src"), &mut files);
    files
}

/// The lines of a file before its test module (`#[cfg(test)]` then `mod`, which the project puts
/// last), with their numbers.
fn lines_before_tests(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let starts_tests = |i: usize| {
        lines[i].trim() == "#[cfg(test)]"
            && lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).is_some_and(|l| l.starts_with("mod "))
    };
    let end = (0..lines.len()).find(|&i| starts_tests(i)).unwrap_or(lines.len());
    lines[..end].iter().enumerate().map(|(i, l)| (i + 1, *l)).collect()
}

#[test]
fn no_agent_is_named_outside_format() {
    let mut marks: Vec<String> = Vec::new();
    for format in scrollback::format::FORMATS {
        let name = format.name();
        if NAMES_THAT_ARE_WORDS.contains(&name) {
            continue;
        }
        marks.extend([format!("\"{name}\""), format!("'{name}'"), format.display_name().to_owned()]);
    }
    let names = scrollback::format::names();
    for (format, fields) in AGENT_FIELDS {
        assert!(names.contains(format), "AGENT_FIELDS lists {format}, which is no registered format");
        marks.extend(fields.iter().map(|f| (*f).to_owned()));
    }
    let unlisted: Vec<&str> = names.iter().copied().filter(|n| AGENT_FIELDS.iter().all(|(f, _)| f != n)).collect();
    assert!(unlisted.is_empty(), "AGENT_FIELDS has no fields of {unlisted:?}: list what only their transcripts hold");
    let files = workspace_sources();
    assert!(files.len() >= 50, "the workspace's sources were not found: {}", files.len());
    let mut used = vec![false; AGENT_NAMED_ANYWAY.len()];
    let mut named = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        if AGENT_FOLDERS.iter().any(|(folder, _)| rel.starts_with(folder)) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in lines_before_tests(&text) {
            let code = line.trim_start();
            // Comments: Rust's, and SQL's inside a statement.
            if code.starts_with("//") || code.starts_with("--") {
                continue;
            }
            let code = code.split(" // ").next().unwrap_or(code);
            let Some(mark) = marks.iter().find(|m| holds_name(code, m)) else { continue };
            match AGENT_NAMED_ANYWAY.iter().position(|(f, allowed, _)| *f == rel && code.contains(allowed)) {
                Some(i) => used[i] = true,
                None => named.push(format!("{rel}:{n}: {mark}: {}", code.trim_end())),
            }
        }
    }
    assert!(
        named.is_empty(),
        "code outside crates/core/src/format/ names an agent or one of its fields; ask the format (the Format \
         trait) instead, or, if it cannot move, add it to AGENT_NAMED_ANYWAY with the reason:\n{}",
        named.join("\n")
    );
    let stale: Vec<String> = AGENT_NAMED_ANYWAY
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|((file, allowed, _), _)| format!("{file}: {allowed}"))
        .collect();
    assert!(stale.is_empty(), "AGENT_NAMED_ANYWAY lets through what no code names any more; take it off: {stale:?}");
}

/// The files each package's Rust embeds (`include_str!`, `include_bytes!`, `include!`), with the
/// file and line that embeds them: (package folder, embedding file:line, embedded path, or `None`
/// for an argument [`embedded`] cannot read).
fn embeds() -> Vec<(PathBuf, String, Option<PathBuf>)> {
    let mut out = Vec::new();
    for krate in CRATES {
        let dir = root().join(krate.0);
        let mut files = Vec::new();
        package_rust_files(&dir, &dir, &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let at = format!("{}:{}", file.strip_prefix(root()).unwrap().display(), n + 1);
                for path in embedded(line) {
                    let path = path.map(|(from_package, p)| match from_package {
                        true => dir.join(p.trim_start_matches('/')),
                        false => file.parent().unwrap().join(p),
                    });
                    out.push((dir.clone(), at.clone(), path.map(|p| lexical(&p))));
                }
            }
        }
    }
    out
}

/// The paths one line of code embeds: a string literal, relative to the file (`(false, path)`), or
/// `concat!(env!("CARGO_MANIFEST_DIR"), "...")`, relative to the package (`(true, path)`); `None` for
/// any other argument. A comment, or the macro's name inside a string, embeds nothing.
fn embedded(line: &str) -> Vec<Option<(bool, String)>> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let code = code.split(" // ").next().unwrap_or(code);
    let mut out = Vec::new();
    for mac in ["include_str!(", "include_bytes!(", "include!("] {
        for (i, _) in code.match_indices(mac) {
            let before = &code[..i];
            let in_string = before.replace("\\\\", "").replace("\\\"", "").matches('"').count() % 2 == 1;
            if in_string || before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let literal = |rest: &str| rest.trim_start().strip_prefix('"')?.split('"').next().map(str::to_owned);
            let arg = code[i + mac.len()..].trim_start();
            out.push(match arg.strip_prefix("concat!(env!(\"CARGO_MANIFEST_DIR\"),") {
                Some(rest) => literal(rest).map(|p| (true, p)),
                None => literal(arg).map(|p| (false, p)),
            });
        }
    }
    out
}

/// The Rust files of the package in `dir`: its folder, less the folders of other packages (a
/// folder with a `Cargo.toml`: `cargo package` leaves them out) and build output.
fn package_rust_files(package: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let other_package = path != package && path.join("Cargo.toml").exists();
            if !other_package && !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                package_rust_files(package, &path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `path` with its `.` and `..` taken out, without asking the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The package whose folder holds `path`: the nearest folder above it with a `Cargo.toml`.
fn package_of(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|dir| dir.join("Cargo.toml").exists())
}

/// `cargo package` packs a package's own folder (less any other package's inside it) and refuses
/// one whose code embeds a file from elsewhere, so `cargo install scrollback` needs each crate to
/// embed only its own files: the export's style sheet once came from the viewer's crate.
#[test]
fn every_crate_embeds_only_files_of_its_own_folder() {
    let embeds = embeds();
    assert!(embeds.len() >= 20, "the embedded files were not found: {embeds:?}");
    let mut wrong = Vec::new();
    for (package, at, path) in &embeds {
        match path {
            None => wrong.push(format!("{at}: a path this test cannot read; write it as a string literal")),
            Some(path) if package_of(path) != Some(package.as_path()) => {
                wrong.push(format!("{at}: {} is outside {}", path.display(), package.display()))
            }
            Some(path) if !path.is_file() => wrong.push(format!("{at}: {} is no file", path.display())),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "a crate embeds a file outside its own folder, which `cargo package` refuses; move the file into the \
         crate that embeds it (or the lower one, and hand it up):\n{}",
        wrong.join("\n")
    );
    // The readers of a line and of a path. The samples are put together at run time, so that this
    // file's own lines embed nothing.
    let [text, bytes, code] = ["include_str!", "include_bytes!", "include!"];
    let line = format!(r#"const STYLE: &str = {text}("../../http/web/style.css"); // {text}("x")"#);
    assert_eq!(embedded(&line), [Some((false, "../../http/web/style.css".to_owned()))]);
    let line = format!(r#"{bytes}(concat!(env!("CARGO_MANIFEST_DIR"), "/a.png")), {code}(name), "{code}(""#);
    assert_eq!(embedded(&line), [Some((true, "/a.png".to_owned())), None]);
    assert!(embedded(&format!(r#"/// {text}("../x")"#)).is_empty());
    let outside = lexical(&root().join("crates/read/src/../../http/web/style.css"));
    assert_eq!(outside, root().join("crates/http/web/style.css"));
    assert_eq!(package_of(&outside), Some(root().join("crates/http").as_path()));
    assert_eq!(package_of(&root().join("src/lib.rs")), Some(root().as_path()));
}

/// The most lines a file's code may hold before its test module, and a function's.
const FILE_LINES: usize = 900;
const FUNCTION_LINES: usize = 80;

/// Files whose code is longer than [`FILE_LINES`], each with why. An entry whose file is no longer
/// long fails the test, so this list only shrinks.
const LONG_FILES: &[(&str, &str)] =
    &[("crates/core/src/db.rs", "the schema's migrations, each frozen as it was written, beside the connection kinds")];

/// Functions longer than [`FUNCTION_LINES`], each with why: (file, name, reason). An entry whose
/// function is no longer long fails the test, so this list only shrinks.
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[
    ("crates/http/src/openapi.rs", "index_document", "the OpenAPI document, one json! literal"),
    ("crates/http/src/openapi.rs", "chat_schemas", "the chat routes' schemas, one json! literal"),
    (
        "crates/index/src/indexer/commit.rs",
        "pass",
        "one file's pass in its transaction (plan, rows, usage, vault, commit), in the order the crash test holds",
    ),
    ("crates/read/src/stats.rs", "stats_of", "the overview's sections in order, each a primitive query and its shape"),
    ("src/bin/scrollback/table.rs", "write_stats", "the overview's report: a heading and a table per section"),
    ("crates/read/src/history/sessions.rs", "sessions", "the sessions list's SQL, built clause by clause"),
    ("src/bin/scrollback/read.rs", "export", "the export's targets (file, FIFO, device, stdout) and their cleanup"),
    ("crates/index/src/rebuild.rs", "copy_gone", "the rows of gone files, copied table by table in one transaction"),
    ("crates/index/src/rows.rs", "write_entries", "the writer's statements for a batch of lines"),
    ("crates/read/src/history/search.rs", "new", "a search's candidate SQL, from the query's terms, filters and scope"),
    ("crates/core/src/format/opencode.rs", "describe", "one arm per kind of OpenCode part"),
    ("crates/hub/src/store.rs", "sessions", "the sessions list's SQL in PostgreSQL's dialect, clause by clause"),
    ("crates/index/src/usage.rs", "apply", "a batch's changes to the ledger, statement by statement"),
    ("crates/index/src/rows.rs", "upsert_sessions", "one statement's columns and their bindings, per session"),
];

/// Each function of the code before a file's test module, rustfmt's layout read: its name and how
/// many lines it spans (from `fn` to the `}` at its indentation).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = lines_before_tests(text).into_iter().map(|(_, l)| l).collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let after_fn = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|p| code.strip_prefix(p))
            .unwrap_or(code)
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .strip_prefix("fn ");
        let Some(rest) = after_fn else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // A declaration without a body (a trait's) ends on its own line or the next few.
        let close = format!("{indent}}}");
        let Some(end) = lines[i..].iter().position(|l| l.trim_end() == close) else { continue };
        let body_opens = lines[i..=i + end].iter().any(|l| l.trim_end().ends_with('{'));
        let declared = lines[i..i + end].iter().take_while(|l| !l.trim_end().ends_with('{')).any(|l| l.ends_with(';'));
        if body_opens && !declared {
            found.push((name, end + 1));
        }
    }
    found
}

#[test]
fn no_file_or_function_is_longer_than_its_limit_without_a_reason() {
    let files = workspace_sources();
    let mut long = Vec::new();
    let mut long_files_used = vec![false; LONG_FILES.len()];
    let mut long_functions_used = vec![false; LONG_FUNCTIONS.len()];
    for file in &files {
        let rel = file.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        // A module of tests alone (a test helper) is no production code.
        if rel.ends_with("/tests.rs") || rel.contains("/tests/") || rel.ends_with("planted_secrets.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let lines = lines_before_tests(&text).len();
        if lines > FILE_LINES {
            match LONG_FILES.iter().position(|(f, _)| *f == rel) {
                Some(i) => long_files_used[i] = true,
                None => long.push(format!("{rel}: {lines} lines")),
            }
        }
        for (name, n) in function_lengths(&text) {
            if n <= FUNCTION_LINES {
                continue;
            }
            match LONG_FUNCTIONS.iter().position(|(f, fname, _)| *f == rel && *fname == name) {
                Some(i) => long_functions_used[i] = true,
                None => long.push(format!("{rel}: fn {name}: {n} lines")),
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {FILE_LINES} lines a file, or {FUNCTION_LINES} a function: split it, or say why in LONG_FILES or \
         LONG_FUNCTIONS:\n{}",
        long.join("\n")
    );
    let stale: Vec<String> = (LONG_FILES
        .iter()
        .zip(&long_files_used)
        .filter(|(_, u)| !**u)
        .map(|((f, _), _)| f.to_string()))
    .chain(
        LONG_FUNCTIONS.iter().zip(&long_functions_used).filter(|(_, u)| !**u).map(|((f, n, _), _)| format!("{f}: {n}")),
    )
    .collect();
    assert!(stale.is_empty(), "no longer long, take them off the list: {stale:?}");
}

#[test]
fn function_lengths_reads_bodies_and_passes_over_declarations() {
    let text = "trait T {\n    fn declared(&self) -> u8;\n    fn with_default(&self) -> u8 {\n        1\n    }\n}\n\
                pub(crate) fn free(\n    a: u8,\n) -> u8 {\n    a\n}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
    assert_eq!(function_lengths(text), [("with_default".to_owned(), 3), ("free".to_owned(), 5)]);
}
