//! Indexing primitives: static and dynamic slices, gather and scatter
//! (JAX's `jax/_src/lax/slicing.py`).

use super::print;
use crate::aval::{Aval, Dims};
use crate::shape_rules::{RuleResult, ShapeError, check_axes, expect_arity};

/// How gather treats out-of-bounds start indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatherMode {
    /// Clamp the indices so each slice is in bounds (XLA's own semantics).
    Clip,
    /// Slices that would go out of bounds give the fill value.
    Fill,
    /// The indices are promised in bounds (JAX's default for indexing):
    /// gathers clamp as XLA does, and the transpose (a scatter) drops
    /// out-of-bounds updates instead of clamping them.
    PromiseInBounds,
}
/// How a gathered slice relates operand, indices and result (XLA's
/// `GatherDimensionNumbers`; the index vector is the last indices dim).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatherDimensionNumbers {
    /// Result dims that hold the slice's (uncollapsed) dims.
    pub offset_dims: Dims,
    /// Operand dims of size 1 in the slice that the result drops.
    pub collapsed_slice_dims: Dims,
    /// Which operand dim each index component starts.
    pub start_index_map: Dims,
}
/// How scattered updates relate operand, indices and updates (XLA's
/// `ScatterDimensionNumbers`; the index vector is the last indices dim).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterDimensionNumbers {
    /// Update dims that hold the window.
    pub update_window_dims: Dims,
    /// Operand dims of size 1 in the window that updates do not have.
    pub inserted_window_dims: Dims,
    /// Which operand dim each index component addresses.
    pub scatter_dims_to_operand_dims: Dims,
}
/// What scatter does with an update and the value it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// Replace.
    Set,
    /// Add.
    Add,
    /// Multiply.
    Mul,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}
/// An indexing primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// A strided box of the operand.
    Slice {
        /// First index per dimension.
        start_indices: Dims,
        /// One past the last index per dimension.
        limit_indices: Dims,
        /// Step per dimension.
        strides: Dims,
    },
    /// A window of sizes `slice_sizes` at a runtime start: operands x, then
    /// one scalar integer index per dimension (clamped into range).
    DynamicSlice {
        /// The window's sizes.
        slice_sizes: Dims,
    },
    /// x with `update` written at a runtime start: operands x, update, then
    /// one scalar integer index per dimension (clamped into range).
    DynamicUpdateSlice,
    /// Slices of the operand at start indices: operands x and indices
    /// (integer, last dim the index vector).
    Gather {
        /// Dimension numbers.
        dimension_numbers: GatherDimensionNumbers,
        /// The slice's size per operand dim.
        slice_sizes: Dims,
        /// Out-of-bounds handling.
        mode: GatherMode,
        /// The value of out-of-bounds slices in `Fill` mode.
        fill_value: crate::jaxpr::ScalarKey,
    },
    /// Writes or combines updates into the operand at indices: operands x,
    /// indices (integer, last dim the index vector) and updates. Updates
    /// whose window is out of bounds are dropped.
    Scatter {
        /// What an update does.
        op: ScatterOp,
        /// Dimension numbers.
        dimension_numbers: ScatterDimensionNumbers,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Slice { .. } => "slice",
            Op::DynamicSlice { .. } => "dynamic_slice",
            Op::DynamicUpdateSlice => "dynamic_update_slice",
            Op::Gather { .. } => "gather",
            Op::Scatter {
                op: ScatterOp::Set, ..
            } => "scatter",
            Op::Scatter {
                op: ScatterOp::Add, ..
            } => "scatter-add",
            Op::Scatter {
                op: ScatterOp::Mul, ..
            } => "scatter-mul",
            Op::Scatter {
                op: ScatterOp::Min, ..
            } => "scatter-min",
            Op::Scatter {
                op: ScatterOp::Max, ..
            } => "scatter-max",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::DynamicUpdateSlice => vec![],
            Op::DynamicSlice { slice_sizes } => {
                vec![format!("slice_sizes={}", print::tuple(slice_sizes))]
            }
            Op::Gather {
                dimension_numbers: d,
                slice_sizes,
                mode,
                fill_value,
            } => vec![
                format!(
                    "dimension_numbers=GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, start_index_map={}, operand_batching_dims=(), start_indices_batching_dims=())",
                    print::tuple(&d.offset_dims),
                    print::tuple(&d.collapsed_slice_dims),
                    print::tuple(&d.start_index_map)
                ),
                format!(
                    "fill_value={}",
                    match mode {
                        GatherMode::Fill => fill_value.to_string(),
                        GatherMode::Clip | GatherMode::PromiseInBounds => "None".into(),
                    }
                ),
                "indices_are_sorted=False".into(),
                format!(
                    "mode=GatherScatterMode.{}",
                    match mode {
                        GatherMode::Clip => "CLIP",
                        GatherMode::Fill => "FILL_OR_DROP",
                        GatherMode::PromiseInBounds => "PROMISE_IN_BOUNDS",
                    }
                ),
                format!("slice_sizes={}", print::tuple(slice_sizes)),
                "unique_indices=False".into(),
            ],
            Op::Scatter {
                dimension_numbers: d,
                ..
            } => vec![
                format!(
                    "dimension_numbers=ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, operand_batching_dims=(), scatter_indices_batching_dims=())",
                    print::tuple(&d.update_window_dims),
                    print::tuple(&d.inserted_window_dims),
                    print::tuple(&d.scatter_dims_to_operand_dims)
                ),
                "indices_are_sorted=False".into(),
                "mode=GatherScatterMode.FILL_OR_DROP".into(),
                "unique_indices=False".into(),
            ],
            Op::Slice {
                start_indices,
                limit_indices,
                strides,
            } => vec![
                format!("limit_indices={}", print::tuple(limit_indices)),
                format!("start_indices={}", print::tuple(start_indices)),
                format!(
                    "strides={}",
                    if strides.iter().all(|&s| s == 1) {
                        "None".to_string()
                    } else {
                        print::tuple(strides)
                    }
                ),
            ],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Slice {
            start_indices,
            limit_indices,
            strides,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if start_indices.len() != x.rank()
                || limit_indices.len() != x.rank()
                || strides.len() != x.rank()
            {
                return Err(ShapeError::Invalid(format!(
                    "start, limit and strides need {} entries each",
                    x.rank()
                )));
            }
            let mut shape = Dims::new();
            for d in 0..x.rank() {
                let (s, l, st) = (start_indices[d], limit_indices[d], strides[d]);
                if s < 0 || l > x.shape[d] || s > l || st < 1 {
                    return Err(ShapeError::Invalid(format!(
                        "slice {s}:{l}:{st} is invalid for dimension {d} of size {}",
                        x.shape[d]
                    )));
                }
                shape.push((l - s + st - 1) / st);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Op::DynamicSlice { slice_sizes } => {
            let x = inputs
                .first()
                .ok_or("takes an operand and its start indices")?;
            check_indices(&inputs[1..], x.rank())?;
            if slice_sizes.len() != x.rank() {
                return Err(ShapeError::Invalid(format!(
                    "slice_sizes {slice_sizes:?} need {} entries",
                    x.rank()
                )));
            }
            for (d, (&size, &dim)) in slice_sizes.iter().zip(&x.shape).enumerate() {
                if size < 0 || size > dim {
                    return Err(ShapeError::Invalid(format!(
                        "slice size {size} does not fit dimension {d} of size {dim}"
                    )));
                }
            }
            Ok(vec![x.with_shape(slice_sizes)])
        }
        Op::DynamicUpdateSlice => {
            if inputs.len() < 2 {
                return Err(ShapeError::Invalid(
                    "takes an operand, an update and start indices".into(),
                ));
            }
            let (x, update) = (inputs[0], inputs[1]);
            if update.dtype != x.dtype || update.rank() != x.rank() {
                return Err(ShapeError::Invalid(format!(
                    "the update {update} must have the operand's dtype and rank ({x})"
                )));
            }
            if let Some(d) = (0..x.rank()).find(|&d| update.shape[d] > x.shape[d]) {
                return Err(ShapeError::Invalid(format!(
                    "the update {update} is larger than the operand {x} in dimension {d}"
                )));
            }
            check_indices(&inputs[2..], x.rank())?;
            Ok(vec![x.clone()])
        }
        Op::Gather {
            dimension_numbers: d,
            slice_sizes,
            ..
        } => gather_types(d, slice_sizes, inputs),
        Op::Scatter {
            dimension_numbers: d,
            ..
        } => scatter_types(d, inputs),
    }
}

/// Start indices of a dynamic slice: one integer scalar per dimension.
fn check_indices(indices: &[&Aval], rank: usize) -> RuleResult<()> {
    if indices.len() != rank {
        return Err(ShapeError::Invalid(format!(
            "needs {rank} start indices, got {}",
            indices.len()
        )));
    }
    if let Some(i) = indices.iter().find(|i| i.rank() != 0 || !i.dtype.is_int()) {
        return Err(ShapeError::Invalid(format!(
            "start indices must be integer scalars, got {i}"
        )));
    }
    Ok(())
}

/// The shape rule of `gather`.
fn gather_types(
    d: &GatherDimensionNumbers,
    slice_sizes: &Dims,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, 2)?;
    let (x, indices) = (inputs[0], inputs[1]);
    if !indices.dtype.is_int() || indices.rank() == 0 {
        return Err(ShapeError::Invalid(format!(
            "indices must be an integer array with an index vector dim, got {indices}"
        )));
    }
    let index_size = *indices.shape.last().expect("rank >= 1");
    if d.start_index_map.len() as i64 != index_size {
        return Err(ShapeError::Invalid(format!(
            "start_index_map {:?} must have one entry per index component ({index_size})",
            d.start_index_map
        )));
    }
    check_axes(&d.start_index_map, x.rank(), "start_index_map entry")?;
    check_axes(&d.collapsed_slice_dims, x.rank(), "collapsed slice dim")?;
    if slice_sizes.len() != x.rank() {
        return Err(ShapeError::Invalid(format!(
            "slice_sizes {slice_sizes:?} need {} entries",
            x.rank()
        )));
    }
    for (dim, (&size, &bound)) in slice_sizes.iter().zip(&x.shape).enumerate() {
        if size < 0 || size > bound {
            return Err(ShapeError::Invalid(format!(
                "slice size {size} does not fit dimension {dim} of size {bound}"
            )));
        }
    }
    if let Some(&c) = d
        .collapsed_slice_dims
        .iter()
        .find(|&&c| slice_sizes[c as usize] != 1)
    {
        return Err(ShapeError::Invalid(format!(
            "collapsed slice dim {c} must have slice size 1"
        )));
    }
    let offsets: Vec<i64> = (0..x.rank() as i64)
        .filter(|dim| !d.collapsed_slice_dims.contains(dim))
        .map(|dim| slice_sizes[dim as usize])
        .collect();
    let batch: Vec<i64> = indices.shape[..indices.rank() - 1].to_vec();
    let rank = batch.len() + offsets.len();
    if d.offset_dims.len() != offsets.len() {
        return Err(ShapeError::Invalid(format!(
            "offset_dims {:?} need {} entries",
            d.offset_dims,
            offsets.len()
        )));
    }
    check_axes(&d.offset_dims, rank, "offset dim")?;
    let (mut offsets, mut batch) = (offsets.into_iter(), batch.into_iter());
    let shape: Dims = (0..rank as i64)
        .map(|dim| {
            if d.offset_dims.contains(&dim) {
                offsets.next()
            } else {
                batch.next()
            }
        })
        .collect::<Option<Dims>>()
        .ok_or("inconsistent gather dimensions")?;
    Ok(vec![x.with_shape(&shape)])
}

/// The shape rule of `scatter` (and its combining variants).
fn scatter_types(d: &ScatterDimensionNumbers, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, 3)?;
    let (x, indices, updates) = (inputs[0], inputs[1], inputs[2]);
    if !indices.dtype.is_int() || indices.rank() == 0 {
        return Err(ShapeError::Invalid(format!(
            "indices must be an integer array with an index vector dim, got {indices}"
        )));
    }
    if updates.dtype != x.dtype {
        return Err(ShapeError::Invalid(format!(
            "updates {updates} must have the operand's dtype {}",
            x.dtype
        )));
    }
    let index_size = *indices.shape.last().expect("rank >= 1");
    if d.scatter_dims_to_operand_dims.len() as i64 != index_size {
        return Err(ShapeError::Invalid(format!(
            "scatter_dims_to_operand_dims {:?} must have one entry per index component ({index_size})",
            d.scatter_dims_to_operand_dims
        )));
    }
    check_axes(&d.scatter_dims_to_operand_dims, x.rank(), "scatter dim")?;
    check_axes(&d.inserted_window_dims, x.rank(), "inserted window dim")?;
    check_axes(&d.update_window_dims, updates.rank(), "update window dim")?;
    if d.update_window_dims.len() + d.inserted_window_dims.len() != x.rank() {
        return Err(ShapeError::Invalid(format!(
            "update window dims {:?} and inserted dims {:?} must cover the operand's rank {}",
            d.update_window_dims,
            d.inserted_window_dims,
            x.rank()
        )));
    }
    let scatter_dims: Vec<i64> = (0..updates.rank() as i64)
        .filter(|dim| !d.update_window_dims.contains(dim))
        .map(|dim| updates.shape[dim as usize])
        .collect();
    if scatter_dims != indices.shape[..indices.rank() - 1] {
        return Err(ShapeError::Invalid(format!(
            "updates {updates} do not match the indices {indices}"
        )));
    }
    let window_bounds = (0..x.rank() as i64).filter(|dim| !d.inserted_window_dims.contains(dim));
    for (&u, bound) in d.update_window_dims.iter().zip(window_bounds) {
        if updates.shape[u as usize] > x.shape[bound as usize] {
            return Err(ShapeError::Invalid(format!(
                "update window dim {u} is larger than operand dim {bound}"
            )));
        }
    }
    Ok(vec![x.clone()])
}

/// The sharding rule (see [`crate::sharding_rules`]): slices keep the
/// operand's split; a gather keeps the split of the operand dimensions it
/// takes whole, gives its batch dimensions the indices' split, and needs
/// the dimensions it indexes into unsplit (it would otherwise gather across
/// devices, which JAX too asks the user to spell out); a scatter keeps the
/// operand's split and needs the dimensions it indexes into unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
    outs: &[Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    use crate::sharding_rules::{require_unsplit, unsplit};
    match op {
        Op::Slice { .. } | Op::DynamicSlice { .. } | Op::DynamicUpdateSlice => {
            Ok(vec![inputs[0].dim_axes()])
        }
        Op::Gather {
            dimension_numbers: d,
            slice_sizes,
            ..
        } => {
            let (operand, indices) = (inputs[0], inputs[1]);
            let indexed = "the gather indexes into it";
            for &dim in d.start_index_map.iter().chain(&d.collapsed_slice_dims) {
                require_unsplit(operand, dim as usize, indexed)?;
            }
            require_unsplit(indices, indices.rank() - 1, "it holds the index vectors")?;
            let mut spec = unsplit(outs[0].rank());
            let kept =
                (0..operand.rank()).filter(|&i| !d.collapsed_slice_dims.contains(&(i as i64)));
            let operand_axes = operand.dim_axes();
            for (&out_dim, dim) in d.offset_dims.iter().zip(kept) {
                if slice_sizes[dim] != operand.shape[dim] {
                    require_unsplit(operand, dim, "the gather takes part of it")?;
                }
                spec[out_dim as usize] = operand_axes[dim].clone();
            }
            let batch = (0..spec.len()).filter(|o| !d.offset_dims.contains(&(*o as i64)));
            for (out_dim, axes) in batch.zip(indices.dim_axes()) {
                spec[out_dim] = axes;
            }
            Ok(vec![spec])
        }
        Op::Scatter {
            dimension_numbers: d,
            ..
        } => {
            let operand = inputs[0];
            for &dim in d
                .scatter_dims_to_operand_dims
                .iter()
                .chain(&d.inserted_window_dims)
            {
                require_unsplit(operand, dim as usize, "the scatter indexes into it")?;
            }
            Ok(vec![operand.dim_axes()])
        }
    }
}
