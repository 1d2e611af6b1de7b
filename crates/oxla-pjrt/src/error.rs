//! oxla-pjrt's typed errors. Every `PJRT_Error` a plugin returns becomes an
//! [`Error::Plugin`] with its code and message, and is freed on the way.

use std::fmt;
use std::path::PathBuf;

use crate::api::ApiVersion;
use crate::ffi;

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The status code of a PJRT error (absl's canonical codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The operation was cancelled.
    Cancelled,
    /// Unknown error.
    Unknown,
    /// The caller passed an invalid argument.
    InvalidArgument,
    /// A deadline expired.
    DeadlineExceeded,
    /// Something requested was not found.
    NotFound,
    /// Something to be created already exists.
    AlreadyExists,
    /// The caller lacks permission.
    PermissionDenied,
    /// Memory or another resource ran out.
    ResourceExhausted,
    /// The system is not in a state the operation needs.
    FailedPrecondition,
    /// The operation was aborted.
    Aborted,
    /// An index or size was out of range.
    OutOfRange,
    /// The plugin does not implement the operation.
    Unimplemented,
    /// An internal error of the plugin.
    Internal,
    /// The service is unavailable.
    Unavailable,
    /// Data was lost or corrupted.
    DataLoss,
    /// The caller is not authenticated.
    Unauthenticated,
    /// A code this version of oxla does not know.
    Other(u32),
}

impl ErrorCode {
    pub(crate) fn from_raw(code: ffi::PJRT_Error_Code) -> Self {
        match code {
            ffi::PJRT_Error_Code_CANCELLED => Self::Cancelled,
            ffi::PJRT_Error_Code_UNKNOWN => Self::Unknown,
            ffi::PJRT_Error_Code_INVALID_ARGUMENT => Self::InvalidArgument,
            ffi::PJRT_Error_Code_DEADLINE_EXCEEDED => Self::DeadlineExceeded,
            ffi::PJRT_Error_Code_NOT_FOUND => Self::NotFound,
            ffi::PJRT_Error_Code_ALREADY_EXISTS => Self::AlreadyExists,
            ffi::PJRT_Error_Code_PERMISSION_DENIED => Self::PermissionDenied,
            ffi::PJRT_Error_Code_RESOURCE_EXHAUSTED => Self::ResourceExhausted,
            ffi::PJRT_Error_Code_FAILED_PRECONDITION => Self::FailedPrecondition,
            ffi::PJRT_Error_Code_ABORTED => Self::Aborted,
            ffi::PJRT_Error_Code_OUT_OF_RANGE => Self::OutOfRange,
            ffi::PJRT_Error_Code_UNIMPLEMENTED => Self::Unimplemented,
            ffi::PJRT_Error_Code_INTERNAL => Self::Internal,
            ffi::PJRT_Error_Code_UNAVAILABLE => Self::Unavailable,
            ffi::PJRT_Error_Code_DATA_LOSS => Self::DataLoss,
            ffi::PJRT_Error_Code_UNAUTHENTICATED => Self::Unauthenticated,
            other => Self::Other(other),
        }
    }

    pub(crate) fn to_raw(self) -> ffi::PJRT_Error_Code {
        match self {
            Self::Cancelled => ffi::PJRT_Error_Code_CANCELLED,
            Self::Unknown => ffi::PJRT_Error_Code_UNKNOWN,
            Self::InvalidArgument => ffi::PJRT_Error_Code_INVALID_ARGUMENT,
            Self::DeadlineExceeded => ffi::PJRT_Error_Code_DEADLINE_EXCEEDED,
            Self::NotFound => ffi::PJRT_Error_Code_NOT_FOUND,
            Self::AlreadyExists => ffi::PJRT_Error_Code_ALREADY_EXISTS,
            Self::PermissionDenied => ffi::PJRT_Error_Code_PERMISSION_DENIED,
            Self::ResourceExhausted => ffi::PJRT_Error_Code_RESOURCE_EXHAUSTED,
            Self::FailedPrecondition => ffi::PJRT_Error_Code_FAILED_PRECONDITION,
            Self::Aborted => ffi::PJRT_Error_Code_ABORTED,
            Self::OutOfRange => ffi::PJRT_Error_Code_OUT_OF_RANGE,
            Self::Unimplemented => ffi::PJRT_Error_Code_UNIMPLEMENTED,
            Self::Internal => ffi::PJRT_Error_Code_INTERNAL,
            Self::Unavailable => ffi::PJRT_Error_Code_UNAVAILABLE,
            Self::DataLoss => ffi::PJRT_Error_Code_DATA_LOSS,
            Self::Unauthenticated => ffi::PJRT_Error_Code_UNAUTHENTICATED,
            Self::Other(code) => code,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::Cancelled => "CANCELLED",
            Self::Unknown => "UNKNOWN",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Self::NotFound => "NOT_FOUND",
            Self::AlreadyExists => "ALREADY_EXISTS",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Aborted => "ABORTED",
            Self::OutOfRange => "OUT_OF_RANGE",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
            Self::DataLoss => "DATA_LOSS",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::Other(code) => return write!(f, "code {code}"),
        };
        f.write_str(name)
    }
}

/// Everything that can go wrong in oxla-pjrt.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The plugin returned a `PJRT_Error` from `function`.
    #[error("{function} failed ({code}): {message}")]
    Plugin {
        /// The C API function that failed.
        function: &'static str,
        /// The error's status code.
        code: ErrorCode,
        /// The plugin's message.
        message: String,
    },
    /// The plugin's `PJRT_Api` table is too short to hold `function`.
    #[error("{function} is not supported by this plugin (PJRT C API {api})")]
    Unsupported {
        /// The C API function oxla needed.
        function: &'static str,
        /// The plugin's API version.
        api: ApiVersion,
    },
    /// Host callbacks run on the CPU plugins and on CUDA; this client's
    /// platform is another.
    #[error(
        "host callbacks (pure_callback, io_callback, debug_print) run on the cpu and cuda platforms, not on {platform}"
    )]
    HostCallbacksUnsupported {
        /// The client's platform name.
        platform: String,
    },
    /// A program calls LAPACK (JAX's `lapack_*_ffi` custom calls), which
    /// oxla runs on the CPU plugins only.
    #[error(
        "LAPACK custom calls (lapack_*_ffi, JAX's CPU linear algebra) run on the cpu platform, \
         not on {platform}"
    )]
    LapackUnsupported {
        /// The client's platform name.
        platform: String,
    },
    /// A program calls LAPACK and no LAPACK library could be loaded.
    #[error(
        "this program calls LAPACK (JAX's lapack_*_ffi custom calls), which oxla runs through \
         the system's LAPACK, and none could be loaded ({tried}); install one (Debian: \
         libopenblas0-pthread or liblapack3) or name its library in OXLA_LAPACK"
    )]
    LapackMissing {
        /// The libraries tried, each with why it failed.
        tried: String,
    },
    /// The shared library could not be opened or has no `GetPjrtApi`.
    #[error("cannot load PJRT plugin {}: {message}", path.display())]
    Load {
        /// The library's path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The plugin speaks a PJRT C API major version oxla was not built for.
    #[error(
        "PJRT plugin {} has C API {found}, but oxla speaks major version {expected_major}; \
         install a plugin built for C API {expected_major}.x",
        path.display()
    )]
    IncompatibleApi {
        /// The library's path.
        path: PathBuf,
        /// The plugin's API version.
        found: ApiVersion,
        /// The major version oxla's header has.
        expected_major: i32,
    },
    /// The platform's plugin loaded, and this machine has none of its
    /// devices.
    #[error(
        "the {platform} plugin {} loaded (PJRT C API {api}), and no {} was found on this machine \
         ({looked})",
        path.display(),
        platform.device_name()
    )]
    NoDevices {
        /// The platform.
        platform: crate::discovery::Platform,
        /// The plugin's path.
        path: PathBuf,
        /// The plugin's C API version.
        api: ApiVersion,
        /// Where devices were looked for.
        looked: String,
    },
    /// No plugin for the platform was found.
    #[error("{}", crate::discovery::describe_not_found(*platform, searched))]
    PluginNotFound {
        /// The platform that was asked for.
        platform: crate::discovery::Platform,
        /// Every place that was looked at, in order.
        searched: Vec<PathBuf>,
    },
    /// The caller passed something that cannot work (a size, a count, a dtype).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The plugin answered with something oxla cannot interpret.
    #[error("unexpected answer from the plugin: {0}")]
    Protocol(String),
    /// The host could not hold a copy of a device buffer.
    #[error("cannot allocate {bytes} bytes on the host to copy a device buffer into")]
    HostAllocation {
        /// The buffer's size.
        bytes: usize,
    },
}

impl From<oxla_dtype::UnknownType> for Error {
    fn from(e: oxla_dtype::UnknownType) -> Self {
        Error::InvalidArgument(e.to_string())
    }
}
