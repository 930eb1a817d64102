//! `scrollback demo-engine`: a stand-in for the agent, for `serve --demo` and the tests.
//!
//! It behaves as Claude Code does with a message handed to it: it reads the accepted message (the
//! engine input, see [`crate::ops::engine`]) from standard input; for a chat with no session yet
//! it makes a session id and prints `{"sessionId": "..."}` as its first line; it appends the user
//! line to `<transcripts>/<project>/<sessionId>.jsonl` (the text, and each image as a base64 image
//! block, in Claude Code's shape) and, after a short delay, an assistant reply.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The project folder the demo engine writes into (the demo tree's).
pub const DEMO_PROJECT: &str = "-home-demo-project";

/// What the engine is told about one accepted message.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Input {
    client_message_id: String,
    session_id: Option<String>,
    text: String,
    #[serde(default)]
    images: Vec<InputImage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputImage {
    mime_type: String,
    path: Option<PathBuf>,
}

/// Where the demo engine writes, and how it replies.
#[derive(Debug, Clone)]
pub struct DemoEngine {
    /// The transcript tree.
    pub transcripts: PathBuf,
    /// The project folder under it.
    pub project: String,
    /// The delay between the user line and the reply.
    pub reply_delay: Duration,
}

fn now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A fresh id in the form of a UUID, from the message, the time and the process.
fn fresh_id(seed: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let hash = blake3::hash(format!("{seed}/{nanos}/{}", std::process::id()).as_bytes()).to_hex();
    let h = hash.as_str();
    format!("{}-{}-4{}-8{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

impl DemoEngine {
    /// Handles one message: reads it from `input`, prints a new session's id to `output`, and
    /// appends the user line and the reply to the session's transcript.
    pub fn run(&self, input: impl Read, mut output: impl Write) -> Result<()> {
        let input: Input = serde_json::from_reader(input)
            .map_err(|e| Error::io("<stdin>", std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        let session = match &input.session_id {
            Some(session) => session.clone(),
            None => {
                let session = fresh_id(&input.client_message_id);
                writeln!(output, "{}", serde_json::json!({ "sessionId": session }))
                    .and_then(|()| output.flush())
                    .map_err(|e| Error::io("<stdout>", e))?;
                session
            }
        };
        let dir = self.transcripts.join(&self.project);
        crate::files::create_private_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        let path = dir.join(format!("{session}.jsonl"));
        let user_uuid = fresh_id(&format!("{}/user", input.client_message_id));
        let mut content = Vec::new();
        for image in &input.images {
            let path = image.path.as_deref().ok_or_else(|| {
                Error::io("<stdin>", std::io::Error::new(std::io::ErrorKind::InvalidData, "an image without its path"))
            })?;
            let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            content.push(serde_json::json!({"type": "image", "source": {
                "type": "base64", "media_type": image.mime_type, "data": base64_simd::STANDARD.encode_to_string(&bytes)
            }}));
        }
        if !input.text.is_empty() {
            content.push(serde_json::json!({"type": "text", "text": input.text}));
        }
        let message = if input.images.is_empty() {
            serde_json::json!({"role": "user", "content": input.text})
        } else {
            serde_json::json!({"role": "user", "content": content})
        };
        append(&path, &self.line(&session, &user_uuid, None, "user", message))?;
        std::thread::sleep(self.reply_delay);
        let photos = match input.images.len() {
            0 => String::new(),
            1 => " and 1 photo".to_owned(),
            n => format!(" and {n} photos"),
        };
        let reply =
            format!("(demo engine) I got your message{photos}: {}", input.text.chars().take(200).collect::<String>());
        let message = serde_json::json!({
            "id": format!("msg_{}", &fresh_id(&user_uuid)[..8]),
            "role": "assistant",
            "model": "scrollback-demo-engine",
            "content": [{"type": "text", "text": reply}],
        });
        let reply_uuid = fresh_id(&format!("{user_uuid}/reply"));
        append(&path, &self.line(&session, &reply_uuid, Some(&user_uuid), "assistant", message))
    }

    fn line(&self, session: &str, uuid: &str, parent: Option<&str>, kind: &str, message: serde_json::Value) -> String {
        let mut line = serde_json::json!({
            "parentUuid": parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": "/home/demo/project",
            "sessionId": session,
            "version": "scrollback-demo-engine",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": now(),
        })
        .to_string();
        line.push('\n');
        line
    }
}

/// Appends one whole line in one write.
fn append(path: &Path, line: &str) -> Result<()> {
    let mut file =
        OpenOptions::new().create(true).append(true).mode(0o600).open(path).map_err(|e| Error::io(path, e))?;
    file.write_all(line.as_bytes()).map_err(|e| Error::io(path, e))
}
