//! Calls that return more than once (`fork`, `setjmp`): the path in progress
//! ends before the call and a new one starts after it, so what each process (or
//! each return) runs is counted once, in every mode.
//!
//! The function (a parent that forks once; the child takes b2, the parent b3):
//!
//! ```text
//!   b0: pid = fork()        (ends in the call; e0 is the resume edge)
//!    | e0 (resume)
//!   b1: if (pid == 0)
//!    |e1       \e2
//!   b2: child   b3: parent
//!    |e3        |e4
//!   b4: return
//! ```
//!
//! One call of it in which `fork` succeeds: the parent runs b0 b1 b3 b4, the
//! child (counters zeroed at the fork, the runtime's job) runs b1 b2 b4. So b0
//! runs once, b1 and b4 twice, b2 and b3 once; e0 is taken twice (two returns),
//! e1..e4 once each. Paths: [b0] ending before the call (once, parent), [b1 b3
//! b4] and [b1 b2 b4] starting after it (once each). Calls: 1.

mod common;

use common::Evaluator;
use pathprof_core::derive::derive;
use pathprof_core::layout::Layout;
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::{BlockId, Cfg, CfgEdge, EdgeId, Mode};

fn forking() -> Cfg {
    let pairs = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4)];
    let edges = pairs
        .iter()
        .enumerate()
        .map(|(i, &(from, to))| CfgEdge {
            from: BlockId(from),
            to: BlockId(to),
            slot: if i == 2 { 1 } else { 0 },
            splittable: true,
            resume: i == 0,
        })
        .collect();
    Cfg::new(5, BlockId(0), edges).unwrap()
}

/// Runs one forking call (parent and child into one set of counters) and
/// derives the counts.
fn fork_once(mode: Mode, early_exit: bool) -> (pathprof_core::derive::FunctionCounts, Layout) {
    let cfg = forking();
    let options = PlanOptions::default().with_early_exit(early_exit);
    let (plan, layout) = plan_function(&cfg, mode, &options).unwrap();
    let mut parent = Evaluator::new(&plan);
    parent.call(&cfg, &[EdgeId(0), EdgeId(2), EdgeId(4)]);
    let mut child = Evaluator::new(&plan);
    child.resume(&cfg, EdgeId(0), &[EdgeId(1), EdgeId(3)]);
    let slots: Vec<u64> = parent
        .counters
        .slots
        .iter()
        .zip(&child.counters.slots)
        .map(|(a, b)| a + b)
        .collect();
    let mut paths = parent.counters.paths.clone();
    for (&id, &c) in &child.counters.paths {
        *paths.entry(id).or_default() += c;
    }
    let paths: Vec<(u64, u64)> = paths.into_iter().collect();
    let counts = derive(&cfg, &layout, &slots, &paths).unwrap();
    (counts, layout)
}

#[test]
fn a_fork_counts_the_prefix_once_and_each_process_after_it() {
    for mode in [Mode::Block, Mode::Edge, Mode::Path] {
        for early_exit in [false, true] {
            let (c, layout) = fork_once(mode, early_exit);
            let ctx = format!("{mode:?} early_exit={early_exit}");
            assert_eq!(c.entry, 1, "{ctx}: calls");
            assert_eq!(c.blocks, vec![1, 2, 1, 1, 2], "{ctx}: blocks");
            if mode != Mode::Block {
                assert_eq!(c.edges, Some(vec![2, 1, 1, 1, 1]), "{ctx}: edges");
                assert_eq!(c.lost, 0, "{ctx}: lost");
                assert!(c.imbalance.nodes.is_empty(), "{ctx}: {:?}", c.imbalance);
            }
            if let Layout::Path { dag, resumes, .. } = &layout {
                assert_eq!(resumes, &vec![EdgeId(0)]);
                let mut walked: Vec<(Vec<u32>, u64)> = c
                    .paths
                    .iter()
                    .map(|p| (p.path.blocks(dag).iter().map(|b| b.0).collect(), p.count))
                    .collect();
                walked.sort();
                assert_eq!(
                    walked,
                    vec![(vec![0], 1), (vec![1, 2, 4], 1), (vec![1, 3, 4], 1)],
                    "{ctx}: paths"
                );
            }
        }
    }
}

/// A child that ends inside a call after the fork, before its path is counted
/// (no early-exit counting): the return along the resume edge was counted as it
/// happened, so the lost path shows instead of vanishing.
#[test]
fn a_path_lost_after_a_return_is_reported() {
    let cfg = forking();
    let (plan, layout) = plan_function(&cfg, Mode::Path, &PlanOptions::default()).unwrap();
    let mut parent = Evaluator::new(&plan);
    parent.call(&cfg, &[EdgeId(0), EdgeId(2), EdgeId(4)]);
    // The child: only the return along e0 is counted, then it dies.
    let Layout::Path { self_loops, .. } = &layout else {
        panic!("path layout")
    };
    let mut slots = parent.counters.slots.clone();
    slots[self_loops.len()] += 1;
    let paths: Vec<(u64, u64)> = parent.counters.path_list();
    let c = derive(&cfg, &layout, &slots, &paths).unwrap();
    assert_eq!(c.lost, 1);
    assert_eq!(c.edges.as_ref().unwrap()[0], 2);
}
