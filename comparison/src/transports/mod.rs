//! The systems compared, one file each: what their publisher, subscriber, pinger, ponger
//! and open-loop processes do.

pub mod aeron;
pub mod iceoryx2;
pub mod salias;
