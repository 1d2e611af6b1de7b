//! `jax.lax`'s conveniences over its primitives: filled arrays and iotas,
//! `collapse`, `broadcast_to_rank`, `dot` and `batch_matmul`, `select`,
//! the scatter family by combiner, `sort_key_val`, `stack`/`unstack`,
//! `tile`, `optimization_barrier`, `conv` and `conv_with_general_padding`,
//! and `padtype_to_pads`, as JAX defines them.

use oxla_core::primitive::marker;
use oxla_core::{DType, Primitive, ScatterDimensionNumbers, ScatterOp};

use super::{ConvOptions, Padding, dot_general, iota, neg, reshape, scatter, select_n, sort};
use crate::array::Array;

/// `lax.full(shape, fill_value, dtype)`.
#[track_caller]
pub fn full(shape: &[i64], fill_value: f64, dtype: DType) -> Array {
    crate::numpy::full(shape, fill_value, dtype)
}

/// `lax.full_like(x, fill_value, dtype)`: `x`'s shape (and dtype unless
/// given), filled.
#[track_caller]
pub fn full_like(x: &Array, fill_value: f64, dtype: Option<DType>) -> Array {
    let dtype = dtype.unwrap_or(x.dtype_or_bool());
    crate::numpy::full(x.shape_or_empty(), fill_value, dtype)
}

/// `lax.broadcasted_iota(dtype, shape, dimension)`: [`iota`].
#[track_caller]
pub fn broadcasted_iota(dtype: DType, shape: &[i64], dimension: usize) -> Array {
    iota(dtype, shape, dimension)
}

/// `lax.collapse(x, start, stop)`: dimensions `start..stop` merged into
/// one.
#[track_caller]
pub fn collapse(x: &Array, start: usize, stop: usize) -> Array {
    let shape = x.shape_or_empty();
    let stop = stop.min(shape.len());
    let start = start.min(stop);
    let merged: i64 = shape[start..stop].iter().product();
    let new: Vec<i64> = shape[..start]
        .iter()
        .copied()
        .chain([merged])
        .chain(shape[stop..].iter().copied())
        .collect();
    reshape(x, &new)
}

/// `lax.broadcast_to_rank(x, rank)`: leading size-1 dimensions up to
/// `rank`.
#[track_caller]
pub fn broadcast_to_rank(x: &Array, rank: usize) -> Array {
    let shape = x.shape_or_empty();
    if shape.len() >= rank {
        return x.clone();
    }
    let mut new = vec![1; rank - shape.len()];
    new.extend_from_slice(shape);
    reshape(x, &new)
}

/// `lax.reciprocal(x)`: `1 / x`.
#[track_caller]
pub fn reciprocal(x: &Array) -> Array {
    super::integer_pow(x, -1)
}

/// `lax.dot(lhs, rhs)`: vector or matrix product, the last axis of `lhs`
/// contracted with the first of `rhs`.
#[track_caller]
pub fn dot(lhs: &Array, rhs: &Array, preferred_element_type: Option<DType>) -> Array {
    let last = lhs.ndim_or_zero().saturating_sub(1) as i64;
    dot_general(
        lhs,
        rhs,
        ((&[last], &[0]), (&[], &[])),
        preferred_element_type,
    )
}

/// `lax.batch_matmul(lhs, rhs)`: matrix products over equal leading batch
/// dimensions.
#[track_caller]
pub fn batch_matmul(lhs: &Array, rhs: &Array, preferred_element_type: Option<DType>) -> Array {
    let rank = lhs.ndim_or_zero();
    let batch: Vec<i64> = (0..rank.saturating_sub(2) as i64).collect();
    dot_general(
        lhs,
        rhs,
        ((&[rank as i64 - 1], &[rank as i64 - 2]), (&batch, &batch)),
        preferred_element_type,
    )
}

/// `lax.select(pred, on_true, on_false)`: [`select_n`] with the cases in
/// the other order.
#[track_caller]
pub fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    select_n(pred, &[on_false, on_true])
}

macro_rules! scatter_by {
    ($($name:ident => $op:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(
            operand: &Array,
            indices: &Array,
            updates: &Array,
            dimension_numbers: ScatterDimensionNumbers,
        ) -> Array {
            scatter(operand, indices, updates, ScatterOp::$op, dimension_numbers)
        }
    )*};
}

scatter_by! {
    scatter_add => Add: "`lax.scatter_add`: the updates added at the indexed windows.";
    scatter_mul => Mul: "`lax.scatter_mul`: the windows multiplied by the updates.";
    scatter_min => Min: "`lax.scatter_min`: the minimum of window and update.";
    scatter_max => Max: "`lax.scatter_max`: the maximum of window and update.";
}

/// `lax.scatter_sub`: the updates subtracted at the indexed windows.
#[track_caller]
pub fn scatter_sub(
    operand: &Array,
    indices: &Array,
    updates: &Array,
    dimension_numbers: ScatterDimensionNumbers,
) -> Array {
    scatter_add(operand, indices, &neg(updates), dimension_numbers)
}

/// `lax.sort_key_val(keys, values, dimension, is_stable)`: `values`
/// reordered as `keys` sort.
#[track_caller]
pub fn sort_key_val(
    keys: &Array,
    values: &Array,
    dimension: i64,
    is_stable: bool,
) -> (Array, Array) {
    let mut sorted = sort(&[keys, values], dimension, is_stable, 1).into_iter();
    let error = || {
        Array::error(crate::Error::InvalidArgument(
            "sort_key_val: sort returned fewer results".into(),
        ))
    };
    let keys = sorted.next().unwrap_or_else(error);
    let values = sorted.next().unwrap_or_else(error);
    (keys, values)
}

/// `lax.stack(arrays, axis)`: [`jnp.stack`](crate::numpy::stack).
#[track_caller]
pub fn stack(arrays: &[&Array], axis: i64) -> Array {
    crate::numpy::stack(arrays, axis)
}

/// `lax.unstack(x, axis)`: the slices along `axis`.
#[track_caller]
pub fn unstack(x: &Array, axis: i64) -> Vec<Array> {
    crate::numpy::unstack(x, axis)
}

/// `lax.tile(x, reps)`: [`jnp.tile`](crate::numpy::tile).
#[track_caller]
pub fn tile(x: &Array, reps: &[i64]) -> Array {
    crate::numpy::tile(x, reps)
}

/// `lax.optimization_barrier(operands)`: the operands, which XLA may not
/// move computations across.
#[track_caller]
pub fn optimization_barrier(operands: &[&Array]) -> Vec<Array> {
    let location = crate::ops::current_location(std::panic::Location::caller());
    crate::ops::bind_at(
        Primitive::Marker(marker::Op::OptimizationBarrier),
        operands,
        location,
    )
    .unwrap_or_else(|e| vec![Array::error(e); operands.len()])
}

/// `lax.conv(lhs, rhs, window_strides, padding)`: a convolution in
/// `NCHW` / `OIHW` layout.
#[track_caller]
pub fn conv(lhs: &Array, rhs: &Array, window_strides: &[i64], padding: &Padding) -> Array {
    conv_with_general_padding(lhs, rhs, window_strides, padding, &[], &[])
}

/// `lax.conv_with_general_padding`: [`conv`] with input and kernel
/// dilations.
#[track_caller]
pub fn conv_with_general_padding(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: &Padding,
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Array {
    let spatial = window_strides.len();
    let letters = &"HWDEFGJKL"[..spatial.min(9)];
    let (lhs_layout, rhs_layout) = (format!("NC{letters}"), format!("OI{letters}"));
    super::conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        (&lhs_layout, &rhs_layout, &lhs_layout),
        &ConvOptions {
            lhs_dilation: lhs_dilation.to_vec(),
            rhs_dilation: rhs_dilation.to_vec(),
            ..ConvOptions::default()
        },
    )
}

/// `lax.padtype_to_pads(in_shape, window_shape, window_strides, padding)`:
/// the `(low, high)` padding of each spatial dimension.
pub fn padtype_to_pads(
    in_shape: &[i64],
    window_shape: &[i64],
    window_strides: &[i64],
    padding: &Padding,
) -> Vec<(i64, i64)> {
    padding.pairs(in_shape, window_shape, window_strides)
}

/// `lax.dtype(x)`: the dtype of `x`.
pub fn dtype(x: &Array) -> DType {
    x.dtype_or_bool()
}

/// `lax.empty(shape, dtype)`: an array whose values are not to be read;
/// zeros, as JAX's CPU and GPU lowering gives.
#[track_caller]
pub fn empty(shape: &[i64], dtype: DType) -> Array {
    crate::numpy::zeros(shape, dtype)
}

/// `lax.broadcast_like(arr, like_arr)`: `arr` broadcast to `like_arr`'s
/// shape.
#[track_caller]
pub fn broadcast_like(arr: &Array, like: &Array) -> Array {
    crate::numpy::broadcast_to(arr, like.shape_or_empty())
}

/// `lax.reduce_xor(operand, axes)`: the bitwise exclusive or (of
/// booleans: the parity) over `axes`.
#[track_caller]
pub fn reduce_xor(operand: &Array, axes: &[i64]) -> Array {
    let dtype = operand.dtype_or_bool();
    let zero = super::convert_element_type(&Array::weak_scalar(0i32), dtype);
    super::reduce(
        &[operand],
        &[&zero],
        |a, b| vec![super::xor(&a[0], &b[0])],
        axes,
    )
    .map_or_else(Array::error, |mut out| out.remove(0))
}

/// `lax.mulhi(x, y)`: the high half of each integer product `x · y` (of
/// the bits of the type, signed or unsigned as it is).
#[track_caller]
pub fn mulhi(x: &Array, y: &Array) -> Array {
    let dtype = x.dtype_or_bool();
    let bits = (dtype.byte_size() * 8) as i64;
    let wide = match dtype {
        DType::I8 | DType::I16 | DType::I32 => Some(DType::I64),
        DType::U8 | DType::U16 | DType::U32 => Some(DType::U64),
        DType::I64 | DType::U64 => None,
        DType::Bool
        | DType::F16
        | DType::BF16
        | DType::F32
        | DType::F64
        | DType::C64
        | DType::C128 => {
            return lax_usage("mulhi", format!("takes integers, got {dtype}"));
        }
    };
    if y.dtype_or_bool() != dtype {
        return lax_usage(
            "mulhi",
            format!(
                "needs operands of one type, got {dtype} and {}",
                y.dtype_or_bool()
            ),
        );
    }
    match wide {
        Some(wide) => {
            let product = super::mul(
                &super::convert_element_type(x, wide),
                &super::convert_element_type(y, wide),
            );
            let shift = super::convert_element_type(&Array::weak_scalar(bits), wide);
            let high = if wide == DType::I64 {
                super::shift_right_arithmetic(&product, &shift)
            } else {
                super::shift_right_logical(&product, &shift)
            };
            super::convert_element_type(&high, dtype)
        }
        None => mulhi_64(x, y, dtype),
    }
}

/// [`mulhi`] of 64-bit integers from 32-bit halves: the unsigned high
/// word by schoolbook multiplication, corrected for signs (the high word
/// of a signed product is the unsigned one minus `y` where `x < 0` and
/// minus `x` where `y < 0`).
fn mulhi_64(x: &Array, y: &Array, dtype: DType) -> Array {
    let u = |a: &Array| super::bitcast_convert_type(a, DType::U64);
    let (a, b) = if dtype == DType::I64 {
        (u(x), u(y))
    } else {
        (x.clone(), y.clone())
    };
    let c = |v: u64| super::convert_element_type(&Array::weak_scalar(v as f64), DType::U64);
    let (mask, shift) = (
        super::convert_element_type(&Array::weak_scalar(0xFFFF_FFFFi64), DType::U64),
        c(32),
    );
    let lo = |v: &Array| super::and(v, &mask);
    let hi = |v: &Array| super::shift_right_logical(v, &shift);
    let (a_lo, a_hi, b_lo, b_hi) = (lo(&a), hi(&a), lo(&b), hi(&b));
    let ll = super::mul(&a_lo, &b_lo);
    let lh = super::mul(&a_lo, &b_hi);
    let hl = super::mul(&a_hi, &b_lo);
    let hh = super::mul(&a_hi, &b_hi);
    let middle = super::add(&super::add(&hi(&ll), &lo(&lh)), &lo(&hl));
    let high = super::add(
        &super::add(&super::add(&hh, &hi(&lh)), &hi(&hl)),
        &hi(&middle),
    );
    if dtype == DType::U64 {
        return high;
    }
    let zero = crate::numpy::zeros_like(x);
    let high = super::bitcast_convert_type(&high, DType::I64);
    let minus_y = super::select(&super::lt(x, &zero), y, &zero);
    let minus_x = super::select(&super::lt(y, &zero), x, &zero);
    super::sub(&super::sub(&high, &minus_y), &minus_x)
}

/// An error pair unless `operand` is floating-point, as JAX's approximate
/// top-k requires.
#[track_caller]
fn approx_top_k_operand(function: &str, operand: &Array) -> Option<(Array, Array)> {
    let dtype = operand.dtype_or_bool();
    if dtype.is_float() {
        return None;
    }
    let e = lax_usage(
        function,
        format!("operand must be a floating type, got {dtype}"),
    );
    Some((e.clone(), e))
}

/// `lax.approx_max_k(operand, k, reduction_dimension)`: the `k` largest
/// values along the dimension and their indices, descending, of a
/// floating-point operand. Exact, as JAX's fallback away from TPUs.
#[track_caller]
pub fn approx_max_k(operand: &Array, k: i64, reduction_dimension: i64) -> (Array, Array) {
    if let Some(error) = approx_top_k_operand("approx_max_k", operand) {
        return error;
    }
    super::top_k_along(operand, k, reduction_dimension)
}

/// `lax.approx_min_k(operand, k, reduction_dimension)`: the `k` smallest
/// values along the dimension and their indices, ascending, of a
/// floating-point operand. Exact, as JAX's fallback away from TPUs.
#[track_caller]
pub fn approx_min_k(operand: &Array, k: i64, reduction_dimension: i64) -> (Array, Array) {
    if let Some(error) = approx_top_k_operand("approx_min_k", operand) {
        return error;
    }
    // Negation reverses the order exactly.
    let (_, indices) = super::top_k_along(&super::neg(operand), k, reduction_dimension);
    let values = crate::numpy::take_along_axis(operand, &indices, reduction_dimension);
    (values, indices)
}

/// `lax.reduce_window_shape_tuple(operand_shape, window_dimensions,
/// window_strides, padding, base_dilation, window_dilation)`: the output
/// shape of a window reduction.
pub fn reduce_window_shape_tuple(
    operand_shape: &[i64],
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: &[(i64, i64)],
    base_dilation: Option<&[i64]>,
    window_dilation: Option<&[i64]>,
) -> Vec<i64> {
    let dilate = |d: i64, r: i64| if d == 0 { 0 } else { (d - 1) * r + 1 };
    (0..operand_shape.len())
        .map(|i| {
            let size = dilate(operand_shape[i], base_dilation.map_or(1, |b| b[i]));
            let window = dilate(window_dimensions[i], window_dilation.map_or(1, |w| w[i]));
            let padded = size + padding[i].0 + padding[i].1;
            (padded - window).div_euclid(window_strides[i]) + 1
        })
        .collect()
}

/// `lax.shape_as_value(shape)`: the shape as an int32 vector.
#[track_caller]
pub fn shape_as_value(shape: &[i64]) -> Array {
    let values: Vec<i32> = shape.iter().map(|&d| d as i32).collect();
    Array::from_slice(&values, &[values.len() as i64]).unwrap_or_else(Array::error)
}

/// `lax.platform_dependent(*args, default, **per_platform)`: the branch
/// for the platform oxla's runtime runs on (`"cpu"`, `"cuda"`, `"rocm"`,
/// `"tpu"`), else `default`. oxla lowers a program for one platform, so
/// the choice is made when tracing (JAX's is a `case` on the platform
/// index when it lowers for several).
#[track_caller]
pub fn platform_dependent<R>(
    per_platform: &[(&str, &dyn Fn() -> R)],
    default: Option<&dyn Fn() -> R>,
) -> crate::error::Result<R> {
    let location = crate::ops::current_location(std::panic::Location::caller());
    let platform = crate::runtime::client()?.platform_name()?;
    if let Some((name, _)) = per_platform.iter().find(|(name, _)| *name == "gpu") {
        return Err(crate::error::Error::InvalidArgument(format!(
            "{location}: lax.platform_dependent: use 'cuda' or 'rocm', not '{name}'"
        )));
    }
    match (
        per_platform.iter().find(|(name, _)| *name == platform),
        default,
    ) {
        (Some((_, branch)), _) => Ok(branch()),
        (None, Some(default)) => Ok(default()),
        (None, None) => Err(crate::error::Error::InvalidArgument(format!(
            "{location}: lax.platform_dependent: no branch for platform {platform} and no default"
        ))),
    }
}

/// `lax.composite(decomposition, name, version)`: `decomposition` as one
/// named function of the program (a call named `name`, as `jit(..).named`
/// makes it; JAX's `stablehlo.composite` carries the same decomposition,
/// which XLA inlines on CPUs and GPUs). `version` is kept in the name
/// (`name.vN`) when it is not 0.
pub fn composite<In: crate::pytree::Pytree, Out: crate::pytree::Pytree, F: Fn(In) -> Out>(
    decomposition: F,
    name: &str,
    version: u32,
) -> crate::jit::Jit<In, Out, F> {
    let name = if version == 0 {
        name.to_string()
    } else {
        format!("{name}.v{version}")
    };
    crate::jit::jit(decomposition).named(&name)
}

/// An error array for `lax.{function}`, naming the caller's line.
#[track_caller]
pub(super) fn lax_usage(function: &str, message: String) -> Array {
    Array::error(super::usage_error(function, message))
}
