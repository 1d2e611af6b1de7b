//! The schedules' formulas on the step count, op for op as Optax writes
//! them (so that the f32 roundings agree).

use oxla::numpy as jnp;
use oxla::{Array, DType};

pub(super) fn f32_scalar(v: f64) -> Array {
    oxla::lax::convert_element_type(&Array::weak_scalar(v), DType::F32)
}

/// A step number as a weakly typed integer scalar (counts are `int32`).
pub(super) fn int(v: i64) -> Array {
    Array::weak_scalar(v as i32)
}

pub(super) fn to_f32(x: &Array) -> Array {
    oxla::lax::convert_element_type(x, DType::F32)
}

/// f32 constants from host values (numpy's f64 arrays, which JAX puts on
/// the device as f32 without x64).
fn f32_vector(values: &[f64]) -> Array {
    let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    Array::from_slice(&values, &[values.len() as i64]).unwrap_or_else(Array::error)
}

fn i32_vector(values: &[i64]) -> Array {
    let values: Vec<i32> = values.iter().map(|&v| v as i32).collect();
    Array::from_slice(&values, &[values.len() as i64]).unwrap_or_else(Array::error)
}

/// `polynomial_schedule` (power 1: `linear_schedule`).
pub(super) fn polynomial(
    count: &Array,
    init: f64,
    end: f64,
    power: f64,
    steps: i64,
    begin: i64,
) -> Array {
    if steps <= 0 {
        return f32_scalar(init);
    }
    let begin = begin.max(0);
    let clipped = jnp::clip(&(count - &int(begin)), &int(0), &int(steps));
    let frac = -(to_f32(&clipped) / steps as f64) + 1.0;
    // A Python int power is `integer_pow` (repeated products), a float one
    // `pow`.
    let powered = if power.fract() == 0.0 && power.abs() <= f64::from(i32::MAX) {
        oxla::lax::integer_pow(&frac, power as i32)
    } else {
        jnp::power(&frac, &Array::weak_scalar(power))
    };
    powered * (init - end) + end
}

/// `cosine_decay_schedule(init, decay_steps, alpha, exponent)` (`init`
/// throughout for no decay steps, where Optax's constructor refuses them).
pub(super) fn cosine_decay(
    count: &Array,
    init: f64,
    steps: i64,
    alpha: f64,
    exponent: f64,
) -> Array {
    if steps <= 0 {
        return f32_scalar(init);
    }
    let count = jnp::minimum(count, &int(steps));
    let phase = to_f32(&count) * std::f64::consts::PI / steps as f64;
    let cosine = (jnp::cos(&phase) + 1.0) * 0.5;
    let decayed = jnp::power(&cosine, &Array::weak_scalar(exponent)) * (1.0 - alpha) + alpha;
    decayed * init
}

/// `exponential_decay`, with Optax's constant schedule for non-positive
/// `transition_steps` or a zero rate and its begin of 0 for a negative one.
pub(super) fn exponential(
    count: &Array,
    init_value: f64,
    transition_steps: i64,
    decay_rate: f64,
    transition_begin: i64,
    staircase: bool,
    end_value: Option<f64>,
) -> Array {
    if transition_steps <= 0 || decay_rate == 0.0 {
        return f32_scalar(init_value);
    }
    let decreased = count - &int(transition_begin.max(0));
    let mut p = to_f32(&decreased) / transition_steps as f64;
    if staircase {
        p = jnp::floor(&p);
    }
    let decayed = jnp::power(&f32_scalar(decay_rate), &p) * init_value;
    let started = jnp::less_equal(&decreased, &int(0));
    let value = jnp::where_(&started, &f32_scalar(init_value), &decayed);
    match end_value {
        None => value,
        Some(end) if decay_rate < 1.0 => jnp::maximum(&value, &f32_scalar(end)),
        Some(end) => jnp::minimum(&value, &f32_scalar(end)),
    }
}

/// `piecewise_constant_schedule`: `v * indicator + (1 - indicator) * scale
/// * v` per boundary in order, `indicator = max(0, sign(boundary - count))`.
pub(super) fn piecewise_constant(count: &Array, init: f64, pairs: &[(i64, f64)]) -> Array {
    let mut sorted = pairs.to_vec();
    sorted.sort_by_key(|&(boundary, _)| boundary);
    let mut v = f32_scalar(init);
    for (boundary, scale) in sorted {
        let sign = jnp::sign(&(int(boundary) - count));
        let indicator = jnp::maximum(&Array::weak_scalar(0.0), &sign);
        let rest = (-&indicator + 1.0) * scale;
        v = &v * &indicator + &rest * &v;
    }
    v
}

/// `piecewise_interpolate_schedule`: the interval holding the step
/// interpolates between the accumulated products of the scales at its ends
/// (a dot with the interval indicators, so a zero-length interval gives
/// NaN as in Optax); from the last boundary on, the last product.
pub(super) fn piecewise_interpolate(
    count: &Array,
    cosine: bool,
    init: f64,
    pairs: &[(i64, f64)],
) -> Array {
    let mut sorted = pairs.to_vec();
    sorted.sort_by_key(|&(boundary, _)| boundary);
    let bounds: Vec<i64> = std::iter::once(0)
        .chain(sorted.iter().map(|&(b, _)| b))
        .collect();
    let mut values = vec![init];
    for &(_, scale) in &sorted {
        let last = values[values.len() - 1];
        values.push(last * scale);
    }
    let n = sorted.len();
    let (starts, ends) = (&values[..n], &values[1..]);
    let sizes: Vec<i64> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
    let c = jnp::expand_dims(count, -1);
    let lo = i32_vector(&bounds[..n]);
    let hi = i32_vector(&bounds[1..]);
    let indicator = jnp::logical_and(&jnp::less_equal(&lo, &c), &jnp::less(&c, &hi));
    let pct = to_f32(&(&c - &lo)) / to_f32(&i32_vector(&sizes));
    let interpolated = if cosine {
        // end + (start - end) / 2 * (cos(π pct) + 1)
        let halves: Vec<f64> = starts
            .iter()
            .zip(ends)
            .map(|(s, e)| (s - e) / 2.0)
            .collect();
        let wave = jnp::cos(&(pct * std::f64::consts::PI)) + 1.0;
        f32_vector(ends) + f32_vector(&halves) * wave
    } else {
        // (end - start) * pct + start
        let spans: Vec<f64> = starts.iter().zip(ends).map(|(s, e)| e - s).collect();
        f32_vector(&spans) * pct + f32_vector(starts)
    };
    let inside = jnp::sum(&(to_f32(&indicator) * interpolated), Some(&[-1]), false);
    let after = to_f32(&jnp::less_equal(&int(bounds[n]), count)) * values[n];
    inside + after
}
