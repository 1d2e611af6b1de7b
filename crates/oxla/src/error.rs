//! oxla's errors: every way a user's program can go wrong, as a value.

use std::sync::Arc;

use oxla_core::{Aval, CoreError, Location};

/// An error of oxla. Cloneable: an error that happens inside an operator
/// (`a + b` cannot return a `Result`) is carried by the resulting [`crate::Array`]
/// and reported by the next call that returns a `Result`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// An op's shape or dtype rule rejected its operands.
    #[error(transparent)]
    Shape(#[from] CoreError),
    /// A traced value was read as a host value inside `jit`.
    #[error(
        "{location}: cannot read a traced {aval} as a host value inside jit or vmap: its value is \
         not known until the compiled function runs (return it from the function instead; for \
         a choice that depends on it use lax::cond, lax::switch or jnp::where_, and \
         lax::while_loop for a loop)"
    )]
    Concretization {
        /// The traced value's type.
        aval: Box<Aval>,
        /// Where it was read.
        location: Location,
    },
    /// A tracer was used after the transformation that made it (jit, grad,
    /// vmap, ...) returned.
    #[error(
        "{location}: a traced value escaped: the jit, grad, vmap or other transformation that \
         made it has finished, so it has no value here (return it from the transformed \
         function instead of storing it)"
    )]
    EscapedTracer {
        /// Where it was used.
        location: Location,
    },
    /// The array's buffer was donated to a jitted call and reused.
    #[error(
        "{location}: this array was donated as {what}; its buffer now holds an output, so it cannot be used again"
    )]
    Donated {
        /// Which argument of which function it was donated as.
        what: String,
        /// Where it was used.
        location: Location,
    },
    /// The transfer guard refused an implicit transfer.
    #[error(
        "{location}: implicit {direction} transfer of {aval} disallowed by the transfer guard (make it explicit)"
    )]
    TransferGuard {
        /// "host-to-device" or "device-to-host".
        direction: &'static str,
        /// What would have moved.
        aval: Box<Aval>,
        /// Where.
        location: Location,
    },
    /// A transformation (jvp, transpose, vmap, ...) cannot handle a primitive
    /// or its use.
    #[error(
        "{}{transform} of {primitive}: {message}",
        location.map(|l| format!("{l}: ")).unwrap_or_default()
    )]
    Transform {
        /// The transformation.
        transform: &'static str,
        /// The primitive's name.
        primitive: String,
        /// What is wrong.
        message: String,
        /// The user's source line of the equation.
        location: Option<Location>,
    },
    /// A transformed function was called wrongly (structure, dtypes, axes).
    #[error("{location}: {function}: {message}")]
    Usage {
        /// The transformation (`grad`, `vmap`, ...).
        function: &'static str,
        /// What is wrong.
        message: String,
        /// The caller's source line.
        location: Location,
    },
    /// Lowering to StableHLO failed.
    #[error(transparent)]
    Lowering(#[from] oxla_lower::LowerError),
    /// The plugin refused to compile the lowered module.
    #[error("the plugin rejected the lowered module of {function}: {source}")]
    Compile {
        /// The function being compiled.
        function: String,
        /// The plugin's error.
        source: Arc<oxla_pjrt::Error>,
    },
    /// The runtime failed (transfer, execution, plugin loading).
    #[error(transparent)]
    Runtime(Arc<oxla_pjrt::Error>),
    /// An argument is not what the function needs.
    #[error("{0}")]
    InvalidArgument(String),
    /// oxla broke one of its own invariants: a bug in oxla, not in the
    /// caller's program (please report it with the message).
    #[error("internal error in oxla: {0}")]
    Internal(String),
    /// A mesh, partition spec or sharding does not fit the devices or the
    /// arrays it is used with.
    #[error("{}{message}", location.map(|l| format!("{l}: ")).unwrap_or_default())]
    Sharding {
        /// What is wrong, with the names and sizes involved.
        message: String,
        /// The caller's source line.
        location: Option<Location>,
    },
    /// Reading or writing a .npy file failed.
    #[error(transparent)]
    Npy(Arc<oxla_npy::NpyError>),
    /// Joining or running a multi-process job failed (the coordinator, a
    /// timeout, a process gone).
    #[cfg(feature = "distributed")]
    #[error(transparent)]
    Distributed(#[from] oxla_distributed::DistributedError),
}

impl From<oxla_pjrt::Error> for Error {
    fn from(e: oxla_pjrt::Error) -> Self {
        Error::Runtime(Arc::new(e))
    }
}

impl From<oxla_npy::NpyError> for Error {
    fn from(e: oxla_npy::NpyError) -> Self {
        Error::Npy(Arc::new(e))
    }
}

/// Result type of oxla.
pub type Result<T, E = Error> = std::result::Result<T, E>;
