//! The examples are how other tools learn the library: each one runs here, built by `cargo test`,
//! on the demo tree, and its output is checked (every photo written, byte for byte).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use scrollback::demo::{PHOTO_SESSION, png};

use crate::util::{Env, hash_hex};

/// The demo tree indexed in a fresh environment.
fn demo_env() -> Env {
    let env = Env::new();
    let root = scrollback::demo::write(&env.data).unwrap();
    let out = env.run(&["index", "--transcripts", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    env
}

/// An example's binary, which `cargo test` builds beside the test binary.
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let path: PathBuf = exe.parent().and_then(|deps| deps.parent()).unwrap().join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is not built: `cargo test` builds the examples (or `cargo build --examples`)",
        path.display()
    );
    let mut cmd = Command::new(path);
    cmd.env("RUST_LOG", "error");
    cmd
}

/// The demo's three distinct photos, as `demo::write` made them.
fn demo_photos() -> BTreeSet<String> {
    [png(480, 300, 1), png(320, 320, 2), png(640, 360, 3)].iter().map(|p| hash_hex(p)).collect()
}

fn written(dir: &std::path::Path, extension: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn export_markdown_writes_every_photo_tool_results_included() {
    let env = demo_env();
    let out_dir = env.dir.path().join("md");
    let out = example("export_markdown").args([&env.data, &PathBuf::from(PHOTO_SESSION), &out_dir]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let photos = written(&out_dir, "png");
    assert_eq!(photos.len(), 3, "two pasted photos and the one in the Read tool's result");
    let hashes: BTreeSet<String> = photos.iter().map(|p| hash_hex(p)).collect();
    assert_eq!(hashes, demo_photos());
    let md = std::fs::read_to_string(out_dir.join(format!("{PHOTO_SESSION}.md"))).unwrap();
    assert_eq!(md.matches("![photo](").count(), 3);
    assert!(md.contains("*[image not displayed]*"), "the failed upload says so");
    assert!(md.contains("> tool result"));
}

#[test]
fn export_photos_writes_every_payload_verified() {
    let env = demo_env();
    let out_dir = env.dir.path().join("photos");
    let out = example("export_photos").args([&env.data, &PathBuf::from(PHOTO_SESSION), &out_dir]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let photos = written(&out_dir, "png");
    // The tool result's photo is in the line twice (the block and the toolUseResult copy).
    assert_eq!(photos.len(), 4);
    let hashes: BTreeSet<String> = photos.iter().map(|p| hash_hex(p)).collect();
    assert_eq!(hashes, demo_photos());
    assert!(String::from_utf8_lossy(&out.stdout).contains("4 of 4 payloads written"));
}

#[test]
fn follow_prints_the_newest_entries_with_their_photos() {
    let env = demo_env();
    let mut child =
        example("follow").args([&env.data, &PathBuf::from(PHOTO_SESSION)]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The demo's photo session has 7 lines; the newest page holds them all.
    let printed: Vec<String> = (0..7).map(|_| lines.next().unwrap().unwrap()).collect();
    let _ = child.kill();
    let _ = child.wait();
    let photo_url = format!("[photo /api/session-media/{PHOTO_SESSION}/{PHOTO_SESSION}-0001/0]");
    assert!(printed[0].contains(&photo_url), "{printed:#?}");
    assert!(printed.iter().any(|l| l.contains("[image not displayed]")), "{printed:#?}");
    assert!(printed.iter().any(|l| l.contains("[tool Read]")), "{printed:#?}");
    let numbers: Vec<&str> = printed.iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(numbers, ["1", "2", "3", "4", "5", "6", "7"]);
}

#[test]
fn send_waits_until_reconcile_retires_its_message() {
    let env = Env::new();
    let server = crate::util::Server::start(&env, &["--demo"]);
    let photo_path = env.dir.path().join("photo.png");
    let photo = png(64, 48, 5);
    std::fs::write(&photo_path, &photo).unwrap();
    let out = example("send")
        .args([&server.base, "example-chat", "a photo from the example"])
        .arg(&photo_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("retired by entry"), "{stdout}");
    let bootstrap = server.json("/api/chat/bootstrap?chatId=example-chat");
    assert_eq!(bootstrap["pending"], serde_json::json!([]), "the example told the server");
    let sent = bootstrap["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["entry"]["message"]["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "image")
        .expect("the transcript holds the photo");
    assert_eq!(server.get(sent["url"].as_str().unwrap()).bytes().unwrap().as_ref(), photo.as_slice());
}
