//! What the fuzz targets check, and the seed inputs they start from.
//!
//! Every input must give either a clear one-line error or a correct result;
//! a panic, a hang or a huge allocation is a bug in the parser it reached.
//! Inputs start with one flag byte: when its low bit is 0 the rest is given a
//! valid checksum first (the map's header line, the raw profile's trailing
//! FNV-1a), so that mutations reach the checks behind the checksum; for maps,
//! bit 1 then picks the compressed (version 3) header over the plain JSON one.

use pathprof_core::derive::derive;
use pathprof_core::hash::fnv64;
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFile;
use pathprof_core::profile::{interpret, mode_number};
use pathprof_format::{
    fnv1a64, merge_into, FormatError, ProfileFile, ProfileView, RawFunction, RawProfile,
};

/// The JSON `body` behind a valid map header line: as written (version 3,
/// compressed) when `compressed`, else as version 1 wrote it (plain JSON), so
/// that mutations of the JSON reach the checks behind either reader.
pub fn map_with_header(body: &[u8], compressed: bool) -> Vec<u8> {
    if !compressed {
        let mut out = format!("pathprof-map 1 {:016x}\n", fnv64(body)).into_bytes();
        out.extend_from_slice(body);
        return out;
    }
    let stored = miniz_oxide::deflate::compress_to_vec(body, 1);
    let mut out = format!(
        "pathprof-map 3 {:016x} {} {}\n",
        fnv64(&stored),
        stored.len(),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&stored);
    out
}

/// `bytes` with their last 8 bytes replaced by the FNV-1a of the rest.
pub fn with_profile_checksum(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(body_len) = out.len().checked_sub(8) {
        let sum = fnv1a64(&out[..body_len]);
        out[body_len..].copy_from_slice(&sum.to_le_bytes());
    }
    out
}

/// How many slot counters `layout` reads (what `derive` expects).
fn slot_count(layout: &Layout) -> usize {
    match layout {
        Layout::Block {
            slot_of_block,
            calls_slot,
        } => slot_of_block.iter().flatten().count() + usize::from(calls_slot.is_some()),
        Layout::Edge { counted } => counted.len(),
        Layout::Path { self_loops, .. } => self_loops.len(),
    }
}

/// Path ids worth trying on a layout: both ends, the middle, and one past.
fn some_path_ids(layout: &Layout) -> Vec<u64> {
    match layout {
        Layout::Path { dag, .. } => {
            let n = dag.num_paths();
            let mut ids = vec![0, n / 2, n.saturating_sub(1), n, u64::MAX];
            ids.sort_unstable();
            ids.dedup();
            ids
        }
        _ => Vec::new(),
    }
}

fn one_line(e: &dyn std::fmt::Display) {
    let msg = e.to_string();
    assert!(
        !msg.is_empty() && !msg.contains('\n'),
        "not a one-line error: {msg:?}"
    );
}

/// Reads `bytes` as a map file; if that succeeds, writes it back, reads it
/// again, and interprets counters against every function.
pub fn check_map(bytes: &[u8]) {
    let map = match MapFile::from_bytes(bytes, "fuzz.ppmap") {
        Ok(map) => map,
        Err(e) => return one_line(&e),
    };
    let again = MapFile::from_bytes(&map.to_bytes(), "again.ppmap")
        .expect("a map that was read writes back readably");
    assert_eq!(again, map, "map round trip");
    let mut raw = RawProfile::new(map.build_id, mode_number(map.mode));
    for (i, f) in map.functions.iter().enumerate() {
        if let Err(e) = derive(&f.cfg, &f.layout, &[], &[]) {
            one_line(&e);
        }
        let slots = vec![1; slot_count(&f.layout)];
        let ids = some_path_ids(&f.layout);
        for &id in &ids {
            if let Err(e) = derive(&f.cfg, &f.layout, &slots, &[(id, 1)]) {
                one_line(&e);
            }
        }
        if let Ok(index) = u32::try_from(i) {
            raw.functions.push(RawFunction {
                index,
                hash: f.hash,
                slots,
                paths: ids.iter().map(|&id| (id, 3)).collect(),
                ..Default::default()
            });
        }
    }
    if let Err(e) = interpret(&map, "fuzz.ppmap", &raw, "fuzz.pprof") {
        one_line(&e);
    }
}

/// Decodes `bytes` as a raw profile file every way (owned file, owned
/// single build, view) and, when it is valid, checks that it re-encodes to
/// the same bytes and merges with itself.
pub fn check_profile(bytes: &[u8]) {
    let decoded = ProfileFile::decode(bytes);
    let view = ProfileView::parse(bytes);
    let single = RawProfile::decode(bytes);
    let (file, v) = match (decoded, view) {
        (Ok(p), Ok(v)) => (p, v),
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "decode and view give different errors");
            assert_eq!(single, Err(a.clone()), "the one-build reader agrees");
            return one_line(&a);
        }
        (a, b) => panic!("decode and view disagree: {:?} / {:?}", a.err(), b.err()),
    };
    assert!(file.is_canonical(), "a decoded file keeps the invariants");
    assert_eq!(
        file.encode(),
        bytes,
        "a decoded file re-encodes to its bytes"
    );
    match &file.sections[..] {
        [one] => assert_eq!(single.as_ref(), Ok(one)),
        _ => match single {
            Err(e @ FormatError::NotOneBuild { .. }) => one_line(&e),
            other => panic!("a file of several builds read as one: {other:?}"),
        },
    }
    assert_eq!(v.num_sections(), file.sections.len() as u64);
    for (sv, p) in v.sections().zip(&file.sections) {
        assert_eq!((sv.build_id(), sv.mode()), (p.build_id, p.mode));
        assert_eq!(sv.facts(), p.facts());
        assert!(sv.objects().eq(p.objects.iter().map(String::as_str)));
        assert_eq!(sv.objects_truncated(), p.objects_truncated);
        assert_eq!(sv.num_functions(), p.functions.len() as u64);
        for (fv, f) in sv.functions().zip(&p.functions) {
            assert_eq!((fv.index(), fv.hash()), (f.index, f.hash));
            assert_eq!(fv.num_slots(), f.slots.len() as u64);
            assert_eq!(fv.num_paths(), f.paths.len() as u64);
            assert!(fv.slots().eq(f.slots.iter().copied()));
            assert!(fv.paths().eq(f.paths.iter().copied()));
            assert!(fv.slot_resumes().eq(f.slot_resumes.iter().copied()));
            assert!(fv.path_resumes().eq(f.path_resumes.iter().copied()));
        }
    }
    check_merge(bytes, bytes);
}

/// Merges two raw profile files both ways (owned and view) and checks that
/// the two agree: the same error, or the same bytes, which decode again and
/// hold every build of either file.
pub fn check_merge(a: &[u8], b: &[u8]) {
    let (Ok(pa), Ok(pb)) = (ProfileFile::decode(a), ProfileFile::decode(b)) else {
        return;
    };
    let (Ok(va), Ok(vb)) = (ProfileView::parse(a), ProfileView::parse(b)) else {
        panic!("decode accepted a profile the view refuses");
    };
    let mut owned = pa.clone();
    let owned_result = owned.merge(&pb).map(|()| owned.encode());
    let view_result: Result<Vec<u8>, FormatError> = merge_into(&va, &vb, Vec::new());
    match (&owned_result, &view_result) {
        (Ok(x), Ok(y)) => {
            assert_eq!(x, y, "merge and merge_into give different files");
            assert!(y.len() <= a.len() + b.len(), "the merged file grew");
            let m = ProfileFile::decode(y).expect("a merged profile decodes");
            // Merging is commutative.
            let mut other_way = pb.clone();
            other_way.merge(&pa).expect("merge succeeded the other way");
            assert_eq!(other_way, m, "merge is not commutative");
            let mut ids = pa.build_ids();
            ids.extend(pb.build_ids());
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(m.build_ids(), ids, "a build was lost or repeated");
        }
        (Err(x), Err(y)) => {
            assert_eq!(x, y, "merge and merge_into give different errors");
            one_line(x);
        }
        _ => panic!("merge and merge_into disagree: {owned_result:?} / {view_result:?}"),
    }
    if owned_result.is_err() {
        let mut unchanged = pa.clone();
        let _ = unchanged.merge(&pb);
        assert_eq!(unchanged, pa, "a refused merge changed the profile");
    }
}
