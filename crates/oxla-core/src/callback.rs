//! A host function called from inside a program (`pure_callback`,
//! `io_callback`, `debug::print`), as a primitive carries it: the id under
//! which the runtime registered the closure, a name for jaxprs and errors,
//! whether calling it is an effect the program must keep, and how vmap
//! batches it.

use std::fmt;

pub use oxla_dtype::callback_abi::{
    CALLBACK_ID_ATTRIBUTE, HOST_CALLBACK_TARGET, ORDERED_ATTRIBUTE,
};

/// How `vmap` batches a host callback (JAX's `vmap_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VmapMethod {
    /// One call per example, in order (a loop in the program).
    Sequential,
    /// One call with the batch as a new leading axis of the batched
    /// operands (the others get a leading axis of size 1); the callback
    /// returns results with the batch axis leading.
    ExpandDims,
    /// One call with every operand broadcast to the batch, leading.
    BroadcastAll,
}

/// A host callback of a program. Compared and hashed by its id.
#[derive(Debug, Clone)]
pub struct HostCallback {
    /// The id the runtime's registry knows the closure by.
    pub id: u64,
    /// A name for jaxprs and errors (the Rust function's type name or the
    /// caller's label).
    pub name: String,
    /// Whether the call is an effect (`io_callback`, `debug::print`): never
    /// removed as dead code, kept in program order, not differentiated.
    pub effectful: bool,
    /// How vmap batches it.
    pub vmap_method: VmapMethod,
}

impl PartialEq for HostCallback {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for HostCallback {}

impl std::hash::Hash for HostCallback {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Display for HostCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}
