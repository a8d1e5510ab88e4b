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
//!
//! The process facts are kept per build (one section of the profile file
//! each): a process is counted once in the section of a build, whichever
//! of the modules of that build (two objects may link the same translation
//! unit) wrote it, also a retired one.

use crate::abi::PpModule;
use crate::heap;
use crate::list::List;
use crate::mem::{map_zeroed, unmap};
use crate::once::OnceValue;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};

/// Settings read once, at the first registration.
pub(crate) struct Config {
    /// `$PATHPROF_FILE`, or `default.pprof`.
    pub pattern: &'static [u8],
    /// `$PATHPROF_VERBOSE=1`: say where profiles went.
    pub verbose: bool,
    /// `$PATHPROF_DUMP_INTERVAL`: seconds between periodic dumps, 0 for none.
    pub interval_s: u64,
    /// `$PATHPROF_TEST_WRITE_DELAY_US` (tests only): a pause while holding
    /// the profile's lock, to widen the window for killing a writer.
    pub write_delay_us: u64,
    /// Counters in the live file (`live`): `$PATHPROF_CONTINUOUS=1`, or,
    /// the variable unset or empty, the first registered module's build
    /// default (`--continuous`); any other value turns it off.
    pub continuous: bool,
    /// Whether `continuous` came from the environment, not a build default.
    pub continuous_from_env: bool,
}

static CONFIG: OnceValue<Config> = OnceValue::new();

/// The settings, once a module has registered.
pub(crate) fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// `$PATHPROF_VERBOSE=1`, before the settings are read too (which must
/// wait for the first module, whose build default they take).
pub(crate) fn verbose() -> bool {
    config().map_or_else(
        || env(c"PATHPROF_VERBOSE").is_some_and(|v| v == b"1"),
        |c| c.verbose,
    )
}

fn env(name: &core::ffi::CStr) -> Option<&'static [u8]> {
    // Safety: getenv with a NUL-terminated name; the result is copied at once
    // (during registration, before the program's threads could change it).
    let p = unsafe { libc::getenv(name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // Safety: getenv returned a NUL-terminated string.
    heap::leak_bytes(unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes())
}

/// Reads the settings (once): `continuous_default` is the registering
/// module's build default for continuous mode.
pub(crate) fn init_config(continuous_default: bool) -> &'static Config {
    CONFIG.get_or_init(|| {
        let continuous_var = env(c"PATHPROF_CONTINUOUS").filter(|v| !v.is_empty());
        Config {
            pattern: env(c"PATHPROF_FILE")
                .filter(|p| !p.is_empty())
                .unwrap_or(b"default.pprof"),
            verbose: env(c"PATHPROF_VERBOSE").is_some_and(|v| v == b"1"),
            interval_s: env(c"PATHPROF_DUMP_INTERVAL").map_or(0, number),
            write_delay_us: env(c"PATHPROF_TEST_WRITE_DELAY_US").map_or(0, number),
            continuous: continuous_var.map_or(continuous_default, |v| v == b"1"),
            continuous_from_env: continuous_var.is_some(),
        }
    })
}

/// A decimal number; 0 for anything else.
fn number(v: &[u8]) -> u64 {
    let digits = v.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits
        .iter()
        .try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(0)
}

/// One registered module and the runtime's memory for it.
pub(crate) struct Node {
    pub module: *const PpModule,
    /// The module's build id and mode, kept here so that they can be read
    /// after the module is unmapped (a retired node still says which build
    /// the process was counted in).
    build_id: AtomicU64,
    mode: AtomicU32,
    /// The file the module was loaded from (a leaked name, null if
    /// unknown), found at registration, where `malloc` is allowed.
    object: AtomicPtr<&'static str>,
    /// How much of each slot and array path counter has been written to a
    /// profile, in module order (mapped at the first dump).
    shadow: AtomicPtr<AtomicU64>,
    shadow_len: AtomicUsize,
    /// This process was counted in the section of the module's build (a
    /// final write).
    pub process_written: AtomicBool,
    /// How many of the process's threads were written to the section of the
    /// module's build.
    pub threads_written: AtomicU64,
    /// This process wrote the module's section at least once.
    pub wrote: AtomicBool,
    /// The module went away (`__pathprof_fini`): skipped by [`nodes`].
    retired: AtomicBool,
    /// Its record in the live file (continuous mode), or null.
    record: AtomicPtr<u64>,
}

static NODES: List<Node> = List::new();

/// Module record words the runtime updates (`pathprof_format::live`).
pub(crate) const RECORD_FLAGS: usize = 9;
pub(crate) const RECORD_THREADS_WRITTEN: usize = 10;

/// Adds `module`, loaded from `object`, unless it is already there; true if
/// added. A retired node of the same address (a library loaded again where
/// it was before) comes back to life with its marks reset (and, if it is
/// of the same build as before, knowing that the process was counted there).
pub(crate) fn add(module: *const PpModule, object: Option<&'static str>) -> bool {
    // Safety: only valid, mapped modules are added (the caller checked).
    let (build_id, mode) = unsafe { ((*module).build_id, (*module).mode) };
    let object = object
        .and_then(heap::boxed)
        .map_or(ptr::null_mut(), ptr::NonNull::as_ptr);
    if let Some(old) = all_nodes().find(|n| ptr::eq(n.module, module)) {
        if old.retired.load(Acquire) {
            old.reset_shadow();
            if old.build_id() != build_id {
                old.forget_writes();
            }
            old.build_id.store(build_id, Relaxed);
            old.mode.store(mode, Relaxed);
            // The old name is leaked: nothing reads a retired node's name,
            // but nodes are never freed either.
            old.object.store(object, Release);
            old.retired.store(false, Release);
        } else if let Some(object) = ptr::NonNull::new(object) {
            // Safety: ours, never published.
            // Safety: ours, never published.
            unsafe { heap::unbox(object) };
        }
        return false;
    }
    NODES.push(Node {
        module,
        build_id: AtomicU64::new(build_id),
        mode: AtomicU32::new(mode),
        object: AtomicPtr::new(object),
        shadow: AtomicPtr::new(ptr::null_mut()),
        shadow_len: AtomicUsize::new(0),
        process_written: AtomicBool::new(false),
        threads_written: AtomicU64::new(0),
        wrote: AtomicBool::new(false),
        retired: AtomicBool::new(false),
        record: AtomicPtr::new(ptr::null_mut()),
    });
    true
}

/// The file `module` was loaded from, as an absolute path: the shared
/// library `dladdr` names (its real path), or for the main executable the
/// target of `/proc/self/exe`. The main executable is recognised by
/// `dladdr`'s `dli_fbase` being that of the object `AT_PHDR` (the program's
/// headers) lies in (for it `dli_fname` is only `argv[0]`), by an empty
/// name, or by `dladdr` knowing nothing (a static executable). `None` if
/// nothing is known. Registration only (allocates).
pub(crate) fn object_of(module: *const PpModule) -> Option<&'static str> {
    let dl = |addr: *const libc::c_void| {
        // Safety: a zeroed Dl_info is valid; dladdr only fills it.
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // Safety: dladdr looks `addr` up without touching it.
        (unsafe { libc::dladdr(addr, &mut info) } != 0).then_some(info)
    };
    // Safety: getauxval has no preconditions.
    let phdr = unsafe { libc::getauxval(libc::AT_PHDR) } as *const libc::c_void;
    let main_base = if phdr.is_null() {
        None
    } else {
        dl(phdr).map(|i| i.dli_fbase)
    };
    let library = dl(module.cast()).and_then(|info| {
        if info.dli_fname.is_null() || main_base == Some(info.dli_fbase) {
            return None;
        }
        // Safety: dladdr gave a NUL-terminated name.
        let name = unsafe { core::ffi::CStr::from_ptr(info.dli_fname) };
        if name.is_empty() {
            return None;
        }
        let mut real = [0u8; libc::PATH_MAX as usize];
        // Safety: realpath writes at most PATH_MAX bytes into `real`.
        let resolved = unsafe { libc::realpath(name.as_ptr(), real.as_mut_ptr().cast()) };
        Some(if resolved.is_null() {
            leak_name(name.to_bytes())
        } else {
            // Safety: realpath wrote a NUL-terminated name into `real`.
            leak_name(unsafe { core::ffi::CStr::from_ptr(resolved) }.to_bytes())
        })
    });
    let path = match library {
        Some(p) => p?,
        None => {
            let mut target = [0u8; libc::PATH_MAX as usize];
            // Safety: readlink writes at most `target.len()` bytes.
            let n = unsafe {
                libc::readlink(
                    c"/proc/self/exe".as_ptr(),
                    target.as_mut_ptr().cast(),
                    target.len(),
                )
            };
            leak_name(&target[..usize::try_from(n).ok()?])?
        }
    };
    (!path.is_empty()).then_some(path)
}

/// A file name as text, kept for the process: its bytes, with every
/// sequence that is not UTF-8 replaced by U+FFFD (as Rust's lossy
/// conversion does).
fn leak_name(name: &[u8]) -> Option<&'static str> {
    let mut text = [0u8; 3 * libc::PATH_MAX as usize];
    let mut len = 0;
    let mut append = |part: &[u8]| {
        let end = (len + part.len()).min(text.len());
        text[len..end].copy_from_slice(&part[..end - len]);
        len = end;
    };
    for chunk in name.utf8_chunks() {
        append(chunk.valid().as_bytes());
        if !chunk.invalid().is_empty() {
            append("\u{FFFD}".as_bytes());
        }
    }
    let bytes = heap::leak_bytes(&text[..len])?;
    core::str::from_utf8(bytes).ok()
}

/// Whether this process was counted in the section of `build_id` (by a
/// final write of any module of that build, retired ones too).
pub(crate) fn process_written(build_id: u64) -> bool {
    all_nodes().any(|n| n.build_id() == build_id && n.process_written.load(Relaxed))
}

/// How many of the process's threads were written to the section of
/// `build_id` (by any module of that build, retired ones too).
pub(crate) fn threads_written(build_id: u64) -> u64 {
    all_nodes()
        .filter(|n| n.build_id() == build_id)
        .map(|n| n.threads_written.load(Relaxed))
        .max()
        .unwrap_or(0)
}

/// In a fork child: the child has written nothing, to any section.
pub(crate) fn forget_all_writes() {
    all_nodes().for_each(Node::forget_writes);
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
    NODES.iter()
}

impl Node {
    /// The module's build id.
    pub(crate) fn build_id(&self) -> u64 {
        self.build_id.load(Relaxed)
    }

    /// The module's mode (0 block, 1 edge, 2 path).
    pub(crate) fn mode(&self) -> u32 {
        self.mode.load(Relaxed)
    }

    /// The file the module was loaded from, if known.
    pub(crate) fn object(&self) -> Option<&'static str> {
        let p = self.object.load(Acquire);
        // Safety: a leaked name, never freed.
        unsafe { p.as_ref() }.copied()
    }

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
            // In the live file: the marks, then as many region marks.
            p = match crate::live::alloc(bytes.checked_mul(2)?) {
                Some(live) => {
                    let record = self.record.load(Acquire);
                    if !record.is_null() {
                        // Safety: our record in the arena (module record words).
                        unsafe {
                            record.add(7).write(live as u64 + bytes as u64);
                            record.add(8).write(len as u64);
                            (*record.add(6).cast::<AtomicU64>()).store(live as u64, Release);
                        }
                    }
                    live
                }
                None => map_zeroed(bytes)?,
            }
            .cast();
            self.shadow.store(p, Release);
            self.shadow_len.store(len, Release);
        }
        if self.shadow_len.load(Acquire) != len {
            return None;
        }
        // Safety: a zeroed mapping of `len` u64s that is never unmapped.
        Some(unsafe { core::slice::from_raw_parts(p, len) })
    }

    /// Takes the module out of [`nodes`] (called under the dump lock, after
    /// its last write).
    pub(crate) fn retire(&self) {
        self.retired.store(true, Release);
        if let Some(flags) = self.record_word(RECORD_FLAGS) {
            flags.fetch_or(pathprof_format::live::MODULE_RETIRED, AcqRel);
        }
    }

    /// Word `k` of the module's live record, if it has one.
    pub(crate) fn record_word(&self, k: usize) -> Option<&'static AtomicU64> {
        let r = self.record.load(Acquire);
        // Safety: a record in the arena, mapped for good, of at least
        // `MODULE_WORDS` words.
        (!r.is_null() && k < pathprof_format::live::MODULE_WORDS)
            .then(|| unsafe { &*r.add(k).cast::<AtomicU64>() })
    }

    /// Sets the module's live record (continuous mode).
    pub(crate) fn set_record(&self, record: *mut u64) {
        self.record.store(record, Release);
    }

    /// Where a mark's region mark is (continuous mode: the marks are
    /// followed by as many region marks), or null.
    pub(crate) fn region_mark(&self, mark: &AtomicU64) -> *const AtomicU64 {
        let p = self.shadow.load(Acquire);
        if p.is_null() || !crate::live::contains(p as usize) {
            return ptr::null();
        }
        (mark as *const AtomicU64).wrapping_add(self.shadow_len.load(Acquire))
    }

    /// Forgets that this process wrote the module (a fork child has not).
    pub(crate) fn forget_writes(&self) {
        self.process_written.store(false, Relaxed);
        self.threads_written.store(0, Relaxed);
        self.wrote.store(false, Relaxed);
    }

    /// Forgets what has been written of the counters (a module loaded again
    /// starts from zero).
    pub(crate) fn reset_shadow(&self) {
        self.wrote.store(false, Relaxed);
        let p = self.shadow.swap(ptr::null_mut(), AcqRel);
        let len = self.shadow_len.swap(0, AcqRel);
        self.record.store(ptr::null_mut(), Release);
        if !p.is_null() && !crate::live::contains(p as usize) {
            // Safety: called only for a retired node, which no dump reads.
            unsafe { unmap(p.cast(), len * 8) };
        }
    }
}
