//! Placeholder: being written.
use crate::{TraceError, Workload};

pub(crate) fn parse(_file: &str, _bytes: &[u8], _seed: Option<u64>) -> Result<Workload, TraceError> {
    unimplemented!()
}
