//! The engine: whatever writes the transcript (the agent), run once per accepted message.
//!
//! `serve --engine CMD` splits CMD on white space into a program and its arguments (no shell is
//! involved, and no user text is ever part of a command line). Each run gets the accepted message
//! as one JSON object on its standard input ([`input`]). If its first line of output is
//! `{"sessionId": "..."}`, that is the session it assigned to a chat that had none. A run that
//! exits non-zero or outlives its timeout has failed; the failure is reported, never undoing the
//! acceptance.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::accept::store::Accepted;

/// How long a run may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest first line of output read for a session id.
const MAX_FIRST_LINE: u64 = 4096;
/// How much of the end of standard error a failure quotes.
const STDERR_TAIL: usize = 2048;

/// A command to run per accepted message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// How long a run may take before it is killed and counted as failed.
    pub timeout: Duration,
}

pub use crate::error::EngineError;

/// What a successful run said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    /// The session it assigned, from `{"sessionId": "..."}` on its first line.
    pub session_id: Option<String>,
}

impl Engine {
    /// Parses `serve --engine`'s value: a program and its arguments, separated by white space.
    pub fn parse(command: &str, timeout: Duration) -> Option<Engine> {
        let mut words = command.split_whitespace();
        let program = PathBuf::from(words.next()?);
        Some(Engine { program, args: words.map(str::to_owned).collect(), timeout })
    }

    /// Runs the engine with `input` on its standard input. `Err` says why it failed.
    pub async fn run(&self, input: &[u8]) -> Result<Ran, EngineError> {
        let mut child = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| EngineError::Start { program: self.program.clone(), source })?;
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(EngineError::Pipes);
        };
        let work = async {
            // An engine that exits without reading its input is not an error of the input's.
            let _ = stdin.write_all(input).await;
            drop(stdin);
            let mut stdout = BufReader::new(stdout);
            let mut first = String::new();
            let _ = (&mut stdout).take(MAX_FIRST_LINE).read_line(&mut first).await;
            let (mut out_sink, mut err_sink) = (tokio::io::sink(), tokio::io::sink());
            let drain = tokio::io::copy(&mut stdout, &mut out_sink);
            let mut err = Vec::new();
            // Standard error is kept up to a bound, for the failure message; the rest is drained.
            let errors = async {
                let _ = (&mut stderr).take(1 << 20).read_to_end(&mut err).await;
                let _ = tokio::io::copy(&mut stderr, &mut err_sink).await;
            };
            let _ = tokio::join!(drain, errors);
            let status = child.wait().await;
            (first, err, status)
        };
        let (first, err, status) = match tokio::time::timeout(self.timeout, work).await {
            Ok(done) => done,
            Err(_) => return Err(EngineError::TimedOut(self.timeout)),
        };
        let status = status.map_err(EngineError::Wait)?;
        if !status.success() {
            let stderr_tail = String::from_utf8_lossy(&err[err.len().saturating_sub(STDERR_TAIL)..]).trim().to_owned();
            return Err(EngineError::Exited { code: status.code(), stderr_tail });
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct First {
            session_id: String,
        }
        let session_id = serde_json::from_str::<First>(first.trim()).ok().map(|f| f.session_id);
        Ok(Ran { session_id })
    }
}

/// The JSON an engine gets on its standard input: the accepted message, each image with the path
/// of its bytes (`path`) so that the engine can read them.
pub fn input(record: &Accepted, image_path: impl Fn(&str) -> Option<PathBuf>) -> Vec<u8> {
    let images: Vec<serde_json::Value> = record
        .images
        .iter()
        .map(|i| {
            serde_json::json!({
                "blake3": i.blake3,
                "mimeType": i.media_type,
                "bytes": i.bytes,
                "path": image_path(&i.blake3),
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "clientMessageId": record.client_message_id,
        "chatId": record.chat_id,
        "sessionId": record.session_id,
        "text": record.text,
        "images": images,
        "acceptedAt": record.accepted_at,
    }))
    .unwrap_or_default()
}
