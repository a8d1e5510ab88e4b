//! Property tests of preferential path profiling ([`pathprof_core::ppp`]) on
//! random CFGs (reducible and irreducible, self loops, multi-edges,
//! unsplittable and resume edges, truncation cuts, early exits) with random
//! sets of interesting paths, against every path of the DAG regenerated from
//! its Ball-Larus id.

mod common;

use common::arb::arb_cfg;
use pathprof_core::dag::{Dag, DagOptions};
use pathprof_core::increments::ChordIncrements;
use pathprof_core::planner::planned_increments;
use pathprof_core::ppp::{
    select_paths, InterestingList, ListEntry, PathClass, PppNumbering, Selection,
};
use pathprof_core::regen::regenerate;
use pathprof_core::{BlockId, Cfg, DagEdgeId, NodeId};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};

/// DAGs with at most this many paths are checked path by path.
const MAX_PATHS: u64 = 3000;

/// One function's DAG, all its paths (by Ball-Larus id) and the PPP numbering
/// of some of them.
struct Case {
    cfg: Cfg,
    dag: Dag,
    paths: Vec<Vec<DagEdgeId>>,
    interesting: BTreeSet<u64>,
    ppp: PppNumbering,
}

/// DAG options: early exits or not, and `max_paths` as a fraction (in
/// eighths) of the function's untruncated path count, so that truncation cuts
/// happen often (8: no truncation).
fn arb_options() -> impl Strategy<Value = (bool, u64)> {
    (any::<bool>(), prop_oneof![Just(8u64), 1u64..8])
}

/// Interesting ids as picks taken modulo the path count, or every path.
fn arb_picks() -> impl Strategy<Value = (Vec<u64>, bool)> {
    (
        prop::collection::vec(any::<u64>(), 0..24),
        prop::bool::weighted(0.1),
    )
}

fn case(cfg: Cfg, (early_exit, eighths): (bool, u64), picks: &[u64], all: bool) -> Option<Case> {
    let mut options = DagOptions {
        early_exit,
        ..DagOptions::default()
    };
    let untruncated = Dag::build(&cfg, options).ok()?;
    // As few paths as truncation can reach at or above the fraction.
    options.max_paths = (untruncated.num_paths() * eighths / 8).max(2);
    let dag = loop {
        match Dag::build(&cfg, options) {
            Ok(dag) => break dag,
            Err(_) if options.max_paths < untruncated.num_paths() => options.max_paths *= 2,
            Err(_) => break untruncated,
        }
    };
    let n = dag.num_paths();
    if n == 0 || n > MAX_PATHS {
        return None;
    }
    let paths = (0..n)
        .map(|id| regenerate(&dag, id).unwrap().edges)
        .collect();
    // Picks may repeat: an id given twice counts once.
    let ids: Vec<u64> = if all {
        (0..n).collect()
    } else {
        picks.iter().map(|p| p % n).collect()
    };
    let ppp = PppNumbering::compute(&dag, &ids).unwrap();
    let interesting = ids.into_iter().collect();
    Some(Case {
        cfg,
        dag,
        paths,
        interesting,
        ppp,
    })
}

fn sum(incs: &[i64], path: &[DagEdgeId]) -> u64 {
    path.iter()
        .fold(0u64, |s, e| s.wrapping_add(incs[e.index()] as u64))
}

/// Whether some node is reached by two different prefixes of interesting
/// paths: only then can a join leave a hole.
fn prefixes_rejoin(case: &Case) -> bool {
    let mut prefix_at: HashMap<NodeId, u64> = HashMap::new();
    for &id in &case.interesting {
        let mut prefix = 0u64;
        for &e in &case.paths[id as usize] {
            let at = case.dag.edge(e).from;
            if *prefix_at.entry(at).or_insert(prefix) != prefix {
                return true;
            }
            prefix += case.dag.val(e);
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn interesting_ids_are_unique_and_inside_the_interval(
        cfg in arb_cfg(), options in arb_options(), (picks, all) in arb_picks()
    ) {
        let Some(c) = case(cfg, options, &picks, all) else { return Ok(()) };
        let ppp = &c.ppp;
        prop_assert_eq!(ppp.len(), c.interesting.len());
        prop_assert!(ppp.interval() <= c.dag.num_paths());
        prop_assert!(ppp.interval() >= ppp.len() as u64);
        let mut seen = BTreeSet::new();
        for &bl in &c.interesting {
            let id = ppp.ppp_id(bl).unwrap();
            prop_assert_eq!(ppp.path_sum(&c.paths[bl as usize]), id, "the id is the path's sum");
            prop_assert!(id < ppp.interval());
            prop_assert!(seen.insert(id), "PPP id {} given twice", id);
        }
        if let Some(delta) = ppp.delta() {
            prop_assert_eq!(seen.first(), Some(&0));
            prop_assert_eq!(delta, ppp.interval() as f64 / ppp.len() as f64);
            prop_assert!(delta >= 1.0);
            prop_assert_eq!(ppp.gamma(), Some(delta));
        }
    }

    /// The compactness bound is reached (interval = |I|, δ = 1) wherever no
    /// join can lose anything: when no node is reached by two interesting
    /// prefixes (a single path, paths that never meet again once apart), and
    /// when every path is interesting, where PPP is Ball-Larus numbering.
    #[test]
    fn interval_is_the_number_of_paths_when_no_join_loses(
        cfg in arb_cfg(), options in arb_options(), (picks, all) in arb_picks()
    ) {
        let Some(c) = case(cfg, options, &picks, all) else { return Ok(()) };
        if all {
            for e in c.dag.edge_ids() {
                prop_assert_eq!(c.ppp.increment(e), c.dag.val(e) as i64);
            }
        }
        if all || !prefixes_rejoin(&c) {
            prop_assert_eq!(c.ppp.interval(), c.interesting.len() as u64);
        }
        let one = picks.first().map_or(0, |p| p % c.dag.num_paths());
        let single = PppNumbering::compute(&c.dag, &[one]).unwrap();
        prop_assert_eq!((single.interval(), single.ppp_id(one)), (1, Some(0)));
    }

    #[test]
    fn two_registers_classify_every_path(
        cfg in arb_cfg(), options in arb_options(), (picks, all) in arb_picks()
    ) {
        let Some(c) = case(cfg, options, &picks, all) else { return Ok(()) };
        for (bl, path) in c.paths.iter().enumerate() {
            let bl = bl as u64;
            let want = match c.ppp.ppp_id(bl) {
                Some(id) => PathClass::Interesting(id),
                None => PathClass::Residual(bl),
            };
            prop_assert_eq!(c.interesting.contains(&bl), c.ppp.ppp_id(bl).is_some());
            prop_assert_eq!(c.ppp.classify(c.ppp.path_sum(path), bl), want);
        }
    }

    #[test]
    fn chord_increments_keep_both_registers_sums(
        cfg in arb_cfg(), options in arb_options(), (picks, all) in arb_picks(),
        weights in prop::collection::vec(0.0f64..100.0, 64),
    ) {
        let Some(c) = case(cfg, options, &picks, all) else { return Ok(()) };
        let path_mode = planned_increments(&c.cfg, &c.dag);
        let random = ChordIncrements::compute(&c.dag, |e| Some(weights[e.index() % weights.len()]));
        for bl_tree in [path_mode, random] {
            let ppp_tree = c.ppp.chord_increments(&c.dag, &bl_tree);
            prop_assert_eq!(&ppp_tree.in_tree, &bl_tree.in_tree);
            for e in c.dag.edge_ids().filter(|&e| !bl_tree.is_chord(e)) {
                prop_assert_eq!(ppp_tree.inc[e.index()], 0, "tree edges carry no PPP code");
            }
            for (bl, path) in c.paths.iter().enumerate() {
                prop_assert_eq!(sum(&bl_tree.inc, path), bl as u64);
                prop_assert_eq!(sum(&ppp_tree.inc, path), c.ppp.path_sum(path));
            }
        }
    }

    #[test]
    fn lists_read_back_what_was_written(
        entries in prop::collection::vec(
            (any::<String>(), any::<String>(), any::<u64>(), any::<u64>(),
             prop::collection::vec(any::<u32>(), 1..6), any::<Option<u64>>(),
             any::<Option<String>>()),
            0..6,
        )
    ) {
        let list = InterestingList {
            entries: entries
                .into_iter()
                .map(|(function, file, shape, id, blocks, count, note)| ListEntry {
                    function, file, shape, id,
                    blocks: blocks.into_iter().map(BlockId).collect(),
                    count, note,
                })
                .collect(),
        };
        let text = list.to_json();
        let k = list.entries.len();
        prop_assert_eq!(text.lines().count(), if k == 0 { 5 } else { k + 6 }, "one path per line");
        prop_assert_eq!(InterestingList::parse(&text).unwrap(), list);
    }

    /// `--top-share x` takes the hottest paths, as few as cover `x` of the
    /// executions.
    #[test]
    fn top_share_takes_the_fewest_hottest_paths(
        counts in prop::collection::vec((0u64..50, 0u64..1000), 0..30),
        share in 0.01f64..=1.0,
    ) {
        let chosen = select_paths(&counts, &Selection::new(1, Some(share)).unwrap());
        let all = select_paths(&counts, &Selection::default());
        let total: u64 = all.iter().map(|&(_, c)| c).sum();
        let covered: u64 = chosen.iter().map(|&(_, c)| c).sum();
        prop_assert!(covered as f64 >= share * total as f64);
        let Some(coldest) = chosen.iter().map(|&(_, c)| c).min() else {
            prop_assert_eq!(total, 0);
            return Ok(());
        };
        prop_assert!(((covered - coldest) as f64) < share * total as f64, "one path fewer falls short");
        for p in all.iter().filter(|p| !chosen.contains(p)) {
            prop_assert!(p.1 <= coldest, "a hotter path was left out");
        }
    }
}
