//! Software prefetching, for loops that touch scattered memory at addresses known a few
//! steps ahead (building tables, counting n-grams): the loads of several steps then overlap
//! instead of each waiting for memory.

/// How many steps ahead a loop prefetches the scattered memory a step reads: enough for
/// the loads of that many steps to overlap.
pub(crate) const PREFETCH_DISTANCE: usize = 16;

/// Asks the processor to bring the cache line holding `value` into the caches; it changes
/// nothing the program sees (and does nothing on other architectures).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing the program sees, and the address is a reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
