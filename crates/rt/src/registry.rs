//! Registered modules and the process-wide settings taken at the first
//! registration.
//!
//! Modules live in a lock-free, append-only list of nodes allocated at
//! registration (from constructors, where `malloc` is fine) and never freed,
//! so the dumper, also in a signal handler, can walk it without locks. A
//! module that goes away (its destructor calls `__pathprof_fini`: at exit
//! after the program's own destructors, or at `dlclose`) is written one last
//! time and *retired*: dumps and fork handlers skip it from then on, so its
//! unmapped counters are never read. Loaded again at the same address, its
//! node comes back with fresh marks (the new mapping's counters are zero).

use crate::abi::PpModule;
use crate::mem::{map_zeroed, unmap};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::OnceLock;

/// Settings read once, at the first registration.
pub(crate) struct Config {
    /// `$PATHPROF_FILE`, or `default.pprof`.
    pub pattern: Vec<u8>,
    /// `$PATHPROF_VERBOSE=1`: say where profiles went.
    pub verbose: bool,
    /// The build and mode of the first module registered: its profile goes to
    /// the plain file name, other builds' to `<name>.<build id hex>`.
    pub first: (u64, u32),
    /// `$PATHPROF_DUMP_INTERVAL`: seconds between periodic dumps, 0 for none.
    pub interval_s: u64,
    /// `$PATHPROF_TEST_WRITE_DELAY_US` (tests only): a pause while holding
    /// the profile's lock, to widen the window for killing a writer.
    pub write_delay_us: u64,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The settings, once a module has registered.
pub(crate) fn config() -> Option<&'static Config> {
    CONFIG.get()
}

fn env(name: &std::ffi::CStr) -> Option<Vec<u8>> {
    // Safety: getenv with a NUL-terminated name; the result is copied at once
    // (during registration, before the program's threads could change it).
    let p = unsafe { libc::getenv(name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // Safety: getenv returned a NUL-terminated string.
    Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec())
}

/// Reads the settings; the first module registered is `first`.
pub(crate) fn init_config(first: (u64, u32)) -> &'static Config {
    CONFIG.get_or_init(|| Config {
        pattern: env(c"PATHPROF_FILE")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| b"default.pprof".to_vec()),
        verbose: env(c"PATHPROF_VERBOSE").is_some_and(|v| v == b"1"),
        first,
        interval_s: env(c"PATHPROF_DUMP_INTERVAL").map_or(0, |v| number(&v)),
        write_delay_us: env(c"PATHPROF_TEST_WRITE_DELAY_US").map_or(0, |v| number(&v)),
    })
}

/// A decimal number; 0 for anything else.
fn number(v: &[u8]) -> u64 {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// One registered module and the runtime's memory for it.
pub(crate) struct Node {
    pub module: *const PpModule,
    next: *mut Node,
    /// How much of each slot and array path counter has been written to a
    /// profile, in module order (mapped at the first dump).
    shadow: AtomicPtr<AtomicU64>,
    shadow_len: AtomicUsize,
    /// This process was counted in the module's profile (a final write).
    pub process_written: AtomicBool,
    /// How many of the process's threads were written to the profile.
    pub threads_written: AtomicU64,
    /// This process wrote the module's profile at least once.
    pub wrote: AtomicBool,
    /// The module went away (`__pathprof_fini`): skipped by [`nodes`].
    retired: AtomicBool,
}

static HEAD: AtomicPtr<Node> = AtomicPtr::new(ptr::null_mut());

/// Adds `module` unless it is already there; true if added. A retired node
/// of the same address (a library loaded again where it was before) comes
/// back to life with its marks reset.
pub(crate) fn add(module: *const PpModule) -> bool {
    if let Some(old) = all_nodes().find(|n| ptr::eq(n.module, module)) {
        if old.retired.load(Acquire) {
            old.reset_shadow();
            old.retired.store(false, Release);
        }
        return false;
    }
    let node = Box::into_raw(Box::new(Node {
        module,
        next: ptr::null_mut(),
        shadow: AtomicPtr::new(ptr::null_mut()),
        shadow_len: AtomicUsize::new(0),
        process_written: AtomicBool::new(false),
        threads_written: AtomicU64::new(0),
        wrote: AtomicBool::new(false),
        retired: AtomicBool::new(false),
    }));
    let mut head = HEAD.load(Acquire);
    loop {
        // Safety: the node is ours until published.
        unsafe { (*node).next = head };
        match HEAD.compare_exchange_weak(head, node, AcqRel, Acquire) {
            Ok(_) => return true,
            Err(h) => head = h,
        }
    }
}

/// The registered modules that are still there (newest first).
pub(crate) fn nodes() -> impl Iterator<Item = &'static Node> {
    all_nodes().filter(|n| !n.retired.load(Acquire))
}

/// The node of `module`, if it is registered and not retired.
pub(crate) fn find(module: *const PpModule) -> Option<&'static Node> {
    nodes().find(|n| ptr::eq(n.module, module))
}

/// Every node ever added, retired ones too.
fn all_nodes() -> impl Iterator<Item = &'static Node> {
    let mut p = HEAD.load(Acquire);
    std::iter::from_fn(move || {
        // Safety: nodes are published complete and never freed.
        let n = unsafe { p.as_ref()? };
        p = n.next;
        Some(n)
    })
}

impl Node {
    /// The module.
    pub(crate) fn module(&self) -> &'static PpModule {
        // Safety: only valid modules are registered; they stay mapped until
        // retired (callers only reach live nodes, or the node being retired).
        unsafe { &*self.module }
    }

    /// The shadow counters, `len` of them, mapped on first use. Only the
    /// dumper (under its lock) and a fork child call this.
    pub(crate) fn shadow(&self, len: usize) -> Option<&'static [AtomicU64]> {
        if len == 0 {
            return Some(&[]);
        }
        let mut p = self.shadow.load(Acquire);
        if p.is_null() {
            let bytes = len.checked_mul(8)?;
            p = map_zeroed(bytes)?.cast();
            self.shadow.store(p, Release);
            self.shadow_len.store(len, Release);
        }
        if self.shadow_len.load(Acquire) != len {
            return None;
        }
        // Safety: a zeroed mapping of `len` u64s that is never unmapped.
        Some(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// Takes the module out of [`nodes`] (called under the dump lock, after
    /// its last write).
    pub(crate) fn retire(&self) {
        self.retired.store(true, Release);
    }

    /// Forgets that this process wrote the module (a fork child has not).
    pub(crate) fn forget_writes(&self) {
        self.process_written.store(false, Relaxed);
        self.threads_written.store(0, Relaxed);
        self.wrote.store(false, Relaxed);
    }

    /// Forgets what has been written (a module loaded again starts from
    /// zero).
    pub(crate) fn reset_shadow(&self) {
        self.forget_writes();
        let p = self.shadow.swap(ptr::null_mut(), AcqRel);
        let len = self.shadow_len.swap(0, AcqRel);
        if !p.is_null() {
            // Safety: called only for a retired node, which no dump reads.
            unsafe { unmap(p.cast(), len * 8) };
        }
    }
}
