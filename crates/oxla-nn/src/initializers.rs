//! Parameter initializers named and computed as `jax.nn.initializers` (and
//! so Flax) computes them: the same key gives the same values bit for bit.

use oxla::DType;

use oxla::Array;
use oxla::Error;
use oxla::numpy as jnp;
use oxla::random::{self, IntoKey, Key};

/// Which fan a [`Initializer::VarianceScaling`] divides its scale by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanMode {
    /// The input size times the receptive field.
    FanIn,
    /// The output size times the receptive field.
    FanOut,
    /// The mean of the two.
    FanAvg,
}

/// The distribution a [`Initializer::VarianceScaling`] draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// Normal truncated to two standard deviations, rescaled to the variance.
    TruncatedNormal,
    /// Normal.
    Normal,
    /// Uniform on `[-limit, limit)` with the variance's limit.
    Uniform,
}

/// A parameter initializer: [`Initializer::init`] draws an array of a shape
/// from a key. The constructors below are JAX's and Flax's named ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Initializer {
    /// All zeros (`zeros`).
    Zeros,
    /// All ones (`ones`).
    Ones,
    /// Every element `value` (`constant(value)`).
    Constant(f64),
    /// Normal with standard deviation `stddev` (`normal(stddev)`).
    Normal {
        /// Standard deviation.
        stddev: f64,
    },
    /// Uniform on `[0, scale)` (`uniform(scale)`).
    Uniform {
        /// Upper bound.
        scale: f64,
    },
    /// Normal truncated to `[-2, 2]`, times `stddev` (`truncated_normal(stddev)`).
    TruncatedNormal {
        /// Standard deviation before truncation.
        stddev: f64,
    },
    /// `variance_scaling(scale, mode, distribution, in_axis, out_axis)`:
    /// variance `scale / fan` with fans computed from the shape (the
    /// receptive field is every axis but `in_axis` and `out_axis`).
    VarianceScaling {
        /// Numerator of the variance.
        scale: f64,
        /// Which fan divides it.
        mode: FanMode,
        /// What is drawn.
        distribution: Distribution,
        /// The input axis (negative counts from the end).
        in_axis: i64,
        /// The output axis (negative counts from the end).
        out_axis: i64,
    },
    /// `orthogonal(scale, column_axis)`: a Haar-random matrix with
    /// orthonormal rows or columns (whichever side is smaller), the
    /// `column_axis` its columns and every other axis flattened into its
    /// rows, times `scale` (Flax's default recurrent kernel init).
    Orthogonal {
        /// The factor of the orthogonal matrix.
        scale: f64,
        /// The axis of the columns (negative counts from the end).
        column_axis: i64,
    },
}

/// `variance_scaling` with JAX's default axes (input -2, output -1).
pub fn variance_scaling(scale: f64, mode: FanMode, distribution: Distribution) -> Initializer {
    Initializer::VarianceScaling {
        scale,
        mode,
        distribution,
        in_axis: -2,
        out_axis: -1,
    }
}

/// LeCun normal: variance 1/fan_in, truncated normal (Flax's default kernel init).
pub fn lecun_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// LeCun uniform: variance 1/fan_in, uniform.
pub fn lecun_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::Uniform)
}

/// Glorot (Xavier) uniform: variance 2/(fan_in + fan_out), uniform.
pub fn glorot_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::Uniform)
}

/// Glorot (Xavier) normal: variance 2/(fan_in + fan_out), truncated normal.
pub fn glorot_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::TruncatedNormal)
}

/// He (Kaiming) normal: variance 2/fan_in, truncated normal.
pub fn he_normal() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// He (Kaiming) uniform: variance 2/fan_in, uniform.
pub fn he_uniform() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::Uniform)
}

/// Normal with standard deviation `stddev` (JAX's default is 1e-2).
pub fn normal(stddev: f64) -> Initializer {
    Initializer::Normal { stddev }
}

/// Uniform on `[0, scale)` (JAX's default scale is 1e-2).
pub fn uniform(scale: f64) -> Initializer {
    Initializer::Uniform { scale }
}

/// Truncated normal times `stddev` (JAX's default is 1e-2).
pub fn truncated_normal(stddev: f64) -> Initializer {
    Initializer::TruncatedNormal { stddev }
}

/// Orthogonal with JAX's defaults (`scale` 1, columns on the last axis):
/// `jax.nn.initializers.orthogonal()`, the recurrent kernel init of Flax's
/// LSTM and GRU cells. Drawn as JAX draws it (the QR of a normal matrix,
/// signs fixed by R's diagonal), equal in distribution, not bit for bit.
pub fn orthogonal() -> Initializer {
    Initializer::Orthogonal {
        scale: 1.0,
        column_axis: -1,
    }
}

/// All zeros.
pub fn zeros() -> Initializer {
    Initializer::Zeros
}

/// All ones.
pub fn ones() -> Initializer {
    Initializer::Ones
}

/// Every element `value`.
pub fn constant(value: f64) -> Initializer {
    Initializer::Constant(value)
}

/// The standard deviation of a standard normal truncated to (-2, 2), by
/// which JAX divides a truncated-normal variance-scaling draw.
const TRUNCATED_NORMAL_STDDEV: f64 = 0.879_625_661_034_239_8;

impl Initializer {
    /// An array of `shape` and `dtype` drawn from `key` (the constant
    /// initializers ignore it).
    #[track_caller]
    pub fn init(&self, key: impl IntoKey, shape: &[i64], dtype: DType) -> Array {
        let key: Key = key.into_key();
        // Scalars of `dtype` multiply as JAX's `jnp.array(c, dtype)` do.
        let scalar = |v: f64| scalar_of(v, dtype);
        match *self {
            Initializer::Zeros => filled(shape, 0.0, dtype),
            Initializer::Ones => filled(shape, 1.0, dtype),
            Initializer::Constant(value) => filled(shape, value, dtype),
            Initializer::Normal { stddev } => random::normal(key, shape, dtype) * &scalar(stddev),
            Initializer::Uniform { scale } => {
                random::uniform(key, shape, dtype, &scalar(0.0), &scalar(1.0)) * &scalar(scale)
            }
            Initializer::TruncatedNormal { stddev } => {
                truncated(key, shape, dtype) * &scalar(stddev)
            }
            Initializer::VarianceScaling {
                scale,
                mode,
                distribution,
                in_axis,
                out_axis,
            } => {
                let (fan_in, fan_out) = match fans(shape, in_axis, out_axis) {
                    Ok(f) => f,
                    Err(e) => return Array::error(e),
                };
                let denominator = match mode {
                    FanMode::FanIn => fan_in,
                    FanMode::FanOut => fan_out,
                    FanMode::FanAvg => (fan_in + fan_out) / 2.0,
                };
                let variance = scalar(scale / denominator);
                match distribution {
                    Distribution::TruncatedNormal => {
                        let stddev = jnp::sqrt(&variance) / &scalar(TRUNCATED_NORMAL_STDDEV);
                        truncated(key, shape, dtype) * &stddev
                    }
                    Distribution::Normal => {
                        random::normal(key, shape, dtype) * &jnp::sqrt(&variance)
                    }
                    Distribution::Uniform => {
                        random::uniform(key, shape, dtype, &scalar(-1.0), &scalar(1.0))
                            * &jnp::sqrt(&(&variance * &scalar(3.0)))
                    }
                }
            }
            Initializer::Orthogonal { scale, column_axis } => {
                orthogonal_init(key, shape, dtype, column_axis) * &scalar(scale)
            }
        }
    }
}

/// `jax.nn.initializers.orthogonal`'s draw before scaling: rank 2 or more,
/// zeros when a dimension is 0.
#[track_caller]
fn orthogonal_init(key: Key, shape: &[i64], dtype: DType, column_axis: i64) -> Array {
    let rank = shape.len() as i64;
    let axis = if column_axis < 0 {
        column_axis + rank
    } else {
        column_axis
    };
    if rank < 2 || !(0..rank).contains(&axis) {
        return Array::error(Error::InvalidArgument(format!(
            "orthogonal initializer: a weight of shape {shape:?} with column axis {column_axis} \
             (it needs rank 2 or more and the axis inside it)"
        )));
    }
    if shape.contains(&0) {
        return filled(shape, 0.0, dtype);
    }
    let n_cols = shape[axis as usize];
    let n_rows = shape.iter().product::<i64>() / n_cols;
    let q = random::orthogonal(key, n_rows, &[], dtype, Some(n_cols));
    let mut rows: Vec<i64> = shape.to_vec();
    rows.remove(axis as usize);
    rows.push(n_cols);
    jnp::moveaxis(&jnp::reshape(&q, &rows), -1, axis)
}

fn scalar_of(v: f64, dtype: DType) -> Array {
    oxla::lax::convert_element_type(&Array::weak_scalar(v), dtype)
}

fn filled(shape: &[i64], value: f64, dtype: DType) -> Array {
    jnp::full(shape, value, dtype)
}

fn truncated(key: Key, shape: &[i64], dtype: DType) -> Array {
    random::truncated_normal(
        key,
        &Array::weak_scalar(-2.0f64),
        &Array::weak_scalar(2.0f64),
        Some(shape),
        dtype,
    )
}

/// JAX's `_compute_fans`: (fan_in, fan_out) of a weight shape of rank ≥ 2.
fn fans(shape: &[i64], in_axis: i64, out_axis: i64) -> Result<(f64, f64), Error> {
    let rank = shape.len() as i64;
    let axis = |a: i64| if a < 0 { a + rank } else { a };
    let (i, o) = (axis(in_axis), axis(out_axis));
    if rank < 2 || !(0..rank).contains(&i) || !(0..rank).contains(&o) {
        return Err(Error::InvalidArgument(format!(
            "variance_scaling initializer: cannot compute the fans of a weight of shape {shape:?} \
             with input axis {in_axis} and output axis {out_axis} (it needs rank 2 or more)"
        )));
    }
    let total: f64 = shape.iter().map(|&d| d as f64).product();
    let (in_size, out_size) = (shape[i as usize] as f64, shape[o as usize] as f64);
    let receptive = total / in_size / out_size;
    Ok((in_size * receptive, out_size * receptive))
}
