//! Cache hints: asking this core for a line before the code reaches it, so that the
//! transfer overlaps other work. Elsewhere than x86-64 and AArch64 they do nothing.

/// Asks for the line holding `at` for reading (x86 `prefetcht0`, AArch64 `prfm
/// pldl1keep`).
#[inline(always)]
pub(crate) fn for_read(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching has no preconditions and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: PRFM is a hint: it never faults, whatever the address, reads no memory the
    // program can observe and changes no register or flag.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{line}]", line = in(reg) at, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = at;
}

/// Asks for the line holding `at` in a state this core may write (x86 `prefetchw`,
/// AArch64 `prfm pstl1keep`).
#[inline(always)]
pub(crate) fn for_write(at: *const u8) {
    // SAFETY: a prefetch is a hint: it never faults, even on an unmapped address, and
    // changes no memory or register the program sees. x86 CPUs without PRFCHW execute
    // `prefetchw` as a no-op.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) at, options(nostack, preserves_flags, readonly));
    }
    // SAFETY: as for `for_read`, PRFM is a hint, whichever kind of access it names.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!("prfm pstl1keep, [{0}]", in(reg) at, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = at;
}
