//! YARN's timeout time format (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`) to and from ms since the epoch, on
//! chrono's proleptic Gregorian calendar (no calendar code of our own).

use chrono::{DateTime, Datelike, Timelike, Utc};

/// YARN's timeout time format, `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC. A time beyond chrono's
/// range (±262,000 years) is written as its last (or first) millisecond.
pub fn iso8601(ms: i64) -> String {
    let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}+0000",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.timestamp_subsec_millis()
    )
}

/// Reads `yyyy-MM-dd'T'HH:mm:ss[.SSS](Z|±HHMM|±HH:MM)` into ms since the epoch (`None` for a
/// date that does not exist, such as 31 February).
pub fn parse_iso8601(text: &str) -> Option<i64> {
    let text = text.trim();
    // chrono reads a year of more than four digits only after a sign; `iso8601` writes none.
    let signed;
    let text = match text.find('-') {
        Some(at) if at > 4 && text.starts_with(|c: char| c.is_ascii_digit()) => {
            signed = format!("+{text}");
            &signed
        }
        _ => text,
    };
    let zulu;
    let text = match text.strip_suffix('Z') {
        Some(local) => {
            zulu = format!("{local}+0000");
            &zulu
        }
        None => text,
    };
    DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%z")
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times and the strings the hand-kept calendar this replaced wrote for them.
    const WRITTEN: [(i64, &str); 9] = [
        (0, "1970-01-01T00:00:00.000+0000"),
        (-1, "1969-12-31T23:59:59.999+0000"),
        (1_700_000_000_123, "2023-11-14T22:13:20.123+0000"),
        (1_709_251_199_999, "2024-02-29T23:59:59.999+0000"),
        (951_827_696_789, "2000-02-29T12:34:56.789+0000"),
        (-2_203_891_200_000, "1900-03-01T00:00:00.000+0000"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999+0000"),
        (253_402_300_800_000, "10000-01-01T00:00:00.000+0000"),
        (-62_167_219_200_001, "-001-12-31T23:59:59.999+0000"),
    ];

    #[test]
    fn writes_what_the_hand_kept_calendar_wrote() {
        for (ms, text) in WRITTEN {
            assert_eq!(iso8601(ms), text, "{ms}");
            if ms >= 0 {
                assert_eq!(parse_iso8601(text), Some(ms), "{text}");
            }
        }
    }

    #[test]
    fn reads_yarns_forms() {
        let noon = Some(1_896_091_200_000);
        assert_eq!(parse_iso8601("2030-01-31T12:00:00.000+0000"), noon);
        assert_eq!(parse_iso8601(" 2030-01-31T12:00:00Z "), noon);
        assert_eq!(parse_iso8601("2030-01-31T17:30:00+0530"), noon);
        assert_eq!(parse_iso8601("2030-01-31T11:30:00-00:30"), noon);
        assert_eq!(
            parse_iso8601("2030-01-31T12:00:00.1239Z"),
            Some(1_896_091_200_123)
        );
        assert_eq!(parse_iso8601("2030-1-31T12:0:0Z"), noon);
        for bad in [
            "tomorrow",
            "2030-01-31",
            "2030-01-31T12:00:00",
            "2030-01-31T25:00:00Z",
            "2030-13-01T00:00:00Z",
            "2030-02-31T00:00:00Z",
            "2030-01-31T12:00:00+05",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }
}
