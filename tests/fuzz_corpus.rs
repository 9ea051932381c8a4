//! Replays the committed fuzz corpus (`fuzz/corpus/shared_memory`) and a set of seeds
//! aimed at every protocol field, through the same harness the fuzzer runs: damaged shared
//! memory must produce errors, never a panic, crash or hang.
#![cfg(target_os = "linux")]

#[path = "../fuzz/harness.rs"]
mod harness;

#[test]
fn corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/shared_memory");
    let mut inputs = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus is committed") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        harness::run(&data);
        inputs += 1;
    }
    assert!(inputs > 0, "empty corpus in {}", dir.display());
    println!("replayed {inputs} corpus inputs");
}

#[test]
fn every_protocol_field_with_hostile_values() {
    let values = [
        0u64,
        1,
        3,
        7,
        4095,
        4096,
        1 << 40,
        (1 << 62) - 8,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut runs = 0;
    for kind in 0u8..4 {
        for offset in harness::interesting_offsets() {
            for value in values {
                // head: kind, and 20 messages; then one control-block patch.
                let mut data = vec![kind | 20 << 2, 0];
                data.extend_from_slice(&(offset as u16).to_le_bytes());
                data.extend_from_slice(&value.to_le_bytes());
                harness::run(&data);
                runs += 1;
            }
        }
        // And frame headers: the first frames' commit words, lengths and sequences.
        for offset in [0u16, 8, 16, 24, 40, 48] {
            for value in values {
                let mut data = vec![kind | 20 << 2, 1];
                data.extend_from_slice(&offset.to_le_bytes());
                data.extend_from_slice(&value.to_le_bytes());
                harness::run(&data);
                runs += 1;
            }
        }
    }
    println!("{runs} targeted inputs");
}
