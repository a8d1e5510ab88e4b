//! The runtime's few allocations outside dumps (registration, thread start
//! and end), from the C library's `malloc`: a value moved into memory of
//! its own ([`boxed`]), taken back out ([`unbox`]), bytes kept forever
//! ([`leak_bytes`]), and a small growable array ([`HeapVec`]). Dumps never
//! allocate here (see `mem`).

use core::ptr::{self, NonNull};

/// `malloc`'s alignment on every 64-bit C library the runtime supports.
const MALLOC_ALIGN: usize = 16;

/// `value` in memory from `malloc`; `None` without memory.
pub(crate) fn boxed<T>(value: T) -> Option<NonNull<T>> {
    const { assert!(core::mem::align_of::<T>() <= MALLOC_ALIGN) };
    // Safety: malloc of a nonzero size.
    let p = unsafe { libc::malloc(core::mem::size_of::<T>().max(1)) }.cast::<T>();
    let p = NonNull::new(p)?;
    // Safety: fresh memory of T's size and alignment.
    unsafe { p.as_ptr().write(value) };
    Some(p)
}

/// The value [`boxed`] put at `p`, whose memory goes back to `free`.
///
/// # Safety
/// `p` came from [`boxed`] and is taken back once.
pub(crate) unsafe fn unbox<T>(p: NonNull<T>) -> T {
    // Safety: by the contract, a live value of ours.
    let value = unsafe { p.as_ptr().read() };
    // Safety: malloc's memory, freed once.
    unsafe { libc::free(p.as_ptr().cast()) };
    value
}

/// Ends the process when memory the runtime cannot do without is refused
/// (as std's allocation failure does).
pub(crate) fn out_of_memory() -> ! {
    crate::msg::Line::new()
        .text("out of memory for the runtime's own records; aborting")
        .emit();
    // Safety: no preconditions.
    unsafe { libc::abort() }
}

/// A copy of `bytes`, kept for the rest of the process.
pub(crate) fn leak_bytes(bytes: &[u8]) -> Option<&'static [u8]> {
    // Safety: malloc of a nonzero size.
    let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
    if p.is_null() {
        return None;
    }
    // Safety: `bytes.len()` fresh bytes, never freed.
    unsafe {
        ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        Some(core::slice::from_raw_parts(p, bytes.len()))
    }
}

/// A growable array of `Copy` values in `malloc`'s memory (a thread's list
/// of the blocks it holds); `push` says when memory is refused.
pub(crate) struct HeapVec<T: Copy> {
    ptr: *mut T,
    len: usize,
    cap: usize,
}

impl<T: Copy> HeapVec<T> {
    pub(crate) const fn new() -> Self {
        HeapVec {
            ptr: ptr::null_mut(),
            len: 0,
            cap: 0,
        }
    }

    /// Appends `value`; false (and nothing appended) without memory.
    pub(crate) fn push(&mut self, value: T) -> bool {
        const { assert!(core::mem::align_of::<T>() <= MALLOC_ALIGN) };
        if self.len == self.cap {
            let cap = (self.cap * 2).max(4);
            let Some(bytes) = cap.checked_mul(core::mem::size_of::<T>()) else {
                return false;
            };
            // Safety: realloc of our own block (or null) to a nonzero size.
            let p = unsafe { libc::realloc(self.ptr.cast(), bytes.max(1)) }.cast::<T>();
            if p.is_null() {
                return false;
            }
            self.ptr = p;
            self.cap = cap;
        }
        // Safety: `len < cap` slots are ours.
        unsafe { self.ptr.add(self.len).write(value) };
        self.len += 1;
        true
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        if self.ptr.is_null() {
            return &[];
        }
        // Safety: the first `len` values are initialised.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for HeapVec<T> {
    fn drop(&mut self) {
        // Safety: our block (free of null does nothing).
        unsafe { libc::free(self.ptr.cast()) };
    }
}
