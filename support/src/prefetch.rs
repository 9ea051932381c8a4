//! The prefetches salias makes (`src/prefetch.rs`, x86-64 here), written again because
//! this crate does not depend on salias; the floors that mirror salias's stores use them.

/// Asks for ownership of the line holding `at`, ahead of a write.
#[inline(always)]
pub fn for_write(at: *const u8) {
    // SAFETY: a prefetch is a hint: it never faults, whatever the address, and changes no
    // memory or register the program sees; CPUs without PRFCHW execute `prefetchw` as a
    // no-op.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) at, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Asks for the line holding `at`, ahead of a read.
#[inline(always)]
pub fn for_read(at: *const u8) {
    // SAFETY: as for `for_write`: a hint with no preconditions.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
