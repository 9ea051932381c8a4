//! How a role's report crosses from a child process to its parent as JSON: a histogram as
//! its recorded buckets, a stream hash as its count and hash. The library's types stay
//! free of serde; these are the `#[serde(with = ...)]` adapters.

/// A histogram as `support::hist::Buckets` (`[[value, count], ...]`).
pub mod histogram {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use support::hist::Buckets;

    pub fn serialize<S: Serializer>(h: &Histogram<u64>, serializer: S) -> Result<S::Ok, S::Error> {
        Buckets::of(h).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Histogram<u64>, D::Error> {
        Buckets::deserialize(deserializer).map(|buckets| buckets.to_histogram())
    }
}

/// `matching_engine::WireHash` as `{"count": .., "hash": ..}`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(remote = "matching_engine::WireHash")]
pub struct WireHashDef {
    pub count: u64,
    pub hash: u64,
}
