//! Indexed profiles from raw ones: a profile's counts, read with the maps
//! of the builds that wrote it, as the [`Index`] an optimised build reads
//! (`pathprof index`, `pathprof cc --profile-use`); and indexes read and
//! merged with weights.

use crate::load::{add_fragments, load_read, names, read_maps, read_profiles};
use anyhow::{bail, Context as _, Result};
use pathprof_core::map::MapFile;
use pathprof_core::pgo::{is_index, Index};
use std::path::{Path, PathBuf};

/// The index of `profiles` (summed) read with `maps`; with no maps, with
/// the executables and shared libraries the profiles' sections name (each
/// carries its map), those that still exist and carry it.
pub fn index_of_profiles(maps: &[PathBuf], profiles: &[PathBuf]) -> Result<Index> {
    let file = read_profiles(profiles)?;
    let objects: Vec<PathBuf> = {
        let mut all: Vec<&String> = file.sections.iter().flat_map(|s| &s.objects).collect();
        all.sort();
        all.dedup();
        all.into_iter().map(PathBuf::from).collect()
    };
    let (maps, fragments) = if maps.is_empty() {
        let (found, fragments) = maps_of_objects(&objects);
        if found.is_empty() {
            bail!(
                "{} names no instrumented program or library that still exists ({}); give the \
                 instrumented build with --profile-map (or --map for `pathprof index`), or index \
                 the profile with `pathprof index` while the instrumented build is there",
                names(profiles),
                if objects.is_empty() {
                    "it names none".to_string()
                } else {
                    names(&objects)
                }
            );
        }
        (found, fragments)
    } else {
        (maps.to_vec(), read_maps(maps)?)
    };
    let loaded = load_read(&fragments, &file, names(&maps), names(profiles))?;
    let programs = objects
        .iter()
        .chain(&maps)
        .filter_map(|o| o.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".ppmap"))
        .collect();
    Ok(Index::of_program(&loaded.map, &loaded.counts, programs))
}

/// The maps of the objects a profile names ([`map_of_object`]): the files
/// they were read from, and their fragments, each build once.
fn maps_of_objects(objects: &[PathBuf]) -> (Vec<PathBuf>, Vec<MapFile>) {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut fragments = Vec::new();
    for o in objects {
        if let Some((path, more)) = map_of_object(o) {
            if !found.contains(&path) {
                add_fragments(&mut fragments, more);
                found.push(path);
            }
        }
    }
    (found, fragments)
}

/// Where the map of an object a profile names is, and its fragments: the
/// object itself while it carries one; else the `.ppmap` its instrumented
/// link wrote beside it (an optimised build linked over it has none of its
/// own, its sources compiled with the profile already); for a P3 copy
/// `PROG.p3.N`, the path build `PROG` and `PROG.ppmap`, which hold the
/// copies' map.
fn map_of_object(object: &Path) -> Option<(PathBuf, Vec<MapFile>)> {
    let mut candidates = vec![object.to_path_buf(), with_suffix(object, ".ppmap")];
    let name = object.file_name()?.to_string_lossy();
    if let Some((stem, n)) = name.rsplit_once(".p3.") {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            let program = object.with_file_name(stem);
            candidates.push(with_suffix(&program, ".ppmap"));
            candidates.push(program);
        }
    }
    candidates.into_iter().find_map(|c| {
        let fragments = pathprof_io::map::read_fragments(&c).ok()?;
        Some((c, fragments))
    })
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether `path` holds an indexed profile (it starts like one).
pub fn is_index_file(path: &Path) -> bool {
    let mut magic = [0u8; 14];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| is_index(&magic))
}

/// Reads the indexed profile at `path`.
pub fn read_index(path: &Path) -> Result<Index> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the indexed profile {}", path.display()))?;
    Ok(Index::from_bytes(&bytes, &path.display().to_string())?)
}

/// The index of one input: an indexed profile as it is, a raw profile
/// read with `maps` ([`index_of_profiles`]).
pub fn index_of(maps: &[PathBuf], input: &Path) -> Result<Index> {
    if is_index_file(input) {
        read_index(input)
    } else {
        index_of_profiles(maps, &[input.to_path_buf()])
    }
}
