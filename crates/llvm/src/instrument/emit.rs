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
//!   ([`Site::pinned_bases`]). Slots with a thread-local twin
//!   ([`abi::ModuleArray::thread`]) are counted in it instead: each slot probe
//!   is one `incq %fs:k`, with no delta and no register; in a function that
//!   counts a slot inside a loop, `incq %fs:k(,%reg,8)` with an opaque zero
//!   in the register, so that the CPU forwards one round's increment to the
//!   next at once ([`renames_slots`]).
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

use super::abi::{self, enum_attribute, Counters, PathCounters, ThreadDelta};
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

/// What every function's emission shares.
pub(crate) struct Emitter<'ctx> {
    builder: Builder<'ctx>,
    i64_type: IntType<'ctx>,
    /// The runtime's hash functions, indexed by [`HashFn`]; declared on first use.
    hash_fns: [Option<FunctionValue<'ctx>>; 3],
    /// The inline-cache hash count helper; defined on first use.
    hash_inline: Option<FunctionValue<'ctx>>,
    /// The repeat-site path count helper ([`repeats_path_ends`]); defined
    /// on first use.
    repeat_fn: Option<FunctionValue<'ctx>>,
    /// The PPP helpers, indexed by `4 * packed + 2 * uncount + hash`;
    /// defined on first use.
    ppp_fns: [Option<FunctionValue<'ctx>>; 8],
    /// Whether the function being emitted counts its slots with volatile
    /// accesses ([`super::scope`]).
    volatile_slots: bool,
    atomic: bool,
    /// The module's thread delta, when it has counters.
    delta: Option<ThreadDelta<'ctx>>,
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
    pub fn new(module: &Module<'ctx>, atomic: bool, delta: Option<ThreadDelta<'ctx>>) -> Self {
        let context = module.get_context();
        let i64_type = context.i64_type();
        Emitter {
            builder: context.create_builder(),
            i64_type,
            hash_fns: [None; 3],
            hash_inline: None,
            repeat_fn: None,
            ppp_fns: [None; 8],
            volatile_slots: false,
            atomic,
            delta,
        }
    }

    /// The helpers defined so far (the inline-cache hash count, the
    /// repeat-site path count and the PPP counts), which LLVM inlines into
    /// the probes: every memory access in them is pathprof's.
    pub fn helpers(&self) -> impl Iterator<Item = FunctionValue<'ctx>> + '_ {
        self.hash_inline
            .iter()
            .chain(&self.repeat_fn)
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

        let mut site = Site {
            emitter: self,
            module,
            counters,
            function: body.function,
            r: None,
            q: None,
            repeat: None,
            in_loop: false,
            delta: None,
            bases: Vec::new(),
            slot_zero: None,
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
        if counters.at_delta() {
            site.delta = Some(site.load_delta());
            if pins_bases(body, placement) {
                site.bases = site.pinned_bases();
            }
        }
        let slots_renamed = renames_slots(body, cfg, placement, &counters, &depth);
        if slots_renamed || repeats {
            let zero = site.emitter.i64_type.const_zero();
            let zero = site.opaque(zero);
            site.slot_zero = slots_renamed.then_some(zero);
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

/// Whether a function holds its counters' addresses from entry
/// ([`Site::pinned_bases`]): when it counts at two places or more (with one,
/// the base costs its `lea` on entry instead of at the probe, and a run
/// that passes no probe pays it for nothing) and is not one of the largest
/// ([`LARGE_FUNCTION_BLOCKS`]: their registers are scarce, and one held
/// from the entry pushes other values to the stack, which costs more
/// instructions than the `lea`s it saves; measured with
/// `bench/callgrind.py`, see `docs/benchmarks.md`).
fn pins_bases(body: &Body<'_>, placement: &Placement) -> bool {
    body.blocks.len() <= LARGE_FUNCTION_BLOCKS && placement.counts() >= 2
}

/// Whether a function indexes its slots in the thread-local twin by an
/// opaque zero ([`Site::slot_zero`]): when it counts a slot inside a loop
/// (`depth`: loop depth per block), unless it is one of the largest
/// functions, whose registers are scarce.
/// A probe is then `incq %fs:k(,%reg,8)` rather than `incq %fs:k`: AMD Zen
/// forwards a store to the next load of the same address with no latency
/// (memory renaming) only when the address has a register, so a loop
/// incrementing one counter at an absolute address waits about five cycles
/// a round for the last round's store, and with the register about one
/// (`bench/renaming.c`, see `bench/README.md`). The zero's register is held
/// from the entry: made at each probe, LLVM does not hoist it out of every
/// loop (zlib's `longest_match`), and each probe pays for it again. So the
/// function runs a few more instructions and, where a loop waits on its
/// counter, less time (measured with `bench/overhead.py`, see
/// `docs/benchmarks.md`). Unlike the alias scope, this keeps the largest
/// functions' direct callees in: their loops are hot ones, such as Lua's
/// table lookups. Path arrays get no zero: they are indexed by the path
/// register already, and a zero would only take a register.
fn renames_slots(
    body: &Body<'_>,
    cfg: &Cfg,
    placement: &Placement,
    counters: &Counters<'_>,
    depth: &[u32],
) -> bool {
    let twinned = counters
        .slots
        .is_some_and(|slots| slots.array.thread.is_some());
    twinned
        && body.blocks.len() <= LARGE_FUNCTION_BLOCKS
        && placement.counts_slot_in_loop(cfg, depth)
}

/// Whether a function counts its path ends inside loops at a *repeat site*
/// ([`Site::count_repeat`]): when it is in [`super::scope`]'s alias scope
/// (not one of the largest functions or what LLVM may inline into them) and
/// counts without atomic updates (`scoped_plain`), its paths count in an
/// array, it ends a path at a block or edge inside a loop, and it calls no
/// function ([`calls_out`]).
///
/// A path end is `incq array(,%id,8)`, one instruction for every path. AMD
/// Zen forwards a store to the next load of the same instruction and
/// address at once (memory renaming, see [`renames_slots`]); when a loop's
/// path changes, the increment's next load predicts its value from the
/// last store, of another counter, and the CPU starts over from it, several
/// times a round's cost (`bench/renaming.c`, see `bench/README.md`). So an
/// end inside a loop compares the path register with its value at the last
/// end counted there: a repeated path is counted by an increment indexed by
/// that register, which changes only when the path does; another path by a
/// second increment, which also makes it the last. Every count is still
/// made in memory when its path ends.
///
/// It pays in a tight loop that waits on its path end, such as zlib's
/// `longest_match` chain loop. The conditions keep it out of the rest: a
/// function that calls keeps its loops' values in callee-saved registers,
/// which the compare and the repeat site's two registers push to the stack
/// (bzip2's block sort, whose loops mostly repeat one path and are
/// forwarded already); and in the largest functions and what they inline
/// (SQLite's VDBE) the compares cost more than the forwarding saves
/// (measured with `bench/overhead.py`, see `docs/benchmarks.md`).
fn repeats_path_ends(
    body: &Body<'_>,
    cfg: &Cfg,
    placement: &Placement,
    counters: &Counters<'_>,
    depth: &[u32],
    scoped_plain: bool,
) -> bool {
    scoped_plain
        && matches!(
            counters.paths,
            PathCounters::Array(_) | PathCounters::InModule(_)
        )
        && !calls_out(body)
        && placement.ends_path_in_loop(cfg, depth)
}

/// Whether `body` calls a function (an intrinsic or inline `asm` is no
/// call): then the values it keeps across calls compete for the six
/// callee-saved registers with a repeat site's two.
fn calls_out(body: &Body<'_>) -> bool {
    body.blocks
        .iter()
        .flat_map(|b| b.get_instructions())
        .filter_map(|i| Some((ffi::call_site(i)?, i)))
        .any(|(call, i)| {
            !ffi::calls_inline_asm(i)
                && call
                    .get_called_fn_value()
                    .is_none_or(|f| !f.get_name().to_bytes().starts_with(b"llvm."))
        })
}

/// Emission into one function.
struct Site<'e, 'ctx> {
    emitter: &'e mut Emitter<'ctx>,
    module: &'e Module<'ctx>,
    counters: Counters<'ctx>,
    /// The function being instrumented.
    function: FunctionValue<'ctx>,
    /// The path register, when the function uses one.
    r: Option<PointerValue<'ctx>>,
    /// The PPP register, when the function uses one.
    q: Option<PointerValue<'ctx>>,
    /// The repeat sites' state, when path ends inside loops count there
    /// ([`repeats_path_ends`]).
    repeat: Option<Repeat<'ctx>>,
    /// Whether the ops being emitted run inside a loop.
    in_loop: bool,
    /// The thread's counter delta, loaded once in the entry block, when the
    /// function has counters.
    delta: Option<IntValue<'ctx>>,
    /// The counter globals whose address in the calling thread is computed
    /// once, in the entry block (see [`Site::pinned_bases`]), with it.
    bases: Vec<(GlobalValue<'ctx>, PointerValue<'ctx>)>,
    /// An opaque zero added to the index of every slot counted in the
    /// thread-local twin (see [`renames_slots`]), when the function has one.
    slot_zero: Option<IntValue<'ctx>>,
}

/// What a function's repeat sites ([`Site::count_repeat`]) share.
#[derive(Clone, Copy)]
struct Repeat<'ctx> {
    /// An `i64` alloca (0 on entry): the path register's value at the last
    /// path end counted inside a loop.
    last: PointerValue<'ctx>,
    /// An opaque zero (the same as `slot_zero` where both are made) added,
    /// in bytes, to the address of a repeated path's increment.
    zero: IntValue<'ctx>,
}

impl<'ctx> Site<'_, 'ctx> {
    fn position_at_start(&self, body: &Body<'ctx>, b: usize) -> Result<(), LlvmError> {
        let at = first_insertion_point(body.blocks[b]).ok_or_else(|| catchswitch(body, b))?;
        self.emitter.position_before(&at);
        Ok(())
    }

    fn position_at_end(&self, body: &Body<'ctx>, b: usize) -> Result<(), LlvmError> {
        let term = walk::terminator(body, b)?;
        if term.get_opcode() == InstructionOpcode::CatchSwitch {
            return Err(catchswitch(body, b));
        }
        let at = musttail_call_before(term)
            .or_else(|| no_return_call_before(term))
            .or_else(|| walk::resume_call_before(term))
            .unwrap_or(term);
        self.emitter.position_before(&at);
        Ok(())
    }

    fn ops(&mut self, ops: &[Op]) {
        for &op in ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::SetPath(c) => self.set(self.path_register(), c),
            Op::AddPath(c) => self.add(self.path_register(), c),
            Op::CountPath(c) => match self.repeat.filter(|_| self.in_loop) {
                Some(repeat) => self.count_repeat(repeat, c),
                None => {
                    let id = self.path_plus(self.path_register(), c);
                    self.count_path(id);
                }
            },
            Op::CountSlot(k) => {
                self.count_slot(k);
            }
            Op::SetPpp(c) => self.set(self.ppp_register(), c),
            Op::AddPpp(c) => self.add(self.ppp_register(), c),
            Op::CountPpp { bl, ppp } => {
                let id = self.path_plus(self.path_register(), bl);
                let p = self.path_plus(self.ppp_register(), ppp);
                self.count_ppp(false, [p, id, id]);
            }
            Op::CountPacked(c) => {
                let word = self.path_plus(self.path_register(), c);
                self.count_packed(word);
            }
        }
    }

    /// `*__pathprof_thread_delta_variable` of the calling thread, at the
    /// builder's position.
    fn load_delta(&self) -> IntValue<'ctx> {
        let delta = self
            .emitter
            .delta
            .expect("a module with counters defines the thread delta");
        let b = &self.emitter.builder;
        let address = delta.in_this_thread(self.module, b);
        b.build_load(self.emitter.i64_type, address, "pp.delta")
            .expect(POSITIONED)
            .into_int_value()
    }

    /// The thread's addresses of the slot and path-array globals (when
    /// [`pins_bases`]), at the
    /// builder's position (the entry block), each through an empty inline
    /// `asm` (no side effects, no memory, so it is still hoisted, merged and
    /// deleted like arithmetic). Code generation then keeps each in one
    /// register (or a spill slot) and a probe is one `addq $1, k(%reg)`.
    /// Without it, code generation folds `global + delta` into every probe's
    /// address and, in a position-independent executable, rematerialises a
    /// `lea global(%rip)` at probes after calls (`freeze` does not stop
    /// that: InstCombine moves it onto the delta). A hash-table function's
    /// state is left out: its paths count through the inline cache, whose
    /// own address arithmetic needs no register held.
    fn pinned_bases(&self) -> Vec<(GlobalValue<'ctx>, PointerValue<'ctx>)> {
        let array = match self.counters.paths {
            PathCounters::Array(g) => Some(g),
            PathCounters::None | PathCounters::Hash(_) | PathCounters::InModule(_) => None,
        };
        let slots = self.counters.slots.map(|s| s.array);
        let slots = slots.filter(|a| a.thread.is_none()).map(|a| a.global);
        [slots, array]
            .into_iter()
            .flatten()
            .map(|g| {
                let at = self.opaque(self.thread_address(g));
                (g, self.as_pointer(g, at))
            })
            .collect()
    }

    /// `global + delta`, as an integer, at the builder's position.
    fn thread_address(&self, g: GlobalValue<'ctx>) -> IntValue<'ctx> {
        let delta = self
            .delta
            .expect("a function with counters loads the delta");
        let b = &self.emitter.builder;
        let at = b
            .build_ptr_to_int(g.as_pointer_value(), self.emitter.i64_type, "pp.global")
            .expect(POSITIONED);
        b.build_int_add(at, delta, "pp.mine").expect(POSITIONED)
    }

    /// Address `at` of `g`'s copy as a pointer: an integer turned pointer,
    /// as the thread's block is memory LLVM knows nothing of, so the pointer
    /// may not be `g`'s.
    fn as_pointer(&self, g: GlobalValue<'ctx>, at: IntValue<'ctx>) -> PointerValue<'ctx> {
        self.emitter
            .builder
            .build_int_to_ptr(at, g.as_pointer_value().get_type(), "pp.counters")
            .expect(POSITIONED)
    }

    /// `value`, through an empty inline `asm` the optimisers cannot see into.
    fn opaque(&self, value: IntValue<'ctx>) -> IntValue<'ctx> {
        let context = self.module.get_context();
        let i64_type = self.emitter.i64_type;
        let ty = i64_type.fn_type(&[i64_type.into()], false);
        let asm = context.create_inline_asm(
            ty,
            String::new(),
            "=r,0".to_string(),
            false,
            false,
            None,
            false,
        );
        let call = self
            .emitter
            .builder
            .build_indirect_call(ty, asm, &[value.into()], "pp.base")
            .expect(POSITIONED);
        for name in ["nounwind", "willreturn", "memory"] {
            call.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
        }
        call.try_as_basic_value()
            .expect_basic("the asm returns its operand")
            .into_int_value()
    }

    /// Where the calling thread counts counter global `g`: its pinned base,
    /// or its address plus the thread's delta, computed here.
    fn counters_at(&self, g: GlobalValue<'ctx>) -> PointerValue<'ctx> {
        match self.bases.iter().find(|(global, _)| *global == g) {
            Some(&(_, at)) => at,
            None => self.as_pointer(g, self.thread_address(g)),
        }
    }

    /// The calling thread's copy of the function's slot `k`.
    fn slot(&self, k: u32) -> PointerValue<'ctx> {
        let slots = self
            .counters
            .slots
            .expect("placement checked the slot number");
        self.in_module(slots, k.into(), self.slot_zero)
    }

    /// The calling thread's copy of the function's path array (its first
    /// counter).
    fn path_array(&self) -> PointerValue<'ctx> {
        match self.counters.paths {
            PathCounters::Array(g) => self.counters_at(g),
            PathCounters::InModule(span) => self.in_module(span, 0, None),
            PathCounters::None | PathCounters::Hash(_) => {
                unreachable!("placement checked the path array")
            }
        }
    }

    /// The calling thread's copy of counter `k` of `span`: in the module
    /// array's thread-local twin (indexed by `zero + k`, when given), or at
    /// its base (see [`Site::counters_at`]).
    fn in_module(
        &self,
        span: abi::Span<'ctx>,
        k: u64,
        zero: Option<IntValue<'ctx>>,
    ) -> PointerValue<'ctx> {
        let mut index = self.emitter.i64_type.const_int(span.offset + k, false);
        let array = match span.array.thread {
            Some(twin) => {
                if let Some(zero) = zero {
                    index = self
                        .emitter
                        .builder
                        .build_int_add(zero, index, "pp.index")
                        .expect(POSITIONED);
                }
                abi::in_this_thread(self.module, &self.emitter.builder, twin)
            }
            None => self.counters_at(span.array.global),
        };
        self.emitter.element(array, index)
    }

    fn path_register(&self) -> PointerValue<'ctx> {
        self.r.expect("path ops imply a path register")
    }

    fn ppp_register(&self) -> PointerValue<'ctx> {
        self.q.expect("PPP ops imply a PPP register")
    }

    /// `reg = c`.
    fn set(&self, reg: PointerValue<'ctx>, c: i64) {
        let c = self.constant(c);
        self.emitter.builder.build_store(reg, c).expect(POSITIONED);
    }

    /// `reg += c`.
    fn add(&self, reg: PointerValue<'ctx>, c: i64) {
        let sum = if i32::try_from(c).is_ok() {
            self.path_plus(reg, c)
        } else {
            let v = self.path_plus(reg, 0);
            let c = self.opaque(self.constant(c));
            self.emitter
                .builder
                .build_int_add(v, c, "pp.r.add")
                .expect(POSITIONED)
        };
        self.emitter
            .builder
            .build_store(reg, sum)
            .expect(POSITIONED);
    }

    /// The ops of a `Call` probe on a scratch copy of `r`, before `call` (see
    /// the module doc); returns the counts they made, for the caller to undo.
    fn call_probe(&mut self, call: InstructionValue<'ctx>, ops: &[Op]) -> Vec<Counted<'ctx>> {
        self.emitter.position_before(&call);
        // The scratch path value, `load r` on first use.
        let mut scratch: Option<IntValue<'ctx>> = None;
        let mut scratch_q: Option<IntValue<'ctx>> = None;
        let mut counted = Vec::new();
        for &op in ops {
            match op {
                Op::SetPath(c) => scratch = Some(self.constant(c)),
                Op::AddPath(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    scratch = Some(self.plus(v, c));
                }
                Op::SetPpp(c) => scratch_q = Some(self.constant(c)),
                Op::AddPpp(c) => {
                    let v = self.scratch(self.ppp_register(), &mut scratch_q);
                    scratch_q = Some(self.plus(v, c));
                }
                Op::CountPpp { bl, ppp } => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let id = self.plus(v, bl);
                    let v = self.scratch(self.ppp_register(), &mut scratch_q);
                    let p = self.plus(v, ppp);
                    counted.push(self.count_ppp(false, [p, id, id]));
                }
                Op::CountPacked(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let word = self.plus(v, c);
                    counted.push(self.count_packed(word));
                }
                Op::CountPath(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let id = self.plus(v, c);
                    counted.push(self.count_path(id));
                }
                Op::CountSlot(k) => counted.push(self.count_slot(k)),
            }
        }
        counted
    }

    /// Undoes every count in `counted`, before `at`.
    fn undo(&mut self, at: InstructionValue<'ctx>, counted: &[Counted<'ctx>]) {
        self.emitter.position_before(&at);
        for &c in counted {
            match c {
                Counted::Counter(p) => self.emitter.decrement(p),
                Counted::Hash(state, id) => self.call_hash(HashFn::Uncount, state, id),
                Counted::Ppp(args, hash, packed) => self.call_ppp(true, hash, packed, &args),
            }
        }
    }

    /// The scratch copy of register `reg` in a `Call` probe, loading it the
    /// first time.
    fn scratch(
        &self,
        reg: PointerValue<'ctx>,
        scratch: &mut Option<IntValue<'ctx>>,
    ) -> IntValue<'ctx> {
        *scratch.get_or_insert_with(|| {
            self.emitter
                .builder
                .build_load(self.emitter.i64_type, reg, "pp.r")
                .expect(POSITIONED)
                .into_int_value()
        })
    }

    /// Counts one execution of the path whose registers share `word`
    /// ([`pathprof_core::ppp::packing`]): its key `word - min` is compared
    /// with the owner table's entry `key & mask`; a residual path counts by
    /// Ball-Larus id `key >> bits`.
    fn count_packed(&mut self, word: IntValue<'ctx>) -> Counted<'ctx> {
        let packing = self
            .counters
            .ppp
            .and_then(|t| t.packing)
            .expect("placement checked CountPacked has a packing");
        let int = |v: u64| self.emitter.i64_type.const_int(v, false);
        let b = &self.emitter.builder;
        let key = b
            .build_int_sub(word, int(packing.min as u64), "pp.key")
            .expect(POSITIONED);
        let mask = int(packing.window() - 1);
        let entry = b.build_and(key, mask, "pp.entry").expect(POSITIONED);
        let bits = int(packing.ppp_bits.into());
        self.count_ppp(true, [entry, key, bits])
    }

    /// Counts one execution of a path in a PPP function: in its PPP slot
    /// when it is interesting, else by its Ball-Larus id. `args` are
    /// `[p, key, b]` (PPP sum, what the owner table must hold, Ball-Larus
    /// id), or `packed`, `[entry, key, bits]` (see [`Site::count_packed`]).
    fn count_ppp(&mut self, packed: bool, args: [IntValue<'ctx>; 3]) -> Counted<'ctx> {
        let ppp = self
            .counters
            .ppp
            .expect("placement checked CountPpp has PPP slots");
        let first = self.slot(ppp.base);
        // Packed, entry `e` counts PPP sum `min + e` in slot `base + min + e`.
        let first = match ppp.packing {
            Some(packing) if packed => {
                let min = self.emitter.i64_type.const_int(packing.min as u64, true);
                self.emitter.element(first, min)
            }
            _ => first,
        };
        let (residual, hash) = match self.counters.paths {
            PathCounters::Array(_) | PathCounters::InModule(_) => (self.path_array(), false),
            PathCounters::Hash(state) => (self.counters_at(state), true),
            PathCounters::None => unreachable!("placement checked CountPpp has storage"),
        };
        let interval = self.emitter.i64_type.const_int(ppp.interval, false);
        let [x, y, z] = args;
        let args = [
            first.into(),
            ppp.owners.as_pointer_value().into(),
            interval.into(),
            residual.into(),
            x.into(),
            y.into(),
            z.into(),
        ];
        self.call_ppp(false, hash, packed, &args);
        Counted::Ppp(args, hash, packed)
    }

    /// Calls a PPP helper, with a line-0 location.
    fn call_ppp(
        &mut self,
        uncount: bool,
        hash: bool,
        packed: bool,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
    ) {
        let f = self.ppp_fn(uncount, hash, packed);
        self.call_line0(f, args);
    }

    /// `void __pathprof_ppp_{count,uncount}_{array,hash}(ptr ppp, ptr owners,
    /// i64 interval, ptr residual, i64 p, i64 key, i64 b)`, or with `packed`
    /// `..._packed(..., i64 entry, i64 key, i64 bits)` (`ppp` the counter of
    /// entry 0; no range check, the owner table covers every entry):
    /// internal, `alwaysinline`, `nounwind`; defined on first use with a
    /// builder of its own.
    fn ppp_fn(&mut self, uncount: bool, hash: bool, packed: bool) -> FunctionValue<'ctx> {
        let index = 4 * usize::from(packed) + 2 * usize::from(uncount) + usize::from(hash);
        if let Some(f) = self.emitter.ppp_fns[index] {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        let i64_type = self.emitter.i64_type;
        let ty = context.void_type().fn_type(
            &[
                ptr.into(),
                ptr.into(),
                i64_type.into(),
                ptr.into(),
                i64_type.into(),
                i64_type.into(),
                i64_type.into(),
            ],
            false,
        );
        let name = format!(
            "__pathprof_ppp_{}_{}{}",
            if uncount { "uncount" } else { "count" },
            if hash { "hash" } else { "array" },
            if packed { "_packed" } else { "" }
        );
        let f = self.inline_helper(&name, ty);
        let hash_fn = match (uncount, hash) {
            (_, false) => None,
            (true, true) => Some(self.hash_fn(HashFn::Uncount)),
            (false, true) => Some(self.hash_inline_fn()),
        };
        // Build with a fresh builder: the emitter's stays where it was.
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("seven parameters");
        let (ppp, owners, interval) = (
            param(0).into_pointer_value(),
            param(1).into_pointer_value(),
            param(2).into_int_value(),
        );
        let residual = param(3).into_pointer_value();
        let [x, y, z] = [4, 5, 6].map(|i| param(i).into_int_value());
        let entry = context.append_basic_block(f, "entry");
        let check = context.append_basic_block(f, "check");
        let hit = context.append_basic_block(f, "interesting");
        let miss = context.append_basic_block(f, "residual");
        let e = &*self.emitter;
        // `if lhs <pred> rhs goto yes else goto no`
        let branch_if = |pred, lhs: IntValue<'ctx>, rhs, yes, no| {
            let cond = e.builder.build_int_compare(pred, lhs, rhs, "pp.ppp.test");
            e.builder
                .build_conditional_branch(cond.expect(POSITIONED), yes, no)
                .expect(POSITIONED);
        };
        e.builder.position_at_end(entry);
        // (p, key, b), or packed (entry, key, bits): the owner table covers
        // every entry, and the Ball-Larus id is decoded only where a
        // residual path needs it.
        let (p, key) = (x, y);
        if packed {
            e.builder
                .build_unconditional_branch(check)
                .expect(POSITIONED);
        } else {
            branch_if(IntPredicate::ULT, p, interval, check, miss);
        }
        e.builder.position_at_end(check);
        let owner = e
            .builder
            .build_load(i64_type, e.element(owners, p), "owner");
        let owner = owner.expect(POSITIONED).into_int_value();
        branch_if(IntPredicate::EQ, owner, key, hit, miss);
        let bump = |counter: PointerValue<'ctx>| {
            if uncount {
                e.decrement(counter)
            } else {
                e.increment(counter)
            }
        };
        e.builder.position_at_end(hit);
        bump(e.element(ppp, p));
        e.builder.build_return(None).expect(POSITIONED);
        e.builder.position_at_end(miss);
        let b = if packed {
            let id = e.builder.build_right_shift(key, z, false, "pp.bl");
            id.expect(POSITIONED)
        } else {
            z
        };
        match hash_fn {
            Some(h) => {
                e.builder
                    .build_call(h, &[residual.into(), b.into()], "")
                    .expect(POSITIONED);
            }
            None => bump(e.element(residual, b)),
        }
        e.builder.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.ppp_fns[index] = Some(f);
        f
    }

    /// An internal `alwaysinline`, `nounwind` function `name` of type `ty`,
    /// without a body.
    fn inline_helper(
        &self,
        name: &str,
        ty: inkwell::types::FunctionType<'ctx>,
    ) -> FunctionValue<'ctx> {
        let context = self.module.get_context();
        let f = self
            .module
            .add_function(name, ty, Some(inkwell::module::Linkage::Internal));
        for name in ["nounwind", "alwaysinline"] {
            f.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
        }
        f
    }

    /// `void __pathprof_hash_count_inline(ptr state, i64 id)`: counts path
    /// `id` of a hash-table function through its inline cache (docs/formats.md
    /// §2), defined on first use with a builder of its own:
    ///
    /// ```text
    /// base = &state[8]                           // stays 0
    /// slot = &state[9 + ((u32)(id + 1) * FIBONACCI_MULTIPLIER_32 >> (32 - log2 HASH_CACHE_SLOTS))]
    /// e = base + *slot                           // an empty slot: base itself
    /// if (e[0] == id + 1) e[1]++                 // the entry's key and count
    /// else __pathprof_hash_count_cached(state, slot, id)  // cold; fills *slot
    /// ```
    fn hash_inline_fn(&mut self) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.hash_inline {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        let i64_type = self.emitter.i64_type;
        let ty = context
            .void_type()
            .fn_type(&[ptr.into(), i64_type.into()], false);
        let f = self.inline_helper("__pathprof_hash_count_inline", ty);
        let miss_fn = self.hash_fn(if self.emitter.atomic {
            HashFn::CountCachedAtomic
        } else {
            HashFn::CountCached
        });
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("two parameters");
        let (state, id) = (param(0).into_pointer_value(), param(1).into_int_value());
        let entry = context.append_basic_block(f, "entry");
        let hit = context.append_basic_block(f, "hit");
        let miss = context.append_basic_block(f, "miss");
        let e = &*self.emitter;
        let b = &e.builder;
        let constant = |c: u64| i64_type.const_int(c, false);
        b.position_at_end(entry);
        let key = b
            .build_int_add(id, constant(1), "pp.key")
            .expect(POSITIONED);
        let i32_type = context.i32_type();
        let low = b
            .build_int_truncate(key, i32_type, "pp.low")
            .expect(POSITIONED);
        let hashed = b
            .build_int_mul(
                low,
                i32_type.const_int(FIBONACCI_MULTIPLIER_32.into(), false),
                "pp.hash",
            )
            .expect(POSITIONED);
        let shift = 32 - u64::from(HASH_CACHE_SLOTS.trailing_zeros());
        let index = b
            .build_right_shift(hashed, i32_type.const_int(shift, false), false, "pp.index")
            .expect(POSITIONED);
        let index = b
            .build_int_z_extend(index, i64_type, "pp.index")
            .expect(POSITIONED);
        let base_word = HASH_STATE_WORDS as u64;
        let word = b
            .build_int_add(index, constant(base_word + 1), "pp.word")
            .expect(POSITIONED);
        let slot = e.element(state, word);
        let offset = b.build_load(i64_type, slot, "pp.offset").expect(POSITIONED);
        // The entry is at `base + offset`, `base` being `&state[8]`: its key
        // at `state + offset + 64`, its count 8 bytes on. Both addresses are
        // built from `state + offset` with a constant on top, so that the
        // code addresses them from the state's register (`0x40(%s,%o)`,
        // `0x48(%s,%o)`) rather than keeping `&state[8]` in a register of
        // its own (which a large function such as SQLite's VDBE spills and
        // reloads from the stack at every end).
        // Safety: the slot holds 0 or an entry's address less the base's
        // (docs/formats.md §2); not `inbounds`, the entry is in another object.
        let moved = unsafe {
            b.build_gep(
                context.i8_type(),
                state,
                &[offset.into_int_value()],
                "pp.moved",
            )
        }
        .expect(POSITIONED);
        // Safety: as `moved`'s.
        let at = |bytes: u64, name: &str| unsafe {
            b.build_gep(context.i8_type(), moved, &[constant(bytes)], name)
                .expect(POSITIONED)
        };
        let cached = at(8 * base_word, "pp.entry");
        let owner = b
            .build_load(i64_type, cached, "pp.owner")
            .expect(POSITIONED);
        let mine = b
            .build_int_compare(IntPredicate::EQ, owner.into_int_value(), key, "pp.mine")
            .expect(POSITIONED);
        b.build_conditional_branch(mine, hit, miss)
            .expect(POSITIONED);
        b.position_at_end(hit);
        e.increment(at(8 * base_word + 8, "pp.count"));
        b.build_return(None).expect(POSITIONED);
        b.position_at_end(miss);
        b.build_call(miss_fn, &[state.into(), slot.into(), id.into()], "")
            .expect(POSITIONED);
        b.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.hash_inline = Some(f);
        f
    }

    /// Counts one execution of path `id`.
    fn count_path(&mut self, id: IntValue<'ctx>) -> Counted<'ctx> {
        match self.counters.paths {
            PathCounters::Array(_) | PathCounters::InModule(_) => {
                let p = self.emitter.element(self.path_array(), id);
                self.emitter.increment(p);
                Counted::Counter(p)
            }
            PathCounters::Hash(state) => {
                let state = self.counters_at(state);
                let f = self.hash_inline_fn();
                self.call_line0(f, &[state.into(), id.into()]);
                Counted::Hash(state, id)
            }
            PathCounters::None => unreachable!("placement checked CountPath has storage"),
        }
    }

    /// Counts path `r + c` at a repeat site ([`repeats_path_ends`]): the
    /// internal `alwaysinline` helper `__pathprof_count_repeat(array, last,
    /// r, c, zero)` increments `array[*last + c]` when `r == *last`
    /// (volatile, so that LLVM keeps it apart from the other increment),
    /// else `array[r + c]`, and sets `*last = r`. `last` holds the path
    /// register's value at the last end counted in a loop, not the id, so
    /// that the compare needs no add and `c` stays in both increments'
    /// displacement (whichever end set `last`, `r == *last` makes `*last +
    /// c` this end's id). `last` is the function's alloca, an SSA value
    /// once the helper is inlined.
    fn count_repeat(&mut self, Repeat { last, zero }: Repeat<'ctx>, c: i64) {
        let array = self.path_array();
        let r = self.path_plus(self.path_register(), 0);
        let c = self.constant(c);
        let f = self.repeat_fn();
        self.call_line0(
            f,
            &[array.into(), last.into(), r.into(), c.into(), zero.into()],
        );
    }

    /// `__pathprof_count_repeat`, defined on first use (see
    /// [`Self::count_repeat`]).
    fn repeat_fn(&mut self) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.repeat_fn {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        let i64_type = self.emitter.i64_type;
        let i64s = i64_type.into();
        let ty = context
            .void_type()
            .fn_type(&[ptr.into(), ptr.into(), i64s, i64s, i64s], false);
        let f = self.inline_helper("__pathprof_count_repeat", ty);
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("five parameters");
        let (array, last, r, c, zero) = (
            param(0).into_pointer_value(),
            param(1).into_pointer_value(),
            param(2).into_int_value(),
            param(3).into_int_value(),
            param(4).into_int_value(),
        );
        let entry = context.append_basic_block(f, "entry");
        let repeat = context.append_basic_block(f, "repeat");
        let change = context.append_basic_block(f, "change");
        let e = &*self.emitter;
        let b = &e.builder;
        b.position_at_end(entry);
        let previous = b
            .build_load(i64_type, last, "pp.last")
            .expect(POSITIONED)
            .into_int_value();
        let same = b
            .build_int_compare(IntPredicate::EQ, r, previous, "pp.same")
            .expect(POSITIONED);
        b.build_conditional_branch(same, repeat, change)
            .expect(POSITIONED);
        // The repeat, at `array + zero` (bytes) indexed by `last + c`: an
        // address with a register even where `last` is a constant (which
        // LLVM substitutes here from the compare), so that the CPU forwards
        // the count; one instruction either way, `c` in its displacement
        // (`last` through an empty `asm` instead would cost a register copy
        // every round).
        b.position_at_end(repeat);
        // Safety: `zero` is 0 (an opaque one), so this is `array` itself.
        let shifted = unsafe { b.build_gep(context.i8_type(), array, &[zero], "pp.repeat.base") }
            .expect(POSITIONED);
        let index = b
            .build_int_add(previous, c, "pp.repeat.id")
            .expect(POSITIONED);
        e.add_one(e.element(shifted, index), true);
        b.build_return(None).expect(POSITIONED);
        b.position_at_end(change);
        b.build_store(last, r).expect(POSITIONED);
        let id = b.build_int_add(r, c, "pp.id").expect(POSITIONED);
        e.add_one(e.element(array, id), false);
        b.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.repeat_fn = Some(f);
        f
    }

    /// Increments `slots[k]`.
    fn count_slot(&mut self, k: u32) -> Counted<'ctx> {
        let p = self.slot(k);
        self.emitter.increment_slot(p);
        Counted::Counter(p)
    }

    /// `which(state, id)`, with a line-0 location.
    fn call_hash(&mut self, which: HashFn, state: PointerValue<'ctx>, id: IntValue<'ctx>) {
        let f = self.hash_fn(which);
        self.call_line0(f, &[state.into(), id.into()]);
    }

    /// `f(args)` at the builder's position, with a line-0 location.
    fn call_line0(
        &self,
        f: FunctionValue<'ctx>,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
    ) {
        let call = self
            .emitter
            .builder
            .build_call(f, args, "")
            .expect(POSITIONED);
        ffi::set_line0_location(call.as_value_ref(), self.function);
    }

    fn constant(&self, c: i64) -> IntValue<'ctx> {
        self.emitter.i64_type.const_int(c as u64, false)
    }

    /// `v + c` (just `v` for `c == 0`).
    fn plus(&self, v: IntValue<'ctx>, c: i64) -> IntValue<'ctx> {
        if c == 0 {
            v
        } else {
            self.emitter
                .builder
                .build_int_add(v, self.constant(c), "pp.r.add")
                .expect(POSITIONED)
        }
    }

    /// `load r + c` (just `load r` for `c == 0`).
    fn path_plus(&self, r: PointerValue<'ctx>, c: i64) -> IntValue<'ctx> {
        let v = self
            .emitter
            .builder
            .build_load(self.emitter.i64_type, r, "pp.r")
            .expect(POSITIONED)
            .into_int_value();
        self.plus(v, c)
    }

    /// The runtime's hash function `which`, declared `nounwind` (and `cold`
    /// for an inline cache's miss).
    fn hash_fn(&mut self, which: HashFn) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.hash_fns[which as usize] {
            return f;
        }
        let name = which.name();
        let context = self.module.get_context();
        let f = self.module.get_function(name).unwrap_or_else(|| {
            let ptr = context.ptr_type(AddressSpace::default());
            let i64_type = context.i64_type();
            let params: &[inkwell::types::BasicMetadataTypeEnum<'ctx>] = if which.cached() {
                &[ptr.into(), ptr.into(), i64_type.into()]
            } else {
                &[ptr.into(), i64_type.into()]
            };
            let f =
                self.module
                    .add_function(name, context.void_type().fn_type(params, false), None);
            let attrs: &[&str] = if which.cached() {
                &["nounwind", "cold"]
            } else {
                &["nounwind"]
            };
            for name in attrs {
                f.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
            }
            f
        });
        self.emitter.hash_fns[which as usize] = Some(f);
        f
    }
}

/// The first instruction of `block` that code may be inserted before: past phis,
/// landing pads, catch pads and cleanup pads. `None` for a `catchswitch` block.
pub(super) fn first_insertion_point(block: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
    let first = block.get_instructions().find(|i| {
        !matches!(
            i.get_opcode(),
            InstructionOpcode::Phi
                | InstructionOpcode::LandingPad
                | InstructionOpcode::CatchPad
                | InstructionOpcode::CleanupPad
        )
    })?;
    (first.get_opcode() != InstructionOpcode::CatchSwitch).then_some(first)
}

/// For a `ret` preceded by a `musttail` call (and perhaps a bitcast of its result),
/// that call.
fn musttail_call_before(term: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
    if term.get_opcode() != InstructionOpcode::Return {
        return None;
    }
    let mut prev = term.get_previous_instruction()?;
    if prev.get_opcode() == InstructionOpcode::BitCast {
        prev = prev.get_previous_instruction()?;
    }
    let is_musttail = prev.get_opcode() == InstructionOpcode::Call
        && prev.get_tail_call_kind().ok() == Some(LLVMTailCallKind::LLVMTailCallKindMustTail);
    is_musttail.then_some(prev)
}

/// For an `unreachable` right after a call (to `exit`, `abort`, `longjmp`...),
/// that call: control leaves the function there, so the block's end is before
/// it.
fn no_return_call_before(term: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
    let prev = term.get_previous_instruction()?;
    walk::ends_block_for_good(prev).then_some(prev)
}

fn catchswitch(body: &Body<'_>, b: usize) -> LlvmError {
    LlvmError::Unsupported {
        function: body.name.clone(),
        detail: format!("block b{b} is a `catchswitch`, which has no place for probe code"),
    }
}
