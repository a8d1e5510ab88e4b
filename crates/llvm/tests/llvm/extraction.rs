//! Extraction of known shapes from clang-22 bitcode. Expected graphs are drawn as
//! `(from, to, slot, splittable)` lists; block numbers follow the IR's block order.

use crate::harness::{bitcode, line_of, Variant};
use pathprof_llvm::{extract, load_bitcode, Context, Extracted, ExtractedFunction};

fn function<'a>(extracted: &'a Extracted, name: &str) -> &'a ExtractedFunction {
    extracted
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

fn edges(f: &ExtractedFunction) -> Vec<(u32, u32, u32, bool)> {
    f.cfg
        .edges()
        .iter()
        .map(|e| (e.from.0, e.to.0, e.slot, e.splittable))
        .collect()
}

fn extract_file(source: &str, variant: Variant) -> Extracted {
    let dir = tempfile::tempdir().unwrap();
    let bc = bitcode(dir.path(), source, variant);
    let context = Context::create();
    let module = load_bitcode(&context, &bc).unwrap();
    extract(&module).unwrap()
}

#[test]
fn unoptimised_if_else_loop_and_unreachable_block() {
    let ex = extract_file("prog.c", Variant::Unoptimised);
    let names: Vec<&str> = ex.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "branch",
            "loop",
            "step",
            "multi",
            "pick",
            "crit",
            "jump",
            "bits",
            "tail_target",
            "tail",
            "asm_jump",
            "hello",
            "main"
        ],
        "defined functions in module order, no declarations"
    );

    //   b0
    //  /  \
    // b1  b2
    //  \  /
    //   b3
    let branch = function(&ex, "branch");
    assert_eq!(
        edges(branch),
        [
            (0, 1, 0, true),
            (0, 2, 1, true),
            (1, 3, 0, true),
            (2, 3, 0, true)
        ]
    );
    assert_eq!(branch.cfg.num_blocks(), 4);

    // b0 -> b1 (for.cond) -> b3 (body) -> b4 (inc) -> b1; b1 -> b2 (end) -> b5 (ret)
    let lp = function(&ex, "loop");
    assert_eq!(
        edges(lp),
        [
            (0, 1, 0, true),
            (1, 3, 0, true),
            (1, 2, 1, true),
            (2, 5, 0, true),
            (3, 4, 0, true),
            (4, 1, 0, true)
        ]
    );

    // clang leaves a block after the musttail return that nothing reaches.
    let tail = function(&ex, "tail");
    assert_eq!(
        edges(tail),
        [
            (0, 1, 0, true),
            (0, 2, 1, true),
            (1, 4, 0, true),
            (3, 4, 0, true)
        ]
    );
    assert!(!tail.cfg.is_reachable(pathprof_core::BlockId(3)));

    // Source positions.
    let file = branch.file.expect("branch has a file") as usize;
    assert!(
        ex.files[file].starts_with('/'),
        "absolute: {}",
        ex.files[file]
    );
    assert!(
        ex.files[file].ends_with("tests/llvm/prog.c"),
        "{}",
        ex.files[file]
    );
    let def = line_of("prog.c", "int branch(int x)");
    assert_eq!(branch.line, Some(def));
    assert_eq!(branch.display_name, None, "C names are not mangled");
    assert_eq!(branch.blocks.len(), 4);
    // b0: alloca, alloca, store, lifetime.start, load, icmp, br
    assert_eq!(branch.blocks[0].instructions, 7);
    assert_eq!(
        branch.blocks[0].line,
        Some(def + 1),
        "`int r;` starts the lifetime"
    );
    let then_line = line_of("prog.c", "r = x * 2;");
    assert_eq!(branch.blocks[1].line, Some(then_line));
    assert_eq!(branch.blocks[1].instructions, 4, "load, mul, store, br");
    let span = branch.blocks[1].lines[0];
    assert_eq!((span.file as usize, span.line), (file, then_line));
    assert!(span.instructions >= 3, "{span:?}");
    assert_eq!(branch.blocks[2].line, Some(line_of("prog.c", "r = x - 1;")));
    for f in &ex.functions {
        for (b, info) in f.blocks.iter().enumerate() {
            let attributed: u32 = info.lines.iter().map(|s| s.instructions).sum();
            assert!(attributed <= info.instructions, "{} b{b}", f.name);
            assert!(info
                .lines
                .iter()
                .all(|s| s.line != 0 && (s.file as usize) < ex.files.len()));
        }
    }
}

#[test]
fn optimised_multi_edges_self_loops_and_unsplittable_edges() {
    let ex = extract_file("prog.c", Variant::Optimised);

    // switch: default -> b4, cases 1 and 2 -> b1 (a multi-edge), 3 -> b2, 5 -> b3.
    let multi = function(&ex, "multi");
    assert_eq!(
        edges(multi),
        [
            (0, 4, 0, true),
            (0, 1, 1, true),
            (0, 1, 2, true),
            (0, 2, 3, true),
            (0, 3, 4, true),
            (1, 4, 0, true),
            (2, 4, 0, true),
            (3, 4, 0, true)
        ]
    );
    assert_eq!(multi.cfg.preds(pathprof_core::BlockId(1)).len(), 2);

    // Cases 1 and 2 go straight to the join's phi.
    let pick = function(&ex, "pick");
    assert_eq!(
        edges(pick),
        [
            (0, 2, 0, true),
            (0, 3, 1, true),
            (0, 3, 2, true),
            (0, 1, 3, true),
            (1, 3, 0, true),
            (2, 3, 0, true)
        ]
    );

    // indirectbr [b2, b1]: neither edge can be split.
    let jump = function(&ex, "jump");
    assert_eq!(
        edges(jump),
        [(0, 2, 0, false), (0, 1, 1, false), (1, 2, 0, true)]
    );

    // callbr: default b2, indirect b1.
    let asm = function(&ex, "asm_jump");
    assert_eq!(
        edges(asm),
        [(0, 2, 0, false), (0, 1, 1, false), (1, 2, 0, true)]
    );

    // A single-block loop: b1 -> b1.
    let bits = function(&ex, "bits");
    assert_eq!(
        edges(bits),
        [
            (0, 2, 0, true),
            (0, 1, 1, true),
            (1, 2, 0, true),
            (1, 1, 1, true)
        ]
    );

    // One block: icmp, shl, add, select, ret (debug records do not count).
    let branch = function(&ex, "branch");
    assert_eq!(branch.cfg.num_blocks(), 1);
    assert_eq!(branch.blocks[0].instructions, 5);
    assert_eq!(
        branch.blocks[0].line,
        Some(line_of("prog.c", "if (x > 10)"))
    );
    let attributed: u32 = branch.blocks[0].lines.iter().map(|s| s.instructions).sum();
    assert_eq!(attributed, 5);
}

#[test]
fn cxx_names_and_exception_edges() {
    let ex = extract_file("eh.cc", Variant::Optimised);
    let guarded = function(&ex, "_ZN2ns7guardedEi");
    assert_eq!(guarded.display_name.as_deref(), Some("ns::guarded(int)"));
    assert_eq!(guarded.line, Some(line_of("eh.cc", "int guarded(int x)")));
    // b0, b1: invokes (normal, unwind to the landing pad b3); b3 -> b4 (catch) or
    // b6 (resume); b2 and b4 -> b5 (return).
    assert_eq!(
        edges(guarded),
        [
            (0, 1, 0, true),
            (0, 3, 1, false),
            (1, 2, 0, true),
            (1, 3, 1, false),
            (2, 5, 0, true),
            (3, 4, 0, true),
            (3, 6, 1, true),
            (4, 5, 0, true)
        ]
    );
    let main = function(&ex, "main");
    assert_eq!(main.display_name, None);
}

#[test]
fn linked_modules_keep_module_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = bitcode(dir.path(), "two_a.c", Variant::Optimised);
    let b = bitcode(dir.path(), "two_b.c", Variant::Optimised);
    let context = Context::create();
    let module = pathprof_llvm::link_bitcode_files(&context, &[a, b.clone()]).unwrap();
    let ex = extract(&module).unwrap();
    let names: Vec<&str> = ex.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["main", "helper"]);
    let files: Vec<&str> = ex
        .functions
        .iter()
        .map(|f| ex.files[f.file.unwrap() as usize].as_str())
        .collect();
    assert!(
        files[0].ends_with("two_a.c") && files[1].ends_with("two_b.c"),
        "{files:?}"
    );

    // An archive member handed over as bytes.
    let bytes = std::fs::read(&b).unwrap();
    let member = pathprof_llvm::parse_bitcode(&context, &bytes, "libtwo.a(two_b.o)").unwrap();
    let ex = extract(&member).unwrap();
    assert_eq!(ex.functions.len(), 1);
    assert_eq!(ex.functions[0].name, "helper");
}

fn calls(f: &ExtractedFunction) -> Vec<u32> {
    f.cfg.blocks().map(|b| f.cfg.calls(b)).collect()
}

/// `(from, to)` of the resume edges (after calls that return more than once).
fn resume_edges(f: &ExtractedFunction) -> Vec<(u32, u32)> {
    f.cfg
        .edges()
        .iter()
        .filter(|e| e.resume)
        .map(|e| (e.from.0, e.to.0))
        .collect()
}

#[test]
fn counted_calls_of_c_code() {
    for variant in Variant::ALL {
        let ex = extract_file("calls.c", variant);
        // b0: printf, f(), printf (not llvm.memcpy, llvm.lifetime.*, strlen,
        // twice, the asm); b1 longjmp and b3 exit are right before `unreachable`,
        // where their block's end code runs, so they are not counted calls.
        let mixed = function(&ex, "mixed");
        assert_eq!(calls(mixed), [3, 0, 0, 0, 0], "{variant:?}");
        let line = |b: usize| {
            mixed.blocks[b]
                .lines
                .iter()
                .map(|s| s.line)
                .collect::<Vec<_>>()
        };
        assert!(line(1).contains(&line_of("calls.c", "longjmp(env, 1);")));
        assert!(line(3).contains(&line_of("calls.c", "exit(x);")));
        // setjmp (returns_twice) ends b0 and is not a counted call: the rest
        // of that block is b1, after the resume edge b0 -> b1; puts and mixed
        // count in the blocks after it.
        let main = function(&ex, "main");
        assert_eq!(calls(main), [0, 0, 1, 1, 0], "{variant:?}");
        assert_eq!(resume_edges(main), [(0, 1)], "{variant:?}");
        assert_eq!(calls(function(&ex, "twice")), [0], "{variant:?}");
    }
    // Functions without calls record none (and serialise as before).
    let ex = extract_file("prog.c", Variant::Optimised);
    assert_eq!(calls(function(&ex, "branch")), [0]);
}

/// Every clause of the counted-call predicate (docs/formats.md §1), on hand-written IR.
#[test]
fn counted_call_predicate() {
    let ir = r#"
declare void @exit(i32) noreturn nounwind
declare void @will() willreturn nounwind
declare void @__pathprof_dump()
declare i32 @setjmp(ptr) returns_twice
declare i32 @plain(ptr)
declare void @llvm.donothing()
declare i32 @__gxx_personality_v0(...)

define void @target(i32 %x) {
entry:
  br label %spin
spin:
  %done = icmp eq i32 %x, 0
  br i1 %done, label %out, label %spin
out:
  ret void
}

define void @tail(i32 %x) {
  call void @target(i32 0)
  musttail call void @target(i32 %x)
  ret void
}

define void @f(ptr %fp, ptr %buf) personality ptr @__gxx_personality_v0 {
entry:
  call void @will()
  call void @__pathprof_dump()
  call void asm sideeffect "", ""()
  %a = call i32 @setjmp(ptr %buf)
  %b = call i32 @plain(ptr %buf) #0
  call void @llvm.donothing()
  call void %fp()
  %c = call i32 @plain(ptr %buf)
  invoke void @target(i32 2) to label %next unwind label %pad
next:
  call void @exit(i32 0)
  unreachable
pad:
  %lp = landingpad { ptr, i32 } cleanup
  call void @target(i32 3)
  call void @target(i32 4)
  resume { ptr, i32 } %lp
}

attributes #0 = { returns_twice }
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.ll");
    std::fs::write(&path, ir).unwrap();
    let context = Context::create();
    let module = load_bitcode(&context, &path).unwrap();
    let ex = extract(&module).unwrap();
    // A loop that may not end keeps `target` from being marked willreturn.
    assert_eq!(calls(function(&ex, "target")), [0, 0, 0]);
    // The call before a musttail call counts, the musttail call does not.
    assert_eq!(calls(function(&ex, "tail")), [1]);
    // entry ends with the setjmp (returns_twice on the callee), the block
    // after it with the call returns_twice on the call site: neither counts,
    // and each is followed by a resume edge. The block after them holds the
    // indirect call and the plain call (not willreturn, pathprof, asm,
    // intrinsic), then the invoke that terminates it (its unwind destination
    // is a landing pad); next: none (`exit` right before `unreachable` is its
    // block's end); pad: two.
    let f = function(&ex, "f");
    assert_eq!(calls(f), [0, 0, 3, 0, 2]);
    assert_eq!(resume_edges(f), [(0, 1), (1, 2)]);
    let ends_in_call: Vec<bool> = f.cfg.blocks().map(|b| f.cfg.ends_in_call(b)).collect();
    assert_eq!(ends_in_call, [false, false, true, false, false]);
}

/// Functions that always return are marked `willreturn` before extraction,
/// so calls to them are not counted calls; anything that may keep a function
/// from returning leaves it unmarked (the `returns` module).
#[test]
fn functions_that_always_return_are_marked_willreturn() {
    let ir = r#"
declare void @exit(i32) noreturn nounwind
declare i32 @elsewhere()
declare i64 @llvm.ctpop.i64(i64)

define internal i64 @leaf(i64 %x) {
  %c = call i64 @llvm.ctpop.i64(i64 %x)
  ret i64 %c
}

define i64 @calls_leaf(i64 %x, i1 %b) {
entry:
  br i1 %b, label %one, label %two
one:
  %a = call i64 @leaf(i64 %x)
  ret i64 %a
two:
  ret i64 0
}

define i64 @loops(i64 %x) {
entry:
  br label %head
head:
  %i = phi i64 [ %x, %entry ], [ %j, %head ]
  %j = sub i64 %i, 1
  %more = icmp ne i64 %j, 0
  br i1 %more, label %head, label %out
out:
  ret i64 %j
}

define i64 @calls_loops(i64 %x) {
  %a = call i64 @loops(i64 %x)
  ret i64 %a
}

define i64 @progresses(i64 %x) {
entry:
  br label %head
head:
  %i = phi i64 [ %x, %entry ], [ %j, %head ]
  %j = sub i64 %i, 1
  %more = icmp ne i64 %j, 0
  br i1 %more, label %head, label %out, !llvm.loop !0
out:
  ret i64 %j
}

define i64 @waits(ptr %flag) {
entry:
  br label %head
head:
  %v = load volatile i64, ptr %flag
  %more = icmp eq i64 %v, 0
  br i1 %more, label %head, label %out, !llvm.loop !0
out:
  ret i64 %v
}

define void @dies() {
  call void @exit(i32 1)
  unreachable
}

define i32 @calls_elsewhere() {
  %a = call i32 @elsewhere()
  ret i32 %a
}

define i64 @indirect(ptr %f) {
  %a = call i64 %f()
  ret i64 %a
}

define weak i64 @replaceable(i64 %x) {
  ret i64 %x
}

define i64 @main() {
  %p = call i64 @progresses(i64 4)
  %a = call i64 @calls_leaf(i64 1, i1 true)
  %b = call i64 @calls_loops(i64 2)
  %c = call i64 @replaceable(i64 3)
  %d = call i64 @indirect(ptr @leaf)
  %s = add i64 %a, %b
  ret i64 %s
}

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.mustprogress"}
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("returns.ll");
    std::fs::write(&path, ir).unwrap();
    let context = Context::create();
    let module = load_bitcode(&context, &path).unwrap();
    let ex = extract(&module).unwrap();
    let willreturn = |name: &str| {
        let kind =
            pathprof_llvm::inkwell::attributes::Attribute::get_named_enum_kind_id("willreturn");
        module
            .get_function(name)
            .unwrap()
            .get_enum_attribute(
                pathprof_llvm::inkwell::attributes::AttributeLoc::Function,
                kind,
            )
            .is_some()
    };
    for name in ["leaf", "calls_leaf"] {
        assert!(willreturn(name), "{name} always returns");
    }
    for name in [
        "loops",
        "calls_loops",
        "dies",
        "calls_elsewhere",
        "indirect",
        "replaceable",
        "main",
    ] {
        assert!(!willreturn(name), "{name} may not return");
    }
    // main's calls to calls_leaf do not count; those that may not return do.
    assert_eq!(calls(function(&ex, "main")), [3]);
}
