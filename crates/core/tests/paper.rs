//! The papers' worked examples (`shared/papers/FIGURES.md`) and a loop graph in the
//! style of Ball-Larus Figure 10 whose path sums are derived by hand.

mod common;

use common::{expected_path_counts, Evaluator};
use pathprof_core::dag::{Dag, DagEdgeKind, DagOptions};
use pathprof_core::increments::ChordIncrements;
use pathprof_core::path::{transcribe, PathOptions};
use pathprof_core::plan::{Op, ProbeSite};
use pathprof_core::regen::regenerate;
use pathprof_core::{BlockId, Cfg, EdgeId};

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;
const D: u32 = 3;
const E: u32 = 4;
const F: u32 = 5;

/// Ball-Larus Figure 1/6: successors listed so that Figure 5 with "fewest paths
/// first" (stable on ties) yields the paper's values.
fn figure6() -> Cfg {
    Cfg::from_edge_list(
        6,
        &[
            (A, C),
            (A, B),
            (B, C),
            (B, D),
            (C, D),
            (D, F),
            (D, E),
            (E, F),
        ],
    )
    .unwrap()
}

fn letters(blocks: &[BlockId]) -> String {
    blocks.iter().map(|b| (b'A' + b.0 as u8) as char).collect()
}

fn dag_edge(dag: &Dag, from: u32, to: u32, cfg: &Cfg) -> pathprof_core::DagEdgeId {
    let e = cfg
        .edge_ids()
        .find(|&e| cfg.edge(e).from.0 == from && cfg.edge(e).to.0 == to)
        .unwrap();
    dag.edge_ids()
        .find(|&d| dag.edge(d).kind == DagEdgeKind::Cfg(e))
        .unwrap()
}

#[test]
fn figure6_values_and_path_ids() {
    let cfg = figure6();
    let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
    let val = |f, t| dag.val(dag_edge(&dag, f, t, &cfg));
    assert_eq!(
        [
            val(A, B),
            val(A, C),
            val(B, C),
            val(B, D),
            val(C, D),
            val(D, E),
            val(D, F),
            val(E, F)
        ],
        [2, 0, 0, 2, 0, 1, 0, 0]
    );
    let np: Vec<u64> = (0..6)
        .map(|b| dag.node_paths(dag.node(BlockId(b))))
        .collect();
    assert_eq!(np, [6, 4, 2, 2, 1, 1]);
    assert_eq!(dag.num_paths(), 6);
    let ids: Vec<String> = (0..6)
        .map(|id| letters(&regenerate(&dag, id).unwrap().blocks(&dag)))
        .collect();
    assert_eq!(ids, ["ACDF", "ACDEF", "ABCDF", "ABCDEF", "ABDF", "ABDEF"]);
    // Section 3.5's example.
    assert_eq!(
        letters(&regenerate(&dag, 3).unwrap().blocks(&dag)),
        "ABCDEF"
    );
    assert!(regenerate(&dag, 6).is_err());
}

/// Figure 7's tree {A→B, C→D, D→F, E→F, F→A} (F→A is our EXIT→ENTRY, with the
/// virtual ENTRY→A and F→EXIT edges on the tree too).
fn figure7_tree(cfg: &Cfg, dag: &Dag) -> Vec<bool> {
    let tree_cfg = [(A, B), (C, D), (D, F), (E, F)];
    dag.edge_ids()
        .map(|d| match dag.edge(d).kind {
            DagEdgeKind::Entry | DagEdgeKind::Exit(_) => true,
            DagEdgeKind::Cfg(e) => {
                let ce = cfg.edge(e);
                tree_cfg.contains(&(ce.from.0, ce.to.0))
            }
            _ => false,
        })
        .collect()
}

#[test]
fn figure7_chord_increments() {
    let cfg = figure6();
    let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
    let incs = ChordIncrements::with_tree(&dag, figure7_tree(&cfg, &dag));
    let inc = |f, t| incs.inc[dag_edge(&dag, f, t, &cfg).index()];
    assert_eq!([inc(A, C), inc(B, C), inc(B, D), inc(D, E)], [0, 2, 4, 1]);
    // Every path's chord sum equals its Val sum.
    for id in 0..6 {
        let p = regenerate(&dag, id).unwrap();
        let sum: i64 = p.edges.iter().map(|e| incs.inc[e.index()]).sum();
        assert_eq!(sum as u64, id);
    }
}

#[test]
fn figure9_placement() {
    let cfg = figure6();
    let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
    let incs = ChordIncrements::with_tree(&dag, figure7_tree(&cfg, &dag));
    let (plan, _) = transcribe(&cfg, dag, &incs, &PathOptions::default());
    let edge = |f: u32, t: u32| {
        ProbeSite::Edge(
            cfg.edge_ids()
                .find(|&e| cfg.edge(e).from.0 == f && cfg.edge(e).to.0 == t)
                .unwrap(),
        )
    };
    let got: Vec<(ProbeSite, Vec<Op>)> = plan
        .probes
        .iter()
        .map(|p| (p.site, p.ops.clone()))
        .collect();
    let mut want = vec![
        (edge(A, C), vec![Op::SetPath(0)]),
        (edge(B, C), vec![Op::SetPath(2)]),
        (edge(B, D), vec![Op::SetPath(4)]),
        (edge(D, F), vec![Op::CountPath(0)]),
        (edge(D, E), vec![Op::CountPath(1)]),
    ];
    want.sort_by_key(|(s, _)| *s);
    assert_eq!(got, want, "r=0 on A->C, r=2 on B->C, r=4 on B->D, count[r+1]++ on D->E, count[r]++ on D->F, nothing on E->F");
}

/// A loop in the style of Figure 10: A→B, B→C, B→D, C→E, D→E, E→B (backedge),
/// E→F, F returns. The DAG adds ENTRY→B and E→EXIT for the backedge.
///
/// NumPaths: F 1, E 2 (E→EXIT, E→F), C 2, D 2, B 4, A 4, ENTRY 8. Val (fewest
/// paths first, ties in edge order): ENTRY→A 0, ENTRY→B 4, B→C 0, B→D 2,
/// E→EXIT 0, E→F 1, all others 0. So by hand:
///
/// | id | path | | id | path (after the backedge) |
/// |---|---|---|---|---|
/// | 0 | A B C E ↩ | | 4 | B C E ↩ |
/// | 1 | A B C E F | | 5 | B C E F |
/// | 2 | A B D E ↩ | | 6 | B D E ↩ |
/// | 3 | A B D E F | | 7 | B D E F |
#[test]
fn loop_graph_path_sums_by_hand() {
    let cfg =
        Cfg::from_edge_list(6, &[(A, B), (B, C), (B, D), (C, E), (D, E), (E, B), (E, F)]).unwrap();
    let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
    assert_eq!(dag.num_paths(), 8);
    let want = [
        ("ABCE", true, false),
        ("ABCEF", false, false),
        ("ABDE", true, false),
        ("ABDEF", false, false),
        ("BCE", true, true),
        ("BCEF", false, true),
        ("BDE", true, true),
        ("BDEF", false, true),
    ];
    for (id, (blocks, ends_at_back, starts_after_back)) in want.iter().enumerate() {
        let p = regenerate(&dag, id as u64).unwrap();
        assert_eq!(letters(&p.blocks(&dag)), *blocks, "path {id}");
        let back = pathprof_core::regen::PathEnd::Edge(EdgeId(5));
        assert_eq!(p.end(&dag) == back, *ends_at_back, "path {id} end");
        assert_eq!(p.start(&dag) == back, *starts_after_back, "path {id} start");
    }
    // Run the planned instrumentation on A B C E B D E B D E F.
    let (plan, _) = pathprof_core::path::plan_paths(
        &cfg,
        &pathprof_core::weights::Weights::estimate(&cfg),
        &PathOptions::default(),
    )
    .unwrap();
    let walk: Vec<EdgeId> = [0, 1, 3, 5, 2, 4, 5, 2, 4, 6].map(EdgeId).to_vec();
    let mut ev = Evaluator::new(&plan);
    ev.call(&cfg, &walk);
    assert_eq!(ev.counters.path_list(), vec![(0, 1), (6, 1), (7, 1)]);
    assert_eq!(
        ev.counters.paths,
        expected_path_counts(&cfg, &dag_of(&cfg), &[walk])
    );
}

fn dag_of(cfg: &Cfg) -> Dag {
    Dag::build(cfg, DagOptions::default()).unwrap()
}

#[test]
fn self_loop_is_counted_apart() {
    // A→B, B→B, B→C: the self loop keeps ABC one path and gets a slot.
    let cfg = Cfg::from_edge_list(3, &[(0, 1), (1, 1), (1, 2)]).unwrap();
    let dag = dag_of(&cfg);
    assert_eq!(dag.num_paths(), 1);
    let (plan, layout) = pathprof_core::path::plan_paths(
        &cfg,
        &pathprof_core::weights::Weights::estimate(&cfg),
        &PathOptions::default(),
    )
    .unwrap();
    let mut ev = Evaluator::new(&plan);
    ev.call(
        &cfg,
        &[EdgeId(0), EdgeId(1), EdgeId(1), EdgeId(1), EdgeId(2)],
    );
    assert_eq!(ev.counters.slots, vec![3]);
    let counts =
        pathprof_core::derive::derive(&cfg, &layout, &ev.counters.slots, &ev.counters.path_list())
            .unwrap();
    assert_eq!(counts.edges.unwrap(), vec![1, 3, 1]);
    assert_eq!(counts.blocks, vec![1, 4, 1]);
}

#[test]
fn truncation_cuts_and_reports_when_impossible() {
    // A chain of ten if-then-else diamonds has 2^10 paths; allowing 200 forces
    // cuts (section 5.3).
    let mut edges = Vec::new();
    for d in 0..10u32 {
        let (top, left, right, join) = (3 * d, 3 * d + 1, 3 * d + 2, 3 * d + 3);
        edges.extend([(top, left), (top, right), (left, join), (right, join)]);
    }
    let chain = Cfg::from_edge_list(31, &edges).unwrap();
    assert_eq!(
        Dag::build(&chain, DagOptions::default())
            .unwrap()
            .num_paths(),
        1024
    );
    let dag = Dag::build(
        &chain,
        DagOptions {
            max_paths: 200,
            early_exit: false,
        },
    )
    .unwrap();
    assert!(dag.num_paths() <= 200, "{}", dag.num_paths());
    assert!(dag.cuts().count() > 0);
    for id in 0..dag.num_paths() {
        let p = regenerate(&dag, id).unwrap();
        assert_eq!(pathprof_core::regen::path_id(&dag, &p.edges), id);
    }
    let err = Dag::build(
        &figure6(),
        DagOptions {
            max_paths: 1,
            early_exit: false,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("lower --max-paths"), "{err}");
}

/// A loop whose body calls a function that finally calls `exit()`: A→B, B→C,
/// C→B (backedge), C→D; the process dies inside C's call on the 2nd iteration.
#[test]
fn early_termination_is_lost_without_and_counted_with_early_exit() {
    let mut cfg = Cfg::from_edge_list(4, &[(0, 1), (1, 2), (2, 1), (2, 3)]).unwrap();
    cfg.set_calls(vec![0, 0, 1, 0]).unwrap();
    let walk = [EdgeId(0), EdgeId(1), EdgeId(2), EdgeId(1)]; // A B C B C †
    for early_exit in [false, true] {
        let options = pathprof_core::planner::PlanOptions::default().with_early_exit(early_exit);
        let (plan, layout) =
            pathprof_core::planner::plan_function(&cfg, pathprof_core::Mode::Path, &options)
                .unwrap();
        let mut ev = Evaluator::new(&plan);
        ev.call_ending(&cfg, &walk, Some(0));
        let counts = pathprof_core::derive::derive(
            &cfg,
            &layout,
            &ev.counters.slots,
            &ev.counters.path_list(),
        )
        .unwrap();
        if early_exit {
            assert_eq!(counts.lost, 0);
            assert_eq!(
                counts.blocks,
                vec![1, 2, 2, 0],
                "exact, as block counting gives"
            );
            assert_eq!(counts.edges.unwrap(), vec![1, 2, 1, 0]);
        } else {
            // The last path (B C †) was never counted: reported, not an error.
            assert_eq!(counts.lost, 1);
            assert_eq!(counts.blocks, vec![1, 2, 1, 0]);
        }
    }
}
