//! Property tests on random CFGs — reducible and irreducible, with self loops,
//! multi-edges, unreachable blocks, unsplittable edges and resume edges (after
//! `fork`/`setjmp`) — against brute-force
//! path enumeration and an evaluator that runs the plans along random walks.

mod common;

use common::arb::arb_cfg;
use common::{enumerate_paths, expected_path_counts_ending, make_walk, walk_counts, Evaluator};
use pathprof_core::dag::{Dag, DagOptions};
use pathprof_core::derive::derive;
use pathprof_core::increments::ChordIncrements;
use pathprof_core::planner::{plan_function, PlanError, PlanOptions};
use pathprof_core::regen::{path_id, regenerate};
use pathprof_core::{Cfg, EdgeId, Mode};
use proptest::prelude::*;

fn arb_walks() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..6)
}

fn check_numbering(dag: &Dag) -> Result<(), TestCaseError> {
    let Some(paths) = enumerate_paths(dag, 20_000) else {
        return Ok(());
    };
    prop_assert_eq!(paths.len() as u64, dag.num_paths());
    let mut ids: Vec<u64> = paths.iter().map(|p| path_id(dag, p)).collect();
    ids.sort();
    prop_assert!(
        ids.iter().copied().eq(0..dag.num_paths()),
        "ids are exactly 0..N"
    );
    for p in &paths {
        let id = path_id(dag, p);
        prop_assert_eq!(&regenerate(dag, id).unwrap().edges, p);
    }
    Ok(())
}

/// Walks from `choices`; with `deaths`, some end inside a call of their last
/// block (early termination).
fn walks_of(cfg: &Cfg, choices: &[Vec<u8>], deaths: bool) -> Vec<(Vec<EdgeId>, Option<u32>)> {
    choices
        .iter()
        .filter_map(|c| {
            let walk = make_walk(cfg, c, 30)?;
            let pick = c.first().copied().unwrap_or(0) as usize;
            if !deaths || !pick.is_multiple_of(3) {
                return Some((walk, None));
            }
            let cut = (pick / 3) % (walk.len() + 1);
            let prefix = walk[..cut].to_vec();
            let last = prefix.last().map_or(cfg.entry(), |&e| cfg.edge(e).to);
            match cfg.calls(last) {
                0 => Some((walk, None)),
                n => Some((prefix, Some(pick as u32 % n))),
            }
        })
        .collect()
}

fn check_walks(
    cfg: &Cfg,
    mode: Mode,
    options: &PlanOptions,
    choices: &[Vec<u8>],
) -> Result<(), TestCaseError> {
    let (plan, layout) = match plan_function(cfg, mode, options) {
        Ok(x) => x,
        Err(PlanError::Edge(_)) => return Ok(()), // unsplittable cycle: a typed refusal
        Err(e) => return Err(TestCaseError::fail(e.to_string())),
    };
    let deaths = options.path.dag.early_exit || mode == Mode::Block;
    let walks = walks_of(cfg, choices, deaths);
    if walks.is_empty() {
        return Ok(());
    }
    let mut ev = Evaluator::new(&plan);
    for (w, dies_in) in &walks {
        ev.call_ending(cfg, w, *dies_in);
    }
    if let pathprof_core::layout::Layout::Path { dag, .. } = &layout {
        prop_assert_eq!(
            &ev.counters.paths,
            &expected_path_counts_ending(cfg, dag, &walks)
        );
        prop_assert_eq!(
            layout_lost(cfg, &layout, &ev),
            0,
            "nothing is lost with early-exit counting or without deaths"
        );
    }
    let walks: Vec<Vec<EdgeId>> = walks.into_iter().map(|(w, _)| w).collect();
    let counts = derive(cfg, &layout, &ev.counters.slots, &ev.counters.path_list())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (edges, blocks, calls) = walk_counts(cfg, &walks);
    prop_assert_eq!(&counts.blocks, &blocks);
    prop_assert_eq!(counts.entry, calls);
    if let Some(derived) = &counts.edges {
        prop_assert_eq!(derived, &edges);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn numbering_is_compact_unique_and_invertible(cfg in arb_cfg()) {
        let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
        check_numbering(&dag)?;
    }

    #[test]
    fn truncation_keeps_ids_unique_and_regeneration_exact(cfg in arb_cfg(), max in 256u64..1000) {
        let dag = Dag::build(&cfg, DagOptions { max_paths: max, early_exit: false }).unwrap();
        prop_assert!(dag.num_paths() <= max);
        check_numbering(&dag)?;
    }

    #[test]
    fn chord_sums_equal_val_sums(cfg in arb_cfg(), weights in prop::collection::vec(0.0f64..100.0, 64)) {
        let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
        let incs = ChordIncrements::compute(&dag, |e| Some(weights[e.index() % weights.len()]));
        if let Some(paths) = enumerate_paths(&dag, 20_000) {
            for p in paths {
                let chord_sum = p.iter().fold(0u64, |s, e| s.wrapping_add(incs.inc[e.index()] as u64));
                prop_assert_eq!(chord_sum, path_id(&dag, &p));
            }
        }
    }

    #[test]
    fn path_plans_count_exactly_the_walked_paths(cfg in arb_cfg(), walks in arb_walks()) {
        check_walks(&cfg, Mode::Path, &PlanOptions::default(), &walks)?;
    }

    #[test]
    fn truncated_path_plans_count_exactly(cfg in arb_cfg(), walks in arb_walks(), max in 256u64..400) {
        check_walks(&cfg, Mode::Path, &PlanOptions::default().with_max_paths(max), &walks)?;
    }

    #[test]
    fn small_arrays_and_hash_tables_agree(cfg in arb_cfg(), walks in arb_walks()) {
        let mut hashed = PlanOptions::default();
        hashed.path.array_limit = 0;
        check_walks(&cfg, Mode::Path, &hashed, &walks)?;
    }

    #[test]
    fn early_exit_paths_count_executions_cut_short(cfg in arb_cfg(), walks in arb_walks()) {
        check_walks(&cfg, Mode::Path, &PlanOptions::default().with_early_exit(true), &walks)?;
    }

    #[test]
    fn early_exit_edges_count_executions_cut_short(cfg in arb_cfg(), walks in arb_walks()) {
        check_walks(&cfg, Mode::Edge, &PlanOptions::default().with_early_exit(true), &walks)?;
    }

    #[test]
    fn truncated_early_exit_paths_count_exactly(cfg in arb_cfg(), walks in arb_walks(), max in 256u64..400) {
        check_walks(&cfg, Mode::Path, &PlanOptions::default().with_early_exit(true).with_max_paths(max), &walks)?;
    }

    #[test]
    fn edge_plans_derive_exact_edge_counts(cfg in arb_cfg(), walks in arb_walks()) {
        check_walks(&cfg, Mode::Edge, &PlanOptions::default(), &walks)?;
    }

    #[test]
    fn block_plans_count_blocks(cfg in arb_cfg(), walks in arb_walks()) {
        check_walks(&cfg, Mode::Block, &PlanOptions::default(), &walks)?;
    }

    #[test]
    fn measured_weights_give_exact_plans_too(cfg in arb_cfg(), walks in arb_walks()) {
        let walks_e: Vec<Vec<EdgeId>> = walks.iter().filter_map(|c| make_walk(&cfg, c, 30)).collect();
        let (edges, _, _) = walk_counts(&cfg, &walks_e);
        let options = PlanOptions { edge_counts: Some(edges), ..PlanOptions::default() };
        check_walks(&cfg, Mode::Path, &options, &walks)?;
        check_walks(&cfg, Mode::Edge, &options, &walks)?;
    }
}

fn layout_lost(cfg: &Cfg, layout: &pathprof_core::layout::Layout, ev: &Evaluator<'_>) -> u64 {
    derive(cfg, layout, &ev.counters.slots, &ev.counters.path_list()).map_or(0, |c| c.lost)
}
