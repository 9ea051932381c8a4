//! Compile-time rules: each file in `tests/ui/` breaks one rule, and its `.stderr` holds
//! the compiler's exact message. The messages are pinned to the toolchain in
//! `rust-toolchain.toml`; other compilers (e.g. nightly for sanitizers) skip this test.

#[rustversion::attr(not(stable(1.95)), ignore = "UI messages are pinned to stable 1.95")]
#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
