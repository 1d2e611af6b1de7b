//! Safe Rust over the PJRT C API.
//!
//! [`Api::load`] opens a plugin (found with [`find_plugin`]), [`Client`]
//! creates buffers ([`Buffer`]) and compiles programs ([`Program`] with
//! [`CompileOptions`]) into [`LoadedExecutable`]s that execute, report their
//! metadata and serialize. Every `PJRT_Error` becomes an [`Error`]; every
//! handle is released by `Drop`; clients, buffers and executables are
//! `Send + Sync`.
#![warn(missing_docs)]

mod api;
mod args;
mod buffer;
mod client;
mod compile;
mod device;
mod discovery;
mod element_type;
mod error;
mod event;
mod executable;
pub mod ffi;
mod gpu_memory;
mod guard;
mod host_callback;
mod key_value;
mod named_value;
mod plugin_profiler;
mod preload;
mod program_shape;
pub mod settings;
mod sharding;
mod transfer;

/// prost types of the XLA protos oxla sends and reads (this crate's
/// proto/xla_subset.proto).
#[allow(missing_docs, clippy::all)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));
}

/// prost types of TSL's profiler protos: the options a plugin's profiler is
/// created with (this crate's proto/profiler_subset.proto) and the `XSpace`
/// it collects (proto/xplane_subset.proto).
#[allow(missing_docs, clippy::all)]
pub mod profiler_proto {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.rs"));
    /// `tensorflow.profiler`: XSpace, XPlane, XLine, XEvent, XStat.
    pub mod profiler {
        include!(concat!(env!("OUT_DIR"), "/tensorflow.profiler.rs"));
    }
}

pub use api::{Api, ApiVersion};
pub use buffer::Buffer;
pub use client::{Client, ClientOptions, expected_byte_len};
pub use compile::{
    CompileOptions, DeviceAssignment, MLIR_BYTECODE_MAGIC, OptionValue, Partitioner, Program,
    ProgramFormat,
};
pub use device::{Device, Memory};
pub use discovery::{
    Candidate, CandidateSource, Platform, SearchPlaces, find_plugin, oxla_home, plugin_dir,
};
pub use element_type::{ElementType, NativeType};
pub use error::{Error, ErrorCode, Result};
pub use event::Event;
pub use executable::{CompiledMemoryStats, ExecuteOptions, LoadedExecutable};
pub use gpu_memory::GPU_ALLOCATORS;
pub use host_callback::{
    CALLBACK_ID_ATTRIBUTE, CallbackArgument, CallbackResult, HOST_CALLBACK_TARGET, HostFunction,
    register_callback,
};
pub use key_value::{KeyValueCallbacks, KeyValueError, KeyValueStore};
pub use named_value::{NamedValue, Value};
pub use plugin_profiler::{PluginProfiler, decode_xspace};
pub use preload::{NeededLibrary, Preparation, needed_libraries, preparation_of, prepare_plugin};
pub use program_shape::{ProgramShape, Shape};
pub use sharding::HloSharding;
pub use transfer::AsyncTransfer;
