//! Regression losses of `optax.losses` (`_regression.py`).

use oxla::Array;
use oxla::numpy as jnp;

use super::check_inputs;

/// Huber loss of `predictions - targets` with threshold `delta`,
/// elementwise: `0.5 e²` where `|e| <= delta`, `0.5 delta² + delta (|e| -
/// delta)` beyond (`optax.huber_loss`, whose default `delta` is 1).
#[track_caller]
pub fn huber_loss(predictions: &Array, targets: &Array, delta: f64) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    if let Err(e) = check_inputs("huber_loss", &inputs, &["predictions"], false) {
        return e;
    }
    let abs_errors = jnp::abs(&(predictions - targets));
    let quadratic = jnp::minimum(&abs_errors, &Array::weak_scalar(delta));
    // Not max(|e| - delta, 0): that would double the gradient at |e| = delta.
    let linear = &abs_errors - &quadratic;
    jnp::square(&quadratic) * 0.5 + linear * delta
}

/// `log(cosh(predictions - targets))`, elementwise, as `logaddexp(e, -e) -
/// log 2` (`optax.log_cosh`).
#[track_caller]
pub fn log_cosh(predictions: &Array, targets: &Array) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    if let Err(e) = check_inputs("log_cosh", &inputs, &["predictions"], false) {
        return e;
    }
    let errors = predictions - targets;
    jnp::logaddexp(&errors, &-&errors) - jnp::log(&Array::weak_scalar(2.0))
}

/// The cosine of the angle between `predictions` and `targets` along the
/// last axis: `sum(a / |a| * b / |b|)` with each squared norm floored at
/// `epsilon` (`optax.cosine_similarity`, whose default `epsilon` is 0).
#[track_caller]
pub fn cosine_similarity(predictions: &Array, targets: &Array, epsilon: f64) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    let floats = ["predictions", "targets"];
    if let Err(e) = check_inputs("cosine_similarity", &inputs, &floats, false) {
        return e;
    }
    let unit = |x: &Array| {
        let norm2 = jnp::sum(&jnp::square(x), Some(&[-1]), true);
        // `clip(epsilon)`: jnp.clip's lower bound is `maximum(min, x)`.
        x / &jnp::sqrt(&jnp::maximum(&Array::weak_scalar(epsilon), &norm2))
    };
    jnp::sum(&(unit(predictions) * unit(targets)), Some(&[-1]), false)
}

/// `1 - cosine_similarity(predictions, targets, epsilon)`
/// (`optax.cosine_distance`).
#[track_caller]
pub fn cosine_distance(predictions: &Array, targets: &Array, epsilon: f64) -> Array {
    let inputs = [("predictions", predictions), ("targets", targets)];
    let floats = ["predictions", "targets"];
    if let Err(e) = check_inputs("cosine_distance", &inputs, &floats, false) {
        return e;
    }
    -cosine_similarity(predictions, targets, epsilon) + 1.0
}
