//! The name a person reads for each function of a combined map: its shown
//! name (demangled, or the linkage name), qualified where two functions
//! share name, file and line. That is one source function built in two
//! shapes (another macro in another program: xz's `tuklib_exit` in `xz` and
//! `xzdec`), and a report must not list it twice under one name. The
//! qualifier is the programs and libraries whose runs hold each build, where
//! they tell the builds apart, else the build's shape hash. Two functions of
//! one name from different places (`static` functions of two files) are
//! told apart by their file, or file and line.

use pathprof_core::map::{base_name, MapFile};
use std::collections::HashMap;

/// What a reader sees of a function in a list: its shown name, its source
/// file and its line.
type Shown<'a> = (&'a str, Option<&'a str>, Option<u32>);

/// A function's name qualified where its shown name alone is ambiguous.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qualified {
    /// The name a report lists.
    pub name: String,
    /// Whether it is one build of a source function built in several shapes
    /// (name, file and line alike): the JSON report names its objects.
    pub one_of_builds: bool,
}

/// For each function of `map` (with the `objects` its builds ran from, as
/// [`pathprof_core::combine::Combined::objects`]), its qualified name where
/// its shown name alone is ambiguous, else `None`.
pub fn qualified(map: &MapFile, objects: &[Vec<String>]) -> Vec<Option<Qualified>> {
    let mut names: Vec<Option<Qualified>> = builds(map, objects)
        .into_iter()
        .map(|name| {
            name.map(|name| Qualified {
                name,
                one_of_builds: true,
            })
        })
        .collect();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in map.functions.iter().enumerate() {
        by_name.entry(f.shown_name()).or_default().push(i);
    }
    for members in by_name.values().filter(|m| m.len() > 1) {
        let place = |i: usize| (map.file_name(map.functions[i].file), map.functions[i].line);
        for &i in members {
            if names[i].is_some() {
                continue;
            }
            let (file, line) = place(i);
            let file_alike = members.iter().any(|&j| j != i && place(j).0 == file);
            let file = file.map_or_else(|| "no file".to_string(), base_name);
            let qualifier = match line {
                Some(line) if file_alike => format!("{file}:{line}"),
                _ => file,
            };
            names[i] = Some(Qualified {
                name: format!("{} [{qualifier}]", map.functions[i].shown_name()),
                one_of_builds: false,
            });
        }
    }
    names
}

/// For each function of `map`, its name qualified by the build where
/// another function has its shown name, file and line, else `None`.
fn builds(map: &MapFile, objects: &[Vec<String>]) -> Vec<Option<String>> {
    let mut groups: HashMap<Shown, Vec<usize>> = HashMap::new();
    for (i, f) in map.functions.iter().enumerate() {
        let key = (f.shown_name(), map.file_name(f.file), f.line);
        groups.entry(key).or_default().push(i);
    }
    let mut names = vec![None; map.functions.len()];
    for members in groups.values().filter(|m| m.len() > 1) {
        let ran_in = |i: usize| objects.get(i).filter(|o| !o.is_empty());
        let by_objects = members.iter().all(|&i| {
            ran_in(i).is_some_and(|o| members.iter().all(|&j| j == i || ran_in(j) != Some(o)))
        });
        for &i in members {
            let f = &map.functions[i];
            let qualifier = match ran_in(i) {
                Some(o) if by_objects => format!("in {}", base_names(o)),
                _ => format!("shape {:016x}", f.hash),
            };
            names[i] = Some(format!("{} [{qualifier}]", f.shown_name()));
        }
    }
    names
}

/// Object paths by their file names, comma-separated.
fn base_names(objects: &[String]) -> String {
    let names: Vec<String> = objects.iter().map(|o| base_name(o)).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::loaded;

    /// Two builds of `f` (one shape each) on the same line of the same file.
    fn two_shapes() -> MapFile {
        let mut map = loaded(3, &[(0, 1), (1, 2)], &[], &[]).map;
        let other = loaded(3, &[(0, 1), (0, 2), (1, 2)], &[], &[]).map;
        map.functions.push(other.functions[0].clone());
        map
    }

    #[test]
    fn builds_of_one_function_are_told_apart_by_their_programs() {
        let map = two_shapes();
        let objects = vec![vec!["/bin/xz".to_string()], vec!["/bin/xzdec".to_string()]];
        assert_eq!(
            builds(&map, &objects),
            vec![
                Some("f [in xz]".to_string()),
                Some("f [in xzdec]".to_string())
            ]
        );
        assert!(qualified(&map, &objects)
            .iter()
            .all(|q| q.as_ref().unwrap().one_of_builds));
    }

    #[test]
    fn builds_no_program_tells_apart_are_told_apart_by_shape() {
        let map = two_shapes();
        let shape = |i: usize| format!("f [shape {:016x}]", map.functions[i].hash);
        for objects in [
            vec![],
            vec![vec!["/bin/p".to_string()], vec![]],
            vec![vec!["/bin/p".to_string()], vec!["/bin/p".to_string()]],
        ] {
            assert_eq!(
                builds(&map, &objects),
                vec![Some(shape(0)), Some(shape(1))],
                "{objects:?}"
            );
        }
    }

    #[test]
    fn a_name_of_its_own_is_left_alone() {
        let mut map = two_shapes();
        map.functions[1].name = "g".into();
        assert_eq!(qualified(&map, &[]), vec![None, None]);
    }

    #[test]
    fn one_name_in_two_places_is_told_apart_by_its_place() {
        let shown = |map: &MapFile| -> Vec<String> {
            qualified(map, &[])
                .into_iter()
                .map(|q| {
                    let q = q.unwrap();
                    assert!(!q.one_of_builds);
                    q.name
                })
                .collect()
        };
        let mut map = two_shapes();
        map.functions[1].line = Some(30);
        assert_eq!(shown(&map), ["f [t.c:9]", "f [t.c:30]"]);
        map.files.push("/src/u.c".into());
        map.functions[1].file = Some(1);
        assert_eq!(shown(&map), ["f [t.c]", "f [u.c]"]);
    }
}
