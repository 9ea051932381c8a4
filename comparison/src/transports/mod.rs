//! The systems compared, one file each: their ends, as `transport.rs` names them, and
//! the shared objects their parent creates.

pub mod aeron;
pub mod iceoryx2;
pub mod salias;
