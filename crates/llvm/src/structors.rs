//! Constructors and destructors in `.init_array` / `.fini_array`.
//!
//! A target machine made through LLVM's C API keeps LLVM's default of
//! emitting `llvm.global_ctors` into `.ctors` sections (clang asks for
//! `.init_array`). GNU ld moves `.ctors` into `.init_array`; lld does not, and
//! a program linked with it would never run the objects' constructors: not
//! pathprof's registration, not the program's own C++ static initialisers.
//! So before code generation every entry of `llvm.global_ctors` and
//! `llvm.global_dtors` becomes a pointer in the section clang would use
//! (`.init_array.NNNNN` for priority NNNNN, `.init_array` for the default
//! 65535), in the comdat of the entry's key when it has one (so it goes
//! with the instance the linker keeps), kept by `llvm.compiler.used`.

use crate::ffi;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{AsValueRef, BasicValueEnum, GlobalValue};
use inkwell::AddressSpace;

/// The priority of an entry without one.
const DEFAULT_PRIORITY: u64 = 65535;

/// Rewrites the module's constructor and destructor lists as section
/// entries (see the module documentation).
pub fn lower_to_init_array(module: &Module<'_>) {
    let mut kept = Vec::new();
    for (list, section) in [
        ("llvm.global_ctors", ".init_array"),
        ("llvm.global_dtors", ".fini_array"),
    ] {
        let Some(global) = module.get_global(list) else {
            continue;
        };
        let Some(BasicValueEnum::ArrayValue(entries)) = global.get_initializer() else {
            continue;
        };
        for (n, entry) in ffi::constant_array_elements(entries.as_value_ref())
            .into_iter()
            .enumerate()
        {
            let fields = ffi::constant_operands(entry);
            let (Some(&priority), Some(&function)) = (fields.first(), fields.get(1)) else {
                continue;
            };
            let priority = ffi::constant_int(priority).unwrap_or(DEFAULT_PRIORITY);
            // Safety: `function` is an operand of a live constant of this module.
            let function = unsafe { BasicValueEnum::new(function) };
            let slot = module.add_global(
                function.get_type(),
                None,
                &format!("__pathprof{}.{n}", section.replace('.', "_")),
            );
            slot.set_linkage(Linkage::Private);
            slot.set_initializer(&function);
            slot.set_alignment(8);
            slot.set_section(Some(&match priority {
                DEFAULT_PRIORITY => section.to_string(),
                p => format!("{section}.{p:05}"),
            }));
            if let Some(comdat) = fields.get(2).and_then(|&key| ffi::comdat_of(key)) {
                ffi::set_comdat(slot.as_value_ref(), comdat);
            }
            kept.push(slot.as_pointer_value());
        }
        // Safety: the list is an appending global nothing refers to; its
        // entries were copied out above.
        unsafe { global.delete() };
    }
    if !kept.is_empty() {
        keep(module, &kept);
    }
}

/// Appends `globals` to `llvm.compiler.used`.
fn keep<'ctx>(module: &Module<'ctx>, globals: &[inkwell::values::PointerValue<'ctx>]) {
    let ptr_type = module.get_context().ptr_type(AddressSpace::default());
    let entries: Vec<_> = globals.iter().map(|g| g.as_value_ref()).collect();
    let used = append_to_list(module, "llvm.compiler.used", ptr_type.into(), &entries);
    used.set_section(Some("llvm.metadata"));
}

/// Appends `entries` (raw constants) to the appending global array `name`
/// (`llvm.global_ctors`, `llvm.compiler.used`...): creates it with elements
/// of `entry_type`, or rebuilds it with its old entries first, in their own
/// element type. Returns the new array.
pub(crate) fn append_to_list<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    entry_type: BasicTypeEnum<'ctx>,
    entries: &[LLVMValueRef],
) -> GlobalValue<'ctx> {
    let mut entry_type = entry_type;
    let mut all = Vec::new();
    if let Some(old) = module.get_global(name) {
        if let Some(BasicValueEnum::ArrayValue(init)) = old.get_initializer() {
            entry_type = ffi::array_element_type(init);
            all = ffi::constant_array_elements(init.as_value_ref());
        }
        // Safety: an appending global nothing refers to; its entries were
        // copied out above.
        unsafe { old.delete() };
    }
    all.extend_from_slice(entries);
    let array = ffi::const_array(entry_type, &all);
    let list = module.add_global(array.get_type(), None, name);
    list.set_linkage(Linkage::Appending);
    list.set_initializer(&array);
    list
}
