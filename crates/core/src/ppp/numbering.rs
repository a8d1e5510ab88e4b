//! `computePPPIncrements` (Vaswani et al. 2007, section 3.1, Figure 10): PPP
//! weights for the edges of a path DAG under which every interesting path gets
//! a unique id, the ids packed into one small interval.
//!
//! Terms (section 3.1):
//! - the *interesting paths* `I` are ENTRY→EXIT paths of the DAG, named by
//!   their Ball-Larus ids;
//! - a path's *partial identifier* `pid(p)` is the sum of the weights assigned
//!   so far along it (edges still unweighted, ⊥, count nothing);
//! - the *prefix* of `p` at edge `e` is `p`'s part from ENTRY to `src(e)`. As in
//!   section 5, a prefix is represented by its *Ball-Larus prefix sum*, the sum
//!   of `Val` along it: two different prefixes reaching one node have different
//!   sums, because one suffix completes both into paths of different ids;
//! - `int(e, q)` is the interval `[min, max]` of the pids of the interesting
//!   paths that take `e` after prefix `q`;
//! - `cis(q)`, at the node being processed, is where the last interval given to
//!   prefix `q` ends (its max + 1; 0 before any).
//!
//! The algorithm visits nodes in reverse topological order. At a node it
//! visits the out-edges that carry interesting paths in increasing `Val`: the
//! paper leaves the order open ("say the edge (c, d) is processed first"); this
//! is the order of its example, and with `I` = all paths it makes every PPP
//! weight the edge's `Val`, Ball-Larus numbering itself. For one edge `e`, each
//! prefix `q` asks for the weight `cis(q) − min int(e, q)` that starts its
//! interval right after its previous one (*compaction*, equations 1 and 2); `e`
//! gets the largest of these (the *join*), which leaves holes in the other
//! prefixes' numbering (Figure 9). Then the pids of the paths through `e` grow
//! by the weight, and `cis(q)` becomes their new max + 1 for each `q`.
//!
//! Invariants: once a node `v` is processed, the pids of the interesting paths
//! through it lie in `0..NumPaths(v)` (every weight puts each interval at or
//! after its prefix's `cis`, which before the i-th out-edge is at most the
//! paths of the edges before it). So at ENTRY, whose only prefix is the empty
//! one, the ids are unique (Lemma 5), the first is 0, and the interval
//! `0..max + 1` is never longer than the Ball-Larus count. Edges no interesting
//! path takes keep ⊥; their increment is 0 (any value would do: the Ball-Larus
//! register tells their paths apart, see [`super::classify`]).

use crate::dag::Dag;
use crate::ids::DagEdgeId;
use crate::regen::regenerate;
use std::collections::HashMap;

/// Why a PPP numbering could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PppError {
    #[error("interesting path {id} is out of range: the function has {num_paths} potential paths (list from another build?)")]
    OutOfRange { id: u64, num_paths: u64 },
}

/// An interesting path's two ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Numbered {
    /// Its PPP id: the sum of the PPP increments along it, in `0..interval`.
    pub ppp: u64,
    /// Its Ball-Larus id.
    pub bl: u64,
}

/// The PPP edge assignment of one DAG and set of interesting paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PppNumbering {
    /// Per DAG edge: its PPP weight, 0 where none was assigned (wrapping i64,
    /// like [`crate::increments::ChordIncrements::inc`]).
    inc: Vec<i64>,
    /// Per DAG edge: whether an interesting path takes it (its weight is not ⊥).
    numbered: Vec<bool>,
    /// The interesting paths sorted by PPP id.
    by_ppp: Vec<Numbered>,
    /// The interesting paths sorted by Ball-Larus id.
    by_bl: Vec<Numbered>,
    interval: u64,
}

/// The interval `int(e, q)` one prefix induces on the edge being processed.
struct Interval {
    prefix: u64,
    min: i128,
    max: i128,
}

impl PppNumbering {
    /// Runs Figure 10 on `dag` for the paths with these Ball-Larus ids
    /// (duplicates count once).
    pub fn compute(dag: &Dag, interesting: &[u64]) -> Result<PppNumbering, PppError> {
        let mut ids = interesting.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let through = paths_through_edges(dag, &ids)?;
        let (weights, pid) = assign_weights(dag, through, ids.len());
        let by_bl: Vec<Numbered> = ids
            .iter()
            .zip(&pid)
            .map(|(&bl, &p)| Numbered {
                ppp: u64::try_from(p).expect("PPP ids are not negative"),
                bl,
            })
            .collect();
        let mut by_ppp = by_bl.clone();
        by_ppp.sort_unstable();
        let interval = by_ppp.last().map_or(0, |n| n.ppp + 1);
        assert!(by_ppp.first().is_none_or(|n| n.ppp == 0));
        assert!(by_ppp.windows(2).all(|w| w[0].ppp < w[1].ppp), "unique ids");
        assert!(interval <= dag.num_paths());
        Ok(PppNumbering {
            // Weights lie in (-NumPaths, NumPaths]: exact in i64 up to 2^63
            // paths, and wrapping keeps every path's sum right beyond.
            inc: weights.iter().map(|w| w.unwrap_or(0) as i64).collect(),
            numbered: weights.iter().map(Option::is_some).collect(),
            by_ppp,
            by_bl,
            interval,
        })
    }

    /// Per DAG edge: the PPP increment (0 on edges no interesting path takes).
    pub fn increments(&self) -> &[i64] {
        &self.inc
    }

    pub fn increment(&self, e: DagEdgeId) -> i64 {
        self.inc[e.index()]
    }

    /// Whether an interesting path takes `e`, so Figure 10 gave it a weight;
    /// the other edges' weight is ⊥ (0 in [`increments`](Self::increments)).
    pub fn is_numbered(&self, e: DagEdgeId) -> bool {
        self.numbered[e.index()]
    }

    /// The PPP sum of a path given as DAG edges (wrapping, as the register
    /// computes it).
    pub fn path_sum(&self, edges: &[DagEdgeId]) -> u64 {
        edges
            .iter()
            .fold(0u64, |acc, e| acc.wrapping_add(self.inc[e.index()] as u64))
    }

    /// The size of the interval of PPP ids, `max id + 1` (the first id is 0);
    /// 0 without interesting paths. At most the Ball-Larus path count.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// `|I|`, the number of interesting paths.
    pub fn len(&self) -> usize {
        self.by_ppp.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_ppp.is_empty()
    }

    /// The interesting paths by increasing PPP id.
    pub fn paths(&self) -> &[Numbered] {
        &self.by_ppp
    }

    /// The PPP id of the interesting path with Ball-Larus id `bl`.
    pub fn ppp_id(&self, bl: u64) -> Option<u64> {
        let i = self.by_bl.binary_search_by_key(&bl, |n| n.bl).ok()?;
        Some(self.by_bl[i].ppp)
    }

    /// The compactness measure of Problem A (section 3):
    /// `δ = (max_{p∈I} pathid(p) − min_{p∈I} pathid(p) + 1) / |I|`, at least 1,
    /// 1 for a perfect assignment. PPP's smallest id is 0, so here
    /// `δ = interval / |I|`. `None` when `I` is empty.
    pub fn delta(&self) -> Option<f64> {
        let (first, last) = (self.by_ppp.first()?, self.by_ppp.last()?);
        Some((last.ppp - first.ppp + 1) as f64 / self.len() as f64)
    }

    /// The compactness measure of Problem B (section 4.4): `γ = 2^H(D) / |I|`,
    /// where `D` is the probability model PPP computes (section 4.3): at node
    /// `v` after prefix `q`, out-edge `e` has the share of `q`'s interval that
    /// `int(e, q)` takes. Along an interesting path these shares telescope
    /// (each edge's interval is, shifted, its target's interval for the longer
    /// prefix) from the whole interval at ENTRY down to the path's one id, so
    /// every interesting path has probability `1 / interval`, `2^H(D)` is the
    /// interval (as section 4.4 says: "the interval size that PPP computes is
    /// equal to ⌈2^H(D)⌉") and γ equals [`delta`](Self::delta) for PPP's own
    /// numbering. The two differ only as objectives: δ over all edge
    /// assignments, γ over PPP's class of models (Theorem 1). `None` when `I`
    /// is empty.
    pub fn gamma(&self) -> Option<f64> {
        self.delta()
    }
}

/// Per DAG edge, the interesting paths through it as (Ball-Larus prefix sum
/// at the edge, index into `ids`), sorted.
fn paths_through_edges(dag: &Dag, ids: &[u64]) -> Result<Vec<Vec<(u64, usize)>>, PppError> {
    let mut through: Vec<Vec<(u64, usize)>> = vec![Vec::new(); dag.edges().len()];
    for (k, &id) in ids.iter().enumerate() {
        let path = regenerate(dag, id).map_err(|_| PppError::OutOfRange {
            id,
            num_paths: dag.num_paths(),
        })?;
        let mut prefix = 0u64;
        for &e in &path.edges {
            through[e.index()].push((prefix, k));
            prefix += dag.val(e);
        }
    }
    for paths in &mut through {
        paths.sort_unstable();
    }
    Ok(through)
}

/// Figure 10 proper: the weight of every edge (`None` for ⊥) and the final pid
/// of every interesting path.
fn assign_weights(
    dag: &Dag,
    through: Vec<Vec<(u64, usize)>>,
    num_interesting: usize,
) -> (Vec<Option<i128>>, Vec<i128>) {
    let mut weight: Vec<Option<i128>> = vec![None; through.len()];
    let mut pid = vec![0i128; num_interesting];
    let mut cis: HashMap<u64, i128> = HashMap::new();
    let mut out: Vec<DagEdgeId> = Vec::new();
    let mut intervals: Vec<Interval> = Vec::new();
    for &v in dag.topological_order().iter().rev() {
        cis.clear();
        out.clear();
        out.extend(
            dag.succs(v)
                .iter()
                .copied()
                .filter(|e| !through[e.index()].is_empty()),
        );
        out.sort_by_key(|&e| dag.val(e));
        for &e in &out {
            let paths = &through[e.index()];
            intervals_by_prefix(paths, &pid, &mut intervals);
            let w = intervals
                .iter()
                .map(|int| cis.get(&int.prefix).copied().unwrap_or(0) - int.min)
                .max()
                .expect("the edge carries an interesting path");
            weight[e.index()] = Some(w);
            for &(_, k) in paths {
                pid[k] += w;
                debug_assert!((0..dag.node_paths(v) as i128).contains(&pid[k]));
            }
            for int in &intervals {
                cis.insert(int.prefix, int.max + w + 1);
            }
        }
    }
    (weight, pid)
}

/// The intervals `int(e, q)` of the paths through one edge, sorted by prefix.
fn intervals_by_prefix(paths: &[(u64, usize)], pid: &[i128], out: &mut Vec<Interval>) {
    out.clear();
    for &(prefix, k) in paths {
        match out.last_mut() {
            Some(int) if int.prefix == prefix => {
                int.min = int.min.min(pid[k]);
                int.max = int.max.max(pid[k]);
            }
            _ => out.push(Interval {
                prefix,
                min: pid[k],
                max: pid[k],
            }),
        }
    }
}
