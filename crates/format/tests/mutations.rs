//! Damaged and crafted raw profile files of any number of sections (builds),
//! generated: every input decodes to a clear one-line error or to a file
//! that re-encodes to the same bytes; never a panic, a hang or an allocation
//! the file's size does not justify. The owned decoders and the
//! allocation-free view always agree, and so do the two merges, which are
//! commutative and associative, keep every build and add the facts of the
//! sections of one build.

use pathprof_format::{
    fnv1a64, merge_into, FormatError, ProfileFile, ProfileView, RawFunction, RawProfile, MAGIC,
    VERSION,
};
use proptest::prelude::*;

/// `(id, count)` entries, ids strictly increasing, counts nonzero.
fn entries() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::btree_map(
        prop_oneof![0..8u64, Just(u64::MAX)],
        prop_oneof![1..4u64, Just(u64::MAX)],
        0..4,
    )
    .prop_map(|m| m.into_iter().collect())
}

/// A function of index `index`; its hash and slot count depend on the index
/// only, so that random profiles of one build merge.
fn function(index: u32) -> impl Strategy<Value = RawFunction> {
    let num_slots = (index % 3) as usize;
    let slots = prop::collection::vec(prop_oneof![Just(0u64), 1..5u64, Just(u64::MAX)], num_slots);
    // A resume count per slot, zero for most (no entry).
    let slot_resumes = prop::collection::vec(
        prop_oneof![3 => Just(0u64), 1 => 1..3u64, 1 => Just(u64::MAX)],
        num_slots,
    );
    (slots, entries(), slot_resumes, entries()).prop_map(
        move |(slots, paths, slot_resumes, path_resumes)| RawFunction {
            index,
            hash: 0x1000 + u64::from(index),
            slots,
            paths,
            slot_resumes: (0..).zip(slot_resumes).filter(|&(_, r)| r != 0).collect(),
            path_resumes,
        },
    )
}

/// Object paths: a few of a pool of 40, now and then nearly all of them
/// (beyond the 32 a section keeps).
fn objects() -> impl Strategy<Value = (Vec<String>, bool)> {
    let some = prop_oneof![
        3 => prop::collection::btree_set(0..40u32, 0..3),
        1 => prop::collection::btree_set(0..40u32, 28..40),
    ];
    (some, prop::bool::weighted(0.2)).prop_map(|(set, truncated)| {
        let mut p = RawProfile {
            objects: set.into_iter().map(|k| format!("/obj/{k:02}")).collect(),
            objects_truncated: truncated,
            ..RawProfile::default()
        };
        p.normalize();
        (p.objects, p.objects_truncated)
    })
}

/// A section of build `build_id`, whose mode depends on the build id only,
/// so that random files merge.
fn section(build_id: u64) -> impl Strategy<Value = RawProfile> {
    let functions = prop::collection::btree_set(0..6u32, 0..4)
        .prop_flat_map(|indices| indices.into_iter().map(function).collect::<Vec<_>>());
    (
        functions,
        0..3u64,
        0..2u64,
        prop_oneof![Just(0u64), Just(u64::MAX)],
        objects(),
    )
        .prop_map(
            move |(functions, processes, forked, threads, (objects, objects_truncated))| {
                RawProfile {
                    build_id,
                    mode: (build_id % 3) as u32,
                    processes,
                    forked,
                    threads,
                    killed: forked / 2,
                    killed_at_exit: forked / 2 * (processes % 2),
                    killed_in_signal: 0,
                    killed_signals: processes << 14,
                    objects,
                    objects_truncated,
                    functions,
                }
            },
        )
}

fn profile() -> impl Strategy<Value = RawProfile> {
    section(0xb1d)
}

/// A file of up to four sections of builds from a small set (so that
/// merged files share some).
fn file() -> impl Strategy<Value = ProfileFile> {
    prop::collection::btree_set(prop_oneof![0..5u64, Just(u64::MAX)], 0..4).prop_flat_map(|ids| {
        ids.into_iter()
            .map(section)
            .collect::<Vec<_>>()
            .prop_map(|sections| ProfileFile { sections })
    })
}

/// `bytes` with their trailing checksum made right again.
fn fix_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(body) = bytes.len().checked_sub(8) {
        let sum = fnv1a64(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
    }
    bytes
}

/// Decodes `bytes` every way: the same error (one line), or one file that
/// keeps the invariants and re-encodes to exactly `bytes`, which the view
/// reads section by section alike, and which the one-build reader reads
/// when it has one section.
fn check(bytes: &[u8]) -> Result<ProfileFile, FormatError> {
    let owned = ProfileFile::decode(bytes);
    let view = ProfileView::parse(bytes);
    let single = RawProfile::decode(bytes);
    match (owned, view) {
        (Ok(file), Ok(v)) => {
            assert!(file.is_canonical());
            assert_eq!(
                file.encode(),
                bytes,
                "a decoded file re-encodes to its bytes"
            );
            assert_eq!(v.num_sections(), file.sections.len() as u64);
            for (sv, p) in v.sections().zip(&file.sections) {
                assert_eq!(
                    (sv.build_id(), sv.mode(), sv.facts()),
                    (p.build_id, p.mode, p.facts())
                );
                assert!(sv.objects().eq(p.objects.iter().map(String::as_str)));
                assert_eq!(sv.objects_truncated(), p.objects_truncated);
                assert_eq!(sv.num_functions(), p.functions.len() as u64);
                for (fv, f) in sv.functions().zip(&p.functions) {
                    assert_eq!((fv.index(), fv.hash()), (f.index, f.hash));
                    assert!(fv.slots().eq(f.slots.iter().copied()));
                    assert!(fv.paths().eq(f.paths.iter().copied()));
                    assert_eq!(fv.num_slot_resumes(), f.slot_resumes.len() as u64);
                    assert!(fv.slot_resumes().eq(f.slot_resumes.iter().copied()));
                    assert_eq!(fv.num_path_resumes(), f.path_resumes.len() as u64);
                    assert!(fv.path_resumes().eq(f.path_resumes.iter().copied()));
                }
            }
            match &file.sections[..] {
                [one] => assert_eq!(single.as_ref(), Ok(one)),
                many => assert_eq!(
                    single,
                    Err(FormatError::NotOneBuild {
                        builds: many.len() as u64
                    })
                ),
            }
            Ok(file)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "decode and view give different errors");
            assert_eq!(single, Err(a.clone()), "the one-build reader agrees");
            let msg = a.to_string();
            assert!(!msg.contains('\n'), "not one line: {msg}");
            Err(a)
        }
        (a, b) => panic!("decode and view disagree: {a:?} / {:?}", b.err()),
    }
}

/// Merges both ways: the same error, or the same bytes, which decode again;
/// the merge is commutative, keeps every build, and adds the facts of the
/// sections of one build.
fn check_merge(a: &[u8], b: &[u8]) {
    let (Ok(pa), Ok(pb)) = (check(a), check(b)) else {
        return;
    };
    let (va, vb) = (
        ProfileView::parse(a).unwrap(),
        ProfileView::parse(b).unwrap(),
    );
    let mut owned = pa.clone();
    let owned = owned.merge(&pb).map(|()| owned.encode());
    let view = merge_into(&va, &vb, Vec::new());
    assert_eq!(owned, view, "merge and merge_into disagree");
    match view {
        Ok(bytes) => {
            assert!(bytes.len() <= a.len() + b.len());
            let merged = check(&bytes).expect("a merged file decodes");
            let mut other_way = pb.clone();
            other_way.merge(&pa).expect("merges the other way too");
            assert_eq!(other_way, merged, "merging is commutative");
            let mut ids = pa.build_ids();
            ids.extend(pb.build_ids());
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(merged.build_ids(), ids, "every build kept, once");
            for s in &merged.sections {
                let facts = |f: &ProfileFile| f.section(s.build_id).map(RawProfile::facts);
                let want = facts(&pa)
                    .unwrap_or_default()
                    .saturating_add(facts(&pb).unwrap_or_default());
                assert_eq!(s.facts(), want, "facts added per section");
            }
        }
        Err(e) => {
            let mut unchanged = pa.clone();
            assert_eq!(unchanged.merge(&pb), Err(e));
            assert_eq!(unchanged, pa, "a refused merge changes nothing");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn valid_files_round_trip(p in profile(), f in file()) {
        let bytes = p.encode();
        prop_assert_eq!(check(&bytes).unwrap(), ProfileFile::from(p.clone()));
        prop_assert_eq!(RawProfile::decode(&bytes).unwrap(), p);
        let bytes = f.encode();
        prop_assert_eq!(check(&bytes).unwrap(), f);
    }

    #[test]
    fn any_changed_byte_is_refused(f in file(), at in any::<prop::sample::Index>(), x in 1..=255u8) {
        let mut bytes = f.encode();
        let i = at.index(bytes.len());
        bytes[i] ^= x;
        prop_assert!(check(&bytes).is_err());
    }

    #[test]
    fn any_cut_is_refused(f in file(), at in any::<prop::sample::Index>()) {
        let bytes = f.encode();
        let cut = at.index(bytes.len());
        prop_assert!(check(&bytes[..cut]).is_err());
        prop_assert!(check(&fix_checksum(bytes[..cut].to_vec())).is_err());
    }

    /// Changes behind a correct checksum reach the structure checks.
    #[test]
    fn changed_bytes_behind_a_good_checksum(
        f in file(),
        changes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = f.encode();
        for (at, x) in changes {
            let i = at.index(bytes.len());
            bytes[i] = x;
        }
        let bytes = fix_checksum(bytes);
        let _ = check(&bytes);
        check_merge(&bytes, &f.encode());
    }

    /// The front of one file and the back of another, checksum fixed.
    #[test]
    fn spliced_files(
        p in file(),
        q in file(),
        i in any::<prop::sample::Index>(),
        j in any::<prop::sample::Index>(),
    ) {
        let (a, b) = (p.encode(), q.encode());
        let mut bytes = a[..i.index(a.len())].to_vec();
        bytes.extend_from_slice(&b[j.index(b.len())..]);
        let bytes = fix_checksum(bytes);
        let _ = check(&bytes);
        check_merge(&bytes, &a);
    }

    /// Whole sections of one file spliced into another (section count
    /// fixed): a correct file or a one-line error.
    #[test]
    fn sections_spliced_between_files(p in file(), q in file(), k in 0..5usize) {
        let (a, b) = (p.encode(), q.encode());
        let sections = |bytes: &[u8]| -> Vec<Vec<u8>> {
            let v = ProfileView::parse(bytes).unwrap();
            v.sections().map(|s| s.as_bytes().to_vec()).collect()
        };
        let mut all = sections(&a);
        let theirs = sections(&b);
        all.insert(k.min(all.len()), theirs.first().cloned().unwrap_or_default());
        let mut bytes = a[..24].to_vec();
        bytes[16..24].copy_from_slice(&(all.len() as u64).to_le_bytes());
        all.iter().for_each(|s| bytes.extend_from_slice(s));
        bytes.extend_from_slice(&[0; 8]);
        let bytes = fix_checksum(bytes);
        let _ = check(&bytes);
        check_merge(&bytes, &b);
    }

    #[test]
    fn merges_agree(p in file(), q in file()) {
        check_merge(&p.encode(), &q.encode());
    }

    #[test]
    fn merging_is_associative(p in file(), q in file(), r in file()) {
        let mut pq = p.clone();
        pq.merge(&q).unwrap();
        pq.merge(&r).unwrap();
        let mut qr = q.clone();
        qr.merge(&r).unwrap();
        let mut p_qr = p.clone();
        p_qr.merge(&qr).unwrap();
        prop_assert_eq!(&pq, &p_qr);
        // The allocation-free merge, folded either way, gives the same bytes.
        let merge = |a: &[u8], b: &[u8]| {
            merge_into(
                &ProfileView::parse(a).unwrap(),
                &ProfileView::parse(b).unwrap(),
                Vec::new(),
            )
            .unwrap()
        };
        let (a, b, c) = (p.encode(), q.encode(), r.encode());
        prop_assert_eq!(merge(&merge(&a, &b), &c), pq.encode());
        prop_assert_eq!(merge(&a, &merge(&b, &c)), pq.encode());
    }
}

/// A header of this version with one section (build 0, path mode, no
/// objects) declaring `functions` records, then `tail` and a good checksum.
fn crafted(functions: u64, tail: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes()); // reserved
    bytes.extend_from_slice(&1u64.to_le_bytes()); // sections
    bytes.extend_from_slice(&0u64.to_le_bytes()); // build id
    bytes.extend_from_slice(&2u32.to_le_bytes()); // mode
    bytes.extend_from_slice(&0u32.to_le_bytes()); // flags
    bytes.extend_from_slice(&[0; 8 * 8]); // the seven facts, objects
    bytes.extend_from_slice(&functions.to_le_bytes());
    bytes.extend_from_slice(tail);
    bytes.extend_from_slice(&[0; 8]);
    fix_checksum(bytes)
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    // A header written by this crate has the layout `crafted` assumes.
    let empty = RawProfile::new(0, 2).encode();
    assert_eq!(crafted(0, &[]), empty);
    for n in [1, u64::MAX, 1 << 61, 1 << 32] {
        let err = check(&crafted(n, &[])).unwrap_err();
        assert!(matches!(err, FormatError::Truncated { .. }), "{err:?}");
    }
    // One function claiming 2^61 slots, 2^60 paths, 2^60 slot resumes or
    // 2^60 path resumes (each list's count followed by the others' zeros).
    let huge = [
        [1u64 << 61, 0, 0, 0],
        [0, 1 << 60, 0, 0],
        [0, 0, 1 << 60, 0],
        [0, 0, 0, 1 << 60],
        [0, 0, 1, 0],
        [0, 0, 0, 1],
        [u64::MAX; 4],
    ];
    for counts in huge {
        let mut f = 0u32.to_le_bytes().to_vec();
        f.extend_from_slice(&7u64.to_le_bytes());
        for n in counts {
            f.extend_from_slice(&n.to_le_bytes());
        }
        let err = check(&crafted(1, &f)).unwrap_err();
        assert!(
            matches!(err, FormatError::Truncated { .. }),
            "{counts:?}: {err:?}"
        );
    }
    // The same record with all four counts zero is a valid empty function.
    let mut f = 0u32.to_le_bytes().to_vec();
    f.extend_from_slice(&7u64.to_le_bytes());
    f.extend_from_slice(&[0; 8 * 4]);
    let p = check(&crafted(1, &f)).unwrap();
    assert_eq!(
        p.sections[0].functions,
        vec![RawFunction {
            index: 0,
            hash: 7,
            ..Default::default()
        }]
    );
}

/// Every record of a profile with resumes survives no cut and no changed
/// byte, exhaustively (the proptests above sample them).
#[test]
fn every_cut_and_change_of_a_file_with_resumes_is_refused() {
    let p = RawProfile {
        build_id: 0xb1d,
        mode: 2,
        processes: 1,
        functions: vec![
            RawFunction {
                index: 1,
                hash: 0x1001,
                slots: vec![0],
                paths: vec![(2, 1)],
                slot_resumes: vec![(0, 1)],
                path_resumes: vec![(2, 3), (u64::MAX, 1)],
            },
            RawFunction {
                index: 4,
                hash: 0x1004,
                slots: vec![0, 0],
                slot_resumes: vec![(1, u64::MAX)],
                ..Default::default()
            },
            RawFunction {
                index: 5,
                hash: 0x1005,
                path_resumes: vec![(0, 2)],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let bytes = p.encode();
    assert_eq!(check(&bytes).unwrap(), ProfileFile::from(p));
    for cut in 0..bytes.len() {
        assert!(check(&bytes[..cut]).is_err(), "cut at {cut}");
        assert!(
            check(&fix_checksum(bytes[..cut].to_vec())).is_err(),
            "cut at {cut}, checksum fixed"
        );
    }
    let mut v = bytes.clone();
    for i in 0..bytes.len() {
        for x in [1u8, 0x80, 0xff] {
            v[i] ^= x;
            assert!(check(&v).is_err(), "byte {i} ^ {x:#x}");
            // Behind a good checksum it may still decode (a count changed),
            // but both readers agree and it re-encodes to the same bytes.
            let _ = check(&fix_checksum(v.clone()));
            v[i] ^= x;
        }
    }
    check_merge(&bytes, &bytes);
}
