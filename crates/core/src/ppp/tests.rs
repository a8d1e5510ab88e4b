//! The paper's examples (`shared/papers/FIGURES.md`): section 3.2's worked
//! example on Figure 3's DAG, and the graphs of Lemmas 2 and 3.

use super::classify::HOLE;
use super::{PathClass, PppError, PppNumbering};
use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdgeKind};
use crate::ids::DagEdgeId;
use crate::planner::planned_increments;
use crate::regen::regenerate;

/// A graph whose blocks are named by letters, `t` the exit.
struct Named {
    names: &'static str,
    cfg: Cfg,
    dag: Dag,
}

impl Named {
    fn new(names: &'static str, edges: &[&str]) -> Named {
        let block = |c: char| names.find(c).unwrap() as u32;
        let pairs: Vec<(u32, u32)> = edges
            .iter()
            .map(|e| {
                let mut cs = e.chars();
                (block(cs.next().unwrap()), block(cs.next().unwrap()))
            })
            .collect();
        let cfg = Cfg::from_edge_list(names.len(), &pairs).unwrap();
        let dag = Dag::build(&cfg, Default::default()).unwrap();
        Named { names, cfg, dag }
    }

    /// The same graph with these `Val`s on its CFG edges (0 on ENTRY's and
    /// EXIT's edges).
    fn with_vals(mut self, vals: &[u64]) -> Named {
        let dag = &self.dag;
        let val = dag
            .edge_ids()
            .map(|d| match dag.edge(d).kind {
                DagEdgeKind::Cfg(e) => vals[e.index()],
                _ => 0,
            })
            .collect();
        let edges = dag.edges().to_vec();
        let classes = dag.classes().to_vec();
        self.dag = Dag::from_numbering(dag.num_blocks(), edges, classes, val).unwrap();
        self
    }

    fn path_name(&self, id: u64) -> String {
        let path = regenerate(&self.dag, id).unwrap();
        let names: Vec<char> = self.names.chars().collect();
        path.blocks(&self.dag)
            .iter()
            .map(|b| names[b.index()])
            .collect()
    }

    /// The Ball-Larus id of the path through these blocks.
    fn id(&self, path: &str) -> u64 {
        (0..self.dag.num_paths())
            .find(|&id| self.path_name(id) == path)
            .unwrap_or_else(|| panic!("no path {path}"))
    }

    fn ids(&self, paths: &[&str]) -> Vec<u64> {
        paths.iter().map(|p| self.id(p)).collect()
    }

    fn edge(&self, e: &str) -> DagEdgeId {
        let mut cs = e.chars().map(|c| self.names.find(c).unwrap());
        let (from, to) = (cs.next().unwrap(), cs.next().unwrap());
        self.dag
            .edge_ids()
            .find(|&d| match self.dag.edge(d).kind {
                DagEdgeKind::Cfg(e) => {
                    let ce = self.cfg.edge(e);
                    (ce.from.index(), ce.to.index()) == (from, to)
                }
                _ => false,
            })
            .unwrap()
    }

    /// A path's (PPP sum, Ball-Larus sum).
    fn registers(&self, ppp: &PppNumbering, path: &str) -> (u64, u64) {
        let id = self.id(path);
        let edges = regenerate(&self.dag, id).unwrap().edges;
        (ppp.path_sum(&edges), id)
    }
}

/// Figure 3's DAG with Figure 3(a)'s Ball-Larus numbering.
fn figure3() -> Named {
    let edges = ["sa", "sb", "ab", "ac", "bc", "cd", "ct", "dt"];
    Named::new("sabcdt", &edges).with_vals(&[0, 4, 2, 0, 0, 0, 1, 0])
}

#[test]
fn figure3_ball_larus_ids() {
    let g = figure3();
    let names: Vec<String> = (0..6).map(|id| g.path_name(id)).collect();
    assert_eq!(names, ["sacdt", "sact", "sabcdt", "sabct", "sbcdt", "sbct"]);
}

#[test]
fn section_3_2_worked_example() {
    let g = figure3();
    let interesting = g.ids(&["sacdt", "sact", "sbct"]);
    assert_eq!(interesting, [0, 1, 5]);
    let ppp = PppNumbering::compute(&g.dag, &interesting).unwrap();
    let w = |e: &str| ppp.increment(g.edge(e));
    // Steps 2 to 6 of section 3.2.
    assert_eq!(
        [
            w("dt"),
            w("cd"),
            w("ct"),
            w("bc"),
            w("ac"),
            w("sa"),
            w("sb")
        ],
        [0, 0, 1, -1, 0, 0, 2]
    );
    assert!(
        !ppp.is_numbered(g.edge("ab")),
        "no interesting path takes a->b"
    );
    assert_eq!(w("ab"), 0);
    assert_eq!(ppp.ppp_id(0), Some(0), "sacdt");
    assert_eq!(ppp.ppp_id(1), Some(1), "sact");
    assert_eq!(ppp.ppp_id(5), Some(2), "sbct");
    assert_eq!((ppp.interval(), ppp.len()), (3, 3));
    assert_eq!((ppp.delta(), ppp.gamma()), (Some(1.0), Some(1.0)));
    // The array: slot k holds the Ball-Larus id of the path numbered k.
    let owners: Vec<Option<u64>> = (0..4).map(|k| ppp.slot_owner(k)).collect();
    assert_eq!(owners, [Some(0), Some(1), Some(5), None]);

    // Every path by its two registers. sbcdt aliases sact (PPP 1, as FIGURES.md
    // works out from these weights) and its Ball-Larus id 4 tells them apart;
    // sabct aliases sacdt; sabcdt's PPP sum is -1, below the interval.
    let want = [
        ("sacdt", (0, 0), PathClass::Interesting(0)),
        ("sact", (1, 1), PathClass::Interesting(1)),
        ("sabcdt", (u64::MAX, 2), PathClass::Residual(2)),
        ("sabct", (0, 3), PathClass::Residual(3)),
        ("sbcdt", (1, 4), PathClass::Residual(4)),
        ("sbct", (2, 5), PathClass::Interesting(2)),
    ];
    for (path, registers, class) in want {
        assert_eq!(g.registers(&ppp, path), registers, "{path}");
        assert_eq!(ppp.classify(registers.0, registers.1), class, "{path}");
    }
}

#[test]
fn both_registers_move_onto_path_modes_chords() {
    let g = figure3();
    let ppp = PppNumbering::compute(&g.dag, &[0, 1, 5]).unwrap();
    let bl = planned_increments(&g.cfg, &g.dag);
    let chords = ppp.chord_increments(&g.dag, &bl);
    assert_eq!(chords.in_tree, bl.in_tree);
    for id in 0..g.dag.num_paths() {
        let edges = regenerate(&g.dag, id).unwrap().edges;
        let sum = |inc: &[i64]| {
            edges
                .iter()
                .fold(0u64, |s, e| s.wrapping_add(inc[e.index()] as u64))
        };
        assert_eq!(sum(&bl.inc), id);
        assert_eq!(sum(&chords.inc), ppp.path_sum(&edges));
    }
    for e in g.dag.edge_ids().filter(|&e| !bl.is_chord(e)) {
        assert_eq!((bl.inc[e.index()], chords.inc[e.index()]), (0, 0));
    }
}

/// Lemma 2 (Figure 5): no assignment separates {sacet, sbcdt} from the other
/// paths. PPP does not try (section 3 drops condition 2(b)): it numbers the two
/// perfectly, and both other paths alias them; the Ball-Larus register tells
/// them apart.
#[test]
fn lemma2_no_separation_but_aliases_resolved() {
    let g = Named::new("sabcdet", &["sa", "sb", "ac", "bc", "cd", "ce", "dt", "et"]);
    let ppp = PppNumbering::compute(&g.dag, &g.ids(&["sacet", "sbcdt"])).unwrap();
    assert_eq!(ppp.ppp_id(g.id("sacet")), Some(0));
    assert_eq!(ppp.ppp_id(g.id("sbcdt")), Some(1));
    assert_eq!((ppp.interval(), ppp.delta()), (2, Some(1.0)));
    let (sacdt, sbcet) = (g.registers(&ppp, "sacdt"), g.registers(&ppp, "sbcet"));
    assert_eq!(
        (sacdt.0, sbcet.0),
        (0, 1),
        "inside the interval: no β separates"
    );
    assert_eq!(ppp.classify(sacdt.0, sacdt.1), PathClass::Residual(sacdt.1));
    assert_eq!(ppp.classify(sbcet.0, sbcet.1), PathClass::Residual(sbcet.1));
}

/// Lemma 3 (Figure 6): no assignment numbers these six paths 0 to 5 (their ids
/// always add up to an even number). PPP's joins at d leave one hole: the
/// interval is 7, δ = 7/6, the best possible here.
#[test]
fn lemma3_no_perfect_assignment_one_hole() {
    let edges = [
        "sa", "sb", "sc", "ad", "bd", "cd", "de", "df", "dg", "et", "ft", "gt",
    ];
    let g = Named::new("sabcdefgt", &edges);
    let paths = ["sadft", "sadgt", "sbdet", "sbdgt", "scdet", "scdft"];
    let ppp = PppNumbering::compute(&g.dag, &g.ids(&paths)).unwrap();
    let ids: Vec<u64> = paths.iter().map(|p| ppp.ppp_id(g.id(p)).unwrap()).collect();
    assert_eq!(ids, [0, 1, 2, 4, 5, 6]);
    assert_eq!(ids.iter().sum::<u64>() % 2, 0, "the lemma's parity");
    assert_eq!((ppp.interval(), ppp.len()), (7, 6));
    assert_eq!(ppp.delta(), Some(7.0 / 6.0));
    assert_eq!(ppp.slot_owner(3), Some(HOLE));
    // The joins: d->f serves sad (needs 0) and scd (needs 1), d->g sad (2) and
    // sbd (1); a->d then shifts sad's paths down by one.
    let w = |e: &str| ppp.increment(g.edge(e));
    assert_eq!([w("de"), w("df"), w("dg"), w("ad")], [0, 1, 2, -1]);
    let (p, bl) = g.registers(&ppp, "sadet");
    assert_eq!(ppp.classify(p, bl), PathClass::Residual(bl));
}

/// With every path interesting there is one prefix interval per edge and no
/// join loses anything: PPP is Ball-Larus numbering (section 4.4).
#[test]
fn all_paths_interesting_is_ball_larus() {
    let g = figure3();
    let all: Vec<u64> = (0..g.dag.num_paths()).collect();
    let ppp = PppNumbering::compute(&g.dag, &all).unwrap();
    for e in g.dag.edge_ids() {
        assert_eq!(ppp.increment(e), g.dag.val(e) as i64, "{e}");
    }
    assert_eq!((ppp.interval(), ppp.delta()), (6, Some(1.0)));
}

#[test]
fn no_interesting_path_and_bad_ids() {
    let g = figure3();
    let ppp = PppNumbering::compute(&g.dag, &[]).unwrap();
    assert!(ppp.is_empty());
    assert_eq!((ppp.interval(), ppp.delta(), ppp.gamma()), (0, None, None));
    assert!(ppp.increments().iter().all(|&w| w == 0));
    assert_eq!(ppp.classify(0, 0), PathClass::Residual(0));
    let err = PppNumbering::compute(&g.dag, &[2, 6]).unwrap_err();
    assert_eq!(
        err,
        PppError::OutOfRange {
            id: 6,
            num_paths: 6
        }
    );
    // Duplicates count once.
    let ppp = PppNumbering::compute(&g.dag, &[5, 5, 5]).unwrap();
    assert_eq!((ppp.len(), ppp.interval()), (1, 1));
}

#[test]
fn ppp_plan_of_the_worked_example_folds_back_to_ball_larus() {
    use crate::derive::derive;
    use crate::path::{plan_ppp, PathOptions};
    use crate::plan::Op;
    use crate::weights::Weights;
    // The planner's own DAG (Figure 5's numbering, not the figure's values).
    let g = Named::new("sabcdt", &["sa", "sb", "ab", "ac", "bc", "cd", "ct", "dt"]);
    let interesting = g.ids(&["sacdt", "sact", "sbct"]);
    let weights = Weights::estimate(&g.cfg);
    let options = PathOptions {
        ppp_min_paths: Some(0),
        ppp_two_registers: true,
        ..PathOptions::default()
    };
    let (plan, layout, numbering) = plan_ppp(&g.cfg, &weights, &options, &interesting).unwrap();
    assert_eq!((numbering.len(), numbering.interval()), (3, 3));
    let table = plan.ppp.as_ref().expect("a PPP plan");
    assert_eq!(table.packing, None);
    let owners: Vec<u64> = (0..3).map(|p| numbering.slot_owner(p).unwrap()).collect();
    assert_eq!((table.base, &table.owners), (0, &owners));
    assert_eq!(plan.num_slots, 3);
    let mut sorted = interesting.clone();
    sorted.sort_unstable();
    assert_eq!(layout.interesting(), sorted);
    // Below --ppp-min-paths: path mode's plan, the interesting paths marked.
    let (plain, plain_layout, _) =
        plan_ppp(&g.cfg, &weights, &PathOptions::default(), &interesting).unwrap();
    assert!(plain.ppp.is_none());
    assert_eq!(plain_layout.interesting(), sorted);
    // Paths end only in CountPpp; both registers start together.
    let ops: Vec<Op> = plan.probes.iter().flat_map(|p| p.ops.clone()).collect();
    assert!(ops.iter().any(|op| matches!(op, Op::CountPpp { .. })));
    assert!(!ops.iter().any(|op| matches!(op, Op::CountPath(_))));
    let sets = |ppp: bool| {
        ops.iter()
            .filter(|op| {
                matches!(op, Op::SetPpp(_)) == ppp && matches!(op, Op::SetPath(_) | Op::SetPpp(_))
            })
            .count()
    };
    assert_eq!(sets(true), sets(false));
    // Slot p counts path owners[p]; a residual path counts by its id.
    let sabct = g.id("sabct");
    let counts = derive(&g.cfg, &layout, &[5, 0, 2], &[(sabct, 1)]).unwrap();
    let mut want = vec![(owners[0], 5), (owners[2], 2), (sabct, 1)];
    want.sort_unstable();
    let got: Vec<(u64, u64)> = counts.paths.iter().map(|p| (p.id, p.count)).collect();
    assert_eq!(got, want);
    assert_eq!(counts.entry, 8);
}

/// Where Ball-Larus ids hash, PPP numbers a function only when it has more
/// interesting paths than `--ppp-cache-paths`: fewer, and path mode's
/// inline cache counts them (its plan, the interesting paths still marked).
#[test]
fn ppp_leaves_few_interesting_paths_of_a_hashing_function_to_the_cache() {
    use crate::path::{plan_ppp, PathOptions, PPP_CACHE_PATHS};
    use crate::plan::PathStorage;
    use crate::weights::Weights;
    let g = Named::new("sabcdt", &["sa", "sb", "ab", "ac", "bc", "cd", "ct", "dt"]);
    let interesting = g.ids(&["sacdt", "sact", "sbct"]);
    let weights = Weights::estimate(&g.cfg);
    let paths = g.dag.num_paths();
    let hashing = PathOptions {
        ppp_min_paths: Some(0),
        array_limit: paths - 1,
        ..PathOptions::default()
    };
    const { assert!(PPP_CACHE_PATHS >= 3) };
    let (cached, layout, numbering) = plan_ppp(&g.cfg, &weights, &hashing, &interesting).unwrap();
    assert!(
        cached.ppp.is_none(),
        "three interesting paths: the cache holds them"
    );
    assert!(
        matches!(cached.paths, PathStorage::Hash { .. }),
        "{:?}",
        cached.paths
    );
    assert_eq!(layout.interesting().len(), 3);
    assert_eq!(numbering.len(), 3);
    for (most, numbered) in [(Some(2), true), (Some(3), false), (Some(0), true)] {
        let options = PathOptions {
            ppp_cache_paths: most,
            ..hashing
        };
        assert_eq!(options.ppp_leaves_to_cache(paths, 3), !numbered);
        let (plan, _, _) = plan_ppp(&g.cfg, &weights, &options, &interesting).unwrap();
        assert_eq!(plan.ppp.is_some(), numbered, "--ppp-cache-paths {most:?}");
    }
    // Where the ids fit an array the cache plays no part.
    let array = PathOptions {
        array_limit: paths,
        ..hashing
    };
    assert!(!array.ppp_leaves_to_cache(paths, 3));
    let (plan, _, _) = plan_ppp(&g.cfg, &weights, &array, &interesting).unwrap();
    assert!(plan.ppp.is_some());
}

#[test]
fn ppp_plan_of_the_worked_example_packs_both_registers_in_one() {
    use crate::path::{plan_ppp, PathOptions};
    use crate::plan::Op;
    use crate::ppp::Packing;
    use crate::weights::Weights;
    let g = Named::new("sabcdt", &["sa", "sb", "ab", "ac", "bc", "cd", "ct", "dt"]);
    let interesting = g.ids(&["sacdt", "sact", "sbct"]);
    // Packed where Ball-Larus ids would hash.
    let paths = g.dag.num_paths();
    let options = PathOptions {
        ppp_min_paths: Some(0),
        ppp_cache_paths: Some(0),
        array_limit: paths - 1,
        ..PathOptions::default()
    };
    let weights = Weights::estimate(&g.cfg);
    let (small, _, _) = plan_ppp(
        &g.cfg,
        &weights,
        &PathOptions {
            array_limit: paths,
            ..options
        },
        &interesting,
    )
    .unwrap();
    assert_eq!(small.ppp.expect("a PPP plan").packing, None);
    let (plan, layout, numbering) = plan_ppp(&g.cfg, &weights, &options, &interesting).unwrap();
    let two = PathOptions {
        ppp_two_registers: true,
        ..options
    };
    let (unpacked, unpacked_layout, _) = plan_ppp(&g.cfg, &weights, &two, &interesting).unwrap();
    assert_eq!(layout, unpacked_layout, "the map does not change");
    // The paths' PPP sums run from -1 to 2: the low 2 bits hold the sum
    // plus 1, the Ball-Larus id is above them.
    let table = plan.ppp.as_ref().expect("a PPP plan");
    let packing = table.packing.expect("a packing");
    assert_eq!(
        packing,
        Packing {
            ppp_bits: 2,
            min: -1
        }
    );
    // The owner table is the window of sums -1..=2: sum -1 is no
    // interesting path's (a key whose low bits are not its entry's), the
    // others hold their path's key.
    let mut keys = vec![1u64];
    keys.extend(
        numbering
            .paths()
            .iter()
            .map(|n| (n.bl << packing.ppp_bits) | n.ppp.wrapping_sub(packing.min as u64)),
    );
    assert_eq!(table.table(), keys);
    // One register: no PPP register ops, every path ends in CountPacked.
    let ops: Vec<Op> = plan.probes.iter().flat_map(|p| p.ops.clone()).collect();
    assert!(ops
        .iter()
        .all(|op| matches!(op, Op::SetPath(_) | Op::AddPath(_) | Op::CountPacked(_))));
    assert!(ops.iter().any(|op| matches!(op, Op::CountPacked(_))));
    let count = |plan: &crate::plan::FunctionPlan| {
        plan.probes
            .iter()
            .flat_map(|p| &p.ops)
            .filter(|op| matches!(op, Op::CountPacked(_) | Op::CountPpp { .. }))
            .count()
    };
    assert_eq!(count(&plan), count(&unpacked), "the same path ends");
    // Every path's word splits into its PPP sum and Ball-Larus id.
    for id in 0..g.dag.num_paths() {
        let path = regenerate(&g.dag, id).unwrap();
        let word = path.edges.iter().fold(0u64, |x, &e| {
            x.wrapping_add(packing.word(g.dag.val(e) as i64, numbering.increment(e)) as u64)
        });
        let key = packing.key(word);
        assert_eq!(packing.split(key), (numbering.path_sum(&path.edges), id));
    }
}
