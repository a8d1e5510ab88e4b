#!/usr/bin/env python3
"""Overhead of pathprof against the uninstrumented program, clang's
-fprofile-instr-generate and gcc's --coverage, on third-party programs: Lua 5.4,
bzip2 1.0.8, zlib (crates/cli/tests/thirdparty/zlib/driver.c), SQLite and xz (crates/cli/tests/thirdparty/xz/driver.c),
from registry crates' bundled sources, and SQLite run by 4 threads at once
(`sqlite-threads`, crates/cli/tests/thirdparty/sqlite/threads.c).

Each variant is built once (its build's wall time recorded) and run once with
its output compared to the plain build's (a difference stops the script);
then all variants run round-robin RUNS times on the same workload, and the
median CPU time (user + system of the child) of each is reported with its
ratio to the plain build (gcc's --coverage also against plain gcc -O2,
`gcc-plain`). Beside it, each variant's code size (the executable's `.text`
section in bytes, read from its ELF section headers: the profiler's
statically linked runtime is in it) and its peak memory (the median over the
rounds of the run's peak resident set, `ru_maxrss` in KiB), each with its
ratio to the plain build. CPU time and peak RSS come from one wait4 of each
measured run, by bench/rusage.c (built at the start into the temporary
directory) between the script and the program: a program Python started
itself would report at least Python's own peak (Linux keeps the peak of
the address space exec replaces). The results end with one table
of every program's CPU-time ratios and their geometric mean, the build
times, the same tables of `.text` and peak RSS ratios, the overhead goals
judged from each round's CPU-time ratios (bench/goals.py: median margin,
interquartile range, verdict), and the machine (bench/machine.py: CPU,
caches, steal during the run, how it forwards a counter's stores); the
results open with the command, the date and the commit measured. With
--out, the same as JSON beside the markdown (`.json`: per program and
variant `median_cpu_s`, `ratio`, `build_s`, `text_bytes`, `text_ratio`,
`peak_rss_kib`, `peak_rss_ratio`; each continuous-mode variant's extra
disk per process, the live file's peak `st_blocks` over one more run
polled every 2 ms, in `live_file_peak_kib`; each round's CPU-time ratios in
`round_ratios` and its peak RSS in `round_peak_rss_kib`). The current
results are bench/results/overhead.md and .json. Run on purpose, not in CI:

    bench/overhead.py [--runs 7] [--scale 50] [--out bench/results/overhead.md]
                      [--variants plain,clang-instr,pathprof-path,pathprof-ppp]
                      [--only PROGRAM] [--baseline DIR] [--pathprof BINARY]

Without --pathprof it builds this checkout's pathprof first (`cargo build
--release -p pathprof -p pathprof-rt -p pathprof-plugin`); with it, it uses
that binary and the runtime and plugin beside it (the results still name
this checkout's commit).

Preferential path profiling (`pathprof-ppp*`) is trained first: the path-mode
build runs a training input, `pathprof interesting` lists the paths it ran,
and `pathprof cc --mode=ppp --interesting=LIST` builds the variant.
`pathprof-ppp` trains on the measured workload itself (the paper's setting),
`pathprof-ppp-small` on the program's `train` input (by default the workload
at scale/10), `pathprof-ppp-all` as `pathprof-ppp` with `--ppp-min-paths=0
--ppp-cache-paths=0` (every listed function numbered, not only where path
mode hashes and its inline cache would not hold the interesting paths),
`pathprof-ppp-hashed` with `--ppp-cache-paths=0` (every function whose
paths hash numbered, whatever its inline cache would hold);
`pathprof-ppp-two` and `pathprof-ppp-all-two` as those with
`--ppp-two-registers` (the ablation of packing both registers into one word). Each PPP
build's `pathprof ppp-stats` (δ = interval / |I| and its histogram) goes into
the results after the program's table.

`clang-instr-plain-inlining`, `pathprof-block-plain-inlining`,
`pathprof-edge-plain-inlining` and `pathprof-path-plain-inlining` are those
variants built with the plain build's inlining decisions replayed
(`-mllvm -cgscc-inline-replay=`, from a plain build's `-Rpass=inline`
remarks): what the probes cost apart from how they change the inliner's
choices.

With --baseline DIR (another pathprof checkout, built with `cargo build
--release -p pathprof -p pathprof-rt`), every pathprof variant is also built
by that checkout's pathprof, as `before:<variant>`, and measured in the same
interleaved rounds: a before/after comparison from one run.
"""
import argparse
import datetime
import json
import os
import resource
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import goals
import machine

ROOT = Path(__file__).resolve().parent.parent
CLANG = "/usr/lib/llvm-22/bin/clang"


def commit_and_date():
    """The commit measured (`with uncommitted changes` when the tree has
    them) and the date, for a results file's title."""
    def git(*cmd):
        return subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " with uncommitted changes"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return commit, date


def publish(text, out, data, indent=1):
    """Prints a results file's markdown `text` and, when `out` is given,
    writes it there and `data` as JSON beside it (`out` with `.json`)."""
    print(text)
    if out:
        out.write_text(text + "\n")
        out.with_suffix(".json").write_text(json.dumps(data, indent=indent) + "\n")


def crate_dir(name):
    """Where cargo keeps registry crate `name`'s sources (named, never built, by
    crates/cli/tests/thirdparty/Cargo.toml)."""
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--manifest-path",
         str(ROOT / "crates/cli/tests/thirdparty/Cargo.toml")]))
    for p in meta["packages"]:
        if p["name"] == name:
            return Path(p["manifest_path"]).parent
    sys.exit(f"cargo does not know {name}")


def lua_program():
    src = crate_dir("lua-src") / "lua-5.4.9"
    files = [str(src / f) for f in sorted(os.listdir(src)) if f.endswith(".c") and f not in ("lua.c", "luac.c")]
    return {
        "name": "lua",
        "sources": [str(ROOT / "crates/cli/tests/thirdparty/lua/driver.c")] + files,
        # A fixed string-hash seed (Lua seeds from the time and addresses):
        # runs, and P3's copies, then take the same paths.
        "cflags": ["-DLUA_USE_LINUX", "-Dluai_makeseed(L)=12345u", f"-I{src}"],
        "libs": ["-lm", "-ldl"],
        "run": lambda exe, scale, tmp: ([exe, str(ROOT / "crates/cli/tests/thirdparty/lua/workload.lua"), str(scale)], None),
    }


def bzip2_program():
    src = crate_dir("bzip2-sys") / "bzip2-1.0.8"
    files = ["blocksort.c", "huffman.c", "crctable.c", "randtable.c", "compress.c", "decompress.c", "bzlib.c", "bzip2.c"]

    def run(exe, scale, tmp):
        data = tmp / f"bzip2-input-{scale}.txt"
        if not data.exists():
            words = [b"path", b"edge", b"block", b"profile", b"count", b"chord", b"tree", b"loop"]
            x, out = 12345, bytearray()
            while len(out) < scale * 250_000:
                x = (x * 1103515245 + 12345) & 0xFFFFFFFF
                out += words[(x >> 16) % len(words)] + (b"\n" if (x >> 8) % 13 == 0 else b" ")
            data.write_bytes(bytes(out))
        return [exe, "-9", "-c", str(data)], None

    return {
        "name": "bzip2",
        "sources": [str(src / f) for f in files],
        "cflags": ["-D_FILE_OFFSET_BITS=64"],
        "libs": [],
        "run": run,
    }


def zlib_program():
    """zlib (the libz-sys crate's sources) deflating and inflating scale*80 KB
    of text at three levels (crates/cli/tests/thirdparty/zlib/driver.c)."""
    src = crate_dir("libz-sys") / "src/zlib"
    files = ["adler32.c", "compress.c", "crc32.c", "deflate.c", "inffast.c", "inflate.c", "inftrees.c",
             "trees.c", "uncompr.c", "zutil.c"]
    return {
        "name": "zlib",
        "sources": [str(ROOT / "crates/cli/tests/thirdparty/zlib/driver.c")] + [str(src / f) for f in files],
        "cflags": [f"-I{src}", "-DHAVE_UNISTD_H"],
        "libs": [],
        "run": lambda exe, scale, tmp: ([exe, str(scale * 80_000)], None),
    }


def xz_program():
    """liblzma (the lzma-sys crate's xz 5.2 sources, configured as that crate
    builds them) compressing scale*40 KB of text once and decompressing it 40
    times (crates/cli/tests/thirdparty/xz/driver.c): LZMA2 decoding, whose `lzma_decode` has more
    potential paths than any array holds."""
    crate = crate_dir("lzma-sys")
    src = crate / "xz-5.2/src"
    dirs = ["common", "lzma", "lz", "check", "delta", "rangecoder", "simple"]
    files = [str(src / "liblzma" / d / f) for d in dirs for f in sorted(os.listdir(src / "liblzma" / d))
             if f.endswith(".c") and not f.endswith("tablegen.c") and f not in ("crc32_small.c", "crc64_small.c")]
    files += [str(src / "common" / f) for f in ("tuklib_cpucores.c", "tuklib_physmem.c")]
    includes = [f"-I{crate}", f"-I{src / 'liblzma/api'}", f"-I{src / 'common'}"]
    includes += [f"-I{src / 'liblzma' / d}" for d in dirs]
    return {
        "name": "xz",
        "sources": [str(ROOT / "crates/cli/tests/thirdparty/xz/driver.c")] + files,
        "cflags": ["-std=c99", "-pthread", "-DHAVE_CONFIG_H=1"] + includes,
        "libs": ["-lpthread"],
        "run": lambda exe, scale, tmp: ([exe, str(scale * 40_000), "40"], None),
    }


def sqlite_with(name, driver, run_args):
    """SQLite's amalgamation with `driver` (of crates/cli/tests/thirdparty/sqlite/), run with
    `run_args(scale)`."""
    src = crate_dir("libsqlite3-sys") / "sqlite3"
    return {
        "name": name,
        "sources": [str(ROOT / "crates/cli/tests/thirdparty/sqlite" / driver), str(src / "sqlite3.c")],
        "cflags": [f"-I{src}"],
        "libs": ["-lm", "-ldl", "-lpthread"],
        "run": lambda exe, scale, tmp: ([exe] + run_args(scale), None),
    }


def sqlite_program():
    return sqlite_with("sqlite", "driver.c", lambda scale: [str(scale * 16000)])


def sqlite_threads_program():
    """SQLite with 4 threads, each on a database of its own (scale*1000 rows
    each), at the same time: the threaded workload."""
    return sqlite_with("sqlite-threads", "threads.c", lambda scale: [str(scale * 1000), "4"])


SCALE_HELP = ("Lua workload rounds; bzip2 compresses scale*250 KB; zlib deflates scale*80 KB; "
              "xz compresses scale*40 KB once and decompresses it 40 times; "
              "SQLite uses scale*16000 rows (each about a second at the default)")

# The single-threaded suite (what callgrind.py and p3.py measure too), and
# every program this script measures.
SUITE = {"lua": lua_program, "bzip2": bzip2_program, "zlib": zlib_program, "sqlite": sqlite_program,
         "xz": xz_program}
PROGRAMS = {**SUITE, "sqlite-threads": sqlite_threads_program}

# pathprof's variants and their flags.
PATHPROF_VARIANTS = {
    "pathprof-block": ["--mode=block"],
    # Weinberger's counter in every block (block mode before it counted on a
    # spanning tree's chords).
    "pathprof-block-every": ["--mode=block", "--every-block"],
    "pathprof-edge": ["--mode=edge"],
    "pathprof-path": ["--mode=path"],
    # Truncate every function to what fits an array: no hash tables.
    "pathprof-path-arrays": ["--mode=path", "--max-paths=131072"],
    "pathprof-path-atomic": ["--mode=path", "--atomic"],
}

# Preferential path profiling: the training input its interesting-path list
# comes from ("workload": the measured run itself; "small": the program's
# `train` input) and the flags added to `--mode=ppp --interesting=LIST`.
PPP_VARIANTS = {
    "pathprof-ppp": ("workload", []),
    "pathprof-ppp-small": ("small", []),
    "pathprof-ppp-all": ("workload", ["--ppp-min-paths=0", "--ppp-cache-paths=0"]),
    # Every function whose Ball-Larus ids hash numbered, whatever the
    # inline cache would hold.
    "pathprof-ppp-hashed": ("workload", ["--ppp-cache-paths=0"]),
    # Numbering functions of more than 1024 potential paths: their arrays
    # shrink from up to 2^17 slots to the interesting paths.
    "pathprof-ppp-1k": ("workload", ["--ppp-min-paths=1024"]),
    # Section 5's two registers kept apart where they would fit one word:
    # the ablation of the packing.
    "pathprof-ppp-two": ("workload", ["--ppp-two-registers"]),
    "pathprof-ppp-all-two": ("workload", ["--ppp-min-paths=0", "--ppp-cache-paths=0", "--ppp-two-registers"]),
}

# A variant built with the plain build's inlining decisions replayed
# (clang's -cgscc-inline-replay, from the plain build's -Rpass=inline
# remarks; a call site the plain build did not inline is not inlined): the
# ablation that tells the cost of the probes themselves from the cost of
# their making the inliner decide otherwise (both clang's counters and
# pathprof's make callees dearer to inline).
PLAIN_INLINING_VARIANTS = {
    "clang-instr-plain-inlining": "clang-instr",
    "pathprof-block-plain-inlining": "pathprof-block",
    "pathprof-edge-plain-inlining": "pathprof-edge",
    "pathprof-path-plain-inlining": "pathprof-path",
}

# The same builds run in continuous mode (PATHPROF_CONTINUOUS=1: counters in
# a live file mapped into the process, which a SIGKILL cannot lose).
CONTINUOUS_VARIANTS = {
    "pathprof-block-continuous": "pathprof-block",
    "pathprof-edge-continuous": "pathprof-edge",
    "pathprof-path-continuous": "pathprof-path",
}

VARIANTS = (["plain", "clang-instr", "gcc-plain", "gcc-coverage"] + list(PATHPROF_VARIANTS)
            + list(PPP_VARIANTS) + list(PLAIN_INLINING_VARIANTS) + list(CONTINUOUS_VARIANTS))


BEFORE = "before:"


def training_cmd(prog, training, scale, tmp):
    """The command line (for the path-mode build's `exe`) of a PPP variant's
    training run. A program may define `train`, called like `run` with the
    measured scale; without it the small training runs the workload at
    scale/10."""
    if training == "workload":
        return lambda exe: prog["run"](exe, scale, tmp)
    train = prog.get("train", lambda exe, scale, tmp: prog["run"](exe, max(1, scale // 10), tmp))
    return lambda exe: train(exe, scale, tmp)


def interesting_list(prog, training, out, pathprof, scale, path_exe):
    """Runs the path-mode build on the training input and writes the paths it
    ran as `<prog>-train-<training>.paths`; returns the list and a line on how
    it was made."""
    stem = out / f"{prog['name']}-train-{training}"
    profile = Path(f"{stem}.pprof")
    profile.unlink(missing_ok=True)
    cmd, _ = training_cmd(prog, training, scale, out)(path_exe)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PATHPROF_FILE=str(profile)))
    paths = f"{stem}.paths"
    subprocess.run([pathprof, "interesting", "--map", path_exe, str(profile), "-o", paths], check=True)
    with open(paths) as f:
        count = len(json.load(f)["paths"])
    shown = " ".join(["<path build>"] + [Path(a).name for a in cmd[1:]])
    return paths, f"Training `{training}`: `{shown}`, {count} interesting paths listed."


def compile_args(prog, exe):
    """The compiler arguments (after the compiler and its mode flags) that
    build `prog` as `exe`: every variant's, so they differ in the flags alone."""
    return ["-O2", "-g"] + prog["cflags"] + prog["sources"] + ["-o", exe] + prog["libs"]


def plain_inlining(prog, out):
    """Builds `prog` plain once more, with clang's inlining remarks, and
    returns the flags that replay its inlining decisions in another build
    and the number of call sites it inlined."""
    exe = str(out / f"{prog['name']}-plain-remarks")
    r = subprocess.run([CLANG, "-Rpass=inline"] + compile_args(prog, exe), cwd=out,
                       capture_output=True, text=True, check=True)
    remarks = [line for line in r.stderr.splitlines() if "remark: " in line]
    path = out / f"{prog['name']}-plain.inlining"
    path.write_text("\n".join(remarks) + "\n")
    flags = [f"-cgscc-inline-replay={path}", "-cgscc-inline-replay-scope=Module",
             "-cgscc-inline-replay-fallback=NeverInline"]
    # (-mllvm reaches the link step too, where clang would warn it unused.)
    args = ["-Wno-unused-command-line-argument"] + [arg for flag in flags for arg in ("-mllvm", flag)]
    return args, sum(" inlined into " in line for line in remarks)


def build(variant, prog, out, pathprof, baseline, interesting, replay=()):
    """Builds `variant` of `prog`; `interesting(training)` gives a PPP
    variant's interesting-path list, `replay` a `*-plain-inlining` variant's
    flags (`plain_inlining`)."""
    exe = str(out / f"{prog['name']}-{variant.replace(':', '-')}")
    common = compile_args(prog, exe)
    if variant in PLAIN_INLINING_VARIANTS:
        common = list(replay) + common
        variant = PLAIN_INLINING_VARIANTS[variant]
    if variant == "plain":
        cmd = [CLANG] + common
    elif variant == "clang-instr":
        cmd = [CLANG, "-fprofile-instr-generate"] + common
    elif variant == "gcc-plain":
        cmd = ["gcc"] + common
    elif variant == "gcc-coverage":
        cmd = ["gcc", "--coverage"] + common
    elif variant.startswith(BEFORE):
        cmd = [baseline, "cc"] + PATHPROF_VARIANTS[variant[len(BEFORE):]] + common
    elif variant in PPP_VARIANTS:
        training, flags = PPP_VARIANTS[variant]
        cmd = [pathprof, "cc", "--mode=ppp", f"--interesting={interesting(training)}"] + flags + common
    else:
        cmd = [pathprof, "cc"] + PATHPROF_VARIANTS[variant] + common
    subprocess.run(cmd, check=True, cwd=out)
    return exe


def cpu_time(cmd, env, stdin=None):
    """CPU time (user + system) of running `cmd` to its end, its standard
    output discarded; `stdin`: bytes fed to its standard input, if any."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, input=stdin, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rusage_helper(out):
    """Builds bench/rusage.c into `out` and returns it: the small process that
    starts each measured run (`measure`), so that the run's peak resident set
    is its own (a program Python starts reports at least Python's peak)."""
    helper = str(out / "rusage")
    subprocess.run([CLANG, "-O2", str(ROOT / "bench/rusage.c"), "-o", helper], check=True)
    return helper


def measure(helper, cmd, env, stdin=None):
    """CPU time (user + system, seconds) and peak resident set (ru_maxrss,
    KiB) of running `cmd` to its end, its standard output discarded, from
    the rusage wait4 gives for that one process (and the children it waited
    for); `helper` is `rusage_helper`'s, `stdin` bytes fed to its standard
    input, if any. A failed run raises CalledProcessError, as `cpu_time`'s."""
    r, w = os.pipe()
    try:
        p = subprocess.Popen([helper, str(w)] + list(cmd), pass_fds=(w,), env=env, stdout=subprocess.DEVNULL,
                             stdin=subprocess.PIPE if stdin is not None else None)
    finally:
        os.close(w)
    with os.fdopen(r) as f:
        p.communicate(stdin)
        said = f.read().split()
    if p.returncode != 0 or len(said) != 4:
        raise subprocess.CalledProcessError(p.returncode or 127, cmd)
    user_us, system_us, maxrss_kib, status = map(int, said)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise subprocess.CalledProcessError(code, cmd)
    return (user_us + system_us) / 1e6, maxrss_kib


def live_file_peak(cmd, env, profile):
    """Runs `cmd` (continuous mode, its profile `profile`) once, polling
    every 2 ms for its live file beside the profile: the most disk
    (st_blocks, KiB) the live files took at once while it ran (they are
    sparse: pages never counted into take none)."""
    pattern = profile.name + "."
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        used = 0
        for entry in os.scandir(profile.parent):
            if entry.name.startswith(pattern) and entry.name.endswith(".live"):
                try:
                    used += entry.stat().st_blocks * 512
                except FileNotFoundError:
                    pass
        peak = max(peak, used)
        time.sleep(0.002)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return peak / 1024


def text_bytes(exe):
    """The size in bytes of `exe`'s `.text` section, from its ELF section
    headers (what `llvm-size -A` says; the profilers' runtimes, linked in
    statically, are in it too)."""
    with open(exe, "rb") as f:
        elf = f.read()
    if elf[:4] != b"\x7fELF":
        sys.exit(f"{exe} is not an ELF file")
    wide, order = elf[4] == 2, "<" if elf[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(order + "Q", elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", elf, 0x3A)
        header = order + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(order + "I", elf, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", elf, 0x2E)
        header = order + "IIIIIIIIII"
    # (name, type, flags, address, offset, size, link, ...) of section i.
    def section(i):
        return struct.unpack_from(header, elf, shoff + i * shentsize)
    if shoff == 0:
        sys.exit(f"{exe} has no section headers")
    if shnum == 0:  # more sections than e_shnum holds: the count is section 0's size
        shnum = section(0)[5]
    if shstrndx == 0xFFFF:  # SHN_XINDEX: the index is section 0's link
        shstrndx = section(0)[6]
    names = section(shstrndx)
    for i in range(shnum):
        s = section(i)
        start = names[4] + s[0]
        if elf[start:elf.index(b"\0", start)] == b".text":
            return s[5]
    sys.exit(f"{exe} has no .text")


def same_output(prog, exes, scale, out):
    """Runs each build of `prog` once and stops the script unless its output
    and exit status are the plain build's."""
    def run(v):
        cmd, _ = prog["run"](exes[v], scale, out)
        env = dict(os.environ, PATHPROF_FILE=str(out / "check.pprof"), LLVM_PROFILE_FILE=str(out / "check.profraw"))
        r = subprocess.run(cmd, capture_output=True, env=env)
        return r.returncode, r.stdout
    plain = run("plain")
    for v in exes:
        if v != "plain" and run(v) != plain:
            sys.exit(f"{prog['name']}: {v} does not behave as the plain build (output or exit status differ)")


def ratio(medians, v):
    """`v`'s value in `medians` (median CPU time, `.text` bytes or median
    peak RSS by variant) over the plain build's; gcc's --coverage over plain
    gcc's when that was measured."""
    base = medians["gcc-plain"] if v == "gcc-coverage" and "gcc-plain" in medians else medians["plain"]
    return medians[v] / base


def ratio_table(heading, values, shown):
    """A table of every program's ratios to plain (`ratio`) of `values`
    (`{program: {variant: value}}`) for the variants `shown`, and their
    geometric mean over the single-threaded programs, as markdown lines."""
    lines = [heading, "| program | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for name, ms in values.items():
        lines.append(f"| {name} | " + " | ".join(f"{ratio(ms, v):.2f}" for v in shown) + " |")
    single = [ms for name, ms in values.items() if name in SUITE]
    if single:
        mean = [statistics.geometric_mean([ratio(ms, v) for ms in single]) for v in shown]
        lines.append("| geometric mean (single-threaded) | " + " | ".join(f"{g:.2f}" for g in mean) + " |")
    return lines


def suite_table(medians, build_s, variants):
    """Every program's ratios, their geometric mean, and build times, as
    markdown lines."""
    shown = [v for v in variants if v not in ("plain", "gcc-plain")]
    lines = ratio_table("## The suite (CPU time ratio to plain clang -O2; gcc-coverage to plain gcc -O2)\n",
                        medians, shown)
    lines += ["", "Build wall time, seconds (one build each, on the same machine):\n",
              "| program | " + " | ".join(variants) + " |", "|---" * (len(variants) + 1) + "|"]
    for name in medians:
        lines.append(f"| {name} | " + " | ".join(f"{build_s[(name, v)]:.1f}" for v in variants) + " |")
    lines.append("")
    return lines


def size_tables(texts, peak_rss, variants):
    """Every program's `.text` size and median peak RSS as ratios to plain,
    and their geometric means, as markdown lines."""
    shown = [v for v in variants if v not in ("plain", "gcc-plain")]
    lines = ratio_table("## The suite's code size (`.text` bytes ratio to plain clang -O2; "
                        "gcc-coverage to plain gcc -O2)\n", texts, shown)
    lines += [""] + ratio_table("## The suite's peak memory (median peak RSS ratio to plain clang -O2; "
                                "gcc-coverage to plain gcc -O2)\n", peak_rss, shown)
    lines.append("")
    return lines


def hashing_share(pathprof, exe, profile):
    """The share of the path executions in `profile` (of the path-mode build
    `exe`) that were counted in hash tables."""
    report = json.loads(subprocess.run([pathprof, "export", "--map", exe, "--format", "json", str(profile)],
                                       check=True, capture_output=True, text=True).stdout)
    hashed = total = 0
    for f in report["functions"]:
        n = sum(p["count"] for p in f["paths"])
        total += n
        hashed += n if f["hashed"] else 0
    return hashed / total if total else 0.0


def build_pathprof():
    """Builds this checkout's pathprof, runtime and pass plugin (release);
    returns the pathprof binary."""
    subprocess.run(["cargo", "build", "--release", "-p", "pathprof", "-p", "pathprof-rt", "-p", "pathprof-plugin"],
                   check=True, cwd=ROOT)
    return str(ROOT / "target/release/pathprof")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scale", type=int, default=50, help=SCALE_HELP)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", choices=list(PROGRAMS), action="append",
                    help="measure only these programs (repeatable)")
    ap.add_argument("--baseline", type=Path,
                    help="another pathprof checkout (release build) to compare with")
    ap.add_argument("--variants", type=lambda s: s.split(","),
                    help="comma-separated subset of: " + ", ".join(VARIANTS) + " (plain is always measured)")
    ap.add_argument("--pathprof", help="a pathprof binary to use, its runtime and plugin beside it "
                    "(default: build this checkout's)")
    args = ap.parse_args()
    command = shlex.join([sys.argv[0]] + sys.argv[1:])
    commit, date = commit_and_date()
    if args.variants:
        unknown = set(args.variants) - set(VARIANTS)
        if unknown:
            sys.exit(f"unknown variants {', '.join(sorted(unknown))}; known: {', '.join(VARIANTS)}")
    started = time.monotonic()
    steal = machine.Steal()
    baseline = None
    if args.baseline:
        baseline = str(args.baseline.resolve() / "target/release/pathprof")
        if not os.access(baseline, os.X_OK):
            sys.exit(f"no {baseline}: run `cargo build --release -p pathprof -p pathprof-rt` there")
    pathprof = os.path.abspath(args.pathprof) if args.pathprof else build_pathprof()
    variants = [v for v in VARIANTS if v == "plain" or not args.variants or v in args.variants]
    if baseline:
        # Older builds have no --every-block: their block mode is that one.
        variants += [BEFORE + v for v in PATHPROF_VARIANTS if v in variants and v != "pathprof-block-every"]
    lines = ["# Overhead suite (bench/overhead.py)\n",
             f"`{command}`, {date}, pathprof {commit}, {os.cpu_count()} CPUs.\n"]
    medians, build_s, rounds, shares = {}, {}, {}, {}
    live_kib = {}
    texts, peak_rss, rss_rounds = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        helper = rusage_helper(out)
        for name, make in PROGRAMS.items():
            if args.only and name not in args.only:
                continue
            prog = make()
            exes, lists, replay = {}, {}, []

            def built(v):
                if v in CONTINUOUS_VARIANTS:
                    exes[v] = built(CONTINUOUS_VARIANTS[v])
                    build_s[(prog["name"], v)] = build_s[(prog["name"], CONTINUOUS_VARIANTS[v])]
                if v not in exes:
                    # The plain build with remarks comes first: not this build's time.
                    flags = inlining() if v in PLAIN_INLINING_VARIANTS else ()
                    began = time.monotonic()
                    exes[v] = build(v, prog, out, pathprof, baseline, interesting, flags)
                    build_s[(prog["name"], v)] = time.monotonic() - began
                return exes[v]

            def inlining():
                if not replay:
                    replay.extend(plain_inlining(prog, out))
                return replay[0]

            def interesting(training):
                if training not in lists:
                    lists[training] = interesting_list(prog, training, out, pathprof, args.scale,
                                                       built("pathprof-path"))
                return lists[training][0]

            for v in variants:
                built(v)
            same_output(prog, {v: exes[v] for v in variants}, args.scale, out)
            times = {v: [] for v in variants}
            rss = {v: [] for v in variants}
            for _ in range(args.runs):
                for v in variants:
                    name = f"{prog['name']}-{v.replace(':', '-')}"
                    env = dict(os.environ, PATHPROF_FILE=str(out / f"{name}.pprof"),
                               LLVM_PROFILE_FILE=str(out / f"{name}.profraw"))
                    if v in CONTINUOUS_VARIANTS:
                        env["PATHPROF_CONTINUOUS"] = "1"
                    cmd, _ = prog["run"](exes[v], args.scale, out)
                    cpu, kib = measure(helper, cmd, env)
                    times[v].append(cpu)
                    rss[v].append(kib)
            for v in variants:
                if v in CONTINUOUS_VARIANTS:
                    name = f"{prog['name']}-{v}-disk"
                    env = dict(os.environ, PATHPROF_FILE=str(out / f"{name}.pprof"), PATHPROF_CONTINUOUS="1")
                    cmd, _ = prog["run"](exes[v], args.scale, out)
                    live_kib.setdefault(prog["name"], {})[v] = live_file_peak(cmd, env, out / f"{name}.pprof")
            base = statistics.median(times["plain"])
            medians[prog["name"]] = {v: statistics.median(times[v]) for v in variants}
            rounds[prog["name"]] = goals.round_ratios(times)
            text = texts[prog["name"]] = {v: text_bytes(exes[v]) for v in variants}
            peak = peak_rss[prog["name"]] = {v: statistics.median(rss[v]) for v in variants}
            rss_rounds[prog["name"]] = [{v: rss[v][k] for v in variants} for k in range(args.runs)]
            if "pathprof-path" in variants:
                shares[prog["name"]] = hashing_share(pathprof, exes["pathprof-path"],
                                                     out / f"{prog['name']}-pathprof-path.pprof")
            lines.append(f"## {prog['name']} (scale {args.scale}, median of {args.runs} interleaved runs)\n")
            lines.append("| variant | median CPU s | ratio to plain "
                         "| text KiB | text ×plain | peak RSS MiB | RSS ×plain |")
            lines.append("|---|---|---|---|---|---|---|")
            for v in variants:
                m = statistics.median(times[v])
                lines.append(f"| {v} | {m:.3f} | {m / base:.2f} "
                             f"| {text[v] / 1024:.1f} | {text[v] / text['plain']:.2f} "
                             f"| {peak[v] / 1024:.2f} | {peak[v] / peak['plain']:.2f} |")
            lines.append("")
            if prog["name"] in live_kib:
                disk = ", ".join(f"{v} {kib:.0f} KiB" for v, kib in live_kib[prog["name"]].items())
                lines.append(f"Extra disk per process in continuous mode (the live file's peak "
                             f"st_blocks while the program ran, one run): {disk}.\n")
            lines += [summary + "\n" for _, summary in lists.values()]
            if replay:
                lines.append(f"`*-plain-inlining`: built with the plain build's inlining replayed "
                             f"({replay[1]} call sites inlined there).\n")
            for v in variants:
                if v in PPP_VARIANTS:
                    stats = subprocess.run([pathprof, "ppp-stats", "--map", exes[v]], check=True,
                                           capture_output=True, text=True).stdout
                    lines += [f"`pathprof ppp-stats` of {prog['name']}-{v}:\n", "```", stats.rstrip(), "```", ""]
    lines += suite_table(medians, build_s, variants)
    lines += size_tables(texts, peak_rss, variants)
    judged = goals.judge(rounds, set(SUITE), shares)
    lines += goals.goals_table(judged)
    measured_on = machine.facts(CLANG, steal)
    lines += machine.markdown(measured_on)
    lines.append(f"Wall time of the whole run (builds, training, measurement): {time.monotonic() - started:.0f} s.")
    publish("\n".join(lines), args.out, {
        "command": command, "date": date, "commit": commit,
        "runs": args.runs, "scale": args.scale,
        "programs": {name: {v: {"median_cpu_s": m, "ratio": ratio(ms, v), "build_s": build_s[(name, v)],
                                "text_bytes": texts[name][v], "text_ratio": ratio(texts[name], v),
                                "peak_rss_kib": peak_rss[name][v], "peak_rss_ratio": ratio(peak_rss[name], v)}
                            for v, m in ms.items()}
                     for name, ms in medians.items()},
        "round_ratios": rounds,
        "round_peak_rss_kib": rss_rounds,
        "hashed_path_share": shares,
        "live_file_peak_kib": live_kib,
        "goals": judged,
        "machine": measured_on,
    })


if __name__ == "__main__":
    main()
