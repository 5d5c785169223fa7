//! A growable buffer of plain values whose memory, when it spans 2 MiB pages, is mapped fresh
//! from the system, starts on such a page and is offered to the kernel's transparent huge
//! pages: the kernel hands it over in 2 MiB pieces instead of 4 KiB ones (a table built or read
//! from a file touches all of it), and a table read at random needs a few address
//! translations instead of one per 4 KiB page (the processor's translation cache holds those
//! of a few megabytes only).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

const HUGE_PAGE: usize = 2 << 20;

/// Values of a type with no destructor, in one allocation (see the module's documentation).
pub struct PageBuffer<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    capacity: usize,
}

// SAFETY: the buffer owns its values as a Vec would.
unsafe impl<T: Copy + Send> Send for PageBuffer<T> {}
// SAFETY: shared access only reads, as for a Vec.
unsafe impl<T: Copy + Sync> Sync for PageBuffer<T> {}

impl<T: Copy> PageBuffer<T> {
    /// `len` copies of `value`, with room for `capacity` values (at least `len`).
    pub fn filled(value: T, len: usize, capacity: usize) -> Self {
        let capacity = capacity.max(len).max(1);
        let ptr = Self::allocate(capacity);
        for i in 0..len {
            // SAFETY: i < capacity, within the allocation.
            unsafe { ptr.as_ptr().add(i).write(value) };
        }
        PageBuffer { ptr, len, capacity }
    }

    fn layout(capacity: usize) -> Layout {
        let size = capacity.saturating_mul(std::mem::size_of::<T>()).max(1);
        match Layout::from_size_align(size, std::mem::align_of::<T>()) {
            Ok(layout) => layout,
            Err(_) => handle_alloc_error(Layout::new::<T>()),
        }
    }

    fn allocate(capacity: usize) -> NonNull<T> {
        let layout = Self::layout(capacity);
        let ptr = if layout.size() >= HUGE_PAGE {
            huge::map(layout.size())
        } else {
            // SAFETY: the layout's size is not zero.
            unsafe { alloc(layout) }
        };
        match NonNull::new(ptr.cast::<T>()) {
            Some(ptr) => ptr,
            None => handle_alloc_error(layout),
        }
    }

    /// Frees an allocation of `allocate(capacity)`.
    ///
    /// # Safety
    /// `ptr` comes from `allocate(capacity)` and is freed once.
    unsafe fn free(ptr: NonNull<T>, capacity: usize) {
        let layout = Self::layout(capacity);
        if layout.size() >= HUGE_PAGE {
            huge::unmap(ptr.as_ptr().cast(), layout.size());
        } else {
            dealloc(ptr.as_ptr().cast(), layout);
        }
    }

    /// Appends `value`, moving the values to a larger allocation when full.
    pub fn push(&mut self, value: T) {
        if self.len == self.capacity {
            let capacity = self.capacity * 2;
            let ptr = Self::allocate(capacity);
            // SAFETY: both allocations hold at least `len` values and do not overlap; the old
            // one is freed once.
            unsafe {
                std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), ptr.as_ptr(), self.len);
                Self::free(self.ptr, self.capacity);
            }
            self.ptr = ptr;
            self.capacity = capacity;
        }
        // SAFETY: len < capacity, within the allocation.
        unsafe { self.ptr.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }
}

/// Memory of its own, mapped from the system: fresh pages, which the kernel can back with
/// huge pages from the start.
#[cfg(unix)]
mod huge {
    use super::HUGE_PAGE;

    /// `size` bytes starting on a huge page (null if the system has none to give).
    pub(super) fn map(size: usize) -> *mut u8 {
        let Some(mapped_size) = size.checked_add(HUGE_PAGE) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a new private anonymous mapping; nothing else is touched.
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped_size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let start = (mapped as usize).next_multiple_of(HUGE_PAGE);
        let end = start + size;
        // SAFETY: the parts of our mapping before `start` and after `end` (whole pages: the
        // mapping is page-aligned and `end` is rounded up to a page), unused; the advice
        // changes no contents.
        unsafe {
            let page = page_size();
            let end_page = end.next_multiple_of(page);
            if start > mapped as usize {
                libc::munmap(mapped, start - mapped as usize);
            }
            if mapped as usize + mapped_size > end_page {
                libc::munmap(
                    end_page as *mut libc::c_void,
                    mapped as usize + mapped_size - end_page,
                );
            }
            #[cfg(target_os = "linux")]
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        }
        start as *mut u8
    }

    /// Unmaps what `map(size)` returned.
    ///
    /// # Safety
    /// `ptr` comes from `map(size)` and is unmapped once.
    pub(super) unsafe fn unmap(ptr: *mut u8, size: usize) {
        libc::munmap(ptr.cast(), size.next_multiple_of(page_size()));
    }

    fn page_size() -> usize {
        // SAFETY: sysconf only reads a setting.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size).unwrap_or(4096).max(1)
    }
}

/// Elsewhere, the standard allocator.
#[cfg(not(unix))]
mod huge {
    use std::alloc::{alloc, dealloc, Layout};

    pub(super) fn map(size: usize) -> *mut u8 {
        match Layout::from_size_align(size, super::HUGE_PAGE) {
            // SAFETY: the size is not zero.
            Ok(layout) => unsafe { alloc(layout) },
            Err(_) => std::ptr::null_mut(),
        }
    }

    pub(super) unsafe fn unmap(ptr: *mut u8, size: usize) {
        if let Ok(layout) = Layout::from_size_align(size, super::HUGE_PAGE) {
            dealloc(ptr, layout);
        }
    }
}

impl<T: Copy> Deref for PageBuffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` values are initialised.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for PageBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: the first `len` values are initialised, and `self` is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for PageBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by `allocate(capacity)`, freed once.
        unsafe { Self::free(self.ptr, self.capacity) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_and_grown_buffers_keep_their_values() {
        for len in [0, 1, 5, HUGE_PAGE / 8 + 3] {
            let mut buffer = PageBuffer::filled(7u64, len, len);
            for i in 0..1000 {
                buffer.push(i);
            }
            assert_eq!(buffer.len(), len + 1000);
            assert!(buffer[..len].iter().all(|&v| v == 7));
            assert!(buffer[len..].iter().copied().eq(0..1000));
        }
    }

    #[test]
    fn buffers_of_a_huge_page_or_more_start_on_one() {
        let buffer = PageBuffer::filled(0u32, HUGE_PAGE / 2, HUGE_PAGE / 2);
        assert_eq!(buffer.as_ptr() as usize % HUGE_PAGE, 0);
    }
}
