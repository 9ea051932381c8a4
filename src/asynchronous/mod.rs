//! The `tokio` feature: subscribers and publishers that wait in a tokio runtime.
//!
//! Each handle's readiness descriptor (its `AsFd`) is watched by tokio's reactor through
//! `AsyncFd`; `reactor` keeps that registration, `receive` and `send` are the API on top.
//! Nothing here is on the handles' synchronous paths: a handle that is never awaited never
//! registers.

mod reactor;
mod receive;
mod send;

pub(crate) use reactor::Reactor;
