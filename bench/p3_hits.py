#!/usr/bin/env python3
"""P3's hit counts on the overhead suite (the slowest copy's probe
executions against sequential Ball-Larus, SBL), untrained (the
paper's Algorithm 2, planned by probe counts) and trained (`--p3-train`,
planned by what the probes would execute on a training run's paths).

Hit counts are computed from a path profile (`pathprof p3 stats`), so they
are exact and do not depend on the machine's load; no copy is timed here
(`bench/p3.py` times them). For each program of `bench/overhead.py`'s suite:

1. `pathprof cc --mode=p3 --copies=2` (OUTPUT is path mode on the whole
   linked module, its map the P3 record `p3 stats` plans from);
2. OUTPUT runs on the training input (scale/10 by default: a smaller run
   than the one measured), `pathprof interesting` lists its paths;
3. OUTPUT runs on the measured input (scale) for the reference profile;
4. `pathprof cc --mode=p3 --copies=K --p3-train=LIST` for the largest K,
   whose copies `pathprof p3 run` runs and merges, and whose merged profile
   must equal the reference path for path (but for `main`, whose argument
   strings differ);
5. `pathprof p3 stats -k 2,4,8` on the reference profile with each map.

    bench/p3_hits.py [--scale 50] [--train-scale 5] [--only PROGRAM]
                     [--out bench/results/p3-hits.md]

The markdown goes to --out (default bench/results/p3-hits.md, the current
results), the figures as JSON beside it.
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import overhead  # noqa: E402
import p3  # noqa: E402

KS = [2, 4, 8]
# The paper's average reductions for 2, 4 and 8 copies (section 4.2).
PAPER = {2: 0.23, 4: 0.43, 8: 0.56}


def pathprof_json(pathprof, args, cwd):
    out = subprocess.run([pathprof] + args, cwd=cwd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run_profiled(prog, exe, scale, out, profile):
    cmd, stdin = prog["run"](exe, scale, out)
    stdin = p3.stdin_bytes(stdin)
    env = dict(p3.run_env(exe, out), PATHPROF_FILE=str(profile))
    Path(profile).unlink(missing_ok=True)
    subprocess.run(cmd, cwd=out, env=env, input=stdin, stdout=subprocess.DEVNULL, check=True,
                   stdin=None if stdin is not None else subprocess.DEVNULL)


def paths_of(pathprof, exe, profile, out):
    """{(function, id): count} of a profile, `main` left out."""
    report = pathprof_json(pathprof, ["report", "--map", exe, str(profile), "--format", "json"], out)
    return {(f["name"], p["id"]): p["count"] for f in report["functions"] if f["name"] != "main"
            for p in f.get("paths", [])}


def measure(name, prog, out, pathprof, scale, train_scale):
    exe, _ = p3.build_p3(prog, out, pathprof, 2)
    train = out / f"{name}-train.pprof"
    run_profiled(prog, exe, train_scale, out, train)
    listing = out / f"{name}-train.paths"
    subprocess.run([pathprof, "interesting", "--map", exe, str(train), "-o", str(listing)], check=True, cwd=out)
    reference = out / f"{name}-ref.pprof"
    run_profiled(prog, exe, scale, out, reference)
    k = max(KS)
    trained_exe = str(out / f"{name}-p3-trained")
    cmd = [pathprof, "cc", "--mode=p3", f"--copies={k}", f"--p3-train={listing}"]
    subprocess.run(cmd + overhead.compile_args(prog, trained_exe), check=True, cwd=out)
    merged = out / f"{name}-trained-merged.pprof"
    cmd, stdin = prog["run"](trained_exe, scale, out)
    stdin = p3.stdin_bytes(stdin)
    run = subprocess.run([pathprof, "p3", "run", "-k", str(k), "-o", str(merged), "--"] + cmd, cwd=out,
                         input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if run.returncode != 0:
        sys.exit(f"{name}: p3 run of the trained copies failed: {run.stderr.decode(errors='replace')}")
    exact = paths_of(pathprof, trained_exe, merged, out) == paths_of(pathprof, exe, reference, out)
    stats = {}
    for label, m in (("untrained", exe), ("trained", trained_exe)):
        stats[label] = pathprof_json(pathprof, ["p3", "stats", "-k", ",".join(map(str, KS)), "--map", m,
                                                str(reference), "--format", "json"], out)
    return {"exact": exact, "stats": stats,
            "training_paths": sum(1 for line in listing.read_text().splitlines() if '"id"' in line)}


def ratio(row):
    return row["p3"] / row["sbl"] if row["sbl"] else 1.0


def render(results, args, wall):
    commit, date = overhead.commit_and_date()
    lines = [f"# P3 hit counts, untrained and trained (bench/p3_hits.py), {commit}", "",
             f"{date}; measured input scale {args.scale}, training input scale {args.train_scale}. "
             "Hit counts are probe executions computed from the reference path profile "
             "(`pathprof p3 stats`): exact, independent of the machine's load. "
             "Reduction: 1 - (slowest copy's hits / SBL's hits); SBL is path mode as built.", ""]
    lines += ["| program | K | untrained P3 | trained P3 | trained PBL | one copy, trained trees | trained merge exact |",
              "|---|---|---|---|---|---|---|"]
    geo = {label: {k: [] for k in KS} for label in ("untrained", "trained")}
    for name, r in results.items():
        placed = r["stats"]["trained"]["sbl_trained_placement"]
        for i, k in enumerate(KS):
            u, t = r["stats"]["untrained"]["rows"][i], r["stats"]["trained"]["rows"][i]
            geo["untrained"][k].append(ratio(u))
            geo["trained"][k].append(ratio(t))
            lines.append(f"| {name} | {k} | {1 - ratio(u):.1%} | {1 - ratio(t):.1%} | "
                         f"{1 - t['pbl'] / t['sbl']:.1%} | {1 - placed / t['sbl']:.1%} | "
                         f"{'yes' if r['exact'] else 'NO'} |")
    if not all(r["exact"] for r in results.values()):
        lines += ["", "A merge marked NO differs from the reference run: the program's paths depend on "
                  "something that differs between its binaries (addresses: Lua's string cache is keyed by "
                  "them), which P3 cannot make exact; see docs/usage.md on the programs P3 takes."]
    lines += ["", "Geometric mean of the slowest copy's hits over SBL's, as a reduction:", "",
              "| K | untrained P3 | trained P3 | the paper's average |", "|---|---|---|---|"]
    for k in KS:
        g = {label: 1 - math.exp(sum(map(math.log, geo[label][k])) / len(geo[label][k])) for label in geo}
        lines.append(f"| {k} | {g['untrained']:.1%} | {g['trained']:.1%} | {PAPER[k]:.0%} |")
    lines += ["", "The hottest functions (SBL hits, share, P3's most in one copy per K), trained:", ""]
    for name, r in results.items():
        lines.append(f"{name}:")
        lines.append("")
        lines.append("| function | call sites | SBL | share | " + " | ".join(f"K={k}" for k in KS) + " |")
        lines.append("|---|---|---|---|" + "---|" * len(KS))
        sbl = r["stats"]["trained"]["rows"][0]["sbl"]
        for h in r["stats"]["trained"]["hottest"][:5]:
            sites = "many" if h["call_sites"] is None else h["call_sites"]
            lines.append(f"| `{h['name']}` | {sites} | {h['sbl']} | {h['sbl'] / sbl:.1%} | "
                         + " | ".join(str(x) for x in h["p3_max"]) + " |")
        lines.append("")
    lines.append(f"Wall time of the run: {wall:.0f} s.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=50)
    ap.add_argument("--train-scale", type=int, default=5)
    ap.add_argument("--only", choices=list(overhead.SUITE), action="append")
    ap.add_argument("--out", type=Path, default=overhead.ROOT / "bench/results/p3-hits.md")
    args = ap.parse_args()
    pathprof = overhead.build_pathprof()
    start = time.time()
    results = {}
    with tempfile.TemporaryDirectory(prefix="pathprof-p3-hits-") as tmp:
        for name in args.only or list(overhead.SUITE):
            results[name] = measure(name, overhead.SUITE[name](), Path(tmp), pathprof,
                                    args.scale, args.train_scale)
    overhead.publish(render(results, args, time.time() - start).rstrip("\n"), args.out, results)


if __name__ == "__main__":
    main()
