//! Reading counters as what the whole process counted: the sum of their
//! copies, the counters themselves and each thread block's (`threads`).
//! Allocation-free but for [`MapVec`]s (the dumper runs in signal handlers).

use crate::hash;
use crate::mem::MapVec;
use crate::os::Fd;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The copies of one counter array: the deltas to add to its address.
pub(crate) struct Copies {
    deltas: MapVec<isize>,
    /// Scratch for [`for_each_changed`]: which pages each copy touched.
    touched: MapVec<bool>,
    /// Scratch for [`for_each_changed`]: the deltas of the copies that
    /// touched one page.
    touching: MapVec<isize>,
}

/// How many pages [`for_each_changed`] asks the page map about at once.
const CHUNK: usize = 64;

/// How many counters of a touched page [`for_each_changed`] compares with
/// their marks at once.
const GROUP: usize = 16;

/// The most counters [`for_each_changed`] reads whole, without asking which
/// of their pages were touched: most path arrays (functions with a few
/// paths), for which the question costs more than the answer.
const READ_WHOLE: usize = 128;

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
            core::mem::size_of_val(counters),
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

    /// Whether every counter of the array given to [`of`](Self::of) sums to
    /// its mark in `marks` (one per counter): nothing new since the last
    /// dump, as at the exit's second dump, or in a function never run.
    pub(crate) fn unchanged(&self, counters: &[AtomicU64], marks: &[AtomicU64]) -> bool {
        sums_are_marks(counters, self.deltas(), marks)
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
    /// [`of`](Self::of)) whose sum over its copies is not its mark in
    /// `marks` (the caller's marks of `array`, one per counter, which only
    /// the dumper writes): what a dump has to write, or a fork child to mark.
    ///
    /// A small array ([`READ_WHOLE`]: most path arrays) is read whole, if it
    /// is not [`unchanged`](Self::unchanged). A
    /// larger one is read a page at a time, and only where some copy
    /// touched the page: zero-initialised arrays are mostly never touched
    /// (a function with 2^17 potential paths runs a few), and a page no
    /// copy touched holds zeros, and so does its part of the marks (a count
    /// written earlier was on a touched page). A copy that lines up with the
    /// array's pages (the array itself, a thread block) says which it
    /// touched by the kernel's page map (present or swapped out). A page
    /// whose copies sum to its marks (nothing new
    /// since the last dump) is passed over. These tests read plain memory
    /// many counters at a time, many times cheaper than summing each.
    ///
    /// False without memory (nothing is called then).
    pub(crate) fn for_each_changed(
        &mut self,
        array: &[AtomicU64],
        marks: &[AtomicU64],
        pagemap: Option<&Fd>,
        mut f: impl FnMut(usize, u64),
    ) -> bool {
        let mut report = |id: usize, sum: u64| {
            if sum != marks[id].load(Relaxed) {
                f(id, sum);
            }
        };
        if array.len() <= READ_WHOLE {
            if self.unchanged(array, marks) {
                return true;
            }
            for (id, c) in array.iter().enumerate() {
                report(id, self.sum(c));
            }
            return true;
        }
        let copies = self.deltas.as_slice().len();
        self.touched.clear();
        if !self.touched.extend_zeroed(copies * CHUNK) {
            return false;
        }
        let counter = core::mem::size_of::<AtomicU64>();
        let page = crate::os::page_size();
        let start = array.as_ptr() as usize;
        let first_page = start - start % page;
        let end = start + core::mem::size_of_val(array);
        let pages = (end - first_page).div_ceil(page);
        let deltas = self.deltas.as_slice();
        let touched = self.touched.as_mut_slice();
        let mut chunk = [false; CHUNK];
        // The counters of `array` on page `p` (counting from `first_page`).
        let ids_on = |p: usize| {
            let lo = (first_page + p * page).max(start);
            let hi = (first_page + (p + 1) * page).min(end);
            (lo - start) / counter..(hi - start).div_ceil(counter)
        };
        for first in (0..pages).step_by(CHUNK) {
            let n = (pages - first).min(CHUNK);
            for (k, &d) in deltas.iter().enumerate() {
                let addr = (first_page + first * page).wrapping_add_signed(d);
                if d.rem_euclid(page as isize) == 0 {
                    crate::os::touched_pages(pagemap, addr, &mut chunk, n);
                } else {
                    for (i, t) in chunk[..n].iter_mut().enumerate() {
                        let ids = ids_on(first + i);
                        *t = any_count(copy_part(array, d, ids.clone()))
                            || any_count(plain(&marks[ids]));
                    }
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
                let ids = ids_on(first + i);
                // A page no copy touched holds zeros, and so do its marks;
                // a page with nothing new (every page, at the exit's second
                // dump) is passed over in one compare.
                if touching.is_empty()
                    || sums_are_marks(&array[ids.clone()], touching, &marks[ids.clone()])
                {
                    continue;
                }
                // A touched page of a path array mostly holds counters
                // with nothing new: passed over a few at a time.
                for group in ids.clone().step_by(GROUP) {
                    let group = group..(group + GROUP).min(ids.end);
                    if sums_are_marks(&array[group.clone()], touching, &marks[group.clone()]) {
                        continue;
                    }
                    for id in group {
                        report(id, Self::sum_at(&array[id], touching));
                    }
                }
            }
        }
        true
    }
}

/// How many counters of a module array [`QuietChunks`] compares with their
/// marks at once (a page of them).
pub(crate) const QUIET_CHUNK: usize = 512;

/// Which chunks of a module array ([`QUIET_CHUNK`] counters each) have
/// nothing new since the last dump (their copies sum to their marks), each
/// found the first time a function asks about it: a function counting only
/// in quiet chunks is passed over unread, as every one is at the exit's
/// second dump.
pub(crate) struct QuietChunks<'a> {
    array: &'a [AtomicU64],
    marks: &'a [AtomicU64],
    copies: Copies,
    /// Per chunk: 0 not asked about yet, 1 quiet, 2 with news.
    states: MapVec<u8>,
}

impl<'a> QuietChunks<'a> {
    /// The chunks of `array` against `marks` (one per counter); `None`
    /// without memory.
    pub(crate) fn new(array: &'a [AtomicU64], marks: &'a [AtomicU64]) -> Option<Self> {
        let mut copies = Copies::new();
        let mut states = MapVec::new();
        (copies.of(array) && states.extend_zeroed(array.len().div_ceil(QUIET_CHUNK))).then_some(
            QuietChunks {
                array,
                marks,
                copies,
                states,
            },
        )
    }

    /// Whether the `len` counters from index `start` of the array all lie
    /// in quiet chunks (true for none; false past the array's end). One
    /// pass over plain memory per chunk asked about (see `sums_are_marks`);
    /// with more than four copies no chunk is quiet.
    pub(crate) fn quiet(&mut self, start: usize, len: usize) -> bool {
        let end = start.saturating_add(len);
        if len == 0 || end > self.array.len() {
            return len == 0;
        }
        let last = (end - 1) / QUIET_CHUNK;
        let mut k = start / QUIET_CHUNK;
        loop {
            let quiet = match self.states.as_slice()[k] {
                0 => self.ask(k),
                state => state == 1,
            };
            if !quiet || k == last {
                return quiet;
            }
            k += 1;
        }
    }

    /// Finds whether chunk `k` is quiet, and remembers it.
    #[cold]
    fn ask(&mut self, k: usize) -> bool {
        let ids = k * QUIET_CHUNK..((k + 1) * QUIET_CHUNK).min(self.array.len());
        let quiet = self
            .copies
            .unchanged(&self.array[ids.clone()], &self.marks[ids]);
        self.states.as_mut_slice()[k] = if quiet { 1 } else { 2 };
        quiet
    }
}

/// Where `counters` lie in `array`, if they all do.
pub(crate) fn position(
    array: &[AtomicU64],
    counters: &[AtomicU64],
) -> Option<core::ops::Range<usize>> {
    let counter = core::mem::size_of::<AtomicU64>();
    let bytes = (counters.as_ptr() as usize).checked_sub(array.as_ptr() as usize)?;
    let lo = bytes / counter;
    let hi = lo.checked_add(counters.len())?;
    (bytes % counter == 0 && hi <= array.len()).then_some(lo..hi)
}

/// The most copies [`sums_are_marks`] adds up in its fast pass: each below
/// 2^62 (it checks), four of them cannot wrap.
const FAST_COPIES: usize = 4;

/// How many counters [`sums_are_marks`] sums at once over three or four
/// copies.
const LANES: usize = 32;

/// Whether the sum of `counters`' copies at `deltas` equals `marks`, counter
/// by counter: nothing to write. Read as plain memory in passes the
/// compiler vectorises for up to [`FAST_COPIES`] copies (the array alone,
/// or with up to three threads' blocks), many times cheaper than
/// [`Copies::sum`] on each counter; with more copies, or a count near
/// overflow (where a wrapping sum could pass for a saturated mark), the
/// answer is "no", and the caller reads the counters one by one.
fn sums_are_marks(counters: &[AtomicU64], deltas: &[isize], marks: &[AtomicU64]) -> bool {
    let all = 0..counters.len();
    let marks = plain(marks);
    match *deltas {
        [] => !any_count(marks),
        [d] => copy_part(counters, d, all) == marks,
        [d, e] => {
            let (one, two) = (
                copy_part(counters, d, all.clone()),
                copy_part(counters, e, all),
            );
            let differ = one
                .iter()
                .zip(two)
                .zip(marks)
                .fold(0, |acc, ((&a, &b), &m)| {
                    acc | (a.wrapping_add(b) ^ m) | ((a | b) >> 62)
                });
            differ == 0
        }
        _ if deltas.len() <= FAST_COPIES => all.step_by(LANES).all(|start| {
            let ids = start..(start + LANES).min(counters.len());
            let mut sums = [0u64; LANES];
            let mut high = 0;
            for &d in deltas {
                for (sum, &c) in sums.iter_mut().zip(copy_part(counters, d, ids.clone())) {
                    *sum = sum.wrapping_add(c);
                    high |= c;
                }
            }
            high >> 62 == 0 && sums[..ids.len()] == marks[ids]
        }),
        _ => false,
    }
}

/// Whether any of `counts` is not 0 (an OR of them all, which the compiler
/// vectorises).
pub(crate) fn any_count(counts: &[u64]) -> bool {
    counts.iter().fold(0, |acc, &c| acc | c) != 0
}

/// Counters read as plain memory, a page at a time: the dumper's own marks
/// (only it writes them, under its lock), or counters the program counts
/// in with plain increments (a count racing with this read is seen or not,
/// as by an atomic read, and is written by the next dump either way).
fn plain(counters: &[AtomicU64]) -> &[u64] {
    // Safety: `AtomicU64` has `u64`'s layout; see above for the writers.
    unsafe { core::slice::from_raw_parts(counters.as_ptr().cast(), counters.len()) }
}

/// The counters `ids` of `array`'s copy at `delta` bytes (0: the array
/// itself), as plain memory: its threads count in it with plain
/// increments, so a count racing with this read is seen or not, as by an
/// atomic read, and is written by the next dump either way.
fn copy_part(array: &[AtomicU64], delta: isize, ids: core::ops::Range<usize>) -> &[u64] {
    let at = array[ids.clone()].as_ptr().wrapping_byte_offset(delta);
    // Safety: `delta` is one of `threads::copies`' for `array`: 0 or a
    // block covering it, mapped for good.
    unsafe { core::slice::from_raw_parts(at.cast(), ids.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` copies of 70 counters (more than two lanes' worth), laid out one
    /// after another in one buffer, the first being "the counters".
    fn copies(n: usize) -> (Vec<AtomicU64>, Vec<isize>) {
        const LEN: usize = 70;
        let buffer = (0..n * LEN)
            .map(|i| AtomicU64::new((i % LEN) as u64 * 3 + (i / LEN) as u64))
            .collect();
        let deltas = (0..n).map(|k| (k * LEN * 8) as isize).collect();
        (buffer, deltas)
    }

    fn marks_of(buffer: &[AtomicU64], deltas: &[isize], len: usize) -> Vec<AtomicU64> {
        (0..len)
            .map(|i| {
                let sum = deltas
                    .iter()
                    .map(|&d| buffer[i + d as usize / 8].load(Relaxed))
                    .fold(0u64, u64::wrapping_add);
                AtomicU64::new(sum)
            })
            .collect()
    }

    #[test]
    fn sums_equal_to_their_marks_are_found_for_up_to_four_copies() {
        for n in 1..=FAST_COPIES {
            let (buffer, deltas) = copies(n);
            let counters = &buffer[..70];
            let marks = marks_of(&buffer, &deltas, 70);
            assert!(sums_are_marks(counters, &deltas, &marks), "{n} copies");
            for at in [0, 31, 32, 69] {
                marks[at].fetch_add(1, Relaxed);
                assert!(
                    !sums_are_marks(counters, &deltas, &marks),
                    "{n} copies, counter {at}"
                );
                marks[at].fetch_sub(1, Relaxed);
            }
        }
    }

    #[test]
    fn more_copies_or_counts_near_overflow_are_left_to_the_slow_read() {
        let (buffer, deltas) = copies(FAST_COPIES + 1);
        let marks = marks_of(&buffer, &deltas, 70);
        assert!(!sums_are_marks(&buffer[..70], &deltas, &marks));

        let (buffer, deltas) = copies(3);
        buffer[5].store(u64::MAX - 1, Relaxed);
        let marks = marks_of(&buffer, &deltas, 70);
        assert!(!sums_are_marks(&buffer[..70], &deltas, &marks));
    }
}
