//! The documented range of every number and name the daemons accept from outside. A value out
//! of range is refused with a [`FieldError`] naming the field (a 400 at the REST layer), so
//! nothing the rm stores can overflow when it is written or read back.

use crate::protocol::Resource;

/// The most memory a node may offer: 16 TiB.
pub const NODE_MAX_MEMORY_MB: u64 = 16 << 20;
/// The most vcores a node may offer.
pub const NODE_MAX_VCORES: u32 = 65_536;
/// The largest container one may ask for: 1 TiB.
pub const CONTAINER_MAX_MEMORY_MB: u64 = 1 << 20;
pub const CONTAINER_MAX_VCORES: u32 = 1_024;
/// The most containers one ask line may want.
pub const MAX_CONTAINERS_PER_ASK: u32 = 100_000;
/// The most ask lines, or releases, in one allocate call; the most containers a registering
/// node may list.
pub const MAX_LIST: usize = 100_000;
/// The longest node id, rack, user, queue or application name.
pub const MAX_NAME_LEN: usize = 255;
/// The latest deadline: the end of year 9999, in ms since the epoch.
pub const MAX_TIME_MS: i64 = 253_402_300_799_999;

/// The most characters of a value from outside that a refusal echoes back.
pub const MAX_ECHO_CHARS: usize = 64;
/// The longest diagnostics a master's unregister may carry (YARN's `diagnostics`); longer ones
/// are cut to this, not refused (refusing would leave the application running).
pub const MAX_DIAGNOSTICS_CHARS: usize = 4096;

/// `text` cut to at most `max` characters, `…` marking a cut: how a value from outside is
/// echoed in an error message or kept, so a 100,000-character id is not sent back whole.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// [`cut`] to [`MAX_ECHO_CHARS`]: an id, name or value from outside, as a message echoes it.
pub fn echo(text: &str) -> String {
    cut(text, MAX_ECHO_CHARS)
}

/// A parser's message (serde's, axum's) with what came from outside in it cut short: every
/// part it quotes (between backticks or double quotes, as serde quotes the names and values it
/// was given) and every longer word (a path to the field, which axum writes unquoted)
/// [`echo`]ed; the rest of the message stays whole.
pub fn echo_message(message: &str) -> String {
    // A quoted echo with its quotes and a comma or colon is a word this long.
    const LONGEST_WORD: usize = MAX_ECHO_CHARS + 4;
    let quoted = echo_quoted(message);
    let mut out = String::with_capacity(quoted.len());
    let mut word = String::new();
    for c in quoted.chars().chain(std::iter::once(' ')) {
        if c.is_whitespace() {
            match word.chars().count() > LONGEST_WORD {
                true => out.push_str(&echo(&word)),
                false => out.push_str(&word),
            }
            word.clear();
            out.push(c);
        } else {
            word.push(c);
        }
    }
    out.pop();
    out
}

fn echo_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().expect("found");
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let (inner, after) = match rest.find(quote) {
            Some(close) => (&rest[..close], &rest[close..]),
            None => (rest, ""),
        };
        out.push_str(&echo(inner));
        rest = after;
        if let Some(r) = rest.strip_prefix(quote) {
            out.push(quote);
            rest = r;
        }
    }
    out.push_str(rest);
    out
}

/// A value outside its documented range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

fn bad(field: &str, problem: String) -> FieldError {
    FieldError {
        field: field.into(),
        problem,
    }
}

/// `memoryMb` in 1..=`max_mb` and `vcores` in 1..=`max_vcores`.
pub fn check_resource(
    field: &str,
    r: Resource,
    max_mb: u64,
    max_vcores: u32,
) -> Result<(), FieldError> {
    if !(1..=max_mb).contains(&r.memory_mb) {
        return Err(bad(
            &format!("{field}.memoryMb"),
            format!("{} is outside 1..={max_mb}", r.memory_mb),
        ));
    }
    if !(1..=max_vcores).contains(&r.vcores) {
        return Err(bad(
            &format!("{field}.vcores"),
            format!("{} is outside 1..={max_vcores}", r.vcores),
        ));
    }
    Ok(())
}

/// 1..=[`MAX_NAME_LEN`] printable ASCII characters, no spaces.
pub fn check_name(field: &str, s: &str) -> Result<(), FieldError> {
    if !(1..=MAX_NAME_LEN).contains(&s.len()) {
        return Err(bad(
            field,
            format!("{} characters, outside 1..={MAX_NAME_LEN}", s.len()),
        ));
    }
    if !s.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad(
            field,
            "only printable ASCII without spaces is allowed".into(),
        ));
    }
    Ok(())
}

/// At most [`MAX_LIST`] entries.
pub fn check_len(field: &str, len: usize) -> Result<(), FieldError> {
    if len > MAX_LIST {
        return Err(bad(field, format!("{len} entries, over {MAX_LIST}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_out_of_range_name_their_field() {
        let r = |memory_mb, vcores| Resource { memory_mb, vcores };
        assert!(check_resource("capability", r(1, 1), 10, 10).is_ok());
        let e = check_resource("capability", r(1 << 63, 1), 10, 10).unwrap_err();
        assert_eq!(e.field, "capability.memoryMb");
        assert!(e.to_string().contains("1..=10"), "{e}");
        let e = check_resource("capability", r(1, 0), 10, 10).unwrap_err();
        assert_eq!(e.field, "capability.vcores");
        // Every node limit survives SQLite's i64.
        assert!(i64::try_from(NODE_MAX_MEMORY_MB).is_ok());
    }

    #[test]
    fn echoed_values_are_cut_on_a_character_boundary() {
        assert_eq!(echo("application_1_0001"), "application_1_0001");
        let long = "x".repeat(100_000);
        assert_eq!(echo(&long), format!("{}…", "x".repeat(MAX_ECHO_CHARS)));
        assert_eq!(cut("ééé", 2), "éé…");
        assert_eq!(cut("abc", 3), "abc");
        let said = format!("unknown field `{long}`, expected `a` or \"{long}\" at line 1");
        assert_eq!(
            echo_quoted(&said),
            format!(
                "unknown field `{0}…`, expected `a` or \"{0}…\" at line 1",
                "x".repeat(MAX_ECHO_CHARS)
            )
        );
        assert_eq!(echo_quoted("no quotes"), "no quotes");
        assert_eq!(echo_quoted("open `abc"), "open `abc");
        assert_eq!(
            echo_message(&format!("at {long}: unknown field `{long}`")),
            format!("at {0}… unknown field `{0}…`", "x".repeat(MAX_ECHO_CHARS))
        );
        assert_eq!(echo_message("a  b\nc"), "a  b\nc");
    }

    #[test]
    fn names_are_short_printable_ascii() {
        assert!(check_name("nodeId", "127.0.0.1:8042").is_ok());
        assert!(check_name("nodeId", "").is_err());
        assert!(check_name("nodeId", &"a".repeat(256)).is_err());
        assert!(check_name("nodeId", "a b").is_err());
        assert!(check_name("nodeId", "ü").is_err());
    }
}
