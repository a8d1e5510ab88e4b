//! P3 over a whole program (Afraz et al. 2015, Algorithm 2): each function's
//! tasks, their distribution over K copies, and each copy's role for each
//! function.
//!
//! A function called from at most one call site (`call_count(P) ≤ 1`, line 5)
//! is partitioned ([`find_partition`] with Δ = [`threshold`]); any other is
//! one task of all its paths, costed as Ball-Larus. All tasks are scheduled
//! together ([`schedule`]); a copy then profiles, per function, the paths
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

use super::partition::{find_partition, threshold, Task};
use super::role::Role;
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
    /// Per copy: the sum of its tasks' costs.
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
    let costs: Vec<u64> = per_function
        .iter()
        .flat_map(|f| f.tasks.iter().map(|t| t.cost))
        .collect();
    let scheduled = schedule(&costs, copies);
    let mut next = scheduled.copy_of.iter();
    for f in &mut per_function {
        for copy in &mut f.copies {
            *copy = *next.next().expect("a copy per task");
        }
    }
    let roles = (0..copies)
        .map(|c| {
            functions
                .iter()
                .zip(&per_function)
                .map(|(f, ft)| {
                    let mut edges = super::EdgeSet::empty(f.dag.edges().len());
                    for (task, _) in ft.tasks.iter().zip(&ft.copies).filter(|(_, &k)| k == c) {
                        edges.union_with(&task.edges);
                    }
                    Role::for_edges(f.dag, &edges)
                })
                .collect()
        })
        .collect();
    ProgramPlan {
        functions: per_function,
        roles,
        loads: scheduled.loads,
    }
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

    /// Per copy: the sum of the costs of its tasks.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }

    /// The copy that counts `f`'s slots (self loops, resumes, early-exit
    /// calls): the first that instruments it.
    pub fn slot_copy(&self, f: FuncId) -> Option<usize> {
        (0..self.copies()).find(|&c| self.role(c, f).is_instrumented())
    }
}
