//! Serde helpers for reading a transcript line loosely, borrowing from it: each accepts any JSON
//! value, reads the shape it expects, and skips (validates, but does not keep) any other, which
//! then counts as absent. A field of an unexpected type never makes a line invalid.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A string borrowed from the line where it has no escapes.
pub(crate) type Str<'a> = Option<Cow<'a, str>>;

/// Implements the scalar visits of a visitor whose value is `Default` for anything unexpected, and
/// its `expecting`: every visitor here accepts any JSON value.
macro_rules! skip_scalars {
    () => {
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_strings {
    () => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_seq {
    () => {
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

macro_rules! skip_containers {
    () => {
        skip_seq!();
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

/// An object's key, borrowed from the line unless it has escapes.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string value, or nothing for any other JSON value.
pub(crate) struct LooseStr<'a>(pub(crate) Str<'a>);

impl<'de> Deserialize<'de> for LooseStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(s.to_owned())))
            }
            skip_scalars!();
            skip_containers!();
        }
        d.deserialize_any(V).map(LooseStr)
    }
}

/// `true`, or `false` for any other JSON value.
pub(crate) struct LooseTrue(pub(crate) bool);

impl<'de> Deserialize<'de> for LooseTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = bool;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<bool, E> {
                Ok(b)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
                Ok(false)
            }
            skip_strings!();
            skip_containers!();
        }
        d.deserialize_any(V).map(LooseTrue)
    }
}

pub(crate) use {skip_scalars, skip_seq, skip_strings};
