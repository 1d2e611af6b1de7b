//! Losses of `optax.losses`, op for op as Optax writes them. Optax's
//! `axis` and `where` arguments are not taken: the losses reduce over the
//! last axis. Inputs Optax refuses (integer predictions, targets of another
//! shape where it asserts equal shapes) give an error array that names the
//! loss, the inputs' types and the caller's line.

mod ctc;
mod regression;

pub use ctc::{ctc_loss, ctc_loss_with_forward_probs};
pub use regression::{cosine_distance, cosine_similarity, huber_loss, log_cosh};

use crate::{log_sigmoid, log_softmax, softmax};
use oxla::numpy as jnp;
use oxla::{Array, Error};

/// The error array of a loss given inputs it cannot take: the loss, each
/// named input's type, what was expected, and the caller's line.
#[track_caller]
fn input_error(loss: &str, inputs: &[(&str, &Array)], expected: &str) -> Array {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    let types: Vec<String> = inputs
        .iter()
        .map(|(name, x)| {
            let t = x.aval().map(ToString::to_string).unwrap_or_default();
            format!("{name} {t}")
        })
        .collect();
    Array::error(Error::InvalidArgument(format!(
        "{location}: {loss} of {}: {expected}",
        types.join(", ")
    )))
}

/// Optax's `chex.assert_type(..., float)` on `floats` and, with
/// `same_shape`, `chex.assert_equal_shape` on all `inputs`; an input that
/// already carries an error passes it on.
#[track_caller]
fn check_inputs(
    loss: &str,
    inputs: &[(&str, &Array)],
    floats: &[&str],
    same_shape: bool,
) -> Result<(), Array> {
    let mut avals = Vec::with_capacity(inputs.len());
    for (_, x) in inputs {
        avals.push(x.aval().map_err(|e| Array::error(e.clone()))?);
    }
    for ((name, _), aval) in inputs.iter().zip(&avals) {
        if floats.contains(name) && !aval.dtype.is_float() {
            return Err(input_error(
                loss,
                inputs,
                &format!("{name} must be a floating-point array"),
            ));
        }
    }
    if same_shape && avals.windows(2).any(|w| w[0].shape != w[1].shape) {
        return Err(input_error(
            loss,
            inputs,
            "the inputs must have the same shape",
        ));
    }
    Ok(())
}

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
/// (`optax.softmax_cross_entropy`). With label smoothing, pass
/// [`smooth_labels`] of the labels.
#[track_caller]
pub fn softmax_cross_entropy(logits: &Array, labels: &Array) -> Array {
    let inputs = [("logits", logits), ("labels", labels)];
    if let Err(e) = check_inputs("softmax_cross_entropy", &inputs, &["logits"], false) {
        return e;
    }
    -jnp::sum(&(labels * &log_softmax(logits, None)), Some(&[-1]), false)
}

/// `(1 - alpha) * labels + alpha / classes`, with `classes` the last
/// dimension of the (float, one-hot or probability) `labels`
/// (`optax.smooth_labels`).
#[track_caller]
pub fn smooth_labels(labels: &Array, alpha: f64) -> Array {
    if let Err(e) = check_inputs("smooth_labels", &[("labels", labels)], &["labels"], false) {
        return e;
    }
    let classes = match labels.aval() {
        Ok(a) => a.shape.last().copied().unwrap_or(0),
        Err(e) => return Array::error(e.clone()),
    };
    labels * (1.0 - alpha) + alpha / classes as f64
}

/// The softmax cross entropy plus `epsilon` times `sum(labels * (1 -
/// softmax(logits)))` over the last axis, per example
/// (`optax.poly_loss_cross_entropy`, Poly-1; Optax's default `epsilon` is 2).
#[track_caller]
pub fn poly_loss_cross_entropy(logits: &Array, labels: &Array, epsilon: f64) -> Array {
    let inputs = [("logits", logits), ("labels", labels)];
    if let Err(e) = check_inputs(
        "poly_loss_cross_entropy",
        &inputs,
        &["logits", "labels"],
        false,
    ) {
        return e;
    }
    let p = softmax(logits, None);
    let one_minus_pt = jnp::sum(&(labels * &(-p + 1.0)), Some(&[-1]), false);
    softmax_cross_entropy(logits, labels) + one_minus_pt * epsilon
}

/// `-labels * log_sigmoid(logits) - (1 - labels) * log_sigmoid(-logits)`,
/// elementwise, the labels (probabilities, or 0/1 of any dtype) cast to the
/// logits' dtype (`optax.sigmoid_binary_cross_entropy`).
#[track_caller]
pub fn sigmoid_binary_cross_entropy(logits: &Array, labels: &Array) -> Array {
    let inputs = [("logits", logits), ("labels", labels)];
    if let Err(e) = check_inputs("sigmoid_binary_cross_entropy", &inputs, &["logits"], false) {
        return e;
    }
    let labels = match logits.aval() {
        Ok(a) => oxla::lax::convert_element_type(labels, a.dtype),
        Err(e) => return Array::error(e.clone()),
    };
    let log_p = log_sigmoid(logits);
    let log_not_p = log_sigmoid(&-logits);
    -&labels * &log_p - (-&labels + 1.0) * log_not_p
}

/// `max(0, 1 - predictor_outputs * targets)`, elementwise, targets in
/// {-1, 1} (`optax.hinge_loss`).
#[track_caller]
pub fn hinge_loss(predictor_outputs: &Array, targets: &Array) -> Array {
    jnp::maximum(
        &Array::weak_scalar(0i32),
        &(-(predictor_outputs * targets) + 1.0),
    )
}

/// `sum(targets * (log(targets) - log_predictions))` over the last axis,
/// a zero target contributing 0 (`optax.kl_divergence`; the predictions
/// are log-probabilities, the targets probabilities).
#[track_caller]
pub fn kl_divergence(log_predictions: &Array, targets: &Array) -> Array {
    let inputs = [("log_predictions", log_predictions), ("targets", targets)];
    let floats = ["log_predictions", "targets"];
    if let Err(e) = check_inputs("kl_divergence", &inputs, &floats, false) {
        return e;
    }
    let zero = jnp::equal(targets, &Array::weak_scalar(0i32));
    let log_targets = jnp::where_(&zero, &Array::weak_scalar(0i32), &jnp::log(targets));
    let loss = targets * &(log_targets - log_predictions);
    jnp::sum(&loss, Some(&[-1]), false)
}

/// `sum(exp(log_targets) * (log_targets - log_predictions))` over the last
/// axis (`optax.kl_divergence_with_log_targets`).
#[track_caller]
pub fn kl_divergence_with_log_targets(log_predictions: &Array, log_targets: &Array) -> Array {
    let inputs = [
        ("log_predictions", log_predictions),
        ("log_targets", log_targets),
    ];
    let floats = ["log_predictions", "log_targets"];
    if let Err(e) = check_inputs("kl_divergence_with_log_targets", &inputs, &floats, false) {
        return e;
    }
    let loss = jnp::exp(log_targets) * (log_targets - log_predictions);
    jnp::sum(&loss, Some(&[-1]), false)
}

/// `0.5 * (predictions - targets)²`, elementwise (`optax.l2_loss`); the
/// two must have the same shape and the predictions a float dtype.
#[track_caller]
pub fn l2_loss(predictions: &Array, targets: &Array) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    if let Err(e) = check_inputs("l2_loss", &inputs, &["predictions"], true) {
        return e;
    }
    squared_error(predictions, targets) * 0.5
}

/// `(predictions - targets)²`, elementwise (`optax.squared_error`); the
/// two must have the same shape and the predictions a float dtype.
#[track_caller]
pub fn squared_error(predictions: &Array, targets: &Array) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    if let Err(e) = check_inputs("squared_error", &inputs, &["predictions"], true) {
        return e;
    }
    jnp::square(&(predictions - targets))
}
