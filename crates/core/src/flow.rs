//! Flow conservation on a function's *flow graph*: the CFG plus one virtual node
//! "outside" joined to the entry ([`FlowEdge::Entry`]) and from every exit block
//! ([`FlowEdge::Exit`]). In every node, what flows in flows out, so given enough
//! edge counts the rest follow (Ball & Larus 1994; QPT2): repeatedly find a node
//! with one unknown edge and solve it. The unknown edges must form a forest (a
//! spanning tree's edges always do). Every block has an exit edge to "outside":
//! returns, and executions ended inside a call that never returned.

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
}

/// Why counts could not be derived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    #[error("the counts are inconsistent: flow into {0} differs from flow out of it (damaged or mismatched profile?)")]
    Inconsistent(String),
    #[error("edge {0} cannot be derived from the counted edges")]
    Underdetermined(String),
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
                .map(|b| (!cfg.is_exit(b) || !cfg.is_reachable(b)).then_some(0))
                .collect(),
        }
    }

    pub fn set(&mut self, edge: FlowEdge, count: u64) {
        match edge {
            FlowEdge::Entry => self.entry = Some(count),
            FlowEdge::Cfg(e) => self.edges[e.index()] = Some(count),
            FlowEdge::Exit(b) => self.exits[b.index()] = Some(count),
        }
    }

    /// Fills in every unknown count by flow conservation. With `tolerate_loss`,
    /// a block whose inflow exceeds its outflow is accepted (executions that
    /// ended there unseen, as when a process exits inside a call); the return
    /// value is the total of such excess.
    pub fn solve(&mut self, cfg: &Cfg, tolerate_loss: bool) -> Result<u64, FlowError> {
        let outside = cfg.num_blocks();
        // incident flow edges per node: (edge, +1 if into the node)
        let mut incident: Vec<Vec<(FlowEdge, bool)>> = vec![Vec::new(); outside + 1];
        incident[outside].push((FlowEdge::Entry, false));
        incident[cfg.entry().index()].push((FlowEdge::Entry, true));
        for e in cfg.edge_ids() {
            let ce = cfg.edge(e);
            if ce.from == ce.to {
                continue; // a self loop carries as much in as out
            }
            incident[ce.from.index()].push((FlowEdge::Cfg(e), false));
            incident[ce.to.index()].push((FlowEdge::Cfg(e), true));
        }
        // Every block may leave the function: by returning, or by a call that
        // never returns (known only with early-exit counting, else 0).
        for b in cfg.blocks() {
            incident[b.index()].push((FlowEdge::Exit(b), false));
            incident[outside].push((FlowEdge::Exit(b), true));
        }
        let mut work: Vec<usize> = (0..=outside).collect();
        while let Some(v) = work.pop() {
            let mut unknown = None;
            let mut unknowns = 0;
            let mut balance: i128 = 0;
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
            let value =
                u64::try_from(value).map_err(|_| FlowError::Inconsistent(node_name(cfg, v)))?;
            self.set(edge, value);
            // The other end may now be solvable.
            work.push(v);
            work.extend(self.ends(cfg, edge));
        }
        let mut lost: u64 = 0;
        for (v, edges) in incident.iter().enumerate() {
            let mut balance: i128 = 0;
            for &(edge, into) in edges {
                let c = self
                    .get(edge)
                    .ok_or_else(|| FlowError::Underdetermined(edge_name(cfg, edge)))?;
                balance += if into { c as i128 } else { -(c as i128) };
            }
            let relevant = v == outside || cfg.is_reachable(BlockId::new(v));
            if balance > 0 && tolerate_loss && v != outside {
                lost = lost.saturating_add(u64::try_from(balance).unwrap_or(u64::MAX));
            } else if balance != 0 && relevant && !(tolerate_loss && v == outside) {
                return Err(FlowError::Inconsistent(node_name(cfg, v)));
            }
        }
        Ok(lost)
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

fn node_name(cfg: &Cfg, v: usize) -> String {
    if v == cfg.num_blocks() {
        "the function's entry/exit".to_string()
    } else {
        format!("block {}", BlockId::new(v))
    }
}

fn edge_name(cfg: &Cfg, edge: FlowEdge) -> String {
    match edge {
        FlowEdge::Entry => "entry".into(),
        FlowEdge::Cfg(e) => {
            let ce = cfg.edge(e);
            format!("{} ({}->{})", EdgeId::new(e.index()), ce.from, ce.to)
        }
        FlowEdge::Exit(b) => format!("leaving the function from {b}"),
    }
}
