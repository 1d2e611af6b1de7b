//! The jvp, transpose and batching rules of the reduce family
//! (`oxla_core::primitive::reduce`).
//!
//! Rules of JAX's general `reduce` (a user's reducer): batching moves
//! every operand's batch dimension to the front; the jvp differentiates a
//! pairwise tree of reducer applications (JAX's `_reduce_jvp`), since a
//! reducer has no derivative of its own over a whole axis. It is not
//! linear, so it has no transpose.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::trace::BatchAxis;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{
    axes_to_batched, bdim_after_removing, done, insert_at, operand, to_batched,
};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{
    Jvp, balanced_eq, finish, indicator, linear_jvp, lit, lit_i32, select, unary_rule, zero_jvp,
};
use crate::transform::support;
use crate::transform::support::{
    Tangent, batch_at, bind_all, instantiate, move_axis, refs, rule_error,
};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{
    for_linear, known_at, nonlinear, vjp_lhs_padding, zero_of,
};
use oxla_core::primitive::reduce;
use oxla_core::primitive::reduce::Op;
use oxla_core::{
    Aval, CumulativeOp, DType, Dims, GatherDimensionNumbers, GatherMode, Jaxpr, Primitive,
    ReduceOp, Scalar, SubJaxpr, WindowOp,
};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::ArgMinMax { .. } => zero_jvp(primitive, primals)?,
        Op::SelectAndScatterAdd { .. } => {
            linear_jvp(primitive, primitive.clone(), primals, tangents, |i| i == 0)?
        }
        Op::Reduce { op, axes } => reduce_jvp(primitive, *op, axes, primals, tangents)?,
        Op::Cumulative { op, axis, reverse } => {
            cumulative_jvp(primitive, *op, *axis, *reverse, primals, tangents)?
        }
        Op::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => {
            let window = Window {
                dimensions: window_dimensions,
                strides: window_strides,
                padding,
                base_dilation,
                window_dilation,
            };
            reduce_window_jvp(primitive, *op, &window, primals, tangents)?
        }
        Op::Sort {
            dimension,
            is_stable,
            num_keys,
        } => sort_jvp(
            primitive, *dimension, *is_stable, *num_keys, primals, tangents,
        )?,
        Op::TopK { .. } => top_k_jvp(primitive, primals, tangents)?,
        Op::ReduceWith { computation, axes } => {
            return reduce_with_jvp(primitive, computation, axes, primals, tangents);
        }
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ct,
        ct_shape,
        ..
    } = *input;
    match op {
        Op::ArgMinMax { .. } | Op::Sort { .. } | Op::ReduceWith { .. } | Op::TopK { .. } => {
            nonlinear(primitive, operands)
        }
        Op::Reduce { op, axes } => reduce(primitive, *op, axes, ct, operands),
        Op::Cumulative { op, axis, reverse } => match op {
            CumulativeOp::Sum => {
                for_linear(operands, |_, _| Ok(Some(lax::cumsum(ct, *axis, !reverse))))
            }
            CumulativeOp::Prod | CumulativeOp::Max | CumulativeOp::Min => {
                nonlinear(primitive, operands)
            }
        },
        Op::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => match op {
            WindowOp::Sum => {
                let window = Window {
                    dimensions: window_dimensions,
                    strides: window_strides,
                    padding,
                    base_dilation,
                    window_dilation,
                };
                reduce_window_sum(&window, ct, ct_shape, operands)
            }
            WindowOp::Max | WindowOp::Min => nonlinear(primitive, operands),
        },
        Op::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            let ones = vec![1; window_dimensions.len()];
            let window = Window {
                dimensions: window_dimensions,
                strides: window_strides,
                padding,
                base_dilation: &ones,
                window_dilation: &ones,
            };
            select_and_scatter_add(primitive, &window, ct, operands)
        }
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    match op {
        Op::Reduce { op, axes } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axes = axes_to_batched(axes, b);
            let out_b = bdim_after_removing(&axes, b);
            let p = Primitive::Reduce(reduce::Op::Reduce { op: *op, axes });
            done(vec![support::bind_one(&p, &[&x])?], vec![Some(out_b)])
        }
        Op::Cumulative { op, axis, reverse } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let p = Primitive::Reduce(reduce::Op::Cumulative {
                op: *op,
                axis: to_batched(*axis as i64, b) as usize,
                reverse: *reverse,
            });
            done(vec![support::bind_one(&p, &[&x])?], vec![Some(b)])
        }
        Op::ReduceWindow {
            op,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let p = Primitive::Reduce(reduce::Op::ReduceWindow {
                op: *op,
                window_dimensions: insert_at(window_dimensions, b, 1),
                window_strides: insert_at(window_strides, b, 1),
                padding: insert_at(padding, b, (0, 0)),
                base_dilation: insert_at(base_dilation, b, 1),
                window_dilation: insert_at(window_dilation, b, 1),
            });
            done(vec![support::bind_one(&p, &[&x])?], vec![Some(b)])
        }
        Op::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            let source = batch_at(&args[0], bdims[0], size, 0);
            let x = batch_at(&args[1], bdims[1], size, 0);
            let p = Primitive::Reduce(reduce::Op::SelectAndScatterAdd {
                window_dimensions: insert_at(window_dimensions, 0, 1),
                window_strides: insert_at(window_strides, 0, 1),
                padding: insert_at(padding, 0, (0, 0)),
            });
            done(vec![support::bind_one(&p, &[&source, &x])?], vec![Some(0)])
        }
        Op::ArgMinMax {
            op,
            axis,
            index_dtype,
        } => {
            let (x, b) = operand(&args[0], bdims[0], size);
            let axis = to_batched(*axis as i64, b);
            let out_b = bdim_after_removing(&[axis], b);
            let p = Primitive::Reduce(reduce::Op::ArgMinMax {
                op: *op,
                axis: axis as usize,
                index_dtype: *index_dtype,
            });
            done(vec![support::bind_one(&p, &[&x])?], vec![Some(out_b)])
        }
        Op::ReduceWith { computation, axes } => {
            reduce_with_batch(primitive, computation, axes, args, bdims, size)
        }
        Op::Sort {
            dimension,
            is_stable,
            num_keys,
        } => {
            let xs: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, &bd)| batch_at(x, bd, size, 0))
                .collect();
            let refs: Vec<&Array> = xs.iter().collect();
            let p = Primitive::Reduce(reduce::Op::Sort {
                dimension: dimension + 1,
                is_stable: *is_stable,
                num_keys: *num_keys,
            });
            let outs = bind_all(p, &refs)?;
            let out_bdims = vec![Some(0); outs.len()];
            done(outs, out_bdims)
        }
        Op::TopK { .. } => {
            let (mut x, mut b) = operand(&args[0], bdims[0], size);
            if b + 1 == x.ndim_or_zero() {
                x = move_axis(&x, b, 0);
                b = 0;
            }
            let outs = bind_all(primitive.clone(), &[&x])?;
            let out_bdims = vec![Some(b); outs.len()];
            done(outs, out_bdims)
        }
    }
}

/// A primal value with its (instantiated) tangent.
type Dual = (Array, Array);

/// Combines two scan elements (primal and tangent) into one.
type Combine = fn(&Dual, &Dual) -> Dual;

/// Windows of at most this many positions are reduced by unrolled strided
/// slices; larger ones by one gather of every window.
const MAX_UNROLLED_WINDOW: i64 = 16;

/// Size of dimension `axis` of `x` (0 if it has none, e.g. an error array).
fn dim(x: &Array, axis: usize) -> i64 {
    x.shape_or_empty().get(axis).copied().unwrap_or(0)
}

/// `x[start:limit:stride]` along `axis`, whole along the other dims.
fn slice_axis(x: &Array, axis: usize, start: i64, limit: i64, stride: i64) -> Array {
    let rank = x.ndim_or_zero();
    let mut starts = vec![0; rank];
    let mut limits = x.shape_or_empty().to_vec();
    let mut strides = vec![1; rank];
    if axis < rank {
        starts[axis] = start;
        limits[axis] = limit;
        strides[axis] = stride;
    }
    lax::slice(x, &starts, &limits, Some(&strides))
}

/// `x` padded with `value` by `config` (no equation if it pads nothing).
fn pad_with(x: &Array, value: f64, config: &[(i64, i64, i64)]) -> Array {
    if config.iter().all(|&c| c == (0, 0, 0)) {
        x.clone()
    } else {
        lax::pad(x, &lit(value, x), config)
    }
}

/// Reductions over axes: sum is linear, max/min pick the extremes (ties
/// share evenly), prod multiplies the other factors.
fn reduce_jvp(
    primitive: &Primitive,
    op: ReduceOp,
    axes: &[i64],
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    match op {
        ReduceOp::Sum => linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true),
        ReduceOp::Prod => unary_rule(primitive, primals, tangents, |x, _, t| {
            Ok(reduce_prod_tangent(x, t, axes))
        }),
        ReduceOp::Max | ReduceOp::Min => unary_rule(primitive, primals, tangents, |x, ans, t| {
            Ok(Some(reduce_chooser_tangent(x, ans, t, axes)))
        }),
        ReduceOp::And | ReduceOp::Or => zero_jvp(primitive, primals),
    }
}

/// JAX's `_reduce_chooser_jvp_rule`: the mean of the tangents at the
/// positions equal to the result.
fn reduce_chooser_tangent(x: &Array, ans: &Array, t: &Array, axes: &[i64]) -> Array {
    let kept_shape: Vec<i64> = x
        .shape_or_empty()
        .iter()
        .enumerate()
        .map(|(d, &size)| if axes.contains(&(d as i64)) { 1 } else { size })
        .collect();
    let location = indicator(&lax::eq(x, &lax::reshape(ans, &kept_shape)), t);
    let counts = lax::reduce_sum(&location, axes);
    lax::div(&lax::reduce_sum(&lax::mul(t, &location), axes), &counts)
}

/// The tangent of a product over `axes`, exact also where factors are zero:
/// the reduced axes are flattened into one last axis, and each tangent is
/// multiplied by the product of the factors before it times those after it.
fn reduce_prod_tangent(x: &Array, t: &Array, axes: &[i64]) -> Tangent {
    let shape = x.shape_or_empty().to_vec();
    let size = |d: i64| shape.get(d as usize).copied().unwrap_or(0);
    let n: i64 = axes.iter().map(|&a| size(a)).product();
    if n == 0 {
        // The empty product is the constant 1.
        return None;
    }
    let kept: Vec<i64> = (0..shape.len() as i64)
        .filter(|d| !axes.contains(d))
        .collect();
    let mut permutation = kept.clone();
    permutation.extend_from_slice(axes);
    let mut flat: Vec<i64> = kept.iter().map(|&d| size(d)).collect();
    flat.push(n);
    let axis = kept.len();
    let flatten = |a: &Array| lax::reshape(&support::transpose_if_needed(a, &permutation), &flat);
    let xf = flatten(x);
    let others = lax::mul(
        &exclusive_cumprod(&xf, axis, n, false),
        &exclusive_cumprod(&xf, axis, n, true),
    );
    Some(lax::reduce_sum(
        &lax::mul(&flatten(t), &others),
        &[axis as i64],
    ))
}

/// Products of the elements strictly before (after, if `reverse`) each
/// position along `axis`, of size `n >= 1`.
fn exclusive_cumprod(x: &Array, axis: usize, n: i64, reverse: bool) -> Array {
    let inclusive = lax::cumprod(x, axis, reverse);
    let mut config = vec![(0, 0, 0); x.ndim_or_zero()];
    let shifted = if reverse {
        config[axis] = (0, 1, 0);
        slice_axis(&inclusive, axis, 1, n, 1)
    } else {
        config[axis] = (1, 0, 0);
        slice_axis(&inclusive, axis, 0, n - 1, 1)
    };
    pad_with(&shifted, 1.0, &config)
}

/// Running reductions: cumsum is linear; cumprod, cummax and cummin are
/// differentiated through JAX's parallel prefix scan (`associative_scan`),
/// so ties in cummax/cummin split their tangents as `max`/`min` do.
fn cumulative_jvp(
    primitive: &Primitive,
    op: CumulativeOp,
    axis: usize,
    reverse: bool,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let combine: Combine = match op {
        CumulativeOp::Sum => {
            return linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true);
        }
        CumulativeOp::Prod => combine_mul,
        CumulativeOp::Max => |a, b| combine_chooser(a, b, lax::max),
        CumulativeOp::Min => |a, b| combine_chooser(a, b, lax::min),
    };
    unary_rule(primitive, primals, tangents, |x, _, t| {
        let flip = |a: &Array| {
            if reverse {
                lax::rev(a, &[axis as i64])
            } else {
                a.clone()
            }
        };
        let (_, tangent) = associative_scan(&(flip(x), flip(t)), axis, combine);
        Ok(Some(flip(&tangent)))
    })
}

/// The product of two scan elements with its tangent.
fn combine_mul((a, ta): &Dual, (b, tb): &Dual) -> Dual {
    let tangent = lax::add(&lax::mul(ta, b), &lax::mul(a, tb));
    (lax::mul(a, b), tangent)
}

/// `choose(a, b)` (max or min) of two scan elements with its tangent.
fn combine_chooser((a, ta): &Dual, (b, tb): &Dual, choose: fn(&Array, &Array) -> Array) -> Dual {
    let c = choose(a, b);
    let tangent = lax::add(
        &lax::mul(ta, &balanced_eq(a, &c, b)),
        &lax::mul(tb, &balanced_eq(b, &c, a)),
    );
    (c, tangent)
}

/// An inclusive scan of dual values along `axis` with an associative
/// `combine` (JAX's `associative_scan`: combine adjacent pairs, scan those
/// recursively for the odd positions, derive the even ones, interleave).
fn associative_scan(elems: &Dual, axis: usize, combine: Combine) -> Dual {
    let n = dim(&elems.0, axis);
    if n < 2 {
        return elems.clone();
    }
    let part = |(p, t): &Dual, start: i64, limit: i64, stride: i64| {
        (
            slice_axis(p, axis, start, limit, stride),
            slice_axis(t, axis, start, limit, stride),
        )
    };
    let reduced = combine(&part(elems, 0, n - 1, 2), &part(elems, 1, n, 2));
    let odd = associative_scan(&reduced, axis, combine);
    let rest = part(elems, 2, n, 2);
    let even = if n % 2 == 0 {
        let m = dim(&odd.0, axis);
        combine(&part(&odd, 0, m - 1, 1), &rest)
    } else {
        combine(&odd, &rest)
    };
    let first = part(elems, 0, 1, 1);
    let even = (
        lax::concatenate(&[&first.0, &even.0], axis),
        lax::concatenate(&[&first.1, &even.1], axis),
    );
    (
        interleave(&even.0, &odd.0, axis),
        interleave(&even.1, &odd.1, axis),
    )
}

/// `a[0], b[0], a[1], b[1], ...` along `axis` (`a` as long as `b` or one
/// longer), built with interior padding.
fn interleave(a: &Array, b: &Array, axis: usize) -> Array {
    let equal = dim(a, axis) == dim(b, axis);
    let rank = a.ndim_or_zero();
    let mut config_a = vec![(0, 0, 0); rank];
    let mut config_b = config_a.clone();
    if axis < rank {
        config_a[axis] = (0, i64::from(equal), 1);
        config_b[axis] = (1, i64::from(!equal), 1);
    }
    lax::add(&pad_with(a, 0.0, &config_a), &pad_with(b, 0.0, &config_b))
}

/// `reduce_window`: sum is linear; max/min take the tangent at the position
/// each window chose (the first one on ties), as JAX's
/// `_select_and_gather_add` does.
fn reduce_window_jvp(
    primitive: &Primitive,
    op: WindowOp,
    window: &Window<'_>,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let max = match op {
        WindowOp::Sum => {
            return linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true);
        }
        WindowOp::Max => true,
        WindowOp::Min => false,
    };
    unary_rule(primitive, primals, tangents, |x, ans, t| {
        Ok(window_chooser_tangent(x, ans, t, window, max))
    })
}

/// The tangent of a max (or min) over windows: the operand is dilated and
/// padded with the reduction's identity (the tangent with zeros), then each
/// window's extreme position picks its tangent.
fn window_chooser_tangent(
    x: &Array,
    ans: &Array,
    t: &Array,
    window: &Window<'_>,
    max: bool,
) -> Tangent {
    let out = ans.shape_or_empty().to_vec();
    if out.contains(&0) {
        return None;
    }
    let config: Vec<(i64, i64, i64)> = window
        .padding
        .iter()
        .zip(window.base_dilation)
        .map(|(&(lo, hi), &dilation)| (lo, hi, dilation - 1))
        .collect();
    let identity = if max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let xp = pad_with(x, identity, &config);
    let tp = pad_with(t, 0.0, &config);
    let positions: i64 = window.dimensions.iter().product();
    Some(if positions <= MAX_UNROLLED_WINDOW {
        window_select_unrolled(&xp, &tp, &out, window, max)
    } else {
        window_select_gathered(&xp, &tp, &out, window, max)
    })
}

/// The chosen tangent per window by strided slices, one per window offset:
/// a running extreme and its tangent (a later offset wins only if strictly
/// better, so the first extreme is chosen).
fn window_select_unrolled(
    xp: &Array,
    tp: &Array,
    out: &[i64],
    window: &Window<'_>,
    max: bool,
) -> Array {
    let mut best: Option<Dual> = None;
    for offset in window_offsets(window.dimensions) {
        let start: Vec<i64> = offset
            .iter()
            .zip(window.window_dilation)
            .map(|(&o, &d)| o * d)
            .collect();
        let limit: Vec<i64> = start
            .iter()
            .zip(out)
            .zip(window.strides)
            .map(|((&s, &n), &stride)| s + (n - 1) * stride + 1)
            .collect();
        let value = lax::slice(xp, &start, &limit, Some(window.strides));
        let tangent = lax::slice(tp, &start, &limit, Some(window.strides));
        best = Some(match best {
            None => (value, tangent),
            Some((best_value, best_tangent)) => {
                let better = if max {
                    lax::gt(&value, &best_value)
                } else {
                    lax::lt(&value, &best_value)
                };
                (
                    select(&better, &value, &best_value),
                    select(&better, &tangent, &best_tangent),
                )
            }
        });
    }
    best.map_or_else(|| tp.clone(), |(_, tangent)| tangent)
}

/// The chosen tangent per window by one gather of every (dilated) window,
/// flattened, an argmax/argmin over it (first on ties) and a gather of the
/// tangent's windows at that position.
fn window_select_gathered(
    xp: &Array,
    tp: &Array,
    out: &[i64],
    window: &Window<'_>,
    max: bool,
) -> Array {
    let rank = out.len();
    let mut index_shape = out.to_vec();
    index_shape.push(1);
    let starts: Vec<Array> = window
        .strides
        .iter()
        .enumerate()
        .map(|(d, &stride)| {
            let i = lax::iota(DType::I32, &index_shape, d);
            if stride == 1 {
                i
            } else {
                lax::mul(&i, &lit_i32(stride))
            }
        })
        .collect();
    let indices = lax::concatenate(&refs(&starts), rank);
    let dilated: Vec<i64> = window
        .dimensions
        .iter()
        .zip(window.window_dilation)
        .map(|(&w, &d)| (w - 1) * d + 1)
        .collect();
    let numbers = GatherDimensionNumbers {
        offset_dims: (rank as i64..2 * rank as i64).collect(),
        collapsed_slice_dims: Dims::new(),
        start_index_map: (0..rank as i64).collect(),
    };
    let mut flat = out.to_vec();
    flat.push(window.dimensions.iter().product());
    let windows = |a: &Array| {
        let patches = lax::gather(
            a,
            &indices,
            numbers.clone(),
            &dilated,
            GatherMode::Clip,
            Scalar::Int(0),
        );
        let patches = if window.window_dilation.iter().all(|&d| d == 1) {
            patches
        } else {
            let mut strides = vec![1; rank];
            strides.extend_from_slice(window.window_dilation);
            let limit = patches.shape_or_empty().to_vec();
            lax::slice(&patches, &vec![0; limit.len()], &limit, Some(&strides))
        };
        lax::reshape(&patches, &flat)
    };
    let values = windows(xp);
    let choice = if max {
        lax::argmax(&values, rank, DType::I32)
    } else {
        lax::argmin(&values, rank, DType::I32)
    };
    let picked = take_along(&windows(tp), &lax::reshape(&choice, &index_shape), rank);
    lax::reshape(&picked, out)
}

/// `x` at positions `idx` along `axis` (`idx` has `x`'s shape except along
/// `axis`; rank >= 1): `take_along_axis` as one gather.
fn take_along(x: &Array, idx: &Array, axis: usize) -> Array {
    let shape = idx.shape_or_empty().to_vec();
    let rank = shape.len();
    let mut full = shape;
    full.push(1);
    let components: Vec<Array> = (0..rank)
        .map(|d| {
            if d == axis {
                lax::reshape(&lax::convert_element_type(idx, DType::I32), &full)
            } else {
                lax::iota(DType::I32, &full, d)
            }
        })
        .collect();
    let indices = lax::concatenate(&refs(&components), rank);
    lax::gather(
        x,
        &indices,
        GatherDimensionNumbers {
            offset_dims: Dims::new(),
            collapsed_slice_dims: (0..rank as i64).collect(),
            start_index_map: (0..rank as i64).collect(),
        },
        &vec![1; rank],
        GatherMode::Clip,
        Scalar::Int(0),
    )
}

/// `sort` (JAX's `_sort_jvp`): an iota sorted along with the operands gives
/// the permutation, which then permutes each tangent.
fn sort_jvp(
    primitive: &Primitive,
    dimension: usize,
    is_stable: bool,
    num_keys: usize,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    if tangents.iter().all(Option::is_none) {
        return zero_jvp(primitive, primals);
    }
    let shape = primals
        .first()
        .map(|p| p.shape_or_empty().to_vec())
        .unwrap_or_default();
    let iota = lax::iota(DType::I32, &shape, dimension);
    let mut operands = refs(primals);
    operands.push(&iota);
    let sort = Primitive::Reduce(reduce::Op::Sort {
        dimension,
        is_stable,
        num_keys,
    });
    let mut outs = support::bind_all(sort, &operands)?;
    let order = outs
        .pop()
        .ok_or_else(|| support::internal_error("jvp", primitive, "no output"))?;
    let out_tangents = tangents
        .iter()
        .map(|t| t.as_ref().map(|t| take_along(t, &order, dimension)))
        .collect();
    Ok((outs, out_tangents))
}

/// `top_k`: the tangent at the returned indices (none for the indices).
fn top_k_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let outs = support::bind_all(primitive.clone(), &refs(primals))?;
    let mut tangent = None;
    if let (Some(Some(t)), Some(indices)) = (tangents.first(), outs.get(1)) {
        let axis = t.ndim_or_zero().saturating_sub(1);
        tangent = Some(take_along(t, indices, axis));
    }
    let mut out_tangents = vec![tangent];
    out_tangents.resize(outs.len(), None);
    Ok((outs, out_tangents))
}

/// `reduce_sum`: the cotangent broadcast back over the reduced axes; the
/// other reductions are not linear.
fn reduce(
    primitive: &Primitive,
    op: ReduceOp,
    axes: &[i64],
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        ReduceOp::Sum => for_linear(operands, |_, a| {
            let kept: Vec<i64> = (0..a.rank() as i64).filter(|d| !axes.contains(d)).collect();
            Ok(Some(lax::broadcast_in_dim(ct, &a.shape, &kept)))
        }),
        ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min | ReduceOp::And | ReduceOp::Or => {
            nonlinear(primitive, operands)
        }
    }
}

/// The window of a `reduce_window` or `select_and_scatter_add`.
struct Window<'a> {
    /// Window size per dimension.
    dimensions: &'a [i64],
    /// Step per dimension.
    strides: &'a [i64],
    /// (low, high) padding per dimension.
    padding: &'a [(i64, i64)],
    /// Dilation of the operand per dimension.
    base_dilation: &'a [i64],
    /// Dilation of the window per dimension.
    window_dilation: &'a [i64],
}

/// `reduce_window_sum` (JAX's `_reduce_window_sum_transpose_rule`): the
/// cotangent padded (strides as interior padding) then summed over the
/// same windows, stepping by the base dilation.
fn reduce_window_sum(
    window: &Window<'_>,
    ct: &Array,
    ct_shape: &[i64],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    for_linear(operands, |_, a| {
        let rank = a.rank();
        let pads = vjp_lhs_padding(
            &a.shape,
            window.dimensions,
            window.strides,
            ct_shape,
            window.padding,
            window.base_dilation,
            window.window_dilation,
        );
        let config: Vec<(i64, i64, i64)> = pads
            .iter()
            .zip(window.strides)
            .map(|(&(lo, hi), &s)| (lo, hi, s - 1))
            .collect();
        let padded = lax::pad(ct, &zero_of(ct), &config);
        Ok(Some(lax::reduce_window_dilated(
            &padded,
            WindowOp::Sum,
            window.dimensions,
            window.base_dilation,
            &vec![(0, 0); rank],
            &vec![1; rank],
            window.window_dilation,
        )))
    })
}

/// `select_and_scatter_add` with a known operand (JAX's
/// `_select_and_scatter_add_transpose`): each window's cotangent is the
/// output cotangent at the position the window selects — what JAX's
/// `select_and_gather_add` computes, done here with one strided slice per
/// window offset and a running selection.
fn select_and_scatter_add(
    primitive: &Primitive,
    window: &Window<'_>,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let operand = known_at(primitive, operands, 1)?;
    for_linear(operands, |_, source| {
        gather_selected(window, ct, operand, &source.shape)
    })
}

/// The window offsets in row-major order (the last dimension fastest).
fn window_offsets(dimensions: &[i64]) -> Vec<Vec<i64>> {
    dimensions.iter().fold(vec![Vec::new()], |offsets, &size| {
        offsets
            .into_iter()
            .flat_map(|prefix| {
                (0..size).map(move |k| {
                    let mut offset = prefix.clone();
                    offset.push(k);
                    offset
                })
            })
            .collect()
    })
}

/// For each window of `operand` (windows of shape `out_shape`), the value
/// of `ct` where select-and-scatter puts the window's source value: the
/// first in-bounds position in row-major order, replaced by each later
/// in-bounds one that the current choice is not `>=` (as XLA's
/// `select_and_scatter` with the `ge` selector). Windows entirely in the
/// padding select nothing (zero).
fn gather_selected(
    window: &Window<'_>,
    ct: &Array,
    operand: &Array,
    out_shape: &[i64],
) -> Result<Tangent> {
    if out_shape.contains(&0) {
        return Ok(None);
    }
    let aval = operand.aval()?.clone();
    let config: Vec<(i64, i64, i64)> = window.padding.iter().map(|&(lo, hi)| (lo, hi, 0)).collect();
    let values = lax::pad(operand, &support::literal(0.0, aval.dtype, false), &config);
    let cts = lax::pad(ct, &zero_of(ct), &config);
    let inside = support::full(&Aval::new(DType::Bool, &aval.shape), 1.0);
    let inside = lax::pad(&inside, &support::literal(0.0, DType::Bool, false), &config);
    let mut best: Option<(Array, Array, Array)> = None;
    for start in window_offsets(window.dimensions) {
        let limit: Vec<i64> = start
            .iter()
            .zip(out_shape)
            .zip(window.strides)
            .map(|((&k, &o), &s)| k + (o - 1) * s + 1)
            .collect();
        let take = |x: &Array| lax::slice(x, &start, &limit, Some(window.strides));
        let (value, ct, valid) = (take(&values), take(&cts), take(&inside));
        best = Some(match best {
            None => (value, ct, valid),
            Some((best_value, best_ct, best_valid)) => {
                let keep = lax::and(&best_valid, &lax::ge(&best_value, &value));
                let switch = lax::and(&valid, &lax::not(&keep));
                (
                    lax::select_n(&switch, &[&best_value, &value]),
                    lax::select_n(&switch, &[&best_ct, &ct]),
                    lax::or(&best_valid, &valid),
                )
            }
        });
    }
    Ok(best.map(|(_, ct, _)| ct))
}

/// The batched reduce: operands batched at 0, axes shifted past it.
pub(crate) fn reduce_with_batch(
    primitive: &Primitive,
    computation: &SubJaxpr,
    axes: &[i64],
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let n = args.len() / 2;
    if bdims[n..].iter().any(Option::is_some) {
        return Err(rule_error(
            "vmap",
            primitive,
            "the initial values of a general reduce must not be batched (as in JAX)",
        ));
    }
    let mut inputs: Vec<Array> = args[..n]
        .iter()
        .zip(bdims)
        .map(|(x, b)| batch_at(x, *b, size, 0))
        .collect();
    inputs.extend_from_slice(&args[n..]);
    let refs: Vec<&Array> = inputs.iter().collect();
    let outs = bind_all(
        Primitive::Reduce(reduce::Op::ReduceWith {
            computation: computation.clone(),
            axes: axes.iter().map(|a| a + 1).collect(),
        }),
        &refs,
    )?;
    let out_bdims = vec![Some(0); outs.len()];
    Ok((outs, out_bdims))
}

/// Primal outputs and tangents: the jvp of [`tree_reduce`].
pub(crate) fn reduce_with_jvp(
    primitive: &Primitive,
    computation: &SubJaxpr,
    axes: &[i64],
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let n = primals.len() / 2;
    if tangents[..n].iter().all(Option::is_none) {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind_all(primitive.clone(), &refs)?;
        return Ok((outs, vec![None; n]));
    }
    if tangents[n..].iter().any(Option::is_some) {
        return Err(rule_error(
            "jvp",
            primitive,
            "the initial values of a general reduce have no derivative (as in JAX): pass them as \
             constants",
        ));
    }
    let (operands, inits) = primals.split_at(n);
    let operand_tangents: Vec<Array> = operands
        .iter()
        .zip(tangents)
        .map(|(x, t)| Ok(instantiate(t, x.aval()?)))
        .collect::<Result<_>>()?;
    let jaxpr = computation.jaxpr();
    let (outs, out_tangents) = crate::autodiff::jvp(
        |xs: Vec<Array>| tree_reduce(jaxpr, &xs, inits, axes),
        &operands.to_vec(),
        &operand_tangents,
    )?;
    let outs = outs?;
    let out_tangents = out_tangents?;
    Ok((outs, out_tangents.into_iter().map(Some).collect()))
}

/// `operands` reduced over `axes` by a balanced tree of `reducer`
/// applications: halves combined elementwise (the odd one out padded with
/// the initial value) until one row is left.
fn tree_reduce(
    reducer: &Jaxpr,
    operands: &[Array],
    inits: &[Array],
    axes: &[i64],
) -> Result<Vec<Array>> {
    let shape = operands[0].aval()?.shape.clone();
    let rank = shape.len() as i64;
    let kept: Vec<i64> = (0..rank).filter(|d| !axes.contains(d)).collect();
    let out_shape: Vec<i64> = kept.iter().map(|&d| shape[d as usize]).collect();
    let rows: i64 = axes.iter().map(|&d| shape[d as usize]).product();
    let width: i64 = out_shape.iter().product();
    let permutation: Vec<i64> = axes.iter().chain(&kept).copied().collect();
    let mut xs: Vec<Array> = operands
        .iter()
        .map(|x| lax::reshape(&lax::transpose(x, &permutation), &[rows, width]))
        .collect();
    let mut m = rows;
    while m > 1 {
        let first = (m + 1) / 2;
        let second = m - first;
        let mut args: Vec<Array> = xs
            .iter()
            .map(|x| {
                lax::reshape(
                    &lax::slice(x, &[0, 0], &[first, width], None),
                    &[first * width],
                )
            })
            .collect();
        for (x, init) in xs.iter().zip(inits) {
            let rest = lax::slice(x, &[first, 0], &[m, width], None);
            let rest = if second == first {
                rest
            } else {
                lax::pad(&rest, init, &[(0, 1, 0), (0, 0, 0)])
            };
            args.push(lax::reshape(&rest, &[first * width]));
        }
        let combined = crate::transform::batching::vmap_flat(
            |flat| crate::transform::eval::eval_jaxpr(reducer, &[], flat),
            &args,
            &vec![Some(0); args.len()],
            BatchAxis::unnamed(first * width),
            &|_| Some(0),
        )?;
        xs = combined
            .into_iter()
            .map(|r| {
                r.map(|x| lax::reshape(&x, &[first, width])).map_err(|_| {
                    crate::error::Error::Internal("an unbatched reducer output".into())
                })
            })
            .collect::<Result<_>>()?;
        m = first;
    }
    if m == 0 {
        return Ok(inits
            .iter()
            .map(|init| crate::numpy::broadcast_to(init, &out_shape))
            .collect());
    }
    Ok(xs.iter().map(|x| lax::reshape(x, &out_shape)).collect())
}
