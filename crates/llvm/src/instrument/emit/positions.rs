//! Where in a block probe code goes: the first point past phis and pads,
//! and the end before a terminator, or before a `musttail` call or a call
//! that never returns (see the emission doc in `emit`).

use super::*;

/// The first instruction of `block` that code may be inserted before: past phis,
/// landing pads, catch pads and cleanup pads. `None` for a `catchswitch` block.
pub(in crate::instrument) fn first_insertion_point(
    block: BasicBlock<'_>,
) -> Option<InstructionValue<'_>> {
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
pub(super) fn musttail_call_before(term: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
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
pub(super) fn no_return_call_before(term: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
    let prev = term.get_previous_instruction()?;
    walk::ends_block_for_good(prev).then_some(prev)
}

pub(super) fn catchswitch(body: &Body<'_>, b: usize) -> LlvmError {
    LlvmError::Unsupported {
        function: body.name.clone(),
        detail: format!("block b{b} is a `catchswitch`, which has no place for probe code"),
    }
}
