//! `scrollback serve --demo`: a small transcript tree with real PNG photos, so that a newcomer sees
//! the product at once. The demo has a data directory of its own, `demo/` in the person's
//! ([`data_dir`]): its tree, index, acceptance record and vault all live there, and it never
//! writes the person's index or reads their transcripts.

use std::path::{Path, PathBuf};

use crate::Root;
use crate::error::{Error, Result};

pub mod engine;

/// The session with photos.
pub const PHOTO_SESSION: &str = "0d000000-demo-4000-8000-000000000001";
/// The long text session.
pub const TEXT_SESSION: &str = "0d000000-demo-4000-8000-000000000002";

/// A `width` x `height` RGB PNG: a gradient with a pattern that depends on `seed`.
pub fn png(width: u32, height: u32, seed: u32) -> Vec<u8> {
    let mut pixels = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            let ring =
                ((x as i64 - width as i64 / 2).pow(2) + (y as i64 - height as i64 / 2).pow(2)) as u32 / (40 + seed * 7);
            pixels.push((x * 255 / width.max(1)) as u8 ^ (ring as u8).wrapping_mul(17));
            pixels.push((y * 255 / height.max(1)) as u8);
            pixels.push(((seed * 70) as u8).wrapping_add((ring % 2) as u8 * 90));
        }
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Writing to a Vec cannot fail; the pixel buffer has the size the header says.
    let written = encoder.write_header().and_then(|mut w| w.write_image_data(&pixels));
    debug_assert!(written.is_ok());
    out
}

fn b64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

fn line(
    session: &str,
    n: u32,
    parent: Option<u32>,
    kind: &str,
    message: serde_json::Value,
    extra: Option<(&str, serde_json::Value)>,
) -> String {
    let mut v = serde_json::json!({
        "parentUuid": parent.map(|p| format!("{session}-{p:04}")),
        "isSidechain": false,
        "userType": "external",
        "cwd": "/home/demo/project",
        "sessionId": session,
        "version": "2.1.39",
        "type": kind,
        "uuid": format!("{session}-{n:04}"),
        // The photo session is the newest, so that the viewer opens on it.
        "timestamp": format!(
            "2026-11-{:02}T{:02}:{:02}:00.000Z",
            20 + n / 600 + u32::from(session == PHOTO_SESSION),
            9 + n / 60 % 10,
            n % 60
        ),
        "message": message,
    });
    if let Some((key, value)) = extra {
        v[key] = value;
    }
    v.to_string() + "\n"
}

/// The demo's own data directory, in the person's `data_dir`.
pub fn data_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("demo")
}

/// Writes the demo tree under `demo_dir/projects` (once) and returns its root. `demo_dir` is the
/// demo's data directory ([`data_dir`]).
pub fn write(demo_dir: &Path) -> Result<PathBuf> {
    let root = demo_dir.join("projects");
    let project = root.join(engine::DEMO_PROJECT);
    // Inside a data directory, which is its owner's alone: made so, not tightened afterwards.
    crate::files::create_private_dir(&project).map_err(|e| Error::io(&project, e))?;
    for (name, text) in [(PHOTO_SESSION, photo_session as fn() -> String), (TEXT_SESSION, text_session)] {
        let path = project.join(format!("{name}.jsonl"));
        if !path.exists() {
            write_private(&path, text().as_bytes())?;
        }
    }
    Ok(root)
}

/// Writes a new file `path`, 0600.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|e| Error::io(path, e))
}

/// Writes the demo tree (as [`write()`] does) and returns it as the root `serve --demo` follows: its
/// transcripts are Claude Code's.
pub fn write_root(demo_dir: &Path) -> Result<Root> {
    Ok(Root::new(crate::format::CLAUDE, write(demo_dir)?))
}

/// The photo session: two pasted photos, a photo the Read tool returned, a failed upload, a summary.
fn photo_session() -> String {
    let s = PHOTO_SESSION;
    let (a, b, c) = (png(480, 300, 1), png(320, 320, 2), png(640, 360, 3));
    let image = |data: &str| serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}});
    let mut text = String::new();
    text += &line(
        s,
        1,
        None,
        "user",
        serde_json::json!({"role": "user", "content": [
            image(&b64(&a)), image(&b64(&b)),
            {"type": "text", "text": "[Image #1] [Image #2] Here are the two mock-ups. Which layout reads better on a phone?"}
        ]}),
        None,
    );
    text += &line(
        s,
        2,
        Some(1),
        "assistant",
        serde_json::json!({"role": "assistant", "id": "msg_demo_1", "content": [
            {"type": "text", "text": "The second one: its square frame keeps the photo large on a narrow screen, and the first needs horizontal scrolling below 480 px."}
        ]}),
        None,
    );
    text += &line(
        s,
        3,
        Some(2),
        "assistant",
        serde_json::json!({"role": "assistant", "id": "msg_demo_2", "content": [
            {"type": "tool_use", "id": "toolu_demo_1", "name": "Read", "input": {"file_path": "/home/demo/project/screenshot.png"}}
        ]}),
        None,
    );
    text += &line(
        s,
        4,
        Some(3),
        "user",
        serde_json::json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_demo_1", "content": [image(&b64(&c))]}
        ]}),
        Some((
            "toolUseResult",
            serde_json::json!({"type": "image", "file": {"base64": b64(&c), "type": "image/png", "originalSize": c.len()}}),
        )),
    );
    text += &line(
        s,
        5,
        Some(4),
        "user",
        serde_json::json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}},
            {"type": "text", "text": "This upload failed: it shows as [image not displayed]."}
        ]}),
        None,
    );
    text += &line(
        s,
        6,
        Some(5),
        "assistant",
        serde_json::json!({"role": "assistant", "id": "msg_demo_3", "content": [
            {"type": "text", "text": "I can see the screenshot, but the last image did not come through."}
        ]}),
        None,
    );
    text += &serde_json::json!({"type": "summary", "summary": "Demo: choosing a mobile layout from photos", "leafUuid": format!("{s}-0006")}).to_string();
    text += "\n";
    text
}

/// The long text session: 240 lines, questions and answers, for paging.
fn text_session() -> String {
    let s = TEXT_SESSION;
    let mut text = String::new();
    for n in 1..=240u32 {
        let parent = (n > 1).then(|| n - 1);
        text += &if n % 2 == 1 {
            line(
                s,
                n,
                parent,
                "user",
                serde_json::json!({"role": "user", "content": format!("Question {n}: how does scrollback page through a long session?")}),
                None,
            )
        } else {
            line(
                s,
                n,
                parent,
                "assistant",
                serde_json::json!({"role": "assistant", "id": format!("msg_text_{n}"), "content": [
                    {"type": "text", "text": format!("Answer {n}: the history API returns the newest page first; pass its `before` cursor to fetch the page before it, one request per page, and `after` to catch up when an event says new entries were committed.")}
                ]}),
                None,
            )
        };
    }
    text
}
