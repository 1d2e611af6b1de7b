//! numpy's advanced indexing with several integer arrays (and ints and
//! slices beside them), as JAX's `_index_to_gather` gives it: the arrays
//! (and ints, as 0-d arrays) broadcast together to one shape `B`, which
//! replaces their dims in the result, where the first of them stood if
//! they are adjacent, else in front. `x[rows, cols]` with two `[n]` arrays
//! is the diagonal-like `[x[rows[k], cols[k]] for k]`.
//!
//! The index becomes one position per result element and operand dim (a
//! grid of shape `R + [rank]`), read with one gather or written with one
//! scatter whose windows are single elements.

use oxla_core::ScatterOp;
use oxla_core::{DType, Dims, GatherDimensionNumbers, GatherMode, Scalar, ScatterDimensionNumbers};

use super::{IndexItem, consumed_dims, resolve};
use crate::array::Array;
use crate::lax;

/// A position grid: element `r` of the result reads (or writes) operand
/// element `indices[r]`.
pub(super) struct Grid {
    /// `R + [rank]`, int32.
    pub(super) indices: Array,
    /// `R`.
    pub(super) result_shape: Vec<i64>,
}

/// Whether `items` need the general path: an integer array beside another
/// array or anything but `..`.
pub(super) fn needs_grid(items: &[IndexItem]) -> bool {
    let arrays = items
        .iter()
        .filter(|i| matches!(i, IndexItem::Array(_)))
        .count();
    let others_full = items.iter().all(|i| {
        matches!(
            i,
            IndexItem::Array(_)
                | IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: 1
                }
        )
    });
    arrays > 1 || (arrays == 1 && !others_full)
}

/// One operand dim's index: a broadcast member, or a slice kept as a dim
/// of the result.
enum DimIndex {
    /// An integer array or int, wrapped to non-negative positions.
    Advanced(Array),
    /// `(start, step)` along result dim `dim`.
    Slice { start: i64, step: i64, dim: usize },
}

/// The broadcast shape of index shapes, numpy's rules.
fn broadcast_all(shapes: &[Vec<i64>]) -> Result<Vec<i64>, String> {
    shapes.iter().try_fold(Vec::new(), |acc, s| {
        crate::numpy::broadcast_shapes(&acc, s).ok_or_else(|| {
            let listed: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
            format!(
                "the integer-array indices cannot be broadcast together: shapes {}",
                listed.join(", ")
            )
        })
    })
}

/// The position grid of `items` (no boolean arrays) over an operand of
/// `shape`; `clip` clamps every position into its dim.
#[track_caller]
pub(super) fn grid(shape: &[i64], items: &[IndexItem], clip: bool) -> Result<Grid, String> {
    let consumed = consumed_dims(shape, items)?;
    let mut items = items.to_vec();
    items.extend((consumed..shape.len()).map(|_| IndexItem::from(..)));
    let advanced_at: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, IndexItem::Array(_) | IndexItem::Int(_)))
        .map(|(k, _)| k)
        .collect();
    let index_shapes: Vec<Vec<i64>> = items
        .iter()
        .filter_map(|i| match i {
            IndexItem::Array(a) => Some(a.shape_or_empty().to_vec()),
            IndexItem::Int(_) => Some(Vec::new()),
            IndexItem::Slice { .. } | IndexItem::NewAxis => None,
        })
        .collect();
    let b = broadcast_all(&index_shapes)?;
    let adjacent = advanced_at.windows(2).all(|w| w[1] == w[0] + 1);
    // Result dims: B where the first advanced item stood (adjacent) or in
    // front, a dim per slice and new axis.
    let mut result_shape: Vec<i64> = Vec::new();
    let mut b_start = 0;
    if !adjacent {
        result_shape.extend_from_slice(&b);
    }
    let mut dims: Vec<DimIndex> = Vec::new();
    let mut operand_dim = 0;
    for (k, item) in items.iter().enumerate() {
        if adjacent && advanced_at.first() == Some(&k) {
            b_start = result_shape.len();
            result_shape.extend_from_slice(&b);
        }
        match item {
            IndexItem::NewAxis => result_shape.push(1),
            IndexItem::Slice { start, stop, step } => {
                if *step == 0 {
                    return Err("slice step cannot be zero".into());
                }
                let (s, count) = resolve(*start, *stop, *step, shape[operand_dim]);
                dims.push(DimIndex::Slice {
                    start: s,
                    step: *step,
                    dim: result_shape.len(),
                });
                result_shape.push(count);
                operand_dim += 1;
            }
            IndexItem::Int(i) => {
                let n = shape[operand_dim];
                let position = if *i < 0 { i + n } else { *i };
                dims.push(DimIndex::Advanced(Array::weak_scalar(position as i32)));
                operand_dim += 1;
            }
            IndexItem::Array(a) => {
                if !a.dtype_or_bool().is_int() {
                    return Err(format!(
                        "an index array must hold integers (or be a boolean mask), not {}",
                        a.dtype_or_bool()
                    ));
                }
                let n = shape[operand_dim];
                let positions = lax::convert_element_type(a, DType::I32);
                dims.push(DimIndex::Advanced(lax::wrap_negative(&positions, n)));
                operand_dim += 1;
            }
        }
    }
    let b_dims: Vec<i64> = (b_start..b_start + b.len()).map(|d| d as i64).collect();
    let rank_r = result_shape.len();
    let components: Vec<Array> = dims
        .iter()
        .zip(shape)
        .map(|(d, &n)| {
            let positions = match d {
                DimIndex::Advanced(a) => {
                    let a = crate::numpy::broadcast_to(a, &b);
                    lax::broadcast_in_dim(&a, &result_shape, &b_dims)
                }
                DimIndex::Slice { start, step, dim } => {
                    let i = lax::iota(DType::I32, &result_shape, *dim);
                    lax::add(
                        &lax::mul(&i, &Array::weak_scalar(*step as i32)),
                        &Array::weak_scalar(*start as i32),
                    )
                }
            };
            let positions = if clip {
                lax::clamp(
                    &Array::weak_scalar(0i32),
                    &positions,
                    &Array::weak_scalar((n - 1).max(0) as i32),
                )
            } else {
                positions
            };
            lax::expand_dims(&positions, &[rank_r as i64])
        })
        .collect();
    let refs: Vec<&Array> = components.iter().collect();
    Ok(Grid {
        indices: lax::concatenate(&refs, rank_r),
        result_shape,
    })
}

/// The elements of `x` at the grid's positions (out-of-bounds ones as
/// `mode` says).
#[track_caller]
pub(super) fn gather(x: &Array, grid: &Grid, mode: GatherMode, fill: Scalar) -> Array {
    let rank = x.ndim_or_zero() as i64;
    lax::gather(
        x,
        &grid.indices,
        GatherDimensionNumbers {
            offset_dims: Dims::new(),
            collapsed_slice_dims: (0..rank).collect(),
            start_index_map: (0..rank).collect(),
        },
        &vec![1; rank as usize],
        mode,
        fill,
    )
}

/// `x` with `v` (broadcast to the grid's result shape) combined into the
/// grid's positions by `op`; out-of-bounds positions are dropped.
#[track_caller]
pub(super) fn scatter(x: &Array, grid: &Grid, v: &Array, op: ScatterOp) -> Array {
    let rank = x.ndim_or_zero() as i64;
    let updates = crate::numpy::broadcast_to(
        &lax::convert_element_type(v, x.dtype_or_bool()),
        &grid.result_shape,
    );
    lax::scatter(
        x,
        &grid.indices,
        &updates,
        op,
        ScatterDimensionNumbers {
            update_window_dims: Dims::new(),
            inserted_window_dims: (0..rank).collect(),
            scatter_dims_to_operand_dims: (0..rank).collect(),
        },
    )
}
