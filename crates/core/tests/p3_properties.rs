//! Property tests of partitioned path profiling ([`pathprof_core::p3`]) on
//! random CFGs (reducible and irreducible, self loops, multi-edges,
//! unsplittable and resume edges, truncation cuts, early exits): PSPP
//! against every path of the DAG, the partition against path enumeration,
//! and whole random programs run as K instrumented copies along random
//! walks, merged, against path mode.

mod common;

use common::arb::arb_cfg;
use common::{expected_path_counts_ending, make_walk, Evaluator};
use pathprof_core::dag::{Dag, DagOptions};
use pathprof_core::map::{BlockInfo, MapFile, MapFunction, P3Build};
use pathprof_core::p3::trained::{refine_partition, TrainedPaths};
use pathprof_core::p3::{
    check_flow, hit_counts, merge, partition_paths, plan_copy, plan_program, spp, EdgeSet,
    Function, Labeling, MapProgram, MergeError, PartialError, ProgramPlan, Pspp, RawCounts,
    Strategy as Scheme,
};
use pathprof_core::path::{transcribe, PathOptions};
use pathprof_core::planner::planned_increments;
use pathprof_core::regen::regenerate;
use pathprof_core::{Cfg, DagEdgeId, EdgeId, FuncId, Mode};
use pathprof_format::{RawFunction, RawProfile};
use proptest::prelude::*;

/// DAGs with at most this many paths are checked path by path.
const MAX_PATHS: u64 = 3000;

/// DAG options: early exits or not, and `max_paths` as a fraction (in
/// eighths) of the untruncated path count, so that cuts happen often (8:
/// none).
fn arb_options() -> impl Strategy<Value = (bool, u64)> {
    (any::<bool>(), prop_oneof![Just(8u64), 1u64..8])
}

fn build(cfg: &Cfg, (early_exit, eighths): (bool, u64)) -> Option<Dag> {
    let mut options = DagOptions {
        early_exit,
        ..DagOptions::default()
    };
    let untruncated = Dag::build(cfg, options).ok()?;
    options.max_paths = (untruncated.num_paths() * eighths / 8).max(2);
    let dag = loop {
        match Dag::build(cfg, options) {
            Ok(dag) => break dag,
            Err(_) if options.max_paths < untruncated.num_paths() => options.max_paths *= 2,
            Err(_) => break untruncated,
        }
    };
    (dag.num_paths() <= MAX_PATHS).then_some(dag)
}

/// An interesting edge set: random edges, or the edges of random paths
/// (Ball-Larus ids modulo the path count), or both.
fn arb_set() -> impl Strategy<Value = (Vec<bool>, Vec<u64>)> {
    (
        prop_oneof![
            Just(Vec::new()),
            prop::collection::vec(prop::bool::weighted(0.7), 64)
        ],
        prop::collection::vec(any::<u64>(), 0..6),
    )
}

fn edge_set(dag: &Dag, (bits, picks): &(Vec<bool>, Vec<u64>)) -> EdgeSet {
    let mut set = EdgeSet::empty(dag.edges().len());
    if !bits.is_empty() {
        for e in dag.edge_ids().filter(|e| bits[e.index() % bits.len()]) {
            set.insert(e);
        }
    }
    for &p in picks {
        for e in regenerate(dag, p % dag.num_paths()).unwrap().edges {
            set.insert(e);
        }
    }
    set
}

fn all_paths(dag: &Dag) -> Vec<Vec<DagEdgeId>> {
    (0..dag.num_paths())
        .map(|id| regenerate(dag, id).unwrap().edges)
        .collect()
}

/// Algorithm 1 exactly as printed (line 7 gives uninteresting edges 0), for
/// interesting edges `ei`: the reference `p3::labeling` must match.
fn algorithm1(dag: &Dag, ei: &EdgeSet) -> Vec<u64> {
    let mut val = vec![0u64; dag.edges().len()];
    let mut min = vec![u64::MAX; dag.num_nodes()];
    let mut n = vec![0u64; dag.num_nodes()];
    min[dag.exit().index()] = 0;
    n[dag.exit().index()] = 1;
    let to = |e: DagEdgeId| dag.edge(e).to.index();
    for &v in dag.topological_order().iter().rev() {
        if v == dag.exit() {
            continue;
        }
        let (v, succs) = (v.index(), dag.succs(v));
        for &e in succs.iter().filter(|&&e| !ei.contains(e)) {
            val[e.index()] = 0;
            n[v] += n[to(e)];
        }
        let mut interesting: Vec<DagEdgeId> =
            succs.iter().copied().filter(|&e| ei.contains(e)).collect();
        interesting.sort_by_key(|&e| std::cmp::Reverse(min[to(e)]));
        for e in interesting {
            val[e.index()] = n[v];
            n[v] += n[to(e)];
            min[v] = min[v].min(min[to(e)].saturating_add(val[e.index()]));
        }
    }
    for &v in dag.topological_order() {
        if let ([e_in], false) = (dag.preds(v), v == dag.exit()) {
            if val[e_in.index()] > 0 {
                for &e_out in dag.succs(v) {
                    val[e_out.index()] += val[e_in.index()];
                }
                val[e_in.index()] = 0;
            }
        }
    }
    for e in dag.edge_ids().filter(|&e| !ei.contains(e)) {
        val[e.index()] = 0;
    }
    val
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Theorem 2: conditions (a) and (b) of section 2.1 hold, checked on
    /// every path; and the interesting edges are exactly the given set's
    /// edges that lie on paths within it.
    #[test]
    fn pspp_labelings_are_valid(cfg in arb_cfg(), options in arb_options(), set in arb_set()) {
        let Some(dag) = build(&cfg, options) else { return Ok(()) };
        let set = edge_set(&dag, &set);
        let pspp = Pspp::compute(&dag, &set);
        if let Err(e) = pspp.labeling().check_valid(&dag, MAX_PATHS) {
            return Err(TestCaseError::fail(format!("{e}")));
        }
        let paths = all_paths(&dag);
        let mut on_paths = EdgeSet::empty(dag.edges().len());
        for p in paths.iter().filter(|p| set.contains_path(p)) {
            for &e in p.iter() {
                on_paths.insert(e);
            }
        }
        prop_assert_eq!(pspp.interesting(), &on_paths);
    }

    /// The labeling is Algorithm 1's, although step 1 numbers uninteresting
    /// edges as Ball-Larus does; SPP only differs in the order.
    #[test]
    fn labels_are_algorithm_1s(cfg in arb_cfg(), options in arb_options(), set in arb_set()) {
        let Some(dag) = build(&cfg, options) else { return Ok(()) };
        let set = edge_set(&dag, &set);
        let pspp = Pspp::compute(&dag, &set);
        prop_assert_eq!(pspp.labeling().values(), &algorithm1(&dag, pspp.interesting())[..]);
        let spp: Labeling = spp(&dag, &set);
        prop_assert_eq!(spp.interesting(), pspp.interesting());
        // Both label interesting paths with distinct ids (condition (a)).
        let paths = all_paths(&dag);
        let mut ids: Vec<u64> = paths.iter().filter(|p| spp.is_interesting(p)).map(|p| spp.path_id(p)).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), n);
    }

    /// Step 1 numbers every path as Ball-Larus does; an interesting path's
    /// final id is its initial id and regenerates to it; any other path's
    /// id regenerates to no interesting path.
    #[test]
    fn regeneration_inverts_interesting_ids(cfg in arb_cfg(), options in arb_options(), set in arb_set()) {
        let Some(dag) = build(&cfg, options) else { return Ok(()) };
        let pspp = Pspp::compute(&dag, &edge_set(&dag, &set));
        let l = pspp.labeling();
        let mut initial: Vec<u64> = Vec::new();
        for (bl, path) in all_paths(&dag).into_iter().enumerate() {
            let id = l.path_id(&path);
            initial.push(l.initial_id(&path));
            prop_assert!(id < dag.num_paths());
            if l.is_interesting(&path) {
                prop_assert_eq!(id, l.initial_id(&path));
                prop_assert_eq!(pspp.regenerate(&dag, id).map(|p| p.edges), Some(path));
                prop_assert_eq!(pspp.ball_larus_id(&dag, id), Some(bl as u64));
            } else {
                prop_assert_eq!(pspp.regenerate(&dag, id), None);
            }
        }
        initial.sort_unstable();
        prop_assert!(initial.into_iter().eq(0..dag.num_paths()), "initial ids are 0..N");
    }

    /// A trained partition's tasks (random training counts, a random
    /// target): every path in exactly one, and each trained path's task
    /// weighs at most the target unless it cannot be split further.
    #[test]
    fn trained_tasks_partition_the_paths(
        cfg in arb_cfg(),
        options in arb_options(),
        picks in prop::collection::vec((any::<u64>(), 1u64..1000), 0..12),
        target in 0u64..3000,
        max_tasks in 1usize..40,
    ) {
        let Some(dag) = build(&cfg, options) else { return Ok(()) };
        let mut counts: Vec<(u64, u64)> = picks.iter().map(|&(id, n)| (id % dag.num_paths(), n)).collect();
        counts.sort_unstable();
        counts.dedup_by_key(|c| c.0);
        let trained = TrainedPaths::new(&dag, &counts);
        let tasks = refine_partition(&dag, &trained, |i| counts[i].1, target, max_tasks);
        prop_assert!(!tasks.is_empty() && tasks.len() <= max_tasks.max(1));
        for p in &all_paths(&dag) {
            prop_assert_eq!(tasks.iter().filter(|t| t.contains_path(p)).count(), 1);
        }
    }

    /// `find_partition`'s tasks: at most Δ, each with a path, every path in
    /// exactly one.
    #[test]
    fn tasks_partition_the_paths(cfg in arb_cfg(), options in arb_options(), delta in 1usize..10) {
        let Some(dag) = build(&cfg, options) else { return Ok(()) };
        let tasks = partition_paths(&dag, delta);
        prop_assert!(!tasks.is_empty() && tasks.len() <= delta);
        let paths = all_paths(&dag);
        for t in &tasks {
            prop_assert!(paths.iter().any(|p| t.contains_path(p)), "an empty task");
        }
        for p in &paths {
            prop_assert_eq!(tasks.iter().filter(|t| t.contains_path(p)).count(), 1);
        }
    }
}

/// One random program: functions with their DAGs, call-site counts and
/// walks (with the call each dies in, if any).
struct Program {
    cfgs: Vec<Cfg>,
    dags: Vec<Dag>,
    call_sites: Vec<u32>,
    walks: Vec<Vec<(Vec<EdgeId>, Option<u32>)>>,
    /// Per function: a training run's path counts (empty: untrained).
    trained: Vec<Vec<(u64, u64)>>,
    options: PathOptions,
}

impl Program {
    fn functions(&self) -> Vec<Function<'_>> {
        (0..self.cfgs.len())
            .map(|i| Function {
                cfg: &self.cfgs[i],
                dag: &self.dags[i],
                call_sites: self.call_sites[i],
                trained: &self.trained[i],
            })
            .collect()
    }

    /// Trains the program on the first half of each function's walks (the
    /// second half is another input's).
    fn train(&mut self) {
        self.trained = (0..self.cfgs.len())
            .map(|i| {
                let half = &self.walks[i][..self.walks[i].len().div_ceil(2)];
                expected_path_counts_ending(&self.cfgs[i], &self.dags[i], half)
                    .into_iter()
                    .collect()
            })
            .collect();
    }
}

type FunctionInput = (Cfg, u32, Vec<Vec<u8>>);

fn arb_program() -> impl Strategy<Value = (Vec<FunctionInput>, (bool, u64))> {
    (
        prop::collection::vec(
            (
                arb_cfg(),
                0u32..3,
                prop::collection::vec(prop::collection::vec(any::<u8>(), 0..30), 1..5),
            ),
            1..4,
        ),
        arb_options(),
    )
}

/// Walks from `choices`; with early exits, some die in a call of their last
/// block.
fn walks_of(cfg: &Cfg, choices: &[Vec<u8>], deaths: bool) -> Vec<(Vec<EdgeId>, Option<u32>)> {
    choices
        .iter()
        .filter_map(|c| {
            let walk = make_walk(cfg, c, 20)?;
            let pick = c.first().copied().unwrap_or(0) as usize;
            if !deaths || !pick.is_multiple_of(3) {
                return Some((walk, None));
            }
            let prefix = walk[..(pick / 3) % (walk.len() + 1)].to_vec();
            let last = prefix.last().map_or(cfg.entry(), |&e| cfg.edge(e).to);
            match cfg.calls(last) {
                0 => Some((walk, None)),
                n => Some((prefix, Some(pick as u32 % n))),
            }
        })
        .collect()
}

fn program((functions, options): (Vec<FunctionInput>, (bool, u64))) -> Option<Program> {
    let mut p = Program {
        cfgs: Vec::new(),
        dags: Vec::new(),
        call_sites: Vec::new(),
        walks: Vec::new(),
        trained: Vec::new(),
        options: PathOptions::default(),
    };
    for (cfg, call_sites, choices) in functions {
        let dag = build(&cfg, options)?;
        p.options.dag.early_exit = options.0;
        p.walks.push(walks_of(&cfg, &choices, options.0));
        p.cfgs.push(cfg);
        p.dags.push(dag);
        p.call_sites.push(call_sites);
        p.trained.push(Vec::new());
    }
    Some(p)
}

/// Runs the program's walks through the plan of every copy: per copy, per
/// function, its counters.
fn run_copies(p: &Program, plan: &ProgramPlan) -> Vec<Vec<RawCounts>> {
    let functions = p.functions();
    (0..plan.copies())
        .map(|c| {
            (0..p.cfgs.len())
                .map(|i| {
                    let f = FuncId::new(i);
                    let role = plan.role(c, f);
                    // The build's weights: the training's where it ran.
                    let weights = functions[i].weights();
                    let counts_slots = plan.slot_copy(f) == Some(c);
                    let Some((fplan, _)) = plan_copy(
                        &p.cfgs[i],
                        &p.dags[i],
                        role,
                        &weights,
                        &p.options,
                        counts_slots,
                    ) else {
                        return RawCounts::default();
                    };
                    let mut ev = Evaluator::new(&fplan);
                    for (walk, dies_in) in &p.walks[i] {
                        ev.call_ending(&p.cfgs[i], walk, *dies_in);
                    }
                    RawCounts {
                        slots: ev.counters.slots.clone(),
                        paths: ev.counters.path_list(),
                    }
                })
                .collect()
        })
        .collect()
}

/// The path-mode map of `p`, recording the P3 build of `copies` copies.
fn map_of(p: &Program, copies: u32) -> MapFile {
    let functions: Vec<MapFunction> = (0..p.cfgs.len())
        .map(|i| {
            let (cfg, dag) = (&p.cfgs[i], &p.dags[i]);
            let (_, layout) =
                transcribe(cfg, dag.clone(), &planned_increments(cfg, dag), &p.options);
            MapFunction {
                name: format!("f{i}"),
                display_name: None,
                file: None,
                line: None,
                hash: cfg.shape_hash(),
                cfg: cfg.clone(),
                blocks: vec![BlockInfo::default(); cfg.num_blocks()],
                layout,
                entry_calls: Vec::new(),
                entries_by_callers: false,
            }
        })
        .collect();
    MapFile {
        mode: Mode::Path,
        build_id: MapFile::compute_build_id(Mode::Path, &[], &functions),
        files: Vec::new(),
        file_digests: Vec::new(),
        functions,
        atomic: false,
        per_thread: true,
        p3: Some(P3Build {
            copies,
            call_sites: p.call_sites.clone(),
            trained: p.trained.clone(),
        }),
    }
}

/// A raw profile section of `build_id` from per-function counters.
fn section(build_id: u64, map: &MapFile, counts: &[RawCounts]) -> RawProfile {
    let mut raw = RawProfile::new(build_id, pathprof_format::abi::MODE_PATH);
    raw.processes = 1;
    for (i, c) in counts.iter().enumerate() {
        if c.paths.is_empty() && c.slots.iter().all(|&s| s == 0) {
            continue;
        }
        raw.functions.push(RawFunction {
            index: i as u32,
            hash: map.functions[i].hash,
            slots: c.slots.clone(),
            paths: c.paths.clone(),
            ..RawFunction::default()
        });
    }
    raw
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(250))]

    /// Every path is profiled by some copy; the copies' counts of random
    /// walks merge into exactly path mode's profile (paths and slots), whose
    /// flow is conserved; and counts changed in one copy are refused. With
    /// or without a training run (half the walks) guiding the plan.
    #[test]
    fn merged_copies_are_the_ball_larus_profile(
        input in arb_program(),
        copies in prop::sample::select(vec![1usize, 2, 3, 4, 8]),
        pbl in prop::bool::weighted(0.2),
        trained in any::<bool>(),
        nudge in any::<u64>(),
    ) {
        let Some(mut p) = program(input) else { return Ok(()) };
        if trained {
            p.train();
        }
        let functions = p.functions();
        let strategy = if pbl { Scheme::Pbl } else { Scheme::P3 };
        let plan = plan_program(&functions, copies, strategy);
        prop_assert_eq!(plan.copies(), copies);
        for (i, dag) in p.dags.iter().enumerate() {
            for path in all_paths(dag) {
                let profiled = (0..copies).filter(|&c| plan.role(c, FuncId::new(i)).profiles(&path)).count();
                prop_assert!(profiled >= 1, "a path no copy profiles");
                if !pbl && copies > 1 && !plan.is_profitable(FuncId::new(i)) {
                    prop_assert_eq!(profiled, 1, "an unprofitable function is one copy's");
                }
            }
        }
        let counts = run_copies(&p, &plan);
        let merged = match merge(&functions, &plan, &counts) {
            Ok(m) => m,
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        prop_assert_eq!(merged.len(), p.cfgs.len());
        for (i, m) in merged.iter().enumerate() {
            let (cfg, dag) = (&p.cfgs[i], &p.dags[i]);
            let want: Vec<(u64, u64)> = expected_path_counts_ending(cfg, dag, &p.walks[i]).into_iter().collect();
            prop_assert_eq!(&m.paths, &want);
            // Path mode's own plan on the same walks: the same slots.
            let (bl_plan, layout) = transcribe(cfg, dag.clone(), &planned_increments(cfg, dag), &p.options);
            let mut ev = Evaluator::new(&bl_plan);
            for (walk, dies_in) in &p.walks[i] {
                ev.call_ending(cfg, walk, *dies_in);
            }
            prop_assert_eq!(&m.slots, &ev.counters.slots);
            prop_assert_eq!(&m.paths, &ev.counters.path_list());
            if let Err(e) = check_flow(FuncId::new(i), cfg, &layout, m) {
                return Err(TestCaseError::fail(format!("{e}")));
            }
        }
        // One more count of one id in one copy: refused, whichever check
        // sees it first, when another copy instruments the function too
        // (else nothing tells).
        let observed: Vec<(usize, usize, u64)> = counts.iter().enumerate()
            .flat_map(|(c, fs)| fs.iter().enumerate().flat_map(move |(i, r)| r.paths.iter().map(move |&(id, _)| (c, i, id))))
            .collect();
        if !observed.is_empty() {
            let (c, i, id) = observed[(nudge % observed.len() as u64) as usize];
            let mut bad = counts.clone();
            bad[c][i].paths.push((id, 1));
            // Seen by the copy itself when the id is none of its paths', or
            // by another copy that counts the path where it ends.
            let f = &functions[i];
            let role = plan.role(c, FuncId::new(i));
            let witnesses = match role.ball_larus_id(f.dag, id) {
                None => 2,
                Some(bl) => {
                    let path = regenerate(f.dag, bl).unwrap().edges;
                    (0..copies)
                        .filter(|&k| plan.role(k, FuncId::new(i)).probes(f.cfg, f.dag, &f.weights()).counts(&path))
                        .count()
                }
            };
            if witnesses < 2 {
                prop_assert!(merge(&functions, &plan, &bad).is_ok());
                return Ok(());
            }
            let err = merge(&functions, &plan, &bad).unwrap_err();
            let divergent = matches!(
                err,
                MergeError::Divergence { .. } | MergeError::Totals { .. } | MergeError::Unprofiled { .. } | MergeError::Ended { .. }
            );
            prop_assert!(divergent, "{}", err);
        }
    }

    /// Hit counts: PBL spreads SBL's hits over the copies, P3 with one copy
    /// is SBL; and a copy's hits are those of its probes along the walked
    /// paths.
    #[test]
    fn hit_counts_add_up(
        input in arb_program(),
        copies in prop::sample::select(vec![2usize, 3, 4, 8]),
    ) {
        let Some(p) = program(input) else { return Ok(()) };
        let functions = p.functions();
        let profile: Vec<Vec<(u64, u64)>> = (0..p.cfgs.len())
            .map(|i| expected_path_counts_ending(&p.cfgs[i], &p.dags[i], &p.walks[i]).into_iter().collect())
            .collect();
        let hits = |k, s| hit_counts(&functions, &plan_program(&functions, k, s), &profile).unwrap();
        let sbl = hits(1, Scheme::Pbl);
        prop_assert_eq!(&hits(1, Scheme::P3), &sbl);
        let pbl = hits(copies, Scheme::Pbl);
        prop_assert_eq!(pbl.per_copy.iter().sum::<u64>(), sbl.max());
        prop_assert!(pbl.max() <= sbl.max());
        // Every path run a copy profiles ends with a count in it.
        let plan = plan_program(&functions, copies, Scheme::P3);
        let p3 = hit_counts(&functions, &plan, &profile).unwrap();
        for c in 0..copies {
            let runs: u64 = (0..p.cfgs.len())
                .map(|i| {
                    let role = plan.role(c, FuncId::new(i));
                    profile[i]
                        .iter()
                        .filter(|&&(bl, _)| role.profiles(&regenerate(&p.dags[i], bl).unwrap().edges))
                        .map(|&(_, n)| n)
                        .sum::<u64>()
                })
                .sum();
            prop_assert!(p3.per_copy[c] >= runs);
        }
    }

    /// A P3 build as its map records it: the plan from the map is the
    /// program's, each copy's plans (from [`MapProgram::copy_plans`]) count
    /// the walks into sections under the copy's build id, and those merge
    /// into path mode's section of the map's build; a copy that ran another
    /// number of processes is named.
    #[test]
    fn partial_profiles_merge_into_the_maps_section(
        input in arb_program(),
        copies in prop::sample::select(vec![1usize, 2, 4, 8]),
    ) {
        let Some(p) = program(input) else { return Ok(()) };
        let map = map_of(&p, copies as u32);
        let (program, record) = MapProgram::recorded(&map).unwrap();
        prop_assert_eq!(record.copies as usize, copies);
        let plan = program.plan(copies, Scheme::P3);
        prop_assert_eq!(&plan, &plan_program(&p.functions(), copies, Scheme::P3));
        let sections: Vec<RawProfile> = (0..copies)
            .map(|c| {
                let plans = program.copy_plans(&plan, c, &p.options).unwrap();
                let counts: Vec<RawCounts> = plans
                    .iter()
                    .enumerate()
                    .map(|(i, fplan)| {
                        let mut ev = Evaluator::new(fplan);
                        for (walk, dies_in) in &p.walks[i] {
                            ev.call_ending(&p.cfgs[i], walk, *dies_in);
                        }
                        RawCounts {
                            slots: ev.counters.slots.clone(),
                            paths: ev.counters.path_list(),
                        }
                    })
                    .collect();
                section(program.copy_build_id(copies, c), &map, &counts)
            })
            .collect();
        let merged = program.merge_partials(&plan, &sections);
        let merged = match merged {
            Ok(m) => m,
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        // Path mode's own counts of the same walks.
        let want: Vec<RawCounts> = (0..p.cfgs.len())
            .map(|i| {
                let (cfg, dag) = (&p.cfgs[i], &p.dags[i]);
                let (bl_plan, _) = transcribe(cfg, dag.clone(), &planned_increments(cfg, dag), &p.options);
                let mut ev = Evaluator::new(&bl_plan);
                for (walk, dies_in) in &p.walks[i] {
                    ev.call_ending(cfg, walk, *dies_in);
                }
                RawCounts { slots: ev.counters.slots.clone(), paths: ev.counters.path_list() }
            })
            .collect();
        let mut want = section(map.build_id, &map, &want);
        want.normalize();
        prop_assert_eq!(&merged, &want);
        if copies > 1 {
            let mut forked = sections.clone();
            forked[copies - 1].processes = 2;
            let err = program.merge_partials(&plan, &forked).unwrap_err();
            prop_assert!(matches!(err, PartialError::Facts { .. }), "{}", err);
            prop_assert_eq!(err.copy(), Some(copies - 1));
            let mut other = sections.clone();
            other.swap(0, 1);
            let err = program.merge_partials(&plan, &other).unwrap_err();
            let swapped = matches!(err, PartialError::OtherBuild { copy: 0, .. });
            prop_assert!(swapped, "{}", err);
        }
    }
}
