"""The machine a benchmark ran on, for its results: the CPU's name, cores
and caches, the kernel, the share of the run's CPU time the hypervisor
took from this guest (steal), and how the CPU forwards a counter's store to
its next increment (bench/renaming.c, the behaviour the probes' forms were
tuned for: docs/benchmarks.md).

CPU-time ratios from two machines are not comparable: on a CPU with a
32 KB first-level data cache xz's path mode pays more for its hash-table
path counters than on one with 48 KB, and where a CPU forwards a store
at once whatever its address's form (as the AMD EPYC with 32 KB does) the
form of a counter's address stops mattering. A results file says which
machine it is from, and how noisy the run was."""
import os
import platform
import subprocess
import tempfile
from pathlib import Path

RENAMING = Path(__file__).resolve().with_name("renaming.c")


def cpu_name():
    """The CPU's model name, as /proc/cpuinfo gives it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def caches():
    """CPU 0's caches by name (`L1d`, `L1i`, `L2`, `L3`) and size, from sysfs."""
    found = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        found[f"L{level}{suffix}"] = size
    return found


def store_forwarding(clang):
    """bench/renaming.c's lines on this CPU, built by `clang` (ns a round
    of one counter's increment, by the form of its address), or why there
    are none."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = str(Path(tmp) / "renaming")
        built = subprocess.run([clang, "-O2", str(RENAMING), "-o", exe],
                               capture_output=True, text=True)
        if built.returncode != 0:
            return [f"bench/renaming.c did not build: {built.stderr.strip()[:200]}"]
        run = subprocess.run([exe], capture_output=True, text=True)
        if run.returncode != 0:
            return [f"bench/renaming.c exited with status {run.returncode}: {run.stderr.strip()[:200]}"]
        return [line.rstrip() for line in run.stdout.splitlines() if line.strip()]


def cpu_ticks():
    """(steal, all) jiffies of the machine so far, from /proc/stat's `cpu` line."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0, 0
    # user nice system idle iowait irq softirq steal (guest time is in user).
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


class Steal:
    """The share of the machine's time the hypervisor took from the moment
    this is made: CPU-time ratios from a run with much steal swing more."""

    def __init__(self):
        self.start = cpu_ticks()

    def share(self):
        steal, total = cpu_ticks()
        elapsed = total - self.start[1]
        return (steal - self.start[0]) / elapsed if elapsed > 0 else 0.0


def facts(clang, steal):
    """What a results file records of the machine (JSON-ready), at the end
    of a run that made `steal` ([`Steal`]) when it began; `clang` builds
    bench/renaming.c."""
    return {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "caches": caches(),
        "kernel": platform.release(),
        "store_forwarding": store_forwarding(clang),
        "steal_share": steal.share(),
    }


def markdown(machine):
    """The results file's machine section, as markdown lines (`machine`:
    [`facts`])."""
    sizes = ", ".join(f"{name} {size}" for name, size in machine["caches"].items()) or "unknown"
    lines = ["## Machine\n",
             f"{machine['cpu']}, {machine['cores']} cores; caches: {sizes}; "
             f"Linux {machine['kernel']}. Steal (time the hypervisor took) during the run: "
             f"{100 * machine['steal_share']:.1f} % of the machine's time.\n",
             "A counter's increment in a loop (bench/renaming.c):\n", "```"]
    lines += machine["store_forwarding"]
    lines += ["```", ""]
    return lines
