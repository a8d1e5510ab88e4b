//! Call sites in a linked module, for P3 (Afraz et al. 2015, Algorithm 2
//! line 5: a procedure with at most one call site is partitioned).
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
use pathprof_core::map::P3Build;
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
        let buffer =
            inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t");
        let module = context.create_module_from_ir(buffer).unwrap();
        let names: Vec<String> = walk::bodies(&module).into_iter().map(|b| b.name).collect();
        let many = P3Build::MANY;
        assert_eq!(
            names,
            ["once", "twice", "viaptr", "passed", "public", "hidden", "main"]
        );
        assert_eq!(call_sites(&module, false), [1, 2, many, many, 1, 1, 0]);
        assert_eq!(call_sites(&module, true), [1, 2, many, many, many, 1, 0]);
    }
}
