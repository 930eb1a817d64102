//! Sent messages end to end: the real binary on 127.0.0.1:0, real sends over HTTP, the acceptance
//! record read back through the API and, for counts, from `accepted.sqlite3` itself.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use rusqlite::{Connection, OpenFlags};
use scrollback::accept::reconcile::{PendingSend, TranscriptEntry, reconcile};
use serde_json::{Value, json};

use crate::util::{Env, b64, hash_hex};
use crate::util::{SILENT_ENGINE, Server};

/// A small real PNG (1x1).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn png() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(PNG).unwrap()
}

/// A bigger, distinct PNG-headed image.
fn photo(seed: u64) -> Vec<u8> {
    crate::util::fake_png(seed, 200_000)
}

fn data_url(bytes: &[u8]) -> String {
    format!("data:image/png;base64,{}", b64(bytes))
}

impl Server {
    fn post(&self, path: &str, body: &Value) -> reqwest::blocking::Response {
        self.client.post(format!("{}{path}", self.base)).json(body).send().unwrap()
    }

    fn send(&self, body: &Value) -> Value {
        let res = self.post("/api/chat/send", body);
        assert_eq!(res.status(), StatusCode::OK);
        res.json().unwrap()
    }

    fn bootstrap(&self, chat: &str) -> Value {
        self.json(&format!("/api/chat/bootstrap?chatId={chat}"))
    }

    /// Polls bootstrap until `ready` holds.
    fn bootstrap_until(&self, chat: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let b = self.bootstrap(chat);
            if ready(&b) {
                return b;
            }
            assert!(Instant::now() < deadline, "waited 30 s for {what}: {b:#}");
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn kill9(mut self) {
        // `Child::kill` is SIGKILL: no shutdown code runs.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Rows of the acceptance record and files under `accepted-images`.
pub(crate) fn stored(data: &Path) -> (i64, i64, usize) {
    let path = data.join("accepted.sqlite3");
    if !path.exists() {
        return (0, 0, 0);
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let files = walk(&data.join("accepted-images"));
    (count("SELECT count(*) FROM acceptances"), count("SELECT count(*) FROM acceptance_images"), files)
}

pub fn walk(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries.map(|e| e.unwrap().path()).map(|p| if p.is_dir() { walk(&p) } else { 1 }).sum()
}

fn demo_engine(env: &Env) -> String {
    format!("{} demo-engine --transcripts {} --reply-delay-ms 50", env!("CARGO_BIN_EXE_scrollback"), env.root.display())
}

#[test]
fn a_send_survives_kill_9_and_the_loss_of_the_index() {
    let env = Env::new();
    let server = Server::start(&env, &SILENT_ENGINE);
    let image = photo(1);
    let record = server.send(&json!({
        "clientMessageId": "m-durable", "chatId": "c1", "text": "keep this",
        "images": [{"url": data_url(&image), "mimeType": "image/png"}],
    }));
    assert_eq!(record["state"], "pending");
    assert_eq!(record["images"][0]["blake3"], hash_hex(&image));
    server.kill9();

    for round in ["after kill -9", "after deleting the index"] {
        let server = Server::start(&env, &SILENT_ENGINE);
        let b = server.bootstrap("c1");
        assert_eq!(b["pending"].as_array().unwrap().len(), 1, "{round}");
        let pending = &b["pending"][0];
        assert_eq!(pending["clientMessageId"], "m-durable", "{round}");
        assert_eq!(pending["text"], "keep this", "{round}");
        let url = pending["images"][0]["url"].as_str().unwrap();
        let res = server.get(url);
        assert_eq!(res.status(), StatusCode::OK, "{round}");
        assert_eq!(res.headers()["content-type"], "image/png");
        assert_eq!(res.headers()["etag"], format!("\"{}\"", hash_hex(&image)).as_str());
        assert_eq!(res.bytes().unwrap().as_ref(), image.as_slice(), "{round}: byte-exact");
        drop(server);
        for name in ["index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm"] {
            let _ = std::fs::remove_file(env.data.join(name));
        }
    }
}

#[test]
fn twenty_concurrent_retries_store_one_message_and_one_image() {
    let env = Env::new();
    let server = Server::start(&env, &SILENT_ENGINE);
    let image = photo(2);
    let body = json!({
        "clientMessageId": "m-retry", "chatId": "c1", "text": "once",
        "images": [{"url": data_url(&image)}],
    });
    let answers: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20).map(|_| scope.spawn(|| server.send(&body))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|a| a == &answers[0]), "every answer is the same record");
    assert_eq!(stored(&env.data), (1, 1, 1), "one row, one image row, one file");
    // The same id for another message is refused, and stores nothing.
    let other = server.post("/api/chat/send", &json!({"clientMessageId": "m-retry", "chatId": "c1", "text": "twice"}));
    assert_eq!(other.status(), StatusCode::CONFLICT);
    assert_eq!(stored(&env.data), (1, 1, 1));
}

/// Sends raw bytes as a request; returns the status.
fn raw(server: &Server, head: &str, body: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    while !response.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&response);
    text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn bad_sends_get_a_4xx_and_store_nothing() {
    let env = Env::new();
    let server = Server::start(&env, &SILENT_ENGINE);
    server.send(&json!({"clientMessageId": "m-ok", "chatId": "c1", "text": "a good one", "images": [{"url": data_url(&png())}]}));
    let before = stored(&env.data);
    let big = {
        let mut b = png();
        b.resize((5 << 20) + 1, 0);
        b
    };
    let text_as_image = format!("data:image/png;base64,{}", b64(b"just some text, not an image"));
    let bad: Vec<(&str, Value, u16)> = vec![
        (
            "malformed data url",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": "data:image/png,AAAA"}]}),
            400,
        ),
        (
            "not base64",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": "data:image/png;base64,%%%"}]}),
            400,
        ),
        (
            "http url",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": "https://example.com/a.png"}]}),
            400,
        ),
        (
            "not an image type",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": format!("data:text/html;base64,{}", b64(b"<b>x</b>"))}]}),
            400,
        ),
        (
            "svg",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": format!("data:image/svg+xml;base64,{}", b64(b"<svg/>"))}]}),
            400,
        ),
        (
            "bytes are not the type",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": text_as_image}]}),
            400,
        ),
        (
            "mimeType disagrees",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": data_url(&png()), "mimeType": "image/jpeg"}]}),
            400,
        ),
        (
            "image over 5 MiB",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": data_url(&big)}]}),
            413,
        ),
        (
            "nine images",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": vec![json!({"url": data_url(&png())}); 9]}),
            400,
        ),
        ("unknown field", json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "mood": "happy"}), 400),
        (
            "unknown image field",
            json!({"clientMessageId": "m1", "chatId": "c1", "text": "x", "images": [{"url": data_url(&png()), "alt": "a"}]}),
            400,
        ),
        ("missing clientMessageId", json!({"chatId": "c1", "text": "x"}), 400),
        ("missing text", json!({"clientMessageId": "m1", "chatId": "c1"}), 400),
        ("overlong id", json!({"clientMessageId": "m".repeat(129), "chatId": "c1", "text": "x"}), 400),
        ("empty chat id", json!({"clientMessageId": "m1", "chatId": "", "text": "x"}), 400),
        ("chat id with a path", json!({"clientMessageId": "m1", "chatId": "../../etc", "text": "x"}), 400),
        ("chat id with a slash", json!({"clientMessageId": "m1", "chatId": "a/b", "text": "x"}), 400),
        ("empty message", json!({"clientMessageId": "m1", "chatId": "c1", "text": "   "}), 400),
        ("text over 64 KiB", json!({"clientMessageId": "m1", "chatId": "c1", "text": "x".repeat((64 << 10) + 1)}), 400),
        ("an array", json!([1, 2]), 400),
    ];
    for (what, body, status) in bad {
        let res = server.post("/api/chat/send", &body);
        assert_eq!(res.status().as_u16(), status, "{what}");
        let error: Value = res.json().unwrap();
        assert!(error["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {error}");
    }
    let url = format!("{}/api/chat/send", server.base);
    let body = json!({"clientMessageId": "m1", "chatId": "c1", "text": "x"}).to_string();
    let refused = [
        (
            "cross-site Origin",
            ("content-type", "application/json"),
            ("origin", "https://evil.example"),
            StatusCode::FORBIDDEN,
        ),
        (
            "Sec-Fetch-Site: cross-site",
            ("content-type", "application/json"),
            ("sec-fetch-site", "cross-site"),
            StatusCode::FORBIDDEN,
        ),
        (
            "a form-like content type",
            ("content-type", "text/plain"),
            ("origin", server.base.as_str()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
    ];
    for (what, (k1, v1), (k2, v2), status) in refused {
        let res = server.client.post(&url).header(k1, v1).header(k2, v2).body(body.clone()).send().unwrap();
        assert_eq!(res.status(), status, "{what}");
    }
    let get = server.get("/api/chat/send");
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(get.headers()["allow"], "POST");
    // Bytes that are not UTF-8 inside the JSON, and a body over the limit (refused by its length).
    let mut not_utf8 = br#"{"clientMessageId":"m1","chatId":"c1","text":""#.to_vec();
    not_utf8.extend_from_slice(b"\xff\xfe\"}");
    let head = format!(
        "POST /api/chat/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        not_utf8.len()
    );
    assert_eq!(raw(&server, &head, &not_utf8), 400, "invalid UTF-8");
    let head = "POST /api/chat/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 900000000\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(&server, head, b"{"), 413, "a body over the limit");
    // A chat bound to one session refuses a send naming another, before writing its photo.
    assert_eq!(server.post("/api/chats/c1/session", &json!({"sessionId": "s-a"})).status(), StatusCode::OK);
    let other = json!({"clientMessageId": "m9", "chatId": "c1", "sessionId": "s-b", "text": "x", "images": [{"url": data_url(&photo(9))}]});
    assert_eq!(server.post("/api/chat/send", &other).status(), StatusCode::CONFLICT);
    assert_eq!(stored(&env.data), before, "nothing was stored");
    // The server still serves.
    assert_eq!(server.get("/api/sessions").status(), StatusCode::OK);
}

#[test]
fn a_new_chat_end_to_end_with_the_demo_engine() {
    let env = Env::new();
    let engine = demo_engine(&env);
    let server = Server::start(&env, &["--engine", &engine]);
    let first = server.send(&json!({"clientMessageId": "m1", "chatId": "new-chat", "text": "hello, engine"}));
    assert_eq!(first["sessionId"], Value::Null, "a new chat has no session yet");

    // The engine makes the session and writes the line; bootstrap shows both records side by side.
    let b = server.bootstrap_until("new-chat", "the transcript line", |b| {
        b["entries"].as_array().is_some_and(|e| e.iter().any(|e| e["type"] == "user"))
    });
    let session = b["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(b["pending"].as_array().unwrap().len(), 1, "still pending until a client retires it");
    let retire_all = |b: &Value| -> Vec<String> {
        let entries: Vec<TranscriptEntry> = serde_json::from_value(b["entries"].clone()).unwrap();
        let pending: Vec<PendingSend> = serde_json::from_value(b["pending"].clone()).unwrap();
        let reconciled = reconcile(&entries, &pending);
        assert!(reconciled.still_pending.is_empty(), "{reconciled:?}");
        reconciled.retired.into_iter().map(|r| r.client_message_id).collect()
    };
    let ids = retire_all(&b);
    assert_eq!(ids, ["m1"]);
    let res = server.post("/api/chat/retire", &json!({"chatId": "new-chat", "clientMessageIds": ids}));
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().unwrap()["retired"], json!(["m1"]));
    assert!(server.bootstrap("new-chat")["pending"].as_array().unwrap().is_empty());

    // A photo, into the now bound chat: byte-exact from both records.
    let image = photo(3);
    let second = server.send(&json!({
        "clientMessageId": "m2", "chatId": "new-chat", "text": "and a photo",
        "images": [{"url": data_url(&image), "mimeType": "image/png"}],
    }));
    assert_eq!(second["sessionId"], session.as_str());
    let b = server.bootstrap_until("new-chat", "the photo's line", |b| {
        b["entries"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["entry"].to_string().contains("/api/session-media/")))
    });
    let block = b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["entry"]["message"]["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "image")
        .unwrap();
    assert_eq!(block["blake3"], hash_hex(&image));
    let from_transcript = server.get(block["url"].as_str().unwrap()).bytes().unwrap();
    let from_acceptance = server.get(second["images"][0]["url"].as_str().unwrap()).bytes().unwrap();
    assert_eq!(from_transcript.as_ref(), image.as_slice(), "the transcript's copy");
    assert_eq!(from_acceptance.as_ref(), image.as_slice(), "the acceptance's copy");
    assert_eq!(retire_all(&b), ["m2"]);

    // Binding is idempotent; another session for the chat is a conflict.
    let bind = |session: &str| server.post("/api/chats/new-chat/session", &json!({"sessionId": session})).status();
    assert_eq!(bind(&session), StatusCode::OK);
    assert_eq!(bind("another-session"), StatusCode::CONFLICT);
}

#[test]
fn an_engine_that_fails_or_hangs_leaves_the_acceptance_standing() {
    for (engine, timeout, says) in [("false", "60", "exited with status 1"), ("sleep 30", "1", "timed out")] {
        let env = Env::new();
        let server = Server::start(&env, &["--engine", engine, "--engine-timeout-secs", timeout]);
        let record = server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "will the engine cope?"}));
        assert_eq!(record["state"], "pending");
        let b = server.bootstrap_until("c1", "the engine's failure", |b| b["pending"][0].get("engineError").is_some());
        let error = b["pending"][0]["engineError"].as_str().unwrap();
        assert!(error.contains(says), "{engine}: {error}");
        assert_eq!(b["pending"][0]["text"], "will the engine cope?");
        assert_eq!(server.get("/api/sessions").status(), StatusCode::OK, "the server keeps serving");
        assert_eq!(stored(&env.data).0, 1);
    }
}

/// The image files of the acceptance record, by name.
fn image_files(env: &Env) -> Vec<String> {
    let mut out = Vec::new();
    let root = env.data.join("accepted-images");
    for dir in std::fs::read_dir(&root).into_iter().flatten() {
        for file in std::fs::read_dir(dir.unwrap().path()).into_iter().flatten() {
            out.push(file.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

/// Fills the file system holding `path` to its last byte with the file `path`, kept open.
fn fill_disk(path: &Path) -> std::fs::File {
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 1 << 16];
    for size in [block.len(), 512, 1] {
        while file.write_all(&block[..size]).is_ok() {}
    }
    let _ = file.sync_all();
    file
}

#[test]
fn a_full_disk_refuses_a_send_with_507_and_stores_nothing() {
    // The data directory on a real, small tmpfs, filled up: the send is answered 507 with the
    // API's JSON error, no row and no image file stays, and once there is room the same send works.
    let env = Env::new();
    let Some(_mount) = crate::util::Tmpfs::mount(&env.data, "16m") else {
        eprintln!("this machine does not let the test mount a tmpfs; the injected fault test covers the case");
        return;
    };
    env.write("p/s.jsonl", crate::util::user_line("s", "u1", r#""hello""#, "") + "\n");
    let server = Server::start(&env, &SILENT_ENGINE);
    server.wait_for_sessions(1);
    let first =
        json!({"clientMessageId": "m1", "chatId": "c", "text": "before", "images": [{"url": data_url(&png())}]});
    server.send(&first);
    // Fill the disk to its last byte.
    let filler = env.data.join("filler");
    let file = fill_disk(&filler);
    let big = photo(7);
    let second = json!({"clientMessageId": "m2", "chatId": "c", "text": "full", "images": [{"url": data_url(&big)}]});
    let res = server.post("/api/chat/send", &second);
    assert_eq!(res.status(), StatusCode::INSUFFICIENT_STORAGE);
    let body: Value = res.json().unwrap();
    assert_eq!(body["error"]["code"], "disk-full", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("nothing was stored"), "{body}");
    // Nothing of it: no row, no image file.
    drop(file);
    std::fs::remove_file(&filler).unwrap();
    let b = server.bootstrap("c");
    let ids: Vec<&str> =
        b["pending"].as_array().unwrap().iter().map(|p| p["clientMessageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m1"], "{b:#}");
    assert_eq!(image_files(&env), [hash_hex(&png())], "no file of the refused send");
    // With room again, the same send is stored, its image byte-exact. (The room is looked at first:
    // once, in CI, this send still met a full disk; the message then says how much there was.)
    let free = || {
        let fs = rustix::fs::statvfs(&env.data).unwrap();
        fs.f_bavail * fs.f_frsize
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while free() < 4 << 20 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let room = free();
    let res = server.post("/api/chat/send", &second);
    let status = res.status();
    let text = res.text().unwrap();
    assert_eq!(status, StatusCode::OK, "{room} bytes free in the data directory: {text}");
    let stored: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(stored["clientMessageId"], "m2");
    let url = stored["images"][0]["url"].as_str().unwrap().to_owned();
    assert_eq!(server.get(&url).bytes().unwrap().as_ref(), big.as_slice());
}

#[test]
fn a_full_disk_answers_507_to_every_write_and_status_says_the_vault_is_off() {
    // The data directory on a real tmpfs (another file system than the transcripts, so the vault
    // turns off at the first link), filled to its last byte while the server runs: a text-only send
    // and a retire are 507 `disk-full` with no path in the answer, nothing is half-written, and when
    // a transcript then appears and the vault turns off, `status` says off as the log does, though
    // the index could not record it.
    let env = Env::new();
    let Some(_mount) = crate::util::Tmpfs::mount(&env.data, "16m") else {
        eprintln!("this machine does not let the test mount a tmpfs; skipped");
        return;
    };
    std::fs::create_dir_all(&env.root).unwrap();
    let mut server = Server::start(&env, &SILENT_ENGINE);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c", "text": "before"}));
    assert_eq!(server.json("/api/status")["vault"]["state"], "on", "no transcript yet: nothing has been linked");
    let filler = env.data.join("filler");
    let file = fill_disk(&filler);
    let no_path = |body: &Value| {
        let message = body["error"]["message"].as_str().unwrap();
        assert!(!message.contains('/'), "no path in the answer: {message}");
    };
    for (path, body) in [
        ("/api/chat/send", json!({"clientMessageId": "m2", "chatId": "c", "text": "on a full disk"})),
        ("/api/chat/retire", json!({"chatId": "c", "clientMessageIds": ["m1"]})),
    ] {
        let res = server.post(path, &body);
        assert_eq!(res.status(), StatusCode::INSUFFICIENT_STORAGE, "{path}");
        let body: Value = res.json().unwrap();
        assert_eq!(body["error"]["code"], "disk-full", "{path}: {body}");
        no_path(&body);
    }
    // A transcript appears: its first link fails across file systems, and the vault turns off on a
    // disk too full to record it.
    env.write("p/s.jsonl", crate::util::user_line("s", "u1", r#""hello""#, "") + "\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !server.log.lock().unwrap().contains("no vault: the data directory is on another file system") {
        assert!(Instant::now() < deadline, "the vault never turned off: {}", server.log.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = server.json("/api/status");
    let log = server.log.lock().unwrap().clone();
    assert_eq!(status["vault"]["state"], "off", "the log says off, and so does status: {status:#}\n{log}");
    // SQLite says a full disk as a disk I/O error where the space runs out on the way to a write (the
    // WAL's index growing: SQLITE_IOERR_SHMSIZE, which a server started on this disk meets): that
    // is a full disk too, here and not on a disk with room.
    let shm = || scrollback::Error::Sqlite(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(4874), None));
    assert!(shm().or_out_of_space(&env.data).is_out_of_space());
    assert!(!shm().or_out_of_space(env.dir.path()).is_out_of_space(), "a disk with room: an I/O error");
    // Nothing was half-written: m1 is still pending, m2 was never stored.
    drop(file);
    std::fs::remove_file(&filler).unwrap();
    let b = server.bootstrap("c");
    let ids: Vec<&str> =
        b["pending"].as_array().unwrap().iter().map(|p| p["clientMessageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m1"], "{b:#}");
    // Opening the index on a full disk (after a clean stop, so SQLite must make its WAL's index
    // again) meets that I/O error, and says the disk is full.
    terminate(&server);
    let _ = server.child.wait();
    let _file = fill_disk(&filler);
    let out = env.run(&["index"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("No space left on device"), "{said}");
}

#[test]
fn a_send_refused_midway_leaves_no_image_file_behind() {
    // Injected: the second image of a send fails to be written (ENOSPC), after the first was
    // written and synced. The first must go again: no image file without its row.
    let env = Env::new();
    env.write("p/s.jsonl", crate::util::user_line("s", "u1", r#""hello""#, "") + "\n");
    let server = Server::start_with(&env, &SILENT_ENGINE, &[(scrollback::accept::store::FAULT_DISK_FULL_AFTER, "1")]);
    server.wait_for_sessions(1);
    let one =
        json!({"clientMessageId": "m0", "chatId": "c", "text": "one image", "images": [{"url": data_url(&photo(1))}]});
    server.send(&one);
    let before = image_files(&env);
    let two = json!({"clientMessageId": "m1", "chatId": "c", "text": "two", "images": [{"url": data_url(&photo(2))}, {"url": data_url(&photo(3))}]});
    let res = server.post("/api/chat/send", &two);
    assert_eq!(res.status(), StatusCode::INSUFFICIENT_STORAGE);
    assert_eq!(res.json::<Value>().unwrap()["error"]["code"], "disk-full");
    assert_eq!(image_files(&env), before, "the refused send's first image was removed");
    let b = server.bootstrap("c");
    assert_eq!(b["pending"].as_array().unwrap().len(), 1, "{b:#}");
}

/// Writes an engine script into the test's directory and returns the `--engine` value.
fn engine_script(env: &Env, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = env.dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\ncat > /dev/null\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn an_engine_heard_through_both_pipes_at_once() {
    // 100 KB on standard error before the session id: both pipes are read at once, so the id is
    // heard and the chat bound. 3 MB on standard error and exit 3: the exit status is the answer,
    // with the end of standard error, not a time-out.
    let env = Env::new();
    let chatty = engine_script(
        &env,
        "chatty.sh",
        r#"head -c 100000 /dev/zero | tr '\0' 'e' >&2; echo '{"sessionId": "s-chatty"}'"#,
    );
    let server = Server::start(&env, &["--engine", &chatty, "--engine-timeout-secs", "20"]);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "hello"}));
    let b = server.bootstrap_until("c1", "the chat bound", |b| {
        b["sessionId"] == "s-chatty" || b["pending"][0].get("engineError").is_some()
    });
    assert_eq!(b["sessionId"], "s-chatty", "{b:#}");
    drop(server);
    let env = Env::new();
    let failing = engine_script(
        &env,
        "failing.sh",
        r#"head -c 3000000 /dev/zero | tr '\0' 'e' >&2; echo last words >&2; exit 3"#,
    );
    let server = Server::start(&env, &["--engine", &failing, "--engine-timeout-secs", "20"]);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "hello"}));
    let b = server.bootstrap_until("c1", "the engine's failure", |b| b["pending"][0].get("engineError").is_some());
    let error = b["pending"][0]["engineError"].as_str().unwrap();
    assert!(error.starts_with("exited with status 3") && error.ends_with("last words"), "{error}");
    assert!(error.len() < 4096, "a bounded tail: {} bytes", error.len());
}

#[test]
fn an_engine_that_leaves_a_child_holding_its_output_is_done_when_it_exits() {
    // The engine prints its id, leaves a background child holding standard output, and exits 0:
    // the run is over (bound, not timed out), and the child is killed with the run's group.
    let env = Env::new();
    let pid_file = env.dir.path().join("child.pid");
    let engine = engine_script(
        &env,
        "leaver.sh",
        &format!(r#"echo '{{"sessionId": "s-left"}}'; sleep 300 & echo $! > {}; exit 0"#, pid_file.display()),
    );
    let server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "20"]);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "hello"}));
    let b = server.bootstrap_until("c1", "the chat bound", |b| {
        b["sessionId"] == "s-left" || b["pending"][0].get("engineError").is_some()
    });
    assert_eq!(b["sessionId"], "s-left", "{b:#}");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    // Gone, or a zombie waiting for its parent (init) to reap it: not running.
    let running = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    };
    while running(&pid) {
        assert!(Instant::now() < deadline, "the engine's background child {pid} still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_session_id_the_engine_prints_is_checked_as_the_bind_route_checks_it() {
    let env = Env::new();
    let engine = engine_script(&env, "liar.sh", r#"echo '{"sessionId": "../../etc/passwd"}'"#);
    let server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "20"]);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "hello"}));
    let b = server.bootstrap_until("c1", "the engine's failure", |b| b["pending"][0].get("engineError").is_some());
    assert!(b["sessionId"].is_null(), "not bound: {b:#}");
    let error = b["pending"][0]["engineError"].as_str().unwrap();
    assert!(error.contains("not an id"), "{error}");
}

/// An engine that logs each run's start and end (with the message's id) to `log`, taking `secs`;
/// with `fail_first`, its first run of each message exits 1.
fn logging_engine(env: &Env, log: &Path, secs: &str, fail_first: bool) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = env.dir.path().join("logging-engine");
    let log = log.display();
    let fail = if fail_first {
        format!("if ! grep -q \"^failed $id$\" {log}; then echo \"failed $id\" >> {log}; exit 1; fi\n")
    } else {
        String::new()
    };
    let script = format!(
        "#!/bin/sh\ninput=$(cat)\nid=$(printf '%s' \"$input\" | sed -n 's/.*\"clientMessageId\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         echo \"start $id\" >> {log}\n{fail}sleep {secs}\necho \"end $id\" >> {log}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_owned).collect()
}

fn wait_for_log(log: &Path, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let lines = log_lines(log);
        if ready(&lines) {
            return lines;
        }
        assert!(Instant::now() < deadline, "waited 60 s for {what}: {lines:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn terminate(server: &Server) {
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
}

/// #22, item 1: two sends to one chat, the server stopped (SIGTERM) while the engine runs the first
/// and started again: both are run (the first again: at least once), in order, one at a time, and
/// each run's start and end is recorded.
#[test]
fn sends_accepted_before_a_restart_are_handed_to_the_engine_after_it() {
    let env = Env::new();
    let log = env.dir.path().join("runs.log");
    let engine = logging_engine(&env, &log, "3", false);
    let mut server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "30"]);
    server.send(&json!({"clientMessageId": "m1", "chatId": "c1", "text": "first"}));
    server.send(&json!({"clientMessageId": "m2", "chatId": "c1", "text": "second"}));
    wait_for_log(&log, "the first run", |l| l.iter().any(|l| l == "start m1"));
    terminate(&server);
    let _ = server.child.wait();
    assert_eq!(log_lines(&log), ["start m1"], "the second never started, the first was stopped");
    drop(server);
    let server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "30"]);
    let lines = wait_for_log(&log, "both runs", |l| l.iter().any(|l| l == "end m2"));
    assert_eq!(lines, ["start m1", "start m1", "end m1", "start m2", "end m2"], "in order, one at a time");
    let b = server.bootstrap("c1");
    assert!(b["pending"].as_array().unwrap().iter().all(|p| p.get("engineError").is_none()), "{b:#}");
    drop(server);
    let conn = Connection::open(env.data.join("accepted.sqlite3")).unwrap();
    let runs: Vec<(String, bool, Option<String>)> = conn
        .prepare(
            "SELECT a.client_message_id, r.started_at IS NOT NULL, r.outcome FROM engine_runs r
             JOIN acceptances a ON a.id = r.acceptance_id ORDER BY r.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    // One row per message: m1's run, interrupted, was run again to its end.
    assert_eq!(runs, [("m1".into(), true, Some("ok".into())), ("m2".into(), true, Some("ok".into()))]);
}

/// #22, item 1: the viewer's Retry after "the engine failed" runs the engine again; a retry of a
/// message whose run succeeded (or is still to end) runs nothing.
#[test]
fn a_retry_of_a_failed_send_runs_the_engine_again() {
    let env = Env::new();
    let log = env.dir.path().join("runs.log");
    let engine = logging_engine(&env, &log, "0", true);
    let server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "30"]);
    let send = json!({"clientMessageId": "m1", "chatId": "c1", "text": "try me"});
    server.send(&send);
    server.bootstrap_until("c1", "the failure", |b| b["pending"][0].get("engineError").is_some());
    let retried = server.send(&send);
    assert!(retried.get("engineError").is_none(), "the retry's answer: the run is queued again: {retried}");
    wait_for_log(&log, "the second run's end", |l| l.iter().any(|l| l == "end m1"));
    server.bootstrap_until("c1", "no failure", |b| b["pending"][0].get("engineError").is_none());
    // A retry now runs nothing more.
    server.send(&send);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(log_lines(&log), ["start m1", "failed m1", "start m1", "end m1"]);
}

/// #22, item 1: the server killed (SIGKILL) at random moments around sends; after the last start,
/// every accepted message has been run to its end at least once.
#[test]
fn no_accepted_send_is_left_unrun_however_the_server_is_killed() {
    use rand::{Rng, SeedableRng};
    let env = Env::new();
    let log = env.dir.path().join("runs.log");
    let engine = logging_engine(&env, &log, "0.2", false);
    let mut rng = rand::rngs::StdRng::seed_from_u64(22);
    let mut n = 0;
    for round in 0..12 {
        let mut server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "30"]);
        let sends = rng.random_range(1..5);
        for _ in 0..sends {
            n += 1;
            let chat = format!("c{}", n % 3);
            let _ = server
                .client
                .post(format!("{}/api/chat/send", server.base))
                .json(&json!({"clientMessageId": format!("m{n}"), "chatId": chat, "text": format!("send {n}")}))
                .send();
            std::thread::sleep(Duration::from_millis(rng.random_range(0..150)));
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(0..400)));
        server.child.kill().unwrap();
        let _ = server.child.wait();
        eprintln!("round {round}: killed after {n} sends");
    }
    let server = Server::start(&env, &["--engine", &engine, "--engine-timeout-secs", "30"]);
    let conn =
        Connection::open_with_flags(env.data.join("accepted.sqlite3"), OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let accepted: Vec<String> = conn
        .prepare("SELECT client_message_id FROM acceptances ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(accepted.len() > 12, "sends were accepted: {accepted:?}");
    let lines = wait_for_log(&log, "every accepted send run to its end", |l| {
        accepted.iter().all(|id| l.iter().any(|line| *line == format!("end {id}")))
    });
    let ended: std::collections::HashSet<&str> = lines.iter().filter_map(|l| l.strip_prefix("end ")).collect();
    assert!(accepted.iter().all(|id| ended.contains(id.as_str())));
    drop(server);
}
