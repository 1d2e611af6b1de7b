//! `jax.numpy.linalg`'s functions built from products and reductions:
//! norms (vector and matrix orders), `matrix_power`, `multi_dot`, `cross`,
//! and the array-API forms of `matmul`, `outer`, `tensordot`, `trace`,
//! `diagonal`, `vecdot` and `matrix_transpose`, as JAX computes them;
//! `cholesky`; and (in `decompositions`) what the LU, QR, eigen- and
//! singular value decompositions give: `solve`, `inv`, `det`, `eigh`,
//! `svd`, `pinv`, `lstsq` and the rest.

mod decompositions;

pub use decompositions::{
    QrMode, cond, det, eig, eigh, eigvals, eigvalsh, inv, lstsq, matrix_rank, pinv, qr, qr_r,
    slogdet, solve, svd, svdvals, tensorinv, tensorsolve,
};

use super::{abs, arrays, products, to_inexact, usage};
use crate::array::Array;
use crate::lax;

/// A vector or matrix norm's order (JAX's `ord`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ord {
    /// A power `p`: `(Σ |x|^p)^(1/p)` for vectors (2 is Euclidean, 1 the
    /// sum of magnitudes, 0 the count of nonzeros); for matrices 1 and -1
    /// are the largest and smallest column sums.
    P(f64),
    /// The largest magnitude (vectors), the largest row sum (matrices).
    Inf,
    /// The smallest magnitude (vectors), the smallest row sum (matrices).
    NegInf,
    /// The Frobenius norm (matrices).
    Fro,
    /// The nuclear norm, the sum of the singular values (matrices).
    Nuc,
}

/// `jnp.linalg.vector_norm(x, axis, keepdims, ord)` over `axis` (all axes
/// for `None`).
#[track_caller]
pub fn vector_norm(x: &Array, axis: Option<&[i64]>, keepdims: bool, ord: Ord) -> Array {
    let x = to_inexact(x);
    let c = |v: f64| lax::convert_element_type(&Array::weak_scalar(v), x.dtype_or_bool());
    match ord {
        Ord::P(2.0) => super::sqrt(&super::sum(&lax::mul(&x, &x), axis, keepdims)),
        Ord::Fro => super::sqrt(&super::sum(&lax::mul(&x, &x), axis, keepdims)),
        Ord::Inf => super::max(&abs(&x), axis, keepdims),
        Ord::NegInf => super::min(&abs(&x), axis, keepdims),
        Ord::Nuc => usage(
            "linalg.vector_norm",
            "the nuclear norm is a matrix norm".to_string(),
        ),
        Ord::P(1.0) => super::sum(&abs(&x), axis, keepdims),
        Ord::P(0.0) => {
            let nonzero = lax::convert_element_type(&lax::ne(&x, &c(0.0)), x.dtype_or_bool());
            super::sum(&nonzero, axis, keepdims)
        }
        Ord::P(p) => {
            let total = super::sum(&super::power(&abs(&x), &c(p)), axis, keepdims);
            super::power(&total, &c(1.0 / p))
        }
    }
}

/// `jnp.linalg.matrix_norm(x, keepdims, ord)` over the last two axes:
/// Frobenius, the largest / smallest column (`P(±1)`) or row (`±Inf`)
/// sum of magnitudes, the largest / smallest singular value (`P(±2)`), or
/// their sum (`Nuc`).
#[track_caller]
pub fn matrix_norm(x: &Array, keepdims: bool, ord: Ord) -> Array {
    if x.ndim_or_zero() < 2 {
        return usage(
            "linalg.matrix_norm",
            format!("needs rank 2 or more, got {}", x.ndim_or_zero()),
        );
    }
    let x = to_inexact(x);
    let rows_then_max = |sum_axis: i64, reduce_axis: i64, largest: bool| {
        let sums = super::sum(&abs(&x), Some(&[sum_axis]), true);
        let out = match largest {
            true => super::max(&sums, Some(&[reduce_axis]), true),
            false => super::min(&sums, Some(&[reduce_axis]), true),
        };
        if keepdims {
            out
        } else {
            super::squeeze(&out, Some(&[-2, -1]))
        }
    };
    match ord {
        Ord::Fro => vector_norm(&x, Some(&[-2, -1]), keepdims, Ord::Fro),
        Ord::P(1.0) => rows_then_max(-2, -1, true),
        Ord::P(-1.0) => rows_then_max(-2, -1, false),
        Ord::Inf => rows_then_max(-1, -2, true),
        Ord::NegInf => rows_then_max(-1, -2, false),
        Ord::P(2.0) | Ord::P(-2.0) | Ord::Nuc => {
            let s = svdvals(&x, false);
            let out = match ord {
                Ord::Nuc => super::sum(&s, Some(&[-1]), false),
                Ord::P(2.0) => super::max(&s, Some(&[-1]), false),
                _ => super::min(&s, Some(&[-1]), false),
            };
            if keepdims {
                super::expand_dims(&super::expand_dims(&out, -1), -1)
            } else {
                out
            }
        }
        Ord::P(p) => usage(
            "linalg.matrix_norm",
            format!("ord {p} is not a matrix norm (1, -1, 2, -2, inf, -inf, Fro, Nuc are)"),
        ),
    }
}

/// `jnp.linalg.norm(x, ord, axis, keepdims)`: a vector norm over one axis
/// (or the flattened array), a matrix norm over two; `None` order is
/// Euclidean (Frobenius for matrices).
#[track_caller]
pub fn norm(x: &Array, ord: Option<Ord>, axis: Option<&[i64]>, keepdims: bool) -> Array {
    match (axis, ord) {
        (None, None) => vector_norm(x, None, keepdims, Ord::P(2.0)),
        (None, Some(ord)) => match x.ndim_or_zero() {
            1 => vector_norm(x, None, keepdims, ord),
            2 => matrix_norm(x, keepdims, ord),
            r => usage(
                "linalg.norm",
                format!("an order needs an axis for rank {r}"),
            ),
        },
        (Some([_]), ord) => vector_norm(x, axis, keepdims, ord.unwrap_or(Ord::P(2.0))),
        (Some(&[a, b]), ord) => {
            let rank = x.ndim_or_zero();
            let (a, b) = (
                a.rem_euclid(rank.max(1) as i64),
                b.rem_euclid(rank.max(1) as i64),
            );
            let perm: Vec<i64> = (0..rank as i64)
                .filter(|d| *d != a && *d != b)
                .chain([a, b])
                .collect();
            let out = matrix_norm(
                &super::transpose(x, Some(&perm)),
                false,
                ord.unwrap_or(Ord::Fro),
            );
            if !keepdims {
                return out;
            }
            let kept: Vec<i64> = x
                .shape_or_empty()
                .iter()
                .enumerate()
                .map(|(d, &n)| if d as i64 == a || d as i64 == b { 1 } else { n })
                .collect();
            super::reshape(&out, &kept)
        }
        (Some(axes), _) => usage(
            "linalg.norm",
            format!("takes one or two axes, got {axes:?}"),
        ),
    }
}

/// `jnp.linalg.matrix_power(a, n)`: `a` multiplied by itself `n` times by
/// repeated squaring (the identity for 0); a negative `n` is the inverse's
/// power.
#[track_caller]
pub fn matrix_power(a: &Array, n: i64) -> Array {
    let shape = a.shape_or_empty().to_vec();
    if shape.len() < 2 || shape[shape.len() - 1] != shape[shape.len() - 2] {
        return usage(
            "linalg.matrix_power",
            format!("needs square matrices, got shape {shape:?}"),
        );
    }
    if n < 0 {
        return matrix_power(&inv(a), -n);
    }
    if n == 0 {
        let size = shape[shape.len() - 1];
        let eye = super::eye(size, a.dtype_or_bool());
        return super::broadcast_to(&eye, &shape);
    }
    let (mut power, mut result): (Option<Array>, Option<Array>) = (None, None);
    let mut n = n;
    while n > 0 {
        power = Some(match power {
            None => a.clone(),
            Some(z) => super::matmul(&z, &z),
        });
        let bit = n % 2;
        n /= 2;
        if bit == 1 {
            let z = power.clone().unwrap_or_else(|| a.clone());
            result = Some(match result {
                None => z,
                Some(r) => super::matmul(&r, &z),
            });
        }
    }
    result.unwrap_or_else(|| a.clone())
}

/// `jnp.linalg.multi_dot(arrays)`: the matrix product of the chain (the
/// first may be a vector, and so may the last; the others are matrices),
/// as JAX computes it: one [`einsum`](super::einsum), so the products go
/// in the cheapest order.
#[track_caller]
pub fn multi_dot(arrays: &[&Array]) -> Array {
    if arrays.len() < 2 {
        return usage("linalg.multi_dot", "needs at least two arrays".into());
    }
    if let Some(e) = super::first_error(arrays) {
        return e;
    }
    let last = arrays.len() - 1;
    let letters: Vec<char> = ('a'..='z').chain('A'..='Z').collect();
    if arrays.len() >= letters.len() {
        return usage(
            "linalg.multi_dot",
            format!("{} arrays are more than it can name", arrays.len()),
        );
    }
    let mut terms = Vec::with_capacity(arrays.len());
    for (i, x) in arrays.iter().enumerate() {
        let rank = x.ndim_or_zero();
        let end = i == 0 || i == last;
        if rank != 2 && !(end && rank == 1) {
            let which = match i {
                0 => "the first".to_string(),
                i if i == last => "the last".to_string(),
                i => format!("array {i}"),
            };
            return usage(
                "linalg.multi_dot",
                format!(
                    "{which} has rank {rank}; the ends must be vectors or matrices, the others matrices"
                ),
            );
        }
        let term: String = match (rank, i) {
            (1, 0) => letters[1].to_string(),
            (1, _) => letters[i].to_string(),
            _ => format!("{}{}", letters[i], letters[i + 1]),
        };
        terms.push(term);
    }
    let mut output = String::new();
    if arrays[0].ndim_or_zero() == 2 {
        output.push(letters[0]);
    }
    if arrays[last].ndim_or_zero() == 2 {
        output.push(letters[last + 1]);
    }
    super::einsum(&format!("{}->{output}", terms.join(",")), arrays)
}

/// `jnp.cross(a, b)` / `jnp.linalg.cross`: the cross product of 3-vectors
/// along the last axis (of 2-vectors: the scalar z component).
#[track_caller]
pub fn cross(a: &Array, b: &Array) -> Array {
    let n = a.shape_or_empty().last().copied().unwrap_or(0);
    if n != b.shape_or_empty().last().copied().unwrap_or(0) || !(n == 2 || n == 3) {
        return usage(
            "linalg.cross",
            format!(
                "needs 2- or 3-vectors along the last axis, got {:?} and {:?}",
                a.shape_or_empty(),
                b.shape_or_empty()
            ),
        );
    }
    let at = |x: &Array, i: i64| lax::index_in_dim(x, i, -1, false);
    let minus = |p: &Array, q: &Array| super::subtract(p, q);
    let times = |p: &Array, q: &Array| super::multiply(p, q);
    if n == 2 {
        return minus(&times(&at(a, 0), &at(b, 1)), &times(&at(a, 1), &at(b, 0)));
    }
    let cx = minus(&times(&at(a, 1), &at(b, 2)), &times(&at(a, 2), &at(b, 1)));
    let cy = minus(&times(&at(a, 2), &at(b, 0)), &times(&at(a, 0), &at(b, 2)));
    let cz = minus(&times(&at(a, 0), &at(b, 1)), &times(&at(a, 1), &at(b, 0)));
    super::stack(&[&cx, &cy, &cz], -1)
}

/// `jnp.linalg.cholesky(a, upper)`: the Cholesky factor of Hermitian
/// positive-definite matrices over the last two axes, lower (`a = L Lᴴ`)
/// or upper (`a = Uᴴ U`); NaNs where `a` is not positive definite.
#[track_caller]
pub fn cholesky(a: &Array, upper: bool) -> Array {
    let l = lax::linalg::cholesky(&to_inexact(a), true);
    if upper { lax::linalg::adjoint(&l) } else { l }
}

/// `jnp.linalg.matmul`: [`matmul`](super::matmul).
#[track_caller]
pub fn matmul(a: &Array, b: &Array) -> Array {
    super::matmul(a, b)
}

/// `jnp.linalg.outer(a, b)`: the outer product of two vectors.
#[track_caller]
pub fn outer(a: &Array, b: &Array) -> Array {
    if a.ndim_or_zero() != 1 || b.ndim_or_zero() != 1 {
        return usage(
            "linalg.outer",
            format!(
                "takes vectors, got ranks {} and {}",
                a.ndim_or_zero(),
                b.ndim_or_zero()
            ),
        );
    }
    super::outer(a, b)
}

/// `jnp.linalg.tensordot(a, b, n)`: the last `n` axes of `a` with the
/// first `n` of `b`.
#[track_caller]
pub fn tensordot(a: &Array, b: &Array, n: usize) -> Array {
    products::tensordot_n(a, b, n)
}

/// `jnp.linalg.trace(x, offset)`: the sum of the diagonal of the last two
/// axes.
#[track_caller]
pub fn trace(x: &Array, offset: i64) -> Array {
    arrays::trace(x, offset, -2, -1)
}

/// `jnp.linalg.diagonal(x, offset)`: the diagonal of the last two axes.
#[track_caller]
pub fn diagonal(x: &Array, offset: i64) -> Array {
    arrays::diagonal(x, offset, -2, -1)
}

/// `jnp.linalg.vecdot(a, b, axis)`: [`vecdot`](super::vecdot).
#[track_caller]
pub fn vecdot(a: &Array, b: &Array, axis: i64) -> Array {
    products::vecdot(a, b, axis)
}

/// `jnp.linalg.matrix_transpose`: the last two axes swapped.
#[track_caller]
pub fn matrix_transpose(x: &Array) -> Array {
    arrays::matrix_transpose(x)
}
