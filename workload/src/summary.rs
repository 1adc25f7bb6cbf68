pub struct Summary;
pub enum SizeBin {}
