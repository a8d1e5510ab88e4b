//! Functions that always return: marked `willreturn` before extraction, so
//! that calls to them are not *counted calls* ([`walk::is_counted_call`]:
//! calls that might not return). LLVM infers the same attribute later in
//! the pipeline; pathprof plans before it would, and without it every call
//! to the program's own small helpers costs what a call to `exit` might:
//! block mode an exit edge (a chord) per block calling one, early-exit
//! counting a count and an uncount, and a site after one cannot give its
//! callee's entry count ([`crate::callgraph::entry_call_sites`]).
//!
//! A function always returns (or unwinds) when its definition is the one
//! that runs (not interposable), each cycle of its control flow closes
//! through a loop that must make progress (C11's loops whose condition is
//! not a constant: clang's `llvm.loop.mustprogress`; any loop of a
//! `mustprogress` function, as in C++) and it touches nothing such a loop
//! may wait on forever (no volatile or atomic access), it has no
//! `unreachable`, and each of its calls is to an intrinsic or to a function
//! marked `willreturn` (declared so, or found so here: the marking runs to a
//! fixed point, callees before callers). Anything else (`for (;;)`, a `goto`
//! loop, an indirect call, inline assembly, a call to `setjmp` or to another
//! module's function) leaves it unmarked. Running it twice changes nothing.

use crate::ffi;
use crate::walk;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::module::{Linkage, Module};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, InstructionOpcode};
use inkwell::AtomicOrdering;
use std::collections::HashMap;

/// Marks the module's functions that always return (see the module doc)
/// `willreturn`. Returns how many it marked.
pub fn mark_always_returning(module: &Module<'_>) -> usize {
    let kind = Attribute::get_named_enum_kind_id("willreturn");
    let willreturn = module.get_context().create_enum_attribute(kind, 0);
    let has = |f: FunctionValue<'_>| f.get_enum_attribute(AttributeLoc::Function, kind).is_some();
    let mut open: Vec<FunctionValue<'_>> = walk::bodies(module)
        .into_iter()
        .map(|b| b.function)
        .filter(|&f| !has(f) && runs_its_own_definition(f) && loops_must_end(f))
        .collect();
    let mut marked = 0;
    loop {
        let before = open.len();
        open.retain(|&f| {
            let returns = f.get_basic_blocks().into_iter().all(|b| {
                b.get_instructions().all(|i| match i.get_opcode() {
                    InstructionOpcode::Unreachable
                    | InstructionOpcode::CallBr
                    | InstructionOpcode::AtomicRMW
                    | InstructionOpcode::AtomicCmpXchg
                    | InstructionOpcode::Fence => false,
                    InstructionOpcode::Load | InstructionOpcode::Store => {
                        !i.get_volatile().unwrap_or(true)
                            && i.get_atomic_ordering()
                                .is_ok_and(|o| o == AtomicOrdering::NotAtomic)
                    }
                    InstructionOpcode::Call | InstructionOpcode::Invoke => {
                        !ffi::calls_inline_asm(i)
                            && !walk::returns_more_than_once(i)
                            && ffi::call_site(i)
                                .and_then(|c| c.get_called_fn_value())
                                .is_some_and(|callee| callee.get_intrinsic_id() != 0 || has(callee))
                    }
                    _ => true,
                })
            });
            if returns {
                f.add_attribute(AttributeLoc::Function, willreturn);
                marked += 1;
            }
            !returns
        });
        if open.len() == before {
            return marked;
        }
    }
}

/// Whether calls to `f` run the body this module holds (no other
/// definition can take its place at link or load time).
fn runs_its_own_definition(f: FunctionValue<'_>) -> bool {
    matches!(
        f.get_linkage(),
        Linkage::Internal
            | Linkage::Private
            | Linkage::External
            | Linkage::LinkOnceODR
            | Linkage::WeakODR
    )
}

/// Whether every cycle of `f`'s control flow must end: each edge back to a
/// block on the depth-first search's stack (every cycle has one) leaves a
/// latch whose loop must make progress, or `f` is `mustprogress`.
fn loops_must_end(f: FunctionValue<'_>) -> bool {
    let context = f.get_type().get_context();
    let loop_kind = context.get_kind_id("llvm.loop");
    let progress = Attribute::get_named_enum_kind_id("mustprogress");
    let every_loop = f
        .get_enum_attribute(AttributeLoc::Function, progress)
        .is_some();
    let blocks = f.get_basic_blocks();
    let index: HashMap<BasicBlock<'_>, usize> =
        blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let succs = |b: BasicBlock<'_>| -> Vec<usize> {
        b.get_terminator().map_or_else(Vec::new, |t| {
            (0..ffi::num_successors(t))
                .filter_map(|s| index.get(&ffi::successor(t, s)).copied())
                .collect()
        })
    };
    let must_progress = |latch: BasicBlock<'_>| {
        every_loop
            || latch
                .get_terminator()
                .and_then(|t| t.get_metadata(loop_kind))
                .and_then(|m| m.get_node_values())
                .is_some_and(|properties| {
                    properties.iter().any(|p| {
                        let BasicMetadataValueEnum::MetadataValue(p) = p else {
                            return false;
                        };
                        p.get_node_values().is_some_and(|v| {
                            matches!(v.first(), Some(BasicMetadataValueEnum::MetadataValue(name))
                                if name.get_string_value() == Some(b"llvm.loop.mustprogress"))
                        })
                    })
                })
    };
    if blocks.is_empty() {
        return true;
    }
    // 0: not seen, 1: on the stack, 2: done.
    let mut state = vec![0u8; blocks.len()];
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(0, succs(blocks[0]))];
    state[0] = 1;
    while let Some((from, next)) = stack.last_mut() {
        let from = *from;
        match next.pop() {
            Some(s) if state[s] == 1 && !must_progress(blocks[from]) => return false,
            Some(s) if state[s] == 0 => {
                state[s] = 1;
                stack.push((s, succs(blocks[s])));
            }
            Some(_) => {}
            None => {
                stack.pop();
                state[from] = 2;
            }
        }
    }
    true
}
