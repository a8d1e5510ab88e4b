//! Emission: turns a function's [`Placement`] into IR, as inline loads, adds and
//! stores (the only call is `__pathprof_hash_count` for hash-stored paths).
//!
//! - The path register `r` is an `i64` alloca at the top of the entry block, set
//!   to 0 after the block's leading allocas (where the entry ops go); mem2reg/SROA
//!   turn it into SSA values.
//! - `SetPath(c)`: `store c, r`; `AddPath(c)`: `store (load r) + c, r`.
//! - `CountPath(c)`: increments `paths[r + c]` (array) or calls
//!   `__pathprof_hash_count(state, r + c)` (hash).
//! - `CountSlot(k)`: increments `slots[k]`.
//! - An increment is `store (llvm.uadd.sat.i64 (load p), 1), p`, or
//!   `atomicrmw add p, 1 monotonic` with atomic updates.
//!
//! Probe instructions carry no debug location, except that a hash-count call
//! gets line 0 of the function (see [`ffi::set_line0_location`]).
//!
//! The start of a block is its first instruction that is not a phi, a landing pad,
//! a catch pad or a cleanup pad. The end is before its terminator, except that in
//! a block ending `musttail call; [bitcast;] ret` it is before the call, which
//! must stay next to the `ret`. A block that is only a `catchswitch` has neither.

use super::abi::{Counters, PathCounters};
use super::place::Placement;
use super::split;
use crate::error::LlvmError;
use crate::ffi;
use crate::walk::{self, Body};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::IntType;
use inkwell::values::LLVMTailCallKind;
use inkwell::values::{
    AsValueRef, FunctionValue, InstructionOpcode, InstructionValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp};
use pathprof_core::plan::Op;
use pathprof_core::Cfg;

/// What every function's emission shares.
pub(crate) struct Emitter<'ctx> {
    builder: Builder<'ctx>,
    i64_type: IntType<'ctx>,
    uadd_sat: FunctionValue<'ctx>,
    /// Declared on first use.
    hash_count: Option<FunctionValue<'ctx>>,
    atomic: bool,
}

const POSITIONED: &str = "the builder is positioned";

impl<'ctx> Emitter<'ctx> {
    pub fn new(module: &Module<'ctx>, atomic: bool) -> Self {
        let context = module.get_context();
        let i64_type = context.i64_type();
        let uadd_sat = Intrinsic::find("llvm.uadd.sat")
            .and_then(|i| i.get_declaration(module, &[i64_type.into()]))
            .expect("LLVM 22 has llvm.uadd.sat.i64");
        Emitter {
            builder: context.create_builder(),
            i64_type,
            uadd_sat,
            hash_count: None,
            atomic,
        }
    }

    /// Splits the placement's edges, then emits all its ops into `body`.
    pub fn function(
        &mut self,
        module: &Module<'ctx>,
        body: &Body<'ctx>,
        cfg: &Cfg,
        placement: &Placement,
        counters: Counters<'ctx>,
    ) -> Result<(), LlvmError> {
        let context = module.get_context();
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
        };
        // Entry: the path register first of all, then (after the block's leading
        // allocas) r = 0, the FunctionEntry ops and the entry block's start ops.
        let entry = body.blocks[0];
        if placement.uses_path_register() {
            site.position_at_start(body, 0)?;
            let r = site
                .emitter
                .builder
                .build_alloca(site.emitter.i64_type, "pp.path")
                .expect(POSITIONED);
            site.r = Some(r);
        }
        let after_allocas = entry
            .get_instructions()
            .find(|i| i.get_opcode() != InstructionOpcode::Alloca)
            .expect("a block ends with a terminator");
        site.emitter.position_before(&after_allocas);
        if let Some(r) = site.r {
            let zero = site.emitter.i64_type.const_zero();
            site.emitter.builder.build_store(r, zero).expect(POSITIONED);
        }
        site.ops(&placement.entry);
        site.ops(&placement.start[0]);

        for b in 0..body.blocks.len() {
            if b != 0 && !placement.start[b].is_empty() {
                site.position_at_start(body, b)?;
                site.ops(&placement.start[b]);
            }
            if !placement.end[b].is_empty() {
                site.position_at_end(body, b)?;
                site.ops(&placement.end[b]);
            }
        }
        for (block, ops) in split_blocks {
            let br = block.get_terminator().expect("a split block ends in br");
            site.emitter.position_before(&br);
            site.ops(ops);
        }
        Ok(())
    }

    /// Positions the builder before `at`. Probe code gets no debug location (LLVM
    /// would give it `at`'s, with its key-instruction atom).
    fn position_before(&self, at: &InstructionValue<'ctx>) {
        self.builder.position_before(at);
        self.builder.unset_current_debug_location();
    }

    fn increment(&self, ptr: PointerValue<'ctx>) {
        let b = &self.builder;
        let one = self.i64_type.const_int(1, false);
        if self.atomic {
            b.build_atomicrmw(AtomicRMWBinOp::Add, ptr, one, AtomicOrdering::Monotonic)
                .expect(POSITIONED);
        } else {
            let old = b
                .build_load(self.i64_type, ptr, "pp.count")
                .expect(POSITIONED);
            let new = b
                .build_call(self.uadd_sat, &[old.into(), one.into()], "pp.count.inc")
                .expect(POSITIONED)
                .try_as_basic_value()
                .basic()
                .expect("llvm.uadd.sat returns i64");
            b.build_store(ptr, new).expect(POSITIONED);
        }
    }

    /// `&array[index]` for an `i64` array global.
    fn element(&self, array: PointerValue<'ctx>, index: IntValue<'ctx>) -> PointerValue<'ctx> {
        // Safety: `array` is a counter global of `len` i64s and `index` is a slot
        // number checked against `num_slots`, or a path id the planner guarantees
        // is below the array's length (CONTRACTS.md §1), so the address is in
        // bounds, as `inbounds` promises.
        unsafe {
            self.builder
                .build_in_bounds_gep(self.i64_type, array, &[index], "pp.counter")
                .expect(POSITIONED)
        }
    }
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
        let at = musttail_call_before(term).unwrap_or(term);
        self.emitter.position_before(&at);
        Ok(())
    }

    fn ops(&mut self, ops: &[Op]) {
        for &op in ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: Op) {
        let i64_type = self.emitter.i64_type;
        let constant = |c: i64| i64_type.const_int(c as u64, false);
        match op {
            Op::SetPath(c) => {
                let r = self.r.expect("path ops imply a path register");
                self.emitter
                    .builder
                    .build_store(r, constant(c))
                    .expect(POSITIONED);
            }
            Op::AddPath(c) => {
                let r = self.r.expect("path ops imply a path register");
                let sum = self.path_plus(r, c);
                self.emitter.builder.build_store(r, sum).expect(POSITIONED);
            }
            Op::CountPath(c) => {
                let r = self.r.expect("path ops imply a path register");
                let id = self.path_plus(r, c);
                match self.counters.paths {
                    PathCounters::Array(g) => {
                        let p = self.emitter.element(g.as_pointer_value(), id);
                        self.emitter.increment(p);
                    }
                    PathCounters::Hash(state) => {
                        let f = self.hash_count();
                        let call = self
                            .emitter
                            .builder
                            .build_call(f, &[state.as_pointer_value().into(), id.into()], "")
                            .expect(POSITIONED);
                        ffi::set_line0_location(call.as_value_ref(), self.function);
                    }
                    PathCounters::None => unreachable!("placement checked CountPath has storage"),
                }
            }
            Op::CountSlot(k) => {
                let g = self
                    .counters
                    .slots
                    .expect("placement checked the slot number");
                let p = self
                    .emitter
                    .element(g.as_pointer_value(), i64_type.const_int(k.into(), false));
                self.emitter.increment(p);
            }
        }
    }

    /// `load r + c` (just `load r` for `c == 0`).
    fn path_plus(&self, r: PointerValue<'ctx>, c: i64) -> IntValue<'ctx> {
        let b = &self.emitter.builder;
        let i64_type = self.emitter.i64_type;
        let v = b
            .build_load(i64_type, r, "pp.r")
            .expect(POSITIONED)
            .into_int_value();
        if c == 0 {
            v
        } else {
            b.build_int_add(v, i64_type.const_int(c as u64, false), "pp.r.add")
                .expect(POSITIONED)
        }
    }

    /// `void __pathprof_hash_count(uint64_t *state, uint64_t id)`.
    fn hash_count(&mut self) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.hash_count {
            return f;
        }
        const NAME: &str = "__pathprof_hash_count";
        let context = self.module.get_context();
        let f = self.module.get_function(NAME).unwrap_or_else(|| {
            let ty = context.void_type().fn_type(
                &[
                    context.ptr_type(AddressSpace::default()).into(),
                    context.i64_type().into(),
                ],
                false,
            );
            let f = self.module.add_function(NAME, ty, None);
            let nounwind = inkwell::attributes::Attribute::get_named_enum_kind_id("nounwind");
            f.add_attribute(
                inkwell::attributes::AttributeLoc::Function,
                context.create_enum_attribute(nounwind, 0),
            );
            f
        });
        self.emitter.hash_count = Some(f);
        f
    }
}

/// The first instruction of `block` that code may be inserted before: past phis,
/// landing pads, catch pads and cleanup pads. `None` for a `catchswitch` block.
fn first_insertion_point(block: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
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

fn catchswitch(body: &Body<'_>, b: usize) -> LlvmError {
    LlvmError::Unsupported {
        function: body.name.clone(),
        detail: format!("block b{b} is a `catchswitch`, which has no place for probe code"),
    }
}
