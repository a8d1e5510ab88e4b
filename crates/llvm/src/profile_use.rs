//! Profile use: an optimised build's functions given their measured counts.
//! At the point of clang's pipeline where instrumentation counted them
//! (after the same early simplification, before inlining: the IR that was
//! counted), each function is extracted exactly as instrumentation extracts
//! it, matched in the indexed profile by linkage name, source file and CFG
//! shape, and given what clang's IR PGO gives: `branch_weights` on every
//! conditional branch, switch and indirect branch whose successors' counts
//! are known and not all zero, `function_entry_count`, and the module's
//! `ProfileSummary`, so that the inliner, block placement, hot/cold
//! splitting and the loop passes use them; and, as clang's IR PGO marks
//! them, `inlinehint` on a function whose entry count is hot and `cold` on
//! one whose every block's count is cold (by the summary's thresholds, those
//! LLVM's `ProfileSummaryInfo` uses: the smallest count of the hottest 99%
//! and of the hottest 99.9999% of the total). Nothing is instrumented.
//!
//! With [`UseOptions::duplicate_paths`] and a path-mode profile, the hottest
//! functions' correlated branches then get copies along their hot paths
//! ([`crate::duplicate`]), within [`DUPLICATION_BUDGET_PERCENT`] of the
//! module's instructions, and every branch of such a function the weights
//! of the paths through it.

use crate::error::LlvmError;
use crate::walk;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::{FlagBehavior, Module};
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, InstructionOpcode, InstructionValue, MetadataValue,
};
use pathprof_core::pgo::{
    duplicate, scale_to_u32, FunctionProfile, Index, Lookup, Summary, UseNote,
};

/// What a profile's use does beyond clang's IR PGO.
#[derive(Clone, Copy, Debug, Default)]
pub struct UseOptions {
    /// Copy the tails of hot paths where the paths show correlated
    /// branches (`--duplicate-hot-paths`).
    pub duplicate_paths: bool,
}

/// The instructions path-guided copies may add, in percent of the
/// module's (before inlining).
const DUPLICATION_BUDGET_PERCENT: u64 = 5;

/// A copied tail must remove at least a hot block's count (the summary's
/// hot threshold) divided by this of mispredicted branch decisions.
const MIN_GAIN_SHARE_OF_HOT: u64 = 4;

/// Gives every function of `module` that `index` has counts for its
/// weights and entry count, and the module the index's summary; says what
/// it did.
pub fn annotate(
    module: &Module<'_>,
    index: &Index,
    options: UseOptions,
) -> Result<UseNote, LlvmError> {
    let extracted = crate::extract(module)?;
    let bodies = walk::bodies(module);
    let context = module.get_context();
    let prof = context.get_kind_id("prof");
    let hotness = Hotness::of(&index.summary);
    let mut note = UseNote::default();
    // Functions whose paths may drive duplication: their hottest block's
    // count, their position and their profile.
    let mut with_paths: Vec<(u64, usize, &FunctionProfile)> = Vec::new();
    for (i, (body, f)) in bodies.iter().zip(&extracted.functions).enumerate() {
        note.functions += 1;
        let file = f.file.and_then(|i| extracted.files.get(i as usize));
        let found = match index.lookup(&f.name, file.map(String::as_str), f.cfg.shape_hash()) {
            Lookup::Found(found) if found.profile.fits(&f.cfg) => found,
            Lookup::Missing => {
                note.missing += 1;
                continue;
            }
            Lookup::Found(_) | Lookup::Changed => {
                note.changed
                    .push(f.display_name.clone().unwrap_or_else(|| f.name.clone()));
                continue;
            }
        };
        note.matched += 1;
        let profile = &found.profile;
        let entry = node(module, "function_entry_count", &[profile.entry], 64);
        body.function.as_global_value().set_metadata(entry, prof);
        let hottest_block = profile.blocks.iter().copied().max().unwrap_or(0);
        hotness.mark(module, body.function, profile.entry, hottest_block);
        if options.duplicate_paths && !profile.paths.is_empty() {
            with_paths.push((hottest_block, i, profile));
        }
        for b in f.cfg.blocks() {
            if f.cfg.succs(b).len() < 2 {
                continue;
            }
            let term = walk::terminator(body, b.index())?;
            if !branches(term, f.cfg.succs(b).len()) {
                continue;
            }
            let Some(counts) = profile.successor_counts(&f.cfg, b) else {
                note.undetermined += 1;
                continue;
            };
            set_weights(module, term, &counts, prof);
        }
    }
    if let Some(min_gain) = hotness.hot.map(|hot| (hot / MIN_GAIN_SHARE_OF_HOT).max(1)) {
        with_paths.sort_by_key(|f| std::cmp::Reverse(f.0));
        let size: u64 = bodies
            .iter()
            .flat_map(|b| &b.blocks)
            .map(|&b| u64::from(crate::duplicate::size(b)))
            .sum();
        let mut budget = size * DUPLICATION_BUDGET_PERCENT / 100;
        for (_, i, profile) in with_paths {
            let (body, f) = (&bodies[i], &extracted.functions[i]);
            let limits = crate::duplicate::limits(body, &f.cfg, budget, min_gain);
            let Ok(plan) = duplicate::plan(&f.cfg, profile, &limits) else {
                continue;
            };
            if plan.tails.is_empty() {
                continue;
            }
            let blocks = crate::duplicate::copy_tails(body, &plan);
            for (block, counts) in blocks.iter().zip(&plan.counts) {
                let term = block.get_terminator().expect("a block has a terminator");
                if counts.len() >= 2 && branches(term, counts.len()) {
                    set_weights(module, term, counts, prof);
                }
            }
            budget -= plan.added;
            note.copied_tails += plan.tails.len() as u64;
            note.copied_instructions += plan.added;
        }
    }
    if note.matched > 0 && module.get_flag("ProfileSummary").is_none() {
        module.add_metadata_flag(
            "ProfileSummary",
            FlagBehavior::Error,
            summary_node(module, &index.summary),
        );
    }
    Ok(note)
}

/// Whether `term` is a branch weights can be put on, with `slots`
/// successors.
fn branches(term: InstructionValue<'_>, slots: usize) -> bool {
    matches!(
        term.get_opcode(),
        InstructionOpcode::Br | InstructionOpcode::Switch | InstructionOpcode::IndirectBr
    ) && crate::ffi::num_successors(term) as usize == slots
}

/// `counts` as `term`'s `branch_weights`; none where they are all zero
/// (never ran: no weights, as clang's PGO), removing any it had.
fn set_weights(module: &Module<'_>, term: InstructionValue<'_>, counts: &[u64], prof: u32) {
    if counts.iter().all(|&c| c == 0) {
        // Safety: `term` is a live instruction; a null node removes the
        // attachment of kind `prof`.
        unsafe {
            inkwell::llvm_sys::core::LLVMSetMetadata(
                term.as_value_ref(),
                prof,
                std::ptr::null_mut(),
            )
        };
        return;
    }
    let weights: Vec<u64> = scale_to_u32(counts).into_iter().map(u64::from).collect();
    let weights = node(module, "branch_weights", &weights, 32);
    term.set_metadata(weights, prof)
        .expect("a metadata node is a node");
}

/// The counts above which a function is hot and at or below which it is
/// cold, from the summary's cutoffs as `ProfileSummaryInfo` takes them
/// (`-profile-summary-cutoff-hot` 990000, `-cold` 999999).
struct Hotness {
    hot: Option<u64>,
    cold: Option<u64>,
}

impl Hotness {
    fn of(summary: &Summary) -> Self {
        let at = |cutoff: u32| {
            summary
                .detailed
                .iter()
                .find(|e| e.cutoff >= cutoff)
                .map(|e| e.min_count)
        };
        Hotness {
            hot: at(990_000),
            cold: at(999_999),
        }
    }

    /// `inlinehint` on `function` when its `entry` count is hot, else `cold`
    /// when its hottest block's count is cold; a `hot` the source gave
    /// stays.
    fn mark(
        &self,
        module: &Module<'_>,
        function: inkwell::values::FunctionValue<'_>,
        entry: u64,
        hottest_block: u64,
    ) {
        let has = |name: &str| {
            function
                .get_enum_attribute(
                    AttributeLoc::Function,
                    Attribute::get_named_enum_kind_id(name),
                )
                .is_some()
        };
        let add = |name: &str| {
            let kind = Attribute::get_named_enum_kind_id(name);
            let attribute = module.get_context().create_enum_attribute(kind, 0);
            function.add_attribute(AttributeLoc::Function, attribute);
        };
        if self.hot.is_some_and(|t| entry >= t && t > 0) {
            add("inlinehint");
        } else if self.cold.is_some_and(|t| hottest_block <= t) && !has("hot") {
            add("cold");
        }
    }
}

/// `!{!"name", iN v0, iN v1, ...}`, `N` 32 or 64.
fn node<'ctx>(module: &Module<'ctx>, name: &str, values: &[u64], bits: u32) -> MetadataValue<'ctx> {
    let context = module.get_context();
    let int = match bits {
        32 => context.i32_type(),
        _ => context.i64_type(),
    };
    let mut parts: Vec<BasicMetadataValueEnum<'ctx>> = vec![context.metadata_string(name).into()];
    parts.extend(
        values
            .iter()
            .map(|&v| BasicMetadataValueEnum::from(int.const_int(v, false))),
    );
    context.metadata_node(&parts)
}

/// The `ProfileSummary` node LLVM's `ProfileSummary::getMD` writes for an
/// instrumentation profile.
fn summary_node<'ctx>(module: &Module<'ctx>, s: &Summary) -> MetadataValue<'ctx> {
    let context = module.get_context();
    let (i32_type, i64_type) = (context.i32_type(), context.i64_type());
    let string = |s: &str| -> BasicMetadataValueEnum<'ctx> { context.metadata_string(s).into() };
    let field = |name: &str, v: u64| node(module, name, &[v], 64).into();
    let detailed: Vec<BasicMetadataValueEnum<'ctx>> = s
        .detailed
        .iter()
        .map(|e| {
            context
                .metadata_node(&[
                    i32_type.const_int(u64::from(e.cutoff), false).into(),
                    i64_type.const_int(e.min_count, false).into(),
                    i32_type
                        .const_int(e.num_counts.min(u64::from(u32::MAX)), false)
                        .into(),
                ])
                .into()
        })
        .collect();
    context.metadata_node(&[
        context
            .metadata_node(&[string("ProfileFormat"), string("InstrProf")])
            .into(),
        field("TotalCount", s.total_count),
        field("MaxCount", s.max_count),
        field("MaxInternalCount", s.max_internal_count),
        field("MaxFunctionCount", s.max_function_count),
        field("NumCounts", s.num_counts),
        field("NumFunctions", s.num_functions),
        field("IsPartialProfile", 0),
        context
            .metadata_node(&[
                string("PartialProfileRatio"),
                context.f64_type().const_float(0.0).into(),
            ])
            .into(),
        context
            .metadata_node(&[
                string("DetailedSummary"),
                context.metadata_node(&detailed).into(),
            ])
            .into(),
    ])
}
