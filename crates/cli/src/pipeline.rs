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
        Settings {
            mode: o.mode,
            plan,
            atomic: o.atomic,
            verbose: o.verbose,
            dot_dir: o.dot_dir.clone(),
        }
    }
}

/// Instruments `module` in place and returns its map; writes the DOT files
/// of its functions' path DAGs into `settings.dot_dir`, if given.
pub fn instrument_module(module: &Module<'_>, settings: &Settings) -> Result<MapFile> {
    let extracted = pathprof_llvm::extract(module).context("reading the program's control flow")?;
    let mut plans: Vec<FunctionPlan> = Vec::with_capacity(extracted.functions.len());
    let mut functions: Vec<MapFunction> = Vec::with_capacity(extracted.functions.len());
    for f in extracted.functions {
        let (plan, layout) = match plan_function(&f.cfg, settings.mode, &settings.plan) {
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
