//! The model of `pathprof p3 stats` (`"format": "pathprof-p3-stats"`,
//! version 1): the paper's evaluation for one program and one input (Afraz et al. 2015, section 4): for each K, the hit counts (probe
//! executions, computed from a path profile of the input, by
//! `pathprof_core::p3::hit_counts`) of sequential Ball-Larus (SBL), whole
//! functions distributed over K copies (PBL) and P3, each strategy's the
//! largest over its copies (Figures 5–7), with the reductions; and the
//! profitable procedures, partitioned into more than one task (Table 1).

use crate::load::Loaded;
use anyhow::{Context as _, Result};
use pathprof_core::map::P3Build;
use pathprof_core::p3::{hit_counts, sbl_hits, HitCounts, MapProgram, Strategy};
use pathprof_core::FuncId;
use serde::Serialize;

/// The statistics, as `--format json` writes them.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    pub format: &'static str,
    pub version: u32,
    /// Functions in the program.
    pub functions: usize,
    /// Functions the build's training run (`--p3-train`) gave paths; 0:
    /// the paper's plan, by probe counts.
    pub trained_functions: usize,
    /// With training: the hits of one copy planned as the trained copies
    /// are (its spanning trees from the training's edge counts), to tell
    /// what partitioning gains from what placement gains; `null` without.
    pub sbl_trained_placement: Option<u64>,
    /// One row per K asked for.
    pub rows: Vec<Row>,
    /// Functions profitable for some K, with their tasks per K (in `rows`'
    /// order).
    pub profitable: Vec<Profitable>,
    /// The functions with the most SBL hits, most first (at most
    /// [`HOTTEST`]): what bounds the slowest copy.
    pub hottest: Vec<Hot>,
}

/// How many of the hottest functions [`Stats::hottest`] lists.
pub const HOTTEST: usize = 10;

/// One of the functions with the most probe executions.
#[derive(Clone, Debug, Serialize)]
pub struct Hot {
    pub name: String,
    /// `null`: called from outside the program or through a pointer.
    pub call_sites: Option<u32>,
    /// Its hits under SBL.
    pub sbl: u64,
    /// For each K of `rows`: its hits in the P3 copy where it has the most.
    pub p3_max: Vec<u64>,
}

/// The hit counts for one K.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub copies: usize,
    pub sbl: u64,
    /// The slowest copy's hits.
    pub pbl: u64,
    pub p3: u64,
    pub pbl_per_copy: Vec<u64>,
    pub p3_per_copy: Vec<u64>,
    /// `1 - PBL/SBL` and `1 - P3/SBL` (0 when SBL has no hits).
    pub pbl_reduction: f64,
    pub p3_reduction: f64,
    /// Functions P3 partitions into more than one task.
    pub profitable: usize,
}

/// A function P3 partitions for some K.
#[derive(Clone, Debug, Serialize)]
pub struct Profitable {
    pub name: String,
    /// `null`: called from outside the program or through a pointer.
    pub call_sites: Option<u32>,
    /// Its tasks for each K of `rows`.
    pub tasks: Vec<usize>,
}

/// The statistics of `loaded` (a path-mode profile read with a P3 build's
/// map) for each K of `copies`.
pub fn stats(loaded: &Loaded, copies: &[usize]) -> Result<Stats> {
    let profile: Vec<Vec<(u64, u64)>> = loaded
        .counts
        .iter()
        .map(|c| c.paths.iter().map(|p| (p.id, p.count)).collect())
        .collect();
    let (program, _) = MapProgram::recorded(&loaded.map)
        .with_context(|| format!("{}", loaded.map_path.display()))?;
    let hits = |k: usize, strategy| -> Result<(HitCounts, _)> {
        let plan = program.plan(k, strategy);
        let hits = hit_counts(&program.functions, &plan, &profile)
            .context("regenerating the profile's paths (a profile of another build?)")?;
        Ok((hits, plan))
    };
    let sbl = sbl_hits(&program.functions, &profile)
        .context("regenerating the profile's paths (a profile of another build?)")?;
    let trained_functions = program
        .functions
        .iter()
        .filter(|f| !f.trained.is_empty())
        .count();
    let sbl_trained_placement = match trained_functions {
        0 => None,
        _ => Some(hits(1, Strategy::Pbl)?.0.max()),
    };
    let mut rows = Vec::with_capacity(copies.len());
    let mut tasks: Vec<Vec<usize>> = vec![Vec::new(); program.functions.len()];
    let mut p3_max: Vec<Vec<u64>> = vec![Vec::new(); program.functions.len()];
    for &k in copies {
        let (pbl, _) = hits(k, Strategy::Pbl)?;
        let (p3, plan) = hits(k, Strategy::P3)?;
        for (m, f) in p3_max.iter_mut().zip(&p3.per_function) {
            m.push(f.iter().copied().max().unwrap_or(0));
        }
        for (i, t) in tasks.iter_mut().enumerate() {
            let f = FuncId::new(i);
            t.push(if plan.is_profitable(f) {
                plan.tasks(f).tasks.len()
            } else {
                1
            });
        }
        let reduction = |h: &HitCounts| match sbl.max() {
            0 => 0.0,
            s => 1.0 - h.max() as f64 / s as f64,
        };
        rows.push(Row {
            copies: k,
            sbl: sbl.max(),
            pbl: pbl.max(),
            p3: p3.max(),
            pbl_reduction: reduction(&pbl),
            p3_reduction: reduction(&p3),
            pbl_per_copy: pbl.per_copy,
            p3_per_copy: p3.per_copy,
            profitable: plan.profitable().count(),
        });
    }
    let call_sites = &loaded.map.p3.as_ref().expect("recorded").call_sites;
    let sites = |i: usize| Some(call_sites[i]).filter(|&n| n != P3Build::MANY);
    let mut by_hits: Vec<usize> = (0..program.functions.len())
        .filter(|&i| sbl.per_function[i][0] > 0)
        .collect();
    by_hits.sort_by_key(|&i| std::cmp::Reverse(sbl.per_function[i][0]));
    let hottest = by_hits
        .into_iter()
        .take(HOTTEST)
        .map(|i| Hot {
            name: loaded.name(i).to_string(),
            call_sites: sites(i),
            sbl: sbl.per_function[i][0],
            p3_max: std::mem::take(&mut p3_max[i]),
        })
        .collect();
    let profitable = tasks
        .into_iter()
        .enumerate()
        .filter(|(_, t)| t.iter().any(|&n| n > 1))
        .map(|(i, tasks)| Profitable {
            name: loaded.name(i).to_string(),
            call_sites: sites(i),
            tasks,
        })
        .collect();
    Ok(Stats {
        format: "pathprof-p3-stats",
        version: 1,
        functions: program.functions.len(),
        trained_functions,
        sbl_trained_placement,
        rows,
        profitable,
        hottest,
    })
}
