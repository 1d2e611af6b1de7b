//! Shuffled minibatches of examples held on the host, fed to the device
//! one batch at a time.

use oxla::Array;
use oxla::Result;

/// One minibatch on the device: inputs `[batch, features]` scaled to f32
/// and integer labels `[batch]`.
pub struct Batch {
    /// `[batch, features]` f32 inputs.
    pub inputs: Array,
    /// `[batch]` i32 labels.
    pub labels: Array,
}

/// The minibatches of one epoch in the order of `permutation` (indices of
/// examples), `batch_size` each (the last partial batch is dropped, so
/// every batch has one shape and one executable): each example's
/// `features` bytes of `inputs` times `scale`, and its label.
pub fn shuffled_batches<'a>(
    inputs: &'a [u8],
    labels: &'a [u8],
    features: usize,
    scale: f32,
    permutation: &'a [usize],
    batch_size: usize,
) -> impl Iterator<Item = Result<Batch>> + 'a {
    permutation
        .chunks_exact(batch_size)
        .map(move |rows| batch_of(inputs, labels, features, scale, rows))
}

/// The examples `rows` as one batch on the device: each row's `features`
/// bytes of `inputs` times `scale`, and its label.
pub(super) fn batch_of(
    inputs: &[u8],
    labels: &[u8],
    features: usize,
    scale: f32,
    rows: &[usize],
) -> Result<Batch> {
    let mut x = Vec::with_capacity(rows.len() * features);
    let mut y = Vec::with_capacity(rows.len());
    for &r in rows {
        x.extend(scaled(&inputs[r * features..(r + 1) * features], scale));
        y.push(i32::from(labels[r]));
    }
    Ok(Batch {
        inputs: Array::from_slice(&x, &[rows.len() as i64, features as i64])?,
        labels: Array::from_slice(&y, &[rows.len() as i64])?,
    })
}

/// An example's bytes as f32 times `scale` (`1/255` maps pixels to `[0, 1]`).
pub(crate) fn scaled(bytes: &[u8], scale: f32) -> impl Iterator<Item = f32> + '_ {
    bytes.iter().map(move |&p| f32::from(p) * scale)
}
