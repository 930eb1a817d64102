//! Reading and taking away: `scrollback export` (HTML with its photos inline and checked, JSONL
//! byte for byte also after the transcript is deleted, `--redact` against planted secrets), the
//! history's `view` (Markdown as sanitised HTML, tool calls at a glance with an edit's diff), and a
//! person's marks (rename, pin) over HTTP, kept through a restart and a rebuild.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::util::server::Server;
use crate::util::{Env, b64, fake_png, hash_hex, image_block, user_line};

const SESSION: &str = "5e55a000-0000-4000-8000-0000000000e1";

/// A `len`-character string of letters and digits from `alphabet`, the same for the same `seed`.
fn chars(seed: u64, len: usize, alphabet: &str) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const HEX: &str = "0123456789abcdef";

/// Planted secrets, one of each kind the export must take out: (what, the secret).
fn secrets() -> Vec<(&'static str, String)> {
    vec![
        ("anthropic", format!("sk-ant-api03-{}AA", chars(1, 93, ALNUM))),
        ("openai", format!("sk-proj-{}T3BlbkFJ{}", chars(2, 74, ALNUM), chars(3, 74, ALNUM))),
        ("aws", format!("AKIA{}", chars(4, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))),
        ("github", format!("ghp_{}", chars(5, 36, ALNUM))),
        ("github fine-grained", format!("github_pat_{}", chars(6, 82, ALNUM))),
        ("gitlab", format!("glpat-{}", chars(7, 20, ALNUM))),
        (
            "slack",
            format!("xoxb-{}-{}-{}", chars(8, 12, "0123456789"), chars(9, 12, "0123456789"), chars(10, 24, ALNUM)),
        ),
        ("stripe", format!("sk_live_{}", chars(11, 30, ALNUM))),
        ("npm", format!("npm_{}", chars(12, 36, ALNUM))),
        ("huggingface", format!("hf_{}", chars(13, 34, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))),
        ("gcp", format!("AIza{}", chars(14, 35, ALNUM))),
        ("digitalocean", format!("dop_v1_{}", chars(15, 64, HEX))),
        ("perplexity", format!("pplx-{}", chars(16, 48, ALNUM))),
        ("jwt", format!("eyJ{}.eyJ{}.{}", chars(17, 30, ALNUM), chars(18, 40, ALNUM), chars(19, 30, ALNUM))),
        ("sendgrid", format!("SG.{}.{}", chars(20, 22, ALNUM), chars(21, 43, ALNUM))),
        ("url password", format!("{}Q7", chars(22, 14, ALNUM))),
        ("bearer", chars(23, 40, ALNUM)),
        ("env assignment", chars(24, 32, ALNUM)),
        ("private key", chars(25, 200, ALNUM)),
    ]
}

/// The text each secret is planted in, around it.
fn planted(what: &str, secret: &str) -> String {
    match what {
        "url password" => format!("connect with postgres://admin:{secret}@db.example.com:5432/app please"),
        "bearer" => format!("curl -s https://api.example.com -H 'Authorization: Bearer {secret}' and more"),
        "env assignment" => format!("in .env: DATABASE_PASSWORD={secret}\nthat was it"),
        "private key" => {
            format!("the key:\n-----BEGIN RSA PRIVATE KEY-----\n{secret}\n-----END RSA PRIVATE KEY-----\nend of key")
        }
        _ => format!("my {what} key is {secret} keep it safe"),
    }
}

fn assistant(uuid: &str, content: Value, ts: &str) -> String {
    json!({"parentUuid": null, "isSidechain": false, "cwd": "/work/demo", "sessionId": SESSION, "type": "assistant",
           "uuid": uuid, "timestamp": ts, "gitBranch": "feature/export",
           "message": {"role": "assistant", "content": content}})
    .to_string()
}

/// A session with Markdown, an edit, a result, two photos and every planted secret.
fn write_session(env: &Env) -> (String, Vec<Vec<u8>>) {
    let photos = vec![fake_png(1, 3000), fake_png(2, 70_000)];
    let mut lines = vec![user_line(
        SESSION,
        "u1",
        &format!(
            "[{}, {}, {{\"type\":\"text\",\"text\":\"What is in these **two** photos?\"}}]",
            image_block("image/png", &b64(&photos[0])),
            image_block("image/png", &b64(&photos[1]))
        ),
        "",
    )];
    lines.push(assistant(
        "a1",
        json!([{"type": "text", "text": "## Findings\n\n- a *harbour*\n- `boats`\n\n```rust\nfn main() {}\n```\n\n<script>alert(1)</script>"},
               {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "src/lib.rs", "old_string": "a\nb\n", "new_string": "a\nc\nd\n"}}]),
        "2026-01-01T00:00:01.000Z",
    ));
    lines.push(user_line(
        SESSION,
        "u2",
        r#"[{"type":"tool_result","tool_use_id":"t1","content":"edited src/lib.rs"}]"#,
        "",
    ));
    for (i, (what, secret)) in secrets().iter().enumerate() {
        let text = planted(what, secret);
        lines.push(user_line(SESSION, &format!("s{i}"), &serde_json::to_string(&text).unwrap(), ""));
    }
    let body = lines.join("\n") + "\n";
    env.write(&format!("p/{SESSION}.jsonl"), &body);
    (body, photos)
}

#[test]
fn html_export_holds_every_photo_byte_exact_and_renders_safely() {
    let env = Env::new();
    let (_, photos) = write_session(&env);
    env.index();
    let out = env.dir.path().join("s.html");
    let run = env.run(&["export", SESSION, "--format", "html", "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Content-Security-Policy") && html.contains("img-src data:"));
    assert!(!html.contains("<script"), "no script in the export");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "raw HTML is text");
    assert!(html.contains("<h2>Findings</h2>") && html.contains("<em>harbour</em>"), "Markdown renders");
    assert!(html.contains("code-lang\">Rust") && html.contains("hl-"), "code is highlighted");
    assert!(
        html.contains("<span class=\"tool-name\">Edit</span>") && html.contains("+2") && html.contains("diff-line del")
    );
    assert!(html.contains("branch feature/export"));
    // Every photo, inline, is the bytes that were sent.
    let mut found = Vec::new();
    for part in html.split("src=\"data:image/png;base64,").skip(1) {
        let data = &part[..part.find('"').unwrap()];
        found.push(base64::engine::general_purpose::STANDARD.decode(data).unwrap());
    }
    assert_eq!(found, photos);
    for p in &photos {
        assert!(html.contains(&format!("data-blake3=\"{}\"", hash_hex(p))));
    }
    // An unknown session is an error, and leaves no file.
    let missing = env.dir.path().join("none.html");
    let run = env.run(&["export", "no-such-session", "-o", missing.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(!missing.exists());
}

/// The body's lines as the index stores them: each photo's base64 replaced by the marker.
fn stored_lines(body: &str, photos: &[Vec<u8>]) -> Vec<String> {
    body.lines().map(|l| photos.iter().fold(l.to_owned(), |l, p| l.replace(&b64(p), "STRIPPED_MEDIA_MARKER"))).collect()
}

#[test]
fn jsonl_export_without_its_transcript_or_a_vault_writes_the_index_copy_and_says_so() {
    let env = Env::new();
    let (body, photos) = write_session(&env);
    let index = |env: &Env| assert!(env.run(&["index", "--vault", "off"]).status.success());
    index(&env);
    std::fs::remove_file(env.path(&format!("p/{SESSION}.jsonl"))).unwrap();
    index(&env);
    let out = env.dir.path().join("gone.jsonl");
    let run = env.run(&["export", SESSION, "--format", "jsonl", "-o", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    let lines = body.lines().count();
    let with_photos = body.lines().filter(|l| photos.iter().any(|p| l.contains(&b64(p)))).count();
    assert!(with_photos > 0);
    assert!(
        said.contains(&format!("{lines} lines were written from the index's copy"))
            && said.contains(&format!("{with_photos} of them hold the marker")),
        "{said}"
    );
    // Every line without a photo is byte for byte the transcript's; a photo's place holds the marker.
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().collect::<Vec<_>>(), stored_lines(&body, &photos));
}

#[test]
fn jsonl_export_writes_no_line_its_transcript_changed_under_the_index() {
    let env = Env::new();
    let (body, photos) = write_session(&env);
    env.index();
    // Changed in place, same inode and length, no index in between: a word of a text line, and a
    // character of a photo's base64.
    let path = env.path(&format!("p/{SESSION}.jsonl"));
    let word = body.find("edited src/lib.rs").unwrap();
    let photo = body.find(&b64(&photos[0])).unwrap() + 10;
    let mut bytes = body.clone().into_bytes();
    bytes[word] = b'E';
    bytes[photo] = if bytes[photo] == b'A' { b'B' } else { b'A' };
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.write_all(&bytes).unwrap();
    }
    let out = env.dir.path().join("changed.jsonl");
    let run = env.run(&["export", SESSION, "--format", "jsonl", "-o", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    assert!(said.contains("2 lines were written from the index's copy") && said.contains("1 of them hold"), "{said}");
    let written = std::fs::read_to_string(&out).unwrap();
    let stored = stored_lines(&body, &photos);
    for ((got, original), stored) in written.lines().zip(body.lines()).zip(&stored) {
        if original.contains("edited src/lib.rs") {
            assert_eq!(got, original, "the index's copy of the changed text line");
        } else if original.contains(&b64(&photos[0])) {
            assert_eq!(got, stored, "the photo that no longer matches its blake3 is not written");
        } else {
            assert_eq!(got, original);
        }
    }
    assert_eq!(written.lines().count(), body.lines().count());
}

#[test]
fn jsonl_export_of_a_transcript_replaced_under_its_name_reads_the_vault() {
    let env = Env::new();
    let (body, _) = write_session(&env);
    env.index();
    // Another file under the same name (a new inode), before the index has seen it: the vault's link
    // still holds the transcript the index read, photos and all.
    let path = env.path(&format!("p/{SESSION}.jsonl"));
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "{\"type\":\"user\",\"text\":\"something else\"}\n").unwrap();
    let out = env.dir.path().join("replaced.jsonl");
    let run = env.run(&["export", SESSION, "--format", "jsonl", "-o", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success() && !said.contains("index's copy"), "{said}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), body);
}

#[test]
fn jsonl_export_is_the_transcript_byte_for_byte_also_once_it_is_deleted() {
    let env = Env::new();
    let (body, _) = write_session(&env);
    // A torn last line is no line of the export.
    env.append(&format!("p/{SESSION}.jsonl"), b"{\"torn\":");
    env.index();
    let export = |name: &str| -> Vec<u8> {
        let out = env.dir.path().join(name);
        let run = env.run(&["export", SESSION, "--format", "jsonl", "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        std::fs::read(out).unwrap()
    };
    assert_eq!(export("a.jsonl"), body.as_bytes());
    std::fs::remove_file(env.path(&format!("p/{SESSION}.jsonl"))).unwrap();
    env.index();
    assert_eq!(export("b.jsonl"), body.as_bytes(), "from the vault");
    // Markdown, photos in a folder beside it.
    let md = env.dir.path().join("s.md");
    let run = env.run(&["export", SESSION, "--format", "md", "-o", md.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(&md).unwrap();
    let links: Vec<&str> =
        text.match_indices("](s_files/").map(|(i, _)| &text[i + 2..i + 2 + text[i + 2..].find(')').unwrap()]).collect();
    assert_eq!(links.len(), 2, "{text}");
    for link in links {
        let bytes = std::fs::read(env.dir.path().join(link)).unwrap();
        assert!(link.contains(&hash_hex(&bytes)), "{link}");
    }
    assert!(text.contains("**Edit** `src/lib.rs` (+2 −1)") && text.contains("```diff"), "{text}");
}

#[test]
fn redact_takes_out_every_planted_secret_and_keeps_the_text_around_it() {
    let env = Env::new();
    write_session(&env);
    env.index();
    for format in ["html", "md", "jsonl"] {
        let out = env.dir.path().join(format!("r.{format}"));
        let run = env.run(&["export", SESSION, "--format", format, "--redact", "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let text = std::fs::read_to_string(&out).unwrap();
        let mut kinds = BTreeMap::new();
        for (what, secret) in secrets() {
            assert!(!text.contains(&secret), "{format}: the {what} secret is still there");
            *kinds.entry(what).or_insert(0) += 1;
        }
        assert!(kinds.len() >= 15);
        for kept in ["keep it safe", "db.example.com", "that was it", "end of key", "What is in these"] {
            assert!(text.contains(kept), "{format}: {kept:?} was lost");
        }
        assert!(text.contains("[REDACTED:"), "{format}");
        if format == "jsonl" {
            for line in text.lines() {
                serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            }
        } else {
            assert!(text.contains("gitleaks"), "{format}: the rules are named at the top");
        }
    }
}

#[test]
fn views_marks_and_exports_over_http() {
    let env = Env::new();
    let (body, _) = write_session(&env);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    // The history's view: who said it, then its parts: the Markdown as sanitised HTML, the tool
    // call at a glance; the photos as the viewer loads them.
    let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true"));
    let entries = page["entries"].as_array().unwrap();
    let a1 = entries.iter().find(|e| e["uuid"] == "a1").unwrap();
    assert_eq!(a1["view"]["who"], json!({"name": "Assistant", "side": "assistant"}));
    let parts = a1["view"]["parts"].as_array().unwrap();
    assert_eq!(parts.iter().map(|p| p["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["text", "toolCall"]);
    let html = parts[0]["html"].as_str().unwrap();
    assert!(html.contains("<h2>Findings</h2>") && !html.contains("<script"), "{html}");
    assert_eq!(parts[1]["line"], "Edit src/lib.rs (+2 -1)");
    assert_eq!(parts[1]["diff"][1], json!({"op": "-", "text": "b"}));
    assert_eq!(parts[1]["input"]["file_path"], "src/lib.rs");
    let u1 = entries.iter().find(|e| e["uuid"] == "u1").unwrap();
    assert_eq!(u1["view"]["who"], json!({"name": "You", "side": "user"}));
    let photos: Vec<&Value> = u1["view"]["parts"].as_array().unwrap().iter().filter(|p| p["kind"] == "media").collect();
    assert_eq!(photos.len(), 2);
    for photo in photos {
        assert_eq!(photo["image"], true);
        assert!(photo["url"].as_str().unwrap().starts_with("/api/session-media/"), "{photo}");
    }
    assert_eq!(u1["typed"]["text"], "What is in these **two** photos?");
    assert!(a1.get("typed").is_none(), "an assistant's entry carries no typed");
    assert!(server.json(&format!("/api/sessions/{SESSION}/history"))["entries"][0].get("view").is_none());
    // Marks: a title and a pin, then given back.
    let put = |server: &Server, change: Value| {
        server
            .client
            .put(format!("{}/api/sessions/{SESSION}/marks", server.base))
            .header("content-type", "application/json")
            .body(change.to_string())
            .send()
            .unwrap()
    };
    let resp = put(&server, json!({"title": "Harbour photos", "pinned": true}));
    assert_eq!(resp.status().as_u16(), 200);
    let listed = server.json("/api/sessions");
    assert_eq!(listed["sessions"][0]["title"], "Harbour photos");
    assert_eq!(listed["sessions"][0]["pinned"], true);
    assert!(listed["sessions"][0]["transcriptTitle"].as_str().unwrap().contains("two"));
    assert_eq!(server.json("/api/sessions?pinned=true")["sessions"].as_array().unwrap().len(), 1);
    let about = server.json(&format!("/api/sessions/{SESSION}/about"));
    assert_eq!(
        (about["title"].as_str(), about["gitBranch"].as_str()),
        (Some("Harbour photos"), Some("feature/export"))
    );
    let hits = server.json("/api/search?group=none&q=harbour");
    assert_eq!(hits["hits"][0]["title"], "Harbour photos");
    // And the overview's tables of sessions, over HTTP and in the CLI.
    let overview = server.json("/api/stats");
    assert_eq!(overview["longestSessions"][0]["title"], "Harbour photos", "{overview}");
    assert_eq!(overview["recentEdits"][0]["title"], "Harbour photos", "{overview}");
    let out = env.run(&["stats", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["longestSessions"][0]["title"], "Harbour photos", "{cli}");
    // Bad marks are 4xx with the API's error; a cross-site PUT is refused.
    for (change, status) in [(json!({"pinned": "yes"}), 400), (json!({"colour": 1}), 400)] {
        assert_eq!(put(&server, change).status().as_u16(), status);
    }
    let resp = server
        .client
        .put(format!("{}/api/sessions/{SESSION}/marks", server.base))
        .header("content-type", "application/json")
        .header("origin", "https://evil.example")
        .body(r#"{"title":"pwned"}"#)
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    let resp = server
        .client
        .put(format!("{}/api/sessions/nope/marks", server.base))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    // Exports over HTTP: JSONL byte for byte, HTML with its photos; a bad format is a 400.
    let jsonl = server.get(&format!("/api/sessions/{SESSION}/export?format=jsonl"));
    assert_eq!(jsonl.status().as_u16(), 200);
    assert!(jsonl.headers()["content-disposition"].to_str().unwrap().contains(".jsonl"));
    assert_eq!(jsonl.bytes().unwrap().as_ref(), body.as_bytes());
    let html = server.get(&format!("/api/sessions/{SESSION}/export?format=html&redact=true")).text().unwrap();
    assert!(html.contains("data:image/png;base64,") && html.contains("[REDACTED:"));
    assert_eq!(server.get(&format!("/api/sessions/{SESSION}/export?format=pdf")).status().as_u16(), 400);
    // Markdown (the viewer's download): one file, its photos named rather than included.
    let md = server.get(&format!("/api/sessions/{SESSION}/export?format=markdown"));
    assert_eq!(md.status().as_u16(), 200);
    assert!(md.headers()["content-disposition"].to_str().unwrap().contains(".md\""));
    assert!(md.headers()["content-type"].to_str().unwrap().starts_with("text/markdown"));
    let md = md.text().unwrap();
    assert!(md.starts_with("# ") && md.contains("not exported]"), "{md}");
    drop(server);
    // Kept through a restart and a rebuild of the index: primary data.
    let out = env.run(&["rebuild"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let listed = server.json("/api/sessions");
    assert_eq!(
        (listed["sessions"][0]["title"].as_str(), listed["sessions"][0]["pinned"].as_bool()),
        (Some("Harbour photos"), Some(true))
    );
    assert_eq!(put(&server, json!({"title": null, "pinned": false})).status().as_u16(), 200);
    assert_eq!(server.json("/api/sessions")["sessions"][0]["pinned"], false);
    assert!(server.json("/api/sessions")["sessions"][0].get("transcriptTitle").is_none());
}

/// A session of `n` assistant messages, each `size` bytes of Markdown heavy with Rust code.
fn code_heavy_session(env: &Env, id: &str, n: usize, size: usize) -> usize {
    let line = "fn main() { let x = \"s\"; if x.len() > 2 { println!(\"{x}\"); } }\n";
    let block = line.repeat(900 / line.len());
    let mut text = String::new();
    while text.len() < size {
        text += &format!("Step {}:\n\n```rust\n{block}```\n\n", text.len());
    }
    let mut out = String::new();
    for i in 0..n {
        let entry = json!({
            "type": "assistant", "uuid": format!("c{i}"), "sessionId": id, "cwd": "/work/heavy",
            "timestamp": format!("2026-09-01T10:{:02}:{:02}.000Z", i / 60, i % 60),
            "message": {"role": "assistant", "content": [{"type": "text", "text": format!("{i} {text}")}]},
        });
        out += &format!("{entry}\n");
    }
    env.write(&format!("heavy/{id}.jsonl"), &out);
    out.len()
}

/// Eight exports of a large session at once: two are written, the others are refused at once
/// with a 503 and Retry-After, and the session list answers all the while; the exports written
/// are whole.
#[test]
fn concurrent_exports_are_bounded_and_the_list_still_answers() {
    let env = Env::new();
    let id = "5e55a000-0000-4000-8000-00000000e5e5";
    code_heavy_session(&env, id, 400, 20_000);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(9));
    // The two exports written take a while in a debug build (about 20 s here alone, more beside the
    // other tests): this is a test of the bound, not of their speed, so their client waits longer
    // than the server's usual one.
    let patient = reqwest::blocking::Client::builder().timeout(std::time::Duration::from_secs(180)).build().unwrap();
    let exports: Vec<_> = (0..8)
        .map(|_| {
            let (client, base, barrier) = (patient.clone(), server.base.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let res = client.get(format!("{base}/api/sessions/{id}/export?format=html")).send().unwrap();
                let status = res.status().as_u16();
                let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
                (status, retry, res.text().unwrap())
            })
        })
        .collect();
    barrier.wait();
    // While the exports are written, the list answers.
    let list = server.get("/api/sessions");
    assert_eq!(list.status().as_u16(), 200);
    let answers: Vec<(u16, Option<String>, String)> = exports.into_iter().map(|t| t.join().unwrap()).collect();
    let written = answers.iter().filter(|(s, _, _)| *s == 200).count();
    let refused: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 503).collect();
    assert_eq!(written + refused.len(), 8, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    assert!((1..=2).contains(&written), "{written} exports written at once");
    assert!(!refused.is_empty(), "no export was refused");
    for (_, retry, body) in &refused {
        assert!(retry.as_deref().is_some_and(|r| r.parse::<u64>().is_ok()), "503 without Retry-After: {retry:?}");
        let error: Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], "busy", "{body}");
    }
    for (_, _, body) in answers.iter().filter(|(s, _, _)| *s == 200) {
        assert!(body.trim_end().ends_with("</html>"), "an export written whole");
    }
    // Its turn given back: the next export is written.
    assert_eq!(server.get(&format!("/api/sessions/{id}/export?format=jsonl")).status().as_u16(), 200);
}

/// A page of twenty code-heavy messages of 250 kB each: its answer is bounded (each text cut,
/// highlighting within a budget), and "show all" gives each text whole.
#[test]
fn a_page_of_code_heavy_messages_is_bounded_and_show_all_gives_the_rest() {
    let env = Env::new();
    let id = "5e55a000-0000-4000-8000-00000000a6e5";
    let bytes = code_heavy_session(&env, id, 20, 250_000);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let res = server.get(&format!("/api/sessions/{id}/history?view=true&limit=20"));
    assert_eq!(res.status().as_u16(), 200);
    let body = res.bytes().unwrap();
    // The lines themselves (as the page always carried them), and at most 1 MB of view each.
    assert!(body.len() < bytes + 20 * (1 << 20), "{} bytes for {bytes} of transcript", body.len());
    let page: Value = serde_json::from_slice(&body).unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 20);
    for e in entries {
        let part = &e["view"]["parts"][0];
        assert_eq!(part["kind"], "text");
        let shown = part["text"].as_str().unwrap();
        assert!(shown.chars().count() <= 32 * 1024, "{}", shown.len());
        // The text as its format gives it (a text block's surrounding white space is not shown).
        let whole = e["entry"]["message"]["content"][0]["text"].as_str().unwrap().trim();
        assert_eq!(part["more"]["chars"], whole.chars().count());
        assert!(whole.starts_with(shown));
        let index = part["more"]["index"].as_u64().unwrap() as usize;
        let texts = server.json(&format!("/api/sessions/{id}/entries/{}/texts", e["cursor"]));
        assert_eq!(texts["texts"][index], whole, "show all gives the text whole");
    }
    // An entry that is not there, and a cursor that is none.
    assert_eq!(server.get(&format!("/api/sessions/{id}/entries/999999999/texts")).status().as_u16(), 404);
    assert_eq!(server.get(&format!("/api/sessions/{id}/entries/x/texts")).status().as_u16(), 400);
}
