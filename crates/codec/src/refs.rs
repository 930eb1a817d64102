//! How a payload is named: by ref (`<sessionId>/<entryUuid>/<ordinal>`, an image block's place in
//! its entry) or by the blake3 of its decoded bytes. The one home of both formats: refs are parsed,
//! printed and checked here, and nowhere else. A name is looked up in the index, never turned into
//! a path.

/// A name that is neither a media ref nor a content hash, as the caller wrote it (shortened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefError {
    /// A media ref is malformed.
    BadRef(String),
    /// A content hash is malformed.
    BadHash(String),
}

impl std::fmt::Display for RefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefError::BadRef(s) => write!(f, "bad media ref {s:?}: expected <sessionId>/<entryUuid>/<ordinal>"),
            RefError::BadHash(s) => write!(f, "{s:?} is not a blake3 hash (64 hex digits)"),
        }
    }
}

impl std::error::Error for RefError {}

type Result<T, E = RefError> = std::result::Result<T, E>;

/// A media ref: `<sessionId>/<entryUuid>/<ordinal>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MediaRef {
    /// The session.
    pub session_id: String,
    /// The entry's `uuid`.
    pub entry_uuid: String,
    /// The image ordinal under `message.content`.
    pub ordinal: u32,
}

/// The longest session id or entry uuid a ref may carry.
pub const MAX_ID: usize = 256;

/// Whether `s` can be a ref's session id or entry uuid: not empty, at most [`MAX_ID`] bytes, no
/// slash, backslash or NUL, and not a dot segment.
pub fn is_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_ID && !s.contains(['\0', '/', '\\']) && s != "." && s != ".."
}

impl std::str::FromStr for MediaRef {
    type Err = RefError;

    fn from_str(s: &str) -> Result<MediaRef> {
        let bad = || RefError::BadRef(s.chars().take(200).collect());
        let mut parts = s.split('/');
        let (Some(session), Some(uuid), Some(ordinal), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if !is_id(session) || !is_id(uuid) || ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        Ok(MediaRef {
            session_id: session.to_owned(),
            entry_uuid: uuid.to_owned(),
            ordinal: ordinal.parse().map_err(|_| bad())?,
        })
    }
}

impl std::fmt::Display for MediaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.session_id, self.entry_uuid, self.ordinal)
    }
}

/// The blake3 of a payload's decoded bytes, as 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(String);

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> ContentHash {
        ContentHash(blake3::hash(bytes).to_hex().to_string())
    }

    /// The hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for ContentHash {
    type Err = RefError;

    /// Accepts 64 hex digits in either case.
    fn from_str(s: &str) -> Result<ContentHash> {
        if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(ContentHash(s.to_ascii_lowercase()))
        } else {
            Err(RefError::BadHash(s.chars().take(80).collect()))
        }
    }
}

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A payload's name: by ref, or by hash. [`MediaName::parse`] tells them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaName {
    /// An image block's ref.
    Ref(MediaRef),
    /// The blake3 of the bytes.
    Hash(ContentHash),
}

impl MediaName {
    /// 64 hex digits are a hash; anything else must be a ref.
    pub fn parse(s: &str) -> Result<MediaName> {
        match s.parse::<ContentHash>() {
            Ok(hash) => Ok(MediaName::Hash(hash)),
            Err(_) => s.parse().map(MediaName::Ref),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_parse_strictly_and_print_back() {
        let r: MediaRef = "s-1/u-2/3".parse().unwrap();
        assert_eq!((r.session_id.as_str(), r.entry_uuid.as_str(), r.ordinal), ("s-1", "u-2", 3));
        assert_eq!(r.to_string(), "s-1/u-2/3");
        for bad in ["", "a/b", "a/b/c", "a/b/-1", "a/b/1/2", "../b/1", "a//1", "a/b/99999999999", "a\0/b/1"] {
            assert!(bad.parse::<MediaRef>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hashes_are_64_hex_digits_folded_to_lowercase() {
        let upper = "AB".repeat(32);
        assert_eq!(upper.parse::<ContentHash>().unwrap().as_str(), "ab".repeat(32));
        for bad in ["", "ab", &"g".repeat(64), &"a".repeat(65)] {
            assert!(bad.parse::<ContentHash>().is_err(), "{bad:?}");
        }
        assert!(matches!(MediaName::parse(&"0".repeat(64)), Ok(MediaName::Hash(_))));
        assert!(matches!(MediaName::parse("s/u/0"), Ok(MediaName::Ref(_))));
        assert!(MediaName::parse("nonsense").is_err());
    }
}
