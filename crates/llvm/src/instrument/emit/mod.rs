//! Emission: turns a function's [`Placement`] into IR, as inline loads, adds and
//! stores (the only calls are to the runtime's hash table, for hash-stored
//! paths: `__pathprof_hash_count_cached` when the inline cache misses, and
//! `__pathprof_hash_uncount`).
//!
//! - The path register `r` is an `i64` alloca at the top of the entry block, set
//!   to 0 after the block's leading allocas (where the entry ops go); mem2reg/SROA
//!   turn it into SSA values.
//! - `SetPath(c)`: `store c, r`; `AddPath(c)`: `store (load r) + c, r`.
//! - `CountPath(c)`: increments `paths[r + c]` (array) or counts `r + c` in
//!   the hash table through the function's inline cache (hash): the
//!   internal `alwaysinline` helper `__pathprof_hash_count_inline(state, id)`
//!   increments the id's table entry when the cache slot the id hashes to
//!   holds it (two loads and a compare), else calls the runtime's cold
//!   `__pathprof_hash_count_cached(state, slot, id)` (`_atomic` with atomic
//!   updates), which counts and leaves the entry in the slot. The hit stays
//!   inline because after a path's first execution its id is in the slot,
//!   while a runtime call at every path end costs about 80 instructions.
//!   An array path end inside a loop of a function that calls none counts
//!   at a *repeat site* ([`repeats_path_ends`]): `paths[last + c]` when `r
//!   == last`, else `paths[r + c]` and `last = r`, through the internal
//!   `alwaysinline` helper `__pathprof_count_repeat(paths, last, r, c,
//!   zero)`; `last` is a third alloca (0 on entry).
//! - `CountSlot(k)`: increments `slots[k]`, the function's `k`-th slot of the
//!   module's counter array.
//! - Every counter is counted in the calling thread's copy: a function with
//!   counters loads the thread's delta (`abi::ThreadDelta`) once, in its
//!   entry block, and each probe addresses `global + delta` (an integer turned
//!   pointer: the copy is memory LLVM knows nothing of). For the slot and
//!   path-array globals that sum is computed once there too, behind an empty
//!   `asm`, so that each probe is one instruction on a register
//!   ([`Site::pinned_bases`]). No counter is thread-local data: a thread's
//!   copy is memory the runtime backs when the thread first counts there.
//! - A PPP function (preferential path profiling) has a second register `q`,
//!   an `i64` alloca beside `r`: `SetPpp(c)` / `AddPpp(c)` as above;
//!   `CountPpp { bl, ppp }` calls an internal helper,
//!   `__pathprof_ppp_count_{array,hash}(ppp, owners, interval, residual, p, key, b)`
//!   with `p = q + ppp` and `key = b = r + bl`,
//!   defined once per module (`alwaysinline`, so after inlining the count is
//!   inline code): `p < interval && owners[p] == key` (one compare each, the
//!   owners a private constant table) increments `ppp[p]` (= `&slots[base]`),
//!   else it counts Ball-Larus id `b` as `CountPath` does (array element or
//!   hash-table call). Its undo (`Call` probes) is `__pathprof_ppp_uncount_*`,
//!   the same test with `decrement` / `__pathprof_hash_uncount`.
//! - Where both registers fit one word (`PppSlots::packing`) there is no `q`:
//!   `r` holds the word and `CountPacked(c)` calls `..._packed` variants of
//!   the helpers with `key = r + c - min` and `entry = key & mask`: they
//!   test `owners[entry] == key` with no range check (the owner table is the
//!   packing's window, an entry per value of the mask, holding the
//!   interesting paths' keys), count in `ppp[entry]` (= `&slots[base +
//!   min]`) and compute Ball-Larus id `b = key >> bits` for a residual path
//!   only.
//!   An add of a constant beyond 32 bits takes it through an empty `asm`:
//!   LLVM otherwise hoists such constants out of a loop into registers,
//!   which a large loop (SQLite's VDBE) spills and then reloads from the
//!   stack at every round.
//! - An increment is `store (load p) + 1, p` (x86: one `addq $1, mem`; a
//!   64-bit counter takes 58 years to wrap at 10^10 increments a second, so
//!   it does not saturate: `llvm.uadd.sat` would add a load, a compare and
//!   a select to every probe), or
//!   `atomicrmw add p, 1 monotonic` with atomic updates.
//!
//! A `Call(b, k)` probe goes around the k-th counted call of block b
//! ([`walk::counted_calls`], found before any edit). Just before the call its ops
//! run on a *scratch* copy of `r` (`load r`, then `SetPath`/`AddPath` change the
//! copy, never `r`); its counts are made as above. Right after the call (before
//! the next instruction) each count is undone, reusing the counter addresses and
//! path ids computed before the call:
//! - array or slot counter: `store (c == 0 ? c : c - 1), p` for `c = load p`,
//!   i.e. minus one except at 0 (never below: with plain updates a racing
//!   thread can lose the count being undone); with atomic updates
//!   `atomicrmw usub_sat p, 1 monotonic`;
//! - hash: `__pathprof_hash_uncount(state, id)`.
//!
//! Around an `invoke` (a counted call that terminates its block) the undo goes
//! on its normal edge and into its landing pad instead ([`super::unwind`]).
//!
//! Within a block: the start ops, then the body with its call probes, then the
//! end ops (the code around a call is inserted right next to it, so it stays
//! between the two whatever order they are emitted in).
//!
//! Probe instructions carry no debug location, except that a call to the runtime
//! gets line 0 of the function (see [`ffi::set_line0_location`]).
//!
//! The start of a block is its first instruction that is not a phi, a landing pad,
//! a catch pad or a cleanup pad. The end is before its terminator, except that in
//! a block ending `musttail call; [bitcast;] ret` it is before the call, which
//! must stay next to the `ret`, and in a block ending `call; unreachable` (a
//! call to `exit`, `abort`...) it is before that call, the last point control
//! reaches, and in a block ending `call; br` where the call returns more than
//! once (`fork`, `setjmp`: a resume edge follows) it is before that call too.
//! A block that is only a `catchswitch` has neither.

use super::abi::{enum_attribute, Counters, PathCounters, ThreadDelta};
use super::place::{self, Placement};
use super::split;
use super::unwind::Unwinds;
use super::LARGE_FUNCTION_BLOCKS;
use crate::error::LlvmError;
use crate::ffi;
use crate::walk::{self, Body};
use inkwell::attributes::AttributeLoc;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::types::IntType;
use inkwell::values::LLVMTailCallKind;
use inkwell::values::{
    AsValueRef, FunctionValue, GlobalValue, InstructionOpcode, InstructionValue, IntValue,
    PointerValue,
};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, IntPredicate};
use pathprof_core::plan::Op;
use pathprof_core::Cfg;
use pathprof_format::abi::{FIBONACCI_MULTIPLIER_32, HASH_CACHE_SLOTS, HASH_STATE_WORDS};
use std::collections::HashMap;

mod forms;
mod helpers;
mod positions;
mod site;

use forms::{pins_bases, repeats_path_ends};
pub(super) use positions::first_insertion_point;
use positions::{catchswitch, musttail_call_before, no_return_call_before};
use site::{Repeat, Site};

/// What every function's emission shares.
pub(crate) struct Emitter<'ctx> {
    builder: Builder<'ctx>,
    i64_type: IntType<'ctx>,
    /// The runtime's hash functions, indexed by [`HashFn`]; declared on first use.
    hash_fns: [Option<FunctionValue<'ctx>>; 3],
    /// The inline-cache hash count helper; defined on first use.
    hash_inline: Option<FunctionValue<'ctx>>,
    /// The repeat-site path count helpers ([`repeats_path_ends`]), of an
    /// array as an address and through `%gs`; defined on first use.
    repeat_fns: [Option<FunctionValue<'ctx>>; 2],
    /// The PPP helpers, indexed by `4 * packed + 2 * uncount + hash`;
    /// defined on first use.
    ppp_fns: [Option<FunctionValue<'ctx>>; 8],
    /// Whether the function being emitted counts its slots with volatile
    /// accesses ([`super::scope`]).
    volatile_slots: bool,
    atomic: bool,
    /// The module's thread delta, when it has counters.
    delta: Option<ThreadDelta<'ctx>>,
    /// The module's slots and path arrays may be incremented through `%gs`,
    /// whose base the runtime sets to each thread's delta ([`Site::direct`]).
    segment: bool,
}

pub(super) const POSITIONED: &str = "the builder is positioned";

/// The runtime's hash-table entry points the emitted code calls (docs/formats.md
/// §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HashFn {
    /// `void (uint64_t *state, uint64_t id)`: undo one count.
    Uncount = 0,
    /// `void (uint64_t *state, uint64_t *slot, uint64_t id)`: an inline
    /// cache's miss (declared `cold`).
    CountCached = 1,
    /// The same with atomic updates (exact across threads, slower).
    CountCachedAtomic = 2,
}

impl HashFn {
    fn name(self) -> &'static str {
        match self {
            HashFn::Uncount => "__pathprof_hash_uncount",
            HashFn::CountCached => "__pathprof_hash_count_cached",
            HashFn::CountCachedAtomic => "__pathprof_hash_count_cached_atomic",
        }
    }

    /// Whether it counts (through an inline cache's slot, passed between
    /// the state and the id).
    fn cached(self) -> bool {
        self != HashFn::Uncount
    }
}

/// One count a `Call` probe made, to undo after the call.
#[derive(Clone, Copy, Debug)]
enum Counted<'ctx> {
    /// A slot or array path counter at this address.
    Counter(PointerValue<'ctx>),
    /// A hash-table path: (state, id).
    Hash(PointerValue<'ctx>, IntValue<'ctx>),
    /// A PPP count: the helper's arguments, whether the residual table
    /// hashes and whether the registers are packed.
    Ppp(
        [inkwell::values::BasicMetadataValueEnum<'ctx>; 7],
        bool,
        bool,
    ),
}

impl<'ctx> Emitter<'ctx> {
    pub fn new(
        module: &Module<'ctx>,
        atomic: bool,
        delta: Option<ThreadDelta<'ctx>>,
        segment: bool,
    ) -> Self {
        let context = module.get_context();
        let i64_type = context.i64_type();
        Emitter {
            builder: context.create_builder(),
            i64_type,
            hash_fns: [None; 3],
            hash_inline: None,
            repeat_fns: [None; 2],
            ppp_fns: [None; 8],
            volatile_slots: false,
            atomic,
            delta,
            segment,
        }
    }

    /// The helpers defined so far (the inline-cache hash count, the
    /// repeat-site path count and the PPP counts), which LLVM inlines into
    /// the probes: every memory access in them is pathprof's.
    pub fn helpers(&self) -> impl Iterator<Item = FunctionValue<'ctx>> + '_ {
        self.hash_inline
            .iter()
            .chain(self.repeat_fns.iter().flatten())
            .chain(self.ppp_fns.iter().flatten())
            .copied()
    }

    /// Splits the placement's edges, then emits all its ops into `body`;
    /// with `volatile_slots`, slot increments are volatile.
    pub fn function(
        &mut self,
        module: &Module<'ctx>,
        body: &Body<'ctx>,
        cfg: &Cfg,
        placement: &Placement,
        counters: Counters<'ctx>,
        volatile_slots: bool,
    ) -> Result<(), LlvmError> {
        self.volatile_slots = volatile_slots;
        let context = module.get_context();
        // The calls of `Call` probes, found before anything is inserted.
        let mut calls_of: HashMap<usize, Vec<InstructionValue<'ctx>>> = HashMap::new();
        let mut call_probes = Vec::with_capacity(placement.calls.len());
        for (b, k, ops) in &placement.calls {
            let calls = calls_of
                .entry(b.index())
                .or_insert_with(|| walk::counted_calls(body.blocks[b.index()]).collect());
            let call = calls.get(*k as usize).ok_or_else(|| LlvmError::BadPlan {
                function: body.name.clone(),
                detail: format!(
                    "block {b} has no counted call {k} in the IR (was the module changed after extraction?)"
                ),
            })?;
            call_probes.push((*call, ops));
        }
        let mut split_blocks = Vec::with_capacity(placement.splits.len());
        for (e, ops) in &placement.splits {
            let block = split::split_edge(context, &self.builder, body, cfg.edge(*e))?;
            split_blocks.push((block, ops));
        }

        let through_gs = self.segment
            && !call_probes
                .iter()
                .any(|(call, _)| call.get_opcode() == InstructionOpcode::Invoke);
        let mut site = Site {
            emitter: self,
            module,
            counters,
            function: body.function,
            through_gs,
            r: None,
            q: None,
            repeat: None,
            in_loop: false,
            delta: None,
            bases: Vec::new(),
        };
        // Entry: the path register first of all, then (after the block's leading
        // allocas) r = 0, the FunctionEntry ops and the entry block's start ops.
        let entry = body.blocks[0];
        // The PPP register (preferential path profiling) likewise, and the
        // path register's value at the last end counted inside a loop, when
        // path ends there count at a repeat site (see [`repeats_path_ends`]).
        let depth = pathprof_core::weights::loop_depths(cfg);
        let repeats = repeats_path_ends(
            body,
            cfg,
            placement,
            &counters,
            &depth,
            volatile_slots && !site.emitter.atomic,
        );
        let registers = [
            (placement.uses_path_register(), "pp.path"),
            (placement.uses_ppp_register(), "pp.ppp"),
            (repeats, "pp.last"),
        ];
        let mut allocas = [None, None, None];
        for ((used, name), alloca) in registers.into_iter().zip(&mut allocas) {
            if used {
                site.position_at_start(body, 0)?;
                let reg = site
                    .emitter
                    .builder
                    .build_alloca(site.emitter.i64_type, name);
                *alloca = Some(reg.expect(POSITIONED));
            }
        }
        let last;
        [site.r, site.q, last] = allocas;
        let after_allocas = entry
            .get_instructions()
            .find(|i| i.get_opcode() != InstructionOpcode::Alloca)
            .expect("a block ends with a terminator");
        site.emitter.position_before(&after_allocas);
        for reg in [site.r, site.q, last].into_iter().flatten() {
            let zero = site.emitter.i64_type.const_zero();
            site.emitter
                .builder
                .build_store(reg, zero)
                .expect(POSITIONED);
        }
        // Through `%gs`, only the PPP helpers' addresses and hash states are
        // at the delta.
        let flat = !site.through_gs
            || counters.ppp.is_some()
            || matches!(counters.paths, PathCounters::Hash(_));
        if counters.at_delta() && flat {
            site.delta = Some(site.load_delta());
            if pins_bases(body, placement) {
                site.bases = site.pinned_bases();
            }
        }
        if repeats {
            let zero = site.emitter.i64_type.const_zero();
            let zero = site.opaque(zero);
            site.repeat = last.map(|last| Repeat { last, zero });
        }
        site.ops(&placement.entry);
        site.ops(&placement.start[0]);

        for b in cfg.blocks() {
            site.in_loop = place::in_loop(&depth, b);
            let b = b.index();
            if b != 0 && !placement.start[b].is_empty() {
                site.position_at_start(body, b)?;
                site.ops(&placement.start[b]);
            }
            if !placement.end[b].is_empty() {
                site.position_at_end(body, b)?;
                site.ops(&placement.end[b]);
            }
        }
        for ((block, ops), (e, _)) in split_blocks.into_iter().zip(&placement.splits) {
            site.in_loop = place::edge_in_loop(cfg, &depth, *e);
            let br = block.get_terminator().expect("a split block ends in br");
            site.emitter.position_before(&br);
            site.ops(ops);
        }
        site.in_loop = false;
        let mut unwinds = None;
        for (call, ops) in call_probes {
            let counted = site.call_probe(call, ops);
            if call.get_opcode() == InstructionOpcode::Invoke {
                let counter = match counted[..] {
                    [] => continue,
                    [Counted::Counter(p)] => p,
                    _ => {
                        return Err(LlvmError::BadPlan {
                            function: body.name.clone(),
                            detail: "a probe around an invoke may count only one counter".into(),
                        })
                    }
                };
                let unwinds = unwinds.get_or_insert_with(|| Unwinds::new(site.emitter, body));
                unwinds.undo_after(site.emitter, context, body, call, counter)?;
            } else if !counted.is_empty() {
                let after = call
                    .get_next_instruction()
                    .expect("a call is followed at least by its block's terminator");
                site.undo(after, &counted);
            }
        }
        Ok(())
    }

    pub(super) fn builder(&self) -> &Builder<'ctx> {
        &self.builder
    }

    /// Positions the builder before `at`. Probe code gets no debug location (LLVM
    /// would give it `at`'s, with its key-instruction atom).
    pub(super) fn position_before(&self, at: &InstructionValue<'ctx>) {
        self.builder.position_before(at);
        self.builder.unset_current_debug_location();
    }

    fn increment(&self, ptr: PointerValue<'ctx>) {
        self.add_one(ptr, false);
    }

    /// [`increment`](Self::increment) of a slot: a volatile load and store
    /// where the function is in [`super::scope`]'s alias scope, so that
    /// LLVM neither keeps the counter in a register across a loop (a store
    /// at every round) nor moves its stores to the loop's exits (a thread
    /// interrupted in the loop would hold executions not yet counted): one
    /// `incq` of memory.
    fn increment_slot(&self, ptr: PointerValue<'ctx>) {
        self.add_one(ptr, self.volatile_slots);
    }

    fn add_one(&self, ptr: PointerValue<'ctx>, volatile: bool) {
        let one = self.i64_type.const_int(1, false);
        self.update(ptr, AtomicRMWBinOp::Add, volatile, |b, old| {
            b.build_int_add(old, one, "pp.count.inc").expect(POSITIONED)
        });
    }

    /// Undoes one [`increment`](Self::increment) of `*ptr`: minus one, except
    /// that a counter at 0 stays.
    pub(super) fn decrement(&self, ptr: PointerValue<'ctx>) {
        let one = self.i64_type.const_int(1, false);
        let zero = self.i64_type.const_zero();
        self.update(ptr, AtomicRMWBinOp::USubSat, false, |b, old| {
            let stays = b
                .build_int_compare(IntPredicate::EQ, old, zero, "pp.count.stays")
                .expect(POSITIONED);
            let less = b.build_int_sub(old, one, "pp.count.dec").expect(POSITIONED);
            b.build_select(stays, old, less, "pp.count.undo")
                .expect(POSITIONED)
                .into_int_value()
        });
    }

    /// One update of the counter at `ptr` by 1: `atomic_op` where updates
    /// are atomic, else a load, `modify` of the old value and a store (both
    /// volatile with `volatile`).
    fn update(
        &self,
        ptr: PointerValue<'ctx>,
        atomic_op: AtomicRMWBinOp,
        volatile: bool,
        modify: impl FnOnce(&Builder<'ctx>, IntValue<'ctx>) -> IntValue<'ctx>,
    ) {
        let b = &self.builder;
        if self.atomic {
            let one = self.i64_type.const_int(1, false);
            b.build_atomicrmw(atomic_op, ptr, one, AtomicOrdering::Monotonic)
                .expect(POSITIONED);
            return;
        }
        let old = b
            .build_load(self.i64_type, ptr, "pp.count")
            .expect(POSITIONED)
            .into_int_value();
        let store = b.build_store(ptr, modify(b, old)).expect(POSITIONED);
        if volatile {
            for access in [old.as_instruction().expect("a load"), store] {
                access.set_volatile(true).expect("a load or store");
            }
        }
    }

    /// `&array[index]` for an `i64` array: a thread's copy of counter
    /// global (see [`Site::counters_at`]), or the PPP owners table.
    fn element(&self, array: PointerValue<'ctx>, index: IntValue<'ctx>) -> PointerValue<'ctx> {
        // Safety: `array` is an array of `len` i64s and `index` is a slot
        // number checked against `num_slots`, or a path id the planner
        // guarantees is below the array's length (docs/formats.md §1). Not
        // `inbounds`: a thread's copy is no object LLVM knows of.
        unsafe {
            self.builder
                .build_gep(self.i64_type, array, &[index], "pp.counter")
                .expect(POSITIONED)
        }
    }
}
