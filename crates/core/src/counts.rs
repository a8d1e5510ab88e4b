//! Lists of `(id, count)` pairs (path ids and their counts), as profiles,
//! derivation and selection hold them.

/// `(id, count)` pairs by increasing id, one per id (the counts of an id
/// given twice added, saturating), without zero counts.
pub fn sum_by_id(mut pairs: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    pairs.retain(|&(_, n)| n > 0);
    pairs.sort_unstable();
    pairs.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 = kept.1.saturating_add(next.1);
        }
        same
    });
    pairs
}
