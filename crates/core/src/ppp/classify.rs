//! What preferential path profiling decides when a path ends (Vaswani et al.
//! 2007, sections 2.3 and 5): from its two registers alone, whether the path
//! was interesting, and which path it was.
//!
//! At a path's end the instrumented code holds two sums: `p`, the PPP
//! register (the [`super::numbering`] increments, wrapping in 64 bits), and
//! `r`, the Ball-Larus register (the path's Ball-Larus id). PPP ids are unique
//! only among interesting paths; any other path may *alias* one (land on its
//! id) or fall outside the interval, below 0 (wrapping to a huge unsigned
//! value) or above it. Ball-Larus ids are unique for every path, so:
//!
//! - the counter array has [`interval`](PppNumbering::interval) slots; slot `k`
//!   holds a count and, beside it, the Ball-Larus id of the interesting path
//!   numbered `k` ([`PppNumbering::slot_owner`]; the occupied slots are
//!   [`PppNumbering::paths`]), or [`HOLE`] where the
//!   numbering left a hole (no path has that id: Ball-Larus ids are below
//!   the path count, itself at most `u64::MAX`);
//! - at the end, `if p < interval && owner[p] == r { count[p]++ }` (one
//!   unsigned comparison is section 5's underflow and overflow check), `else`
//!   the path is a *residual* path, known exactly by `r` (path mode's hash
//!   table can count it).

use super::numbering::PppNumbering;

/// The Ball-Larus id stored in the slots that no interesting path owns.
pub const HOLE: u64 = u64::MAX;

/// What the two registers say about a path that just ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathClass {
    /// An interesting path, counted in the array at this PPP id.
    Interesting(u64),
    /// Any other path (a *residual* path), by its Ball-Larus id.
    Residual(u64),
}

impl PppNumbering {
    /// The Ball-Larus id stored beside array slot `ppp_id`: the interesting
    /// path with that PPP id, or [`HOLE`]. `None` outside the interval.
    pub fn slot_owner(&self, ppp_id: u64) -> Option<u64> {
        if ppp_id >= self.interval() {
            return None;
        }
        let paths = self.paths();
        Some(match paths.binary_search_by_key(&ppp_id, |n| n.ppp) {
            Ok(i) => paths[i].bl,
            Err(_) => HOLE,
        })
    }

    /// Classifies a path by its two register values at its end, exactly as
    /// the instrumented code does (see the module doc).
    pub fn classify(&self, ppp_sum: u64, bl_sum: u64) -> PathClass {
        match self.slot_owner(ppp_sum) {
            Some(owner) if owner == bl_sum => PathClass::Interesting(ppp_sum),
            _ => PathClass::Residual(bl_sum),
        }
    }
}
