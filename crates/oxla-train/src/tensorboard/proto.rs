//! The messages of TensorBoard's `event.proto` and `summary.proto` that the
//! writer uses, declared by hand with prost's derives and upstream's field
//! numbers (the other fields and `oneof` arms are left out: a reader skips
//! what it does not know, and these never decode them).

use prost::Message;

/// `tensorboard.Event`: one record of an event file.
#[derive(Clone, PartialEq, Message)]
pub struct Event {
    /// Seconds since the UNIX epoch when the event was written.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// The training step it belongs to.
    #[prost(int64, tag = "2")]
    pub step: i64,
    /// What the event holds.
    #[prost(oneof = "What", tags = "3, 5")]
    pub what: Option<What>,
}

/// `Event.what`: the arms the writer uses.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum What {
    /// The format's version, the first event of every file
    /// (`"brain.Event:2"`).
    #[prost(string, tag = "3")]
    FileVersion(String),
    /// Summaries of one step.
    #[prost(message, tag = "5")]
    Summary(Summary),
}

/// `tensorboard.Summary`: tagged values of one step.
#[derive(Clone, PartialEq, Message)]
pub struct Summary {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<Value>,
}

/// `tensorboard.Summary.Value`: one tagged value.
#[derive(Clone, PartialEq, Message)]
pub struct Value {
    /// The name TensorBoard shows it under.
    #[prost(string, tag = "1")]
    pub tag: String,
    /// The value.
    #[prost(oneof = "Kind", tags = "2, 4, 5")]
    pub value: Option<Kind>,
}

/// `Summary.Value.value`: the arms the writer uses.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Kind {
    /// A scalar (`simple_value`, a float).
    #[prost(float, tag = "2")]
    SimpleValue(f32),
    /// An encoded image.
    #[prost(message, tag = "4")]
    Image(Image),
    /// A histogram.
    #[prost(message, tag = "5")]
    Histo(HistogramProto),
}

/// `tensorboard.Summary.Image`: an image encoded as PNG.
#[derive(Clone, PartialEq, Message)]
pub struct Image {
    /// Height in pixels.
    #[prost(int32, tag = "1")]
    pub height: i32,
    /// Width in pixels.
    #[prost(int32, tag = "2")]
    pub width: i32,
    /// Channels: 1 grayscale, 2 grayscale and alpha, 3 RGB, 4 RGBA.
    #[prost(int32, tag = "3")]
    pub colorspace: i32,
    /// The PNG file.
    #[prost(bytes = "vec", tag = "4")]
    pub encoded_image_string: Vec<u8>,
}

/// `tensorboard.HistogramProto`: statistics of a set of values and their
/// counts in buckets.
#[derive(Clone, PartialEq, Message)]
pub struct HistogramProto {
    /// The smallest value.
    #[prost(double, tag = "1")]
    pub min: f64,
    /// The largest value.
    #[prost(double, tag = "2")]
    pub max: f64,
    /// How many values.
    #[prost(double, tag = "3")]
    pub num: f64,
    /// Their sum.
    #[prost(double, tag = "4")]
    pub sum: f64,
    /// The sum of their squares.
    #[prost(double, tag = "5")]
    pub sum_squares: f64,
    /// Each bucket's right edge: bucket `i` counts the values in
    /// `[bucket_limit[i-1], bucket_limit[i])` (from minus infinity for the
    /// first).
    #[prost(double, repeated, tag = "6")]
    pub bucket_limit: Vec<f64>,
    /// Each bucket's count.
    #[prost(double, repeated, tag = "7")]
    pub bucket: Vec<f64>,
}
