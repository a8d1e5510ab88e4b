//! [`MapVec`]: a growable vector in memory the runtime maps itself with
//! `mmap`, so that dumping (also from a signal handler) never calls `malloc`,
//! whose locks the interrupted program may hold.

use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr;

/// Maps `bytes` (rounded up to pages) of zeroed, private, anonymous memory.
pub(crate) fn map_zeroed(bytes: usize) -> Option<*mut u8> {
    map(bytes, 0)
}

/// Maps `bytes` (rounded up to pages) of zeroed memory like [`map_zeroed`],
/// without reserving swap for it: pages are backed when first written, and
/// a mapping far bigger than what gets written costs nothing.
pub(crate) fn map_lazily(bytes: usize) -> Option<*mut u8> {
    map(bytes, libc::MAP_NORESERVE)
}

fn map(bytes: usize, flags: libc::c_int) -> Option<*mut u8> {
    if bytes == 0 {
        return None;
    }
    // Safety: an anonymous private mapping at an address the kernel picks
    // touches no existing memory.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// Unmaps memory from [`map_zeroed`].
///
/// # Safety
/// `p` and `bytes` come from one `map_zeroed` call and nothing uses the memory afterwards.
pub(crate) unsafe fn unmap(p: *mut u8, bytes: usize) {
    // Safety: by the caller's contract the range is one mapping of ours.
    unsafe { libc::munmap(p.cast(), bytes) };
}

/// A vector of `Copy` values in its own mapping; operations that need more
/// memory return false instead of aborting.
pub(crate) struct MapVec<T: Copy> {
    ptr: *mut T,
    len: usize,
    cap: usize,
    _own: PhantomData<T>,
}

impl<T: Copy> MapVec<T> {
    pub(crate) const fn new() -> Self {
        MapVec {
            ptr: ptr::null_mut(),
            len: 0,
            cap: 0,
            _own: PhantomData,
        }
    }

    /// Makes room for `additional` more values.
    pub(crate) fn reserve(&mut self, additional: usize) -> bool {
        let Some(need) = self.len.checked_add(additional) else {
            return false;
        };
        if need <= self.cap {
            return true;
        }
        let cap = need
            .max(self.cap.saturating_mul(2))
            .max(4096 / size_of::<T>().max(1));
        let Some(bytes) = cap.checked_mul(size_of::<T>()) else {
            return false;
        };
        let Some(p) = map_zeroed(bytes) else {
            return false;
        };
        let p = p.cast::<T>();
        if !self.ptr.is_null() {
            // Safety: both regions are ours, distinct, and hold at least `len` values.
            unsafe {
                ptr::copy_nonoverlapping(self.ptr, p, self.len);
                unmap(self.ptr.cast(), self.cap * size_of::<T>());
            }
        }
        self.ptr = p;
        self.cap = cap;
        true
    }

    pub(crate) fn push(&mut self, v: T) -> bool {
        if !self.reserve(1) {
            return false;
        }
        // Safety: `reserve` made room for index `len`.
        unsafe { self.ptr.add(self.len).write(v) };
        self.len += 1;
        true
    }

    pub(crate) fn extend_from_slice(&mut self, s: &[T]) -> bool {
        if !self.reserve(s.len()) {
            return false;
        }
        // Safety: `reserve` made room for `s.len()` more values; `s` is not ours.
        unsafe { ptr::copy_nonoverlapping(s.as_ptr(), self.ptr.add(self.len), s.len()) };
        self.len += s.len();
        true
    }

    /// Appends `n` zeroed values.
    pub(crate) fn extend_zeroed(&mut self, n: usize) -> bool {
        if !self.reserve(n) {
            return false;
        }
        // Safety: `reserve` made room for `n` more values; all-zero bytes are
        // a valid value of the plain-data types stored here.
        unsafe { ptr::write_bytes(self.ptr.add(self.len), 0, n) };
        self.len += n;
        true
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        if self.ptr.is_null() {
            return &[];
        }
        // Safety: the first `len` values are initialised and the mapping lives as long as `self`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        if self.ptr.is_null() {
            return &mut [];
        }
        // Safety: as in `as_slice`, and `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for MapVec<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // Safety: the mapping is ours and dies with `self`.
            unsafe { unmap(self.ptr.cast(), self.cap * size_of::<T>()) };
        }
    }
}

impl pathprof_format::Sink for MapVec<u8> {
    fn append(&mut self, bytes: &[u8]) -> bool {
        self.extend_from_slice(bytes)
    }

    fn written(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }

    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::MapVec;

    #[test]
    fn grows_and_keeps_values() {
        let mut v: MapVec<u64> = MapVec::new();
        assert!(v.as_slice().is_empty());
        for i in 0..10_000u64 {
            assert!(v.push(i));
        }
        assert!(v.extend_from_slice(&[7, 8]));
        assert_eq!(v.as_slice().len(), 10_002);
        assert_eq!(v.as_slice()[9_999], 9_999);
        assert_eq!(v.as_slice()[10_001], 8);
        v.truncate(3);
        assert_eq!(v.as_slice(), &[0, 1, 2]);
        v.clear();
        assert!(v.as_slice().is_empty());
        assert!(!v.reserve(usize::MAX));
    }
}
