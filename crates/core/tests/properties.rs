//! Property tests on random CFGs — reducible and irreducible, with self loops,
//! multi-edges, unreachable blocks, unsplittable edges and resume edges (after
//! `fork`/`setjmp`) — against brute-force
//! path enumeration and an evaluator that runs the plans along random walks.

mod common;

use common::arb::arb_cfg;
use common::{enumerate_paths, expected_path_counts_ending, make_walk, walk_counts, Evaluator};
use pathprof_core::dag::{Dag, DagOptions};
use pathprof_core::derive::{derive, derive_with_resumes, Resumes};
use pathprof_core::increments::ChordIncrements;
use pathprof_core::plan::Op;
use pathprof_core::planner::{plan_function, plan_function_ppp, PlanError, PlanOptions};
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
    // Callers that give the entry count give how often the walks began.
    let known_entry = (options.entry_from_callers && layout.takes_entry_from_callers())
        .then_some(walks.len() as u64);
    if let (pathprof_core::layout::Layout::Path { dag, .. }, None) = (&layout, known_entry) {
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
    let counts = derive_with_resumes(
        cfg,
        &layout,
        &ev.counters.slots,
        &ev.counters.path_list(),
        Resumes::default(),
        known_entry,
    )
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    check_walk_counts(cfg, &counts, &walks)
}

/// Derived block, call and edge counts equal those of the walks.
fn check_walk_counts(
    cfg: &Cfg,
    counts: &pathprof_core::derive::FunctionCounts,
    walks: &[Vec<EdgeId>],
) -> Result<(), TestCaseError> {
    let (edges, blocks, calls) = walk_counts(cfg, walks);
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
    fn plans_given_the_entry_count_by_callers_count_exactly(cfg in arb_cfg(), walks in arb_walks()) {
        let options = PlanOptions { entry_from_callers: true, ..PlanOptions::default() };
        for mode in [Mode::Block, Mode::Edge, Mode::Path] {
            check_walks(&cfg, mode, &options, &walks)?;
        }
        // The chord the entry count replaces is all that sets the plan apart
        // from the one that counts the entry, so a reader can go back to it.
        for mode in [Mode::Block, Mode::Edge] {
            use pathprof_core::layout::Layout;
            let (Ok((_, given)), Ok((_, counted))) = (
                plan_function(&cfg, mode, &options),
                plan_function(&cfg, mode, &PlanOptions::default()),
            ) else {
                continue;
            };
            if let (
                Layout::Edge { counted: mut fewer, entry_replaces: Some(chord), .. },
                Layout::Edge { counted: all, entry_replaces: None, .. },
            ) = (given, counted)
            {
                fewer.push(chord);
                fewer.sort();
                let mut all = all;
                all.sort();
                prop_assert_eq!(fewer, all);
            }
        }
        let early_exit = options.with_early_exit(true);
        check_walks(&cfg, Mode::Edge, &early_exit, &walks)?;
        check_walks(&cfg, Mode::Path, &early_exit, &walks)?;
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

/// A PPP plan run along random walks: the walks of `train` (a prefix of the
/// walks) make the interesting set, with `picks` (Ball-Larus ids modulo the
/// path count) added. Both registers must count every walked path exactly,
/// folded back into a Ball-Larus profile by the layout; interesting paths in
/// the PPP slots, the others (residual) by Ball-Larus id.
fn check_ppp_walks(
    cfg: &Cfg,
    options: &PlanOptions,
    choices: &[Vec<u8>],
    train: usize,
    picks: &[u64],
) -> Result<(), TestCaseError> {
    let Ok(dag) = Dag::build(cfg, options.path.dag) else {
        return Ok(());
    };
    let deaths = options.path.dag.early_exit;
    let walks = walks_of(cfg, choices, deaths);
    let n = dag.num_paths();
    let mut interesting: Vec<u64> =
        expected_path_counts_ending(cfg, &dag, &walks[..train.min(walks.len())])
            .into_keys()
            .collect();
    interesting.extend(picks.iter().map(|p| p % n));
    interesting.sort_unstable();
    interesting.dedup();
    let (plan, layout, numbering) = plan_function_ppp(cfg, options, &interesting)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let pathprof_core::layout::Layout::Path {
        dag: planned,
        ppp_owners,
        ..
    } = &layout
    else {
        return Err(TestCaseError::fail("a PPP plan has a path layout"));
    };
    prop_assert_eq!(planned, &dag, "the DAG and Ball-Larus ids of path mode");
    let (path_plan, _) = plan_function(cfg, Mode::Path, options).unwrap();
    prop_assert_eq!(
        &path_plan.paths,
        &plan.paths,
        "residual paths stored as path mode's"
    );
    let min_paths = options
        .path
        .ppp_min_paths
        .unwrap_or(options.path.array_limit);
    let uses_ppp = !interesting.is_empty()
        && n > min_paths
        && !options.path.ppp_leaves_to_cache(n, numbering.len())
        && numbering.interval() <= options.path.interval_limit();
    prop_assert_eq!(plan.ppp.is_some(), uses_ppp);
    // Random CFGs have few paths: their registers always fit one word,
    // packed where the Ball-Larus ids hash.
    let packed = uses_ppp && !options.path.ppp_two_registers && n > options.path.array_limit;
    prop_assert_eq!(plan.ppp.as_ref().and_then(|t| t.packing).is_some(), packed);
    let ops = || plan.probes.iter().flat_map(|p| &p.ops);
    prop_assert_eq!(ops().any(|op| matches!(op, Op::CountPacked(_))), packed);
    let two_register_ops =
        ops().any(|op| matches!(op, Op::SetPpp(_) | Op::AddPpp(_) | Op::CountPpp { .. }));
    prop_assert_eq!(two_register_ops, uses_ppp && !packed);
    prop_assert_eq!(
        ppp_owners.len() as u64,
        if uses_ppp { numbering.interval() } else { 0 }
    );
    prop_assert_eq!(layout.interesting(), &interesting[..]);
    if walks.is_empty() {
        return Ok(());
    }
    let mut ev = Evaluator::new(&plan);
    for (w, dies_in) in &walks {
        ev.call_ending(cfg, w, *dies_in);
    }
    let expected = expected_path_counts_ending(cfg, &dag, &walks);
    // Residual paths only in the table, interesting ones only in slots.
    for id in ev.counters.paths.keys() {
        prop_assert!(
            !uses_ppp || interesting.binary_search(id).is_err(),
            "path {} is interesting but hashed",
            id
        );
    }
    let want_hits: u64 = expected
        .iter()
        .filter(|(id, _)| uses_ppp && interesting.binary_search(id).is_ok())
        .map(|(_, &c)| c)
        .sum();
    let base = plan.ppp.as_ref().map_or(0, |t| t.base as usize);
    let slot_counts: u64 = if uses_ppp {
        ev.counters.slots[base..].iter().sum()
    } else {
        0
    };
    prop_assert_eq!(slot_counts, want_hits);
    let counts = derive(cfg, &layout, &ev.counters.slots, &ev.counters.path_list())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let derived: std::collections::BTreeMap<u64, u64> =
        counts.paths.iter().map(|p| (p.id, p.count)).collect();
    prop_assert_eq!(&derived, &expected);
    prop_assert_eq!(counts.lost, 0);
    let walks: Vec<Vec<EdgeId>> = walks.into_iter().map(|(w, _)| w).collect();
    check_walk_counts(cfg, &counts, &walks)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn ppp_plans_count_exactly_the_walked_paths(
        cfg in arb_cfg(), walks in arb_walks(), train in 0usize..6,
        picks in prop::collection::vec(any::<u64>(), 0..8), two in any::<bool>(),
    ) {
        let options = registers(numbering_all(PlanOptions::default()), two);
        check_ppp_walks(&cfg, &options, &walks, train, &picks)?;
    }

    #[test]
    fn ppp_plans_with_hashed_residuals_and_cuts(
        cfg in arb_cfg(), walks in arb_walks(), train in 0usize..6,
        picks in prop::collection::vec(any::<u64>(), 0..8), max in 256u64..400,
        two in any::<bool>(),
    ) {
        let mut options = PlanOptions::default().with_max_paths(max);
        // Residual paths hash (the Ball-Larus count is above the limit) while
        // the PPP interval usually fits; PPP numbers only those functions
        // (the default --ppp-min-paths).
        options.path.array_limit = 12;
        check_ppp_walks(&cfg, &registers(options, two), &walks, train, &picks)?;
    }

    #[test]
    fn ppp_plans_count_executions_cut_short(
        cfg in arb_cfg(), walks in arb_walks(), train in 0usize..6,
        picks in prop::collection::vec(any::<u64>(), 0..8), two in any::<bool>(),
    ) {
        let options = registers(numbering_all(PlanOptions::default().with_early_exit(true)), two);
        check_ppp_walks(&cfg, &options, &walks, train, &picks)?;
    }
}

/// Two registers, or one word where they fit (the default, where
/// Ball-Larus ids hash: here in any function of more than 4 paths). Both
/// ways number the same functions: the PPP thresholds are pinned to what
/// `options` made them before the array limit shrinks for packing.
fn registers(mut options: PlanOptions, two: bool) -> PlanOptions {
    let path = &mut options.path;
    path.ppp_two_registers = two;
    path.ppp_min_paths = Some(path.ppp_min_paths.unwrap_or(path.array_limit));
    path.ppp_interval_limit = Some(path.interval_limit());
    // Numbered however few their interesting paths (path mode's inline
    // cache would hold them): the registers are what is tested.
    path.ppp_cache_paths.get_or_insert(0);
    if !two {
        path.array_limit = path.array_limit.min(4);
    }
    options
}

/// PPP numbering wherever a function has interesting paths.
fn numbering_all(mut options: PlanOptions) -> PlanOptions {
    options.path.ppp_min_paths = Some(0);
    options
}

fn layout_lost(cfg: &Cfg, layout: &pathprof_core::layout::Layout, ev: &Evaluator<'_>) -> u64 {
    derive(cfg, layout, &ev.counters.slots, &ev.counters.path_list()).map_or(0, |c| c.lost)
}
