//! Damaged and crafted map files: every input gives a clear one-line error or a
//! map that reports can use (it writes back to an equal map, every layout fits
//! its CFG, every path id in range regenerates to a path of that id, counters
//! interpret without panicking); never a panic, a hang or an allocation the
//! file's size does not justify.

use pathprof_core::derive::derive;
use pathprof_core::hash::fnv64;
use pathprof_core::layout::Layout;
use pathprof_core::map::{BlockInfo, MapError, MapFile, MapFunction};
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::regen::{path_id, regenerate};
use pathprof_core::{Cfg, Mode};
use proptest::prelude::*;
use std::sync::OnceLock;

mod seed_maps;

/// The bodies of valid maps of every mode, with truncation and early exits.
fn bodies() -> &'static [Vec<u8>] {
    static BODIES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BODIES.get_or_init(|| {
        seed_maps::maps()
            .iter()
            .map(|(_, m)| serde_json::to_vec(m).unwrap())
            .collect()
    })
}

fn with_header(body: &[u8]) -> Vec<u8> {
    let mut out = format!("pathprof-map 1 {:016x}\n", fnv64(body)).into_bytes();
    out.extend_from_slice(body);
    out
}

/// A version 3 fragment: `stored` (normally `body` deflated) behind a correct
/// checksum, declaring `json_len` bytes of JSON.
fn v3(stored: &[u8], json_len: usize) -> Vec<u8> {
    let mut out = format!(
        "pathprof-map 3 {:016x} {} {json_len}\n",
        fnv64(stored),
        stored.len()
    )
    .into_bytes();
    out.extend_from_slice(stored);
    out
}

fn deflated(body: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec(body, 6)
}

/// Reads `bytes`; a map that reads is checked for use by reports.
fn check(bytes: &[u8]) -> Result<MapFile, MapError> {
    let map = match MapFile::from_bytes(bytes, "t.ppmap") {
        Ok(map) => map,
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "not one line: {msg}");
            return Err(e);
        }
    };
    let again = MapFile::from_bytes(&map.to_bytes(), "again.ppmap").expect("writes back");
    assert_eq!(again, map);
    for f in &map.functions {
        assert_eq!(f.blocks.len(), f.cfg.num_blocks());
        let _ = derive(&f.cfg, &f.layout, &[], &[]);
        if let Layout::Path { dag, .. } = &f.layout {
            let n = dag.num_paths();
            for id in [0, n / 2, n.saturating_sub(1)]
                .into_iter()
                .filter(|&id| id < n)
            {
                let path = regenerate(dag, id).expect("an id in range regenerates");
                assert_eq!(path_id(dag, &path.edges), id);
                let _ = derive(&f.cfg, &f.layout, &[], &[(id, 2)]);
            }
        }
    }
    Ok(map)
}

/// The spans of decimal digits in `body`: the numbers a mutation may change.
fn numbers(body: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if body[i].is_ascii_digit() {
            let start = i;
            while i < body.len() && body[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "7",
    "2147483647",
    "2147483648",
    "4294967295",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
];

#[test]
fn valid_maps_read_back() {
    for body in bodies() {
        let map = check(&with_header(body)).unwrap();
        assert_eq!(serde_json::to_vec(&map).unwrap(), *body);
    }
}

#[test]
fn compressed_maps_read_back_and_damaged_ones_are_refused() {
    for body in bodies() {
        let map = check(&v3(&deflated(body), body.len())).unwrap();
        assert_eq!(serde_json::to_vec(&map).unwrap(), *body);
        // What this pathprof writes is version 3, and reads back.
        assert!(map.to_bytes().starts_with(b"pathprof-map 3 "));
        let d = malformed(&v3(&deflated(body), body.len() + 1));
        assert!(d.contains("not the"), "{d}");
        let d = malformed(&v3(&deflated(body), body.len() - 1));
        assert!(d.contains("declares") || d.contains("inflate"), "{d}");
        // Raw JSON behind a version 3 header is not DEFLATE.
        let d = malformed(&v3(body, body.len()));
        assert!(d.contains("inflate") || d.contains("not the"), "{d}");
    }
    // A declared length no DEFLATE stream of this size can reach: refused
    // before anything is allocated for it.
    let d = malformed(&v3(&deflated(b"{}"), usize::MAX / 2));
    assert!(d.contains("compressed bytes"), "{d}");
    let d = malformed(b"pathprof-map 3 0000000000000000 0\n");
    assert!(d.contains("lengths are missing"), "{d}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The checksum refuses any changed byte of a compressed map, and a cut
    /// one is refused.
    #[test]
    fn compressed_maps_changed_or_cut_are_refused(
        which in 0..4usize,
        at in any::<prop::sample::Index>(),
        x in 1..=255u8,
    ) {
        let body = &bodies()[which];
        let mut bytes = v3(&deflated(body), body.len());
        let cut = at.index(bytes.len());
        prop_assert!(check(&bytes[..cut]).is_err());
        bytes[cut] ^= x;
        prop_assert!(check(&bytes).is_err());
    }

    /// The checksum refuses any changed byte of the file.
    #[test]
    fn any_changed_byte_is_refused(which in 0..4usize, at in any::<prop::sample::Index>(), x in 1..=255u8) {
        let mut bytes = with_header(&bodies()[which]);
        let i = at.index(bytes.len());
        bytes[i] ^= x;
        prop_assert!(check(&bytes).is_err());
    }

    /// Any cut body, even behind a correct header, is refused.
    #[test]
    fn any_cut_is_refused(which in 0..4usize, at in any::<prop::sample::Index>()) {
        let body = &bodies()[which];
        let cut = &body[..at.index(body.len())];
        prop_assert!(check(&with_header(cut)).is_err());
        let mut bytes = with_header(body);
        bytes.truncate(at.index(bytes.len()));
        prop_assert!(check(&bytes).is_err());
    }

    /// Changed bytes behind a correct header reach the JSON and its checks.
    #[test]
    fn changed_bytes_behind_a_good_header(
        which in 0..4usize,
        changes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut body = bodies()[which].clone();
        for (at, x) in changes {
            let i = at.index(body.len());
            body[i] = x;
        }
        let _ = check(&with_header(&body));
    }

    /// Any number in the map set to a small, boundary or huge value: indices,
    /// block counts, path values, slots.
    #[test]
    fn changed_numbers(
        which in 0..4usize,
        changes in prop::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..3),
    ) {
        let mut body = bodies()[which].clone();
        for (at, value) in changes {
            let spans = numbers(&body);
            let (s, e) = spans[at.index(spans.len())];
            body.splice(s..e, VALUES[value.index(VALUES.len())].bytes());
        }
        let _ = check(&with_header(&body));
    }

    /// The front of one map and the back of another (of any mode).
    #[test]
    fn spliced_maps(
        a in 0..4usize,
        b in 0..4usize,
        i in any::<prop::sample::Index>(),
        j in any::<prop::sample::Index>(),
    ) {
        let (x, y) = (&bodies()[a], &bodies()[b]);
        let mut body = x[..i.index(x.len())].to_vec();
        body.extend_from_slice(&y[j.index(y.len())..]);
        let _ = check(&with_header(&body));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Every map the planners write reads back: the checks refuse no real map
    /// (random CFGs with loops, self loops, multi-edges, unreachable blocks and
    /// calls; path layouts truncated or not, with early exits or not).
    #[test]
    fn planned_maps_read_back(
        n in 1..9usize,
        pairs in prop::collection::vec((0..9u32, 0..9u32), 0..16),
        calls in prop::collection::vec(0..3u32, 9),
        max_paths in prop_oneof![Just(1u64 << 62), 2..20u64],
        early_exit in any::<bool>(),
    ) {
        let pairs: Vec<(u32, u32)> = pairs
            .into_iter()
            .map(|(a, b)| (a % n as u32, b % n as u32))
            .collect();
        let mut cfg = Cfg::from_edge_list(n, &pairs).unwrap();
        cfg.set_calls(calls[..n].to_vec()).unwrap();
        let options = PlanOptions::default()
            .with_max_paths(max_paths)
            .with_early_exit(early_exit);
        for mode in [Mode::Block, Mode::Edge, Mode::Path] {
            let Ok((_, layout)) = plan_function(&cfg, mode, &options) else {
                continue;
            };
            let f = MapFunction {
                name: "f".into(),
                display_name: None,
                file: None,
                line: None,
                hash: cfg.shape_hash(),
                cfg: cfg.clone(),
                blocks: vec![BlockInfo::default(); n],
                layout,
                entry_calls: Vec::new(),
                entries_by_callers: false,
            };
            let functions = serde_json::to_value(vec![f]).unwrap();
            let body = serde_json::to_vec(&serde_json::json!({
                "mode": mode, "build_id": 1, "files": [], "functions": functions,
            }))
            .unwrap();
            check(&with_header(&body)).unwrap();
        }
    }
}

/// The path map's body with `from` replaced by `to` (which must occur).
fn edited(which: usize, from: &str, to: &str) -> Vec<u8> {
    let body = String::from_utf8(bodies()[which].clone()).unwrap();
    assert!(body.contains(from), "{from} not in the map");
    with_header(body.replacen(from, to, 1).as_bytes())
}

fn malformed(bytes: &[u8]) -> String {
    match check(bytes) {
        Err(MapError::Malformed { detail, .. }) => detail,
        other => panic!("expected a malformed map, got {other:?}"),
    }
}

#[test]
fn crafted_maps_are_refused() {
    // Block counts that would allocate gigabytes.
    for n in ["2147483647", "4294967295", "18446744073709551615"] {
        let d = malformed(&edited(
            0,
            r#""num_blocks":1,"#,
            &format!(r#""num_blocks":{n},"#),
        ));
        assert!(d.contains("block records"), "{d}");
        let d = malformed(&edited(
            2,
            r#""dag":{"num_blocks":1,"#,
            &format!(r#""dag":{{"num_blocks":{n},"#),
        ));
        assert!(d.contains("block records"), "{d}");
    }
    // A DAG over other blocks than its CFG's.
    let d = malformed(&edited(
        2,
        r#""cfg":{"num_blocks":1,"entry":0,"edges":[]},"blocks":[{"line":2,"instructions":1,"lines":[{"file":0,"line":2,"instructions":1}]}]"#,
        r#""cfg":{"num_blocks":2,"entry":0,"edges":[]},"blocks":[{"line":2,"instructions":1,"lines":[]},{"line":2,"instructions":1,"lines":[]}]"#,
    ));
    assert!(d.contains("path DAG over 1 blocks"), "{d}");
    // Too few block records, a file index out of range.
    let d = malformed(&edited(
        0,
        r#"{"line":2,"instructions":1,"lines":[{"file":0,"line":2,"instructions":1}]}"#,
        r#"{"line":2,"instructions":1,"lines":[{"file":9,"line":2,"instructions":1}]}"#,
    ));
    assert!(d.contains("source file index"), "{d}");
    // A block counter beyond the function's counters.
    let d = malformed(&edited(
        0,
        r#""slot_of_block":[0]"#,
        r#""slot_of_block":[5]"#,
    ));
    assert!(d.contains("block counter 5"), "{d}");
    let d = malformed(&edited(
        0,
        r#""slot_of_block":[0]"#,
        r#""slot_of_block":[0,0]"#,
    ));
    assert!(d.contains("block layout of 2 entries"), "{d}");
    // A path value that breaks the numbering (regeneration would find no edge).
    let d = malformed(&edited(2, r#""val":[0,0]"#, r#""val":[0,1]"#));
    assert!(d.contains("numbering"), "{d}");
    // A DAG edge whose kind names another CFG edge than it joins.
    let d = malformed(&edited(2, r#"{"Exit":0}"#, r#"{"UnsplitEntry":0}"#));
    assert!(d.contains("DAG edge"), "{d}");
    // Text that serde quotes back stays on one line (found by fuzzing).
    let d = malformed(&edited(2, r#"{"Exit":0}"#, r#"{"\nExit":0}"#));
    assert!(d.contains(r"unknown variant `\nExit`"), "{d}");
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let _ = malformed(&with_header(deep.as_bytes()));
}
