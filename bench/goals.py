"""pathprof's overhead goals, judged from one run of bench/overhead.py: for
each goal and program, the goal's *margin* in every interleaved round, from
that round's CPU-time ratios to the plain build (gcc's --coverage to plain
gcc's in the same round), and a verdict from the margins' quartiles, so
that a goal missed or met by less than the run's spread says so instead of
a verdict from two medians.

A margin is in units of the plain build's time: +0.03 means 3 % of the plain
run over the goal, -0.03 3 % under it. Verdicts: `met` (the upper quartile
of the margins at most 0), `not met` (the lower quartile above 0), otherwise
`within spread` with the median's side. The geometric mean is judged on each
round's geometric mean over the single-threaded programs (round k of every
program together).
"""
import statistics

# (goal, variants it needs, margin from one round's ratios `r`)
GOALS = [
    ("path ≤ clang", ("pathprof-path", "clang-instr"),
     lambda r: r["pathprof-path"] - r["clang-instr"]),
    ("edge overhead ≤ 0.7 × clang's", ("pathprof-edge", "clang-instr"),
     lambda r: (r["pathprof-edge"] - 1) - 0.7 * (r["clang-instr"] - 1)),
    ("block overhead ≤ gcov's", ("pathprof-block", "gcc-coverage"),
     lambda r: r["pathprof-block"] - r["gcc-coverage"]),
    ("PPP ≤ clang", ("pathprof-ppp", "clang-instr"),
     lambda r: r["pathprof-ppp"] - r["clang-instr"]),
    ("PPP overhead ≤ ½ path's, where path mode hashes", ("pathprof-ppp", "pathprof-path"),
     lambda r: (r["pathprof-ppp"] - 1) - 0.5 * (r["pathprof-path"] - 1)),
] + [
    # Continuous mode costs at most 3 % more CPU than the same build's default.
    (f"{mode} continuous ≤ 1.03 × {mode}", (f"pathprof-{mode}-continuous", f"pathprof-{mode}"),
     lambda r, m=mode: r[f"pathprof-{m}-continuous"] - 1.03 * r[f"pathprof-{m}"])
    for mode in ("block", "edge", "path")
]
HASHING_GOAL = GOALS[4][0]
# The share of path executions counted in hash tables above which a program
# counts as one where path mode hashes.
HASHING_SHARE = 0.01


def round_ratios(times):
    """Each round's ratio of every variant to the plain build of that round
    (gcc-coverage to gcc-plain when both were run): a list of dicts."""
    rounds = len(times["plain"])
    out = []
    for k in range(rounds):
        def base(v):
            if v == "gcc-coverage" and "gcc-plain" in times:
                return times["gcc-plain"][k]
            return times["plain"][k]
        out.append({v: ts[k] / base(v) for v, ts in times.items()})
    return out


def verdict(margins):
    """(median, lower quartile, upper quartile, verdict) of a goal's margins."""
    median = statistics.median(margins)
    if len(margins) < 2:
        q1 = q3 = median
    else:
        q1, _, q3 = statistics.quantiles(margins, n=4, method="inclusive")
    if q3 <= 0:
        said = "met"
    elif q1 > 0:
        said = "not met"
    else:
        said = "within spread (median " + ("met" if median <= 0 else "not met") + ")"
    return median, q1, q3, said


def geometric_rounds(per_program):
    """Round k's geometric mean of each variant's ratio over the programs
    given (`{program: round_ratios}`), for the variants all of them ran."""
    rounds = min(len(rs) for rs in per_program.values())
    common = set.intersection(*(set(rs[0]) for rs in per_program.values()))
    return [{v: statistics.geometric_mean([rs[k][v] for rs in per_program.values()]) for v in common}
            for k in range(rounds)]


def judge(per_program, single_threaded, hashing_share):
    """Every goal whose variants were run, on each program and on the
    geometric mean of the single-threaded ones: a list of dicts (goal,
    program, median, q1, q3, verdict). The PPP-against-path goal is judged
    only where path mode counted at least HASHING_SHARE of its path
    executions in hash tables (`hashing_share[program]`)."""
    rows = dict(per_program)
    single = {p: rs for p, rs in per_program.items() if p in single_threaded}
    if len(single) > 1:
        rows["geometric mean"] = geometric_rounds(single)
    judged = []
    for goal, needs, margin in GOALS:
        for program, rs in rows.items():
            if not rs or any(v not in rs[0] for v in needs):
                continue
            if goal == HASHING_GOAL:
                if program == "geometric mean" or hashing_share.get(program, 0) < HASHING_SHARE:
                    continue
            median, q1, q3, said = verdict([margin(r) for r in rs])
            judged.append({"goal": goal, "program": program, "median": median,
                           "q1": q1, "q3": q3, "verdict": said})
    return judged


def goals_table(judged):
    """`judge`'s rows as markdown lines."""
    lines = ["## The goals (margin: ratio points over the goal, per interleaved round)\n",
             "| goal | program | median margin | interquartile range | verdict |",
             "|---|---|---:|---|---|"]
    for j in judged:
        lines.append(f"| {j['goal']} | {j['program']} | {j['median']:+.3f} | "
                     f"{j['q1']:+.3f} … {j['q3']:+.3f} | {j['verdict']} |")
    lines.append("")
    return lines
