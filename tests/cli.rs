//! The command line as a person meets it: `serve --demo` in a data directory of its own, a session
//! named by a prefix of its id, the roots a data directory remembers, the counts `index`, `status`
//! and `export` print, `export -o` onto a FIFO or a device, and transcript text printed with its
//! control characters made visible.

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::util::{Env, Server, b64, fake_png, image_block, user_line};

const A: &str = "fa812bfe-0000-4000-8000-000000000001";
const B: &str = "fa81ffff-0000-4000-8000-000000000002";
const C: &str = "0c000000-0000-4000-8000-000000000003";

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn ok(out: Output) -> (String, String) {
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status.code());
    (stdout, stderr)
}

/// A line of Claude Code's: an assistant's text.
fn assistant(session: &str, uuid: &str, said: &str) -> String {
    json!({"parentUuid": null, "isSidechain": false, "cwd": "/work/demo", "sessionId": session, "type": "assistant",
           "uuid": uuid, "timestamp": "2026-01-01T00:00:01.000Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": said}]}})
    .to_string()
}

/// A session of three lines: a question with a photo, an answer, and a second question.
fn write_session(env: &Env, session: &str, words: &str) {
    let photo = image_block("image/png", &b64(&fake_png(session.len() as u64 + words.len() as u64, 2000)));
    let body = [
        user_line(
            session,
            &format!("{session}-u1"),
            &format!("[{photo}, {{\"type\":\"text\",\"text\":\"{words}\"}}]"),
            "",
        ),
        assistant(session, &format!("{session}-a1"), &format!("About {words}.")),
        user_line(session, &format!("{session}-u2"), "\"and then?\"", ""),
    ];
    env.write(&format!("p/{session}.jsonl"), body.join("\n") + "\n");
}

/// Every name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

#[test]
fn serve_demo_keeps_its_index_record_and_vault_in_its_own_directory_and_never_touches_the_persons() {
    let env = Env::new();
    write_session(&env, A, "my own words");
    env.index();
    let index = env.data.join("index.sqlite3");
    let before = (names(&env.data), std::fs::read(&index).unwrap());
    // With the data directory given, and with the default one ($XDG_DATA_HOME/scrollback).
    let xdg = env.dir.path().join("xdg");
    let mut default = env.cmd();
    default.env_remove("SCROLLBACK_DATA_DIR").env("XDG_DATA_HOME", &xdg);
    for (cmd, person) in [(env.cmd(), env.data.clone()), (default, xdg.join("scrollback"))] {
        let server = Server::start_cmd(cmd, &["--demo"]);
        server.wait_for_sessions(2);
        let sessions = server.json("/api/sessions");
        let ids: Vec<&str> =
            sessions["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 2, "only the demo's sessions are served: {ids:?}");
        assert!(!ids.contains(&A), "the person's session is not in the demo's index");
        // A send, so that the acceptance record is written too.
        let res = server
            .client
            .post(format!("{}/api/chat/send", server.base))
            .json(&json!({"clientMessageId": "m1", "chatId": scrollback::demo::TEXT_SESSION, "text": "hello"}))
            .send()
            .unwrap();
        assert!(res.status().is_success(), "{}", res.text().unwrap());
        let demo = person.join("demo");
        let held = names(&demo);
        for want in ["accepted.sqlite3", "index.sqlite3", "projects", "vault"] {
            assert!(held.contains(&want.to_owned()), "{want} in the demo's directory: {held:?}");
        }
        let own = format!("in a data directory of its own: {}", demo.display());
        assert!(server.start.contains(&own), "{}", server.start);
        drop(server);
        if person == env.data {
            assert_eq!(
                (
                    names(&env.data).into_iter().filter(|n| n != "demo").collect::<Vec<_>>(),
                    std::fs::read(&index).unwrap()
                ),
                before,
                "the person's data directory is as it was"
            );
        } else {
            assert_eq!(names(&person), ["demo"], "nothing but the demo's directory in the default data directory");
        }
    }
}

#[test]
fn serve_prints_the_viewers_url() {
    let env = Env::new();
    let server = Server::start(&env, &[]);
    assert_eq!(server.start.lines().last(), Some(format!("{}/", server.base).as_str()), "{}", server.start);
}

#[test]
fn a_session_is_named_by_any_unique_prefix_of_its_id_in_every_command() {
    let env = Env::new();
    for (session, words) in [(A, "apples"), (B, "bananas"), (C, "cherries")] {
        write_session(&env, session, words);
    }
    env.index();
    let out_file = env.dir.path().join("a.html");
    let (_, stderr) = ok(env.run(&["export", "fa812", "-o", out_file.to_str().unwrap()]));
    assert!(stderr.contains(A), "{stderr}");
    assert!(std::fs::read_to_string(&out_file).unwrap().contains("apples"));
    // Ambiguous: both candidates listed; too short: refused; unknown: said.
    for (name, want) in [
        ("fa81", vec!["fa81", "names 2 sessions", A, B]),
        ("fa8", vec!["too short", "at least 4"]),
        ("dddd", vec!["no session", "dddd"]),
    ] {
        for args in [
            vec!["export", name, "-o", out_file.to_str().unwrap()],
            vec!["forget", name, "--dry-run"],
            vec!["search", "about", "--session", name],
            vec!["usage", "--session", name],
        ] {
            let out = env.run(&args);
            let (_, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            for want in &want {
                assert!(stderr.contains(want), "{want:?} for {args:?} in {stderr}");
            }
        }
    }
    let (stdout, _) = ok(env.run(&["search", "about", "--session", "0c00"]));
    assert!(stdout.contains(C) && !stdout.contains(A), "{stdout}");
    // Each session's title comes first.
    assert!(stdout.lines().next().unwrap().contains("cherries"), "{stdout}");
    let (stdout, _) = ok(env.run(&["usage", "--session", "fa812b", "--json"]));
    assert!(stdout.contains("\"rows\""), "{stdout}");
    // A photo by its ref, the session given by a prefix.
    let reference: String = env
        .conn()
        .query_row(
            "SELECT e.uuid || '/' || m.ordinal FROM media m JOIN entries e ON e.id = m.entry_id
             WHERE e.session_id = ?1 AND m.ordinal IS NOT NULL",
            [A],
            |r| r.get(0),
        )
        .unwrap();
    let photo = env.media(&format!("{}/{reference}", &A[..6])).unwrap();
    assert_eq!(photo, fake_png(A.len() as u64 + "apples".len() as u64, 2000));
    // Forget and unforget by prefix.
    let (stdout, _) = ok(env.run(&["forget", "0c000"]));
    assert!(stdout.contains(&format!("forgot {C}")), "{stdout}");
    let (stdout, _) = ok(env.run(&["unforget", "0c00"]));
    assert!(stdout.starts_with("1 transcript(s)"), "{stdout}");
    let out = env.run(&["unforget", "fa81"]);
    assert_eq!(out.status.code(), Some(2), "only forgotten sessions can be unforgotten: {}", text(&out).1);
}

/// The binary without a root given in its environment (`Env::cmd` gives one).
fn bare(env: &Env) -> Command {
    let mut cmd = env.cmd();
    cmd.env_remove("SCROLLBACK_TRANSCRIPTS");
    cmd
}

#[test]
fn the_data_directory_remembers_its_roots_for_status_index_rebuild_and_serve() {
    let env = Env::new();
    write_session(&env, A, "apples");
    let root = format!("claude:{}", env.root.display());
    let (stdout, stderr) = ok(bare(&env).args(["index", "--root", &root]).output().unwrap());
    assert!(stdout.starts_with("indexed 1 file"), "{stdout}");
    assert!(stderr.contains("given") && stderr.contains("roots.json"), "{stderr}");
    let remembered = env.data.join("roots.json");
    assert_eq!(std::fs::metadata(&remembered).unwrap().permissions().mode() & 0o777, 0o600);
    let (stdout, _) = ok(bare(&env).arg("status").output().unwrap());
    assert!(stdout.contains(&format!("root            {root} (exists: 1 transcript, 1 session)")), "{stdout}");
    assert!(stdout.contains("roots           remembered in"), "{stdout}");
    assert!(!stdout.contains("does not exist"), "{stdout}");
    write_session(&env, B, "bananas");
    let (stdout, stderr) = ok(bare(&env).arg("index").output().unwrap());
    assert!(stdout.starts_with("indexed 1 file"), "only the new transcript is read: {stdout}");
    assert!(stderr.contains("remembered in"), "{stderr}");
    let (stdout, _) = ok(bare(&env).arg("rebuild").output().unwrap());
    assert!(stdout.starts_with("rebuilt: 2 transcripts indexed"), "{stdout}");
    let server = Server::start_cmd(bare(&env), &[]);
    server.wait_for_sessions(2);
    assert!(server.start.contains("Claude Code (2 sessions)"), "the remembered root is followed: {}", server.start);
    drop(server);
    // Roots given on the command line win for that command, and are remembered for the next.
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (stdout, _) = ok(bare(&env).args(["status", "--transcripts", other.to_str().unwrap()]).output().unwrap());
    assert!(stdout.contains("roots           given"), "{stdout}");
    let (stdout, _) = ok(bare(&env).arg("status").output().unwrap());
    assert!(stdout.contains(&root), "status remembers nothing: {stdout}");
}

/// The numbers of `what` in `text`: each run of digits after it, up to the end of its line.
fn numbers_after(text: &str, what: &str) -> Vec<u64> {
    let line = text
        .lines()
        .find_map(|l| l.split_once(what).map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("{what:?} in {text}"));
    line.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()).map(|w| w.parse().unwrap()).collect()
}

#[test]
fn index_and_status_count_the_same_things_in_the_same_words() {
    let env = Env::new();
    let png = fake_png(7, 3000);
    let photo = image_block("image/png", &b64(&png));
    let asked = user_line(A, "u1", &format!("[{photo}, {{\"type\":\"text\",\"text\":\"look\"}}]"), "");
    // The Read tool's photo: the image block, and its copy in toolUseResult (a payload, not a photo).
    let result = user_line(
        A,
        "u2",
        &format!("[{{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":[{photo}]}}]"),
        &format!(
            "\"toolUseResult\":{{\"type\":\"image\",\"file\":{{\"base64\":\"{}\",\"type\":\"image/png\"}}}}",
            b64(&png)
        ),
    );
    // A copy of the first line (hidden), and a line that is not JSON (invalid).
    env.write(&format!("p/{A}.jsonl"), format!("{asked}\n{result}\n{asked}\nnot json\n"));
    let index = env.index();
    let (status, _) = ok(env.run(&["status"]));
    // The pass: files, lines, payloads, invalid lines read.
    let pass = numbers_after(&index, "indexed ");
    let holds = index.lines().nth(1).unwrap_or_else(|| panic!("a second line in {index}"));
    let entries = status.lines().find_map(|l| l.strip_prefix("entries         ")).unwrap();
    let photos = status.lines().find_map(|l| l.strip_prefix("photos          ")).unwrap();
    // `index` says what the index holds in `status`'s words, with its numbers.
    assert_eq!(holds, format!("the index holds 1 session; entries {entries}; photos {photos}"), "{index}\n{status}");
    let [shown, invalid, hidden] = numbers_after(&status, "entries         ")[..] else { panic!("{status}") };
    let [photos, payloads] = numbers_after(&status, "photos          ")[..] else { panic!("{status}") };
    assert_eq!((pass[0], pass[1], pass[3]), (1, shown + hidden, invalid), "every line read is shown or hidden");
    assert_eq!((invalid, hidden), (1, 1), "{status}");
    assert_eq!(pass[2], payloads, "the payloads read are the payloads held: {index}");
    assert!(photos >= 1 && photos < payloads, "a copy's payload is no photo: {status}");
}

#[test]
fn an_html_exports_count_of_entries_is_its_headers_and_the_viewers() {
    let env = Env::new();
    let progress = json!({"type": "progress", "sessionId": A, "uuid": "p1", "timestamp": "2026-01-01T00:00:02.000Z",
                          "data": {"message": "tick"}});
    let snapshot =
        json!({"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}, "isSnapshotUpdate": false});
    let body =
        [user_line(A, "u1", "\"hello\"", ""), progress.to_string(), snapshot.to_string(), assistant(A, "a1", "hi")];
    env.write(&format!("p/{A}.jsonl"), body.join("\n") + "\n");
    env.index();
    let out_file = env.dir.path().join("a.html");
    let (_, stderr) = ok(env.run(&["export", A, "-o", out_file.to_str().unwrap()]));
    let html = std::fs::read_to_string(&out_file).unwrap();
    let meta = html.split("<p class=\"meta-text\"").nth(1).unwrap();
    let header: Option<u64> =
        meta.split(" entries").next().and_then(|h| h.rsplit(' ').next()).and_then(|n| n.parse().ok());
    let exported = numbers_after(&stderr, "exported ")[0];
    assert_eq!(Some(exported), header, "{stderr}\n{html}");
    let server = Server::start(&env, &[]);
    let sessions = server.json("/api/sessions");
    let about = sessions["sessions"].as_array().unwrap().iter().find(|s| s["id"] == A).unwrap().clone();
    let viewer = about["entries"].as_u64().unwrap() - about["sidechainEntries"].as_u64().unwrap_or(0);
    assert_eq!(exported, viewer, "{about}");
}

#[test]
fn export_onto_a_fifo_writes_into_it_and_leaves_it_a_fifo() {
    let env = Env::new();
    write_session(&env, A, "apples");
    env.index();
    let fifo = env.dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = String::new();
            std::fs::File::open(&fifo).unwrap().read_to_string(&mut got).unwrap();
            got
        })
    };
    let out = env.run(&["export", A, "-o", fifo.to_str().unwrap()]);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "still a FIFO: {kind:?}; {}", text(&out).1);
    let (_, stderr) = ok(out);
    assert!(stderr.contains("in place"), "{stderr}");
    assert!(reader.join().unwrap().contains("apples"));
}

#[test]
fn export_onto_a_character_device_writes_into_it_and_leaves_it_a_device() {
    let env = Env::new();
    write_session(&env, A, "apples");
    env.index();
    let (_, stderr) = ok(env.run(&["export", A, "-o", "/dev/null"]));
    assert!(stderr.contains("in place"), "{stderr}");
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

#[test]
fn export_onto_a_directory_or_socket_is_refused_and_leaves_it_as_it_was() {
    let env = Env::new();
    write_session(&env, A, "apples");
    env.index();
    let dir = env.dir.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let socket = env.dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for (target, kind) in [(&dir, "a directory"), (&socket, "a socket")] {
        let out = env.run(&["export", A, "-o", target.to_str().unwrap()]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(kind), "{kind} in {stderr}");
    }
    assert!(dir.is_dir() && names(&dir).is_empty());
    assert!(std::fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
    assert_eq!(names(env.dir.path()).iter().filter(|n| n.starts_with(".tmp")).count(), 0, "no file left beside");
}

/// A session whose words carry a terminal's escapes: a colour, a clear screen, a bell and a title.
const ESCAPES: &str = "red \u{1b}[31malert\u{1b}[0m \u{1b}[2J\u{7} \u{1b}]0;owned\u{7} \u{9b}31m end";

fn write_escapes(env: &Env) {
    let first = json!({"parentUuid": null, "isSidechain": false, "cwd": "/work/\u{1b}[2Jproject", "sessionId": A,
        "type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": format!("escapes {ESCAPES}")}});
    let usage = json!({"type": "assistant", "sessionId": A, "uuid": "a1", "timestamp": "2026-01-01T00:00:01.000Z",
        "cwd": "/work/\u{1b}[2Jproject",
        "message": {"id": "msg1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                    "content": [{"type": "text", "text": format!("escapes again {ESCAPES}")}],
                    "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                              "cache_creation_input_tokens": 0}}});
    env.write(&format!("p/{A}.jsonl"), format!("{first}\n{usage}\n"));
}

/// Whether `s` holds a control character a terminal would obey (a newline aside).
fn has_controls(s: &str) -> bool {
    s.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn search_usage_and_status_show_control_characters_from_transcripts_visibly() {
    let env = Env::new();
    write_escapes(&env);
    env.index();
    for args in [
        vec!["search", "escapes"],
        vec!["search", "escapes", "--per-entry"],
        vec!["usage", "--by", "session"],
        vec!["usage", "--by", "project"],
    ] {
        let (stdout, stderr) = ok(env.run(&args));
        assert!(!has_controls(&stdout) && !has_controls(&stderr), "{args:?}: {stdout:?}");
        let shown = if args.last() == Some(&"project") { "/work/␛[2Jproject" } else { "␛[31m" };
        assert!(stdout.contains(shown), "{args:?}: the escape is shown: {stdout}");
    }
    // A root's path is a person's, but it is printed as given: shown visibly too.
    let odd = env.dir.path().join("odd\u{1b}[2Jname");
    let (stdout, _) = ok(env.run(&["status", "--root", &format!("claude:{}", odd.display())]));
    assert!(!has_controls(&stdout) && stdout.contains("odd␛[2Jname"), "{stdout:?}");
}

#[test]
fn a_hubs_error_message_is_printed_with_its_control_characters_visible() {
    let env = Env::new();
    env.index();
    // A PostgreSQL server that answers every start-up with an error carrying escapes.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut len = [0u8; 4];
            if stream.read_exact(&mut len).is_err() {
                continue;
            }
            let mut rest = vec![0u8; u32::from_be_bytes(len) as usize - 4];
            let _ = stream.read_exact(&mut rest);
            let mut fields = Vec::new();
            for (code, value) in
                [(b'S', "FATAL"), (b'V', "FATAL"), (b'C', "28000"), (b'M', "denied \u{1b}[2J\u{1b}]0;owned\u{7} here")]
            {
                fields.push(code);
                fields.extend_from_slice(value.as_bytes());
                fields.push(0);
            }
            fields.push(0);
            let mut message = vec![b'E'];
            message.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
            message.extend_from_slice(&fields);
            let _ = stream.write_all(&message);
        }
    });
    let hub = format!("host=127.0.0.1 port={port} user=u dbname=d sslmode=disable connect_timeout=10");
    let out = env.cmd().args(["push", "--postgres", &hub]).env_remove("SCROLLBACK_POSTGRES").output().unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("denied"), "{stderr}");
    assert!(!has_controls(&stderr) && stderr.contains("␛[2J"), "{stderr:?}");
}

/// Runs `scrollback ARGS` with a terminal as its standard output (util-linux's `script`), and
/// returns what the terminal got; `None` where `script` is missing.
fn on_a_terminal(env: &Env, args: &[&str]) -> Option<String> {
    if Command::new("script").arg("--version").stdout(Stdio::null()).status().is_err() {
        assert!(std::env::var_os("CI").is_none(), "script (util-linux) is needed in CI");
        eprintln!("skipped: `script` (util-linux) is not installed");
        return None;
    }
    let mut line = env!("CARGO_BIN_EXE_scrollback").to_owned();
    for arg in args {
        line.push_str(&format!(" '{arg}'"));
    }
    let out = Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .env("HOME", env.dir.path())
        .env("SCROLLBACK_DATA_DIR", &env.data)
        .env("SCROLLBACK_TRANSCRIPTS", &env.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn an_export_to_a_terminal_shows_control_characters_visibly() {
    let env = Env::new();
    write_escapes(&env);
    env.index();
    for format in ["md", "jsonl", "html"] {
        let Some(shown) = on_a_terminal(&env, &["export", A, "--format", format, "-o", "-"]) else { return };
        assert!(shown.contains("escapes"), "{format}: {shown}");
        if format != "jsonl" {
            // (JSON writes these as \u001b: only the C1 control is raw in a JSONL line.)
            assert!(shown.contains("␛[31m"), "{format}: {shown}");
        }
        // The terminal turns each newline into CR LF, and `script` adds nothing else.
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\r'), "{format}: {shown:?}");
    }
}

/// A reader gone from the pipe (`scrollback index | head -0`) ends the command quietly, with
/// success (STYLE.md), where it used to panic on its first line of output.
#[test]
fn a_closed_pipe_on_stdout_is_success_not_a_panic() {
    let env = Env::new();
    write_session(&env, "5e55a0de-0000-4000-8000-00000000c10e", "harbour");
    for args in [&["index"][..], &["check"][..]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = env.cmd().args(args).stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[test]
fn export_takes_markdown_as_md_does_and_its_help_says_a_prefix_names_the_session() {
    let env = Env::new();
    write_session(&env, A, "apples");
    env.index();
    let md = env.dir.path().join("a.md");
    let markdown = env.dir.path().join("b.md");
    ok(env.run(&["export", A, "--format", "md", "-o", md.to_str().unwrap()]));
    ok(env.run(&["export", A, "--format", "markdown", "-o", markdown.to_str().unwrap()]));
    let text = std::fs::read_to_string(&markdown).unwrap();
    assert!(text.contains("apples"), "{text}");
    assert_eq!(text, std::fs::read_to_string(&md).unwrap().replace("a_files/", "b_files/"));
    let (help, _) = ok(env.run(&["export", "--help"]));
    assert!(help.contains("any unique prefix of it (at least 4 characters)"), "{help}");
}

/// `index` on the defaults (each agent's own places, which most people lack for most agents) says
/// the roots that are there and, in one line, the agents that have none: not a line for each of the
/// dozens of places it looked (`status` lists them).
#[test]
fn index_on_the_defaults_says_what_is_there_and_the_agents_without_transcripts_in_one_line() {
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path().join(".codex/sessions")).unwrap();
    let out = env.cmd().env_remove("SCROLLBACK_TRANSCRIPTS").arg("index").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 2, "{said}");
    assert!(
        lines[0].starts_with("scrollback: roots: the defaults") && lines[0].ends_with("/.codex/sessions"),
        "{said}"
    );
    assert!(
        lines[1].starts_with("scrollback: no transcripts yet for Claude Code, ") && !lines[1].contains("Codex"),
        "{said}"
    );
    for agent in ["Cline", "Roo Code", "Kilo Code", "Kiro CLI"] {
        assert_eq!(lines[1].matches(agent).count(), 1, "{agent}: {said}");
    }
    let status = env.cmd().env_remove("SCROLLBACK_TRANSCRIPTS").arg("status").output().unwrap();
    let listed = String::from_utf8_lossy(&status.stdout);
    assert!(listed.contains("saoudrizwan.claude-dev/tasks (does not exist)"), "status lists where it looked: {listed}");
}
