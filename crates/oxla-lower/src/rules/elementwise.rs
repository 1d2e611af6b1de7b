//! The lowering rules of the elementwise family (`oxla_core::primitive::elementwise`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, direction, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::elementwise::Op;
use oxla_core::{Aval, BinaryOp, DType, Scalar, UnaryOp};

/// The StableHLO of a primitive of this family.
pub(crate) fn lower<'c, 'a>(
    op: &Op,
    e: &mut Emitter<'c, 'a>,
    input: &LowerArgs<'_, 'c, 'a>,
) -> Result<Values<'c, 'a>, LowerError> {
    let LowerArgs {
        inputs,
        in_avals,
        out_avals,
        loc,
        ..
    } = *input;
    let out = &*first_result(out_avals);
    match op {
        Op::Unary(UnaryOp::Square) => e.op(
            "stablehlo.multiply",
            &[inputs[0], inputs[0]],
            &[out],
            &[],
            loc,
        ),
        Op::Unary(UnaryOp::BesselI0e) => {
            crate::special::bessel_i0e(e, inputs[0], in_avals[0], loc).map(|v| vec![v])
        }
        Op::Unary(UnaryOp::Exp2) => {
            let ln2 = e.constant(in_avals[0], Scalar::Float(std::f64::consts::LN_2), loc)?;
            let scaled = e.op("stablehlo.multiply", &[inputs[0], ln2], &[out], &[], loc)?[0];
            e.op("stablehlo.exponential", &[scaled], &[out], &[], loc)
        }
        // StableHLO's sign takes signed types only; for unsigned integers it
        // is (x != 0), as JAX lowers it.
        Op::Unary(UnaryOp::Sign) if in_avals[0].dtype.is_unsigned_int() => {
            let zero = e.constant(out, Scalar::Int(0), loc)?;
            let one = e.constant(out, Scalar::Int(1), loc)?;
            let predicate_aval = out.with_dtype(DType::Bool);
            let is_zero = e.op(
                "stablehlo.compare",
                &[inputs[0], zero],
                &[&predicate_aval],
                &[
                    (
                        "comparison_direction",
                        "#stablehlo<comparison_direction EQ>".into(),
                    ),
                    ("compare_type", attrs::compare_type(out.dtype).into()),
                ],
                loc,
            )?[0];
            e.op("stablehlo.select", &[is_zero, zero, one], &[out], &[], loc)
        }
        Op::Unary(op @ (UnaryOp::Sin | UnaryOp::Cos)) if out.dtype.is_complex() => {
            Ok(vec![complex_sin_cos(e, *op, inputs[0], out, loc)?])
        }
        Op::Unary(UnaryOp::Conj) => Ok(vec![conj(e, inputs[0], out, loc)?]),
        Op::Unary(op) => e.op(unary_op_name(*op), inputs, &[out], &[], loc),
        Op::Binary(op) => {
            let operands = broadcast_operands(e, inputs, in_avals, &out.shape, loc)?;
            e.op(binary_op_name(*op), &operands, &[out], &[], loc)
        }
        Op::Compare(c) => {
            let operands = broadcast_operands(e, inputs, in_avals, &out.shape, loc)?;
            e.op(
                "stablehlo.compare",
                &operands,
                &[out],
                &[
                    (
                        "comparison_direction",
                        format!("#stablehlo<comparison_direction {}>", direction(*c)),
                    ),
                    (
                        "compare_type",
                        attrs::compare_type(in_avals[0].dtype).to_string(),
                    ),
                ],
                loc,
            )
        }
        Op::IntegerPow { y } => Ok(vec![integer_pow(e, inputs[0], out, *y, loc)?]),
        Op::SelectN => Ok(vec![select_n(
            e,
            inputs[0],
            in_avals[0],
            &inputs[1..],
            out,
            0,
            loc,
        )?]),
        Op::Clamp => e.op("stablehlo.clamp", inputs, &[out], &[], loc),
        Op::ConvertElementType { .. } => e.op("stablehlo.convert", inputs, &[out], &[], loc),
        Op::BitcastConvertType { .. } => {
            e.op("stablehlo.bitcast_convert", inputs, &[out], &[], loc)
        }
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => e.op(
            "stablehlo.reduce_precision",
            inputs,
            &[out],
            &[
                ("exponent_bits", format!("{exponent_bits} : i32")),
                ("mantissa_bits", format!("{mantissa_bits} : i32")),
            ],
            loc,
        ),
    }
}

fn unary_op_name(op: UnaryOp) -> &'static str {
    use UnaryOp::*;
    match op {
        Neg => "stablehlo.negate",
        Sign => "stablehlo.sign",
        Abs => "stablehlo.abs",
        Floor => "stablehlo.floor",
        Ceil => "stablehlo.ceil",
        Round => "stablehlo.round_nearest_afz",
        RoundNearestEven => "stablehlo.round_nearest_even",
        Exp => "stablehlo.exponential",
        Exp2 => "stablehlo.exponential",
        Expm1 => "stablehlo.exponential_minus_one",
        Log => "stablehlo.log",
        Log1p => "stablehlo.log_plus_one",
        Sqrt => "stablehlo.sqrt",
        Rsqrt => "stablehlo.rsqrt",
        Cbrt => "stablehlo.cbrt",
        Tanh => "stablehlo.tanh",
        Logistic => "stablehlo.logistic",
        Sin => "stablehlo.sine",
        Cos => "stablehlo.cosine",
        Tan => "stablehlo.tan",
        Asin => "chlo.asin",
        Acos => "chlo.acos",
        Atan => "chlo.atan",
        Sinh => "chlo.sinh",
        Cosh => "chlo.cosh",
        Asinh => "chlo.asinh",
        Acosh => "chlo.acosh",
        Atanh => "chlo.atanh",
        Erf => "chlo.erf",
        Erfc => "chlo.erfc",
        ErfInv => "chlo.erf_inv",
        Lgamma => "chlo.lgamma",
        Digamma => "chlo.digamma",
        Square => "stablehlo.multiply",
        IsFinite => "stablehlo.is_finite",
        Not => "stablehlo.not",
        PopulationCount => "stablehlo.popcnt",
        CountLeadingZeros => "stablehlo.count_leading_zeros",
        // Never emitted as one op: `lower` expands it with
        // `special::bessel_i0e` (as Exp2 and Square, special-cased there).
        BesselI0e => "stablehlo.multiply",
        BesselI1e => "chlo.bessel_i1e",
        Real => "stablehlo.real",
        Imag => "stablehlo.imag",
        // Never emitted as one op: `lower` expands it as JAX does,
        // `complex(real(x), -imag(x))`.
        Conj => "stablehlo.complex",
    }
}

fn binary_op_name(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Add => "stablehlo.add",
        Sub => "stablehlo.subtract",
        Mul => "stablehlo.multiply",
        Div => "stablehlo.divide",
        Rem => "stablehlo.remainder",
        Pow => "stablehlo.power",
        Max => "stablehlo.maximum",
        Min => "stablehlo.minimum",
        Atan2 => "stablehlo.atan2",
        NextAfter => "chlo.next_after",
        Polygamma => "chlo.polygamma",
        Zeta => "chlo.zeta",
        And => "stablehlo.and",
        Or => "stablehlo.or",
        Xor => "stablehlo.xor",
        ShiftLeft => "stablehlo.shift_left",
        ShiftRightLogical => "stablehlo.shift_right_logical",
        ShiftRightArithmetic => "stablehlo.shift_right_arithmetic",
        Complex => "stablehlo.complex",
    }
}

/// The complex conjugate of `z` (of type `aval`) as JAX lowers it:
/// `complex(real(z), -imag(z))` (StableHLO has no conjugate op).
pub(crate) fn conj<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    z: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let part = aval.with_dtype(aval.dtype.real_part());
    let re = e.op("stablehlo.real", &[z], &[&part], &[], loc)?[0];
    let im = e.op("stablehlo.imag", &[z], &[&part], &[], loc)?[0];
    let minus_im = e.op("stablehlo.negate", &[im], &[&part], &[], loc)?[0];
    Ok(e.op("stablehlo.complex", &[re, minus_im], &[aval], &[], loc)?[0])
}

/// Complex sin or cos as JAX lowers them (`_sin_complex`, `_cos_complex`):
/// with `z = a + ib`, `sin z = sin a cosh b + i cos a sinh b` and
/// `cos z = cos a cosh b - i sin a sinh b`, `sinh` and `cosh` from `expm1`
/// (no cancellation for small `b`), and for a zero real part the part
/// that is exactly zero set to 0 (no NaN from `0 * inf` where `cosh b`
/// or `sinh b` overflows).
fn complex_sin_cos<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    op: UnaryOp,
    z: Value<'c, 'a>,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let part = out.with_dtype(out.dtype.real_part());
    let unary = |e: &mut Emitter<'c, 'a>, name: &str, x: Value<'c, 'a>| {
        e.op(name, &[x], &[&part], &[], loc).map(|v| v[0])
    };
    let binary = |e: &mut Emitter<'c, 'a>, name: &str, x: Value<'c, 'a>, y: Value<'c, 'a>| {
        e.op(name, &[x, y], &[&part], &[], loc).map(|v| v[0])
    };
    let a = unary(e, "stablehlo.real", z)?;
    let b = unary(e, "stablehlo.imag", z)?;
    let zero = e.constant(&part, Scalar::Float(0.0), loc)?;
    let two = e.constant(&part, Scalar::Float(2.0), loc)?;
    let predicate = part.with_dtype(DType::Bool);
    let a_is_zero = e.op(
        "stablehlo.compare",
        &[a, zero],
        &[&predicate],
        &[
            (
                "comparison_direction",
                "#stablehlo<comparison_direction EQ>".into(),
            ),
            ("compare_type", attrs::compare_type(part.dtype).into()),
        ],
        loc,
    )?[0];
    let sn = unary(e, "stablehlo.sine", a)?;
    let cs = unary(e, "stablehlo.cosine", a)?;
    let e1m = unary(e, "stablehlo.exponential_minus_one", b)?;
    let minus_b = unary(e, "stablehlo.negate", b)?;
    let e2m = unary(e, "stablehlo.exponential_minus_one", minus_b)?;
    let difference = binary(e, "stablehlo.subtract", e1m, e2m)?;
    let snh = binary(e, "stablehlo.divide", difference, two)?;
    let sum = binary(e, "stablehlo.add", e1m, e2m)?;
    let sum = binary(e, "stablehlo.add", sum, two)?;
    let csh = binary(e, "stablehlo.divide", sum, two)?;
    let (re, im, on_zero_real) = if op == UnaryOp::Sin {
        {
            let re = binary(e, "stablehlo.multiply", sn, csh)?;
            let im = binary(e, "stablehlo.multiply", cs, snh)?;
            // sin(ib) = i sinh(b): the real part exactly 0.
            let on_zero = e.op("stablehlo.complex", &[zero, im], &[out], &[], loc)?[0];
            (re, im, on_zero)
        }
    } else {
        // Cos.
        {
            let re = binary(e, "stablehlo.multiply", cs, csh)?;
            let minus_sn = unary(e, "stablehlo.negate", sn)?;
            let im = binary(e, "stablehlo.multiply", minus_sn, snh)?;
            let on_zero = e.op("stablehlo.complex", &[re, zero], &[out], &[], loc)?[0];
            (re, im, on_zero)
        }
    };
    let general = e.op("stablehlo.complex", &[re, im], &[out], &[], loc)?[0];
    e.op(
        "stablehlo.select",
        &[a_is_zero, on_zero_real, general],
        &[out],
        &[],
        loc,
    )
    .map(|v| v[0])
}

/// `x^y` by repeated squaring (JAX's lowering of integer_pow).
fn integer_pow<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    y: i32,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let mut result: Option<Value<'c, 'a>> = None;
    let mut base = x;
    let mut n = y.unsigned_abs();
    while n > 0 {
        if n & 1 == 1 {
            result = Some(match result {
                None => base,
                Some(r) => e.op("stablehlo.multiply", &[r, base], &[aval], &[], loc)?[0],
            });
        }
        n >>= 1;
        if n > 0 {
            base = e.op("stablehlo.multiply", &[base, base], &[aval], &[], loc)?[0];
        }
    }
    let positive = match result {
        Some(r) => r,
        None => e.constant(aval, Scalar::Int(1), loc)?,
    };
    if y >= 0 {
        return Ok(positive);
    }
    let one = e.constant(aval, Scalar::Int(1), loc)?;
    Ok(e.op("stablehlo.divide", &[one, positive], &[aval], &[], loc)?[0])
}

/// `cases[which]`, as a tree of selects (JAX's lowering of select_n).
fn select_n<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    which: Value<'c, 'a>,
    which_aval: &Aval,
    cases: &[Value<'c, 'a>],
    out: &Aval,
    offset: i64,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    if cases.len() == 1 {
        return Ok(cases[0]);
    }
    let predicate_aval = which_aval.with_dtype(DType::Bool);
    let mid = cases.len() / 2;
    let predicate = if which_aval.dtype == DType::Bool {
        which
    } else {
        let pivot = e.constant(which_aval, Scalar::Int(offset + mid as i64), loc)?;
        e.op(
            "stablehlo.compare",
            &[which, pivot],
            &[&predicate_aval],
            &[
                (
                    "comparison_direction",
                    "#stablehlo<comparison_direction GE>".into(),
                ),
                ("compare_type", attrs::compare_type(which_aval.dtype).into()),
            ],
            loc,
        )?[0]
    };
    let low = select_n(e, which, which_aval, &cases[..mid], out, offset, loc)?;
    let high = select_n(
        e,
        which,
        which_aval,
        &cases[mid..],
        out,
        offset + mid as i64,
        loc,
    )?;
    // A scalar predicate selects whole arrays; a shaped one, element by element.
    Ok(e.op(
        "stablehlo.select",
        &[predicate, high, low],
        &[out],
        &[],
        loc,
    )?[0])
}

/// Broadcasts the operands of an elementwise op to `shape` (rank-0
/// operands and size-1 dims, as the shape rule allows).
fn broadcast_operands<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    shape: &[i64],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    inputs
        .iter()
        .zip(in_avals)
        .map(|(&v, aval)| {
            if aval.shape.as_slice() == shape {
                return Ok(v);
            }
            let dims: Vec<i64> = (0..aval.rank() as i64).collect();
            let target = aval.with_shape(shape);
            Ok(e.op(
                "stablehlo.broadcast_in_dim",
                &[v],
                &[&target],
                &[("broadcast_dimensions", attrs::i64_array(&dims))],
                loc,
            )?[0])
        })
        .collect()
}
