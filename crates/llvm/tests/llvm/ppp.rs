//! Preferential path profiling through this crate: PPP plans (two registers,
//! interesting paths in slots checked against the owner table, residual paths
//! in path mode's array or hash table) transcribed, run, and folded back into
//! a Ball-Larus profile that must equal path mode's exactly, on programs with
//! loops, exceptions and early exits (`exit`, `longjmp`), with plain and
//! atomic updates.

use crate::harness::{bitcode, build_program, Build, Variant};
use pathprof_core::derive::derive;
use pathprof_core::layout::Layout;
use pathprof_core::plan::FunctionPlan;
use pathprof_core::planner::{plan_function, plan_function_ppp, PlanOptions};
use pathprof_core::Mode;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The Ball-Larus path counts of every function, derived from one run.
fn path_counts(
    run: &crate::harness::Run,
    layouts: &[Layout],
    skip: &[&str],
) -> Vec<BTreeMap<u64, u64>> {
    run.extracted
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if skip.contains(&f.name.as_str()) {
                return BTreeMap::new();
            }
            let counters = &run.report.modules[0].functions[i];
            let paths: Vec<(u64, u64)> = counters.paths.iter().map(|(&k, &v)| (k, v)).collect();
            let counts = derive(&f.cfg, &layouts[i], &counters.slots, &paths)
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            counts.paths.iter().map(|p| (p.id, p.count)).collect()
        })
        .collect()
}

/// Path mode, then PPP trained on every other path path mode saw (so both
/// interesting and residual paths run), with arrays and with hash tables
/// for the residual paths: the same stdout and the same path counts, the
/// interesting ones counted in slots only.
fn check_ppp(source: &str, link_args: &[&str], runs: &[&[&str]], early_exit: bool, skip: &[&str]) {
    for variant in Variant::ALL {
        let dir = tempfile::tempdir().unwrap();
        let bc = bitcode(dir.path(), source, variant);
        let mut options = PlanOptions::default().with_early_exit(early_exit);
        // Number every function with interesting paths, also where the
        // Ball-Larus ids hash (path mode's inline cache would hold them).
        options.path.ppp_min_paths = Some(0);
        options.path.ppp_cache_paths = Some(0);
        let layouts = RefCell::new(Vec::<Layout>::new());
        let build = Build {
            mode: Mode::Path,
            link_args,
            ..Build::default()
        };
        let path = build_program(dir.path(), std::slice::from_ref(&bc), &build, |ex| {
            ex.functions
                .iter()
                .map(|f| {
                    let (plan, layout) = plan_function(&f.cfg, Mode::Path, &options).unwrap();
                    layouts.borrow_mut().push(layout);
                    plan
                })
                .collect()
        });
        let path_layouts = layouts.into_inner();
        let truth: Vec<_> = runs
            .iter()
            .map(|args| {
                let run = path.run(args);
                (run.stdout.clone(), path_counts(&run, &path_layouts, skip))
            })
            .collect();
        // Every other executed path of each function, over all runs.
        let mut seen: Vec<BTreeMap<u64, u64>> = vec![BTreeMap::new(); path_layouts.len()];
        for (_, counts) in &truth {
            for (f, c) in seen.iter_mut().zip(counts) {
                f.extend(c.iter().map(|(&k, &v)| (k, v)));
            }
        }
        let interesting: Vec<Vec<u64>> = seen
            .iter()
            .map(|f| f.keys().copied().step_by(2).collect())
            .collect();
        let mut hashed = options.clone();
        hashed.path.array_limit = 2;
        let mut arrays = options.clone();
        arrays.path.array_limit = 1 << 20;
        for (options, atomic) in [(&arrays, false), (&hashed, false), (&hashed, true)] {
            let layouts = RefCell::new(Vec::<Layout>::new());
            let plans = RefCell::new(Vec::<FunctionPlan>::new());
            let build = Build {
                mode: Mode::Path,
                atomic,
                link_args,
                ..Build::default()
            };
            let ppp = build_program(dir.path(), std::slice::from_ref(&bc), &build, |ex| {
                ex.functions
                    .iter()
                    .zip(&interesting)
                    .map(|(f, ids)| {
                        let (plan, layout, _) = plan_function_ppp(&f.cfg, options, ids).unwrap();
                        layouts.borrow_mut().push(layout);
                        plans.borrow_mut().push(plan.clone());
                        plan
                    })
                    .collect()
            });
            let layouts = layouts.into_inner();
            let plans = plans.into_inner();
            let used = plans.iter().filter(|p| p.ppp.is_some()).count();
            assert!(used > 0, "{source}: some function uses PPP");
            for (args, (stdout, want)) in runs.iter().zip(&truth) {
                let what = format!("{source} {variant:?} {args:?} atomic={atomic}");
                let run = ppp.run(args);
                assert_eq!(&run.stdout, stdout, "{what}");
                let got = path_counts(&run, &layouts, skip);
                assert_eq!(&got, want, "{what}");
                for (i, f) in run.extracted.functions.iter().enumerate() {
                    if plans[i].ppp.is_none() {
                        continue;
                    }
                    let counters = &run.report.modules[0].functions[i];
                    for id in counters.paths.keys() {
                        assert!(
                            interesting[i].binary_search(id).is_err(),
                            "{what} {}: interesting path {id} counted by its Ball-Larus id",
                            f.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn ppp_counts_path_modes_paths_on_c() {
    check_ppp("prog.c", &[], &[&[]], false, &[]);
}

#[test]
fn ppp_counts_path_modes_paths_with_exceptions() {
    check_ppp("eh.cc", &["-lstdc++"], &[&[]], false, &[]);
}

#[test]
fn ppp_counts_path_modes_paths_with_early_exits() {
    check_ppp("early.c", &[], &[&[], &["exit"], &["jump"]], true, &[]);
}
