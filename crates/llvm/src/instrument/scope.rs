//! Tells LLVM what is true of the probes' memory: the program never reads
//! or writes it, and the probes never touch the program's. Without the
//! fact every counter increment is a store through a pointer LLVM knows
//! nothing of (an integer turned pointer, a thread-local twin), which may
//! alias any of the program's memory: values the program had in registers
//! are loaded again after each probe, and a loop's counter is stored back
//! at every round.
//!
//! Scoped `noalias` metadata (LangRef, "`noalias` and `alias.scope`
//! Metadata") states it: one scope, `pathprof.counters`, in a domain of its
//! own; every load, store and atomic the instrumentation adds to a function
//! (its counters, the thread delta) is in the scope (`!alias.scope`), and
//! every load, store, atomic and `llvm.mem*` intrinsic the function had
//! before instrumentation is declared not to alias it (`!noalias`, added to
//! any list it had). Calls are left alone: a callee may count into the same
//! counters (recursion), and the runtime reads them. The scopes are named,
//! not distinct, so modules linked together agree on them. In a scoped
//! function slot increments are volatile ([`super::emit`]), so that each
//! stays one increment of memory.
//!
//! Block and edge mode only, and not the largest functions
//! ([`super::LARGE_FUNCTION_BLOCKS`]) or the functions they call directly
//! (which LLVM may inline into them): there the program's values held in
//! registers across probes cost spills (callgrind, scale 2: SQLite's
//! `sqlite3VdbeExec` 12.4M instructions more in block mode scoped, 5.5M
//! with only its callees scoped), where elsewhere they save (block mode:
//! bzip2 1.160 → 1.113 of the plain run's instructions, zlib 1.254 →
//! 1.181, SQLite 1.114 → 1.107). Path mode, scoped alike, gained on bzip2
//! (1.141 → 1.109) and zlib (1.325 → 1.263) but lost on SQLite (1.244 →
//! 1.258; PPP 1.229 → 1.246), the one program where it costs more than
//! clang's counters, so its functions are left out
//! (`bench/results-scope-callgrind.md`).

use std::collections::HashSet;

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

/// Per body: whether it is scoped. Only in block and edge mode (see the
/// module doc), and never the largest of `bodies` or a function they call
/// directly.
pub(crate) fn scoped(bodies: &[Body<'_>], mode: Mode) -> Vec<bool> {
    if !matches!(mode, Mode::Block | Mode::Edge) {
        return vec![false; bodies.len()];
    }
    let mut left_out = HashSet::new();
    for body in bodies
        .iter()
        .filter(|b| b.blocks.len() > LARGE_FUNCTION_BLOCKS)
    {
        left_out.insert(body.function);
        let calls = body.blocks.iter().flat_map(|b| b.get_instructions());
        let callees = calls.filter_map(|i| crate::ffi::call_site(i)?.get_called_fn_value());
        left_out.extend(callees);
    }
    bodies
        .iter()
        .map(|b| !left_out.contains(&b.function))
        .collect()
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
