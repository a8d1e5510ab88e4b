//! Instrumentation: transcribes [`FunctionPlan`]s into IR (docs/formats.md §1) and
//! registers the counters with the runtime (docs/formats.md §2).
//!
//! Stages, in order:
//! 1. [`crate::walk`] re-reads every function's CFG (the same walk as extraction)
//!    and checks it against the plan's hash; [`place`] decides where every op goes.
//!    Nothing is edited until every function has been read and placed.
//! 2. [`attrs`] drops the attributes the probes make untrue (`memory(none)`,
//!    `nosync`...); [`abi::counters`] creates the counter globals (the
//!    module's slot array and each function's path counters) and [`abi::ThreadDelta`] the
//!    per-thread delta the others are counted at;
//!    [`emit`] splits the edges that need it ([`split`]) and emits the ops
//!    ([`unwind`] undoes counts around `invoke`s); [`scope`] tells LLVM that
//!    the probes' memory and the program's never alias.
//! 3. [`abi::register`] emits the descriptors and the constructor, and LLVM's
//!    verifier checks the result.

mod abi;
mod attrs;
mod emit;
mod place;
mod scope;
mod split;
mod unwind;

use crate::error::LlvmError;
use crate::walk;
use inkwell::module::Module;
use pathprof_core::plan::FunctionPlan;
use pathprof_core::Mode;

/// Functions with more blocks than this are instrumented as plainly as
/// possible: in the interpreters' loops (SQLite's `sqlite3VdbeExec`, 1454
/// blocks; Lua's `luaV_execute`, 732) anything that asks more of the
/// register allocator costs more than it saves. They compute their
/// counters' addresses at each probe ([`emit`]'s pinned bases), and they and
/// the functions LLVM may inline into them are left out of the alias scope
/// ([`scope`]).
const LARGE_FUNCTION_BLOCKS: usize = 512;

/// Module-wide facts the registration needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleInfo {
    /// What the plans count (`PpModule::mode`).
    pub mode: Mode,
    /// Identity of the build (`PpModule::build_id`, `MapFile::build_id`).
    pub build_id: u64,
    /// `hashes[i]` is [`pathprof_core::Cfg::shape_hash`] of extracted function `i`.
    pub hashes: Vec<u64>,
    /// Count with `atomicrmw add` instead of saturating load/add/store.
    pub atomic: bool,
    /// The build's default is continuous mode (`PpModule::flags`).
    pub continuous: bool,
}

/// Instruments `module`: `plans[i]` belongs to [`crate::extract`]'s function `i`.
///
/// On error the module may be partly instrumented; drop it.
pub fn instrument(
    module: &Module<'_>,
    plans: &[FunctionPlan],
    info: &ModuleInfo,
) -> Result<(), LlvmError> {
    if module.get_global(abi::MODULE_SYMBOL).is_some() {
        return Err(LlvmError::AlreadyInstrumented {
            symbol: abi::MODULE_SYMBOL.to_string(),
        });
    }
    let bodies = walk::bodies(module);
    for (what, found) in [
        ("the plan list", plans.len()),
        ("ModuleInfo::hashes", info.hashes.len()),
    ] {
        if found != bodies.len() {
            return Err(LlvmError::CountMismatch {
                what,
                expected: bodies.len(),
                found,
            });
        }
    }

    // 1. Read and place everything before the first edit.
    let mut placed = Vec::with_capacity(bodies.len());
    for ((body, plan), &hash) in bodies.iter().zip(plans).zip(&info.hashes) {
        let cfg = walk::read_cfg(body)?;
        if cfg.shape_hash() != hash {
            return Err(LlvmError::HashMismatch {
                function: body.name.clone(),
                expected: hash,
                found: cfg.shape_hash(),
            });
        }
        let placement = place::place(&cfg, plan).map_err(|detail| LlvmError::BadPlan {
            function: body.name.clone(),
            detail,
        })?;
        placed.push((cfg, placement));
    }

    // 2. Attributes, counters and probes.
    attrs::drop_untrue_attributes(module, &bodies);
    let (module_array, counters) = abi::counters(module, plans);
    let registered: Vec<_> = plans.iter().zip(counters).collect();
    let delta = registered
        .iter()
        .any(|(_, c)| c.at_delta())
        .then(|| abi::ThreadDelta::define(module));
    let segment = !info.atomic && abi::executable_only_x86_64(module);
    let mut emitter = emit::Emitter::new(module, info.atomic, delta, segment);
    let scope = scope::CounterScope::new(module);
    let scoped = scope::scoped(&bodies, info.mode);
    for (((body, (cfg, placement)), (_, counters)), &scoped) in
        bodies.iter().zip(&placed).zip(&registered).zip(&scoped)
    {
        if scoped {
            scope.mark_program(body.function);
        }
        emitter.function(module, body, cfg, placement, *counters, scoped)?;
        if scoped {
            scope.mark_probes(body.function);
        }
    }
    for helper in emitter.helpers() {
        scope.mark_probes(helper);
    }

    // 3. Registration, then check the whole module.
    // A module without counters has no delta: nothing counts through `%gs`.
    abi::register(
        module,
        info,
        &registered,
        module_array,
        delta,
        segment && delta.is_some(),
    );
    module.verify().map_err(|message| LlvmError::Verify {
        message: message.to_string(),
    })
}
