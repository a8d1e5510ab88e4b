//! Where the wall-clock time of one `pathprof cc` / `pathprof c++` /
//! `pathprof instrument` invocation goes, phase by phase (`--time-report`,
//! `PATHPROF_TIME_REPORT=1`).
//!
//! This module owns the phases (their names and order, [`Phase`]), a
//! table of time per phase ([`Timings`]) and how it is printed
//! ([`Timings::table`]), and the process's one recorder: off unless
//! [`enable`]d; then the pipeline (extraction, planning, instrumentation),
//! [`crate::simplify_early`], [`crate::optimize`], [`crate::write_object`]
//! and the driver (clang runs, bitcode, the link) add the time of each
//! phase they run ([`time`], [`span`], [`record`]), and the driver prints
//! [`take`]'s table at the end. Off, a phase costs one relaxed atomic load.
//!
//! In the per-compile route the phases inside clang are measured by the pass
//! plugin, which hands them to the `pathprof cc` that ran clang in a file
//! ([`PluginTimings`]): [`Timings::add_clang_run`] then splits the clang
//! process's wall time into its front end, the plugin's phases and code
//! generation.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// One phase of a build, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// clang on the sources: to bitcode on the whole-program route; with
    /// the pass plugin, up to the start of clang's pass pipeline (parsing,
    /// IR generation). Assembly files compiled by clang count here too.
    FrontEnd,
    /// Reading bitcode and linking it into one module.
    Bitcode,
    /// [`crate::EARLY_SIMPLIFICATION`].
    EarlySimplification,
    /// Every function's CFG and source lines ([`crate::extract`]).
    Extraction,
    /// Planning every function and making the map.
    Planning,
    /// Probe emission, registration, the map fragment in the module.
    Instrumentation,
    /// The `-O` level's pipeline after instrumentation.
    Optimisation,
    /// The object file.
    CodeGeneration,
    /// The final link (and the map it writes beside its output).
    Link,
}

const PHASES: usize = 9;

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; PHASES] = [
        Phase::FrontEnd,
        Phase::Bitcode,
        Phase::EarlySimplification,
        Phase::Extraction,
        Phase::Planning,
        Phase::Instrumentation,
        Phase::Optimisation,
        Phase::CodeGeneration,
        Phase::Link,
    ];

    /// The phase's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Phase::FrontEnd => "front end",
            Phase::Bitcode => "reading bitcode",
            Phase::EarlySimplification => "early simplification",
            Phase::Extraction => "CFG extraction",
            Phase::Planning => "planning",
            Phase::Instrumentation => "instrumentation",
            Phase::Optimisation => "optimisation",
            Phase::CodeGeneration => "code generation",
            Phase::Link => "link",
        }
    }
}

/// Wall-clock time per phase, and how many functions were planned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// `spent[phase as usize]`: the phase's time, `None` if it did not run.
    spent: [Option<Duration>; PHASES],
    /// Functions planned (summed over modules), `None` if none was planned.
    functions: Option<u64>,
}

impl Timings {
    const EMPTY: Timings = Timings {
        spent: [None; PHASES],
        functions: None,
    };

    /// Adds `time` to `phase`.
    pub fn add(&mut self, phase: Phase, time: Duration) {
        let spent = &mut self.spent[phase as usize];
        *spent = Some(spent.unwrap_or_default() + time);
    }

    /// The time spent in `phase`, if it ran.
    pub fn spent(&self, phase: Phase) -> Option<Duration> {
        self.spent[phase as usize]
    }

    /// Counts `n` functions planned.
    pub fn add_functions(&mut self, n: u64) {
        self.functions = Some(self.functions.unwrap_or(0) + n);
    }

    /// The functions planned, if any module was.
    pub fn functions(&self) -> Option<u64> {
        self.functions
    }

    /// Adds `other`'s times and functions to these.
    pub fn merge(&mut self, other: &Timings) {
        for phase in Phase::ALL {
            if let Some(time) = other.spent(phase) {
                self.add(phase, time);
            }
        }
        if let Some(n) = other.functions {
            self.add_functions(n);
        }
    }

    /// The time of all phases.
    pub fn sum(&self) -> Duration {
        self.spent.iter().flatten().sum()
    }

    /// Adds one clang process, run at `spawned` (the system clock) for
    /// `wall`: with the pass plugin's `plugin` timings, its front end is
    /// the time until clang's pipeline started, then come the plugin's
    /// phases, and code generation is the rest; without them (the plugin
    /// did not get that far), all of it is front end.
    pub fn add_clang_run(
        &mut self,
        spawned: SystemTime,
        wall: Duration,
        plugin: Option<&PluginTimings>,
    ) {
        let Some(plugin) = plugin else {
            self.add(Phase::FrontEnd, wall);
            return;
        };
        // Two processes' clocks meet here (the system clock's): clamped so
        // that the run's phases add up to its wall time.
        let inside = plugin.timings.sum();
        let front_end = plugin
            .pipeline_start
            .duration_since(spawned)
            .unwrap_or_default()
            .min(wall.saturating_sub(inside));
        self.add(Phase::FrontEnd, front_end);
        self.merge(&plugin.timings);
        let rest = wall.saturating_sub(front_end + inside);
        self.add(Phase::CodeGeneration, rest);
    }

    /// The table printed at the end of an invocation that took `total`:
    /// each phase that ran with its seconds and share of `total`, then the
    /// total and the functions planned.
    pub fn table(&self, total: Duration) -> String {
        const NAME: usize = 22;
        let mut out = String::from("pathprof: time report (wall clock):\n");
        for phase in Phase::ALL {
            if let Some(time) = self.spent(phase) {
                let share = if total.is_zero() {
                    0.0
                } else {
                    100.0 * time.as_secs_f64() / total.as_secs_f64()
                };
                out.push_str(&format!(
                    "  {:<NAME$}{:>9.3} s {:>5.1} %\n",
                    phase.name(),
                    time.as_secs_f64(),
                    share
                ));
            }
        }
        out.push_str(&format!(
            "  {:<NAME$}{:>9.3} s\n",
            "total",
            total.as_secs_f64()
        ));
        if let Some(n) = self.functions {
            out.push_str(&format!("  {:<NAME$}{n:>9}\n", "functions"));
        }
        out
    }
}

/// What the pass plugin measured inside one clang process (early
/// simplification, extraction, planning, instrumentation, optimisation),
/// handed to `pathprof cc` as JSON in the file named by
/// [`crate::pipeline::Settings::timings_file`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginTimings {
    /// When clang's pass pipeline started: its front end's end.
    pub pipeline_start: SystemTime,
    pub timings: Timings,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static RECORDED: Mutex<Timings> = Mutex::new(Timings::EMPTY);

/// Turns the process's recorder on.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether the recorder is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Runs `f`, adding its wall-clock time to `phase` when the recorder is on.
pub fn time<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
    let _span = span(phase);
    f()
}

/// Starts timing `phase` until the returned guard is dropped (when the
/// recorder is on).
pub fn span(phase: Phase) -> Span {
    Span(enabled().then(|| (phase, Instant::now())))
}

/// A phase being timed ([`span`]): its time is added when this drops.
#[must_use = "the phase is timed until this is dropped"]
pub struct Span(Option<(Phase, Instant)>);

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((phase, start)) = self.0 {
            let elapsed = start.elapsed();
            record(|t| t.add(phase, elapsed));
        }
    }
}

/// Applies `f` to the recorded timings when the recorder is on.
pub fn record(f: impl FnOnce(&mut Timings)) {
    if enabled() {
        f(&mut RECORDED.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// The timings recorded so far, leaving none.
pub fn take() -> Timings {
    std::mem::take(&mut RECORDED.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_table_lists_the_phases_that_ran_in_order() {
        let mut t = Timings::default();
        t.add(Phase::Link, ms(250));
        t.add(Phase::Planning, ms(500));
        t.add(Phase::Planning, ms(250));
        t.add_functions(7);
        t.add_functions(5);
        assert_eq!(t.sum(), ms(1000));
        assert_eq!(
            t.table(ms(2000)),
            "pathprof: time report (wall clock):\n\
             \x20 planning                  0.750 s  37.5 %\n\
             \x20 link                      0.250 s  12.5 %\n\
             \x20 total                     2.000 s\n\
             \x20 functions                    12\n"
        );
        // Nothing planned: no function count.
        let mut t = Timings::default();
        t.add(Phase::FrontEnd, ms(10));
        assert!(!t.table(ms(10)).contains("functions"));
    }

    #[test]
    fn a_clang_run_is_split_around_the_plugins_phases() {
        let spawned = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut inside = Timings::default();
        inside.add(Phase::EarlySimplification, ms(100));
        inside.add(Phase::Instrumentation, ms(200));
        inside.add(Phase::Optimisation, ms(300));
        inside.add_functions(3);
        let plugin = PluginTimings {
            pipeline_start: spawned + ms(400),
            timings: inside,
        };
        let mut t = Timings::default();
        t.add_clang_run(spawned, ms(1500), Some(&plugin));
        assert_eq!(t.spent(Phase::FrontEnd), Some(ms(400)));
        assert_eq!(t.spent(Phase::Optimisation), Some(ms(300)));
        assert_eq!(t.spent(Phase::CodeGeneration), Some(ms(500)));
        assert_eq!((t.sum(), t.functions()), (ms(1500), Some(3)));
        // Clocks that disagree never make a run longer or shorter than it was.
        let early = PluginTimings {
            pipeline_start: spawned - ms(5),
            ..plugin.clone()
        };
        let late = PluginTimings {
            pipeline_start: spawned + ms(9000),
            ..plugin.clone()
        };
        for p in [early, late] {
            let mut t = Timings::default();
            t.add_clang_run(spawned, ms(1500), Some(&p));
            assert_eq!(t.sum(), ms(1500), "{t:?}");
        }
        // Without the plugin's timings, the run is front end.
        let mut t = Timings::default();
        t.add_clang_run(spawned, ms(800), None);
        assert_eq!(t.sum(), ms(800));
        assert_eq!(t.spent(Phase::FrontEnd), Some(ms(800)));
    }

    #[test]
    fn plugin_timings_travel_as_json() {
        let mut timings = Timings::default();
        timings.add(Phase::Extraction, Duration::from_nanos(123_456_789));
        timings.add_functions(42);
        let sent = PluginTimings {
            pipeline_start: SystemTime::now(),
            timings,
        };
        let json = serde_json::to_string(&sent).unwrap();
        assert_eq!(serde_json::from_str::<PluginTimings>(&json).unwrap(), sent);
    }
}
