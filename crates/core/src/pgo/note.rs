//! What each optimised object records of its profile's use, in the ELF
//! section [`NOTE_SECTION`], one JSON line per translation unit: how many of
//! its functions took counts, which changed since the profile, how many the
//! profile never saw, and how many branches the counts left undetermined.
//! Linkers concatenate the lines: the link step reads the objects' and
//! archives' notes before it links (to refuse another program's profile)
//! and every linked object's at once from the linked file after, and says
//! it in one note.

use serde::{Deserialize, Serialize};

/// The section the notes are in (not loaded at run time).
pub const NOTE_SECTION: &str = ".pathprof.pgo";

/// One translation unit's use of the profile.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseNote {
    /// Its functions with bodies.
    pub functions: u64,
    /// Those that took counts from the profile.
    pub matched: u64,
    /// Those whose shape changed since the profile (shown names).
    pub changed: Vec<String>,
    /// Those the profile has nothing of.
    pub missing: u64,
    /// Branches of matched functions whose successors' counts the profile
    /// does not determine (`--every-block`), left without weights.
    pub undetermined: u64,
    /// Tails of hot paths copied (`--duplicate-hot-paths`), and the
    /// instructions the copies added.
    #[serde(default)]
    pub copied_tails: u64,
    #[serde(default)]
    pub copied_instructions: u64,
}

impl UseNote {
    /// Its line in the section.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("a note serializes");
        line.push('\n');
        line
    }

    /// Every note in a section's bytes, added up (lines that do not parse
    /// are skipped: padding, or a section not of this kind).
    pub fn sum_of(section: &[u8]) -> UseNote {
        let mut sum = UseNote::default();
        for line in section.split(|&b| b == b'\n') {
            // Without the NUL padding a linker may put between objects.
            let line = &line[line.iter().take_while(|&&b| b == 0).count()..];
            if let Ok(note) = serde_json::from_slice::<UseNote>(line) {
                sum.add(&note);
            }
        }
        sum
    }

    /// Adds `other`'s counts in (each changed name once).
    pub fn add(&mut self, other: &UseNote) {
        self.functions += other.functions;
        self.matched += other.matched;
        self.missing += other.missing;
        self.undetermined += other.undetermined;
        self.copied_tails += other.copied_tails;
        self.copied_instructions += other.copied_instructions;
        for name in &other.changed {
            if !self.changed.contains(name) {
                self.changed.push(name.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_of_many_objects_add_up() {
        let a = UseNote {
            functions: 3,
            matched: 2,
            changed: vec!["f".into()],
            missing: 0,
            undetermined: 1,
            ..UseNote::default()
        };
        let b = UseNote {
            functions: 2,
            matched: 0,
            changed: vec!["f".into(), "g".into()],
            missing: 0,
            undetermined: 0,
            ..UseNote::default()
        };
        let mut section = a.to_line().into_bytes();
        section.extend([0, 0]);
        section.extend(b.to_line().into_bytes());
        let sum = UseNote::sum_of(&section);
        assert_eq!((sum.functions, sum.matched, sum.undetermined), (5, 2, 1));
        assert_eq!(sum.changed, vec!["f".to_string(), "g".to_string()]);
    }
}
