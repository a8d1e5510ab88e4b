//! The profile summary LLVM's `ProfileSummaryInfo` reads to tell hot code
//! from cold (the inliner's hot call sites, block placement, hot/cold
//! splitting): the counts' total, maxima and, for each cutoff, the smallest
//! count among the hottest counts that make up that share of the total. It
//! is computed over every function's entry and block counts as LLVM's
//! `InstrProfSummaryBuilder` computes it over counters: the entry counts are
//! the function counts, the other blocks' the internal ones.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The cutoffs LLVM's summaries use, in millionths of the total count.
pub const CUTOFFS: [u32; 16] = [
    10_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000,
    950_000, 990_000, 999_000, 999_900, 999_990, 999_999,
];

/// One cutoff's line: the hottest `num_counts` counts make up `cutoff`
/// millionths of the total, the smallest of them being `min_count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryEntry {
    pub cutoff: u32,
    pub min_count: u64,
    pub num_counts: u64,
}

/// A whole program's profile summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub total_count: u64,
    pub max_count: u64,
    pub max_internal_count: u64,
    pub max_function_count: u64,
    pub num_counts: u64,
    pub num_functions: u64,
    pub detailed: Vec<SummaryEntry>,
}

impl Summary {
    /// The summary of functions given as (entry count, internal block
    /// counts).
    pub fn of<'a>(functions: impl IntoIterator<Item = (u64, &'a [u64])>) -> Self {
        let mut s = Summary::default();
        let mut frequencies: BTreeMap<u64, u64> = BTreeMap::new();
        let mut add = |s: &mut Summary, count: u64| {
            s.total_count = s.total_count.saturating_add(count);
            s.max_count = s.max_count.max(count);
            s.num_counts += 1;
            *frequencies.entry(count).or_default() += 1;
        };
        for (entry, internal) in functions {
            s.num_functions += 1;
            s.max_function_count = s.max_function_count.max(entry);
            add(&mut s, entry);
            for &count in internal {
                s.max_internal_count = s.max_internal_count.max(count);
                add(&mut s, count);
            }
        }
        let mut hottest = frequencies.iter().rev();
        let (mut sum, mut seen, mut count) = (0u128, 0u64, 0u64);
        for cutoff in CUTOFFS {
            let desired = u128::from(s.total_count) * u128::from(cutoff) / 1_000_000;
            while sum < desired {
                let Some((&c, &n)) = hottest.next() else {
                    break;
                };
                count = c;
                sum += u128::from(c) * u128::from(n);
                seen += n;
            }
            s.detailed.push(SummaryEntry {
                cutoff,
                min_count: count,
                num_counts: seen,
            });
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hottest_counts_make_each_cutoff() {
        // Counts 900 (entry), 90, 10 (blocks), and 0 (an entry): total 1000.
        let s = Summary::of([(900, &[90u64, 10][..]), (0, &[][..])]);
        assert_eq!(
            (
                s.total_count,
                s.max_count,
                s.max_internal_count,
                s.max_function_count
            ),
            (1000, 900, 90, 900)
        );
        assert_eq!((s.num_counts, s.num_functions), (4, 2));
        let at = |cutoff: u32| *s.detailed.iter().find(|e| e.cutoff == cutoff).unwrap();
        let entry = |cutoff, min_count, num_counts| SummaryEntry {
            cutoff,
            min_count,
            num_counts,
        };
        // 1% and 90% of the total: the count 900 alone.
        assert_eq!(at(10_000), entry(10_000, 900, 1));
        assert_eq!(at(900_000), entry(900_000, 900, 1));
        // 95% and 99%: 900 + 90.
        assert_eq!(at(950_000), entry(950_000, 90, 2));
        assert_eq!(at(990_000), entry(990_000, 90, 2));
        // 99.9% (999 of 1000, rounded down as LLVM does): all three above zero.
        assert_eq!(at(999_000), entry(999_000, 10, 3));
        assert_eq!(at(999_999), entry(999_999, 10, 3));
        assert_eq!(s.detailed.len(), CUTOFFS.len());
    }
}
