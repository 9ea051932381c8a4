//! The C ABI of salias: C and C++ programs create, connect to and use the same
//! shared-memory channels as Rust programs, with nothing in between.
//!
//! `include/salias/salias.h` is generated from this crate by cbindgen (a test fails when the
//! committed header drifts); `include/salias/salias.hpp` wraps it for C++ with RAII handles.
//!
//! # Conventions
//!
//! - Every function returns a `salias_code`: `SALIAS_OK` (0), one of the outcomes that are
//!   not failures (`SALIAS_BACKPRESSURED`, `SALIAS_EMPTY`, `SALIAS_TIMED_OUT`), or an error
//!   code, with the sentence saying what was wrong and what to do in
//!   `salias_last_error()` (per thread, until the next failing call on that thread).
//! - Handles (`salias_channel`, `salias_publisher`, `salias_subscriber`) are opaque tokens
//!   the library looks up in a table: a handle that was freed, never made, or is of another
//!   kind is refused with `SALIAS_ERROR_BAD_HANDLE`, as is a second free. A handle may move
//!   between threads but must be used by one thread at a time (freeing it while another
//!   thread uses it cannot be detected).
//! - No panic crosses the boundary: one is caught and reported as `SALIAS_ERROR_PANIC`.

mod codes;
mod config;
mod entry;
mod handles;
mod kinds;

pub mod channel;
pub mod publisher;
pub mod status;
pub mod subscriber;

pub use codes::*;

/// The four kinds behind one interface, as the C functions use them, for bindings written
/// in Rust (the Python package): the same checks, the same busy rules for held messages
/// and claims, and failures as a code and a sentence, without the handle table.
pub mod dynamic {
    pub use crate::channel::{Expect, connect_kind, create_kind};
    pub use crate::entry::Failure;
    pub use crate::kinds::{ChannelOps, PublisherOps, SubscriberOps, View};
}
pub use config::{salias_config, salias_config_default, salias_field, salias_message_type};
pub use entry::{salias_last_error, salias_last_error_copy};
