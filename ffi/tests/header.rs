//! The committed C header is what cbindgen generates from the crate now: a change to the
//! ABI that is not in `include/salias/salias.h` fails here. `SALIAS_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn the_committed_header_is_generated_from_the_crate() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let committed_path = crate_dir.join("include/salias/salias.h");
    if std::env::var_os("SALIAS_BLESS").is_some() {
        std::fs::write(&committed_path, &generated).expect("include/salias/salias.h is writable");
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == generated,
        "ffi/include/salias/salias.h differs from what cbindgen generates from ffi/src: rerun with SALIAS_BLESS=1 and commit it"
    );
}
