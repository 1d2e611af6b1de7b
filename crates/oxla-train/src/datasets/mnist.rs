//! MNIST from its original IDX files.

use std::path::Path;

use super::batches::{Batch, batch_of, shuffled_batches};
use super::idx::{IdxBytes, parse};
use super::{dataset_error, read};
use oxla::random::{self, Key};
use oxla::{DType, lax};
use oxla::{Error, Result};

/// Which half of MNIST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// The 60,000 training images.
    Train,
    /// The 10,000 held-out test images.
    Test,
}

/// MNIST: 60,000 training and 10,000 test images of 28×28 handwritten
/// digits (pixels 0–255) with their labels 0–9.
#[derive(Debug, Clone)]
pub struct Mnist {
    /// Training images, `[60000, 28, 28]` row-major.
    pub train_images: IdxBytes,
    /// Training labels, `[60000]`.
    pub train_labels: IdxBytes,
    /// Test images, `[10000, 28, 28]`.
    pub test_images: IdxBytes,
    /// Test labels, `[10000]`.
    pub test_labels: IdxBytes,
}

impl Mnist {
    /// Loads the four IDX files from `dir` (as ci/setup names them:
    /// `train-images-idx3-ubyte`, ...), checking that images and labels
    /// agree in count and that labels are digits.
    pub fn load(dir: &Path) -> Result<Mnist, Error> {
        let file = |name: &str| {
            let path = dir.join(name);
            parse(&path, &read(&path)?)
        };
        let mnist = Mnist {
            train_images: file("train-images-idx3-ubyte")?,
            train_labels: file("train-labels-idx1-ubyte")?,
            test_images: file("t10k-images-idx3-ubyte")?,
            test_labels: file("t10k-labels-idx1-ubyte")?,
        };
        for (images, labels, split) in [
            (&mnist.train_images, &mnist.train_labels, "train"),
            (&mnist.test_images, &mnist.test_labels, "t10k"),
        ] {
            if images.dims.len() != 3 || labels.dims.len() != 1 || images.dims[0] != labels.dims[0]
            {
                return Err(dataset_error(
                    dir,
                    format!(
                        "{split} images {:?} and labels {:?} do not pair up",
                        images.dims, labels.dims
                    ),
                ));
            }
            if let Some(bad) = labels.data.iter().find(|&&l| l > 9) {
                return Err(dataset_error(
                    dir,
                    format!("{split} label {bad} is not a digit"),
                ));
            }
        }
        Ok(mnist)
    }

    /// Pixels per image (784).
    pub fn pixels(&self) -> usize {
        self.train_images.dims[1..].iter().product()
    }

    /// Number of images in `split`.
    pub fn count(&self, split: Split) -> usize {
        self.labels(split).dims[0]
    }

    /// The images of `split`.
    pub(crate) fn images(&self, split: Split) -> &IdxBytes {
        match split {
            Split::Train => &self.train_images,
            Split::Test => &self.test_images,
        }
    }

    /// The labels of `split`.
    pub(crate) fn labels(&self, split: Split) -> &IdxBytes {
        match split {
            Split::Train => &self.train_labels,
            Split::Test => &self.test_labels,
        }
    }

    /// Minibatches of `split` in the order of `order` (image indices):
    /// flattened images scaled to `[0, 1]` as f32 `[batch, 784]` and labels
    /// as i32 `[batch]`; a last partial batch is dropped.
    pub fn batches<'a>(
        &'a self,
        split: Split,
        order: &'a [usize],
        batch_size: usize,
    ) -> impl Iterator<Item = Result<Batch>> + 'a {
        shuffled_batches(
            &self.images(split).data,
            &self.labels(split).data,
            self.pixels(),
            1.0 / 255.0,
            order,
            batch_size,
        )
    }

    /// The minibatches of one pass over `split`, `batch_size` images each
    /// (a last partial batch is dropped, so every batch has one shape and
    /// one executable): in the order of `jax.random.permutation(key, count)`
    /// when given a key (an epoch of training), else in file order (an
    /// evaluation). Batches are made on the host as the iterator reaches
    /// them, so `.skip(n)` resumes an epoch without copying what it skips.
    ///
    /// ```no_run
    /// use oxla_train::datasets::{self, Mnist, Split};
    /// use oxla::random::{Key, fold_in};
    /// # fn main() -> oxla::Result<()> {
    /// let mnist = Mnist::load(&datasets::dir("mnist"))?;
    /// for epoch in 0..3 {
    ///     for batch in mnist.epoch(Split::Train, Some(fold_in(Key::new(0), epoch)), 128)? {
    ///         let batch = batch?;   // inputs f32[128, 784], labels i32[128]
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn epoch(
        &self,
        split: Split,
        key: Option<Key>,
        batch_size: usize,
    ) -> Result<impl Iterator<Item = Result<Batch>> + '_> {
        let count = self.count(split);
        if batch_size == 0 {
            return Err(Error::InvalidArgument(
                "Mnist::epoch: a batch size of 0".to_string(),
            ));
        }
        let order: Vec<usize> = match key {
            Some(key) => {
                let order = random::permutation(key, count as i64);
                lax::convert_element_type(&order, DType::I32)
                    .to_vec::<i32>()?
                    .into_iter()
                    .map(|i| i as usize)
                    .collect()
            }
            None => (0..count).collect(),
        };
        let (images, labels, pixels) = (self.images(split), self.labels(split), self.pixels());
        Ok((0..count / batch_size).map(move |i| {
            let rows = &order[i * batch_size..(i + 1) * batch_size];
            batch_of(&images.data, &labels.data, pixels, 1.0 / 255.0, rows)
        }))
    }
}
