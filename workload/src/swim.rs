use crate::{ReadOptions, TraceError, Workload};

pub(crate) fn parse(_file: &str, _bytes: &[u8], _o: &ReadOptions) -> Result<Workload, TraceError> {
    unimplemented!()
}
