//! The HTTP API end to end: the real binary serving on 127.0.0.1:0 over the real corpus and generated
//! trees, read back with a real HTTP client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::util::server::{open_events, read_event, read_frame};
use crate::util::{Env, Server, b64, fake_png, image_block, user_line};

/// A temporary tree with the real corpus in it, or `None` (the test skips) where it is absent.
fn corpus_env() -> Option<(Env, std::path::PathBuf)> {
    let real = crate::util::corpus("real")?;
    let env = Env::new();
    env.copy_corpus(&real);
    Some((env, real))
}

/// Every page of a session's history, oldest first, following `before` from the newest page.
fn all_pages(server: &Server, session: &str, limit: u32) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut path = format!("/api/sessions/{session}/history?limit={limit}");
    loop {
        let page = server.json(&path);
        let before = page["before"].as_i64();
        pages.push(page);
        match before {
            Some(b) => path = format!("/api/sessions/{session}/history?limit={limit}&before={b}"),
            None => break,
        }
    }
    pages.reverse();
    pages
}

fn image_blocks(entry: &Value) -> Vec<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                if matches!(m.get("type").and_then(Value::as_str), Some("image" | "image_url" | "input_image")) {
                    out.push(v.clone());
                }
                m.values().for_each(|c| walk(c, out));
            }
            Value::Array(items) => items.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(content) = entry.get("message").and_then(|m| m.get("content")) {
        walk(content, &mut out);
    }
    out
}

#[test]
fn every_listed_image_is_fetched_byte_exact_and_every_page_is_reached_once() {
    let Some((env, real)) = corpus_env() else { return };
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(13);
    let manifest: Value = serde_json::from_slice(&std::fs::read(real.join("MANIFEST.json")).unwrap()).unwrap();
    let expected: Vec<String> = manifest
        .as_object()
        .unwrap()
        .values()
        .flat_map(|f| f["images"].as_array().unwrap().iter().map(|i| i["sha256"].as_str().unwrap().to_owned()))
        .collect();

    let sessions = server.json("/api/sessions?limit=500");
    let mut fetched = Vec::new();
    let mut failed = 0;
    for session in sessions["sessions"].as_array().unwrap() {
        let id = session["id"].as_str().unwrap();
        let encoded: String = id
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let pages = all_pages(&server, &encoded, 50);
        let entries: Vec<&Value> = pages.iter().flat_map(|p| p["entries"].as_array().unwrap()).collect();
        let orders: Vec<(String, i64, i64, i64)> = entries
            .iter()
            .map(|e| {
                let o = &e["order"];
                (
                    o[0].as_str().unwrap().to_owned(),
                    o[1].as_i64().unwrap(),
                    o[2].as_i64().unwrap(),
                    e["cursor"].as_i64().unwrap(),
                )
            })
            .collect();
        assert!(orders.windows(2).all(|w| w[0] < w[1]), "{id}: pages in conversation order");
        let mut cursors: Vec<i64> = entries.iter().map(|e| e["cursor"].as_i64().unwrap()).collect();
        let all = cursors.len();
        cursors.sort();
        cursors.dedup();
        assert_eq!(cursors.len(), all, "{id}: no entry twice");
        for entry in pages.iter().flat_map(|p| p["entries"].as_array().unwrap()) {
            let Some(stored) = entry.get("entry") else { continue };
            assert!(!stored.to_string().contains("STRIPPED_MEDIA_MARKER"));
            for block in image_blocks(stored) {
                match block.get("url").and_then(Value::as_str) {
                    Some(url) if block.get("ref").is_some() => {
                        let res = server.get(url);
                        assert_eq!(res.status(), StatusCode::OK);
                        assert_eq!(res.headers()["content-type"], block["mimeType"].as_str().unwrap());
                        let bytes = res.bytes().unwrap();
                        assert_eq!(bytes.len() as u64, block["bytes"].as_u64().unwrap());
                        fetched.push(format!("{:x}", Sha256::digest(&bytes)));
                    }
                    _ => {
                        assert_eq!(block["failed"], true);
                        assert_eq!(block["placeholder"], "[image not displayed]");
                        failed += 1;
                    }
                }
            }
        }
    }
    fetched.sort();
    let mut want = expected.clone();
    want.sort();
    assert_eq!(fetched, want, "every manifest image, byte-exact, once");
    assert_eq!(failed, 1, "the breadth fixture's trimmed image is a failed upload");

    // The long session: 1,881 lines, reached page by page with `before`, none twice, none missed.
    let pages = all_pages(&server, "fa812bfe-b295-4cca-9c2f-fdf01028cb46", 100);
    let count: usize = pages.iter().map(|p| p["entries"].as_array().unwrap().len()).sum();
    let conn = env.conn();
    let want: i64 = conn
        .query_row("SELECT count(*) FROM entries WHERE session_id = 'fa812bfe-b295-4cca-9c2f-fdf01028cb46' AND is_sidechain = 0", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count as i64, want);
    assert!(pages.len() > 10);
}

#[test]
fn every_answer_is_nosniff_and_a_non_image_payload_is_sandboxed() {
    // (#22, the smaller items.) JSON answers, errors included, carry nosniff; a payload served as an
    // attachment carries `Content-Security-Policy: sandbox`, a photo does not.
    let env = Env::new();
    let mut pdf = b"%PDF-1.4 ".to_vec();
    pdf.extend(fake_png(4, 300));
    let content = format!(
        r#"[{},{{"type":"document","source":{{"type":"base64","media_type":"application/pdf","data":"{}"}}}}]"#,
        image_block("image/png", &b64(&fake_png(3, 5000))),
        b64(&pdf)
    );
    env.write("p/s.jsonl", user_line("s", "u1", &content, "") + "\n");
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    for path in [
        "/api/sessions",
        "/api/sessions/s/history",
        "/api/status",
        "/api/info",
        "/api/sessions/nope/history",
        "/api/nowhere",
    ] {
        let res = server.get(path);
        assert_eq!(res.headers().get("x-content-type-options").map(|v| v.to_str().unwrap()), Some("nosniff"), "{path}");
    }
    let photo = server.get("/api/session-media/s/u1/0");
    assert_eq!(photo.status(), StatusCode::OK);
    assert!(photo.headers().get("content-security-policy").is_none(), "a photo is shown inline");
    let history = server.json("/api/sessions/s/history");
    let url =
        history["entries"][0]["entry"]["message"]["content"][1]["source"]["mediaUrl"].as_str().unwrap().to_owned();
    let res = server.get(&url);
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-security-policy"], "sandbox");
    assert!(res.headers()["content-disposition"].to_str().unwrap().starts_with("attachment;"));
}

#[test]
fn media_headers_etag_and_failed_uploads() {
    let env = Env::new();
    let photo = fake_png(3, 5000);
    let mut pdf = b"%PDF-1.4 ".to_vec();
    pdf.extend(fake_png(4, 300));
    let content = format!(
        r#"[{},{},{{"type":"document","source":{{"type":"base64","media_type":"application/pdf","data":"{}"}}}}]"#,
        image_block("image/png", &b64(&photo)),
        image_block("image/png", ""),
        b64(&pdf)
    );
    env.write("p/s.jsonl", user_line("s", "u1", &content, "") + "\n");
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let res = server.get("/api/session-media/s/u1/0");
    assert_eq!(res.status(), StatusCode::OK);
    let h = res.headers().clone();
    assert_eq!(h["content-type"], "image/png");
    assert_eq!(h["content-length"], photo.len().to_string().as_str());
    assert_eq!(h["cache-control"], "private, max-age=31536000, immutable");
    assert_eq!(h["x-content-type-options"], "nosniff");
    let etag = h["etag"].to_str().unwrap().to_owned();
    assert_eq!(etag, format!("\"{}\"", blake3::hash(&photo).to_hex()));
    assert_eq!(res.bytes().unwrap().as_ref(), &photo[..]);
    let again = server
        .client
        .get(format!("{}/api/session-media/s/u1/0", server.base))
        .header("If-None-Match", &etag)
        .send()
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"], etag.as_str());
    // The failed upload: no ref, and its route is a 404 that says why.
    let failed = server.get("/api/session-media/s/u1/1");
    assert_eq!(failed.status(), StatusCode::NOT_FOUND);
    assert_eq!(failed.json::<Value>().unwrap()["error"]["code"], "failed-upload");
    // The PDF: by hash, as an attachment.
    let history = server.json("/api/sessions/s/history");
    let doc = &history["entries"][0]["entry"]["message"]["content"][2]["source"];
    let url = doc["mediaUrl"].as_str().unwrap();
    let res = server.get(url);
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    assert!(res.headers()["content-disposition"].to_str().unwrap().starts_with("attachment;"));
    assert_eq!(res.bytes().unwrap().as_ref(), &pdf[..]);
}

#[test]
fn hostile_requests_get_a_4xx_and_the_server_keeps_serving() {
    let env = Env::new();
    env.write(
        "p/s.jsonl",
        user_line("s", "u1", &format!("[{}]", image_block("image/png", &b64(&fake_png(1, 100)))), "") + "\n",
    );
    let secret = env.dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-BYTES").unwrap();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let long = "a".repeat(5000);
    let secret_path = secret.to_str().unwrap().to_owned();
    let hostile = [
        "/api/session-media/../../etc/passwd".to_owned(),
        "/api/session-media/s/u1/..%2f..%2f..%2fetc%2fpasswd".to_owned(),
        "/api/session-media/%2e%2e/%2e%2e/0".to_owned(),
        "/api/session-media/s%2Fu1/u1/0".to_owned(),
        "/api/session-media/s/u1%00/0".to_owned(),
        format!("/api/session-media/s/{}/0", secret_path.replace('/', "%2F")),
        format!("/api/media/{}", secret_path.replace('/', "%2F")),
        format!("/api/session-media/{long}/{long}/0"),
        "/api/session-media/s/u1/-1".to_owned(),
        "/api/session-media/s/u1/99999999999999999999".to_owned(),
        "/api/session-media/s/u1/4294967295".to_owned(),
        "/api/session-media/s/u1/1e3".to_owned(),
        "/api/media/not-hex".to_owned(),
        format!("/api/media/{}", "g".repeat(64)),
        format!("/api/media/{}", "0".repeat(64)),
        "/api/search?q=%3F%3F%20%21%21".to_owned(),
        "/api/search?q=-photo".to_owned(),
        "/api/search?q=agent%3Anosuch%20x".to_owned(),
        "/api/search?q=x&sort=sideways".to_owned(),
        "/api/search?q=x&group=entry".to_owned(),
        "/api/search?q=col%3Avalue".to_owned(),
        "/api/search?q=".to_owned(),
        "/api/search".to_owned(),
        "/api/sessions?unknown=1".to_owned(),
        format!("/api/sessions?q={}", "x".repeat(10_000)),
        "/api/sessions?limit=0".to_owned(),
        "/api/sessions?limit=-5".to_owned(),
        "/api/sessions?cursor=garbage".to_owned(),
        "/api/sessions/s/history?before=-1".to_owned(),
        "/api/sessions/s/history?before=1&after=2".to_owned(),
        "/api/sessions/s/history?limit=100000".to_owned(),
        "/api/sessions/nope/history".to_owned(),
        "/api/events".to_owned(),
        "/api/nothing-here".to_owned(),
        "/etc/passwd".to_owned(),
    ];
    for path in &hostile {
        let res = server.get(path);
        let status = res.status();
        let body = res.text().unwrap();
        assert!(status.is_client_error(), "{path}: {status} {body}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{path}: not a JSON error: {body}"));
        assert!(error["error"]["code"].is_string() && error["error"]["message"].is_string(), "{path}: {body}");
        assert!(!body.contains("TOP-SECRET") && !body.contains("root:"), "{path} leaked bytes");
    }
    // Bodies: none of these routes takes one; a 64 MB body, malformed JSON, no Content-Length.
    let big = vec![b'x'; 64 << 20];
    for (method, body) in
        [("POST", big.clone()), ("POST", b"{not json".to_vec()), ("PUT", b"{}".to_vec()), ("DELETE", Vec::new())]
    {
        let res = server
            .client
            .request(method.parse().unwrap(), format!("{}/api/sessions", server.base))
            .header("content-type", "application/json")
            .body(body)
            .send();
        match res {
            Ok(res) => assert!(res.status().is_client_error(), "{method}: {}", res.status()),
            // The server may close the connection instead of reading 64 MB: also a refusal.
            Err(e) => assert!(e.is_request() || e.is_body() || e.is_connect(), "{method}: {e}"),
        }
    }
    let mut raw = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    raw.write_all(
        b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    )
    .unwrap();
    let mut head = [0u8; 12];
    raw.read_exact(&mut head).unwrap();
    assert!(head.starts_with(b"HTTP/1.1 4"), "{}", String::from_utf8_lossy(&head));
    // Still serving, and still right.
    assert_eq!(server.get("/api/session-media/s/u1/0").bytes().unwrap().as_ref(), &fake_png(1, 100)[..]);
}

#[test]
fn a_transcript_rewritten_under_the_server_answers_409_then_resolves() {
    let env = Env::new();
    let line =
        |seed| user_line("s", "u1", &format!("[{}]", image_block("image/png", &b64(&fake_png(seed, 3000)))), "") + "\n";
    env.write("p/s.jsonl", line(1));
    // Polling with a long interval: only the server's own 409 queues the file for re-indexing.
    let server = Server::start(&env, &["--poll", "--poll-ms", "600000", "--rescan-secs", "600"]);
    server.wait_for_sessions(1);
    // Same layout, another photo of the same size: the recorded offset now holds other bytes.
    env.write("p/s.jsonl", line(2));
    let res = server.get("/api/session-media/s/u1/0");
    assert_eq!(res.status(), StatusCode::CONFLICT);
    assert_eq!(res.json::<Value>().unwrap()["error"]["code"], "changed");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let res = server.get("/api/session-media/s/u1/0");
        if res.status() == StatusCode::OK {
            assert_eq!(res.bytes().unwrap().as_ref(), &fake_png(2, 3000)[..]);
            break;
        }
        assert_eq!(res.status(), StatusCode::CONFLICT);
        assert!(Instant::now() < deadline, "never re-indexed");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A gone transcript's photo: 410.
    std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = server.get("/api/session-media/s/u1/0").status();
        if status == StatusCode::GONE {
            break;
        }
        assert!(Instant::now() < deadline, "still {status}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_token_guards_every_api_route_and_is_required_beyond_loopback() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"hello\"", "") + "\n");
    let server = Server::start(&env, &["--token", "sekrit-sekrit-sekrit"]);
    // Every /api route, known or not, answers 401 before anything else.
    for path in ["/api/sessions", "/api/openapi.json", "/api/search?q=hello", "/api/sessions/s/history", "/api/media/x"]
    {
        assert_eq!(server.get(path).status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let url = format!("{}/api/sessions", server.base);
    assert_eq!(server.client.get(&url).bearer_auth("wrong").send().unwrap().status(), StatusCode::UNAUTHORIZED);
    assert_eq!(server.client.get(&url).bearer_auth("sekrit-sekrit-sekrit").send().unwrap().status(), StatusCode::OK);
    let with_cookie = server.client.get(&url).header("cookie", "scrollback_token=sekrit-sekrit-sekrit").send().unwrap();
    assert_eq!(with_cookie.status(), StatusCode::OK);
    drop(server);

    let out = env.run(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without --token"));
    // A token of only white space is no token.
    let out = env.run(&["serve", "--listen", "0.0.0.0:0", "--token", "   "]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without --token"));
}

#[test]
fn events_arrive_over_the_websocket_after_each_commit() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"first\"", "") + "\n");
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let mut ws = open_events(&server.base);
    env.append("p/s.jsonl", user_line("s", "u2", "\"second\"", "") + "\n");
    let event = read_event(&mut ws);
    assert_eq!(event["type"], "entries-appended");
    assert_eq!(event["sessionId"], "s");
    assert_eq!((event["fromLine"].as_u64(), event["toLine"].as_u64()), (Some(2), Some(2)));
    // The client's catch-up call after the event.
    let first = server.json("/api/sessions/s/history?limit=1");
    let after = first["entries"][0]["cursor"].as_i64().unwrap() - 1;
    let caught_up = server.json(&format!("/api/sessions/s/history?after={after}"));
    assert_eq!(caught_up["entries"][0]["uuid"], "u2");
}

#[test]
fn every_documented_route_answers() {
    // Each path and method of the OpenAPI document is called on the demo, with real ids: a documented
    // route the router does not serve answers "no such route" and fails here.
    let env = Env::new();
    let server = Server::start(&env, &["--demo"]);
    server.wait_for_sessions(2);
    let doc = server.json("/api/openapi.json");
    assert_eq!(doc["openapi"], "3.0.3");
    let session = scrollback::demo::PHOTO_SESSION;
    let page = server.json(&format!("/api/sessions/{session}/history"));
    let photo = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| image_blocks(&e["entry"]))
        .find(|b| b.get("ref").is_some());
    let photo = photo.expect("the demo has a photo");
    let reference = photo["ref"].as_str().unwrap();
    let hash = {
        let bytes = server.get(photo["url"].as_str().unwrap()).bytes().unwrap();
        blake3::hash(&bytes).to_hex().to_string()
    };
    let parts: Vec<&str> = reference.split('/').collect();
    let cursor = page["entries"][0]["cursor"].to_string();
    let values = [
        ("cursor", cursor.as_str()),
        ("sessionId", parts[0]),
        ("entryUuid", parts[1]),
        ("ordinal", parts[2]),
        ("blake3", &hash),
        ("chatId", "doc-example"),
    ];
    let mut called = 0;
    // Every operation, the DELETEs (which forget the demo's session) last.
    let mut operations: Vec<(&String, &String, &Value)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(template, methods)| methods.as_object().unwrap().iter().map(move |(m, op)| (template, m, op)))
        .collect();
    operations.sort_by_key(|(_, method, _)| *method == "delete");
    for (template, method, operation) in operations {
        let mut path = template.clone();
        for (name, value) in values {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        assert!(!path.contains('{'), "{template}: a path parameter this test has no value for");
        let required: Vec<&str> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query" && p["required"] == true)
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        if !required.is_empty() {
            let query: Vec<String> = required.iter().map(|name| format!("{name}=layout")).collect();
            path = format!("{path}?{}", query.join("&"));
        }
        let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let mut request = server.client.request(method.clone(), format!("{}{path}", server.base));
        if let Some(example) = operation["requestBody"]["content"]["application/json"].get("example") {
            request = request.json(example);
        }
        let res = request.send().unwrap();
        let status = res.status();
        let body: Value = res.json().unwrap_or(Value::Null);
        let documented = operation["responses"].as_object().unwrap();
        assert!(
            documented.contains_key(status.as_str()),
            "{method} {path}: {status} is not among the documented responses {:?}: {body}",
            documented.keys().collect::<Vec<_>>()
        );
        assert_ne!(body["error"]["message"], "no such route", "{method} {path} is documented but not routed");
        // A WebSocket route answers a plain request with its documented 400; every other
        // route answers the demo's real ids with a 200.
        if template != "/api/events" {
            assert_eq!(status, StatusCode::OK, "{method} {path}: {body}");
        }
        called += 1;
    }
    assert!(called >= 13, "only {called} routes are documented");
}

#[test]
fn a_large_payload_changed_while_streaming_ends_the_response_with_an_error() {
    // Photos over 16 MiB are checked in a first pass and then streamed: a change between the two
    // passes must cut the response short (the client sees fewer bytes than Content-Length), never
    // end it cleanly with wrong bytes.
    let env = Env::new();
    let photo = fake_png(77, 40 << 20);
    let data = b64(&photo);
    let line = user_line("big", "u", &format!("[{}]", image_block("image/png", &data)), "") + "\n";
    let path = env.write("p/big.jsonl", &line);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);

    let mut stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(stream, "GET /api/session-media/big/u/0 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut content_length = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        if header == "\r\n" {
            break;
        }
        if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
            content_length = Some(v.trim().parse::<usize>().unwrap());
        }
        assert!(!header.is_empty(), "the server closed before its headers ended");
    }
    assert_eq!(content_length, Some(photo.len()));
    let mut body = vec![0u8; 1 << 20];
    reader.read_exact(&mut body).unwrap();

    // One base64 character near the payload's end becomes another: still base64, other bytes.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = line.find(&data).unwrap() + data.len() - 4096;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(&bytes).unwrap();

    let mut rest = Vec::new();
    let end = reader.read_to_end(&mut rest);
    body.extend_from_slice(&rest);
    assert!(
        end.is_err() || body.len() < photo.len(),
        "the response ended cleanly with all {} bytes although the payload changed",
        body.len()
    );
    assert_eq!(&body[..1 << 20], &photo[..1 << 20], "what was sent before the change is the photo");
}

#[test]
fn without_a_token_only_loopback_host_names_are_answered() {
    // DNS rebinding: a page on evil.example points its name at 127.0.0.1 and reads the API.
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"private words\"", "") + "\n");
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let port = server.base.rsplit(':').next().unwrap();
    let status = |host: &str, path: &str| -> u16 {
        let mut stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    for path in ["/api/sessions", "/api/sessions/s/history", "/", "/web/app.js"] {
        assert_eq!(status(&format!("evil.example:{port}"), path), 403, "{path} for a foreign name");
        assert_eq!(status(&format!("localhost:{port}"), path), 200, "{path} for localhost");
        assert_eq!(status(&format!("127.0.0.1:{port}"), path), 200, "{path} for 127.0.0.1");
    }
    // With a token the Host check holds too (#22, item 8): a rebinding page cannot even guess.
    let other = Env::new();
    let guarded = Server::start(&other, &["--token", "t0ken-t0ken-t0ken", "--allow-host", "Scrollback.LAN"]);
    let ask = |host: &str, token: &str| {
        guarded
            .client
            .get(format!("{}/api/sessions", guarded.base))
            .header("host", host)
            .bearer_auth(token)
            .send()
            .unwrap()
            .status()
    };
    assert_eq!(ask("evil.example", "t0ken-t0ken-t0ken"), StatusCode::FORBIDDEN, "a foreign name, even with the token");
    assert_eq!(ask(&format!("evil.example:{port}"), "wrong"), StatusCode::FORBIDDEN);
    assert_eq!(ask(&format!("scrollback.lan:{port}"), "t0ken-t0ken-t0ken"), StatusCode::OK, "--allow-host");
    assert_eq!(
        ask(&format!("192.0.2.7:{port}"), "t0ken-t0ken-t0ken"),
        StatusCode::OK,
        "an IP address cannot be rebound"
    );
    assert_eq!(ask(&format!("[2001:db8::1]:{port}"), "t0ken-t0ken-t0ken"), StatusCode::OK);
}

/// #22, item 8: a token of fewer than 16 characters is refused; wrong tokens are limited (10 a
/// minute, then 429 with Retry-After for every token, the right one too, so a guess learns nothing).
#[test]
fn tokens_are_long_and_guesses_are_limited() {
    let env = Env::new();
    for short in ["sesame", "fifteen-chars15"] {
        let out = env.run(&["serve", "--listen", "127.0.0.1:0", "--token", short]);
        assert_eq!(out.status.code(), Some(2), "{short}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16 characters"), "{short}");
    }
    let token = "sixteen-chars-16";
    let server = Server::start(&env, &["--token", token]);
    let login = |t: &str| {
        server
            .client
            .post(format!("{}/api/login", server.base))
            .json(&serde_json::json!({ "token": t }))
            .send()
            .unwrap()
    };
    assert_eq!(login(token).status(), StatusCode::OK);
    let sessions = |t: &str| server.client.get(format!("{}/api/sessions", server.base)).bearer_auth(t).send().unwrap();
    for i in 0..10 {
        let res = if i % 2 == 0 { login(&format!("guess-{i}")) } else { sessions(&format!("guess-{i}")) };
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "guess {i}");
    }
    for res in [login("guess-10"), login(token), sessions(token)] {
        assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "Retry-After {wait}");
        let body: Value = res.json().unwrap();
        assert_eq!(body["error"]["code"], "too-many-attempts", "{body}");
    }
    // No token presented is no guess: still a plain 401.
    assert_eq!(server.get("/api/sessions").status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn a_fifo_in_place_of_a_transcript_is_answered_at_once() {
    let env = Env::new();
    let photo = fake_png(5, 30_000);
    let line = user_line("s", "u", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n";
    let path = env.write("p/s.jsonl", &line);
    // The writer does not look again during the test: only the media request meets the FIFO.
    let server = Server::start(&env, &["--poll", "--poll-ms", "600000", "--rescan-secs", "3600"]);
    server.wait_for_sessions(1);
    std::fs::remove_file(&path).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
    let client = Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let res = client.get(format!("{}/api/session-media/s/u/0", server.base)).send().expect("an answer, not a wait");
    assert_eq!(res.status(), StatusCode::CONFLICT);
    let body = res.text().unwrap();
    assert!(!body.contains(env.dir.path().to_str().unwrap()), "no absolute path in the answer: {body}");
    assert_eq!(server.get("/api/sessions/s/history").status(), StatusCode::OK, "the server keeps serving");
}

#[test]
fn a_photo_edited_in_the_middle_of_its_file_is_reindexed_not_409_forever() {
    // The edit is neither in the first 4 KiB nor in the 256 bytes before the checkpoint: only the
    // media reader's verification sees it, and that must force a re-index from the start.
    let env = Env::new();
    let filler: String =
        (0..40).map(|i| user_line("s", &format!("f{i}"), "\"some words before the photo\"", "") + "\n").collect();
    let photo = fake_png(6, 60_000);
    let data = b64(&photo);
    let photo_line = user_line("s", "u", &format!("[{}]", image_block("image/png", &data)), "") + "\n";
    let after: String = (0..10).map(|i| user_line("s", &format!("a{i}"), "\"and some after it\"", "") + "\n").collect();
    let body = format!("{filler}{photo_line}{after}");
    let path = env.write("p/s.jsonl", &body);
    let server = Server::start(&env, &["--poll", "--poll-ms", "600000", "--rescan-secs", "3600"]);
    server.wait_for_sessions(1);
    assert_eq!(server.get("/api/session-media/s/u/0").bytes().unwrap().as_ref(), photo.as_slice());

    let mut bytes = body.into_bytes();
    let at = filler.len() + photo_line.find(&data).unwrap() + data.len() / 2;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(&bytes).unwrap();
    let edited = {
        use base64::Engine;
        let text = String::from_utf8(bytes.clone()).unwrap();
        let start = filler.len() + photo_line.find(&data).unwrap();
        base64::engine::general_purpose::STANDARD.decode(&text[start..start + data.len()]).unwrap()
    };
    // The cache holds the verified old bytes; a new server starts cold, so the request reads the file.
    drop(server);
    let server = Server::start(&env, &["--poll", "--poll-ms", "600000", "--rescan-secs", "3600"]);
    server.wait_for_sessions(1);
    let res = server.get("/api/session-media/s/u/0");
    assert_eq!(res.status(), StatusCode::CONFLICT);
    assert!(!res.text().unwrap().contains(env.dir.path().to_str().unwrap()), "no path in the answer");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let res = server.get("/api/session-media/s/u/0");
        if res.status() == StatusCode::OK {
            assert_eq!(res.bytes().unwrap().as_ref(), edited.as_slice(), "the edited photo, as it now is");
            break;
        }
        assert!(Instant::now() < deadline, "still {} after the re-index should have run", res.status());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn costly_searches_are_bounded_and_never_starve_the_other_routes() {
    let env = Env::new();
    // Many distinct words starting with each letter, so that a prefix query expands widely.
    let mut body = String::new();
    for i in 0..3000 {
        let words: Vec<String> =
            (0..12).map(|k| format!("{}{:x}word", (b'a' + ((i + k) % 26) as u8) as char, i * 13 + k)).collect();
        body += &(user_line("s", &format!("u{i}"), &serde_json::to_string(&words.join(" ")).unwrap(), "") + "\n");
    }
    env.write("p/s.jsonl", &body);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    // Queries over the language's bounds are cut to them, and say so: never an error.
    let many_prefixes = vec!["a*"; 300].join(" ");
    for q in [many_prefixes.as_str(), &vec!["word"; 40].join(" ")] {
        let res = server.get(&format!("/api/search?q={}", q.replace(' ', "%20").replace('*', "%2A")));
        assert_eq!(res.status(), StatusCode::OK, "{q}");
        let answer: Value = res.json().unwrap();
        assert!(answer["query"]["notes"][0].as_str().unwrap().contains("first 32 words"), "{answer}");
        let res = server.get(&format!("/api/sessions?q={}", q.replace(' ', "%20").replace('*', "%2A")));
        assert_eq!(res.status(), StatusCode::OK, "sessions?q= {q}");
    }
    // A prefix stands for at most 64 of the index's words (FTS5 would merge the lists of every
    // word it begins in one step, past the step budget), and the answer says so.
    let costly = "/api/search?q=a%2A%20b%2A%20c%2A%20d%2A&limit=500";
    let answer = server.json(costly);
    let notes = answer["query"]["notes"].to_string();
    assert!(notes.contains("a* stands for more than 64 words") && notes.contains("d* stands for"), "{notes}");
    // Sixteen allowed but costly searches at once: history and sessions are answered meanwhile.
    std::thread::scope(|scope| {
        let searches: Vec<_> = (0..16).map(|_| scope.spawn(|| server.get(costly).status())).collect();
        for _ in 0..5 {
            assert_eq!(server.get("/api/sessions").status(), StatusCode::OK);
            assert_eq!(server.get("/api/sessions/s/history?limit=5").status(), StatusCode::OK);
        }
        for s in searches {
            let status = s.join().unwrap();
            assert!(status == StatusCode::OK || status == StatusCode::BAD_REQUEST, "{status}");
        }
    });
}

/// An entry of 400,000 matches (a pasted log of `"the " * 400000`): its snippet is made in one
/// bounded pass, not by FTS5's `snippet()`, whose cost is the square of the matches (hours here;
/// the client gives up after 30 s). Whole and grouped, the search answers with a marked snippet.
#[test]
fn an_entry_of_countless_matches_is_searched_with_a_bounded_snippet() {
    let env = Env::new();
    let huge = serde_json::to_string(&"the ".repeat(400_000)).unwrap();
    env.write(
        "p/s.jsonl",
        format!("{}\n{}\n", user_line("s", "u1", &huge, ""), user_line("s", "u2", "\"the cat on the mat\"", "")),
    );
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let hits = server.json("/api/search?q=the%20the&group=none");
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    for hit in hits {
        let snippet = hit["snippet"].as_str().unwrap();
        assert!(snippet.contains("<mark>the</mark>") && snippet.len() < 1000, "{snippet}");
    }
    let grouped = server.json("/api/search?q=the%20the");
    assert_eq!(grouped["sessions"][0]["hits"], 2, "{grouped}");
}

#[test]
fn a_dead_writer_is_loud_and_serve_exits_with_an_error() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"first\"", "") + "\n");
    // The writer panics at its first file event (fault injection: `FAULT_WRITER_PANIC`).
    let mut server = Server::start_with(&env, &[], &[(scrollback::ingest::tail::FAULT_WRITER_PANIC, "1")]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.json("/api/status")["entries"] != 1 {
        assert!(Instant::now() < deadline, "the startup catch-up never finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    let now = server.json("/api/status");
    assert_eq!(now["writer"]["state"], "running");
    assert_eq!((now["watcher"].as_str(), now["transcripts"]["live"].as_i64()), (Some("notify"), Some(1)));
    let mut ws = open_events(&server.base);
    env.append("p/s.jsonl", user_line("s", "u2", "\"second\"", "") + "\n");
    // The death is announced to open pages, logged, and the process exits with an error.
    let event = read_event(&mut ws);
    assert_eq!(event["type"], "writer-failed", "{event}");
    assert!(event["error"].as_str().unwrap().contains("injected fault"), "{event}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(code) = server.child.try_wait().unwrap() {
            break code;
        }
        assert!(Instant::now() < deadline, "serve kept running with a dead writer");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code.code(), Some(1), "a supervisor sees a failure");
    // (Its last lines reach the log's reader thread a moment after it exits.)
    let deadline = Instant::now() + Duration::from_secs(5);
    let said = |log: &str| log.contains("the writer died") && log.contains("the indexer died");
    while !said(&server.log.lock().unwrap()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let log = server.log.lock().unwrap().clone();
    assert!(said(&log), "{log}");
}

#[test]
fn a_damaged_index_answers_503_and_check_and_rebuild_recover_it() {
    use std::os::unix::fs::FileExt;
    let env = Env::new();
    let photo = fake_png(7, 900);
    let lines = |s: &str, n: usize| -> String {
        (0..n).map(|i| user_line(s, &format!("{s}{i}"), &format!("\"line {i} of {s}\""), "") + "\n").collect()
    };
    env.write("p/a.jsonl", lines("a", 40));
    env.write(
        "p/b.jsonl",
        lines("b", 30) + &user_line("b", "bp", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n",
    );
    env.index();
    // b's transcript is deleted: the index is the only record of its history.
    std::fs::remove_file(env.path("p/b.jsonl")).unwrap();
    env.index();
    let history = |conn: &rusqlite::Connection, s: &str| -> Vec<String> {
        let page = scrollback::read::history::history(conn, s, scrollback::read::history::Position::Newest, 500, true);
        page.unwrap().unwrap().entries.into_iter().filter_map(|e| e.columns.uuid).collect()
    };
    let (a_before, b_before) = {
        let c = env.conn();
        (history(&c, "a"), history(&c, "b"))
    };
    // Damage every page of the index history pages walk: what a bad disk does to a file.
    let db = env.data.join("index.sqlite3");
    let pages: Vec<i64> = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = c.prepare("SELECT pageno FROM dbstat WHERE name = 'entries_order'").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert!(!pages.is_empty());
    let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    for page in &pages {
        file.write_all_at(&[0xA5; 16384], (*page as u64 - 1) * 16384).unwrap();
    }
    drop(file);

    // The server answers 503 with a clear code, never a 500, and status says why.
    let server = Server::start(&env, &[]);
    let res = server.get("/api/sessions/a/history");
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = res.json().unwrap();
    assert_eq!(body["error"]["code"], "index-damaged", "{body}");
    let status = server.json("/api/status");
    assert!(status["indexDamage"].as_str().is_some_and(|d| d.contains("malformed")), "{status}");
    drop(server);

    // `check` says so and exits 1; `rebuild` keeps the old file and recovers everything readable.
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("damaged"), "{}", String::from_utf8_lossy(&out.stdout));
    let out = env.run(&["rebuild"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 gone transcript carried over"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let kept: Vec<_> = std::fs::read_dir(&env.data)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("index.sqlite3.rebuilt-") && !n.ends_with("-wal") && !n.ends_with("-shm"))
        .collect();
    assert_eq!(kept.len(), 1, "the old index is kept: {kept:?}");
    assert!(env.run(&["check"]).status.success());
    let c = env.conn();
    assert_eq!((history(&c, "a"), history(&c, "b")), (a_before, b_before), "every entry back, the gone one's too");
    let state: String = c.query_row("SELECT state FROM files WHERE path LIKE '%b.jsonl'", [], |r| r.get(0)).unwrap();
    assert_eq!(state, "gone");
    let photos: i64 = c.query_row("SELECT images FROM sessions WHERE id = 'b'", [], |r| r.get(0)).unwrap();
    assert_eq!(photos, 1, "the gone transcript's photo row is carried over");
    crate::util::check_invariants(&env.data);
}

#[test]
fn sigterm_stops_the_server_promptly_whatever_is_in_flight() {
    let env = Env::new();
    // A photo far larger than the socket buffers, requested by a client that never reads.
    let photo = fake_png(3, 30 << 20);
    env.write("p/s.jsonl", user_line("s", "big", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n");
    let mut server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let mut stalled = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    stalled.write_all(b"GET /api/session-media/s/big/0 HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    let killed = std::process::Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let code = loop {
        if let Some(code) = server.child.try_wait().unwrap() {
            break code;
        }
        assert!(asked.elapsed() < Duration::from_secs(15), "still running 15 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "{code:?}");
    let log = server.log.lock().unwrap().clone();
    assert!(log.contains("stopping"), "{log}");
    drop(stalled);
}

#[test]
fn idle_connections_are_closed_and_the_events_socket_is_kept_alive_by_pings() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"hello\"", "") + "\n");
    let server = Server::start(&env, &["--idle-secs", "1"]);
    server.wait_for_sessions(1);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let closed_within = |stream: &mut TcpStream, secs: u64| -> bool {
        stream.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).is_ok()
    };
    // A keep-alive connection that sends nothing after its first answer is closed.
    let mut kept = TcpStream::connect(&addr).unwrap();
    write!(kept, "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut reader = BufReader::new(kept.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(closed_within(&mut kept, 10), "an idle keep-alive connection is closed");
    // So is one that never sends a request.
    let mut silent = TcpStream::connect(&addr).unwrap();
    assert!(closed_within(&mut silent, 10), "a connection that sends nothing is closed");
    // The events socket is not: it is pinged, and answering keeps it open past the timeout.
    let mut events = open_events(&server.base);
    let mut pings = 0;
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(2500) {
        match read_frame(&mut events) {
            (0x89, _) => {
                pings += 1;
                events.write_all(&[0x8A, 0x80, 0, 0, 0, 0]).unwrap();
            }
            (first, _) => panic!("unexpected frame {first:#x}"),
        }
    }
    assert!(pings >= 3, "{pings} pings in 2.5 s");
    env.append("p/s.jsonl", user_line("s", "u2", "\"again\"", "") + "\n");
    assert_eq!(read_event(&mut events)["type"], "entries-appended", "still open, still live");
    // A socket whose peer stops answering is closed.
    let mut deaf = open_events(&server.base);
    deaf.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut sink = Vec::new();
    assert!(deaf.read_to_end(&mut sink).is_ok(), "a socket that never answers a ping is closed");
}

/// Opens a connection and sends `head` and the first `body` bytes of a body it never finishes.
fn stall(addr: &str, method: &str, path: &str, body: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n"
    )
    .unwrap();
    stream.write_all(body).unwrap();
    stream
}

/// What the server says on `stream` within `secs`, until it closes it: the status line, or `None` if
/// it is still open then.
fn answer_and_close(stream: &mut TcpStream, secs: u64) -> Option<String> {
    stream.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let mut all = Vec::new();
    match stream.read_to_end(&mut all) {
        Ok(_) => Some(String::from_utf8_lossy(&all).lines().next().unwrap_or("").to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Some(String::new()),
        Err(_) => None,
    }
}

#[test]
fn a_stalled_request_body_holds_no_send_slot_and_is_closed_with_408() {
    let env = Env::new();
    let server = Server::start(&env, &["--idle-secs", "2", "--engine", "true"]);
    let addr = server.base.trim_start_matches("http://").to_owned();
    // More stalled sends than there are send slots (4), each with a byte of its body.
    let mut stalled: Vec<TcpStream> = (0..6).map(|_| stall(&addr, "POST", "/api/chat/send", b"{")).collect();
    // And a stalled body on every other route that reads one.
    for (method, path) in [
        ("POST", "/api/login"),
        ("POST", "/api/chat/retire"),
        ("POST", "/api/chats/c1/session"),
        ("PUT", "/api/sessions/s1/marks"),
        ("POST", "/mcp"),
    ] {
        stalled.push(stall(&addr, method, path, b"{"));
    }
    std::thread::sleep(Duration::from_millis(300));
    // A send that comes whole is answered at once: the stalled ones hold no turn. (Before, it
    // waited behind them for as long as they stalled: forever.)
    let (tx, rx) = std::sync::mpsc::channel();
    let base = server.base.clone();
    std::thread::spawn(move || {
        let answer = Client::new()
            .post(format!("{base}/api/chat/send"))
            .json(&serde_json::json!({"clientMessageId": "m1", "chatId": "c1", "text": "hello"}))
            .send()
            .map(|r| r.status());
        let _ = tx.send(answer);
    });
    let status = rx.recv_timeout(Duration::from_secs(20)).expect("a whole send is answered while others stall");
    assert_eq!(status.unwrap(), StatusCode::OK);
    // Every stalled body is answered 408 and its connection closed, within its allowance (2 s and
    // a moment for the byte), not left open.
    for (i, s) in stalled.iter_mut().enumerate() {
        let line = answer_and_close(s, 20).unwrap_or_else(|| panic!("stalled body {i} still open after 20 s"));
        assert!(line.starts_with("HTTP/1.1 408"), "stalled body {i}: {line:?}");
    }
    // A body that keeps coming, however slowly, is not cut: 3 s of a small body, a byte at a time
    // at first (its allowance is 2 s, and each 16 KiB buys a second more; this one is small).
    let mut slow = TcpStream::connect(&addr).unwrap();
    let body = br#"{"clientMessageId": "m2", "chatId": "c1", "text": "slow"}"#;
    write!(
        slow,
        "POST /api/chat/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    slow.write_all(&body[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    slow.write_all(&body[10..]).unwrap();
    let line = answer_and_close(&mut slow, 20).expect("answered");
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
}

#[test]
fn open_connections_are_capped_and_a_closed_one_makes_room() {
    let env = Env::new();
    let server = Server::start(&env, &["--max-connections", "3", "--idle-secs", "60"]);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let ask = |stream: &mut TcpStream| {
        write!(stream, "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    };
    let status_within = |stream: &TcpStream, millis: u64| -> Option<String> {
        stream.set_read_timeout(Some(Duration::from_millis(millis))).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line),
            _ => None,
        }
    };
    // Three keep-alive connections, each answered once and then left open.
    let mut held: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    for s in &mut held {
        ask(s);
        let line = status_within(s, 10_000).expect("answered");
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    }
    // A fourth waits: the server does not take it while three are open.
    let mut fourth = TcpStream::connect(&addr).unwrap();
    ask(&mut fourth);
    assert_eq!(status_within(&fourth, 1500), None, "a fourth connection is answered past the cap of 3");
    // One closes, and the fourth is taken and answered.
    drop(held.pop());
    let line = status_within(&fourth, 10_000).expect("answered once a place is free");
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    let log = server.log.lock().unwrap().clone();
    assert!(log.contains("3 connections are open, the most at once"), "{log}");
}

#[test]
fn the_events_socket_refuses_a_large_message_from_its_client_as_it_comes() {
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"hello\"", "") + "\n");
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    // A message in 1 MiB frames, each under tungstenite's own frame limit (16 MB), which alone
    // let a client grow one message to 64 MB: the server closes the socket at the first frame's
    // header instead of holding what comes.
    let mut ws = open_events(&server.base);
    for opcode in [0x02u8, 0x00] {
        let mut head = vec![opcode, 0x80 | 127];
        head.extend_from_slice(&(1u64 << 20).to_be_bytes());
        head.extend_from_slice(&[1, 2, 3, 4]);
        if ws.write_all(&head).and_then(|()| ws.write_all(&vec![0x55u8; 1 << 20])).is_err() {
            break;
        }
    }
    ws.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    // Closed (at once, or reset, since what was sent after the header is never read), not left open.
    let closed = ws.read_to_end(&mut rest);
    let waiting =
        matches!(&closed, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut));
    assert!(!waiting, "the socket is closed, not left waiting for more of the message: {closed:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // A pong (what a browser sends) is still welcome on another socket, which stays live.
    let mut live = open_events(&server.base);
    live.write_all(&[0x8A, 0x80, 0, 0, 0, 0]).unwrap();
    env.append("p/s.jsonl", user_line("s", "u2", "\"again\"", "") + "\n");
    assert_eq!(read_event(&mut live)["type"], "entries-appended");
}

/// #22, item 12: a session id no route can take (a slash, a backslash, a dot segment) is refused
/// when indexed, and said in the log; every session listed opens, and can be deleted.
#[test]
fn nothing_is_listed_that_cannot_be_opened() {
    let env = Env::new();
    let line = |session: &str, uuid: &str| {
        serde_json::json!({"type": "user", "sessionId": session, "uuid": uuid, "timestamp": "2026-11-01T10:00:00.000Z",
                           "cwd": "/work/demo", "message": {"role": "user", "content": format!("hello from {session}")}})
        .to_string()
            + "\n"
    };
    let bad = ["../../etc/passwd", "a/b", "a\\b", "..", "."];
    let mut body = line("good-one", "u0");
    for (i, session) in bad.iter().enumerate() {
        body += &line(session, &format!("u{}", i + 1));
    }
    env.write("p/mixed.jsonl", body);
    // A transcript whose own name is no id: its lines name none.
    env.write(
        "p/back\\slash.jsonl",
        "{\"type\":\"user\",\"uuid\":\"x\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    let out = env.cmd().env("RUST_LOG", "warn").arg("index").output().unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    for session in bad {
        assert!(log.contains(&format!("session id {:?} cannot be served", session)), "{session}: {log}");
    }
    let server = Server::start(&env, &[]);
    let sessions = server.json("/api/sessions");
    let ids: Vec<&str> = sessions["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    // The refused lines stay as invalid rows of the file's own session (as a torn line does).
    assert_eq!(ids, ["good-one", "mixed"], "{sessions}");
    for id in ids {
        let res = server.get(&format!("/api/sessions/{id}/history"));
        assert_eq!(res.status(), StatusCode::OK, "{id} opens");
    }
    let res = server.client.delete(format!("{}/api/sessions/good-one", server.base)).send().unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let hits = server.json("/api/search?group=none&q=hello");
    assert_eq!(hits["hits"].as_array().unwrap().len(), 0, "nothing of the refused ids is searchable: {hits}");
}

/// A title is cut where it is made: sessions whose custom titles are 12 MB each are listed, and
/// found, in a few kilobytes.
#[test]
fn a_twelve_megabyte_title_is_listed_in_two_hundred_characters() {
    let env = Env::new();
    let title = "cache ".repeat(2_000_000);
    for n in 0..2 {
        let id = format!("7e000000-0000-4000-8000-{n:012}");
        let custom = serde_json::json!({"type": "custom-title", "customTitle": title, "sessionId": id});
        let prompt = user_line(&id, &format!("u{n}"), "\"a prompt to find\"", "");
        env.write(&format!("p/{id}.jsonl"), format!("{custom}\n{prompt}\n"));
    }
    env.index();
    let server = Server::start(&env, &[]);
    for path in ["/api/sessions", "/api/search?q=prompt"] {
        let body = server.get(path).bytes().unwrap();
        assert!(body.len() < 16_384, "{path}: {} bytes", body.len());
    }
    let list = server.json("/api/sessions");
    let titles: Vec<&str> = list["sessions"].as_array().unwrap().iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert_eq!(titles.len(), 2, "{list}");
    for listed in titles {
        assert_eq!(listed.chars().count(), scrollback::format::TITLE_MAX_CHARS);
        assert!(title.starts_with(listed));
    }
}

/// The sessions `/api/search` finds for a query, by id.
pub(crate) fn searched_sessions(server: &Server, q: &str) -> std::collections::BTreeSet<String> {
    let answer = server.json(&format!("/api/search?q={}&limit=500", crate::mcp::urlencode(q)));
    answer["sessions"].as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap().to_owned()).collect()
}

/// The sessions `/api/sessions` lists for a query, by id.
pub(crate) fn listed_sessions(server: &Server, q: &str) -> std::collections::BTreeSet<String> {
    let answer = server.json(&format!("/api/sessions?q={}&limit=500", crate::mcp::urlencode(q)));
    answer["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

/// Two sessions that talk of deploying, one of them at a later day, in another project.
pub(crate) fn deploy_sessions(env: &Env) {
    for (id, day, cwd) in [("d1a0", "2026-01-01", "/work/alpha"), ("d2b0", "2026-02-01", "/work/beta")] {
        let line = user_line(id, &format!("{id}-u"), "\"deploy the cache eviction fix\"", "")
            .replace("2026-01-01T00:00:00.000Z", &format!("{day}T10:00:00.000Z"))
            .replace("/work/demo", cwd);
        env.write(&format!("p/{id}.jsonl"), line + "\n");
    }
}

/// The queries whose sessions the session list must give as a search does: two words, and each
/// field.
pub(crate) const LISTED_QUERIES: &[&str] = &[
    "cache eviction",
    "deploy agent:codex",
    "deploy agent:claude",
    "deploy project:beta",
    "deploy session:d1",
    "deploy before:2026-01-15",
    "deploy after:2026-01-15",
    "deploy role:assistant",
    "deploy -eviction",
];

/// The session list applies every field of its query, as a search does; a NUL anywhere in a query
/// string is a 400, never a full-text engine's error.
#[test]
fn the_session_list_applies_every_field_of_its_query_as_a_search_does() {
    let env = Env::new();
    deploy_sessions(&env);
    env.index();
    let server = Server::start(&env, &[]);
    for q in LISTED_QUERIES {
        let searched = searched_sessions(&server, q);
        assert_eq!(listed_sessions(&server, q), searched, "{q}");
    }
    assert_eq!(searched_sessions(&server, "deploy before:2026-01-15"), ["d1a0".to_owned()].into());
    for path in
        ["/api/sessions?q=dep%00loy", "/api/search?q=dep%00loy", "/api/sessions?project=%00", "/api/stats?project=a%00"]
    {
        let res = server.get(path);
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
        let body: Value = res.json().unwrap();
        assert!(body["error"]["message"].as_str().unwrap().contains("NUL"), "{path}: {body}");
    }
}

#[test]
fn from_start_reads_the_oldest_page_and_pages_forward_to_the_newest() {
    // A session of 60 turns (300 entries): `from=start` is its first page, read at once, and each
    // `next` reads on to the newest entry, every entry once, in the order history gives them.
    let env = Env::new();
    let session = "10a90000-0000-4000-8000-000000000001";
    let (body, turns) = crate::util::fixtures::long::long_session(session, 60);
    env.write(&format!("p/{session}.jsonl"), body);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let everything: Vec<i64> = all_pages(&server, session, 100)
        .iter()
        .flat_map(|p| {
            p["entries"].as_array().unwrap().iter().map(|e| e["cursor"].as_i64().unwrap()).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(everything.len(), 300);
    let first = server.json(&format!("/api/sessions/{session}/history?from=start&limit=40&view=true"));
    let entries = first["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 40);
    assert_eq!(entries[0]["view"]["parts"][0]["text"], turns[0].text.as_str(), "the first prompt comes first");
    assert_eq!(first["before"], Value::Null, "nothing before the start");
    let mut read: Vec<i64> = Vec::new();
    let mut page = first;
    loop {
        read.extend(page["entries"].as_array().unwrap().iter().map(|e| e["cursor"].as_i64().unwrap()));
        match page["next"].as_i64() {
            Some(next) => page = server.json(&format!("/api/sessions/{session}/history?from={next}&limit=40")),
            None => break,
        }
    }
    assert_eq!(read, everything, "forward from the start, every entry once, to the newest");
    for bad in ["begin", "-1", "1.5", ""] {
        let res = server.get(&format!("/api/sessions/{session}/history?from={bad}"));
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "from={bad}");
        let body: Value = res.json().unwrap();
        assert_eq!(body["error"]["code"], "bad-request", "from={bad}: {body}");
    }
    let res = server.get(&format!("/api/sessions/{session}/history?from=start&before=3"));
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(server.get("/api/sessions/nope/history?from=start").status(), StatusCode::NOT_FOUND);
}

#[test]
fn the_outline_lists_every_prompt_with_its_turn_s_tool_calls_tokens_and_time() {
    let env = Env::new();
    let session = "10a90000-0000-4000-8000-000000000002";
    let (body, turns) = crate::util::fixtures::long::long_session(session, 30);
    env.write(&format!("p/{session}.jsonl"), body);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let outline = server.json(&format!("/api/sessions/{session}/outline"));
    assert_eq!(outline["sessionId"], session);
    let listed = outline["turns"].as_array().unwrap();
    assert_eq!(listed.len(), turns.len(), "one line per prompt: {outline}");
    let history = all_pages(&server, session, 100);
    let entries: Vec<&Value> = history.iter().flat_map(|p| p["entries"].as_array().unwrap()).collect();
    for (got, want) in listed.iter().zip(&turns) {
        assert_eq!(got["text"], want.text.as_str());
        assert_eq!(got["timestamp"], want.timestamp.as_str());
        assert_eq!(got["toolCalls"], want.tool_calls, "{}", want.text);
        assert_eq!(got["contextTokens"], want.context_tokens, "{}", want.text);
        assert_eq!(got["outputTokens"], want.output_tokens, "{}", want.text);
        assert_eq!(got["responses"], want.tool_calls + 1, "{}", want.text);
        // The prompt's cursor is its entry's, and the answer's the turn's last answer.
        let prompt = entries.iter().find(|e| e["cursor"] == got["cursor"]).expect("the prompt's entry");
        assert_eq!(prompt["entry"]["message"]["content"], want.text.as_str());
        let answer = entries.iter().find(|e| e["cursor"] == got["answerCursor"]).expect("the answer's entry");
        assert_eq!(answer["entry"]["message"]["content"][0]["text"], want.answer.as_str());
        let time = |v: &Value| v.as_str().unwrap().parse::<jiff::Timestamp>().unwrap();
        let took = time(&got["answeredAt"]).duration_since(time(&got["timestamp"]));
        assert_eq!(took.as_secs(), want.seconds, "{}", want.text);
    }
    let none = server.get("/api/sessions/nope/outline");
    assert_eq!(none.status(), StatusCode::NOT_FOUND);
    let refused = server.client.post(format!("{}/api/sessions/{session}/outline", server.base)).send().unwrap();
    assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
}
