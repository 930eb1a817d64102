//! Send a message (with a photo, if given) to a running `scrollback serve`, then wait until the
//! transcript holds it: reconcile the chat's history with its pending sends, as a client does, and
//! tell the server once the message is retired.
//!
//! ```text
//! cargo run --example send -- http://127.0.0.1:7878 CHAT_ID "the text" [PHOTO.png]
//! ```
//! A chat id of your choosing starts a new chat (the engine assigns its session). With `serve
//! --demo`, the demo engine writes the transcript. `SCROLLBACK_TOKEN` is sent if set.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use scrollback::accept::reconcile::{PendingSend, TranscriptEntry, reconcile};
use serde_json::{Value, json};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(base), Some(chat), Some(text)) = (args.next(), args.next(), args.next()) else {
        bail!("usage: send BASE_URL CHAT_ID TEXT [PHOTO]");
    };
    let photo = args.next().map(PathBuf::from);
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build()?;
    let authorized = |request: reqwest::blocking::RequestBuilder| match std::env::var("SCROLLBACK_TOKEN") {
        Ok(token) => request.bearer_auth(token),
        Err(_) => request,
    };

    let mut images = Vec::new();
    if let Some(path) = &photo {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let media_type = match path.extension().and_then(|e| e.to_str()) {
            Some("jpg" | "jpeg") => "image/jpeg",
            Some("gif") => "image/gif",
            Some("webp") => "image/webp",
            _ => "image/png",
        };
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        images.push(json!({ "url": format!("data:{media_type};base64,{data}"), "mimeType": media_type }));
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos();
    let client_message_id = format!("example-{nanos}");
    let body = json!({ "clientMessageId": client_message_id, "chatId": chat, "text": text, "images": images });
    let res = authorized(client.post(format!("{base}/api/chat/send")).json(&body)).send()?;
    if !res.status().is_success() {
        bail!("send answered {}: {}", res.status(), res.text()?);
    }
    let accepted: Value = res.json()?;
    println!("accepted {client_message_id} at {}", accepted["acceptedAt"]);

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let url = format!("{base}/api/chat/bootstrap?chatId={chat}");
        let bootstrap: Value = authorized(client.get(url)).send()?.error_for_status()?.json()?;
        let entries: Vec<TranscriptEntry> = serde_json::from_value(bootstrap["entries"].clone())?;
        let pending: Vec<PendingSend> = serde_json::from_value(bootstrap["pending"].clone())?;
        let reconciled = reconcile(&entries, &pending);
        if let Some(retired) = reconciled.retired.iter().find(|r| r.client_message_id == client_message_id) {
            let ids: Vec<&str> = reconciled.retired.iter().map(|r| r.client_message_id.as_str()).collect();
            let body = json!({ "chatId": chat, "clientMessageIds": ids });
            authorized(client.post(format!("{base}/api/chat/retire")).json(&body)).send()?.error_for_status()?;
            let session = bootstrap["sessionId"].as_str().unwrap_or("?");
            println!("retired by entry {} of session {session}", retired.uuid.as_deref().unwrap_or("?"));
            return Ok(());
        }
        let ours = bootstrap["pending"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["clientMessageId"] == client_message_id.as_str()));
        if let Some(error) = ours.and_then(|p| p["engineError"].as_str()) {
            bail!("the engine failed: {error}");
        }
        if Instant::now() > deadline {
            bail!("the transcript did not take up {client_message_id} within 60 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
