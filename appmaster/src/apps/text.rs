//! Splitting a split's bytes into lines and words. Input need not be UTF-8: bytes that are not
//! part of a valid UTF-8 character separate words and are kept (lossily) in lines.

use std::borrow::Cow;

/// The lines of `input`: separated by `\n`, a trailing `\r` dropped, no empty line after a
/// final `\n` (so `""` has no lines and `"\n"` one empty line).
pub(crate) fn lines(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    let skip = input.is_empty();
    body.split(|&b| b == b'\n')
        .filter(move |_| !skip)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// How many lines [`lines`] yields, without splitting.
pub(crate) fn count_lines(input: &[u8]) -> u64 {
    let newlines = input.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(input.last().is_some_and(|&b| b != b'\n'))
}

/// The character starting `bytes` (non-empty, first byte ≥ 0x80) and its length, or `None`
/// and 1 for a byte that does not start a valid UTF-8 character.
fn char_at(bytes: &[u8]) -> (Option<char>, usize) {
    let head = &bytes[..bytes.len().min(4)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        // `valid_up_to` ≤ head.len(), and the prefix up to it is valid UTF-8.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    match valid.chars().next() {
        Some(c) => (Some(c), c.len_utf8()),
        None => (None, 1),
    }
}

/// Calls `f(start, end)` with each word of `input`: a maximal run of alphanumeric characters
/// (`char::is_alphanumeric`), `input[start..end]`, valid UTF-8. ASCII takes a fast path.
pub(crate) fn for_each_word(input: &[u8], mut f: impl FnMut(usize, usize)) {
    let mut start: Option<usize> = None;
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        let (alnum, len) = if b < 0x80 {
            (b.is_ascii_alphanumeric(), 1)
        } else {
            let (c, len) = char_at(&input[i..]);
            (c.is_some_and(char::is_alphanumeric), len)
        };
        if alnum {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            f(s, i);
        }
        i += len;
    }
    if let Some(s) = start {
        f(s, input.len());
    }
}

/// A word from [`for_each_word`], lowercased; borrowed when it already is (the common case).
pub(crate) fn lowercase(word: &[u8]) -> Cow<'_, str> {
    let s = String::from_utf8_lossy(word);
    if s.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        s
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(input: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(input, |s, e| out.push(lowercase(&input[s..e]).into_owned()));
        out
    }

    #[test]
    fn lines_follow_newlines() {
        let all = |s: &[u8]| lines(s).map(<[u8]>::to_vec).collect::<Vec<_>>();
        assert!(all(b"").is_empty());
        assert_eq!(all(b"\n"), [b"".to_vec()]);
        assert_eq!(all(b"a\r\nb"), [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(all(b"a\n\nb\n"), [b"a".to_vec(), vec![], b"b".to_vec()]);
        for s in [&b""[..], b"\n", b"a\r\nb", b"a\n\nb\n", b"x"] {
            assert_eq!(count_lines(s), all(s).len() as u64);
        }
    }

    #[test]
    fn words_are_alphanumeric_runs_lowercased() {
        assert_eq!(
            words("The cat's 2nd-Café, ÉTÉ\u{a0}naïve".as_bytes()),
            ["the", "cat", "s", "2nd", "café", "été", "naïve"]
        );
        // Invalid UTF-8 separates; a truncated character at the end too.
        assert_eq!(words(b"ab\xffcd\xc3"), ["ab", "cd"]);
        assert!(words(b"  ,;\n").is_empty());
    }
}
