//! The name a person reads for each function of a combined map: its shown
//! name (demangled, or the linkage name), qualified where two functions
//! share name, file and line. That is one source function built in two
//! shapes (another macro in another program: xz's `tuklib_exit` in `xz` and
//! `xzdec`), and a report must not list it twice under one name. The
//! qualifier is the programs and libraries whose runs hold each build, where
//! they tell the builds apart, else the build's shape hash.

use pathprof_core::map::{base_name, MapFile};
use std::collections::HashMap;

/// What a reader sees of a function in a list: its shown name, its source
/// file and its line.
type Shown<'a> = (&'a str, Option<&'a str>, Option<u32>);

/// For each function of `map` (with the `objects` its builds ran from, as
/// [`pathprof_core::combine::Combined::objects`]), its qualified name where
/// its shown name alone is ambiguous, else `None`.
pub fn qualified(map: &MapFile, objects: &[Vec<String>]) -> Vec<Option<String>> {
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
            qualified(&map, &objects),
            vec![
                Some("f [in xz]".to_string()),
                Some("f [in xzdec]".to_string())
            ]
        );
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
                qualified(&map, &objects),
                vec![Some(shape(0)), Some(shape(1))],
                "{objects:?}"
            );
        }
    }

    #[test]
    fn a_name_of_its_own_is_left_alone() {
        let mut map = two_shapes();
        map.functions[1].line = Some(30);
        assert_eq!(qualified(&map, &[]), vec![None, None]);
    }
}
