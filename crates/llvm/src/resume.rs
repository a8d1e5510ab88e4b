//! Resume points: every call that may return more than once or into another
//! process ([`walk::returns_more_than_once`]: `fork`, `setjmp`, `vfork`...) is
//! made the last instruction of its block, followed by an unconditional `br` to
//! a new block holding the rest. That `br` is a *resume* edge
//! ([`pathprof_core::CfgEdge::resume`]): paths end before the call and start
//! after it, so the path in progress at a `fork` is counted once, by the parent,
//! and a `longjmp` back to a `setjmp` starts a fresh path.
//!
//! Running it twice changes nothing: a call already followed by an
//! unconditional `br` is left alone. [`crate::extract`] runs it first, so
//! extraction and instrumentation see the same blocks.

use crate::error::LlvmError;
use crate::ffi;
use crate::walk;
use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use inkwell::values::{InstructionOpcode, InstructionValue};

/// Splits every profiled function's blocks after its calls that return more
/// than once. Returns how many blocks were split.
pub fn split_at_resume_points(module: &Module<'_>) -> Result<usize, LlvmError> {
    let context = module.get_context();
    let builder = context.create_builder();
    let mut split = 0;
    for body in walk::bodies(module) {
        let mut work: Vec<BasicBlock<'_>> = body.blocks.clone();
        while let Some(block) = work.pop() {
            let Some(call) = block
                .get_instructions()
                .find(|&i| walk::returns_more_than_once(i) && !already_split(i))
            else {
                continue;
            };
            let rest = context.insert_basic_block_after(block, "pp.resume");
            let moved: Vec<InstructionValue<'_>> =
                std::iter::successors(call.get_next_instruction(), |i| i.get_next_instruction())
                    .collect();
            builder.position_at_end(rest);
            for inst in moved {
                inst.remove_from_basic_block();
                builder.insert_instruction(&inst, None);
            }
            builder.position_at_end(block);
            builder.unset_current_debug_location();
            builder
                .build_unconditional_branch(rest)
                .expect("the builder is positioned at the end of the block");
            retarget_successor_phis(&builder, block, rest, &body.name)?;
            split += 1;
            // The rest may hold another such call.
            work.push(rest);
        }
    }
    Ok(split)
}

/// Whether `call` is already followed by an unconditional `br`.
fn already_split(call: InstructionValue<'_>) -> bool {
    call.get_next_instruction().is_some_and(|next| {
        next.get_opcode() == InstructionOpcode::Br && next.get_num_operands() == 1
    })
}

/// The phis of the moved terminator's successors named `old` as a predecessor;
/// the edges now leave from `new`.
fn retarget_successor_phis<'ctx>(
    builder: &inkwell::builder::Builder<'ctx>,
    old: BasicBlock<'ctx>,
    new: BasicBlock<'ctx>,
    function: &str,
) -> Result<(), LlvmError> {
    let term = new.get_terminator().ok_or_else(|| LlvmError::Verify {
        message: format!(
            "in `{function}`, a block split after a fork/setjmp call has no terminator"
        ),
    })?;
    let mut seen = Vec::new();
    for slot in 0..ffi::num_successors(term) {
        let succ = ffi::successor(term, slot);
        if seen.contains(&succ) {
            continue;
        }
        seen.push(succ);
        let phis: Vec<_> = succ
            .get_instructions()
            .take_while(|i| i.get_opcode() == InstructionOpcode::Phi)
            .collect();
        for phi in phis {
            // Every entry from `old` (one per successor slot that reaches `succ`).
            if ffi::phi_incoming_blocks(phi).contains(&old.as_mut_ptr()) {
                ffi::retarget_phi_incoming(builder, phi, |_, b| b == old.as_mut_ptr(), new);
            }
        }
    }
    Ok(())
}
