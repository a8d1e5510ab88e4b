//! Emission into one function: the probes of its placement, op by op, at
//! the start and end of its blocks and around its counted calls, and the
//! undo after a call (see the emission doc in `emit`).

use super::*;

/// Emission into one function.
pub(super) struct Site<'e, 'ctx> {
    pub(super) emitter: &'e mut Emitter<'ctx>,
    pub(super) module: &'e Module<'ctx>,
    pub(super) counters: Counters<'ctx>,
    /// The function being instrumented.
    pub(super) function: FunctionValue<'ctx>,
    /// Slots and path arrays are incremented through `%gs` (the module
    /// counts there and no count of the function is undone through a
    /// pointer in memory: an `invoke`'s pending undo is a plain pointer).
    pub(super) through_gs: bool,
    /// The path register, when the function uses one.
    pub(super) r: Option<PointerValue<'ctx>>,
    /// The PPP register, when the function uses one.
    pub(super) q: Option<PointerValue<'ctx>>,
    /// The repeat sites' state, when path ends inside loops count there
    /// ([`repeats_path_ends`]).
    pub(super) repeat: Option<Repeat<'ctx>>,
    /// Whether the ops being emitted run inside a loop.
    pub(super) in_loop: bool,
    /// The thread's counter delta, loaded once in the entry block, when the
    /// function has counters.
    pub(super) delta: Option<IntValue<'ctx>>,
    /// The counter globals whose address in the calling thread is computed
    /// once, in the entry block (see [`Site::pinned_bases`]), with it.
    pub(super) bases: Vec<(GlobalValue<'ctx>, PointerValue<'ctx>)>,
}

/// What a function's repeat sites ([`Site::count_repeat`]) share.
#[derive(Clone, Copy)]
pub(super) struct Repeat<'ctx> {
    /// An `i64` alloca (0 on entry): the path register's value at the last
    /// path end counted inside a loop.
    pub(super) last: PointerValue<'ctx>,
    /// An opaque zero added, in bytes, to the address of a repeated path's
    /// increment.
    pub(super) zero: IntValue<'ctx>,
}

impl<'ctx> Site<'_, 'ctx> {
    pub(super) fn position_at_start(&self, body: &Body<'ctx>, b: usize) -> Result<(), LlvmError> {
        let at = first_insertion_point(body.blocks[b]).ok_or_else(|| catchswitch(body, b))?;
        self.emitter.position_before(&at);
        Ok(())
    }

    pub(super) fn position_at_end(&self, body: &Body<'ctx>, b: usize) -> Result<(), LlvmError> {
        let term = walk::terminator(body, b)?;
        if term.get_opcode() == InstructionOpcode::CatchSwitch {
            return Err(catchswitch(body, b));
        }
        let at = musttail_call_before(term)
            .or_else(|| no_return_call_before(term))
            .or_else(|| walk::resume_call_before(term))
            .unwrap_or(term);
        self.emitter.position_before(&at);
        Ok(())
    }

    pub(super) fn ops(&mut self, ops: &[Op]) {
        for &op in ops {
            self.op(op);
        }
    }

    pub(super) fn op(&mut self, op: Op) {
        match op {
            Op::SetPath(c) => self.set(self.path_register(), c),
            Op::AddPath(c) => self.add(self.path_register(), c),
            Op::CountPath(c) => match self.repeat.filter(|_| self.in_loop) {
                Some(repeat) => self.count_repeat(repeat, c),
                None => {
                    let id = self.path_plus(self.path_register(), c);
                    self.count_path(id);
                }
            },
            Op::CountSlot(k) => {
                self.count_slot(k);
            }
            Op::SetPpp(c) => self.set(self.ppp_register(), c),
            Op::AddPpp(c) => self.add(self.ppp_register(), c),
            Op::CountPpp { bl, ppp } => {
                let id = self.path_plus(self.path_register(), bl);
                let p = self.path_plus(self.ppp_register(), ppp);
                self.count_ppp(false, [p, id, id]);
            }
            Op::CountPacked(c) => {
                let word = self.path_plus(self.path_register(), c);
                self.count_packed(word);
            }
        }
    }

    /// `*__pathprof_thread_delta_variable` of the calling thread, at the
    /// builder's position.
    pub(super) fn load_delta(&self) -> IntValue<'ctx> {
        let delta = self
            .emitter
            .delta
            .expect("a module with counters defines the thread delta");
        let b = &self.emitter.builder;
        let address = delta.in_this_thread(self.module, b);
        b.build_load(self.emitter.i64_type, address, "pp.delta")
            .expect(POSITIONED)
            .into_int_value()
    }

    /// The thread's addresses of the slot and path-array globals (when
    /// [`pins_bases`]), at the
    /// builder's position (the entry block), each through an empty inline
    /// `asm` (no side effects, no memory, so it is still hoisted, merged and
    /// deleted like arithmetic). Code generation then keeps each in one
    /// register (or a spill slot) and a probe is one `addq $1, k(%reg)`.
    /// Without it, code generation folds `global + delta` into every probe's
    /// address and, in a position-independent executable, rematerialises a
    /// `lea global(%rip)` at probes after calls (`freeze` does not stop
    /// that: InstCombine moves it onto the delta). A hash-table function's
    /// state is left out: its paths count through the inline cache, whose
    /// own address arithmetic needs no register held.
    pub(super) fn pinned_bases(&self) -> Vec<(GlobalValue<'ctx>, PointerValue<'ctx>)> {
        let array = match self.counters.paths {
            PathCounters::Array(g) => Some(g),
            PathCounters::None | PathCounters::Hash(_) => None,
        };
        let slots = self.counters.slots.map(|s| s.array.global);
        [slots, array]
            .into_iter()
            .flatten()
            .map(|g| {
                let at = self.opaque(self.thread_address(g));
                (g, self.as_pointer(g, at))
            })
            .collect()
    }

    /// `global + delta`, as an integer, at the builder's position.
    pub(super) fn thread_address(&self, g: GlobalValue<'ctx>) -> IntValue<'ctx> {
        let delta = self
            .delta
            .expect("a function with counters loads the delta");
        let b = &self.emitter.builder;
        let at = b
            .build_ptr_to_int(g.as_pointer_value(), self.emitter.i64_type, "pp.global")
            .expect(POSITIONED);
        b.build_int_add(at, delta, "pp.mine").expect(POSITIONED)
    }

    /// Address `at` of `g`'s copy as a pointer: an integer turned pointer,
    /// as the thread's block is memory LLVM knows nothing of, so the pointer
    /// may not be `g`'s.
    pub(super) fn as_pointer(
        &self,
        g: GlobalValue<'ctx>,
        at: IntValue<'ctx>,
    ) -> PointerValue<'ctx> {
        self.emitter
            .builder
            .build_int_to_ptr(at, g.as_pointer_value().get_type(), "pp.counters")
            .expect(POSITIONED)
    }

    /// `value`, through an empty inline `asm` the optimisers cannot see into.
    pub(super) fn opaque(&self, value: IntValue<'ctx>) -> IntValue<'ctx> {
        let context = self.module.get_context();
        let i64_type = self.emitter.i64_type;
        let ty = i64_type.fn_type(&[i64_type.into()], false);
        let asm = context.create_inline_asm(
            ty,
            String::new(),
            "=r,0".to_string(),
            false,
            false,
            None,
            false,
        );
        let call = self
            .emitter
            .builder
            .build_indirect_call(ty, asm, &[value.into()], "pp.base")
            .expect(POSITIONED);
        for name in ["nounwind", "willreturn", "memory"] {
            call.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
        }
        call.try_as_basic_value()
            .expect_basic("the asm returns its operand")
            .into_int_value()
    }

    /// Where the calling thread counts counter global `g`: its pinned base,
    /// or its address plus the thread's delta, computed here.
    pub(super) fn counters_at(&self, g: GlobalValue<'ctx>) -> PointerValue<'ctx> {
        match self.bases.iter().find(|(global, _)| *global == g) {
            Some(&(_, at)) => at,
            None => self.as_pointer(g, self.thread_address(g)),
        }
    }

    /// Where a probe increments counter global `g` in the calling thread:
    /// through `%gs` in a module counted there (`g`'s own address in
    /// address space 256: `incq %gs:g+k(%rip)`, no register), else where
    /// [`counters_at`](Self::counters_at) says.
    pub(super) fn direct(&self, g: GlobalValue<'ctx>) -> PointerValue<'ctx> {
        if !self.through_gs {
            return self.counters_at(g);
        }
        let b = &self.emitter.builder;
        let at = b
            .build_ptr_to_int(g.as_pointer_value(), self.emitter.i64_type, "pp.global")
            .expect(POSITIONED);
        let gs = self
            .module
            .get_context()
            .ptr_type(AddressSpace::from(256u16));
        b.build_int_to_ptr(at, gs, "pp.gs").expect(POSITIONED)
    }

    /// The calling thread's copy of the function's slot `k`, at `array`
    /// (the slot array's copy: [`direct`](Self::direct)'s or
    /// [`counters_at`](Self::counters_at)'s).
    fn slot_in(
        &self,
        k: u32,
        array: impl Fn(GlobalValue<'ctx>) -> PointerValue<'ctx>,
    ) -> PointerValue<'ctx> {
        let slots = self
            .counters
            .slots
            .expect("placement checked the slot number");
        let index = self
            .emitter
            .i64_type
            .const_int(slots.offset + u64::from(k), false);
        self.emitter.element(array(slots.array.global), index)
    }

    /// The calling thread's copy of the function's slot `k`, as an address
    /// (for the PPP helpers).
    pub(super) fn slot(&self, k: u32) -> PointerValue<'ctx> {
        self.slot_in(k, |g| self.counters_at(g))
    }

    /// The calling thread's copy of the function's path array (its first
    /// counter).
    pub(super) fn path_array(&self) -> PointerValue<'ctx> {
        match self.counters.paths {
            PathCounters::Array(g) => self.counters_at(g),
            PathCounters::None | PathCounters::Hash(_) => {
                unreachable!("placement checked the path array")
            }
        }
    }

    pub(super) fn path_register(&self) -> PointerValue<'ctx> {
        self.r.expect("path ops imply a path register")
    }

    pub(super) fn ppp_register(&self) -> PointerValue<'ctx> {
        self.q.expect("PPP ops imply a PPP register")
    }

    /// `reg = c`.
    pub(super) fn set(&self, reg: PointerValue<'ctx>, c: i64) {
        let c = self.constant(c);
        self.emitter.builder.build_store(reg, c).expect(POSITIONED);
    }

    /// `reg += c`.
    pub(super) fn add(&self, reg: PointerValue<'ctx>, c: i64) {
        let sum = if i32::try_from(c).is_ok() {
            self.path_plus(reg, c)
        } else {
            let v = self.path_plus(reg, 0);
            let c = self.opaque(self.constant(c));
            self.emitter
                .builder
                .build_int_add(v, c, "pp.r.add")
                .expect(POSITIONED)
        };
        self.emitter
            .builder
            .build_store(reg, sum)
            .expect(POSITIONED);
    }

    /// The ops of a `Call` probe on a scratch copy of `r`, before `call` (see
    /// the module doc); returns the counts they made, for the caller to undo.
    pub(super) fn call_probe(
        &mut self,
        call: InstructionValue<'ctx>,
        ops: &[Op],
    ) -> Vec<Counted<'ctx>> {
        self.emitter.position_before(&call);
        // The scratch path value, `load r` on first use.
        let mut scratch: Option<IntValue<'ctx>> = None;
        let mut scratch_q: Option<IntValue<'ctx>> = None;
        let mut counted = Vec::new();
        for &op in ops {
            match op {
                Op::SetPath(c) => scratch = Some(self.constant(c)),
                Op::AddPath(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    scratch = Some(self.plus(v, c));
                }
                Op::SetPpp(c) => scratch_q = Some(self.constant(c)),
                Op::AddPpp(c) => {
                    let v = self.scratch(self.ppp_register(), &mut scratch_q);
                    scratch_q = Some(self.plus(v, c));
                }
                Op::CountPpp { bl, ppp } => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let id = self.plus(v, bl);
                    let v = self.scratch(self.ppp_register(), &mut scratch_q);
                    let p = self.plus(v, ppp);
                    counted.push(self.count_ppp(false, [p, id, id]));
                }
                Op::CountPacked(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let word = self.plus(v, c);
                    counted.push(self.count_packed(word));
                }
                Op::CountPath(c) => {
                    let v = self.scratch(self.path_register(), &mut scratch);
                    let id = self.plus(v, c);
                    counted.push(self.count_path(id));
                }
                Op::CountSlot(k) => counted.push(self.count_slot(k)),
            }
        }
        counted
    }

    /// Undoes every count in `counted`, before `at`.
    pub(super) fn undo(&mut self, at: InstructionValue<'ctx>, counted: &[Counted<'ctx>]) {
        self.emitter.position_before(&at);
        for &c in counted {
            match c {
                Counted::Counter(p) => self.emitter.decrement(p),
                Counted::Hash(state, id) => self.call_hash(HashFn::Uncount, state, id),
                Counted::Ppp(args, hash, packed) => self.call_ppp(true, hash, packed, &args),
            }
        }
    }

    /// The scratch copy of register `reg` in a `Call` probe, loading it the
    /// first time.
    pub(super) fn scratch(
        &self,
        reg: PointerValue<'ctx>,
        scratch: &mut Option<IntValue<'ctx>>,
    ) -> IntValue<'ctx> {
        *scratch.get_or_insert_with(|| {
            self.emitter
                .builder
                .build_load(self.emitter.i64_type, reg, "pp.r")
                .expect(POSITIONED)
                .into_int_value()
        })
    }

    /// Counts one execution of the path whose registers share `word`
    /// ([`pathprof_core::ppp::packing`]): its key `word - min` is compared
    /// with the owner table's entry `key & mask`; a residual path counts by
    /// Ball-Larus id `key >> bits`.
    pub(super) fn count_packed(&mut self, word: IntValue<'ctx>) -> Counted<'ctx> {
        let packing = self
            .counters
            .ppp
            .and_then(|t| t.packing)
            .expect("placement checked CountPacked has a packing");
        let int = |v: u64| self.emitter.i64_type.const_int(v, false);
        let b = &self.emitter.builder;
        let key = b
            .build_int_sub(word, int(packing.min as u64), "pp.key")
            .expect(POSITIONED);
        let mask = int(packing.window() - 1);
        let entry = b.build_and(key, mask, "pp.entry").expect(POSITIONED);
        let bits = int(packing.ppp_bits.into());
        self.count_ppp(true, [entry, key, bits])
    }

    /// Counts one execution of a path in a PPP function: in its PPP slot
    /// when it is interesting, else by its Ball-Larus id. `args` are
    /// `[p, key, b]` (PPP sum, what the owner table must hold, Ball-Larus
    /// id), or `packed`, `[entry, key, bits]` (see [`Site::count_packed`]).
    pub(super) fn count_ppp(&mut self, packed: bool, args: [IntValue<'ctx>; 3]) -> Counted<'ctx> {
        let ppp = self
            .counters
            .ppp
            .expect("placement checked CountPpp has PPP slots");
        let first = self.slot(ppp.base);
        // Packed, entry `e` counts PPP sum `min + e` in slot `base + min + e`.
        let first = match ppp.packing {
            Some(packing) if packed => {
                let min = self.emitter.i64_type.const_int(packing.min as u64, true);
                self.emitter.element(first, min)
            }
            _ => first,
        };
        let (residual, hash) = match self.counters.paths {
            PathCounters::Array(_) => (self.path_array(), false),
            PathCounters::Hash(state) => (self.counters_at(state), true),
            PathCounters::None => unreachable!("placement checked CountPpp has storage"),
        };
        let interval = self.emitter.i64_type.const_int(ppp.interval, false);
        let [x, y, z] = args;
        let args = [
            first.into(),
            ppp.owners.as_pointer_value().into(),
            interval.into(),
            residual.into(),
            x.into(),
            y.into(),
            z.into(),
        ];
        self.call_ppp(false, hash, packed, &args);
        Counted::Ppp(args, hash, packed)
    }

    /// Calls a PPP helper, with a line-0 location.
    pub(super) fn call_ppp(
        &mut self,
        uncount: bool,
        hash: bool,
        packed: bool,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
    ) {
        let f = self.ppp_fn(uncount, hash, packed);
        self.call_line0(f, args);
    }

    /// Counts one execution of path `id`.
    pub(super) fn count_path(&mut self, id: IntValue<'ctx>) -> Counted<'ctx> {
        match self.counters.paths {
            PathCounters::Array(g) => {
                let p = self.emitter.element(self.direct(g), id);
                self.emitter.increment(p);
                Counted::Counter(p)
            }
            PathCounters::Hash(state) => {
                let state = self.counters_at(state);
                let f = self.hash_inline_fn();
                self.call_line0(f, &[state.into(), id.into()]);
                Counted::Hash(state, id)
            }
            PathCounters::None => unreachable!("placement checked CountPath has storage"),
        }
    }

    /// Counts path `r + c` at a repeat site ([`repeats_path_ends`]): the
    /// internal `alwaysinline` helper `__pathprof_count_repeat(array, last,
    /// r, c, zero)` increments `array[*last + c]` when `r == *last`
    /// (volatile, so that LLVM keeps it apart from the other increment),
    /// else `array[r + c]`, and sets `*last = r`. `last` holds the path
    /// register's value at the last end counted in a loop, not the id, so
    /// that the compare needs no add and `c` stays in both increments'
    /// displacement (whichever end set `last`, `r == *last` makes `*last +
    /// c` this end's id). `last` is the function's alloca, an SSA value
    /// once the helper is inlined.
    pub(super) fn count_repeat(&mut self, Repeat { last, zero }: Repeat<'ctx>, c: i64) {
        let array = match self.counters.paths {
            PathCounters::Array(g) => self.direct(g),
            _ => self.path_array(),
        };
        let r = self.path_plus(self.path_register(), 0);
        let c = self.constant(c);
        let f = self.repeat_fn();
        self.call_line0(
            f,
            &[array.into(), last.into(), r.into(), c.into(), zero.into()],
        );
    }

    /// Increments `slots[k]`.
    pub(super) fn count_slot(&mut self, k: u32) -> Counted<'ctx> {
        let p = self.slot_in(k, |g| self.direct(g));
        self.emitter.increment_slot(p);
        Counted::Counter(p)
    }

    /// `which(state, id)`, with a line-0 location.
    pub(super) fn call_hash(
        &mut self,
        which: HashFn,
        state: PointerValue<'ctx>,
        id: IntValue<'ctx>,
    ) {
        let f = self.hash_fn(which);
        self.call_line0(f, &[state.into(), id.into()]);
    }

    /// `f(args)` at the builder's position, with a line-0 location.
    pub(super) fn call_line0(
        &self,
        f: FunctionValue<'ctx>,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
    ) {
        let call = self
            .emitter
            .builder
            .build_call(f, args, "")
            .expect(POSITIONED);
        ffi::set_line0_location(call.as_value_ref(), self.function);
    }

    pub(super) fn constant(&self, c: i64) -> IntValue<'ctx> {
        self.emitter.i64_type.const_int(c as u64, false)
    }

    /// `v + c` (just `v` for `c == 0`).
    pub(super) fn plus(&self, v: IntValue<'ctx>, c: i64) -> IntValue<'ctx> {
        if c == 0 {
            v
        } else {
            self.emitter
                .builder
                .build_int_add(v, self.constant(c), "pp.r.add")
                .expect(POSITIONED)
        }
    }

    /// `load r + c` (just `load r` for `c == 0`).
    pub(super) fn path_plus(&self, r: PointerValue<'ctx>, c: i64) -> IntValue<'ctx> {
        let v = self
            .emitter
            .builder
            .build_load(self.emitter.i64_type, r, "pp.r")
            .expect(POSITIONED)
            .into_int_value();
        self.plus(v, c)
    }
}
