//! Merging: [`RawProfile::merge`] (two sections of one build) and
//! [`ProfileFile::merge`] (two files, section by section) over owned data,
//! and [`merge_into`] over two [`ProfileView`]s, allocation-free, for the
//! runtime. All add counts and resumes saturating at `u64::MAX`, take the
//! union of functions, of path ids, of resume keys and of object paths (the
//! first 32 kept), and refuse (before changing anything) a section of the
//! same build in another mode, or a function whose hash or slot count
//! differs; [`RawProfile::merge`] also refuses another build, the file
//! merges keep each build in a section of its own.

use crate::encoder::{Encoder, Sink};
use crate::view::{FunctionView, ProfileView, SectionView};
use crate::{FormatError, ProfileFile, RawFunction, RawProfile, MAX_OBJECTS};
use std::borrow::Cow;
use std::cmp::Ordering;

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

/// The part of a function that must agree for two profiles to merge.
#[derive(Clone, Copy)]
struct Shape {
    index: u32,
    hash: u64,
    slots: u64,
}

/// Checks that two profiles (headers and function shapes in index order) can merge.
fn check<A, B>(ours: (u64, u32), theirs: (u64, u32), a: A, b: B) -> Result<(), FormatError>
where
    A: Iterator<Item = Shape>,
    B: Iterator<Item = Shape>,
{
    if ours.0 != theirs.0 {
        return Err(FormatError::BuildMismatch {
            ours: ours.0,
            theirs: theirs.0,
        });
    }
    if ours.1 != theirs.1 {
        return Err(FormatError::ModeMismatch {
            ours: ours.1,
            theirs: theirs.1,
        });
    }
    let mut a = a.peekable();
    let mut b = b.peekable();
    while let (Some(x), Some(y)) = (a.peek().copied(), b.peek().copied()) {
        match x.index.cmp(&y.index) {
            Ordering::Less => drop(a.next()),
            Ordering::Greater => drop(b.next()),
            Ordering::Equal => {
                if x.hash != y.hash {
                    return Err(FormatError::HashMismatch {
                        index: x.index,
                        ours: x.hash,
                        theirs: y.hash,
                    });
                }
                if x.slots != y.slots {
                    return Err(FormatError::SlotCountMismatch {
                        index: x.index,
                        ours: x.slots,
                        theirs: y.slots,
                    });
                }
                a.next();
                b.next();
            }
        }
    }
    Ok(())
}

/// Merges two key-sorted `(key, count)` lists (paths or resumes), calling
/// `out` in increasing key order, adding the counts of a key in both.
fn merge_pairs(
    a: impl Iterator<Item = (u64, u64)>,
    b: impl Iterator<Item = (u64, u64)>,
    mut out: impl FnMut(u64, u64),
) {
    let mut a = a.peekable();
    let mut b = b.peekable();
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (Some((i, x)), Some((j, y))) => match i.cmp(&j) {
                Ordering::Less => {
                    out(i, x);
                    a.next();
                }
                Ordering::Greater => {
                    out(j, y);
                    b.next();
                }
                Ordering::Equal => {
                    out(i, x.saturating_add(y));
                    a.next();
                    b.next();
                }
            },
            (Some((i, x)), None) => {
                out(i, x);
                a.next();
            }
            (None, Some((j, y))) => {
                out(j, y);
                b.next();
            }
            (None, None) => return,
        }
    }
}

fn view_shape(f: &FunctionView<'_>) -> Shape {
    Shape {
        index: f.index(),
        hash: f.hash(),
        slots: f.num_slots(),
    }
}

fn raw_shape(f: &RawFunction) -> Shape {
    Shape {
        index: f.index,
        hash: f.hash,
        slots: f.slots.len() as u64,
    }
}

/// Calls `out` with the union of two increasing lists of object paths, in
/// increasing order (a path in both once).
fn merge_objects<'a>(
    a: impl Iterator<Item = &'a str>,
    b: impl Iterator<Item = &'a str>,
    mut out: impl FnMut(&'a str),
) {
    let mut a = a.peekable();
    let mut b = b.peekable();
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Less => {
                    out(x);
                    a.next();
                }
                Ordering::Greater => {
                    out(y);
                    b.next();
                }
                Ordering::Equal => {
                    out(x);
                    a.next();
                    b.next();
                }
            },
            (Some(x), None) => {
                out(x);
                a.next();
            }
            (None, Some(y)) => {
                out(y);
                b.next();
            }
            (None, None) => return,
        }
    }
}

/// The sections of two files paired by build id, in increasing build id
/// order: `(Some, Some)` for a build in both.
fn paired<'a>(
    ours: &ProfileView<'a>,
    theirs: &ProfileView<'a>,
) -> impl Iterator<Item = (Option<SectionView<'a>>, Option<SectionView<'a>>)> {
    let mut a = ours.sections().peekable();
    let mut b = theirs.sections().peekable();
    std::iter::from_fn(move || {
        let (x, y) = (a.peek().copied(), b.peek().copied());
        match (x, y) {
            (Some(x), Some(y)) => match x.build_id().cmp(&y.build_id()) {
                Ordering::Less => Some((a.next(), None)),
                Ordering::Greater => Some((None, b.next())),
                Ordering::Equal => Some((a.next(), b.next())),
            },
            (Some(_), None) => Some((a.next(), None)),
            (None, Some(_)) => Some((None, b.next())),
            (None, None) => None,
        }
    })
}

/// Checks that two sections of one build can merge.
fn check_sections(x: &SectionView<'_>, y: &SectionView<'_>) -> Result<(), FormatError> {
    check(
        (x.build_id(), x.mode()),
        (y.build_id(), y.mode()),
        x.functions().map(|f| view_shape(&f)),
        y.functions().map(|f| view_shape(&f)),
    )
}

/// Writes the merge of two sections of one build (checked) as a section of `e`.
fn merge_section<S: Sink>(e: &mut Encoder<S>, x: &SectionView<'_>, y: &SectionView<'_>) {
    e.begin_section(x.build_id(), x.mode());
    e.facts(x.facts().saturating_add(y.facts()));
    if x.objects_truncated() || y.objects_truncated() {
        e.objects_truncated();
    }
    merge_objects(x.objects(), y.objects(), |p| e.object(p));
    let mut a = x.functions().peekable();
    let mut b = y.functions().peekable();
    let one = |e: &mut Encoder<S>, f: &FunctionView<'_>| {
        e.begin_function(f.index(), f.hash(), f.num_slots());
        f.slots().for_each(|s| e.slot(s));
        f.paths().for_each(|(id, c)| e.path(id, c));
        f.slot_resumes().for_each(|(k, r)| e.slot_resume(k, r));
        f.path_resumes().for_each(|(id, r)| e.path_resume(id, r));
        e.end_function(false);
    };
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (Some(x), Some(y)) if x.index() == y.index() => {
                e.begin_function(x.index(), x.hash(), x.num_slots());
                x.slots()
                    .zip(y.slots())
                    .for_each(|(p, q)| e.slot(p.saturating_add(q)));
                merge_pairs(x.paths(), y.paths(), |id, c| e.path(id, c));
                merge_pairs(x.slot_resumes(), y.slot_resumes(), |k, r| {
                    e.slot_resume(k, r)
                });
                merge_pairs(x.path_resumes(), y.path_resumes(), |id, r| {
                    e.path_resume(id, r)
                });
                e.end_function(false);
                a.next();
                b.next();
            }
            (Some(x), Some(y)) if x.index() < y.index() => {
                one(e, &x);
                a.next();
            }
            (Some(x), None) => {
                one(e, &x);
                a.next();
            }
            (_, Some(y)) => {
                one(e, &y);
                b.next();
            }
            (None, None) => break,
        }
    }
    e.end_section();
}

/// Writes the merge of the files `ours` and `theirs` into `out` as a
/// complete raw profile file, section by section: sections of one build
/// are added (counts, resumes and process facts, saturating; object paths
/// united, the first 32 kept), a build in one file only is copied as it is,
/// and the sections stay in build id order. Allocates nothing beyond what
/// `out` does.
///
/// Errors (before anything is written): a build in both files with another
/// mode ([`FormatError::ModeMismatch`]), or with a function whose hash
/// ([`FormatError::HashMismatch`]) or slot count
/// ([`FormatError::SlotCountMismatch`]) differs, `ours` being the file
/// merged into; [`FormatError::OutOfSpace`] when `out` refuses bytes. The
/// merged file is never longer than the two inputs together.
pub fn merge_into<S: Sink>(
    ours: &ProfileView<'_>,
    theirs: &ProfileView<'_>,
    out: S,
) -> Result<S, FormatError> {
    for pair in paired(ours, theirs) {
        if let (Some(x), Some(y)) = pair {
            check_sections(&x, &y)?;
        }
    }
    let mut e = Encoder::new(out);
    for pair in paired(ours, theirs) {
        match pair {
            (Some(x), Some(y)) => merge_section(&mut e, &x, &y),
            (Some(x), None) | (None, Some(x)) => e.copy_section(&x),
            (None, None) => {}
        }
    }
    e.finish()
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
        let mine = std::mem::take(&mut self.functions);
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
