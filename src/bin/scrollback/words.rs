//! Counts in words, as the commands print them: `1 session`, `2 sessions`, `1 entry`, `3 entries`.
//! It only makes words; it prints nothing.

/// `n` and `noun`, the noun made plural unless `n` is one: `y` after a consonant becomes `ies`,
/// a noun ending in `s`, `x` or `ch` takes `es`, any other takes `s`.
pub(crate) fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        return format!("{n} {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// `noun`, plural.
fn plural(noun: &str) -> String {
    if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if noun.ends_with(['s', 'x']) || noun.ends_with("ch") {
        return format!("{noun}es");
    }
    format!("{noun}s")
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_any_other_count_plural() {
        assert_eq!(count(1u64, "session"), "1 session");
        assert_eq!(count(0u64, "session"), "0 sessions");
        assert_eq!(count(2i64, "photo"), "2 photos");
        assert_eq!(count(1usize, "entry"), "1 entry");
        assert_eq!(count(3usize, "entry"), "3 entries");
        assert_eq!(count(2u64, "key"), "2 keys");
        assert_eq!(count(2u64, "match"), "2 matches");
        assert_eq!(count(2u64, "invalid line"), "2 invalid lines");
    }
}
