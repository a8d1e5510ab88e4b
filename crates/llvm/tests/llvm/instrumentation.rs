//! Instrumentation end to end: hand-written plans, instrumented, optimised,
//! compiled, linked with the fake runtime and run; counters are checked exactly
//! or against each other, and the program's own stdout must not change.

use crate::ball_larus::{block_plan, check_flow, check_paths, counting_plan, Paths};
use crate::harness::{
    bitcode, build_and_run, function_index, module_info, reference_stdout, Build, Run, Variant,
};
use pathprof_core::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use pathprof_core::{BlockId, EdgeId, Mode};
use pathprof_format::abi::{PATHS_ARRAY, PATHS_HASH, PATHS_NONE};
use pathprof_llvm::{extract, instrument, Context, LlvmError, ModuleInfo, OptLevel};

/// main() calls each function of prog.c 20 times (i = 0..20).
const CALLS: u64 = 20;

fn block_counts(run: &Run, name: &str) -> Vec<u64> {
    run.report.function(&run.extracted, name).slots.clone()
}

fn run_blocks(variant: Variant, level: OptLevel) {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", variant);
    let build = Build {
        level,
        ..Build::default()
    };
    let run = build_and_run(dir.path(), &[bc], &build, |ex| {
        ex.functions.iter().map(|f| block_plan(&f.cfg)).collect()
    });
    assert_eq!(run.stdout, reference_stdout(dir.path(), &["prog.c"]));

    for name in [
        "branch", "loop", "multi", "pick", "crit", "jump", "bits", "tail", "asm_jump", "step",
    ] {
        assert_eq!(block_counts(&run, name)[0], CALLS, "entry count of {name}");
    }
    assert_eq!(
        block_counts(&run, "tail_target")[0],
        11,
        "tail(i * 10) for i * 10 <= 100"
    );
    assert_eq!(block_counts(&run, "main")[0], 1);
    assert_eq!(
        block_counts(&run, "hello")[0],
        1,
        "the program's own constructor ran, and counted"
    );

    let popcounts: u64 = (0..CALLS).map(|i| u64::from(i.count_ones())).sum();
    match variant {
        Variant::Unoptimised => {
            // x > 10 for x in 11..20.
            assert_eq!(block_counts(&run, "branch"), [20, 9, 11, 20]);
            // loop(i % 5): 4 * (0 + 1 + 2 + 3 + 4) iterations.
            assert_eq!(block_counts(&run, "loop"), [20, 60, 20, 40, 40, 20]);
            assert_eq!(block_counts(&run, "tail"), [20, 9, 11, 0, 9]);
        }
        Variant::Optimised => {
            // multi(i % 6): cases 1|2 (4 + 3), 3 (3), 5 (3).
            assert_eq!(block_counts(&run, "multi"), [20, 7, 3, 3, 20]);
            // bits(i) loops once per set bit.
            assert_eq!(block_counts(&run, "bits"), [20, popcounts, 20]);
            // jump(i): b1 is the odd target.
            assert_eq!(block_counts(&run, "jump"), [20, 10, 20]);
            // asm_jump(i % 3): nonzero for 13 of 20.
            assert_eq!(block_counts(&run, "asm_jump"), [20, 13, 20]);
        }
    }
}

#[test]
fn block_counts_unoptimised_bitcode_at_o2() {
    run_blocks(Variant::Unoptimised, OptLevel::O2);
}

#[test]
fn block_counts_optimised_bitcode_at_o2() {
    run_blocks(Variant::Optimised, OptLevel::O2);
}

#[test]
fn block_counts_optimised_bitcode_at_o0() {
    run_blocks(Variant::Optimised, OptLevel::O0);
}

/// Counters on every block and edge, plus Ball-Larus paths, in one plan.
fn run_edges_and_paths(variant: Variant, paths: Paths, level: OptLevel, atomic: bool) {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", variant);
    let build = Build {
        mode: Mode::Path,
        atomic,
        level,
        ..Build::default()
    };
    let run = build_and_run(dir.path(), &[bc], &build, |ex| {
        ex.functions
            .iter()
            .map(|f| counting_plan(&f.cfg, paths).0)
            .collect()
    });
    assert_eq!(run.stdout, reference_stdout(dir.path(), &["prog.c"]));

    let mut with_paths = Vec::new();
    for (i, f) in run.extracted.functions.iter().enumerate() {
        let counters = &run.report.modules[0].functions[i];
        check_flow(&f.name, &f.cfg, &counters.slots);
        let (_, numbering) = counting_plan(&f.cfg, paths);
        match numbering {
            Some(numbering) => {
                let kind = if paths == Paths::Array {
                    PATHS_ARRAY
                } else {
                    PATHS_HASH
                };
                assert_eq!(
                    (counters.path_kind, counters.num_paths),
                    (kind, numbering.num_paths)
                );
                check_paths(
                    &f.name,
                    &f.cfg,
                    &numbering,
                    &counters.slots,
                    &counters.paths,
                );
                with_paths.push(f.name.as_str());
            }
            None => assert_eq!(counters.path_kind, PATHS_NONE),
        }
    }
    for name in [
        "branch", "loop", "multi", "pick", "crit", "bits", "tail", "main",
    ] {
        assert!(
            with_paths.contains(&name),
            "{name} has path counters: {with_paths:?}"
        );
    }

    let slots = |name: &str| &run.report.function(&run.extracted, name).slots;
    let edge_slot = |name: &str, e: u32| {
        let f = &run.extracted.functions[function_index(&run.extracted, name)];
        slots(name)[f.cfg.num_blocks() + e as usize]
    };
    if variant == Variant::Optimised {
        // The switch's multi-edges, each split on its own: case 1 (i % 6 == 1,
        // 4 times) and case 2 (3 times) reach the same block.
        assert_eq!((edge_slot("multi", 1), edge_slot("multi", 2)), (4, 3));
        assert_eq!((edge_slot("pick", 1), edge_slot("pick", 2)), (5, 5));
        // The self loop (split, with its own phis rewritten).
        let popcounts: u64 = (0..CALLS).map(|i| u64::from(i.count_ones())).sum();
        assert_eq!(
            edge_slot("bits", 3),
            popcounts - 19,
            "one exit per nonzero i"
        );
        // crit's critical edge b0 -> b2 (even x).
        assert_eq!(edge_slot("crit", 0), 10);
        // Each call of branch is one path.
        let branch = run.report.function(&run.extracted, "branch");
        assert_eq!(branch.paths.values().sum::<u64>(), CALLS);
    }
}

#[test]
fn edges_and_path_array_optimised_at_o2() {
    run_edges_and_paths(Variant::Optimised, Paths::Array, OptLevel::O2, false);
}

#[test]
fn edges_and_path_hash_unoptimised_at_o2_atomic() {
    run_edges_and_paths(Variant::Unoptimised, Paths::Hash, OptLevel::O2, true);
}

#[test]
fn edges_and_path_hash_optimised_at_o0() {
    run_edges_and_paths(Variant::Optimised, Paths::Hash, OptLevel::O0, false);
}

#[test]
fn edges_and_path_array_unoptimised_at_o3_atomic() {
    run_edges_and_paths(Variant::Unoptimised, Paths::Array, OptLevel::O3, true);
}

#[test]
fn cxx_exceptions() {
    let dir = tempfile::tempdir().unwrap();
    let reference = reference_stdout(dir.path(), &["eh.cc", "-lstdc++"]);
    for variant in Variant::ALL {
        let bc = bitcode(dir.path(), "eh.cc", variant);
        let build = Build {
            mode: Mode::Path,
            link_args: &["-lstdc++"],
            ..Build::default()
        };
        let run = build_and_run(dir.path(), &[bc], &build, |ex| {
            ex.functions
                .iter()
                .map(|f| counting_plan(&f.cfg, Paths::Array).0)
                .collect()
        });
        assert_eq!(run.stdout, reference);
        for (i, f) in run.extracted.functions.iter().enumerate() {
            check_flow(&f.name, &f.cfg, &run.report.modules[0].functions[i].slots);
        }
        let calls = |name: &str| run.report.function(&run.extracted, name).slots[0];
        assert_eq!(calls("_ZN2ns7guardedEi"), 10);
        assert_eq!(calls("_ZN2ns9may_throwEi"), 16);
        if variant == Variant::Optimised {
            // guarded(i) for i in 0..10: may_throw(i) returns for 6 values, then
            // may_throw(i + 1) for 3 of them; 7 exceptions caught.
            assert_eq!(
                run.report
                    .function(&run.extracted, "_ZN2ns7guardedEi")
                    .slots[..7],
                [10, 6, 3, 7, 7, 10, 0]
            );
            // 9 of may_throw's 16 calls return; the 7 others end in a throw,
            // `__cxa_throw; unreachable`, whose block's end code runs before the
            // call: all 16 paths are counted.
            let may_throw = run.report.function(&run.extracted, "_ZN2ns9may_throwEi");
            assert_eq!(may_throw.paths.values().sum::<u64>(), 16);
        }
    }
}

#[test]
fn two_linked_translation_units() {
    let dir = tempfile::tempdir().unwrap();
    let a = bitcode(dir.path(), "two_a.c", Variant::Unoptimised);
    let b = bitcode(dir.path(), "two_b.c", Variant::Unoptimised);
    let run = build_and_run(dir.path(), &[a, b], &Build::default(), |ex| {
        ex.functions.iter().map(|f| block_plan(&f.cfg)).collect()
    });
    assert_eq!(
        run.stdout,
        reference_stdout(dir.path(), &["two_a.c", "two_b.c"])
    );
    // helper(i) for i in 0..7: odd for 3.
    assert_eq!(block_counts(&run, "helper"), [7, 3, 4, 7]);
    assert_eq!(block_counts(&run, "main")[0], 1);
}

#[test]
fn empty_plans_still_register() {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", Variant::Optimised);
    let run = build_and_run(dir.path(), &[bc], &Build::default(), |ex| {
        let empty = FunctionPlan::from_ops(0, PathStorage::None, []);
        vec![empty; ex.functions.len()]
    });
    assert!(run.report.modules[0]
        .functions
        .iter()
        .all(|f| f.slots.is_empty() && f.path_kind == 0));
}

#[test]
fn rejects_plans_that_do_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", Variant::Optimised);
    let context = Context::create();
    let instrument_with =
        |edit: &dyn Fn(&mut Vec<FunctionPlan>, &mut ModuleInfo)| -> Result<(), LlvmError> {
            let module = pathprof_llvm::load_bitcode(&context, &bc).unwrap();
            let ex = extract(&module).unwrap();
            let mut plans: Vec<_> = ex.functions.iter().map(|f| block_plan(&f.cfg)).collect();
            let mut info = module_info(&ex, Mode::Block, 1, false);
            edit(&mut plans, &mut info);
            instrument(&module, &plans, &info)?;
            // A second time is refused.
            instrument(&module, &plans, &info)
        };
    let ex = {
        let module = pathprof_llvm::load_bitcode(&context, &bc).unwrap();
        extract(&module).unwrap()
    };
    let jump = function_index(&ex, "jump");
    let n = ex.functions.len();

    let err = instrument_with(&|plans, _| {
        plans.pop();
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the plan list has {} entries but the module has {n} instrumentable functions; \
             extract and instrument the same module, with one plan per extracted function",
            n - 1
        )
    );

    let err = instrument_with(&|_, info| info.hashes[jump] ^= 1).unwrap_err();
    assert!(
        matches!(err, LlvmError::HashMismatch { ref function, .. } if function == "jump"),
        "{err}"
    );

    let err = instrument_with(&|plans, _| {
        plans[jump] = FunctionPlan::from_ops(
            1,
            PathStorage::None,
            [(ProbeSite::BlockEnd(BlockId(0)), Op::CountSlot(1))],
        );
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "function `jump`: the plan is invalid: CountSlot(1) but the function has 1 slots; this is a bug in the planner"
    );

    // indirectbr b0 -> b2 is critical and cannot be split.
    let err = instrument_with(&|plans, _| {
        plans[jump] = FunctionPlan::from_ops(
            1,
            PathStorage::None,
            [(ProbeSite::Edge(EdgeId(0)), Op::CountSlot(0))],
        );
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("edge e0 (b0 -> b2) carries a probe but cannot be split"),
        "{err}"
    );

    let err = instrument_with(&|_, _| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the module is already instrumented (it defines `__pathprof_module`); instrument the original bitcode"
    );
}

#[test]
#[ignore = "prints the instrumented IR of $PP_DUMP_FUNCTION for debugging"]
fn dump_instrumented_ir() {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", Variant::Optimised);
    let context = Context::create();
    let module = pathprof_llvm::load_bitcode(&context, &bc).unwrap();
    let ex = extract(&module).unwrap();
    let plans: Vec<_> = ex
        .functions
        .iter()
        .map(|f| counting_plan(&f.cfg, Paths::Array).0)
        .collect();
    let info = module_info(&ex, Mode::Path, 1, false);
    instrument(&module, &plans, &info).unwrap();
    let name = std::env::var("PP_DUMP_FUNCTION").unwrap_or("multi".into());
    let f = module.get_function(&name).unwrap();
    eprintln!(
        "{}",
        pathprof_llvm::inkwell::values::AnyValue::print_to_string(&f).to_string()
    );
}

/// The loads, stores and atomics of every defined function of `module`,
/// with whether each is in an alias scope and whether it has `!noalias`.
fn scoped_accesses(module: &pathprof_llvm::Module<'_>) -> Vec<(String, bool, bool)> {
    use pathprof_llvm::inkwell::values::InstructionOpcode as Op;
    let context = module.get_context();
    let (scope, noalias) = (
        context.get_kind_id("alias.scope"),
        context.get_kind_id("noalias"),
    );
    let mut found = Vec::new();
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            for i in block.get_instructions() {
                if matches!(
                    i.get_opcode(),
                    Op::Load | Op::Store | Op::AtomicRMW | Op::AtomicCmpXchg
                ) {
                    let name = function.get_name().to_string_lossy().into_owned();
                    let marks = (
                        i.get_metadata(scope).is_some(),
                        i.get_metadata(noalias).is_some(),
                    );
                    found.push((name, marks.0, marks.1));
                }
            }
        }
    }
    found
}

/// In every mode every access instrumentation adds (counters, the thread
/// delta, undos around calls, the inline helpers of hashing functions) is
/// in pathprof's alias scope, every access the program had is declared not
/// to alias it, and no access is both.
#[test]
fn probes_and_the_program_are_in_disjoint_alias_scopes() {
    use pathprof_core::planner::PlanOptions;
    let dir = tempfile::tempdir().unwrap();
    for variant in [Variant::Unoptimised, Variant::Optimised] {
        let bc = bitcode(dir.path(), "prog.c", variant);
        for (mode, early_exit) in [
            (Mode::Block, false),
            (Mode::Edge, false),
            (Mode::Edge, true),
            (Mode::Path, false),
        ] {
            let context = Context::create();
            let module =
                pathprof_llvm::link_bitcode_files(&context, std::slice::from_ref(&bc)).unwrap();
            let program = scoped_accesses(&module);
            assert!(program.iter().all(|&(_, scope, _)| !scope));
            // Tiny path arrays, so that some functions hash too.
            let mut options = PlanOptions::default().with_early_exit(early_exit);
            options.path.array_limit = 2;
            instrument_every_function(&module, mode, &options, false);
            let after = scoped_accesses(&module);
            assert!(after.len() > program.len(), "{mode:?}: probes were added");
            let both: Vec<_> = after.iter().filter(|a| a.1 && a.2).collect();
            assert!(
                both.is_empty(),
                "{mode:?}: in the scope and noalias it: {both:?}"
            );
            let noalias = after.iter().filter(|a| a.2).count();
            assert_eq!(noalias, program.len(), "{mode:?}: the program's accesses");
            let unmarked: Vec<_> = after.iter().filter(|a| !a.1 && !a.2).collect();
            assert!(unmarked.is_empty(), "{mode:?}: unmarked {unmarked:?}");
        }
    }
}

#[test]
fn the_alias_scope_leaves_out_the_largest_functions_and_what_they_may_inline() {
    use pathprof_core::planner::PlanOptions;
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "large.c", Variant::Unoptimised);
    // Per mode, the functions whose accesses are marked: in block and edge
    // mode `big` and its direct callee `mid` are left out, in path mode
    // `leaf` (reached through `mid`) too.
    for (mode, marked) in [
        (Mode::Block, &["apart", "leaf"][..]),
        (Mode::Edge, &["apart", "leaf"][..]),
        (Mode::Path, &["apart"][..]),
    ] {
        let context = Context::create();
        let module =
            pathprof_llvm::link_bitcode_files(&context, std::slice::from_ref(&bc)).unwrap();
        instrument_every_function(&module, mode, &PlanOptions::default(), false);
        let accesses = scoped_accesses(&module);
        for name in ["big", "mid", "leaf", "apart"] {
            let of: Vec<_> = accesses.iter().filter(|a| a.0 == name).collect();
            assert!(!of.is_empty(), "{name} has memory accesses");
            let expected = marked.contains(&name);
            assert!(
                of.iter().all(|a| (a.1 || a.2) == expected),
                "{mode:?}: {name} marked {expected} expected: {of:?}"
            );
        }
    }
}

/// Plans every function of `module` in `mode` and instruments it (with
/// atomic updates as `atomic` says).
fn instrument_every_function(
    module: &pathprof_llvm::Module<'_>,
    mode: Mode,
    options: &pathprof_core::planner::PlanOptions,
    atomic: bool,
) {
    let extracted = extract(module).unwrap();
    let plans: Vec<FunctionPlan> = extracted
        .functions
        .iter()
        .map(|f| {
            pathprof_core::planner::plan_function(&f.cfg, mode, options)
                .unwrap()
                .0
        })
        .collect();
    let info = module_info(&extracted, mode, 1, atomic);
    instrument(module, &plans, &info).unwrap();
}

/// No counter is thread-local data: the module's only thread-local global
/// is the object's delta (8 bytes). In an executable's module on x86-64
/// (prog.c is compiled for one: `PIE Level`), block and edge probes
/// increment through `%gs` (address space 256), whose base the runtime
/// sets to each thread's delta, and load no delta. That the counts stay
/// exact is what the tests running prog.c and the CLI's programs check.
#[test]
fn no_counter_is_thread_local_data() {
    use pathprof_core::planner::PlanOptions;
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", Variant::Unoptimised);
    for mode in [Mode::Block, Mode::Edge, Mode::Path] {
        let context = Context::create();
        let module =
            pathprof_llvm::link_bitcode_files(&context, std::slice::from_ref(&bc)).unwrap();
        instrument_every_function(&module, mode, &PlanOptions::default(), false);
        let thread_local: Vec<String> = module
            .get_globals()
            .filter(|g| g.is_thread_local())
            .map(|g| g.get_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            thread_local,
            ["__pathprof_thread_delta_variable"],
            "{mode:?}: the only thread-local global"
        );
        if mode == Mode::Path {
            continue;
        }
        for name in ["loop", "branch"] {
            let f = module.get_function(name).unwrap();
            let ir = pathprof_llvm::inkwell::values::AnyValue::print_to_string(&f).to_string();
            assert!(
                ir.contains("addrspace(256)") && !ir.contains("@__pathprof_thread_delta"),
                "{mode:?}: `{name}` counts through %gs:\n{ir}"
            );
        }
    }
}

/// In path mode a function that ends paths inside a loop and calls no
/// function counts them there through `__pathprof_count_repeat` (an
/// increment indexed by the last path register's value counted there when
/// it repeats, another when it changes: `emit::repeats_path_ends`); a
/// loop-free function, a loop in a function that calls (`main`), and atomic
/// updates keep the one increment. That the counts stay exact is what the tests
/// running prog.c (its `loop`) and the CLI's programs check (loops.c's
/// `skip` changes its path from round to round).
#[test]
fn path_ends_in_loops_count_a_repeated_path_at_its_own_increment() {
    use pathprof_core::planner::PlanOptions;
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), "prog.c", Variant::Unoptimised);
    for atomic in [false, true] {
        let context = Context::create();
        let module =
            pathprof_llvm::link_bitcode_files(&context, std::slice::from_ref(&bc)).unwrap();
        instrument_every_function(&module, Mode::Path, &PlanOptions::default(), atomic);
        let text = |name: &str| {
            let f = module.get_function(name).unwrap();
            pathprof_llvm::inkwell::values::AnyValue::print_to_string(&f).to_string()
        };
        let (looping, straight) = (text("loop"), text("branch"));
        // The helper of an array through `%gs` (prog.c is an executable's
        // code), or of an address (atomic updates never use `%gs`).
        let repeats = |ir: &str| {
            ir.contains("@__pathprof_count_repeat(") || ir.contains("@__pathprof_count_repeat_gs(")
        };
        assert_eq!(repeats(&looping), !atomic, "atomic {atomic}:\n{looping}");
        assert!(!repeats(&straight), "atomic {atomic}:\n{straight}");
        let calling = text("main");
        assert!(
            calling.contains("pp.path"),
            "`main` counts its paths:\n{calling}"
        );
        assert!(!repeats(&calling), "atomic {atomic}:\n{calling}");
        if !atomic {
            let helper = text("__pathprof_count_repeat_gs");
            assert!(
                helper.contains("load volatile i64") && helper.contains("store volatile i64"),
                "the repeat's increment is volatile:\n{helper}"
            );
        }
    }
}
