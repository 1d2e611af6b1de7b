//! TensorBoard summaries, as `tf.summary`'s file writer (or
//! `torch.utils.tensorboard.SummaryWriter`): a [`SummaryWriter`] appends
//! scalars, histograms and PNG images to an event file in a log directory,
//! which `tensorboard --logdir` shows.
//!
//! An event file (`events.out.tfevents.<seconds>.<host>.<pid>.<n>`) is a
//! sequence of TFRecords (`record.rs`: the length, its masked CRC-32C, the
//! data, its masked CRC-32C), each a serialized `Event` protobuf (`proto.rs`,
//! prost messages with the field numbers of TensorBoard's `event.proto` and
//! `summary.proto`): first the file version `brain.Event:2`, then one event
//! per summary with its wall time and step. Scalars are `simple_value`s,
//! histograms `HistogramProto`s over TensorFlow's default buckets
//! (`histogram.rs`), images `Summary.Image`s holding a PNG (`image.rs`).
//! [`read_events`] reads a file back, checking every checksum.
//!
//! Writing happens on the host: a value that is an oxla array is read from
//! the device when it is written.
//!
//! ```
//! use oxla::Array;
//! use oxla_train::tensorboard::{SummaryWriter, read_events};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("oxla-tb-doc-{}", std::process::id()));
//! let mut writer = SummaryWriter::new(&dir)?;
//! writer.add_scalar("loss", 0.25, 1)?;
//! writer.add_histogram("weights", &[0.5f32, -1.0, 2.0][..], 1)?;
//! writer.add_image("digit", &Array::from_slice(&[0u8, 255, 128, 64], &[2, 2, 1])?, 1)?;
//! writer.flush()?;
//! let events = read_events(writer.path())?;
//! assert_eq!(events.len(), 4); // the file version, then the three summaries
//! # drop(writer);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```

mod histogram;
mod image;
pub mod proto;
mod record;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use oxla::{Array, DType};
use prost::Message;

pub use histogram::{HistogramValues, default_bucket_limits};
use proto::{Event, Kind, Summary, Value, What};

/// What goes wrong writing or reading TensorBoard event files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be created, written or read.
    #[error("tensorboard: {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`creating the log directory`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A value that cannot be written (an image of the wrong rank, a NaN in
    /// a histogram): the message names the tag, the value's type and the
    /// caller's line.
    #[error("tensorboard: {0}")]
    InvalidInput(String),
    /// An array carried an error, or could not be read from the device.
    #[error("tensorboard: {0}")]
    Array(#[from] oxla::Error),
    /// An image could not be encoded as PNG.
    #[error("tensorboard: encoding a PNG: {0}")]
    Png(#[from] png::EncodingError),
    /// An event file is damaged: a truncated record or a checksum that
    /// does not match.
    #[error("tensorboard: event file {} is corrupt at byte offset {offset}: {message}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where the damaged record starts.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A record holds bytes that are not an `Event` protobuf.
    #[error("tensorboard: event file {}: record {index} is not an Event: {source}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The record's index (0 is the file version).
        index: usize,
        /// prost's error.
        #[source]
        source: prost::DecodeError,
    },
}

/// A scalar to write: an `f32`, an `f64` or a real oxla array of one
/// element (read from the device). TensorBoard stores scalars as f32.
pub trait ScalarValue {
    /// The value as f32, or why it cannot be one.
    fn scalar_value(&self) -> Result<f32, Error>;
}

impl ScalarValue for f32 {
    fn scalar_value(&self) -> Result<f32, Error> {
        Ok(*self)
    }
}

impl ScalarValue for f64 {
    fn scalar_value(&self) -> Result<f32, Error> {
        Ok(*self as f32)
    }
}

impl ScalarValue for Array {
    fn scalar_value(&self) -> Result<f32, Error> {
        let aval = self.aval()?;
        if aval.dtype.is_complex() || aval.shape.iter().product::<i64>() != 1 {
            return Err(Error::InvalidInput(format!(
                "a scalar summary of a {aval} array; a scalar must be one real element"
            )));
        }
        Ok(self.astype(DType::F32).reshape(&[]).item::<f32>()?)
    }
}

impl<T: ScalarValue + ?Sized> ScalarValue for &T {
    fn scalar_value(&self) -> Result<f32, Error> {
        (**self).scalar_value()
    }
}

/// Writes TensorBoard summaries to a new event file in a log directory.
///
/// Events are buffered; [`flush`](Self::flush) writes them to the file
/// (TensorBoard reads what has been flushed), and dropping the writer
/// flushes what is left (ignoring errors: flush first to see them).
pub struct SummaryWriter {
    path: PathBuf,
    file: BufWriter<File>,
}

/// Distinguishes the event files one process opens in the same second.
static FILES_OPENED: AtomicU64 = AtomicU64::new(0);

impl SummaryWriter {
    /// A writer of a new event file in `log_dir` (created with its parents
    /// if missing), named as TensorFlow names them:
    /// `events.out.tfevents.<seconds>.<host>.<pid>.<n>`. The file starts
    /// with the file version event (`brain.Event:2`).
    pub fn new(log_dir: impl AsRef<Path>) -> Result<SummaryWriter, Error> {
        let log_dir = log_dir.as_ref();
        std::fs::create_dir_all(log_dir).map_err(|source| Error::Io {
            action: "creating the log directory",
            path: log_dir.to_path_buf(),
            source,
        })?;
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let host = gethostname::gethostname()
            .to_string_lossy()
            .replace(['/', '\\'], "_");
        let n = FILES_OPENED.fetch_add(1, Ordering::Relaxed);
        let path = log_dir.join(format!(
            "events.out.tfevents.{seconds}.{host}.{}.{n}",
            std::process::id()
        ));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| Error::Io {
                action: "creating the event file",
                path: path.clone(),
                source,
            })?;
        let mut writer = SummaryWriter {
            path,
            file: BufWriter::new(file),
        };
        writer.write_event(0, What::FileVersion("brain.Event:2".into()))?;
        Ok(writer)
    }

    /// The event file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the scalar `value` under `tag` at `step` (a `simple_value`,
    /// which TensorBoard's Scalars tab plots).
    #[track_caller]
    pub fn add_scalar(
        &mut self,
        tag: &str,
        value: impl ScalarValue,
        step: i64,
    ) -> Result<(), Error> {
        let caller = Location::caller();
        let value = value
            .scalar_value()
            .map_err(|e| in_summary(e, "add_scalar", tag, caller))?;
        self.write_value(tag, Kind::SimpleValue(value), step)
    }

    /// Writes the histogram of `values` (an oxla array of any real dtype,
    /// or a slice or `Vec` of floats) under `tag` at `step`, over
    /// TensorFlow's default buckets ([`default_bucket_limits`]) as
    /// `tf.summary.histogram` (v1) does: min, max, count, sum and sum of
    /// squares, and the counts of the buckets with runs of empty buckets
    /// collapsed. A NaN or infinite value is an error (TensorFlow's too).
    #[track_caller]
    pub fn add_histogram<V: HistogramValues + ?Sized>(
        &mut self,
        tag: &str,
        values: &V,
        step: i64,
    ) -> Result<(), Error> {
        let caller = Location::caller();
        let histo = values
            .histogram_values()
            .and_then(|v| histogram::histogram(tag, &v, default_bucket_limits()))
            .map_err(|e| in_summary(e, "add_histogram", tag, caller))?;
        self.write_value(tag, Kind::Histo(histo), step)
    }

    /// Writes `image` under `tag` at `step` as a PNG: an array of shape
    /// (height, width, channels) with 1 (grayscale), 2 (grayscale and
    /// alpha), 3 (RGB) or 4 (RGBA) channels, of u8, or of floats in [0, 1]
    /// (clipped, then scaled as `tf.image.convert_image_dtype`). Another
    /// rank, channel count or dtype is an error naming the image's type,
    /// the tag and the caller's line.
    #[track_caller]
    pub fn add_image(&mut self, tag: &str, image: &Array, step: i64) -> Result<(), Error> {
        let caller = Location::caller();
        let what = format!("add_image {tag:?} at {caller}");
        let image = image::encode_image(image, &what)?;
        self.write_value(tag, Kind::Image(image), step)
    }

    /// Writes the buffered events to the file.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.file.flush().map_err(|source| self.io_error(source))
    }

    /// Writes a summary of one tagged value.
    fn write_value(&mut self, tag: &str, value: Kind, step: i64) -> Result<(), Error> {
        let summary = Summary {
            value: vec![Value {
                tag: tag.to_string(),
                value: Some(value),
            }],
        };
        self.write_event(step, What::Summary(summary))
    }

    /// Writes one event stamped with the current time.
    fn write_event(&mut self, step: i64, what: What) -> Result<(), Error> {
        let wall_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let event = Event {
            wall_time,
            step,
            what: Some(what),
        };
        record::write_record(&mut self.file, &event.encode_to_vec())
            .map_err(|source| self.io_error(source))
    }

    fn io_error(&self, source: std::io::Error) -> Error {
        Error::Io {
            action: "writing the event file",
            path: self.path.clone(),
            source,
        }
    }
}

impl Drop for SummaryWriter {
    fn drop(&mut self) {
        let _ = self.file.flush();
    }
}

/// `e` with the method, tag and caller's line in front, when it is about
/// the value given.
fn in_summary(e: Error, method: &str, tag: &str, caller: &Location<'_>) -> Error {
    match e {
        Error::InvalidInput(message) => {
            Error::InvalidInput(format!("{method} {tag:?} at {caller}: {message}"))
        }
        Error::Array(e) => Error::InvalidInput(format!("{method} {tag:?} at {caller}: {e}")),
        other => other,
    }
}

/// The events of the event file at `path`, in order, after checking every
/// record's checksums: a damaged file is an [`Error::Corrupt`] naming the
/// offset of the damaged record.
pub fn read_events(path: impl AsRef<Path>) -> Result<Vec<Event>, Error> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        action: "reading the event file",
        path: path.to_path_buf(),
        source,
    })?;
    record::read_records(path, &bytes)?
        .iter()
        .enumerate()
        .map(|(index, data)| {
            Event::decode(data.as_slice()).map_err(|source| Error::Decode {
                path: path.to_path_buf(),
                index,
                source,
            })
        })
        .collect()
}
