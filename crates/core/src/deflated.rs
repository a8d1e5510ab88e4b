//! A JSON body stored with raw DEFLATE under a one-line header,
//! `<magic> <version> <fnv64 of the stored body, 16 hex> <stored length>
//! <JSON length>`: the on-disk frame of map fragments (version 3) and of
//! indexed profiles. The checksum catches truncation and edits; the JSON
//! length bounds what inflating may allocate.

use crate::hash::fnv64;

/// DEFLATE's largest expansion (about 1032 to 1): a body declaring a JSON
/// length beyond this many times its stored length is damaged, and is
/// refused before anything is allocated for it.
const MAX_EXPANSION: usize = 1100;

/// `json` framed under `magic` and `version`.
pub fn encode(magic: &str, version: u32, json: &[u8]) -> Vec<u8> {
    let body = miniz_oxide::deflate::compress_to_vec(json, 1);
    let mut out = format!(
        "{magic} {version} {:016x} {} {}\n",
        fnv64(&body),
        body.len(),
        json.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// How a frame can be wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// It does not start with the magic.
    NotThisKind,
    /// Another version of the frame than the one asked for.
    Version(String),
    /// Its checksum does not match (truncated or edited).
    Checksum,
    /// Anything else, said in words.
    Malformed(String),
}

/// The JSON of the frame at the start of `bytes` written by [`encode`] with
/// `magic` and `version`, and the bytes after it.
pub fn decode<'a>(
    bytes: &'a [u8],
    magic: &str,
    version: u32,
) -> Result<(Vec<u8>, &'a [u8]), FrameError> {
    let Some(nl) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(match bytes.starts_with(magic.as_bytes()) {
            true => FrameError::Malformed("it ends inside its header line (truncated?)".into()),
            false => FrameError::NotThisKind,
        });
    };
    let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| FrameError::NotThisKind)?;
    let mut parts = header.split(' ');
    if parts.next() != Some(magic) {
        return Err(FrameError::NotThisKind);
    }
    let found = parts.next().unwrap_or("");
    if found != version.to_string() {
        return Err(FrameError::Version(found.to_string()));
    }
    let sum = parts
        .next()
        .filter(|s| s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .and_then(|s| u64::from_str_radix(s, 16).ok());
    let mut length = || {
        parts
            .next()
            .and_then(|l| l.parse::<usize>().ok())
            .ok_or_else(|| FrameError::Malformed("its header's lengths are missing".into()))
    };
    let (stored_len, json_len) = (length()?, length()?);
    let after = &bytes[nl + 1..];
    if stored_len > after.len() {
        return Err(FrameError::Malformed(
            "its header's length is beyond the end of the file (truncated?)".into(),
        ));
    }
    let (stored, rest) = after.split_at(stored_len);
    if sum != Some(fnv64(stored)) {
        return Err(FrameError::Checksum);
    }
    let json = inflate(stored, json_len).map_err(FrameError::Malformed)?;
    Ok((json, rest))
}

/// `stored` inflated to exactly `len` bytes.
pub(crate) fn inflate(stored: &[u8], len: usize) -> Result<Vec<u8>, String> {
    if len > stored.len().saturating_mul(MAX_EXPANSION) {
        return Err(format!(
            "its header declares {len} bytes of body from {} compressed bytes",
            stored.len()
        ));
    }
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(stored, len)
        .map_err(|e| format!("its compressed body does not inflate ({:?})", e.status))?;
    if json.len() != len {
        return Err(format!(
            "its body inflates to {} bytes, not the {len} its header declares",
            json.len()
        ));
    }
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_damage() {
        let framed = encode("pathprof-test", 1, b"{\"a\":1}");
        let (json, rest) = decode(&framed, "pathprof-test", 1).unwrap();
        assert_eq!((json.as_slice(), rest), (&b"{\"a\":1}"[..], &b""[..]));
        assert_eq!(
            decode(&framed, "pathprof-other", 1),
            Err(FrameError::NotThisKind)
        );
        assert_eq!(
            decode(&framed, "pathprof-test", 2),
            Err(FrameError::Version("1".into()))
        );
        assert!(matches!(
            decode(&framed[..16], "pathprof-test", 1),
            Err(FrameError::Malformed(_))
        ));
        let truncated = &framed[..framed.len() - 1];
        assert!(matches!(
            decode(truncated, "pathprof-test", 1),
            Err(FrameError::Malformed(_))
        ));
        let mut edited = framed.clone();
        *edited.last_mut().unwrap() ^= 1;
        assert_eq!(
            decode(&edited, "pathprof-test", 1),
            Err(FrameError::Checksum)
        );
    }
}
