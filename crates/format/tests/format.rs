//! Round trips, merging, every error kind, and damage of every kind to a valid file.

use pathprof_format::{
    fnv1a64, is_profile, merge_into, Encoder, FormatError, ProfileFile, ProfileView, RawFunction,
    RawProfile, MAGIC, MAX_OBJECTS,
};

fn sample() -> RawProfile {
    RawProfile {
        build_id: 0xdead_beef_0123_4567,
        mode: 2,
        processes: 3,
        forked: 1,
        threads: 4,
        killed: 0,
        killed_at_exit: 0,
        killed_in_signal: 0,
        killed_signals: 0,
        objects: vec![],
        objects_truncated: false,
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
        killed: 0,
        killed_at_exit: 0,
        killed_in_signal: 0,
        killed_signals: 0,
        objects: (0..rng.below(4))
            .map(|k| format!("/lib/{build_id:x}/{k}.so"))
            .collect(),
        objects_truncated: rng.below(5) == 0,
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
    assert_eq!(empty.encode().len(), 24 + 88 + 8);
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
        killed: 13,
        killed_at_exit: 14,
        killed_in_signal: 15,
        killed_signals: 16,
        objects: vec!["/a".into(), "/bc".into()],
        objects_truncated: true,
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
    // The file header.
    assert_eq!(&b[..8], b"PPROFRAW");
    assert_eq!(u32_at(8), 6);
    assert_eq!(u32_at(12), 0);
    assert_eq!(u64_at(16), 1);
    // The section.
    assert_eq!(u64_at(24), 0x0102_0304_0506_0708);
    assert_eq!(u32_at(32), 1);
    assert_eq!(u32_at(36), 1, "objects truncated");
    assert_eq!(
        (u64_at(40), u64_at(48), u64_at(56), u64_at(64)),
        (10, 11, 12, 13)
    );
    assert_eq!((u64_at(72), u64_at(80), u64_at(88)), (14, 15, 16));
    assert_eq!(u64_at(96), 2);
    assert_eq!(u64_at(104), 2);
    assert_eq!(&b[112..114], b"/a");
    assert_eq!(u64_at(114), 3);
    assert_eq!(&b[122..125], b"/bc");
    assert_eq!(u64_at(125), 1);
    // The function record.
    assert_eq!(u32_at(133), 5);
    assert_eq!(u64_at(137), 6);
    assert_eq!(u64_at(145), 1);
    assert_eq!(u64_at(153), 7);
    assert_eq!(u64_at(161), 1);
    assert_eq!((u64_at(169), u64_at(177)), (8, 9));
    assert_eq!(u64_at(185), 1);
    assert_eq!((u64_at(193), u64_at(201)), (0, 10));
    assert_eq!(u64_at(209), 2);
    assert_eq!((u64_at(217), u64_at(225)), (11, 12));
    assert_eq!((u64_at(233), u64_at(241)), (13, 14));
    assert_eq!(u64_at(249), fnv1a64(&b[..249]));
    assert_eq!(b.len(), 257);

    // Two sections follow each other in build id order, behind one header
    // and one checksum.
    let mut q = RawProfile::new(0x0102_0304_0506_0709, 2);
    q.processes = 1;
    let file = ProfileFile {
        sections: vec![q.clone(), p.clone()],
    };
    assert!(!file.is_canonical(), "build ids out of order");
    let two = file.encode();
    let u64_at = |at: usize| u64::from_le_bytes(two[at..at + 8].try_into().unwrap());
    assert_eq!(u64_at(16), 2);
    assert_eq!(&two[24..249], &b[24..249], "p's section first");
    assert_eq!(u64_at(249), 0x0102_0304_0506_0709);
    assert_eq!(u64_at(249 + 16), 1);
    assert_eq!(two.len(), 249 + 88 + 8);
    assert_eq!(u64_at(two.len() - 8), fnv1a64(&two[..two.len() - 8]));
    let back = ProfileFile::decode(&two).unwrap();
    assert_eq!(back.sections, vec![p, q]);
}

#[test]
fn encode_normalizes() {
    let p = RawProfile {
        build_id: 1,
        mode: 2,
        processes: 0,
        forked: 0,
        threads: 0,
        killed: 0,
        killed_at_exit: 0,
        killed_in_signal: 0,
        killed_signals: 0,
        objects: vec![],
        objects_truncated: false,
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
        killed: 0,
        killed_at_exit: 0,
        killed_in_signal: 0,
        killed_signals: 0,
        objects: vec![],
        objects_truncated: false,
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
        let facts = |v: &ProfileView| v.sections().next().unwrap().facts();
        assert_eq!(
            facts(&ProfileView::parse(&out).unwrap()),
            facts(&va).saturating_add(facts(&vb))
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
    // Another build gets a section of its own, in build id order.
    let out = merge_into(&va, &vb, Vec::new()).unwrap();
    let file = ProfileFile::decode(&out).unwrap();
    assert_eq!(file.build_ids(), vec![3, sample().build_id]);
    assert_eq!(file.sections[0], other);
    assert_eq!(file.sections[1], sample());
    assert_eq!(
        RawProfile::decode(&out),
        Err(FormatError::NotOneBuild { builds: 2 })
    );
}

#[test]
fn an_encoders_own_bytes_read_unchecked_merge_and_copy_as_when_checked() {
    let mut rng = Lcg(7);
    for _ in 0..100 {
        let (a, b) = (
            random_profile(&mut rng, 5).encode(),
            random_profile(&mut rng, 5).encode(),
        );
        let checked = merge_into(
            &ProfileView::parse(&a).unwrap(),
            &ProfileView::parse(&b).unwrap(),
            Vec::new(),
        )
        .unwrap();
        let own = merge_into(
            &ProfileView::parse_own(&a).unwrap(),
            &ProfileView::parse(&b).unwrap(),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(own, checked);
    }
    let file = sample_file(&mut rng).encode();
    let (checked, own) = (
        ProfileView::parse(&file).unwrap(),
        ProfileView::parse_own(&file).unwrap(),
    );
    assert_eq!(own.num_sections(), checked.num_sections());
    for (o, c) in own.sections().zip(checked.sections()) {
        assert_eq!(o.as_bytes(), c.as_bytes());
    }
    // The header is still read: not a profile, or another version.
    assert_eq!(
        ProfileView::parse_own(b"not a profile at all").unwrap_err(),
        FormatError::NotAProfile
    );
    for version in [3, 4] {
        assert_eq!(
            ProfileView::parse_own(&older_file(version)).unwrap_err(),
            FormatError::OlderVersion { found: version }
        );
    }
}

/// A complete, sealed file of an older format version, with one function
/// record (with resume counts from version 3 on). Versions 2 and 3: a
/// 56-byte header (magic, version, mode, build id, three facts, function
/// count). Version 4: the file header of version 5 and one section whose
/// header has no killed field (build id, mode, flags, three facts, object
/// count 0), then its function count. Version 5: a killed field (9), no
/// endings of the killed.
fn older_file(version: u32) -> Vec<u8> {
    let mut v = b"PPROFRAW".to_vec();
    v.extend_from_slice(&version.to_le_bytes());
    if version >= 4 {
        v.extend_from_slice(&0u32.to_le_bytes()); // reserved
        v.extend_from_slice(&1u64.to_le_bytes()); // section count
        v.extend_from_slice(&0xb1du64.to_le_bytes()); // build id
        v.extend_from_slice(&2u32.to_le_bytes()); // mode
        v.extend_from_slice(&0u32.to_le_bytes()); // flags
        v.extend_from_slice(&[0; 24]); // processes, forked, threads
        if version >= 5 {
            v.extend_from_slice(&9u64.to_le_bytes()); // killed
        }
        v.extend_from_slice(&0u64.to_le_bytes()); // object count
    } else {
        v.extend_from_slice(&2u32.to_le_bytes()); // mode
        v.extend_from_slice(&0xb1du64.to_le_bytes()); // build id
        v.extend_from_slice(&[0; 24]); // facts
    }
    v.extend_from_slice(&1u64.to_le_bytes()); // function count
    v.extend_from_slice(&7u32.to_le_bytes()); // index
    v.extend_from_slice(&0x77u64.to_le_bytes()); // hash
    v.extend_from_slice(&1u64.to_le_bytes()); // S
    v.extend_from_slice(&5u64.to_le_bytes()); // the slot
    v.extend_from_slice(&1u64.to_le_bytes()); // P
    v.extend_from_slice(&3u64.to_le_bytes()); // path id
    v.extend_from_slice(&4u64.to_le_bytes()); // its count
    if version >= 3 {
        v.extend_from_slice(&[0; 16]); // R_s, R_p
    }
    v.extend_from_slice(&[0; 8]);
    reseal(v)
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
    v[8] = 7;
    let e = RawProfile::decode(&v).unwrap_err();
    assert_eq!(e, FormatError::UnsupportedVersion { found: 7 });
    assert!(e.to_string().contains("unsupported raw profile version 7"));

    // Version-2, version-3 and version-4 files (no resumes; one build, no
    // object paths; no killed field), complete and sealed: written by an
    // older pathprof, refused for their version and not for their layout.
    for version in [2, 3, 4] {
        let old = older_file(version);
        let e = RawProfile::decode(&old).unwrap_err();
        assert_eq!(e, FormatError::OlderVersion { found: version });
        assert_eq!(ProfileFile::decode(&old), Err(e.clone()));
        assert_eq!(ProfileView::parse(&old).unwrap_err(), e);
        let text = e.to_string();
        assert!(
            text.contains(&format!(
                "version {version} was written by an older pathprof"
            )),
            "{text}"
        );
        assert!(
            text.contains("run the instrumented program again"),
            "{text}"
        );
        assert!(text.contains("re-record"), "{text}");
    }

    // A version-5 file (no endings of the killed) reads, its endings
    // unknown; a merge into it writes this version.
    let v5 = older_file(5);
    let read = RawProfile::decode(&v5).unwrap();
    assert_eq!(
        (read.killed, read.killed_at_exit, read.killed_in_signal),
        (9, 0, 0)
    );
    assert_eq!(read.functions[0].slots, vec![5]);
    assert_eq!(read.functions[0].paths, vec![(3, 4)]);
    let view = ProfileView::parse(&v5).unwrap();
    assert_eq!(view.version(), 5);
    assert_eq!(view.section(0xb1d).unwrap().facts().killed, 9);
    let mut killed = RawProfile::new(0xb1d, 2);
    killed.killed = 1;
    killed.killed_in_signal = 1;
    killed.killed_signals = 1 << 14;
    let killed = killed.encode();
    let out = pathprof_format::merge_into(&view, &ProfileView::parse(&killed).unwrap(), Vec::new())
        .unwrap();
    let merged = ProfileView::parse(&out).unwrap();
    assert_eq!(merged.version(), pathprof_format::VERSION);
    let facts = merged.section(0xb1d).unwrap().facts();
    assert_eq!(
        (facts.killed, facts.killed_in_signal, facts.killed_signals),
        (10, 1, 1 << 14)
    );
    // Copied as it is (another build's section beside it), it is rewritten
    // in this version's layout too.
    let other = RawProfile::new(0xc0de, 2).encode();
    let out = pathprof_format::merge_into(&view, &ProfileView::parse(&other).unwrap(), Vec::new())
        .unwrap();
    let both = ProfileFile::decode(&out).unwrap();
    assert_eq!(both.sections[0], read);

    // A version-1 file (no process facts): written by an older pathprof.
    let mut v1 = older_file(2)[..24].to_vec();
    v1[8] = 1;
    v1.extend_from_slice(&[0; 16]);
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
    v[40] ^= 1;
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
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
    e.begin_function(3, 0, 0);
    e.end_function(false);
    let ok = e.finish().unwrap();
    // Duplicate the function record by hand: count 2, same index twice.
    let rec = ok[112..ok.len() - 8].to_vec();
    let mut v = ok[..112].to_vec();
    v[104] = 2;
    v.extend_from_slice(&rec);
    v.extend_from_slice(&rec);
    v.extend_from_slice(&[0; 8]);
    let e = RawProfile::decode(&reseal(v)).unwrap_err();
    assert_eq!(
        e,
        FormatError::Malformed {
            at: 112 + rec.len() as u64,
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
        killed: 0,
        killed_at_exit: 0,
        killed_in_signal: 0,
        killed_signals: 0,
        objects: vec![],
        objects_truncated: false,
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
    // the slot resumes are at 112 + 4 + 8 + 8 + 16 + 8 + 8 = 164, the path
    // resumes at 164 + 32 + 8 = 204.
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
    assert_eq!(good.len(), 204 + 32 + 8);
    let at = |bytes: &mut Vec<u8>, i: usize, x: u64| {
        bytes[i..i + 8].copy_from_slice(&x.to_le_bytes());
    };
    let cases: [(usize, u64, &str); 7] = [
        (164, 1, "slot resume indices are not strictly increasing"),
        (164, 2, "slot resume indices are not strictly increasing"),
        (
            180,
            2,
            "a slot resume names a slot the function does not have",
        ),
        (172, 0, "a slot resume has a zero count"),
        (188, 0, "a slot resume has a zero count"),
        (204, 5, "path resume ids are not strictly increasing"),
        (228, 0, "a path resume has a zero count"),
    ];
    for (i, x, what) in cases {
        let mut v = good.clone();
        at(&mut v, i, x);
        let e = RawProfile::decode(&reseal(v)).unwrap_err();
        assert_eq!(e, FormatError::Malformed { at: 112, what }, "{i} = {x}");
    }
    // A slot resume in a function without slots.
    let mut v = good.clone();
    at(&mut v, 124, 0);
    let v: Vec<u8> = [&v[..132], &v[148..]].concat();
    assert!(matches!(
        RawProfile::decode(&reseal(v)),
        Err(FormatError::Malformed {
            what: "a slot resume names a slot the function does not have",
            ..
        })
    ));

    // Encoder misuse and a sink that refuses bytes.
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
    e.begin_function(1, 0, 2);
    e.slot(1);
    e.end_function(false);
    assert!(matches!(e.finish(), Err(FormatError::InvalidInput { .. })));
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
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
        let mut e = Encoder::new(Vec::new());
        e.begin_section(1, 2);
        e.begin_function(1, 0, 2);
        e.slot(0);
        e.slot(0);
        calls(&mut e);
        e.end_function(false);
        assert_eq!(e.finish(), Err(FormatError::InvalidInput { what }));
    }
    // A resume before all slots were written.
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
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
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
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
    let mut e = Encoder::new(Tiny(Vec::new()));
    e.begin_section(1, 2);
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
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
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
    // The object count and the function count of an empty section.
    for at in [96, 104] {
        let mut v = RawProfile::new(1, 0).encode();
        v[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            RawProfile::decode(&v),
            Err(FormatError::Truncated { at: a, .. }) if a == at as u64
        ));
    }
    let mut v = sample().encode();
    // The slot count of the first function.
    v[124..132].copy_from_slice(&(u64::MAX / 8).to_le_bytes());
    assert!(matches!(
        RawProfile::decode(&v),
        Err(FormatError::Truncated { at: 124, .. })
    ));
    // The first function: 3 slots, no paths, then its slot resume count (at
    // 112 + 4 + 8 + 8 + 24 + 8 = 164: 2 entries) and path resume count (at
    // 164 + 8 + 32 = 204: 1 entry).
    let good = sample().encode();
    let u64_at = |at: usize| u64::from_le_bytes(good[at..at + 8].try_into().unwrap());
    assert_eq!((u64_at(164), u64_at(204)), (2, 1));
    for (at, n) in [
        (164, u64::MAX / 16),
        (164, u64::MAX),
        (204, u64::MAX / 16),
        (204, 1 << 60),
    ] {
        let mut v = good.clone();
        v[at..at + 8].copy_from_slice(&n.to_le_bytes());
        assert_eq!(
            RawProfile::decode(&v),
            Err(FormatError::Truncated {
                at: at as u64,
                what: if at == 164 {
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

/// A file of three builds: `sample()`, a random one and an empty one, with
/// object paths.
fn sample_file(rng: &mut Lcg) -> ProfileFile {
    let mut a = sample();
    a.objects = vec!["/bin/prog".into(), "/lib/libx.so".into()];
    let b = random_profile(rng, 5);
    let mut c = RawProfile::new(u64::MAX, 0);
    c.processes = 2;
    c.objects = vec!["/lib/liby.so".into()];
    c.objects_truncated = true;
    ProfileFile {
        sections: vec![b, a, c],
    }
}

#[test]
fn files_of_several_builds_round_trip() {
    let mut rng = Lcg(3);
    let file = sample_file(&mut rng);
    assert!(file.is_canonical());
    let bytes = file.encode();
    assert!(is_profile(&bytes));
    assert_eq!(ProfileFile::decode(&bytes), Ok(file.clone()));
    assert_eq!(file.build_ids(), vec![5, sample().build_id, u64::MAX]);
    assert_eq!(file.section(u64::MAX), Some(&file.sections[2]));
    assert_eq!(file.section(6), None);
    // The view sees the same sections.
    let v = ProfileView::parse(&bytes).unwrap();
    assert_eq!(v.num_sections(), 3);
    for (sv, s) in v.sections().zip(&file.sections) {
        assert_eq!(
            (sv.build_id(), sv.mode(), sv.facts()),
            (s.build_id, s.mode, s.facts())
        );
        assert!(sv.objects().eq(s.objects.iter().map(String::as_str)));
        assert_eq!(sv.num_objects(), s.objects.len() as u64);
        assert_eq!(sv.objects_truncated(), s.objects_truncated);
        assert_eq!(sv.num_functions(), s.functions.len() as u64);
    }
    assert_eq!(
        v.section(sample().build_id).unwrap().as_bytes(),
        &sample_file(&mut Lcg(3)).sections[1].encode()[24..]
            [..v.section(sample().build_id).unwrap().as_bytes().len()]
    );
    // A file of one build is the same whichever way it is written.
    let one = sample();
    assert_eq!(ProfileFile::from(one.clone()).encode(), one.encode());
    assert_eq!(
        ProfileFile::decode(&one.encode()).unwrap().sections,
        vec![one]
    );

    // A reader of one build refuses files of none or several, clearly.
    let e = RawProfile::decode(&bytes).unwrap_err();
    assert_eq!(e, FormatError::NotOneBuild { builds: 3 });
    let text = e.to_string();
    assert!(text.contains("holds 3 builds"), "{text}");
    assert!(text.contains("ProfileFile"), "{text}");
    assert!(!text.contains('\n'));
    let none = ProfileFile::default().encode();
    assert_eq!(none.len(), 32);
    assert_eq!(ProfileFile::decode(&none), Ok(ProfileFile::default()));
    let e = RawProfile::decode(&none).unwrap_err();
    assert_eq!(e, FormatError::NotOneBuild { builds: 0 });
    assert!(e.to_string().contains("no build"), "{e}");

    // Out of order and repeated sections are normalized when encoded.
    let mut messy = ProfileFile {
        sections: vec![sample(), RawProfile::new(1, 1), sample()],
    };
    messy.sections[2].objects = vec!["/z".into(), "/a".into(), "".into(), "/a".into()];
    assert!(!messy.is_canonical());
    let d = ProfileFile::decode(&messy.encode()).unwrap();
    assert!(d.is_canonical());
    assert_eq!(d.build_ids(), vec![1, sample().build_id]);
    let mut twice = sample();
    twice.merge(&sample()).unwrap();
    twice.objects = vec!["/a".into(), "/z".into()];
    assert_eq!(d.sections[1], twice);
    // Sections of one build that cannot merge: the later one is dropped.
    let mut clash = ProfileFile {
        sections: vec![sample(), sample()],
    };
    clash.sections[1].mode = 0;
    clash.normalize();
    assert_eq!(clash.sections, vec![sample()]);
}

#[test]
fn file_merge_adds_sections_of_one_build_and_keeps_the_others() {
    let mut rng = Lcg(11);
    let a = sample_file(&mut rng);
    let mut other = sample();
    other.processes = 1;
    other.objects = vec!["/bin/other".into()];
    let b = ProfileFile {
        sections: vec![RawProfile::new(2, 1), other.clone()],
    };
    let mut m = a.clone();
    m.merge(&b).unwrap();
    assert_eq!(m.build_ids(), vec![2, 5, sample().build_id, u64::MAX]);
    assert_eq!(m.sections[0], RawProfile::new(2, 1));
    assert_eq!(m.sections[1], a.sections[0]);
    assert_eq!(m.sections[3], a.sections[2]);
    let mut expect = a.sections[1].clone();
    expect.merge(&other).unwrap();
    assert_eq!(m.sections[2], expect);
    assert_eq!(expect.processes, sample().processes + 1);
    assert_eq!(
        expect.objects,
        vec!["/bin/other", "/bin/prog", "/lib/libx.so"]
    );
    // merge_into gives the same bytes, either way round (commutative).
    let (ea, eb) = (a.encode(), b.encode());
    let (va, vb) = (
        ProfileView::parse(&ea).unwrap(),
        ProfileView::parse(&eb).unwrap(),
    );
    let out = merge_into(&va, &vb, Vec::new()).unwrap();
    assert_eq!(out, m.encode());
    assert!(out.len() <= ea.len() + eb.len());
    assert_eq!(merge_into(&vb, &va, Vec::new()).unwrap(), out);

    // A build in both files with another mode: refused, nothing changed.
    let mut clash = b.clone();
    clash.sections[1].mode = 1;
    let mut unchanged = a.clone();
    assert_eq!(
        unchanged.merge(&clash),
        Err(FormatError::ModeMismatch { ours: 2, theirs: 1 })
    );
    assert_eq!(unchanged, a);
    let ec = clash.encode();
    assert_eq!(
        merge_into(&va, &ProfileView::parse(&ec).unwrap(), Vec::new()),
        Err(FormatError::ModeMismatch { ours: 2, theirs: 1 })
    );
    // And a function of another shape in a build of both.
    let mut clash = b.clone();
    clash.sections[1].functions[0].hash ^= 1;
    assert!(matches!(
        unchanged.merge(&clash),
        Err(FormatError::HashMismatch { index: 0, .. })
    ));
    assert_eq!(unchanged, a);
}

#[test]
fn file_merge_is_associative_and_commutative() {
    let mut rng = Lcg(2024);
    let random_file = |rng: &mut Lcg| {
        let mut f = ProfileFile::default();
        for id in 0..5u64 {
            if rng.below(2) == 0 {
                f.sections.push(random_profile(rng, id));
            }
        }
        f
    };
    for _ in 0..100 {
        let (a, b, c) = (
            random_file(&mut rng),
            random_file(&mut rng),
            random_file(&mut rng),
        );
        let mut ab = a.clone();
        ab.merge(&b).unwrap();
        let mut ba = b.clone();
        ba.merge(&a).unwrap();
        assert_eq!(ab, ba, "commutative");
        let mut ab_c = ab.clone();
        ab_c.merge(&c).unwrap();
        let mut bc = b.clone();
        bc.merge(&c).unwrap();
        let mut a_bc = a.clone();
        a_bc.merge(&bc).unwrap();
        assert_eq!(ab_c, a_bc, "associative");
        // Every build of either file, each once; facts added per section.
        let mut ids = a.build_ids();
        ids.extend(b.build_ids());
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ab.build_ids(), ids);
        for s in &ab.sections {
            let f = |x: &ProfileFile| x.section(s.build_id).map(RawProfile::facts);
            let want = f(&a)
                .unwrap_or_default()
                .saturating_add(f(&b).unwrap_or_default());
            assert_eq!(s.facts(), want);
        }
        // The allocation-free merge agrees.
        let (ea, eb) = (a.encode(), b.encode());
        let out = merge_into(
            &ProfileView::parse(&ea).unwrap(),
            &ProfileView::parse(&eb).unwrap(),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(ProfileFile::decode(&out).unwrap(), ab);
    }
}

#[test]
fn object_paths_merge_into_a_capped_union() {
    let paths =
        |r: std::ops::Range<u32>| -> Vec<String> { r.map(|k| format!("/lib/{k:03}.so")).collect() };
    let mut a = RawProfile::new(1, 2);
    a.objects = paths(0..20);
    let mut b = RawProfile::new(1, 2);
    b.objects = paths(10..30);
    let mut m = a.clone();
    m.merge(&b).unwrap();
    assert_eq!(m.objects, paths(0..30));
    assert!(!m.objects_truncated);
    // Beyond 32: the first 32 in sort order, and the flag.
    let mut c = RawProfile::new(1, 2);
    c.objects = paths(25..40);
    let mut n = m.clone();
    n.merge(&c).unwrap();
    assert_eq!(n.objects, paths(0..32));
    assert!(n.objects_truncated);
    assert_eq!(n.objects.len(), MAX_OBJECTS);
    // The flag stays, whatever comes next.
    let mut o = n.clone();
    o.merge(&RawProfile::new(1, 2)).unwrap();
    assert!(o.objects_truncated);
    let mut o = RawProfile::new(1, 2);
    o.merge(&n).unwrap();
    assert!(o.objects_truncated);
    // merge_into does the same.
    let (em, ec) = (m.encode(), c.encode());
    let out = merge_into(
        &ProfileView::parse(&em).unwrap(),
        &ProfileView::parse(&ec).unwrap(),
        Vec::new(),
    )
    .unwrap();
    assert_eq!(RawProfile::decode(&out).unwrap(), n);
    // normalize keeps the first 32 too.
    let mut p = RawProfile::new(1, 2);
    p.objects = paths(0..40).into_iter().rev().collect();
    assert!(!p.is_canonical());
    p.normalize();
    assert_eq!(p.objects, paths(0..32));
    assert!(p.objects_truncated);
    // The encoder leaves out objects beyond the 32nd and marks the section.
    let mut e = Encoder::new(Vec::new());
    e.begin_section(1, 2);
    for o in paths(0..40) {
        e.object(&o);
    }
    let q = RawProfile::decode(&e.finish().unwrap()).unwrap();
    assert_eq!(q.objects, paths(0..32));
    assert!(q.objects_truncated);
}

#[test]
fn section_and_object_rules() {
    // One section, build 7, no facts, objects "/a" and "/b", no functions:
    // the objects are at 24 + 80 = 104 (length) and 112 ("/a"), 114 and 122.
    let mut p = RawProfile::new(7, 2);
    p.objects = vec!["/a".into(), "/b".into()];
    let good = p.encode();
    assert_eq!(&good[112..114], b"/a");
    assert_eq!(&good[122..124], b"/b");
    let malformed = |v: Vec<u8>| ProfileFile::decode(&reseal(v)).unwrap_err();
    let edit = |i: usize, bytes: &[u8]| {
        let mut v = good.clone();
        v[i..i + bytes.len()].copy_from_slice(bytes);
        v
    };
    let cases: [(Vec<u8>, u64, &str); 6] = [
        (edit(12, &[1]), 12, "the reserved header word is not zero"),
        (edit(36, &[2]), 24, "a section has unknown flags set"),
        (
            edit(123, b"a"),
            114,
            "object paths are not strictly increasing",
        ),
        (
            edit(122, b"/a"),
            114,
            "object paths are not strictly increasing",
        ),
        (edit(112, &[0xff]), 104, "an object path is not UTF-8"),
        (
            [&good[..104], &0u64.to_le_bytes(), &good[114..]].concat(),
            104,
            "an object path is empty",
        ),
    ];
    for (v, at, what) in cases {
        assert_eq!(malformed(v), FormatError::Malformed { at, what }, "{what}");
    }
    // 33 object paths.
    let mut e = Encoder::new(Vec::new());
    e.begin_section(7, 2);
    for k in 0..32 {
        e.object(&format!("/{k:02}"));
    }
    let full = e.finish().unwrap();
    let mut v = full[..full.len() - 16].to_vec(); // without the function count and checksum
    v[96..104].copy_from_slice(&33u64.to_le_bytes());
    v.extend_from_slice(&3u64.to_le_bytes());
    v.extend_from_slice(b"/99");
    v.extend_from_slice(&[0; 16]);
    assert_eq!(
        malformed(v),
        FormatError::Malformed {
            at: 24,
            what: "a section lists more than 32 object paths"
        }
    );
    // Sections out of order: the two sections of a file swapped by hand.
    let one = RawProfile::new(1, 2).encode();
    let two = RawProfile::new(2, 2).encode();
    let mut v = ProfileFile::default().encode()[..24].to_vec();
    v[16] = 2;
    v.extend_from_slice(&two[24..two.len() - 8]);
    v.extend_from_slice(&one[24..one.len() - 8]);
    v.extend_from_slice(&[0; 8]);
    assert_eq!(
        malformed(v.clone()),
        FormatError::Malformed {
            at: 112,
            what: "section build ids are not strictly increasing"
        }
    );
    // The same build twice.
    v[112] = 2;
    assert!(matches!(
        malformed(v),
        FormatError::Malformed {
            what: "section build ids are not strictly increasing",
            ..
        }
    ));
    // Absurd section and object counts are refused before allocating.
    for (at, n) in [
        (16, u64::MAX),
        (16, 1 << 40),
        (96, u64::MAX),
        (104, 1 << 50),
    ] {
        let mut v = good.clone();
        v[at..at + 8].copy_from_slice(&n.to_le_bytes());
        assert!(
            matches!(ProfileFile::decode(&v), Err(FormatError::Truncated { .. })),
            "{at} = {n}"
        );
    }

    // Encoder misuse around sections and objects.
    type Calls = fn(&mut Encoder<Vec<u8>>);
    let misuse: [(Calls, &str); 9] = [
        (
            |e| e.begin_function(0, 0, 0),
            "a function outside a section",
        ),
        (|e| e.object("/a"), "an object path outside a section"),
        (|e| e.facts(Default::default()), "facts outside a section"),
        (
            |e| e.objects_truncated(),
            "objects_truncated outside a section",
        ),
        (
            |e| {
                e.begin_section(2, 0);
                e.begin_section(2, 0);
            },
            "section build ids must be strictly increasing",
        ),
        (
            |e| {
                e.begin_section(2, 0);
                e.begin_section(1, 0);
            },
            "section build ids must be strictly increasing",
        ),
        (
            |e| {
                e.begin_section(2, 0);
                e.object("");
            },
            "an empty object path",
        ),
        (
            |e| {
                e.begin_section(2, 0);
                e.object("/b");
                e.object("/a");
            },
            "object paths must be strictly increasing",
        ),
        (
            |e| {
                e.begin_section(2, 0);
                e.begin_function(0, 0, 0);
                e.end_function(false);
                e.object("/a");
            },
            "an object path after a function",
        ),
    ];
    for (calls, what) in misuse {
        let mut e = Encoder::new(Vec::new());
        calls(&mut e);
        assert_eq!(e.finish(), Err(FormatError::InvalidInput { what }));
    }
    let mut e = Encoder::new(Vec::new());
    e.begin_section(2, 0);
    e.begin_function(0, 0, 0);
    e.begin_section(3, 0);
    assert_eq!(
        e.finish(),
        Err(FormatError::InvalidInput {
            what: "a section begun with a function still open"
        })
    );
    // copy_section keeps the order rule, and copies verbatim.
    let bytes = sample_file(&mut Lcg(3)).encode();
    let v = ProfileView::parse(&bytes).unwrap();
    let mut e = Encoder::new(Vec::new());
    for s in v.sections() {
        e.copy_section(&s);
    }
    assert_eq!(e.finish().unwrap(), bytes);
    let mut e = Encoder::new(Vec::new());
    let last = v.sections().last().unwrap();
    e.copy_section(&last);
    e.copy_section(&v.sections().next().unwrap());
    assert_eq!(
        e.finish(),
        Err(FormatError::InvalidInput {
            what: "section build ids must be strictly increasing"
        })
    );
}

#[test]
fn every_cut_and_every_single_byte_change_of_a_file_of_several_builds_is_an_error() {
    let file = ProfileFile {
        sections: vec![
            RawProfile {
                objects: vec!["/x".into()],
                ..RawProfile::new(1, 0)
            },
            RawProfile {
                functions: vec![RawFunction {
                    index: 2,
                    hash: 3,
                    slots: vec![1],
                    paths: vec![(4, 5)],
                    slot_resumes: vec![(0, 1)],
                    path_resumes: vec![(4, 1)],
                }],
                objects: vec!["/a".into(), "/bb".into()],
                objects_truncated: true,
                processes: 1,
                ..RawProfile::new(9, 2)
            },
        ],
    };
    let good = file.encode();
    assert_eq!(ProfileFile::decode(&good), Ok(file));
    for n in 0..good.len() {
        assert!(
            ProfileFile::decode(&good[..n]).is_err(),
            "prefix {n} decoded"
        );
        assert!(ProfileView::parse(&good[..n]).is_err());
    }
    let mut v = good.clone();
    for i in 0..good.len() {
        for mask in [1u8, 0x80, 0xff] {
            v[i] ^= mask;
            assert!(
                ProfileFile::decode(&v).is_err(),
                "byte {i} ^ {mask:#x} decoded"
            );
            v[i] ^= mask;
        }
    }
}
