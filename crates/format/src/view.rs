//! Zero-copy, allocation-free reading: [`ProfileView`] checks a whole file once
//! (structure, order rules, checksum) and then hands out its functions as
//! [`FunctionView`]s borrowing the bytes. The runtime merges with it from a
//! signal handler, where it must not call `malloc`.

use crate::checksum::fnv1a64;
use crate::{Facts, FormatError, MAGIC, VERSION};

/// Bytes before the first function record.
pub(crate) const HEADER_LEN: usize = 56;
/// Bytes of a function record with no slots, paths or resumes.
pub(crate) const FUNCTION_MIN_LEN: usize = 4 + 8 + 8 + 8 + 8 + 8;
/// Bytes of the trailing checksum.
pub(crate) const CHECKSUM_LEN: usize = 8;
/// Offset of the process facts (processes, forked, threads) in the header.
pub(crate) const FACTS_AT: usize = 24;
/// Offset of the function count in the header.
pub(crate) const FUNCTION_COUNT_AT: usize = 48;

/// Reads little-endian fields, failing with [`FormatError::Truncated`].
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FormatError> {
        let at = self.pos;
        let chunk = at
            .checked_add(n)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or(FormatError::Truncated {
                at: at as u64,
                what,
            })?;
        self.pos = at + n;
        Ok(chunk)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, FormatError> {
        let b = self.take(4, what)?;
        Ok(b.try_into().map(u32::from_le_bytes).unwrap_or(0))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, FormatError> {
        Ok(le_u64(self.take(8, what)?))
    }

    /// A count of `size`-byte items that must fit in the rest of the file.
    fn items(&mut self, size: usize, what: &'static str) -> Result<&'a [u8], FormatError> {
        let at = self.pos;
        let n = self.u64(what)?;
        let max = self.remaining() / size;
        if n > max as u64 {
            return Err(FormatError::Truncated {
                at: at as u64,
                what,
            });
        }
        self.take(n as usize * size, what)
    }
}

/// The little-endian u64 in the first 8 bytes of `b` (0 if shorter).
pub(crate) fn le_u64(b: &[u8]) -> u64 {
    b.get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

/// A checked raw profile, borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct ProfileView<'a> {
    bytes: &'a [u8],
    build_id: u64,
    mode: u32,
    facts: Facts,
    num_functions: u64,
}

/// One function record of a [`ProfileView`].
#[derive(Debug, Clone, Copy)]
pub struct FunctionView<'a> {
    index: u32,
    hash: u64,
    slots: &'a [u8],
    paths: &'a [u8],
    slot_resumes: &'a [u8],
    path_resumes: &'a [u8],
}

/// The function records of a [`ProfileView`], in index order.
#[derive(Debug, Clone)]
pub struct Functions<'a> {
    reader_bytes: &'a [u8],
    pos: usize,
    left: u64,
}

fn read_function<'a>(r: &mut Reader<'a>) -> Result<FunctionView<'a>, FormatError> {
    let index = r.u32("function index")?;
    let hash = r.u64("function hash")?;
    let slots = r.items(8, "slot counters")?;
    let paths = r.items(16, "path entries")?;
    let slot_resumes = r.items(16, "slot resumes")?;
    let path_resumes = r.items(16, "path resumes")?;
    Ok(FunctionView {
        index,
        hash,
        slots,
        paths,
        slot_resumes,
        path_resumes,
    })
}

impl<'a> ProfileView<'a> {
    /// Checks `bytes` completely and returns a view of them. Never panics and
    /// never allocates.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FormatError> {
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(FormatError::Truncated {
                at: 0,
                what: "magic",
            });
        }
        if !bytes.starts_with(&MAGIC) {
            return Err(FormatError::NotAProfile);
        }
        let mut r = Reader {
            bytes,
            pos: MAGIC.len(),
        };
        let version = r.u32("version")?;
        if version < VERSION {
            return Err(FormatError::OlderVersion { found: version });
        }
        if version != VERSION {
            return Err(FormatError::UnsupportedVersion { found: version });
        }
        let mode = r.u32("mode")?;
        let build_id = r.u64("build id")?;
        let facts = Facts {
            processes: r.u64("process count")?,
            forked: r.u64("fork child count")?,
            threads: r.u64("thread count")?,
        };
        let count_at = r.pos;
        let num_functions = r.u64("function count")?;
        if num_functions > (r.remaining() / FUNCTION_MIN_LEN) as u64 {
            return Err(FormatError::Truncated {
                at: count_at as u64,
                what: "function records",
            });
        }
        // Order rules are checked after the checksum, so that damage is reported as damage.
        let mut problem: Option<FormatError> = None;
        let mut last_index: Option<u32> = None;
        for _ in 0..num_functions {
            let at = r.pos as u64;
            let f = read_function(&mut r)?;
            if problem.is_none() {
                problem = f.rule_broken(last_index, at);
            }
            last_index = Some(f.index);
        }
        let body_end = r.pos;
        let stored = r.u64("checksum")?;
        if r.remaining() != 0 {
            return Err(FormatError::TrailingBytes {
                at: r.pos as u64,
                extra: r.remaining() as u64,
            });
        }
        let computed = fnv1a64(bytes.get(..body_end).unwrap_or(&[]));
        if computed != stored {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        if let Some(p) = problem {
            return Err(p);
        }
        Ok(ProfileView {
            bytes,
            build_id,
            mode,
            facts,
            num_functions,
        })
    }

    /// The build id of the program that wrote the profile.
    pub fn build_id(&self) -> u64 {
        self.build_id
    }

    /// The instrumentation mode (0 block, 1 edge, 2 path).
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// The process facts: how many processes ended with a final write into
    /// the profile, how many of them were fork children, how many threads
    /// they started (see [`Facts`]).
    pub fn facts(&self) -> Facts {
        self.facts
    }

    /// How many function records the profile holds.
    pub fn num_functions(&self) -> u64 {
        self.num_functions
    }

    /// The whole file.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The function records, in increasing index order.
    pub fn functions(&self) -> Functions<'a> {
        Functions {
            reader_bytes: self.bytes,
            pos: HEADER_LEN,
            left: self.num_functions,
        }
    }
}

impl<'a> Iterator for Functions<'a> {
    type Item = FunctionView<'a>;

    fn next(&mut self) -> Option<FunctionView<'a>> {
        if self.left == 0 {
            return None;
        }
        let mut r = Reader {
            bytes: self.reader_bytes,
            pos: self.pos,
        };
        // The view was checked, so this cannot fail; stop quietly if it does.
        let f = read_function(&mut r).ok()?;
        self.pos = r.pos;
        self.left -= 1;
        Some(f)
    }
}

impl<'a> FunctionView<'a> {
    /// The function's index in the map file.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The function's shape hash.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many slot counters the function has.
    pub fn num_slots(&self) -> u64 {
        (self.slots.len() / 8) as u64
    }

    /// The slot counters, in slot order.
    pub fn slots(&self) -> impl Iterator<Item = u64> + 'a {
        self.slots.chunks_exact(8).map(le_u64)
    }

    /// How many path entries the function has.
    pub fn num_paths(&self) -> u64 {
        (self.paths.len() / 16) as u64
    }

    /// The `(path id, count)` entries, ids increasing, counts nonzero.
    pub fn paths(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.paths)
    }

    /// How many slot resume entries the function has.
    pub fn num_slot_resumes(&self) -> u64 {
        (self.slot_resumes.len() / 16) as u64
    }

    /// The `(slot index, resumes)` entries: how many times each slot
    /// counter was taken back below what was written (see the crate doc).
    /// Slot indices increasing and below [`num_slots`](Self::num_slots),
    /// counts nonzero.
    pub fn slot_resumes(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.slot_resumes)
    }

    /// How many path resume entries the function has.
    pub fn num_path_resumes(&self) -> u64 {
        (self.path_resumes.len() / 16) as u64
    }

    /// The `(path id, resumes)` entries: how many times each path's count
    /// was taken back below what was written (see the crate doc). Ids
    /// increasing, counts nonzero.
    pub fn path_resumes(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.path_resumes)
    }

    /// The first order rule this record breaks, if any.
    fn rule_broken(&self, last_index: Option<u32>, at: u64) -> Option<FormatError> {
        if last_index.is_some_and(|l| self.index <= l) {
            return Some(FormatError::Malformed {
                at,
                what: "function indices are not strictly increasing",
            });
        }
        let malformed = |what| Some(FormatError::Malformed { at, what });
        match pairs_rule_broken(self.paths()) {
            Some(Broken::Order) => return malformed("path ids are not strictly increasing"),
            Some(Broken::Zero) => return malformed("a path entry has a zero count"),
            None => {}
        }
        match pairs_rule_broken(self.slot_resumes()) {
            Some(Broken::Order) => {
                return malformed("slot resume indices are not strictly increasing")
            }
            Some(Broken::Zero) => return malformed("a slot resume has a zero count"),
            None => {}
        }
        if self
            .slot_resumes()
            .last()
            .is_some_and(|(k, _)| k >= self.num_slots())
        {
            return malformed("a slot resume names a slot the function does not have");
        }
        match pairs_rule_broken(self.path_resumes()) {
            Some(Broken::Order) => malformed("path resume ids are not strictly increasing"),
            Some(Broken::Zero) => malformed("a path resume has a zero count"),
            None => None,
        }
    }
}

/// The `(u64, u64)` pairs of `bytes` (16 bytes each).
fn pairs(bytes: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    bytes
        .chunks_exact(16)
        .map(|e| (le_u64(e), le_u64(e.get(8..).unwrap_or(&[]))))
}

/// Which rule of a `(key, count)` list is broken.
enum Broken {
    /// Keys not strictly increasing.
    Order,
    /// A zero count.
    Zero,
}

/// The first rule `list` breaks: keys strictly increasing, counts nonzero.
fn pairs_rule_broken(list: impl Iterator<Item = (u64, u64)>) -> Option<Broken> {
    let mut last: Option<u64> = None;
    for (key, count) in list {
        if last.is_some_and(|l| key <= l) {
            return Some(Broken::Order);
        }
        if count == 0 {
            return Some(Broken::Zero);
        }
        last = Some(key);
    }
    None
}
