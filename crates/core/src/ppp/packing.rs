//! Both registers in one 64-bit word, where their ranges allow it.
//!
//! Section 5 keeps the PPP register `q` and the Ball-Larus register `r`
//! apart, so every chord carrying an increment of each costs two adds and
//! every path start two resets. Both registers only ever add constants, so
//! their combination `x = (r << bits) + q` (wrapping in 64 bits) is updated
//! by the one add of the combined constant, and at a path's end it still
//! holds both exactly when they fit:
//!
//! - the PPP sum `p` of *every* path, interesting or not, lies in
//!   `[min, max]` (computed over the DAG: [`sum_range`]), so `p − min` fits
//!   the low `bits` bits once `max − min < 2^bits`;
//! - the Ball-Larus id `b` lies in `0..num_paths`, so in the `64 − bits` bits
//!   above them once `num_paths <= 2^(64 − bits)`.
//!
//! At the end the *key* `k = x − min` (the constant folds into the count's)
//! splits into `p = (k & (2^bits − 1)) + min` and `b = k >> bits`, whatever
//! the partial sums did on the way (wrapping is linear). The owner table has
//! one entry per value of the low bits, its *window* (`2^bits` entries, the
//! PPP sums `min..min + 2^bits`, every path's among them), so a path's end
//! reads entry `k & (2^bits − 1)` with no range check: `owner[k & mask] ==
//! k` is section 5's test `p < interval && owner[p] == (p, b)` with one
//! register and one compare fewer. An interesting path's entry holds its key
//! and counts in its PPP slot; every other entry (a hole of the interval, or
//! a sum outside it) holds a key whose low bits are not its own, so no path
//! matches it. The PPP part goes low because its increments are small: a
//! chord's combined constant stays a 32-bit immediate where the Ball-Larus
//! increment is small too (with the PPP part high every PPP increment would
//! be a 64-bit constant, whose materialisation LLVM hoists into registers
//! held across a loop, crowding a dispatch loop such as SQLite's). A
//! function whose ranges do not fit one word, or whose window would be more
//! than [`WINDOW_SLACK`] times its interval (and more than [`WINDOW_FLOOR`]
//! entries), keeps two registers.

use super::classify::HOLE;
use super::numbering::PppNumbering;
use crate::dag::Dag;

/// How a PPP function's registers share one word: the PPP sum less `min`
/// in the low `ppp_bits` bits, the Ball-Larus id above them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Packing {
    pub ppp_bits: u32,
    /// The smallest PPP sum of any path (wrapping `i64`).
    pub min: i64,
}

/// A window may have this many entries per slot of the interval ...
pub const WINDOW_SLACK: u64 = 4;
/// ... or this many entries (8 KiB of owner keys) whatever the interval.
pub const WINDOW_FLOOR: u64 = 1024;

impl Packing {
    /// The packing of `numbering` on `dag`, when both registers fit one word
    /// and its window is small enough (see the module doc).
    pub fn fit(dag: &Dag, numbering: &PppNumbering) -> Option<Packing> {
        let bl_bits = u64::BITS - dag.num_paths().saturating_sub(1).leading_zeros();
        let (min, max) = sum_range(dag, numbering);
        let span = u128::try_from(max - min).expect("max >= min");
        let ppp_bits = (u128::BITS - span.leading_zeros()).max(1);
        let min = i64::try_from(min).ok()?;
        let small = window_fits(ppp_bits, numbering.interval());
        (small && ppp_bits + bl_bits <= u64::BITS).then_some(Packing { ppp_bits, min })
    }

    /// The owner table's entries: one per value of a key's low bits.
    pub fn window(self) -> u64 {
        1 << self.ppp_bits
    }

    /// The combined constant of a Ball-Larus and a PPP increment.
    pub fn word(self, bl: i64, ppp: i64) -> i64 {
        bl.wrapping_shl(self.ppp_bits).wrapping_add(ppp)
    }

    /// The key of the path whose word is `x` at its end.
    pub fn key(self, x: u64) -> u64 {
        x.wrapping_sub(self.min as u64)
    }

    fn mask(self) -> u64 {
        u64::MAX >> (u64::BITS - self.ppp_bits)
    }

    /// What a path's key holds: its PPP sum (wrapped into a `u64`, so a
    /// negative one is above any interval) and its Ball-Larus id.
    pub fn split(self, key: u64) -> (u64, u64) {
        let ppp = self.sum_of_entry(self.entry(key));
        let bl = key.checked_shr(self.ppp_bits).unwrap_or(0);
        (ppp, bl)
    }

    /// The owner table entry a path with `key` reads: its low bits.
    pub fn entry(self, key: u64) -> u64 {
        key & self.mask()
    }

    /// The entry of PPP sum `ppp` (see [`Packing::entry`]).
    pub fn entry_of_sum(self, ppp: u64) -> u64 {
        ppp.wrapping_sub(self.min as u64) & self.mask()
    }

    /// The PPP sum (wrapped) whose entry is `entry`: `min + entry`.
    pub fn sum_of_entry(self, entry: u64) -> u64 {
        entry.wrapping_add(self.min as u64)
    }

    /// What the owner table holds at `entry`: the key of its owner,
    /// Ball-Larus id `owner`, or for a [`HOLE`] a key whose low bits are not
    /// `entry` (no path's key that reads it).
    pub fn owner_key(self, entry: u64, owner: u64) -> u64 {
        if owner == HOLE {
            entry ^ 1
        } else {
            (owner << self.ppp_bits) | entry
        }
    }
}

/// Whether a window of `2^ppp_bits` entries is small enough for an interval
/// of `interval` PPP ids (see the module doc).
fn window_fits(ppp_bits: u32, interval: u64) -> bool {
    let most = interval.saturating_mul(WINDOW_SLACK).max(WINDOW_FLOOR);
    1u64.checked_shl(ppp_bits)
        .is_some_and(|window| window <= most)
}

/// The smallest and largest PPP sum of any ENTRY→EXIT path of `dag` (the
/// increments added as integers, without wrapping).
pub fn sum_range(dag: &Dag, numbering: &PppNumbering) -> (i128, i128) {
    let mut range: Vec<Option<(i128, i128)>> = vec![None; dag.num_nodes()];
    range[dag.entry().index()] = Some((0, 0));
    for &v in dag.topological_order() {
        let Some((lo, hi)) = range[v.index()] else {
            continue;
        };
        for &e in dag.succs(v) {
            let w = i128::from(numbering.increment(e));
            let to = &mut range[dag.edge(e).to.index()];
            *to = Some(match *to {
                None => (lo + w, hi + w),
                Some((a, b)) => (a.min(lo + w), b.max(hi + w)),
            });
        }
    }
    range[dag.exit().index()].unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;

    /// `k` diamonds in a row: 2^k paths.
    fn diamonds(k: u32) -> Dag {
        let mut edges = Vec::new();
        for i in 0..k {
            let (top, left, right, next) = (3 * i, 3 * i + 1, 3 * i + 2, 3 * i + 3);
            edges.extend([(top, left), (top, right), (left, next), (right, next)]);
        }
        let cfg = Cfg::from_edge_list(3 * k as usize + 1, &edges).unwrap();
        Dag::build(&cfg, Default::default()).unwrap()
    }

    #[test]
    fn words_split_back_at_the_extremes_of_both_ranges() {
        for (ppp_bits, min) in [(1, 0), (1, -1), (9, -300), (32, 5), (63, i64::MIN), (63, 0)] {
            let packing = Packing { ppp_bits, min };
            let max = min.wrapping_add((u64::MAX >> (64 - ppp_bits)) as i64);
            let top = u64::MAX >> ppp_bits;
            for ppp in [min, min.wrapping_add(1), max.wrapping_sub(1), max] {
                for bl in [0, top, top / 3] {
                    // Any split of the sums into partial increments.
                    let half = packing.word(bl as i64 / 2, ppp / 3);
                    let rest = packing.word(bl as i64 - bl as i64 / 2, ppp - ppp / 3);
                    let x = (half as u64).wrapping_add(rest as u64);
                    let key = packing.key(x);
                    assert_eq!(packing.split(key), (ppp as u64, bl), "{packing:?}");
                    let entry = packing.entry(key);
                    assert_eq!(entry, packing.entry_of_sum(ppp as u64));
                    assert_eq!(packing.sum_of_entry(entry), ppp as u64);
                    assert_eq!(packing.owner_key(entry, bl), key);
                }
            }
        }
    }

    #[test]
    fn holes_never_hold_a_key_that_reads_them() {
        for ppp_bits in [1, 9] {
            let packing = Packing { ppp_bits, min: -3 };
            for entry in 0..packing.window() {
                let hole = packing.owner_key(entry, HOLE);
                assert_ne!(packing.entry(hole), entry);
            }
        }
    }

    #[test]
    fn fits_where_both_ranges_do_and_not_beyond() {
        // 2^62 paths leave the PPP sum 2 bits.
        let dag = diamonds(62);
        assert_eq!(dag.num_paths(), 1 << 62);
        let four: Vec<u64> = (0..4).collect();
        let four = PppNumbering::compute(&dag, &four).unwrap();
        assert_eq!(sum_range(&dag, &four), (0, 3));
        let packing = Packing::fit(&dag, &four);
        assert_eq!(
            packing,
            Some(Packing {
                ppp_bits: 2,
                min: 0
            })
        );
        let five: Vec<u64> = (0..5).collect();
        let five = PppNumbering::compute(&dag, &five).unwrap();
        assert!(sum_range(&dag, &five).1 >= 4);
        assert_eq!(Packing::fit(&dag, &five), None);
    }

    #[test]
    fn windows_beyond_four_slots_per_id_and_1024_entries_are_refused() {
        assert!(window_fits(10, 1));
        assert!(!window_fits(11, 1));
        assert!(window_fits(11, 512));
        assert!(!window_fits(12, 512));
        assert!(!window_fits(64, u64::MAX));
    }

    #[test]
    fn the_range_covers_every_paths_sum() {
        let dag = diamonds(5);
        let some = PppNumbering::compute(&dag, &[3, 9, 17, 30]).unwrap();
        let (lo, hi) = sum_range(&dag, &some);
        let sums: Vec<i128> = (0..dag.num_paths())
            .map(|id| {
                let path = crate::regen::regenerate(&dag, id).unwrap();
                path.edges
                    .iter()
                    .map(|&e| i128::from(some.increment(e)))
                    .sum()
            })
            .collect();
        assert_eq!(
            (lo, hi),
            (*sums.iter().min().unwrap(), *sums.iter().max().unwrap())
        );
    }
}
