//! End-to-end tests of the `pathprof` command: every program of
//! `tests/programs/` is built with `pathprof cc` in block, edge and path mode, at
//! -O2 (what users build) and at -O0 (where blocks follow the source, so that
//! per-line counts are exact), and with plain clang -O2 as the reference. Each
//! instrumented build must behave exactly like the reference, and its report
//! must satisfy the invariants of `support::checks::check_report` and agree
//! with the other modes (`support::checks::check_modes`). Each test then checks
//! the counts derived by hand in the comment at the top of its program.
//!
//! Expectations name builds with `ALL`, `AT_O0`, `BLOCK_MODE`, ...: counts of
//! lines whose blocks -O2 may merge, split or delete are only asserted at -O0;
//! call counts of `noinline` functions hold everywhere.

use crate::support::build::{
    build, map_of, Builds, Compiler, Mode, Opt, Program, ALL, AT_O0, BLOCK_MODE, EDGE_COUNTS,
    MODES, O0_PATH, OPTS, PATH_MODE,
};
use crate::support::checks::{profile, Checks, Seen};
use crate::support::report::{report, FunctionExt, PathExit, Report};
use crate::support::run::run;
use std::collections::BTreeMap;

const LOOPS: Program = Program {
    name: "loops",
    sources: &["loops.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 3,
    cut_short: &[],
};

const SWITCH: Program = Program {
    name: "switch",
    sources: &["switch.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 48,
    cut_short: &[],
};

const IRREDUCIBLE: Program = Program {
    name: "irreducible",
    sources: &["irreducible.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 42,
    cut_short: &[],
};

const RECURSION: Program = Program {
    name: "recursion",
    sources: &["recursion.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 177,
    cut_short: &[],
};

const FNPTR: Program = Program {
    name: "fnptr",
    sources: &["fnptr.c", "fnptr_ops.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 12,
    cut_short: &[],
};

const MANYPATHS: Program = Program {
    name: "manypaths",
    sources: &["manypaths.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

const MAX: Program = Program {
    name: "max",
    sources: &["max.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

const EXIT: Program = Program {
    name: "exit",
    sources: &["exit.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 5,
    cut_short: &["main", "level1", "level2"],
};

/// The same program built with `--early-exit`: the paths cut short by `exit()`
/// are counted, so block, edge and path counts agree even for `main`, `level1`
/// and `level2` (left out of flow conservation only: calls exceed returns).
const EXIT_EARLY: Program = Program {
    name: "exit-early",
    sources: &["exit.c"],
    flags: &[],
    pathprof_flags: &["--early-exit"],
    status: 5,
    cut_short: &["main", "level1", "level2"],
};

const INVOKE: Program = Program {
    name: "invoke",
    sources: &["invoke.cpp"],
    flags: &["-lstdc++"],
    pathprof_flags: &[],
    status: 7,
    cut_short: &["main", "_Z3runi", "_Z4stepi"],
};
/// The same program built with `--early-exit`: the count made around the
/// `invoke` is undone on its normal edge and in its landing pad, so it survives
/// only where `exit()` ended the process inside it.
const INVOKE_EARLY: Program = Program {
    name: "invoke-early",
    sources: &["invoke.cpp"],
    flags: &["-lstdc++"],
    pathprof_flags: &["--early-exit"],
    status: 7,
    cut_short: &["main", "_Z3runi", "_Z4stepi"],
};
const FORK: Program = Program {
    name: "fork",
    sources: &["fork.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 7,
    cut_short: &["main"],
};

const DAEMON: Program = Program {
    name: "daemon",
    sources: &["daemon.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &["main"],
};
const FORK_CALLEE: Program = Program {
    name: "forkcallee",
    sources: &["forkcallee.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 3,
    cut_short: &["main", "spawn"],
};
/// The same program built with `--early-exit`: the child's return from the
/// call its parent was in is a resume of that call's early-exit count.
const FORK_CALLEE_EARLY: Program = Program {
    name: "forkcallee-early",
    sources: &["forkcallee.c"],
    flags: &[],
    pathprof_flags: &["--early-exit"],
    status: 3,
    cut_short: &["main", "spawn"],
};
/// The same with 2^8 times as many paths through main (`-DWIDE`): a path
/// array the runtime reads page by page.
const FORK_CALLEE_WIDE_EARLY: Program = Program {
    name: "forkcallee-wide-early",
    sources: &["forkcallee.c"],
    flags: &["-DWIDE"],
    pathprof_flags: &["--early-exit"],
    status: 3,
    cut_short: &["main", "spawn"],
};
const DESTRUCTOR: Program = Program {
    name: "destructor",
    sources: &["destructor.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};
const THREADS: Program = Program {
    name: "threads",
    sources: &["threads.c"],
    flags: &["-pthread"],
    pathprof_flags: &["--atomic"],
    status: 0,
    cut_short: &[],
};
const THREAD_STORM: Program = Program {
    name: "thread_storm",
    sources: &["thread_storm.c"],
    flags: &["-pthread"],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};
const THREAD_POOL: Program = Program {
    name: "thread_pool",
    sources: &["thread_pool.c"],
    flags: &["-pthread"],
    pathprof_flags: &[],
    status: 0,
    // Workers are blocked in their loop at exit; early threads end inside
    // leave(); main ends by exit().
    cut_short: &["pool_worker", "early_main", "leave", "main"],
};
const THREAD_SIGNAL: Program = Program {
    name: "thread_signal",
    sources: &["thread_signal.c"],
    flags: &["-pthread"],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};
const THREAD_FORK: Program = Program {
    name: "thread_fork",
    sources: &["thread_fork.c"],
    flags: &["-pthread"],
    pathprof_flags: &[],
    status: 0,
    // The child ends inside forker, by exit().
    cut_short: &["forker"],
};
const THREAD_STACKS: Program = Program {
    name: "thread_stacks",
    sources: &["thread_stacks.c"],
    flags: &["-pthread"],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

const INTERP: Program = Program {
    name: "interp",
    sources: &["interp.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 35,
    cut_short: &[],
};

const SHAPES: Program = Program {
    name: "shapes",
    sources: &["shapes.cpp"],
    flags: &["-lstdc++"],
    pathprof_flags: &[],
    status: 2,
    cut_short: &["_Z7checkedl"],
};

const CALLERS: Program = Program {
    name: "callers",
    sources: &["callers.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

const CALLERS_COUNTED: Program = Program {
    name: "callers-counted",
    sources: &["callers.c"],
    flags: &[],
    pathprof_flags: &["--count-entries"],
    status: 0,
    cut_short: &[],
};

const PURE: Program = Program {
    name: "pure",
    sources: &["pure.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

const FORKLOOP: Program = Program {
    name: "forkloop",
    sources: &["forkloop.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

/// Without `--early-exit`, the frames a `longjmp` leaves lose their paths in
/// progress (reported in main as lost paths).
const LONGJMP: Program = Program {
    name: "longjmp",
    sources: &["longjmp.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 4,
    cut_short: &["main", "outer"],
};

/// With `--early-exit` the frames a `longjmp` leaves are counted exactly.
const LONGJMP_EARLY: Program = Program {
    name: "longjmp-early",
    sources: &["longjmp.c"],
    flags: &[],
    pathprof_flags: &["--early-exit"],
    status: 4,
    cut_short: &["main", "outer"],
};

/// Every optimisation level.
const EVERY_LEVEL: [Opt; 4] = [Opt::O0, Opt::O1, Opt::O2, Opt::O3];

/// Builds at -O2 that count edges.
const O2_EDGE_COUNTS: Builds = Builds {
    opts: &[Opt::O2],
    modes: &[Mode::Edge, Mode::Path],
};
/// Block and path mode at every level: where activations cut short by a throw
/// are either counted whole (block) or not at all (path).
const BLOCK_AND_PATH: Builds = Builds {
    opts: &OPTS,
    modes: &[Mode::Block, Mode::Path],
};
/// Block mode at -O0.
const O0_BLOCK: Builds = Builds {
    opts: &[Opt::O0],
    modes: &[Mode::Block],
};

#[test]
fn loops_nested_break_continue_self_loop() {
    let mut p = profile(&LOOPS, &OPTS);
    assert_eq!(
        p.reference.stdout,
        "nest 1945\nskip 91\nspin 1336 4 186988\n"
    );

    p.expect_calls(ALL, "nest", 1);
    p.expect_line(AT_O0, "nest", "@outer", 10);
    p.expect_line(AT_O0, "nest", "@inner", 200);
    p.expect_path_counts(O0_PATH, "nest", &[1, 1, 9, 10, 190]);

    p.expect_calls(ALL, "skip", 1);
    p.expect_line(AT_O0, "skip", "@cont", 6);
    p.expect_line(AT_O0, "skip", "@brk", 1);
    p.expect_line(ALL, "skip", "@sum", 11);
    p.expect_path_counts(O0_PATH, "skip", &[1, 1, 5, 11]);

    p.expect_calls(ALL, "spin", 3);
    p.expect_line(AT_O0, "spin", "@spin", 15);
    p.expect_edge(
        Builds {
            opts: &[Opt::O0],
            modes: &[Mode::Edge, Mode::Path],
        },
        "spin",
        "@spin_cond",
        "@spin",
        12,
    );
    // At -O2 the loop body is a block branching to itself: its self loop is
    // counted (in `edges`), at most once per backedge taken in the source.
    for Seen { ctx, f, .. } in p.functions(O2_EDGE_COUNTS, "spin") {
        let self_loops: Vec<u64> = f
            .edges
            .iter()
            .filter(|e| e.from == e.to)
            .filter_map(|e| e.count)
            .collect();
        let total: u64 = self_loops.iter().sum();
        p.checks
            .check(!self_loops.is_empty() && total > 0 && total <= 12, || {
                format!("{ctx}: expected self loops run 1..=12 times in all, got {self_loops:?}")
            });
    }

    for mode in MODES {
        p.expect_second_run_doubles(Opt::O2, mode);
    }
    p.finish();
}

#[test]
fn switch_with_shared_case_target() {
    let mut p = profile(&SWITCH, &OPTS);
    assert_eq!(p.reference.stdout, "shared 6 nine 2 two 5 other 3\n");
    p.expect_calls(ALL, "classify", 14);
    p.expect_line(AT_O0, "classify", "@shared", 6);
    p.expect_line(ALL, "classify", "@nine", 2);
    p.expect_line(AT_O0, "classify", "@two", 5);
    p.expect_line(AT_O0, "classify", "@other", 3);
    // One path per switch edge: default 3, case 1 4, case 5 2, case 9 2, case 2 3.
    p.expect_path_counts(PATH_MODE, "classify", &[2, 2, 3, 3, 4]);

    // Cases 1 and 5 make two edges from the switch to one block: listed
    // separately, counted separately.
    let shared = p.line("@shared");
    for Seen { ctx, opt, mode, f } in p.functions(EDGE_COUNTS, "classify") {
        let mut by_pair: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
        for e in &f.edges {
            by_pair
                .entry((e.from, e.to))
                .or_default()
                .push(e.count.unwrap_or(0));
        }
        let multi: Vec<_> = by_pair.into_iter().filter(|(_, c)| c.len() > 1).collect();
        match &multi[..] {
            [((_, to), counts)] => {
                let mut counts = counts.clone();
                counts.sort_unstable();
                p.checks.eq(
                    format!("{ctx}: counts of the two case edges to one block"),
                    vec![2, 4],
                    counts,
                );
                if opt == Opt::O0 {
                    p.checks.eq(
                        format!("{ctx}: line of the shared case target"),
                        Some(shared),
                        f.blocks[*to as usize].line,
                    );
                }
            }
            _ => p.checks.fail(format!(
                "{ctx}: expected exactly one multi-edge, got {multi:?}"
            )),
        }
        if mode == Mode::Path {
            // The two edges give two paths through the same blocks.
            let mut by_blocks: BTreeMap<(Vec<u32>, PathExit), Vec<u64>> = BTreeMap::new();
            for path in f.paths() {
                by_blocks
                    .entry((path.blocks.clone(), path.exit))
                    .or_default()
                    .push(path.count);
            }
            let mut twins: Vec<Vec<u64>> =
                by_blocks.into_values().filter(|c| c.len() > 1).collect();
            twins.iter_mut().for_each(|c| c.sort_unstable());
            p.checks.eq(
                format!("{ctx}: counts of paths sharing their blocks"),
                vec![vec![2, 4]],
                twins,
            );
        }
    }
    p.finish();
}

#[test]
fn goto_into_loop_is_irreducible() {
    let mut p = profile(&IRREDUCIBLE, &OPTS);
    assert_eq!(p.reference.stdout, "irr 12 11 2 17\n");
    p.expect_calls(ALL, "irr", 4);
    p.expect_line(AT_O0, "irr", "@jump", 3);
    p.expect_line(AT_O0, "irr", "@top", 12);
    p.expect_line(AT_O0, "irr", "@mid", 15);
    p.finish();
}

#[test]
fn recursion_fib_and_mutual() {
    let mut p = profile(&RECURSION, &OPTS);
    assert_eq!(p.reference.stdout, "fib 55 calls 177 even 1\n");
    p.expect_calls(ALL, "fib", 177);
    p.expect_line(ALL, "fib", "@leaf", 89);
    p.expect_line(ALL, "fib", "@inner", 88);
    p.expect_path_counts(PATH_MODE, "fib", &[88, 89]);
    p.expect_calls(ALL, "is_even", 6);
    p.expect_calls(ALL, "is_odd", 5);
    p.expect_line(AT_O0, "is_even", "@even_base", 1);
    p.expect_line(AT_O0, "is_odd", "@odd_base", 0);
    p.finish();
}

#[test]
fn function_pointers_across_files() {
    let mut p = profile(&FNPTR, &OPTS);
    p.expect_calls(ALL, "op_add", 12);
    p.expect_calls(ALL, "op_sub", 3);
    p.expect_calls(ALL, "op_mul", 7);
    p.expect_calls(ALL, "apply", 2);
    p.expect_line(AT_O0, "apply", "@apply_body", 10);
    p.expect_position("op_add", "fnptr_ops.c", "int op_add(");
    p.expect_position("apply", "fnptr_ops.c", "int apply(");
    p.finish();
}

/// The masks `x & 0xfffff` bits20 is called with, and how often (see manypaths.c).
fn bits20_calls() -> BTreeMap<u64, u64> {
    let mut calls = BTreeMap::new();
    for i in 0..400u32 {
        *calls
            .entry(u64::from(i.wrapping_mul(2654435761) & 0xfffff))
            .or_insert(0) += 1;
    }
    *calls.entry(0).or_insert(0) += 5;
    *calls.entry(0xfffff).or_insert(0) += 3;
    calls
}

#[test]
fn two_to_the_twenty_paths_in_a_hash_table() {
    let mut p = profile(&MANYPATHS, &OPTS);
    let calls = bits20_calls();
    let total: u64 = calls.values().sum();
    assert_eq!(total, 408);
    expect_paths_by_mask(&mut p, "bits20", "@b", 20, &calls);
    p.expect_second_run_doubles(Opt::O2, Mode::Path);
    p.finish();
}

const WIDEPATHS: Program = Program {
    name: "widepaths",
    sources: &["widepaths.c"],
    flags: &[],
    pathprof_flags: &[],
    status: 0,
    cut_short: &[],
};

/// 2^40 paths, ids wider than 32 bits, in a hash table; 3000 paths run 3
/// times each, round-robin, so that they share the inline cache's slots
/// and are counted both from the cache and on misses (see widepaths.c).
#[test]
fn two_to_the_forty_paths_in_a_hash_table() {
    let mut p = profile(&WIDEPATHS, &OPTS);
    let mut calls = BTreeMap::new();
    for i in 0..3000u64 {
        *calls
            .entry(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xff_ffff_ffff)
            .or_insert(0) += 3;
    }
    assert_eq!(calls.len(), 3000);
    expect_paths_by_mask(&mut p, "bits40", "@w", 40, &calls);
    p.finish();
}

/// Checks `function` of a `bits` program (manypaths.c, widepaths.c): `bits`
/// `if`s in a row, the k-th `then` line tagged `{tag}{k}` and run when bit k
/// of the argument is set, called with the masks of `calls` as often as
/// they say: the output (the bits set over all calls), the calls, each
/// tagged line's count, the potential paths (2^bits) and every path run,
/// exactly (a path is the set of tagged lines on it).
fn expect_paths_by_mask(
    p: &mut crate::support::checks::Profiled,
    function: &str,
    tag: &str,
    bits: u32,
    calls: &BTreeMap<u64, u64>,
) {
    let total: u64 = calls.values().sum();
    let ones: u64 = calls
        .iter()
        .map(|(m, c)| u64::from(m.count_ones()) * c)
        .sum();
    assert_eq!(p.reference.stdout, format!("ones {ones}\n"));

    p.expect_calls(ALL, function, total);
    let bit_lines: Vec<u32> = (0..bits).map(|k| p.line(&format!("{tag}{k}"))).collect();
    for k in 0..bits {
        let runs: u64 = calls
            .iter()
            .filter(|(m, _)| *m & (1 << k) != 0)
            .map(|(_, c)| c)
            .sum();
        p.expect_line(ALL, function, &format!("{tag}{k}"), runs);
    }
    for Seen { ctx, f, .. } in p.functions(PATH_MODE, function) {
        p.checks.eq(
            format!("{ctx}: potential_paths"),
            Some(1u64 << bits),
            f.potential_paths,
        );
        let mut got: BTreeMap<u64, u64> = BTreeMap::new();
        for path in f.paths() {
            p.checks.check(
                path.blocks.first() == Some(&0) && path.exit.is_none(),
                || {
                    format!(
                        "{ctx}: path {} should run from entry to return: {:?} exit {:?}",
                        path.id, path.blocks, path.exit
                    )
                },
            );
            let mask = path
                .blocks
                .iter()
                .filter_map(|&b| f.blocks[b as usize].line)
                .filter_map(|l| bit_lines.iter().position(|&bl| bl == l))
                .fold(0u64, |m, k| m | 1 << k);
            *got.entry(mask).or_insert(0) += path.count;
        }
        p.checks.eq(
            format!("{ctx}: executed paths"),
            calls.len(),
            f.paths().len(),
        );
        if got != *calls {
            let diff: Vec<String> = calls
                .keys()
                .chain(got.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .filter(|m| calls.get(m) != got.get(m))
                .take(10)
                .map(|m| {
                    format!(
                        "mask {m:#012x}: expected {:?}, got {:?}",
                        calls.get(m),
                        got.get(m)
                    )
                })
                .collect();
            p.checks.fail(format!(
                "{ctx}: path counts by mask differ:\n    {}",
                diff.join("\n    ")
            ));
        }
    }
}

/// Weinberger's example, recomputed: the maximum of the 1000 numbers of max.c's
/// generator and how many times a new maximum is assigned.
fn weinberger_max() -> (u32, u64) {
    let mut seed: u32 = 12345;
    let a: Vec<u32> = (0..1000)
        .map(|_| {
            seed = seed.wrapping_mul(1103515245).wrapping_add(12345);
            (seed >> 16) & 0x7fff
        })
        .collect();
    let mut max = a[0];
    let mut updates = 0;
    for &x in &a[1..] {
        if x > max {
            max = x;
            updates += 1;
        }
    }
    (max, updates)
}

#[test]
fn weinberger_max_of_lcg_numbers() {
    let mut p = profile(&MAX, &OPTS);
    let (max, updates) = weinberger_max();
    assert_eq!(p.reference.stdout, format!("max {max} updates {updates}\n"));
    p.expect_calls(ALL, "next_rand", 1000);
    p.expect_calls(ALL, "find_max", 1);
    p.expect_line(AT_O0, "find_max", "@cmp", 999);
    p.expect_line(ALL, "find_max", "@newmax", updates);
    p.finish();
}

#[test]
fn exit_from_nested_function() {
    let mut p = profile(&EXIT, &OPTS);
    assert_eq!(p.reference.stdout, "exiting with total 105\n");
    p.expect_calls(ALL, "work", 7);
    p.expect_line(AT_O0, "work", "@work", 21);
    // The activations that exit() cut short are seen whole by block counters.
    p.expect_calls(BLOCK_MODE, "main", 1);
    p.expect_calls(BLOCK_MODE, "level1", 7);
    p.expect_calls(BLOCK_MODE, "level2", 1);
    p.expect_line(BLOCK_MODE, "level1", "@l1call", 1);
    p.expect_line(BLOCK_MODE, "level1", "@l1tail", 6);
    p.expect_line(O0_BLOCK, "main", "@mainbody", 7);
    p.finish();
}

#[test]
fn exit_from_nested_function_with_early_exit_counting() {
    let mut p = profile(&EXIT_EARLY, &OPTS);
    assert_eq!(p.reference.stdout, "exiting with total 105\n");
    p.expect_calls(ALL, "work", 7);
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "level1", 7);
    p.expect_calls(ALL, "level2", 1);
    p.expect_line(AT_O0, "level1", "@l1call", 1);
    p.expect_line(AT_O0, "level1", "@l1tail", 6);
    p.expect_line(AT_O0, "main", "@mainbody", 7);
    p.finish();
}

/// exit() inside a C++ `invoke` whose landing pad two exceptions also reach:
/// with `--early-exit` every mode counts the activations it cut short exactly;
/// without it, path mode reports the loss.
#[test]
fn exit_inside_an_invoke() {
    for (prog, early) in [(&INVOKE_EARLY, true), (&INVOKE, false)] {
        let mut p = profile(prog, &OPTS);
        assert_eq!(p.reference.stdout, "exit at 7 total 5 released 7\n");
        p.expect_calls(ALL, "_Z4stepi", 8);
        p.expect_calls(ALL, "_ZN5GuardD2Ev", 7);
        p.expect_line(AT_O0, "_ZN5GuardD2Ev", "@dtor", 7);
        p.expect_calls(ALL, "_Z6caughti", 2);
        if early {
            p.expect_calls(ALL, "main", 1);
            p.expect_calls(ALL, "_Z3runi", 1);
        } else {
            p.expect_calls(BLOCK_MODE, "_Z3runi", 1);
        }
        for Seen { ctx, f, .. } in p.functions(PATH_MODE, "_Z3runi") {
            let lost = if early { 0 } else { 1 };
            p.checks.eq(format!("{ctx}: lost paths"), lost, f.lost());
        }
        p.finish();
    }
}

#[test]
fn fork_parent_and_child_merge() {
    let mut p = profile(&FORK, &OPTS);
    assert_eq!(
        p.reference.stdout,
        "pre 45\nchild 435\nparent 190 child-status 4\n"
    );
    // Counts from before the fork are written once, not by the child as well.
    p.expect_calls(ALL, "work", 3);
    p.expect_line(AT_O0, "work", "@work", 60);
    p.expect_calls(BLOCK_MODE, "main", 1);
    p.finish();
}

/// daemon(): the parent's counts from before it are written (it ends inside
/// daemon), the child's from after it; nothing twice.
#[test]
fn daemon_parent_and_child_each_count_their_part() {
    let mut p = profile(&DAEMON, &OPTS);
    assert_eq!(p.reference.stdout, "before 45 after 190\n");
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "work", 2);
    p.expect_line(AT_O0, "work", "@work", 30);
    p.expect_line(AT_O0, "main", "@child", 1);
    for Seen { ctx, f, .. } in p.functions(EDGE_COUNTS, "main") {
        p.checks
            .eq(format!("{ctx}: daemon() returns"), 1, f.resume_returns());
    }
    p.finish();
}

/// A fork child returning into frames its parent entered: with
/// `--early-exit` every mode counts exactly what ran (block mode always
/// does); without it, edge and path mode count those frames' paths in both
/// processes, and the report must say it is not exact.
#[test]
fn fork_child_returning_into_its_parents_frames() {
    const OUTPUT: &str = "child 190\nparent 45 435 status 0\n";
    let mut plain = profile(&FORK_CALLEE, &OPTS);
    assert_eq!(plain.reference.stdout, OUTPUT);
    plain.expect_calls(BLOCK_MODE, "main", 1);
    plain.expect_calls(BLOCK_MODE, "spawn", 1);
    plain.expect_calls(ALL, "work", 3);
    plain.expect_line(AT_O0, "work", "@work", 60);
    for ((_, mode), built) in &plain.builds {
        let Some(report) = &built.report else {
            continue;
        };
        let exact = report.exact;
        let expect = *mode == Mode::Block;
        plain.checks.check(exact == expect, || {
            format!("forkcallee --mode={}: \"exact\" is {exact:?}", mode.name())
        });
    }
    plain.finish();

    for program in [&FORK_CALLEE_EARLY, &FORK_CALLEE_WIDE_EARLY] {
        let mut early = profile(program, &OPTS);
        assert_eq!(early.reference.stdout, OUTPUT);
        early.expect_calls(ALL, "main", 1);
        early.expect_calls(ALL, "spawn", 1);
        early.expect_calls(ALL, "work", 3);
        early.expect_line(AT_O0, "work", "@work", 60);
        early.expect_line(AT_O0, "main", "@child", 1);
        for ((_, mode), built) in &early.builds {
            let exact = built.report.as_ref().map(|r| r.exact);
            early.checks.check(exact == Some(true), || {
                format!(
                    "{} --mode={}: \"exact\" is {exact:?}",
                    program.name,
                    mode.name()
                )
            });
        }
        early.finish();
    }
}

/// Destructors run after the runtime's atexit dump; the module's own
/// destructor, the last of its object, writes what they counted.
#[test]
fn counts_made_in_destructors_are_written() {
    let mut p = profile(&DESTRUCTOR, &OPTS);
    assert_eq!(p.reference.stdout, "main 10\nlate 21\nlast 36\n");
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "work", 3);
    p.expect_calls(ALL, "late", 1);
    p.expect_calls(ALL, "last", 1);
    p.expect_line(AT_O0, "work", "@work", 21);
    p.expect_line(ALL, "late", "@late", 1);
    p.expect_line(ALL, "last", "@last", 1);
    p.finish();
}

#[test]
fn four_threads_with_atomic_counters() {
    let mut p = profile(&THREADS, &OPTS);
    assert_eq!(
        p.reference.stdout,
        "thread 0: 175000\nthread 1: 350000\nthread 2: 525000\nthread 3: 700000\n"
    );
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "thread_main", 4);
    p.expect_calls(ALL, "worker", 4);
    p.expect_line(AT_O0, "worker", "@tbody", 500_000);
    p.finish();
}

/// Twelve threads (more than the cores) in the same functions at once, in a
/// default build (no --atomic): every count exact, in every mode, and the
/// report says so.
#[test]
fn threads_in_the_same_code_count_exactly_without_atomic_updates() {
    let mut p = profile(&THREAD_STORM, &OPTS);
    assert_eq!(p.reference.stdout, "total 96009840000\n");
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "worker", 12);
    p.expect_calls(ALL, "classify", 2_400_000);
    p.expect_calls(ALL, "inner", 2_400_000);
    for case in ["@c0", "@c1", "@c2", "@c3", "@c4"] {
        p.expect_line(AT_O0, "classify", case, 480_000);
    }
    p.expect_line(AT_O0, "inner", "@inner", 3_600_000);
    p.expect_path_counts(O0_PATH, "classify", &[480_000; 5]);
    p.expect_path_counts(
        O0_PATH,
        "inner",
        &[600_000, 1_800_000, 1_800_000, 1_800_000],
    );
    p.expect_exact(ALL, 12);
    p.finish();
}

/// Pool workers alive (blocked) when main calls exit, and threads that end
/// by pthread_exit inside a nested call: what they counted is written.
#[test]
fn pool_workers_alive_at_exit_and_threads_ended_early_are_written() {
    let mut p = profile(&THREAD_POOL, &OPTS);
    assert_eq!(p.reference.stdout, "tasks 7998000 early 6016000\n");
    p.expect_calls(ALL, "task", 4_000);
    p.expect_line(AT_O0, "task", "@task", 3_999);
    p.expect_calls(ALL, "bump", 4_000);
    p.expect_calls(ALL, "leave", 4);
    // Activations that never return (ended by pthread_exit, blocked at
    // exit) count their entries in block mode only (without --early-exit).
    p.expect_calls(BLOCK_MODE, "early_main", 4);
    p.expect_calls(BLOCK_MODE, "pool_worker", 8);
    p.expect_exact(ALL, 12);
    p.finish();
}

/// Threads with the smallest stack the C library allows start although
/// their thread-local counters would not fit in it (the runtime gives them
/// room), and what the program's own thread-specific destructor counts as
/// each thread ends is written.
#[test]
fn threads_with_small_stacks_start_and_destructors_count() {
    let mut p = profile(&THREAD_STACKS, &OPTS);
    assert_eq!(
        p.reference.stdout,
        "sums 999936 1000080 1000224 farewells 15\n"
    );
    p.expect_calls(ALL, "step", 6144);
    p.expect_calls(ALL, "big", 6144);
    p.expect_calls(ALL, "farewell", 15);
    p.expect_exact(ALL, 3);
    p.finish();
}

/// SIGUSR1 dumps, delivered to the process and to each thread in turn,
/// while eight threads count and end: the profile adds up to exact counts.
#[test]
fn sigusr1_dumps_while_threads_run_keep_counts_exact() {
    let mut p = profile(&THREAD_SIGNAL, &OPTS);
    assert_eq!(p.reference.stdout, "total 255000900000\n");
    p.expect_calls(ALL, "tick", 3_600_000);
    p.expect_line(AT_O0, "tick", "@odd", 1_800_000);
    p.expect_calls(ALL, "worker", 8);
    p.expect_exact(ALL, 8);
    p.finish();
}

/// A thread other than main forks while four threads count: the parent
/// writes every thread's counts, the child only what it counted after.
#[test]
fn fork_from_a_thread_writes_each_count_once() {
    let mut p = profile(&THREAD_FORK, &OPTS);
    assert_eq!(p.reference.stdout, "child 7 spin 4799992\n");
    p.expect_calls(ALL, "spin", 800_000);
    p.expect_calls(ALL, "child_work", 1_000);
    p.expect_line(AT_O0, "forker", "@child", 1);
    p.expect_calls(ALL, "forker", 1);
    p.expect_calls(ALL, "spinner", 4);
    p.finish();
}

#[test]
fn computed_goto_interpreter() {
    let mut p = profile(&INTERP, &OPTS);
    assert_eq!(p.reference.stdout, "run 65 97 129\n");
    p.expect_calls(ALL, "run", 3);
    let handlers = [
        ("@loadc", 6),
        ("@inc", 24),
        ("@dbl", 15),
        ("@djnz", 24),
        ("@halt", 3),
    ];
    for (marker, n) in handlers {
        p.expect_line(ALL, "run", marker, n);
    }
    p.expect_line(AT_O0, "run", "@taken", 18);
    p.expect_line(AT_O0, "run", "@fall", 6);
    // The indirectbr's edges, which cannot be split, are counted too: the
    // dispatch block is the one with an edge to every handler.
    let lines: Vec<(u32, u64)> = handlers.iter().map(|&(m, n)| (p.line(m), n)).collect();
    for Seen { ctx, f, .. } in p.functions(EDGE_COUNTS, "run") {
        let targets: Vec<Vec<u32>> = lines.iter().map(|&(l, _)| f.blocks_on(l)).collect();
        let dispatch: Vec<u32> = f
            .blocks
            .iter()
            .map(|b| b.id)
            .filter(|&b| {
                targets
                    .iter()
                    .all(|t| f.edges.iter().any(|e| e.from == b && t.contains(&e.to)))
            })
            .collect();
        let &[d] = dispatch.as_slice() else {
            p.checks.fail(format!(
                "{ctx}: expected one block branching to every handler, got {dispatch:?}"
            ));
            continue;
        };
        for ((l, n), t) in lines.iter().zip(&targets) {
            let got: u64 = f
                .edges
                .iter()
                .filter(|e| e.from == d && t.contains(&e.to))
                .filter_map(|e| e.count)
                .sum();
            p.checks.eq(
                format!("{ctx}: dispatch b{d} -> handler on line {l}"),
                *n,
                got,
            );
        }
    }
    p.finish();
}

#[test]
fn cpp_virtual_calls_templates_and_exceptions() {
    let mut p = profile(&SHAPES, &OPTS);
    assert_eq!(
        p.reference.stdout,
        "area 60 twice 2000000000048 ok 150 caught 2\n"
    );
    p.expect_calls(ALL, "_Z10total_areaPKP5Shapei", 2);
    p.expect_calls(ALL, "_ZNK6Square4areaEv", 3);
    p.expect_calls(ALL, "_ZNK4Rect4areaEv", 4);
    p.expect_calls(ALL, "_Z5twiceIiET_S0_", 2);
    p.expect_calls(ALL, "_Z5twiceIlET_S0_", 1);
    p.expect_line(AT_O0, "_Z10total_areaPKP5Shapei", "@call", 7);
    p.expect_calls(BLOCK_MODE, "_Z7checkedl", 8);
    p.expect_line(BLOCK_MODE, "_Z7checkedl", "@throw", 2);
    p.expect_line(BLOCK_AND_PATH, "_Z7checkedl", "@ok", 6);
    p.expect_calls(ALL, "_Z11note_caughtl", 2);
    p.finish();
}

/// Report errors, the default mode, and the runtime's refusal to overwrite a
/// profile it cannot merge into.
#[test]
fn errors_name_their_cause() {
    let dir = tempfile::Builder::new()
        .prefix("pathprof-e2e-errors-")
        .tempdir()
        .unwrap();
    let dir = dir.path();
    let mut c = Checks::default();
    let contains = |hay: &str, needle: &str| hay.to_lowercase().contains(&needle.to_lowercase());

    // No --mode: path mode.
    let path_exe = build(&LOOPS, Compiler::Pathprof(None), Opt::O2, dir);
    let edge_exe = build(&LOOPS, Compiler::Pathprof(Some(Mode::Edge)), Opt::O2, dir);
    let other_exe = build(&SWITCH, Compiler::Pathprof(Some(Mode::Path)), Opt::O2, dir);
    let profile_of = |exe: &std::path::Path| exe.with_extension("pprof");
    for exe in [&path_exe, &edge_exe, &other_exe] {
        let out = run(exe, Some(&profile_of(exe)));
        c.check(
            out.status == Some(if exe == &other_exe { 48 } else { 3 }) && out.stderr.is_empty(),
            || format!("{} ran badly: {out}", exe.display()),
        );
    }
    let path_profile = profile_of(&path_exe);
    match report(&map_of(&path_exe), &path_profile) {
        Ok(r) => c.eq(
            "pathprof cc without --mode: report mode",
            "path",
            r.mode.as_str(),
        ),
        Err(f) => c.fail(format!("`{}` failed:\n{}", f.command, f.run)),
    }

    // A profile read with another build's map.
    for (map, what) in [
        (map_of(&edge_exe), "the edge-mode build's map"),
        (map_of(&other_exe), "another program's map"),
    ] {
        match report(&map, &path_profile) {
            Ok(_) => c.fail(format!("a path profile read with {what} was accepted")),
            Err(f) => c.check(
                f.run.status.is_some_and(|s| s != 0) && contains(&f.run.stderr, "build"),
                || {
                    format!(
                        "`{}` (with {what}) should fail saying the build differs:\n{}",
                        f.command, f.run
                    )
                },
            ),
        }
    }

    // A truncated profile.
    let bytes = std::fs::read(&path_profile).unwrap();
    let truncated = dir.join("truncated.pprof");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    match report(&map_of(&path_exe), &truncated) {
        Ok(_) => c.fail("a truncated profile was accepted".to_string()),
        Err(f) => c.check(
            f.run.status.is_some_and(|s| s != 0)
                && contains(&f.run.stderr, "truncated")
                && f.run.stderr.contains("truncated.pprof"),
            || {
                format!(
                    "`{}` should fail naming the file and saying it is truncated:\n{}",
                    f.command, f.run
                )
            },
        ),
    }

    // A missing map.
    let missing = dir.join("no-such.ppmap");
    match report(&missing, &path_profile) {
        Ok(_) => c.fail("a missing map was accepted".to_string()),
        Err(f) => c.check(
            f.run.status.is_some_and(|s| s != 0)
                && f.run.stderr.contains("no-such.ppmap")
                && ["no such file", "not found", "does not exist"]
                    .iter()
                    .any(|s| contains(&f.run.stderr, s)),
            || {
                format!(
                    "`{}` should fail saying the map does not exist:\n{}",
                    f.command, f.run
                )
            },
        ),
    }

    // Another build's run adds a section of its own to the profile: no new
    // file, not a word, and each map still reads its own build's counts.
    // (The contract's structs have no equality: compare their debug forms.)
    let counts = |r: &Report| format!("{:?}", r.functions);
    let before = report(&map_of(&path_exe), &path_profile).map(|r| counts(&r));
    let files_before = std::fs::read_dir(dir).unwrap().count();
    let out = run(&edge_exe, Some(&path_profile));
    c.check(
        out.status == Some(3) && out.stdout.starts_with("nest 1945") && out.stderr.is_empty(),
        || format!("run of another build onto a profile: {out}"),
    );
    c.check(
        std::fs::read_dir(dir).unwrap().count() == files_before,
        || "the runtime wrote a new file instead of adding a section".to_string(),
    );
    match (
        before,
        report(&map_of(&path_exe), &path_profile),
        report(&map_of(&edge_exe), &path_profile),
        report(&map_of(&edge_exe), &profile_of(&edge_exe)),
    ) {
        (Ok(before), Ok(after), Ok(edge), Ok(edge_alone)) => {
            c.check(before == counts(&after), || {
                "another build's section changed the path build's report".to_string()
            });
            c.check(counts(&edge) == counts(&edge_alone), || {
                "the edge build's section differs from its own profile".to_string()
            });
        }
        _ => c.fail("a profile of two builds could not be read with each map".to_string()),
    }

    // The runtime never overwrites a damaged profile, nor one of an older
    // format version (3: one build, no sections): it writes a new file and
    // says so on stderr.
    let older = dir.join("older.pprof");
    let mut v3 = b"PPROFRAW".to_vec();
    v3.extend_from_slice(&3u32.to_le_bytes());
    v3.extend_from_slice(&[0; 44]); // mode, build id, facts, no functions
    let sum = pathprof_format::fnv1a64(&v3);
    v3.extend_from_slice(&sum.to_le_bytes());
    std::fs::write(&older, &v3).unwrap();
    for (existing, exe, what) in [
        (&truncated, &path_exe, "a damaged profile"),
        (&older, &path_exe, "a profile of an older format version"),
    ] {
        let before = std::fs::read(existing).unwrap();
        let files_before = std::fs::read_dir(dir).unwrap().count();
        let out = run(exe, Some(existing));
        c.check(
            out.status == Some(3) && out.stdout.starts_with("nest 1945"),
            || format!("run onto {what}: {out}"),
        );
        c.check(std::fs::read(existing).unwrap() == before, || {
            format!("the runtime changed {what}")
        });
        c.check(!out.stderr.is_empty(), || {
            format!("the runtime said nothing when it could not write to {what}")
        });
        c.check(
            std::fs::read_dir(dir).unwrap().count() > files_before,
            || {
                format!(
                    "the runtime wrote no new file instead of {what}; stderr: {}",
                    out.stderr
                )
            },
        );
    }
    c.finish("errors");
}

/// Functions LLVM knows (or is told) touch no memory: the probes make that
/// untrue, so the attributes go, and counts are exact at every level in every
/// mode (before, a `memory(none)` recursive function lost counter updates
/// moved across its own call).
#[test]
fn pure_and_const_functions_count_exactly_at_every_level() {
    let mut p = profile(&PURE, &EVERY_LEVEL);
    assert_eq!(p.reference.stdout, "3136 1 4950\n");
    let every = Builds {
        opts: &EVERY_LEVEL,
        modes: &MODES,
    };
    p.expect_calls(every, "tri", 6872);
    p.expect_line(every, "tri", "@tri_loop", 6871);
    p.expect_calls(every, "even", 11);
    p.expect_calls(every, "odd", 10);
    p.expect_calls(every, "lookup", 100);
    p.expect_line(every, "lookup", "@lookup", 100);
    p.finish();
}

/// Entry counts given by callers (the functions' own entries counted only
/// where callers cannot give them) equal those counted, at every level.
#[test]
fn entry_counts_given_by_callers_equal_counted_ones() {
    for prog in [&CALLERS, &CALLERS_COUNTED] {
        let mut p = profile(prog, &OPTS);
        assert_eq!(p.reference.stdout, "s 456794 fact 3628800 ping 0\n");
        for (function, calls) in [
            ("square", 134),
            ("half", 34),
            ("via_pointer", 100),
            ("fact", 10),
            ("ping", 4),
            ("pong", 4),
            ("may_exit", 100),
            ("after_exit", 100),
            ("loop", 1),
        ] {
            p.expect_calls(ALL, function, calls);
        }
        p.expect_line(AT_O0, "loop", "@every_third", 34);
        p.expect_line(ALL, "half", "@half_odd", 34);
        p.finish();
    }
}

/// Which functions take their entry counts from their callers: `pathprof
/// cc` plans them without the entry (`--pathprof-verbose` lists each
/// function's probes), and `--count-entries` counts every one.
#[test]
fn only_functions_called_directly_outside_recursion_take_entries_from_callers() {
    let dir = crate::support::build::program_dir();
    let source = crate::support::build::programs_dir().join("callers.c");
    let probes = |mode: &str, extra: &[&str]| -> BTreeMap<String, usize> {
        let exe = dir.path().join(format!("callers-{mode}{}", extra.len()));
        let out = std::process::Command::new(crate::support::command::PATHPROF)
            .current_dir(dir.path())
            .args(["cc", &format!("--mode={mode}"), "-O2", "--pathprof-verbose"])
            .args(extra)
            .arg(&source)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("pathprof cc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix("pathprof: ")?;
                let (name, rest) = rest.split_once(" blocks=")?;
                let n = rest.split(" probes=").nth(1)?.split(' ').next()?;
                Some((name.to_string(), n.parse().ok()?))
            })
            .collect()
    };
    for mode in ["block", "edge", "path"] {
        let given = probes(mode, &[]);
        let counted = probes(mode, &["--count-entries"]);
        assert_eq!(given["square"], 0, "{mode}: {given:?}");
        assert_eq!(counted["square"], 1, "{mode}: {counted:?}");
        for own in ["via_pointer", "fact", "ping", "pong", "after_exit", "loop"] {
            assert_eq!(given[own], counted[own], "{mode}: {own} counts its entries");
        }
        if mode != "path" {
            for from_callers in ["half", "may_exit"] {
                assert!(
                    given[from_callers] < counted[from_callers],
                    "{mode}: {from_callers}"
                );
            }
        }
    }
}

/// A parent forks four children in a loop: before, every path-mode report failed
/// ("flow into block b2 differs from flow out of it"); now the path in progress
/// at each fork is counted once and every process's own part once.
#[test]
fn fork_in_a_loop_counts_each_process_once() {
    let mut p = profile(&FORKLOOP, &OPTS);
    assert_eq!(p.reference.stdout, "sum 1110\n");
    p.expect_calls(ALL, "main", 1);
    p.expect_calls(ALL, "child_work", 4);
    p.expect_line(AT_O0, "child_work", "@child_loop", 100);
    p.expect_line(AT_O0, "main", "@child", 4);
    p.expect_line(AT_O0, "main", "@parent", 4);
    for Seen { ctx, f, .. } in p.functions(EDGE_COUNTS, "main") {
        p.checks
            .eq(format!("{ctx}: fork() returns"), 8, f.resume_returns());
    }
    p.finish();
}

/// longjmp out of nested calls back to a setjmp in main's loop, counted exactly
/// with `--early-exit`; without it, the loss is reported, never hidden.
#[test]
fn longjmp_back_to_setjmp_in_a_loop() {
    for (prog, early) in [(&LONGJMP_EARLY, true), (&LONGJMP, false)] {
        let mut p = profile(prog, &OPTS);
        assert_eq!(p.reference.stdout, "jumps 4 sum 12\n");
        p.expect_calls(ALL, "inner", 16);
        p.expect_calls(ALL, "main", 1);
        p.expect_line(AT_O0, "main", "@jumped", 4);
        // The call to outer is made 10 times; 4 of them never return.
        if early {
            p.expect_calls(ALL, "outer", 10);
            p.expect_line(AT_O0, "main", "@normal", 10);
        } else {
            p.expect_calls(BLOCK_MODE, "outer", 10);
            p.expect_line(O0_BLOCK, "main", "@normal", 10);
        }
        for Seen { ctx, f, .. } in p.functions(PATH_MODE, "main") {
            p.checks
                .eq(format!("{ctx}: setjmp returns"), 14, f.resume_returns());
            let lost = if early { 0 } else { 4 };
            p.checks.eq(format!("{ctx}: lost paths"), lost, f.lost());
        }
        p.finish();
    }
}

mod ppp;
