//! Undoing a `Call` probe's count around an `invoke` (a call that terminates its
//! block, docs/formats.md §1): the call comes back along its normal edge or by
//! unwinding into its landing pad, and the count must be undone on both; only
//! when the callee never comes back (`exit`) does it survive.
//!
//! - Normal edge: split (a block of its own on that one edge, which the invoke
//!   dominates), where the counter address computed before the invoke is
//!   decremented.
//! - Unwind: a landing pad may be shared by several invokes, so the address
//!   goes through a per-activation *pending* pointer: `pending = p` just before
//!   the invoke; at the top of the landing pad `*pending` is decremented and
//!   `pending` reset. Whenever no counted invoke is in progress `pending` points
//!   at a *sink*, a scratch counter in the frame (reset on the normal edge
//!   too), so a landing pad reached from an invoke that counted nothing
//!   decrements only the sink. SROA and mem2reg turn `pending` into phis: on the
//!   normal path the cost is the decrement on the split edge.

use super::emit::{first_insertion_point, Emitter, POSITIONED};
use super::split;
use crate::error::LlvmError;
use crate::ffi;
use crate::walk::Body;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::llvm_sys::prelude::LLVMBasicBlockRef;
use inkwell::values::{InstructionOpcode, InstructionValue, PointerValue};
use inkwell::AddressSpace;
use std::collections::HashSet;

/// One function's pending pointer and sink, and the landing pads that already
/// undo.
pub(super) struct Unwinds<'ctx> {
    pending: PointerValue<'ctx>,
    sink: PointerValue<'ctx>,
    undoing: HashSet<LLVMBasicBlockRef>,
}

impl<'ctx> Unwinds<'ctx> {
    /// Allocates the pending pointer and the sink at the top of `body`'s entry
    /// block, with `pending = &sink` and `sink = 0`.
    pub fn new(emitter: &Emitter<'ctx>, body: &Body<'ctx>) -> Self {
        let builder = emitter.builder();
        let first = body.blocks[0]
            .get_first_instruction()
            .expect("a block ends with a terminator");
        emitter.position_before(&first);
        let context = body.function.get_type().get_context();
        let ptr_type = context.ptr_type(AddressSpace::default());
        let i64_type = context.i64_type();
        let sink = builder
            .build_alloca(i64_type, "pp.undo.sink")
            .expect(POSITIONED);
        let pending = builder
            .build_alloca(ptr_type, "pp.undo.pending")
            .expect(POSITIONED);
        builder
            .build_store(sink, i64_type.const_zero())
            .expect(POSITIONED);
        builder.build_store(pending, sink).expect(POSITIONED);
        Unwinds {
            pending,
            sink,
            undoing: HashSet::new(),
        }
    }

    /// Undoes the count of `*counter` made just before `invoke`, after it
    /// returns and after it unwinds.
    pub fn undo_after(
        &mut self,
        emitter: &Emitter<'ctx>,
        context: ContextRef<'ctx>,
        body: &Body<'ctx>,
        invoke: InstructionValue<'ctx>,
        counter: PointerValue<'ctx>,
    ) -> Result<(), LlvmError> {
        debug_assert_eq!(invoke.get_opcode(), InstructionOpcode::Invoke);
        let builder = emitter.builder();
        emitter.position_before(&invoke);
        builder
            .build_store(self.pending, counter)
            .expect(POSITIONED);

        let normal = split::split_successor(context, builder, &body.name, invoke, 0)?;
        let br = normal.get_terminator().expect("a split block ends in br");
        emitter.position_before(&br);
        emitter.decrement(counter);
        builder
            .build_store(self.pending, self.sink)
            .expect(POSITIONED);

        let pad = ffi::successor(invoke, 1);
        if self.undoing.insert(pad.as_mut_ptr()) {
            let at = first_insertion_point(pad).expect("a landing pad block is no catchswitch");
            emitter.position_before(&at);
            self.undo_pending(builder, emitter);
        }
        Ok(())
    }

    /// `*pending` decremented, then `pending = &sink`.
    fn undo_pending(&self, builder: &Builder<'ctx>, emitter: &Emitter<'ctx>) {
        let ptr_type = self.pending.get_type();
        let counter = builder
            .build_load(ptr_type, self.pending, "pp.undo.counter")
            .expect(POSITIONED)
            .into_pointer_value();
        emitter.decrement(counter);
        builder
            .build_store(self.pending, self.sink)
            .expect(POSITIONED);
    }
}
