//! The map file (`.ppmap`): `MapFile::from_bytes`, the loader every report uses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flag, rest)) = data.split_first() else {
        return;
    };
    if flag & 1 == 0 {
        let compressed = flag & 2 != 0;
        pathprof_fuzz::check_map(&pathprof_fuzz::map_with_header(rest, compressed));
    } else {
        pathprof_fuzz::check_map(rest);
    }
});
