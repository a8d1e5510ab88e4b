//! The instrumentation pipeline every route shares (`pathprof cc`'s compile
//! step in clang's pass plugin, its whole-program link step, and `pathprof
//! instrument`): extract every function's CFG, plan it in the chosen mode,
//! record the map ([`plan_module`]), and apply the plans to the module
//! ([`apply_plans`]). The two halves are apart for P3, whose K copies are
//! clones of one planned module, each given its own plans. Each step adds
//! its time to [`crate::timings`] (`--time-report`).

use crate::timings::{self, Phase};
use crate::{Module, ModuleInfo};
use anyhow::{Context as _, Result};
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::plan::FunctionPlan;
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::ppp::InterestingList;
use pathprof_core::Mode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The environment variable `pathprof cc` passes [`Settings`] in (as JSON)
/// to its clang pass plugin.
pub const PLUGIN_SETTINGS_VARIABLE: &str = "PATHPROF_PLUGIN_SETTINGS";

/// How to instrument: what the user asked for, in a form that travels to
/// clang's pass plugin (as JSON in an environment variable).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    #[serde(with = "mode_name")]
    pub mode: Mode,
    /// `--mode=ppp`: number the interesting paths of `interesting`.
    pub ppp: bool,
    /// The interesting-path list (`--interesting`).
    pub interesting: Option<PathBuf>,
    /// `--max-paths`, `--array-limit`, `--ppp-min-paths`,
    /// `--ppp-interval-limit` (`None`: the planner's default).
    pub max_paths: Option<u64>,
    pub array_limit: Option<u64>,
    pub ppp_min_paths: Option<u64>,
    #[serde(default)]
    pub ppp_interval_limit: Option<u64>,
    /// `--ppp-cache-paths` (`None`: the planner's default).
    #[serde(default)]
    pub ppp_cache_paths: Option<u64>,
    /// `--ppp-two-registers`: never pack PPP's two registers into one word.
    #[serde(default)]
    pub ppp_two_registers: bool,
    pub early_exit: bool,
    /// `--every-block`: block mode with a counter in every block.
    #[serde(default)]
    pub every_block: bool,
    /// `--count-std`: profile Rust's standard library too (its generic code
    /// instantiated in the program; all of it under fat LTO).
    #[serde(default)]
    pub count_std: bool,
    /// Count every function's entries in it, even where its callers' counts
    /// give them (`pathprof_core::callers`; `callgraph::entry_call_sites`
    /// finds those functions): an ablation, the counts are the same.
    #[serde(default)]
    pub count_entries: bool,
    pub atomic: bool,
    /// `--continuous`: the build's processes run in continuous mode unless
    /// `PATHPROF_CONTINUOUS` says otherwise (`PpModule::flags`).
    #[serde(default)]
    pub continuous: bool,
    pub verbose: bool,
    /// `--time-report` in clang's pass plugin: the file the plugin writes
    /// the phases it timed to ([`crate::timings::PluginTimings`], JSON),
    /// for `pathprof cc` to read.
    #[serde(default)]
    pub timings_file: Option<PathBuf>,
    /// `--profile-use`: the indexed profile (`.ppdata`) to give the
    /// functions their counts from, instead of instrumenting them.
    #[serde(default)]
    pub profile_use: Option<PathBuf>,
    /// `--duplicate-hot-paths`: with `profile_use`, copy hot paths' tails
    /// where their branches correlate.
    #[serde(default)]
    pub duplicate_hot_paths: bool,
}

impl Settings {
    /// What a profile's use does beyond clang's IR PGO.
    pub fn use_options(&self) -> crate::UseOptions {
        crate::UseOptions {
            duplicate_paths: self.duplicate_hot_paths,
        }
    }

    /// The planner's options these settings ask for.
    pub fn plan_options(&self) -> PlanOptions {
        let mut plan = PlanOptions::default()
            .with_early_exit(self.early_exit)
            .with_every_block(self.every_block);
        if let Some(m) = self.max_paths {
            plan = plan.with_max_paths(m);
        }
        if let Some(a) = self.array_limit {
            plan.path.array_limit = a;
        }
        plan.path.ppp_min_paths = self.ppp_min_paths;
        plan.path.ppp_interval_limit = self.ppp_interval_limit;
        plan.path.ppp_cache_paths = self.ppp_cache_paths;
        plan.path.ppp_two_registers = self.ppp_two_registers;
        plan
    }
}

/// [`Mode`] as its name.
mod mode_name {
    use pathprof_core::Mode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(mode: &Mode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(mode.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mode, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Reads the interesting-path list at `path`.
pub fn read_interesting(path: &Path) -> Result<InterestingList> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the interesting-path list {}", path.display()))?;
    InterestingList::parse(&text)
        .with_context(|| format!("{} is not a valid interesting-path list", path.display()))
}

/// A PPP plan of `f` when the list names paths of it that still fit
/// (`None`: plan it as path mode does, after a warning when the list's
/// entries are stale or the PPP interval is above the array limit).
fn plan_ppp(
    f: &crate::ExtractedFunction,
    file: &str,
    list: &InterestingList,
    plan_options: &PlanOptions,
    verbose: bool,
) -> Option<(FunctionPlan, pathprof_core::layout::Layout)> {
    let name = f.display_name.as_deref().unwrap_or(&f.name);
    let dag = pathprof_core::dag::Dag::build(&f.cfg, plan_options.path.dag).ok()?;
    let ids = match list.paths_of(&f.name, file, &f.cfg, &dag) {
        Ok(Some(ids)) => ids,
        Ok(None) => return None,
        Err(stale) => {
            eprintln!(
                "pathprof: warning: {stale}; {name} is profiled as in path mode (no PPP numbering)"
            );
            return None;
        }
    };
    let (plan, layout, numbering) =
        match pathprof_core::planner::plan_function_ppp(&f.cfg, plan_options, &ids) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("pathprof: warning: {name}: {e}; profiled as in path mode");
                return None;
            }
        };
    use pathprof_core::path::PppChoice;
    let counted = |how: String| {
        if verbose {
            eprintln!(
                "pathprof: {} ppp: {} interesting of {} paths, {how}",
                f.name,
                numbering.len(),
                dag.num_paths()
            );
        }
    };
    match plan_options.path.ppp_choice(dag.num_paths(), &numbering) {
        PppChoice::NoneInteresting => {}
        PppChoice::FewPaths { min_paths } => counted(format!(
            "counted in path mode's array (--ppp-min-paths {min_paths})"
        )),
        PppChoice::Cached { most } => counted(format!(
            "counted through path mode's inline cache (--ppp-cache-paths {most})"
        )),
        PppChoice::IntervalAbove { limit } => eprintln!(
            "pathprof: warning: {name}: the PPP interval of its {} interesting paths is {}, above \
             the limit {limit} (--ppp-interval-limit, default the array limit); profiled as in \
             path mode (fewer interesting paths, or a larger limit, would number it)",
            numbering.len(),
            numbering.interval(),
        ),
        PppChoice::Numbered => {
            let registers = match plan.ppp.as_ref().and_then(|t| t.packing) {
                Some(p) => format!("one word (PPP sum in the low {} bits)", p.ppp_bits),
                None => "two registers".to_string(),
            };
            counted(format!(
                "interval {}, delta {:.3}, {registers}",
                numbering.interval(),
                numbering.delta().unwrap_or(0.0)
            ));
        }
    }
    Some((plan, layout))
}

/// A module's plans and map, made before anything in it is edited.
pub struct Planned {
    /// The map of the build the plans make.
    pub map: MapFile,
    /// `plans[i]` instruments `map.functions[i]`.
    pub plans: Vec<FunctionPlan>,
}

/// Instruments `module` in place and returns its map.
pub fn instrument_module(module: &Module<'_>, settings: &Settings) -> Result<MapFile> {
    let Planned { map, plans } = plan_module(module, settings)?;
    apply_plans(module, &map, &plans, map.build_id, settings)?;
    Ok(map)
}

/// Extracts every function of `module` and plans it as `settings` ask:
/// the map and the plans of the build, `module` left as extraction leaves it
/// (blocks split after calls that return more than once, which a clone made
/// now keeps, so the plans apply to it too).
pub fn plan_module(module: &Module<'_>, settings: &Settings) -> Result<Planned> {
    let plan_options = settings.plan_options();
    if !settings.count_std {
        crate::walk::leave_out_rust_std(module);
    }
    let extracted = timings::time(Phase::Extraction, || crate::extract(module))
        .context("reading the program's control flow")?;
    let _planning = timings::span(Phase::Planning);
    let entry_sites = if settings.count_entries {
        vec![Vec::new(); extracted.functions.len()]
    } else {
        crate::callgraph::entry_call_sites(module)
    };
    if settings.verbose {
        let given = entry_sites.iter().filter(|s| !s.is_empty()).count();
        eprintln!(
            "pathprof: {given} of {} functions may take their entry counts from their callers",
            entry_sites.len()
        );
    }
    let list = match (settings.ppp, &settings.interesting) {
        (false, _) => None,
        (true, None) => anyhow::bail!(
            "--mode=ppp needs the interesting paths: --interesting=FILE (or PATHPROF_INTERESTING), \
             a list written by `pathprof interesting`"
        ),
        (true, Some(path)) => Some(read_interesting(path)?),
    };
    let mut plans: Vec<FunctionPlan> = Vec::with_capacity(extracted.functions.len());
    let mut functions: Vec<MapFunction> = Vec::with_capacity(extracted.functions.len());
    for (f, sites) in extracted.functions.into_iter().zip(entry_sites) {
        let file = f
            .file
            .and_then(|i| extracted.files.get(i as usize))
            .map_or("", String::as_str);
        let options = PlanOptions {
            entry_from_callers: !sites.is_empty(),
            ..plan_options.clone()
        };
        let planned = match &list {
            Some(list) => plan_ppp(&f, file, list, &options, settings.verbose),
            None => None,
        };
        let planned = match planned {
            Some(x) => Ok(x),
            None => plan_function(&f.cfg, settings.mode, &options),
        };
        let (plan, layout) = match planned {
            Ok(x) => x,
            Err(e) => {
                // Never skip a function: count its blocks instead, and say so.
                eprintln!(
                    "pathprof: warning: {}: {e}; counting its basic blocks instead",
                    f.display_name.as_deref().unwrap_or(&f.name)
                );
                pathprof_core::block::plan_blocks(&f.cfg)
            }
        };
        if settings.verbose {
            eprintln!(
                "pathprof: {} blocks={} edges={} probes={} {:?}",
                f.name,
                f.cfg.num_blocks(),
                f.cfg.edges().len(),
                plan.probes.len(),
                plan.paths
            );
        }
        functions.push(MapFunction {
            hash: f.cfg.shape_hash(),
            name: f.name,
            display_name: f.display_name,
            file: f.file,
            line: f.line,
            cfg: f.cfg,
            blocks: f.blocks,
            entry_calls: if options.entry_from_callers && layout.takes_entry_from_callers() {
                sites
            } else {
                Vec::new()
            },
            entries_by_callers: false,
            layout,
        });
        plans.push(plan);
    }
    let build_id = MapFile::compute_build_id(settings.mode, &extracted.files, &functions);
    let file_digests = extracted
        .files
        .iter()
        .map(|f| {
            std::fs::read(f)
                .ok()
                .map(|b| pathprof_core::hash::fnv64(&b))
        })
        .collect();
    let map = MapFile {
        mode: settings.mode,
        build_id,
        files: extracted.files,
        file_digests,
        functions,
        atomic: settings.atomic,
        per_thread: true,
        p3: None,
    };
    timings::record(|t| t.add_functions(map.functions.len() as u64));
    Ok(Planned { map, plans })
}

/// Inserts `plans` (one per function of `map`, the map of `module`'s
/// functions as [`plan_module`] made it) into `module`, registering its
/// counters under `build_id`: the map's own, or another for a build whose
/// counts are not the map's to read (a P3 copy's).
pub fn apply_plans(
    module: &Module<'_>,
    map: &MapFile,
    plans: &[FunctionPlan],
    build_id: u64,
    settings: &Settings,
) -> Result<()> {
    let _instrumentation = timings::span(Phase::Instrumentation);
    let info = ModuleInfo {
        mode: map.mode,
        build_id,
        hashes: map.functions.iter().map(|f| f.hash).collect(),
        atomic: map.atomic,
        continuous: settings.continuous,
    };
    crate::instrument(module, plans, &info).context("inserting the probes")
}

/// Instruments one translation unit for `pathprof cc -c` and embeds its map
/// fragment ([`crate::embed_map`]); `false` when it defines no code (nothing
/// to count, no fragment).
pub fn instrument_translation_unit(module: &Module<'_>, settings: &Settings) -> Result<bool> {
    if !module.get_functions().any(|f| f.count_basic_blocks() > 0) {
        return Ok(false);
    }
    let map = instrument_module(module, settings)?;
    embed(module, &map);
    Ok(true)
}

/// Gives one translation unit's functions their counts from the indexed
/// profile `index` (`pathprof cc --profile-use`) and records what it used in
/// the object's note section; `false` when it defines no code.
pub fn use_profile_in_translation_unit(
    module: &Module<'_>,
    index: &Path,
    options: crate::UseOptions,
) -> Result<bool> {
    if !module.get_functions().any(|f| f.count_basic_blocks() > 0) {
        return Ok(false);
    }
    let bytes = std::fs::read(index)
        .with_context(|| format!("cannot read the indexed profile {}", index.display()))?;
    let index = pathprof_core::pgo::Index::from_bytes(&bytes, &index.display().to_string())?;
    use_profile(module, &index, options)?;
    Ok(true)
}

/// Gives `module`'s functions their counts from `index`
/// ([`crate::annotate`]) and records what it used in the module's note
/// section: every route's profile use.
pub fn use_profile(
    module: &Module<'_>,
    index: &pathprof_core::pgo::Index,
    options: crate::UseOptions,
) -> Result<()> {
    let note =
        crate::annotate(module, index, options).context("reading the program's control flow")?;
    crate::embed_section(
        module,
        pathprof_core::pgo::NOTE_SECTION,
        note.to_line().as_bytes(),
    );
    Ok(())
}

/// Embeds `map`, the map of `module`'s build, in it ([`crate::embed_map`]):
/// the last step of instrumentation.
pub fn embed(module: &Module<'_>, map: &MapFile) {
    timings::time(Phase::Instrumentation, || {
        crate::embed_map(module, &map.to_bytes())
    });
}
