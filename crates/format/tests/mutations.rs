//! Damaged and crafted raw profiles, generated: every input decodes to a
//! clear one-line error or to a profile that re-encodes to the same bytes;
//! never a panic, a hang or an allocation the file's size does not justify.
//! The owned decoder and the allocation-free view always agree, and so do the
//! two merges.

use pathprof_format::{
    fnv1a64, merge_into, FormatError, ProfileView, RawFunction, RawProfile, MAGIC, VERSION,
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

fn profile() -> impl Strategy<Value = RawProfile> {
    let functions = prop::collection::btree_set(0..6u32, 0..4)
        .prop_flat_map(|indices| indices.into_iter().map(function).collect::<Vec<_>>());
    (
        functions,
        0..3u64,
        0..2u64,
        prop_oneof![Just(0u64), Just(u64::MAX)],
    )
        .prop_map(|(functions, processes, forked, threads)| RawProfile {
            build_id: 0xb1d,
            mode: 2,
            processes,
            forked,
            threads,
            functions,
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

/// Decodes `bytes` both ways: the same error (one line), or one profile that
/// keeps the invariants and re-encodes to exactly `bytes`.
fn check(bytes: &[u8]) -> Result<RawProfile, FormatError> {
    let owned = RawProfile::decode(bytes);
    let view = ProfileView::parse(bytes);
    match (owned, view) {
        (Ok(p), Ok(v)) => {
            assert!(p.is_canonical());
            assert_eq!(
                p.encode(),
                bytes,
                "a decoded profile re-encodes to its bytes"
            );
            assert_eq!(
                (v.build_id(), v.mode(), v.facts()),
                (p.build_id, p.mode, p.facts())
            );
            assert_eq!(v.num_functions(), p.functions.len() as u64);
            for (fv, f) in v.functions().zip(&p.functions) {
                assert_eq!((fv.index(), fv.hash()), (f.index, f.hash));
                assert!(fv.slots().eq(f.slots.iter().copied()));
                assert!(fv.paths().eq(f.paths.iter().copied()));
                assert_eq!(fv.num_slot_resumes(), f.slot_resumes.len() as u64);
                assert!(fv.slot_resumes().eq(f.slot_resumes.iter().copied()));
                assert_eq!(fv.num_path_resumes(), f.path_resumes.len() as u64);
                assert!(fv.path_resumes().eq(f.path_resumes.iter().copied()));
            }
            Ok(p)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "decode and view give different errors");
            let msg = a.to_string();
            assert!(!msg.contains('\n'), "not one line: {msg}");
            Err(a)
        }
        (a, b) => panic!("decode and view disagree: {a:?} / {:?}", b.err()),
    }
}

/// Merges both ways: the same error, or the same bytes, which decode again.
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
    if let Ok(bytes) = view {
        assert!(bytes.len() <= a.len() + b.len());
        let merged = check(&bytes).expect("a merged profile decodes");
        let mut other_way = pb.clone();
        other_way.merge(&pa).expect("merges the other way too");
        assert_eq!(other_way, merged, "merging is commutative");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn valid_files_round_trip(p in profile()) {
        let bytes = p.encode();
        prop_assert_eq!(check(&bytes).unwrap(), p);
    }

    #[test]
    fn any_changed_byte_is_refused(p in profile(), at in any::<prop::sample::Index>(), x in 1..=255u8) {
        let mut bytes = p.encode();
        let i = at.index(bytes.len());
        bytes[i] ^= x;
        prop_assert!(check(&bytes).is_err());
    }

    #[test]
    fn any_cut_is_refused(p in profile(), at in any::<prop::sample::Index>()) {
        let bytes = p.encode();
        let cut = at.index(bytes.len());
        prop_assert!(check(&bytes[..cut]).is_err());
        prop_assert!(check(&fix_checksum(bytes[..cut].to_vec())).is_err());
    }

    /// Changes behind a correct checksum reach the structure checks.
    #[test]
    fn changed_bytes_behind_a_good_checksum(
        p in profile(),
        changes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = p.encode();
        for (at, x) in changes {
            let i = at.index(bytes.len());
            bytes[i] = x;
        }
        let bytes = fix_checksum(bytes);
        let _ = check(&bytes);
        check_merge(&bytes, &p.encode());
    }

    /// The front of one file and the back of another, checksum fixed.
    #[test]
    fn spliced_files(
        p in profile(),
        q in profile(),
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

    #[test]
    fn merges_agree(p in profile(), q in profile()) {
        check_merge(&p.encode(), &q.encode());
    }
}

/// A header of this version declaring `functions` records, then `tail` and a
/// good checksum.
fn crafted(functions: u64, tail: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 8 * 4]); // build id, processes, forked, threads
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
        p.functions,
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
    assert_eq!(check(&bytes).unwrap(), p);
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
