//! The message of TSL's profiler protos (package `tensorflow`) that a PJRT
//! plugin's profiler is created with, declared by hand with prost's
//! derives: `ProfileOptions` from `tsl/profiler/protobuf/profiler_options.proto`,
//! with upstream's field numbers. Only the fields oxla sets are declared
//! (the tracer levels, the version, the device type and the two switches);
//! the rest are absent when encoding, which protobuf allows. What the
//! profiler returns, package `tensorflow.profiler`, is in [`profiler`].

use prost::Message;

pub use super::xplane as profiler;

/// `tensorflow.ProfileOptions`: what a profiling session records.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Message)]
pub struct ProfileOptions {
    /// Whether to trace tf.data's dataset ops.
    #[prost(bool, tag = "1")]
    pub include_dataset_ops: bool,
    /// How much the host tracer records (0 off, 1 user-instrumented
    /// spans, 2 also program execution details, 3 also verbose ones).
    #[prost(uint32, tag = "2")]
    pub host_tracer_level: u32,
    /// How much the device tracer records (0 off, 1 on).
    #[prost(uint32, tag = "3")]
    pub device_tracer_level: u32,
    /// How much the Python tracer records (0 off, 1 on).
    #[prost(uint32, tag = "4")]
    pub python_tracer_level: u32,
    /// The options' version: with 0 the profiler replaces every field
    /// but `include_dataset_ops` with its own defaults.
    #[prost(uint32, tag = "5")]
    pub version: u32,
    /// The device kind to profile (a [`profile_options::DeviceType`]).
    #[prost(enumeration = "profile_options::DeviceType", tag = "6")]
    pub device_type: i32,
    /// Whether to collect the HLO protos of the programs run.
    #[prost(bool, tag = "7")]
    pub enable_hlo_proto: bool,
}

/// The enum nested in `ProfileOptions`.
pub mod profile_options {
    use prost::Enumeration;

    /// `ProfileOptions.DeviceType`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Enumeration)]
    #[repr(i32)]
    pub enum DeviceType {
        /// `UNSPECIFIED`: every kind.
        Unspecified = 0,
        /// `CPU`.
        Cpu = 1,
        /// `GPU`.
        Gpu = 2,
        /// `TPU`.
        Tpu = 3,
        /// `PLUGGABLE_DEVICE`.
        PluggableDevice = 4,
    }
}
