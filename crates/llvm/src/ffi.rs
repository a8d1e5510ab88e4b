//! Thin safe wrappers over the LLVM-C calls inkwell does not expose: terminator
//! successors, exception-pad and inline-asm tests, debug locations and
//! subprograms, phi rebuilding, aggregate elements and C++ demangling.
//!
//! Every wrapper takes values that inkwell already holds (so they are live objects
//! of the context the module lives in) and checks the kind of value LLVM expects
//! before handing it over. This is where most of the crate's `unsafe` lives.

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::llvm_sys::core as llc;
use inkwell::llvm_sys::debuginfo as lld;
use inkwell::llvm_sys::prelude::{LLVMBasicBlockRef, LLVMMetadataRef, LLVMTypeRef, LLVMValueRef};
use inkwell::types::{ArrayType, AsTypeRef, BasicTypeEnum, IntType};
use inkwell::values::{
    ArrayValue, AsValueRef, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue,
};
use std::ffi::{c_char, c_int, c_void, CStr};

/// The name of any value (function, block, global), lossily as UTF-8.
pub(crate) fn value_name(value: LLVMValueRef) -> String {
    let mut len = 0usize;
    // Safety: `value` comes from an inkwell handle, so it is a live `Value`;
    // LLVMGetValueName2 returns a pointer into the value's name (or "") valid until
    // the name changes, and writes its length, which we copy out at once.
    unsafe {
        let ptr = llc::LLVMGetValueName2(value, &mut len);
        if ptr.is_null() || len == 0 {
            return String::new();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// The number of successor slots of a terminator.
pub(crate) fn num_successors(term: InstructionValue<'_>) -> u32 {
    assert!(term.is_terminator(), "num_successors of a non-terminator");
    // Safety: `term` is a live terminator instruction (asserted above), which is
    // what `Instruction::getNumSuccessors` requires.
    unsafe { llc::LLVMGetNumSuccessors(term.as_value_ref()) }
}

/// Successor slot `slot` of a terminator.
pub(crate) fn successor<'ctx>(term: InstructionValue<'ctx>, slot: u32) -> BasicBlock<'ctx> {
    assert!(slot < num_successors(term), "successor slot out of range");
    // Safety: `term` is a terminator and `slot` is below its successor count
    // (asserted), so LLVM returns a live, non-null block of the same function.
    unsafe {
        let bb = llc::LLVMGetSuccessor(term.as_value_ref(), slot);
        BasicBlock::new(bb).expect("LLVM returned a null successor")
    }
}

/// Makes successor slot `slot` of a terminator go to `block` instead.
pub(crate) fn set_successor(term: InstructionValue<'_>, slot: u32, block: BasicBlock<'_>) {
    assert!(slot < num_successors(term), "successor slot out of range");
    // Safety: `term` is a terminator, `slot` is in range (asserted), and `block` is
    // a live block; LLVM rewrites exactly that successor operand.
    unsafe { llc::LLVMSetSuccessor(term.as_value_ref(), slot, block.as_mut_ptr()) }
}

/// Whether an instruction is a debug intrinsic call (`llvm.dbg.*`), which does not
/// count as code. (LLVM 22 normally keeps debug info as records, not calls.)
pub(crate) fn is_debug_intrinsic(inst: InstructionValue<'_>) -> bool {
    if inst.get_opcode() != InstructionOpcode::Call {
        return false;
    }
    // Safety: `inst` is a live instruction; LLVMIsA* only inspects its class.
    unsafe { !llc::LLVMIsADbgInfoIntrinsic(inst.as_value_ref()).is_null() }
}

/// `inst` as a call site when it is a `call` or an `invoke` (inkwell's own
/// conversion takes only `call`s).
pub(crate) fn call_site(inst: InstructionValue<'_>) -> Option<CallSiteValue<'_>> {
    // Safety: both opcodes are LLVM `CallBase` instructions, which every
    // `CallSiteValue` method used here (called value, attributes) accepts.
    matches!(
        inst.get_opcode(),
        InstructionOpcode::Call | InstructionOpcode::Invoke
    )
    .then(|| unsafe { CallSiteValue::new(inst.as_value_ref()) })
}

/// How many uses `value` has (operands of instructions and constants that
/// refer to it; metadata is not a use).
pub(crate) fn num_uses(value: LLVMValueRef) -> usize {
    let mut n = 0;
    // Safety: `value` comes from an inkwell handle, so it is a live `Value`;
    // LLVMGetFirstUse / LLVMGetNextUse walk its use list, returning null at
    // its end, and nothing edits the module meanwhile.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(value);
        while !u.is_null() {
            n += 1;
            u = llc::LLVMGetNextUse(u);
        }
    }
    n
}

/// Whether a call or invoke instruction calls inline assembly.
pub(crate) fn calls_inline_asm(call: InstructionValue<'_>) -> bool {
    assert!(
        matches!(
            call.get_opcode(),
            InstructionOpcode::Call | InstructionOpcode::Invoke
        ),
        "not a call or invoke"
    );
    // Safety: `call` is a live call or invoke (asserted), whose called operand
    // LLVMGetCalledValue returns (never null for a valid call); LLVMIsA* only
    // inspects that value's class.
    unsafe {
        let callee = llc::LLVMGetCalledValue(call.as_value_ref());
        !callee.is_null() && !llc::LLVMIsAInlineAsm(callee).is_null()
    }
}

/// Whether an instruction is an exception-handling pad that must stay first in its
/// block (`landingpad`, `catchpad`, `cleanuppad`; `catchswitch` is also a pad but a
/// terminator).
pub(crate) fn is_eh_pad(inst: InstructionValue<'_>) -> bool {
    matches!(
        inst.get_opcode(),
        InstructionOpcode::LandingPad
            | InstructionOpcode::CatchPad
            | InstructionOpcode::CleanupPad
            | InstructionOpcode::CatchSwitch
    )
}

/// An interned `DIFile` node, usable as a map key while the module lives.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct FileKey(LLVMMetadataRef);

/// An instruction's debug location as (file, line); `None` without a location.
pub(crate) fn debug_line(inst: InstructionValue<'_>) -> Option<(Option<FileKey>, u32)> {
    // Safety: `inst` is a live instruction; LLVMInstructionGetDebugLoc returns its
    // `DILocation` node or null. A `DILocation` always has a scope (a
    // `DILocalScope`), and LLVMDIScopeGetFile returns that scope's `DIFile` or null.
    unsafe {
        let loc = lld::LLVMInstructionGetDebugLoc(inst.as_value_ref());
        if loc.is_null() {
            return None;
        }
        let line = lld::LLVMDILocationGetLine(loc);
        let scope = lld::LLVMDILocationGetScope(loc);
        let file = if scope.is_null() {
            std::ptr::null_mut()
        } else {
            lld::LLVMDIScopeGetFile(scope)
        };
        Some(((!file.is_null()).then_some(FileKey(file)), line))
    }
}

/// A function's position from its `DISubprogram`: (file, line).
pub(crate) fn subprogram_position(function: FunctionValue<'_>) -> Option<(Option<FileKey>, u32)> {
    // Safety: `function` is a live function; LLVMGetSubprogram returns its
    // `DISubprogram` or null, and a subprogram is a `DIScope` with a line.
    unsafe {
        let sp = lld::LLVMGetSubprogram(function.as_value_ref());
        if sp.is_null() {
            return None;
        }
        let line = lld::LLVMDISubprogramGetLine(sp);
        let file = lld::LLVMDIScopeGetFile(sp);
        Some(((!file.is_null()).then_some(FileKey(file)), line))
    }
}

/// The path a `DIFile` names: `directory/filename`, or just `filename` when it is
/// absolute or the directory is empty.
pub(crate) fn file_path(file: FileKey) -> String {
    let mut dlen = 0u32;
    let mut flen = 0u32;
    // Safety: `file.0` is a live `DIFile` node (FileKey is only made from
    // LLVMDIScopeGetFile results); both getters return pointers to `len` bytes
    // owned by the metadata, which outlives this call.
    let (dir, name) = unsafe {
        let d = lld::LLVMDIFileGetDirectory(file.0, &mut dlen);
        let f = lld::LLVMDIFileGetFilename(file.0, &mut flen);
        (
            bytes_to_string(d, dlen as usize),
            bytes_to_string(f, flen as usize),
        )
    };
    if dir.is_empty() || name.starts_with('/') {
        name
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Copies `len` bytes at `ptr` (null allowed when `len` is 0) into a `String`.
///
/// # Safety
/// `ptr` must point to `len` readable bytes, or be null.
unsafe fn bytes_to_string(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    // Safety: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Rebuilds `phi` with the incoming blocks of the entries `moves(index, block)`
/// picks replaced by `new_block` (LLVM-C has no setter for a phi's incoming
/// block).
pub(crate) fn retarget_phi_incoming(
    builder: &Builder<'_>,
    phi: InstructionValue<'_>,
    moves: impl Fn(u32, LLVMBasicBlockRef) -> bool,
    new_block: BasicBlock<'_>,
) {
    let entries = phi_entries(phi)
        .into_iter()
        .enumerate()
        .map(|(i, (value, block))| match moves(i as u32, block) {
            true => (value, new_block.as_mut_ptr()),
            false => (value, block),
        })
        .collect();
    replace_phi(builder, phi, entries);
}

/// Rebuilds `phi` with only the entries `keeps(index, block)` picks (LLVM-C
/// cannot remove one).
pub(crate) fn rebuild_phi(
    builder: &Builder<'_>,
    phi: InstructionValue<'_>,
    mut keeps: impl FnMut(u32, LLVMBasicBlockRef) -> bool,
) {
    let entries = phi_entries(phi)
        .into_iter()
        .enumerate()
        .filter(|&(i, (_, block))| keeps(i as u32, block))
        .map(|(_, entry)| entry)
        .collect();
    replace_phi(builder, phi, entries);
}

/// A phi's incoming values and blocks, in order.
fn phi_entries(phi: InstructionValue<'_>) -> Vec<(LLVMValueRef, LLVMBasicBlockRef)> {
    assert_eq!(phi.get_opcode(), InstructionOpcode::Phi, "not a phi");
    let old = phi.as_value_ref();
    // Safety: `old` is a live phi (asserted); indices are below its count.
    unsafe {
        (0..llc::LLVMCountIncoming(old))
            .map(|i| {
                (
                    llc::LLVMGetIncomingValue(old, i),
                    llc::LLVMGetIncomingBlock(old, i),
                )
            })
            .collect()
    }
}

/// Puts a phi of `entries` in `phi`'s place: it takes the old one's name,
/// debug location, fast-math flags and uses; the old one is erased.
fn replace_phi(
    builder: &Builder<'_>,
    phi: InstructionValue<'_>,
    mut entries: Vec<(LLVMValueRef, LLVMBasicBlockRef)>,
) {
    let old = phi.as_value_ref();
    let name = value_name(old);
    builder.position_before(&phi);
    let (mut values, mut blocks): (Vec<_>, Vec<_>) = entries.drain(..).unzip();
    // Safety: `old` is a live phi; we build a phi of the same type right
    // before it (values of its type, blocks of its function), move every
    // use over, then erase the old phi, which no longer has uses.
    unsafe {
        let new = build_phi(builder, llc::LLVMTypeOf(old), &mut values, &mut blocks);
        let loc = lld::LLVMInstructionGetDebugLoc(old);
        if !loc.is_null() {
            lld::LLVMInstructionSetDebugLoc(new, loc);
        }
        if llc::LLVMCanValueUseFastMathFlags(old) != 0 {
            llc::LLVMSetFastMathFlags(new, llc::LLVMGetFastMathFlags(old));
        }
        llc::LLVMReplaceAllUsesWith(old, new);
        llc::LLVMInstructionEraseFromParent(old);
        if !name.is_empty() {
            llc::LLVMSetValueName2(new, name.as_ptr().cast(), name.len());
        }
    }
}

/// A phi of type `ty` with the entries `values[i]` from `blocks[i]`, built
/// where `builder` is positioned.
///
/// # Safety
/// `builder` is positioned in a live function, `ty` is a first-class type,
/// `values` are of that type and `blocks` of that function, one each.
pub(crate) unsafe fn build_phi(
    builder: &Builder<'_>,
    ty: LLVMTypeRef,
    values: &mut [LLVMValueRef],
    blocks: &mut [LLVMBasicBlockRef],
) -> LLVMValueRef {
    assert_eq!(values.len(), blocks.len(), "one block per value");
    // Safety: guaranteed by the caller; the builder's raw pointer is live
    // for the call.
    unsafe {
        let phi = llc::LLVMBuildPhi(builder.as_mut_ptr(), ty, c"".as_ptr());
        llc::LLVMAddIncoming(
            phi,
            values.as_mut_ptr(),
            blocks.as_mut_ptr(),
            values.len() as u32,
        );
        phi
    }
}

/// The incoming blocks of a phi, in order.
pub(crate) fn phi_incoming_blocks(phi: InstructionValue<'_>) -> Vec<LLVMBasicBlockRef> {
    phi_entries(phi)
        .into_iter()
        .map(|(_, block)| block)
        .collect()
}

/// The elements of a constant array (e.g. `llvm.global_ctors`' initializer).
pub(crate) fn constant_array_elements(array: LLVMValueRef) -> Vec<LLVMValueRef> {
    // Safety: `array` is a live constant; we only call LLVMGetArrayLength2 on a
    // value whose type is an array, and LLVMGetAggregateElement with indices below
    // that length (it returns null for anything else, which we skip).
    unsafe {
        let ty = llc::LLVMTypeOf(array);
        if llc::LLVMGetTypeKind(ty) != inkwell::llvm_sys::LLVMTypeKind::LLVMArrayTypeKind {
            return Vec::new();
        }
        let len = llc::LLVMGetArrayLength2(ty);
        (0..len)
            .filter_map(|i| {
                let e = llc::LLVMGetAggregateElement(array, i as u32);
                (!e.is_null()).then_some(e)
            })
            .collect()
    }
}

extern "C" {
    // From the C++ runtime (libstdc++ or libc++), which LLVM itself links.
    fn __cxa_demangle(
        mangled: *const c_char,
        buf: *mut c_char,
        len: *mut usize,
        status: *mut c_int,
    ) -> *mut c_char;
    fn free(ptr: *mut c_void);
}

/// The demangled form of an Itanium C++ name (`_Z…`) by the C++ runtime's
/// `__cxa_demangle`, or `None` for other names and names it rejects.
pub(crate) fn cxa_demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let c_name = std::ffi::CString::new(name).ok()?;
    let mut status: c_int = 0;
    // Safety: `c_name` is a NUL-terminated string; with a null buffer
    // `__cxa_demangle` mallocs the result (or returns null and sets `status`),
    // which we copy and then release with `free`.
    unsafe {
        let out = __cxa_demangle(
            c_name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        );
        if out.is_null() {
            return None;
        }
        let s = CStr::from_ptr(out).to_string_lossy().into_owned();
        free(out.cast());
        (status == 0 && s != name).then_some(s)
    }
}

/// `[len x i64]`, for lengths beyond inkwell's `u32`.
pub(crate) fn i64_array_type<'ctx>(i64_type: IntType<'ctx>, len: u64) -> ArrayType<'ctx> {
    // Safety: `i64_type` is a live type; LLVMArrayType2 returns a live array type
    // of the same context, which is what ArrayType::new expects.
    unsafe { ArrayType::new(llc::LLVMArrayType2(i64_type.as_type_ref(), len)) }
}

/// A constant array of `element_type` holding `elements` (raw constants of that
/// type, e.g. the entries of an existing `llvm.global_ctors`).
pub(crate) fn const_array<'ctx>(
    element_type: BasicTypeEnum<'ctx>,
    elements: &[LLVMValueRef],
) -> ArrayValue<'ctx> {
    let mut elements = elements.to_vec();
    // Safety: every element is a live constant of `element_type` (the caller's
    // contract, checked by the verifier afterwards); LLVMConstArray2 copies the
    // list and returns a constant of array type.
    unsafe {
        ArrayValue::new(llc::LLVMConstArray2(
            element_type.as_type_ref(),
            elements.as_mut_ptr(),
            elements.len() as u64,
        ))
    }
}

/// The element type of a value of array type.
pub(crate) fn array_element_type<'ctx>(array: ArrayValue<'ctx>) -> BasicTypeEnum<'ctx> {
    // Safety: `array` is a live constant of array type; its element type is a
    // first-class type of the same context.
    unsafe {
        BasicTypeEnum::new(llc::LLVMGetElementType(llc::LLVMTypeOf(
            array.as_value_ref(),
        )))
    }
}

/// Gives `inst` a line-0 location in `function`'s subprogram, when the function
/// has one. (The verifier wants a location on calls to functions that have debug
/// info themselves, such as a runtime linked in as bitcode.)
pub(crate) fn set_line0_location(inst: LLVMValueRef, function: FunctionValue<'_>) {
    // Safety: `function` is a live function; its subprogram (if any) is a valid
    // scope; the location is created in the function's own context and attached to
    // `inst`, a live instruction of that function.
    unsafe {
        let sp = lld::LLVMGetSubprogram(function.as_value_ref());
        if sp.is_null() {
            return;
        }
        let context = llc::LLVMGetTypeContext(llc::LLVMTypeOf(function.as_value_ref()));
        let loc = lld::LLVMDIBuilderCreateDebugLocation(context, 0, 0, sp, std::ptr::null_mut());
        lld::LLVMInstructionSetDebugLoc(inst, loc);
    }
}

/// Appends `asm` to the module-level inline assembly (LLVM adds a newline
/// between pieces).
pub(crate) fn append_module_asm(module: &inkwell::module::Module<'_>, asm: &str) {
    // Safety: the module handle is live; LLVM copies the string (pointer and
    // length, no terminator needed).
    unsafe { llc::LLVMAppendModuleInlineAsm(module.as_mut_ptr(), asm.as_ptr().cast(), asm.len()) }
}

/// The operands of a constant (the fields of a constant struct).
pub(crate) fn constant_operands(value: LLVMValueRef) -> Vec<LLVMValueRef> {
    // Safety: `value` is a live constant from inkwell (an element of a
    // constant array read by `constant_array_elements`); operand indices are
    // below its operand count.
    unsafe {
        let n = llc::LLVMGetNumOperands(value);
        (0..n.max(0) as u32)
            .map(|i| llc::LLVMGetOperand(value, i))
            .collect()
    }
}

/// The value of a constant integer, if `value` is one.
pub(crate) fn constant_int(value: LLVMValueRef) -> Option<u64> {
    // Safety: `value` is a live value; it is checked to be a ConstantInt
    // before its value is read.
    unsafe {
        if llc::LLVMIsAConstantInt(value).is_null() {
            return None;
        }
        Some(llc::LLVMConstIntGetZExtValue(value))
    }
}

/// The comdat of a global value, if `value` is a global that has one.
pub(crate) fn comdat_of(value: LLVMValueRef) -> Option<inkwell::llvm_sys::prelude::LLVMComdatRef> {
    // Safety: `value` is a live value; it is checked to be a global object
    // (which may have a comdat) before the comdat is read.
    unsafe {
        if value.is_null() || llc::LLVMIsAGlobalObject(value).is_null() {
            return None;
        }
        let c = inkwell::llvm_sys::comdat::LLVMGetComdat(value);
        (!c.is_null()).then_some(c)
    }
}

/// Puts global `value` into `comdat`.
pub(crate) fn set_comdat(value: LLVMValueRef, comdat: inkwell::llvm_sys::prelude::LLVMComdatRef) {
    // Safety: `value` is a live global object created by the caller and
    // `comdat` a comdat of the same module.
    unsafe { inkwell::llvm_sys::comdat::LLVMSetComdat(value, comdat) }
}
