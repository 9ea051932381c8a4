//! The machine's floors: a minimal SPSC ring in a shared mapping (throughput), and the
//! bare cache-line and the 64-byte message ping-pong (latency).

pub mod latency;
pub mod spsc;
