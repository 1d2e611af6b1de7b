//! Losses of `optax.losses`.

use crate::log_softmax;
use oxla::Array;
use oxla::numpy as jnp;

/// Cross entropy of `logits` `[..., classes]` against integer `labels`
/// `[...]`: `log(sum(exp(logits))) - logits[label]` after shifting by the
/// (stopped-gradient) maximum, per example, as
/// `optax.softmax_cross_entropy_with_integer_labels` computes it.
#[track_caller]
pub fn softmax_cross_entropy_with_integer_labels(logits: &Array, labels: &Array) -> Array {
    let shifted = logits - &oxla::lax::stop_gradient(&jnp::max(logits, Some(&[-1]), true));
    let picked = jnp::take_along_axis(&shifted, &jnp::expand_dims(labels, -1), -1);
    let label_logits = jnp::squeeze(&picked, Some(&[-1]));
    let normalizers = jnp::log(&jnp::sum(&jnp::exp(&shifted), Some(&[-1]), false));
    normalizers - label_logits
}

/// Cross entropy of `logits` against probability `labels` of the same shape:
/// `-sum(labels * log_softmax(logits))` over the last axis, per example
/// (`optax.softmax_cross_entropy`).
#[track_caller]
pub fn softmax_cross_entropy(logits: &Array, labels: &Array) -> Array {
    -jnp::sum(&(labels * &log_softmax(logits, None)), Some(&[-1]), false)
}

/// `0.5 * (predictions - targets)²`, elementwise (`optax.l2_loss`).
#[track_caller]
pub fn l2_loss(predictions: &Array, targets: &Array) -> Array {
    squared_error(predictions, targets) * 0.5
}

/// `(predictions - targets)²`, elementwise (`optax.squared_error`).
#[track_caller]
pub fn squared_error(predictions: &Array, targets: &Array) -> Array {
    jnp::square(&(predictions - targets))
}
