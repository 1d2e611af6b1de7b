//! `XSpace` and its parts (package `tensorflow.profiler`,
//! `tsl/profiler/protobuf/xplane.proto`): what a PJRT plugin's profiler
//! collects, declared by hand with prost's derives and upstream's field
//! numbers. Every field of `XSpace`, `XPlane`, `XLine`, `XEvent`, `XStat`,
//! `XEventMetadata` and `XStatMetadata` is declared; fields a newer
//! upstream adds are skipped when decoding. Maps are `BTreeMap`s, as in
//! the rest of this crate's protos.

use std::collections::BTreeMap;

use prost::Message;

/// `XSpace`: everything one profiling session collected.
#[derive(Clone, PartialEq, Message)]
pub struct XSpace {
    /// One plane per device or host thread group.
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    /// Errors met while profiling.
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    /// Warnings met while profiling.
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    /// The hosts profiled.
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// `XPlane`: the timelines of one device (or of the host).
#[derive(Clone, PartialEq, Message)]
pub struct XPlane {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Its name (`/device:GPU:0`, `/host:CPU`).
    #[prost(string, tag = "2")]
    pub name: String,
    /// Its timelines.
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    /// Event metadata by id (`XEvent::metadata_id`).
    #[prost(btree_map = "int64, message", tag = "4")]
    pub event_metadata: BTreeMap<i64, XEventMetadata>,
    /// Stat metadata by id (`XStat::metadata_id`).
    #[prost(btree_map = "int64, message", tag = "5")]
    pub stat_metadata: BTreeMap<i64, XStatMetadata>,
    /// Stats of the whole plane.
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// `XLine`: one timeline (a thread, a stream) of events.
#[derive(Clone, PartialEq, Message)]
pub struct XLine {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The id to show it under.
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    /// Its name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// The name to show.
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// Its start, in nanoseconds since the UNIX epoch.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    /// Its length in picoseconds.
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    /// Its events.
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

/// `XEvent`: one span of a line.
#[derive(Clone, PartialEq, Message)]
pub struct XEvent {
    /// Its metadata's id (a key of `XPlane::event_metadata`).
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// When it starts, or how often it happened.
    #[prost(oneof = "x_event::Data", tags = "2, 5")]
    pub data: Option<x_event::Data>,
    /// Its length in picoseconds.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    /// Its stats.
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// The oneof of `XEvent`.
pub mod x_event {
    use prost::Oneof;

    /// `XEvent.data`.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Oneof)]
    pub enum Data {
        /// Picoseconds after the line's timestamp.
        #[prost(int64, tag = "2")]
        OffsetPs(i64),
        /// How often an aggregated event happened.
        #[prost(int64, tag = "5")]
        NumOccurrences(i64),
    }
}

/// `XStat`: a named value of an event, metadata or plane.
#[derive(Clone, PartialEq, Message)]
pub struct XStat {
    /// Its metadata's id (a key of `XPlane::stat_metadata`).
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Its value.
    #[prost(oneof = "x_stat::Value", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<x_stat::Value>,
}

/// The oneof of `XStat`.
pub mod x_stat {
    use prost::Oneof;

    /// `XStat.value`.
    #[derive(Clone, PartialEq, Oneof)]
    pub enum Value {
        /// A float.
        #[prost(double, tag = "2")]
        DoubleValue(f64),
        /// An unsigned integer.
        #[prost(uint64, tag = "3")]
        Uint64Value(u64),
        /// A signed integer.
        #[prost(int64, tag = "4")]
        Int64Value(i64),
        /// A string.
        #[prost(string, tag = "5")]
        StrValue(String),
        /// Bytes.
        #[prost(bytes, tag = "6")]
        BytesValue(Vec<u8>),
        /// A string kept once: the name of stat metadata `ref_value`.
        #[prost(uint64, tag = "7")]
        RefValue(u64),
    }
}

/// `XEventMetadata`: what the events with its id have in common.
#[derive(Clone, PartialEq, Message)]
pub struct XEventMetadata {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The events' name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// The name to show.
    #[prost(string, tag = "4")]
    pub display_name: String,
    /// Serialized extra data.
    #[prost(bytes = "vec", tag = "3")]
    pub metadata: Vec<u8>,
    /// Stats shared by the events.
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    /// The ids of metadata nested in this one.
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

/// `XStatMetadata`: the name of the stats with its id.
#[derive(Clone, PartialEq, Eq, Hash, Message)]
pub struct XStatMetadata {
    /// Its id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// The stats' name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// What they mean.
    #[prost(string, tag = "3")]
    pub description: String,
}
