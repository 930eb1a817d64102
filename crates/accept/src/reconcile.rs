//! The one comparison of the two records of a message: which pending sends the transcript now backs.
//!
//! The server hands out transcript entries and pending acceptances side by side and never compares
//! them; a client calls [`reconcile`] (or `crates/http/web/reconcile.js`, the same rule in JavaScript, checked
//! against the same vectors in `tests/vectors/reconcile/`). Pure: no I/O, no clock.
//!
//! The rule:
//! - Only a transcript entry that carries what a person typed (its `typed`, which the server gives
//!   by the entry's format's rule, [`Format::typed_input`](scrollback_core::format::Format::typed_input))
//!   can back a send, and it is compared by that: its text and its images' blake3. Neither side of
//!   the rule knows a transcript format.
//! - Texts are compared after [`normalize`]: line endings made `\n`, the `[Image #N]` tokens a
//!   terminal client inserts removed, trailing white space of each line and white space around the
//!   whole removed.
//! - The number of images is equal. Where both sides know every image's blake3, an entry whose
//!   hashes are equal (in order) is preferred over one whose hashes are unknown, and that over one
//!   whose hashes differ (an engine may re-encode a photo).
//! - Sends are matched one to one, oldest acceptance first, each to the best unused entry, the
//!   earliest among equals: the same text sent twice is two messages, retired by two entries.
//! - An entry whose timestamp is more than [`TOLERANCE_MS`] before the acceptance cannot back it (it
//!   was written before the message was sent). A missing or unreadable timestamp does not rule out.

use serde::{Deserialize, Serialize};

use scrollback_core::format::Typed;

/// How far before its acceptance a transcript entry may be timestamped and still back it: the
/// engine's clock and the server's may disagree by this much.
pub const TOLERANCE_MS: i64 = 2000;

/// A history entry, as the API gives it (only what reconciling reads).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    /// Its cursor.
    #[serde(default)]
    pub cursor: Option<i64>,
    /// Its `uuid`.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Its `timestamp`.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// What a person typed, where the entry is a person's message (absent on every other entry).
    #[serde(default)]
    pub typed: Option<Typed>,
}

/// A pending acceptance, as the API gives it (only what reconciling reads).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSend {
    /// The client's id for it.
    pub client_message_id: String,
    /// Its text.
    pub text: String,
    /// Its images.
    #[serde(default)]
    pub images: Vec<PendingImage>,
    /// When it was accepted.
    pub accepted_at: String,
}

/// An image of a pending send.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct PendingImage {
    /// blake3 (hex) of its bytes.
    #[serde(default)]
    pub blake3: Option<String>,
}

/// A send the transcript backs, and the entry that backs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retired {
    /// The send.
    pub client_message_id: String,
    /// The entry's `uuid`.
    pub uuid: Option<String>,
    /// The entry's cursor.
    pub cursor: Option<i64>,
}

/// What [`reconcile`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciled {
    /// Sends the transcript backs, in acceptance order.
    pub retired: Vec<Retired>,
    /// Sends it does not back yet, in acceptance order.
    pub still_pending: Vec<String>,
}

/// Matches pending sends with the transcript entries that back them. See the module docs.
pub fn reconcile(entries: &[TranscriptEntry], pending: &[PendingSend]) -> Reconciled {
    let typed: Vec<Option<(&Typed, Option<i64>)>> =
        entries.iter().map(|e| e.typed.as_ref().map(|t| (t, e.timestamp.as_deref().and_then(parse_ms)))).collect();
    let mut used = vec![false; entries.len()];
    let mut order: Vec<usize> = (0..pending.len()).collect();
    // Oldest acceptance first; a stable sort keeps the given order among equal or unreadable times.
    order.sort_by_key(|&i| parse_ms(&pending[i].accepted_at).unwrap_or(i64::MIN));
    let mut matched: Vec<Option<usize>> = vec![None; pending.len()];
    for i in order {
        let send = &pending[i];
        let text = normalize(&send.text);
        let accepted = parse_ms(&send.accepted_at);
        let best = typed
            .iter()
            .enumerate()
            .filter(|(j, _)| !used[*j])
            .filter_map(|(j, t)| t.as_ref().map(|t| (j, t)))
            .filter(|(_, (t, at))| {
                normalize(&t.text) == text
                    && t.images.len() == send.images.len()
                    && !matches!((at, accepted), (Some(at), Some(acc)) if *at < acc - TOLERANCE_MS)
            })
            .min_by_key(|(j, (t, _))| (hash_rank(&t.images, &send.images), *j))
            .map(|(j, _)| j);
        if let Some(j) = best {
            used[j] = true;
            matched[i] = Some(j);
        }
    }
    let mut out = Reconciled::default();
    for (send, m) in pending.iter().zip(matched) {
        match m {
            Some(j) => out.retired.push(Retired {
                client_message_id: send.client_message_id.clone(),
                uuid: entries[j].uuid.clone(),
                cursor: entries[j].cursor,
            }),
            None => out.still_pending.push(send.client_message_id.clone()),
        }
    }
    out
}

/// 0 when both sides know every hash and they are equal, 2 when they differ, 1 otherwise.
fn hash_rank(entry: &[Option<String>], send: &[PendingImage]) -> u8 {
    let known = |h: &Option<String>| h.as_deref().is_some_and(|h| !h.is_empty());
    if !entry.iter().all(known) || !send.iter().all(|i| known(&i.blake3)) {
        return 1;
    }
    let equal = entry
        .iter()
        .zip(send)
        .all(|(e, s)| e.as_deref().map(str::to_ascii_lowercase) == s.blake3.as_deref().map(str::to_ascii_lowercase));
    if equal { 0 } else { 2 }
}

/// Text as the transcript writer may have changed it, undone: see the module docs.
pub fn normalize(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("[Image #") {
        let after = &rest[at + "[Image #".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            out.push_str(&rest[..at]);
            let mut next = &after[digits + 1..];
            if let Some(stripped) = next.strip_prefix(' ') {
                next = stripped;
            }
            rest = next;
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    let lines: Vec<&str> = out.split('\n').map(str::trim_end).collect();
    lines.join("\n").trim().to_owned()
}

/// An RFC 3339 time in milliseconds since the epoch (what JavaScript's `Date.parse` gives).
fn parse_ms(s: &str) -> Option<i64> {
    let ts: jiff::Timestamp = s.parse().ok()?;
    Some(ts.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_undoes_what_the_transcript_writer_does() {
        assert_eq!(normalize("[Image #1] [Image #2] look\r\nhere  \n"), "look\nhere");
        assert_eq!(normalize("  spaced  "), "spaced");
        assert_eq!(normalize("[Image #x] stays"), "[Image #x] stays");
        assert_eq!(normalize("a [Image #12]b"), "a b");
    }
}
