//! The scanner under AFL++: every input is one transcript line, checked against the same oracle as
//! the property test and the corpus replay in `cargo test` (`crates/core/tests/scanner/scan_oracle.rs`), in every
//! chunking it tries. A disagreement panics, which AFL++ records as a crash.

#[path = "../crates/core/tests/scanner/scan_oracle.rs"]
mod scan_oracle;

fn main() {
    afl::fuzz!(|line: &[u8]| {
        scan_oracle::check(line);
    });
}
