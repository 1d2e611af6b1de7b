//! `oxla::lax`: the primitives, one function each, as `jax.lax` has them.
//! Operands must already have one dtype (weakly typed scalars are converted
//! to the other operand's type, as JAX's lax does); shapes must be equal or
//! broadcast as the primitive allows (rank-0 operands, size-1 dims).

use oxla_core::promotion::promote as promote_pair;
use oxla_core::{BinaryOp, Comparison, DType, Dims, Primitive, ReduceOp, Scalar, UnaryOp};

use crate::array::{Array, Inner};
use crate::config::x64_enabled;
use crate::ops::bind;

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
                Primitive::ConvertElementType {
                    new_dtype: dtype,
                    weak_type,
                },
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
    let as_f64 = match value {
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::Int(i) => i as f64,
        Scalar::UInt(u) => u as f64,
        Scalar::Float(f) => f,
    };
    match dtype {
        DType::Bool => Scalar::Bool(as_f64 != 0.0),
        d if d.is_float() => Scalar::Float(as_f64),
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
            bind(Primitive::Unary(UnaryOp::$op), &[x])
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
}

macro_rules! binary {
    ($($name:ident => $op:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let (x, y) = match_weak(x, y);
            bind(Primitive::Binary(BinaryOp::$op), &[&x, &y])
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
    and => And: "Logical or bitwise and.";
    or => Or: "Logical or bitwise or.";
    xor => Xor: "Logical or bitwise xor.";
    shift_left => ShiftLeft: "x << y";
    shift_right_logical => ShiftRightLogical: "x >> y, zero-filling.";
    shift_right_arithmetic => ShiftRightArithmetic: "x >> y, sign-filling.";
}

macro_rules! compare {
    ($($name:ident => $c:ident;)*) => {$(
        #[doc = concat!("Elementwise `", stringify!($name), "` (bool result).")]
        #[track_caller]
        pub fn $name(x: &Array, y: &Array) -> Array {
            let (x, y) = match_weak(x, y);
            bind(Primitive::Compare(Comparison::$c), &[&x, &y])
        }
    )*};
}

compare! { eq => Eq; ne => Ne; lt => Lt; le => Le; gt => Gt; ge => Ge; }

/// x ^ y for a constant integer y.
#[track_caller]
pub fn integer_pow(x: &Array, y: i32) -> Array {
    bind(Primitive::IntegerPow { y }, &[x])
}

/// `cases[which]` element by element (`which` bool for two cases, else i32).
#[track_caller]
pub fn select_n(which: &Array, cases: &[&Array]) -> Array {
    let mut operands = vec![which];
    operands.extend_from_slice(cases);
    bind(Primitive::SelectN, &operands)
}

/// min(max(x, lo), hi).
#[track_caller]
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Array {
    let dtype = x.dtype();
    let lo = convert_element_type_weak(lo, dtype, lo.weak_type() && x.weak_type());
    let hi = convert_element_type_weak(hi, dtype, hi.weak_type() && x.weak_type());
    bind(Primitive::Clamp, &[&lo, x, &hi])
}

/// 0, 1, 2, ... along `dimension` of an array of `shape`.
#[track_caller]
pub fn iota(dtype: DType, shape: &[i64], dimension: usize) -> Array {
    bind(
        Primitive::Iota {
            dtype,
            shape: dims(shape),
            dimension,
        },
        &[],
    )
}

/// Broadcasts `x` into `shape`, its dim i going to `broadcast_dimensions[i]`.
#[track_caller]
pub fn broadcast_in_dim(x: &Array, shape: &[i64], broadcast_dimensions: &[i64]) -> Array {
    bind(
        Primitive::BroadcastInDim {
            shape: dims(shape),
            broadcast_dimensions: dims(broadcast_dimensions),
        },
        &[x],
    )
}

/// The same elements in a new shape.
#[track_caller]
pub fn reshape(x: &Array, new_sizes: &[i64]) -> Array {
    bind(
        Primitive::Reshape {
            new_sizes: dims(new_sizes),
        },
        &[x],
    )
}

/// Permutes the dimensions.
#[track_caller]
pub fn transpose(x: &Array, permutation: &[i64]) -> Array {
    bind(
        Primitive::Transpose {
            permutation: dims(permutation),
        },
        &[x],
    )
}

/// Removes size-1 dimensions.
#[track_caller]
pub fn squeeze(x: &Array, dimensions: &[i64]) -> Array {
    bind(
        Primitive::Squeeze {
            dimensions: dims(dimensions),
        },
        &[x],
    )
}

/// Inserts size-1 dimensions at `dimensions` (of the result).
#[track_caller]
pub fn expand_dims(x: &Array, dimensions: &[i64]) -> Array {
    let rank = (x.ndim() + dimensions.len()) as i64;
    let axes: Vec<i64> = dimensions
        .iter()
        .map(|&d| if d < 0 { d + rank } else { d })
        .collect();
    let mut shape = Vec::new();
    let mut kept = Vec::new();
    let mut source = x.shape().iter();
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
        Primitive::Rev {
            dimensions: dims(dimensions),
        },
        &[x],
    )
}

/// Joins arrays along a dimension.
#[track_caller]
pub fn concatenate(xs: &[&Array], dimension: usize) -> Array {
    bind(Primitive::Concatenate { dimension }, xs)
}

/// Pads with `value`: per dimension (low, high, interior).
#[track_caller]
pub fn pad(x: &Array, value: &Array, config: &[(i64, i64, i64)]) -> Array {
    let value = convert_element_type_weak(value, x.dtype(), false);
    bind(
        Primitive::Pad {
            config: config.to_vec(),
        },
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
        Primitive::Slice {
            start_indices: dims(start),
            limit_indices: dims(limit),
            strides,
        },
        &[x],
    )
}

macro_rules! reduction {
    ($($name:ident => $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "` over `axes`.")]
        #[track_caller]
        pub fn $name(x: &Array, axes: &[i64]) -> Array {
            bind(Primitive::Reduce { op: ReduceOp::$op, axes: dims(axes) }, &[x])
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
    let ((lc, rc), (lb, rb)) = dimension_numbers;
    let (x, y) = match_weak(x, y);
    bind(
        Primitive::DotGeneral {
            lhs_contracting: dims(lc),
            rhs_contracting: dims(rc),
            lhs_batch: dims(lb),
            rhs_batch: dims(rb),
            preferred_element_type,
        },
        &[&x, &y],
    )
}
