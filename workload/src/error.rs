//! The one error every reader returns: a single line naming the file, the place, the field,
//! and what was expected instead of what was found.

use std::fmt;

/// Where in a file a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The file as a whole (empty, unreadable, undetectable).
    File,
    /// A 1-based line.
    Line(u64),
    /// A 1-based line and column.
    LineColumn(u64, u64),
    /// A 0-based byte offset.
    Byte(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::File => Ok(()),
            Position::Line(l) => write!(f, ":{l}"),
            Position::LineColumn(l, c) => write!(f, ":{l}:{c}"),
            Position::Byte(b) => write!(f, ": byte {b}"),
        }
    }
}

/// A trace that cannot be read. `Display` is one line: `FILE:LINE[:COL]: field `F`: PROBLEM`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TraceError {
    pub file: String,
    pub at: Position,
    /// The column, key or JSON path at fault, e.g. `map_input_bytes` or `mapTasks[3].startTime`.
    pub field: Option<String>,
    /// What is wrong, phrased as "expected X, found Y" where that fits.
    pub problem: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}: ", self.file, self.at)?;
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        // Keep the promise of one line even when a message from below carries newlines.
        let mut first = true;
        for part in self.problem.lines() {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(part.trim())?;
            first = false;
        }
        Ok(())
    }
}

impl TraceError {
    pub fn new(file: &str, at: Position, problem: impl Into<String>) -> Self {
        TraceError {
            file: file.to_owned(),
            at,
            field: None,
            problem: problem.into(),
        }
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

/// "expected WHAT, found "FOUND"", with the found text quoted and cut short so the error stays one line.
pub fn expected(what: &str, found: &[u8]) -> String {
    format!("expected {what}, found {}", quote(found))
}

/// A short, escaped, quoted rendering of raw input bytes.
pub fn quote(found: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&found[..found.len().min(MAX)]);
    let more = if found.len() > MAX { "…" } else { "" };
    format!("{:?}{more}", text.as_ref())
}

/// The 1-based line of byte `offset`, for formats read as a byte stream.
pub(crate) fn line_of(bytes: &[u8], offset: usize) -> u64 {
    let end = offset.min(bytes.len());
    1 + bytes[..end].iter().filter(|&&b| b == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_with_file_place_field_and_problem() {
        let e = TraceError::new("t.tsv", Position::Line(3), expected("an integer", b"12x"))
            .field("map_input_bytes");
        assert_eq!(
            e.to_string(),
            "t.tsv:3: field `map_input_bytes`: expected an integer, found \"12x\""
        );
        let e = TraceError::new("t.json", Position::Byte(7), "first\nsecond");
        assert_eq!(e.to_string(), "t.json: byte 7: first second");
    }

    #[test]
    fn quote_cuts_long_input() {
        let q = quote(&[b'a'; 100]);
        assert!(q.ends_with('…') && q.len() < 50, "{q}");
    }
}
