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
//!
//! The solving itself is `Network::solve`, leaf elimination on any graph of
//! nodes and arcs with known supplies; it serves the flow graph here and the
//! bipartite graph of unsplittable edges in [`crate::derive`].

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
    /// The callers whose counts give the function's entry count
    /// ([`crate::callers`]): unbalanced when theirs are, the entry count
    /// (inflow) being off by up to outflow − inflow.
    Callers,
}

impl std::fmt::Display for FlowNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowNode::Block(b) => write!(f, "block {b}"),
            FlowNode::Outside => f.write_str("the function's entry/exit"),
            FlowNode::Callers => f.write_str("the callers giving the function's entry count"),
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
        let network = flow_network(cfg);
        let supply = self.supplies(cfg);
        let mut counts = self.arc_counts(cfg, &network);
        let guessed = network.solve(&supply, &mut counts, Guess::Zero, Clamp::EachStep);
        self.take_arc_counts(cfg, &counts);
        self.check(cfg, &network, tolerate_loss, guessed)
    }

    /// Like [`FlowCounts::solve`], for counts where the unknown exits of
    /// blocks with calls are *net* (gcov's fake edges on a spanning tree,
    /// never counted): activations that ended inside a call there, minus
    /// activations that went on in the middle of the block without having
    /// come in (a fork child returning from a call its parent was in). The
    /// solution is computed in signed arithmetic, exactly, and a negative
    /// net exit becomes that many starts.
    pub fn solve_net_exits(&mut self, cfg: &Cfg) -> Solution {
        let network = flow_network(cfg);
        let supply = self.supplies(cfg);
        let mut counts = self.arc_counts(cfg, &network);
        let guessed = network.solve(&supply, &mut counts, Guess::Zero, Clamp::AtEnd);
        for (i, c) in counts.iter_mut().enumerate() {
            if let (FlowEdge::Exit(b), Some(n)) = (flow_edge(cfg, i), *c) {
                if n < 0 {
                    let starts = &mut self.starts[b.index()];
                    *starts = starts.saturating_add(u64::try_from(-n).unwrap_or(u64::MAX));
                    *c = Some(0);
                }
            }
        }
        self.take_arc_counts(cfg, &counts);
        self.check(cfg, &network, false, guessed)
    }

    /// Per node of [`flow_network`], what the known starts add to it.
    fn supplies(&self, cfg: &Cfg) -> Vec<i128> {
        (0..=cfg.num_blocks())
            .map(|v| self.start_balance(v))
            .collect()
    }

    /// The count of each arc of `network`, `None` when unknown.
    fn arc_counts(&self, cfg: &Cfg, network: &Network) -> Vec<Option<i128>> {
        (0..network.num_arcs())
            .map(|i| self.get(flow_edge(cfg, i)).map(i128::from))
            .collect()
    }

    /// Sets every flow edge from its arc's count (unknown, negative: 0).
    fn take_arc_counts(&mut self, cfg: &Cfg, counts: &[Option<i128>]) {
        for (i, &c) in counts.iter().enumerate() {
            self.set(flow_edge(cfg, i), clamp(c.unwrap_or(0)));
        }
    }

    /// Where the counts (all known now) do not balance.
    fn check(
        &self,
        cfg: &Cfg,
        network: &Network,
        tolerate_loss: bool,
        guessed: Vec<usize>,
    ) -> Solution {
        let outside = cfg.num_blocks();
        let supply = self.supplies(cfg);
        let mut solution = Solution {
            lost: 0,
            imbalance: Imbalance {
                nodes: Vec::new(),
                guessed: guessed.into_iter().map(|i| flow_edge(cfg, i)).collect(),
            },
        };
        for (v, &starts) in supply.iter().enumerate() {
            let relevant = v == outside || cfg.is_reachable(BlockId::new(v));
            if !relevant || (tolerate_loss && v == outside) {
                continue;
            }
            let (mut inflow, mut outflow) = (clamp(starts), clamp(-starts));
            for &(arc, into) in network.incident(v) {
                let c = self.get(flow_edge(cfg, arc)).unwrap_or(0);
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

    pub fn get(&self, edge: FlowEdge) -> Option<u64> {
        match edge {
            FlowEdge::Entry => self.entry,
            FlowEdge::Cfg(e) => self.edges[e.index()],
            FlowEdge::Exit(b) => self.exits[b.index()],
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

/// The flow graph as a [`Network`]: nodes are the blocks, then outside;
/// arcs are the entry, the CFG edges, then each block's exit ([`flow_edge`]
/// names them).
fn flow_network(cfg: &Cfg) -> Network {
    let outside = cfg.num_blocks();
    let mut arcs = Vec::with_capacity(1 + cfg.edges().len() + outside);
    arcs.push([outside, cfg.entry().index()]);
    // What leaves `from` by a CFG edge enters `to`, except along a resume
    // edge (after `fork`, `setjmp`...): it enters `to` from outside, and
    // `from` leaves by its exit edge. A self loop is an arc from its block
    // to itself, which carries as much in as out.
    arcs.extend(cfg.edges().iter().map(|ce| {
        let from = if ce.resume { outside } else { ce.from.index() };
        [from, ce.to.index()]
    }));
    // Every block may leave the function: by returning, or by a call that
    // never returns (known only with early-exit counting, else 0).
    arcs.extend(cfg.blocks().map(|b| [b.index(), outside]));
    Network::new(outside + 1, arcs)
}

/// The flow edge that is arc `i` of [`flow_network`].
fn flow_edge(cfg: &Cfg, i: usize) -> FlowEdge {
    let m = cfg.edges().len();
    match i {
        0 => FlowEdge::Entry,
        i if i <= m => FlowEdge::Cfg(EdgeId::new(i - 1)),
        i => FlowEdge::Exit(BlockId::new(i - 1 - m)),
    }
}

/// What [`Network::solve`] takes for an unknown count that conservation
/// cannot determine (one of a cycle of unknown arcs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Guess {
    /// 0.
    Zero,
    /// What the known counts at its ends leave for it, the smaller of the two
    /// (at least 0).
    Smaller,
}

/// A graph for leaf elimination (Ball & Larus 1994): nodes `0..n` and arcs,
/// each flowing out of its tail into its head. In every node, the node's
/// *supply* plus what flows in equals what flows out.
#[derive(Clone, Debug)]
pub(crate) struct Network {
    /// Per arc, `[tail, head]`.
    arcs: Vec<[usize; 2]>,
    /// Per node, its arcs with whether each flows into it; an arc from a node
    /// to itself is in no list.
    incident: Vec<Vec<(usize, bool)>>,
}

impl Network {
    /// The network of `num_nodes` nodes and `arcs` (`[tail, head]`, both
    /// below `num_nodes`).
    pub(crate) fn new(num_nodes: usize, arcs: Vec<[usize; 2]>) -> Network {
        let mut incident: Vec<Vec<(usize, bool)>> = vec![Vec::new(); num_nodes];
        for (i, &[tail, head]) in arcs.iter().enumerate() {
            if tail != head {
                incident[tail].push((i, false));
                incident[head].push((i, true));
            }
        }
        Network { arcs, incident }
    }

    pub(crate) fn num_arcs(&self) -> usize {
        self.arcs.len()
    }

    /// Node `v`'s arcs, each with whether it flows into `v`.
    pub(crate) fn incident(&self, v: usize) -> &[(usize, bool)] {
        &self.incident[v]
    }

    /// Node `v`'s supply plus its known inflow minus its known outflow, and
    /// its arcs of unknown count (the last one, and how many).
    fn balance(
        &self,
        supply: &[i128],
        counts: &[Option<i128>],
        v: usize,
    ) -> (i128, Option<(usize, bool)>, usize) {
        let mut balance = supply[v];
        let (mut unknown, mut unknowns) = (None, 0);
        for &(arc, into) in &self.incident[v] {
            match counts[arc] {
                Some(c) => balance += if into { c } else { -c },
                None => {
                    unknowns += 1;
                    unknown = Some((arc, into));
                }
            }
        }
        (balance, unknown, unknowns)
    }

    /// Fills in every unknown count of `counts` (one per arc) from the known
    /// ones and `supply` (one per node): repeatedly, a node with one arc of
    /// unknown count gets it by conservation. With [`Clamp::EachStep`], a
    /// count is at least 0 and at most `u64::MAX` as soon as it is solved
    /// (where the known counts do not balance; the caller checks the
    /// balance); with [`Clamp::AtEnd`], counts are solved in signed
    /// arithmetic and the caller reads negative ones. Exact when the unknown
    /// arcs form a forest; where they form a cycle, one of them takes
    /// `guess` and the rest follow. Nodes are visited from the last, a
    /// solved arc's head first and then its tail. Returns the arcs guessed,
    /// in order; never fails.
    pub(crate) fn solve(
        &self,
        supply: &[i128],
        counts: &mut [Option<i128>],
        guess: Guess,
        when: Clamp,
    ) -> Vec<usize> {
        let step = |x: i128| match when {
            Clamp::EachStep => i128::from(clamp(x)),
            Clamp::AtEnd => x,
        };
        let mut guessed = Vec::new();
        let mut work: Vec<usize> = (0..self.incident.len()).collect();
        loop {
            while let Some(v) = work.pop() {
                let (balance, unknown, unknowns) = self.balance(supply, counts, v);
                let (Some((arc, into)), 1) = (unknown, unknowns) else {
                    continue;
                };
                // Negative when the counts do not balance: 0, and the node
                // shows up unbalanced in the caller's check.
                counts[arc] = Some(step(if into { -balance } else { balance }));
                // The other end may now be solvable.
                work.extend(self.arcs[arc]);
            }
            // Conservation cannot tell the remaining unknowns apart (a cycle
            // of unknown arcs): guess one and go on.
            let Some(arc) = counts.iter().position(Option::is_none) else {
                break;
            };
            let [tail, head] = self.arcs[arc];
            let value = match guess {
                Guess::Zero => 0,
                Guess::Smaller => {
                    let at_tail = self.balance(supply, counts, tail).0;
                    let at_head = -self.balance(supply, counts, head).0;
                    step(at_tail).min(step(at_head)).max(0)
                }
            };
            counts[arc] = Some(value);
            guessed.push(arc);
            work.extend([tail, head]);
        }
        guessed
    }
}

/// When [`Network::solve`] brings solved counts into `0..=u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clamp {
    EachStep,
    AtEnd,
}

/// `x` brought into `0..=u64::MAX`.
fn clamp(x: i128) -> u64 {
    u64::try_from(x.max(0)).unwrap_or(u64::MAX)
}
