//! Stripping and restoring: the stored line is the line with each payload's bytes replaced by
//! [`STRIPPED_MEDIA_MARKER`] ([`strip`]), and [`restore`] puts them back. Where each marker lands in
//! the stored line follows from the payloads' extents alone ([`marker_offsets`], the one place that
//! shift is computed).
//!
//! It never reads a payload itself: [`restore`] is handed each payload's bytes.

use super::output::{Extent, Span};

/// The text that replaces every payload in a stored line.
pub const STRIPPED_MEDIA_MARKER: &str = "STRIPPED_MEDIA_MARKER";

/// Builds the stored line: `line` with each span's bytes replaced by the marker.
pub fn strip(line: &[u8], spans: &[Span]) -> Vec<u8> {
    let removed: u64 = spans.iter().map(|s| s.len).sum();
    let mut out = Vec::with_capacity(line.len() - removed as usize + spans.len() * STRIPPED_MEDIA_MARKER.len());
    let mut at = 0usize;
    for span in spans {
        out.extend_from_slice(&line[at..span.offset as usize]);
        out.extend_from_slice(STRIPPED_MEDIA_MARKER.as_bytes());
        at = (span.offset + span.len) as usize;
    }
    out.extend_from_slice(&line[at..]);
    out
}

/// Where each payload's marker starts in the stripped line, given the payloads' extents in the
/// original line, in order.
pub fn marker_offsets(payloads: impl IntoIterator<Item = Extent>) -> impl Iterator<Item = u64> {
    let mut shift: i64 = 0;
    payloads.into_iter().map(move |extent| {
        let at = (extent.offset as i64 + shift) as u64;
        shift += STRIPPED_MEDIA_MARKER.len() as i64 - extent.len as i64;
        at
    })
}

/// Puts payloads back into a stored line. `payload(i)` returns the original bytes of span `i`.
/// Fails if the stored line has no marker where a span says it should.
pub fn restore(stripped: &[u8], spans: &[Span], mut payload: impl FnMut(usize) -> Vec<u8>) -> Option<Vec<u8>> {
    let marker = STRIPPED_MEDIA_MARKER.as_bytes();
    let mut out = Vec::with_capacity(stripped.len());
    let mut at = 0usize;
    for (i, start) in marker_offsets(spans.iter().map(Span::extent)).enumerate() {
        let start = start as usize;
        if stripped.get(start..start + marker.len())? != marker || start < at {
            return None;
        }
        out.extend_from_slice(&stripped[at..start]);
        out.extend_from_slice(&payload(i));
        at = start + marker.len();
    }
    out.extend_from_slice(&stripped[at..]);
    Some(out)
}
