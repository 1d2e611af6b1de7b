//! `jax.random.multivariate_normal` and `jax.random.orthogonal`: normal
//! draws through a factor of the covariance (Cholesky, eigh or SVD) and
//! through QR, as JAX computes them.

use oxla_core::DType;

use super::{IntoKey, normal};
use crate::array::Array;
use crate::numpy as jnp;
use crate::numpy::linalg as la;

/// How [`multivariate_normal`] factors the covariance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MvnMethod {
    /// `L` with `cov = L Lᵀ` (JAX's default).
    #[default]
    Cholesky,
    /// `V √w` from the eigendecomposition.
    Eigh,
    /// `U √s` from the SVD.
    Svd,
}

/// `jax.random.multivariate_normal(key, mean, cov, shape, dtype, method)`:
/// `mean + factor · z` for standard normal `z`; `shape` is the batch
/// (default the broadcast of `mean`'s and `cov`'s batch dimensions).
#[track_caller]
pub fn multivariate_normal(
    key: impl IntoKey,
    mean: &Array,
    cov: &Array,
    shape: Option<&[i64]>,
    dtype: DType,
    method: MvnMethod,
) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    let usage = |message: String| {
        Array::error(crate::error::Error::InvalidArgument(format!(
            "{location}: random::multivariate_normal: {message}"
        )))
    };
    let (m, c) = (
        mean.shape_or_empty().to_vec(),
        cov.shape_or_empty().to_vec(),
    );
    if m.is_empty() || c.len() < 2 {
        return usage(format!(
            "needs mean of rank ≥ 1 and cov of rank ≥ 2, got {m:?} and {c:?}"
        ));
    }
    let n = m[m.len() - 1];
    if c[c.len() - 2..] != [n, n] {
        return usage(format!(
            "cov must be (..., {n}, {n}) for a mean of {n}, got {c:?}"
        ));
    }
    let batch = match shape {
        Some(s) => s.to_vec(),
        None => match jnp::broadcast_shapes(&m[..m.len() - 1], &c[..c.len() - 2]) {
            Some(b) => b,
            None => {
                return usage(format!(
                    "batch dimensions of {m:?} and {c:?} do not broadcast"
                ));
            }
        },
    };
    let promoted = crate::numpy::promote_args(&[mean, cov]);
    let (mean, cov) = (jnp::to_inexact(&promoted[0]), jnp::to_inexact(&promoted[1]));
    let factor = match method {
        MvnMethod::Cholesky => la::cholesky(&cov, false),
        MvnMethod::Eigh => {
            let (w, v) = la::eigh(&cov, false, true);
            jnp::multiply(&v, &jnp::expand_dims(&jnp::sqrt(&w), -2))
        }
        MvnMethod::Svd => {
            let (u, s, _) = la::svd(&cov, true, false);
            jnp::multiply(&u, &jnp::expand_dims(&jnp::sqrt(&s), -2))
        }
    };
    let z = normal(key, &[batch.as_slice(), &[n]].concat(), dtype);
    jnp::add(&mean, &jnp::einsum("...ij,...j->...i", &[&factor, &z]))
}

/// `jax.random.orthogonal(key, n, shape, dtype, m)`: Haar-random n×m
/// matrices with orthonormal columns (or rows, when n < m): the Q of a
/// normal matrix's QR with its columns' signs fixed by R's diagonal.
#[track_caller]
pub fn orthogonal(key: impl IntoKey, n: i64, shape: &[i64], dtype: DType, m: Option<i64>) -> Array {
    let m = m.unwrap_or(n);
    let z = normal(key, &[shape, &[n.max(m), n.min(m)]].concat(), dtype);
    let (q, r) = la::qr(&z, la::QrMode::Reduced);
    let d = la::diagonal(&r, 0);
    let x = jnp::multiply(&q, &jnp::expand_dims(&jnp::sign(&d), -2));
    if n < m { jnp::matrix_transpose(&x) } else { x }
}
