//! `cargo +nightly fuzz run shared_memory`: see `../harness.rs`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
