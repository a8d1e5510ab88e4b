//! P3 over a whole program (Afraz et al. 2015, Algorithm 2): each function's
//! tasks, their distribution over K copies, and each copy's role for each
//! function.
//!
//! A function called from at most one call site (`call_count(P) ≤ 1`, line 5)
//! is partitioned ([`find_partition`] with Δ = [`threshold`]); any other is
//! one task of all its paths, costed as Ball-Larus. All tasks are scheduled
//! together, largest first onto the copy whose load grows least (a task of
//! a function the copy already profiles part of costs only the widening of
//! that role); a copy then profiles, per function, the paths
//! within the union of the edges of the tasks it got ([`Role::for_edges`]:
//! Ball-Larus when that is every edge, PSPP when some, nothing when none). A
//! function is *profitable* when its partition has more than one task.
//!
//! Everything is a function of the functions' CFGs, DAGs and call-site
//! counts and of K, in the order given: a reader with the map and K computes
//! the same plan. Costs use the loop-depth weights ([`Weights::estimate`]),
//! as [`crate::planner::planned_increments`] does, since maps record no
//! measured counts. [`Strategy::Pbl`] (whole functions distributed, the
//! paper's PBL) and K = 1 (SBL) come from the same code.

use super::edge_set::EdgeSet;
use super::partition::{find_partition, threshold, Task};
use super::role::Role;
#[cfg(doc)]
use super::schedule::schedule;
use super::trained::{refine_partition, TrainedPaths};
use crate::cfg::Cfg;
use crate::dag::Dag;
use crate::ids::FuncId;
use crate::weights::Weights;

/// One function of the program, as P3 sees it.
#[derive(Clone, Copy, Debug)]
pub struct Function<'a> {
    pub cfg: &'a Cfg,
    /// Path mode's DAG of `cfg` (the map's).
    pub dag: &'a Dag,
    /// Its call sites in the whole program (direct calls; a function whose
    /// address is taken should count as called from many).
    pub call_sites: u32,
    /// A training run's paths of it (Ball-Larus id and count), empty when
    /// the build had no training ([`super::trained`]).
    pub trained: &'a [(u64, u64)],
}

impl Function<'_> {
    /// Whether P3 may split its paths over copies (`call_count(P) ≤ 1`).
    pub fn partitionable(&self) -> bool {
        self.call_sites <= 1
    }

    /// The weights costs and spanning trees are computed under: the
    /// training's edge frequencies when it ran the function, else the
    /// loop-depth estimate path mode plans with.
    pub fn weights(&self) -> Weights {
        self.weights_with(&TrainedPaths::new(self.dag, self.trained))
    }

    /// The weights of a function with these training paths: the measured
    /// ones when Ball-Larus' plan under them runs fewer probes on the
    /// training paths than under the estimate (a tree of the hottest edges
    /// is not always the cheapest: Figure 8 folds a path's count into its
    /// last chord, which the estimate may place better), else the estimate.
    fn weights_with(&self, trained: &TrainedPaths) -> Weights {
        let estimate = Weights::estimate(self.cfg);
        let Some(measured) = trained.weights(self.cfg, self.dag) else {
            return estimate;
        };
        let hits =
            |w: &Weights| trained.hits(self.dag, &Role::BallLarus.probes(self.cfg, self.dag, w));
        if hits(&measured) < hits(&estimate) {
            measured
        } else {
            estimate
        }
    }

    /// The function as a build without training sees it (path mode's plan:
    /// SBL).
    pub fn untrained(&self) -> Self {
        Function {
            trained: &[],
            ..*self
        }
    }
}

/// How functions are distributed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Partitioned path profiling: functions with at most one call site are
    /// split into tasks.
    P3,
    /// Parallel Ball-Larus: every function is one task.
    Pbl,
}

/// One function's tasks and where they went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionTasks {
    pub tasks: Vec<Task>,
    /// Per task: its copy.
    pub copies: Vec<usize>,
    /// Whether `find_partition` made the tasks.
    pub partitioned: bool,
}

/// The plan of K copies of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramPlan {
    functions: Vec<FunctionTasks>,
    /// Per copy, per function.
    roles: Vec<Vec<Role>>,
    /// Per copy: the cost of the roles it got (its tasks', widened roles
    /// counted once).
    loads: Vec<u64>,
}

/// Plans `copies` (at least 1) copies of the program made of `functions`:
/// the paper's Algorithm 2 when no function has training paths, else guided
/// by them ([`super::trained`]): the functions that carry too much of the
/// training's hits for one copy are partitioned one at a time, the hottest
/// first, each kept only when it lowers the costliest copy's load.
pub fn plan_program(functions: &[Function], copies: usize, strategy: Strategy) -> ProgramPlan {
    assert!(copies > 0, "at least one copy");
    let costs = Costs::new(functions);
    let whole: Vec<Vec<Task>> = functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            vec![Task {
                edges: EdgeSet::full(f.dag.edges().len()),
                cost: costs.of(i, &Role::BallLarus),
            }]
        })
        .collect();
    let mut partitions: Vec<Option<Vec<Task>>> = vec![None; functions.len()];
    if strategy == Strategy::P3 && !costs.trained() {
        for (i, f) in functions.iter().enumerate() {
            partitions[i] = f
                .partitionable()
                .then(|| find_partition(f.cfg, f.dag, &costs.weights[i], threshold(f.dag, copies)));
        }
    }
    let plan = |partitions: &[Option<Vec<Task>>]| {
        let mut per_function: Vec<FunctionTasks> = partitions
            .iter()
            .zip(&whole)
            .map(|(p, whole)| {
                let tasks = p.clone().unwrap_or_else(|| whole.clone());
                FunctionTasks {
                    partitioned: p.is_some(),
                    copies: vec![0; tasks.len()],
                    tasks,
                }
            })
            .collect();
        let (roles, loads) = distribute(functions, &costs, &mut per_function, copies);
        ProgramPlan {
            functions: per_function,
            roles,
            loads,
        }
    };
    let mut best = plan(&partitions);
    if strategy == Strategy::P3 && costs.trained() {
        let total: u64 = whole.iter().map(|t| t[0].cost).fold(0, u64::saturating_add);
        let mut hottest: Vec<usize> = (0..functions.len()).collect();
        hottest.sort_by_key(|&i| std::cmp::Reverse(whole[i][0].cost));
        for i in hottest {
            let Some(tasks) = costs.trained_partition(i, total, copies) else {
                continue;
            };
            partitions[i] = Some(tasks);
            let tried = plan(&partitions);
            if tried.costliest_load() < best.costliest_load() {
                best = tried;
            } else {
                partitions[i] = None;
            }
        }
    }
    best
}

/// What a role costs a copy: its probes, plus what they execute on the
/// training paths when there are any.
struct Costs<'a> {
    functions: &'a [Function<'a>],
    weights: Vec<Weights>,
    trained: Vec<TrainedPaths>,
}

impl<'a> Costs<'a> {
    fn new(functions: &'a [Function<'a>]) -> Self {
        let trained: Vec<TrainedPaths> = functions
            .iter()
            .map(|f| TrainedPaths::new(f.dag, f.trained))
            .collect();
        Costs {
            functions,
            weights: functions
                .iter()
                .zip(&trained)
                .map(|(f, t)| f.weights_with(t))
                .collect(),
            trained,
        }
    }

    /// Whether any function has training paths.
    fn trained(&self) -> bool {
        self.trained.iter().any(|t| !t.is_empty())
    }

    /// The cost of function `f` under `role`.
    fn of(&self, f: usize, role: &Role) -> u64 {
        let func = &self.functions[f];
        let probes = role.probes(func.cfg, func.dag, &self.weights[f]);
        probes
            .count()
            .saturating_add(self.trained[f].hits(func.dag, &probes))
    }

    /// Function `f`'s tasks when its training hits need splitting over
    /// `copies` copies (of the program's `total`), `None` when it stays
    /// whole.
    fn trained_partition(&self, f: usize, total: u64, copies: usize) -> Option<Vec<Task>> {
        let func = &self.functions[f];
        let trained = &self.trained[f];
        let probes = Role::BallLarus.probes(func.cfg, func.dag, &self.weights[f]);
        let hits = trained.hits(func.dag, &probes);
        if !TrainedPaths::needs_split(hits, total, copies) {
            return None;
        }
        let weight = |i| trained.path_hits(i, func.dag, &probes);
        let target = total / (TARGET_PARTS * copies as u64);
        let sets = refine_partition(func.dag, trained, weight, target, MAX_TASKS);
        let tasks: Vec<Task> = sets
            .into_iter()
            .map(|edges| Task {
                cost: self.of(f, &Role::for_edges(func.dag, &edges)),
                edges,
            })
            .collect();
        // It pays only if its costliest part costs less than the whole (a
        // path that takes most of the hits can cost more in a copy that
        // profiles it alone than in Ball-Larus' plan): `of` Ball-Larus.
        let whole = probes.count().saturating_add(hits);
        let costliest = tasks.iter().map(|t| t.cost).max().unwrap_or(0);
        (tasks.len() > 1 && costliest < whole).then_some(tasks)
    }
}

/// A trained partition splits a function until no task carries more than
/// 1/(`TARGET_PARTS` × K) of the program's training hits...
const TARGET_PARTS: u64 = 2;
/// ... or it would have more than `MAX_TASKS` tasks.
const MAX_TASKS: usize = 256;

/// Schedules every task, the largest cost first, onto the copy whose load
/// grows least by taking it ([`schedule`]'s rule, but with a copy's load the
/// cost of the roles it ends up with): a task of a function the copy already
/// profiles part of adds only what widening that role costs, since the
/// function's paths end (and count) in that copy anyway. Returns the roles
/// (per copy, per function) and the loads.
fn distribute(
    functions: &[Function],
    costs: &Costs,
    per_function: &mut [FunctionTasks],
    copies: usize,
) -> (Vec<Vec<Role>>, Vec<u64>) {
    let mut order: Vec<(usize, usize)> = per_function
        .iter()
        .enumerate()
        .flat_map(|(f, ft)| (0..ft.tasks.len()).map(move |t| (f, t)))
        .collect();
    order.sort_by_key(|&(f, t)| std::cmp::Reverse(per_function[f].tasks[t].cost));
    // Per copy, per function: the edges of its tasks there and their role's cost.
    let mut held: Vec<Vec<Option<(EdgeSet, u64)>>> = vec![vec![None; functions.len()]; copies];
    let mut loads = vec![0u64; copies];
    for (f, t) in order {
        let task = &per_function[f].tasks[t];
        let func = &functions[f];
        let grown = |c: usize| match &held[c][f] {
            None => (task.edges.clone(), task.cost, task.cost),
            Some((edges, cost)) => {
                let mut union = edges.clone();
                union.union_with(&task.edges);
                let wider = costs.of(f, &Role::for_edges(func.dag, &union));
                (union, wider, wider.saturating_sub(*cost))
            }
        };
        let (copy, (edges, cost, added)) = (0..copies)
            .map(|c| (c, grown(c)))
            .min_by_key(|(c, (_, _, added))| (loads[*c].saturating_add(*added), *c))
            .expect("at least one copy");
        loads[copy] = loads[copy].saturating_add(added);
        held[copy][f] = Some((edges, cost));
        per_function[f].copies[t] = copy;
    }
    let roles = held
        .into_iter()
        .map(|per_copy| {
            functions
                .iter()
                .zip(per_copy)
                .map(|(func, h)| match h {
                    None => Role::None,
                    Some((edges, _)) => Role::for_edges(func.dag, &edges),
                })
                .collect()
        })
        .collect();
    (roles, loads)
}

impl ProgramPlan {
    /// A plan with these roles (per copy, per function) and no tasks.
    #[cfg(test)]
    pub(super) fn with_roles(roles: Vec<Vec<Role>>) -> ProgramPlan {
        let functions = roles.first().map_or(0, Vec::len);
        ProgramPlan {
            functions: vec![
                FunctionTasks {
                    tasks: Vec::new(),
                    copies: Vec::new(),
                    partitioned: false,
                };
                functions
            ],
            loads: vec![0; roles.len()],
            roles,
        }
    }

    /// K.
    pub fn copies(&self) -> usize {
        self.roles.len()
    }

    pub fn num_functions(&self) -> usize {
        self.functions.len()
    }

    /// How copy `copy` instruments function `f`.
    pub fn role(&self, copy: usize, f: FuncId) -> &Role {
        &self.roles[copy][f.index()]
    }

    /// Function `f`'s tasks and their copies.
    pub fn tasks(&self, f: FuncId) -> &FunctionTasks {
        &self.functions[f.index()]
    }

    /// Whether `f` is profitable: partitioned into more than one task.
    pub fn is_profitable(&self, f: FuncId) -> bool {
        let ft = &self.functions[f.index()];
        ft.partitioned && ft.tasks.len() > 1
    }

    /// The profitable functions (Table 1).
    pub fn profitable(&self) -> impl Iterator<Item = FuncId> + '_ {
        (0..self.functions.len())
            .map(FuncId::new)
            .filter(|&f| self.is_profitable(f))
    }

    /// Per copy: the cost of the roles it got.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }

    /// The largest of [`ProgramPlan::loads`].
    pub fn costliest_load(&self) -> u64 {
        self.loads.iter().copied().max().unwrap_or(0)
    }

    /// The copy that counts `f`'s slots (self loops, resumes, early-exit
    /// calls): the first that instruments it.
    pub fn slot_copy(&self, f: FuncId) -> Option<usize> {
        (0..self.copies()).find(|&c| self.role(c, f).is_instrumented())
    }
}
