//! The bytes salias puts in shared memory: the control block and ring geometry
//! ([`layout`]), the frame format ([`frame`]), a typed channel's field table ([`fields`]), the ring views through which every access
//! to a ring is made ([`ring`]), and the control block's view, through which every
//! reference into it is formed ([`control`]). Nothing here orders memory between processes;
//! that is `crate::protocol`'s job. This layer uses nothing else of the crate but the
//! cache hints of `crate::prefetch`.

pub(crate) mod control;
pub(crate) mod fields;
pub(crate) mod frame;
pub(crate) mod layout;
pub(crate) mod ring;
