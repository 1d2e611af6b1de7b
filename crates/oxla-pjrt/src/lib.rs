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
mod hardware;
mod host_callback;
mod in_flight;
mod key_value;
mod lapack;
mod named_value;
mod plugin_log;
mod plugin_profiler;
mod preload;
mod program_shape;
mod protos;
pub mod settings;
mod sharding;
mod transfer;
mod xla_ffi;

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
pub use element_type::{ElementType, ElementTypeTags, NativeType};
pub use error::{Error, ErrorCode, Result};
pub use event::Event;
pub use executable::{CompiledMemoryStats, ExecuteOptions, LoadedExecutable};
pub use gpu_memory::GPU_ALLOCATORS;
pub use hardware::tpu_chips;
pub use host_callback::{
    CALLBACK_ID_ATTRIBUTE, CallbackArgument, CallbackResult, HOST_CALLBACK_TARGET, HostFunction,
    register_callback,
};
pub use key_value::{KeyValueCallbacks, KeyValueError, KeyValueStore};
pub use lapack::{calls_lapack, lapack_targets};
pub use named_value::{NamedValue, Value};
pub use plugin_log::{PLUGIN_LOG_VAR, PluginLogLevel, TSL_LOG_VAR};
pub use plugin_profiler::{PluginProfiler, decode_xspace};
pub use preload::{NeededLibrary, Preparation, needed_libraries, preparation_of, prepare_plugin};
pub use program_shape::{ProgramShape, Shape};
/// The messages of TSL's profiler protos: `ProfileOptions` (package
/// `tensorflow`) and, in `profiler`, the `XSpace` a plugin's profiler
/// collects (package `tensorflow.profiler`).
pub use protos::profiler as profiler_proto;
/// The messages of XLA's protos oxla sends and reads (package `xla`).
pub use protos::xla as proto;
pub use sharding::HloSharding;
pub use transfer::AsyncTransfer;
