//! `oxla::numpy`: functions named as in `jax.numpy`, with its type
//! promotion (weak types included) and broadcasting.

use oxla_core::promotion::{default_float, promote};
use oxla_core::{DType, Scalar};

use crate::array::Array;
use crate::config::x64_enabled;
use crate::error::{Error, Result};
use crate::lax;

mod arrays;
mod bits;
mod complex;
mod creation;
mod division;
mod dtype_kinds;
mod einsum;
pub mod fft;
mod functional;
mod histograms;
mod index_tricks;
mod integers;
pub mod linalg;
mod logaddexp;
mod math;
mod npy_files;
mod ordering;
mod padding;
mod placement;
mod products;
mod reductions;
mod selection;
mod sets;
mod signals;
mod statistics;
mod tile;
mod vectorize;
mod windows;

pub use arrays::{
    Block, append, array_split, atleast_1d, atleast_2d, atleast_3d, block, broadcast_arrays,
    column_stack, concat, diag, diag_indices, diagflat, diagonal, diff, dsplit, dstack, ediff1d,
    empty, empty_like, flip, fliplr, flipud, hsplit, hstack, identity, indices, matrix_transpose,
    meshgrid, ndim, permute_dims, ravel, repeat, resize, roll, rot90, shape, size, trace, tri,
    tril_indices, tril_indices_from, triu_indices, triu_indices_from, unstack, vander, vsplit,
    vstack,
};
pub use bits::{BitOrder, packbits, unpackbits};
pub use complex::{angle, conj, conjugate, imag, iscomplex, iscomplexobj, isreal, isrealobj, real};
pub use creation::{
    array, asarray, astype, copy, diag_indices_from, geomspace, logspace, promote_types,
    result_type, rollaxis,
};
pub use division::{divmod, floor_divide, fmod, remainder};
pub use dtype_kinds::{Casting, DTypeClass, can_cast, isdtype, issubdtype};
pub use einsum::{EinsumPath, einsum, einsum_path};
pub use functional::{
    Piece, apply_along_axis, apply_over_axes, fromfunction, mask_indices, piecewise, trim_zeros,
};
pub use histograms::{Bins, histogram, histogram_bin_edges, histogram2d, histogramdd};
pub use index_tricks::{IndexMode, fill_diagonal, ix_, ravel_multi_index};
pub use integers::{bincount, gcd, isin, lcm, modf, unravel_index};
pub use linalg::cross;
pub use logaddexp::logaddexp;
pub use math::{
    absolute, acos, acosh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_count,
    bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor,
    copysign, deg2rad, degrees, fabs, float_power, fmax, fmin, frexp, heaviside, hypot, i0, invert,
    isinf, isnan, isneginf, isposinf, ldexp, left_shift, log2, log10, logaddexp2, logical_and,
    logical_or, logical_xor, r#mod, nan_to_num, nextafter, positive, pow, rad2deg, radians,
    reciprocal, right_shift, rint, round, signbit, sinc, spacing, true_divide, trunc,
};
pub use npy_files::{load, load_npz, save, savez, savez_compressed};
pub use ordering::{argpartition, lexsort, partition, sort_complex};
pub use padding::{PadMode, pad};
pub use placement::{Positions, choose, delete, insert, place, put, put_along_axis};
pub use products::{
    allclose, array_equal, array_equiv, digitize, inner, interp, isclose, kron, matvec, polyval,
    searchsorted, select, tensordot, tensordot_n, trapezoid, vdot, vecdot, vecmat,
};
pub use reductions::{
    all, amax, amin, any, average, count_nonzero, cumulative_prod, cumulative_sum, median,
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmedian, nanmin, nanpercentile,
    nanprod, nanquantile, nanstd, nansum, nanvar, percentile, ptp, quantile,
};
pub use selection::{compress, extract};
pub use sets::{
    UniqueAll, UniqueOptions, intersect1d, setdiff1d, setxor1d, union1d, unique, unique_all,
    unique_counts, unique_inverse, unique_values, unique_with,
};
pub use signals::{
    convolve, correlate, poly, polyadd, polyder, polydiv, polyfit, polyfit_full, polyint, polymul,
    polysub, roots,
};
pub use statistics::{argwhere, corrcoef, cov, flatnonzero, gradient, nonzero, unwrap};
pub use tile::tile;
pub use vectorize::{Vectorize, vectorize};
pub use windows::{bartlett, blackman, hamming, hanning, kaiser};

/// The dtype and weakness all of `xs` promote to.
fn promoted_type(xs: &[&Array]) -> (DType, bool) {
    let mut avals = xs.iter().filter_map(|x| x.aval().ok());
    let Some(first) = avals.next() else {
        return (DType::F32, false);
    };
    avals.fold((first.dtype, first.weak_type), |(d, w), a| {
        promote(d, w, a.dtype, a.weak_type, x64_enabled())
    })
}

/// Converts every operand to the promoted type.
#[track_caller]
pub(crate) fn promote_args(xs: &[&Array]) -> Vec<Array> {
    let (dtype, weak) = promoted_type(xs);
    xs.iter()
        .map(|x| lax::convert_element_type_weak(x, dtype, weak && x.weak_type()))
        .collect()
}

/// Gives lower-rank operands leading size-1 dims (rank-0 ones stay scalars).
#[track_caller]
fn broadcast_ranks(xs: Vec<Array>) -> Vec<Array> {
    let rank = xs.iter().map(Array::ndim_or_zero).max().unwrap_or(0);
    xs.into_iter()
        .map(|x| {
            let r = x.ndim_or_zero();
            if r == 0 || r == rank || x.check().is_err() {
                return x;
            }
            let mut shape = vec![1i64; rank - r];
            shape.extend_from_slice(x.shape_or_empty());
            let dims: Vec<i64> = ((rank - r) as i64..rank as i64).collect();
            lax::broadcast_in_dim(&x, &shape, &dims)
        })
        .collect()
}

macro_rules! elementwise2 {
    ($($name:ident => $lax:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let v = broadcast_ranks(promote_args(&[x, y]));
            lax::$lax(&v[0], &v[1])
        }
    )*};
}

elementwise2! {
    add => add: "`jnp.add`";
    subtract => sub: "`jnp.subtract`";
    multiply => mul: "`jnp.multiply`";
    maximum => max: "`jnp.maximum`";
    minimum => min: "`jnp.minimum`";
    equal => eq: "`jnp.equal`";
    not_equal => ne: "`jnp.not_equal`";
    less => lt: "`jnp.less`";
    less_equal => le: "`jnp.less_equal`";
    greater => gt: "`jnp.greater`";
    greater_equal => ge: "`jnp.greater_equal`";
}

/// Converts integer and bool operands to the default float (as true
/// division and transcendental functions do).
#[track_caller]
pub(crate) fn to_inexact(x: &Array) -> Array {
    match x.aval() {
        Ok(a) if !a.dtype.is_inexact() => {
            lax::convert_element_type_weak(x, default_float(x64_enabled()), a.weak_type)
        }
        _ => x.clone(),
    }
}

macro_rules! float_binary {
    ($($name:ident => $lax:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let v = promote_args(&[x, y]);
            let v = broadcast_ranks(vec![to_inexact(&v[0]), to_inexact(&v[1])]);
            lax::$lax(&v[0], &v[1])
        }
    )*};
}

float_binary! {
    divide => div: "`jnp.true_divide` (`/`): integers divide as floats.";
    arctan2 => atan2: "`jnp.arctan2`: integers as floats.";
}

/// `jnp.power`: a static integer exponent (a Rust integer, which is a
/// weakly typed concrete scalar, as a Python int is in JAX) gives
/// `lax::integer_pow`, whose derivative `n x^(n-1)` is 0 for `n = 0` even
/// at `x = 0`; other integer (and bool) operands give an integer power by
/// binary exponentiation, as JAX computes it (a negative exponent gives 0,
/// and 0 ** 0 is 1); otherwise both are promoted to a float type and
/// raised with `lax::pow`.
#[track_caller]
pub fn power(x: &Array, y: &Array) -> Array {
    if let Some(n) = static_integer(y) {
        let x = match x.aval() {
            Ok(a) if a.dtype == DType::Bool => {
                as_dtype(x, oxla_core::promotion::default_int(x64_enabled()))
            }
            _ => x.clone(),
        };
        return lax::integer_pow(&x, n);
    }
    let v = promote_args(&[x, y]);
    let dtype = v[0].dtype_or_bool();
    if dtype.is_int() || dtype == DType::Bool {
        let int = if dtype == DType::Bool {
            oxla_core::promotion::default_int(x64_enabled())
        } else {
            dtype
        };
        let v = broadcast_ranks(vec![as_dtype(&v[0], int), as_dtype(&v[1], int)]);
        return integer_power(&v[0], &v[1]);
    }
    let v = broadcast_ranks(vec![to_inexact(&v[0]), to_inexact(&v[1])]);
    lax::pow(&v[0], &v[1])
}

/// The value of `y` when it is a static integer exponent: a concrete,
/// weakly typed, rank-0 integer that fits `i32` (JAX's `operator.index(x2)`
/// on a Python int).
fn static_integer(y: &Array) -> Option<i32> {
    let aval = y.aval().ok()?;
    if y.is_traced() || !aval.weak_type || aval.rank() != 0 || !aval.dtype.is_int() {
        return None;
    }
    match aval.dtype {
        DType::I32 => y.item::<i32>().ok(),
        DType::I64 => i32::try_from(y.item::<i64>().ok()?).ok(),
        _ => None,
    }
}

/// `base ** exponent` of integers by binary exponentiation over the
/// exponent's 6 low bits (JAX's `_pow_int_int`: more would overflow for
/// any base above 1).
fn integer_power(base: &Array, exponent: &Array) -> Array {
    let zero = full_like(exponent, 0.0);
    let one = full_like(exponent, 1.0);
    let starts_at_zero = lax::and(&lax::eq(base, &zero), &lax::ne(exponent, &zero));
    let mut acc = lax::select_n(&starts_at_zero, &[&one, &zero]);
    let (mut base, mut exponent) = (base.clone(), exponent.clone());
    for _ in 0..6 {
        let odd = lax::ne(&lax::and(&exponent, &one), &zero);
        acc = lax::select_n(&odd, &[&acc, &lax::mul(&acc, &base)]);
        base = lax::mul(&base, &base);
        exponent = lax::shift_right_logical(&exponent, &one);
    }
    acc
}

macro_rules! float_unary {
    ($($name:ident => $lax:ident;)*) => {$(
        #[doc = concat!("`jnp.", stringify!($name), "`")]
        #[track_caller]
        pub fn $name(x: &Array) -> Array {
            lax::$lax(&to_inexact(x))
        }
    )*};
}

float_unary! {
    exp => exp; exp2 => exp2; expm1 => expm1; log => log; log1p => log1p; sqrt => sqrt;
    cbrt => cbrt; tanh => tanh; sin => sin; cos => cos; tan => tan; arcsin => asin;
    arccos => acos; arctan => atan; sinh => sinh; cosh => cosh; arcsinh => asinh;
    arccosh => acosh; arctanh => atanh;
}

/// `jnp.abs`.
#[track_caller]
pub fn abs(x: &Array) -> Array {
    lax::abs(x)
}

/// `jnp.negative`.
#[track_caller]
pub fn negative(x: &Array) -> Array {
    lax::neg(x)
}

/// `jnp.sign`.
#[track_caller]
pub fn sign(x: &Array) -> Array {
    lax::sign(x)
}

/// `jnp.square`.
#[track_caller]
pub fn square(x: &Array) -> Array {
    lax::square(x)
}

/// `jnp.floor`.
#[track_caller]
pub fn floor(x: &Array) -> Array {
    lax::floor(x)
}

/// `jnp.ceil`.
#[track_caller]
pub fn ceil(x: &Array) -> Array {
    lax::ceil(x)
}

/// `jnp.where(condition, x, y)`.
#[track_caller]
pub fn where_(condition: &Array, x: &Array, y: &Array) -> Array {
    let v = promote_args(&[x, y]);
    let all = broadcast_ranks(vec![condition.clone(), v[0].clone(), v[1].clone()]);
    let shape = broadcast_shape(&all.iter().collect::<Vec<_>>());
    let full: Vec<Array> = all.iter().map(|a| broadcast_to(a, &shape)).collect();
    lax::select_n(&full[0], &[&full[2], &full[1]])
}

/// `jnp.clip(x, lo, hi)`.
#[track_caller]
pub fn clip(x: &Array, lo: &Array, hi: &Array) -> Array {
    minimum(&maximum(x, lo), hi)
}

/// The numpy broadcast of the operands' shapes (assumed rank-aligned or scalar).
fn broadcast_shape(xs: &[&Array]) -> Vec<i64> {
    let rank = xs.iter().map(|x| x.ndim_or_zero()).max().unwrap_or(0);
    (0..rank)
        .map(|d| {
            xs.iter()
                .filter(|x| x.ndim_or_zero() == rank)
                .map(|x| x.shape_or_empty()[d])
                .fold(1, |acc, s| if s != 1 { s } else { acc })
        })
        .collect()
}

/// `jnp.broadcast_to`.
#[track_caller]
pub fn broadcast_to(x: &Array, shape: &[i64]) -> Array {
    if x.shape_or_empty() == shape {
        return x.clone();
    }
    let offset = shape.len().saturating_sub(x.ndim_or_zero()) as i64;
    let dims: Vec<i64> = (0..x.ndim_or_zero() as i64).map(|d| d + offset).collect();
    lax::broadcast_in_dim(x, shape, &dims)
}

/// Normalizes possibly negative axes; `None` means all axes.
fn axes_of(x: &Array, axis: Option<&[i64]>) -> Vec<i64> {
    let rank = x.ndim_or_zero() as i64;
    match axis {
        None => (0..rank).collect(),
        Some(a) => a
            .iter()
            .map(|&d| if d < 0 { d + rank } else { d })
            .collect(),
    }
}

/// `reduced` (`x` reduced over `axes`), with the reduced axes kept as size
/// 1 when `keepdims`.
#[track_caller]
fn finish_reduction(reduced: Array, x: &Array, axes: &[i64], keepdims: bool) -> Array {
    if !keepdims {
        return reduced;
    }
    let shape: Vec<i64> = x
        .shape_or_empty()
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&(i as i64)) { 1 } else { d })
        .collect();
    lax::reshape(&reduced, &shape)
}

/// Whether sums of this dtype are computed in f32 (as JAX upcasts f16/bf16).
fn upcast_for_sum(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::BF16)
}

/// The dtype JAX sums and multiplies `dtype` in (`_promote_integer_dtype`):
/// bools and signed ints narrower than the default int become it, unsigned
/// ints narrower than the default uint become that (both 64-bit with x64);
/// other types stay.
fn accumulation_dtype(dtype: DType) -> DType {
    let (int, uint) = if x64_enabled() {
        (DType::I64, DType::U64)
    } else {
        (DType::I32, DType::U32)
    };
    if dtype.is_unsigned_int() && dtype.byte_size() < uint.byte_size() {
        uint
    } else if (dtype == DType::Bool || dtype.is_signed_int()) && dtype.byte_size() < int.byte_size()
    {
        int
    } else {
        dtype
    }
}

/// `x` as `dtype`, unchanged (weak type included) when it already is.
fn as_dtype(x: &Array, dtype: DType) -> Array {
    if x.dtype_or_bool() == dtype {
        x.clone()
    } else {
        lax::convert_element_type(x, dtype)
    }
}

/// The dtype of a cumulative sum or product of `dtype`: bools count in the
/// default int; every other type keeps its own (as JAX's cumsum/cumprod).
fn cumulative_dtype(dtype: DType) -> DType {
    match dtype {
        DType::Bool => accumulation_dtype(dtype),
        other => other,
    }
}

/// `jnp.sum(x, axis, keepdims)`; bools and narrow ints sum as the default
/// int (or uint), f16/bf16 accumulate in f32.
#[track_caller]
pub fn sum(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let dtype = x.dtype_or_bool();
    let reduced = if upcast_for_sum(dtype) {
        let wide = lax::convert_element_type(x, DType::F32);
        lax::convert_element_type(&lax::reduce_sum(&wide, &axes), dtype)
    } else {
        lax::reduce_sum(&as_dtype(x, accumulation_dtype(dtype)), &axes)
    };
    finish_reduction(reduced, x, &axes, keepdims)
}

/// `jnp.prod(x, axis, keepdims)`.
#[track_caller]
pub fn prod(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let reduced = lax::reduce_prod(&as_dtype(x, accumulation_dtype(x.dtype_or_bool())), &axes);
    finish_reduction(reduced, x, &axes, keepdims)
}

/// `jnp.max(x, axis, keepdims)`.
#[track_caller]
pub fn max(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let reduced = lax::reduce_max(x, &axes);
    finish_reduction(reduced, x, &axes, keepdims)
}

/// `jnp.min(x, axis, keepdims)`.
#[track_caller]
pub fn min(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let reduced = lax::reduce_min(x, &axes);
    finish_reduction(reduced, x, &axes, keepdims)
}

/// `jnp.mean(x, axis, keepdims)`.
#[track_caller]
pub fn mean(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let axes = axes_of(x, axis);
    let count: i64 = axes
        .iter()
        .map(|&a| x.shape_or_empty().get(a as usize).copied().unwrap_or(1))
        .product();
    let total = sum(&to_inexact(x), Some(&axes), keepdims);
    divide(&total, &Array::weak_scalar(count as f64))
}

/// `jnp.var(x, axis, keepdims)` (population variance, ddof = 0).
#[track_caller]
pub fn var(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    let x = to_inexact(x);
    let centered = subtract(&x, &mean(&x, axis, true));
    mean(&square(&centered), axis, keepdims)
}

/// `jnp.std(x, axis, keepdims)`.
#[track_caller]
pub fn std(x: &Array, axis: Option<&[i64]>, keepdims: bool) -> Array {
    sqrt(&var(x, axis, keepdims))
}

/// The first operand that carries an error, as the result of an op that
/// inspects shapes before binding (so the original error is reported, not
/// a confusing one about the error array's shape).
pub(crate) fn first_error(xs: &[&Array]) -> Option<Array> {
    xs.iter().find(|x| x.check().is_err()).map(|x| (*x).clone())
}

/// An invalid-argument error array for `function` at the caller's line,
/// naming the operands' types as shape errors do (`matmul of f32[], f32[3]:
/// ...`).
#[track_caller]
fn invalid_args(function: &str, message: &str, operands: &[&Array]) -> Array {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    let types: Vec<String> = operands
        .iter()
        .map(|x| x.aval().map(ToString::to_string).unwrap_or_default())
        .collect();
    Array::error(Error::InvalidArgument(format!(
        "{location}: {function} of {}: {message}",
        types.join(", ")
    )))
}

/// An error array for `jnp.{function}`, naming the caller's line.
#[track_caller]
pub(crate) fn usage(function: &str, message: String) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    Array::error(Error::InvalidArgument(format!(
        "{location}: jnp.{function}: {message}"
    )))
}

/// A constant of `x`'s dtype (JAX's `_lax_const`).
pub(crate) fn scalar_like(x: &Array, value: f64) -> Array {
    lax::convert_element_type(&Array::weak_scalar(value), x.dtype_or_bool())
}

/// `jnp.broadcast_shapes` of two shapes (aligned at the right), if they
/// broadcast.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let rank = a.len().max(b.len());
    let at = |s: &[i64], i: usize| {
        let offset = rank - s.len();
        if i < offset { 1 } else { s[i - offset] }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// `jnp.matmul` with numpy's rules: 1-D operands are a row (left) or a
/// column (right) whose axis is removed from the result; leading (batch)
/// dims broadcast; `[..., m, k] @ [k, n]` is one product without batch dims.
#[track_caller]
pub fn matmul(x: &Array, y: &Array) -> Array {
    if let Some(e) = first_error(&[x, y]) {
        return e;
    }
    let v = promote_args(&[x, y]);
    let (x, y) = (&v[0], &v[1]);
    let preferred = Some(x.dtype_or_bool());
    let (xs, ys) = (x.shape_or_empty(), y.shape_or_empty());
    if let (Some(&k), Some(&k2)) = (xs.last(), ys.get(ys.len().saturating_sub(2)))
        && k != k2
    {
        let which = if ys.len() == 1 {
            "its only"
        } else {
            "its second-to-last"
        };
        return invalid_args(
            "matmul",
            &format!(
                "the last dimension of the left operand (size {k}) does not match {which} \
                 dimension of the right one (size {k2})"
            ),
            &[x, y],
        );
    }
    if x.ndim_or_zero() == 0 || y.ndim_or_zero() == 0 {
        return invalid_args("matmul", "needs operands of rank >= 1", &[x, y]);
    }
    let Some(plan) = MatmulPlan::of(xs, ys) else {
        return invalid_args(
            "matmul",
            &format!(
                "batch dims {:?} and {:?} do not broadcast",
                &xs[..xs.len().saturating_sub(2)],
                &ys[..ys.len().saturating_sub(2)]
            ),
            &[x, y],
        );
    };
    let squeezed = |t: &Array, dims: &[i64]| {
        if dims.is_empty() {
            t.clone()
        } else {
            lax::squeeze(t, dims)
        }
    };
    let (x, y) = (squeezed(x, &plan.x_squeeze), squeezed(y, &plan.y_squeeze));
    let (xr, yr) = (x.ndim_or_zero() as i64, y.ndim_or_zero() as i64);
    let y_contracting = yr - 1 - i64::from(ys.len() > 1);
    let out = lax::dot_general(
        &x,
        &y,
        (
            (&[xr - 1], &[y_contracting]),
            (&plan.x_batch, &plan.y_batch),
        ),
        preferred,
    );
    let out = crate::transform::support::transpose_if_needed(&out, &plan.permutation);
    if plan.both_squeezed.is_empty() {
        out
    } else {
        lax::expand_dims(&out, &plan.both_squeezed)
    }
}

/// How `jnp.matmul` maps its operands onto one `dot_general`, as JAX's:
/// batch dims of size 1 on one side are squeezed away and become free dims
/// of the other operand (no broadcast copies), equal ones are batch dims,
/// and a transpose puts the result's dims in numpy's order.
#[derive(Debug, PartialEq)]
struct MatmulPlan {
    /// Dims of the left operand squeezed away.
    x_squeeze: Vec<i64>,
    /// Dims of the right operand squeezed away.
    y_squeeze: Vec<i64>,
    /// Batch dims of the squeezed left operand.
    x_batch: Vec<i64>,
    /// Batch dims of the squeezed right operand.
    y_batch: Vec<i64>,
    /// The transpose from `dot_general`'s order to numpy's.
    permutation: Vec<i64>,
    /// Result dims of size 1 on both sides, squeezed and put back.
    both_squeezed: Vec<i64>,
}

impl MatmulPlan {
    /// The plan for operands of shapes `xs` and `ys` (rank >= 1), `None`
    /// when their batch dims do not broadcast.
    fn of(xs: &[i64], ys: &[i64]) -> Option<MatmulPlan> {
        let (x_mat, y_mat) = (xs.len() > 1, ys.len() > 1);
        let batch_of = |s: &[i64], mat: bool| {
            if mat {
                s[..s.len() - 2].to_vec()
            } else {
                vec![]
            }
        };
        let (xb, yb) = (batch_of(xs, x_mat), batch_of(ys, y_mat));
        let n = xb.len().max(yb.len());
        let padded = |b: Vec<i64>| -> Vec<Option<i64>> {
            std::iter::repeat_n(None, n - b.len())
                .chain(b.into_iter().map(Some))
                .collect()
        };
        let (mut x_squeeze, mut y_squeeze, mut both_squeezed) = (vec![], vec![], vec![]);
        let (mut x_batch, mut y_batch) = (vec![], vec![]);
        let (mut idx_batch, mut idx_x_other, mut idx_y_other) = (vec![], vec![], vec![]);
        for (i, (bx, by)) in padded(xb).into_iter().zip(padded(yb)).enumerate() {
            let i = i as i64;
            let x_at = (idx_batch.len() + idx_x_other.len() + x_squeeze.len()) as i64;
            let y_at = (idx_batch.len() + idx_y_other.len() + y_squeeze.len()) as i64;
            match (bx, by) {
                (None, _) => idx_y_other.push(i),
                (_, None) => idx_x_other.push(i),
                (Some(1), Some(1)) => {
                    x_squeeze.push(x_at);
                    y_squeeze.push(y_at);
                    both_squeezed.push(i);
                }
                (Some(1), _) => {
                    idx_y_other.push(i);
                    x_squeeze.push(x_at);
                }
                (_, Some(1)) => {
                    idx_x_other.push(i);
                    y_squeeze.push(y_at);
                }
                (Some(a), Some(b)) if a == b => {
                    x_batch.push((idx_batch.len() + idx_x_other.len()) as i64);
                    y_batch.push((idx_batch.len() + idx_y_other.len()) as i64);
                    idx_batch.push(i);
                }
                _ => return None,
            }
        }
        if x_mat {
            idx_x_other.push(n as i64);
        }
        if y_mat {
            idx_y_other.push(n as i64 + i64::from(x_mat));
        }
        // Positions in the result (with the squeezed-on-both dims left out).
        let order: Vec<i64> = idx_batch
            .into_iter()
            .chain(idx_x_other)
            .chain(idx_y_other)
            .collect();
        let mut permutation: Vec<i64> = (0..order.len() as i64).collect();
        permutation.sort_by_key(|&k| order[k as usize]);
        Some(MatmulPlan {
            x_squeeze,
            y_squeeze,
            x_batch,
            y_batch,
            permutation,
            both_squeezed,
        })
    }
}

/// `jnp.dot` (for 1-D and 2-D operands, as matmul).
#[track_caller]
pub fn dot(x: &Array, y: &Array) -> Array {
    matmul(x, y)
}

/// `jnp.outer`.
#[track_caller]
pub fn outer(x: &Array, y: &Array) -> Array {
    let n = x.size_or_one();
    let m = y.size_or_one();
    multiply(&lax::reshape(x, &[n, 1]), &lax::reshape(y, &[1, m]))
}

/// `jnp.reshape` (one dim may be -1).
#[track_caller]
pub fn reshape(x: &Array, shape: &[i64]) -> Array {
    let known: i64 = shape.iter().filter(|&&d| d != -1).product();
    let resolved: Vec<i64> = shape
        .iter()
        .map(|&d| {
            if d == -1 && known > 0 {
                x.size_or_one() / known
            } else {
                d
            }
        })
        .collect();
    lax::reshape(x, &resolved)
}

/// `jnp.transpose` (reverses the axes when `axes` is `None`).
#[track_caller]
pub fn transpose(x: &Array, axes: Option<&[i64]>) -> Array {
    let perm: Vec<i64> = match axes {
        Some(a) => {
            // A loop, not a closure: the error names the caller's line.
            let mut perm = Vec::with_capacity(a.len());
            for &d in a {
                match canonical_axis("transpose", x, d) {
                    Ok(d) => perm.push(d as i64),
                    Err(e) => return e,
                }
            }
            perm
        }
        None => (0..x.ndim_or_zero() as i64).rev().collect(),
    };
    lax::transpose(x, &perm)
}

/// `jnp.swapaxes`.
#[track_caller]
pub fn swapaxes(x: &Array, a: i64, b: i64) -> Array {
    let (a, b) = match (
        canonical_axis("swapaxes", x, a),
        canonical_axis("swapaxes", x, b),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let mut perm: Vec<i64> = (0..x.ndim_or_zero() as i64).collect();
    perm.swap(a, b);
    lax::transpose(x, &perm)
}

/// `jnp.concatenate`.
#[track_caller]
pub fn concatenate(xs: &[&Array], axis: i64) -> Array {
    let promoted = promote_args(xs);
    let refs: Vec<&Array> = promoted.iter().collect();
    let Some(first) = xs.first() else {
        return invalid_args("concatenate", "needs at least one array", xs);
    };
    match canonical_axis("concatenate", first, axis) {
        Ok(axis) => lax::concatenate(&refs, axis),
        Err(e) => e,
    }
}

/// `jnp.stack`.
#[track_caller]
pub fn stack(xs: &[&Array], axis: i64) -> Array {
    let rank = xs.first().map_or(0, |x| x.ndim_or_zero()) as i64 + 1;
    let canonical = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&canonical) {
        let message = format!("axis {axis} is out of bounds for a result of rank {rank}");
        return invalid_args("stack", &message, xs);
    }
    let axis = canonical;
    let expanded: Vec<Array> = xs.iter().map(|x| lax::expand_dims(x, &[axis])).collect();
    let refs: Vec<&Array> = expanded.iter().collect();
    concatenate(&refs, axis)
}

/// `jnp.expand_dims`.
#[track_caller]
pub fn expand_dims(x: &Array, axis: i64) -> Array {
    lax::expand_dims(x, &[axis])
}

/// `jnp.squeeze` (all size-1 dims when `axis` is `None`).
#[track_caller]
pub fn squeeze(x: &Array, axis: Option<&[i64]>) -> Array {
    let dims: Vec<i64> = match axis {
        Some(a) => axes_of(x, Some(a)),
        None => x
            .shape_or_empty()
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == 1)
            .map(|(i, _)| i as i64)
            .collect(),
    };
    lax::squeeze(x, &dims)
}

/// `shape` filled with `value` as JAX builds it: `broadcast_in_dim` of a
/// literal, so under a trace it is one equation (never host data captured as
/// a constant) and eagerly it is one dispatch. A 64-bit `dtype` without x64
/// is its 32-bit kind, as in JAX; a negative dimension is broadcast_in_dim's
/// shape error, carried by the returned array as by every other
/// array-returning function (constructors and ops agree: none returns a
/// `Result`).
#[track_caller]
fn filled(shape: &[i64], value: f64, dtype: DType) -> Array {
    let dtype = oxla_core::promotion::canonicalize(dtype, x64_enabled());
    let scalar = crate::transform::support::literal(value, dtype, false);
    lax::broadcast_in_dim(&scalar, shape, &[])
}

/// `jnp.zeros(shape, dtype)`.
#[track_caller]
pub fn zeros(shape: &[i64], dtype: DType) -> Array {
    filled(shape, 0.0, dtype)
}

/// `jnp.ones(shape, dtype)`.
#[track_caller]
pub fn ones(shape: &[i64], dtype: DType) -> Array {
    filled(shape, 1.0, dtype)
}

/// `jnp.full(shape, value, dtype)`.
#[track_caller]
pub fn full(shape: &[i64], value: f64, dtype: DType) -> Array {
    filled(shape, value, dtype)
}

/// `jnp.zeros_like(x)`.
#[track_caller]
pub fn zeros_like(x: &Array) -> Array {
    full_like(x, 0.0)
}

/// `jnp.full_like(x, value)`: an array like `x` (dtype, shape, weak type)
/// filled with `value`, a broadcast literal, never computed from `x`'s values.
#[track_caller]
pub fn full_like(x: &Array, value: f64) -> Array {
    match x.aval() {
        Ok(aval) => crate::transform::support::full(aval, value),
        Err(e) => Array::error(e),
    }
}

/// `jnp.ones_like(x)`.
#[track_caller]
pub fn ones_like(x: &Array) -> Array {
    full_like(x, 1.0)
}

/// `jnp.arange(start, stop, step)` as `dtype`.
#[track_caller]
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Array {
    let n = ((stop - start) / step).ceil().max(0.0) as i64;
    let i = lax::iota(dtype, &[n], 0);
    if start == 0.0 && step == 1.0 {
        return i;
    }
    // The weak float scalars would promote an integer iota to a float; the
    // result keeps `dtype`, as JAX's does.
    let values = add(
        &multiply(&i, &Array::weak_scalar(step)),
        &Array::weak_scalar(start),
    );
    as_dtype(&values, dtype)
}

/// `jnp.linspace(start, stop, num)` (endpoint included), as `dtype`.
#[track_caller]
pub fn linspace(start: f64, stop: f64, num: i64, dtype: DType) -> Array {
    let step = if num > 1 {
        (stop - start) / (num - 1) as f64
    } else {
        0.0
    };
    let i = lax::iota(dtype, &[num], 0);
    add(
        &multiply(&i, &Array::weak_scalar(step)),
        &Array::weak_scalar(start),
    )
}

/// `jnp.eye(n, dtype)`.
#[track_caller]
pub fn eye(n: i64, dtype: DType) -> Array {
    let rows = lax::iota(DType::I32, &[n, n], 0);
    let cols = lax::iota(DType::I32, &[n, n], 1);
    lax::convert_element_type(&lax::eq(&rows, &cols), dtype)
}

/// `jnp.tril(x, k)`: zeros above the k-th diagonal of the last two dims.
#[track_caller]
pub fn tril(x: &Array, k: i64) -> Array {
    triangle(x, k, true)
}

/// `jnp.triu(x, k)`: zeros below the k-th diagonal of the last two dims.
#[track_caller]
pub fn triu(x: &Array, k: i64) -> Array {
    triangle(x, k, false)
}

#[track_caller]
fn triangle(x: &Array, k: i64, lower: bool) -> Array {
    if let Some(e) = first_error(&[x]) {
        return e;
    }
    let rank = x.ndim_or_zero();
    if rank < 2 {
        return invalid_args(if lower { "tril" } else { "triu" }, "needs rank >= 2", &[x]);
    }
    let (n, m) = (x.shape_or_empty()[rank - 2], x.shape_or_empty()[rank - 1]);
    let rows = lax::iota(DType::I32, &[n, m], 0);
    let cols = lax::iota(DType::I32, &[n, m], 1);
    let shifted = lax::add(&rows, &Array::weak_scalar(k as i32));
    let keep = if lower {
        lax::ge(&shifted, &cols)
    } else {
        lax::le(&shifted, &cols)
    };
    where_(&keep, x, &zeros_like(x))
}

/// `jax.nn.one_hot(x, num_classes)` (also `oxla_nn::one_hot`), as `dtype`.
#[track_caller]
pub fn one_hot(x: &Array, num_classes: i64, dtype: DType) -> Array {
    let mut shape = x.shape_or_empty().to_vec();
    shape.push(num_classes);
    let classes = lax::iota(x.dtype_or_bool(), &shape, shape.len() - 1);
    let expanded = lax::expand_dims(x, &[x.ndim_or_zero() as i64]);
    lax::convert_element_type(&equal(&expanded, &classes), dtype)
}

/// `jnp.logical_not`.
#[track_caller]
pub fn logical_not(x: &Array) -> Array {
    lax::not(&lax::convert_element_type(x, DType::Bool))
}

/// Elementwise `jnp.isfinite`.
#[track_caller]
pub fn isfinite(x: &Array) -> Array {
    match x.aval() {
        Ok(a) if a.dtype.is_float() => lax::is_finite(x),
        Ok(a) if a.dtype.is_complex() => lax::and(
            &lax::is_finite(&lax::real(x)),
            &lax::is_finite(&lax::imag(x)),
        ),
        Ok(_) => lax::eq(x, x),
        Err(e) => Array::error(e),
    }
}

/// Flattens `x` when `axis` is `None`; returns the array and the axis.
#[track_caller]
fn along(function: &'static str, x: &Array, axis: Option<i64>) -> Result<(Array, usize), Array> {
    match axis {
        None => Ok((lax::reshape(x, &[x.size_or_one()]), 0)),
        Some(a) => Ok((x.clone(), canonical_axis(function, x, a)?)),
    }
}

/// [`lax::canonical_axis`] as an error array, for the functions that
/// return one.
#[track_caller]
fn canonical_axis(function: &'static str, x: &Array, axis: i64) -> Result<usize, Array> {
    lax::canonical_axis(function, x, axis).map_err(Array::error)
}

/// `jnp.argmax(x, axis)` (over the flattened array when `axis` is `None`).
#[track_caller]
pub fn argmax(x: &Array, axis: Option<i64>) -> Array {
    let (x, axis) = match along("argmax", x, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    lax::argmax(&x, axis, oxla_core::promotion::default_int(x64_enabled()))
}

/// `jnp.argmin(x, axis)`.
#[track_caller]
pub fn argmin(x: &Array, axis: Option<i64>) -> Array {
    let (x, axis) = match along("argmin", x, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    lax::argmin(&x, axis, oxla_core::promotion::default_int(x64_enabled()))
}

/// `jnp.cumsum(x, axis)`.
#[track_caller]
pub fn cumsum(x: &Array, axis: Option<i64>) -> Array {
    let (x, axis) = match along("cumsum", x, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    lax::cumsum(
        &as_dtype(&x, cumulative_dtype(x.dtype_or_bool())),
        axis,
        false,
    )
}

/// `jnp.cumprod(x, axis)`.
#[track_caller]
pub fn cumprod(x: &Array, axis: Option<i64>) -> Array {
    let (x, axis) = match along("cumprod", x, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    lax::cumprod(
        &as_dtype(&x, cumulative_dtype(x.dtype_or_bool())),
        axis,
        false,
    )
}

/// `jnp.sort(x, axis)` (stable; NaN last).
#[track_caller]
pub fn sort(x: &Array, axis: i64) -> Array {
    let (x, axis) = match along("sort", x, Some(axis)) {
        Ok(v) => v,
        Err(e) => return e,
    };
    lax::sort(&[&x], axis as i64, true, 1).swap_remove(0)
}

/// `jnp.argsort(x, axis)` (stable).
#[track_caller]
pub fn argsort(x: &Array, axis: i64) -> Array {
    let (x, axis) = match along("argsort", x, Some(axis)) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let index = oxla_core::promotion::default_int(x64_enabled());
    let iota = lax::iota(index, x.shape_or_empty(), axis);
    lax::sort(&[&x, &iota], axis as i64, true, 1).swap_remove(1)
}

/// `v` made to fit `kept_shape` when it was written for `result_shape`
/// (the indexed shape with new axes): drops the new axes' size-1 dims.
#[track_caller]
pub(crate) fn squeeze_new_axes(v: &Array, result_shape: &[i64], kept_shape: &[i64]) -> Array {
    if v.ndim_or_zero() == result_shape.len() && result_shape.len() != kept_shape.len() {
        return lax::reshape(v, kept_shape);
    }
    v.clone()
}

/// `jnp.take(x, indices, axis)`: out-of-bounds positions give the fill
/// value (NaN, the lowest signed or highest unsigned integer, or true)
/// with `fill`, and are clamped with `clip` (as JAX's `mode=`).
#[track_caller]
pub fn take(x: &Array, indices: &Array, axis: Option<i64>, clip: bool) -> Array {
    let (x, axis) = match along("take", x, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
    if clip {
        crate::index::take_along(
            &x,
            indices,
            axis,
            oxla_core::GatherMode::Clip,
            Scalar::Int(0),
        )
    } else {
        let fill = crate::index::default_fill(x.dtype_or_bool());
        let wrapped = lax::wrap_negative(indices, n);
        crate::index::take_along(&x, &wrapped, axis, oxla_core::GatherMode::Fill, fill)
    }
}

/// `jnp.take_along_axis(x, indices, axis)`: `indices` has `x`'s rank;
/// out-of-bounds positions are clamped.
#[track_caller]
pub fn take_along_axis(x: &Array, indices: &Array, axis: i64) -> Array {
    let rank = x.ndim_or_zero();
    let axis = match canonical_axis("take_along_axis", x, axis) {
        Ok(axis) => axis,
        Err(e) => return e,
    };
    let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
    let idx = lax::wrap_negative(indices, n);
    let shape = idx.shape_or_empty().to_vec();
    let mut full = shape.clone();
    full.push(1);
    // One index vector per element: iota along each other dim, idx along axis.
    let components: Vec<Array> = (0..rank)
        .map(|d| {
            if d == axis {
                lax::reshape(&lax::convert_element_type(&idx, DType::I32), &full)
            } else {
                lax::iota(DType::I32, &full, d)
            }
        })
        .collect();
    let refs: Vec<&Array> = components.iter().collect();
    let indices = lax::concatenate(&refs, rank);
    lax::gather(
        x,
        &indices,
        oxla_core::GatherDimensionNumbers {
            offset_dims: oxla_core::Dims::new(),
            collapsed_slice_dims: (0..rank as i64).collect(),
            start_index_map: (0..rank as i64).collect(),
        },
        &vec![1; rank],
        oxla_core::GatherMode::Clip,
        Scalar::Int(0),
    )
}

/// `jnp.split(x, sections, axis)`: equal sections (an error array each
/// if the axis does not divide).
#[track_caller]
pub fn split(x: &Array, sections: i64, axis: i64) -> Vec<Array> {
    if let Some(e) = first_error(&[x]) {
        return vec![e; sections.max(1) as usize];
    }
    let rank = x.ndim_or_zero() as i64;
    let normalized = if axis < 0 { axis + rank } else { axis };
    let n = usize::try_from(normalized)
        .ok()
        .and_then(|a| x.shape_or_empty().get(a).copied());
    let Some(n) = n.filter(|n| sections > 0 && n % sections == 0) else {
        let e = invalid_args(
            "split",
            &format!("cannot split axis {axis} into {sections} equal sections"),
            &[x],
        );
        return vec![e; sections.max(1) as usize];
    };
    lax::split(x, &vec![n / sections; sections as usize], normalized)
}

/// `jnp.moveaxis(x, source, destination)`.
#[track_caller]
pub fn moveaxis(x: &Array, source: i64, destination: i64) -> Array {
    let (source, destination) = match (
        canonical_axis("moveaxis", x, source),
        canonical_axis("moveaxis", x, destination),
    ) {
        (Ok(s), Ok(d)) => (s as i64, d),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let mut perm: Vec<i64> = (0..x.ndim_or_zero() as i64)
        .filter(|&d| d != source)
        .collect();
    perm.insert(destination, source);
    lax::transpose(x, &perm)
}
