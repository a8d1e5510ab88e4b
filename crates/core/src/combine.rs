//! Combining map fragments and their profile sections into one map and one
//! profile, so that every report reads a program, a library or a whole test
//! suite the way it reads one module.
//!
//! Each instrumented module (a translation unit, or a `--whole-program`
//! program) has its own map fragment and its own section in a profile file,
//! keyed by the fragment's build id. Combining puts all functions in one list
//! with one file table. One source function compiled into several modules
//! (a C++ inline function or template instance, a `static inline` function of
//! a header) appears once: functions with the same linkage name, source
//! position, shape and counter layout are one function, and their counts add
//! up, as llvm-cov adds a header's instances. A function whose callers give
//! its entry count is first given a count of its own, in its fragment
//! ([`crate::materialize`]).

use crate::hash::Fnv64;
use crate::map::{MapFile, MapFunction};
use crate::profile::{mode_number, ProfileError};
use pathprof_format::{RawFunction, RawProfile};
use std::collections::HashMap;

/// Fragments combined with the sections of a profile.
#[derive(Debug)]
pub struct Combined {
    /// One map over every fragment (its build id: the fragment's own for one
    /// fragment, else a digest of all of theirs).
    pub map: MapFile,
    /// The counts of every fragment's section, renumbered to `map`'s
    /// functions, with the facts of the sections holding a `main` summed (each
    /// process runs one program), or where none does, for each fact the
    /// largest any section records (a library: every process that loaded it
    /// wrote its section).
    pub raw: RawProfile,
    /// Each `main` of `map` with the processes and fork children of the
    /// sections holding it (one program's, or those of the programs built
    /// from one `main`): `main` should be entered once per process that was
    /// not forked.
    pub mains: Vec<Main>,
    /// How many fragments had a section in the profile.
    pub matched: usize,
    /// For each function of `map`, the executables and libraries its
    /// fragments' sections were loaded from (sorted, each once; empty for a
    /// function whose builds never ran): which program ran which build
    /// where one source function was built in two shapes.
    pub objects: Vec<Vec<String>>,
    /// Functions of `map` whose callers gave their entry counts
    /// ([`crate::callers`]; `map` counts them as their own) where that count
    /// may be too high, with the account to add to their imbalance.
    pub entry_doubts: Vec<(u32, crate::derive::Unbalanced)>,
}

/// What makes functions of two modules one source function: linkage name,
/// shape hash, counter layout identity, source file name and line.
type SameFunction = (String, u64, u64, Option<String>, Option<u32>);

/// A `main` of the combined map and how many processes of the programs
/// holding it wrote counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Main {
    /// Its index among the combined map's functions.
    pub function: u32,
    pub processes: u64,
    pub forked: u64,
}

/// Combines `fragments` (at least one) with the `sections` of a profile.
/// Fragments of different modes cannot be read together. A fragment without
/// a section never ran in that profile (its counts are zero). Names are for
/// messages.
pub fn combine(
    fragments: &[MapFile],
    sections: &[RawProfile],
    map_name: &str,
    profile_name: &str,
) -> Result<Combined, ProfileError> {
    let first = fragments.first().expect("at least one fragment");
    if let Some(other) = fragments.iter().find(|f| f.mode != first.mode) {
        return Err(ProfileError::MixedModes {
            map: map_name.into(),
            first: first.mode.name(),
            other: other.mode.name(),
        });
    }
    let mut map = MapFile {
        mode: first.mode,
        build_id: combined_id(fragments),
        files: Vec::new(),
        file_digests: Vec::new(),
        functions: Vec::new(),
        atomic: fragments.iter().all(|f| f.atomic),
        per_thread: fragments.iter().all(|f| f.per_thread),
        // One build's P3 record; a combination of builds is no P3 build.
        p3: match fragments {
            [one] => one.p3.clone(),
            _ => None,
        },
    };
    let mut file_index: HashMap<String, u32> = HashMap::new();
    let mut function_index: HashMap<SameFunction, u32> = HashMap::new();
    let mut raw_parts: Vec<RawProfile> = Vec::new();
    let mut matched: Vec<&RawProfile> = Vec::new();
    let mut mains: Vec<Main> = Vec::new();
    let mut main_sections: Vec<&RawProfile> = Vec::new();
    let mut entry_doubts: Vec<(u32, crate::derive::Unbalanced)> = Vec::new();
    let mut objects: Vec<Vec<String>> = Vec::new();
    let found: Vec<Option<&RawProfile>> = fragments
        .iter()
        .map(|f| sections.iter().find(|s| s.build_id == f.build_id))
        .collect();
    let materialized = fragments
        .iter()
        .zip(&found)
        .map(|(f, &s)| crate::materialize::materialize(f, s, map_name, profile_name))
        .collect::<Result<Vec<_>, _>>()?;
    for ((original, &section), own) in fragments.iter().zip(&found).zip(&materialized) {
        let (fragment, section) = match own {
            Some(m) => (&m.map, m.section.as_ref()),
            None => (original, section),
        };
        let files: Vec<u32> = fragment
            .files
            .iter()
            .enumerate()
            .map(|(i, name)| {
                *file_index.entry(name.clone()).or_insert_with(|| {
                    map.files.push(name.clone());
                    map.file_digests
                        .push(fragment.file_digests.get(i).copied().flatten());
                    (map.files.len() - 1) as u32
                })
            })
            .collect();
        let renumber: Vec<u32> = fragment
            .functions
            .iter()
            .map(|f| {
                let key = (
                    crate::map::without_rename_suffixes(&f.name).to_string(),
                    f.hash,
                    crate::map::schema::layout_identity(&f.layout),
                    fragment.file_name(f.file).map(str::to_string),
                    f.line,
                );
                let i = *function_index.entry(key).or_insert_with(|| {
                    map.functions.push(with_files(f, &files));
                    (map.functions.len() - 1) as u32
                });
                map.functions[i as usize].entries_by_callers |= f.counted_by_callers();
                i
            })
            .collect();
        if let Some(m) = own {
            entry_doubts.extend(m.doubts.iter().map(|&(i, n)| (renumber[i], n)));
        }
        let Some(section) = section else {
            continue;
        };
        objects.resize(map.functions.len(), Vec::new());
        for &i in &renumber {
            objects[i as usize].extend(section.objects.iter().cloned());
        }
        if section.mode != mode_number(fragment.mode) {
            return Err(ProfileError::Mode {
                profile: profile_name.into(),
                map: map_name.into(),
                found: section.mode.to_string(),
                expected: fragment.mode.name(),
            });
        }
        let mut part = section.clone();
        for f in &mut part.functions {
            let Some(&to) = renumber.get(f.index as usize) else {
                return Err(ProfileError::UnknownFunction {
                    profile: profile_name.into(),
                    map: map_name.into(),
                    index: f.index,
                });
            };
            f.index = to;
        }
        part.functions.sort_by_key(|f| f.index);
        if let Some(i) = fragment.functions.iter().position(|f| f.name == "main") {
            let function = renumber[i];
            // Programs built from one `main` (another file's macros
            // differing) count it as one function: their processes add up.
            match mains.iter_mut().find(|m| m.function == function) {
                Some(m) => {
                    m.processes = m.processes.saturating_add(section.processes);
                    m.forked = m.forked.saturating_add(section.forked);
                }
                None => mains.push(Main {
                    function,
                    processes: section.processes,
                    forked: section.forked,
                }),
            }
            main_sections.push(section);
        }
        part.build_id = map.build_id;
        // Copies of one source function that LLVM renamed in one module (a
        // whole-program link's `f` and `f.3`) are one function: each copy's
        // records go into a part of their own, which the merge adds.
        let copies = split_copies(&mut part);
        raw_parts.push(part);
        raw_parts.extend(copies);
        matched.push(section);
    }
    let facts = facts_of(&main_sections, &matched);
    let mut raw = match raw_parts.split_first() {
        Some((head, rest)) => {
            let mut raw = head.clone();
            for part in rest {
                raw.merge(part).expect("parts share build id and mode");
            }
            raw
        }
        None => RawProfile::default(),
    };
    raw.build_id = map.build_id;
    raw.mode = mode_number(map.mode);
    (raw.processes, raw.forked, raw.threads) = facts;
    objects.resize(map.functions.len(), Vec::new());
    for o in &mut objects {
        o.sort();
        o.dedup();
    }
    Ok(Combined {
        map,
        raw,
        mains,
        matched: matched.len(),
        objects,
        entry_doubts,
    })
}

/// Takes out of `part` (its records sorted by function) every record of a
/// function that already has one, into parts of their own (the same
/// section but for its records), each holding a function at most once: the
/// k-th record of a function goes into the k-th part.
fn split_copies(part: &mut RawProfile) -> Vec<RawProfile> {
    let records = std::mem::take(&mut part.functions);
    let mut layers: Vec<Vec<RawFunction>> = Vec::new();
    let (mut last, mut depth) = (None, 0);
    for f in records {
        depth = if last == Some(f.index) { depth + 1 } else { 0 };
        last = Some(f.index);
        if layers.len() == depth {
            layers.push(Vec::new());
        }
        layers[depth].push(f);
    }
    let mut layers = layers.into_iter();
    let first = layers.next().unwrap_or_default();
    // `part` holds no records here: each copy clones only the section's facts.
    let copies = layers
        .map(|functions| RawProfile {
            functions,
            ..part.clone()
        })
        .collect();
    part.functions = first;
    copies
}

/// The process facts of combined sections (see [`Combined::raw`]): those of
/// the sections holding a `main` added up, else the largest of any section.
fn facts_of(main_sections: &[&RawProfile], sections: &[&RawProfile]) -> (u64, u64, u64) {
    if !main_sections.is_empty() {
        return main_sections.iter().fold((0, 0, 0), |(p, f, t), s| {
            (
                p.saturating_add(s.processes),
                f.saturating_add(s.forked),
                t.saturating_add(s.threads),
            )
        });
    }
    sections.iter().fold((0, 0, 0), |(p, f, t), s| {
        (p.max(s.processes), f.max(s.forked), t.max(s.threads))
    })
}

/// `f` with its file indices renumbered through `files`.
fn with_files(f: &MapFunction, files: &[u32]) -> MapFunction {
    let mut g = f.clone();
    let at = |i: u32| files.get(i as usize).copied().unwrap_or(i);
    g.file = g.file.map(at);
    for b in &mut g.blocks {
        for l in &mut b.lines {
            l.file = at(l.file);
        }
    }
    g
}

/// The build id of a combination: the fragment's own for one, else a digest
/// of the sorted ids.
fn combined_id(fragments: &[MapFile]) -> u64 {
    if let [one] = fragments {
        return one.build_id;
    }
    let mut ids: Vec<u64> = fragments.iter().map(|f| f.build_id).collect();
    ids.sort_unstable();
    let mut h = Fnv64::new();
    for id in ids {
        h.write_u64(id);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::{Cfg, Mode};
    use pathprof_format::RawFunction;

    /// A block-mode function `name` of one diamond, counting every block.
    fn diamond(name: &str) -> MapFunction {
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        MapFunction {
            name: name.into(),
            display_name: None,
            file: Some(0),
            line: Some(3),
            hash: cfg.shape_hash(),
            blocks: vec![Default::default(); 4],
            layout: Layout::Block {
                slot_of_block: (0..4).map(Some).collect(),
                calls_slot: None,
            },
            cfg,
            entry_calls: Vec::new(),
            entries_by_callers: false,
        }
    }

    /// LLVM renames the copies of a header's `static inline` function that a
    /// whole-program link brings together (`get`, `get.3`); they are one
    /// source function, as the copies in separately built objects are.
    #[test]
    fn renamed_copies_in_one_module_are_one_function() {
        let functions = vec![diamond("get"), diamond("get.3"), diamond("get.12")];
        let map = MapFile {
            mode: Mode::Block,
            build_id: MapFile::compute_build_id(Mode::Block, &[], &functions),
            files: vec!["mem.h".into()],
            file_digests: vec![None],
            functions,
            atomic: false,
            per_thread: true,
            p3: None,
        };
        let record = |index: u32, slots: Vec<u64>| RawFunction {
            index,
            hash: map.functions[0].hash,
            slots,
            ..Default::default()
        };
        let section = RawProfile {
            build_id: map.build_id,
            mode: mode_number(Mode::Block),
            processes: 1,
            functions: vec![
                record(0, vec![1, 1, 0, 1]),
                record(1, vec![2, 0, 2, 2]),
                record(2, vec![4, 4, 0, 4]),
            ],
            ..Default::default()
        };
        let combined = combine(&[map], &[section], "m", "p").unwrap();
        assert_eq!(combined.map.functions.len(), 1);
        assert_eq!(combined.map.functions[0].shown_name(), "get");
        assert_eq!(combined.raw.functions.len(), 1);
        assert_eq!(combined.raw.functions[0].slots, vec![7, 5, 2, 7]);
        assert_eq!(combined.raw.processes, 1);
    }
}
