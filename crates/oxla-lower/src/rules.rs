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
        CountLeadingZeros => "stablehlo.count_leading_zeros",
        // Never emitted as one op: `lower` expands it with
        // `special::bessel_i0e` (as Exp2 and Square, special-cased there).
        BesselI0e => "stablehlo.multiply",
        BesselI1e => "chlo.bessel_i1e",
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
    match op {
        ReduceOp::Sum => (Scalar::Int(0), "stablehlo.add"),
        ReduceOp::Prod => (Scalar::Int(1), "stablehlo.multiply"),
        ReduceOp::Max => (Scalar::lowest(dtype), "stablehlo.maximum"),
        ReduceOp::Min => (Scalar::highest(dtype), "stablehlo.minimum"),
        // All bits set: true, -1, or the unsigned maximum.
        ReduceOp::And => (
            match dtype {
                DType::Bool => Scalar::Bool(true),
                d if d.is_unsigned_int() => Scalar::highest(d),
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
    // Calls and barriers may have no results; every other primitive has one or more.
    let no_result;
    let out = match out_avals.first() {
        Some(out) => *out,
        None => {
            no_result = Aval::new(DType::Bool, &[]);
            &no_result
        }
    };
    match primitive {
        Primitive::Unary(UnaryOp::Square) => e.op(
            "stablehlo.multiply",
            &[inputs[0], inputs[0]],
            &[out],
            &[],
            loc,
        ),
        Primitive::Unary(UnaryOp::BesselI0e) => {
            crate::special::bessel_i0e(e, inputs[0], in_avals[0], loc).map(|v| vec![v])
        }
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
        // One slice per piece (StableHLO has no split op; XLA fuses them).
        Primitive::Split { axis, sizes } => {
            let shape = &in_avals[0].shape;
            let mut pieces = Vec::with_capacity(sizes.len());
            let mut offset = 0;
            for (size, piece) in sizes.iter().zip(out_avals) {
                let mut start = vec![0; shape.len()];
                let mut limit = shape.to_vec();
                start[*axis] = offset;
                limit[*axis] = offset + size;
                offset += size;
                pieces.extend(e.op(
                    "stablehlo.slice",
                    inputs,
                    &[piece],
                    &[
                        ("start_indices", attrs::i64_array(&start)),
                        ("limit_indices", attrs::i64_array(&limit)),
                        ("strides", attrs::i64_array(&vec![1; shape.len()])),
                    ],
                    loc,
                )?);
            }
            Ok(pieces)
        }
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
        Primitive::ReduceWith { computation, axes } => {
            let scalars: Vec<Aval> = in_avals.iter().map(|a| Aval::new(a.dtype, &[])).collect();
            let scalar_refs: Vec<&Aval> = scalars.iter().collect();
            let jaxpr = computation.jaxpr();
            let body = e.region(&scalar_refs, loc, |inner, args| {
                crate::body::lower_body(inner, jaxpr, args)
            })?;
            e.op_with_regions(
                "stablehlo.reduce",
                inputs,
                out_avals,
                &[("dimensions", attrs::i64_array(axes))],
                vec![body],
                loc,
            )
        }
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
        Primitive::DynamicSlice { slice_sizes } => e.op(
            "stablehlo.dynamic_slice",
            inputs,
            &[out],
            &[("slice_sizes", attrs::i64_array(slice_sizes))],
            loc,
        ),
        Primitive::DynamicUpdateSlice => {
            e.op("stablehlo.dynamic_update_slice", inputs, &[out], &[], loc)
        }
        Primitive::BitcastConvertType { .. } => {
            e.op("stablehlo.bitcast_convert", inputs, &[out], &[], loc)
        }
        Primitive::Cumulative { op, axis, reverse } => {
            // A window over the whole axis, padded so that window i ends at i.
            let rank = in_avals[0].rank();
            let n = in_avals[0].shape[*axis];
            let mut window = vec![1i64; rank];
            window[*axis] = n.max(1);
            let mut padding = vec![(0i64, 0i64); rank];
            padding[*axis] = if *reverse {
                (0, (n - 1).max(0))
            } else {
                ((n - 1).max(0), 0)
            };
            let ones = vec![1i64; rank];
            let reduce = match op {
                oxla_core::CumulativeOp::Sum => ReduceOp::Sum,
                oxla_core::CumulativeOp::Prod => ReduceOp::Prod,
                oxla_core::CumulativeOp::Max => ReduceOp::Max,
                oxla_core::CumulativeOp::Min => ReduceOp::Min,
            };
            let (identity, combine) = reduction(reduce, out.dtype);
            reduce_window(
                e, inputs[0], out, identity, combine, &window, &ones, &padding, &ones, &ones, loc,
            )
        }
        Primitive::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => {
            let (identity, combine) = window_reduction(*op, out.dtype);
            reduce_window(
                e,
                inputs[0],
                out,
                identity,
                combine,
                window_dimensions,
                window_strides,
                padding,
                base_dilation,
                window_dilation,
                loc,
            )
        }
        Primitive::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            let scalar = Aval::new(out.dtype, &[]);
            let zero = e.constant(&scalar, Scalar::Int(0), loc)?;
            let select = e.region(&[&scalar, &scalar], loc, |e, args| {
                Ok(vec![compare_scalars(
                    e, args[0], args[1], &scalar, "GE", false, loc,
                )?])
            })?;
            let scatter = e.binary_region("stablehlo.add", &scalar, loc)?;
            // Operands: the operand (where maxima are found), the source, the init.
            e.op_with_regions(
                "stablehlo.select_and_scatter",
                &[inputs[1], inputs[0], zero],
                &[out],
                &[
                    ("window_dimensions", attrs::i64_array(window_dimensions)),
                    ("window_strides", attrs::i64_array(window_strides)),
                    ("padding", attrs::padding_pairs(padding)),
                ],
                vec![select, scatter],
                loc,
            )
        }
        Primitive::ArgMinMax {
            op,
            axis,
            index_dtype,
        } => {
            let x = in_avals[0];
            let indices_aval = x.with_dtype(*index_dtype);
            let indices = e.op(
                "stablehlo.iota",
                &[],
                &[&indices_aval],
                &[("iota_dimension", attrs::i64_attr(*axis as i64))],
                loc,
            )?[0];
            let value = Aval::new(x.dtype, &[]);
            let index = Aval::new(*index_dtype, &[]);
            let (start, direction) = match op {
                oxla_core::ArgOp::Max => (reduction(ReduceOp::Max, x.dtype).0, "GT"),
                oxla_core::ArgOp::Min => (reduction(ReduceOp::Min, x.dtype).0, "LT"),
            };
            let init_value = e.constant(&value, start, loc)?;
            let init_index = e.constant(&index, Scalar::Int(0), loc)?;
            // JAX's comparator: take a's value if it wins or is NaN; take a's
            // index if its value is taken, or on a tie with a smaller index.
            let body = e.region(&[&value, &index, &value, &index], loc, |e, a| {
                let (va, ia, vb, ib) = (a[0], a[1], a[2], a[3]);
                let bool_scalar = Aval::new(DType::Bool, &[]);
                let wins = compare_scalars(e, va, vb, &value, direction, false, loc)?;
                let pick_value = if value.dtype.is_float() {
                    let nan = compare_scalars(e, va, va, &value, "NE", false, loc)?;
                    e.op("stablehlo.or", &[wins, nan], &[&bool_scalar], &[], loc)?[0]
                } else {
                    wins
                };
                let tie = compare_scalars(e, va, vb, &value, "EQ", false, loc)?;
                let lower = compare_scalars(e, ia, ib, &index, "LT", false, loc)?;
                let tie_lower = e.op("stablehlo.and", &[tie, lower], &[&bool_scalar], &[], loc)?[0];
                let pick_index = e.op(
                    "stablehlo.or",
                    &[pick_value, tie_lower],
                    &[&bool_scalar],
                    &[],
                    loc,
                )?[0];
                let v = e.op(
                    "stablehlo.select",
                    &[pick_value, va, vb],
                    &[&value],
                    &[],
                    loc,
                )?[0];
                let i = e.op(
                    "stablehlo.select",
                    &[pick_index, ia, ib],
                    &[&index],
                    &[],
                    loc,
                )?[0];
                Ok(vec![v, i])
            })?;
            let values_out = out.with_dtype(x.dtype);
            let results = e.op_with_regions(
                "stablehlo.reduce",
                &[inputs[0], indices, init_value, init_index],
                &[&values_out, out],
                &[("dimensions", attrs::i64_array(&[*axis as i64]))],
                vec![body],
                loc,
            )?;
            Ok(vec![results[1]])
        }
        Primitive::Sort {
            dimension,
            is_stable,
            num_keys,
        } => {
            let scalars: Vec<Aval> = in_avals.iter().map(|a| Aval::new(a.dtype, &[])).collect();
            let args: Vec<&Aval> = scalars.iter().flat_map(|s| [s, s]).collect();
            let keys = *num_keys;
            let comparator = e.region(&args, loc, |e, a| {
                // Lexicographic "less than" over the keys, NaN last.
                let bool_scalar = Aval::new(DType::Bool, &[]);
                let mut result: Option<Value<'c, '_>> = None;
                for k in (0..keys).rev() {
                    let (x, y) = (a[2 * k], a[2 * k + 1]);
                    let lt = compare_scalars(e, x, y, &scalars[k], "LT", true, loc)?;
                    result = Some(match result {
                        None => lt,
                        Some(later) => {
                            let eq = compare_scalars(e, x, y, &scalars[k], "EQ", true, loc)?;
                            let tie_then_later =
                                e.op("stablehlo.and", &[eq, later], &[&bool_scalar], &[], loc)?[0];
                            e.op(
                                "stablehlo.or",
                                &[lt, tie_then_later],
                                &[&bool_scalar],
                                &[],
                                loc,
                            )?[0]
                        }
                    });
                }
                Ok(vec![result.expect("at least one key")])
            })?;
            e.op_with_regions(
                "stablehlo.sort",
                inputs,
                out_avals,
                &[
                    ("dimension", attrs::i64_attr(*dimension as i64)),
                    ("is_stable", is_stable.to_string()),
                ],
                vec![comparator],
                loc,
            )
        }
        Primitive::TopK { k } => e.op(
            "chlo.top_k",
            inputs,
            out_avals,
            &[("k", attrs::i64_attr(*k))],
            loc,
        ),
        Primitive::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers: dn,
            feature_group_count,
            batch_group_count,
            ..
        } => {
            let spatial = |spec: &[i64]| attrs::i64_list(&spec[2..]);
            let numbers = format!(
                "#stablehlo.conv<raw input_batch_dimension = {}, input_feature_dimension = {},                  input_spatial_dimensions = {}, kernel_input_feature_dimension = {},                  kernel_output_feature_dimension = {}, kernel_spatial_dimensions = {},                  output_batch_dimension = {}, output_feature_dimension = {}, output_spatial_dimensions = {}>",
                dn.lhs_spec[0],
                dn.lhs_spec[1],
                spatial(&dn.lhs_spec),
                dn.rhs_spec[1],
                dn.rhs_spec[0],
                spatial(&dn.rhs_spec),
                dn.out_spec[0],
                dn.out_spec[1],
                spatial(&dn.out_spec)
            );
            e.op(
                "stablehlo.convolution",
                inputs,
                &[out],
                &[
                    ("window_strides", attrs::i64_array(window_strides)),
                    ("padding", attrs::padding_pairs(padding)),
                    ("lhs_dilation", attrs::i64_array(lhs_dilation)),
                    ("rhs_dilation", attrs::i64_array(rhs_dilation)),
                    ("dimension_numbers", numbers),
                    ("feature_group_count", attrs::i64_attr(*feature_group_count)),
                    ("batch_group_count", attrs::i64_attr(*batch_group_count)),
                ],
                loc,
            )
        }
        Primitive::Gather {
            dimension_numbers: d,
            slice_sizes,
            mode,
            fill_value,
        } => {
            let (x, indices) = (in_avals[0], in_avals[1]);
            let index_vector_dim = indices.rank() as i64 - 1;
            let numbers = format!(
                "#stablehlo.gather<offset_dims = {}, collapsed_slice_dims = {}, start_index_map = {}, index_vector_dim = {index_vector_dim}>",
                attrs::i64_list(&d.offset_dims),
                attrs::i64_list(&d.collapsed_slice_dims),
                attrs::i64_list(&d.start_index_map)
            );
            let gathered = e.op(
                "stablehlo.gather",
                inputs,
                &[out],
                &[
                    ("dimension_numbers", numbers),
                    ("slice_sizes", attrs::i64_array(slice_sizes)),
                    ("indices_are_sorted", "false".into()),
                ],
                loc,
            )?[0];
            match mode {
                oxla_core::GatherMode::Clip | oxla_core::GatherMode::PromiseInBounds => {
                    Ok(vec![gathered])
                }
                oxla_core::GatherMode::Fill => {
                    // In bounds: 0 <= index <= dim - slice size, for every component.
                    let bounds: Vec<i64> = d
                        .start_index_map
                        .iter()
                        .map(|&o| x.shape[o as usize] - slice_sizes[o as usize])
                        .collect();
                    let components = *indices.shape.last().unwrap_or(&0);
                    let bound_aval = Aval::new(indices.dtype, &[components]);
                    let bound_literal = format!(
                        "dense<{}> : {}",
                        attrs::i64_list(&bounds),
                        bound_aval.mlir_type()
                    );
                    let bound = if components == 0 {
                        e.constant(&bound_aval, Scalar::Int(0), loc)?
                    } else {
                        e.op(
                            "stablehlo.constant",
                            &[],
                            &[&bound_aval],
                            &[("value", bound_literal)],
                            loc,
                        )?[0]
                    };
                    let last = [index_vector_dim];
                    let bound = e.op(
                        "stablehlo.broadcast_in_dim",
                        &[bound],
                        &[indices],
                        &[("broadcast_dimensions", attrs::i64_array(&last))],
                        loc,
                    )?[0];
                    let zero = e.constant(indices, Scalar::Int(0), loc)?;
                    let flags = indices.with_dtype(DType::Bool);
                    let direction = |dir: &str| {
                        vec![
                            (
                                "comparison_direction",
                                format!("#stablehlo<comparison_direction {dir}>"),
                            ),
                            (
                                "compare_type",
                                attrs::compare_type(indices.dtype).to_string(),
                            ),
                        ]
                    };
                    let above = e.op(
                        "stablehlo.compare",
                        &[inputs[1], zero],
                        &[&flags],
                        &direction("GE"),
                        loc,
                    )?[0];
                    let below = e.op(
                        "stablehlo.compare",
                        &[inputs[1], bound],
                        &[&flags],
                        &direction("LE"),
                        loc,
                    )?[0];
                    let both = e.op("stablehlo.and", &[above, below], &[&flags], &[], loc)?[0];
                    let batch_shape: Vec<i64> = indices.shape[..indices.rank() - 1].to_vec();
                    let batch_aval = Aval::new(DType::Bool, &batch_shape);
                    let scalar_bool = Aval::new(DType::Bool, &[]);
                    let truth = e.constant(&scalar_bool, Scalar::Bool(true), loc)?;
                    let body = e.binary_region("stablehlo.and", &scalar_bool, loc)?;
                    let in_bounds = e.op_with_regions(
                        "stablehlo.reduce",
                        &[both, truth],
                        &[&batch_aval],
                        &[("dimensions", attrs::i64_array(&last))],
                        vec![body],
                        loc,
                    )?[0];
                    let batch_positions: Vec<i64> = (0..out.rank() as i64)
                        .filter(|p| !d.offset_dims.contains(p))
                        .collect();
                    let mask_aval = out.with_dtype(DType::Bool);
                    let mask = e.op(
                        "stablehlo.broadcast_in_dim",
                        &[in_bounds],
                        &[&mask_aval],
                        &[("broadcast_dimensions", attrs::i64_array(&batch_positions))],
                        loc,
                    )?[0];
                    let fill = e.constant(out, fill_value.value(), loc)?;
                    e.op(
                        "stablehlo.select",
                        &[mask, gathered, fill],
                        &[out],
                        &[],
                        loc,
                    )
                }
            }
        }
        Primitive::Scatter {
            op,
            dimension_numbers: d,
        } => {
            let indices = in_avals[1];
            let numbers = format!(
                "#stablehlo.scatter<update_window_dims = {}, inserted_window_dims = {}, scatter_dims_to_operand_dims = {}, index_vector_dim = {}>",
                attrs::i64_list(&d.update_window_dims),
                attrs::i64_list(&d.inserted_window_dims),
                attrs::i64_list(&d.scatter_dims_to_operand_dims),
                indices.rank() as i64 - 1
            );
            let scalar = Aval::new(out.dtype, &[]);
            let combine = match op {
                oxla_core::ScatterOp::Set => None,
                oxla_core::ScatterOp::Add => Some("stablehlo.add"),
                oxla_core::ScatterOp::Mul => Some("stablehlo.multiply"),
                oxla_core::ScatterOp::Min => Some("stablehlo.minimum"),
                oxla_core::ScatterOp::Max => Some("stablehlo.maximum"),
            };
            let body = e.region(&[&scalar, &scalar], loc, |e, args| match combine {
                Some(name) => e.op(name, args, &[&scalar], &[], loc),
                None => Ok(vec![args[1]]),
            })?;
            e.op_with_regions(
                "stablehlo.scatter",
                inputs,
                &[out],
                &[
                    ("scatter_dimension_numbers", numbers),
                    ("indices_are_sorted", "false".into()),
                    ("unique_indices", "false".into()),
                ],
                vec![body],
                loc,
            )
        }
        Primitive::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            precision,
            ..
        } => {
            let mut attributes = vec![(
                "dot_dimension_numbers",
                format!(
                    "#stablehlo.dot<lhs_batching_dimensions = {}, rhs_batching_dimensions = {}, \
                     lhs_contracting_dimensions = {}, rhs_contracting_dimensions = {}>",
                    attrs::i64_list(lhs_batch),
                    attrs::i64_list(rhs_batch),
                    attrs::i64_list(lhs_contracting),
                    attrs::i64_list(rhs_contracting)
                ),
            )];
            if let Some(p) = precision {
                let one = format!("#stablehlo<precision {}>", p.name());
                attributes.push(("precision_config", format!("[{one}, {one}]")));
            }
            e.op("stablehlo.dot_general", inputs, &[out], &attributes, loc)
        }
        Primitive::Call { jaxpr, .. }
        | Primitive::Remat { jaxpr, .. }
        | Primitive::CustomJvpCall { jaxpr, .. }
        | Primitive::CustomVjpCall { jaxpr, .. } => {
            crate::body::lower_body(e, jaxpr.jaxpr(), inputs)
        }
        Primitive::StopGradient | Primitive::CheckpointName { .. } => Ok(vec![inputs[0]]),
        Primitive::HostCallback { callback, .. } => {
            host_callback(e, callback, inputs, out_avals, loc)
        }
        Primitive::CallExported { function } => {
            e.call_exported(function);
            let mut operands = Vec::with_capacity(inputs.len() + 1);
            if let Some(index) = function.platform_index() {
                let index_aval = Aval::new(DType::I32, &[]);
                operands.push(e.constant(&index_aval, Scalar::Int(i64::from(index)), loc)?);
            }
            operands.extend_from_slice(inputs);
            let dialect = crate::merge::FunctionDialect::of(function.module());
            e.op(
                dialect.call_op(),
                &operands,
                out_avals,
                &[("callee", dialect.symbol_reference(&function.symbol()))],
                loc,
            )
        }
        // A type change only: the value is the operand.
        Primitive::Pvary { .. } => Ok(vec![inputs[0]]),
        Primitive::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            ..
        } => crate::collectives::shard_map(
            e,
            jaxpr.jaxpr(),
            (in_shardings, out_shardings),
            inputs,
            in_avals,
            out_avals,
            loc,
        ),
        Primitive::AllReduce { op, group } => {
            crate::collectives::all_reduce(e, *op, group, inputs[0], out, loc)
        }
        Primitive::AllGather {
            group, dim, tiled, ..
        } => crate::collectives::all_gather(
            e,
            group,
            (*dim, *tiled),
            inputs[0],
            in_avals[0],
            out,
            loc,
        ),
        Primitive::ReduceScatter { group, dim, tiled } => crate::collectives::reduce_scatter(
            e,
            group,
            (*dim, *tiled),
            inputs[0],
            in_avals[0],
            out,
            loc,
        ),
        Primitive::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => {
            crate::collectives::all_to_all(e, group, (*split_dim, *concat_dim), inputs[0], out, loc)
        }
        Primitive::Ppermute { group, perm } => {
            crate::collectives::ppermute(e, group, perm, inputs[0], out, loc)
        }
        Primitive::AxisIndex { group } => crate::collectives::axis_index(e, group, out, loc),
        Primitive::ShardingConstraint { sharding } => {
            let symbol = e.mesh_symbol(&sharding.mesh)?;
            e.op(
                "sdy.sharding_constraint",
                inputs,
                out_avals,
                &[(
                    "sharding",
                    sharding.sdy_attribute(&symbol, out_avals[0].shape.len()),
                )],
                loc,
            )
        }
        Primitive::OptimizationBarrier => e.op(
            "stablehlo.optimization_barrier",
            inputs,
            out_avals,
            &[],
            loc,
        ),
        Primitive::Cond { branches } => crate::control::cond(e, branches, inputs, out_avals, loc),
        Primitive::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => crate::control::while_loop(
            e,
            cond_jaxpr.jaxpr(),
            body_jaxpr.jaxpr(),
            *cond_nconsts,
            *body_nconsts,
            inputs,
            in_avals,
            loc,
        ),
        Primitive::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            reverse,
            unroll,
        } => crate::control::scan(
            e,
            &crate::control::ScanParams {
                body: jaxpr.jaxpr(),
                num_consts: *num_consts,
                num_carry: *num_carry,
                length: *length,
                reverse: *reverse,
                unroll: *unroll,
            },
            inputs,
            in_avals,
            out_avals,
            loc,
        ),
        Primitive::CustomLin { .. } => Err(LowerError::Mlir(
            "a custom_vjp function cannot be differentiated in forward mode (jvp, jacfwd): its \
             linear part can only be transposed; use custom_jvp, or reverse mode (grad, vjp, \
             jacrev)"
                .into(),
        )),
    }
}

/// The identity of a window reduction for `dtype` and its combining op.
fn window_reduction(op: oxla_core::WindowOp, dtype: DType) -> (Scalar, &'static str) {
    match op {
        oxla_core::WindowOp::Sum => reduction(ReduceOp::Sum, dtype),
        oxla_core::WindowOp::Max => reduction(ReduceOp::Max, dtype),
        oxla_core::WindowOp::Min => reduction(ReduceOp::Min, dtype),
    }
}

/// `stablehlo.reduce_window` of one operand.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_window<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    out: &Aval,
    identity: Scalar,
    combine: &str,
    window: &[i64],
    strides: &[i64],
    padding: &[(i64, i64)],
    base_dilation: &[i64],
    window_dilation: &[i64],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let scalar = Aval::new(out.dtype, &[]);
    let init = e.constant(&scalar, identity, loc)?;
    let body = e.binary_region(combine, &scalar, loc)?;
    e.op_with_regions(
        "stablehlo.reduce_window",
        &[x, init],
        &[out],
        &[
            ("window_dimensions", attrs::i64_array(window)),
            ("window_strides", attrs::i64_array(strides)),
            ("base_dilations", attrs::i64_array(base_dilation)),
            ("window_dilations", attrs::i64_array(window_dilation)),
            ("padding", attrs::padding_pairs(padding)),
        ],
        vec![body],
        loc,
    )
}

/// `compare(direction)` of two scalars of `aval`'s type, with StableHLO's
/// total order for floats when `total` (NaN last).
pub(crate) fn compare_scalars<'c, 'b>(
    e: &mut Emitter<'c, 'b>,
    a: Value<'c, 'b>,
    b: Value<'c, 'b>,
    aval: &Aval,
    direction: &str,
    total: bool,
    loc: Location<'c>,
) -> Result<Value<'c, 'b>, LowerError> {
    let kind = if total && aval.dtype.is_float() {
        "#stablehlo<comparison_type TOTALORDER>"
    } else {
        attrs::compare_type(aval.dtype)
    };
    let predicate = aval.with_dtype(DType::Bool);
    Ok(e.op(
        "stablehlo.compare",
        &[a, b],
        &[&predicate],
        &[
            (
                "comparison_direction",
                format!("#stablehlo<comparison_direction {direction}>"),
            ),
            ("compare_type", kind.to_string()),
        ],
        loc,
    )?[0])
}

/// A host callback: `stablehlo.custom_call @oxla_host_callback` (typed XLA
/// FFI) naming the closure by id. An effectful call takes the order value
/// of the block's previous one and makes the next, so XLA keeps the
/// block's effects in program order.
fn host_callback<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    callback: &oxla_core::HostCallback,
    inputs: &[Value<'c, 'a>],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let order = crate::emit::effect_order_aval();
    let mut operands = inputs.to_vec();
    let mut results: Vec<&Aval> = out_avals.to_vec();
    if callback.effectful {
        operands.insert(0, e.effect_order(loc)?);
        results.insert(0, &order);
    }
    let config = format!(
        "{{{} = {} : ui64, {} = {}}}",
        oxla_core::CALLBACK_ID_ATTRIBUTE,
        callback.id,
        oxla_core::ORDERED_ATTRIBUTE,
        callback.effectful
    );
    let mut outs = e.op(
        "stablehlo.custom_call",
        &operands,
        &results,
        &[
            (
                "call_target_name",
                format!("\"{}\"", oxla_core::HOST_CALLBACK_TARGET),
            ),
            ("api_version", "4 : i32".to_string()),
            ("has_side_effect", callback.effectful.to_string()),
            ("backend_config", config),
        ],
        loc,
    )?;
    if callback.effectful {
        let chain = outs.remove(0);
        e.set_effect_chain(chain);
    }
    Ok(outs)
}
