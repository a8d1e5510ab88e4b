//! The C ABI shared with the instrumented code (docs/formats.md, section 2):
//! the structs `pathprof-llvm` emits, read-only for the runtime except for the
//! counters and the hash states, and the checks applied before trusting them.
//! The numbers both sides spell (the ABI version, modes, path kinds, the hash
//! state's size) are `pathprof_format::abi`'s.

use core::sync::atomic::AtomicU64;
pub use pathprof_format::abi::{
    ABI_VERSION, HASH_STATE_WORDS, MODULE_CONTINUOUS, PATHS_ARRAY, PATHS_HASH, PATHS_NONE,
    SEGMENT_GS, SEGMENT_NONE,
};

/// One instrumented function (48 bytes).
#[repr(C)]
#[derive(Debug)]
pub struct PpFunction {
    /// `Cfg::shape_hash()` of the function.
    pub hash: u64,
    /// The function's index in the map file.
    pub index: u32,
    /// How many slot counters `slots` points to.
    pub num_slots: u32,
    /// `num_slots` counters, or null if none.
    pub slots: *mut u64,
    /// [`PATHS_NONE`], [`PATHS_ARRAY`] or [`PATHS_HASH`].
    pub path_kind: u32,
    /// Zero.
    pub reserved: u32,
    /// Array: the length of `paths`; hash: ids are in `0..num_paths`.
    pub num_paths: u64,
    /// Array: the counters; hash: a [`PpHashState`]; null for no paths.
    pub paths: *mut u64,
}

/// The runtime's state for one hash-table function: 64 zero-initialised bytes
/// in the instrumented program's data, owned by the runtime (see `hash`).
#[repr(C)]
pub struct PpHashState {
    /// Opaque to the instrumented code.
    pub words: [u64; HASH_STATE_WORDS],
}

/// Returns the calling thread's counter delta variable (a thread-local
/// `int64_t` of the module's linked object, 0 in every thread until the
/// runtime gives it a block).
pub type ThreadDeltaFn = unsafe extern "C" fn() -> *mut i64;

/// One instrumented module (a program, a shared library, or one translation
/// unit of either).
#[repr(C)]
#[derive(Debug)]
pub struct PpModule {
    /// [`ABI_VERSION`].
    pub abi_version: u32,
    /// `pathprof_format::abi::MODE_BLOCK`, `MODE_EDGE` or `MODE_PATH`.
    pub mode: u32,
    /// The map file's build id.
    pub build_id: u64,
    /// How many entries `functions` has.
    pub num_functions: u64,
    /// The functions.
    pub functions: *const PpFunction,
    /// The calling thread's delta variable (the module counts every counter
    /// at its address plus the delta); null when the module's counters are
    /// shared by all threads (no per-thread copies).
    pub thread_delta: Option<ThreadDeltaFn>,
    /// Every function's slots, one array (a function's `slots` point into
    /// it); null when no function has slots.
    pub slots: *mut u64,
    /// The array's length.
    pub num_slots: u64,
    /// [`SEGMENT_NONE`], or [`SEGMENT_GS`]: the probes increment slots and
    /// path arrays through `%gs`, whose base must be the thread's delta.
    pub segment: u32,
    /// [`MODULE_CONTINUOUS`]: the build's default is continuous mode;
    /// other bits 0.
    pub flags: u32,
}

const _: () = assert!(core::mem::size_of::<PpFunction>() == 48);
const _: () = assert!(core::mem::size_of::<PpHashState>() == 64);
const _: () = assert!(core::mem::size_of::<PpModule>() == 64);

fn counters_ok(p: *mut u64, n: u64) -> bool {
    n == 0
        || (!p.is_null()
            && p.is_aligned()
            && usize::try_from(n).is_ok_and(|n| n <= isize::MAX as usize / 8))
}

impl PpFunction {
    /// Whether the pointers and counts can be trusted (non-null where needed, aligned).
    pub fn is_valid(&self) -> bool {
        counters_ok(self.slots, u64::from(self.num_slots))
            && match self.path_kind {
                PATHS_NONE => true,
                PATHS_ARRAY => counters_ok(self.paths, self.num_paths),
                PATHS_HASH => counters_ok(self.paths, HASH_STATE_WORDS as u64),
                _ => false,
            }
    }

    /// The slot counters, viewed atomically.
    ///
    /// # Safety
    /// `self.is_valid()`, and `slots` points to `num_slots` counters that live forever.
    pub unsafe fn slot_counters(&self) -> &[AtomicU64] {
        // Safety: by the contract, valid and aligned `u64`s that outlive us;
        // `AtomicU64` has the layout of `u64`.
        unsafe { atomic_slice(self.slots, u64::from(self.num_slots)) }
    }

    /// The array path counters (empty unless `path_kind` is [`PATHS_ARRAY`]).
    ///
    /// # Safety
    /// As for [`slot_counters`](Self::slot_counters).
    pub unsafe fn array_counters(&self) -> &[AtomicU64] {
        if self.path_kind != PATHS_ARRAY {
            return &[];
        }
        // Safety: as in `slot_counters`.
        unsafe { atomic_slice(self.paths, self.num_paths) }
    }

    /// The hash state, if `path_kind` is [`PATHS_HASH`].
    ///
    /// # Safety
    /// As for [`slot_counters`](Self::slot_counters).
    pub unsafe fn hash_state(&self) -> Option<&[AtomicU64; HASH_STATE_WORDS]> {
        if self.path_kind != PATHS_HASH || self.paths.is_null() {
            return None;
        }
        // Safety: a valid function's hash state is HASH_STATE_WORDS aligned
        // u64s living forever.
        Some(unsafe { &*self.paths.cast::<[AtomicU64; HASH_STATE_WORDS]>() })
    }
}

/// # Safety
/// `p` is null with `n == 0`, or points to `n` aligned `u64`s that live forever.
unsafe fn atomic_slice<'a>(p: *mut u64, n: u64) -> &'a [AtomicU64] {
    if p.is_null() || n == 0 {
        return &[];
    }
    // Safety: by the contract; the length fits (checked by `is_valid`).
    unsafe { core::slice::from_raw_parts(p.cast::<AtomicU64>(), n as usize) }
}

impl PpModule {
    /// Whether the module speaks this ABI and its function table is usable.
    pub fn is_valid(&self) -> bool {
        self.abi_version == ABI_VERSION
            && (self.num_functions == 0 || !self.functions.is_null())
            && self.functions.is_aligned()
            && usize::try_from(self.num_functions).is_ok_and(|n| n <= isize::MAX as usize / 48)
            && counters_ok(self.slots, self.num_slots)
            && (self.segment == SEGMENT_NONE
                || (self.segment == SEGMENT_GS
                    && cfg!(target_arch = "x86_64")
                    && self.thread_delta.is_some()))
    }

    /// Whether the module was built with `--continuous`.
    pub fn continuous_by_default(&self) -> bool {
        self.flags & MODULE_CONTINUOUS != 0
    }

    /// The module's functions.
    ///
    /// # Safety
    /// `self.is_valid()`, and the table lives forever.
    pub unsafe fn functions(&self) -> &[PpFunction] {
        if self.functions.is_null() || self.num_functions == 0 {
            return &[];
        }
        // Safety: by the contract.
        unsafe { core::slice::from_raw_parts(self.functions, self.num_functions as usize) }
    }
}
