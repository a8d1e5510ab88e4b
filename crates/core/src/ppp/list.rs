//! The interesting-path list: the file that tells `--mode=ppp` which paths to
//! number compactly (Vaswani et al. 2007). `pathprof interesting` writes it from a
//! training profile; a person or another tool may write or edit it too.
//!
//! # Format, version 1
//!
//! A JSON object, written with one path per line:
//!
//! ```text
//! {
//!   "format": "pathprof-interesting-paths",
//!   "version": 1,
//!   "paths": [
//!     {"function": "main", "file": "src/main.c", "shape": "8c2f0e4a9b1d3e57", "id": 3, "blocks": [0, 2, 5], "count": 1200},
//!     {"function": "_ZN3fmt5parseEPKc", "file": "src/fmt.cc", "shape": "01d4c3b2a5968778", "id": 0, "blocks": [0, 1]}
//!   ]
//! }
//! ```
//!
//! - `format` (required): `"pathprof-interesting-paths"`;
//! - `version` (required): 1; a later version is refused, not guessed at;
//! - `paths` (required): one entry per interesting path, in any order;
//!   duplicates count once. In each entry:
//!   - `function` (required): the function's linkage (mangled) name, as the
//!     map calls it;
//!   - `file` (required, `""` when unknown): its source file as the map names
//!     it. It tells apart functions of one linkage name (`static` functions
//!     of different files): when a name's entries name several files, a
//!     function takes the entries of its own file (compared after
//!     [`crate::map::normalize_path`]). When they name one file, they apply
//!     to a function of that name in a file of the same name, wherever the
//!     program was built (another directory, another path spelling), and to
//!     any function of that name when the file is `""` or the function's
//!     file is unknown; a function of that name in a file of another name is
//!     another function and takes none of them (so it is not reported as
//!     changed);
//!   - `shape` (required): the function's [`Cfg::shape_hash`] as 16 hex
//!     digits. A function takes the entries of its own shape: the entries
//!     of one function (name and file) may carry several shapes, one source
//!     function built into several programs of a project differently (other
//!     macros, other inlining), as `pathprof interesting` lists them from a
//!     project's profile. A function whose shape none of them has has
//!     changed since the list was made: it is reported ([`StaleEntry`]) and
//!     the caller falls back;
//!   - `id` (required): the path's Ball-Larus id in path mode's DAG of the
//!     function (built with the same `--max-paths` and early-exit setting);
//!   - `blocks` (required, not empty): the blocks the path visits in order, as
//!     block numbers: a check that `id` still names the same path;
//!   - `count` (optional): how often the training run took the path. PPP
//!     decides nothing by it; `--mode=p3 --p3-train` balances its copies by
//!     it (an entry without a count weighs 1);
//!   - `note` (optional): free text, for people and other tools.
//!
//! Any other field is an error (a misspelt field must not silently disable a
//! check). Errors are one line, `line L, column C: what is wrong`, for the
//! caller to prefix with the file's name.

use crate::cfg::Cfg;
use crate::dag::Dag;
use crate::ids::BlockId;
use crate::regen::{regenerate, RegenError};
use crate::source_names::{normalize_path, same_file};
use serde::{Deserialize, Deserializer};

/// The `format` value of every list.
pub const FORMAT: &str = "pathprof-interesting-paths";
/// The version this pathprof reads and writes.
pub const VERSION: u32 = 1;

/// One interesting path.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListEntry {
    /// The function's linkage name.
    pub function: String,
    /// Its source file, `""` when unknown.
    pub file: String,
    /// [`Cfg::shape_hash`] of the function when the list was made.
    #[serde(deserialize_with = "shape_hash")]
    pub shape: u64,
    /// The path's Ball-Larus id.
    pub id: u64,
    /// The blocks it visits, a check of `id`.
    #[serde(deserialize_with = "blocks")]
    pub blocks: Vec<BlockId>,
    /// Executions in the training profile, for people.
    #[serde(default)]
    pub count: Option<u64>,
    /// Free text, for people.
    #[serde(default)]
    pub note: Option<String>,
}

/// A whole list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterestingList {
    pub entries: Vec<ListEntry>,
}

/// Why a list could not be read: one line, with the position in the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ListError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Why a function's entries no longer fit it: the caller warns and falls back
/// to Ball-Larus numbering for that function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StaleEntry {
    #[error("{function} has changed since the interesting-path list was made, or is built otherwise than the training build that listed it (shape hash {actual:016x}, the list says {listed:016x})")]
    Shape {
        function: String,
        listed: u64,
        actual: u64,
    },
    #[error("{function} has no path {id} (it has {num_paths}); the interesting-path list is from another build, or one with other --max-paths or --early-exit")]
    OutOfRange {
        function: String,
        id: u64,
        num_paths: u64,
    },
    #[error("path {id} of {function} visits blocks {actual:?}, the interesting-path list says {listed:?} (a list from another build, or one with other --max-paths or --early-exit)")]
    Blocks {
        function: String,
        id: u64,
        listed: Vec<BlockId>,
        actual: Vec<BlockId>,
    },
}

/// The document as read, before the entries are taken out.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    #[serde(deserialize_with = "format_name")]
    #[allow(dead_code)] // checked while reading
    format: (),
    #[serde(deserialize_with = "version")]
    #[allow(dead_code)] // checked while reading
    version: u32,
    paths: Vec<ListEntry>,
}

impl ListEntry {
    /// The entry for path `id` of a function whose path-mode DAG is `dag`
    /// (its blocks filled in from the DAG).
    pub fn for_path(
        function: &str,
        file: &str,
        cfg: &Cfg,
        dag: &Dag,
        id: u64,
        count: Option<u64>,
    ) -> Result<ListEntry, RegenError> {
        Ok(ListEntry {
            function: function.to_string(),
            file: file.to_string(),
            shape: cfg.shape_hash(),
            id,
            blocks: regenerate(dag, id)?.blocks(dag),
            count,
            note: None,
        })
    }

    /// The entry as one line of the list (without the separating comma).
    fn to_json_line(&self) -> String {
        let text = |s: &str| serde_json::to_string(s).expect("strings serialize");
        let blocks: Vec<String> = self.blocks.iter().map(|b| b.0.to_string()).collect();
        let mut line = format!(
            "{{\"function\": {}, \"file\": {}, \"shape\": \"{:016x}\", \"id\": {}, \"blocks\": [{}]",
            text(&self.function),
            text(&self.file),
            self.shape,
            self.id,
            blocks.join(", ")
        );
        if let Some(count) = self.count {
            line.push_str(&format!(", \"count\": {count}"));
        }
        if let Some(note) = &self.note {
            line.push_str(&format!(", \"note\": {}", text(note)));
        }
        line.push('}');
        line
    }
}

impl InterestingList {
    /// Reads a list (see the module doc for the format).
    pub fn parse(text: &str) -> Result<InterestingList, ListError> {
        if text.trim().is_empty() {
            return Err(ListError {
                line: 1,
                column: 1,
                message: "the file is empty, not an interesting-path list".into(),
            });
        }
        match serde_json::from_str::<Document>(text) {
            Ok(doc) => Ok(InterestingList { entries: doc.paths }),
            Err(e) => {
                let at = format!(" at line {} column {}", e.line(), e.column());
                let message = e.to_string();
                let message = message.strip_suffix(&at).unwrap_or(&message);
                Err(ListError {
                    line: e.line(),
                    column: e.column(),
                    message: message.replace('\n', " "),
                })
            }
        }
    }

    /// Writes the list, one path per line, in entry order.
    pub fn to_json(&self) -> String {
        let mut out = format!("{{\n  \"format\": \"{FORMAT}\",\n  \"version\": {VERSION},\n");
        if self.entries.is_empty() {
            out.push_str("  \"paths\": []\n}\n");
            return out;
        }
        out.push_str("  \"paths\": [\n");
        let lines: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("    {}", e.to_json_line()))
            .collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n  ]\n}\n");
        out
    }

    /// The functions the list names, as (linkage name, file), sorted, each
    /// once: a caller warns about those it never meets.
    pub fn functions(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .entries
            .iter()
            .map(|e| (e.function.as_str(), e.file.as_str()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The Ball-Larus ids listed for the function `function` of file `file`,
    /// whose CFG is `cfg` and path-mode DAG `dag`, sorted and each once:
    /// `None` when the list has no entry for it, an error when an entry no
    /// longer fits it (shape hash, id out of range, other blocks).
    pub fn paths_of(
        &self,
        function: &str,
        file: &str,
        cfg: &Cfg,
        dag: &Dag,
    ) -> Result<Option<Vec<u64>>, StaleEntry> {
        Ok(self
            .checked_entries(function, file, cfg, dag)?
            .map(|entries| {
                let mut ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            }))
    }

    /// The listed paths of `function` of `file` (as [`InterestingList::paths_of`]
    /// checks them) with their counts, an entry without one counting 1: the
    /// training run `--mode=p3 --p3-train` plans by. Sorted by id, each once.
    pub fn counts_of(
        &self,
        function: &str,
        file: &str,
        cfg: &Cfg,
        dag: &Dag,
    ) -> Result<Option<Vec<(u64, u64)>>, StaleEntry> {
        Ok(self
            .checked_entries(function, file, cfg, dag)?
            .map(|entries| {
                let mut counts: Vec<(u64, u64)> = entries
                    .iter()
                    .map(|e| (e.id, e.count.unwrap_or(1)))
                    .collect();
                counts.sort_unstable();
                counts.dedup_by_key(|(id, _)| *id);
                counts
            }))
    }

    /// The entries of `function` of `file`, each checked against its CFG
    /// and DAG; `None` when it has none.
    fn checked_entries(
        &self,
        function: &str,
        file: &str,
        cfg: &Cfg,
        dag: &Dag,
    ) -> Result<Option<Vec<&ListEntry>>, StaleEntry> {
        let mut entries = self.entries_of(function, file);
        let Some(first) = entries.first() else {
            return Ok(None);
        };
        // Several shapes: one source function built into several programs
        // differently; the entries of its own shape are this build's.
        let actual = cfg.shape_hash();
        let listed = first.shape;
        entries.retain(|e| e.shape == actual);
        if entries.is_empty() {
            return Err(StaleEntry::Shape {
                function: function.to_string(),
                listed,
                actual,
            });
        }
        for &entry in &entries {
            let path = regenerate(dag, entry.id).map_err(|_| StaleEntry::OutOfRange {
                function: function.to_string(),
                id: entry.id,
                num_paths: dag.num_paths(),
            })?;
            let blocks = path.blocks(dag);
            if blocks != entry.blocks {
                return Err(StaleEntry::Blocks {
                    function: function.to_string(),
                    id: entry.id,
                    listed: entry.blocks.clone(),
                    actual: blocks,
                });
            }
        }
        Ok(Some(entries))
    }

    /// The entries that apply to `function` of `file` (see the module doc).
    fn entries_of(&self, function: &str, file: &str) -> Vec<&ListEntry> {
        let named: Vec<&ListEntry> = self
            .entries
            .iter()
            .filter(|e| e.function == function)
            .collect();
        let one_file = named.windows(2).all(|w| w[0].file == w[1].file);
        if one_file {
            let listed = named.first().map_or("", |e| e.file.as_str());
            let another = !listed.is_empty() && !file.is_empty() && !same_file(listed, file);
            return if another { Vec::new() } else { named };
        }
        let file = normalize_path(file);
        named
            .into_iter()
            .filter(|e| normalize_path(&e.file) == file)
            .collect()
    }
}

fn format_name<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    let found = String::deserialize(d)?;
    if found == FORMAT {
        Ok(())
    } else {
        Err(serde::de::Error::custom(format!(
            "not an interesting-path list: format is `{found}`, expected `{FORMAT}`"
        )))
    }
}

fn version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let found = u32::deserialize(d)?;
    if found == VERSION {
        Ok(found)
    } else {
        Err(serde::de::Error::custom(format!(
            "interesting-path list version {found}, but this pathprof reads version {VERSION}"
        )))
    }
}

fn shape_hash<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let text = String::deserialize(d)?;
    let hex = text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit());
    match u64::from_str_radix(&text, 16) {
        Ok(hash) if hex => Ok(hash),
        _ => Err(serde::de::Error::custom(format!(
            "shape `{text}` is not a shape hash of 16 hex digits"
        ))),
    }
}

fn blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<BlockId>, D::Error> {
    let blocks = Vec::<u32>::deserialize(d)?;
    if blocks.is_empty() {
        return Err(serde::de::Error::custom(
            "blocks is empty: every path visits at least one block",
        ));
    }
    Ok(blocks.into_iter().map(BlockId).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Cfg {
        Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap()
    }

    fn list_of(cfg: &Cfg, dag: &Dag, ids: &[u64]) -> InterestingList {
        let entries = ids
            .iter()
            .map(|&id| ListEntry::for_path("f", "a.c", cfg, dag, id, Some(id + 1)).unwrap())
            .collect();
        InterestingList { entries }
    }

    #[test]
    fn writes_one_path_per_line_and_reads_it_back() {
        let cfg = cfg();
        let dag = Dag::build(&cfg, Default::default()).unwrap();
        let mut list = list_of(&cfg, &dag, &[1, 0]);
        list.entries[1].note = Some("the \"cold\" side".into());
        let text = list.to_json();
        let shape = format!("{:016x}", cfg.shape_hash());
        let want = format!(
            "{{\n  \"format\": \"pathprof-interesting-paths\",\n  \"version\": 1,\n  \"paths\": [\n    \
             {{\"function\": \"f\", \"file\": \"a.c\", \"shape\": \"{shape}\", \"id\": 1, \"blocks\": [0, 2, 3], \"count\": 2}},\n    \
             {{\"function\": \"f\", \"file\": \"a.c\", \"shape\": \"{shape}\", \"id\": 0, \"blocks\": [0, 1, 3], \"count\": 1, \"note\": \"the \\\"cold\\\" side\"}}\n  ]\n}}\n"
        );
        assert_eq!(text, want);
        assert_eq!(InterestingList::parse(&text).unwrap(), list);
        let empty = InterestingList::default();
        assert_eq!(InterestingList::parse(&empty.to_json()).unwrap(), empty);
    }

    #[test]
    fn errors_are_one_line_with_a_position() {
        let cases = [
            (" \n", "line 1, column 1: the file is empty, not an interesting-path list"),
            (
                "{\"format\": \"pathprof-map\", \"version\": 1, \"paths\": []}",
                "line 1, column 25: not an interesting-path list: format is `pathprof-map`, expected `pathprof-interesting-paths`",
            ),
            (
                "{\"format\": \"pathprof-interesting-paths\",\n \"version\": 2, \"paths\": []}",
                "line 2, column 13: interesting-path list version 2, but this pathprof reads version 1",
            ),
            (
                "{\"format\": \"pathprof-interesting-paths\", \"version\": 1, \"paths\": [\n{\"function\": \"f\", \"file\": \"\", \"shape\": \"12\", \"id\": 0, \"blocks\": [0]}]}",
                "line 2, column 43: shape `12` is not a shape hash of 16 hex digits",
            ),
            (
                "{\"format\": \"pathprof-interesting-paths\", \"version\": 1, \"paths\": [\n{\"function\": \"f\", \"file\": \"\", \"shape\": \"0000000000000012\", \"id\": 0, \"blocks\": []}]}",
                "line 2, column 81: blocks is empty: every path visits at least one block",
            ),
            (
                "{\"format\": \"pathprof-interesting-paths\", \"version\": 1, \"paths\": [\n{\"function\": \"f\", \"file\": \"\",\n \"blcoks\": [0]}]}",
                "line 3, column 9: unknown field `blcoks`, expected one of `function`, `file`, `shape`, `id`, `blocks`, `count`, `note`",
            ),
            (
                "{\"format\": \"pathprof-interesting-paths\", \"version\": 1, \"paths\": [\n{\"function\": \"f\", \"file\": \"\", \"shape\": \"0000000000000012\", \"blocks\": [0]}]}",
                "line 2, column 73: missing field `id`",
            ),
        ];
        for (text, want) in cases {
            let err = InterestingList::parse(text).unwrap_err();
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn stale_entries_are_reported() {
        let cfg = cfg();
        let dag = Dag::build(&cfg, Default::default()).unwrap();
        let list = list_of(&cfg, &dag, &[1, 0, 1]);
        assert_eq!(list.paths_of("f", "", &cfg, &dag), Ok(Some(vec![0, 1])));
        assert_eq!(list.paths_of("g", "a.c", &cfg, &dag), Ok(None));
        assert_eq!(list.functions(), [("f", "a.c")]);

        let other = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 1)]).unwrap();
        let err = list.paths_of("f", "a.c", &other, &dag).unwrap_err();
        assert!(matches!(err, StaleEntry::Shape { .. }), "{err}");
        assert!(err.to_string().starts_with("f has changed since"), "{err}");

        let mut wrong = list.clone();
        wrong.entries[0].blocks.pop();
        let err = wrong.paths_of("f", "a.c", &cfg, &dag).unwrap_err();
        assert_eq!(
            err.to_string(),
            "path 1 of f visits blocks [b0, b2, b3], the interesting-path list says [b0, b2] \
             (a list from another build, or one with other --max-paths or --early-exit)"
        );
        wrong.entries[0].id = 7;
        let err = wrong.paths_of("f", "a.c", &cfg, &dag).unwrap_err();
        assert!(matches!(err, StaleEntry::OutOfRange { id: 7, .. }), "{err}");
    }

    #[test]
    fn files_tell_apart_functions_of_one_name() {
        let cfg = cfg();
        let dag = Dag::build(&cfg, Default::default()).unwrap();
        let mut list = list_of(&cfg, &dag, &[0, 1]);
        // Entries of one file: a `static` f of another file is another
        // function (its other shape is not a change), while the same file
        // built elsewhere, or a function of unknown file, takes them.
        assert_eq!(list.paths_of("f", "b.c", &cfg, &dag), Ok(None));
        let other = Cfg::from_edge_list(2, &[(0, 1)]).unwrap();
        let other_dag = Dag::build(&other, Default::default()).unwrap();
        assert_eq!(list.paths_of("f", "b.c", &other, &other_dag), Ok(None));
        let elsewhere = Ok(Some(vec![0, 1]));
        assert_eq!(list.paths_of("f", "/build/x/./a.c", &cfg, &dag), elsewhere);
        assert_eq!(list.paths_of("f", "", &cfg, &dag), Ok(Some(vec![0, 1])));
        assert!(list
            .paths_of("f", "/build/a.c", &other, &other_dag)
            .is_err());
        list.entries[0].file = String::new();
        list.entries[1].file = String::new();
        assert_eq!(list.paths_of("f", "b.c", &cfg, &dag), Ok(Some(vec![0, 1])));
        list.entries[0].file = "a.c".into();
        list.entries[1].file = "./src/../b.c".into();
        assert_eq!(list.paths_of("f", "b.c", &cfg, &dag), Ok(Some(vec![1])));
        assert_eq!(list.paths_of("f", "a.c", &cfg, &dag), Ok(Some(vec![0])));
        assert_eq!(list.paths_of("f", "c.c", &cfg, &dag), Ok(None));
    }

    #[test]
    fn each_build_of_a_function_takes_the_entries_of_its_shape() {
        // f of a.c built into two programs with two shapes: the list holds
        // path 1 of the first and path 0 of the second.
        let (one, two) = (cfg(), Cfg::from_edge_list(2, &[(0, 1)]).unwrap());
        let (one_dag, two_dag) = (
            Dag::build(&one, Default::default()).unwrap(),
            Dag::build(&two, Default::default()).unwrap(),
        );
        let mut list = list_of(&one, &one_dag, &[1]);
        list.entries.extend(list_of(&two, &two_dag, &[0]).entries);
        assert_eq!(list.paths_of("f", "a.c", &one, &one_dag), Ok(Some(vec![1])));
        assert_eq!(list.paths_of("f", "a.c", &two, &two_dag), Ok(Some(vec![0])));
        // A third shape has changed since the list was made.
        let three = Cfg::from_edge_list(3, &[(0, 1), (1, 2)]).unwrap();
        let three_dag = Dag::build(&three, Default::default()).unwrap();
        assert_eq!(
            list.paths_of("f", "a.c", &three, &three_dag),
            Err(StaleEntry::Shape {
                function: "f".into(),
                listed: one.shape_hash(),
                actual: three.shape_hash(),
            })
        );
    }
}
