//! The instrumentation plan: plain data saying which operation goes where, produced
//! by the planners (`block`, `edge`, `path` modules) and transcribed into IR by
//! `pathprof-llvm`. Nothing here knows how to emit code.
//!
//! Semantics of one function's probes (the LLVM side must implement exactly this):
//! - a 64-bit *path register* `r`, local to one activation, starts at 0 on entry;
//! - `slots` is an array of `num_slots` 64-bit counters (blocks, edge chords, self
//!   loops); `paths` is an array of `len` counters or a hash table keyed by path id;
//! - counters saturate at `u64::MAX` instead of wrapping;
//! - a PPP function (preferential path profiling) also keeps a second
//!   register `q` (its PPP sum), and counts interesting paths into slots;
//! - the ops of one probe run in order; at one edge, ops at `BlockEnd(from)` run
//!   before ops on `Edge(e)`, which run before ops at `BlockStart(to)`.

use crate::ids::{BlockId, EdgeId};
use crate::ppp::Packing;

/// What is counted. Serializes as its [`name`](Mode::name) (see
/// [`crate::map::schema::Mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every basic block has a counter (Weinberger 1984).
    Block,
    /// Spanning-tree chords have counters; the rest is derived (Ball-Larus 1994).
    Edge,
    /// Ball-Larus acyclic path profiling (1996).
    Path,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Block => "block",
            Mode::Edge => "edge",
            Mode::Path => "path",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "block" => Ok(Mode::Block),
            "edge" => Ok(Mode::Edge),
            "path" => Ok(Mode::Path),
            _ => Err(format!("unknown mode `{s}`: expected block, edge or path")),
        }
    }
}

/// Where a probe's code goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeSite {
    /// At function entry, once per call (top of the LLVM entry block).
    FunctionEntry,
    /// At the top of the block, after its phis and landing pad. For the entry
    /// block this is function entry (LLVM entry blocks have no predecessors).
    BlockStart(BlockId),
    /// Just before the block's terminator (for an exit block: before it returns;
    /// for a block ending `call; unreachable`, before that call to `exit`,
    /// `abort`...).
    BlockEnd(BlockId),
    /// Around call number `k` (counting from 0, in instruction order) of the
    /// block's calls that might not return (see [`crate::Cfg::calls`]): the ops
    /// run just before the call on a *copy* of `r` (they never change `r`), and a
    /// count they make is undone right after the call returns. A count survives
    /// only when the call never returns (`exit`, `longjmp`): early termination.
    Call(BlockId, u32),
    /// On the edge itself; the edge is always splittable. The LLVM side may put it
    /// at `BlockEnd(from)` when that is the source's only out-edge, or at
    /// `BlockStart(to)` when that is the target's only in-edge.
    Edge(EdgeId),
}

/// One probe operation. Constants are applied with wrapping 64-bit arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `r = c`
    SetPath(i64),
    /// `r += c`
    AddPath(i64),
    /// `paths[r + c]++`
    CountPath(i64),
    /// `slots[k]++`
    CountSlot(u32),
    /// `q = c`: the PPP register (preferential path profiling, [`FunctionPlan::ppp`]).
    SetPpp(i64),
    /// `q += c`
    AddPpp(i64),
    /// Ends a path in a PPP function: with `b = r + bl` (its Ball-Larus id) and
    /// `p = q + ppp` (its PPP sum), `slots[base + p]++` when `p < interval`
    /// and `owners[p] == b` (an interesting path), else `paths[b]++` as
    /// [`Op::CountPath`] does (a residual path).
    CountPpp { bl: i64, ppp: i64 },
    /// Ends a path in a PPP function whose two registers share `r`
    /// ([`PppSlots::packing`]): with key `k` ([`Packing::key`] of `r + c`),
    /// its PPP sum `p` and Ball-Larus id `b` are [`Packing::split`] of `k`,
    /// and it counts as [`Op::CountPpp`] does, comparing `k` with the
    /// owner's key.
    CountPacked(i64),
}

/// The code for one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub site: ProbeSite,
    pub ops: Vec<Op>,
}

/// How a function's path counters are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStorage {
    /// The function has no path counters (block and edge modes).
    None,
    /// A dense array of `len` counters indexed by path id.
    Array { len: u64 },
    /// A hash table keyed by path id; ids are in `0..num_paths`.
    Hash { num_paths: u64 },
}

/// The interesting paths' counters of a PPP function: slots `base..base +
/// owners.len()` (the PPP interval), slot `base + p` counting the path whose
/// Ball-Larus id is `owners[p]` ([`crate::ppp::classify::HOLE`] for a PPP id
/// no interesting path has: never counted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PppSlots {
    pub base: u32,
    pub owners: Vec<u64>,
    /// Whether both registers are one word ([`crate::ppp::packing`]).
    pub packing: Option<Packing>,
}

impl PppSlots {
    /// The table the instrumented code compares with at a path's end: per
    /// PPP id, its owner's Ball-Larus id, or with a packing per entry of
    /// the window, its owner's key ([`Packing::owner_key`]).
    pub fn table(&self) -> Vec<u64> {
        match self.packing {
            None => self.owners.clone(),
            Some(packing) => (0..packing.window())
                .map(|entry| packing.owner_key(entry, self.owner_of_entry(packing, entry)))
                .collect(),
        }
    }

    /// The owner of the PPP sum whose entry is `entry` in `packing`'s window
    /// (a hole outside the interval).
    fn owner_of_entry(&self, packing: Packing, entry: u64) -> u64 {
        usize::try_from(packing.sum_of_entry(entry))
            .ok()
            .and_then(|p| self.owners.get(p).copied())
            .unwrap_or(crate::ppp::classify::HOLE)
    }

    /// How a path that ended with PPP sum `p` and `key` (its Ball-Larus id,
    /// or with a packing its key) counts against `table` ([`Self::table`]):
    /// `Some(slot)` when interesting (the slot relative to `base`), else
    /// `None` (a residual path, counted by its Ball-Larus id). With a
    /// packing the entry is the key's, as the instrumented code reads it.
    pub fn classify(&self, table: &[u64], p: u64, key: u64) -> Option<usize> {
        let (entry, slot) = match self.packing {
            None => (p, p),
            Some(packing) => {
                let entry = packing.entry(key);
                (entry, packing.sum_of_entry(entry))
            }
        };
        let entry = usize::try_from(entry).ok().filter(|&i| i < table.len())?;
        (table[entry] == key).then(|| usize::try_from(slot).expect("an owner's slot"))
    }
}

/// Everything the LLVM side needs to instrument one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionPlan {
    pub num_slots: u32,
    pub paths: PathStorage,
    /// At most one probe per site, sorted by site.
    pub probes: Vec<Probe>,
    /// With preferential path profiling: where [`Op::CountPpp`] counts the
    /// interesting paths (the residual ones go to `paths`).
    pub ppp: Option<PppSlots>,
}

impl FunctionPlan {
    /// The plan of a function left uninstrumented: no probes, no counters
    /// (a P3 copy that profiles none of its paths).
    pub fn uninstrumented() -> Self {
        FunctionPlan {
            num_slots: 0,
            paths: PathStorage::None,
            probes: Vec::new(),
            ppp: None,
        }
    }

    /// Merges ops given per site in any order into sorted, one-per-site probes.
    pub fn from_ops(
        num_slots: u32,
        paths: PathStorage,
        ops: impl IntoIterator<Item = (ProbeSite, Op)>,
    ) -> Self {
        let mut probes: Vec<Probe> = Vec::new();
        let mut by_site: std::collections::BTreeMap<ProbeSite, Vec<Op>> = Default::default();
        for (site, op) in ops {
            by_site.entry(site).or_default().push(op);
        }
        for (site, ops) in by_site {
            probes.push(Probe { site, ops });
        }
        FunctionPlan {
            num_slots,
            paths,
            probes,
            ppp: None,
        }
    }
}
