//! The runtime ABI (docs/formats.md §2): per-function counter globals, the
//! `PpFunction` table, the `PpModule` descriptor, the constructor that hands
//! it to `__pathprof_register` from `llvm.global_ctors`, and the destructor
//! that hands it to `__pathprof_fini` from `llvm.global_dtors`.
//!
//! Counters are internal, zero-initialised, 8-byte aligned globals in the
//! object's zero-initialised data (`.bss`): the module's slot array
//! `__pathprof_slots` (every function's slots, one after another: see
//! [`SlotArray`]) and each function's `__pathprof_paths.<i>` /
//! `__pathprof_hash.<i>` (`i` = the function's index). Per thread,
//! instrumented code counts them at their address plus its thread's delta
//! ([`ThreadDelta`]: the only thread-local variable, 8 bytes per linked
//! object); the descriptors are private constants. The constructor runs at priority 0,
//! before ordinary constructors, so the runtime's `atexit` handler is registered
//! early and runs after the program's own; the destructor, also at priority 0,
//! runs after the module's other destructors (`.fini_array`), which run after
//! every `atexit` handler, and writes what they counted. The numbers written
//! into the descriptors (ABI version, mode, path kind) are
//! `pathprof_format::abi`'s, which the runtime reads with.

use super::ModuleInfo;
use crate::ffi;
use crate::walk::RESERVED_PREFIX;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::comdat::ComdatSelectionKind;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicType;
use inkwell::values::{AsValueRef, BasicValue, BasicValueEnum, GlobalValue};
use inkwell::values::{FunctionValue, PointerValue};
use inkwell::AddressSpace;
use inkwell::{GlobalVisibility, ThreadLocalMode};
use pathprof_core::plan::{FunctionPlan, PathStorage};
use pathprof_core::profile::mode_number;
use pathprof_format::abi::{
    ABI_VERSION, HASH_GLOBAL_WORDS, MODULE_CONTINUOUS, PATHS_ARRAY, PATHS_HASH, PATHS_NONE,
    SEGMENT_GS, SEGMENT_NONE,
};

/// Name of the `PpModule` global; its presence means "already instrumented".
pub(crate) const MODULE_SYMBOL: &str = "__pathprof_module";
/// Constructors of this priority run first and destructors last.
const STRUCTOR_PRIORITY: u64 = 0;

/// The module's counter array: every function's slots, one after another
/// (so that a function and the callees inlined into it reach all of theirs
/// from one address).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModuleArray<'ctx> {
    /// Its length, in counters (`PpModule::num_slots`).
    pub len: u64,
    /// `__pathprof_slots`, `[len x i64]`: what the runtime reads, and
    /// where the probes count (at the thread's delta).
    pub global: GlobalValue<'ctx>,
}

/// Counters of a function in the module's array, from `offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span<'ctx> {
    pub array: ModuleArray<'ctx>,
    pub offset: u64,
}

/// One function's counters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counters<'ctx> {
    /// Its `num_slots` slots; absent when it has none.
    pub slots: Option<Span<'ctx>>,
    pub paths: PathCounters<'ctx>,
    /// A PPP function's interesting-path counters.
    pub ppp: Option<PppCounters<'ctx>>,
}

impl Counters<'_> {
    /// Whether the function counts at the thread delta: it has counters.
    pub(crate) fn at_delta(&self) -> bool {
        self.slots.is_some() || !matches!(self.paths, PathCounters::None)
    }
}

/// Whether only an executable can hold `module`'s code: it is
/// position-independent for an executable (`PIE Level`) or not
/// position-independent at all, so local-exec thread-local variables are
/// valid in it.
fn executable_only(module: &Module<'_>) -> bool {
    module.get_flag("PIE Level").is_some() || module.get_flag("PIC Level").is_none()
}

/// Whether `module` counts its slots and path arrays through `%gs`: only an
/// executable can hold it ([`executable_only`]: one object per process,
/// whose delta the runtime makes each thread's GS base), on x86-64.
pub(crate) fn executable_only_x86_64(module: &Module<'_>) -> bool {
    let triple = module.get_triple();
    let triple = triple.as_str().to_string_lossy();
    triple.starts_with("x86_64") && executable_only(module)
}

/// Where a PPP function counts its interesting paths: `slots[base + p]` for
/// PPP id `p < interval` whose owner (`owners[p]`, a private constant
/// `[interval x i64]` named `__pathprof_ppp_owners.<i>`) is the path's
/// Ball-Larus id; with a packing, the owners are the window's keys
/// (`[window x i64]`, [`pathprof_core::plan::PppSlots::table`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PppCounters<'ctx> {
    pub base: u32,
    pub interval: u64,
    pub owners: GlobalValue<'ctx>,
    /// Both registers in one word: the owners are the paths' keys
    /// ([`pathprof_core::ppp::Packing::owner_key`]).
    pub packing: Option<pathprof_core::ppp::Packing>,
}

/// Where a function's path counts go.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PathCounters<'ctx> {
    None,
    /// `[len x i64]`, indexed by path id.
    Array(GlobalValue<'ctx>),
    /// A `PpHashState` (`[8 x i64]`) passed to `__pathprof_hash_count*` and
    /// `_uncount`, followed by the inline cache's base word and its
    /// `HASH_CACHE_SLOTS` slots (`[HASH_GLOBAL_WORDS x i64]` in all).
    Hash(GlobalValue<'ctx>),
}

/// An internal, zero-initialised `[len x i64]` global named `name`.
fn zeroed<'ctx>(module: &Module<'ctx>, name: &str, len: u64) -> GlobalValue<'ctx> {
    let ty = ffi::i64_array_type(module.get_context().i64_type(), len);
    let g = module.add_global(ty, None, name);
    g.set_linkage(Linkage::Internal);
    g.set_initializer(&ty.const_zero());
    g.set_alignment(8);
    g
}

/// Creates the counter globals: the module array (absent when empty) and
/// every function's counters (`plans[i]` is function `i`'s).
pub(crate) fn counters<'ctx>(
    module: &Module<'ctx>,
    plans: &[FunctionPlan],
) -> (Option<ModuleArray<'ctx>>, Vec<Counters<'ctx>>) {
    let total: u64 = plans.iter().map(|p| u64::from(p.num_slots)).sum();
    let array = (total > 0).then(|| ModuleArray {
        len: total,
        global: zeroed(module, &format!("{RESERVED_PREFIX}_slots"), total),
    });
    // Every function's slots, in function order.
    let mut offset = 0;
    let counters = plans
        .iter()
        .enumerate()
        .map(|(index, plan)| {
            let at = offset;
            offset += u64::from(plan.num_slots);
            let slots = array
                .filter(|_| plan.num_slots > 0)
                .map(|array| Span { array, offset: at });
            function_counters(module, index, plan, slots)
        })
        .collect();
    (array, counters)
}

/// Function `index`'s path counters, with its `slots`.
fn function_counters<'ctx>(
    module: &Module<'ctx>,
    index: usize,
    plan: &FunctionPlan,
    slots: Option<Span<'ctx>>,
) -> Counters<'ctx> {
    let i64_type = module.get_context().i64_type();
    let zeroed = |name: String, len: u64| zeroed(module, &name, len);
    let paths = match plan.paths {
        PathStorage::None | PathStorage::Array { len: 0 } => PathCounters::None,
        PathStorage::Array { len } => {
            PathCounters::Array(zeroed(format!("{RESERVED_PREFIX}_paths.{index}"), len))
        }
        PathStorage::Hash { .. } => PathCounters::Hash(zeroed(
            format!("{RESERVED_PREFIX}_hash.{index}"),
            HASH_GLOBAL_WORDS as u64,
        )),
    };
    let ppp = plan.ppp.as_ref().map(|t| {
        let values: Vec<_> = t
            .table()
            .into_iter()
            .map(|o| i64_type.const_int(o, false))
            .collect();
        let init = i64_type.const_array(&values);
        PppCounters {
            base: t.base,
            interval: t.owners.len() as u64,
            packing: t.packing,
            owners: constant_global(
                module,
                &format!("{RESERVED_PREFIX}_ppp_owners.{index}"),
                init.as_basic_value_enum(),
            ),
        }
    });
    Counters { slots, paths, ppp }
}

/// The calling thread's counter delta: a thread-local `i64` of the linked
/// object (`linkonce_odr`, hidden, in a comdat: one per executable or
/// shared library, whichever of its modules define it; the object's only
/// static thread-local data), local-exec where only an executable can hold
/// the module (reading it is one load at a constant offset from the thread
/// pointer), else initial-exec (one more load, through the GOT); 0 until
/// the runtime gives the thread a block. The runtime reaches it through `accessor`, a function of
/// the same object that returns its address in the calling thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadDelta<'ctx> {
    variable: GlobalValue<'ctx>,
    pub accessor: FunctionValue<'ctx>,
}

/// Thread-local `variable`'s address in the calling thread, at `builder`'s
/// position (`llvm.threadlocal.address`).
pub(crate) fn in_this_thread<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    variable: GlobalValue<'ctx>,
) -> PointerValue<'ctx> {
    let ptr_type = module.get_context().ptr_type(AddressSpace::default());
    let address = Intrinsic::find("llvm.threadlocal.address")
        .and_then(|i| i.get_declaration(module, &[ptr_type.into()]))
        .expect("LLVM 22 has llvm.threadlocal.address");
    builder
        .build_call(
            address,
            &[variable.as_pointer_value().into()],
            "pp.thread.addr",
        )
        .expect("the builder is positioned")
        .try_as_basic_value()
        .expect_basic("llvm.threadlocal.address returns a pointer")
        .into_pointer_value()
}

/// Defines `ptr <name>(void)` (of `linkage`, nounwind) returning thread-local `variable`'s address in the calling
/// thread: how the runtime reaches it.
fn thread_accessor<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    variable: GlobalValue<'ctx>,
    linkage: Option<Linkage>,
) -> FunctionValue<'ctx> {
    let context = module.get_context();
    let ptr_type = context.ptr_type(AddressSpace::default());
    let accessor = module.add_function(name, ptr_type.fn_type(&[], false), linkage);
    accessor.add_attribute(AttributeLoc::Function, nounwind(&context));
    let builder = context.create_builder();
    builder.position_at_end(context.append_basic_block(accessor, "entry"));
    let here = in_this_thread(module, &builder, variable);
    builder
        .build_return(Some(&here))
        .expect("the builder is positioned");
    accessor
}

impl<'ctx> ThreadDelta<'ctx> {
    /// Defines the variable and its accessor in `module`.
    pub(crate) fn define(module: &Module<'ctx>) -> Self {
        let context = module.get_context();
        let i64_type = context.i64_type();
        let shared = |name: &str, g: GlobalValue<'ctx>| {
            g.set_linkage(Linkage::LinkOnceODR);
            g.set_visibility(GlobalVisibility::Hidden);
            let comdat = module.get_or_insert_comdat(name);
            comdat.set_selection_kind(ComdatSelectionKind::Any);
            g.set_comdat(comdat);
        };
        let name = format!("{RESERVED_PREFIX}_thread_delta_variable");
        let variable = module.add_global(i64_type, None, &name);
        variable.set_initializer(&i64_type.const_zero());
        variable.set_alignment(8);
        variable.set_thread_local_mode(Some(if executable_only(module) {
            ThreadLocalMode::LocalExecTLSModel
        } else {
            ThreadLocalMode::InitialExecTLSModel
        }));
        shared(&name, variable);
        let name = format!("{RESERVED_PREFIX}_thread_delta");
        let accessor = thread_accessor(module, &name, variable, None);
        shared(&name, accessor.as_global_value());
        ThreadDelta { variable, accessor }
    }

    /// The variable's address in the calling thread, at `builder`'s position.
    pub(crate) fn in_this_thread(
        &self,
        module: &Module<'ctx>,
        builder: &Builder<'ctx>,
    ) -> PointerValue<'ctx> {
        in_this_thread(module, builder, self.variable)
    }
}

/// Emits the `PpFunction` table, the `PpModule` and the registering constructor.
/// `functions[i]` is function `i`'s plan and counters, `module_array` the
/// module's counter array.
/// `delta` is the module's [`ThreadDelta`], absent when it has no counters.
pub(crate) fn register<'ctx>(
    module: &Module<'ctx>,
    info: &ModuleInfo,
    functions: &[(&FunctionPlan, Counters<'ctx>)],
    module_array: Option<ModuleArray<'ctx>>,
    delta: Option<ThreadDelta<'ctx>>,
    segment: bool,
) {
    let context = module.get_context();
    let i32_type = context.i32_type();
    let i64_type = context.i64_type();
    let ptr_type = context.ptr_type(AddressSpace::default());
    let null = ptr_type.const_null();
    let ptr_or_null = |g: Option<GlobalValue<'ctx>>| g.map_or(null, |g| g.as_pointer_value());
    let span_at = |span: Option<Span<'ctx>>| {
        span.map_or(null, |s| {
            let offset = i64_type.const_int(s.offset, false);
            // Safety: `offset` is within the array (`counters` laid it out).
            unsafe {
                s.array
                    .global
                    .as_pointer_value()
                    .const_gep(i64_type, &[offset])
            }
        })
    };

    // struct PpFunction { u64 hash; u32 index, num_slots; u64 *slots;
    //                     u32 path_kind, reserved; u64 num_paths; u64 *paths; }
    let function_type = context.struct_type(
        &[
            i64_type.into(),
            i32_type.into(),
            i32_type.into(),
            ptr_type.into(),
            i32_type.into(),
            i32_type.into(),
            i64_type.into(),
            ptr_type.into(),
        ],
        false,
    );
    let records: Vec<_> = functions
        .iter()
        .enumerate()
        .map(|(i, (plan, counters))| {
            let (kind, num_paths, paths) = match (plan.paths, counters.paths) {
                (PathStorage::Array { len }, PathCounters::Array(g)) => {
                    (PATHS_ARRAY, len, ptr_or_null(Some(g)))
                }
                (PathStorage::Hash { num_paths }, PathCounters::Hash(g)) => {
                    (PATHS_HASH, num_paths, ptr_or_null(Some(g)))
                }
                _ => (PATHS_NONE, 0, null),
            };
            let fields: [BasicValueEnum<'ctx>; 8] = [
                i64_type.const_int(info.hashes[i], false).into(),
                i32_type.const_int(i as u64, false).into(),
                i32_type.const_int(plan.num_slots.into(), false).into(),
                span_at(counters.slots).into(),
                i32_type.const_int(kind.into(), false).into(),
                i32_type.const_zero().into(),
                i64_type.const_int(num_paths, false).into(),
                paths.into(),
            ];
            function_type.const_named_struct(&fields)
        })
        .collect();
    let table = (!records.is_empty()).then(|| {
        let init = function_type.const_array(&records);
        constant_global(
            module,
            &format!("{RESERVED_PREFIX}_functions"),
            init.as_basic_value_enum(),
        )
    });

    // struct PpModule { u32 abi_version, mode; u64 build_id, num_functions;
    //                   const PpFunction *functions;
    //                   int64_t *(*thread_delta)(void);
    //                   uint64_t *slots; uint64_t num_slots;
    //                   uint32_t segment, flags; }
    let module_type = context.struct_type(
        &[
            i32_type.into(),
            i32_type.into(),
            i64_type.into(),
            i64_type.into(),
            ptr_type.into(),
            ptr_type.into(),
            ptr_type.into(),
            i64_type.into(),
            i32_type.into(),
            i32_type.into(),
        ],
        false,
    );
    let flags = if info.continuous {
        MODULE_CONTINUOUS
    } else {
        0
    };
    let accessor = delta.map_or(null, |d| d.accessor.as_global_value().as_pointer_value());
    let descriptor = module_type.const_named_struct(&[
        i32_type.const_int(ABI_VERSION.into(), false).into(),
        i32_type
            .const_int(mode_number(info.mode).into(), false)
            .into(),
        i64_type.const_int(info.build_id, false).into(),
        i64_type.const_int(functions.len() as u64, false).into(),
        ptr_or_null(table).into(),
        accessor.into(),
        ptr_or_null(module_array.map(|a| a.global)).into(),
        i64_type
            .const_int(module_array.map_or(0, |a| a.len), false)
            .into(),
        i32_type
            .const_int(
                if segment { SEGMENT_GS } else { SEGMENT_NONE }.into(),
                false,
            )
            .into(),
        i32_type.const_int(flags.into(), false).into(),
    ]);
    let descriptor = constant_global(module, MODULE_SYMBOL, descriptor.as_basic_value_enum());

    // void __pathprof_ctor(void) { __pathprof_register(&__pathprof_module); }
    // void __pathprof_dtor(void) { __pathprof_fini(&__pathprof_module); }
    let descriptor = descriptor.as_pointer_value().as_basic_value_enum();
    let ctor = call_runtime_with(module, "ctor", "register", descriptor);
    append_structor(module, "llvm.global_ctors", ctor);
    let dtor = call_runtime_with(module, "dtor", "fini", descriptor);
    append_structor(module, "llvm.global_dtors", dtor);
}

/// Defines `void __pathprof_<name>(void) { __pathprof_<callee>(arg); }`
/// (internal, nounwind) and returns its address.
fn call_runtime_with<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    callee: &str,
    arg: BasicValueEnum<'ctx>,
) -> BasicValueEnum<'ctx> {
    let context = module.get_context();
    let void_type = context.void_type();
    let callee_name = format!("{RESERVED_PREFIX}_{callee}");
    let callee = module.get_function(&callee_name).unwrap_or_else(|| {
        let f = module.add_function(
            &callee_name,
            void_type.fn_type(&[arg.get_type().into()], false),
            None,
        );
        f.add_attribute(AttributeLoc::Function, nounwind(&context));
        f
    });
    let function = module.add_function(
        &format!("{RESERVED_PREFIX}_{name}"),
        void_type.fn_type(&[], false),
        Some(Linkage::Internal),
    );
    function.add_attribute(AttributeLoc::Function, nounwind(&context));
    let builder = context.create_builder();
    builder.position_at_end(context.append_basic_block(function, "entry"));
    builder
        .build_call(callee, &[arg.into()], "")
        .expect("the builder is positioned");
    builder
        .build_return(None)
        .expect("the builder is positioned");
    function
        .as_global_value()
        .as_pointer_value()
        .as_basic_value_enum()
}

fn nounwind(context: &inkwell::context::ContextRef<'_>) -> Attribute {
    enum_attribute(context, "nounwind")
}

/// The enum attribute `name` with no argument (for `memory`, `memory(none)`),
/// for a function or a call site.
pub(super) fn enum_attribute(context: &inkwell::context::ContextRef<'_>, name: &str) -> Attribute {
    context.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0)
}

fn constant_global<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    init: BasicValueEnum<'ctx>,
) -> GlobalValue<'ctx> {
    let g = module.add_global(init.get_type(), None, name);
    g.set_linkage(Linkage::Private);
    g.set_constant(true);
    g.set_initializer(&init);
    g.set_alignment(8);
    g
}

/// Adds `{ i32 priority, ptr function, ptr null }` to `llvm.global_ctors` or
/// `llvm.global_dtors` (`name`), creating the array or rebuilding it with the
/// old entries first.
fn append_structor<'ctx>(module: &Module<'ctx>, name: &str, function: BasicValueEnum<'ctx>) {
    let context = module.get_context();
    let ptr_type = context.ptr_type(AddressSpace::default());
    // The verifier only accepts `{ i32, ptr, ptr }` entries (older two-field
    // forms are upgraded when bitcode is read).
    let entry_type = context.struct_type(
        &[context.i32_type().into(), ptr_type.into(), ptr_type.into()],
        false,
    );
    let entry = entry_type.const_named_struct(&[
        context
            .i32_type()
            .const_int(STRUCTOR_PRIORITY, false)
            .into(),
        function,
        ptr_type.const_null().into(),
    ]);
    crate::structors::append_to_list(
        module,
        name,
        entry_type.as_basic_type_enum(),
        &[entry.as_value_ref()],
    );
}
