//! Telling the format from the content: JSON formats by the first key yard recognises,
//! SWIM by its tab-separated `job<N>` lines.

use crate::Format;
use crate::error::{Position, TraceError, quote};

/// Keys that only one JSON format uses. Whichever appears first in the file decides.
const KEYS: &[(&str, Format)] = &[
    ("\"jobID\"", Format::Rumen),
    ("\"mapTasks\"", Format::Rumen),
    ("\"submitTime\"", Format::Rumen),
    ("\"totalMaps\"", Format::Rumen),
    ("\"job.tasks\"", Format::Sls),
    ("\"job.start.ms\"", Format::Sls),
    ("\"am.type\"", Format::Sls),
    ("\"yarn.sls.am.type\"", Format::Sls),
    ("\"num.nodes\"", Format::Sls),
    ("\"workloads\"", Format::Synth),
    ("\"num_jobs\"", Format::Synth),
    ("\"nodes_per_rack\"", Format::Synth),
    ("\"rack\"", Format::Topology),
    ("\"children\"", Format::RumenTopology),
];

/// How far into the file detection looks: far enough for any first object's keys.
const WINDOW: usize = 1 << 16;

/// Detects the format of `bytes`; `file` names it in the error.
pub fn detect(file: &str, bytes: &[u8]) -> Result<Format, TraceError> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .ok_or_else(|| TraceError::new(file, Position::File, "the file is empty"))?;
    let head = &bytes[start..bytes.len().min(start + WINDOW)];
    if head[0] == b'{' {
        return KEYS
            .iter()
            .filter_map(|(key, format)| find(head, key.as_bytes()).map(|at| (at, *format)))
            .min_by_key(|(at, _)| *at)
            .map(|(_, format)| format)
            .ok_or_else(|| {
                TraceError::new(
                    file,
                    Position::File,
                    "JSON, but no key of a known format (Rumen `jobID`, SLS `job.tasks`, \
                     SYNTH `workloads`, topology `rack`, Rumen topology `children`); pass --format to \
                     say which",
                )
            });
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    if line.starts_with(b"job") && line.contains(&b'\t') {
        return Ok(Format::Swim);
    }
    Err(TraceError::new(
        file,
        Position::Line(1),
        format!(
            "unknown trace format: expected a JSON object or a SWIM line `job<N>\\t<seconds>\\t…`, found {}; \
             pass --format (swim, rumen, sls, topology, rumen-topology, synth)",
            quote(line)
        ),
    ))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_first_known_key() {
        let d = |s: &str| detect("f", s.as_bytes());
        assert_eq!(d("job0\t1\t1\t0\t0\t0\n").unwrap(), Format::Swim);
        assert_eq!(
            d("  {\"priority\": 1, \"jobID\": \"j\"}").unwrap(),
            Format::Rumen
        );
        assert_eq!(
            d("{\"num.nodes\": 3}{\"job.tasks\": []}").unwrap(),
            Format::Sls
        );
        assert_eq!(
            d("{\"num_nodes\": 3, \"workloads\": []}").unwrap(),
            Format::Synth
        );
        assert_eq!(
            d("{\"rack\": \"r\", \"nodes\": []}").unwrap(),
            Format::Topology
        );
        assert_eq!(
            d("{\"name\": \"<root>\", \"children\": []}").unwrap(),
            Format::RumenTopology
        );
        // A Rumen job whose properties mention a rack is still Rumen: jobID comes first.
        assert_eq!(
            d("{\"jobID\": 1, \"p\": {\"rack\": 1}}").unwrap(),
            Format::Rumen
        );
    }

    #[test]
    fn unknown_content_is_an_error_that_suggests_the_flag() {
        let e = detect("f.txt", b"hello world\n").unwrap_err();
        assert!(e.to_string().contains("--format"), "{e}");
        assert_eq!(e.at, Position::Line(1));
        assert!(detect("f", b"{\"x\": 1}").is_err());
        assert!(detect("f", b" \n").is_err());
    }
}
