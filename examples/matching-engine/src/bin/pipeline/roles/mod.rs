//! The roles of a run, written once over the transport traits: each system runs these
//! same functions, in processes (salias) or threads (the baselines).

pub mod engine;
pub mod gateway;
pub mod subscriber;
