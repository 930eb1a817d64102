//! The scanner against its oracle, in the crate the scanner lives in: generated lines of every
//! agent's format (`prop`), and the fuzzer's committed corpus and regressions (`fuzz_corpus`),
//! each checked by `scan_oracle`, which the fuzz target (`fuzz/scan.rs`) includes too.

mod fuzz_corpus;
mod prop;
mod scan_oracle;
