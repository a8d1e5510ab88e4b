//! Early-termination probes (`ProbeSite::Call`) end to end on `early.c`: a count
//! made before a call is undone when the call returns, so the counters are
//! unchanged in a process that returns normally and hold exactly the calls in
//! progress in one that ends inside a call (`exit`, `longjmp`). Then
//! pathprof-core's planners with early-exit counting, whose derived block and edge
//! counts must equal the measured ones however the process ended.

use crate::ball_larus::{counting_plan, placeable, Paths};
use crate::harness::{bitcode, build_program, line_of, Build, Program, Run, Variant};
use pathprof_core::derive::derive;
use pathprof_core::layout::Layout;
use pathprof_core::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::{BlockId, Cfg, Mode};
use pathprof_llvm::{ExtractedFunction, OptLevel};
use std::cell::RefCell;

/// The call sites of one function, numbered in block then call order, and the
/// counters [`site_plan`] gives them.
struct Sites {
    blocks: usize,
    /// Path ids per block: block b's ids start at `b * stride`.
    stride: u64,
    /// (block, k) of site i.
    sites: Vec<(BlockId, u32)>,
}

impl Sites {
    /// Site i's (slot, path id made by `AddPath`, path id made by `SetPath`).
    fn counters(&self, i: usize) -> (usize, u64, u64) {
        let (b, k) = self.sites[i];
        (
            self.blocks + i,
            u64::from(b.0) * self.stride + u64::from(k) + 1,
            self.blocks as u64 * self.stride + i as u64,
        )
    }
}

/// Per block b: `CountSlot(b), SetPath(b * stride)` at its start and
/// `CountPath(0)` at its end (id `b * stride`, only if the call probes left `r`
/// alone). At call site i (call k of block b):
/// `AddPath(k + 1), CountPath(0), CountSlot(B + i), SetPath(B * stride + i), CountPath(0)`.
fn site_plan(cfg: &Cfg, paths: Paths) -> (FunctionPlan, Sites) {
    let blocks = cfg.num_blocks();
    let stride = u64::from(cfg.blocks().map(|b| cfg.calls(b)).max().unwrap_or(0)) + 1;
    let sites: Vec<(BlockId, u32)> = cfg
        .blocks()
        .flat_map(|b| (0..cfg.calls(b)).map(move |k| (b, k)))
        .collect();
    let len = blocks as u64 * stride + sites.len() as u64;
    let storage = match paths {
        Paths::Array => PathStorage::Array { len },
        Paths::Hash => PathStorage::Hash { num_paths: len },
        Paths::None => unreachable!("site plans count paths"),
    };
    let mut ops = Vec::new();
    for b in cfg.blocks() {
        ops.push((ProbeSite::BlockStart(b), Op::CountSlot(b.0)));
        ops.push((
            ProbeSite::BlockStart(b),
            Op::SetPath((u64::from(b.0) * stride) as i64),
        ));
        ops.push((ProbeSite::BlockEnd(b), Op::CountPath(0)));
    }
    for (i, &(b, k)) in sites.iter().enumerate() {
        let site = ProbeSite::Call(b, k);
        ops.push((site, Op::AddPath(i64::from(k) + 1)));
        ops.push((site, Op::CountPath(0)));
        ops.push((site, Op::CountSlot((blocks + i) as u32)));
        ops.push((
            site,
            Op::SetPath((blocks as u64 * stride + i as u64) as i64),
        ));
        ops.push((site, Op::CountPath(0)));
    }
    let num_slots = (blocks + sites.len()) as u32;
    (
        FunctionPlan::from_ops(num_slots, storage, ops),
        Sites {
            blocks,
            stride,
            sites,
        },
    )
}

fn build_sites(dir: &std::path::Path, variant: Variant, paths: Paths, atomic: bool) -> Program {
    let bc = bitcode(dir, "early.c", variant);
    let build = Build {
        mode: Mode::Path,
        atomic,
        ..Build::default()
    };
    build_program(dir, &[bc], &build, |ex| {
        ex.functions
            .iter()
            .map(|f| site_plan(&f.cfg, paths).0)
            .collect()
    })
}

/// Whether block `b` of `f` has code from the line of early.c containing `needle`.
fn block_has_line(f: &ExtractedFunction, b: BlockId, needle: &str) -> bool {
    let line = line_of("early.c", needle);
    f.blocks[b.index()].lines.iter().any(|s| s.line == line)
}

/// Checks every function's site counters: in `in_flight` functions exactly one
/// site counted once, the one in the block with the given line; elsewhere
/// nothing. Block ends balance block starts except in the in-flight blocks
/// (and in `unbalanced` functions).
fn check_sites(run: &Run, in_flight: &[(&str, &str)], unbalanced: &[&str], what: &str) {
    for (fi, f) in run.extracted.functions.iter().enumerate() {
        let counters = &run.report.modules[0].functions[fi];
        let sites = site_plan(&f.cfg, Paths::Array).1;
        let path = |id: u64| counters.paths.get(&id).copied().unwrap_or(0);
        let expected = in_flight.iter().find(|(name, _)| *name == f.name);
        let mut counted = Vec::new();
        for i in 0..sites.sites.len() {
            let (slot, added, set) = sites.counters(i);
            let got = (counters.slots[slot], path(added), path(set));
            match got {
                (0, 0, 0) => {}
                (1, 1, 1) => counted.push(sites.sites[i]),
                _ => panic!("{what}: {} site {i}: counters {got:?}", f.name),
            }
        }
        match expected {
            None => assert_eq!(counted, [], "{what}: {} has no call in progress", f.name),
            Some((_, line)) => {
                assert_eq!(counted.len(), 1, "{what}: {}: {counted:?}", f.name);
                assert!(
                    block_has_line(f, counted[0].0, line),
                    "{what}: {}: the call in progress is in {:?}, not at `{line}`",
                    f.name,
                    counted[0]
                );
            }
        }
        if unbalanced.contains(&f.name.as_str()) {
            continue;
        }
        for b in f.cfg.blocks() {
            let cut = counted.iter().any(|&(cb, _)| cb == b);
            assert_eq!(
                path(u64::from(b.0) * sites.stride) + u64::from(cut),
                counters.slots[b.index()],
                "{what}: {} block {b}: ends + calls in progress = starts",
                f.name
            );
        }
    }
}

const ALL_WORK: &str = "work 0\nwork 1\nwork 2\nwork 3\nwork 4\nsum 20\n";

fn run_sites(variant: Variant, paths: Paths, atomic: bool) {
    let dir = tempfile::tempdir().unwrap();
    let program = build_sites(dir.path(), variant, paths, atomic);
    let what = |args: &str| format!("{variant:?} {paths:?} atomic={atomic} `{args}`");

    // Every call returns: every count is undone.
    let run = program.run(&[]);
    assert_eq!(run.stdout, ALL_WORK);
    check_sites(&run, &[], &[], &what(""));

    // leaf() exits on its third call: main and work are each in one call. leaf's
    // `exit(0); unreachable` is no counted call: its block's end code runs before
    // the call (docs/formats.md, BlockEnd), so leaf balances.
    let run = program.run(&["exit"]);
    assert_eq!(run.stdout, "work 0\nwork 1\n");
    let in_flight = [("main", "sum += work(i)"), ("work", "leaf();")];
    check_sites(&run, &in_flight, &[], &what("exit"));
    let leaf = run.report.function(&run.extracted, "leaf");
    assert_eq!(leaf.slots[0], 3, "leaf's entry");

    // longjmp back to main: main and work each left one call for good (leaf's
    // `longjmp; unreachable` ends its block like exit above).
    // (main goes on after setjmp's second return, in the middle of a block.)
    let run = program.run(&["jump"]);
    assert_eq!(run.stdout, "work 0\nwork 1\njumped\n");
    let in_flight = [("main", "sum += work(i)"), ("work", "leaf();")];
    check_sites(&run, &in_flight, &["main"], &what("jump"));

    // The counters are zeroed inside three calls (as in a fork child): their
    // undos stop at zero instead of wrapping.
    let run = program.run(&["zero"]);
    assert_eq!(run.stdout, ALL_WORK);
    check_sites(&run, &[], &["main", "work", "leaf"], &what("zero"));
    for f in &run.report.modules[0].functions {
        assert!(
            f.slots.iter().chain(f.paths.values()).all(|&c| c < 100),
            "{}: {f:?}",
            what("zero")
        );
    }
}

#[test]
fn call_sites_array_optimised() {
    run_sites(Variant::Optimised, Paths::Array, false);
}

#[test]
fn call_sites_array_unoptimised_atomic() {
    run_sites(Variant::Unoptimised, Paths::Array, true);
}

#[test]
fn call_sites_hash_unoptimised() {
    run_sites(Variant::Unoptimised, Paths::Hash, false);
}

#[test]
fn call_sites_hash_optimised_atomic() {
    run_sites(Variant::Optimised, Paths::Hash, true);
}

#[test]
fn call_sites_at_o0() {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "early.c", Variant::Optimised);
    let build = Build {
        mode: Mode::Path,
        level: OptLevel::O0,
        ..Build::default()
    };
    let program = build_program(dir.path(), &[bc], &build, |ex| {
        ex.functions
            .iter()
            .map(|f| site_plan(&f.cfg, Paths::Array).0)
            .collect()
    });
    check_sites(&program.run(&[]), &[], &[], "O0");
    let in_flight = [("main", "sum += work(i)"), ("work", "leaf();")];
    check_sites(&program.run(&["exit"]), &in_flight, &[], "O0 exit");
}

/// pathprof-core's planners with early-exit counting: derived block and edge
/// counts equal the measured ones, with nothing lost, when the process returns,
/// exits inside three calls, or longjmps out of two (main, where the longjmp
/// lands, is left out: its second return from setjmp starts no new path).
#[test]
fn core_planners_with_early_exit() {
    for variant in Variant::ALL {
        let dir = tempfile::tempdir().unwrap();
        let bc = bitcode(dir.path(), "early.c", variant);
        let truth = build_program(
            dir.path(),
            std::slice::from_ref(&bc),
            &Build::default(),
            |ex| {
                ex.functions
                    .iter()
                    .map(|f| counting_plan(&f.cfg, Paths::None).0)
                    .collect()
            },
        );
        let early = PlanOptions::default().with_early_exit(true);
        let mut tiny = PlanOptions::default().with_early_exit(true);
        tiny.path.array_limit = 2;
        for (mode, options, atomic) in [
            (Mode::Block, &early, false),
            (Mode::Edge, &early, false),
            (Mode::Edge, &early, true),
            (Mode::Path, &early, false),
            (Mode::Path, &tiny, true),
        ] {
            let layouts = RefCell::new(Vec::<Layout>::new());
            let build = Build {
                mode,
                atomic,
                ..Build::default()
            };
            let program = build_program(dir.path(), std::slice::from_ref(&bc), &build, |ex| {
                ex.functions
                    .iter()
                    .map(|f| {
                        let (plan, layout) = plan_function(&f.cfg, mode, options).unwrap();
                        layouts.borrow_mut().push(layout);
                        plan
                    })
                    .collect()
            });
            let layouts = layouts.into_inner();
            for args in ["", "exit", "jump"] {
                let args: &[&str] = if args.is_empty() { &[] } else { &[args] };
                let measured = truth.run(args);
                let run = program.run(args);
                assert_eq!(run.stdout, measured.stdout);
                for (i, f) in run.extracted.functions.iter().enumerate() {
                    if args == ["jump"] && f.name == "main" {
                        continue;
                    }
                    let what = format!("{variant:?} {mode:?} atomic={atomic} {args:?} {}", f.name);
                    let counters = &run.report.modules[0].functions[i];
                    let paths: Vec<(u64, u64)> =
                        counters.paths.iter().map(|(&k, &v)| (k, v)).collect();
                    let counts = derive(&f.cfg, &layouts[i], &counters.slots, &paths)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let measured = &measured.report.modules[0].functions[i].slots;
                    let nb = f.cfg.num_blocks();
                    assert_eq!(counts.blocks, measured[..nb], "{what}: blocks");
                    assert_eq!(counts.lost, 0, "{what}: lost paths");
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
        }
    }
}
