//! Path-guided tail duplication in IR: the tails
//! `pathprof_core::pgo::duplicate` chose are copied block by block, and
//! every branch of the function, original or copy, gets the weights of the
//! paths through it.
//!
//! Which blocks can be copied ([`limits`]): not exception pads, and ending in
//! `br`, `switch`, `ret` or `unreachable`, with no `alloca`, no token value,
//! no inline assembly and no call that must not be duplicated (`noduplicate`,
//! `convergent`) or returns twice. A block whose address is taken may be
//! copied: `indirectbr` still goes to the original, and the copy is entered
//! only along the trace.
//!
//! How ([`copy_tails`]): first every value a copied block defines and another
//! block uses is demoted to a stack slot (stored where it is defined, loaded
//! where it is used; a phi's use counts as its incoming block's), so that
//! a copy's values are used only in the copy and by its successors' phis;
//! SROA, which runs after, promotes the slots back. Then each copy takes
//! its block's instructions, with its own values in place of the
//! original's; a copied phi keeps the one incoming value of the copy's one
//! predecessor; the trace's edge into the tail is moved to the first copy,
//! and each successor outside the tail gains, in its phis, the copy's
//! incoming values beside the original's.

use crate::ffi;
use crate::walk::{self, Body};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::llvm_sys::core as llc;
use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use inkwell::llvm_sys::LLVMTypeKind;
use inkwell::values::{AsValueRef, InstructionOpcode, InstructionValue};
use pathprof_core::pgo::duplicate::{Duplicated, Limits, Tail};
use pathprof_core::{BlockId, Cfg};
use std::collections::HashMap;

/// The most tails copied in one function, and the most paths tried as
/// traces.
const MAX_TAILS: usize = 8;
const MAX_TRACES: usize = 16;

/// What duplication may do in `body` (CFG `cfg`): each block's size and
/// whether it can be copied, the instructions the copies may add and the
/// smallest gain a tail must bring.
pub(crate) fn limits(body: &Body<'_>, cfg: &Cfg, budget: u64, min_gain: u64) -> Limits {
    Limits {
        sizes: body.blocks.iter().map(|&b| size(b)).collect(),
        copyable: body
            .blocks
            .iter()
            .enumerate()
            .map(|(i, &b)| copyable(b, cfg, BlockId(i as u32)))
            .collect(),
        budget,
        min_gain,
        max_tails: MAX_TAILS,
        max_traces: MAX_TRACES,
    }
}

/// A block's instructions, debug intrinsics aside.
pub(crate) fn size(block: BasicBlock<'_>) -> u32 {
    block
        .get_instructions()
        .filter(|&i| !ffi::is_debug_intrinsic(i))
        .count() as u32
}

fn copyable(block: BasicBlock<'_>, cfg: &Cfg, b: BlockId) -> bool {
    let ends_well = block.get_terminator().is_some_and(|t| {
        matches!(
            t.get_opcode(),
            InstructionOpcode::Br
                | InstructionOpcode::Switch
                | InstructionOpcode::Return
                | InstructionOpcode::Unreachable
        )
    });
    let plain_edges = cfg.succs(b).iter().all(|&e| {
        let e = cfg.edge(e);
        e.splittable && !e.resume
    });
    ends_well
        && plain_edges
        && !walk::is_pad_block(block)
        && block.get_instructions().all(|i| {
            i.get_opcode() != InstructionOpcode::Alloca && !is_token(i) && !forbids_copies(i)
        })
}

fn is_token(inst: InstructionValue<'_>) -> bool {
    // Safety: `inst` is a live instruction; its type is a live type.
    unsafe {
        llc::LLVMGetTypeKind(llc::LLVMTypeOf(inst.as_value_ref()))
            == LLVMTypeKind::LLVMTokenTypeKind
    }
}

/// Whether `inst` is a call whose copies would not be the same program.
fn forbids_copies(inst: InstructionValue<'_>) -> bool {
    let Some(call) = ffi::call_site(inst) else {
        return false;
    };
    let marked = |name: &str| {
        let kind = Attribute::get_named_enum_kind_id(name);
        call.get_enum_attribute(AttributeLoc::Function, kind)
            .is_some()
            || call
                .get_called_fn_value()
                .is_some_and(|f| f.get_enum_attribute(AttributeLoc::Function, kind).is_some())
    };
    walk::returns_more_than_once(inst)
        || ffi::calls_inline_asm(inst)
        || marked("noduplicate")
        || marked("convergent")
}

/// Copies `plan`'s tails into `body` and returns every block of the result
/// by its id in `plan` (the originals first, then the copies).
pub(crate) fn copy_tails<'ctx>(body: &Body<'ctx>, plan: &Duplicated) -> Vec<BasicBlock<'ctx>> {
    let mut blocks = body.blocks.clone();
    if plan.tails.is_empty() {
        return blocks;
    }
    let context = body.function.get_type().get_context();
    let builder = context.create_builder();
    let mut copied: Vec<u32> = plan
        .tails
        .iter()
        .flat_map(|t| t.blocks.iter().map(|&b| plan.origin[b as usize]))
        .collect();
    copied.sort_unstable();
    copied.dedup();
    let entry = body.blocks[0];
    for &b in &copied {
        demote_escaping(&builder, entry, body.blocks[b as usize]);
    }
    for tail in &plan.tails {
        copy_tail(&builder, body, &mut blocks, tail);
    }
    blocks
}

/// Demotes every value `block` defines that another block uses to a stack
/// slot allocated in `entry`.
fn demote_escaping(builder: &Builder<'_>, entry: BasicBlock<'_>, block: BasicBlock<'_>) {
    let here = block.as_mut_ptr();
    let instructions: Vec<InstructionValue<'_>> = block.get_instructions().collect();
    for inst in instructions {
        let value = inst.as_value_ref();
        let outside = uses_outside(value, here);
        if outside.is_empty() {
            continue;
        }
        // Safety: every value and block here is live in one function; the
        // builder is positioned inside it before each insertion; `value`'s
        // type is first-class (it has uses). Operands are replaced by
        // index below their user's operand count.
        unsafe {
            let ty = llc::LLVMTypeOf(value);
            let first = entry
                .get_first_instruction()
                .expect("the entry has a terminator");
            builder.position_before(&first);
            let slot = llc::LLVMBuildAlloca(builder.as_mut_ptr(), ty, c"".as_ptr());
            let after = if inst.get_opcode() == InstructionOpcode::Phi {
                walk::first_non_phi(block).expect("a block has a terminator")
            } else {
                inst.get_next_instruction()
                    .expect("a value is not a terminator")
            };
            builder.position_before(&after);
            llc::LLVMBuildStore(builder.as_mut_ptr(), value, slot);
            let mut loads: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
            for Use { user, operand, at } in outside {
                let load = *loads.entry(at).or_insert_with(|| {
                    position_before_in(builder, user, at);
                    llc::LLVMBuildLoad2(builder.as_mut_ptr(), ty, slot, c"".as_ptr())
                });
                llc::LLVMSetOperand(user, operand, load);
            }
        }
    }
}

/// One use of a value: operand `operand` of `user`, which reads it at the
/// end of (a phi's incoming block) or in block `at`, a block's value for a
/// map key.
struct Use {
    user: LLVMValueRef,
    operand: u32,
    at: LLVMValueRef,
}

/// The uses of `value` outside block `here` (a phi's use is in its incoming
/// block).
fn uses_outside(value: LLVMValueRef, here: LLVMBasicBlockRef) -> Vec<Use> {
    let mut users: Vec<LLVMValueRef> = Vec::new();
    // Safety: `value` is a live instruction; its use list is walked with
    // LLVM's own iterators and only read.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(value);
        while !u.is_null() {
            users.push(llc::LLVMGetUser(u));
            u = llc::LLVMGetNextUse(u);
        }
    }
    users.sort_unstable();
    users.dedup();
    let mut out = Vec::new();
    for user in users {
        // Safety: `user` uses `value`, so it is a live instruction (only
        // instructions can use one); operand indices are below its count,
        // incoming indices below its phi's count.
        unsafe {
            let is_phi = !llc::LLVMIsAPHINode(user).is_null();
            for operand in 0..llc::LLVMGetNumOperands(user) as u32 {
                if llc::LLVMGetOperand(user, operand) != value {
                    continue;
                }
                let block = if is_phi {
                    llc::LLVMGetIncomingBlock(user, operand)
                } else {
                    llc::LLVMGetInstructionParent(user)
                };
                if block != here {
                    out.push(Use {
                        user,
                        operand,
                        at: if is_phi {
                            llc::LLVMBasicBlockAsValue(block)
                        } else {
                            user
                        },
                    });
                }
            }
        }
    }
    out
}

/// Positions `builder` where a use by `user` reads its load: before the
/// terminator of a phi's incoming block (`at`), else before `user`.
///
/// # Safety
/// `user` is a live instruction and `at` the value of a live block of its
/// function or `user` itself.
unsafe fn position_before_in(builder: &Builder<'_>, user: LLVMValueRef, at: LLVMValueRef) {
    unsafe {
        let before = if at == user {
            user
        } else {
            llc::LLVMGetBasicBlockTerminator(llc::LLVMValueAsBasicBlock(at))
        };
        llc::LLVMPositionBuilderBefore(builder.as_mut_ptr(), before);
    }
}

/// Copies one tail (its block ids are `blocks`'), appending the copies to
/// `blocks`.
fn copy_tail<'ctx>(
    builder: &Builder<'ctx>,
    body: &Body<'ctx>,
    blocks: &mut Vec<BasicBlock<'ctx>>,
    tail: &Tail,
) {
    let context = body.function.get_type().get_context();
    let originals: Vec<BasicBlock<'ctx>> =
        tail.blocks.iter().map(|&b| blocks[b as usize]).collect();
    let from = blocks[tail.from as usize];
    let copies: Vec<BasicBlock<'ctx>> = originals
        .iter()
        .map(|o| {
            let name = format!("{}.path", o.get_name().to_string_lossy());
            context.append_basic_block(body.function, &name)
        })
        .collect();
    let mut values: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    for (i, (&original, &copy)) in originals.iter().zip(&copies).enumerate() {
        let (pred, original_pred) = match i {
            0 => (from, from),
            _ => (copies[i - 1], originals[i - 1]),
        };
        builder.position_at_end(copy);
        for inst in original.get_instructions() {
            let old = inst.as_value_ref();
            // Safety: `old` is a live instruction of `original`; the clone
            // is inserted into `copy` by the positioned builder before any
            // use; operands are replaced by index below the count, with
            // values of the same type (each one's own copy).
            unsafe {
                let new = if inst.get_opcode() == InstructionOpcode::Phi {
                    let incoming = incoming_value(old, original_pred.as_mut_ptr());
                    let incoming = *values.get(&incoming).unwrap_or(&incoming);
                    ffi::build_phi(
                        builder,
                        llc::LLVMTypeOf(old),
                        &mut [incoming],
                        &mut [pred.as_mut_ptr()],
                    )
                } else if ffi::is_debug_intrinsic(inst) {
                    continue;
                } else {
                    let new = llc::LLVMInstructionClone(old);
                    llc::LLVMInsertIntoBuilder(builder.as_mut_ptr(), new);
                    for k in 0..llc::LLVMGetNumOperands(new) as u32 {
                        if let Some(&mapped) = values.get(&llc::LLVMGetOperand(new, k)) {
                            llc::LLVMSetOperand(new, k, mapped);
                        }
                    }
                    new
                };
                values.insert(old, new);
            }
        }
        if let Some(&slot) = tail.slots.get(i) {
            let term = copy.get_terminator().expect("the copy has its terminator");
            ffi::set_successor(term, slot, copies[i + 1]);
        }
    }
    // Successors outside the trace: the copy's incoming values beside the
    // original's.
    for (&original, &copy) in originals.iter().zip(&copies) {
        let term = copy.get_terminator().expect("the copy has its terminator");
        let outside: Vec<BasicBlock<'ctx>> = (0..ffi::num_successors(term))
            .map(|s| ffi::successor(term, s))
            .filter(|t| !copies.contains(t))
            .collect();
        let mut targets: Vec<BasicBlock<'ctx>> = Vec::new();
        for &t in &outside {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        for target in targets {
            let n = outside.iter().filter(|&&o| o == target).count();
            for phi in target
                .get_instructions()
                .take_while(|i| i.get_opcode() == InstructionOpcode::Phi)
            {
                let phi = phi.as_value_ref();
                let incoming = incoming_value(phi, original.as_mut_ptr());
                let incoming = *values.get(&incoming).unwrap_or(&incoming);
                let mut value = vec![incoming; n];
                let mut block = vec![copy.as_mut_ptr(); n];
                // Safety: `phi` is a live phi; `n` pairs of a value of its
                // type and a block of its function are added.
                unsafe {
                    llc::LLVMAddIncoming(phi, value.as_mut_ptr(), block.as_mut_ptr(), n as u32);
                }
            }
        }
    }
    // The trace's edge into the tail moves to the first copy.
    let from_term = from.get_terminator().expect("a block has a terminator");
    ffi::set_successor(from_term, tail.slot, copies[0]);
    let first = originals[0];
    let phis: Vec<InstructionValue<'ctx>> = first
        .get_instructions()
        .take_while(|i| i.get_opcode() == InstructionOpcode::Phi)
        .collect();
    for phi in phis {
        let mut dropped = false;
        ffi::rebuild_phi(builder, phi, |_, block| {
            let drop = !dropped && block == from.as_mut_ptr();
            dropped |= drop;
            !drop
        });
    }
    blocks.extend(copies);
}

/// The value `phi` takes from `block` (its first entry for it).
fn incoming_value(phi: LLVMValueRef, block: LLVMBasicBlockRef) -> LLVMValueRef {
    // Safety: `phi` is a live phi of the function `block` is in; indices
    // are below its count.
    unsafe {
        (0..llc::LLVMCountIncoming(phi))
            .find(|&i| llc::LLVMGetIncomingBlock(phi, i) == block)
            .map(|i| llc::LLVMGetIncomingValue(phi, i))
            .expect("a successor's phi has an entry for each predecessor")
    }
}
