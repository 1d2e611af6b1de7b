//! `oxla::lax`: the primitives, one function each, as `jax.lax` has them.
//! Operands must already have one dtype (weakly typed scalars are converted
//! to the other operand's type, as JAX's lax does); shapes must be equal or
//! broadcast as the primitive allows (rank-0 operands, size-1 dims).
//!
//! # Control flow
//!
//! [`cond`], [`switch`], [`while_loop`], [`fori_loop`],
//! [`fori_loop_dynamic`], [`scan`] and [`map`] are `jax.lax`'s structured
//! control flow: the way to branch and loop on *traced* values, which
//! Rust's `if` and `while` cannot look at inside `jit` or `vmap`. Their
//! bodies are traced once into closed sub-jaxprs that stay inside the one
//! compiled program; what the bodies capture (concrete arrays, tracers of
//! enclosing transformations) becomes explicit operands. They run eagerly
//! too, and work under `jit`, `vmap` and differentiation: forward mode
//! through all of them, reverse mode through `cond`, `switch`, `scan`,
//! `map` and static `fori_loop` (which is a scan), not through
//! `while_loop` or `fori_loop_dynamic` (their trip count is unknown: use
//! `scan`). Branches must return one structure and types, and a loop body
//! its carry's; a mismatch is an error naming the branch or leaf path and
//! both types.

use oxla_core::primitive::reduce as reduction;
use oxla_core::primitive::{contract, elementwise, index, marker, shape};
use oxla_core::promotion::promote as promote_pair;
use oxla_core::{BinaryOp, Comparison, DType, Dims, Primitive, ReduceOp, UnaryOp};

mod associative;
mod beta;
mod conveniences;
mod convolution;
mod fourier;
mod in_dim;
pub mod linalg;
mod ragged;
mod reduce;
mod rng;
mod scaled_dot;
mod scatter_apply;
mod special;

pub use associative::{associative_scan, cumlogsumexp};
pub use beta::betainc;
pub use conveniences::{
    approx_max_k, approx_min_k, batch_matmul, broadcast_like, broadcast_to_rank, broadcasted_iota,
    collapse, composite, conv, conv_with_general_padding, dot, dtype, empty, full, full_like,
    mulhi, optimization_barrier, padtype_to_pads, platform_dependent, reciprocal,
    reduce_window_shape_tuple, reduce_xor, scatter_add, scatter_max, scatter_min, scatter_mul,
    scatter_sub, select, shape_as_value, sort_key_val, stack, tile, unstack,
};
pub use convolution::{
    conv_general_dilated_local, conv_general_dilated_patches, conv_general_permutations,
    conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
};
pub use fourier::fft;
pub use in_dim::{
    broadcast, dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim, index_in_dim, reshape_with_dimensions, slice_in_dim,
};
pub use ragged::{RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general};
pub use reduce::reduce;
pub use rng::{RngAlgorithm, rng_bit_generator, rng_uniform};
pub use scaled_dot::scaled_dot;
pub use scatter_apply::scatter_apply;
pub use special::{igamma, igamma_grad_a, igammac, random_gamma_grad};

use crate::array::{Array, Inner};

/// A usage error of `lax.{function}` (`function` may name a submodule's:
/// `linalg.lu_solve`), naming the caller's line.
#[track_caller]
pub(crate) fn usage_error(function: &str, message: String) -> Error {
    let location = crate::ops::current_location(std::panic::Location::caller());
    Error::InvalidArgument(format!("{location}: lax.{function}: {message}"))
}
use crate::config::x64_enabled;
use crate::error::{Error, Result};
use crate::ops::{bind, bind_n};

pub use crate::control::{
    LinearSolver, ScanOptions, TransposeSolve, cond, custom_linear_solve, custom_root, fori_loop,
    fori_loop_dynamic, map, scan, switch, while_loop,
};
/// The types `lax`'s gather, scatter, window and convolution functions take,
/// so that a crate depending only on `oxla` can call them.
pub use oxla_core::{
    ConvDimensionNumbers, FftType, GatherDimensionNumbers, GatherMode, Precision, Scalar,
    ScatterDimensionNumbers, ScatterOp, WindowOp,
};

fn dims(d: &[i64]) -> Dims {
    d.iter().copied().collect()
}

/// Converts `x` to `dtype` with the given weak flag (no equation if it
/// already is; a host scalar is converted on the host).
#[track_caller]
pub fn convert_element_type_weak(x: &Array, dtype: DType, weak_type: bool) -> Array {
    match &*x.inner {
        Inner::Scalar { value, aval } => {
            let mut aval = aval.with_dtype(dtype);
            aval.weak_type = weak_type;
            Array::from_inner(Inner::Scalar {
                value: scalar_as(*value, dtype),
                aval,
            })
        }
        _ => match x.aval() {
            Ok(a) if a.dtype == dtype && a.weak_type == weak_type => x.clone(),
            Ok(_) => bind(
                Primitive::Elementwise(elementwise::Op::ConvertElementType {
                    new_dtype: dtype,
                    weak_type,
                }),
                &[x],
            ),
            Err(e) => Array::error(e),
        },
    }
}

/// Converts `x` to `dtype` (strongly typed).
#[track_caller]
pub fn convert_element_type(x: &Array, dtype: DType) -> Array {
    convert_element_type_weak(x, dtype, false)
}

/// A host scalar's value as an element of `dtype` (so `1` added to an f32
/// array is the literal `1.0:f32[]`, as in JAX).
fn scalar_as(value: Scalar, dtype: DType) -> Scalar {
    let as_f64 = value.as_f64();
    match dtype {
        DType::Bool => Scalar::Bool(as_f64 != 0.0),
        d if d.is_float() => Scalar::Float(as_f64),
        d if d.is_complex() => {
            let (re, im) = value.complex_parts();
            Scalar::Complex(re, im)
        }
        d if d.is_unsigned_int() => Scalar::UInt(as_f64 as u64),
        _ => match value {
            Scalar::Int(i) => Scalar::Int(i),
            Scalar::UInt(u) => Scalar::Int(u as i64),
            other => Scalar::Int(match other {
                Scalar::Bool(b) => i64::from(b),
                _ => as_f64 as i64,
            }),
        },
    }
}

/// Gives weakly typed operands the type of the strongly typed one.
#[track_caller]
fn match_weak(x: &Array, y: &Array) -> (Array, Array) {
    match (x.aval(), y.aval()) {
        (Ok(a), Ok(b)) if a.dtype != b.dtype && (a.weak_type || b.weak_type) => {
            let (dtype, weak) =
                promote_pair(a.dtype, a.weak_type, b.dtype, b.weak_type, x64_enabled());
            (
                convert_element_type_weak(x, dtype, weak),
                convert_element_type_weak(y, dtype, weak),
            )
        }
        _ => (x.clone(), y.clone()),
    }
}

macro_rules! unary {
    ($($name:ident => $op:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array) -> Array {
            bind(Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::$op)), &[x])
        }
    )*};
}

unary! {
    neg => Neg: "-x";
    sign => Sign: "The sign of x (-1, 0, 1).";
    abs => Abs: "|x|";
    floor => Floor: "Rounds down.";
    ceil => Ceil: "Rounds up.";
    round => Round: "Rounds half away from zero.";
    round_nearest_even => RoundNearestEven: "Rounds half to even (`lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)`).";
    exp => Exp: "e^x";
    exp2 => Exp2: "2^x";
    expm1 => Expm1: "e^x - 1";
    log => Log: "ln x";
    log1p => Log1p: "ln(1 + x)";
    sqrt => Sqrt: "√x";
    rsqrt => Rsqrt: "1/√x";
    cbrt => Cbrt: "∛x";
    tanh => Tanh: "tanh x";
    logistic => Logistic: "1 / (1 + e^-x)";
    sin => Sin: "sin x";
    cos => Cos: "cos x";
    tan => Tan: "tan x";
    asin => Asin: "asin x";
    acos => Acos: "acos x";
    atan => Atan: "atan x";
    sinh => Sinh: "sinh x";
    cosh => Cosh: "cosh x";
    asinh => Asinh: "asinh x";
    acosh => Acosh: "acosh x";
    atanh => Atanh: "atanh x";
    erf => Erf: "The error function.";
    erfc => Erfc: "1 - erf x";
    erf_inv => ErfInv: "The inverse error function.";
    lgamma => Lgamma: "ln |Γ(x)|";
    digamma => Digamma: "ψ(x)";
    square => Square: "x * x";
    is_finite => IsFinite: "Whether x is finite.";
    not => Not: "Logical or bitwise not.";
    population_count => PopulationCount: "Number of set bits.";
    clz => CountLeadingZeros: "Number of leading zero bits (JAX's `lax.clz`).";
    bessel_i0e => BesselI0e: "e^-|x| I₀(x), the exponentially scaled modified Bessel function of order 0 (JAX's `lax.bessel_i0e`).";
    bessel_i1e => BesselI1e: "e^-|x| I₁(x), the exponentially scaled modified Bessel function of order 1 (JAX's `lax.bessel_i1e`).";
    real => Real: "The real part of a complex array (its parts' dtype).";
    imag => Imag: "The imaginary part of a complex array (its parts' dtype).";
}

/// The complex conjugate, as `lax.conj`: a complex result, also for a real
/// (f32 or f64) operand.
#[track_caller]
pub fn conj(x: &Array) -> Array {
    let dtype = x.dtype_or_bool();
    let x = match dtype.complex_of() {
        Some(complex) if !dtype.is_complex() => convert_element_type(x, complex),
        _ => x.clone(),
    };
    bind(
        Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Conj)),
        &[&x],
    )
}

macro_rules! binary {
    ($($name:ident => $op:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let (x, y) = match_weak(x, y);
            bind(Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::$op)), &[&x, &y])
        }
    )*};
}

binary! {
    add => Add: "x + y";
    sub => Sub: "x - y";
    mul => Mul: "x * y";
    div => Div: "x / y (integers round toward zero).";
    rem => Rem: "Remainder with the sign of x.";
    pow => Pow: "x ^ y";
    max => Max: "Elementwise maximum.";
    min => Min: "Elementwise minimum.";
    atan2 => Atan2: "atan2(x, y)";
    nextafter => NextAfter: "The next float after x toward y.";
    polygamma => Polygamma: "ψ⁽ᵐ⁾(x), the m-th derivative of digamma (m a whole number).";
    zeta => Zeta: "The Hurwitz zeta function ζ(x, q) = Σₖ (k + q)⁻ˣ (not differentiable, as in JAX).";
    and => And: "Logical or bitwise and.";
    or => Or: "Logical or bitwise or.";
    xor => Xor: "Logical or bitwise xor.";
    shift_left => ShiftLeft: "x << y";
    shift_right_logical => ShiftRightLogical: "x >> y, zero-filling.";
    shift_right_arithmetic => ShiftRightArithmetic: "x >> y, sign-filling.";
    complex => Complex: "x + iy, from f32 or f64 parts (JAX's `lax.complex`).";
}

macro_rules! compare {
    ($($name:ident => $c:ident;)*) => {$(
        #[doc = concat!("Elementwise `", stringify!($name), "` (bool result).")]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let (x, y) = match_weak(x, y);
            bind(Primitive::Elementwise(elementwise::Op::Compare(Comparison::$c)), &[&x, &y])
        }
    )*};
}

compare! { eq => Eq; ne => Ne; lt => Lt; le => Le; gt => Gt; ge => Ge; }

/// x ^ y for a constant integer y.
#[track_caller]
pub fn integer_pow(x: &Array, y: i32) -> Array {
    bind(
        Primitive::Elementwise(elementwise::Op::IntegerPow { y }),
        &[x],
    )
}

/// `lax.reduce_precision(x, exponent_bits, mantissa_bits)`: floats rounded
/// (to nearest even) to the precision and range of a float format with
/// those widths, keeping their dtype (`5, 10` rounds to float16's
/// values; values beyond its range become infinities). Linear in
/// derivatives, as in JAX.
#[track_caller]
pub fn reduce_precision(x: &Array, exponent_bits: i32, mantissa_bits: i32) -> Array {
    bind(
        Primitive::Elementwise(elementwise::Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        }),
        &[x],
    )
}

/// `cases[which]` element by element (`which` bool for two cases, else i32).
#[track_caller]
pub fn select_n(which: &Array, cases: &[&Array]) -> Array {
    let mut operands = vec![which];
    operands.extend_from_slice(cases);
    bind(Primitive::Elementwise(elementwise::Op::SelectN), &operands)
}

/// min(max(x, lo), hi).
#[track_caller]
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Array {
    let dtype = x.dtype_or_bool();
    let lo = convert_element_type_weak(lo, dtype, lo.weak_type() && x.weak_type());
    let hi = convert_element_type_weak(hi, dtype, hi.weak_type() && x.weak_type());
    bind(
        Primitive::Elementwise(elementwise::Op::Clamp),
        &[&lo, x, &hi],
    )
}

/// 0, 1, 2, ... along `dimension` of an array of `shape`.
#[track_caller]
pub fn iota(dtype: DType, shape: &[i64], dimension: usize) -> Array {
    bind(
        Primitive::Shape(shape::Op::Iota {
            dtype,
            shape: dims(shape),
            dimension,
        }),
        &[],
    )
}

/// Broadcasts `x` into `shape`, its dim i going to `broadcast_dimensions[i]`.
#[track_caller]
pub fn broadcast_in_dim(x: &Array, shape: &[i64], broadcast_dimensions: &[i64]) -> Array {
    bind(
        Primitive::Shape(shape::Op::BroadcastInDim {
            shape: dims(shape),
            broadcast_dimensions: dims(broadcast_dimensions),
        }),
        &[x],
    )
}

/// The same elements in a new shape.
#[track_caller]
pub fn reshape(x: &Array, new_sizes: &[i64]) -> Array {
    bind(
        Primitive::Shape(shape::Op::Reshape {
            new_sizes: dims(new_sizes),
        }),
        &[x],
    )
}

/// Permutes the dimensions.
#[track_caller]
pub fn transpose(x: &Array, permutation: &[i64]) -> Array {
    bind(
        Primitive::Shape(shape::Op::Transpose {
            permutation: dims(permutation),
        }),
        &[x],
    )
}

/// `axis` of `x`, counted from the end when negative (JAX's
/// `canonicalize_axis`); out of range, an error naming `function`, the
/// axis, `x`'s type and the caller's line: never clamped or wrapped into
/// range. `lax` and `numpy` check their axes through it.
#[track_caller]
pub(crate) fn canonical_axis(function: &'static str, x: &Array, axis: i64) -> Result<usize> {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    canonical_axis_of_rank(function, "axis", x, axis, x.ndim_or_zero(), location)
}

/// [`canonical_axis`] for a `parameter` that indexes `rank` dimensions
/// (which may differ from `x`'s, as a stacking gather's new one), used at
/// `location`.
pub(crate) fn canonical_axis_of_rank(
    function: &'static str,
    parameter: &str,
    x: &Array,
    axis: i64,
    rank: usize,
    location: oxla_core::Location,
) -> Result<usize> {
    let r = rank as i64;
    let canonical = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&canonical) {
        return Ok(canonical as usize);
    }
    let aval = x.aval().map(ToString::to_string).unwrap_or_default();
    Err(Error::Usage {
        function,
        message: format!("{parameter} {axis} is out of range for {aval} (rank {rank})"),
        location,
    })
}

/// Removes size-1 dimensions (negative ones count from the end, as in
/// `jax.lax.squeeze`).
#[track_caller]
pub fn squeeze(x: &Array, dimensions: &[i64]) -> Array {
    let rank = x.ndim_or_zero() as i64;
    let mut canonical: Vec<i64> = dimensions
        .iter()
        .map(|&d| if d < 0 { d + rank } else { d })
        .collect();
    canonical.sort_unstable();
    bind(
        Primitive::Shape(shape::Op::Squeeze {
            dimensions: dims(&canonical),
        }),
        &[x],
    )
}

/// Inserts size-1 dimensions at `dimensions` (of the result).
#[track_caller]
pub fn expand_dims(x: &Array, dimensions: &[i64]) -> Array {
    let rank = (x.ndim_or_zero() + dimensions.len()) as i64;
    let axes: Vec<i64> = dimensions
        .iter()
        .map(|&d| if d < 0 { d + rank } else { d })
        .collect();
    let mut shape = Vec::new();
    let mut kept = Vec::new();
    let mut source = x.shape_or_empty().iter();
    for d in 0..rank {
        if axes.contains(&d) {
            shape.push(1);
        } else {
            shape.push(*source.next().unwrap_or(&1));
            kept.push(d);
        }
    }
    broadcast_in_dim(x, &shape, &kept)
}

/// Reverses the elements along dimensions.
#[track_caller]
pub fn rev(x: &Array, dimensions: &[i64]) -> Array {
    bind(
        Primitive::Shape(shape::Op::Rev {
            dimensions: dims(dimensions),
        }),
        &[x],
    )
}

/// Cuts `x` along `axis` into consecutive pieces of `sizes` (which sum to
/// that dimension), as `jax.lax.split` (a negative axis counts from the
/// end): one equation, whose transpose is a concatenate.
#[track_caller]
pub fn split(x: &Array, sizes: &[i64], axis: i64) -> Vec<Array> {
    let axis = match canonical_axis("lax::split", x, axis) {
        Ok(axis) => axis,
        Err(e) => return vec![Array::error(e); sizes.len().max(1)],
    };
    crate::ops::bind_n(
        Primitive::Shape(shape::Op::Split {
            axis,
            sizes: dims(sizes),
        }),
        &[x],
        sizes.len(),
    )
}

/// Joins arrays along a dimension.
#[track_caller]
pub fn concatenate(xs: &[&Array], dimension: usize) -> Array {
    bind(Primitive::Shape(shape::Op::Concatenate { dimension }), xs)
}

/// Pads with `value`: per dimension (low, high, interior).
#[track_caller]
pub fn pad(x: &Array, value: &Array, config: &[(i64, i64, i64)]) -> Array {
    let value = convert_element_type_weak(value, x.dtype_or_bool(), false);
    bind(
        Primitive::Shape(shape::Op::Pad {
            config: config.to_vec(),
        }),
        &[x, &value],
    )
}

/// The box `start..limit` with `strides` (all 1 when `None`).
#[track_caller]
pub fn slice(x: &Array, start: &[i64], limit: &[i64], strides: Option<&[i64]>) -> Array {
    let strides = strides
        .map(dims)
        .unwrap_or_else(|| start.iter().map(|_| 1).collect());
    bind(
        Primitive::Index(index::Op::Slice {
            start_indices: dims(start),
            limit_indices: dims(limit),
            strides,
        }),
        &[x],
    )
}

macro_rules! reduction {
    ($($name:ident => $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "` over `axes`.")]
        #[track_caller]
        pub fn $name(x: &Array, axes: &[i64]) -> Array {
            bind(Primitive::Reduce(reduction::Op::Reduce { op: ReduceOp::$op, axes: dims(axes) }), &[x])
        }
    )*};
}

reduction! {
    reduce_sum => Sum;
    reduce_prod => Prod;
    reduce_max => Max;
    reduce_min => Min;
    reduce_and => And;
    reduce_or => Or;
}

/// Dimension numbers of [`dot_general`]: ((lhs contracting, rhs
/// contracting), (lhs batch, rhs batch)).
pub type DotDimensionNumbers<'a> = ((&'a [i64], &'a [i64]), (&'a [i64], &'a [i64]));

/// Generalized matrix product.
#[track_caller]
pub fn dot_general(
    x: &Array,
    y: &Array,
    dimension_numbers: DotDimensionNumbers<'_>,
    preferred_element_type: Option<DType>,
) -> Array {
    dot_general_with_precision(x, y, dimension_numbers, preferred_element_type, None)
}

/// [`dot_general`] with a precision for accelerators (`Precision::Highest`
/// for full f32 on GPUs and TPUs; CPUs ignore it). `None` takes
/// [`crate::config::default_matmul_precision`].
#[track_caller]
pub fn dot_general_with_precision(
    x: &Array,
    y: &Array,
    dimension_numbers: DotDimensionNumbers<'_>,
    preferred_element_type: Option<DType>,
    precision: Option<oxla_core::Precision>,
) -> Array {
    dot_general_typed(
        x,
        y,
        dimension_numbers,
        (preferred_element_type, precision),
        None,
    )
}

/// [`dot_general`] whose result has the explicit sharding `out_sharding`
/// (JAX's `out_sharding=`): on a mesh with explicit axes, a product whose
/// contracting dimensions are split on both operands leaves the result's
/// split ambiguous, and this names it. The spec is read on the operands'
/// mesh (or the one [`crate::sharding::use_mesh`] set).
#[track_caller]
pub fn dot_general_out_sharding(
    x: &Array,
    y: &Array,
    dimension_numbers: DotDimensionNumbers<'_>,
    preferred_element_type: Option<DType>,
    out_sharding: &crate::sharding::PartitionSpec,
) -> Array {
    let location = crate::ops::current_location(std::panic::Location::caller());
    match crate::sharding::ShardingTarget::explicit_type(out_sharding, &[x, y], location) {
        Ok(sharding) => dot_general_typed(
            x,
            y,
            dimension_numbers,
            (preferred_element_type, None),
            Some(sharding),
        ),
        Err(e) => Array::error(e),
    }
}

/// The `dot_general` with every parameter: the result dtype and precision,
/// and the result's explicit sharding (`None`: as the operands give it).
#[track_caller]
pub(crate) fn dot_general_typed(
    x: &Array,
    y: &Array,
    dimension_numbers: DotDimensionNumbers<'_>,
    (preferred_element_type, precision): (Option<DType>, Option<oxla_core::Precision>),
    out_sharding: Option<oxla_core::ShardingDesc>,
) -> Array {
    let ((lc, rc), (lb, rb)) = dimension_numbers;
    let (x, y) = match_weak(x, y);
    bind(
        Primitive::Contract(contract::Op::DotGeneral {
            lhs_contracting: dims(lc),
            rhs_contracting: dims(rc),
            lhs_batch: dims(lb),
            rhs_batch: dims(rb),
            preferred_element_type,
            precision: precision.or_else(crate::config::default_matmul_precision),
            out_sharding,
        }),
        &[&x, &y],
    )
}

/// Negative start indices count from the end, as in JAX (`i + dim` where
/// `i < 0`).
#[track_caller]
fn normalize_indices(x: &Array, start: &[&Array]) -> Vec<Array> {
    start
        .iter()
        .zip(x.shape_or_empty().iter().chain(std::iter::repeat(&0)))
        .map(|(i, &dim)| {
            let negative = lt(i, &Array::weak_scalar(0i32));
            let wrapped = add(i, &Array::weak_scalar(dim as i32));
            select_n(&negative, &[i, &wrapped])
        })
        .collect()
}

/// The window `slice_sizes` starting at `start` (integer scalars; negative
/// ones count from the end; clamped so the window fits, as JAX does).
#[track_caller]
pub fn dynamic_slice(x: &Array, start: &[&Array], slice_sizes: &[i64]) -> Array {
    let indices = normalize_indices(x, start);
    let mut operands = vec![x];
    operands.extend(indices.iter());
    bind(
        Primitive::Index(index::Op::DynamicSlice {
            slice_sizes: dims(slice_sizes),
        }),
        &operands,
    )
}

/// `x` with `update` written at `start` (negative indices count from the
/// end; clamped so the update fits).
#[track_caller]
pub fn dynamic_update_slice(x: &Array, update: &Array, start: &[&Array]) -> Array {
    let indices = normalize_indices(x, start);
    let mut operands = vec![x, update];
    operands.extend(indices.iter());
    bind(Primitive::Index(index::Op::DynamicUpdateSlice), &operands)
}

/// Reinterprets the bits of `x` as `dtype`.
#[track_caller]
pub fn bitcast_convert_type(x: &Array, dtype: DType) -> Array {
    bind(
        Primitive::Elementwise(elementwise::Op::BitcastConvertType { new_dtype: dtype }),
        &[x],
    )
}

macro_rules! cumulative {
    ($($name:ident => $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "` along `axis` (from the end if `reverse`).")]
        #[track_caller]
        pub fn $name(x: &Array, axis: usize, reverse: bool) -> Array {
            bind(Primitive::Reduce(reduction::Op::Cumulative { op: oxla_core::CumulativeOp::$op, axis, reverse }), &[x])
        }
    )*};
}

cumulative! { cumsum => Sum; cumprod => Prod; cummax => Max; cummin => Min; }

/// Reduces windows of `x` with `op` (`reduce_window_sum`, `_max`, `_min`).
#[track_caller]
pub fn reduce_window(
    x: &Array,
    op: oxla_core::WindowOp,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: &[(i64, i64)],
) -> Array {
    let ones: Vec<i64> = window_dimensions.iter().map(|_| 1).collect();
    reduce_window_dilated(
        x,
        op,
        window_dimensions,
        window_strides,
        padding,
        &ones,
        &ones,
    )
}

/// [`reduce_window`] with base and window dilations.
#[track_caller]
pub fn reduce_window_dilated(
    x: &Array,
    op: oxla_core::WindowOp,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: &[(i64, i64)],
    base_dilation: &[i64],
    window_dilation: &[i64],
) -> Array {
    bind(
        Primitive::Reduce(reduction::Op::ReduceWindow {
            op,
            window_dimensions: dims(window_dimensions),
            window_strides: dims(window_strides),
            padding: padding.to_vec(),
            base_dilation: dims(base_dilation),
            window_dilation: dims(window_dilation),
        }),
        &[x],
    )
}

/// Adds each `source` value where the maximum of its window of `operand`
/// was (the gradient of a max-pool).
#[track_caller]
pub fn select_and_scatter_add(
    source: &Array,
    operand: &Array,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: &[(i64, i64)],
) -> Array {
    bind(
        Primitive::Reduce(reduction::Op::SelectAndScatterAdd {
            window_dimensions: dims(window_dimensions),
            window_strides: dims(window_strides),
            padding: padding.to_vec(),
        }),
        &[source, operand],
    )
}

/// Index of the maximum along `axis` (first on ties; NaN counts as the maximum).
#[track_caller]
pub fn argmax(x: &Array, axis: usize, index_dtype: DType) -> Array {
    bind(
        Primitive::Reduce(reduction::Op::ArgMinMax {
            op: oxla_core::ArgOp::Max,
            axis,
            index_dtype,
        }),
        &[x],
    )
}

/// Index of the minimum along `axis` (first on ties; NaN counts as the minimum).
#[track_caller]
pub fn argmin(x: &Array, axis: usize, index_dtype: DType) -> Array {
    bind(
        Primitive::Reduce(reduction::Op::ArgMinMax {
            op: oxla_core::ArgOp::Min,
            axis,
            index_dtype,
        }),
        &[x],
    )
}

/// Sorts `operands` along `dimension` (negative counts from the end, as
/// `jax.lax.sort`) by the first `num_keys` (NaN last).
#[track_caller]
pub fn sort(operands: &[&Array], dimension: i64, is_stable: bool, num_keys: usize) -> Vec<Array> {
    // A match, not a closure: the error names the caller's line.
    let dimension = match operands.first() {
        Some(x) => match canonical_axis("lax::sort", x, dimension) {
            Ok(d) => d,
            Err(e) => return vec![Array::error(e); operands.len()],
        },
        // No operand: sort's own shape rule reports it.
        None => 0,
    };
    bind_n(
        Primitive::Reduce(reduction::Op::Sort {
            dimension,
            is_stable,
            num_keys,
        }),
        operands,
        operands.len(),
    )
}

/// The `k` largest elements of the last axis, and their indices (i32).
#[track_caller]
pub fn top_k(x: &Array, k: i64) -> (Array, Array) {
    let mut outs = bind_n(Primitive::Reduce(reduction::Op::TopK { k }), &[x], 2);
    let indices = outs.pop().expect("two outputs");
    (outs.pop().expect("two outputs"), indices)
}

/// The `k` largest elements along `axis` (negative from the end), and their
/// indices (i32), as `jax.lax.top_k(x, k, axis=axis)`: equal elements keep
/// their order. A negative `k` is an error.
#[track_caller]
pub fn top_k_along(x: &Array, k: i64, axis: i64) -> (Array, Array) {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    let fail = |e: Error| (Array::error(e.clone()), Array::error(e));
    if k < 0 {
        return fail(Error::Usage {
            function: "top_k",
            message: format!("k must be nonnegative, got {k}"),
            location,
        });
    }
    let axis = match canonical_axis("top_k", x, axis) {
        Ok(a) => a as i64,
        Err(e) => return fail(e),
    };
    let last = x.ndim_or_zero() as i64 - 1;
    if axis == last {
        return top_k(x, k);
    }
    // The primitive works on the last axis: swap `axis` there and back.
    let mut swap: Vec<i64> = (0..=last).collect();
    swap.swap(axis as usize, last as usize);
    let (values, indices) = top_k(&transpose(x, &swap), k);
    (transpose(&values, &swap), transpose(&indices, &swap))
}

/// Slices of `src` at the positions `idxs[i]` along `axes[i]` (one index
/// array per axis, all of one shape `[n]`), as `jax.lax.index_take`: the
/// positions are taken modulo each axis's size, and the result is `[n]`
/// followed by the dims not in `axes`.
#[track_caller]
pub fn index_take(src: &Array, idxs: &[&Array], axes: &[i64]) -> Array {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    if idxs.len() != axes.len() || idxs.is_empty() {
        return Array::error(Error::Usage {
            function: "index_take",
            message: format!(
                "needs one index array per axis, got {} for {} axes",
                idxs.len(),
                axes.len()
            ),
            location,
        });
    }
    let shape = src.shape_or_empty();
    let mut canonical = Vec::with_capacity(axes.len());
    for &a in axes {
        match canonical_axis("index_take", src, a) {
            Ok(a) => canonical.push(a),
            Err(e) => return Array::error(e),
        }
    }
    let columns: Vec<Array> = idxs
        .iter()
        .zip(&canonical)
        .map(|(i, &a)| {
            let size =
                convert_element_type(&Array::weak_scalar(shape[a] as i32), i.dtype_or_bool());
            let wrapped = crate::numpy::remainder(i, &size);
            expand_dims(&wrapped, &[1])
        })
        .collect();
    let refs: Vec<&Array> = columns.iter().collect();
    let indices = concatenate(&refs, 1);
    let mut slice_sizes = shape.to_vec();
    for &a in &canonical {
        slice_sizes[a] = 1;
    }
    let kept = shape.len() - canonical.len();
    let axes_dims: Dims = canonical.iter().map(|&a| a as i64).collect();
    gather(
        src,
        &indices,
        oxla_core::GatherDimensionNumbers {
            offset_dims: (1..=kept as i64).collect(),
            collapsed_slice_dims: axes_dims.clone(),
            start_index_map: axes_dims,
        },
        &slice_sizes,
        oxla_core::GatherMode::PromiseInBounds,
        Scalar::Int(0),
    )
}

/// Layouts of a convolution as JAX's strings, e.g. `("NHWC", "HWIO", "NHWC")`:
/// N batch, C feature, O/I kernel output/input feature, other letters spatial.
pub type ConvLayout<'a> = (&'a str, &'a str, &'a str);

/// The dimension numbers of string layouts (spatial dims in the kernel's
/// order, as `jax.lax.conv_general_permutations`).
pub fn conv_dimension_numbers(layout: ConvLayout<'_>) -> oxla_core::ConvDimensionNumbers {
    let (lhs, rhs, out) = layout;
    let position = |spec: &str, c: char| spec.find(c).map_or(-1, |p| p as i64);
    let spatial: Vec<char> = rhs.chars().filter(|c| *c != 'O' && *c != 'I').collect();
    let perm = |spec: &str, batch: char, feature: char| -> Dims {
        let mut p: Dims = [position(spec, batch), position(spec, feature)]
            .into_iter()
            .collect();
        p.extend(spatial.iter().map(|&c| position(spec, c)));
        p
    };
    oxla_core::ConvDimensionNumbers {
        lhs_spec: perm(lhs, 'N', 'C'),
        rhs_spec: perm(rhs, 'O', 'I'),
        out_spec: perm(out, 'N', 'C'),
    }
}

/// Padding of a convolution or window: explicit (low, high) pairs, or
/// `SAME` / `VALID` as JAX computes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Padding {
    /// No padding.
    Valid,
    /// Output size ceil(input / stride), padding split low-first.
    Same,
    /// (low, high) per spatial dimension.
    Explicit(Vec<(i64, i64)>),
}

impl Padding {
    /// The (low, high) pairs for inputs of `sizes`, windows of `windows` and
    /// `strides` (sizes and windows already dilated).
    pub fn pairs(&self, sizes: &[i64], windows: &[i64], strides: &[i64]) -> Vec<(i64, i64)> {
        match self {
            Padding::Explicit(p) => p.clone(),
            Padding::Valid => sizes.iter().map(|_| (0, 0)).collect(),
            Padding::Same => sizes
                .iter()
                .zip(windows)
                .zip(strides)
                .map(|((&n, &w), &s)| {
                    let out = (n + s - 1) / s;
                    let pad = ((out - 1) * s + w - n).max(0);
                    (pad / 2, pad - pad / 2)
                })
                .collect(),
        }
    }
}

/// Options of [`conv_general_dilated`] beyond strides and padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvOptions {
    /// Input dilation per spatial dim (all 1 when empty).
    pub lhs_dilation: Vec<i64>,
    /// Kernel dilation per spatial dim (all 1 when empty).
    pub rhs_dilation: Vec<i64>,
    /// Feature groups.
    pub feature_group_count: i64,
    /// Batch groups.
    pub batch_group_count: i64,
    /// The result dtype, if not the operands'.
    pub preferred_element_type: Option<DType>,
    /// Precision on accelerators (`Precision::Highest` for full f32 on
    /// GPUs and TPUs; CPUs ignore it); `None` takes
    /// [`crate::config::default_matmul_precision`], as JAX's.
    pub precision: Option<oxla_core::Precision>,
}

impl Default for ConvOptions {
    fn default() -> Self {
        Self {
            lhs_dilation: Vec::new(),
            rhs_dilation: Vec::new(),
            feature_group_count: 1,
            batch_group_count: 1,
            preferred_element_type: None,
            precision: None,
        }
    }
}

/// N-dimensional convolution, as `jax.lax.conv_general_dilated`.
#[track_caller]
pub fn conv_general_dilated(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: &Padding,
    layout: ConvLayout<'_>,
    options: &ConvOptions,
) -> Array {
    let numbers = conv_dimension_numbers(layout);
    let spatial = window_strides.len();
    let ones = vec![1i64; spatial];
    let or_ones = |d: &Vec<i64>| {
        if d.is_empty() {
            ones.clone()
        } else {
            d.clone()
        }
    };
    let (lhs_dilation, rhs_dilation) = (
        or_ones(&options.lhs_dilation),
        or_ones(&options.rhs_dilation),
    );
    let dim = |a: &Array, spec: &Dims, i: usize| {
        a.shape_or_empty()
            .get(spec[i].max(0) as usize)
            .copied()
            .unwrap_or(0)
    };
    let sizes: Vec<i64> = (0..spatial)
        .map(|i| (dim(lhs, &numbers.lhs_spec, i + 2) - 1).max(0) * lhs_dilation[i] + 1)
        .collect();
    let windows: Vec<i64> = (0..spatial)
        .map(|i| (dim(rhs, &numbers.rhs_spec, i + 2) - 1).max(0) * rhs_dilation[i] + 1)
        .collect();
    let (lhs, rhs) = match_weak(lhs, rhs);
    bind(
        Primitive::Contract(contract::Op::ConvGeneralDilated {
            window_strides: dims(window_strides),
            padding: padding.pairs(&sizes, &windows, window_strides),
            lhs_dilation: dims(&lhs_dilation),
            rhs_dilation: dims(&rhs_dilation),
            dimension_numbers: numbers,
            feature_group_count: options.feature_group_count,
            batch_group_count: options.batch_group_count,
            preferred_element_type: options.preferred_element_type,
            precision: options
                .precision
                .or_else(crate::config::default_matmul_precision),
        }),
        &[&lhs, &rhs],
    )
}

/// Slices of `x` at `indices` (integer, last dim the index vector), as
/// `jax.lax.gather`; `Clip` clamps out-of-bounds starts, `Fill` gives
/// `fill_value` for them.
#[track_caller]
pub fn gather(
    x: &Array,
    indices: &Array,
    dimension_numbers: oxla_core::GatherDimensionNumbers,
    slice_sizes: &[i64],
    mode: oxla_core::GatherMode,
    fill_value: Scalar,
) -> Array {
    bind(
        Primitive::Index(index::Op::Gather {
            dimension_numbers,
            slice_sizes: dims(slice_sizes),
            mode,
            fill_value: oxla_core::ScalarKey::of(fill_value),
        }),
        &[x, indices],
    )
}

/// Writes (`Set`) or combines `updates` into `x` at `indices`, as
/// `jax.lax.scatter` and its `-add`, `-mul`, `-min`, `-max` forms; updates
/// whose window falls outside `x` are dropped.
#[track_caller]
pub fn scatter(
    x: &Array,
    indices: &Array,
    updates: &Array,
    op: oxla_core::ScatterOp,
    dimension_numbers: oxla_core::ScatterDimensionNumbers,
) -> Array {
    let updates = convert_element_type_weak(updates, x.dtype_or_bool(), false);
    bind(
        Primitive::Index(index::Op::Scatter {
            op,
            dimension_numbers,
        }),
        &[x, indices, &updates],
    )
}

/// [`scatter`] with JAX's `mode`: `Clip` clamps each index vector so that
/// its whole window lies inside `x` (JAX's `_clamp_scatter_indices`);
/// `Fill` (JAX's `FILL_OR_DROP`, its default) and `PromiseInBounds` drop
/// updates whose window falls outside.
///
/// ```
/// use oxla::{Array, lax};
/// use oxla::lax::{GatherMode, ScatterDimensionNumbers, ScatterOp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[0.0f32; 4], &[4])?;
/// let at = Array::from_slice(&[1i32, 9], &[2, 1])?;                 // 9 is past the end
/// let ones = Array::from_slice(&[1.0f32, 1.0], &[2])?;
/// let numbers = ScatterDimensionNumbers {
///     update_window_dims: [].into_iter().collect(),
///     inserted_window_dims: [0].into_iter().collect(),
///     scatter_dims_to_operand_dims: [0].into_iter().collect(),
/// };
/// let clipped = lax::scatter_with_mode(&x, &at, &ones, ScatterOp::Add, numbers.clone(), GatherMode::Clip);
/// assert_eq!(clipped.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 1.0]);
/// let dropped = lax::scatter_with_mode(&x, &at, &ones, ScatterOp::Add, numbers, GatherMode::Fill);
/// assert_eq!(dropped.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn scatter_with_mode(
    x: &Array,
    indices: &Array,
    updates: &Array,
    op: oxla_core::ScatterOp,
    dimension_numbers: oxla_core::ScatterDimensionNumbers,
    mode: oxla_core::GatherMode,
) -> Array {
    let indices = match mode {
        oxla_core::GatherMode::Clip => {
            clamp_scatter_indices(x, indices, updates, &dimension_numbers)
        }
        oxla_core::GatherMode::Fill | oxla_core::GatherMode::PromiseInBounds => indices.clone(),
    };
    scatter(x, &indices, updates, op, dimension_numbers)
}

/// `indices` clamped so that each update window lies inside `x`.
#[track_caller]
fn clamp_scatter_indices(
    x: &Array,
    indices: &Array,
    updates: &Array,
    numbers: &oxla_core::ScatterDimensionNumbers,
) -> Array {
    let (x_shape, update_shape) = (x.shape_or_empty(), updates.shape_or_empty());
    let mut window = numbers.update_window_dims.iter();
    let slice_sizes: Vec<i64> = (0..x_shape.len() as i64)
        .map(|d| {
            if numbers.inserted_window_dims.contains(&d) {
                1
            } else {
                window
                    .next()
                    .and_then(|&w| update_shape.get(w as usize).copied())
                    .unwrap_or(1)
            }
        })
        .collect();
    let upper: Vec<i32> = numbers
        .scatter_dims_to_operand_dims
        .iter()
        .map(|&d| {
            let d = d as usize;
            (x_shape.get(d).copied().unwrap_or(1) - slice_sizes.get(d).copied().unwrap_or(1))
                .clamp(0, i64::from(i32::MAX)) as i32
        })
        .collect();
    let dtype = indices.dtype_or_bool();
    let upper = match Array::from_slice(&upper, &[upper.len() as i64]) {
        Ok(u) => convert_element_type(&u, dtype),
        Err(e) => return Array::error(e),
    };
    let index_shape = indices.shape_or_empty().to_vec();
    let last = index_shape.len().saturating_sub(1) as i64;
    let upper = broadcast_in_dim(&upper, &index_shape, &[last]);
    let zero = convert_element_type(&Array::weak_scalar(0i32), dtype);
    clamp(&zero, indices, &upper)
}

/// Negative indices count from the end of a dimension of size `dim`.
#[track_caller]
pub(crate) fn wrap_negative(indices: &Array, dim: i64) -> Array {
    let negative = lt(indices, &Array::weak_scalar(0i32));
    let wrapped = add(indices, &Array::weak_scalar(dim as i32));
    select_n(&negative, &[indices, &wrapped])
}

/// `x` with a zero derivative: differentiation treats it as a constant
/// (`jax.lax.stop_gradient`).
///
/// ```
/// use oxla::{Array, grad, lax};
/// # fn main() -> oxla::Result<()> {
/// let f = |x: Array| &x * &lax::stop_gradient(&x);        // x · const(x)
/// assert_eq!(grad(f).call(Array::scalar(3.0f32)?)?.item::<f32>()?, 3.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn stop_gradient(x: &Array) -> Array {
    if !crate::trace::is_tracing() {
        return x.clone();
    }
    bind(Primitive::Marker(marker::Op::StopGradient), &[x])
}
