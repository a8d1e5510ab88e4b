//! Flow conservation on a function's *flow graph*: the CFG plus one virtual node
//! "outside" joined to the entry ([`FlowEdge::Entry`]) and from every exit block
//! ([`FlowEdge::Exit`]). In every node, what flows in flows out, so given enough
//! edge counts the rest follow (Ball & Larus 1994; QPT2): repeatedly find a node
//! with one unknown edge and solve it. The unknown edges must form a forest (a
//! spanning tree's edges always do). Every block has an exit edge to "outside":
//! returns, and executions ended inside a call that never returned. A resume
//! edge (after `fork`, `setjmp`...) runs from "outside" to its target, and its
//! source leaves by its exit edge: one return of such a call may come in another
//! process or after a `longjmp`, so only that way is flow conserved. An
//! activation can also *start* in the middle of a block, from outside: a fork
//! child returning from a call its parent was in at the fork (known only with
//! early-exit counting, from the profile's resumes; [`FlowCounts::starts`]).

use crate::cfg::Cfg;
use crate::ids::{BlockId, EdgeId};
use crate::layout::FlowEdge;

/// Counts of every flow edge, some perhaps unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowCounts {
    /// Calls of the function.
    pub entry: Option<u64>,
    /// Per CFG edge.
    pub edges: Vec<Option<u64>>,
    /// Per block: how often the function was left from it (returns from exit
    /// blocks; with early-exit counting, calls in it that never returned).
    pub exits: Vec<Option<u64>>,
    /// Per block: activations that came into it from outside in the middle,
    /// after one of its calls returned although the activation's count up
    /// to that call was its parent's (a fork child). Always known.
    pub starts: Vec<u64>,
}

/// A node of the flow graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlowNode {
    Block(BlockId),
    /// The virtual node "outside the function" (calls come from it, returns go
    /// to it).
    Outside,
}

impl std::fmt::Display for FlowNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowNode::Block(b) => write!(f, "block {b}"),
            FlowNode::Outside => f.write_str("the function's entry/exit"),
        }
    }
}

/// A node whose counted inflow and outflow differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unbalanced {
    pub node: FlowNode,
    pub inflow: u64,
    pub outflow: u64,
}

/// The account of where a function's counts do not balance. Counts of a real,
/// complete run always balance; these do not when a process died mid-path,
/// threads raced on counters without atomic updates, or a counter was damaged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imbalance {
    /// Nodes whose flow does not balance and that early termination does not
    /// explain (excess inflow into a block, with `tolerate_loss`, is counted as
    /// lost instead), in node order.
    pub nodes: Vec<Unbalanced>,
    /// Flow edges whose count conservation could not determine (parallel
    /// unsplittable edges): they hold one split consistent with their ends,
    /// not a measurement.
    pub guessed: Vec<FlowEdge>,
}

impl Imbalance {
    /// The size of the imbalance: over the unbalanced nodes, how much more
    /// flowed out than in (impossible in a complete run). With flow solved by
    /// conservation, every excess outflow is matched by an excess inflow
    /// elsewhere, so this is half the total absolute imbalance.
    pub fn total(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| n.outflow.saturating_sub(n.inflow))
            .fold(0, u64::saturating_add)
    }

    /// Whether every node balances.
    pub fn is_balanced(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// What [`FlowCounts::solve`] found besides the counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Solution {
    /// With `tolerate_loss`: the total excess inflow into blocks, executions
    /// that ended there unseen.
    pub lost: u64,
    pub imbalance: Imbalance,
}

impl FlowCounts {
    /// All unknown, except that non-exit blocks and unreachable code have no
    /// returns and unreachable edges run 0 times.
    pub fn unknown(cfg: &Cfg) -> FlowCounts {
        FlowCounts {
            entry: None,
            edges: cfg
                .edges()
                .iter()
                .map(|e| (!cfg.is_reachable(e.from)).then_some(0))
                .collect(),
            exits: cfg
                .blocks()
                .map(|b| {
                    let leaves = cfg.is_exit(b) || cfg.ends_in_resume(b);
                    (!leaves || !cfg.is_reachable(b)).then_some(0)
                })
                .collect(),
            starts: vec![0; cfg.num_blocks()],
        }
    }

    /// What the known starts add to node `v`'s balance (inflow positive).
    fn start_balance(&self, v: usize) -> i128 {
        match self.starts.get(v) {
            Some(&c) => c as i128,
            None => -self.starts.iter().map(|&c| c as i128).sum::<i128>(),
        }
    }

    pub fn set(&mut self, edge: FlowEdge, count: u64) {
        match edge {
            FlowEdge::Entry => self.entry = Some(count),
            FlowEdge::Cfg(e) => self.edges[e.index()] = Some(count),
            FlowEdge::Exit(b) => self.exits[b.index()] = Some(count),
        }
    }

    /// Fills in every unknown count by flow conservation; never fails. Where
    /// the known counts do not balance, a count that would be negative is 0,
    /// and the nodes left unbalanced are reported. With `tolerate_loss`, a
    /// block whose inflow exceeds its outflow is accepted (executions that
    /// ended there unseen, as when a process exits inside a call) and counted
    /// in [`Solution::lost`]; the outside node then takes what it must.
    pub fn solve(&mut self, cfg: &Cfg, tolerate_loss: bool) -> Solution {
        let outside = cfg.num_blocks();
        let incident = incidence(cfg);
        let mut guessed = Vec::new();
        let mut work: Vec<usize> = (0..=outside).collect();
        loop {
            while let Some(v) = work.pop() {
                let mut unknown = None;
                let mut unknowns = 0;
                let mut balance: i128 = self.start_balance(v);
                for &(edge, into) in &incident[v] {
                    match self.get(edge) {
                        Some(c) => balance += if into { c as i128 } else { -(c as i128) },
                        None => {
                            unknowns += 1;
                            unknown = Some((edge, into));
                        }
                    }
                }
                if unknowns != 1 {
                    continue;
                }
                let (edge, into) = unknown.expect("one unknown");
                let value = if into { -balance } else { balance };
                // Negative when the counts do not balance: 0, and the node
                // shows up unbalanced below.
                self.set(edge, u64::try_from(value.max(0)).unwrap_or(u64::MAX));
                // The other end may now be solvable.
                work.extend(self.ends(cfg, edge));
            }
            // Conservation cannot tell the remaining unknowns apart (a cycle
            // of unknown edges): take 0 for one and go on.
            let Some(edge) = self.first_unknown() else {
                break;
            };
            self.set(edge, 0);
            guessed.push(edge);
            work.extend(self.ends(cfg, edge));
        }
        let mut solution = Solution {
            lost: 0,
            imbalance: Imbalance {
                nodes: Vec::new(),
                guessed,
            },
        };
        for (v, edges) in incident.iter().enumerate() {
            let relevant = v == outside || cfg.is_reachable(BlockId::new(v));
            if !relevant || (tolerate_loss && v == outside) {
                continue;
            }
            let starts = self.start_balance(v);
            let (mut inflow, mut outflow) = (
                u64::try_from(starts.max(0)).unwrap_or(u64::MAX),
                u64::try_from((-starts).max(0)).unwrap_or(u64::MAX),
            );
            for &(edge, into) in edges {
                let c = self.get(edge).unwrap_or(0);
                let side = if into { &mut inflow } else { &mut outflow };
                *side = side.saturating_add(c);
            }
            if inflow > outflow && tolerate_loss {
                solution.lost = solution.lost.saturating_add(inflow - outflow);
            } else if inflow != outflow {
                let node = if v == outside {
                    FlowNode::Outside
                } else {
                    FlowNode::Block(BlockId::new(v))
                };
                solution.imbalance.nodes.push(Unbalanced {
                    node,
                    inflow,
                    outflow,
                });
            }
        }
        solution
    }

    fn first_unknown(&self) -> Option<FlowEdge> {
        if self.entry.is_none() {
            return Some(FlowEdge::Entry);
        }
        if let Some(e) = self.edges.iter().position(Option::is_none) {
            return Some(FlowEdge::Cfg(EdgeId::new(e)));
        }
        self.exits
            .iter()
            .position(Option::is_none)
            .map(|b| FlowEdge::Exit(BlockId::new(b)))
    }

    pub fn get(&self, edge: FlowEdge) -> Option<u64> {
        match edge {
            FlowEdge::Entry => self.entry,
            FlowEdge::Cfg(e) => self.edges[e.index()],
            FlowEdge::Exit(b) => self.exits[b.index()],
        }
    }

    fn ends(&self, cfg: &Cfg, edge: FlowEdge) -> [usize; 2] {
        let outside = cfg.num_blocks();
        match edge {
            FlowEdge::Entry => [outside, cfg.entry().index()],
            FlowEdge::Cfg(e) if cfg.edge(e).resume => [outside, cfg.edge(e).to.index()],
            FlowEdge::Cfg(e) => [cfg.edge(e).from.index(), cfg.edge(e).to.index()],
            FlowEdge::Exit(b) => [b.index(), outside],
        }
    }

    /// Block execution counts: flow into each block (calls for the entry).
    pub fn block_counts(&self, cfg: &Cfg) -> Vec<u64> {
        cfg.blocks()
            .map(|b| {
                let mut c: u64 = cfg
                    .preds(b)
                    .iter()
                    .map(|&e| self.edges[e.index()].unwrap_or(0))
                    .fold(0, u64::saturating_add);
                if b == cfg.entry() {
                    c = c.saturating_add(self.entry.unwrap_or(0));
                }
                c
            })
            .collect()
    }
}

/// The flow edges incident to each node (blocks, then outside), each with
/// whether it flows into the node.
fn incidence(cfg: &Cfg) -> Vec<Vec<(FlowEdge, bool)>> {
    let outside = cfg.num_blocks();
    let mut incident: Vec<Vec<(FlowEdge, bool)>> = vec![Vec::new(); outside + 1];
    incident[outside].push((FlowEdge::Entry, false));
    incident[cfg.entry().index()].push((FlowEdge::Entry, true));
    for e in cfg.edge_ids() {
        let ce = cfg.edge(e);
        if ce.from == ce.to {
            continue; // a self loop carries as much in as out
        }
        // What leaves `from` by a CFG edge enters `to`, except along a resume
        // edge (after `fork`, `setjmp`...): it enters `to` from outside, and
        // `from` leaves by its exit edge.
        let from = if ce.resume { outside } else { ce.from.index() };
        incident[from].push((FlowEdge::Cfg(e), false));
        incident[ce.to.index()].push((FlowEdge::Cfg(e), true));
    }
    // Every block may leave the function: by returning, or by a call that
    // never returns (known only with early-exit counting, else 0).
    for b in cfg.blocks() {
        incident[b.index()].push((FlowEdge::Exit(b), false));
        incident[outside].push((FlowEdge::Exit(b), true));
    }
    incident
}
