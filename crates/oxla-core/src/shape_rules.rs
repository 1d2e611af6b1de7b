//! The shape and dtype rule of each primitive: from the input avals to the
//! output avals, or a message saying what is wrong.

use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::primitive::{BinaryOp, Primitive, ReduceOp, TypeClass, UnaryOp};

/// What is wrong with the inputs of a primitive (the caller adds the
/// primitive, the input types and the source line).
pub type RuleResult<T> = Result<T, String>;

fn expect_arity(inputs: &[&Aval], n: usize) -> RuleResult<()> {
    if inputs.len() == n {
        Ok(())
    } else {
        Err(format!("takes {n} operand(s), got {}", inputs.len()))
    }
}

fn expect_class(class: TypeClass, aval: &Aval) -> RuleResult<()> {
    if class.contains(aval.dtype) {
        Ok(())
    } else {
        Err(format!("needs {}, got {}", class.describe(), aval.dtype))
    }
}

fn expect_same(a: &Aval, b: &Aval) -> RuleResult<()> {
    if a.dtype != b.dtype {
        return Err(format!(
            "operands must have the same dtype, got {} and {}",
            a.dtype, b.dtype
        ));
    }
    if a.shape != b.shape {
        return Err(format!(
            "operands must have the same shape, got {a} and {b}"
        ));
    }
    Ok(())
}

/// The shape two operands of an elementwise op broadcast to: equal ranks
/// whose dims are equal or 1, or a rank-0 operand (as `lax.add` accepts).
pub fn broadcast_shapes(a: &Aval, b: &Aval) -> RuleResult<Dims> {
    if a.dtype != b.dtype {
        return Err(format!(
            "operands must have the same dtype, got {} and {}",
            a.dtype, b.dtype
        ));
    }
    if a.rank() == 0 {
        return Ok(b.shape.clone());
    }
    if b.rank() == 0 {
        return Ok(a.shape.clone());
    }
    if a.rank() != b.rank() {
        return Err(format!("operands must have the same rank, got {a} and {b}"));
    }
    a.shape
        .iter()
        .zip(&b.shape)
        .map(|(&x, &y)| match (x, y) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(format!("operands have incompatible shapes {a} and {b}")),
        })
        .collect()
}

/// Start indices of a dynamic slice: one integer scalar per dimension.
fn check_indices(indices: &[&Aval], rank: usize) -> RuleResult<()> {
    if indices.len() != rank {
        return Err(format!("needs {rank} start indices, got {}", indices.len()));
    }
    if let Some(i) = indices.iter().find(|i| i.rank() != 0 || !i.dtype.is_int()) {
        return Err(format!("start indices must be integer scalars, got {i}"));
    }
    Ok(())
}

/// The shape of the windows of a reduce_window over `x`.
fn window_output_shape(
    x: &Aval,
    window: &[i64],
    strides: &[i64],
    padding: &[(i64, i64)],
    base_dilation: &[i64],
    window_dilation: &[i64],
) -> RuleResult<Dims> {
    let rank = x.rank();
    if [
        window.len(),
        strides.len(),
        padding.len(),
        base_dilation.len(),
        window_dilation.len(),
    ]
    .iter()
    .any(|&n| n != rank)
    {
        return Err(format!("window parameters need {rank} entries each"));
    }
    (0..rank)
        .map(|d| {
            if window[d] < 1 || strides[d] < 1 || base_dilation[d] < 1 || window_dilation[d] < 1 {
                return Err(format!(
                    "window sizes, strides and dilations must be positive (dimension {d})"
                ));
            }
            let dilated_base = if x.shape[d] == 0 {
                0
            } else {
                (x.shape[d] - 1) * base_dilation[d] + 1
            };
            let padded = dilated_base + padding[d].0 + padding[d].1;
            let dilated_window = (window[d] - 1) * window_dilation[d] + 1;
            if padded < dilated_window {
                return Ok(0);
            }
            Ok((padded - dilated_window) / strides[d] + 1)
        })
        .collect()
}

/// The result of a convolution (JAX's `conv_general_dilated` shape rule).
#[allow(clippy::too_many_arguments)]
fn conv_shape(
    lhs: &Aval,
    rhs: &Aval,
    strides: &[i64],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
    dn: &crate::primitive::ConvDimensionNumbers,
    feature_groups: i64,
    batch_groups: i64,
    preferred: Option<DType>,
) -> RuleResult<Aval> {
    let rank = lhs.rank();
    if rank < 2 || rhs.rank() != rank {
        return Err(format!(
            "operands must have one rank of at least 2, got {lhs} and {rhs}"
        ));
    }
    if lhs.dtype != rhs.dtype {
        return Err(format!(
            "operands must have the same dtype, got {} and {}",
            lhs.dtype, rhs.dtype
        ));
    }
    let spatial = rank - 2;
    for spec in [&dn.lhs_spec, &dn.rhs_spec, &dn.out_spec] {
        if spec.len() != rank {
            return Err(format!(
                "dimension numbers need {rank} entries, got {spec:?}"
            ));
        }
        check_axes(spec, rank, "dimension number")?;
    }
    if [
        strides.len(),
        padding.len(),
        lhs_dilation.len(),
        rhs_dilation.len(),
    ]
    .iter()
    .any(|&n| n != spatial)
    {
        return Err(format!(
            "strides, padding and dilations need {spatial} entries each"
        ));
    }
    if feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1) {
        return Err("feature and batch group counts must be positive, and not both above 1".into());
    }
    let dim = |a: &Aval, spec: &Dims, i: usize| a.shape[spec[i] as usize];
    let (batch, in_features) = (dim(lhs, &dn.lhs_spec, 0), dim(lhs, &dn.lhs_spec, 1));
    let (out_features, kernel_in) = (dim(rhs, &dn.rhs_spec, 0), dim(rhs, &dn.rhs_spec, 1));
    if in_features != kernel_in * feature_groups {
        return Err(format!(
            "input features {in_features} must equal kernel input features {kernel_in} times feature_group_count {feature_groups}"
        ));
    }
    if out_features % feature_groups != 0
        || out_features % batch_groups != 0
        || batch % batch_groups != 0
    {
        return Err("output features and batch must divide by the group counts".into());
    }
    let mut out = vec![0i64; rank];
    out[dn.out_spec[0] as usize] = batch / batch_groups;
    out[dn.out_spec[1] as usize] = out_features;
    for i in 0..spatial {
        let size = dim(lhs, &dn.lhs_spec, i + 2);
        let window = dim(rhs, &dn.rhs_spec, i + 2);
        let dilated_in = if size == 0 {
            0
        } else {
            (size - 1) * lhs_dilation[i] + 1
        };
        let padded = dilated_in + padding[i].0 + padding[i].1;
        let dilated_window = if window == 0 {
            0
        } else {
            (window - 1) * rhs_dilation[i] + 1
        };
        out[dn.out_spec[i + 2] as usize] = if padded < dilated_window {
            0
        } else {
            (padded - dilated_window) / strides[i] + 1
        };
    }
    Ok(Aval::new(preferred.unwrap_or(lhs.dtype), &out))
}

fn check_axes(axes: &[i64], rank: usize, what: &str) -> RuleResult<()> {
    for (i, &a) in axes.iter().enumerate() {
        if a < 0 || a as usize >= rank {
            return Err(format!("{what} {a} is out of range for rank {rank}"));
        }
        if axes[..i].contains(&a) {
            return Err(format!("{what} {a} appears twice"));
        }
    }
    Ok(())
}

/// The output avals of `primitive` applied to `inputs`.
pub fn abstract_eval(primitive: &Primitive, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let mut outs = types(primitive, inputs)?;
    varying_axes(primitive, inputs, &mut outs);
    Ok(outs)
}

/// How a primitive's results get the mesh axes they vary over (JAX's vma
/// rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaryingRule {
    /// The union of the operands' (which `bind` makes agree first, with
    /// `pvary`): ordinary ops, and collectives that keep the operand's.
    Union,
    /// The operand's plus the group's axes (`pvary`).
    AddGroup,
    /// The operand's minus the group's axes (`psum`, `pmax`, `pmin`).
    RemoveGroup,
    /// The group's axes (`axis_index`).
    Group,
    /// As the primitive's body gives them (calls, control flow, callbacks).
    FromBody,
}

/// The varying-axes rule of `primitive`.
pub fn varying_rule(primitive: &Primitive) -> VaryingRule {
    match primitive {
        Primitive::Pvary { .. } => VaryingRule::AddGroup,
        Primitive::AllReduce { .. }
        | Primitive::AllGather {
            invariant: true, ..
        } => VaryingRule::RemoveGroup,
        Primitive::AxisIndex { .. } => VaryingRule::Group,
        Primitive::Call { .. }
        | Primitive::Remat { .. }
        | Primitive::CustomJvpCall { .. }
        | Primitive::CustomVjpCall { .. }
        | Primitive::CustomLin { .. }
        | Primitive::Cond { .. }
        | Primitive::While { .. }
        | Primitive::Scan { .. }
        | Primitive::HostCallback { .. }
        | Primitive::CallExported { .. } => VaryingRule::FromBody,
        Primitive::Unary(_)
        | Primitive::Binary(_)
        | Primitive::Compare(_)
        | Primitive::IntegerPow { .. }
        | Primitive::SelectN
        | Primitive::Clamp
        | Primitive::ConvertElementType { .. }
        | Primitive::Iota { .. }
        | Primitive::BroadcastInDim { .. }
        | Primitive::Reshape { .. }
        | Primitive::Transpose { .. }
        | Primitive::Squeeze { .. }
        | Primitive::Rev { .. }
        | Primitive::Concatenate { .. }
        | Primitive::Split { .. }
        | Primitive::Pad { .. }
        | Primitive::Slice { .. }
        | Primitive::Reduce { .. }
        | Primitive::ReduceWith { .. }
        | Primitive::DynamicSlice { .. }
        | Primitive::DynamicUpdateSlice
        | Primitive::BitcastConvertType { .. }
        | Primitive::Cumulative { .. }
        | Primitive::ReduceWindow { .. }
        | Primitive::SelectAndScatterAdd { .. }
        | Primitive::ArgMinMax { .. }
        | Primitive::Sort { .. }
        | Primitive::TopK { .. }
        | Primitive::ConvGeneralDilated { .. }
        | Primitive::Gather { .. }
        | Primitive::Scatter { .. }
        | Primitive::DotGeneral { .. }
        | Primitive::StopGradient
        | Primitive::OptimizationBarrier
        | Primitive::CheckpointName { .. }
        | Primitive::ShardingConstraint { .. }
        | Primitive::ShardMap { .. }
        | Primitive::AllGather {
            invariant: false, ..
        }
        | Primitive::ReduceScatter { .. }
        | Primitive::AllToAll { .. }
        | Primitive::Ppermute { .. } => VaryingRule::Union,
    }
}

/// Sets the mesh axes each result varies over, by [`varying_rule`].
fn varying_axes(primitive: &Primitive, inputs: &[&Aval], outs: &mut [Aval]) {
    let union: Vec<std::sync::Arc<str>> =
        inputs.iter().flat_map(|a| a.vma.iter().cloned()).collect();
    let group = primitive
        .axis_group()
        .map(|g| g.axes.to_vec())
        .unwrap_or_default();
    let vma: Vec<std::sync::Arc<str>> = match varying_rule(primitive) {
        VaryingRule::FromBody => return,
        // A vmap's axis is no mesh axis.
        VaryingRule::Group if primitive.axis_group().and_then(|g| g.vmap_axis()).is_some() => {
            return;
        }
        VaryingRule::Union => union,
        VaryingRule::AddGroup => union.into_iter().chain(group).collect(),
        VaryingRule::RemoveGroup => union.into_iter().filter(|a| !group.contains(a)).collect(),
        VaryingRule::Group => group.into_iter().collect(),
    };
    for out in outs.iter_mut() {
        *out = out.with_vma(vma.iter().cloned());
    }
}

/// Output types (dtype, shape, weak type) of `primitive` on `inputs`.
fn types(primitive: &Primitive, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match primitive {
        Primitive::Unary(op) => {
            expect_arity(inputs, 1)?;
            expect_class(op.accepts(), inputs[0])?;
            Ok(vec![match op {
                UnaryOp::IsFinite => inputs[0].with_dtype(DType::Bool),
                _ => inputs[0].clone(),
            }])
        }
        Primitive::Binary(op) => {
            expect_arity(inputs, 2)?;
            let shape = broadcast_shapes(inputs[0], inputs[1])?;
            expect_class(op.accepts(), inputs[0])?;
            let mut out = inputs[0].with_shape(&shape);
            out.weak_type = inputs[0].weak_type && inputs[1].weak_type;
            if matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
                && out.dtype == DType::Bool
            {
                out.weak_type = false;
            }
            Ok(vec![out])
        }
        Primitive::Compare(_) => {
            expect_arity(inputs, 2)?;
            let shape = broadcast_shapes(inputs[0], inputs[1])?;
            Ok(vec![Aval::new(DType::Bool, &shape)])
        }
        Primitive::IntegerPow { .. } => {
            expect_arity(inputs, 1)?;
            expect_class(TypeClass::Numeric, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::SelectN => {
            if inputs.len() < 2 {
                return Err(format!(
                    "takes a selector and at least one case, got {} operand(s)",
                    inputs.len()
                ));
            }
            let (which, cases) = (inputs[0], &inputs[1..]);
            match which.dtype {
                DType::Bool if cases.len() > 2 => {
                    return Err(format!(
                        "a bool selector picks from at most 2 cases, got {}",
                        cases.len()
                    ));
                }
                DType::Bool | DType::I32 => {}
                other => return Err(format!("the selector must be bool or i32, got {other}")),
            }
            for case in &cases[1..] {
                expect_same(cases[0], case)?;
            }
            if which.rank() != 0 && which.shape != cases[0].shape {
                return Err(format!(
                    "the selector {which} must be a scalar or have the cases' shape {}",
                    cases[0]
                ));
            }
            let mut out = cases[0].clone();
            out.weak_type = cases.iter().all(|c| c.weak_type);
            Ok(vec![out])
        }
        Primitive::Clamp => {
            expect_arity(inputs, 3)?;
            let (lo, x, hi) = (inputs[0], inputs[1], inputs[2]);
            for bound in [lo, hi] {
                if bound.dtype != x.dtype {
                    return Err(format!(
                        "bounds must have the operand's dtype {}, got {}",
                        x.dtype, bound.dtype
                    ));
                }
                if bound.rank() != 0 && bound.shape != x.shape {
                    return Err(format!(
                        "bound {bound} must be a scalar or have the operand's shape {x}"
                    ));
                }
            }
            Ok(vec![x.clone()])
        }
        Primitive::ConvertElementType {
            new_dtype,
            weak_type,
        } => {
            expect_arity(inputs, 1)?;
            let mut out = inputs[0].with_dtype(*new_dtype);
            out.weak_type = *weak_type;
            Ok(vec![out])
        }
        Primitive::Iota {
            dtype,
            shape,
            dimension,
        } => {
            expect_arity(inputs, 0)?;
            if *dimension >= shape.len() {
                return Err(format!(
                    "dimension {dimension} is out of range for shape {shape:?}"
                ));
            }
            if shape.iter().any(|&d| d < 0) {
                return Err(format!("negative dimension in shape {shape:?}"));
            }
            expect_class(TypeClass::Numeric, &Aval::new(*dtype, &[]))?;
            Ok(vec![Aval::new(*dtype, shape)])
        }
        Primitive::BroadcastInDim {
            shape,
            broadcast_dimensions,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if broadcast_dimensions.len() != x.rank() {
                return Err(format!(
                    "broadcast_dimensions {broadcast_dimensions:?} must have one entry per operand dimension ({})",
                    x.rank()
                ));
            }
            if shape.iter().any(|&d| d < 0) {
                return Err(format!("negative dimension in shape {shape:?}"));
            }
            for (i, &b) in broadcast_dimensions.iter().enumerate() {
                if b < 0 || b as usize >= shape.len() {
                    return Err(format!(
                        "broadcast dimension {b} is out of range for shape {shape:?}"
                    ));
                }
                if i > 0 && b <= broadcast_dimensions[i - 1] {
                    return Err(format!(
                        "broadcast_dimensions {broadcast_dimensions:?} must be strictly increasing"
                    ));
                }
                if x.shape[i] != 1 && x.shape[i] != shape[b as usize] {
                    return Err(format!(
                        "operand dimension {i} of size {} cannot broadcast to size {}",
                        x.shape[i], shape[b as usize]
                    ));
                }
            }
            Ok(vec![x.with_shape(shape)])
        }
        Primitive::Reshape { new_sizes } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if new_sizes.iter().any(|&d| d < 0) || new_sizes.iter().product::<i64>() != x.size() {
                return Err(format!(
                    "cannot reshape {x} ({} elements) to {new_sizes:?}",
                    x.size()
                ));
            }
            Ok(vec![x.with_shape(new_sizes)])
        }
        Primitive::Transpose { permutation } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(permutation, x.rank(), "permutation entry")?;
            if permutation.len() != x.rank() {
                return Err(format!(
                    "permutation {permutation:?} must have {} entries",
                    x.rank()
                ));
            }
            let shape: Dims = permutation.iter().map(|&p| x.shape[p as usize]).collect();
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::Squeeze { dimensions } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(dimensions, x.rank(), "dimension")?;
            if let Some(&d) = dimensions.iter().find(|&&d| x.shape[d as usize] != 1) {
                return Err(format!(
                    "cannot squeeze dimension {d} of size {}",
                    x.shape[d as usize]
                ));
            }
            let shape: Dims = (0..x.rank())
                .filter(|i| !dimensions.contains(&(*i as i64)))
                .map(|i| x.shape[i])
                .collect();
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::Rev { dimensions } => {
            expect_arity(inputs, 1)?;
            check_axes(dimensions, inputs[0].rank(), "dimension")?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::Split { axis, sizes } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if *axis >= x.rank() {
                return Err(format!("axis {axis} is out of range for {x}"));
            }
            if sizes.iter().any(|&s| s < 0) || sizes.iter().sum::<i64>() != x.shape[*axis] {
                return Err(format!(
                    "sizes {sizes:?} must be non-negative and sum to dimension {axis} of {x}"
                ));
            }
            Ok(sizes
                .iter()
                .map(|&s| {
                    let mut shape = x.shape.clone();
                    shape[*axis] = s;
                    x.with_shape(&shape)
                })
                .collect())
        }
        Primitive::Concatenate { dimension } => {
            let first = inputs.first().ok_or("takes at least one operand")?;
            if *dimension >= first.rank() {
                return Err(format!(
                    "dimension {dimension} is out of range for rank {}",
                    first.rank()
                ));
            }
            let mut size = 0;
            for x in inputs {
                if x.dtype != first.dtype || x.rank() != first.rank() {
                    return Err(format!(
                        "operands must have one dtype and rank, got {first} and {x}"
                    ));
                }
                for d in 0..x.rank() {
                    if d != *dimension && x.shape[d] != first.shape[d] {
                        return Err(format!(
                            "operands differ outside dimension {dimension}: {first} and {x}"
                        ));
                    }
                }
                size += x.shape[*dimension];
            }
            let mut shape = first.shape.clone();
            shape[*dimension] = size;
            let mut out = first.with_shape(&shape);
            out.weak_type = inputs.iter().all(|x| x.weak_type);
            Ok(vec![out])
        }
        Primitive::Pad { config } => {
            expect_arity(inputs, 2)?;
            let (x, value) = (inputs[0], inputs[1]);
            if value.rank() != 0 || value.dtype != x.dtype {
                return Err(format!(
                    "the padding value must be a {} scalar, got {value}",
                    x.dtype
                ));
            }
            if config.len() != x.rank() {
                return Err(format!(
                    "padding config has {} entries for rank {}",
                    config.len(),
                    x.rank()
                ));
            }
            let mut shape = Dims::new();
            for (&d, &(lo, hi, interior)) in x.shape.iter().zip(config) {
                if interior < 0 {
                    return Err(format!("interior padding {interior} is negative"));
                }
                let size = lo + hi + d + (d - 1).max(0) * interior;
                if size < 0 {
                    return Err(format!(
                        "padding ({lo}, {hi}, {interior}) of size {d} leaves a negative size"
                    ));
                }
                shape.push(size);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::Slice {
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
                return Err(format!(
                    "start, limit and strides need {} entries each",
                    x.rank()
                ));
            }
            let mut shape = Dims::new();
            for d in 0..x.rank() {
                let (s, l, st) = (start_indices[d], limit_indices[d], strides[d]);
                if s < 0 || l > x.shape[d] || s > l || st < 1 {
                    return Err(format!(
                        "slice {s}:{l}:{st} is invalid for dimension {d} of size {}",
                        x.shape[d]
                    ));
                }
                shape.push((l - s + st - 1) / st);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::Reduce { op, axes } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(axes, x.rank(), "axis")?;
            let class = match op {
                ReduceOp::Sum | ReduceOp::Prod => TypeClass::Numeric,
                ReduceOp::Max | ReduceOp::Min => TypeClass::Any,
                ReduceOp::And | ReduceOp::Or => TypeClass::BoolOrInt,
            };
            expect_class(class, x)?;
            let shape: Dims = (0..x.rank())
                .filter(|i| !axes.contains(&(*i as i64)))
                .map(|i| x.shape[i])
                .collect();
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::ReduceWith { computation, axes } => {
            reduce_with_shapes(computation.jaxpr(), axes, inputs)
        }
        Primitive::DynamicSlice { slice_sizes } => {
            let x = inputs
                .first()
                .ok_or("takes an operand and its start indices")?;
            check_indices(&inputs[1..], x.rank())?;
            if slice_sizes.len() != x.rank() {
                return Err(format!(
                    "slice_sizes {slice_sizes:?} need {} entries",
                    x.rank()
                ));
            }
            for (d, (&size, &dim)) in slice_sizes.iter().zip(&x.shape).enumerate() {
                if size < 0 || size > dim {
                    return Err(format!(
                        "slice size {size} does not fit dimension {d} of size {dim}"
                    ));
                }
            }
            Ok(vec![x.with_shape(slice_sizes)])
        }
        Primitive::DynamicUpdateSlice => {
            if inputs.len() < 2 {
                return Err("takes an operand, an update and start indices".into());
            }
            let (x, update) = (inputs[0], inputs[1]);
            if update.dtype != x.dtype || update.rank() != x.rank() {
                return Err(format!(
                    "the update {update} must have the operand's dtype and rank ({x})"
                ));
            }
            if let Some(d) = (0..x.rank()).find(|&d| update.shape[d] > x.shape[d]) {
                return Err(format!(
                    "the update {update} is larger than the operand {x} in dimension {d}"
                ));
            }
            check_indices(&inputs[2..], x.rank())?;
            Ok(vec![x.clone()])
        }
        Primitive::BitcastConvertType { new_dtype } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let (from, to) = (x.dtype.byte_size() as i64, new_dtype.byte_size() as i64);
            let mut shape = x.shape.clone();
            if from > to {
                shape.push(from / to);
            } else if from < to {
                if shape.last() != Some(&(to / from)) {
                    return Err(format!(
                        "bitcasting {x} to {new_dtype} needs a last dimension of size {}",
                        to / from
                    ));
                }
                shape.pop();
            }
            if (x.dtype == DType::Bool) != (*new_dtype == DType::Bool) {
                return Err("bool cannot be bitcast to or from other types".into());
            }
            Ok(vec![Aval::new(*new_dtype, &shape)])
        }
        Primitive::Cumulative { axis, .. } => {
            expect_arity(inputs, 1)?;
            check_axes(&[*axis as i64], inputs[0].rank(), "axis")?;
            expect_class(TypeClass::Numeric, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::ReduceWindow {
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
            ..
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            expect_class(TypeClass::Numeric, x)?;
            let shape = window_output_shape(
                x,
                window_dimensions,
                window_strides,
                padding,
                base_dilation,
                window_dilation,
            )?;
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            padding,
        } => {
            expect_arity(inputs, 2)?;
            let (source, operand) = (inputs[0], inputs[1]);
            let ones: Dims = operand.shape.iter().map(|_| 1).collect();
            let windows = window_output_shape(
                operand,
                window_dimensions,
                window_strides,
                padding,
                &ones,
                &ones,
            )?;
            if source.dtype != operand.dtype || source.shape != windows {
                return Err(format!(
                    "the source {source} must be the operand's dtype with the windows' shape {windows:?}"
                ));
            }
            Ok(vec![operand.with_dtype(operand.dtype)])
        }
        Primitive::ArgMinMax {
            axis, index_dtype, ..
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(&[*axis as i64], x.rank(), "axis")?;
            if x.shape[*axis] == 0 {
                return Err(format!(
                    "cannot take the index of an extremum over an empty axis {axis} of {x}"
                ));
            }
            if !index_dtype.is_int() {
                return Err(format!(
                    "index_dtype must be an integer type, got {index_dtype}"
                ));
            }
            let shape: Dims = (0..x.rank())
                .filter(|d| d != axis)
                .map(|d| x.shape[d])
                .collect();
            Ok(vec![Aval::new(*index_dtype, &shape)])
        }
        Primitive::Sort {
            dimension,
            num_keys,
            ..
        } => {
            let first = inputs.first().ok_or("takes at least one operand")?;
            if *num_keys == 0 || *num_keys > inputs.len() {
                return Err(format!(
                    "num_keys {num_keys} must be between 1 and {}",
                    inputs.len()
                ));
            }
            check_axes(&[*dimension as i64], first.rank(), "dimension")?;
            if let Some(x) = inputs.iter().find(|x| x.shape != first.shape) {
                return Err(format!("operands must have one shape, got {first} and {x}"));
            }
            Ok(inputs.iter().map(|x| (*x).clone()).collect())
        }
        Primitive::TopK { k } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let last = *x
                .shape
                .last()
                .ok_or("needs an operand of rank at least 1")?;
            if *k < 0 || *k > last {
                return Err(format!(
                    "k = {k} is out of range for a last dimension of size {last}"
                ));
            }
            let mut shape = x.shape.clone();
            *shape.last_mut().expect("rank >= 1") = *k;
            Ok(vec![x.with_shape(&shape), Aval::new(DType::I32, &shape)])
        }
        Primitive::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers,
            feature_group_count,
            batch_group_count,
            preferred_element_type,
        } => {
            expect_arity(inputs, 2)?;
            conv_shape(
                inputs[0],
                inputs[1],
                window_strides,
                padding,
                lhs_dilation,
                rhs_dilation,
                dimension_numbers,
                *feature_group_count,
                *batch_group_count,
                *preferred_element_type,
            )
            .map(|a| vec![a])
        }
        Primitive::Gather {
            dimension_numbers: d,
            slice_sizes,
            ..
        } => {
            expect_arity(inputs, 2)?;
            let (x, indices) = (inputs[0], inputs[1]);
            if !indices.dtype.is_int() || indices.rank() == 0 {
                return Err(format!(
                    "indices must be an integer array with an index vector dim, got {indices}"
                ));
            }
            let index_size = *indices.shape.last().expect("rank >= 1");
            if d.start_index_map.len() as i64 != index_size {
                return Err(format!(
                    "start_index_map {:?} must have one entry per index component ({index_size})",
                    d.start_index_map
                ));
            }
            check_axes(&d.start_index_map, x.rank(), "start_index_map entry")?;
            check_axes(&d.collapsed_slice_dims, x.rank(), "collapsed slice dim")?;
            if slice_sizes.len() != x.rank() {
                return Err(format!(
                    "slice_sizes {slice_sizes:?} need {} entries",
                    x.rank()
                ));
            }
            for (dim, (&size, &bound)) in slice_sizes.iter().zip(&x.shape).enumerate() {
                if size < 0 || size > bound {
                    return Err(format!(
                        "slice size {size} does not fit dimension {dim} of size {bound}"
                    ));
                }
            }
            if let Some(&c) = d
                .collapsed_slice_dims
                .iter()
                .find(|&&c| slice_sizes[c as usize] != 1)
            {
                return Err(format!("collapsed slice dim {c} must have slice size 1"));
            }
            let offsets: Vec<i64> = (0..x.rank() as i64)
                .filter(|dim| !d.collapsed_slice_dims.contains(dim))
                .map(|dim| slice_sizes[dim as usize])
                .collect();
            let batch: Vec<i64> = indices.shape[..indices.rank() - 1].to_vec();
            let rank = batch.len() + offsets.len();
            if d.offset_dims.len() != offsets.len() {
                return Err(format!(
                    "offset_dims {:?} need {} entries",
                    d.offset_dims,
                    offsets.len()
                ));
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
        Primitive::Scatter {
            dimension_numbers: d,
            ..
        } => {
            expect_arity(inputs, 3)?;
            let (x, indices, updates) = (inputs[0], inputs[1], inputs[2]);
            if !indices.dtype.is_int() || indices.rank() == 0 {
                return Err(format!(
                    "indices must be an integer array with an index vector dim, got {indices}"
                ));
            }
            if updates.dtype != x.dtype {
                return Err(format!(
                    "updates {updates} must have the operand's dtype {}",
                    x.dtype
                ));
            }
            let index_size = *indices.shape.last().expect("rank >= 1");
            if d.scatter_dims_to_operand_dims.len() as i64 != index_size {
                return Err(format!(
                    "scatter_dims_to_operand_dims {:?} must have one entry per index component ({index_size})",
                    d.scatter_dims_to_operand_dims
                ));
            }
            check_axes(&d.scatter_dims_to_operand_dims, x.rank(), "scatter dim")?;
            check_axes(&d.inserted_window_dims, x.rank(), "inserted window dim")?;
            check_axes(&d.update_window_dims, updates.rank(), "update window dim")?;
            if d.update_window_dims.len() + d.inserted_window_dims.len() != x.rank() {
                return Err(format!(
                    "update window dims {:?} and inserted dims {:?} must cover the operand's rank {}",
                    d.update_window_dims,
                    d.inserted_window_dims,
                    x.rank()
                ));
            }
            let scatter_dims: Vec<i64> = (0..updates.rank() as i64)
                .filter(|dim| !d.update_window_dims.contains(dim))
                .map(|dim| updates.shape[dim as usize])
                .collect();
            if scatter_dims != indices.shape[..indices.rank() - 1] {
                return Err(format!(
                    "updates {updates} do not match the indices {indices}"
                ));
            }
            let window_bounds =
                (0..x.rank() as i64).filter(|dim| !d.inserted_window_dims.contains(dim));
            for (&u, bound) in d.update_window_dims.iter().zip(window_bounds) {
                if updates.shape[u as usize] > x.shape[bound as usize] {
                    return Err(format!(
                        "update window dim {u} is larger than operand dim {bound}"
                    ));
                }
            }
            Ok(vec![x.clone()])
        }
        Primitive::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            preferred_element_type,
            precision: _,
        } => {
            expect_arity(inputs, 2)?;
            let (l, r) = (inputs[0], inputs[1]);
            if l.dtype != r.dtype {
                return Err(format!(
                    "operands must have the same dtype, got {} and {}",
                    l.dtype, r.dtype
                ));
            }
            expect_class(TypeClass::Numeric, l)?;
            if lhs_contracting.len() != rhs_contracting.len() || lhs_batch.len() != rhs_batch.len()
            {
                return Err("contracting and batch dimensions must pair up".into());
            }
            let lhs_dims: Vec<i64> = lhs_batch.iter().chain(lhs_contracting).copied().collect();
            let rhs_dims: Vec<i64> = rhs_batch.iter().chain(rhs_contracting).copied().collect();
            check_axes(&lhs_dims, l.rank(), "lhs dimension")?;
            check_axes(&rhs_dims, r.rank(), "rhs dimension")?;
            for (&a, &b) in lhs_dims.iter().zip(&rhs_dims) {
                if l.shape[a as usize] != r.shape[b as usize] {
                    return Err(format!(
                        "lhs dimension {a} (size {}) does not match rhs dimension {b} (size {})",
                        l.shape[a as usize], r.shape[b as usize]
                    ));
                }
            }
            let mut shape: Dims = lhs_batch.iter().map(|&d| l.shape[d as usize]).collect();
            shape.extend(
                (0..l.rank() as i64)
                    .filter(|d| !lhs_dims.contains(d))
                    .map(|d| l.shape[d as usize]),
            );
            shape.extend(
                (0..r.rank() as i64)
                    .filter(|d| !rhs_dims.contains(d))
                    .map(|d| r.shape[d as usize]),
            );
            let mut out = Aval::new(preferred_element_type.unwrap_or(l.dtype), &shape);
            out.weak_type = preferred_element_type.is_none() && l.weak_type && r.weak_type;
            Ok(vec![out])
        }
        Primitive::Call { jaxpr, .. }
        | Primitive::Remat { jaxpr, .. }
        | Primitive::CustomJvpCall { jaxpr, .. }
        | Primitive::CustomVjpCall { jaxpr, .. } => call_avals(jaxpr.jaxpr(), inputs),
        Primitive::CallExported { function } => exported_avals(function, inputs),
        Primitive::HostCallback { results, .. } => Ok(results.clone()),
        Primitive::StopGradient | Primitive::CheckpointName { .. } => {
            expect_arity(inputs, 1)?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::ShardingConstraint { sharding } => {
            expect_arity(inputs, 1)?;
            crate::sharding::check_sharding(sharding, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::ShardMap {
            jaxpr,
            in_shardings,
            out_shardings,
            ..
        } => shard_map_avals(jaxpr.jaxpr(), in_shardings, out_shardings, inputs),
        Primitive::Pvary { .. } => {
            expect_arity(inputs, 1)?;
            Ok(vec![inputs[0].clone()])
        }
        Primitive::AllReduce { op, .. } => {
            expect_arity(inputs, 1)?;
            match op {
                ReduceOp::Sum | ReduceOp::Max | ReduceOp::Min => Ok(vec![inputs[0].clone()]),
                ReduceOp::Prod | ReduceOp::And | ReduceOp::Or => Err(format!(
                    "{op:?} is not a collective reduction (sum, max, min)"
                )),
            }
        }
        Primitive::AllGather {
            group, dim, tiled, ..
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let n = group.size() as i64;
            let mut shape = x.shape.to_vec();
            if *tiled {
                let d = shape
                    .get_mut(*dim)
                    .ok_or_else(|| format!("dimension {dim} is out of range for {x}"))?;
                *d *= n;
            } else {
                if *dim > shape.len() {
                    return Err(format!("dimension {dim} is out of range for {x}"));
                }
                shape.insert(*dim, n);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::ReduceScatter { group, dim, tiled } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let n = group.size() as i64;
            let size = *x
                .shape
                .get(*dim)
                .ok_or_else(|| format!("dimension {dim} is out of range for {x}"))?;
            let mut shape = x.shape.to_vec();
            if *tiled {
                if size % n != 0 {
                    return Err(format!(
                        "dimension {dim} of {x} (size {size}) is not divisible by the {n} \
                         devices of axes {}",
                        group.names()
                    ));
                }
                shape[*dim] = size / n;
            } else {
                if size != n {
                    return Err(format!(
                        "dimension {dim} of {x} has size {size}, but axes {} have {n} devices \
                         (without tiled it must match)",
                        group.names()
                    ));
                }
                shape.remove(*dim);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let n = group.size() as i64;
            let rank = x.shape.len();
            if *split_dim >= rank || *concat_dim >= rank {
                return Err(format!(
                    "split dimension {split_dim} or concat dimension {concat_dim} is out of \
                     range for {x}"
                ));
            }
            if x.shape[*split_dim] % n != 0 {
                return Err(format!(
                    "dimension {split_dim} of {x} (size {}) is not divisible by the {n} devices \
                     of axes {}",
                    x.shape[*split_dim],
                    group.names()
                ));
            }
            let mut shape = x.shape.to_vec();
            shape[*split_dim] /= n;
            shape[*concat_dim] *= n;
            Ok(vec![x.with_shape(&shape)])
        }
        Primitive::Ppermute { group, perm } => {
            expect_arity(inputs, 1)?;
            let n = group.size();
            for (i, &(src, dst)) in perm.iter().enumerate() {
                if src >= n || dst >= n {
                    return Err(format!(
                        "pair ({src}, {dst}) names an index beyond the {n} devices of axes {}",
                        group.names()
                    ));
                }
                if perm[..i].iter().any(|&(s, d)| s == src || d == dst) {
                    return Err(format!(
                        "pair ({src}, {dst}) repeats a source or a destination; a permutation \
                         sends from and to each device at most once"
                    ));
                }
            }
            Ok(vec![inputs[0].clone()])
        }
        Primitive::AxisIndex { .. } => {
            expect_arity(inputs, 0)?;
            Ok(vec![Aval::new(DType::I32, &[])])
        }
        Primitive::OptimizationBarrier => Ok(inputs.iter().map(|a| (*a).clone()).collect()),
        Primitive::Cond { branches } => cond_avals(branches, inputs),
        Primitive::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => while_avals(
            cond_jaxpr.jaxpr(),
            body_jaxpr.jaxpr(),
            *cond_nconsts,
            *body_nconsts,
            inputs,
        ),
        Primitive::Scan {
            jaxpr,
            num_consts,
            num_carry,
            length,
            ..
        } => scan_avals(jaxpr.jaxpr(), *num_consts, *num_carry, *length, inputs),
        Primitive::CustomLin {
            num_residuals,
            out_avals,
            ..
        } => {
            if inputs.len() < *num_residuals {
                return Err(format!(
                    "takes {num_residuals} residuals, got {} operands",
                    inputs.len()
                ));
            }
            Ok(out_avals.clone())
        }
    }
}

/// Checks that `got` (what a function returns) has the types of `want`
/// (what it must return), naming the leaf and both types.
fn check_same_avals(got: &[Aval], want: &[Aval], what: &str) -> RuleResult<()> {
    if got.len() != want.len() {
        return Err(format!(
            "{what} has {} outputs, but must have {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.dtype != w.dtype || g.shape != w.shape {
            return Err(format!("{what}: output {i} is {g}, but must be {w}"));
        }
    }
    Ok(())
}

/// `cond`: an i32 index, then every branch's inputs; every branch returns
/// the first branch's types.
fn cond_avals(branches: &[crate::subjaxpr::SubJaxpr], inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let Some((index, operands)) = inputs.split_first() else {
        return Err("takes a branch index".into());
    };
    if index.rank() != 0 || index.dtype != DType::I32 {
        return Err(format!(
            "the branch index must be an i32 scalar, got {index}"
        ));
    }
    let Some(first) = branches.first() else {
        return Err("needs at least one branch".into());
    };
    let want = call_avals(first.jaxpr(), operands).map_err(|m| format!("branch 0: {m}"))?;
    for (i, b) in branches.iter().enumerate().skip(1) {
        let got = call_avals(b.jaxpr(), operands).map_err(|m| format!("branch {i}: {m}"))?;
        check_same_avals(&got, &want, &format!("branch {i} and branch 0 differ"))?;
    }
    Ok(want)
}

/// `while`: cond consts, body consts, carry; the cond returns a bool
/// scalar and the body the carry's types.
fn while_avals(
    cond: &crate::jaxpr::Jaxpr,
    body: &crate::jaxpr::Jaxpr,
    cond_nconsts: usize,
    body_nconsts: usize,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() < cond_nconsts + body_nconsts {
        return Err("too few operands for the loop's captured values".into());
    }
    let carry = &inputs[cond_nconsts + body_nconsts..];
    let cond_in: Vec<&Aval> = inputs[..cond_nconsts]
        .iter()
        .chain(carry)
        .copied()
        .collect();
    let pred = call_avals(cond, &cond_in).map_err(|m| format!("the loop condition: {m}"))?;
    if pred.len() != 1 || pred[0].dtype != DType::Bool || pred[0].rank() != 0 {
        return Err(format!(
            "the loop condition must return one bool scalar, got ({})",
            pred.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let body_in: Vec<&Aval> = inputs[cond_nconsts..].to_vec();
    let out = call_avals(body, &body_in).map_err(|m| format!("the loop body: {m}"))?;
    let carry: Vec<Aval> = carry.iter().map(|a| (*a).clone()).collect();
    check_same_avals(&out, &carry, "the loop body changes the carry's type")?;
    Ok(carry)
}

/// `scan`: consts, carry, xs (leading axis `length`); the body returns the
/// carry's types then the ys slices.
fn scan_avals(
    body: &crate::jaxpr::Jaxpr,
    num_consts: usize,
    num_carry: usize,
    length: i64,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() < num_consts + num_carry {
        return Err("too few operands for the scan's constants and carry".into());
    }
    let mut body_in: Vec<Aval> = inputs[..num_consts + num_carry]
        .iter()
        .map(|a| (*a).clone())
        .collect();
    for (i, x) in inputs[num_consts + num_carry..].iter().enumerate() {
        if x.shape.first() != Some(&length) {
            return Err(format!(
                "xs {i} is {x}, but its leading axis must be the length {length}"
            ));
        }
        body_in.push(x.with_shape(&x.shape[1..]));
    }
    let refs: Vec<&Aval> = body_in.iter().collect();
    let outs = call_avals(body, &refs).map_err(|m| format!("the scan body: {m}"))?;
    if outs.len() < num_carry {
        return Err("the scan body returns fewer outputs than the carry".into());
    }
    let carry = &body_in[num_consts..num_consts + num_carry];
    check_same_avals(
        &outs[..num_carry],
        carry,
        "the scan body changes the carry's type",
    )?;
    let mut result = outs[..num_carry].to_vec();
    for y in &outs[num_carry..] {
        let mut shape = vec![length];
        shape.extend_from_slice(&y.shape);
        result.push(y.with_shape(&shape));
    }
    Ok(result)
}

/// The results of calling a closed jaxpr on `inputs`, which must have its
/// parameters' dtypes and shapes.
fn call_avals(jaxpr: &crate::jaxpr::Jaxpr, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, jaxpr.invars.len())?;
    for (i, (v, a)) in jaxpr.invars.iter().zip(inputs).enumerate() {
        let want = jaxpr.aval(*v);
        if want.dtype != a.dtype || want.shape != a.shape {
            return Err(format!(
                "operand {i} is {a}, but the called function takes {want}"
            ));
        }
    }
    Ok(jaxpr.out_avals())
}

/// The outputs of an exported function, whose inputs must have exactly
/// the exported types.
fn exported_avals(
    function: &crate::exported::ExportedFunction,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    let want = function.in_avals();
    if inputs.len() != want.len() {
        return Err(format!(
            "{} was exported with {} inputs, not {}",
            function.name(),
            want.len(),
            inputs.len()
        ));
    }
    for (i, (a, w)) in inputs.iter().zip(want).enumerate() {
        if a.dtype != w.dtype || a.shape != w.shape {
            return Err(format!(
                "input {i} is {a}, but {} was exported for {w}",
                function.name()
            ));
        }
    }
    Ok(function.out_avals().to_vec())
}

/// The global results of a `shard_map`: each operand's block must be the
/// body's parameter type, and each result is the body's result tiled as its
/// out sharding says.
fn shard_map_avals(
    body: &crate::jaxpr::Jaxpr,
    in_shardings: &[crate::sharding::ShardingDesc],
    out_shardings: &[crate::sharding::ShardingDesc],
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() != in_shardings.len() || inputs.len() != body.invars.len() {
        return Err(format!(
            "{} operands for {} in_specs and a body of {} parameters",
            inputs.len(),
            in_shardings.len(),
            body.invars.len()
        ));
    }
    if out_shardings.len() != body.outvars.len() {
        return Err(format!(
            "{} out_specs for a body of {} results",
            out_shardings.len(),
            body.outvars.len()
        ));
    }
    for (i, ((x, sharding), var)) in inputs
        .iter()
        .zip(in_shardings)
        .zip(&body.invars)
        .enumerate()
    {
        crate::sharding::check_sharding(sharding, x).map_err(|e| format!("operand {i}: {e}"))?;
        let block: Vec<i64> = x
            .shape
            .iter()
            .enumerate()
            .map(|(d, &n)| n / sharding.tiles(d) as i64)
            .collect();
        let want = body.aval(*var);
        if want.dtype != x.dtype || want.shape.as_slice() != block.as_slice() {
            return Err(format!(
                "operand {i} is {x}, whose blocks under {} are {}[{}], but the body takes {want}",
                sharding.spec_text(),
                x.dtype,
                block
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }
    body.outvars
        .iter()
        .zip(out_shardings)
        .map(|(o, sharding)| {
            let block = body.atom_aval(o);
            if sharding.dims.len() > block.shape.len() {
                return Err(format!(
                    "out spec {} has more entries than the {} dimensions of the body's result {block}",
                    sharding.spec_text(),
                    block.shape.len()
                ));
            }
            let shape: Vec<i64> = block
                .shape
                .iter()
                .enumerate()
                .map(|(d, &n)| n * sharding.tiles(d) as i64)
                .collect();
            let mut out = block.with_shape(&shape);
            out.weak_type = block.weak_type;
            Ok(out)
        })
        .collect()
}

/// The results of a general `reduce`: operands of one shape, scalar
/// initial values of their dtypes, and a reducer from `2n` such scalars to
/// `n`.
fn reduce_with_shapes(
    computation: &crate::Jaxpr,
    axes: &[i64],
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.is_empty() || !inputs.len().is_multiple_of(2) {
        return Err(format!(
            "takes operands and as many initial values, got {} arrays",
            inputs.len()
        ));
    }
    let n = inputs.len() / 2;
    let (operands, inits) = inputs.split_at(n);
    let shape = &operands[0].shape;
    for (i, (x, init)) in operands.iter().zip(inits).enumerate() {
        if &x.shape != shape {
            return Err(format!(
                "operand {i} is {x}, but operand 0 has shape {:?}",
                shape
            ));
        }
        if init.rank() != 0 || init.dtype != x.dtype {
            return Err(format!(
                "initial value {i} is {init}; it must be a scalar of operand {i}'s dtype {}",
                x.dtype
            ));
        }
    }
    check_axes(axes, operands[0].rank(), "axis")?;
    let scalar_types =
        |avals: Vec<&Aval>| -> Vec<DType> { avals.iter().map(|a| a.dtype).collect() };
    let takes: Vec<&Aval> = computation
        .invars
        .iter()
        .map(|v| computation.aval(*v))
        .collect();
    let gives: Vec<&Aval> = computation
        .outvars
        .iter()
        .map(|o| computation.atom_aval(o))
        .collect();
    let dtypes: Vec<DType> = operands.iter().map(|x| x.dtype).collect();
    let expected_in: Vec<DType> = dtypes.iter().chain(&dtypes).copied().collect();
    let scalars = takes.iter().chain(&gives).all(|a| a.rank() == 0);
    if !scalars || scalar_types(takes) != expected_in || scalar_types(gives) != dtypes {
        return Err(format!(
            "the reducer must take {} scalars (accumulators, then values, of dtypes {:?}) and \
             give {n} of dtypes {:?}",
            2 * n,
            dtypes,
            dtypes
        ));
    }
    let out_shape: Dims = (0..operands[0].rank())
        .filter(|i| !axes.contains(&(*i as i64)))
        .map(|i| shape[i])
        .collect();
    Ok(operands.iter().map(|x| x.with_shape(&out_shape)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitive::Comparison;

    fn f32s(shape: &[i64]) -> Aval {
        Aval::new(DType::F32, shape)
    }

    #[test]
    fn dot_general_puts_batch_then_free_dims() {
        let p = Primitive::DotGeneral {
            lhs_contracting: [2].into_iter().collect(),
            rhs_contracting: [1].into_iter().collect(),
            lhs_batch: [0].into_iter().collect(),
            rhs_batch: [0].into_iter().collect(),
            preferred_element_type: None,
            precision: None,
        };
        let out = abstract_eval(&p, &[&f32s(&[5, 2, 3]), &f32s(&[5, 3, 4])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[5,2,4]");
        let err = abstract_eval(&p, &[&f32s(&[5, 2, 3]), &f32s(&[5, 4, 4])]).unwrap_err();
        assert!(err.contains("does not match"), "{err}");
    }

    #[test]
    fn binary_ops_need_equal_types() {
        let add = Primitive::Binary(BinaryOp::Add);
        let err = abstract_eval(&add, &[&f32s(&[2]), &f32s(&[3])]).unwrap_err();
        assert!(err.contains("incompatible shapes"), "{err}");
        let out = abstract_eval(&add, &[&f32s(&[2, 1]), &f32s(&[1, 3])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[2,3]");
        let out = abstract_eval(&add, &[&f32s(&[]), &f32s(&[4])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[4]");
        let i = Aval::new(DType::I32, &[2]);
        assert!(
            abstract_eval(&add, &[&f32s(&[2]), &i])
                .unwrap_err()
                .contains("same dtype")
        );
        let shl = Primitive::Binary(BinaryOp::ShiftLeft);
        assert!(
            abstract_eval(&shl, &[&f32s(&[2]), &f32s(&[2])])
                .unwrap_err()
                .contains("integer")
        );
        let lt = Primitive::Compare(Comparison::Lt);
        assert_eq!(abstract_eval(&lt, &[&i, &i]).unwrap()[0].dtype, DType::Bool);
    }

    #[test]
    fn structural_rules_compute_shapes() {
        let x = f32s(&[2, 1, 3]);
        let squeeze = Primitive::Squeeze {
            dimensions: [1].into_iter().collect(),
        };
        assert_eq!(
            abstract_eval(&squeeze, &[&x]).unwrap()[0].to_string(),
            "f32[2,3]"
        );
        let slice = Primitive::Slice {
            start_indices: [0, 0, 1].into_iter().collect(),
            limit_indices: [2, 1, 3].into_iter().collect(),
            strides: [1, 1, 2].into_iter().collect(),
        };
        assert_eq!(
            abstract_eval(&slice, &[&x]).unwrap()[0].to_string(),
            "f32[2,1,1]"
        );
        let pad = Primitive::Pad {
            config: vec![(1, 2, 0), (0, 0, 0), (-1, 0, 1)],
        };
        assert_eq!(
            abstract_eval(&pad, &[&x, &f32s(&[])]).unwrap()[0].to_string(),
            "f32[5,1,4]"
        );
        let bcast = Primitive::BroadcastInDim {
            shape: [4, 2, 5, 3].into_iter().collect(),
            broadcast_dimensions: [1, 2, 3].into_iter().collect(),
        };
        assert_eq!(
            abstract_eval(&bcast, &[&x]).unwrap()[0].to_string(),
            "f32[4,2,5,3]"
        );
        let reshape = Primitive::Reshape {
            new_sizes: [7].into_iter().collect(),
        };
        assert!(
            abstract_eval(&reshape, &[&x])
                .unwrap_err()
                .contains("6 elements")
        );
    }
}
