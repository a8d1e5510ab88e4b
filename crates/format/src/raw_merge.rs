//! Merging owned profiles: [`RawProfile::merge`] (two sections of one build)
//! and [`ProfileFile::merge`] (two files, section by section), by the rules of
//! [`crate::merge`].

use crate::merge::{check, merge_objects, merge_pairs, Shape};
use crate::{FormatError, ProfileFile, RawFunction, RawProfile, MAX_OBJECTS};
use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// `x` itself when it is in canonical form, else a normalized copy.
fn canonical<'a, T: Clone>(
    x: &'a T,
    is_canonical: impl Fn(&T) -> bool,
    normalize: impl Fn(&mut T),
) -> Cow<'a, T> {
    if is_canonical(x) {
        return Cow::Borrowed(x);
    }
    let mut copy = x.clone();
    normalize(&mut copy);
    Cow::Owned(copy)
}

fn raw_shape(f: &RawFunction) -> Shape {
    Shape {
        index: f.index,
        hash: f.hash,
        slots: f.slots.len() as u64,
    }
}

/// The union of two sorted object path lists and whether more than
/// [`MAX_OBJECTS`] were left out (the first ones in sort order are kept).
pub(crate) fn union_objects(a: &[String], b: &[String]) -> (Vec<String>, bool) {
    let mut out: Vec<String> = Vec::with_capacity((a.len() + b.len()).min(MAX_OBJECTS));
    let mut more = false;
    merge_objects(
        a.iter().map(String::as_str),
        b.iter().map(String::as_str),
        |p| {
            if out.len() < MAX_OBJECTS {
                out.push(p.to_string());
            } else {
                more = true;
            }
        },
    );
    (out, more)
}

impl RawProfile {
    /// Adds `other`'s counts, resumes and process facts to `self`
    /// (saturating at `u64::MAX`), taking the union of functions, path ids
    /// and resume keys, and of object paths (the first 32 in sort order
    /// kept; `objects_truncated` set when more were left out, or was set in
    /// either).
    ///
    /// Refuses, leaving `self` unchanged, a profile of another build
    /// ([`FormatError::BuildMismatch`]) or mode ([`FormatError::ModeMismatch`]),
    /// or one in which a function present in both has another hash
    /// ([`FormatError::HashMismatch`]) or slot count
    /// ([`FormatError::SlotCountMismatch`]).
    pub fn merge(&mut self, other: &RawProfile) -> Result<(), FormatError> {
        self.normalize();
        let other = canonical(other, Self::is_canonical, Self::normalize);
        let other = other.as_ref();
        check(
            (self.build_id, self.mode),
            (other.build_id, other.mode),
            self.functions.iter().map(raw_shape),
            other.functions.iter().map(raw_shape),
        )?;
        let facts = self.facts().saturating_add(other.facts());
        self.set_facts(facts);
        let (objects, more) = union_objects(&self.objects, &other.objects);
        self.objects = objects;
        self.objects_truncated |= other.objects_truncated || more;
        let mine = core::mem::take(&mut self.functions);
        let mut merged = Vec::with_capacity(mine.len().max(other.functions.len()));
        let mut a = mine.into_iter().peekable();
        let mut b = other.functions.iter().peekable();
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.index == y.index => {
                    let mut x = a.next().unwrap_or_default();
                    if let Some(y) = b.next() {
                        x.add(y);
                    }
                    merged.push(x);
                    continue;
                }
                (Some(x), Some(y)) => x.index < y.index,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_a {
                merged.extend(a.next());
            } else {
                merged.extend(b.next().cloned());
            }
        }
        self.functions = merged;
        Ok(())
    }
}

impl RawFunction {
    /// Adds `other`'s counters and resumes (same index, hash and slot
    /// count) to `self`.
    pub(crate) fn add(&mut self, other: &RawFunction) {
        for (s, o) in self.slots.iter_mut().zip(&other.slots) {
            *s = s.saturating_add(*o);
        }
        add_pairs(&mut self.paths, &other.paths);
        add_pairs(&mut self.slot_resumes, &other.slot_resumes);
        add_pairs(&mut self.path_resumes, &other.path_resumes);
    }
}

/// Merges the key-sorted list `other` into `list`.
fn add_pairs(list: &mut Vec<(u64, u64)>, other: &[(u64, u64)]) {
    if other.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(list.len().max(other.len()));
    merge_pairs(list.iter().copied(), other.iter().copied(), |k, c| {
        out.push((k, c))
    });
    *list = out;
}

impl ProfileFile {
    /// Adds `other`'s sections to `self`: a build in both is merged as
    /// [`RawProfile::merge`] does, a build new to `self` is inserted in build
    /// id order.
    ///
    /// Refuses, leaving `self` unchanged, when a build in both has another
    /// mode ([`FormatError::ModeMismatch`]) or a function with another hash
    /// ([`FormatError::HashMismatch`]) or slot count
    /// ([`FormatError::SlotCountMismatch`]).
    pub fn merge(&mut self, other: &ProfileFile) -> Result<(), FormatError> {
        self.normalize();
        let other = canonical(other, Self::is_canonical, Self::normalize);
        let other = other.as_ref();
        for theirs in &other.sections {
            if let Some(ours) = self.section(theirs.build_id) {
                check(
                    (ours.build_id, ours.mode),
                    (theirs.build_id, theirs.mode),
                    ours.functions.iter().map(raw_shape),
                    theirs.functions.iter().map(raw_shape),
                )?;
            }
        }
        for theirs in &other.sections {
            match self
                .sections
                .binary_search_by_key(&theirs.build_id, |s| s.build_id)
            {
                Ok(i) => self.sections[i].merge(theirs)?,
                Err(i) => self.sections.insert(i, theirs.clone()),
            }
        }
        Ok(())
    }
}
