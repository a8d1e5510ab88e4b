//! Merging: [`merge_into`] over two [`ProfileView`]s, allocation-free, for
//! the runtime, and the rules the owned merges (`raw_merge`:
//! `RawProfile::merge`, `ProfileFile::merge`) share with it. All add counts and resumes saturating at `u64::MAX`, take the
//! union of functions, of path ids, of resume keys and of object paths (the
//! first 32 kept), and refuse (before changing anything) a section of the
//! same build in another mode, or a function whose hash or slot count
//! differs; `RawProfile::merge` also refuses another build, the file
//! merges keep each build in a section of its own.

use crate::encoder::{Encoder, Sink};
use crate::view::{FunctionView, ProfileView, SectionView};
use crate::FormatError;

use core::cmp::Ordering;

/// The part of a function that must agree for two profiles to merge.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) index: u32,
    pub(crate) hash: u64,
    pub(crate) slots: u64,
}

/// Checks that two profiles (headers and function shapes in index order) can merge.
pub(crate) fn check<A, B>(
    ours: (u64, u32),
    theirs: (u64, u32),
    a: A,
    b: B,
) -> Result<(), FormatError>
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
pub(crate) fn merge_pairs(
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

/// Calls `out` with the union of two increasing lists of object paths, in
/// increasing order (a path in both once).
pub(crate) fn merge_objects<'a>(
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
    core::iter::from_fn(move || {
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
