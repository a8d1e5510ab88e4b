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
//!
//! With `--time-report` (a [`Settings::timings_file`]), marks in the
//! pipeline time the early simplification, the instrumentation's phases and
//! clang's optimisation ([`pathprof_plugin_mark`]); at the end of
//! optimisation they go to that file for `pathprof cc`, which knows when
//! clang started and ended.

use pathprof_llvm::inkwell::llvm_sys::prelude::LLVMModuleRef;
use pathprof_llvm::pipeline::{
    instrument_translation_unit, use_profile_in_translation_unit, Settings,
    PLUGIN_SETTINGS_VARIABLE,
};
use pathprof_llvm::timings::{self, Phase, PluginTimings};
use pathprof_llvm::Module;
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

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
        let settings = settings()?;
        let changed = match &settings.profile_use {
            Some(index) => use_profile_in_translation_unit(&module, index, settings.use_options()),
            None => instrument_translation_unit(&module, &settings),
        };
        lap(None); // the pass's phases are timed inside it
        changed
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

/// Whether `pathprof cc` asked for the phases' times (`--time-report`):
/// then the recorder is on, and src/register.cpp adds the marks (called
/// once, when the plugin registers its passes).
#[unsafe(no_mangle)]
pub extern "C" fn pathprof_plugin_time_report() -> c_int {
    let Some(file) = settings().ok().and_then(|s| s.timings_file) else {
        return 0;
    };
    timings::enable();
    *clock() = Some(Clock {
        file,
        pipeline_start: SystemTime::now(),
        lap: Instant::now(),
    });
    1
}

/// [`pathprof_plugin_mark`]'s marks, as src/register.cpp passes them.
const MARK_START: c_int = 0;
const MARK_SIMPLIFIED: c_int = 1;
const MARK_OPTIMISED: c_int = 2;

/// A mark in clang's pipeline (called from C++ by a pass that does
/// nothing else): `0` its start (the front end's end), `1` the end of the
/// early simplification, `2` the end of optimisation, where the timings
/// are written to the settings' file.
#[unsafe(no_mangle)]
pub extern "C" fn pathprof_plugin_mark(mark: c_int) {
    match mark {
        MARK_START => {
            if let Some(clock) = clock().as_mut() {
                clock.pipeline_start = SystemTime::now();
                clock.lap = Instant::now();
            }
        }
        MARK_SIMPLIFIED => lap(Some(Phase::EarlySimplification)),
        MARK_OPTIMISED => {
            lap(Some(Phase::Optimisation));
            if let Some(clock) = clock().take() {
                let sent = PluginTimings {
                    pipeline_start: clock.pipeline_start,
                    timings: timings::take(),
                };
                let written = serde_json::to_vec(&sent)
                    .map_err(std::io::Error::other)
                    .and_then(|json| std::fs::write(&clock.file, json));
                if let Err(e) = written {
                    eprintln!(
                        "pathprof: warning: cannot write the time report to {}: {e}",
                        clock.file.display()
                    );
                }
            }
        }
        _ => {}
    }
}

/// Where the plugin's clock stands (with `--time-report`).
struct Clock {
    /// Where the timings go.
    file: PathBuf,
    pipeline_start: SystemTime,
    /// The last mark.
    lap: Instant,
}

fn clock() -> std::sync::MutexGuard<'static, Option<Clock>> {
    static CLOCK: Mutex<Option<Clock>> = Mutex::new(None);
    CLOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Adds the time since the last mark to `phase` (none: not counted) and
/// starts the next lap.
fn lap(phase: Option<Phase>) {
    if !timings::enabled() {
        return;
    }
    if let Some(clock) = clock().as_mut() {
        if let Some(phase) = phase {
            let elapsed = clock.lap.elapsed();
            timings::record(|t| t.add(phase, elapsed));
        }
        clock.lap = Instant::now();
    }
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
