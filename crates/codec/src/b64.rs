//! Streaming base64 decoding (the standard alphabet, padded or not) in fixed-size batches, shared by
//! the scanner (which hashes what it decodes) and the media reader (which serves it).

/// Base64 characters decoded per batch.
const BATCH: usize = 64 * 1024;

/// A base64 decoder fed characters in pieces of any size. Holds at most one group of four
/// characters between calls, and one batch of output.
#[derive(Debug, Default)]
pub struct Base64Stream {
    input: Vec<u8>,
    output: Vec<u8>,
    padded: bool,
    failed: bool,
    decoded: u64,
}

impl Base64Stream {
    /// An empty decoder.
    pub fn new() -> Base64Stream {
        Base64Stream::default()
    }

    /// Forgets everything, keeping the buffers.
    pub fn reset(&mut self) {
        self.input.clear();
        self.padded = false;
        self.failed = false;
        self.decoded = 0;
    }

    /// Whether the characters so far are not base64.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Bytes decoded so far.
    pub fn decoded(&self) -> u64 {
        self.decoded
    }

    /// Whether no character was pushed since the last reset.
    pub fn is_empty(&self) -> bool {
        self.decoded == 0 && self.input.is_empty()
    }

    /// Feeds base64 characters; decoded bytes go to `sink` a batch at a time. Whole groups of four
    /// are decoded straight from `chars`; only a group cut between two calls is copied.
    pub fn push(&mut self, mut chars: &[u8], sink: &mut impl FnMut(&[u8])) {
        if self.failed || chars.is_empty() {
            return;
        }
        if self.padded {
            // Characters after padding.
            self.failed = true;
            return;
        }
        if !self.input.is_empty() {
            let take = (4 - self.input.len()).min(chars.len());
            self.input.extend_from_slice(&chars[..take]);
            chars = &chars[take..];
            if self.input.len() < 4 {
                return;
            }
            let group = std::mem::take(&mut self.input);
            let ok = self.decode(&group, true, sink);
            self.input = group;
            self.input.clear();
            if !ok || (self.padded && !chars.is_empty()) {
                self.failed = true;
                return;
            }
        }
        let whole = chars.len() / 4 * 4;
        for batch in chars[..whole].chunks(BATCH) {
            if self.padded || !self.decode(batch, true, sink) {
                self.failed = true;
                return;
            }
        }
        if self.padded && whole < chars.len() {
            self.failed = true;
            return;
        }
        self.input.extend_from_slice(&chars[whole..]);
    }

    /// Decodes what is left. Returns `false` if the whole input was not base64.
    pub fn finish(&mut self, sink: &mut impl FnMut(&[u8])) -> bool {
        if self.failed {
            return false;
        }
        let rest = std::mem::take(&mut self.input);
        let ok = self.decode(&rest, rest.len().is_multiple_of(4), sink);
        self.input = rest;
        self.input.clear();
        ok
    }

    fn decode(&mut self, src: &[u8], padded: bool, sink: &mut impl FnMut(&[u8])) -> bool {
        if src.is_empty() {
            return true;
        }
        let engine = if padded { &base64_simd::STANDARD } else { &base64_simd::STANDARD_NO_PAD };
        self.output.resize(src.len() / 4 * 3 + 3, 0);
        match engine.decode(src, base64_simd::Out::from_slice(&mut self.output)) {
            Ok(out) => {
                self.decoded += out.len() as u64;
                sink(out);
                if src.last() == Some(&b'=') {
                    self.padded = true;
                }
                true
            }
            Err(_) => {
                self.failed = true;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(text: &[u8], piece: usize) -> Option<Vec<u8>> {
        let mut s = Base64Stream::new();
        let mut out = Vec::new();
        for p in text.chunks(piece) {
            s.push(p, &mut |d| out.extend_from_slice(d));
        }
        s.finish(&mut |d| out.extend_from_slice(d)).then_some(out)
    }

    #[test]
    fn decodes_padded_and_unpadded_in_any_pieces() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 31 % 251) as u8).collect();
        for len in [0, 1, 2, 3, 4, 5, 199_999, 200_000] {
            let padded = base64_simd::STANDARD.encode_to_string(&bytes[..len]);
            let unpadded = base64_simd::STANDARD_NO_PAD.encode_to_string(&bytes[..len]);
            for piece in [1, 5, 4096, 1 << 20] {
                assert_eq!(decode_in_pieces(padded.as_bytes(), piece).as_deref(), Some(&bytes[..len]));
                assert_eq!(decode_in_pieces(unpadded.as_bytes(), piece).as_deref(), Some(&bytes[..len]));
            }
        }
    }

    #[test]
    fn rejects_non_base64() {
        for bad in [&b"abc!"[..], b"a", b"ab=c", b"AA==AA==", b"[trimmed for fixture]"] {
            assert_eq!(decode_in_pieces(bad, 2), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
