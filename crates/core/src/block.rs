//! The block-counting planner (Weinberger 1984): one counter per reachable basic
//! block, incremented at the block's top. When the entry block can be re-entered
//! (possible in general CFGs, never in LLVM's), one more slot counts calls.

use crate::cfg::Cfg;
use crate::layout::Layout;
use crate::plan::{FunctionPlan, Op, PathStorage, ProbeSite};

/// Plans block counting of one function.
pub fn plan_blocks(cfg: &Cfg) -> (FunctionPlan, Layout) {
    let mut slot_of_block = vec![None; cfg.num_blocks()];
    let mut ops = Vec::new();
    let mut next = 0u32;
    for b in cfg.blocks().filter(|&b| cfg.is_reachable(b)) {
        slot_of_block[b.index()] = Some(next);
        ops.push((ProbeSite::BlockStart(b), Op::CountSlot(next)));
        next += 1;
    }
    let calls_slot = (!cfg.preds(cfg.entry()).is_empty()).then(|| {
        ops.push((ProbeSite::FunctionEntry, Op::CountSlot(next)));
        next += 1;
        next - 1
    });
    (
        FunctionPlan::from_ops(next, PathStorage::None, ops),
        Layout::Block {
            slot_of_block,
            calls_slot,
        },
    )
}
