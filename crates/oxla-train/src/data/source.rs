//! Grain's `RandomAccessDataSource`: a length and a record per index,
//! read from any thread.

use std::sync::Arc;

use super::error::BoxError;
use crate::datasets::batches::scaled;
use crate::datasets::{Mnist, Split};

/// Records by index, `0..len()`, readable from the loader's worker
/// threads at once (hence `Send + Sync`). `get` is only called with an
/// index below `len()`.
pub trait RandomAccessSource: Send + Sync + 'static {
    /// What one index reads.
    type Record: Send + 'static;

    /// The number of records.
    fn len(&self) -> usize;

    /// Whether there are no records.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `index` (a file-backed source may fail to read it).
    fn get(&self, index: usize) -> Result<Self::Record, BoxError>;
}

impl<T: Clone + Send + Sync + 'static> RandomAccessSource for Vec<T> {
    type Record = T;

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn get(&self, index: usize) -> Result<T, BoxError> {
        Ok(self[index].clone())
    }
}

impl<T: Clone + Send + Sync + 'static> RandomAccessSource for Arc<[T]> {
    type Record = T;

    fn len(&self) -> usize {
        self.as_ref().len()
    }

    fn get(&self, index: usize) -> Result<T, BoxError> {
        Ok(self[index].clone())
    }
}

impl<S: RandomAccessSource> RandomAccessSource for Arc<S> {
    type Record = S::Record;

    fn len(&self) -> usize {
        self.as_ref().len()
    }

    fn get(&self, index: usize) -> Result<S::Record, BoxError> {
        self.as_ref().get(index)
    }
}

/// One half of MNIST as a source: each record is an image flattened and
/// scaled to `[0, 1]` (784 `f32`s, as [`Mnist::epoch`]'s batches hold it)
/// and its label as `i32`, so a `(Vec<f32>, i32)` batch stacks into
/// `f32[batch, 784]` and `i32[batch]`.
#[derive(Debug, Clone)]
pub struct MnistSource {
    mnist: Arc<Mnist>,
    split: Split,
}

impl MnistSource {
    /// The records of `split`, sharing `mnist` with the caller.
    pub fn new(mnist: Arc<Mnist>, split: Split) -> MnistSource {
        MnistSource { mnist, split }
    }
}

impl RandomAccessSource for MnistSource {
    type Record = (Vec<f32>, i32);

    fn len(&self) -> usize {
        self.mnist.count(self.split)
    }

    fn get(&self, index: usize) -> Result<(Vec<f32>, i32), BoxError> {
        let pixels = self.mnist.pixels();
        let images = &self.mnist.images(self.split).data;
        let image = scaled(&images[index * pixels..(index + 1) * pixels], 1.0 / 255.0).collect();
        Ok((image, i32::from(self.mnist.labels(self.split).data[index])))
    }
}
