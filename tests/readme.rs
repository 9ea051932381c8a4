//! The README's two-process hello world is the code of `examples/hello_subscriber.rs` and
//! `examples/hello_publisher.rs`, to the letter: the examples compile with the crate and
//! CI runs them, so the README cannot drift from code that works.

#[test]
fn the_readmes_hello_world_is_the_examples_code() {
    let readme = include_str!("../README.md");
    for (name, code) in [
        ("hello_subscriber", include_str!("../examples/hello_subscriber.rs")),
        ("hello_publisher", include_str!("../examples/hello_publisher.rs")),
    ] {
        let block = format!("```rust,no_run\n{code}```");
        assert!(
            readme.contains(&block),
            "README.md's block for examples/{name}.rs differs from the file; make them the same"
        );
    }
}
