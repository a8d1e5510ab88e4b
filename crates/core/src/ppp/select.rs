//! Choosing a function's interesting paths from a training path profile
//! (`pathprof interesting --min-count N --top-share X`).
//!
//! The paper's evaluation (section 5) takes every path a training run
//! executed; [`Selection::default`] does the same. `min_count` keeps the paths
//! executed at least that often; `top_share` keeps the hottest paths that
//! together cover that share of the function's executions. With both, a path
//! must pass both.

/// Why a selection's parameters were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    #[error("--top-share must be a fraction of the executions in (0, 1], not {0}")]
    TopShare(f64),
}

/// Which paths of a profile become interesting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    min_count: u64,
    top_share: Option<f64>,
}

impl Default for Selection {
    /// Every executed path (the paper's setting).
    fn default() -> Self {
        Selection {
            min_count: 1,
            top_share: None,
        }
    }
}

impl Selection {
    /// Paths executed at least `min_count` times (a path never executed is
    /// never chosen, so 0 means 1) and, with `top_share = Some(x)`, among the
    /// hottest paths covering the share `x` (in `(0, 1]`) of the executions.
    pub fn new(min_count: u64, top_share: Option<f64>) -> Result<Selection, SelectionError> {
        if let Some(x) = top_share {
            if !(x > 0.0 && x <= 1.0) {
                return Err(SelectionError::TopShare(x));
            }
        }
        Ok(Selection {
            min_count: min_count.max(1),
            top_share,
        })
    }

    pub fn min_count(&self) -> u64 {
        self.min_count
    }

    pub fn top_share(&self) -> Option<f64> {
        self.top_share
    }
}

/// The chosen paths of one function's profile, given as (Ball-Larus id, count)
/// pairs (an id given twice counts the sum), as (id, count) by increasing id.
///
/// `top_share = x` takes paths by decreasing count (ties by increasing id) up
/// to and including the first at which their counts reach `x` of the total
/// (compared in `f64`), so the share is covered with as few paths as possible;
/// `x = 1` takes every executed path. Then paths below `min_count` are left out.
pub fn select_paths(counts: &[(u64, u64)], selection: &Selection) -> Vec<(u64, u64)> {
    let mut merged = crate::counts::sum_by_id(counts.to_vec());
    if let Some(share) = selection.top_share {
        let total: u128 = merged.iter().map(|&(_, c)| c as u128).sum();
        let goal = share * total as f64;
        merged.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut covered = 0u128;
        let taken = merged
            .iter()
            .position(|&(_, c)| {
                covered += c as u128;
                covered as f64 >= goal
            })
            .map_or(merged.len(), |i| i + 1);
        merged.truncate(taken);
        merged.sort_unstable();
    }
    merged.retain(|&(_, c)| c >= selection.min_count);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: [(u64, u64); 5] = [(7, 10), (2, 50), (9, 30), (4, 10), (5, 0)];

    #[test]
    fn default_takes_every_executed_path() {
        let all = select_paths(&PROFILE, &Selection::default());
        assert_eq!(all, [(2, 50), (4, 10), (7, 10), (9, 30)]);
        assert_eq!(select_paths(&[], &Selection::default()), []);
    }

    #[test]
    fn min_count_and_top_share() {
        let sel = |n, x| select_paths(&PROFILE, &Selection::new(n, x).unwrap());
        assert_eq!(sel(20, None), [(2, 50), (9, 30)]);
        // 100 executions: 50 is half of them, 80 needs the second path, and
        // 90 the first of the tied tens (lower id first).
        assert_eq!(sel(0, Some(0.5)), [(2, 50)]);
        assert_eq!(sel(0, Some(0.51)), [(2, 50), (9, 30)]);
        assert_eq!(sel(0, Some(0.85)), [(2, 50), (4, 10), (9, 30)]);
        assert_eq!(sel(0, Some(1.0)), [(2, 50), (4, 10), (7, 10), (9, 30)]);
        assert_eq!(sel(40, Some(0.85)), [(2, 50)]);
    }

    #[test]
    fn repeated_ids_add_up() {
        let sel = Selection::new(15, None).unwrap();
        assert_eq!(select_paths(&[(3, 10), (1, 4), (3, 6)], &sel), [(3, 16)]);
    }

    #[test]
    fn top_share_must_be_a_fraction() {
        for x in [0.0, -0.5, 1.5, f64::NAN] {
            let err = Selection::new(1, Some(x)).unwrap_err();
            assert!(err.to_string().starts_with("--top-share must be"), "{err}");
        }
    }
}
