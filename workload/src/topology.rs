//! Placeholder: being written.
use crate::{TraceError, Workload};

pub(crate) fn parse(_file: &str, _bytes: &[u8]) -> Result<Workload, TraceError> {
    unimplemented!()
}
