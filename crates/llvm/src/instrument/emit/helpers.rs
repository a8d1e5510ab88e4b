//! The module's helper functions the probes call, each defined once per
//! module on first use, internal and `alwaysinline` (after inlining a count
//! is inline code): the inline cache's hash count, the repeat site's path
//! count, the PPP counts and undos; and the runtime's hash-table entry
//! points they fall back to, declared `nounwind`.

use super::*;

impl<'ctx> Site<'_, 'ctx> {
    /// `void __pathprof_ppp_{count,uncount}_{array,hash}(ptr ppp, ptr owners,
    /// i64 interval, ptr residual, i64 p, i64 key, i64 b)`, or with `packed`
    /// `..._packed(..., i64 entry, i64 key, i64 bits)` (`ppp` the counter of
    /// entry 0; no range check, the owner table covers every entry):
    /// internal, `alwaysinline`, `nounwind`; defined on first use with a
    /// builder of its own.
    pub(super) fn ppp_fn(
        &mut self,
        uncount: bool,
        hash: bool,
        packed: bool,
    ) -> FunctionValue<'ctx> {
        let index = 4 * usize::from(packed) + 2 * usize::from(uncount) + usize::from(hash);
        if let Some(f) = self.emitter.ppp_fns[index] {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        let i64_type = self.emitter.i64_type;
        let ty = context.void_type().fn_type(
            &[
                ptr.into(),
                ptr.into(),
                i64_type.into(),
                ptr.into(),
                i64_type.into(),
                i64_type.into(),
                i64_type.into(),
            ],
            false,
        );
        let name = format!(
            "__pathprof_ppp_{}_{}{}",
            if uncount { "uncount" } else { "count" },
            if hash { "hash" } else { "array" },
            if packed { "_packed" } else { "" }
        );
        let f = self.inline_helper(&name, ty);
        let hash_fn = match (uncount, hash) {
            (_, false) => None,
            (true, true) => Some(self.hash_fn(HashFn::Uncount)),
            (false, true) => Some(self.hash_inline_fn()),
        };
        // Build with a fresh builder: the emitter's stays where it was.
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("seven parameters");
        let (ppp, owners, interval) = (
            param(0).into_pointer_value(),
            param(1).into_pointer_value(),
            param(2).into_int_value(),
        );
        let residual = param(3).into_pointer_value();
        let [x, y, z] = [4, 5, 6].map(|i| param(i).into_int_value());
        let entry = context.append_basic_block(f, "entry");
        let check = context.append_basic_block(f, "check");
        let hit = context.append_basic_block(f, "interesting");
        let miss = context.append_basic_block(f, "residual");
        let e = &*self.emitter;
        // `if lhs <pred> rhs goto yes else goto no`
        let branch_if = |pred, lhs: IntValue<'ctx>, rhs, yes, no| {
            let cond = e.builder.build_int_compare(pred, lhs, rhs, "pp.ppp.test");
            e.builder
                .build_conditional_branch(cond.expect(POSITIONED), yes, no)
                .expect(POSITIONED);
        };
        e.builder.position_at_end(entry);
        // (p, key, b), or packed (entry, key, bits): the owner table covers
        // every entry, and the Ball-Larus id is decoded only where a
        // residual path needs it.
        let (p, key) = (x, y);
        if packed {
            e.builder
                .build_unconditional_branch(check)
                .expect(POSITIONED);
        } else {
            branch_if(IntPredicate::ULT, p, interval, check, miss);
        }
        e.builder.position_at_end(check);
        let owner = e
            .builder
            .build_load(i64_type, e.element(owners, p), "owner");
        let owner = owner.expect(POSITIONED).into_int_value();
        branch_if(IntPredicate::EQ, owner, key, hit, miss);
        let bump = |counter: PointerValue<'ctx>| {
            if uncount {
                e.decrement(counter)
            } else {
                e.increment(counter)
            }
        };
        e.builder.position_at_end(hit);
        bump(e.element(ppp, p));
        e.builder.build_return(None).expect(POSITIONED);
        e.builder.position_at_end(miss);
        let b = if packed {
            let id = e.builder.build_right_shift(key, z, false, "pp.bl");
            id.expect(POSITIONED)
        } else {
            z
        };
        match hash_fn {
            Some(h) => {
                e.builder
                    .build_call(h, &[residual.into(), b.into()], "")
                    .expect(POSITIONED);
            }
            None => bump(e.element(residual, b)),
        }
        e.builder.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.ppp_fns[index] = Some(f);
        f
    }

    /// An internal `alwaysinline`, `nounwind` function `name` of type `ty`,
    /// without a body.
    pub(super) fn inline_helper(
        &self,
        name: &str,
        ty: inkwell::types::FunctionType<'ctx>,
    ) -> FunctionValue<'ctx> {
        let context = self.module.get_context();
        let f = self
            .module
            .add_function(name, ty, Some(inkwell::module::Linkage::Internal));
        for name in ["nounwind", "alwaysinline"] {
            f.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
        }
        f
    }

    /// `void __pathprof_hash_count_inline(ptr state, i64 id)`: counts path
    /// `id` of a hash-table function through its inline cache (docs/formats.md
    /// §2), defined on first use with a builder of its own:
    ///
    /// ```text
    /// base = &state[8]                           // stays 0
    /// slot = &state[9 + ((u32)(id + 1) * FIBONACCI_MULTIPLIER_32 >> (32 - log2 HASH_CACHE_SLOTS))]
    /// e = base + *slot                           // an empty slot: base itself
    /// if (e[0] == id + 1) e[1]++                 // the entry's key and count
    /// else __pathprof_hash_count_cached(state, slot, id)  // cold; fills *slot
    /// ```
    pub(super) fn hash_inline_fn(&mut self) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.hash_inline {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        let i64_type = self.emitter.i64_type;
        let ty = context
            .void_type()
            .fn_type(&[ptr.into(), i64_type.into()], false);
        let f = self.inline_helper("__pathprof_hash_count_inline", ty);
        let miss_fn = self.hash_fn(if self.emitter.atomic {
            HashFn::CountCachedAtomic
        } else {
            HashFn::CountCached
        });
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("two parameters");
        let (state, id) = (param(0).into_pointer_value(), param(1).into_int_value());
        let entry = context.append_basic_block(f, "entry");
        let hit = context.append_basic_block(f, "hit");
        let miss = context.append_basic_block(f, "miss");
        let e = &*self.emitter;
        let b = &e.builder;
        let constant = |c: u64| i64_type.const_int(c, false);
        b.position_at_end(entry);
        let key = b
            .build_int_add(id, constant(1), "pp.key")
            .expect(POSITIONED);
        let i32_type = context.i32_type();
        let low = b
            .build_int_truncate(key, i32_type, "pp.low")
            .expect(POSITIONED);
        let hashed = b
            .build_int_mul(
                low,
                i32_type.const_int(FIBONACCI_MULTIPLIER_32.into(), false),
                "pp.hash",
            )
            .expect(POSITIONED);
        let shift = 32 - u64::from(HASH_CACHE_SLOTS.trailing_zeros());
        let index = b
            .build_right_shift(hashed, i32_type.const_int(shift, false), false, "pp.index")
            .expect(POSITIONED);
        let index = b
            .build_int_z_extend(index, i64_type, "pp.index")
            .expect(POSITIONED);
        let base_word = HASH_STATE_WORDS as u64;
        let word = b
            .build_int_add(index, constant(base_word + 1), "pp.word")
            .expect(POSITIONED);
        let slot = e.element(state, word);
        let offset = b.build_load(i64_type, slot, "pp.offset").expect(POSITIONED);
        // The entry is at `base + offset`, `base` being `&state[8]`: its key
        // at `state + offset + 64`, its count 8 bytes on. Both addresses are
        // built from `state + offset` with a constant on top, so that the
        // code addresses them from the state's register (`0x40(%s,%o)`,
        // `0x48(%s,%o)`) rather than keeping `&state[8]` in a register of
        // its own (which a large function such as SQLite's VDBE spills and
        // reloads from the stack at every end).
        // Safety: the slot holds 0 or an entry's address less the base's
        // (docs/formats.md §2); not `inbounds`, the entry is in another object.
        let moved = unsafe {
            b.build_gep(
                context.i8_type(),
                state,
                &[offset.into_int_value()],
                "pp.moved",
            )
        }
        .expect(POSITIONED);
        // Safety: as `moved`'s.
        let at = |bytes: u64, name: &str| unsafe {
            b.build_gep(context.i8_type(), moved, &[constant(bytes)], name)
                .expect(POSITIONED)
        };
        let cached = at(8 * base_word, "pp.entry");
        let owner = b
            .build_load(i64_type, cached, "pp.owner")
            .expect(POSITIONED);
        let mine = b
            .build_int_compare(IntPredicate::EQ, owner.into_int_value(), key, "pp.mine")
            .expect(POSITIONED);
        b.build_conditional_branch(mine, hit, miss)
            .expect(POSITIONED);
        b.position_at_end(hit);
        e.increment(at(8 * base_word + 8, "pp.count"));
        b.build_return(None).expect(POSITIONED);
        b.position_at_end(miss);
        b.build_call(miss_fn, &[state.into(), slot.into(), id.into()], "")
            .expect(POSITIONED);
        b.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.hash_inline = Some(f);
        f
    }

    /// `__pathprof_count_repeat`, defined on first use (see
    /// [`Self::count_repeat`]).
    pub(super) fn repeat_fn(&mut self) -> FunctionValue<'ctx> {
        let gs = usize::from(self.through_gs);
        if let Some(f) = self.emitter.repeat_fns[gs] {
            return f;
        }
        let context = self.module.get_context();
        let ptr = context.ptr_type(AddressSpace::default());
        // The array through `%gs` (see `Site::direct`) or as an address.
        let array_type = context.ptr_type(AddressSpace::from(if gs == 1 { 256u16 } else { 0 }));
        let i64_type = self.emitter.i64_type;
        let i64s = i64_type.into();
        let ty = context
            .void_type()
            .fn_type(&[array_type.into(), ptr.into(), i64s, i64s, i64s], false);
        let name = ["__pathprof_count_repeat", "__pathprof_count_repeat_gs"][gs];
        let f = self.inline_helper(name, ty);
        let saved = std::mem::replace(&mut self.emitter.builder, context.create_builder());
        let param = |i: u32| f.get_nth_param(i).expect("five parameters");
        let (array, last, r, c, zero) = (
            param(0).into_pointer_value(),
            param(1).into_pointer_value(),
            param(2).into_int_value(),
            param(3).into_int_value(),
            param(4).into_int_value(),
        );
        let entry = context.append_basic_block(f, "entry");
        let repeat = context.append_basic_block(f, "repeat");
        let change = context.append_basic_block(f, "change");
        let e = &*self.emitter;
        let b = &e.builder;
        b.position_at_end(entry);
        let previous = b
            .build_load(i64_type, last, "pp.last")
            .expect(POSITIONED)
            .into_int_value();
        let same = b
            .build_int_compare(IntPredicate::EQ, r, previous, "pp.same")
            .expect(POSITIONED);
        b.build_conditional_branch(same, repeat, change)
            .expect(POSITIONED);
        // The repeat, at `array + zero` (bytes) indexed by `last + c`: an
        // address with a register even where `last` is a constant (which
        // LLVM substitutes here from the compare), so that the CPU forwards
        // the count; one instruction either way, `c` in its displacement
        // (`last` through an empty `asm` instead would cost a register copy
        // every round).
        b.position_at_end(repeat);
        // Safety: `zero` is 0 (an opaque one), so this is `array` itself.
        let shifted = unsafe { b.build_gep(context.i8_type(), array, &[zero], "pp.repeat.base") }
            .expect(POSITIONED);
        let index = b
            .build_int_add(previous, c, "pp.repeat.id")
            .expect(POSITIONED);
        e.add_one(e.element(shifted, index), true);
        b.build_return(None).expect(POSITIONED);
        b.position_at_end(change);
        b.build_store(last, r).expect(POSITIONED);
        let id = b.build_int_add(r, c, "pp.id").expect(POSITIONED);
        e.add_one(e.element(array, id), false);
        b.build_return(None).expect(POSITIONED);
        self.emitter.builder = saved;
        self.emitter.repeat_fns[gs] = Some(f);
        f
    }

    /// The runtime's hash function `which`, declared `nounwind` (and `cold`
    /// for an inline cache's miss).
    pub(super) fn hash_fn(&mut self, which: HashFn) -> FunctionValue<'ctx> {
        if let Some(f) = self.emitter.hash_fns[which as usize] {
            return f;
        }
        let name = which.name();
        let context = self.module.get_context();
        let f = self.module.get_function(name).unwrap_or_else(|| {
            let ptr = context.ptr_type(AddressSpace::default());
            let i64_type = context.i64_type();
            let params: &[inkwell::types::BasicMetadataTypeEnum<'ctx>] = if which.cached() {
                &[ptr.into(), ptr.into(), i64_type.into()]
            } else {
                &[ptr.into(), i64_type.into()]
            };
            let f =
                self.module
                    .add_function(name, context.void_type().fn_type(params, false), None);
            let attrs: &[&str] = if which.cached() {
                &["nounwind", "cold"]
            } else {
                &["nounwind"]
            };
            for name in attrs {
                f.add_attribute(AttributeLoc::Function, enum_attribute(&context, name));
            }
            f
        });
        self.emitter.hash_fns[which as usize] = Some(f);
        f
    }
}
