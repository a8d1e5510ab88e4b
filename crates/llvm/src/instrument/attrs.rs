//! Attributes the probes make untrue. LLVM infers (and people declare, with
//! `__attribute__((const))` or `pure`) that a function touches no memory, only
//! reads it, or never synchronises; once the function counts into global
//! counters that is false, and the optimiser, trusting it, would merge, hoist or
//! drop calls and with them their counts (a recursive `memory(none)` function's
//! counter update moved across its own call). So these attributes go from every
//! profiled function and from every call site that may reach one: direct calls
//! to profiled functions, and indirect calls.

use crate::ffi;
use crate::walk::Body;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::values::AsValueRef;
use std::collections::HashSet;

/// Function attributes that probe code contradicts: memory effects (the
/// `memory(...)` attribute and its older spellings), `nosync` (counting with
/// atomic updates synchronises; hash-table counting may take the runtime's
/// lock-free paths) and `speculatable` (a speculated call would count a path
/// that never ran).
const UNTRUE_ATTRIBUTES: &[&str] = &[
    "memory",
    "readnone",
    "readonly",
    "writeonly",
    "argmemonly",
    "inaccessiblememonly",
    "inaccessiblemem_or_argmemonly",
    "nosync",
    "speculatable",
];

fn untrue_kinds() -> Vec<u32> {
    UNTRUE_ATTRIBUTES
        .iter()
        .map(|name| Attribute::get_named_enum_kind_id(name))
        .filter(|&kind| kind != 0)
        .collect()
}

/// Removes the untrue attributes from the profiled functions `bodies` and from
/// every call in `module` that may reach one of them.
pub(crate) fn drop_untrue_attributes(module: &Module<'_>, bodies: &[Body<'_>]) {
    let kinds = untrue_kinds();
    let profiled: HashSet<LLVMValueRef> =
        bodies.iter().map(|b| b.function.as_value_ref()).collect();
    for body in bodies {
        for &kind in &kinds {
            body.function
                .remove_enum_attribute(AttributeLoc::Function, kind);
        }
    }
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            for call in block.get_instructions().filter_map(ffi::call_site) {
                // An indirect call may reach a profiled function.
                let reaches = call
                    .get_called_fn_value()
                    .is_none_or(|callee| profiled.contains(&callee.as_value_ref()));
                if reaches {
                    for &kind in &kinds {
                        call.remove_enum_attribute(AttributeLoc::Function, kind);
                    }
                }
            }
        }
    }
}
