//! The Gemini API's content parts (`Part` of `@google/genai`: `text`, `thought`, `inlineData`,
//! `fileData`, `functionCall`, `functionResponse`), as the agents that record them write them:
//! Gemini CLI ([`super::gemini`]) and Qwen Code ([`super::qwen`]), whose records differ around
//! them but not in them. Here is what one part says to a reader and to search; each format
//! decides which parts a record holds and how they are grouped.
//!
//! Nothing here reads a record's envelope, and nothing here knows either agent's field names.

use serde_json::Value;

use super::{Media, Part, SearchText, str_at};

/// Whether a part is a thought (`{"text": …, "thought": true}`): the model's reasoning.
pub(crate) fn is_thought(part: &Value) -> bool {
    part.get("thought") == Some(&Value::Bool(true))
}

/// One part, as a reader takes it in: its text (a thought's as thinking), inline data, a file by
/// URI, a tool response (labelled with its tool). A function call, or a part of no kind known
/// here, says nothing.
pub(crate) fn push_part(part: &Value, out: &mut Vec<Part>) {
    if !part.is_object() {
        return;
    }
    if let Some(t) = str_at(part, "text") {
        if is_thought(part) {
            out.push(Part::Thinking(t.to_owned()));
        } else if !t.trim().is_empty() {
            out.push(Part::Text(t.to_owned()));
        }
    } else if let Some(d) = part.get("inlineData").filter(|d| d.is_object()) {
        out.push(Part::Media(inline(d)));
    } else if let Some(file) = part.get("fileData") {
        out.push(Part::Note(format!("[file {}]", str_at(file, "fileUri").unwrap_or(""))));
    } else if let Some(f) = part.get("functionResponse") {
        let response = f.get("response").unwrap_or(&Value::Null);
        out.push(Part::ToolResult {
            call: str_at(f, "id").map(str::to_owned),
            text: response_shown(response),
            error: response_failed(response),
            label: Some(format!("Response of {}", str_at(f, "name").unwrap_or("a tool"))),
            media: Vec::new(),
        });
    }
}

/// One part's search text: its text (as said), a tool response's output. A function call's is the
/// format's to add (it is a call, searched with its tool's name).
pub(crate) fn part_text(part: &Value, out: &mut SearchText) {
    if let Some(t) = str_at(part, "text") {
        out.said(t);
    } else if let Some(response) = part.get("functionResponse").and_then(|f| f.get("response")) {
        response_text(response, out);
    }
}

/// A tool response's search text: its `output` (or `error`), else nothing.
pub(crate) fn response_text(response: &Value, out: &mut SearchText) {
    for key in ["output", "error"] {
        if let Some(v) = response.get(key) {
            out.output_value(v);
        }
    }
}

/// Whether a tool response says it failed (an `error` that is not null).
pub(crate) fn response_failed(response: &Value) -> bool {
    response.get("error").is_some_and(|e| !e.is_null())
}

/// An `inlineData` part: a photo (an image block), else a file.
pub(crate) fn inline(data: &Value) -> Media {
    if str_at(data, "mimeType").is_some_and(|t| t.starts_with("image/")) {
        Media::image(data)
    } else {
        Media::file(data)
    }
}

/// The `inlineData` among `parts` (a function response's own `parts`), as media.
pub(crate) fn inline_media(parts: &[Value]) -> impl Iterator<Item = Media> + '_ {
    parts.iter().filter_map(|p| p.get("inlineData")).filter(|d| d.is_object()).map(inline)
}

/// The `blake3` of each image among `parts` (as a rendered line annotates it), for what a person
/// typed.
pub(crate) fn typed_images(parts: &[Value]) -> Vec<Option<String>> {
    parts
        .iter()
        .filter_map(|p| p.get("inlineData"))
        .filter(|d| str_at(d, "mimeType").is_some_and(|t| t.starts_with("image/")))
        .map(|d| str_at(d, "blake3").map(str::to_owned))
        .collect()
}

/// What a tool response shows: its `output` (else its `error`) as text, else the response as JSON.
pub(crate) fn response_shown(response: &Value) -> String {
    let said = ["output", "error"].iter().find_map(|k| response.get(*k).filter(|v| !v.is_null()));
    match said {
        Some(Value::String(s)) => s.clone(),
        Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
        None => serde_json::to_string_pretty(response).unwrap_or_default(),
    }
}
