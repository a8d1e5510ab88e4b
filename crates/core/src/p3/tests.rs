//! The paper's examples (Afraz et al. 2015, sections 2.2, 3.1 and 3.2). The
//! text lost its figures and `shared/papers/FIGURES.md` has none of this
//! paper's, so the graph is rebuilt from what the text says of Figures 1, 3
//! and 4, and checked against every number it gives:
//!
//! ```text
//! s ─▶ v0 ─────────────────────────────────────────────────▶ x
//! s ─▶ v1 ─▶ v2 ─▶ v3 ─────────────────────────────▶ v11 ─▶ x
//!             v2 ─▶ v4 ◇ v7 ◇ v10 ──────────────────▶ v11
//!       v1 ─▶ v12 ◇ v15 ◇ v18 ◇ v21 ────────────────▶ v11
//! ```
//!
//! where `a ◇ d` is a diamond `a→{b, c}→d`: `v4→{v6, v5}→v7`,
//! `v7→{v9, v8}→v10`, `v12→{v13, v14}→v15`, `v15→{v17, v16}→v18`,
//! `v18→{v20, v19}→v21` (successors in this order). 14 paths: one through
//! `v0`, one through `v3`, 4 through `v4`, 8 through `v12`.
//!
//! Figure 4's interesting paths are those within every edge but `s→v0`,
//! `v0→x`, `v2→v3`, `v3→v11`, `v7→v9`, `v9→v10`, `v12→v14` and `v14→v15`:
//! the 2 paths through `v4, v8` and the 4 through `v13`.

use super::*;
use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdgeKind};
use crate::ids::{DagEdgeId, FuncId};
use crate::regen::{path_id, regenerate};
use crate::weights::Weights;

const NAMES: [&str; 24] = [
    "s", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
    "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "x",
];

const EDGES: &[(&str, &str)] = &[
    ("s", "v0"),
    ("s", "v1"),
    ("v0", "x"),
    ("v1", "v2"),
    ("v1", "v12"),
    ("v2", "v3"),
    ("v2", "v4"),
    ("v3", "v11"),
    ("v4", "v6"),
    ("v4", "v5"),
    ("v5", "v7"),
    ("v6", "v7"),
    ("v7", "v9"),
    ("v7", "v8"),
    ("v8", "v10"),
    ("v9", "v10"),
    ("v10", "v11"),
    ("v12", "v13"),
    ("v12", "v14"),
    ("v13", "v15"),
    ("v14", "v15"),
    ("v15", "v17"),
    ("v15", "v16"),
    ("v16", "v18"),
    ("v17", "v18"),
    ("v18", "v20"),
    ("v18", "v19"),
    ("v19", "v21"),
    ("v20", "v21"),
    ("v21", "v11"),
    ("v11", "x"),
];

const UNINTERESTING: [(&str, &str); 8] = [
    ("s", "v0"),
    ("v0", "x"),
    ("v2", "v3"),
    ("v3", "v11"),
    ("v7", "v9"),
    ("v9", "v10"),
    ("v12", "v14"),
    ("v14", "v15"),
];

struct Figure {
    cfg: Cfg,
    dag: Dag,
}

fn block(name: &str) -> u32 {
    NAMES.iter().position(|&n| n == name).unwrap() as u32
}

fn figure() -> Figure {
    let pairs: Vec<(u32, u32)> = EDGES.iter().map(|&(a, b)| (block(a), block(b))).collect();
    let cfg = Cfg::from_edge_list(NAMES.len(), &pairs).unwrap();
    let dag = Dag::build(&cfg, Default::default()).unwrap();
    Figure { cfg, dag }
}

impl Figure {
    fn edge(&self, from: &str, to: &str) -> DagEdgeId {
        let (from, to) = (block(from), block(to));
        self.dag
            .edge_ids()
            .find(|&d| match self.dag.edge(d).kind {
                DagEdgeKind::Cfg(e) => {
                    let ce = self.cfg.edge(e);
                    (ce.from.0, ce.to.0) == (from, to)
                }
                _ => false,
            })
            .unwrap()
    }

    /// The DAG path through these blocks (ENTRY and EXIT implied).
    fn path(&self, blocks: &str) -> Vec<DagEdgeId> {
        let names: Vec<&str> = blocks.split(' ').collect();
        (0..self.dag.num_paths())
            .map(|id| regenerate(&self.dag, id).unwrap())
            .find(|p| {
                let got: Vec<&str> = p
                    .blocks(&self.dag)
                    .iter()
                    .map(|b| NAMES[b.index()])
                    .collect();
                got == names
            })
            .unwrap_or_else(|| panic!("no path {blocks}"))
            .edges
    }

    /// Figure 4's interesting edges.
    fn figure4_set(&self) -> EdgeSet {
        let mut set = EdgeSet::full(self.dag.edges().len());
        let out: Vec<DagEdgeId> = UNINTERESTING
            .iter()
            .map(|&(a, b)| self.edge(a, b))
            .collect();
        set = EdgeSet::from_bits(
            self.dag
                .edge_ids()
                .map(|e| set.contains(e) && !out.contains(&e))
                .collect(),
        );
        set
    }

    /// How many of the DAG's paths are within `set`.
    fn paths_within(&self, set: &EdgeSet) -> usize {
        (0..self.dag.num_paths())
            .filter(|&id| set.contains_path(&regenerate(&self.dag, id).unwrap().edges))
            .count()
    }

    /// Whether a path within `set` passes block `v`.
    fn path_through(&self, set: &EdgeSet, v: &str) -> bool {
        (0..self.dag.num_paths()).any(|id| {
            let p = regenerate(&self.dag, id).unwrap();
            set.contains_path(&p.edges) && p.blocks(&self.dag).iter().any(|b| NAMES[b.index()] == v)
        })
    }

    fn function(&self, call_sites: u32) -> Function<'_> {
        Function {
            cfg: &self.cfg,
            dag: &self.dag,
            call_sites,
            trained: &[],
        }
    }
}

/// p and p' of section 2.2, and the path Figure 1(a) numbers 10.
const P: &str = "s v1 v2 v4 v6 v7 v8 v10 v11 x";
const P_PRIME: &str = "s v1 v12 v14 v15 v16 v18 v19 v21 v11 x";
const TEN: &str = "s v1 v2 v4 v6 v7 v9 v10 v11 x";

#[test]
fn the_figure_has_fourteen_paths_and_figure4_six_interesting() {
    let g = figure();
    assert_eq!(g.dag.num_paths(), 14);
    let set = g.figure4_set();
    assert_eq!(g.paths_within(&set), 6);
    assert!(set.contains_path(&g.path(P)));
    assert!(!set.contains_path(&g.path(P_PRIME)));
}

/// Figure 4 and Example 2: SPP's first step visits v1→v2 before v1→v12,
/// then absorption lowers p' onto p's id 3.
#[test]
fn figure4_spp_gives_an_interesting_and_an_uninteresting_path_one_id() {
    let g = figure();
    let spp = spp(&g.dag, &g.figure4_set());
    let init = |a, b| spp.initial(g.edge(a, b));
    // Figure 4(a), the labels the text names.
    assert_eq!(
        [
            init("s", "v1"),
            init("v1", "v2"),
            init("v1", "v12"),
            init("v2", "v4")
        ],
        [1, 0, 5, 1]
    );
    assert_eq!([init("v7", "v8"), init("v12", "v13")], [1, 4]);
    // Step 2 moved a label onto v3→v11 and v14→v15; step 3 absorbed them.
    assert_eq!(
        [spp.val(g.edge("v3", "v11")), spp.val(g.edge("v14", "v15"))],
        [0, 0]
    );
    let (p, p_prime) = (g.path(P), g.path(P_PRIME));
    assert_eq!((spp.path_id(&p), spp.path_id(&p_prime)), (3, 3));
    let err = spp.check_valid(&g.dag, 100).unwrap_err();
    assert!(matches!(err, Invalid::Alias { id: 3, .. }), "{err}");
    assert!(err.to_string().contains("condition (b)"));
}

/// Example 3 and Figure 1(a): PSPP visits v1→v12 (v12.min = 4) before v1→v2
/// (v2.min = 2); p and p' get 11 and 3, the labeling is valid, and it has
/// the 6 non-zero labels of `overhead(P_a)`.
#[test]
fn figure1a_pspp_separates_them() {
    let g = figure();
    let pspp = Pspp::compute(&g.dag, &g.figure4_set());
    let l = pspp.labeling();
    assert_eq!(
        [
            l.initial(g.edge("v1", "v12")),
            l.initial(g.edge("v1", "v2"))
        ],
        [0, 8]
    );
    let (p, p_prime) = (g.path(P), g.path(P_PRIME));
    assert_eq!((l.path_id(&p), l.path_id(&p_prime)), (11, 3));
    assert_eq!(l.path_id(&g.path(TEN)), 10);
    assert_eq!(l.val(g.edge("v14", "v15")), 0, "absorbed the 1 from s->v1");
    assert_eq!(l.nonzero_edges(), 6);
    l.check_valid(&g.dag, 100).unwrap();
    // Ids read back: p's is p; p''s (3) and Figure 1(a)'s 10 stand for no
    // interesting path.
    assert_eq!(pspp.regenerate(&g.dag, 11).unwrap().edges, p);
    assert_eq!(pspp.ball_larus_id(&g.dag, 11), Some(path_id(&g.dag, &p)));
    assert_eq!(pspp.regenerate(&g.dag, 3), None);
    assert_eq!(pspp.regenerate(&g.dag, 10), None);
    assert_eq!(pspp.regenerate(&g.dag, 14), None, "past the path count");
}

/// Example 4: five diamonds, two chains of them; the reduced DAG has four
/// paths.
#[test]
fn example4_reduced_graph() {
    let g = figure();
    let r = reduced_graph(&g.dag);
    let dummies: Vec<usize> = (0..r.num_nodes())
        .map(super::reduce::RNode::new)
        .filter(|&v| r.is_dummy(v))
        .map(|v| r.replaced(v).len())
        .collect();
    assert_eq!(dummies, [8, 12], "v4..v10 and v12..v21");
    let v = |name| r.node_of(crate::ids::NodeId(block(name)));
    assert_eq!(v("v4"), v("v10"));
    assert_eq!(v("v12"), v("v21"));
    assert_ne!(v("v4"), v("v12"));
    // Paths of the reduced graph.
    let mut paths = vec![0u64; r.num_nodes()];
    paths[r.exit().index()] = 1;
    for &u in r.topological_order().iter().rev() {
        for &e in r.succs(u) {
            paths[u.index()] += paths[r.edge(e).to.index()];
        }
    }
    assert_eq!(paths[r.entry().index()], 4);
}

/// Examples 4 and 5: with a threshold of 4 the four reduced paths make four
/// tasks, of 1, 1, 4 and 8 paths. The text's costs (1, 1, 3, 7) count
/// non-zero labels; PSPP labels the 8 paths' task with 4 (three chained
/// diamonds), as Figure 3(b)'s `overhead(P'_b) = 4` says, and the union of
/// the three others with 5, `overhead(P'_a)`.
#[test]
fn example5_tasks_and_their_labelings() {
    let g = figure();
    // By their paths: the v0 path, the v3 path, v4's 4 and v12's 8.
    let mut sets = partition_paths(&g.dag, 4);
    sets.sort_by_key(|s| (g.paths_within(s), !g.path_through(s, "v0")));
    let through = |s: &EdgeSet, v| g.path_through(s, v);
    assert!(through(&sets[0], "v0") && through(&sets[1], "v3"));
    let paths: Vec<usize> = sets.iter().map(|s| g.paths_within(s)).collect();
    assert_eq!(paths, [1, 1, 4, 8]);
    let nonzero: Vec<usize> = sets
        .iter()
        .map(|s| Pspp::compute(&g.dag, s).labeling().nonzero_edges())
        .collect();
    assert_eq!(nonzero, [1, 1, 3, 4]);
    let mut a = sets[0].clone();
    a.union_with(&sets[1]);
    a.union_with(&sets[2]);
    let p_a = Pspp::compute(&g.dag, &a);
    assert_eq!(p_a.labeling().nonzero_edges(), 5, "overhead(P'_a)");
    // This crate's costs: those non-zero labels, which the tree keeps on
    // chords, and no count: each task's paths end where other tasks' paths
    // end too, and a copy counts only where its own paths can end, on a
    // labeled chord here (Ball-Larus has 8 non-zero chords, 5 of which
    // count: 9). So two copies get {v0, v4} and {v3, v12}, not Figure 3's
    // split, which only the text's cost of 7 for v12 makes.
    let w = Weights::estimate(&g.cfg);
    let mut tasks = find_partition(&g.cfg, &g.dag, &w, 4);
    tasks.sort_by_key(|t| (g.paths_within(&t.edges), !g.path_through(&t.edges, "v0")));
    let costs: Vec<u64> = tasks.iter().map(|t| t.cost).collect();
    assert_eq!(costs, [1, 1, 3, 4]);
    assert_eq!(Role::BallLarus.probes(&g.cfg, &g.dag, &w).count(), 9);
    let s = schedule(&costs, 2);
    assert_eq!((s.copy_of, s.loads), (vec![1, 0, 1, 0], vec![5, 4]));
    assert_eq!(
        schedule(&[1, 1, 3, 7], 2).copy_of,
        [1, 1, 1, 0],
        "the text's"
    );
}

/// The threshold: Δ = max(out-degree of ENTRY, K). The figure's ENTRY has one
/// edge (to `s`), so 2 copies cut at 2 tasks (the text's Example 5 ignores
/// the threshold, introduced after it), 4 at 4.
#[test]
fn threshold_bounds_the_tasks() {
    let g = figure();
    assert_eq!(threshold(&g.dag, 2), 2);
    let two = partition_paths(&g.dag, 2);
    assert_eq!(
        two.iter().map(|s| g.paths_within(s)).collect::<Vec<_>>(),
        [13, 1]
    );
    for delta in 1..=6 {
        let sets = partition_paths(&g.dag, delta);
        assert!(sets.len() <= delta.max(1));
        let total: usize = sets.iter().map(|s| g.paths_within(s)).sum();
        assert_eq!(total, 14, "a partition for delta {delta}");
    }
    assert_eq!(
        partition_paths(&g.dag, 1),
        [EdgeSet::full(g.dag.edges().len())]
    );
}

#[test]
fn four_copies_of_the_figure() {
    let g = figure();
    let f = [g.function(1)];
    let plan = plan_program(&f, 4, Strategy::P3);
    assert!(plan.is_profitable(FuncId(0)));
    assert_eq!(plan.tasks(FuncId(0)).tasks.len(), 4);
    let roles: Vec<&Role> = (0..4).map(|c| plan.role(c, FuncId(0))).collect();
    assert!(
        roles.iter().all(|r| matches!(r, Role::Pspp(_))),
        "{roles:?}"
    );
    // Each path is profiled by exactly one copy.
    for id in 0..14 {
        let path = regenerate(&g.dag, id).unwrap().edges;
        assert_eq!(
            roles.iter().filter(|r| r.profiles(&path)).count(),
            1,
            "path {id}"
        );
    }
    // Called from two sites: one Ball-Larus task, one copy instruments it.
    let plan = plan_program(&[g.function(2)], 4, Strategy::P3);
    assert!(!plan.is_profitable(FuncId(0)));
    let roles: Vec<&Role> = (0..4).map(|c| plan.role(c, FuncId(0))).collect();
    assert_eq!(
        roles,
        [&Role::BallLarus, &Role::None, &Role::None, &Role::None]
    );
    assert_eq!(plan.slot_copy(FuncId(0)), Some(0));
    // One copy: Ball-Larus whatever the partition.
    let plan = plan_program(&[g.function(0)], 1, Strategy::P3);
    assert_eq!(plan.role(0, FuncId(0)), &Role::BallLarus);
}

/// Merging copies that ran the same: the Ball-Larus profile; a copy that
/// counted a path differently is named.
#[test]
fn merge_and_divergence_on_the_figure() {
    let g = figure();
    let f = [g.function(0)];
    let plan = plan_program(&f, 4, Strategy::P3);
    let profile: Vec<(u64, u64)> = (0..14).map(|id| (id, id % 3)).filter(|p| p.1 > 0).collect();
    let counts: Vec<Vec<RawCounts>> = (0..4)
        .map(|c| {
            let paths = merge::copy_ids(&f[0], plan.role(c, FuncId(0)), &profile).unwrap();
            vec![RawCounts {
                slots: Vec::new(),
                paths,
            }]
        })
        .collect();
    let merged = merge(&f, &plan, &counts).unwrap();
    assert_eq!(merged[0].paths, profile);
    // One more count, in the copy of the 8 paths' task, of the id of a
    // path it does not profile: its total no longer matches the merged
    // paths it counts. (A copy leaves uncounted the paths ending where only paths of
    // other copies end, so an extra run of a path only its own copy counts
    // shows only in flow, [`check_flow`].)
    let ft = plan.tasks(FuncId(0));
    let eight = ft
        .tasks
        .iter()
        .position(|t| g.paths_within(&t.edges) == 8)
        .unwrap();
    let copy = ft.copies[eight];
    let role = plan.role(copy, FuncId(0));
    let Role::Pspp(pspp) = role else { panic!() };
    let junk = (0..14)
        .map(|id| regenerate(&g.dag, id).unwrap().edges)
        .find(|p| !role.profiles(p))
        .expect("an uninteresting path");
    let mut bad = counts.clone();
    bad[copy][0].paths.push((pspp.labeling().path_id(&junk), 1));
    let err = merge(&f, &plan, &bad).unwrap_err();
    let MergeError::Ended {
        copy: named,
        counted,
        expected,
        ..
    } = err
    else {
        panic!("{err}")
    };
    assert_eq!(named, copy, "{err}");
    assert_eq!(counted, expected + 1);
    // Two copies profiling every path must agree path for path; the slots
    // are the first's.
    let both = ProgramPlan::with_roles(vec![vec![Role::BallLarus]; 2]);
    let raw = |slots: &[u64], paths: &[(u64, u64)]| {
        vec![RawCounts {
            slots: slots.to_vec(),
            paths: paths.to_vec(),
        }]
    };
    let mut other = profile.clone();
    other[2].1 += 1;
    let agreeing = [raw(&[7], &profile), raw(&[], &profile)];
    assert_eq!(merge(&f, &both, &agreeing).unwrap(), raw(&[7], &profile));
    let err = merge(&f, &both, &[raw(&[], &profile), raw(&[], &other)]).unwrap_err();
    let (path, n) = profile[2];
    let want = MergeError::Divergence {
        func: FuncId(0),
        path,
        first: 0,
        first_count: n,
        second: 1,
        second_count: n + 1,
    };
    assert_eq!(err, want);
    assert_eq!(
        err.to_string(),
        format!(
            "the copies diverge: path {path} of function f0 ran {n} times in copy 0 but {} times in copy 1",
            n + 1
        )
    );
    // Slots come from the first copy that instruments the function.
    let err = merge(&f, &both, &[raw(&[7], &profile), raw(&[7], &profile)]).unwrap_err();
    assert!(
        matches!(
            err,
            MergeError::Slots {
                copy: 1,
                owner: 0,
                ..
            }
        ),
        "{err}"
    );
}
