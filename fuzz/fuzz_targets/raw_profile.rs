//! One raw profile: `RawProfile::decode`, `ProfileView::parse`, re-encoding and
//! merging with itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flag, rest)) = data.split_first() else {
        return;
    };
    if flag & 1 == 0 {
        pathprof_fuzz::check_profile(&pathprof_fuzz::with_profile_checksum(rest));
    } else {
        pathprof_fuzz::check_profile(rest);
    }
});
