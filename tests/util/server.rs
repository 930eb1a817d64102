//! The test `Server`: a real `scrollback serve` on `127.0.0.1:0`, its log kept, and a bare
//! WebSocket client for `/api/events`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::Value;

use super::Env;

/// `serve`'s arguments for an engine that takes each sent message and writes nothing (`true`):
/// the server then takes messages (without an engine it refuses them), and they stay pending.
pub const SILENT_ENGINE: [&str; 2] = ["--engine", "true"];

/// A running `scrollback serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub client: Client,
    /// Everything it wrote to standard error after it started listening.
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
    /// What it said as it started, up to and with its address (alone on the last line).
    pub start: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(env: &Env, args: &[&str]) -> Server {
        Server::start_with(env, args, &[])
    }

    /// [`Server::start`] with these environment variables set too.
    pub fn start_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Server {
        let mut cmd = env.cmd();
        cmd.envs(vars.iter().copied());
        Server::start_cmd(cmd, args)
    }

    /// `serve` run by `cmd` (the binary, its environment set), with these arguments.
    pub fn start_cmd(mut cmd: std::process::Command, args: &[&str]) -> Server {
        let mut child = cmd
            .env("RUST_LOG", "scrollback=warn")
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        // The start ends with the viewer's address, alone on its line.
        let base = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "serve exited before listening: {said}");
            said.push_str(&line);
            if let Some(base) = line.trim_end().strip_prefix("http://").and_then(|rest| rest.strip_suffix('/')) {
                break format!("http://{base}");
            }
        };
        // Keep draining stderr so the server never blocks on it.
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
                kept.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let client = Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        Server { child, base, client, log, start: said }
    }

    pub fn get(&self, path: &str) -> reqwest::blocking::Response {
        self.client.get(format!("{}{path}", self.base)).send().unwrap()
    }

    pub fn json(&self, path: &str) -> Value {
        let res = self.get(path);
        let status = res.status();
        if status != StatusCode::OK {
            let body = res.text().unwrap_or_default();
            let log = self.log.lock().map(|l| l.clone()).unwrap_or_default();
            let tail = &log[log.len().saturating_sub(4000)..];
            panic!("{path}: {status}: {body}\nthe server's log ends:\n{tail}");
        }
        res.json().unwrap()
    }

    /// Waits until the index has `n` sessions (the startup catch-up runs beside the server).
    pub fn wait_for_sessions(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.json("/api/sessions?limit=500")["sessions"].as_array().unwrap().len();
            if got >= n {
                return;
            }
            assert!(Instant::now() < deadline, "only {got} of {n} sessions indexed");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Opens `/api/events` with a bare WebSocket handshake.
pub fn open_events(base: &str) -> TcpStream {
    open_events_with(base, None)
}

/// [`open_events`], presenting `token`.
pub fn open_events_with(base: &str, token: Option<&str>) -> TcpStream {
    let mut ws = TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    ws.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    ws.write_all(
        format!(
            "GET /api/events HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{auth}\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        ws.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
    ws
}

/// Reads the next event (an unmasked text frame) from the server, as JSON.
pub fn read_event(ws: &mut TcpStream) -> Value {
    loop {
        match read_frame(ws) {
            (0x81, payload) => return serde_json::from_slice(&payload).unwrap(),
            // The server's keep-alive ping: answered with an (empty, masked) pong, as a browser does.
            (0x89, _) => ws.write_all(&[0x8A, 0x80, 0, 0, 0, 0]).unwrap(),
            (first, _) => panic!("a final text frame or a ping, not {first:#x}"),
        }
    }
}

/// Reads one unmasked frame from the server: its first byte and its payload.
pub fn read_frame(ws: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut hdr = [0u8; 2];
    ws.read_exact(&mut hdr).unwrap();
    let len = match hdr[1] & 0x7f {
        126 => {
            let mut l = [0u8; 2];
            ws.read_exact(&mut l).unwrap();
            u16::from_be_bytes(l) as usize
        }
        n => n as usize,
    };
    let mut payload = vec![0u8; len];
    ws.read_exact(&mut payload).unwrap();
    (hdr[0], payload)
}
