//! Verified, decoded photos kept in memory: a small FIFO keyed by blake3, shared by transcript
//! payloads and sent images. Only bytes already checked against their hash go in.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

/// Decoded photos kept in memory after verification, in bytes.
const CACHE_BYTES: usize = 64 << 20;
/// The largest photo kept in the cache; larger ones are streamed.
pub(crate) const CACHE_ENTRY_MAX: usize = 16 << 20;

/// A small FIFO cache of verified, decoded photos, keyed by blake3.
#[derive(Default)]
pub(crate) struct Cache {
    map: HashMap<String, Bytes>,
    order: VecDeque<String>,
    total: usize,
}

impl Cache {
    pub(crate) fn get(&self, key: &str) -> Option<Bytes> {
        self.map.get(key).cloned()
    }

    pub(crate) fn put(&mut self, key: String, bytes: Bytes) {
        if bytes.len() > CACHE_ENTRY_MAX || self.map.contains_key(&key) {
            return;
        }
        while self.total + bytes.len() > CACHE_BYTES {
            let Some(old) = self.order.pop_front() else { break };
            if let Some(b) = self.map.remove(&old) {
                self.total -= b.len();
            }
        }
        self.total += bytes.len();
        self.order.push_back(key.clone());
        self.map.insert(key, bytes);
    }
}
