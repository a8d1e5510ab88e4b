//! [`OnceValue`] and [`Once`]: one-time initialisation without std. The
//! first caller runs the initialiser; a caller that comes while it runs
//! yields the CPU until it is done (as std's `OnceLock` would block).

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU8, Ordering::*};

const EMPTY: u8 = 0;
const RUNNING: u8 = 1;
const READY: u8 = 2;

/// A value set once, by the first [`get_or_init`](Self::get_or_init).
pub(crate) struct OnceValue<T> {
    state: AtomicU8,
    value: UnsafeCell<MaybeUninit<T>>,
}

// Safety: the value is written once, before `READY` is published, and only
// read after `READY` is seen.
unsafe impl<T: Send + Sync> Sync for OnceValue<T> {}

impl<T> OnceValue<T> {
    pub(crate) const fn new() -> Self {
        OnceValue {
            state: AtomicU8::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The value, if it was set.
    pub(crate) fn get(&self) -> Option<&T> {
        // Safety: READY means the value was written (and published by the
        // Release store that made it READY).
        (self.state.load(Acquire) == READY)
            .then(|| unsafe { (*self.value.get()).assume_init_ref() })
    }

    /// The value, set by `init` if this is the first call.
    pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        if let Some(v) = self.get() {
            return v;
        }
        if self
            .state
            .compare_exchange(EMPTY, RUNNING, Acquire, Acquire)
            .is_ok()
        {
            // Safety: only the caller that moved EMPTY to RUNNING writes.
            unsafe { (*self.value.get()).write(init()) };
            self.state.store(READY, Release);
        }
        loop {
            if let Some(v) = self.get() {
                return v;
            }
            // Safety: no preconditions.
            unsafe { libc::sched_yield() };
        }
    }
}

/// Something done once, by the first [`call_once`](Self::call_once).
pub(crate) struct Once(OnceValue<()>);

impl Once {
    pub(crate) const fn new() -> Self {
        Once(OnceValue::new())
    }

    pub(crate) fn call_once(&self, f: impl FnOnce()) {
        self.0.get_or_init(f);
    }
}

#[cfg(test)]
mod tests {
    use super::OnceValue;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[test]
    fn the_first_caller_initialises_and_every_thread_sees_its_value() {
        static VALUE: OnceValue<usize> = OnceValue::new();
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        assert!(VALUE.get().is_none());
        let threads: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    *VALUE.get_or_init(|| {
                        RUNS.fetch_add(1, SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        100 + i
                    })
                })
            })
            .collect();
        let seen: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(RUNS.load(SeqCst), 1);
        assert!(seen.iter().all(|&v| v == seen[0]));
        assert_eq!(VALUE.get(), Some(&seen[0]));
    }
}
