//! Streams of concatenated JSON objects (Rumen, SLS, topology files), read one object at a time.
//!
//! The fast path deserializes with plain serde_json. Only when an object fails is it read a
//! second time through `serde_path_to_error`, to name the field at fault (`mapTasks[3].startTime`):
//! tracking the path costs nothing on well-formed input that way.

use serde::de::DeserializeOwned;

use crate::error::{Position, TraceError};

/// Where a top-level object sits, for errors found after it was deserialized.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Object<'a> {
    /// 0-based position among the file's top-level objects.
    pub(crate) index: usize,
    start: usize,
    bytes: &'a [u8],
}

impl Object<'_> {
    /// The line the object starts on (counted only when asked: it is for error paths).
    pub(crate) fn position(&self) -> Position {
        Position::Line(crate::error::line_of(self.bytes, self.start))
    }
}

/// Calls `each(value, object)` for every top-level JSON value in `bytes`, in order.
/// Fails on an empty stream, on anything that is not an object, and on the first bad object.
pub(crate) fn for_each_object<T, F>(file: &str, bytes: &[u8], mut each: F) -> Result<(), TraceError>
where
    T: DeserializeOwned,
    F: FnMut(T, Object) -> Result<(), TraceError>,
{
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    let mut index = 0;
    loop {
        let start = skip_ws(bytes, stream.byte_offset());
        if start < bytes.len() && bytes[start] != b'{' {
            let end = (start + 20).min(bytes.len());
            return Err(TraceError::new(
                file,
                line_col(bytes, start),
                crate::error::expected("a JSON object `{…}`", &bytes[start..end]),
            ));
        }
        match stream.next() {
            None => break,
            Some(Ok(value)) => each(
                value,
                Object {
                    index,
                    start,
                    bytes,
                },
            )?,
            Some(Err(_)) => return Err(explain::<T>(file, bytes, start)),
        }
        index += 1;
    }
    if index == 0 {
        return Err(TraceError::new(
            file,
            Position::File,
            "expected at least one JSON object, found none",
        ));
    }
    Ok(())
}

/// Re-reads the object at `start` with path tracking and turns the failure into a TraceError.
fn explain<T: DeserializeOwned>(file: &str, bytes: &[u8], start: usize) -> TraceError {
    let mut de = serde_json::Deserializer::from_slice(&bytes[start..]);
    let err = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(_) => {
            // The object is fine on its own, so what follows it is not JSON.
            return TraceError::new(
                file,
                line_col(bytes, start),
                "malformed JSON after this object",
            );
        }
        Err(e) => e,
    };
    let path = err.path().to_string();
    let inner = err.into_inner();
    let (line, col) = (inner.line() as u64, inner.column() as u64);
    // serde_json counts lines from the slice start; shift by the lines before the object.
    let base_line = crate::error::line_of(bytes, start);
    let at = if line == 1 {
        let base_col = start
            - bytes[..start]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
        Position::LineColumn(base_line, base_col as u64 + col)
    } else {
        Position::LineColumn(base_line + line - 1, col)
    };
    let mut problem = inner.to_string();
    // serde_json appends " at line L column C", which would repeat (wrongly) what `at` says.
    if let Some(cut) = problem.rfind(" at line ") {
        problem.truncate(cut);
    }
    let error = TraceError::new(file, at, problem);
    if path.is_empty() || path == "." {
        error
    } else {
        error.field(path)
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

fn line_col(bytes: &[u8], offset: usize) -> Position {
    let line = crate::error::line_of(bytes, offset);
    let col = offset
        - bytes[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    Position::LineColumn(line, col as u64)
}

/// serde helpers for Hadoop's "`-1` or `null` means unknown" numbers.
pub(crate) mod sentinel {
    use std::fmt;

    use serde::Deserializer;
    use serde::de::{self, Visitor};

    /// A number where `null` and any negative value mean "not recorded".
    /// Accepts integers up to the 64-bit extremes and integral floats.
    pub(crate) fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(opt_i64(d)?.and_then(|v| u64::try_from(v).ok()))
    }

    /// A timestamp or count where `null` and `-1` mean "not recorded"; other negatives are kept.
    pub(crate) fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Ok(d.deserialize_option(Num)?.filter(|&v| v != -1))
    }

    /// A visitor rather than an untagged enum: no buffering, so the hot path stays fast.
    struct Num;

    impl<'de> Visitor<'de> for Num {
        type Value = Option<i64>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an integer, -1 or null")
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(Num)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            // Above i64::MAX: only Rumen's empty-histogram bounds get here; saturate.
            Ok(Some(i64::try_from(v).unwrap_or(i64::MAX)))
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            if v.fract() == 0.0 && v.abs() < 9.2e18 {
                Ok(Some(v as i64))
            } else {
                Err(E::invalid_value(de::Unexpected::Float(v), &self))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Obj {
        a: u32,
        #[serde(default)]
        inner: Vec<Inner>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        b: u32,
    }

    fn read(text: &str) -> Result<Vec<u32>, TraceError> {
        let mut out = Vec::new();
        for_each_object::<Obj, _>("f.json", text.as_bytes(), |o, _| {
            out.push(o.a);
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn reads_concatenated_objects() {
        assert_eq!(
            read("{\"a\":1}\n{\n \"a\": 2\n}{\"a\":3}").unwrap(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn names_the_field_path_and_the_true_line() {
        let err = read("{\"a\":1}\n{\n \"a\": 2,\n \"inner\": [{\"b\": 1}, {\"b\": \"x\"}]\n}")
            .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("inner[1].b"));
        assert!(matches!(err.at, Position::LineColumn(4, _)), "{err}");
        assert!(err.to_string().contains("expected u32"), "{err}");
    }

    #[test]
    fn empty_truncated_and_non_object_inputs_fail_cleanly() {
        assert!(read("").unwrap_err().to_string().contains("found none"));
        assert!(read("  \n ").is_err());
        let e = read("{\"a\":1}\n{\"a\": 2,").unwrap_err();
        assert!(e.to_string().contains("EOF"), "{e}");
        let e = read("{\"a\":1}\n[1,2]").unwrap_err();
        assert_eq!(e.at, Position::LineColumn(2, 1));
    }

    #[test]
    fn sentinels() {
        #[derive(Deserialize)]
        struct S {
            #[serde(deserialize_with = "sentinel::opt_i64")]
            t: Option<i64>,
            #[serde(deserialize_with = "sentinel::opt_u64")]
            b: Option<u64>,
        }
        let s: S = serde_json::from_str(r#"{"t": -1, "b": 9223372036854775807}"#).unwrap();
        assert_eq!((s.t, s.b), (None, Some(i64::MAX as u64)));
        let s: S = serde_json::from_str(r#"{"t": null, "b": -9223372036854775807}"#).unwrap();
        assert_eq!((s.t, s.b), (None, None));
        let s: S = serde_json::from_str(r#"{"t": 5.0, "b": 18446744073709551615}"#).unwrap();
        assert_eq!((s.t, s.b), (Some(5), Some(i64::MAX as u64)));
        assert!(serde_json::from_str::<S>(r#"{"t": 5.5, "b": 1}"#).is_err());
    }
}
