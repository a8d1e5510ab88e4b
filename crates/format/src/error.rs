//! [`FormatError`]: everything that can be wrong with a raw profile, said so a
//! user knows what happened and what to do about it.

use crate::abi::mode_name;
use crate::text::{Formatted, Text};
use core::fmt;

/// Why a raw profile could not be decoded, merged or encoded.
///
/// Offsets (`at`) are byte offsets from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// The bytes do not start with the `PPROFRAW` magic.
    NotAProfile,
    /// The file was written by an older pathprof, in a format version that
    /// lacks facts the reports need (version 1 had no process counts,
    /// version 2 no resumes, version 3 held one build without object
    /// paths); the program must be run again to record a new profile.
    OlderVersion {
        /// The version found in the file.
        found: u32,
    },
    /// The file is a raw profile of a newer format version than this crate reads.
    UnsupportedVersion {
        /// The version found in the file.
        found: u32,
    },
    /// The file ends before the record starting at `at` is complete.
    Truncated {
        /// Where the incomplete record starts.
        at: u64,
        /// What that record is.
        what: &'static str,
    },
    /// The trailing FNV-1a 64 checksum does not match the contents.
    ChecksumMismatch {
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum of the bytes before it.
        computed: u64,
    },
    /// Bytes follow the checksum.
    TrailingBytes {
        /// Where the unexpected bytes start.
        at: u64,
        /// How many there are.
        extra: u64,
    },
    /// The checksum matches but the contents break a rule of the format
    /// (indices or ids out of order, a zero path or resume count, a resume of
    /// a slot the function does not have).
    Malformed {
        /// Where the offending record starts.
        at: u64,
        /// The rule that is broken.
        what: &'static str,
    },
    /// A reader of one build ([`crate::RawProfile::decode`]) was given a
    /// file of no or several sections (builds).
    NotOneBuild {
        /// How many sections the file holds.
        builds: u64,
    },
    /// Merging profiles of two different builds.
    BuildMismatch {
        /// The build id of the profile merged into.
        ours: u64,
        /// The build id of the other profile.
        theirs: u64,
    },
    /// Merging profiles of two different instrumentation modes.
    ModeMismatch {
        /// The mode of the profile merged into.
        ours: u32,
        /// The mode of the other profile.
        theirs: u32,
    },
    /// A function has a different shape hash in the two merged profiles.
    HashMismatch {
        /// The function's index.
        index: u32,
        /// Its hash in the profile merged into.
        ours: u64,
        /// Its hash in the other profile.
        theirs: u64,
    },
    /// A function has a different number of slot counters in the two merged profiles.
    SlotCountMismatch {
        /// The function's index.
        index: u32,
        /// Its slot count in the profile merged into.
        ours: u64,
        /// Its slot count in the other profile.
        theirs: u64,
    },
    /// An [`crate::Encoder`] was used against its rules (a bug in the caller).
    InvalidInput {
        /// The rule that was broken.
        what: &'static str,
    },
    /// An [`crate::Encoder`]'s sink refused more bytes (out of memory).
    OutOfSpace {
        /// How many bytes the sink held when it refused.
        at: u64,
    },
}

const REDO: &str = "delete it and run the instrumented program again";

impl FormatError {
    /// Writes what is wrong and what to do, as `Display` shows it, into
    /// `out` (the runtime's messages use this: no `core::fmt`).
    pub fn describe(&self, out: &mut dyn Text) {
        match *self {
            FormatError::NotAProfile => out.str(
                "not a pathprof raw profile (it does not start with \"PPROFRAW\"); \
                 pass a .pprof file written by a program built with pathprof",
            ),
            FormatError::OlderVersion { found } => {
                out.str("raw profile version ");
                out.dec(found.into());
                out.str(" was written by an older pathprof (this pathprof reads version ");
                out.dec(crate::VERSION.into());
                out.str(
                    ", which holds every build of a process or test suite in one \
                     file, with how many processes and threads wrote each and the counts taken \
                     back after they were written); delete it and run the instrumented program \
                     again to re-record it",
                );
            }
            FormatError::UnsupportedVersion { found } => {
                out.str("unsupported raw profile version ");
                out.dec(found.into());
                out.str(" (this pathprof reads version ");
                out.dec(crate::VERSION.into());
                out.str("); read it with the pathprof release that built the program");
            }
            FormatError::Truncated { at, what } => {
                out.str("raw profile truncated at byte ");
                out.dec(at);
                out.str(": the ");
                out.str(what);
                out.str(
                    " run past the end of the file \
                     (a writer was interrupted, or the file is damaged); ",
                );
                out.str(REDO);
            }
            FormatError::ChecksumMismatch { stored, computed } => {
                out.str("raw profile checksum mismatch (damaged): stored ");
                out.hex16(stored);
                out.str(", contents hash to ");
                out.hex16(computed);
                out.str("; ");
                out.str(REDO);
            }
            FormatError::TrailingBytes { at, extra } => {
                out.str("raw profile has ");
                out.dec(extra);
                out.str(" unexpected bytes after its checksum at byte ");
                out.dec(at);
                out.str(" (damaged, or two files were concatenated); ");
                out.str(REDO);
            }
            FormatError::Malformed { at, what } => {
                out.str("malformed raw profile at byte ");
                out.dec(at);
                out.str(": ");
                out.str(what);
                out.str(" (not written by pathprof, or damaged); ");
                out.str(REDO);
            }
            FormatError::NotOneBuild { builds: 0 } => out.str(
                "raw profile holds no build's counts (no sections); it was not written by \
                 a program built with pathprof",
            ),
            FormatError::NotOneBuild { builds } => {
                out.str("raw profile holds ");
                out.dec(builds);
                out.str(
                    " builds (one section each), where one was \
                     expected; read it with ProfileFile, or pick a build's section \
                     (`pathprof info` lists them)",
                );
            }
            FormatError::BuildMismatch { ours, theirs } => {
                out.str("profile is from another build (build id ");
                out.hex16(theirs);
                out.str(", expected ");
                out.hex16(ours);
                out.str(
                    "); profiles of different builds cannot be merged: keep them apart, \
                     or delete the stale one",
                );
            }
            FormatError::ModeMismatch { ours, theirs } => {
                out.str("profile holds ");
                out.str(mode_name(theirs));
                out.str(" counters (mode ");
                out.dec(theirs.into());
                out.str(") but ");
                out.str(mode_name(ours));
                out.str(" counters (mode ");
                out.dec(ours.into());
                out.str(") were expected; profiles of different modes cannot be merged");
            }
            FormatError::HashMismatch {
                index,
                ours,
                theirs,
            } => {
                out.str("function #");
                out.dec(index.into());
                out.str(" has shape hash ");
                out.hex16(theirs);
                out.str(" in one profile and ");
                out.hex16(ours);
                out.str(" in the other; they come from different builds and cannot be merged");
            }
            FormatError::SlotCountMismatch {
                index,
                ours,
                theirs,
            } => {
                out.str("function #");
                out.dec(index.into());
                out.str(" has ");
                out.dec(theirs);
                out.str(" slot counters in one profile and ");
                out.dec(ours);
                out.str(" in the other; they come from different builds and cannot be merged");
            }
            FormatError::InvalidInput { what } => {
                out.str("cannot encode raw profile: ");
                out.str(what);
                out.str(" (a bug in the caller; please report it)");
            }
            FormatError::OutOfSpace { at } => {
                out.str("out of memory after ");
                out.dec(at);
                out.str(" bytes while building a raw profile; free some memory and try again");
            }
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Formatted(f, Ok(()));
        self.describe(&mut out);
        out.1
    }
}

impl core::error::Error for FormatError {}
