//! The map file format: the JSON of one fragment's body, field for field.
//!
//! These plain structs *are* the on-disk format of a fragment body, versioned
//! with [`MAP_VERSION`](super::MAP_VERSION): serde writes them exactly as
//! every `.ppmap` file and `.pathprof.map` section holds them (fields in this
//! order, under these names, those marked so left out when empty, variants
//! spelled as declared), and reads the bodies of versions 1, 2 and 3 alike
//! (the versions differ only in the header and compression around the body).
//! The algorithms' types ([`crate::Cfg`], [`crate::dag::Dag`],
//! [`crate::layout::Layout`], ...) have no serde form of their own: changing
//! them changes nothing on disk. Changing anything in the schema (a field's name,
//! type, order or default, when it is left out, a variant or its spelling)
//! changes the bytes of every map written, so it means a new `MAP_VERSION`
//! and a reader for the old one; `tests/map_schema.rs` pins the JSON of a
//! small map of each mode so that no change goes unnoticed. Ids (blocks, CFG
//! edges, DAG nodes, files) are plain `u32` indices here.
//!
//! The structs live in `pathprof_format::map_schema` (the format crate owns
//! the file formats) and are re-exported here. Conversion between them and
//! the in-memory types is here, and only here: [`Fragment::from`] a [`MapFile`] to write, [`MapFile::try_from`]
//! a [`Fragment`] to read. Reading checks everything a map's users rely on:
//! every block count backed by as many block records before anything is
//! built from it (so a crafted count allocates nothing), then each CFG and
//! DAG as its type requires ([`crate::Cfg::new`],
//! [`crate::dag::Dag::from_numbering`]), then what the types alone do not
//! (file indices, one block record per block, each layout fitting its CFG).
//! [`MapFile`], [`MapFunction`] and [`Mode`](crate::Mode) serialize as their
//! schema, and a [`MapFile`] deserializes through it, checked alike.

use super::{BlockInfo, LineSpan as MapLineSpan, MapFile, MapFunction};
use crate::ids::{BlockId, EdgeId, NodeId};
use crate::{cfg, dag, layout, plan};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use pathprof_format::map_schema::*;

impl From<&MapFile> for Fragment {
    fn from(m: &MapFile) -> Self {
        Fragment {
            mode: m.mode.into(),
            build_id: m.build_id,
            files: m.files.clone(),
            file_digests: m.file_digests.clone(),
            functions: m.functions.iter().map(Function::from).collect(),
            atomic: m.atomic,
            per_thread: m.per_thread,
            p3: m.p3.as_ref().map(|p| P3 {
                copies: p.copies,
                call_sites: p.call_sites.clone(),
                trained: p.trained.clone(),
            }),
        }
    }
}

impl From<plan::Mode> for Mode {
    fn from(m: plan::Mode) -> Self {
        match m {
            plan::Mode::Block => Mode::Block,
            plan::Mode::Edge => Mode::Edge,
            plan::Mode::Path => Mode::Path,
        }
    }
}

impl From<&MapFunction> for Function {
    fn from(f: &MapFunction) -> Self {
        Function {
            name: f.name.clone(),
            display_name: f.display_name.clone(),
            file: f.file,
            line: f.line,
            hash: f.hash,
            cfg: (&f.cfg).into(),
            blocks: f.blocks.iter().map(Block::from).collect(),
            layout: (&f.layout).into(),
            entry_calls: f
                .entry_calls
                .iter()
                .map(|s| CallSite {
                    function: s.function,
                    block: s.block.index() as u32,
                })
                .collect(),
        }
    }
}

impl From<&BlockInfo> for Block {
    fn from(b: &BlockInfo) -> Self {
        Block {
            line: b.line,
            instructions: b.instructions,
            lines: b
                .lines
                .iter()
                .map(|l| LineSpan {
                    file: l.file,
                    line: l.line,
                    instructions: l.instructions,
                })
                .collect(),
        }
    }
}

impl From<&cfg::Cfg> for Cfg {
    fn from(c: &cfg::Cfg) -> Self {
        let calls = match c.blocks().all(|b| c.calls(b) == 0) {
            true => Vec::new(),
            false => c.blocks().map(|b| c.calls(b)).collect(),
        };
        Cfg {
            num_blocks: c.num_blocks(),
            entry: c.entry().0,
            edges: c
                .edges()
                .iter()
                .map(|e| CfgEdge {
                    from: e.from.0,
                    to: e.to.0,
                    slot: e.slot,
                    splittable: e.splittable,
                    resume: e.resume,
                })
                .collect(),
            calls,
            terminator_calls: c
                .blocks()
                .filter(|&b| c.ends_in_call(b))
                .map(|b| b.0)
                .collect(),
        }
    }
}

impl From<&layout::Layout> for Layout {
    fn from(l: &layout::Layout) -> Self {
        let ids = |ids: &[EdgeId]| ids.iter().map(|e| e.0).collect();
        match l {
            layout::Layout::Block {
                slot_of_block,
                calls_slot,
            } => Layout::Block {
                slot_of_block: slot_of_block.clone(),
                calls_slot: *calls_slot,
            },
            layout::Layout::Edge {
                counted,
                net_call_exits,
                entry_replaces,
            } => Layout::Edge {
                counted: counted.iter().map(|&fe| fe.into()).collect(),
                net_call_exits: *net_call_exits,
                entry_replaces: entry_replaces.map(Into::into),
            },
            layout::Layout::Path {
                dag,
                self_loops,
                resumes,
                call_exits,
                ppp_owners,
                interesting,
                hashed,
            } => Layout::Path {
                dag: dag.into(),
                self_loops: ids(self_loops),
                resumes: ids(resumes),
                call_exits: call_exits.iter().map(|b| b.0).collect(),
                ppp_owners: ppp_owners.clone(),
                interesting: interesting.clone(),
                hashed: *hashed,
            },
        }
    }
}

impl From<layout::FlowEdge> for FlowEdge {
    fn from(fe: layout::FlowEdge) -> Self {
        match fe {
            layout::FlowEdge::Cfg(e) => FlowEdge::Cfg(e.0),
            layout::FlowEdge::Entry => FlowEdge::Entry,
            layout::FlowEdge::Exit(b) => FlowEdge::Exit(b.0),
        }
    }
}

impl From<&dag::Dag> for Dag {
    fn from(d: &dag::Dag) -> Self {
        Dag {
            num_blocks: d.num_blocks(),
            edges: d
                .edges()
                .iter()
                .map(|e| DagEdge {
                    from: e.from.0,
                    to: e.to.0,
                    kind: e.kind.into(),
                })
                .collect(),
            classes: d.classes().iter().map(|&c| c.into()).collect(),
            val: d.edge_ids().map(|e| d.val(e)).collect(),
        }
    }
}

impl From<dag::DagEdgeKind> for DagEdgeKind {
    fn from(k: dag::DagEdgeKind) -> Self {
        use dag::DagEdgeKind as K;
        match k {
            K::Entry => DagEdgeKind::Entry,
            K::Cfg(e) => DagEdgeKind::Cfg(e.0),
            K::Exit(b) => DagEdgeKind::Exit(b.0),
            K::BackEntry(e) => DagEdgeKind::BackEntry(e.0),
            K::BackExit(e) => DagEdgeKind::BackExit(e.0),
            K::UnsplitEntry(b) => DagEdgeKind::UnsplitEntry(b.0),
            K::UnsplitExit(b) => DagEdgeKind::UnsplitExit(b.0),
            K::CallExit(b, k) => DagEdgeKind::CallExit(b.0, k),
        }
    }
}

impl From<dag::EdgeClass> for EdgeClass {
    fn from(c: dag::EdgeClass) -> Self {
        use dag::EdgeClass as C;
        match c {
            C::Forward => EdgeClass::Forward,
            C::Back => EdgeClass::Back,
            C::Cut => EdgeClass::Cut,
            C::Resume => EdgeClass::Resume,
            C::SelfLoop => EdgeClass::SelfLoop,
            C::Unsplit => EdgeClass::Unsplit,
            C::Sibling => EdgeClass::Sibling,
            C::Unreachable => EdgeClass::Unreachable,
        }
    }
}

// Reading: the schema to the in-memory types, checked.

impl TryFrom<Fragment> for MapFile {
    type Error = String;
    /// The map `f` describes, or why it cannot be used (a one-line message).
    fn try_from(f: Fragment) -> Result<Self, String> {
        f.check_sizes()?;
        let functions = f
            .functions
            .into_iter()
            .enumerate()
            .map(|(i, function)| read_function(i, function))
            .collect::<Result<_, _>>()?;
        let map = MapFile {
            mode: f.mode.into(),
            build_id: f.build_id,
            files: f.files,
            file_digests: f.file_digests,
            functions,
            atomic: f.atomic,
            per_thread: f.per_thread,
            p3: f.p3.map(|p| super::P3Build {
                copies: p.copies,
                call_sites: p.call_sites,
                trained: p.trained,
            }),
        };
        map.check()?;
        Ok(map)
    }
}

impl From<Mode> for plan::Mode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Block => plan::Mode::Block,
            Mode::Edge => plan::Mode::Edge,
            Mode::Path => plan::Mode::Path,
        }
    }
}

/// Function `i` of a map: its CFG and layout built and checked as their
/// types require (the rest of [`MapFile::check`] comes after).
fn read_function(i: usize, f: Function) -> Result<MapFunction, String> {
    let problem = |e: &dyn std::fmt::Display| format!("function #{i} ({:?}): {e}", f.name);
    let cfg = cfg::Cfg::try_from(f.cfg).map_err(|e| problem(&e))?;
    let layout = layout::Layout::try_from(f.layout).map_err(|e| problem(&e))?;
    Ok(MapFunction {
        name: f.name,
        display_name: f.display_name,
        file: f.file,
        line: f.line,
        hash: f.hash,
        cfg,
        blocks: f.blocks.into_iter().map(BlockInfo::from).collect(),
        layout,
        entry_calls: f
            .entry_calls
            .into_iter()
            .map(|s| super::CallSite {
                function: s.function,
                block: crate::ids::BlockId::new(s.block as usize),
            })
            .collect(),
        entries_by_callers: false,
    })
}

impl From<Block> for BlockInfo {
    fn from(b: Block) -> Self {
        BlockInfo {
            line: b.line,
            instructions: b.instructions,
            lines: b
                .lines
                .into_iter()
                .map(|l| MapLineSpan {
                    file: l.file,
                    line: l.line,
                    instructions: l.instructions,
                })
                .collect(),
        }
    }
}

impl TryFrom<Cfg> for cfg::Cfg {
    type Error = cfg::CfgError;
    fn try_from(c: Cfg) -> Result<Self, cfg::CfgError> {
        let edges = c
            .edges
            .into_iter()
            .map(|e| cfg::CfgEdge {
                from: BlockId(e.from),
                to: BlockId(e.to),
                slot: e.slot,
                splittable: e.splittable,
                resume: e.resume,
            })
            .collect();
        let mut cfg = cfg::Cfg::new(c.num_blocks, BlockId(c.entry), edges)?;
        if !c.calls.is_empty() {
            cfg.set_calls(c.calls)?;
        }
        let ends: Vec<BlockId> = c.terminator_calls.into_iter().map(BlockId).collect();
        cfg.set_terminator_calls(&ends)?;
        Ok(cfg)
    }
}

impl TryFrom<Layout> for layout::Layout {
    type Error = String;
    fn try_from(l: Layout) -> Result<Self, String> {
        let ids = |ids: Vec<u32>| ids.into_iter().map(EdgeId).collect();
        Ok(match l {
            Layout::Block {
                slot_of_block,
                calls_slot,
            } => layout::Layout::Block {
                slot_of_block,
                calls_slot,
            },
            Layout::Edge {
                counted,
                net_call_exits,
                entry_replaces,
            } => layout::Layout::Edge {
                counted: counted.into_iter().map(Into::into).collect(),
                net_call_exits,
                entry_replaces: entry_replaces.map(Into::into),
            },
            Layout::Path {
                dag,
                self_loops,
                resumes,
                call_exits,
                ppp_owners,
                interesting,
                hashed,
            } => layout::Layout::Path {
                dag: dag.try_into()?,
                self_loops: ids(self_loops),
                resumes: ids(resumes),
                call_exits: call_exits.into_iter().map(BlockId).collect(),
                ppp_owners,
                interesting,
                hashed,
            },
        })
    }
}

impl From<FlowEdge> for layout::FlowEdge {
    fn from(fe: FlowEdge) -> Self {
        match fe {
            FlowEdge::Cfg(e) => layout::FlowEdge::Cfg(EdgeId(e)),
            FlowEdge::Entry => layout::FlowEdge::Entry,
            FlowEdge::Exit(b) => layout::FlowEdge::Exit(BlockId(b)),
        }
    }
}

impl TryFrom<Dag> for dag::Dag {
    type Error = String;
    fn try_from(d: Dag) -> Result<Self, String> {
        let edges = d
            .edges
            .into_iter()
            .map(|e| dag::DagEdge {
                from: NodeId(e.from),
                to: NodeId(e.to),
                kind: e.kind.into(),
            })
            .collect();
        let classes = d.classes.into_iter().map(Into::into).collect();
        dag::Dag::from_numbering(d.num_blocks, edges, classes, d.val)
    }
}

impl From<DagEdgeKind> for dag::DagEdgeKind {
    fn from(k: DagEdgeKind) -> Self {
        use dag::DagEdgeKind as K;
        match k {
            DagEdgeKind::Entry => K::Entry,
            DagEdgeKind::Cfg(e) => K::Cfg(EdgeId(e)),
            DagEdgeKind::Exit(b) => K::Exit(BlockId(b)),
            DagEdgeKind::BackEntry(e) => K::BackEntry(EdgeId(e)),
            DagEdgeKind::BackExit(e) => K::BackExit(EdgeId(e)),
            DagEdgeKind::UnsplitEntry(b) => K::UnsplitEntry(BlockId(b)),
            DagEdgeKind::UnsplitExit(b) => K::UnsplitExit(BlockId(b)),
            DagEdgeKind::CallExit(b, k) => K::CallExit(BlockId(b), k),
        }
    }
}

impl From<EdgeClass> for dag::EdgeClass {
    fn from(c: EdgeClass) -> Self {
        use dag::EdgeClass as C;
        match c {
            EdgeClass::Forward => C::Forward,
            EdgeClass::Back => C::Back,
            EdgeClass::Cut => C::Cut,
            EdgeClass::Resume => C::Resume,
            EdgeClass::SelfLoop => C::SelfLoop,
            EdgeClass::Unsplit => C::Unsplit,
            EdgeClass::Sibling => C::Sibling,
            EdgeClass::Unreachable => C::Unreachable,
        }
    }
}

// The serde forms of the in-memory types: their schema's.

impl Serialize for MapFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Fragment::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for MapFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        MapFile::try_from(Fragment::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Serialize for MapFunction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Function::from(self).serialize(s)
    }
}

impl Serialize for plan::Mode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Mode::from(*self).serialize(s)
    }
}

/// A hash identifying a counter layout, folded into the build id: the
/// FNV-1a of its JSON in the map, so that build ids stay those of the maps
/// already written.
pub fn layout_identity(layout: &layout::Layout) -> u64 {
    let json = serde_json::to_vec(&Layout::from(layout));
    crate::hash::fnv64(&json.expect("layout serializes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cfg_goes_through_its_schema_unchanged() {
        let mut c = cfg::Cfg::from_edge_list(4, &[(0, 1), (0, 1), (1, 1), (3, 1)]).unwrap();
        let json = serde_json::to_string(&Cfg::from(&c)).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"num_blocks":4,"entry":0,"edges":["#,
                r#"{"from":0,"to":1,"slot":0,"splittable":true},"#,
                r#"{"from":0,"to":1,"slot":1,"splittable":true},"#,
                r#"{"from":1,"to":1,"slot":0,"splittable":true},"#,
                r#"{"from":3,"to":1,"slot":0,"splittable":true}]}"#
            )
        );
        let back: Cfg = serde_json::from_str(&json).unwrap();
        assert_eq!(cfg::Cfg::try_from(back).unwrap(), c);
        c.set_calls(vec![0, 2, 0, 1]).unwrap();
        let back = cfg::Cfg::try_from(Cfg::from(&c)).unwrap();
        assert_eq!(back, c);
    }
}
