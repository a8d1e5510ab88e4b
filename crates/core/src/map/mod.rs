//! The map file (`.ppmap`): what reports need to read a profile, written at
//! instrumentation time so that no report ever needs LLVM.
//!
//! A map describes one instrumented module (a translation unit, or a whole
//! program linked with `--whole-program`): a *fragment*. On disk a fragment is
//! one header line `pathprof-map 3 <fnv64 of the stored body, 16 hex> <stored
//! length> <JSON length>`, then the stored body: the JSON of a
//! [`schema::Fragment`] compressed with raw DEFLATE (a tenth of the JSON's
//! size, which every object carries and the assembler reads at every
//! compile). The checksum catches truncation and edits; the `build_id` ties
//! profiles to the module that wrote them. Versions 1 (one fragment, JSON, no
//! length) and 2 (JSON with its length) are still read; their JSON is the same.
//!
//! The JSON is the [`schema`] module's plain structs, not the algorithms'
//! types: the schema is the file format, versioned with [`MAP_VERSION`], and
//! converts to and from [`MapFile`] (the in-memory map every report uses) in
//! one place.
//!
//! Fragments travel with the code: every instrumented object carries its own
//! in the ELF section `.pathprof.map` (see `pathprof-llvm`'s `embed_map`),
//! which linkers concatenate, so an executable or shared library holds the
//! fragments of exactly the objects linked into it. A `.ppmap` file is the
//! same concatenation; `pathprof-io` reads either (and this module the
//! bytes).
//!
//! Reading never panics and never allocates more than the file's size
//! justifies: the body is parsed into the schema (plain data, as large as the
//! JSON), where every block count it declares must be backed by as many block
//! records before any CFG or DAG is built from it; then every index it holds
//! (files, blocks, edges, counter slots, DAG nodes) must be in range and each
//! layout must fit its function's CFG, so that no report meets a map it cannot
//! use.

use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdge, DagEdgeKind};
use crate::hash::{fnv64, Fnv64};
use crate::ids::{BlockId, EdgeId};
use crate::layout::{FlowEdge, Layout};
use crate::plan::Mode;

pub mod call_sites;
pub mod schema;

pub use crate::source_names::{base_name, normalize_path, same_file, without_rename_suffixes};
pub use call_sites::{callers_first, CallSite};

/// The map format version this code writes (it reads versions 1 and 2 too):
/// its header and compression, and the body's JSON, [`schema`].
pub const MAP_VERSION: u32 = 3;
/// The ELF section that holds the fragments of a linked file.
pub const MAP_SECTION: &str = ".pathprof.map";
const MAP_MAGIC: &str = "pathprof-map";

/// Source position and size of one basic block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockInfo {
    /// Line of the block's first instruction with a debug location.
    pub line: Option<u32>,
    /// Instructions in the block (LLVM IR instructions, excluding debug records
    /// and pathprof's own probes).
    pub instructions: u32,
    /// Every source line the block's instructions come from, in first-seen order,
    /// with how many instructions each has.
    pub lines: Vec<LineSpan>,
}

/// Instructions of one block attributed to one source line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// Index into [`MapFile::files`].
    pub file: u32,
    pub line: u32,
    pub instructions: u32,
}

/// One instrumented function. Serializes as [`schema::Function`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapFunction {
    /// Linkage name (mangled for C++ and Rust).
    pub name: String,
    /// Demangled name, when it differs from `name`.
    pub display_name: Option<String>,
    /// Index into [`MapFile::files`] of the file holding the definition.
    pub file: Option<u32>,
    pub line: Option<u32>,
    /// [`Cfg::shape_hash`], checked against each profile record.
    pub hash: u64,
    pub cfg: Cfg,
    /// One per CFG block.
    pub blocks: Vec<BlockInfo>,
    /// How this function's counters map back to blocks, edges and paths.
    pub layout: Layout,
    /// Where its entry count comes from when it does not count it itself:
    /// its call sites in this fragment ([`crate::callers`]); empty when it
    /// counts its entries.
    pub entry_calls: Vec<CallSite>,
    /// Whether its callers' call sites gave its entry count in a module
    /// that compiled it, where [`crate::materialize::materialize`] has since
    /// written that count out as its own and cleared `entry_calls`: no
    /// probe of its own counted its entries there. Never written to a map
    /// file (a fragment says it by `entry_calls`).
    pub entries_by_callers: bool,
}

/// A whole instrumented program (one fragment). Serializes as, and
/// deserializes checked through, [`schema::Fragment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapFile {
    pub mode: Mode,
    /// Identity of the build; every profile it writes records it.
    pub build_id: u64,
    /// Source files, as the debug info names them (absolute where the compiler
    /// knew the directory) in [`normalize_path`]'s form, each once.
    pub files: Vec<String>,
    /// FNV-1a of each source file's bytes when the program was built (`None`
    /// when it could not be read then), to tell a reader the source changed.
    pub file_digests: Vec<Option<u64>>,
    pub functions: Vec<MapFunction>,
    /// Whether counters were updated atomically (`--atomic`): only then are
    /// counts exact when threads run the same code at once. Absent (false) in
    /// maps written before it was recorded.
    pub atomic: bool,
    /// Whether each thread counted into counters of its own (every build
    /// since runtime ABI 2): then counts are exact whatever the threads did.
    /// False in maps of older builds.
    pub per_thread: bool,
    /// A `--mode=p3` build (partitioned path profiling): what a reader needs
    /// to plan its copies again ([`crate::p3::MapProgram::recorded`]). `None` in every
    /// other map. Not part of the build id: the build is path mode's.
    pub p3: Option<P3Build>,
}

/// What a `--mode=p3` build records beside path mode's map: K and the call
/// sites P3 decides by (Afraz et al. 2015, Algorithm 2 line 5), the only
/// inputs of [`crate::p3::plan_program`] that a map does not hold already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct P3Build {
    /// How many copies were built.
    pub copies: u32,
    /// Per function (in [`MapFile::functions`]' order): its call sites in
    /// the linked program, [`P3Build::MANY`] for a function called from
    /// outside it or through a pointer.
    pub call_sites: Vec<u32>,
    /// Per function (in [`MapFile::functions`]' order): the paths of the
    /// training run that guided the plan (`--p3-train`), as Ball-Larus id and
    /// count pairs ([`crate::p3::trained`]); empty (no function at all)
    /// when the build had no training.
    pub trained: Vec<Vec<(u64, u64)>>,
}

impl P3Build {
    /// The call sites of a function called from places a call graph cannot
    /// see (its address is taken, or it is exported): never partitioned.
    pub const MANY: u32 = u32::MAX;
}

/// Why a map file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    #[error("cannot read map file {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path} is not a pathprof map file (it does not start with `pathprof-map`); pass the .ppmap written when the program was built, or the program or library itself")]
    NotAMap { path: String },
    #[error("{path} holds no pathprof map: it was not built with `pathprof cc` (or its .pathprof.map section was removed)")]
    NoMapSection { path: String },
    #[error("{path} is a version {found} map file; this pathprof reads version {MAP_VERSION}. Rebuild the program with this pathprof")]
    Version { path: String, found: String },
    #[error("{path} is damaged (its checksum does not match its contents: truncated or edited?); rebuild the program to get a fresh map")]
    Checksum { path: String },
    #[error("{path} is damaged: {detail}")]
    Malformed { path: String, detail: String },
}

impl MapFunction {
    /// The name a person reads: the demangled one when the map has it, else
    /// the linkage name without the suffixes LLVM adds when it renames a
    /// local function (`MEM_read32.243` in a whole-program link,
    /// `f.llvm.1234` promoted across modules): the source's name.
    pub fn shown_name(&self) -> &str {
        self.display_name
            .as_deref()
            .unwrap_or_else(|| without_rename_suffixes(&self.name))
    }

    /// Whether its callers' counts give its entry count, in this fragment
    /// or (combined) in a module that compiled it: then no probe of its own
    /// counts its entries there.
    pub fn counted_by_callers(&self) -> bool {
        self.entries_by_callers || !self.entry_calls.is_empty()
    }
}

impl MapFile {
    /// Computes the build id from the mode, the source files and the
    /// functions' names, positions, shapes and counter layouts: two modules
    /// share an id only when they are the same code (one source compiled
    /// alike), whose counts may add up.
    pub fn compute_build_id(mode: Mode, files: &[String], functions: &[MapFunction]) -> u64 {
        let mut h = Fnv64::new();
        h.write_str(mode.name());
        for file in files {
            h.write_str(file);
        }
        for f in functions {
            h.write_str(&f.name);
            h.write_u64(f.file.map_or(u64::MAX, u64::from));
            h.write_u64(f.line.map_or(u64::MAX, u64::from));
            h.write_u64(f.hash);
            h.write_u64(schema::layout_identity(&f.layout));
            // Maps without call sites keep the ids they always had.
            for site in &f.entry_calls {
                h.write_u64(u64::from(site.function));
                h.write_u64(site.block.index() as u64);
            }
        }
        h.finish()
    }

    /// The fragment's bytes: header line and compressed JSON body.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&schema::Fragment::from(self)).expect("map serializes");
        crate::deflated::encode(MAP_MAGIC, MAP_VERSION, &json)
    }

    /// Parses one fragment's bytes (nothing may follow it); `path` is only used
    /// in messages.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Self, MapError> {
        let (map, rest) = Self::first_fragment(bytes, path)?;
        if !rest.is_empty() {
            return Err(MapError::Malformed {
                path: path.to_string(),
                detail: format!("{} bytes follow the map", rest.len()),
            });
        }
        Ok(map)
    }

    /// Parses the fragment at the start of `bytes`; returns it and the bytes
    /// after it.
    fn first_fragment<'a>(bytes: &'a [u8], path: &str) -> Result<(Self, &'a [u8]), MapError> {
        let path_s = || path.to_string();
        let nl = bytes
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| MapError::NotAMap { path: path_s() })?;
        let header =
            std::str::from_utf8(&bytes[..nl]).map_err(|_| MapError::NotAMap { path: path_s() })?;
        let mut parts = header.split(' ');
        if parts.next() != Some(MAP_MAGIC) {
            return Err(MapError::NotAMap { path: path_s() });
        }
        let version = parts.next().unwrap_or("");
        // Exactly as written (16 lowercase hex digits): a changed digit's
        // case is a changed header, not the same checksum.
        let sum = parts
            .next()
            .filter(|s| s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .and_then(|s| u64::from_str_radix(s, 16).ok());
        let after = &bytes[nl + 1..];
        let mut length = || {
            parts
                .next()
                .and_then(|l| l.parse::<usize>().ok())
                .ok_or_else(|| MapError::Malformed {
                    path: path_s(),
                    detail: "its header's lengths are missing".into(),
                })
        };
        let (stored, json_len, rest) = match version {
            "1" => (after, None, &after[after.len()..]),
            "2" | "3" => {
                let len = length()?;
                let json_len = if version == "3" {
                    Some(length()?)
                } else {
                    None
                };
                if len > after.len() {
                    return Err(MapError::Malformed {
                        path: path_s(),
                        detail: "its header's length is beyond the end of the file (truncated?)"
                            .into(),
                    });
                }
                let (stored, rest) = after.split_at(len);
                (stored, json_len, rest)
            }
            _ => {
                return Err(MapError::Version {
                    path: path_s(),
                    found: version.to_string(),
                })
            }
        };
        if sum != Some(fnv64(stored)) {
            return Err(MapError::Checksum { path: path_s() });
        }
        let inflated;
        let body = match json_len {
            None => stored,
            Some(len) => {
                inflated = crate::deflated::inflate(stored, len).map_err(|detail| {
                    MapError::Malformed {
                        path: path_s(),
                        detail,
                    }
                })?;
                &inflated[..]
            }
        };
        // serde quotes the offending text, which may hold a decoded "\n".
        let malformed = |detail: String| MapError::Malformed {
            path: path_s(),
            detail: detail
                .chars()
                .map(|c| match c.is_control() {
                    true => c.escape_default().to_string(),
                    false => c.to_string(),
                })
                .collect(),
        };
        let fragment: schema::Fragment =
            serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
        let map = MapFile::try_from(fragment).map_err(malformed)?;
        Ok((map, rest))
    }

    /// Parses a sequence of fragments (a `.ppmap` file or the contents of a
    /// `.pathprof.map` section); NUL and newline bytes between fragments are
    /// padding. A fragment that appears twice (same build id) is kept once.
    pub fn fragments_from_bytes(bytes: &[u8], path: &str) -> Result<Vec<Self>, MapError> {
        let mut out: Vec<MapFile> = Vec::new();
        let mut rest = bytes;
        loop {
            let skip = rest.iter().take_while(|&&b| b == 0 || b == b'\n').count();
            rest = &rest[skip..];
            if rest.is_empty() {
                break;
            }
            let (map, after) = Self::first_fragment(rest, path)?;
            if !out.iter().any(|m| m.build_id == map.build_id) {
                out.push(map);
            }
            rest = after;
        }
        if out.is_empty() {
            return Err(MapError::NotAMap {
                path: path.to_string(),
            });
        }
        Ok(out)
    }

    /// Checks what the types alone do not: file indices in range, one block
    /// record per block, and each function's layout fitting its CFG (the last
    /// step of reading, [`MapFile::try_from`] a [`schema::Fragment`]).
    fn check(&self) -> Result<(), String> {
        let files = self.files.len();
        for (i, f) in self.functions.iter().enumerate() {
            let blocks = f.cfg.num_blocks();
            let file_ok = |file: &u32| (*file as usize) < files;
            let problem = if f.blocks.len() != blocks {
                Some(format!(
                    "{} block records for {blocks} blocks",
                    f.blocks.len()
                ))
            } else if !f.file.iter().all(file_ok)
                || !f
                    .blocks
                    .iter()
                    .flat_map(|b| &b.lines)
                    .all(|l| file_ok(&l.file))
            {
                Some(format!("a source file index beyond its {files} files"))
            } else {
                check_layout(&f.cfg, &f.layout).err()
            };
            if let Some(p) = problem {
                return Err(format!("function #{i} ({:?}) has {p}", f.name));
            }
        }
        call_sites::check(&self.functions)?;
        if let Some(p3) = &self.p3 {
            if p3.copies == 0 || p3.call_sites.len() != self.functions.len() {
                return Err(format!(
                    "its P3 record is for {} copies and {} functions, not at least 1 copy and its {} functions",
                    p3.copies,
                    p3.call_sites.len(),
                    self.functions.len()
                ));
            }
            if self.mode != Mode::Path {
                return Err(format!(
                    "a P3 record in a {} mode map (P3 builds are path mode's)",
                    self.mode.name()
                ));
            }
        }
        Ok(())
    }

    /// Whether this is a PPP build's map (`--mode=ppp`): some function has
    /// interesting paths.
    pub fn is_ppp(&self) -> bool {
        self.functions
            .iter()
            .any(|f| !f.layout.interesting().is_empty())
    }

    /// The name of a file index, or `None`.
    pub fn file_name(&self, file: Option<u32>) -> Option<&str> {
        file.and_then(|f| self.files.get(f as usize))
            .map(String::as_str)
    }
}

/// Whether `layout` fits `cfg`: as many entries as blocks, counters, edges and
/// blocks in range, and a DAG over the same blocks whose every edge joins the
/// nodes its kind says (so reports and [`crate::derive`] index safely).
fn check_layout(cfg: &Cfg, layout: &Layout) -> Result<(), String> {
    let blocks = cfg.num_blocks();
    let edges = cfg.edges().len();
    let edge_ok = |e: EdgeId| e.index() < edges;
    let block_ok = |b: BlockId| b.index() < blocks;
    match layout {
        Layout::Block {
            slot_of_block,
            calls_slot,
        } => {
            if slot_of_block.len() != blocks {
                return Err(format!(
                    "a block layout of {} entries for {blocks} blocks",
                    slot_of_block.len()
                ));
            }
            let slots = slot_of_block.iter().flatten().count() + usize::from(calls_slot.is_some());
            if let Some(k) = slot_of_block
                .iter()
                .flatten()
                .chain(calls_slot)
                .find(|&&k| k as usize >= slots)
            {
                return Err(format!("a block counter {k} beyond its {slots}"));
            }
        }
        Layout::Edge {
            counted,
            entry_replaces,
            ..
        } => {
            if let Some(fe) = counted.iter().chain(entry_replaces).find(|fe| match **fe {
                FlowEdge::Cfg(e) => !edge_ok(e),
                FlowEdge::Exit(b) => !block_ok(b),
                FlowEdge::Entry => false,
            }) {
                return Err(format!(
                    "a counted edge {fe:?} beyond its {blocks} blocks and {edges} edges"
                ));
            }
            if let Some(fe) = entry_replaces.filter(|fe| counted.contains(fe)) {
                return Err(format!(
                    "edge {fe:?} both counted and replaced by the entry count"
                ));
            }
        }
        Layout::Path {
            dag,
            self_loops,
            resumes,
            call_exits,
            ppp_owners,
            interesting,
            ..
        } => {
            let hole = crate::ppp::classify::HOLE;
            let mut owners: Vec<u64> = ppp_owners.iter().copied().filter(|&o| o != hole).collect();
            owners.sort_unstable();
            if !ppp_owners.is_empty() && owners != *interesting {
                return Err("PPP slots for other paths than its interesting ones".to_string());
            }
            if interesting.windows(2).any(|w| w[0] >= w[1]) {
                return Err("interesting paths out of order or named twice".to_string());
            }
            if let Some(o) = interesting.last().filter(|&&o| o >= dag.num_paths()) {
                return Err(format!(
                    "interesting path {o}, beyond its {} paths",
                    dag.num_paths()
                ));
            }
            if dag.num_blocks() != blocks || dag.classes().len() != edges {
                return Err(format!(
                    "a path DAG over {} blocks and {} edges, but {blocks} blocks and {edges} edges",
                    dag.num_blocks(),
                    dag.classes().len()
                ));
            }
            if let Some(e) = self_loops.iter().chain(resumes).find(|&&e| !edge_ok(e)) {
                return Err(format!("a counter for edge {e}, beyond its {edges} edges"));
            }
            if let Some(b) = call_exits.iter().find(|&&b| !block_ok(b)) {
                return Err(format!(
                    "a call-exit counter for block {b}, beyond its {blocks} blocks"
                ));
            }
            if let Some((d, de)) = dag
                .edge_ids()
                .zip(dag.edges())
                .find(|(_, de)| !dag_edge_fits(cfg, dag, de))
            {
                return Err(format!(
                    "DAG edge {d} {:?} from {} to {}, which its CFG does not have",
                    de.kind, de.from, de.to
                ));
            }
        }
    }
    Ok(())
}

/// Whether `e` joins the nodes its kind names in `cfg` (`dag` has `cfg`'s blocks).
fn dag_edge_fits(cfg: &Cfg, dag: &Dag, e: &DagEdge) -> bool {
    let cfg_edge = |ce: EdgeId| cfg.edges().get(ce.index());
    let block = |b: BlockId| (b.index() < cfg.num_blocks()).then(|| dag.node(b));
    let (from, to) = match e.kind {
        DagEdgeKind::Entry => (Some(dag.entry()), Some(dag.node(cfg.entry()))),
        DagEdgeKind::Cfg(ce) => (
            cfg_edge(ce).map(|c| dag.node(c.from)),
            cfg_edge(ce).map(|c| dag.node(c.to)),
        ),
        DagEdgeKind::BackEntry(ce) => (Some(dag.entry()), cfg_edge(ce).map(|c| dag.node(c.to))),
        DagEdgeKind::BackExit(ce) => (cfg_edge(ce).map(|c| dag.node(c.from)), Some(dag.exit())),
        DagEdgeKind::UnsplitEntry(b) => (Some(dag.entry()), block(b)),
        DagEdgeKind::Exit(b) | DagEdgeKind::UnsplitExit(b) | DagEdgeKind::CallExit(b, _) => {
            (block(b), Some(dag.exit()))
        }
    };
    from == Some(e.from) && to == Some(e.to)
}

#[cfg(test)]
mod tests {
    use super::{normalize_path, without_rename_suffixes};

    #[test]
    fn renaming_suffixes_are_not_the_sources_name() {
        for (linkage, shown) in [
            ("MEM_read32.243", "MEM_read32"),
            ("f.llvm.8812345", "f"),
            ("g.3.llvm.12", "g"),
            ("plain", "plain"),
            ("v.2x", "v.2x"),
            (".7", ".7"),
            ("h.", "h."),
        ] {
            assert_eq!(without_rename_suffixes(linkage), shown, "{linkage}");
        }
    }

    #[test]
    fn spellings_of_one_file_normalize_alike() {
        for spelling in [
            "/src/dir/x.h",
            "/src/dir/./x.h",
            "/src/dir/sub/../x.h",
            "/src/dir//x.h",
            "/src/./dir/sub/deeper/../../x.h",
            "//src/dir/x.h",
        ] {
            assert_eq!(normalize_path(spelling), "/src/dir/x.h", "{spelling}");
        }
    }

    #[test]
    fn edge_cases() {
        let cases = [
            // `..` at the root stays at the root.
            ("/..", "/"),
            ("/../x.c", "/x.c"),
            ("/a/../../x.c", "/x.c"),
            ("/", "/"),
            ("///", "/"),
            // A trailing slash or `.` adds nothing.
            ("/a/b/", "/a/b"),
            ("/a/b/.", "/a/b"),
            ("a/b/", "a/b"),
            // Relative paths keep the `..`s that leave them.
            ("../x.c", "../x.c"),
            ("../../x.c", "../../x.c"),
            ("./../x.c", "../x.c"),
            ("a/../../x.c", "../x.c"),
            ("../a/../x.c", "../x.c"),
            ("./x.c", "x.c"),
            ("././/x.c", "x.c"),
            ("a/..", "."),
            (".", "."),
            ("", ""),
            // `..` in a name is a normal component.
            ("a/..b/x.c", "a/..b/x.c"),
            ("a/.../x.c", "a/.../x.c"),
        ];
        for (path, normal) in cases {
            assert_eq!(normalize_path(path), normal, "{path:?}");
            assert_eq!(normalize_path(normal), normal, "idempotent on {normal:?}");
        }
    }
}
