//! pathprof-core's own planners through this crate: plans for every mode,
//! transcribed, run, and the counts derived from the counters compared with
//! ground truth measured directly (a counter on every block and edge).

use crate::ball_larus::{block_plan, counting_plan, placeable, Paths};
use crate::harness::{bitcode, build_and_run, Build, Run, Variant};
use pathprof_core::derive::derive;
use pathprof_core::layout::Layout;
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::Mode;
use std::cell::RefCell;
use std::path::Path;

fn run_planned(
    dir: &Path,
    bc: &Path,
    mode: Mode,
    options: &PlanOptions,
    link_args: &[&str],
) -> (Run, Vec<Layout>) {
    let layouts = RefCell::new(Vec::new());
    let build = Build {
        mode,
        link_args,
        ..Build::default()
    };
    let run = build_and_run(dir, &[bc.to_path_buf()], &build, |ex| {
        ex.functions
            .iter()
            .map(|f| {
                let (plan, layout) = plan_function(&f.cfg, mode, options).unwrap();
                layouts.borrow_mut().push(layout);
                plan
            })
            .collect()
    });
    (run, layouts.into_inner())
}

/// Every mode's derived block counts equal the directly measured ones, and the
/// derived edge counts equal the measured ones wherever an edge could be counted.
/// Functions in `unwinding` may exit by an exception, which no path records.
fn check_all_modes(source: &str, link_args: &[&str], unwinding: &[&str]) {
    for variant in Variant::ALL {
        let dir = tempfile::tempdir().unwrap();
        let bc = bitcode(dir.path(), source, variant);
        let build = Build {
            link_args,
            ..Build::default()
        };
        let truth = build_and_run(dir.path(), std::slice::from_ref(&bc), &build, |ex| {
            ex.functions
                .iter()
                .map(|f| counting_plan(&f.cfg, Paths::None).0)
                .collect()
        });
        // Small arrays and a hash-table fallback, to get both path storages.
        let small = PlanOptions::default();
        let mut tiny = PlanOptions::default();
        tiny.path.array_limit = 2;
        let cases = [
            (Mode::Block, &small),
            (Mode::Edge, &small),
            (Mode::Path, &small),
            (Mode::Path, &tiny),
        ];
        for (mode, options) in cases {
            let (run, layouts) = run_planned(dir.path(), &bc, mode, options, link_args);
            assert_eq!(run.stdout, truth.stdout, "{mode:?}");
            for (i, f) in run.extracted.functions.iter().enumerate() {
                if unwinding.contains(&f.name.as_str()) {
                    continue;
                }
                let what = format!("{source} {variant:?} {mode:?} {}", f.name);
                let counters = &run.report.modules[0].functions[i];
                let paths: Vec<(u64, u64)> = counters.paths.iter().map(|(&k, &v)| (k, v)).collect();
                let counts = derive(&f.cfg, &layouts[i], &counters.slots, &paths)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let measured = &truth.report.modules[0].functions[i].slots;
                let nb = f.cfg.num_blocks();
                assert_eq!(counts.blocks, measured[..nb], "{what}: blocks");
                if let Some(edges) = counts.edges {
                    for e in f.cfg.edge_ids().filter(|&e| placeable(&f.cfg, e)) {
                        assert_eq!(
                            edges[e.index()],
                            measured[nb + e.index()],
                            "{what}: edge {e}"
                        );
                    }
                }
            }
        }
        // Block mode is also what block_plan measures.
        let blocks = build_and_run(dir.path(), &[bc], &build, |ex| {
            ex.functions.iter().map(|f| block_plan(&f.cfg)).collect()
        });
        for (i, f) in blocks.extracted.functions.iter().enumerate() {
            let nb = f.cfg.num_blocks();
            assert_eq!(
                blocks.report.modules[0].functions[i].slots,
                truth.report.modules[0].functions[i].slots[..nb]
            );
        }
    }
}

#[test]
fn core_planners_on_c() {
    check_all_modes("prog.c", &[], &[]);
}

#[test]
fn core_planners_on_cxx_exceptions() {
    check_all_modes("eh.cc", &["-lstdc++"], &["_ZN2ns9may_throwEi"]);
}
