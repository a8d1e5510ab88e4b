//! Tells LLVM what is true of the probes' memory: the program never reads
//! or writes it, and the probes never touch the program's. Without the
//! fact every counter increment is a store through a pointer LLVM knows
//! nothing of (an integer turned pointer), which may
//! alias any of the program's memory: values the program had in registers
//! are loaded again after each probe, and a loop's counter is stored back
//! at every round.
//!
//! Scoped `noalias` metadata (LangRef, "`noalias` and `alias.scope`
//! Metadata") states it: one scope, `pathprof.counters`, in a domain of its
//! own; every load, store and atomic the instrumentation adds to a function
//! (its counters, the thread delta) or has in the helpers it inlines there
//! (the hash table's inline cache, the PPP counts) is in the scope
//! (`!alias.scope`), and every load, store, atomic and `llvm.mem*`
//! intrinsic the function had before instrumentation is declared not to
//! alias it (`!noalias`, added to any list it had). Calls are left alone: a
//! callee may count into the same counters (recursion), and the runtime
//! reads them. The scopes are named, not distinct, so modules linked
//! together agree on them. In a scoped function slot increments are
//! volatile ([`super::emit`]), so that each stays one increment of memory.
//!
//! Not the largest functions ([`super::LARGE_FUNCTION_BLOCKS`]) or the
//! functions LLVM may inline into them: a function that large has more
//! values live than registers, so the program's values kept in registers
//! across probes push others to the stack and the spills cost more
//! instructions than the reloads saved (SQLite's `sqlite3VdbeExec`), where
//! in smaller functions the scope saves instructions. In block and edge
//! mode those are their direct callees; leaving out every function they
//! reach would give up more elsewhere than it saves there. In path mode,
//! whose probes hold the path register besides, they are every function
//! they reach through direct calls, as what is inlined from deeper still
//! adds to the large function's spills; the other programs keep their
//! gain (Lua, whose `luaV_execute` reaches most of it, neither gains nor
//! loses). Measured with `bench/callgrind.py`; see `docs/benchmarks.md`.

use std::collections::{HashMap, HashSet};

use super::LARGE_FUNCTION_BLOCKS;
use crate::walk::Body;
use inkwell::context::ContextRef;
use inkwell::module::Module;
use inkwell::values::{
    BasicMetadataValueEnum, FunctionValue, InstructionOpcode, InstructionValue, MetadataValue,
};
use pathprof_core::Mode;

/// The scope list probes are in, and the kinds to mark with.
pub(crate) struct CounterScope<'ctx> {
    context: ContextRef<'ctx>,
    scope: MetadataValue<'ctx>,
    scopes: MetadataValue<'ctx>,
    alias_scope_kind: u32,
    noalias_kind: u32,
}

impl<'ctx> CounterScope<'ctx> {
    pub fn new(module: &Module<'ctx>) -> Self {
        let context = module.get_context();
        let domain = context.metadata_node(&[context.metadata_string("pathprof").into()]);
        let scope = context.metadata_node(&[
            context.metadata_string("pathprof.counters").into(),
            domain.into(),
        ]);
        let scopes = context.metadata_node(&[scope.into()]);
        CounterScope {
            alias_scope_kind: context.get_kind_id("alias.scope"),
            noalias_kind: context.get_kind_id("noalias"),
            context,
            scope,
            scopes,
        }
    }

    /// Declares every access `function` has, before anything is emitted in
    /// it (the program's own), not to alias the scope.
    pub fn mark_program(&self, function: FunctionValue<'ctx>) {
        accesses(function).for_each(|i| self.add_noalias(i));
    }

    /// Puts every access of `function` without `!noalias`, after emission
    /// (the probes': [`CounterScope::mark_program`] marked all the others),
    /// in the scope.
    pub fn mark_probes(&self, function: FunctionValue<'ctx>) {
        accesses(function)
            .filter(|i| i.get_metadata(self.noalias_kind).is_none())
            .for_each(|i| self.set_in_scope(i));
    }

    fn set_in_scope(&self, instruction: InstructionValue<'ctx>) {
        instruction
            .set_metadata(self.scopes, self.alias_scope_kind)
            .expect("a scope list is a node");
    }

    fn add_noalias(&self, instruction: InstructionValue<'ctx>) {
        let list = match instruction.get_metadata(self.noalias_kind) {
            None => self.scopes,
            Some(had) => {
                let mut scopes: Vec<BasicMetadataValueEnum<'ctx>> =
                    had.get_node_values().unwrap_or_default();
                scopes.push(self.scope.into());
                self.context.metadata_node(&scopes)
            }
        };
        instruction
            .set_metadata(list, self.noalias_kind)
            .expect("a scope list is a node");
    }
}

/// Per body: whether it is scoped: never the largest of `bodies` nor the
/// functions LLVM may inline into them (see the module doc): their direct
/// callees in block and edge mode, every function they reach by direct
/// calls in path mode.
pub(crate) fn scoped(bodies: &[Body<'_>], mode: Mode) -> Vec<bool> {
    let depth = match mode {
        Mode::Block | Mode::Edge => 1,
        Mode::Path => usize::MAX,
    };
    let left_out = reached_from_largest(bodies, depth);
    bodies
        .iter()
        .map(|b| !left_out.contains(&b.function))
        .collect()
}

/// The largest of `bodies` and the functions they reach through at most
/// `depth` direct calls.
fn reached_from_largest<'ctx>(bodies: &[Body<'ctx>], depth: usize) -> HashSet<FunctionValue<'ctx>> {
    let body_of: HashMap<_, _> = bodies.iter().map(|b| (b.function, b)).collect();
    let mut frontier: Vec<&Body<'ctx>> = bodies
        .iter()
        .filter(|b| b.blocks.len() > LARGE_FUNCTION_BLOCKS)
        .collect();
    let mut reached: HashSet<_> = frontier.iter().map(|b| b.function).collect();
    for _ in 0..depth {
        let mut next = Vec::new();
        for body in frontier {
            let calls = body.blocks.iter().flat_map(|b| b.get_instructions());
            let callees = calls.filter_map(|i| crate::ffi::call_site(i)?.get_called_fn_value());
            for callee in callees {
                if reached.insert(callee) {
                    next.extend(body_of.get(&callee));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    reached
}

/// The memory accesses of `function` scoped metadata may describe: loads,
/// stores, atomics and calls of the `llvm.mem*` intrinsics.
fn accesses<'ctx>(function: FunctionValue<'ctx>) -> impl Iterator<Item = InstructionValue<'ctx>> {
    function
        .get_basic_block_iter()
        .flat_map(|block| block.get_instructions())
        .filter(|i| match i.get_opcode() {
            InstructionOpcode::Load
            | InstructionOpcode::Store
            | InstructionOpcode::AtomicRMW
            | InstructionOpcode::AtomicCmpXchg => true,
            InstructionOpcode::Call => is_memory_intrinsic(*i),
            _ => false,
        })
}

/// Whether `call` calls `llvm.memcpy`, `llvm.memmove` or `llvm.memset`
/// (and their variants), which touch only the memory their operands name.
fn is_memory_intrinsic(call: InstructionValue<'_>) -> bool {
    let callee = crate::ffi::call_site(call).and_then(|c| c.get_called_fn_value());
    callee.is_some_and(|f| {
        let name = f.get_name().to_bytes();
        ["llvm.memcpy", "llvm.memmove", "llvm.memset"]
            .iter()
            .any(|prefix| name.starts_with(prefix.as_bytes()))
    })
}
