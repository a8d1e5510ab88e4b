//! The indexed profile (`.ppdata`): every profiled function's counts keyed by
//! linkage name, source file and CFG shape, with the program's profile
//! summary, in one self-contained file (as `llvm-profdata merge` makes
//! `.profdata`), so that an optimised build needs neither the instrumented
//! binaries nor their maps. Indexes merge, with weights.
//!
//! On disk: the [`crate::deflated`] frame, magic `pathprof-index`, version
//! [`INDEX_VERSION`], around the JSON of [`Index`]. Reading checks the frame
//! and that every function's counts fit its declared shape, and never panics.

use super::edges::{FunctionProfile, ProfiledPath};
use super::summary::Summary;
use crate::dag::DagEdgeKind;
use crate::deflated::{self, FrameError};
use crate::derive::FunctionCounts;
use crate::layout::Layout;
use crate::map::{same_file, without_rename_suffixes, MapFile, MapFunction};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The index format version this code reads and writes.
pub const INDEX_VERSION: u32 = 1;
const INDEX_MAGIC: &str = "pathprof-index";

/// One function's counts, as its name, file and shape identify it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedFunction {
    /// Linkage name, without LLVM's renaming suffixes.
    pub name: String,
    /// The source file of its definition, as the map names it.
    pub file: Option<String>,
    /// Its CFG's [`crate::Cfg::shape_hash`].
    pub hash: u64,
    /// How many blocks and edges that CFG has.
    pub num_blocks: u32,
    pub num_edges: u32,
    pub profile: FunctionProfile,
}

/// A whole profile, indexed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// The executables and shared libraries whose runs made it (file names).
    pub programs: Vec<String>,
    /// Sorted by name, file and hash; one entry per key.
    pub functions: Vec<IndexedFunction>,
    pub summary: Summary,
    /// Lookups by name: indices into `functions`.
    #[serde(skip)]
    by_name: HashMap<String, Vec<usize>>,
}

/// What an index holds for one function of a build.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Counts of a function of that name, file and shape.
    Found(&'a IndexedFunction),
    /// A function of that name (in that file) whose shape differs: it
    /// changed since the profile.
    Changed,
    /// Nothing of that name: a function the profiled runs never loaded.
    Missing,
}

/// Why an index could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path} is not a pathprof indexed profile (.ppdata, written by `pathprof index`)")]
    NotAnIndex { path: String },
    #[error("{path} is a version {found} indexed profile; this pathprof reads version {INDEX_VERSION}: write it again with `pathprof index`")]
    Version { path: String, found: String },
    #[error("{path} is damaged (its checksum does not match its contents: truncated or edited?); write it again with `pathprof index`")]
    Checksum { path: String },
    #[error("{path} is damaged: {detail}; write it again with `pathprof index`")]
    Malformed { path: String, detail: String },
}

/// Whether `bytes` start like an indexed profile.
pub fn is_index(bytes: &[u8]) -> bool {
    bytes.starts_with(INDEX_MAGIC.as_bytes())
}

/// `counts`' executed paths in CFG terms (path mode; none in the others): a
/// path that ends with a backedge or cut takes it last.
fn profiled_paths(f: &MapFunction, counts: &FunctionCounts) -> Vec<ProfiledPath> {
    let Layout::Path { dag, .. } = &f.layout else {
        return Vec::new();
    };
    counts
        .paths
        .iter()
        .filter_map(|p| {
            let start = p.path.blocks(dag).first()?.0;
            let edges = p
                .path
                .edges
                .iter()
                .filter_map(|&e| match dag.edge(e).kind {
                    DagEdgeKind::Cfg(ce) | DagEdgeKind::BackExit(ce) => Some(ce.0),
                    _ => None,
                })
                .collect();
            Some(ProfiledPath {
                start,
                edges,
                count: p.count,
            })
        })
        .collect()
}

impl Index {
    /// The index of one program's map and the counts derived for each of its
    /// functions; `programs` names what ran.
    pub fn of_program(map: &MapFile, counts: &[FunctionCounts], programs: Vec<String>) -> Self {
        let functions = map
            .functions
            .iter()
            .zip(counts)
            .map(|(f, c)| IndexedFunction {
                name: without_rename_suffixes(&f.name).to_string(),
                file: f.file.and_then(|i| map.files.get(i as usize)).cloned(),
                hash: f.hash,
                num_blocks: f.cfg.num_blocks() as u32,
                num_edges: f.cfg.edges().len() as u32,
                profile: FunctionProfile::of(&f.cfg, c).with_paths(profiled_paths(f, c)),
            })
            .collect();
        Self::from_parts(programs, functions)
    }

    /// Indexes merged: each one's counts times its weight, the counts of
    /// one function (name, file, shape) added.
    pub fn merge(weighted: &[(u64, &Index)]) -> Self {
        let mut programs: Vec<String> = Vec::new();
        let mut functions: Vec<IndexedFunction> = Vec::new();
        for (weight, index) in weighted {
            programs.extend(index.programs.iter().cloned());
            functions.extend(index.functions.iter().map(|f| IndexedFunction {
                profile: f.profile.scaled(*weight),
                ..f.clone()
            }));
        }
        Self::from_parts(programs, functions)
    }

    /// The index of `functions`, one per key (the counts of a repeated key
    /// added), sorted, with their summary.
    fn from_parts(mut programs: Vec<String>, functions: Vec<IndexedFunction>) -> Self {
        programs.sort();
        programs.dedup();
        let mut by_key: BTreeMap<(String, Option<String>, u64), IndexedFunction> = BTreeMap::new();
        for f in functions {
            let key = (f.name.clone(), f.file.clone(), f.hash);
            match by_key.get_mut(&key) {
                Some(known) if known.num_edges == f.num_edges => known.profile.add(&f.profile),
                Some(_) => {} // one shape hash, two sizes: keep the first
                None => {
                    by_key.insert(key, f);
                }
            }
        }
        let functions: Vec<IndexedFunction> = by_key.into_values().collect();
        let summary = Summary::of(functions.iter().map(|f| {
            let internal = f.profile.blocks.get(1..).unwrap_or(&[]);
            (f.profile.entry, internal)
        }));
        let mut index = Index {
            programs,
            functions,
            summary,
            by_name: HashMap::new(),
        };
        index.build_lookup();
        index
    }

    fn build_lookup(&mut self) {
        self.by_name.clear();
        for (i, f) in self.functions.iter().enumerate() {
            self.by_name.entry(f.name.clone()).or_default().push(i);
        }
    }

    /// What the index holds for the function `name` defined in `file` with
    /// shape `hash`: the counts of the function of that name in that file
    /// (by file name, wherever it was built; any file where one side was
    /// built without debug information) and shape. Another shape there
    /// has changed; a function of that name only in other files is another
    /// function (a `static` one of the same name), whose counts are never
    /// taken.
    pub fn lookup(&self, name: &str, file: Option<&str>, hash: u64) -> Lookup<'_> {
        let name = without_rename_suffixes(name);
        let Some(candidates) = self.by_name.get(name) else {
            return Lookup::Missing;
        };
        // A side without debug information (built without `-g`) knows no
        // file: its name and shape alone decide.
        let in_file = |f: &IndexedFunction| match (file, f.file.as_deref()) {
            (Some(a), Some(b)) => same_file(a, b),
            _ => true,
        };
        let local: Vec<&IndexedFunction> = candidates
            .iter()
            .map(|&i| &self.functions[i])
            .filter(|f| in_file(f))
            .collect();
        let shaped: Vec<&IndexedFunction> =
            local.iter().copied().filter(|f| f.hash == hash).collect();
        match (shaped.as_slice(), local.is_empty()) {
            ([one], _) => Lookup::Found(one),
            (_, true) => Lookup::Missing,
            ([], false) => Lookup::Changed,
            // One name and shape in two files of one name (two directories):
            // which one this is cannot be told.
            _ => Lookup::Missing,
        }
    }

    /// The index's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("an index serializes");
        deflated::encode(INDEX_MAGIC, INDEX_VERSION, &json)
    }

    /// Reads an index's bytes; `path` is only used in messages.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Self, IndexError> {
        let path_s = || path.to_string();
        let (json, rest) =
            deflated::decode(bytes, INDEX_MAGIC, INDEX_VERSION).map_err(|e| match e {
                FrameError::NotThisKind => IndexError::NotAnIndex { path: path_s() },
                FrameError::Version(found) => IndexError::Version {
                    path: path_s(),
                    found,
                },
                FrameError::Checksum => IndexError::Checksum { path: path_s() },
                FrameError::Malformed(detail) => IndexError::Malformed {
                    path: path_s(),
                    detail,
                },
            })?;
        let malformed = |detail: String| IndexError::Malformed {
            path: path_s(),
            detail,
        };
        if !rest.is_empty() {
            return Err(malformed(format!("{} bytes follow the index", rest.len())));
        }
        let mut index: Index =
            serde_json::from_slice(&json).map_err(|e| malformed(e.to_string()))?;
        for f in &index.functions {
            let p = &f.profile;
            if p.blocks.len() != f.num_blocks as usize || p.edges.len() != f.num_edges as usize {
                return Err(malformed(format!(
                    "the counts of {} do not fit its {} blocks and {} edges",
                    f.name, f.num_blocks, f.num_edges
                )));
            }
            let fits = |path: &ProfiledPath| {
                path.start < f.num_blocks && path.edges.iter().all(|&e| e < f.num_edges)
            };
            if !p.paths.iter().all(fits) {
                return Err(malformed(format!(
                    "a path of {} leaves its {} blocks and {} edges",
                    f.name, f.num_blocks, f.num_edges
                )));
            }
        }
        index.build_lookup();
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, file: &str, hash: u64, entry: u64) -> IndexedFunction {
        IndexedFunction {
            name: name.into(),
            file: Some(file.into()),
            hash,
            num_blocks: 2,
            num_edges: 1,
            profile: FunctionProfile {
                entry,
                blocks: vec![entry, entry],
                edges: vec![Some(entry)],
                paths: Vec::new(),
            },
        }
    }

    fn index(functions: Vec<IndexedFunction>) -> Index {
        Index::from_parts(vec!["prog".into()], functions)
    }

    #[test]
    fn looks_up_by_name_file_and_shape() {
        let i = index(vec![
            function("helper", "/src/a.c", 1, 10),
            function("helper", "/src/b.c", 2, 20),
            function("main", "/src/a.c", 3, 1),
        ]);
        let entry = |l: Lookup<'_>| match l {
            Lookup::Found(f) => Some(f.profile.entry),
            _ => None,
        };
        assert_eq!(
            entry(i.lookup("helper", Some("/elsewhere/b.c"), 2)),
            Some(20)
        );
        assert_eq!(entry(i.lookup("helper.llvm.77", Some("a.c"), 1)), Some(10));
        assert_eq!(i.lookup("helper", Some("a.c"), 2), Lookup::Changed);
        assert_eq!(i.lookup("main", Some("a.c"), 4), Lookup::Changed);
        assert_eq!(i.lookup("other", Some("a.c"), 1), Lookup::Missing);
        // In a third file it is another function, whatever its shape.
        assert_eq!(i.lookup("helper", Some("c.c"), 2), Lookup::Missing);
        assert_eq!(i.lookup("main", Some("b.c"), 3), Lookup::Missing);
        // Built without -g (no file): the name and shape decide, when they
        // tell one function.
        assert_eq!(entry(i.lookup("main", None, 3)), Some(1));
        assert_eq!(entry(i.lookup("helper", None, 2)), Some(20));
    }

    #[test]
    fn merges_with_weights_and_round_trips() {
        let a = index(vec![function("f", "a.c", 1, 10)]);
        let b = index(vec![function("f", "a.c", 1, 1), function("g", "a.c", 2, 5)]);
        let m = Index::merge(&[(1, &a), (3, &b)]);
        assert_eq!(m.functions.len(), 2);
        assert_eq!(m.functions[0].profile.entry, 13);
        assert_eq!(m.functions[0].profile.edges, vec![Some(13)]);
        assert_eq!(m.summary.max_function_count, 15);
        let bytes = m.to_bytes();
        let back = Index::from_bytes(&bytes, "m.ppdata").unwrap();
        assert_eq!(back, m);
        assert!(matches!(back.lookup("g", Some("a.c"), 2), Lookup::Found(_)));
    }

    #[test]
    fn damaged_indexes_are_refused_with_a_reason() {
        let bytes = index(vec![function("f", "a.c", 1, 10)]).to_bytes();
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            let e = Index::from_bytes(&bytes[..cut], "x.ppdata").unwrap_err();
            assert!(e.to_string().contains("x.ppdata"), "{e}");
        }
        let e = Index::from_bytes(b"PPROFRAW....", "p.pprof").unwrap_err();
        assert!(matches!(e, IndexError::NotAnIndex { .. }), "{e}");
        // Counts that do not fit the shape they declare.
        let mut bad = index(vec![function("f", "a.c", 1, 10)]);
        bad.functions[0].num_edges = 5;
        let json = serde_json::to_vec(&bad).unwrap();
        let framed = deflated::encode(INDEX_MAGIC, INDEX_VERSION, &json);
        let e = Index::from_bytes(&framed, "x.ppdata").unwrap_err();
        assert!(e.to_string().contains("do not fit"), "{e}");
    }
}
