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

use scrollback_accept::store::Accepted;

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

pub use scrollback_core::error::EngineError;

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
    ///
    /// Its standard output and error are read at once, each on its own task, so that neither pipe
    /// fills while the other is awaited; only the first line of output and a bounded tail of
    /// standard error are kept. The result is the exit status. The run has a process group of its
    /// own, killed when the run ends however it ends (the engine exited and left a child holding a
    /// pipe, the timeout, the server stopping), so nothing it started outlives it.
    pub async fn run(&self, input: &[u8]) -> Result<Ran, EngineError> {
        let mut child = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .map_err(|source| EngineError::Start { program: self.program.clone(), source })?;
        let group = ProcessGroup(child.id());
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(EngineError::Pipes);
        };
        let input = input.to_vec();
        // An engine that exits without reading its input is not an error of the input's.
        let feed = tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
        let (first_tx, first_rx) = tokio::sync::oneshot::channel();
        let out = tokio::spawn(async move {
            let mut stdout = BufReader::new(stdout);
            let mut first = String::new();
            let _ = (&mut stdout).take(MAX_FIRST_LINE).read_line(&mut first).await;
            let _ = first_tx.send(first);
            let _ = tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await;
        });
        let tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let err = tokio::spawn(keep_tail(stderr, tail.clone()));
        let status = match tokio::time::timeout(self.timeout, child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                drop(group);
                return Err(EngineError::TimedOut(self.timeout));
            }
        };
        // The run is over: what it left running goes, and with it the pipes' last writers.
        drop(group);
        let first = tokio::time::timeout(PIPE_GRACE, first_rx).await.ok().and_then(Result::ok).unwrap_or_default();
        let _ = tokio::time::timeout(PIPE_GRACE, err).await;
        feed.abort();
        out.abort();
        let status = status.map_err(EngineError::Wait)?;
        if !status.success() {
            let tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let stderr_tail = String::from_utf8_lossy(&tail).trim().to_owned();
            return Err(EngineError::Exited { code: status.code(), stderr_tail });
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct First {
            session_id: String,
        }
        let session_id = serde_json::from_str::<First>(first.trim()).ok().map(|f| f.session_id);
        if let Some(id) = &session_id
            && !scrollback_accept::send::is_client_id(id)
        {
            return Err(EngineError::BadSessionId(id.chars().take(80).collect()));
        }
        Ok(Ran { session_id })
    }
}

/// How long the pipes are read on after the engine exited (and its group was killed).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Reads `stderr` to its end, keeping only its last [`STDERR_TAIL`] bytes in `tail`.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                tail.extend_from_slice(&buf[..n]);
                let over = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..over);
            }
        }
    }
}

/// An engine run's process group, killed (SIGKILL) when this is dropped.
struct ProcessGroup(Option<u32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let pid = self.0.and_then(|id| i32::try_from(id).ok()).and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            // Gone already is what we want.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
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
