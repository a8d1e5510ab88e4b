//! Finding functions by the name a person types: the linkage name or the
//! demangled one, exactly; when none matches, an error that names the
//! nearest names (by edit distance, or containing what was typed), so that
//! every report answers a typo alike.

use pathprof_core::map::MapFile;

/// Why no function was found.
#[derive(Debug, thiserror::Error)]
#[error("no function named `{name}` in {map}; {hint}")]
pub struct NoSuchFunction {
    pub name: String,
    pub map: String,
    hint: String,
}

/// How many near names an error offers.
const SUGGESTIONS: usize = 5;

/// Every function of `map` whose linkage or demangled name is `name`, in the
/// map's order (several when static functions of different files share it);
/// `map_label` names the map in the error.
pub fn find_functions(
    map: &MapFile,
    name: &str,
    map_label: &str,
) -> Result<Vec<usize>, NoSuchFunction> {
    let found: Vec<usize> = (0..map.functions.len())
        .filter(|&i| {
            let f = &map.functions[i];
            f.name == name || f.display_name.as_deref() == Some(name)
        })
        .collect();
    if !found.is_empty() {
        return Ok(found);
    }
    let shown = |i: usize| {
        let f = &map.functions[i];
        f.shown_name()
    };
    let lower = name.to_lowercase();
    let mut near: Vec<(usize, &str)> = (0..map.functions.len())
        .map(shown)
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = if l.contains(&lower) || lower.contains(&l) {
                0
            } else {
                strsim::levenshtein(&lower, &l)
            };
            (d <= 2.max(name.len() / 3)).then_some((d, n))
        })
        .collect();
    near.sort();
    near.dedup();
    near.truncate(SUGGESTIONS);
    let hint = if near.is_empty() {
        let some: Vec<&str> = (0..map.functions.len().min(SUGGESTIONS))
            .map(shown)
            .collect();
        format!(
            "it has {} functions, such as {}",
            map.functions.len(),
            some.join(", ")
        )
    } else {
        let names: Vec<&str> = near.into_iter().map(|(_, n)| n).collect();
        format!("did you mean {}?", names.join(", "))
    };
    Err(NoSuchFunction {
        name: name.to_string(),
        map: map_label.to_string(),
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::loaded;

    #[test]
    fn unknown_functions_suggest_near_names() {
        let mut l = loaded(2, &[(0, 1)], &[(&[0, 1], 1)], &[]);
        l.map.functions[0].name = "parse_header".into();
        assert_eq!(find_functions(&l.map, "parse_header", "m").unwrap(), [0]);
        let err = find_functions(&l.map, "parse_headr", "m").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no function named `parse_headr` in m; did you mean parse_header?"
        );
        let err = find_functions(&l.map, "zzzzzzzzzzzzzz", "m").unwrap_err();
        assert!(err
            .to_string()
            .ends_with("it has 1 functions, such as parse_header"));
    }
}
