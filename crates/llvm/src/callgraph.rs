//! Call sites in a module: how many each function has, for P3 (Afraz et
//! al. 2015, Algorithm 2 line 5: a procedure with at most one call site is
//! partitioned), and where they are, for the functions whose entry counts
//! their callers give ([`entry_call_sites`]).
//!
//! A function's call sites are the `call`s and `invoke`s in the module whose
//! callee is that function. A function called from places a call graph of
//! the module cannot see counts as called from many
//! ([`P3Build::MANY`](pathprof_core::map::P3Build::MANY)), so it is never
//! partitioned:
//! - its address is taken: any use of it that is not the callee of a direct
//!   call (a function pointer, a constructor table, `llvm.used`, a call that
//!   passes it as an argument), since indirect calls and callbacks may call
//!   it from anywhere;
//! - it is exported: with `exported` (a program linked with `-rdynamic` /
//!   `--export-dynamic`, whose symbols shared libraries can bind to), every
//!   function of external linkage and default visibility but `main`.
//!
//! Without `exported`, a function of external linkage in a program is
//! called only from the module itself (the whole program is one module at
//! P3's link step), so its call sites are the module's. P3's restriction is
//! a cost heuristic (partitioned functions that run often pay for probes
//! that copies share), never a condition of exactness: any count merges
//! exactly.

use crate::ffi;
use crate::walk;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, FunctionValue};
use inkwell::GlobalVisibility;
use pathprof_core::callers::CallSite;
use pathprof_core::map::P3Build;
use pathprof_core::BlockId;
use std::collections::HashMap;

/// Per function [`crate::extract`] reports, in its order: its call sites
/// (see the module doc).
pub fn call_sites(module: &Module<'_>, exported: bool) -> Vec<u32> {
    let mut direct: HashMap<FunctionValue<'_>, u32> = HashMap::new();
    for f in module.get_functions() {
        for block in f.get_basic_blocks() {
            for inst in block.get_instructions() {
                let callee = ffi::call_site(inst).and_then(|c| c.get_called_fn_value());
                if let Some(callee) = callee {
                    let n = direct.entry(callee).or_insert(0);
                    *n = n.saturating_add(1);
                }
            }
        }
    }
    walk::bodies(module)
        .iter()
        .map(|body| {
            let f = body.function;
            let calls = direct.get(&f).copied().unwrap_or(0);
            let address_taken = ffi::num_uses(f.as_value_ref()) > calls as usize;
            if address_taken || (exported && is_exported(f, &body.name)) {
                P3Build::MANY
            } else {
                calls
            }
        })
        .collect()
}

/// Per function [`crate::extract`] reports, in its order: the call sites its
/// entry count comes from ([`pathprof_core::callers`]), or none when it
/// counts its own entries. A function's entries come from its callers when
/// - it is internal (no other module can call it),
/// - every use of it is the callee of a direct call or `invoke` in a
///   profiled function (no address taken, so no indirect call reaches it),
/// - no such call follows a counted call in its block ([`walk::is_counted_call`]:
///   one that might not return), so each runs whenever its block does (a
///   thread blocked in that call at a dump has entered the block, not the
///   function),
/// - and its entry count does not wait on itself: recursion, direct or
///   through other such functions, keeps counting its entries.
pub fn entry_call_sites(module: &Module<'_>) -> Vec<Vec<CallSite>> {
    let bodies = walk::bodies(module);
    let index: HashMap<FunctionValue<'_>, usize> = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| (b.function, i))
        .collect();
    let mut sites: Vec<Vec<CallSite>> = vec![Vec::new(); bodies.len()];
    let mut usable = vec![true; bodies.len()];
    for (caller, body) in bodies.iter().enumerate() {
        for (block, &bb) in body.blocks.iter().enumerate() {
            let mut after_counted_call = false;
            for inst in bb.get_instructions() {
                let callee = ffi::call_site(inst).and_then(|c| c.get_called_fn_value());
                if let Some(&callee) = callee.as_ref().and_then(|f| index.get(f)) {
                    usable[callee] &= !after_counted_call;
                    sites[callee].push(CallSite {
                        function: caller as u32,
                        block: BlockId::new(block),
                    });
                }
                after_counted_call |= walk::is_counted_call(inst);
            }
        }
    }
    for (i, body) in bodies.iter().enumerate() {
        let f = body.function;
        let local = matches!(f.get_linkage(), Linkage::Internal | Linkage::Private);
        let only_called = ffi::num_uses(f.as_value_ref()) == sites[i].len();
        usable[i] &= local && only_called && !sites[i].is_empty();
    }
    let cyclic = on_call_site_cycles(&sites, &usable);
    for (ok, on_cycle) in usable.iter_mut().zip(cyclic) {
        *ok &= !on_cycle;
    }
    sites
        .into_iter()
        .zip(usable)
        .map(|(s, ok)| if ok { s } else { Vec::new() })
        .collect()
}

/// Per function, whether it is usable and its call sites lead back to it
/// through usable functions' call sites
/// ([`pathprof_core::callers::on_call_cycles`]).
fn on_call_site_cycles(sites: &[Vec<CallSite>], usable: &[bool]) -> Vec<bool> {
    let callers: Vec<Vec<usize>> = sites
        .iter()
        .zip(usable)
        .map(|(s, &ok)| {
            s.iter()
                .map(|site| site.function as usize)
                .filter(|&c| ok && usable[c])
                .collect()
        })
        .collect();
    pathprof_core::callers::on_call_cycles(&callers)
}

/// Whether a program linked to export its symbols exports `f`.
fn is_exported(f: FunctionValue<'_>, name: &str) -> bool {
    let local = matches!(f.get_linkage(), Linkage::Internal | Linkage::Private);
    let visible = f.as_global_value().get_visibility() == GlobalVisibility::Default;
    !local && visible && name != "main"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Context;

    /// The module `ir` holds, and its profiled functions' names.
    fn parsed<'c>(context: &'c Context, ir: &str) -> (Module<'c>, Vec<String>) {
        let buffer =
            inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t");
        let module = context.create_module_from_ir(buffer).unwrap();
        let names = walk::bodies(&module).into_iter().map(|b| b.name).collect();
        (module, names)
    }

    #[test]
    fn counts_direct_calls_and_takes_addresses_and_exports_for_many() {
        let ir = r#"
            @table = global ptr @viaptr
            define internal void @once() { ret void }
            define internal void @twice() { ret void }
            define internal void @viaptr() { ret void }
            define internal void @passed() { ret void }
            declare void @take(ptr)
            define void @public() { ret void }
            define hidden void @hidden() { ret void }
            define i32 @main() {
              call void @once()
              call void @twice()
              call void @twice()
              call void @take(ptr @passed)
              call void @passed()
              call void @public()
              call void @hidden()
              ret i32 0
            }
        "#;
        let context = Context::create();
        let (module, names) = parsed(&context, ir);
        let many = P3Build::MANY;
        assert_eq!(
            names,
            ["once", "twice", "viaptr", "passed", "public", "hidden", "main"]
        );
        assert_eq!(call_sites(&module, false), [1, 2, many, many, 1, 1, 0]);
        assert_eq!(call_sites(&module, true), [1, 2, many, many, many, 1, 0]);
    }

    #[test]
    fn entry_counts_come_from_direct_calls_before_any_that_might_not_return() {
        let ir = r#"
            declare void @maybe()
            define internal void @leaf() { ret void }
            define internal void @twice() { ret void }
            define internal void @late() { ret void }
            define internal void @viaptr() { ret void }
            define internal void @self(i1 %b) {
              br i1 %b, label %again, label %out
            again:
              call void @self(i1 false)
              br label %out
            out:
              ret void
            }
            define internal void @ping() { call void @pong() ret void }
            define internal void @pong() { call void @ping() ret void }
            define internal void @chain() { call void @leaf() ret void }
            define void @public() { ret void }
            define i32 @main(ptr %p) {
            entry:
              call void @leaf()
              call void @twice()
              call void @twice()
              call void @maybe()
              call void @late()
              store ptr @viaptr, ptr %p
              br label %next
            next:
              call void @chain()
              call void @self(i1 true)
              call void @ping()
              call void @public()
              ret i32 0
            }
        "#;
        let context = Context::create();
        let (module, names) = parsed(&context, ir);
        // As extraction does first: leaf, twice, late and chain return.
        crate::returns::mark_always_returning(&module);
        let sites = entry_call_sites(&module);
        let given: Vec<(&str, Vec<(u32, usize)>)> = names
            .iter()
            .zip(&sites)
            .filter(|(_, s)| !s.is_empty())
            .map(|(n, s)| {
                let s = s.iter().map(|c| (c.function, c.block.index())).collect();
                (n.as_str(), s)
            })
            .collect();
        let at = |name: &str| names.iter().position(|n| n == name).unwrap() as u32;
        let (main, chain, ping) = (at("main"), at("chain"), at("ping"));
        // leaf: chain's call and main's first; twice: two sites in one block
        // after leaf, which returns; chain: the first call of main's block
        // `next`; pong: ping's call, ping counting its own entries. late
        // follows @maybe, viaptr's address is taken, self reaches itself,
        // ping follows self's call, public is external.
        assert_eq!(
            given,
            [
                ("leaf", vec![(chain, 0), (main, 0)]),
                ("twice", vec![(main, 0), (main, 0)]),
                ("pong", vec![(ping, 0)]),
                ("chain", vec![(main, 1)]),
            ]
        );
    }
}
