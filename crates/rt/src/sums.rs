//! Reading counters as what the whole process counted: the sum of their
//! copies, the counters themselves and each thread block's (`threads`).
//! Allocation-free but for [`MapVec`]s (the dumper runs in signal handlers).

use crate::hash;
use crate::mem::MapVec;
use crate::os::Fd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The copies of one counter array: the deltas to add to its address.
pub(crate) struct Copies {
    deltas: MapVec<isize>,
    /// Scratch for [`for_each_touched`]: which pages each copy touched.
    touched: MapVec<bool>,
    /// Scratch for [`for_each_touched`]: the deltas of the copies that
    /// touched one page.
    touching: MapVec<isize>,
}

/// How many pages [`for_each_touched`] asks the page map about at once.
const CHUNK: usize = 64;

impl Copies {
    pub(crate) const fn new() -> Self {
        Copies {
            deltas: MapVec::new(),
            touched: MapVec::new(),
            touching: MapVec::new(),
        }
    }

    /// Finds the copies of `counters` (false without memory).
    pub(crate) fn of(&mut self, counters: &[AtomicU64]) -> bool {
        self.deltas.clear();
        let mut ok = true;
        crate::threads::copies(
            counters.as_ptr() as usize,
            std::mem::size_of_val(counters),
            |d| ok &= self.deltas.push(d),
        );
        ok
    }

    /// The deltas found by [`of`](Self::of).
    fn deltas(&self) -> &[isize] {
        self.deltas.as_slice()
    }

    /// `c`'s copy at `delta`.
    fn at(c: &AtomicU64, delta: isize) -> &AtomicU64 {
        let p = (c as *const AtomicU64).wrapping_byte_offset(delta);
        // Safety: `delta` is one of `threads::copies`' for the array `c`
        // lies in: 0, or a block covering that array, mapped for good.
        unsafe { &*p }
    }

    /// `c`, one counter of the array given to [`of`](Self::of), summed over
    /// its copies.
    pub(crate) fn sum(&self, c: &AtomicU64) -> u64 {
        Self::sum_at(c, self.deltas())
    }

    /// `c` summed over its copies at `deltas`.
    fn sum_at(c: &AtomicU64, deltas: &[isize]) -> u64 {
        deltas
            .iter()
            .map(|&d| Self::at(c, d).load(Relaxed))
            .fold(0, u64::saturating_add)
    }

    /// Each copy of a hash state of the array given to [`of`](Self::of).
    pub(crate) fn states<'a>(
        &'a self,
        state: &'a [AtomicU64; 8],
    ) -> impl Iterator<Item = &'a [AtomicU64; 8]> + 'a {
        self.deltas().iter().map(move |&d| {
            let p = (state as *const [AtomicU64; 8]).wrapping_byte_offset(d);
            // Safety: as in `at`: the state's copy in a block covering it.
            unsafe { &*p }
        })
    }

    /// Hash counts dropped for lack of memory, over the state's copies.
    pub(crate) fn lost(&self, state: &[AtomicU64; 8]) -> u64 {
        self.states(state)
            .map(hash::lost)
            .fold(0, u64::saturating_add)
    }

    /// Calls `f(index, sum)` for every counter of `array` (given to
    /// [`of`](Self::of)) on a page that some copy touched, with the sum of
    /// the copies that touched it. Zero-initialised arrays are mostly never
    /// touched (a function with 2^17 potential paths runs a few), so this
    /// reads only pages that were: present or swapped out, by the kernel's
    /// page map; the others hold zeros, and so does their part of the shadow
    /// (a count written earlier was on a touched page). Blocks lie at the
    /// same offset within a page as the counters, so their pages line up;
    /// a thread's twin of the module array (`twins`) does not, and is read
    /// whole.
    /// With `nonzero`, only counters whose sum is not 0 are passed to `f`
    /// (for a caller to whom a 0 means nothing: a touched page of a path
    /// array mostly holds zeros). False without memory (nothing is called
    /// then).
    pub(crate) fn for_each_touched(
        &mut self,
        array: &[AtomicU64],
        pagemap: Option<&Fd>,
        nonzero: bool,
        mut f: impl FnMut(usize, u64),
    ) -> bool {
        let copies = self.deltas.as_slice().len();
        self.touched.clear();
        if !self.touched.extend_zeroed(copies * CHUNK) {
            return false;
        }
        let counter = std::mem::size_of::<AtomicU64>();
        let page = crate::os::page_size();
        let start = array.as_ptr() as usize;
        let first_page = start - start % page;
        let end = start + std::mem::size_of_val(array);
        let pages = (end - first_page).div_ceil(page);
        let deltas = self.deltas.as_slice();
        let touched = self.touched.as_mut_slice();
        let mut chunk = [false; CHUNK];
        for first in (0..pages).step_by(CHUNK) {
            let n = (pages - first).min(CHUNK);
            for (k, &d) in deltas.iter().enumerate() {
                let addr = (first_page + first * page).wrapping_add_signed(d);
                if d.rem_euclid(page as isize) == 0 {
                    crate::os::touched_pages(pagemap, addr, &mut chunk, n);
                } else {
                    // A thread's twin (`twins`): its pages do not line up,
                    // and the C library zeroed them all (touched).
                    chunk = [true; CHUNK];
                }
                touched[k * CHUNK..(k + 1) * CHUNK].copy_from_slice(&chunk);
            }
            for i in 0..n {
                self.touching.clear();
                for (k, &d) in deltas.iter().enumerate() {
                    if touched[k * CHUNK + i] && !self.touching.push(d) {
                        return false;
                    }
                }
                let touching = self.touching.as_slice();
                if touching.is_empty() {
                    continue;
                }
                let p = first + i;
                let lo = (first_page + p * page).max(start);
                let hi = (first_page + (p + 1) * page).min(end);
                let first_id = (lo - start) / counter;
                let ids = first_id..(hi - start).div_ceil(counter);
                for (id, c) in array[ids].iter().enumerate() {
                    let sum = Self::sum_at(c, touching);
                    if sum != 0 || !nonzero {
                        f(first_id + id, sum);
                    }
                }
            }
        }
        true
    }
}
