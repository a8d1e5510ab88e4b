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
}

impl Function<'_> {
    /// Whether P3 may split its paths over copies (`call_count(P) ≤ 1`).
    pub fn partitionable(&self) -> bool {
        self.call_sites <= 1
    }

    /// The weights costs are computed under.
    pub fn weights(&self) -> Weights {
        Weights::estimate(self.cfg)
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

/// Plans `copies` (at least 1) copies of the program made of `functions`.
pub fn plan_program(functions: &[Function], copies: usize, strategy: Strategy) -> ProgramPlan {
    assert!(copies > 0, "at least one copy");
    let mut per_function: Vec<FunctionTasks> = functions
        .iter()
        .map(|f| {
            let weights = f.weights();
            let partitioned = strategy == Strategy::P3 && f.partitionable();
            let tasks = if partitioned {
                find_partition(f.cfg, f.dag, &weights, threshold(f.dag, copies))
            } else {
                let cost = Role::BallLarus.probes(f.cfg, f.dag, &weights).count();
                vec![Task {
                    edges: super::EdgeSet::full(f.dag.edges().len()),
                    cost,
                }]
            };

            FunctionTasks {
                copies: vec![0; tasks.len()],
                tasks,
                partitioned,
            }
        })
        .collect();
    let (roles, loads) = distribute(functions, &mut per_function, copies);
    ProgramPlan {
        functions: per_function,
        roles,
        loads,
    }
}

/// Schedules every task, the largest cost first, onto the copy whose load
/// grows least by taking it ([`schedule`]'s rule, but with a copy's load the
/// cost of the roles it ends up with): a task of a function the copy already
/// profiles part of adds only what widening that role costs, since the
/// function's paths end (and count) in that copy anyway. Returns the roles
/// (per copy, per function) and the loads.
fn distribute(
    functions: &[Function],
    per_function: &mut [FunctionTasks],
    copies: usize,
) -> (Vec<Vec<Role>>, Vec<u64>) {
    let mut order: Vec<(usize, usize)> = per_function
        .iter()
        .enumerate()
        .flat_map(|(f, ft)| (0..ft.tasks.len()).map(move |t| (f, t)))
        .collect();
    order.sort_by_key(|&(f, t)| std::cmp::Reverse(per_function[f].tasks[t].cost));
    let weights: Vec<Weights> = functions.iter().map(Function::weights).collect();
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
                let wider = Role::for_edges(func.dag, &union)
                    .probes(func.cfg, func.dag, &weights[f])
                    .count();
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

    /// The copy that counts `f`'s slots (self loops, resumes, early-exit
    /// calls): the first that instruments it.
    pub fn slot_copy(&self, f: FuncId) -> Option<usize> {
        (0..self.copies()).find(|&c| self.role(c, f).is_instrumented())
    }
}
