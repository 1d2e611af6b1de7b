//! `jax.numpy`'s index helpers: `ix_`, `ravel_multi_index` and
//! `fill_diagonal`, as JAX computes them.

use oxla_core::DType;

use super::usage;
use crate::array::Array;
use crate::lax;

/// `jnp.ix_(*args)`: an open mesh of 1-D integer arrays: argument `i`
/// shaped to be `n_i` along dimension `i` and 1 along the others.
#[track_caller]
pub fn ix_(args: &[&Array]) -> Vec<Array> {
    let n = args.len();
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let shape = a.shape_or_empty();
            if shape.len() != 1 {
                return usage(
                    "ix_",
                    format!("arguments must be 1-dimensional, got shape {shape:?}"),
                );
            }
            if a.dtype_or_bool() == DType::Bool {
                return usage(
                    "ix_",
                    "boolean arguments are not implemented (as JAX)".into(),
                );
            }
            let mut out = vec![1; n];
            out[i] = shape[0];
            lax::broadcast_in_dim(a, &out, &[i as i64])
        })
        .collect()
}

/// How [`ravel_multi_index`] treats an index out of its dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexMode {
    /// An error (the indices must be concrete).
    #[default]
    Raise,
    /// Taken modulo the dimension.
    Wrap,
    /// Clamped to the dimension.
    Clip,
}

/// `jnp.ravel_multi_index(multi_index, dims, mode, order)`: the flat
/// index of each coordinate tuple (one integer array per dimension) in
/// an array of shape `dims`, row-major (`fortran_order` false) or
/// column-major.
#[track_caller]
pub fn ravel_multi_index(
    multi_index: &[&Array],
    dims: &[i64],
    mode: IndexMode,
    fortran_order: bool,
) -> Array {
    if multi_index.len() != dims.len() {
        return usage(
            "ravel_multi_index",
            format!(
                "needs one index array per dimension: {} for {dims:?}",
                multi_index.len()
            ),
        );
    }
    if let Some(bad) = multi_index.iter().find(|i| !i.dtype_or_bool().is_int()) {
        return usage(
            "ravel_multi_index",
            format!("only integer indices, got {}", bad.dtype_or_bool()),
        );
    }
    let dtype = oxla_core::promotion::default_int(crate::config::x64_enabled());
    let mut indices = Vec::with_capacity(dims.len());
    for (index, &d) in multi_index.iter().zip(dims) {
        let index = lax::convert_element_type(index, dtype);
        let size = super::scalar_like(&index, d as f64);
        indices.push(match mode {
            IndexMode::Raise => {
                let Ok(host) = index.to_vec::<i64>() else {
                    return usage(
                        "ravel_multi_index",
                        "mode Raise needs concrete indices (under jit use Wrap or Clip)".into(),
                    );
                };
                if host.iter().any(|&v| v < 0 || v >= d) {
                    return usage(
                        "ravel_multi_index",
                        "invalid entry in coordinates array".into(),
                    );
                }
                index
            }
            IndexMode::Wrap => super::remainder(&index, &size),
            IndexMode::Clip => super::clip(
                &index,
                &super::scalar_like(&index, 0.0),
                &lax::sub(&size, &super::scalar_like(&index, 1.0)),
            ),
        });
    }
    let mut strides = vec![1i64; dims.len()];
    if fortran_order {
        for i in 1..dims.len() {
            strides[i] = strides[i - 1] * dims[i - 1];
        }
    } else {
        for i in (0..dims.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * dims[i + 1];
        }
    }
    indices
        .iter()
        .zip(strides)
        .fold(super::zeros(&[], dtype), |acc, (i, s)| {
            super::add(&acc, &lax::mul(i, &super::scalar_like(i, s as f64)))
        })
}

/// `jnp.fill_diagonal(a, val, inplace=False)`: `a` with its main diagonal
/// (`a[i, i, ...]`, all dimensions equal beyond two) set to `val`, a
/// scalar or values repeated along the diagonal.
#[track_caller]
pub fn fill_diagonal(a: &Array, val: &Array) -> Array {
    let shape = a.shape_or_empty().to_vec();
    if shape.len() < 2 {
        return usage("fill_diagonal", "array must be at least 2-d".into());
    }
    if shape.len() > 2 && shape.iter().any(|&d| d != shape[0]) {
        return usage(
            "fill_diagonal",
            "all dimensions of input must be of equal length".into(),
        );
    }
    let n = shape.iter().copied().min().unwrap_or(0);
    let val = lax::convert_element_type(val, a.dtype_or_bool());
    // The value at diagonal position i, laid along the first dimension.
    let along = if val.ndim_or_zero() == 0 {
        super::broadcast_to(&val, &[shape[0]])
    } else {
        let flat = super::ravel(&val);
        let len = flat.size_or_one().max(1);
        let tiled = super::tile(&flat, &[(n + len - 1) / len]);
        let diagonal = lax::slice_in_dim(&tiled, 0, Some(n), 1, 0);
        lax::pad(
            &diagonal,
            &super::scalar_like(&diagonal, 0.0),
            &[(0, shape[0] - n, 0)],
        )
    };
    let rank = shape.len();
    let values = lax::broadcast_in_dim(&along, &shape, &[0]);
    let first = lax::broadcasted_iota(DType::I32, &shape, 0);
    let on_diagonal = (1..rank).fold(super::ones(&shape, DType::Bool), |mask, d| {
        lax::and(
            &mask,
            &lax::eq(&first, &lax::broadcasted_iota(DType::I32, &shape, d)),
        )
    });
    lax::select(&on_diagonal, &values, a)
}
