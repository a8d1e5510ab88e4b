//! Distributing tasks over copies (Afraz et al. 2015, Algorithm 2 lines
//! 12–16): the largest cost first, each onto the copy with the least load so
//! far (Graham 1969's 4/3 approximation of multiprocessor scheduling).
//!
//! Deterministic: equal costs keep the tasks' order, equal loads go to the
//! lowest-numbered copy.

/// Where each task goes and what each copy ends up with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Per task: its copy.
    pub copy_of: Vec<usize>,
    /// Per copy: the sum of its tasks' costs.
    pub loads: Vec<u64>,
}

/// Schedules tasks of these costs onto `copies` copies (at least 1).
pub fn schedule(costs: &[u64], copies: usize) -> Schedule {
    assert!(copies > 0, "at least one copy");
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&t| std::cmp::Reverse(costs[t]));
    let mut copy_of = vec![0; costs.len()];
    let mut loads = vec![0u64; copies];
    for t in order {
        let least = (0..copies)
            .min_by_key(|&c| loads[c])
            .expect("at least one copy");
        copy_of[t] = least;
        loads[least] = loads[least].saturating_add(costs[t]);
    }
    Schedule { copy_of, loads }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_first_onto_the_least_loaded() {
        // Example 5's costs: the 7 alone, the rest together.
        let s = schedule(&[1, 1, 3, 7], 2);
        assert_eq!(s.copy_of, [1, 1, 1, 0]);
        assert_eq!(s.loads, [7, 5]);
        // Ties: lower task first, lower copy first.
        let s = schedule(&[2, 2, 2], 2);
        assert_eq!((s.copy_of, s.loads), (vec![0, 1, 0], vec![4, 2]));
        // Graham's bad case for 2 copies: 3,3,2,2,2 -> 7 against the best 6.
        let s = schedule(&[3, 3, 2, 2, 2], 2);
        assert_eq!(s.loads, [7, 5]);
        assert_eq!(schedule(&[], 3).loads, [0, 0, 0]);
    }
}
