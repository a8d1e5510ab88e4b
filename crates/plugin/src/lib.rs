//! pathprof's clang pass plugin (`clang -fpass-plugin=libpathprof_plugin.so`),
//! which `pathprof cc -c` loads so that each translation unit is
//! instrumented inside clang's own pipeline: one process per source file, no
//! IR through a temporary file, and every clang flag (sanitizers, `-mllvm`,
//! sections, `-save-temps`) acting on the instrumented code as on the plain.
//!
//! At the start of the pipeline (src/register.cpp), after pathprof's early
//! simplification ([`pathprof_llvm::EARLY_SIMPLIFICATION`], not at `-O0`),
//! [`pathprof_llvm::pipeline::instrument_translation_unit`] plans and
//! instruments every function and embeds the map fragment; clang then
//! optimises (inlining included) and generates code. The settings come from
//! `pathprof cc` as JSON in [`PLUGIN_SETTINGS_VARIABLE`].

use pathprof_llvm::inkwell::llvm_sys::prelude::LLVMModuleRef;
use pathprof_llvm::pipeline::{instrument_translation_unit, Settings, PLUGIN_SETTINGS_VARIABLE};
use pathprof_llvm::Module;
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::ManuallyDrop;

/// LLVM's `PassPluginLibraryInfo` (llvm/Plugins/PassPlugin.h, API version 2).
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_pass_builder_callbacks: Option<unsafe extern "C" fn(*mut c_void)>,
    pre_code_gen_callback: Option<unsafe extern "C" fn()>,
}

unsafe extern "C" {
    /// src/register.cpp: adds the early simplification and the instrumenting
    /// pass at the pipeline's start (a `PassBuilder &`, passed as a pointer).
    fn pathprof_plugin_register(builder: *mut c_void);
}

/// The entry point clang looks up in every pass plugin.
#[unsafe(no_mangle)]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    PassPluginLibraryInfo {
        api_version: 2,
        plugin_name: c"pathprof".as_ptr(),
        plugin_version: c"0.1".as_ptr(),
        register_pass_builder_callbacks: Some(pathprof_plugin_register),
        pre_code_gen_callback: None,
    }
}

/// The pass pipeline run before planning (called from C++).
#[unsafe(no_mangle)]
pub extern "C" fn pathprof_plugin_early_pipeline() -> *const c_char {
    static PIPELINE: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    PIPELINE
        .get_or_init(|| CString::new(pathprof_llvm::EARLY_SIMPLIFICATION).expect("no NUL"))
        .as_ptr()
}

/// Instruments `module` (called from C++ by the pass). Returns 1 when the
/// module changed; on failure stores a message in `*error`, to be released
/// with [`pathprof_plugin_free_error`].
///
/// # Safety
/// `module` is a live module that the caller owns; `error` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pathprof_plugin_instrument(
    module: LLVMModuleRef,
    error: *mut *mut c_char,
) -> c_int {
    // Borrowed from clang: never disposed of here.
    let module = ManuallyDrop::new(unsafe { Module::new(module) });
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        instrument_translation_unit(&module, &settings()?)
    }));
    let message = match outcome {
        Ok(Ok(changed)) => return c_int::from(changed),
        Ok(Err(e)) => format!("{e:#}"),
        Err(_) => "internal error while instrumenting (a panic; see above)".to_string(),
    };
    let message = CString::new(message.replace('\0', " ")).expect("NULs replaced");
    unsafe { *error = message.into_raw() };
    0
}

/// Releases a message [`pathprof_plugin_instrument`] returned.
///
/// # Safety
/// `message` came from [`pathprof_plugin_instrument`] and is released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pathprof_plugin_free_error(message: *mut c_char) {
    drop(unsafe { CString::from_raw(message) });
}

/// The settings `pathprof cc` passed.
fn settings() -> anyhow::Result<Settings> {
    let Some(json) = std::env::var_os(PLUGIN_SETTINGS_VARIABLE) else {
        anyhow::bail!(
            "the pathprof plugin was loaded without its settings ({PLUGIN_SETTINGS_VARIABLE}); \
             compile through `pathprof cc`, which passes them"
        );
    };
    let json = json
        .into_string()
        .map_err(|_| anyhow::anyhow!("{PLUGIN_SETTINGS_VARIABLE} is not UTF-8"))?;
    serde_json::from_str(&json)
        .map_err(|e| anyhow::anyhow!("{PLUGIN_SETTINGS_VARIABLE} is malformed: {e}"))
}
