//! Block places: where a format's image blocks are numbered, and the block shapes only some
//! formats write ([`BlockPlaces`], handed in by the format), and where an open object or array sits
//! as to them ([`Role`]).
//!
//! The scanner knows no format: the key paths come from the formats (`scrollback-core`), and nothing here names
//! one.

use super::keys::MAX_KEY;

/// Where a format's image blocks are numbered: key paths from the line's top-level object, such as
/// `message.content` (`Format::block_places`, in `scrollback-core`). Image blocks at or below one of them
/// get ordinals; image blocks elsewhere are stripped all the same, without one.
///
/// With them, the format declares the block shapes of its own the scanner should know
/// ([`BlockPlaces::with_url_images`]): the scanner names no agent.
#[derive(Debug)]
pub struct BlockPlaces {
    paths: &'static [&'static [&'static str]],
    url_images: &'static [&'static str],
}

impl BlockPlaces {
    /// No place: no image block gets an ordinal (a scanner's value before it is told its format's).
    pub const NOWHERE: BlockPlaces = BlockPlaces { paths: &[], url_images: &[] };

    /// The places `paths` (at most 8, each of 1 to 255 keys of at most 16 bytes).
    pub const fn new(paths: &'static [&'static [&'static str]]) -> BlockPlaces {
        assert!(!paths.is_empty() && paths.len() <= 8, "1 to 8 places");
        let mut i = 0;
        while i < paths.len() {
            assert!(!paths[i].is_empty() && paths[i].len() < 256, "a place is 1 to 255 keys");
            let mut k = 0;
            while k < paths[i].len() {
                assert!(paths[i][k].len() <= MAX_KEY, "a place's keys are at most 16 bytes");
                k += 1;
            }
            i += 1;
        }
        BlockPlaces { paths, url_images: &[] }
    }

    /// These places, where an object whose `type` is one of `types` is an image block when a
    /// payload in it is a data URL of an image's type (OpenCode's file part, `{type: "file", mime,
    /// url: "data:image/png;base64,…"}`), and else no block. Every format's scanner knows the
    /// shapes of the APIs' own image blocks (`image`, `image_url`, `input_image`, and bytes beside
    /// an image's `mimeType`); a shape only some agents write is declared here by their formats.
    pub const fn with_url_images(self, types: &'static [&'static str]) -> BlockPlaces {
        BlockPlaces { paths: self.paths, url_images: types }
    }

    /// The block types whose image is known by its data URL's type ([`BlockPlaces::with_url_images`]).
    pub fn url_images(&self) -> &'static [&'static str] {
        self.url_images
    }

    /// The places, as key paths.
    pub fn paths(&self) -> &'static [&'static [&'static str]] {
        self.paths
    }

    /// Every place, as a mask (bit `i` for path `i`).
    pub(super) fn all(&self) -> u8 {
        ((1u16 << self.paths.len()) - 1) as u8
    }

    /// Of the places in `mask`, those whose key at `depth` is `key`.
    pub(super) fn next(&self, mask: u8, depth: usize, key: &[u8]) -> u8 {
        let mut out = 0;
        for (i, path) in self.paths.iter().enumerate() {
            if mask & (1 << i) != 0 && path.get(depth).is_some_and(|k| k.as_bytes() == key) {
                out |= 1 << i;
            }
        }
        out
    }

    /// Whether one of the places in `mask` is `keys` keys long (ends at that depth).
    pub(super) fn ends(&self, mask: u8, keys: usize) -> bool {
        self.paths.iter().enumerate().any(|(i, path)| mask & (1 << i) != 0 && path.len() == keys)
    }
}

/// Where an object or array sits in the line, as to the block places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// An object on the way to a block place: the places (bit `i` for path `i`) whose first keys,
    /// as many as this frame is deep, lead here. The top-level value is on the way to all.
    Along(u8),
    /// At or below a block place.
    InPlace,
    /// Anywhere else.
    Other,
}
