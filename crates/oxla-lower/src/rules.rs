//! One lowering rule per primitive (an exhaustive match: a new primitive
//! does not compile until it has a rule here).

use melior::ir::{Location, Value};
use oxla_core::{Aval, BinaryOp, Comparison, DType, Primitive, ReduceOp, Scalar, UnaryOp};

use crate::attrs;
use crate::emit::{Emitter, LowerError};

type Values<'c, 'a> = Vec<Value<'c, 'a>>;

fn unary_op_name(op: UnaryOp) -> &'static str {
    use UnaryOp::*;
    match op {
        Neg => "stablehlo.negate",
        Sign => "stablehlo.sign",
        Abs => "stablehlo.abs",
        Floor => "stablehlo.floor",
        Ceil => "stablehlo.ceil",
        Round => "stablehlo.round_nearest_afz",
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
        And => "stablehlo.and",
        Or => "stablehlo.or",
        Xor => "stablehlo.xor",
        ShiftLeft => "stablehlo.shift_left",
        ShiftRightLogical => "stablehlo.shift_right_logical",
        ShiftRightArithmetic => "stablehlo.shift_right_arithmetic",
    }
}

fn direction(c: Comparison) -> &'static str {
    match c {
        Comparison::Eq => "EQ",
        Comparison::Ne => "NE",
        Comparison::Lt => "LT",
        Comparison::Le => "LE",
        Comparison::Gt => "GT",
        Comparison::Ge => "GE",
    }
}

/// The identity of a reduction for `dtype`, and the op combining two values.
fn reduction(op: ReduceOp, dtype: DType) -> (Scalar, &'static str) {
    let lowest = match dtype {
        d if d.is_float() => Scalar::Float(f64::NEG_INFINITY),
        DType::Bool => Scalar::Bool(false),
        DType::I8 => Scalar::Int(i64::from(i8::MIN)),
        DType::I16 => Scalar::Int(i64::from(i16::MIN)),
        DType::I32 => Scalar::Int(i64::from(i32::MIN)),
        DType::I64 => Scalar::Int(i64::MIN),
        _ => Scalar::UInt(0),
    };
    let highest = match dtype {
        d if d.is_float() => Scalar::Float(f64::INFINITY),
        DType::Bool => Scalar::Bool(true),
        DType::I8 => Scalar::Int(i64::from(i8::MAX)),
        DType::I16 => Scalar::Int(i64::from(i16::MAX)),
        DType::I32 => Scalar::Int(i64::from(i32::MAX)),
        DType::I64 => Scalar::Int(i64::MAX),
        DType::U8 => Scalar::UInt(u64::from(u8::MAX)),
        DType::U16 => Scalar::UInt(u64::from(u16::MAX)),
        DType::U32 => Scalar::UInt(u64::from(u32::MAX)),
        _ => Scalar::UInt(u64::MAX),
    };
    match op {
        ReduceOp::Sum => (Scalar::Int(0), "stablehlo.add"),
        ReduceOp::Prod => (Scalar::Int(1), "stablehlo.multiply"),
        ReduceOp::Max => (lowest, "stablehlo.maximum"),
        ReduceOp::Min => (highest, "stablehlo.minimum"),
        // All bits set: true, -1, or the unsigned maximum.
        ReduceOp::And => (
            match dtype {
                DType::Bool => Scalar::Bool(true),
                d if d.is_unsigned_int() => highest,
                _ => Scalar::Int(-1),
            },
            "stablehlo.and",
        ),
        ReduceOp::Or => (Scalar::Int(0), "stablehlo.or"),
    }
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

/// Lowers one equation; returns the values of its outputs.
pub(crate) fn lower_equation<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    primitive: &Primitive,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let out = out_avals[0];
    match primitive {
        Primitive::Unary(UnaryOp::Square) => e.op(
            "stablehlo.multiply",
            &[inputs[0], inputs[0]],
            &[out],
            &[],
            loc,
        ),
        Primitive::Unary(UnaryOp::Exp2) => {
            let ln2 = e.constant(in_avals[0], Scalar::Float(std::f64::consts::LN_2), loc)?;
            let scaled = e.op("stablehlo.multiply", &[inputs[0], ln2], &[out], &[], loc)?[0];
            e.op("stablehlo.exponential", &[scaled], &[out], &[], loc)
        }
        // StableHLO's sign takes signed types only; for unsigned integers it
        // is (x != 0), as JAX lowers it.
        Primitive::Unary(UnaryOp::Sign) if in_avals[0].dtype.is_unsigned_int() => {
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
        Primitive::Unary(op) => e.op(unary_op_name(*op), inputs, &[out], &[], loc),
        Primitive::Binary(op) => {
            let operands = broadcast_operands(e, inputs, in_avals, &out.shape, loc)?;
            e.op(binary_op_name(*op), &operands, &[out], &[], loc)
        }
        Primitive::Compare(c) => {
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
        Primitive::IntegerPow { y } => Ok(vec![integer_pow(e, inputs[0], out, *y, loc)?]),
        Primitive::SelectN => Ok(vec![select_n(
            e,
            inputs[0],
            in_avals[0],
            &inputs[1..],
            out,
            0,
            loc,
        )?]),
        Primitive::Clamp => e.op("stablehlo.clamp", inputs, &[out], &[], loc),
        Primitive::ConvertElementType { .. } => e.op("stablehlo.convert", inputs, &[out], &[], loc),
        Primitive::Iota { dimension, .. } => e.op(
            "stablehlo.iota",
            &[],
            &[out],
            &[("iota_dimension", attrs::i64_attr(*dimension as i64))],
            loc,
        ),
        Primitive::BroadcastInDim {
            broadcast_dimensions,
            ..
        } => e.op(
            "stablehlo.broadcast_in_dim",
            inputs,
            &[out],
            &[(
                "broadcast_dimensions",
                attrs::i64_array(broadcast_dimensions),
            )],
            loc,
        ),
        Primitive::Reshape { .. } | Primitive::Squeeze { .. } => {
            e.op("stablehlo.reshape", inputs, &[out], &[], loc)
        }
        Primitive::Transpose { permutation } => e.op(
            "stablehlo.transpose",
            inputs,
            &[out],
            &[("permutation", attrs::i64_array(permutation))],
            loc,
        ),
        Primitive::Rev { dimensions } => e.op(
            "stablehlo.reverse",
            inputs,
            &[out],
            &[("dimensions", attrs::i64_array(dimensions))],
            loc,
        ),
        Primitive::Concatenate { dimension } => e.op(
            "stablehlo.concatenate",
            inputs,
            &[out],
            &[("dimension", attrs::i64_attr(*dimension as i64))],
            loc,
        ),
        Primitive::Pad { config } => {
            let low: Vec<i64> = config.iter().map(|c| c.0).collect();
            let high: Vec<i64> = config.iter().map(|c| c.1).collect();
            let interior: Vec<i64> = config.iter().map(|c| c.2).collect();
            e.op(
                "stablehlo.pad",
                inputs,
                &[out],
                &[
                    ("edge_padding_low", attrs::i64_array(&low)),
                    ("edge_padding_high", attrs::i64_array(&high)),
                    ("interior_padding", attrs::i64_array(&interior)),
                ],
                loc,
            )
        }
        Primitive::Slice {
            start_indices,
            limit_indices,
            strides,
        } => e.op(
            "stablehlo.slice",
            inputs,
            &[out],
            &[
                ("start_indices", attrs::i64_array(start_indices)),
                ("limit_indices", attrs::i64_array(limit_indices)),
                ("strides", attrs::i64_array(strides)),
            ],
            loc,
        ),
        Primitive::Reduce { op, axes } => {
            let scalar = Aval::new(in_avals[0].dtype, &[]);
            let (identity, combine) = reduction(*op, scalar.dtype);
            let init = e.constant(&scalar, identity, loc)?;
            let body = e.binary_region(combine, &scalar, loc)?;
            e.op_with_regions(
                "stablehlo.reduce",
                &[inputs[0], init],
                &[out],
                &[("dimensions", attrs::i64_array(axes))],
                vec![body],
                loc,
            )
        }
        Primitive::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            ..
        } => e.op(
            "stablehlo.dot_general",
            inputs,
            &[out],
            &[(
                "dot_dimension_numbers",
                format!(
                    "#stablehlo.dot<lhs_batching_dimensions = {}, rhs_batching_dimensions = {}, \
                     lhs_contracting_dimensions = {}, rhs_contracting_dimensions = {}>",
                    attrs::i64_list(lhs_batch),
                    attrs::i64_list(rhs_batch),
                    attrs::i64_list(lhs_contracting),
                    attrs::i64_list(rhs_contracting)
                ),
            )],
            loc,
        ),
    }
}
