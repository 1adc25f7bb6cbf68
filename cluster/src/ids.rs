//! The small keys the cluster's policies share: the ids the scheduler gives applications,
//! nodes, racks and containers, and a job's type. They sit below every other module so the
//! dependencies run one way: `scheduler` → `classifier` → `policy` → `aria`, each of them → `ids`
//! (before, `scheduler`, `policy` and the classifier imported each other in a circle).

macro_rules! id {
    ($name:ident($t:ty)) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $t);
    };
}
id!(AppId(u64));
id!(NodeId(u32));
id!(RackId(u32));
id!(ContainerId(u64));

/// What a task's run time is bound by: a job's type (seed 002 §4.1), typed by the master
/// (`yard_appmaster::typing`) and read by the classifier as a job feature. The wire's type
/// itself: the master's allocate carries it to the rm's classifier unchanged.
pub use yard_wire::protocol::TaskBound as Bound;
