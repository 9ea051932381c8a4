//! The bytes salias puts in shared memory: the control block and ring geometry
//! ([`layout`]) and the frames inside the rings ([`frame`]). Nothing here orders memory
//! between processes; that is `crate::protocol`'s job.

pub(crate) mod frame;
pub(crate) mod layout;
