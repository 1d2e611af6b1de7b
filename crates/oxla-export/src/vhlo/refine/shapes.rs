//! The result dims of StableHLO ops (by their VHLO names, without the
//! version) from their operands' dims and their attributes: the shape
//! rules that refinement needs where a polymorphic module wrote `?`.

use super::super::VhloError;
use super::super::text::Op;
use super::types::{integer_attribute, integer_list};

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// An op's property by name.
pub(crate) fn property<'o>(op: &'o Op, name: &str) -> Option<&'o str> {
    op.properties
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn list(op: &Op, name: &str) -> Result<Vec<i64>, VhloError> {
    let text = property(op, name).ok_or_else(|| bad(format!("{} has no {name}", op.name)))?;
    integer_list(text)
}

/// A dimension list that may be left out (then `default` for each of `rank`).
fn list_or(op: &Op, name: &str, rank: usize, default: i64) -> Result<Vec<i64>, VhloError> {
    match property(op, name) {
        Some(text) if !text.contains("none_v1") => integer_list(text),
        _ => Ok(vec![default; rank]),
    }
}

fn integer(op: &Op, name: &str) -> Result<i64, VhloError> {
    let text = property(op, name).ok_or_else(|| bad(format!("{} has no {name}", op.name)))?;
    integer_attribute(text)
}

/// Checks that each list has `n` entries (an op's per-dim attributes).
fn expect_lengths(op: &Op, n: usize, lists: &[(&str, &[i64])]) -> Result<(), VhloError> {
    match lists.iter().find(|(_, l)| l.len() != n) {
        Some((name, l)) => Err(bad(format!(
            "{} has {} entries in {name}, for {n} dims",
            op.name,
            l.len()
        ))),
        None => Ok(()),
    }
}

/// The first `n` operands' dims (results that follow operands one to one).
fn leading(op: &Op, operands: &[Vec<i64>], n: usize) -> Result<Vec<Vec<i64>>, VhloError> {
    operands
        .get(..n)
        .map(<[Vec<i64>]>::to_vec)
        .ok_or_else(|| bad(format!("{} has fewer operands than results", op.name)))
}

fn index(v: i64, rank: usize, what: &str) -> Result<usize, VhloError> {
    usize::try_from(v)
        .ok()
        .filter(|&i| i < rank)
        .ok_or_else(|| bad(format!("{what} {v} is out of range for rank {rank}")))
}

/// Elementwise ops: the result has the operands' shape.
pub(crate) const ELEMENTWISE: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "clamp",
    "compare",
    "complex",
    "convert",
    "cosine",
    "count_leading_zeros",
    "divide",
    "exponential",
    "exponential_minus_one",
    "floor",
    "imag",
    "is_finite",
    "log",
    "log_plus_one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "remainder",
    "round_nearest_afz",
    "round_nearest_even",
    "rsqrt",
    "select",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sine",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "xor",
    "reduce_precision",
    "cholesky",
    "uniform_quantize",
    "uniform_dequantize",
];

/// The dims of each result of `op` (by its short name `short`), given the
/// dims of its operands and its results' ranks; `None` when the op has no
/// rule here (its results must then be static already).
// Long by design: one arm per op family, each its rule from the StableHLO
// spec; split, the table of which ops are covered would scatter.
pub(crate) fn result_dims(
    short: &str,
    op: &Op,
    operands: &[Vec<i64>],
    result_ranks: &[usize],
) -> Result<Option<Vec<Vec<i64>>>, VhloError> {
    let operand = |i: usize| -> Result<&Vec<i64>, VhloError> {
        operands
            .get(i)
            .ok_or_else(|| bad(format!("{} has no operand {i}", op.name)))
    };
    let one = |dims: Vec<i64>| Ok(Some(vec![dims]));
    match short {
        s if ELEMENTWISE.contains(&s) => {
            let rank = result_ranks.first().copied().unwrap_or(0);
            let dims = operands
                .iter()
                .find(|d| d.len() == rank)
                .ok_or_else(|| bad(format!("{}: no operand has the result's rank", op.name)))?;
            one(dims.clone())
        }
        "bitcast_convert" => {
            let x = operand(0)?;
            let rank = result_ranks.first().copied().unwrap_or(0);
            // A narrower result adds a minor dim whose size is static.
            one(x.iter().copied().take(rank).collect())
        }
        "optimization_barrier" | "sort" => Ok(Some(operands.to_vec())),
        "scatter" => Ok(Some(leading(op, operands, result_ranks.len())?)),
        "dynamic_update_slice" | "reverse" | "select_and_scatter" | "all_reduce" => {
            one(operand(0)?.clone())
        }
        "triangular_solve" => one(operand(1)?.clone()),
        "reduce" => {
            let n = result_ranks.len();
            let dropped = list(op, "dimensions")?;
            Ok(Some(
                leading(op, operands, n)?
                    .iter()
                    .map(|d| {
                        d.iter()
                            .enumerate()
                            .filter(|(i, _)| !dropped.contains(&(*i as i64)))
                            .map(|(_, &x)| x)
                            .collect()
                    })
                    .collect(),
            ))
        }
        "transpose" => {
            let x = operand(0)?;
            let perm = list(op, "permutation")?;
            one(perm
                .iter()
                .map(|&p| Ok(x[index(p, x.len(), "a permutation entry")?]))
                .collect::<Result<_, VhloError>>()?)
        }
        "dot_general" => {
            let (lhs, rhs) = (operand(0)?, operand(1)?);
            let lb = list(op, "lhs_batching_dimensions")?;
            let rb = list(op, "rhs_batching_dimensions")?;
            let lc = list(op, "lhs_contracting_dimensions")?;
            let rc = list(op, "rhs_contracting_dimensions")?;
            let mut dims: Vec<i64> = lb
                .iter()
                .map(|&d| Ok(lhs[index(d, lhs.len(), "a batch dim")?]))
                .collect::<Result<_, VhloError>>()?;
            let free = |x: &Vec<i64>, b: &[i64], c: &[i64]| -> Vec<i64> {
                (0..x.len())
                    .filter(|&i| !b.contains(&(i as i64)) && !c.contains(&(i as i64)))
                    .map(|i| x[i])
                    .collect()
            };
            dims.extend(free(lhs, &lb, &lc));
            dims.extend(free(rhs, &rb, &rc));
            one(dims)
        }
        "concatenate" => {
            let axis = integer(op, "dimension")?;
            let first = operand(0)?;
            let axis = index(axis, first.len(), "the concatenation dim")?;
            if operands.iter().any(|d| d.len() != first.len()) {
                return Err(bad(format!("{}'s operands differ in rank", op.name)));
            }
            let mut dims = first.clone();
            dims[axis] = operands
                .iter()
                .fold(0i64, |acc, d| acc.saturating_add(d[axis]));
            one(dims)
        }
        "slice" => {
            let starts = list(op, "start_indices")?;
            let limits = list(op, "limit_indices")?;
            let strides = list(op, "strides")?;
            expect_lengths(
                op,
                starts.len(),
                &[("limit_indices", &limits), ("strides", &strides)],
            )?;
            one(starts
                .iter()
                .zip(&limits)
                .zip(&strides)
                .map(|((s, l), t)| strided_count(*s, *l, *t))
                .collect())
        }
        "pad" => {
            let x = operand(0)?;
            let lo = list(op, "edge_padding_low")?;
            let hi = list(op, "edge_padding_high")?;
            let interior = list(op, "interior_padding")?;
            expect_lengths(
                op,
                x.len(),
                &[
                    ("edge_padding_low", &lo),
                    ("edge_padding_high", &hi),
                    ("interior_padding", &interior),
                ],
            )?;
            one(padded(x, &lo, &hi, &interior))
        }
        "dynamic_slice" => one(list(op, "slice_sizes")?),
        "gather" => one(gather_dims(op, operand(1)?, &list(op, "slice_sizes")?)?),
        "reduce_window" => {
            let n = result_ranks.len();
            let rank = operand(0)?.len();
            let window = list(op, "window_dimensions")?;
            let strides = list_or(op, "window_strides", rank, 1)?;
            let base = list_or(op, "base_dilations", rank, 1)?;
            let dilation = list_or(op, "window_dilations", rank, 1)?;
            let padding = list_or(op, "padding", 2 * rank, 0)?;
            expect_lengths(
                op,
                rank,
                &[
                    ("window_dimensions", &window),
                    ("window_strides", &strides),
                    ("base_dilations", &base),
                    ("window_dilations", &dilation),
                ],
            )?;
            expect_lengths(op, 2 * rank, &[("padding", &padding)])?;
            let inputs = leading(op, operands, n)?;
            if inputs.iter().any(|x| x.len() != rank) {
                return Err(bad(format!("{}'s inputs differ in rank", op.name)));
            }
            Ok(Some(
                inputs
                    .iter()
                    .map(|x| {
                        (0..rank)
                            .map(|d| {
                                let input = dilated(x[d], base[d])
                                    .saturating_add(padding[2 * d])
                                    .saturating_add(padding[2 * d + 1]);
                                windowed(input, window[d], dilation[d], strides[d])
                            })
                            .collect()
                    })
                    .collect(),
            ))
        }
        "convolution" => one(convolution_dims(op, operand(0)?, operand(1)?)?),
        _ => Ok(None),
    }
}

/// A size after dilation by `factor` (`factor - 1` holes between elements).
/// Shape arithmetic saturates: a module's absurd attributes give absurd
/// sizes that XLA refuses, never an overflow.
fn dilated(size: i64, factor: i64) -> i64 {
    if size == 0 {
        0
    } else {
        size.saturating_sub(1)
            .saturating_mul(factor)
            .saturating_add(1)
    }
}

/// The number of windows of `window` (dilated by `dilation`) at `stride`
/// over `input` elements.
fn windowed(input: i64, window: i64, dilation: i64, stride: i64) -> i64 {
    let span = dilated(window, dilation);
    if input < span {
        0
    } else {
        (input.saturating_sub(span) / stride.max(1)).saturating_add(1)
    }
}

/// The elements of `start..limit` at `stride` (a slice's size).
pub(crate) fn strided_count(start: i64, limit: i64, stride: i64) -> i64 {
    let stride = stride.max(1);
    limit
        .saturating_sub(start)
        .saturating_add(stride - 1)
        .max(0)
        / stride
}

/// `pad`'s result dims.
pub(crate) fn padded(x: &[i64], lo: &[i64], hi: &[i64], interior: &[i64]) -> Vec<i64> {
    (0..x.len())
        .map(|d| {
            lo[d]
                .saturating_add(hi[d])
                .saturating_add(x[d])
                .saturating_add(x[d].saturating_sub(1).max(0).saturating_mul(interior[d]))
        })
        .collect()
}

/// `gather`'s result dims: the batch dims of the indices, with the slice's
/// kept dims at `offset_dims`.
fn gather_dims(op: &Op, indices: &[i64], slice_sizes: &[i64]) -> Result<Vec<i64>, VhloError> {
    let offset_dims = list(op, "offset_dims")?;
    let collapsed = list(op, "collapsed_slice_dims")?;
    let operand_batching = list_or(op, "operand_batching_dims", 0, 0)?;
    let index_vector_dim = integer(op, "index_vector_dim")?;
    let batch: Vec<i64> = indices
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as i64 != index_vector_dim)
        .map(|(_, &d)| d)
        .collect();
    let offsets: Vec<i64> = slice_sizes
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            !collapsed.contains(&(*i as i64)) && !operand_batching.contains(&(*i as i64))
        })
        .map(|(_, &d)| d)
        .collect();
    let rank = batch.len() + offsets.len();
    let (mut b, mut o) = (batch.into_iter(), offsets.into_iter());
    (0..rank)
        .map(|i| {
            if offset_dims.contains(&(i as i64)) {
                o.next()
            } else {
                b.next()
            }
            .ok_or_else(|| bad(format!("{}: inconsistent dimension numbers", op.name)))
        })
        .collect()
}

/// `convolution`'s result dims from its dimension numbers and window.
fn convolution_dims(op: &Op, lhs: &[i64], rhs: &[i64]) -> Result<Vec<i64>, VhloError> {
    let spatial_in = list(op, "input_spatial_dimensions")?;
    let spatial_kernel = list(op, "kernel_spatial_dimensions")?;
    let spatial_out = list(op, "output_spatial_dimensions")?;
    let n = spatial_in.len();
    let strides = list_or(op, "window_strides", n, 1)?;
    let padding = list_or(op, "padding", 2 * n, 0)?;
    let lhs_dilation = list_or(op, "lhs_dilation", n, 1)?;
    let rhs_dilation = list_or(op, "rhs_dilation", n, 1)?;
    let batch_groups = integer(op, "batch_group_count")?.max(1);
    expect_lengths(
        op,
        n,
        &[
            ("kernel_spatial_dimensions", &spatial_kernel),
            ("output_spatial_dimensions", &spatial_out),
            ("window_strides", &strides),
            ("lhs_dilation", &lhs_dilation),
            ("rhs_dilation", &rhs_dilation),
        ],
    )?;
    expect_lengths(op, 2 * n, &[("padding", &padding)])?;
    let rank = lhs.len();
    if rhs.len() != rank {
        return Err(bad(format!("{}'s operands differ in rank", op.name)));
    }
    let mut dims = vec![0i64; rank];
    let at = |v: i64, len: usize| index(v, len, "a convolution dim");
    dims[at(integer(op, "output_batch_dimension")?, rank)?] =
        lhs[at(integer(op, "input_batch_dimension")?, rank)?] / batch_groups;
    dims[at(integer(op, "output_feature_dimension")?, rank)?] =
        rhs[at(integer(op, "kernel_output_feature_dimension")?, rhs.len())?];
    for s in 0..n {
        let input = dilated(lhs[at(spatial_in[s], rank)?], lhs_dilation[s])
            .saturating_add(padding[2 * s])
            .saturating_add(padding[2 * s + 1]);
        let window = rhs[at(spatial_kernel[s], rhs.len())?];
        dims[at(spatial_out[s], rank)?] = windowed(input, window, rhs_dilation[s], strides[s]);
    }
    Ok(dims)
}
