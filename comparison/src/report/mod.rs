//! What the comparison writes: the raw data's header and records, and the summary on
//! stdout.

pub mod header;
pub mod records;
pub mod summary;
