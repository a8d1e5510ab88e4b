//! Optimisation and code generation: the `default<On>` pipeline through the new
//! pass manager, and an object file for the module's target (the host when the
//! module names none), position independent so that PIE links work.

use crate::error::LlvmError;
use crate::timings::{self, Phase};
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};
use inkwell::OptimizationLevel;
use std::path::Path;
use std::sync::Once;

/// An optimisation level, as in `clang -O…`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptLevel {
    O0,
    O1,
    O2,
    O3,
    Os,
    Oz,
}

impl OptLevel {
    /// The level's name (`"O2"`).
    pub fn name(self) -> &'static str {
        match self {
            OptLevel::O0 => "O0",
            OptLevel::O1 => "O1",
            OptLevel::O2 => "O2",
            OptLevel::O3 => "O3",
            OptLevel::Os => "Os",
            OptLevel::Oz => "Oz",
        }
    }

    /// The new pass manager pipeline for this level.
    pub fn pipeline(self) -> String {
        format!("default<{}>", self.name())
    }

    fn codegen(self) -> OptimizationLevel {
        match self {
            OptLevel::O0 => OptimizationLevel::None,
            OptLevel::O1 => OptimizationLevel::Less,
            OptLevel::O2 | OptLevel::Os | OptLevel::Oz => OptimizationLevel::Default,
            OptLevel::O3 => OptimizationLevel::Aggressive,
        }
    }
}

impl std::str::FromStr for OptLevel {
    type Err = LlvmError;
    /// Accepts `O2`, `-O2` and `2` (and the same for 0, 1, 3, s, z), plus clang's
    /// `Og` (as O1), `Ofast` (as O3) and a bare `O` (as O1).
    fn from_str(s: &str) -> Result<Self, LlvmError> {
        let t = s.strip_prefix('-').unwrap_or(s);
        let t = t.strip_prefix('O').unwrap_or(t);
        match t {
            "0" => Ok(OptLevel::O0),
            "1" | "g" => Ok(OptLevel::O1),
            "" if s.ends_with('O') => Ok(OptLevel::O1),
            "fast" => Ok(OptLevel::O3),
            "2" => Ok(OptLevel::O2),
            "3" => Ok(OptLevel::O3),
            "s" => Ok(OptLevel::Os),
            "z" => Ok(OptLevel::Oz),
            _ => Err(LlvmError::BadOptLevel(s.to_string())),
        }
    }
}

impl std::fmt::Display for OptLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `default<level>` on `module`, tuned as clang tunes it for the level
/// (the loop vectoriser at O2, O3 and Os, the SLP vectoriser at those and Oz),
/// so that instrumented code is optimised like the plain build. (At `O0`
/// that keeps the path register in memory: `optnone` functions are not
/// touched by any pass anyway.)
pub fn optimize(module: &Module<'_>, level: OptLevel) -> Result<(), LlvmError> {
    let options = PassBuilderOptions::create();
    let loops = matches!(level, OptLevel::O2 | OptLevel::O3 | OptLevel::Os);
    options.set_loop_vectorization(loops);
    options.set_loop_slp_vectorization(loops || level == OptLevel::Oz);
    timings::time(Phase::Optimisation, || {
        run(module, level, &level.pipeline(), options)
    })
}

/// The passes run before instrumenting, at every level but `O0`: LLVM's own
/// early simplification (the first passes `default<On>` runs on each
/// function, also where its IR PGO instruments), which turn the front end's
/// locals into SSA values and fold the trivial branches and blocks it emits,
/// but never inline: so the counted functions are the source's functions.
pub const EARLY_SIMPLIFICATION: &str =
    "function(lower-expect,simplifycfg,sroa<modify-cfg>,early-cse<>)";

/// Runs [`EARLY_SIMPLIFICATION`] on `module` (nothing at `O0`, whose functions
/// are `optnone`).
pub fn simplify_early(module: &Module<'_>, level: OptLevel) -> Result<(), LlvmError> {
    if level == OptLevel::O0 {
        return Ok(());
    }
    timings::time(Phase::EarlySimplification, || {
        run(
            module,
            level,
            EARLY_SIMPLIFICATION,
            PassBuilderOptions::create(),
        )
    })
}

fn run(
    module: &Module<'_>,
    level: OptLevel,
    passes: &str,
    options: PassBuilderOptions,
) -> Result<(), LlvmError> {
    let machine = target_machine(module, level)?;
    module
        .run_passes(passes, &machine, options)
        .map_err(|e| LlvmError::Passes {
            passes: passes.to_string(),
            message: e.to_string(),
        })
}

/// Writes `module` as an object file to `path`, its constructors and
/// destructors in `.init_array`/`.fini_array` as clang puts them (this
/// crate's `structors` module).
pub fn write_object(module: &Module<'_>, path: &Path, level: OptLevel) -> Result<(), LlvmError> {
    timings::time(Phase::CodeGeneration, || {
        let machine = target_machine(module, level)?;
        crate::structors::lower_to_init_array(module);
        machine
            .write_to_file(module, FileType::Object, path)
            .map_err(|e| LlvmError::WriteObject {
                path: path.display().to_string(),
                message: e.to_string(),
            })
    })
}

/// A target machine for the module's triple (the host's when it has none, which
/// is then set on the module with the machine's data layout), generic CPU (the
/// functions' own `target-cpu` attributes apply), PIC.
fn target_machine(module: &Module<'_>, level: OptLevel) -> Result<TargetMachine, LlvmError> {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let config = InitializationConfig::default();
        Target::initialize_x86(&config);
        Target::initialize_aarch64(&config);
    });
    let mut triple = module.get_triple();
    let triple_name = triple.as_str().to_string_lossy().into_owned();
    if triple_name.is_empty() {
        triple = TargetMachine::get_default_triple();
        module.set_triple(&triple);
    }
    let target_error = |message: String| LlvmError::Target {
        triple: triple.as_str().to_string_lossy().into_owned(),
        message,
    };
    let target = Target::from_triple(&triple).map_err(|e| target_error(e.to_string()))?;
    let machine = target
        .create_target_machine(
            &triple,
            "",
            "",
            level.codegen(),
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| target_error("LLVM could not create a target machine".to_string()))?;
    if module.get_data_layout().as_str().to_bytes().is_empty() {
        module.set_data_layout(&machine.get_target_data().get_data_layout());
    }
    Ok(machine)
}

/// The host's default target triple.
pub fn host_triple() -> TargetTriple {
    TargetMachine::get_default_triple()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_levels() {
        for (s, l) in [
            ("O0", OptLevel::O0),
            ("-O3", OptLevel::O3),
            ("s", OptLevel::Os),
            ("Oz", OptLevel::Oz),
        ] {
            assert_eq!(s.parse::<OptLevel>().unwrap(), l);
        }
        assert_eq!(OptLevel::O2.pipeline(), "default<O2>");
        assert_eq!("-Og".parse::<OptLevel>().unwrap(), OptLevel::O1);
        assert_eq!("-O".parse::<OptLevel>().unwrap(), OptLevel::O1);
        assert_eq!("Ofast".parse::<OptLevel>().unwrap(), OptLevel::O3);
        assert!("".parse::<OptLevel>().is_err() && "-".parse::<OptLevel>().is_err());
        let err = "O4".parse::<OptLevel>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown optimisation level `O4`: expected O0, O1, O2, O3, Os or Oz"
        );
    }
}
