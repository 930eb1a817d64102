//! Stored lines, packed: each line the index keeps is a zstd frame compressed with a dictionary
//! trained on the index's own first lines (JSON lines of one agent share most of their keys and
//! phrasing, so a line of a kilobyte packs to a fraction of it: docs/schema.md, "Stored lines").
//!
//! A frame names its dictionary (zstd writes the dictionary's id in the frame's header) and carries
//! the checksum of its content, so a line is never unpacked with another dictionary than its own,
//! and a damaged frame is an error, never other text. Packing is deterministic: the same line packed
//! with the same dictionary is the same bytes.
//!
//! Dictionaries are known to the process by id ([`remember`]); [`unpack`] asks its caller for one it
//! does not know. No I/O here: the caller (the database layer) reads dictionaries.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

/// The compression level lines are packed at: zstd's default, about 300 MB/s per core with a
/// dictionary, within a few percent of the size of higher levels on transcripts' lines.
pub const LEVEL: i32 = 3;
/// The largest dictionary trained, in bytes (zstd's own default).
pub const DICTIONARY_BYTES: usize = 112 << 10;
/// The longest line unpacked, in bytes: a frame that says more is refused as damaged. (The index
/// stores no line longer than 16 MiB.)
pub const MAX_UNPACKED: u64 = 64 << 20;

/// A trained dictionary: its id (the one zstd writes in each frame) and its bytes.
#[derive(Clone)]
pub struct Dictionary {
    id: u32,
    bytes: Arc<[u8]>,
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dictionary").field("id", &self.id).field("bytes", &self.bytes.len()).finish()
    }
}

/// Why a dictionary could not be made or a line could not be packed or unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError(pub String);

impl std::fmt::Display for PackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PackError {}

impl Dictionary {
    /// Trains a dictionary on `samples` (stored lines). Fails if they are too few or too alike
    /// for zstd to find anything to share.
    pub fn train<S: AsRef<[u8]>>(samples: &[S]) -> Result<Dictionary, PackError> {
        let bytes = zstd::dict::from_samples(samples, DICTIONARY_BYTES)
            .map_err(|e| PackError(format!("no dictionary could be trained: {e}")))?;
        Dictionary::from_bytes(bytes)
    }

    /// The dictionary whose bytes are `bytes` (as the `dictionaries` table keeps them).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Dictionary, PackError> {
        let id = zstd::zstd_safe::get_dict_id_from_dict(&bytes)
            .ok_or_else(|| PackError("not a zstd dictionary (it has no id)".into()))?;
        Ok(Dictionary { id: id.get(), bytes: bytes.into() })
    }

    /// Its id, as each frame packed with it names it.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// `line`, packed: a zstd frame with its content's size and checksum, naming `dictionary` if it
/// was packed with one (a line packed without one needs none to be unpacked).
pub fn pack(dictionary: Option<&Dictionary>, line: &str) -> Result<Vec<u8>, PackError> {
    let id = dictionary.map_or(0, |d| d.id);
    PACKERS.with(|packers| {
        let mut packers = packers.borrow_mut();
        if packers.as_ref().is_none_or(|(made_for, _)| *made_for != id) {
            let bytes = dictionary.map_or(&[][..], |d| &d.bytes);
            let mut compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, bytes).map_err(zstd_error)?;
            compressor.include_checksum(true).map_err(zstd_error)?;
            compressor.include_contentsize(true).map_err(zstd_error)?;
            compressor.include_dictid(true).map_err(zstd_error)?;
            *packers = Some((id, compressor));
        }
        let (_, compressor) = packers.as_mut().expect("just made");
        compressor.compress(line.as_bytes()).map_err(zstd_error)
    })
}

fn zstd_error(e: std::io::Error) -> PackError {
    PackError(format!("zstd: {e}"))
}

thread_local! {
    /// This thread's compressor, for the dictionary it was last asked for (0: none).
    static PACKERS: RefCell<Option<(u32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    /// This thread's decompressors, by dictionary id (0: none).
    static UNPACKERS: RefCell<HashMap<u32, zstd::bulk::Decompressor<'static>>> = RefCell::new(HashMap::new());
}

/// The dictionaries this process knows, by id.
static KNOWN: LazyLock<Mutex<HashMap<u32, Dictionary>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Makes `dictionary` known to the process, so that lines packed with it can be unpacked.
pub fn remember(dictionary: &Dictionary) {
    KNOWN.lock().unwrap_or_else(PoisonError::into_inner).insert(dictionary.id, dictionary.clone());
}

/// Whether the process knows the dictionary `id`.
pub fn known(id: u32) -> bool {
    KNOWN.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&id)
}

/// The id of the dictionary `frame` was packed with, if it names one.
pub fn dictionary_of(frame: &[u8]) -> Option<u32> {
    zstd::zstd_safe::get_dict_id_from_frame(frame).map(|id| id.get())
}

/// Unpacks a stored line. A dictionary the process does not know yet is asked of `load` (by id)
/// and remembered; the frame's checksum is verified.
pub fn unpack(
    frame: &[u8],
    load: impl FnOnce(u32) -> Result<Option<Dictionary>, PackError>,
) -> Result<String, PackError> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size <= MAX_UNPACKED => size as usize,
        Ok(Some(size)) => return Err(PackError(format!("a packed line says it is {size} bytes, over the limit"))),
        Ok(None) | Err(_) => return Err(PackError("not a packed line, or a damaged one (no size)".into())),
    };
    let id = dictionary_of(frame).unwrap_or(0);
    if id != 0 && !known(id) {
        let dictionary =
            load(id)?.ok_or_else(|| PackError(format!("a packed line's dictionary {id} is not in the index")))?;
        if dictionary.id != id {
            return Err(PackError(format!("dictionary {} was given for {id}", dictionary.id)));
        }
        remember(&dictionary);
    }
    let bytes = UNPACKERS.with(|unpackers| {
        let mut unpackers = unpackers.borrow_mut();
        let decompressor = match unpackers.entry(id) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let bytes = match id {
                    0 => Arc::from(&[][..]),
                    _ => KNOWN
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(&id)
                        .map(|d| d.bytes.clone())
                        .ok_or_else(|| PackError(format!("dictionary {id} is not known")))?,
                };
                slot.insert(zstd::bulk::Decompressor::with_dictionary(&bytes).map_err(zstd_error)?)
            }
        };
        decompressor.decompress(frame, size).map_err(zstd_error)
    })?;
    if bytes.len() != size {
        return Err(PackError(format!("a packed line of {} bytes says it is {size}", bytes.len())));
    }
    String::from_utf8(bytes).map_err(|e| PackError(format!("a packed line is not UTF-8: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                format!(
                    r#"{{"type":"user","uuid":"u{i}","sessionId":"s","timestamp":"2026-12-03T10:{:02}:{:02}.000Z","message":{{"role":"user","content":"line {i} of {n}: {}"}}}}"#,
                    i / 60 % 60,
                    i % 60,
                    "word ".repeat(i % 17)
                )
            })
            .collect()
    }

    #[test]
    fn a_line_packs_smaller_and_unpacks_to_itself_deterministically() {
        let samples = lines(2000);
        let dictionary = Dictionary::train(&samples).unwrap();
        let again = Dictionary::from_bytes(dictionary.bytes().to_vec()).unwrap();
        assert_eq!(again.id(), dictionary.id());
        let line = &samples[1234];
        let packed = pack(Some(&dictionary), line).unwrap();
        assert!(packed.len() * 3 < line.len(), "{} bytes packed to {}", line.len(), packed.len());
        assert_eq!(pack(Some(&dictionary), line).unwrap(), packed, "the same line packs to the same bytes");
        assert_eq!(dictionary_of(&packed), Some(dictionary.id()));
        // Unknown to the process: the loader is asked once, then the dictionary is remembered.
        let mut asked = 0;
        let unpacked = unpack(&packed, |id| {
            asked += 1;
            Ok((id == dictionary.id()).then(|| dictionary.clone()))
        })
        .unwrap();
        assert_eq!(&unpacked, line);
        assert!(asked <= 1);
        assert_eq!(unpack(&packed, |_| panic!("known by now")).unwrap(), *line);
        // The empty line too; and a line packed without a dictionary needs none.
        assert_eq!(unpack(&pack(Some(&dictionary), "").unwrap(), |_| Ok(None)).unwrap(), "");
        let plain = pack(None, line).unwrap();
        assert_eq!(dictionary_of(&plain), None);
        assert!(plain.len() < line.len());
        assert_eq!(unpack(&plain, |_| panic!("no dictionary to load")).unwrap(), *line);
    }

    #[test]
    fn a_damaged_frame_or_a_missing_dictionary_is_an_error_never_other_text() {
        let samples = lines(1500);
        let dictionary = Dictionary::train(&samples).unwrap();
        remember(&dictionary);
        let packed = pack(Some(&dictionary), &samples[7]).unwrap();
        for at in [packed.len() - 1, packed.len() / 2, 10] {
            let mut damaged = packed.clone();
            damaged[at] ^= 0x20;
            if let Ok(text) = unpack(&damaged, |_| Ok(None)) {
                panic!("a frame damaged at {at} unpacked to {text:?}");
            }
        }
        assert!(unpack(&packed[..packed.len() - 3], |_| Ok(None)).is_err(), "a cut frame");
        assert!(unpack(b"not a frame at all", |_| Ok(None)).is_err());
        // A frame whose dictionary nobody has.
        let other =
            Dictionary::train(&lines(1700).iter().map(|l| l.replace("user", "assistant")).collect::<Vec<_>>()).unwrap();
        if !known(other.id()) {
            let err = unpack(&pack(Some(&other), "x").unwrap(), |_| Ok(None)).unwrap_err();
            assert!(err.0.contains("not in the index"), "{err}");
        }
    }
}
