//! `pathprof p3 stats`, as text: renders [`pathprof_report::p3::Stats`], the
//! paper's hit counts of SBL, PBL and P3 for each K and the profitable
//! procedures (Afraz et al. 2015, section 4).

use pathprof_report::p3::Stats;
use std::fmt::Write as _;

/// The text form: the hit-count table, then the profitable procedures.
pub fn text(s: &Stats) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Hit counts (probe executions on this profile's input; PBL and P3: the slowest copy)"
    );
    if let Some(placed) = s.sbl_trained_placement {
        let _ = writeln!(
            out,
            "PBL and P3 planned by the build's training run ({} of {} functions trained); SBL is \
             path mode as built; one copy with the training's spanning trees: {placed} hits",
            s.trained_functions, s.functions
        );
    }
    let _ = writeln!(
        out,
        "{:>6} {:>14} {:>14} {:>14} {:>9} {:>9} {:>10}  P3 per copy",
        "copies", "SBL", "PBL", "P3", "PBL red.", "P3 red.", "P3 vs PBL"
    );
    for r in &s.rows {
        let vs_pbl = match r.pbl {
            0 => "-".to_string(),
            p => percent(1.0 - r.p3 as f64 / p as f64),
        };
        let per_copy: Vec<String> = r.p3_per_copy.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "{:>6} {:>14} {:>14} {:>14} {:>9} {:>9} {:>10}  {}",
            r.copies,
            r.sbl,
            r.pbl,
            r.p3,
            percent(r.pbl_reduction),
            percent(r.p3_reduction),
            vs_pbl,
            per_copy.join(" ")
        );
    }
    let _ = writeln!(out);
    hottest_text(s, &mut out);
    let counts: Vec<String> = s
        .rows
        .iter()
        .map(|r| format!("{} at K={}", r.profitable, r.copies))
        .collect();
    let _ = writeln!(
        out,
        "Profitable procedures (partitioned into several tasks; tasks per K below) of {} functions: {}",
        s.functions,
        counts.join(", ")
    );
    if s.profitable.is_empty() {
        return out;
    }
    let header: Vec<String> = s.rows.iter().map(|r| format!("K={}", r.copies)).collect();
    let _ = writeln!(
        out,
        "{:>10}  {}  function",
        "call sites",
        header
            .iter()
            .map(|h| format!("{h:>5}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for p in &s.profitable {
        let tasks: Vec<String> = p.tasks.iter().map(|t| format!("{t:>5}")).collect();
        let sites = p.call_sites.map_or("many".to_string(), |n| n.to_string());
        let _ = writeln!(out, "{sites:>10}  {}  {}", tasks.join(" "), p.name);
    }
    out
}

/// The hottest functions: each one's SBL hits, its share of them, and its
/// hits in the P3 copy where it has the most, per K.
fn hottest_text(s: &Stats, out: &mut String) {
    if s.hottest.is_empty() {
        return;
    }
    let total = s.rows.first().map_or(0, |r| r.sbl);
    let _ = writeln!(
        out,
        "Hottest functions (SBL hits, their share, and P3's most in one copy per K)"
    );
    let header: Vec<String> = s
        .rows
        .iter()
        .map(|r| format!("{:>14}", format!("K={}", r.copies)))
        .collect();
    let _ = writeln!(
        out,
        "{:>14} {:>6} {:>10} {}  function",
        "SBL",
        "share",
        "call sites",
        header.join(" ")
    );
    for h in &s.hottest {
        let share = match total {
            0 => "-".to_string(),
            t => percent(h.sbl as f64 / t as f64),
        };
        let per_k: Vec<String> = h.p3_max.iter().map(|n| format!("{n:>14}")).collect();
        let sites = h.call_sites.map_or("many".to_string(), |n| n.to_string());
        let _ = writeln!(
            out,
            "{:>14} {share:>6} {sites:>10} {}  {}",
            h.sbl,
            per_k.join(" "),
            h.name
        );
    }
    let _ = writeln!(out);
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}
