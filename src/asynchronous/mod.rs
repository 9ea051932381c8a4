//! The `tokio` feature: subscribers and publishers that wait in a tokio runtime.
//!
//! Each handle's readiness descriptor (its `AsFd`) is watched by tokio's reactor through
//! `AsyncFd`; the handle keeps that registration (`readiness::reactor`, one layer down, so
//! the handles do not reach up here), and `receive`, `send` and `stream` (subscribers as
//! `futures_core::Stream`s) are the API on top.
//! Nothing here is on the handles' synchronous paths: a handle that is never awaited never
//! registers.

mod receive;
mod send;
mod stream;
