//! Round trips, merging, every error kind, and damage of every kind to a valid file.

use pathprof_format::{
    fnv1a64, is_profile, merge_into, Encoder, FormatError, ProfileView, RawFunction, RawProfile,
    MAGIC,
};

fn sample() -> RawProfile {
    RawProfile {
        build_id: 0xdead_beef_0123_4567,
        mode: 2,
        processes: 3,
        forked: 1,
        threads: 4,
        functions: vec![
            RawFunction {
                index: 0,
                hash: 0x1111,
                slots: vec![1, 0, 7],
                paths: vec![],
                slot_resumes: vec![(0, 1), (2, u64::MAX)],
                path_resumes: vec![(3, 2)],
            },
            RawFunction {
                index: 3,
                hash: 0x3333,
                slots: vec![],
                paths: vec![(0, 4), (17, 1), (u64::MAX, 2)],
                slot_resumes: vec![],
                path_resumes: vec![(17, 1), (u64::MAX, 5)],
            },
            RawFunction {
                index: 9,
                hash: 0x9999,
                slots: vec![u64::MAX],
                paths: vec![(5, u64::MAX)],
                ..Default::default()
            },
            // Only resumes: the counts were written by an earlier dump.
            RawFunction {
                index: 12,
                hash: 0xcccc,
                slots: vec![0, 0],
                paths: vec![],
                slot_resumes: vec![(1, 3)],
                path_resumes: vec![],
            },
        ],
    }
}

/// Tiny deterministic generator (no dependencies).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_profile(rng: &mut Lcg, build_id: u64) -> RawProfile {
    let mut functions = Vec::new();
    for index in 0..8u32 {
        if rng.below(2) == 0 {
            continue;
        }
        // Shape depends on the index only, so random profiles of one build merge.
        let slots = (0..index % 3).map(|_| rng.below(5)).collect();
        let mut paths: Vec<(u64, u64)> = Vec::new();
        let mut path_resumes: Vec<(u64, u64)> = Vec::new();
        for id in 0..6u64 {
            if rng.below(2) == 0 {
                paths.push((id * 3, 1 + rng.below(3)));
            }
            if rng.below(4) == 0 {
                path_resumes.push((id * 2, 1 + rng.below(3)));
            }
        }
        let mut slot_resumes: Vec<(u64, u64)> = Vec::new();
        for k in 0..u64::from(index % 3) {
            if rng.below(3) == 0 {
                slot_resumes.push((k, 1 + rng.below(2)));
            }
        }
        functions.push(RawFunction {
            index,
            hash: u64::from(index) * 0x101,
            slots,
            paths,
            slot_resumes,
            path_resumes,
        });
    }
    RawProfile {
        build_id,
        mode: 1,
        processes: rng.below(4),
        forked: rng.below(2),
        threads: rng.below(3),
        functions,
    }
}

#[test]
fn round_trip() {
    let p = sample();
    let bytes = p.encode();
    assert!(is_profile(&bytes));
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(RawProfile::decode(&bytes), Ok(p));
    let empty = RawProfile::new(42, 0);
    assert_eq!(empty.encode().len(), 64);
    assert_eq!(RawProfile::decode(&empty.encode()), Ok(empty));
    let mut rng = Lcg(1);
    for _ in 0..200 {
        let p = random_profile(&mut rng, 7);
        assert_eq!(RawProfile::decode(&p.encode()), Ok(p));
    }
}

#[test]
fn layout_is_as_documented() {
    let p = RawProfile {
        build_id: 0x0102_0304_0506_0708,
        mode: 1,
        processes: 10,
        forked: 11,
        threads: 12,
        functions: vec![RawFunction {
            index: 5,
            hash: 6,
            slots: vec![7],
            paths: vec![(8, 9)],
            slot_resumes: vec![(0, 10)],
            path_resumes: vec![(11, 12), (13, 14)],
        }],
    };
    let b = p.encode();
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(
        b.len(),
        56 + 4 + 8 + 8 + 8 + 8 + 16 + 8 + 16 + 8 + 2 * 16 + 8
    );
    assert_eq!(u32_at(8), 3);
    assert_eq!(u32_at(12), 1);
    assert_eq!(u64_at(16), 0x0102_0304_0506_0708);
    assert_eq!((u64_at(24), u64_at(32), u64_at(40)), (10, 11, 12));
    assert_eq!(u64_at(48), 1);
    assert_eq!(u32_at(56), 5);
    assert_eq!(u64_at(60), 6);
    assert_eq!(u64_at(68), 1);
    assert_eq!(u64_at(76), 7);
    assert_eq!(u64_at(84), 1);
    assert_eq!((u64_at(92), u64_at(100)), (8, 9));
    assert_eq!(u64_at(108), 1);
    assert_eq!((u64_at(116), u64_at(124)), (0, 10));
    assert_eq!(u64_at(132), 2);
    assert_eq!((u64_at(140), u64_at(148)), (11, 12));
    assert_eq!((u64_at(156), u64_at(164)), (13, 14));
    assert_eq!(u64_at(172), fnv1a64(&b[..172]));
}

#[test]
fn encode_normalizes() {
    let p = RawProfile {
        build_id: 1,
        mode: 2,
        processes: 0,
        forked: 0,
        threads: 0,
        functions: vec![
            RawFunction {
                index: 4,
                hash: 1,
                slots: vec![1],
                paths: vec![(9, 1), (2, 0), (9, u64::MAX), (1, 3)],
                // Slot 3 does not exist; the zero count goes.
                slot_resumes: vec![(0, 2), (3, 1), (0, 1), (0, 0)],
                path_resumes: vec![(7, 0), (2, 1), (2, 2)],
            },
            RawFunction {
                index: 2,
                hash: 1,
                ..Default::default()
            },
            RawFunction {
                index: 4,
                hash: 1,
                slots: vec![2],
                slot_resumes: vec![(0, 1)],
                path_resumes: vec![(1, 1)],
                ..Default::default()
            },
            RawFunction {
                index: 4,
                hash: 2,
                slots: vec![2],
                path_resumes: vec![(1, 1)],
                ..Default::default()
            },
        ],
    };
    assert!(!p.is_canonical());
    let d = RawProfile::decode(&p.encode()).unwrap();
    assert!(d.is_canonical());
    assert_eq!(d.functions.len(), 2);
    assert_eq!(d.functions[0].index, 2);
    assert_eq!(d.functions[1].slots, vec![3]);
    assert_eq!(d.functions[1].paths, vec![(1, 3), (9, u64::MAX)]);
    assert_eq!(d.functions[1].slot_resumes, vec![(0, 4)]);
    assert_eq!(d.functions[1].path_resumes, vec![(1, 1), (2, 3)]);

    // Each rule of the resume lists alone breaks canonical form.
    let base = RawProfile {
        build_id: 1,
        mode: 2,
        functions: vec![RawFunction {
            index: 0,
            hash: 1,
            slots: vec![0, 0],
            slot_resumes: vec![(0, 1), (1, 1)],
            path_resumes: vec![(4, 1), (5, 1)],
            ..Default::default()
        }],
        ..Default::default()
    };
    assert!(base.is_canonical());
    let broken: [fn(&mut RawFunction); 6] = [
        |f| f.slot_resumes = vec![(1, 1), (0, 1)],
        |f| f.slot_resumes = vec![(1, 1), (1, 1)],
        |f| f.slot_resumes = vec![(0, 0)],
        |f| f.slot_resumes = vec![(2, 1)],
        |f| f.path_resumes = vec![(5, 1), (5, 1)],
        |f| f.path_resumes = vec![(5, 0)],
    ];
    for damage in broken {
        let mut p = base.clone();
        damage(&mut p.functions[0]);
        assert!(!p.is_canonical(), "{:?}", p.functions[0]);
        let d = RawProfile::decode(&p.encode()).unwrap();
        assert!(d.is_canonical());
        p.normalize();
        assert_eq!(d, p);
    }
}

#[test]
fn merge_adds_saturating_and_unions() {
    let mut a = sample();
    let b = RawProfile {
        build_id: a.build_id,
        mode: 2,
        processes: u64::MAX,
        forked: 2,
        threads: 0,
        functions: vec![
            RawFunction {
                index: 0,
                hash: 0x1111,
                slots: vec![0, 0, 0],
                paths: vec![],
                slot_resumes: vec![(1, 4), (2, 1)],
                path_resumes: vec![(1, 1), (3, 1)],
            },
            RawFunction {
                index: 1,
                hash: 0x2222,
                slots: vec![5],
                paths: vec![],
                slot_resumes: vec![(0, 2)],
                path_resumes: vec![],
            },
            RawFunction {
                index: 3,
                hash: 0x3333,
                slots: vec![],
                paths: vec![(1, 1), (17, 2), (u64::MAX, u64::MAX)],
                slot_resumes: vec![],
                path_resumes: vec![(0, 7), (u64::MAX, u64::MAX)],
            },
            RawFunction {
                index: 9,
                hash: 0x9999,
                slots: vec![1],
                paths: vec![(5, 1)],
                slot_resumes: vec![(0, 1)],
                path_resumes: vec![],
            },
        ],
    };
    a.merge(&b).unwrap();
    let idx: Vec<u32> = a.functions.iter().map(|f| f.index).collect();
    assert_eq!(idx, vec![0, 1, 3, 9, 12]);
    assert_eq!(a.functions[0].slots, vec![1, 0, 7]);
    assert_eq!(
        a.functions[0].slot_resumes,
        vec![(0, 1), (1, 4), (2, u64::MAX)]
    );
    assert_eq!(a.functions[0].path_resumes, vec![(1, 1), (3, 3)]);
    assert_eq!(a.functions[1].slot_resumes, vec![(0, 2)]);
    assert_eq!(
        a.functions[2].paths,
        vec![(0, 4), (1, 1), (17, 3), (u64::MAX, u64::MAX)]
    );
    assert_eq!(
        a.functions[2].path_resumes,
        vec![(0, 7), (17, 1), (u64::MAX, u64::MAX)]
    );
    assert_eq!(a.functions[3].slots, vec![u64::MAX]);
    assert_eq!(a.functions[3].paths, vec![(5, u64::MAX)]);
    assert_eq!(a.functions[3].slot_resumes, vec![(0, 1)]);
    assert_eq!(a.functions[4], sample().functions[3]);
    assert_eq!((a.processes, a.forked, a.threads), (u64::MAX, 3, 4));

    // Merging a profile with itself doubles every count.
    let mut d = sample();
    d.merge(&sample()).unwrap();
    assert_eq!(d.functions[0].slots, vec![2, 0, 14]);
    assert_eq!(d.functions[0].slot_resumes, vec![(0, 2), (2, u64::MAX)]);
    assert_eq!(d.functions[0].path_resumes, vec![(3, 4)]);
    assert_eq!(d.functions[1].paths, vec![(0, 8), (17, 2), (u64::MAX, 4)]);
    assert_eq!(d.functions[1].path_resumes, vec![(17, 2), (u64::MAX, 10)]);
    assert_eq!(d.functions[3].slot_resumes, vec![(1, 6)]);
    assert_eq!((d.processes, d.forked, d.threads), (6, 2, 8));

    // merge_into agrees, on the same inputs.
    let (ea, eb) = (sample().encode(), b.encode());
    let out = merge_into(
        &ProfileView::parse(&ea).unwrap(),
        &ProfileView::parse(&eb).unwrap(),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(RawProfile::decode(&out).unwrap(), a);
}

#[test]
fn merge_refuses_other_builds_and_shapes() {
    let base = sample();
    let mut other = sample();
    other.build_id = 0xfeed;
    let mut a = base.clone();
    let e = a.merge(&other).unwrap_err();
    assert_eq!(
        e,
        FormatError::BuildMismatch {
            ours: base.build_id,
            theirs: 0xfeed
        }
    );
    assert!(e.to_string().contains("000000000000feed"), "{e}");
    assert!(e.to_string().contains("another build"), "{e}");
    assert_eq!(a, base);

    let mut other = sample();
    other.mode = 0;
    assert_eq!(
        a.clone().merge(&other),
        Err(FormatError::ModeMismatch { ours: 2, theirs: 0 })
    );

    let mut other = sample();
    other.functions[2].hash = 1;
    assert_eq!(
        a.clone().merge(&other),
        Err(FormatError::HashMismatch {
            index: 9,
            ours: 0x9999,
            theirs: 1
        })
    );

    let mut other = sample();
    other.functions[0].slots.push(0);
    let mut c = a.clone();
    assert_eq!(
        c.merge(&other),
        Err(FormatError::SlotCountMismatch {
            index: 0,
            ours: 3,
            theirs: 4
        })
    );
    assert_eq!(c, base, "a refused merge changes nothing");
}

#[test]
fn merge_into_matches_merge() {
    let mut rng = Lcg(99);
    for _ in 0..300 {
        let a = random_profile(&mut rng, 5);
        let b = random_profile(&mut rng, 5);
        let (ea, eb) = (a.encode(), b.encode());
        let (va, vb) = (
            ProfileView::parse(&ea).unwrap(),
            ProfileView::parse(&eb).unwrap(),
        );
        let out = merge_into(&va, &vb, Vec::new()).unwrap();
        assert!(out.len() <= ea.len() + eb.len());
        assert_eq!(
            ProfileView::parse(&out).unwrap().facts(),
            va.facts().saturating_add(vb.facts())
        );
        let mut m = a.clone();
        m.merge(&b).unwrap();
        assert_eq!(RawProfile::decode(&out).unwrap(), m);
    }
    let a = sample().encode();
    let mut other = sample();
    other.build_id = 3;
    let b = other.encode();
    let (va, vb) = (
        ProfileView::parse(&a).unwrap(),
        ProfileView::parse(&b).unwrap(),
    );
    assert!(matches!(
        merge_into(&va, &vb, Vec::new()),
        Err(FormatError::BuildMismatch { theirs: 3, .. })
    ));
}

/// Re-encodes `bytes` with a correct checksum (after editing the body).
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 8;
    let sum = fnv1a64(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

#[test]
fn every_error_kind() {
    let good = sample().encode();

    assert_eq!(
        RawProfile::decode(b"hello world, long enough"),
        Err(FormatError::NotAProfile)
    );
    assert!(!is_profile(b"PPROF"));

    let mut v = good.clone();
    v[8] = 4;
    let e = RawProfile::decode(&v).unwrap_err();
    assert_eq!(e, FormatError::UnsupportedVersion { found: 4 });
    assert!(e.to_string().contains("unsupported raw profile version 4"));

    // A version-2 file (no resumes), complete and sealed: written by an
    // older pathprof, refused for its version and not for its layout.
    let mut v2 = good[..56].to_vec();
    v2[8] = 2;
    v2[48..56].copy_from_slice(&1u64.to_le_bytes());
    v2.extend_from_slice(&7u32.to_le_bytes()); // index
    v2.extend_from_slice(&0x77u64.to_le_bytes()); // hash
    v2.extend_from_slice(&1u64.to_le_bytes()); // S
    v2.extend_from_slice(&5u64.to_le_bytes()); // the slot
    v2.extend_from_slice(&1u64.to_le_bytes()); // P
    v2.extend_from_slice(&3u64.to_le_bytes()); // path id
    v2.extend_from_slice(&4u64.to_le_bytes()); // its count
    v2.extend_from_slice(&[0; 8]);
    let e = RawProfile::decode(&reseal(v2.clone())).unwrap_err();
    assert_eq!(e, FormatError::OlderVersion { found: 2 });
    assert_eq!(
        ProfileView::parse(&reseal(v2)).unwrap_err(),
        FormatError::OlderVersion { found: 2 }
    );
    let text = e.to_string();
    assert!(
        text.contains("version 2 was written by an older pathprof"),
        "{text}"
    );
    assert!(
        text.contains("run the instrumented program again"),
        "{text}"
    );
    assert!(text.contains("re-record"), "{text}");

    // A version-1 file (no process facts): written by an older pathprof.
    let mut v1 = good[..24].to_vec();
    v1[8] = 1;
    v1.extend_from_slice(&good[48..]);
    let e = RawProfile::decode(&reseal(v1)).unwrap_err();
    assert_eq!(e, FormatError::OlderVersion { found: 1 });
    let text = e.to_string();
    assert!(text.contains("written by an older pathprof"), "{text}");
    assert!(text.contains("re-record"), "{text}");

    let e = RawProfile::decode(&good[..good.len() - 3]).unwrap_err();
    assert!(matches!(e, FormatError::Truncated { .. }), "{e:?}");
    assert!(e.to_string().contains("truncated at byte"), "{e}");
    assert_eq!(
        RawProfile::decode(b"PPRO"),
        Err(FormatError::Truncated {
            at: 0,
            what: "magic"
        })
    );

    let mut v = good.clone();
    v[64] ^= 1;
    let e = RawProfile::decode(&v).unwrap_err();
    assert!(matches!(e, FormatError::ChecksumMismatch { .. }), "{e:?}");
    assert!(e.to_string().contains("checksum mismatch (damaged)"), "{e}");

    let mut v = good.clone();
    v.push(0);
    let e = RawProfile::decode(&v).unwrap_err();
    assert_eq!(
        e,
        FormatError::TrailingBytes {
            at: good.len() as u64,
            extra: 1
        }
    );

    // Valid checksum, broken order rules.
    let mut e = Encoder::new(Vec::new(), 1, 2);
    e.begin_function(3, 0, 0);
    e.end_function(false);
    let ok = e.finish().unwrap();
    // Duplicate the function record by hand: count 2, same index twice.
    let rec = ok[56..ok.len() - 8].to_vec();
    let mut v = ok[..56].to_vec();
    v[48] = 2;
    v.extend_from_slice(&rec);
    v.extend_from_slice(&rec);
    v.extend_from_slice(&[0; 8]);
    let e = RawProfile::decode(&reseal(v)).unwrap_err();
    assert_eq!(
        e,
        FormatError::Malformed {
            at: 56 + rec.len() as u64,
            what: "function indices are not strictly increasing"
        }
    );
    assert!(e.to_string().contains("malformed raw profile"));

    // A zero path count.
    let mut v = RawProfile {
        build_id: 1,
        mode: 2,
        processes: 0,
        forked: 0,
        threads: 0,
        functions: vec![RawFunction {
            index: 0,
            hash: 0,
            slots: vec![],
            paths: vec![(1, 1)],
            ..Default::default()
        }],
    }
    .encode();
    // The path's count is before the two (empty) resume counts.
    let n = v.len() - 16;
    v[n - 16..n - 8].copy_from_slice(&0u64.to_le_bytes());
    assert!(matches!(
        RawProfile::decode(&reseal(v)),
        Err(FormatError::Malformed {
            what: "a path entry has a zero count",
            ..
        })
    ));

    // Broken resume lists behind a good checksum. One function of 2 slots,
    // no paths, slot resumes (0, 1), (1, 1) and path resumes (4, 1), (5, 1):
    // the slot resumes are at 56 + 4 + 8 + 8 + 16 + 8 + 8 = 108, the path
    // resumes at 108 + 32 + 8 = 148.
    let good = RawProfile {
        build_id: 1,
        mode: 2,
        functions: vec![RawFunction {
            index: 0,
            hash: 0,
            slots: vec![0, 0],
            paths: vec![],
            slot_resumes: vec![(0, 1), (1, 1)],
            path_resumes: vec![(4, 1), (5, 1)],
        }],
        ..Default::default()
    }
    .encode();
    assert_eq!(good.len(), 148 + 32 + 8);
    let at = |bytes: &mut Vec<u8>, i: usize, x: u64| {
        bytes[i..i + 8].copy_from_slice(&x.to_le_bytes());
    };
    let cases: [(usize, u64, &str); 7] = [
        (108, 1, "slot resume indices are not strictly increasing"),
        (108, 2, "slot resume indices are not strictly increasing"),
        (
            124,
            2,
            "a slot resume names a slot the function does not have",
        ),
        (116, 0, "a slot resume has a zero count"),
        (132, 0, "a slot resume has a zero count"),
        (148, 5, "path resume ids are not strictly increasing"),
        (172, 0, "a path resume has a zero count"),
    ];
    for (i, x, what) in cases {
        let mut v = good.clone();
        at(&mut v, i, x);
        let e = RawProfile::decode(&reseal(v)).unwrap_err();
        assert_eq!(e, FormatError::Malformed { at: 56, what }, "{i} = {x}");
    }
    // A slot resume in a function without slots.
    let mut v = good.clone();
    at(&mut v, 68, 0);
    let v: Vec<u8> = [&v[..76], &v[92..]].concat();
    assert!(matches!(
        RawProfile::decode(&reseal(v)),
        Err(FormatError::Malformed {
            what: "a slot resume names a slot the function does not have",
            ..
        })
    ));

    // Encoder misuse and a sink that refuses bytes.
    let mut e = Encoder::new(Vec::new(), 1, 2);
    e.begin_function(1, 0, 2);
    e.slot(1);
    e.end_function(false);
    assert!(matches!(e.finish(), Err(FormatError::InvalidInput { .. })));
    let mut e = Encoder::new(Vec::new(), 1, 2);
    e.begin_function(1, 0, 0);
    e.path(5, 1);
    e.path(4, 1);
    e.end_function(false);
    assert!(matches!(e.finish(), Err(FormatError::InvalidInput { .. })));

    // Resume misuse: each call sequence after `begin_function(1, 0, 2)`
    // and its two slots, with the rule it breaks.
    type Calls = fn(&mut Encoder<Vec<u8>>);
    let misuse: [(Calls, &str); 8] = [
        (
            |e| {
                e.slot_resume(1, 1);
                e.slot_resume(0, 1);
            },
            "slot resume indices must be strictly increasing",
        ),
        (
            |e| {
                e.slot_resume(1, 1);
                e.slot_resume(1, 1);
            },
            "slot resume indices must be strictly increasing",
        ),
        (
            |e| e.slot_resume(2, 1),
            "a slot resume of a slot the function does not have",
        ),
        (
            |e| {
                e.slot_resume(0, 1);
                e.path(3, 1);
            },
            "a path after a resume",
        ),
        (
            |e| {
                e.path_resume(0, 1);
                e.path(3, 1);
            },
            "a path after a resume",
        ),
        (
            |e| {
                e.path_resume(0, 1);
                e.slot_resume(0, 1);
            },
            "a slot resume after a path resume",
        ),
        (
            |e| {
                e.path_resume(5, 1);
                e.path_resume(4, 1);
            },
            "path resume ids must not decrease",
        ),
        (
            |e| {
                e.slot_resume(0, 1);
                e.slot(1);
            },
            "more slots than declared, or a slot after a path or resume",
        ),
    ];
    for (calls, what) in misuse {
        let mut e = Encoder::new(Vec::new(), 1, 2);
        e.begin_function(1, 0, 2);
        e.slot(0);
        e.slot(0);
        calls(&mut e);
        e.end_function(false);
        assert_eq!(e.finish(), Err(FormatError::InvalidInput { what }));
    }
    // A resume before all slots were written.
    let mut e = Encoder::new(Vec::new(), 1, 2);
    e.begin_function(1, 0, 2);
    e.slot(0);
    e.slot_resume(0, 1);
    assert_eq!(
        e.finish(),
        Err(FormatError::InvalidInput {
            what: "fewer slots than declared"
        })
    );
    // Zero resumes are ignored (even out of order), equal path resume ids add
    // up, saturating.
    let mut e = Encoder::new(Vec::new(), 1, 2);
    e.begin_function(1, 0, 2);
    e.slot(0);
    e.slot(0);
    e.path(9, 1);
    e.slot_resume(1, 2);
    e.slot_resume(0, 0);
    e.slot_resume(7, 0);
    e.path_resume(3, 1);
    e.path_resume(3, u64::MAX);
    e.path_resume(8, 1);
    e.path_resume(8, 2);
    e.path_resume(1, 0);
    e.slot_resume(0, 0);
    e.end_function(false);
    let p = RawProfile::decode(&e.finish().unwrap()).unwrap();
    assert_eq!(p.functions[0].paths, vec![(9, 1)]);
    assert_eq!(p.functions[0].slot_resumes, vec![(1, 2)]);
    assert_eq!(p.functions[0].path_resumes, vec![(3, u64::MAX), (8, 3)]);

    struct Tiny(Vec<u8>);
    impl pathprof_format::Sink for Tiny {
        fn append(&mut self, b: &[u8]) -> bool {
            self.0.len() + b.len() <= 20 && pathprof_format::Sink::append(&mut self.0, b)
        }
        fn written(&mut self) -> &mut [u8] {
            &mut self.0
        }
        fn truncate_to(&mut self, len: usize) {
            self.0.truncate(len)
        }
    }
    let e = Encoder::new(Tiny(Vec::new()), 1, 2);
    assert!(matches!(e.finish(), Err(FormatError::OutOfSpace { .. })));
    for e in [
        FormatError::OutOfSpace { at: 1 },
        FormatError::InvalidInput { what: "x" },
        FormatError::NotAProfile,
    ] {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn drop_if_empty_keeps_functions_with_resumes() {
    let mut e = Encoder::new(Vec::new(), 1, 2);
    // All zero, nothing else: dropped.
    e.begin_function(1, 0x10, 2);
    e.slot(0);
    e.slot(0);
    e.path(4, 0);
    e.end_function(true);
    // Only a slot resume: kept.
    e.begin_function(2, 0x20, 2);
    e.slot(0);
    e.slot(0);
    e.slot_resume(1, 3);
    e.end_function(true);
    // Only a path resume: kept.
    e.begin_function(3, 0x30, 0);
    e.path_resume(6, 1);
    e.end_function(true);
    // Only zero resumes: dropped.
    e.begin_function(4, 0x40, 1);
    e.slot(0);
    e.slot_resume(0, 0);
    e.path_resume(6, 0);
    e.end_function(true);
    // Dropped functions do not count against the index order.
    e.begin_function(4, 0x41, 0);
    e.path(1, 1);
    e.end_function(true);
    let p = RawProfile::decode(&e.finish().unwrap()).unwrap();
    assert_eq!(
        p.functions,
        vec![
            RawFunction {
                index: 2,
                hash: 0x20,
                slots: vec![0, 0],
                slot_resumes: vec![(1, 3)],
                ..Default::default()
            },
            RawFunction {
                index: 3,
                hash: 0x30,
                path_resumes: vec![(6, 1)],
                ..Default::default()
            },
            RawFunction {
                index: 4,
                hash: 0x41,
                paths: vec![(1, 1)],
                ..Default::default()
            },
        ]
    );
}

#[test]
fn absurd_counts_do_not_allocate() {
    let mut v = RawProfile::new(1, 0).encode();
    v[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        RawProfile::decode(&v),
        Err(FormatError::Truncated { at: 48, .. })
    ));
    let mut v = sample().encode();
    // The slot count of the first function.
    v[68..76].copy_from_slice(&(u64::MAX / 8).to_le_bytes());
    assert!(matches!(
        RawProfile::decode(&v),
        Err(FormatError::Truncated { at: 68, .. })
    ));
    // The first function: 3 slots, no paths, then its slot resume count (at
    // 56 + 4 + 8 + 8 + 24 + 8 = 108: 2 entries) and path resume count (at
    // 108 + 8 + 32 = 148: 1 entry).
    let good = sample().encode();
    let u64_at = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap());
    assert_eq!((u64_at(108), u64_at(148)), (2, 1));
    for (at, n) in [
        (108, u64::MAX / 16),
        (108, u64::MAX),
        (148, u64::MAX / 16),
        (148, 1 << 60),
    ] {
        let mut v = good.clone();
        v[at..at + 8].copy_from_slice(&n.to_le_bytes());
        assert_eq!(
            RawProfile::decode(&v),
            Err(FormatError::Truncated {
                at: at as u64,
                what: if at == 108 {
                    "slot resumes"
                } else {
                    "path resumes"
                }
            })
        );
    }
}

#[test]
fn every_cut_and_every_single_byte_change_is_an_error() {
    let mut rng = Lcg(7);
    let mut files = vec![sample().encode(), RawProfile::new(3, 1).encode()];
    files.extend((0..3).map(|_| random_profile(&mut rng, 11).encode()));
    for good in files {
        assert!(RawProfile::decode(&good).is_ok());
        for n in 0..good.len() {
            assert!(
                RawProfile::decode(&good[..n]).is_err(),
                "prefix {n} decoded"
            );
        }
        let mut v = good.clone();
        for i in 0..good.len() {
            for mask in [1u8, 2, 4, 8, 16, 32, 64, 128, 0xff, 0x5a] {
                v[i] ^= mask;
                assert!(
                    RawProfile::decode(&v).is_err(),
                    "byte {i} ^ {mask:#x} decoded"
                );
                v[i] ^= mask;
            }
        }
        // Garbage of every length.
        for n in 0..200 {
            let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend_from_slice(&1u32.to_le_bytes());
            with_magic.extend_from_slice(&junk);
            let _ = RawProfile::decode(&junk);
            let _ = RawProfile::decode(&with_magic);
        }
    }
}
