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

/// Marks the module's functions that always return (see the module doc)
/// `willreturn`. Returns how many it marked.
pub fn mark_always_returning(module: &Module<'_>) -> usize {
    let kind = Attribute::get_named_enum_kind_id("willreturn");
    let willreturn = module.get_context().create_enum_attribute(kind, 0);
    let has = |f: FunctionValue<'_>| f.get_enum_attribute(AttributeLoc::Function, kind).is_some();
    let mut open: Vec<FunctionValue<'_>> = walk::bodies(module)
        .into_iter()
        .filter(|b| !has(b.function) && runs_its_own_definition(b.function) && loops_must_end(b))
        .map(|b| b.function)
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

/// Whether every cycle of `body`'s control flow must end: each of its
/// backedges ([`pathprof_core::dag::backedges`]; every cycle holds one)
/// leaves a latch whose loop must make progress, or the function is
/// `mustprogress`. A CFG that cannot be read counts as one that may not end.
fn loops_must_end(body: &walk::Body<'_>) -> bool {
    let progress = Attribute::get_named_enum_kind_id("mustprogress");
    if body
        .function
        .get_enum_attribute(AttributeLoc::Function, progress)
        .is_some()
    {
        return true;
    }
    let Ok(cfg) = walk::read_cfg(body) else {
        return false;
    };
    let loop_kind = body
        .function
        .get_type()
        .get_context()
        .get_kind_id("llvm.loop");
    let must_progress = |latch: BasicBlock<'_>| {
        latch
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
    pathprof_core::dag::backedges(&cfg)
        .iter()
        .zip(cfg.edges())
        .filter(|(&back, _)| back)
        .all(|(_, e)| must_progress(body.blocks[e.from.index()]))
}
