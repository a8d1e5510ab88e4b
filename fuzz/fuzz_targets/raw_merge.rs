//! Two raw profiles merged: `RawProfile::merge` against `merge_into`.
//! Input: a flag byte, a 2-byte little-endian split point, then both files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pathprof_fuzz::{check_merge, check_profile, with_profile_checksum};

fuzz_target!(|data: &[u8]| {
    let [flag, s0, s1, rest @ ..] = data else {
        return;
    };
    let split = usize::from(u16::from_le_bytes([*s0, *s1])).min(rest.len());
    let (a, b) = rest.split_at(split);
    let (a, b) = if flag & 1 == 0 {
        (with_profile_checksum(a), with_profile_checksum(b))
    } else {
        (a.to_vec(), b.to_vec())
    };
    check_profile(&a);
    check_profile(&b);
    check_merge(&a, &b);
});
