//! The machine code probes become (the overhead levers that change the code
//! around probes): `pathprof cc -O2 -c` of a function with many counted
//! branches, disassembled with llvm-objdump. That the counts these probes
//! make stay exact is what [`crate::e2e`] checks, by hand, in every mode
//! and at every level.

use crate::support::build::llvm_tool;
use crate::support::command::{ok, pathprof};

/// Six independent branches, calls on most of them (a register that held
/// a counter address across them would have to be one the callee saves).
const SOURCE: &str = "int g(int);\n\
    int classify(int x) {\n\
    int s = 0;\n\
    if (x & 1) s += g(x); else s -= 1;\n\
    if (x & 2) s ^= g(s); else s += 7;\n\
    if (x & 4) s *= 3; else s -= g(2);\n\
    if (x & 8) s += g(x + s); else s ^= x;\n\
    if (x & 16) s -= x; else s += g(11);\n\
    if (x & 32) s *= g(s); else s -= 13;\n\
    return s;\n\
}\n";

/// `classify`'s instructions in an object of `mode`, position-independent
/// as `pic` says (`-fPIE`: for an executable; `-fPIC`: maybe for a shared
/// library).
fn classify_code(mode: &str, pic: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("classify.c"), SOURCE).unwrap();
    let mode = format!("--mode={mode}");
    let args = [
        "cc",
        &mode,
        "-O2",
        pic,
        "-c",
        "classify.c",
        "-o",
        "classify.o",
    ];
    ok(pathprof(dir.path(), &args));
    let out = std::process::Command::new(llvm_tool("llvm-objdump"))
        .current_dir(dir.path())
        .args([
            "-d",
            "-r",
            "--no-show-raw-insn",
            "--disassemble-symbols=classify",
        ])
        .arg("classify.o")
        .output()
        .expect("run llvm-objdump");
    let text = ok(out);
    text.lines()
        .skip_while(|l| !l.contains("<classify>:"))
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// How many of `code`'s lines `is` holds for.
fn lines(code: &[String], is: impl Fn(&str) -> bool) -> usize {
    code.iter().filter(|l| is(l)).count()
}

/// The fewest increments `classify` has in `mode`: path mode counts once,
/// at the path's end; the others on each of four chords at least.
fn least_increments(mode: &str) -> usize {
    if mode == "path" {
        1
    } else {
        4
    }
}

/// In code that may go into a shared library, a function's counters are
/// reached from one base, the global's address plus the thread's delta,
/// computed once on entry: each probe is one instruction (`incq k(%reg)`,
/// the base kept in a register or reloaded), not a `lea counters(%rip)` and
/// an indexed increment, which code generation would otherwise
/// rematerialise after calls (block mode, before the base: 7 addresses of
/// the counters in this function).
#[cfg(target_arch = "x86_64")]
#[test]
fn a_probe_is_one_instruction_on_a_base_computed_once() {
    for mode in ["block", "edge", "path"] {
        let pic = "-fPIC";
        let code = classify_code(mode, pic);
        let listing = code.join("\n");
        // The relocations of the counters' addresses (`.bss`, or the
        // globals by name if code generation kept them apart).
        let counter_addresses = lines(&code, |l| {
            l.contains("R_X86_64_PC32") && (l.contains(".bss") || l.contains("__pathprof_"))
        });
        assert_eq!(
            counter_addresses, 1,
            "{mode} mode, {pic}: one address of the counters, on entry:\n{listing}"
        );
        let increments = lines(&code, |l| l.contains("incq") || l.contains("addq\t$0x1,"));
        assert!(
            increments >= least_increments(mode),
            "{mode} mode, {pic}: counted branches:\n{listing}"
        );
    }
}

/// In an executable's code (`-fPIE`, x86-64) every probe is one increment
/// through `%gs` (`incq %gs:counter(%rip)`: the runtime makes each thread's
/// GS base its copy's distance from the counters), with no thread-local
/// load, no delta and no register: no counter is thread-local data, and a
/// thread costs nothing until it counts.
#[cfg(target_arch = "x86_64")]
#[test]
fn an_executables_probe_is_one_increment_through_gs() {
    for mode in ["block", "edge", "path"] {
        let code = classify_code(mode, "-fPIE");
        let listing = code.join("\n");
        let through_gs = lines(&code, |l| {
            l.contains("incq\t%gs:") || l.contains("addq\t$0x1, %gs:")
        });
        assert!(
            through_gs >= least_increments(mode),
            "{mode} mode: counted branches, each one increment through %gs:\n{listing}"
        );
        let increments = lines(&code, |l| l.contains("incq") || l.contains("addq\t$0x1,"));
        assert_eq!(
            increments, through_gs,
            "{mode} mode: every increment:\n{listing}"
        );
        let thread_local = lines(&code, |l| l.contains("TPOFF") || l.contains("TLS"));
        assert_eq!(
            thread_local, 0,
            "{mode} mode: no thread-local load:\n{listing}"
        );
        let delta = lines(&code, |l| l.contains("__pathprof_thread_delta"));
        assert_eq!(delta, 0, "{mode} mode: no delta:\n{listing}");
    }
}
