//! Writes seed inputs for the fuzz targets: `make_seeds <corpus dir>` fills
//! `<dir>/map`, `<dir>/raw_profile` and `<dir>/raw_merge` with small valid
//! files (behind the targets' flag byte 0: "fix the checksum").

use pathprof_core::map::MapFile;
use pathprof_format::{ProfileFile, RawFunction, RawProfile};
use std::path::Path;

#[path = "../../crates/core/tests/seed_maps/mod.rs"]
mod seed_maps;

fn profiles() -> Vec<ProfileFile> {
    let f = |index, slots: &[u64], paths: &[(u64, u64)]| RawFunction {
        index,
        hash: 0x1000 + u64::from(index),
        slots: slots.to_vec(),
        paths: paths.to_vec(),
        ..Default::default()
    };
    let one = [
        RawProfile::new(7, 2),
        RawProfile {
            functions: vec![f(0, &[1, 2], &[(0, 3), (5, 1)]), f(2, &[], &[(1, 9)])],
            objects: vec!["/usr/bin/prog".into()],
            ..RawProfile::new(7, 2)
        },
        RawProfile {
            processes: 3,
            forked: 2,
            threads: u64::MAX,
            functions: vec![f(0, &[4, 0], &[(5, u64::MAX)]), f(1, &[3], &[])],
            objects: vec!["/lib/liba.so".into(), "/usr/bin/prog".into()],
            objects_truncated: true,
            ..RawProfile::new(7, 2)
        },
    ];
    let mut files: Vec<ProfileFile> = one.iter().cloned().map(ProfileFile::from).collect();
    // Files of several builds: an executable's and a library's sections.
    files.push(ProfileFile {
        sections: vec![
            RawProfile {
                functions: vec![f(0, &[1], &[])],
                objects: vec!["/lib/liba.so".into()],
                ..RawProfile::new(3, 0)
            },
            one[1].clone(),
        ],
    });
    files.push(ProfileFile {
        sections: vec![one[2].clone(), RawProfile::new(9, 1)],
    });
    files
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut input = vec![0u8];
    input.extend_from_slice(bytes);
    std::fs::write(dir.join(name), input).unwrap();
}

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let root = Path::new(&root);
    let maps = seed_maps::maps();
    for (name, m) in &maps {
        let read = MapFile::from_bytes(&m.to_bytes(), name).expect("a written map reads back");
        assert_eq!(&read, m);
        // The JSON body: the target puts a header (plain or compressed) on it.
        write(
            &root.join("map"),
            name,
            &serde_json::to_vec(m).expect("map serializes"),
        );
    }
    let profiles = profiles();
    for (i, p) in profiles.iter().enumerate() {
        write(&root.join("raw_profile"), &format!("p{i}"), &p.encode());
    }
    for (i, a) in profiles.iter().enumerate() {
        for (j, b) in profiles.iter().enumerate() {
            let (a, b) = (a.encode(), b.encode());
            let mut input = (a.len() as u16).to_le_bytes().to_vec();
            input.extend_from_slice(&a);
            input.extend_from_slice(&b);
            write(&root.join("raw_merge"), &format!("m{i}{j}"), &input);
        }
    }
}
