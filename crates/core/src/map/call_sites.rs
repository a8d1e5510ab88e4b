//! The call sites a map records for each function whose entry count its
//! callers give (`entry_calls`), the check that they are usable (in range,
//! no function waiting on itself), and the order that derives callers first.

use super::MapFunction;
use crate::ids::BlockId;
use crate::layout::Layout;

/// A call of a function whose entry count its callers give: function
/// `function` of the same map fragment calls it from block `block`, before
/// any call there that might not return (once per record: a block calling
/// it twice is recorded twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallSite {
    pub function: u32,
    pub block: BlockId,
}

/// Why a map's call-site records cannot be used.
pub fn check(functions: &[MapFunction]) -> Result<(), String> {
    for (i, f) in functions.iter().enumerate() {
        if !f.entry_calls.is_empty() && !f.layout.takes_entry_from_callers() {
            return Err(format!(
                "function #{i} ({:?}) has call sites for its entry count, but its layout counts it",
                f.name
            ));
        }
        if let (
            Layout::Edge {
                entry_replaces: Some(_),
                ..
            },
            [],
        ) = (&f.layout, &f.entry_calls[..])
        {
            return Err(format!(
                "function #{i} ({:?}) has a chord its entry count replaces, but no call sites",
                f.name
            ));
        }
        for site in &f.entry_calls {
            let caller = functions.get(site.function as usize);
            if caller.is_none_or(|c| site.block.index() >= c.cfg.num_blocks()) {
                return Err(format!(
                    "function #{i} ({:?}) has a call site (function #{}, block {}) not in the map",
                    f.name, site.function, site.block
                ));
            }
        }
    }
    if ordered_by_call_sites(functions).len() != functions.len() {
        return Err(
            "functions whose entry counts wait on each other's (a cycle of call sites)".into(),
        );
    }
    Ok(())
}

/// The functions' indices in an order that puts every function after the
/// callers its entry count comes from. Functions on a cycle of call sites
/// (which [`check`] refuses in a map read from a file) come last, in index
/// order, their entry counts missing what callers after them counted.
pub fn callers_first(functions: &[MapFunction]) -> Vec<usize> {
    let mut order = ordered_by_call_sites(functions);
    if order.len() < functions.len() {
        let mut placed = vec![false; functions.len()];
        for &i in &order {
            placed[i] = true;
        }
        order.extend((0..functions.len()).filter(|&i| !placed[i]));
    }
    order
}

/// Kahn's algorithm over the call sites: every function whose callers can
/// be derived before it, in such an order.
fn ordered_by_call_sites(functions: &[MapFunction]) -> Vec<usize> {
    let n = functions.len();
    let mut waiting = vec![0usize; n];
    let mut callees: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, f) in functions.iter().enumerate() {
        for site in &f.entry_calls {
            if let Some(list) = callees.get_mut(site.function as usize) {
                list.push(i);
                waiting[i] += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut next = 0;
    while let Some(&i) = order.get(next) {
        next += 1;
        for &callee in &callees[i] {
            waiting[callee] -= 1;
            if waiting[callee] == 0 {
                order.push(callee);
            }
        }
    }
    order
}
