//! Which functions pathprof sees, and how a function's CFG is read from IR: the
//! one walk shared by extraction and instrumentation, so that plan `i` always meets
//! the function extraction reported as `i`.
//!
//! Seen: every function with a body, in module order, except pathprof's own
//! (`__pathprof*`), `naked` functions (whose body is only inline assembly, with
//! no frame for a path register) and functions marked [`NOT_PROFILED`] (Rust's
//! std, unless asked for: [`leave_out_rust_std`]). Blocks are numbered in function order, the entry
//! is block 0, and each terminator successor slot is one [`CfgEdge`] in slot order.
//! Each block's *counted calls* ([`counted_calls`]) are counted into
//! [`Cfg::set_calls`]; instrumentation finds call `k` of a block with the same
//! iterator, so `ProbeSite::Call(b, k)` always meets the call extraction counted.

use crate::error::LlvmError;
use crate::ffi;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::module::{Linkage, Module};
use inkwell::values::{
    AsValueRef, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue, LLVMTailCallKind,
};
use pathprof_core::{rust_std, BlockId, Cfg, CfgEdge};
use std::collections::HashMap;

/// Prefix of every symbol pathprof adds; functions with it are never profiled.
pub(crate) const RESERVED_PREFIX: &str = "__pathprof";

/// The string attribute that keeps a function out of the profile.
const NOT_PROFILED: &str = "pathprof-not-profiled";

/// Marks the functions of Rust's standard library in `module` (those whose
/// `DISubprogram` lies in `/rustc/<commit>/library/`: std's generic code
/// instantiated in the program's crates, and all of std in a fat-LTO build)
/// as not profiled: the program's own functions are counted all the same (an
/// inlined std function's code counts on its caller's blocks, as libc's
/// would), at a fraction of the price of counting every iterator adapter.
pub(crate) fn leave_out_rust_std(module: &Module<'_>) {
    let mark = module
        .get_context()
        .create_string_attribute(NOT_PROFILED, "");
    for function in module.get_functions() {
        let in_std = ffi::subprogram_position(function)
            .and_then(|(file, _)| file)
            .is_some_and(|file| rust_std::library_file(&ffi::file_path(file)).is_some());
        if in_std {
            function.add_attribute(AttributeLoc::Function, mark);
        }
    }
}

/// One profiled function and its blocks as they were before any change.
pub(crate) struct Body<'ctx> {
    pub function: FunctionValue<'ctx>,
    pub name: String,
    /// `blocks[i]` is `BlockId(i)`.
    pub blocks: Vec<BasicBlock<'ctx>>,
}

/// The functions pathprof profiles, in module order, with their blocks
/// captured: every function with a body, except `naked` ones (no prologue to
/// put code in) and `available_externally` ones (copies of a function defined
/// elsewhere, such as the C library's `extern inline` functions in its
/// headers, kept only for inlining: the function is the other definition's).
pub(crate) fn bodies<'ctx>(module: &Module<'ctx>) -> Vec<Body<'ctx>> {
    let naked = Attribute::get_named_enum_kind_id("naked");
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .filter(|f| f.get_linkage() != Linkage::AvailableExternally)
        .filter(|f| {
            f.get_enum_attribute(AttributeLoc::Function, naked)
                .is_none()
        })
        .filter(|f| {
            f.get_string_attribute(AttributeLoc::Function, NOT_PROFILED)
                .is_none()
        })
        .map(|function| Body {
            function,
            name: ffi::value_name(function.as_value_ref()),
            blocks: function.get_basic_blocks(),
        })
        .filter(|b| !b.name.starts_with(RESERVED_PREFIX))
        .collect()
}

/// The first instruction of `block` that is not a phi.
pub(crate) fn first_non_phi(block: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
    block
        .get_instructions()
        .find(|i| i.get_opcode() != InstructionOpcode::Phi)
}

/// Whether `block` is an exception-handling pad (its first non-phi is a pad), which
/// can only be entered by an unwind edge.
pub(crate) fn is_pad_block(block: BasicBlock<'_>) -> bool {
    first_non_phi(block).is_some_and(ffi::is_eh_pad)
}

/// The terminator of block `index` of `body`.
pub(crate) fn terminator<'ctx>(
    body: &Body<'ctx>,
    index: usize,
) -> Result<InstructionValue<'ctx>, LlvmError> {
    body.blocks[index]
        .get_terminator()
        .ok_or_else(|| LlvmError::NoTerminator {
            function: body.name.clone(),
            block: index as u32,
        })
}

/// The counted calls of `block`, in instruction order (see [`is_counted_call`]).
pub(crate) fn counted_calls(block: BasicBlock<'_>) -> impl Iterator<Item = InstructionValue<'_>> {
    block.get_instructions().filter(|&i| is_counted_call(i))
}

/// Functions that return in another process, or more than once, without LLVM's
/// `returns_twice` on them: the `fork` family (a `fork` returns in the parent
/// and in the child), `clone`, and `daemon` (which returns in a child; its
/// parent ends inside it).
const FORK_LIKE: &[&str] = &[
    "fork", "__fork", "_Fork", "vfork", "clone", "__clone", "clone3", "daemon",
];

/// Whether `inst` is a call that may return more than once or into another
/// process: `returns_twice` on the call site or the callee (`setjmp`,
/// `sigsetjmp`, `_setjmp`, `savectx`, `getcontext`, `vfork`), or a call to a
/// [`FORK_LIKE`] function. Paths are cut around such calls (a *resume* edge
/// follows each, see [`crate::resume`]). Only `call`s: an `invoke` of one keeps
/// its two successors.
pub(crate) fn returns_more_than_once(inst: InstructionValue<'_>) -> bool {
    if inst.get_opcode() != InstructionOpcode::Call {
        return false;
    }
    let Ok(call) = CallSiteValue::try_from(inst) else {
        return false;
    };
    let returns_twice = Attribute::get_named_enum_kind_id("returns_twice");
    if call
        .get_enum_attribute(AttributeLoc::Function, returns_twice)
        .is_some()
    {
        return true;
    }
    let Some(callee) = call.get_called_fn_value() else {
        return false;
    };
    callee
        .get_enum_attribute(AttributeLoc::Function, returns_twice)
        .is_some()
        || callee
            .get_name()
            .to_str()
            .is_ok_and(|name| FORK_LIKE.contains(&name))
}

/// Whether terminator `term` is an unconditional `br` right after a call that
/// returns more than once: its one edge is a resume edge.
pub(crate) fn ends_in_returns_twice_call(term: InstructionValue<'_>) -> bool {
    term.get_opcode() == InstructionOpcode::Br
        && term.get_num_operands() == 1
        && term
            .get_previous_instruction()
            .is_some_and(returns_more_than_once)
}

/// For a block that ends `call; br` where the call returns more than once, that
/// call: the block's end code goes before it.
pub(crate) fn resume_call_before(term: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
    ends_in_returns_twice_call(term)
        .then(|| term.get_previous_instruction())
        .flatten()
}

/// Whether `inst` is a *counted call* (docs/formats.md §1): a call that might not
/// return, around which early-termination probes (`ProbeSite::Call`) go.
///
/// It is a `call`, or an `invoke` whose unwind destination is a `landingpad`
/// block (it then terminates its block: [`Cfg::ends_in_call`]; never a
/// `callbr`), that is not
/// - `musttail` (nothing may come between it and its `ret`),
/// - inline assembly,
/// - a call that returns more than once ([`returns_more_than_once`]: `setjmp`,
///   `fork`...; paths are cut around it instead),
/// - to an intrinsic (`llvm.*`, including the debug and lifetime markers),
/// - to a pathprof function (`__pathprof*`, e.g. the hash counters themselves),
/// - to a function declared `willreturn`.
///
/// The callee is LLVM's `getCalledFunction` (the called operand when it is a
/// function of the call's own type); an indirect call counts unless it is asm or
/// `returns_twice` on the call site.
pub(crate) fn is_counted_call(inst: InstructionValue<'_>) -> bool {
    let Some(call) = ffi::call_site(inst) else {
        return false;
    };
    let counted_kind = match inst.get_opcode() {
        InstructionOpcode::Call => true,
        InstructionOpcode::Invoke => unwinds_to_landing_pad(inst),
        _ => false,
    };
    if !counted_kind
        || (inst.get_opcode() == InstructionOpcode::Call
            && call.get_tail_call_kind() == LLVMTailCallKind::LLVMTailCallKindMustTail)
        || ends_block_for_good(inst)
        || ffi::calls_inline_asm(inst)
        || returns_more_than_once(inst)
    {
        return false;
    }
    let Some(callee) = call.get_called_fn_value() else {
        return true;
    };
    let willreturn = Attribute::get_named_enum_kind_id("willreturn");
    let has = |kind| {
        callee
            .get_enum_attribute(AttributeLoc::Function, kind)
            .is_some()
    };
    callee.get_intrinsic_id() == 0
        && !callee
            .get_name()
            .to_bytes()
            .starts_with(RESERVED_PREFIX.as_bytes())
        && !has(willreturn)
}

/// Whether `invoke`'s unwind destination starts with a `landingpad` (not a
/// funclet pad), where the undo of its probe can go (`instrument::unwind`).
fn unwinds_to_landing_pad(invoke: InstructionValue<'_>) -> bool {
    first_non_phi(ffi::successor(invoke, 1))
        .is_some_and(|i| i.get_opcode() == InstructionOpcode::LandingPad)
}

/// Whether `inst` is a call right before an `unreachable` terminator (a call to
/// `exit`, `abort`, `longjmp`...): the block's end code goes before it (see
/// `instrument::emit`), so it needs no early-exit counting of its own.
pub(crate) fn ends_block_for_good(inst: InstructionValue<'_>) -> bool {
    inst.get_opcode() == InstructionOpcode::Call
        && inst
            .get_next_instruction()
            .is_some_and(|next| next.get_opcode() == InstructionOpcode::Unreachable)
}

/// Reads the CFG of a function (see the module doc for the numbering), with each
/// block's number of counted calls.
///
/// An edge is unsplittable when it leaves an `indirectbr`, a `callbr` or a
/// funclet terminator (`catchswitch`, `catchret`, `cleanupret`), when it is an
/// `invoke`'s unwind edge, or when it enters an exception pad.
pub(crate) fn read_cfg(body: &Body<'_>) -> Result<Cfg, LlvmError> {
    let index: HashMap<_, u32> = body
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_mut_ptr(), i as u32))
        .collect();
    let mut edges = Vec::new();
    for from in 0..body.blocks.len() {
        let term = terminator(body, from)?;
        let opcode = term.get_opcode();
        let whole_terminator_unsplittable = matches!(
            opcode,
            InstructionOpcode::IndirectBr
                | InstructionOpcode::CallBr
                | InstructionOpcode::CatchSwitch
                | InstructionOpcode::CatchRet
                | InstructionOpcode::CleanupRet
        );
        for slot in 0..ffi::num_successors(term) {
            let to_block = ffi::successor(term, slot);
            let to = index[&to_block.as_mut_ptr()];
            let unwind = opcode == InstructionOpcode::Invoke && slot == 1;
            edges.push(CfgEdge {
                from: BlockId(from as u32),
                to: BlockId(to),
                slot,
                splittable: !whole_terminator_unsplittable && !unwind && !is_pad_block(to_block),
                resume: ends_in_returns_twice_call(term),
            });
        }
    }
    // Per block, its counted calls and whether the last is its terminator (an
    // invoke).
    let mut calls = Vec::with_capacity(body.blocks.len());
    let mut ends_in_call = Vec::new();
    for (b, &block) in body.blocks.iter().enumerate() {
        let mut last = None;
        let n = counted_calls(block).inspect(|&c| last = Some(c)).count();
        calls.push(n as u32);
        if last.is_some_and(|c| c.get_opcode() == InstructionOpcode::Invoke) {
            ends_in_call.push(BlockId(b as u32));
        }
    }
    let cfg_error = |source| LlvmError::Cfg {
        function: body.name.clone(),
        source,
    };
    let mut cfg = Cfg::new(body.blocks.len(), BlockId(0), edges).map_err(cfg_error)?;
    cfg.set_calls(calls).map_err(cfg_error)?;
    cfg.set_terminator_calls(&ends_in_call).map_err(cfg_error)?;
    Ok(cfg)
}
