//! [`Text`]: where messages are written without `core::fmt`, so that the
//! runtime, which must stay small and never allocate, says what went wrong
//! in the same words as the tools (which reach the same text through
//! `Display`).

/// A sink for message text: strings and integers, nothing else.
pub trait Text {
    /// Appends `s`.
    fn str(&mut self, s: &str);

    /// Appends `v` in decimal.
    fn dec(&mut self, v: u64) {
        let mut digits = [0u8; 20];
        self.str(ascii(decimal(v, &mut digits)));
    }

    /// Appends `v` as 16 hexadecimal digits, zero-padded.
    fn hex16(&mut self, v: u64) {
        let mut digits = [0u8; 16];
        for (i, d) in digits.iter_mut().enumerate() {
            let nibble = (v >> (60 - 4 * i)) & 0xf;
            *d = b"0123456789abcdef"[nibble as usize];
        }
        self.str(ascii(&digits));
    }
}

/// `v`'s decimal digits, written at the end of `digits`.
pub fn decimal(v: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    let mut v = v;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &digits[at..]
}

/// ASCII digits as a `str`.
fn ascii(digits: &[u8]) -> &str {
    core::str::from_utf8(digits).unwrap_or("?")
}

/// `Display` through [`Text`]: a formatter that takes strings and integers.
pub(crate) struct Formatted<'a, 'b>(
    pub(crate) &'a mut core::fmt::Formatter<'b>,
    pub(crate) core::fmt::Result,
);

impl Text for Formatted<'_, '_> {
    fn str(&mut self, s: &str) {
        if self.1.is_ok() {
            self.1 = self.0.write_str(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Text;
    use alloc::string::String;

    impl Text for String {
        fn str(&mut self, s: &str) {
            self.push_str(s);
        }
    }

    #[test]
    fn integers_are_written_as_format_would() {
        for v in [0, 1, 9, 10, 99, 12345, u64::MAX] {
            let mut s = String::new();
            s.dec(v);
            assert_eq!(s, alloc::format!("{v}"));
            let mut h = String::new();
            h.hex16(v);
            assert_eq!(h, alloc::format!("{v:016x}"));
        }
    }
}
