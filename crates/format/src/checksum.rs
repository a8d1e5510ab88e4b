//! FNV-1a 64, the one stable hash of pathprof (stable across Rust versions and
//! platforms, unlike `std`'s): the checksum that closes every raw profile,
//! and, through `pathprof_core::hash`, function identities, build ids and
//! map and source file checksums; `pathprof-rt`'s build script hashes the
//! runtime's sources with it too. It lives here because this is the lowest
//! crate of the workspace: everything else depends on it.
//!
//! Any change of a single byte changes the hash: each step `h = (h ^ b) * P`
//! is a bijection of `h` for a fixed `b` (P is odd), and `h ^ b` differs for
//! two different bytes.

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// An incremental FNV-1a 64 hasher: [`Fnv64::write`] of the bytes in
/// pieces gives what [`fnv1a64`] gives of them at once.
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv64 {
    /// The hash of no bytes.
    pub const fn new() -> Self {
        Fnv64(OFFSET_BASIS)
    }

    /// Hashes `bytes` in.
    pub fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes
            .iter()
            .fold(self.0, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    }

    /// Hashes `v` in as 8 little-endian bytes.
    pub fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }

    /// Hashes `s` in after its length (so `"ab", "c"` and `"a", "bc"` differ).
    pub fn write_str(&mut self, s: &str) {
        self.write_u64(s.len() as u64);
        self.write(s.as_bytes());
    }

    /// The hash of everything written so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// FNV-1a 64 of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv64::new();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::{fnv1a64, Fnv64};

    #[test]
    fn known_values() {
        // Reference values of FNV-1a 64.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn pieces_hash_like_the_whole() {
        let mut h = Fnv64::default();
        h.write(b"foo");
        h.write(b"");
        h.write(b"bar");
        assert_eq!(h.finish(), fnv1a64(b"foobar"));
        let mut s = Fnv64::new();
        s.write_str("ab");
        let mut t = Fnv64::new();
        t.write_u64(2);
        t.write(b"ab");
        assert_eq!(s.finish(), t.finish());
    }
}
