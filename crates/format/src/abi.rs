//! The numbers both sides of the runtime ABI spell (`docs/formats.md` §2):
//! `pathprof-llvm` writes them into the descriptors it emits, `pathprof-rt`
//! checks and reads them, and the mode numbers are also what a profile
//! section records ([`crate::RawProfile::mode`]). Defined here, the one crate
//! both sides depend on, so that they cannot drift apart.

/// `PpModule::abi_version`: the layout of `PpModule`, `PpFunction` and
/// `PpHashState` and the meaning of their fields. A runtime ignores a module
/// of another version. Version 2 added per-thread counters: instrumented
/// code counts every counter at its address plus the calling thread's
/// delta (`PpModule::thread_delta`), which the runtime points at a copy of
/// the object's writable data of the thread's own (0: the counters
/// themselves). Version 3 put every function's slots in one array per
/// module (`PpModule::slots`) with, in executables, a thread-local twin the
/// probes count into (`PpModule::thread_slots`), which the runtime reads
/// per thread. Version 5 has no thread-local counters: a thread's copy is
/// memory backed when the thread first counts there; an executable's
/// modules on x86-64 increment their slots and path arrays through `%gs`
/// (`PpModule::segment`), whose base the runtime sets to the thread's delta.
/// `PpModule::flags` took the upper half of what was a 64-bit `segment`
/// within version 5 (zero in objects built before it: no flags).
pub const ABI_VERSION: u32 = 5;

/// `PpModule::segment`: every counter is counted at its address plus the
/// delta the probes load.
pub const SEGMENT_NONE: u32 = 0;
/// `PpModule::segment`: slot and path-array increments address `%gs:`
/// (x86-64: the counter's own address in address space 256), so each
/// thread's GS base must be its delta for the object (0: the counters
/// themselves); hash states and helpers' addresses still use the delta.
pub const SEGMENT_GS: u32 = 1;

/// `PpModule::flags`: the module was built with `--continuous`. A process
/// whose environment does not set `PATHPROF_CONTINUOUS` runs in continuous
/// mode when the first module it registers says so.
pub const MODULE_CONTINUOUS: u32 = 1;

/// `PpModule::mode` and a profile section's mode: block counts.
pub const MODE_BLOCK: u32 = 0;
/// `PpModule::mode` and a profile section's mode: edge counts (chords).
pub const MODE_EDGE: u32 = 1;
/// `PpModule::mode` and a profile section's mode: Ball-Larus paths.
pub const MODE_PATH: u32 = 2;

/// The name of a mode number (`block`, `edge`, `path`; `unknown` for any
/// other number).
pub fn mode_name(mode: u32) -> &'static str {
    match mode {
        MODE_BLOCK => "block",
        MODE_EDGE => "edge",
        MODE_PATH => "path",
        _ => "unknown",
    }
}

/// `PpFunction::path_kind`: the function has no path counters.
pub const PATHS_NONE: u32 = 0;
/// `PpFunction::path_kind`: `paths` is an array of `num_paths` counters.
pub const PATHS_ARRAY: u32 = 1;
/// `PpFunction::path_kind`: `paths` points to a `PpHashState`.
pub const PATHS_HASH: u32 = 2;

/// The size of a `PpHashState` in 64-bit words (zero-initialised by the
/// instrumented program, owned by the runtime).
pub const HASH_STATE_WORDS: usize = 8;

/// The slots of the instrumented code's inline cache, after a `PpHashState`
/// and the cache's *base* word in their global: a direct-mapped table
/// indexed by the 32-bit Fibonacci hash of the path id's low 32 bits,
/// `(u32)((u32)(id + 1) * FIBONACCI_MULTIPLIER_32) >> (32 - log2 HASH_CACHE_SLOTS)`,
/// filled by `__pathprof_hash_count_cached`. A slot holds an entry's address
/// less the base's (ABI 4): the base stays 0, so an empty slot (0) leads to
/// a key of 0, which no entry has, and the inline code needs no test for an
/// empty slot. A power of two. The runtime never dumps them (it reads one
/// on a miss): counts live in the entries. 16384 (128 KB per hashing
/// function and thread, backed only where touched): a function such as
/// xz's `lzma_decode` runs thousands of distinct paths, and with fewer
/// slots their conflicts make a large share of its path ends miss (with
/// 1024, even the few hundred hot paths of SQLite's VDBE conflict), while
/// four times as many slots save little for four times the memory
/// (measured with `bench/callgrind.py`; see `docs/benchmarks.md`).
pub const HASH_CACHE_SLOTS: usize = 16384;

/// The words of a hash-table function's global: the `PpHashState`, the
/// inline cache's base word (index [`HASH_STATE_WORDS`]), its slots.
pub const HASH_GLOBAL_WORDS: usize = HASH_STATE_WORDS + 1 + HASH_CACHE_SLOTS;

/// The multiplier of Fibonacci hashing (2^64 / φ): the runtime's tables'
/// first probe.
pub const FIBONACCI_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// The 32-bit multiplier of Fibonacci hashing (2^32 - 2^32 / φ, the
/// golden ratio's multiplier negated, which spreads ids as well): the
/// inline cache's index. A 32-bit multiply takes no 64-bit constant (a
/// `movabs` or a register held across the function), and a multiplier
/// below 2^31 is one x86's cost model calls free as an immediate, so LLVM's
/// constant hoisting leaves it in the `imul` (2^32 / φ, 0x9e3779b9, is
/// above it: LLVM hoists it into a register and, in SQLite's VDBE, sets it
/// again before each jump to the dispatch). It misses as rarely as the
/// 64-bit hash and runs fewer instructions than either (measured with
/// `bench/callgrind.py`; see `docs/benchmarks.md`).
pub const FIBONACCI_MULTIPLIER_32: u32 = 0x61c8_8647;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_have_names() {
        assert_eq!(
            [MODE_BLOCK, MODE_EDGE, MODE_PATH, 3].map(mode_name),
            ["block", "edge", "path", "unknown"]
        );
    }
}
