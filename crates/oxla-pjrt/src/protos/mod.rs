//! The protobuf messages oxla-pjrt sends to and reads from PJRT plugins,
//! declared by hand with prost's derives (no .proto files and no code
//! generation at build time, as oxla-pprof does for pprof's messages):
//! [`xla`] (mounted as `crate::proto`), [`profiler`] (as
//! `crate::profiler_proto`) and [`xplane`] (as
//! `crate::profiler_proto::profiler`). Each mirrors a subset of an
//! upstream proto with its field numbers; `tests.rs` checks their
//! encodings byte for byte against fixtures the former generated code
//! wrote.

pub mod profiler;
pub mod xla;
pub mod xplane;

#[cfg(test)]
mod tests;
