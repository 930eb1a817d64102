//! Generated transcripts with every payload shape the scanner knows and every kind of bad line: exact
//! refs, exact bytes, exact ordinals.

use crate::util::{
    Env, MediaRow, b64, b64_escaped, check_invariants, counts, fake_png, hash_hex, image_block, image_block_reversed,
    media_rows, user_line,
};

const S: &str = "sess-gen";

struct Photos {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    d: Vec<u8>,
    e: Vec<u8>,
    f: Vec<u8>,
    g: Vec<u8>,
    pdf: Vec<u8>,
    i: Vec<u8>,
    j: Vec<u8>,
    k: Vec<u8>,
}

fn photos() -> Photos {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    pdf.extend(fake_png(99, 3000));
    Photos {
        a: fake_png(1, 5000),
        b: fake_png(2, 7001),
        c: fake_png(3, 4002),
        d: fake_png(4, 3003),
        e: fake_png(5, 1000),
        f: fake_png(6, 1001),
        g: fake_png(7, 1002),
        pdf,
        i: fake_png(9, 2500),
        j: fake_png(10, 9000),
        k: fake_png(11, 600),
    }
}

/// The main transcript, line by line. The last line is torn (no newline yet).
fn transcript(p: &Photos) -> (Vec<u8>, &'static [u8]) {
    let mut lines: Vec<Vec<u8>> = vec![
        // 1: two image blocks, the second with every key order reversed.
        user_line(
            S,
            "u1",
            &format!(
                r#"[{{"type":"text","text":"two photos"}},{},{}]"#,
                image_block("image/png", &b64(&p.a)),
                image_block_reversed("image/jpeg", &b64(&p.b))
            ),
            "",
        ),
        // 2: an image nested in a tool_result, and the Read tool's second copy in toolUseResult.
        user_line(
            S,
            "u2",
            &format!(
                r#"[{{"type":"tool_result","tool_use_id":"toolu_1","content":[{{"type":"text","text":"screenshot"}},{}]}}]"#,
                image_block("image/png", &b64(&p.c))
            ),
            &format!(
                r#""toolUseResult":{{"type":"image","file":{{"base64":"{}","type":"image/png","originalSize":4002}}}}"#,
                b64(&p.c)
            ),
        ),
        // 3: an attachment line.
        format!(
            r#"{{"type":"attachment","uuid":"u3","sessionId":"{S}","attachment":{{"type":"file","content":{{"file":{{"base64":"{}","type":"image/jpeg"}}}}}}}}"#,
            b64(&p.d)
        ),
        // 4: a chat UI's data-URL chunk, an OpenAI image_url block, and an input_image.
        user_line(
            S,
            "u4",
            &format!(
                r#"[{{"type":"image","url":"data:image/gif;base64,{}"}},{{"type":"image_url","image_url":{{"url":"data:image/webp;base64,{}"}}}},{{"type":"input_image","image_url":"data:image/png;base64,{}"}}]"#,
                b64(&p.e),
                b64(&p.f),
                b64(&p.g)
            ),
            "",
        ),
        // 5: a PDF document block: a payload, but not an image.
        user_line(
            S,
            "u5",
            &format!(
                r#"[{{"type":"document","source":{{"type":"base64","media_type":"application/pdf","data":"{}"}}}},{{"type":"text","text":"summarize this"}}]"#,
                b64(&p.pdf)
            ),
            "",
        ),
        // 6: failed uploads (empty data, missing data), then a good one: ordinals 0, 1, 2.
        user_line(
            S,
            "u6",
            &format!(
                r#"[{},{{"type":"image","source":{{"type":"base64","media_type":"image/png"}}}},{}]"#,
                image_block("image/png", ""),
                image_block("image/png", &b64(&p.i))
            ),
            "",
        ),
        // 7: JSON escapes inside the base64: `\/` and `\n` line wraps.
        user_line(S, "u7", &format!("[{}]", image_block("image/png", &b64_escaped(&p.j, 76))), ""),
        // 8: a decoy: text that quotes an image block.
        user_line(
            S,
            "u8",
            r#"[{"type":"text","text":"{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}}"}]"#,
            "",
        ),
        // 9: unicode escapes in text, then an image.
        user_line(
            S,
            "u9",
            &format!(r#"[{{"type":"text","text":"caf\u00e9 \ud83d\ude00 \"quoted\""}},{}]"#, image_block("image/png", &b64(&p.k))),
            "",
        ),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    // 10: not JSON.
    lines.push(b"this is not json".to_vec());
    // 11: not UTF-8.
    lines.push(b"{\"type\":\"user\",\"uuid\":\"u11\",\"text\":\"\xff\xfe\"}".to_vec());
    // 12: a summary line (no sessionId: the file's name gives it).
    lines.push(br#"{"type":"summary","summary":"Generated session","leafUuid":"u9"}"#.to_vec());
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
    }
    let torn: &'static [u8] =
        br#"{"type":"user","uuid":"u13","sessionId":"sess-gen","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"#;
    (bytes, torn)
}

fn row(
    reference: Option<&str>,
    ordinal: Option<u32>,
    kind: &str,
    media_type: &str,
    encoding: &str,
    bytes: &[u8],
    line: u64,
) -> MediaRow {
    MediaRow {
        reference: reference.map(str::to_owned),
        ordinal,
        kind: kind.to_owned(),
        media_type: Some(media_type.to_owned()),
        encoding: encoding.to_owned(),
        blake3: hash_hex(bytes),
        line,
    }
}

#[test]
fn every_payload_shape_gets_exact_refs_bytes_and_ordinals() {
    let env = Env::new();
    let p = photos();
    let (body, torn) = transcript(&p);
    let mut file = body.clone();
    file.extend_from_slice(torn);
    let path = env.write(&format!("-work-demo/{S}.jsonl"), &file);

    let summary = env.index();
    assert!(summary.starts_with("indexed 1 file, 12 lines, 12 payloads, 2 invalid lines"), "{summary}");

    let conn = env.conn();
    let expected = vec![
        row(Some("sess-gen/u1/0"), Some(0), "image", "image/png", "base64", &p.a, 1),
        row(Some("sess-gen/u1/1"), Some(1), "image", "image/jpeg", "base64", &p.b, 1),
        row(Some("sess-gen/u2/0"), Some(0), "image", "image/png", "base64", &p.c, 2),
        row(None, None, "image", "image/png", "base64", &p.c, 2),
        row(None, None, "file", "image/jpeg", "base64", &p.d, 3),
        row(Some("sess-gen/u4/0"), Some(0), "image", "image/gif", "data-url", &p.e, 4),
        row(Some("sess-gen/u4/1"), Some(1), "image", "image/webp", "data-url", &p.f, 4),
        row(Some("sess-gen/u4/2"), Some(2), "image", "image/png", "data-url", &p.g, 4),
        row(None, None, "document", "application/pdf", "base64", &p.pdf, 5),
        row(Some("sess-gen/u6/2"), Some(2), "image", "image/png", "base64", &p.i, 6),
        row(Some("sess-gen/u7/0"), Some(0), "image", "image/png", "base64-escaped", &p.j, 7),
        row(Some("sess-gen/u9/0"), Some(0), "image", "image/png", "base64", &p.k, 9),
    ];
    assert_eq!(media_rows(&conn, &path), expected);

    // Every ref, and every hash, gives back exactly the bytes.
    for (reference, bytes) in [
        ("sess-gen/u1/0", &p.a),
        ("sess-gen/u1/1", &p.b),
        ("sess-gen/u2/0", &p.c),
        ("sess-gen/u4/0", &p.e),
        ("sess-gen/u4/1", &p.f),
        ("sess-gen/u4/2", &p.g),
        ("sess-gen/u6/2", &p.i),
        ("sess-gen/u7/0", &p.j),
        ("sess-gen/u9/0", &p.k),
    ] {
        assert_eq!(&env.media(reference).unwrap(), bytes, "{reference}");
    }
    for bytes in [&p.c, &p.d, &p.pdf] {
        assert_eq!(&env.media(&hash_hex(bytes)).unwrap(), bytes);
    }

    // Failed uploads take an ordinal, have no ref, and say why.
    let failed: Vec<(u32, String)> = conn
        .prepare("SELECT fi.ordinal, fi.reason FROM failed_images fi JOIN entries e ON e.id = fi.entry_id WHERE e.uuid = 'u6' ORDER BY 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(failed, vec![(0, "empty payload".to_owned()), (1, "no payload".to_owned())]);
    let (code, message) = env.media("sess-gen/u6/0").unwrap_err();
    assert_eq!(code, 1);
    assert!(message.contains("failed upload"), "{message}");
    for unknown in ["sess-gen/u6/3", "sess-gen/nope/0", "other/u1/0", "sess-gen/u13/0"] {
        let (code, message) = env.media(unknown).unwrap_err();
        assert_eq!(code, 1, "{unknown}");
        assert!(message.contains("not indexed yet") || message.contains("unknown"), "{message}");
    }
    let (code, message) = env.media("../../etc/passwd").unwrap_err();
    assert_eq!(code, 2, "a malformed ref is bad usage: {message}");
    assert!(message.contains("bad media ref"), "{message}");

    // Bad lines are recorded with a reason, and the lines after them are indexed.
    let invalid: Vec<(i64, String)> = conn
        .prepare("SELECT line, reason FROM invalid_lines ORDER BY line")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(invalid.len(), 2);
    assert_eq!(invalid[0].0, 10);
    assert!(invalid[0].1.starts_with("not JSON"), "{}", invalid[0].1);
    assert_eq!(invalid[1].0, 11);
    assert!(invalid[1].1.starts_with("not UTF-8"), "{}", invalid[1].1);

    // The decoy stays text; unicode escapes are decoded into the searchable text.
    let decoy: String =
        conn.query_row("SELECT stored_line(stripped) FROM entries WHERE uuid = 'u8'", [], |r| r.get(0)).unwrap();
    assert!(decoy.contains("iVBORw0KGgo="));
    let text: String = conn.query_row("SELECT text FROM entries WHERE uuid = 'u9'", [], |r| r.get(0)).unwrap();
    assert_eq!(text, "café 😀 \"quoted\"");
    let hits: i64 =
        conn.query_row("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'café'", [], |r| r.get(0)).unwrap();
    assert_eq!(hits, 1);

    // The session row.
    let (title, entries, images, project): (String, i64, i64, String) = conn
        .query_row("SELECT title, entries, images, project FROM sessions WHERE id = ?1", [S], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap();
    // Every line history returns counts, the two invalid ones too.
    assert_eq!((title.as_str(), entries, images, project.as_str()), ("Generated session", 12, 11, "/work/demo"));

    // The torn line is not indexed; once its newline arrives it is, and nothing else changes.
    let checkpoint: i64 = conn.query_row("SELECT checkpoint FROM files", [], |r| r.get(0)).unwrap();
    assert_eq!(checkpoint as usize, body.len());
    assert_eq!(check_invariants(&env.data), 10);
    let before = counts(&conn);
    assert!(env.index().starts_with("indexed 0 files, 0 lines"));
    assert_eq!(counts(&conn), before, "a second run changes nothing");

    env.append(&format!("-work-demo/{S}.jsonl"), "\"}}]}}\n");
    assert!(env.index().starts_with("indexed 1 file, 1 line, 1 payload, 0 invalid lines"));
    assert_eq!(env.media("sess-gen/u13/0").unwrap(), vec![0u8, 0, 0]);
    assert_eq!(check_invariants(&env.data), 11);
}

#[test]
fn crlf_lines_and_a_byte_order_mark() {
    let env = Env::new();
    let photo = fake_png(42, 3333);
    let mut file = b"\xEF\xBB\xBF".to_vec();
    for line in [
        user_line("crlf", "c1", r#""hello from windows""#, ""),
        user_line("crlf", "c2", &format!("[{}]", image_block("image/png", &b64(&photo))), ""),
    ] {
        file.extend_from_slice(line.as_bytes());
        file.extend_from_slice(b"\r\n");
    }
    env.write("p/crlf.jsonl", &file);
    assert!(env.index().starts_with("indexed 1 file, 2 lines, 1 payload, 0 invalid lines"));
    assert_eq!(env.media("crlf/c2/0").unwrap(), photo);
    let conn = env.conn();
    let (offset, stripped): (i64, String) = conn
        .query_row("SELECT offset, stored_line(stripped) FROM entries WHERE line = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(offset, 3, "the first line starts after the byte order mark");
    assert!(!stripped.ends_with('\r'), "the terminator is not part of the line");
    assert_eq!(check_invariants(&env.data), 2);
}

#[test]
fn a_lines_verdict_depends_on_that_line_alone() {
    // The same lines first in a file (read across blocks, scanned) and after another line (read
    // within a block, where a line without media words is not scanned): the same verdicts.
    let env = Env::new();
    let deep = |n: usize| {
        format!(
            r#"{{"type":"user","uuid":"d{n}","sessionId":"s","message":{{"role":"user","content":"x"}},"nest":{}{}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let image = user_line("s", "i1", &format!("[{}]", image_block("image/png", &b64(&fake_png(1, 300)))), "");
    let lines = [deep(2_000), deep(510), deep(511), "{\"type\":\"user\",\"nest\":[[[}".to_owned()];
    for (i, line) in lines.iter().enumerate() {
        env.write(&format!("p/first-{i}.jsonl"), format!("{line}\n"));
        env.write(&format!("p/second-{i}.jsonl"), format!("{image}\n{line}\n"));
    }
    env.index();
    let conn = env.conn();
    for i in 0..lines.len() {
        let verdict = |name: &str| -> Option<String> {
            conn.query_row(
                "SELECT e.invalid FROM entries e JOIN files f ON f.id = e.file_id
                 WHERE f.path LIKE '%/' || ?1 ORDER BY e.line DESC LIMIT 1",
                [name],
                |r| r.get(0),
            )
            .unwrap()
        };
        let (first, second) = (verdict(&format!("first-{i}.jsonl")), verdict(&format!("second-{i}.jsonl")));
        assert_eq!(first, second, "line {i}");
        match i {
            0 => assert!(first.as_deref().is_some_and(|r| r.contains("nesting too deep")), "{first:?}"),
            1 | 2 => assert_eq!(first, None, "511 levels inside the line's object are within the limit"),
            _ => assert!(first.is_some(), "not JSON either way"),
        }
    }
}
