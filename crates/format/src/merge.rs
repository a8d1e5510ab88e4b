//! Merging two profiles of one build: [`RawProfile::merge`] over owned data
//! and [`merge_into`] over two [`ProfileView`]s, allocation-free, for the
//! runtime. Both add counts and resumes saturating at `u64::MAX`, take the
//! union of functions, of path ids and of resume keys, and refuse (before
//! changing anything) profiles of another build or mode, or a function whose
//! hash or slot count differs.

use crate::encoder::{Encoder, Sink};
use crate::view::{FunctionView, ProfileView};
use crate::{FormatError, RawFunction, RawProfile};
use std::cmp::Ordering;

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

/// Writes the merge of `ours` and `theirs` into `out` as a complete raw
/// profile (process facts added, saturating). Allocates nothing beyond what `out` does. Errors as
/// [`RawProfile::merge`] (with `ours` the profile merged into), or
/// [`FormatError::OutOfSpace`] when `out` refuses bytes; the merged file is
/// never longer than the two inputs together.
pub fn merge_into<S: Sink>(
    ours: &ProfileView<'_>,
    theirs: &ProfileView<'_>,
    out: S,
) -> Result<S, FormatError> {
    check(
        (ours.build_id(), ours.mode()),
        (theirs.build_id(), theirs.mode()),
        ours.functions().map(|f| view_shape(&f)),
        theirs.functions().map(|f| view_shape(&f)),
    )?;
    let mut e = Encoder::new(out, ours.build_id(), ours.mode());
    e.facts(ours.facts().saturating_add(theirs.facts()));
    let mut a = ours.functions().peekable();
    let mut b = theirs.functions().peekable();
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
                one(&mut e, &x);
                a.next();
            }
            (Some(x), None) => {
                one(&mut e, &x);
                a.next();
            }
            (_, Some(y)) => {
                one(&mut e, &y);
                b.next();
            }
            (None, None) => break,
        }
    }
    e.finish()
}

impl RawProfile {
    /// Adds `other`'s counts, resumes and process facts to `self`
    /// (saturating at `u64::MAX`), taking the union of functions, path ids
    /// and resume keys.
    ///
    /// Refuses, leaving `self` unchanged, a profile of another build
    /// ([`FormatError::BuildMismatch`]) or mode ([`FormatError::ModeMismatch`]),
    /// or one in which a function present in both has another hash
    /// ([`FormatError::HashMismatch`]) or slot count
    /// ([`FormatError::SlotCountMismatch`]).
    pub fn merge(&mut self, other: &RawProfile) -> Result<(), FormatError> {
        self.normalize();
        let normalized;
        let other = if other.is_canonical() {
            other
        } else {
            let mut o = other.clone();
            o.normalize();
            normalized = o;
            &normalized
        };
        check(
            (self.build_id, self.mode),
            (other.build_id, other.mode),
            self.functions.iter().map(raw_shape),
            other.functions.iter().map(raw_shape),
        )?;
        let facts = self.facts().saturating_add(other.facts());
        self.set_facts(facts);
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
