//! The choices of a probe's machine-code form, per function: which
//! functions hold their counters' addresses from entry, or count path ends
//! inside loops at a repeat site.
//! Each doc says what the form buys and where it would cost; the
//! measurements behind them are `bench/`'s (docs/benchmarks.md).

use super::*;

/// Whether a function holds its counters' addresses from entry
/// ([`Site::pinned_bases`]): when it counts at two places or more (with one,
/// the base costs its `lea` on entry instead of at the probe, and a run
/// that passes no probe pays it for nothing) and is not one of the largest
/// ([`LARGE_FUNCTION_BLOCKS`]: their registers are scarce, and one held
/// from the entry pushes other values to the stack, which costs more
/// instructions than the `lea`s it saves; measured with
/// `bench/callgrind.py`, see `docs/benchmarks.md`).
pub(super) fn pins_bases(body: &Body<'_>, placement: &Placement) -> bool {
    body.blocks.len() <= LARGE_FUNCTION_BLOCKS && placement.counts() >= 2
}

/// Whether a function counts its path ends inside loops at a *repeat site*
/// ([`Site::count_repeat`]): when it is in [`crate::instrument::scope`]'s alias scope
/// (not one of the largest functions or what LLVM may inline into them) and
/// counts without atomic updates (`scoped_plain`), its paths count in an
/// array, it ends a path at a block or edge inside a loop, and it calls no
/// function ([`calls_out`]).
///
/// A path end is `incq array(,%id,8)`, one instruction for every path. AMD
/// Zen forwards a store to the next load of the same instruction and
/// address at once (memory renaming: only when the address has a register,
/// `bench/renaming.c`, see `bench/README.md`); when a loop's
/// path changes, the increment's next load predicts its value from the
/// last store, of another counter, and the CPU starts over from it, several
/// times a round's cost (`bench/renaming.c`, see `bench/README.md`). So an
/// end inside a loop compares the path register with its value at the last
/// end counted there: a repeated path is counted by an increment indexed by
/// that register, which changes only when the path does; another path by a
/// second increment, which also makes it the last. Every count is still
/// made in memory when its path ends.
///
/// It pays in a tight loop that waits on its path end, such as zlib's
/// `longest_match` chain loop. The conditions keep it out of the rest: a
/// function that calls keeps its loops' values in callee-saved registers,
/// which the compare and the repeat site's two registers push to the stack
/// (bzip2's block sort, whose loops mostly repeat one path and are
/// forwarded already); and in the largest functions and what they inline
/// (SQLite's VDBE) the compares cost more than the forwarding saves
/// (measured with `bench/overhead.py`, see `docs/benchmarks.md`).
pub(super) fn repeats_path_ends(
    body: &Body<'_>,
    cfg: &Cfg,
    placement: &Placement,
    counters: &Counters<'_>,
    depth: &[u32],
    scoped_plain: bool,
) -> bool {
    scoped_plain
        && matches!(counters.paths, PathCounters::Array(_))
        && !calls_out(body)
        && placement.ends_path_in_loop(cfg, depth)
}

/// Whether `body` calls a function (an intrinsic or inline `asm` is no
/// call): then the values it keeps across calls compete for the six
/// callee-saved registers with a repeat site's two.
fn calls_out(body: &Body<'_>) -> bool {
    body.blocks
        .iter()
        .flat_map(|b| b.get_instructions())
        .filter_map(|i| Some((ffi::call_site(i)?, i)))
        .any(|(call, i)| {
            !ffi::calls_inline_asm(i)
                && call
                    .get_called_fn_value()
                    .is_none_or(|f| !f.get_name().to_bytes().starts_with(b"llvm."))
        })
}
