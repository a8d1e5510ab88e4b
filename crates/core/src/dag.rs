//! CFG → DAG conversion and Ball-Larus path numbering (Ball & Larus 1996, sections
//! 3.2, 4, 4.1 and 5.3).
//!
//! Terms:
//! - Nodes are the CFG's blocks (same ids), then a virtual ENTRY and a virtual EXIT.
//!   ENTRY→entry-block stands for "the function is called", so an entry block that
//!   heads a loop needs no special case.
//! - A *backedge* is a CFG edge to a block on the depth-first-search stack from the
//!   entry (so irreducible loops work), in the graph without the edges that
//!   end paths anyway (unsplittable edges, their siblings, resume edges; see
//!   [`backedges_between_cuts`]). It leaves the DAG and is replaced by two
//!   dummy edges of its own, ENTRY→target ([`DagEdgeKind::BackEntry`]) and
//!   source→EXIT ([`DagEdgeKind::BackExit`]); two backedges out of one block thus
//!   end different paths.
//! - A *self loop* is kept apart with its own counter (section 4.1) unless it is
//!   its block's only way out or its block is entered by an unsplittable edge;
//!   then it is treated as a backedge.
//! - An *unsplittable* edge (`indirectbr`, `callbr`, exception edges) cannot carry
//!   code, so every out-edge of a block that has one is cut: one dummy
//!   source→EXIT per such block ([`DagEdgeKind::UnsplitExit`], placed before the
//!   terminator); one dummy ENTRY→target per target of unsplittable edges
//!   ([`DagEdgeKind::UnsplitEntry`], which never carries code and is kept on the
//!   spanning tree); and for each splittable sibling edge its own ENTRY→target
//!   ([`DagEdgeKind::BackEntry`], placed on the edge). Counts of unsplittable
//!   edges are recovered from the paths ending before and starting after them.
//! - A *cut* (section 5.3) is a forward CFG edge out of a block whose path count
//!   exceeded the threshold; it is treated exactly like a backedge.
//! - A *resume* edge (after `fork`, `setjmp`..., see [`crate::cfg`]) is cut the
//!   same way, for good: the path ends just before the call ([`DagEdgeKind::BackExit`],
//!   placed before the call) and a new one starts just after it
//!   ([`DagEdgeKind::BackEntry`], placed after it). So a `fork` parent counts the
//!   prefix once, each process counts what it runs after the call, and a
//!   `longjmp` back to a `setjmp` starts a fresh path.
//!
//! Numbering (Figure 5): `NumPaths` in reverse topological order, successors with
//! fewer paths first (section 5.2), `Val(e)` = paths of the successors visited
//! before. Every ENTRY→EXIT path gets a distinct id in `0..NumPaths(ENTRY)`.
//! Unreachable blocks get no DAG edges.

use crate::cfg::Cfg;
use crate::ids::{BlockId, DagEdgeId, EdgeId, NodeId};

/// What a DAG edge stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DagEdgeKind {
    /// ENTRY → entry block.
    Entry,
    /// A forward CFG edge.
    Cfg(EdgeId),
    /// Block with no way out but returning (or only self loops) → EXIT.
    Exit(BlockId),
    /// ENTRY → target of a backedge or cut: a path starting after it.
    BackEntry(EdgeId),
    /// Source of a backedge or cut → EXIT: a path ending with it.
    BackExit(EdgeId),
    /// ENTRY → a target of unsplittable edges: a path starting after one.
    UnsplitEntry(BlockId),
    /// A block with unsplittable out-edges → EXIT: a path ending before its
    /// terminator.
    UnsplitExit(BlockId),
    /// Block → EXIT inside its `k`-th call that might not return: a path cut short
    /// by early termination (`exit`, `longjmp`). Only with
    /// [`DagOptions::early_exit`], and only for calls before the terminator
    /// ([`Cfg::inner_calls`]): the path through a block whose terminator is a
    /// call (an `invoke`) has ended before it.
    CallExit(BlockId, u32),
}

/// One DAG edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DagEdge {
    pub from: NodeId,
    pub to: NodeId,
    pub kind: DagEdgeKind,
}

/// How each CFG edge is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeClass {
    /// In the DAG as a [`DagEdgeKind::Cfg`] edge.
    Forward,
    /// A backedge: [`DagEdgeKind::BackEntry`] + [`DagEdgeKind::BackExit`].
    Back,
    /// A forward edge cut by truncation: like a backedge.
    Cut,
    /// A resume edge (after a call that returns more than once): like a
    /// backedge, with the path-ending part before the call.
    Resume,
    /// A self loop counted apart (section 4.1).
    SelfLoop,
    /// An unsplittable edge: its block's paths end before the terminator
    /// ([`DagEdgeKind::UnsplitExit`]) and its target's start with
    /// [`DagEdgeKind::UnsplitEntry`].
    Unsplit,
    /// A splittable edge out of a block that has unsplittable ones: the path ends
    /// before the terminator too, and the next starts on this edge with
    /// [`DagEdgeKind::BackEntry`].
    Sibling,
    /// From an unreachable block.
    Unreachable,
}

/// Why no DAG could be numbered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DagError {
    #[error("the function has {0} potential paths even after truncation, more than the {1} pathprof can number; lower --max-paths")]
    TooManyPaths(u128, u64),
}

/// The numbered DAG of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dag {
    num_blocks: usize,
    edges: Vec<DagEdge>,
    classes: Vec<EdgeClass>,
    val: Vec<u64>,
    num_paths: Vec<u64>,
    succs: Vec<Vec<DagEdgeId>>,
    preds: Vec<Vec<DagEdgeId>>,
    topo: Vec<NodeId>,
}

impl Dag {
    /// The DAG over `num_blocks` blocks with these edges, edge classes and
    /// `Val`s, as a map stores it ([`crate::map::schema::Dag`]), checked: every
    /// node in range, no cycle, and the `Val`s numbering the paths as Figure 5
    /// does, so that every id in `0..num_paths()` regenerates to exactly one
    /// path. The classes are taken as given (a map's reader checks that there is
    /// one per CFG edge).
    pub fn from_numbering(
        num_blocks: usize,
        edges: Vec<DagEdge>,
        classes: Vec<EdgeClass>,
        val: Vec<u64>,
    ) -> Result<Dag, String> {
        if num_blocks > i32::MAX as usize {
            return Err(format!(
                "DAG has {num_blocks} blocks, more than the 2^31 pathprof supports"
            ));
        }
        let n = num_blocks + 2;
        if val.len() != edges.len() {
            return Err("DAG values and edges differ in number".into());
        }
        if edges
            .iter()
            .any(|e| e.from.index() >= n || e.to.index() >= n)
        {
            return Err("DAG edge names a node that does not exist".into());
        }
        let mut dag = Dag::from_parts(num_blocks, edges, classes);
        let order = dag.topo.clone();
        if order.len() != n {
            return Err("DAG has a cycle".into());
        }
        dag.num_paths = count_paths(&dag, &order);
        dag.val = val;
        dag.check_numbering()?;
        Ok(dag)
    }

    /// Checks that `val` numbers the paths as Figure 5 does, so that every id in
    /// `0..num_paths()` regenerates to exactly one path: no edge enters ENTRY or
    /// leaves EXIT, and at every other node the out-edges by increasing `Val`
    /// start at 0, each where the one before ends (its `Val` plus its target's
    /// `NumPaths`, at least 1), the last at the node's `NumPaths`, no sum
    /// overflowing.
    fn check_numbering(&self) -> Result<(), String> {
        if !self.preds[self.entry().index()].is_empty()
            || !self.succs[self.exit().index()].is_empty()
        {
            return Err("DAG has an edge into ENTRY or out of EXIT".into());
        }
        let mut out: Vec<(u64, u64)> = Vec::new();
        for v in (0..self.num_nodes()).map(NodeId::new) {
            if v == self.exit() {
                continue;
            }
            out.clear();
            out.extend(self.succs[v.index()].iter().map(|&e| {
                let to = self.edges[e.index()].to;
                (self.val[e.index()], self.num_paths[to.index()])
            }));
            out.sort_unstable();
            let mut next = Some(0u64);
            for &(val, paths) in &out {
                next = next
                    .filter(|&n| n == val && paths > 0)
                    .and_then(|n| n.checked_add(paths));
            }
            if next != Some(self.num_paths[v.index()]) {
                return Err(format!("DAG path numbering is inconsistent at node {v}"));
            }
        }
        Ok(())
    }
}

/// Options for DAG construction.
#[derive(Clone, Copy, Debug)]
pub struct DagOptions {
    /// The most paths a function may have; above it, nodes are cut (section 5.3).
    pub max_paths: u64,
    /// Give every call that might not return a path of its own ending there
    /// (the LLVM notes' early-termination handling).
    pub early_exit: bool,
}

impl Default for DagOptions {
    fn default() -> Self {
        // Ids are 64-bit keys; keep well clear of overflow in `r + c`.
        DagOptions {
            max_paths: 1 << 62,
            early_exit: false,
        }
    }
}

impl Dag {
    /// Builds and numbers the DAG of `cfg`, truncating as needed.
    pub fn build(cfg: &Cfg, options: DagOptions) -> Result<Dag, DagError> {
        let base = classify(cfg);
        let max = options.max_paths.max(1);
        // Per-node threshold: start at the global maximum and halve until the
        // whole function fits (cutting only ever lowers per-node counts).
        let mut threshold = max;
        loop {
            let mut classes = base.clone();
            let dag = Dag::from_parts(
                cfg.num_blocks(),
                dag_edges(cfg, &classes, options.early_exit),
                classes.clone(),
            );
            let order = dag.topo.clone();
            let mut cut_any = false;
            let cut_nodes = cut_nodes(&dag, &order, threshold);
            for v in &cut_nodes {
                for &e in cfg.succs(BlockId::new(v.index())) {
                    if classes[e.index()] == EdgeClass::Forward {
                        classes[e.index()] = EdgeClass::Cut;
                        cut_any = true;
                    }
                }
            }
            let dag = if cut_any {
                Dag::from_parts(
                    cfg.num_blocks(),
                    dag_edges(cfg, &classes, options.early_exit),
                    classes,
                )
            } else {
                dag
            };
            let total = dag.num_paths[dag.entry().index()];
            if total <= max {
                return Ok(dag.numbered());
            }
            if threshold <= 1 {
                return Err(DagError::TooManyPaths(total as u128, max));
            }
            threshold /= 2;
        }
    }

    fn from_parts(num_blocks: usize, edges: Vec<DagEdge>, classes: Vec<EdgeClass>) -> Dag {
        let n = num_blocks + 2;
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (i, e) in edges.iter().enumerate() {
            succs[e.from.index()].push(DagEdgeId::new(i));
            preds[e.to.index()].push(DagEdgeId::new(i));
        }
        let mut dag = Dag {
            num_blocks,
            val: vec![0; edges.len()],
            edges,
            classes,
            num_paths: vec![0; n],
            succs,
            preds,
            topo: Vec::new(),
        };
        dag.topo = topological_order(&dag);
        if dag.topo.len() == n {
            let order = dag.topo.clone();
            dag.num_paths = count_paths(&dag, &order);
        }
        dag
    }

    /// Assigns `Val` (Figure 5) visiting successors with fewer paths first.
    fn numbered(mut self) -> Dag {
        for &v in self.topo.iter().rev() {
            let mut out: Vec<DagEdgeId> = self.succs[v.index()].clone();
            out.sort_by_key(|&e| self.num_paths[self.edges[e.index()].to.index()]);
            let mut acc = 0u64;
            for e in out {
                self.val[e.index()] = acc;
                acc = acc.saturating_add(self.num_paths[self.edges[e.index()].to.index()]);
            }
        }
        self
    }

    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }
    pub fn num_nodes(&self) -> usize {
        self.num_blocks + 2
    }
    pub fn entry(&self) -> NodeId {
        NodeId::new(self.num_blocks)
    }
    pub fn exit(&self) -> NodeId {
        NodeId::new(self.num_blocks + 1)
    }
    pub fn edges(&self) -> &[DagEdge] {
        &self.edges
    }
    pub fn edge(&self, e: DagEdgeId) -> &DagEdge {
        &self.edges[e.index()]
    }
    pub fn edge_ids(&self) -> impl Iterator<Item = DagEdgeId> {
        (0..self.edges.len()).map(DagEdgeId::new)
    }
    pub fn succs(&self, v: NodeId) -> &[DagEdgeId] {
        &self.succs[v.index()]
    }
    pub fn preds(&self, v: NodeId) -> &[DagEdgeId] {
        &self.preds[v.index()]
    }
    /// `Val(e)` of Figure 5.
    pub fn val(&self, e: DagEdgeId) -> u64 {
        self.val[e.index()]
    }
    /// `NumPaths(v)`: paths from `v` to EXIT.
    pub fn node_paths(&self, v: NodeId) -> u64 {
        self.num_paths[v.index()]
    }
    /// `NumPaths(ENTRY)`: the function's potential paths; ids are `0..num_paths()`.
    pub fn num_paths(&self) -> u64 {
        self.num_paths[self.entry().index()]
    }
    /// How each CFG edge is treated.
    pub fn classes(&self) -> &[EdgeClass] {
        &self.classes
    }
    /// Nodes in topological order (ENTRY first, EXIT last).
    pub fn topological_order(&self) -> &[NodeId] {
        &self.topo
    }
    /// The block of a node, `None` for ENTRY and EXIT.
    pub fn block(&self, v: NodeId) -> Option<BlockId> {
        (v.index() < self.num_blocks).then(|| BlockId::new(v.index()))
    }
    pub fn node(&self, b: BlockId) -> NodeId {
        NodeId::new(b.index())
    }
    /// The CFG edges cut by truncation (section 5.3).
    pub fn cuts(&self) -> impl Iterator<Item = EdgeId> + '_ {
        self.classes
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == EdgeClass::Cut)
            .map(|(i, _)| EdgeId::new(i))
    }
}

/// The backedges of `cfg`, indexed by [`EdgeId`]: `true` for a CFG edge to a
/// block on the stack of the depth-first search from the entry, which visits
/// each block's successors in slot order (see the module doc). A self loop is
/// a backedge; an irreducible loop has at least one; edges out of blocks the
/// entry does not reach are not. Every cycle of reachable blocks holds one,
/// so the reachable graph without them is acyclic. These are the loops of
/// [`crate::weights`]' estimate and of the CFG reports draw; the DAG's
/// backedges are [`backedges_between_cuts`].
pub fn backedges(cfg: &Cfg) -> Vec<bool> {
    backedges_between_cuts(cfg, &vec![false; cfg.edges().len()])
}

/// The backedges of `cfg` without the edges that end paths anyway (`cut`,
/// indexed by [`EdgeId`]: unsplittable edges, their siblings, resume
/// edges): the same search as [`backedges`], which does not follow cut
/// edges and starts again at their targets, in edge order, for the blocks
/// it has not reached. Every cycle of reachable blocks holds a cut edge or
/// one of these, so the DAG is acyclic; a loop that a cut edge already
/// closes needs no backedge of its own. So an interpreter's dispatch through
/// a computed `goto` (an `indirectbr` to every handler, unsplittable) ends
/// one path per instruction at the dispatch, where a backedge into the
/// dispatch block would end a second, one-block path there too: half of
/// the path counts of Lua's `luaV_execute`. These decide
/// [`EdgeClass::Back`].
pub fn backedges_between_cuts(cfg: &Cfg, cut: &[bool]) -> Vec<bool> {
    let mut back = vec![false; cfg.edges().len()];
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unseen,
        OnStack,
        Done,
    }
    let mut state = vec![State::Unseen; cfg.num_blocks()];
    let roots = std::iter::once(cfg.entry()).chain(
        cfg.edge_ids()
            .filter(|e| cut[e.index()] && cfg.is_reachable(cfg.edge(*e).from))
            .map(|e| cfg.edge(e).to),
    );
    let mut stack: Vec<(BlockId, usize)> = Vec::new();
    for root in roots {
        if state[root.index()] != State::Unseen {
            continue;
        }
        state[root.index()] = State::OnStack;
        stack.push((root, 0));
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&e) = cfg.succs(b).get(*next) {
                *next += 1;
                if cut[e.index()] {
                    continue;
                }
                let to = cfg.edge(e).to;
                match state[to.index()] {
                    State::Unseen => {
                        state[to.index()] = State::OnStack;
                        stack.push((to, 0));
                    }
                    State::OnStack => back[e.index()] = true,
                    State::Done => {}
                }
            } else {
                state[b.index()] = State::Done;
                stack.pop();
            }
        }
    }
    back
}

/// Classifies CFG edges: the special edges block by block, then the
/// backedges among the rest by [`backedges_between_cuts`], the edges that
/// end paths anyway (resume, unsplittable and sibling edges) being the cuts.
fn classify(cfg: &Cfg) -> Vec<EdgeClass> {
    let mut classes = vec![EdgeClass::Forward; cfg.edges().len()];
    // Blocks entered by unsplittable edges may count paths at their top, which a
    // self loop kept apart would repeat: there, self loops are backedges.
    let mut unsplit_target = vec![false; cfg.num_blocks()];
    for e in cfg.edges().iter().filter(|e| !e.splittable) {
        unsplit_target[e.to.index()] = true;
    }
    for b in cfg.blocks() {
        let succs = cfg.succs(b);
        if !cfg.is_reachable(b) {
            for &e in succs {
                classes[e.index()] = EdgeClass::Unreachable;
            }
        } else if cfg.ends_in_resume(b) {
            classes[succs[0].index()] = EdgeClass::Resume;
        } else if succs.iter().any(|&e| !cfg.edge(e).splittable) {
            for &e in succs {
                classes[e.index()] = if cfg.edge(e).splittable {
                    EdgeClass::Sibling
                } else {
                    EdgeClass::Unsplit
                };
            }
        } else {
            let only_self = succs.iter().all(|&e| cfg.edge(e).to == b);
            if !only_self && !unsplit_target[b.index()] {
                for &e in succs {
                    if cfg.edge(e).to == b {
                        classes[e.index()] = EdgeClass::SelfLoop;
                    }
                }
            }
        }
    }
    let cut: Vec<bool> = classes
        .iter()
        .map(|c| {
            matches!(
                c,
                EdgeClass::Resume | EdgeClass::Sibling | EdgeClass::Unsplit
            )
        })
        .collect();
    let back = backedges_between_cuts(cfg, &cut);
    for (class, back) in classes.iter_mut().zip(back) {
        if back && *class == EdgeClass::Forward {
            *class = EdgeClass::Back;
        }
    }
    classes
}

/// The DAG's edges in a fixed order: ENTRY's, then each block's in slot order.
fn dag_edges(cfg: &Cfg, classes: &[EdgeClass], early_exit: bool) -> Vec<DagEdge> {
    let n = cfg.num_blocks();
    let entry = NodeId::new(n);
    let exit = NodeId::new(n + 1);
    let node = |b: BlockId| NodeId::new(b.index());
    let mut edges = vec![DagEdge {
        from: entry,
        to: node(cfg.entry()),
        kind: DagEdgeKind::Entry,
    }];
    let mut unsplit_target = vec![false; n];
    for e in cfg.edge_ids() {
        let ce = cfg.edge(e);
        match classes[e.index()] {
            EdgeClass::Back | EdgeClass::Cut | EdgeClass::Resume | EdgeClass::Sibling => edges
                .push(DagEdge {
                    from: entry,
                    to: node(ce.to),
                    kind: DagEdgeKind::BackEntry(e),
                }),
            EdgeClass::Unsplit => unsplit_target[ce.to.index()] = true,
            _ => {}
        }
    }
    for b in cfg.blocks().filter(|&b| unsplit_target[b.index()]) {
        edges.push(DagEdge {
            from: entry,
            to: node(b),
            kind: DagEdgeKind::UnsplitEntry(b),
        });
    }
    for b in cfg.blocks().filter(|&b| cfg.is_reachable(b)) {
        let mut has_out = false;
        let mut unsplit = false;
        for &e in cfg.succs(b) {
            let ce = cfg.edge(e);
            match classes[e.index()] {
                EdgeClass::Forward => edges.push(DagEdge {
                    from: node(b),
                    to: node(ce.to),
                    kind: DagEdgeKind::Cfg(e),
                }),
                EdgeClass::Back | EdgeClass::Cut | EdgeClass::Resume => edges.push(DagEdge {
                    from: node(b),
                    to: exit,
                    kind: DagEdgeKind::BackExit(e),
                }),
                EdgeClass::Unsplit | EdgeClass::Sibling => unsplit = true,
                EdgeClass::SelfLoop | EdgeClass::Unreachable => continue,
            }
            has_out = true;
        }
        if early_exit {
            // A terminator call runs after the path has ended (before the
            // terminator, see `UnsplitExit`): no path of its own.
            for k in 0..cfg.inner_calls(b) {
                edges.push(DagEdge {
                    from: node(b),
                    to: exit,
                    kind: DagEdgeKind::CallExit(b, k),
                });
            }
        }
        if unsplit {
            edges.push(DagEdge {
                from: node(b),
                to: exit,
                kind: DagEdgeKind::UnsplitExit(b),
            });
        } else if !has_out {
            edges.push(DagEdge {
                from: node(b),
                to: exit,
                kind: DagEdgeKind::Exit(b),
            });
        }
    }
    edges
}

/// Kahn's algorithm over the nodes that have edges (plus ENTRY and EXIT); ENTRY
/// comes first. Unreachable blocks come at the end, isolated.
fn topological_order(dag: &Dag) -> Vec<NodeId> {
    let n = dag.num_nodes();
    let mut indeg: Vec<usize> = (0..n).map(|v| dag.preds[v].len()).collect();
    let mut ready: Vec<NodeId> = (0..n)
        .rev()
        .filter(|&v| indeg[v] == 0)
        .map(NodeId::new)
        .collect();
    // Make ENTRY come out first.
    if let Some(pos) = ready.iter().position(|&v| v == dag.entry()) {
        let entry = ready.remove(pos);
        ready.push(entry);
    }
    let mut order = Vec::with_capacity(n);
    while let Some(v) = ready.pop() {
        order.push(v);
        for &e in dag.succs[v.index()].iter().rev() {
            let w = dag.edges[e.index()].to;
            indeg[w.index()] -= 1;
            if indeg[w.index()] == 0 {
                ready.push(w);
            }
        }
    }
    order
}

/// `NumPaths` of every node, saturating.
fn count_paths(dag: &Dag, order: &[NodeId]) -> Vec<u64> {
    let mut paths = vec![0u64; dag.num_nodes()];
    for &v in order.iter().rev() {
        if v == dag.exit() {
            paths[v.index()] = 1;
            continue;
        }
        paths[v.index()] = dag.succs[v.index()].iter().fold(0u64, |acc, &e| {
            acc.saturating_add(paths[dag.edges[e.index()].to.index()])
        });
    }
    paths
}

/// Block nodes whose path count exceeds `threshold`, choosing them in reverse
/// topological order so that each cut lowers the counts above it (section 5.3).
fn cut_nodes(dag: &Dag, order: &[NodeId], threshold: u64) -> Vec<NodeId> {
    let mut paths = vec![0u64; dag.num_nodes()];
    let mut cut = Vec::new();
    for &v in order.iter().rev() {
        if v == dag.exit() {
            paths[v.index()] = 1;
            continue;
        }
        let succs = &dag.succs[v.index()];
        let total = succs.iter().fold(0u64, |acc, &e| {
            acc.saturating_add(paths[dag.edges[e.index()].to.index()])
        });
        let forward = succs
            .iter()
            .any(|&e| matches!(dag.edges[e.index()].kind, DagEdgeKind::Cfg(_)));
        if total > threshold && v.index() < dag.num_blocks && forward {
            cut.push(v);
            // After the cut every out-edge goes straight to EXIT.
            paths[v.index()] = succs.len() as u64;
        } else {
            paths[v.index()] = total;
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::{backedges, Dag, DagOptions, EdgeClass};
    use crate::cfg::{Cfg, CfgEdge};
    use crate::ids::BlockId;

    #[test]
    fn backedges_are_edges_to_the_dfs_stack() {
        //   b0 ─e0─▶ b1 ─e1─▶ b2 ─e3─▶ b3 ◀─e5── b4 (unreachable)
        //             ▲        │ ╰─e4─╮
        //             └───e2───┘  ◀───╯   (e2 closes the loop, e4 is a self loop)
        let cfg =
            Cfg::from_edge_list(5, &[(0, 1), (1, 2), (2, 1), (2, 3), (2, 2), (4, 3)]).unwrap();
        assert_eq!(backedges(&cfg), [false, false, true, false, true, false]);
        // Irreducible: b1 and b2 both entered from b0; the search reaches b1
        // first (slot order), so b2 → b1 is the backedge.
        let cfg = Cfg::from_edge_list(3, &[(0, 1), (0, 2), (1, 2), (2, 1)]).unwrap();
        assert_eq!(backedges(&cfg), [false, false, false, true]);
    }

    #[test]
    fn a_dispatch_through_unsplittable_edges_ends_one_path_per_instruction() {
        // An interpreter with a computed goto, as clang emits it: b0 (the
        // entry) and both handlers b2, b3 jump to the dispatch b1, whose
        // indirectbr (unsplittable, e1..e3) goes to a handler or to b4,
        // which returns.
        //
        //   b0 ─e0─▶ b1 ═e1═▶ b2 ─e4─▶ b1
        //            ║ ╚═e2═▶ b3 ─e5─▶ b1
        //            ╚═══e3═▶ b4
        let edge = |from, to, slot, splittable| CfgEdge {
            from: BlockId(from),
            to: BlockId(to),
            slot,
            splittable,
            resume: false,
        };
        let edges = vec![
            edge(0, 1, 0, true),
            edge(1, 2, 0, false),
            edge(1, 3, 1, false),
            edge(1, 4, 2, false),
            edge(2, 1, 0, true),
            edge(3, 1, 0, true),
        ];
        let cfg = Cfg::new(5, BlockId(0), edges).unwrap();
        // The CFG's loops: the handlers' jumps back to the dispatch.
        assert_eq!(backedges(&cfg), [false, false, false, false, true, true]);
        // The DAG's: none, as the dispatch's cut edges close both loops.
        let dag = Dag::build(&cfg, DagOptions::default()).unwrap();
        use EdgeClass::{Forward, Unsplit};
        assert_eq!(
            dag.classes(),
            [Forward, Unsplit, Unsplit, Unsplit, Forward, Forward]
        );
        // b0-b1, b2-b1, b3-b1 (each ending at the dispatch) and b4: one path
        // per handler run, none of them the dispatch block alone.
        assert_eq!(dag.num_paths(), 4);
    }
}
