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

/// Reads `yyyy-MM-dd'T'HH:mm:ss[.SSS](Z|±HHMM|±HH:MM)` into ms since the epoch.
pub fn parse_iso8601(text: &str) -> Option<i64> {
    DateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M:%S%.f%#z")
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    mod reference {
        /// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
        /// `civil_from_days`).
        pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
            let z = days + 719_468;
            let era = z.div_euclid(146_097);
            let doe = z.rem_euclid(146_097);
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
            let mp = (5 * doy + 2) / 153;
            let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
            let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
            (yoe + era * 400 + i64::from(m <= 2), m, d)
        }

        /// (year, month, day) → days since 1970-01-01.
        pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
            let y = if m <= 2 { y - 1 } else { y };
            let era = y.div_euclid(400);
            let yoe = y.rem_euclid(400);
            let m = i64::from(m);
            let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
            era * 146_097 + doe - 719_468
        }

        /// YARN's timeout time format, `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC.
        pub fn iso8601(ms: i64) -> String {
            let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
            let (y, mo, d) = civil_from_days(days);
            let (h, mi, s, milli) = (
                rest / 3_600_000,
                rest / 60_000 % 60,
                rest / 1000 % 60,
                rest % 1000,
            );
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}+0000")
        }

        /// Reads `yyyy-MM-dd'T'HH:mm:ss[.SSS](Z|±HHMM|±HH:MM)` into ms since the epoch.
        pub fn parse_iso8601(text: &str) -> Option<i64> {
            let t = text.trim();
            let num = |s: &str| -> Option<i64> {
                (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| s.parse().ok())
                    .flatten()
            };
            let (date, time) = t.split_once('T')?;
            let mut dp = date.split('-');
            let (y, mo, d) = (num(dp.next()?)?, num(dp.next()?)?, num(dp.next()?)?);
            if dp.next().is_some() || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
                return None;
            }
            let (clock, offset_ms) = if let Some(c) = time.strip_suffix('Z') {
                (c, 0)
            } else {
                let at = time.rfind(['+', '-'])?;
                let (c, off) = time.split_at(at);
                let sign = if off.starts_with('-') { -1 } else { 1 };
                let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
                if digits.len() != 4 {
                    return None;
                }
                let (oh, om) = (num(&digits[..2])?, num(&digits[2..])?);
                (c, sign * (oh * 3_600_000 + om * 60_000))
            };
            let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
            let mut tp = hms.split(':');
            let (h, mi, s) = (num(tp.next()?)?, num(tp.next()?)?, num(tp.next()?)?);
            if tp.next().is_some() || h > 23 || mi > 59 || s > 60 || frac.len() > 9 {
                return None;
            }
            let milli = num(&format!("{frac:0<3}")[..3])?;
            let days = days_from_civil(y, mo as u32, d as u32);
            Some(days * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + milli - offset_ms)
        }
    }

    #[test]
    fn same_as_the_hand_kept_calendar() {
        let mut ms: i64 = -62_167_219_200_000 * 2;
        let mut step: i64 = 1;
        while ms < 400_000_000_000_000 {
            assert_eq!(iso8601(ms), reference::iso8601(ms), "{ms}");
            if ms >= 0 {
                let s = reference::iso8601(ms);
                assert_eq!(parse_iso8601(&s), reference::parse_iso8601(&s), "{s}");
            }
            ms += step;
            step = step * 3 / 2 + 7_919;
        }
        for ms in 1_700_000_000_000i64..1_700_000_000_000 + 5_000_000 {
            if ms % 997 == 0 {
                assert_eq!(iso8601(ms), reference::iso8601(ms), "{ms}");
            }
        }
        for s in [
            "2030-01-31T12:00:00.000+0000",
            "2030-01-31T12:00:00Z",
            "2030-01-31T12:00:00.5+05:30",
            "2030-01-31T12:00:00.123456789-0800",
            "2030-01-31T12:00:00.000+0000 ",
            "2024-02-29T23:59:59.999Z",
            "tomorrow",
            "2030-01-31",
            "2030-01-31T25:00:00Z",
            "2030-13-01T00:00:00Z",
        ] {
            assert_eq!(parse_iso8601(s), reference::parse_iso8601(s), "{s}");
        }
    }
}
