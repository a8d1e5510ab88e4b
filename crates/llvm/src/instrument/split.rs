//! Edge splitting: puts a new block on exactly one CFG edge, named by its source
//! block and terminator successor slot.
//!
//! The new block ends in `br` to the old target; the terminator's successor operand
//! `slot` is retargeted to it; in the target, each phi's incoming entry for that
//! one edge moves to the new block. For a multi-edge (one `switch` reaching a
//! block through several slots) the phi has one entry per slot, all with the same
//! value, and exactly one of them moves, so the other slots' entries stay valid.

use crate::error::LlvmError;
use crate::ffi;
use crate::walk::{self, Body};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::values::{InstructionOpcode, InstructionValue};
use pathprof_core::CfgEdge;

/// Splits `edge` of `body` and returns the new block, whose only instruction is
/// the `br` to the edge's target.
pub(crate) fn split_edge<'ctx>(
    context: ContextRef<'ctx>,
    builder: &Builder<'ctx>,
    body: &Body<'ctx>,
    edge: &CfgEdge,
) -> Result<BasicBlock<'ctx>, LlvmError> {
    let to = body.blocks[edge.to.index()];
    let term = walk::terminator(body, edge.from.index())?;
    debug_assert!(edge.splittable, "splitting an unsplittable edge");
    if edge.slot >= ffi::num_successors(term) || ffi::successor(term, edge.slot) != to {
        return Err(LlvmError::BadPlan {
            function: body.name.clone(),
            detail: format!(
                "edge {}:{} -> {} is not in the IR (was the module changed after extraction?)",
                edge.from, edge.slot, edge.to
            ),
        });
    }
    split_successor(context, builder, &body.name, term, edge.slot)
}

/// Splits successor `slot` of terminator `term` (of function `function`),
/// whatever block it now leads to, and returns the new block, whose only
/// instruction is the `br` to that block.
pub(crate) fn split_successor<'ctx>(
    context: ContextRef<'ctx>,
    builder: &Builder<'ctx>,
    function: &str,
    term: InstructionValue<'ctx>,
    slot: u32,
) -> Result<BasicBlock<'ctx>, LlvmError> {
    let from = term.get_parent().expect("a terminator is in a block");
    let to = ffi::successor(term, slot);
    let new = context.insert_basic_block_after(from, "pp.edge");
    builder.position_at_end(new);
    builder.unset_current_debug_location();
    builder
        .build_unconditional_branch(to)
        .expect("the builder is positioned in the new block");
    ffi::set_successor(term, slot, new);

    let phis: Vec<_> = to
        .get_instructions()
        .take_while(|i| i.get_opcode() == InstructionOpcode::Phi)
        .collect();
    for phi in phis {
        let index = ffi::phi_incoming_blocks(phi)
            .iter()
            .position(|&b| b == from.as_mut_ptr())
            .ok_or_else(|| LlvmError::Verify {
                message: format!(
                    "in `{function}`, a phi in {:?} has no entry for its predecessor {:?}",
                    to.get_name(),
                    from.get_name()
                ),
            })?;
        ffi::retarget_phi_incoming(builder, phi, |i, _| i as usize == index, new);
    }
    Ok(new)
}
