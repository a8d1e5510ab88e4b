//! The instrumentation pipeline shared by `pathprof cc`'s link step and
//! `pathprof instrument`: extract every function's CFG, plan it in the chosen
//! mode, record the map, and apply the plans to the module (and draw each
//! function's path DAG when asked to).

use crate::cli::InstrumentOptions;
use anyhow::{Context as _, Result};
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::plan::FunctionPlan;
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::Mode;
use pathprof_llvm::{Module, ModuleInfo};
use std::path::PathBuf;

/// How to instrument.
#[derive(Clone, Debug)]
pub struct Settings {
    pub mode: Mode,
    /// `--mode=ppp`: the interesting-path list to read.
    pub ppp: Option<Option<PathBuf>>,
    pub plan: PlanOptions,
    pub atomic: bool,
    pub verbose: bool,
    /// Where to write a DOT file of each function's path DAG.
    pub dot_dir: Option<PathBuf>,
}

impl Settings {
    /// Settings from the user's options (`None`: the planner's default).
    pub fn new(o: &InstrumentOptions) -> Self {
        let mut plan = PlanOptions::default().with_early_exit(o.early_exit);
        if let Some(m) = o.max_paths {
            plan = plan.with_max_paths(m);
        }
        if let Some(a) = o.array_limit {
            plan.path.array_limit = a;
        }
        plan.path.ppp_min_paths = o.ppp_min_paths;
        Settings {
            mode: o.mode.mode,
            ppp: o.mode.ppp.then(|| o.interesting.clone()),
            plan,
            atomic: o.atomic,
            verbose: o.verbose,
            dot_dir: o.dot_dir.clone(),
        }
    }
}

/// A PPP plan of `f` when the list names paths of it that still fit
/// (`None`: plan it as path mode does, after a warning when the list's
/// entries are stale or the PPP interval is above the array limit).
fn plan_ppp(
    f: &pathprof_llvm::ExtractedFunction,
    file: &str,
    list: &pathprof_core::ppp::InterestingList,
    settings: &Settings,
) -> Option<(FunctionPlan, pathprof_core::layout::Layout)> {
    let name = f.display_name.as_deref().unwrap_or(&f.name);
    let dag = pathprof_core::dag::Dag::build(&f.cfg, settings.plan.path.dag).ok()?;
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
        match pathprof_core::planner::plan_function_ppp(&f.cfg, &settings.plan, &ids) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("pathprof: warning: {name}: {e}; profiled as in path mode");
                return None;
            }
        };
    let limit = settings.plan.path.array_limit;
    let min_paths = settings.plan.path.ppp_min_paths.unwrap_or(limit);
    if dag.num_paths() <= min_paths {
        if settings.verbose {
            eprintln!(
                "pathprof: {} ppp: {} interesting of {} paths, counted in path mode's array (--ppp-min-paths {min_paths})",
                f.name,
                numbering.len(),
                dag.num_paths()
            );
        }
    } else if plan.ppp.is_none() {
        eprintln!(
            "pathprof: warning: {name}: the PPP interval of its {} interesting paths is {}, above \
             the array limit {} (--array-limit); profiled as in path mode",
            numbering.len(),
            numbering.interval(),
            settings.plan.path.array_limit
        );
    } else if settings.verbose {
        eprintln!(
            "pathprof: {} ppp: {} interesting of {} paths, interval {}, delta {:.3}",
            f.name,
            numbering.len(),
            dag.num_paths(),
            numbering.interval(),
            numbering.delta().unwrap_or(0.0)
        );
    }
    Some((plan, layout))
}

/// Instruments `module` in place and returns its map; writes the DOT files
/// of its functions' path DAGs into `settings.dot_dir`, if given.
pub fn instrument_module(module: &Module<'_>, settings: &Settings) -> Result<MapFile> {
    let extracted = pathprof_llvm::extract(module).context("reading the program's control flow")?;
    let list = match &settings.ppp {
        None => None,
        Some(None) => anyhow::bail!(
            "--mode=ppp needs the interesting paths: --interesting=FILE (or PATHPROF_INTERESTING), \
             a list written by `pathprof interesting`"
        ),
        Some(Some(path)) => Some(crate::report::ppp::read_list(path)?),
    };
    let mut plans: Vec<FunctionPlan> = Vec::with_capacity(extracted.functions.len());
    let mut functions: Vec<MapFunction> = Vec::with_capacity(extracted.functions.len());
    for f in extracted.functions {
        let file = f
            .file
            .and_then(|i| extracted.files.get(i as usize))
            .map_or("", String::as_str);
        let planned = match &list {
            Some(list) => plan_ppp(&f, file, list, settings),
            None => None,
        };
        let planned = match planned {
            Some(x) => Ok(x),
            None => plan_function(&f.cfg, settings.mode, &settings.plan),
        };
        let (plan, layout) = match planned {
            Ok(x) => x,
            Err(e) => {
                // Never skip a function: count its blocks instead, and say so.
                eprintln!(
                    "pathprof: warning: {}: {e}; counting its basic blocks instead",
                    f.display_name.as_deref().unwrap_or(&f.name)
                );
                plan_function(&f.cfg, Mode::Block, &settings.plan).expect("block plans cannot fail")
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
            layout,
        });
        plans.push(plan);
    }
    let build_id = MapFile::compute_build_id(settings.mode, &extracted.files, &functions);
    let info = ModuleInfo {
        mode: settings.mode,
        build_id,
        hashes: functions.iter().map(|f| f.hash).collect(),
        atomic: settings.atomic,
    };
    pathprof_llvm::instrument(module, &plans, &info).context("inserting the probes")?;
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
    };
    if let Some(dir) = &settings.dot_dir {
        crate::report::dot::write_all(&map, dir)?;
    }
    Ok(map)
}
