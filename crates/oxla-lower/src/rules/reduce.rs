//! The lowering rules of the reduce family (`oxla_core::primitive::reduce`)
//! to StableHLO.
#![deny(clippy::wildcard_enum_match_arm)]

use super::{LowerArgs, Values, compare_scalars, first_result};
use crate::attrs;
use crate::emit::{Emitter, LowerError};
use melior::ir::{Location, Value};
use oxla_core::primitive::reduce::Op;
use oxla_core::{Aval, DType, ReduceOp, Scalar};

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
        Op::ReduceWith { computation, axes } => {
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
        Op::Reduce { op, axes } => {
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
        Op::Cumulative { op, axis, reverse } => {
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
        Op::ReduceWindow {
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
        Op::SelectAndScatterAdd {
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
        Op::ArgMinMax {
            op,
            axis,
            index_dtype,
        } => arg_min_max(e, op, axis, index_dtype, inputs, in_avals, out, loc),
        Op::Sort {
            dimension,
            is_stable,
            num_keys,
        } => sort(
            e, dimension, is_stable, num_keys, inputs, in_avals, out_avals, loc,
        ),
        Op::TopK { k } => e.op(
            "chlo.top_k",
            inputs,
            out_avals,
            &[("k", attrs::i64_attr(*k))],
            loc,
        ),
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
            if dtype == DType::Bool {
                Scalar::Bool(true)
            } else if dtype.is_unsigned_int() {
                Scalar::highest(dtype)
            } else {
                Scalar::Int(-1)
            },
            "stablehlo.and",
        ),
        ReduceOp::Or => (Scalar::Int(0), "stablehlo.or"),
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

/// argmax/argmin: a two-operand reduce of values and indices with JAX's
/// comparator (NaN wins, ties take the lower index).
#[allow(clippy::too_many_arguments)]
fn arg_min_max<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    op: &oxla_core::ArgOp,
    axis: &usize,
    index_dtype: &DType,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out: &Aval,
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
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

/// `stablehlo.sort` with a lexicographic comparator over the keys in
/// StableHLO's total order (NaN last).
#[allow(clippy::too_many_arguments)]
fn sort<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    dimension: &usize,
    is_stable: &bool,
    num_keys: &usize,
    inputs: &[Value<'c, 'a>],
    in_avals: &[&Aval],
    out_avals: &[&Aval],
    loc: Location<'c>,
) -> Result<Values<'c, 'a>, LowerError> {
    let scalars: Vec<Aval> = in_avals.iter().map(|a| Aval::new(a.dtype, &[])).collect();
    let args: Vec<&Aval> = scalars.iter().flat_map(|s| [s, s]).collect();
    let keys = *num_keys;
    let comparator = e.region(&args, loc, |e, a| {
        // Lexicographic "less than" over the keys, NaN last; a complex key
        // is its real part, then its imaginary part, as JAX's comparator.
        let bool_scalar = Aval::new(DType::Bool, &[]);
        let mut parts = Vec::with_capacity(2 * keys);
        for (k, scalar) in scalars.iter().enumerate().take(keys) {
            let (x, y) = (a[2 * k], a[2 * k + 1]);
            if scalar.dtype.is_complex() {
                let part = scalar.with_dtype(scalar.dtype.real_part());
                for op in ["stablehlo.real", "stablehlo.imag"] {
                    let px = e.op(op, &[x], &[&part], &[], loc)?[0];
                    let py = e.op(op, &[y], &[&part], &[], loc)?[0];
                    parts.push((px, py, part.clone()));
                }
            } else {
                parts.push((x, y, scalar.clone()));
            }
        }
        let mut result: Option<Value<'c, '_>> = None;
        for (x, y, scalar) in parts.iter().rev() {
            let (x, y) = (*x, *y);
            let lt = compare_scalars(e, x, y, scalar, "LT", true, loc)?;
            result = Some(match result {
                None => lt,
                Some(later) => {
                    let eq = compare_scalars(e, x, y, scalar, "EQ", true, loc)?;
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
