//! Shape primitives: arrays built or rearranged without arithmetic (iota,
//! broadcasting, reshaping, transposing, joining, cutting, padding).

use super::print;
use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::primitive::TypeClass;
use crate::shape_rules::RuleResult;
use crate::shape_rules::{ShapeError, check_axes, expect_arity, expect_class};

/// A shape primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// 0, 1, 2, ... along `dimension` of a new array.
    Iota {
        /// Element type.
        dtype: DType,
        /// Shape.
        shape: Dims,
        /// The counting dimension.
        dimension: usize,
    },
    /// Broadcasts into `shape`, operand dim i going to `broadcast_dimensions[i]`.
    BroadcastInDim {
        /// Result shape.
        shape: Dims,
        /// Where each operand dimension goes.
        broadcast_dimensions: Dims,
    },
    /// Same elements, new shape.
    Reshape {
        /// Result shape.
        new_sizes: Dims,
    },
    /// Permutes the dimensions.
    Transpose {
        /// Result dim i is operand dim `permutation[i]`.
        permutation: Dims,
    },
    /// Removes size-1 dimensions.
    Squeeze {
        /// The dimensions to remove.
        dimensions: Dims,
    },
    /// Reverses the order of elements along dimensions.
    Rev {
        /// The dimensions to reverse.
        dimensions: Dims,
    },
    /// Joins operands along a dimension.
    Concatenate {
        /// The dimension.
        dimension: usize,
    },
    /// Cuts the operand along `axis` into consecutive pieces of `sizes`
    /// (one output each; JAX's `lax.split`, the inverse of concatenate).
    Split {
        /// The dimension cut.
        axis: usize,
        /// Each piece's extent along `axis` (they sum to the operand's).
        sizes: Dims,
    },
    /// Pads with a value: operands x and the padding scalar.
    Pad {
        /// Per dimension: (low, high, interior) padding; low/high may be negative.
        config: Vec<(i64, i64, i64)>,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Iota { .. } => "iota",
            Op::BroadcastInDim { .. } => "broadcast_in_dim",
            Op::Reshape { .. } => "reshape",
            Op::Transpose { .. } => "transpose",
            Op::Squeeze { .. } => "squeeze",
            Op::Rev { .. } => "rev",
            Op::Concatenate { .. } => "concatenate",
            Op::Split { .. } => "split",
            Op::Pad { .. } => "pad",
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
            Op::Iota {
                dtype,
                shape,
                dimension,
            } => vec![
                format!("dimension={dimension}"),
                format!("dtype={}", dtype.numpy_name()),
                "sharding=None".into(),
                format!("shape={}", print::tuple(shape)),
            ],
            // JAX prints only the dims (the shape is the result's), and
            // nothing when a scalar is broadcast.
            Op::BroadcastInDim {
                broadcast_dimensions,
                ..
            } if broadcast_dimensions.is_empty() => Vec::new(),
            Op::BroadcastInDim {
                broadcast_dimensions,
                ..
            } => vec![format!(
                "broadcast_dimensions={}",
                print::tuple(broadcast_dimensions)
            )],
            Op::Reshape { new_sizes } => vec![
                "dimensions=None".into(),
                format!("new_sizes={}", print::tuple(new_sizes)),
                "sharding=None".into(),
            ],
            Op::Transpose { permutation } => {
                vec![format!("permutation={}", print::tuple(permutation))]
            }
            Op::Squeeze { dimensions } | Op::Rev { dimensions } => {
                vec![format!("dimensions={}", print::tuple(dimensions))]
            }
            Op::Concatenate { dimension } => {
                vec![format!("dimension={dimension}")]
            }
            Op::Split { axis, sizes } => {
                vec![
                    format!("axis={axis}"),
                    format!("sizes={}", print::tuple(sizes)),
                ]
            }
            Op::Pad { config } => vec![format!(
                "padding_config=({})",
                config
                    .iter()
                    .map(|(l, h, i)| format!("({l}, {h}, {i})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Iota {
            dtype,
            shape,
            dimension,
        } => {
            expect_arity(inputs, 0)?;
            if *dimension >= shape.len() {
                return Err(ShapeError::Invalid(format!(
                    "dimension {dimension} is out of range for shape {shape:?}"
                )));
            }
            if shape.iter().any(|&d| d < 0) {
                return Err(ShapeError::Invalid(format!(
                    "negative dimension in shape {shape:?}"
                )));
            }
            expect_class(TypeClass::Numeric, &Aval::new(*dtype, &[]))?;
            Ok(vec![Aval::new(*dtype, shape)])
        }
        Op::BroadcastInDim {
            shape,
            broadcast_dimensions,
        } => broadcast_in_dim_types(shape, broadcast_dimensions, inputs),
        Op::Reshape { new_sizes } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if new_sizes.iter().any(|&d| d < 0) || new_sizes.iter().product::<i64>() != x.size() {
                return Err(ShapeError::Invalid(format!(
                    "cannot reshape {x} ({} elements) to {new_sizes:?}",
                    x.size()
                )));
            }
            Ok(vec![x.with_shape(new_sizes)])
        }
        Op::Transpose { permutation } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(permutation, x.rank(), "permutation entry")?;
            if permutation.len() != x.rank() {
                return Err(ShapeError::Invalid(format!(
                    "permutation {permutation:?} must have {} entries",
                    x.rank()
                )));
            }
            let shape: Dims = permutation.iter().map(|&p| x.shape[p as usize]).collect();
            Ok(vec![x.with_shape(&shape)])
        }
        Op::Squeeze { dimensions } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(dimensions, x.rank(), "dimension")?;
            if let Some(&d) = dimensions.iter().find(|&&d| x.shape[d as usize] != 1) {
                return Err(ShapeError::Invalid(format!(
                    "cannot squeeze dimension {d} of size {}",
                    x.shape[d as usize]
                )));
            }
            let shape: Dims = (0..x.rank())
                .filter(|i| !dimensions.contains(&(*i as i64)))
                .map(|i| x.shape[i])
                .collect();
            Ok(vec![x.with_shape(&shape)])
        }
        Op::Rev { dimensions } => {
            expect_arity(inputs, 1)?;
            check_axes(dimensions, inputs[0].rank(), "dimension")?;
            Ok(vec![inputs[0].clone()])
        }
        Op::Split { axis, sizes } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            if *axis >= x.rank() {
                return Err(ShapeError::Invalid(format!(
                    "axis {axis} is out of range for {x}"
                )));
            }
            if sizes.iter().any(|&s| s < 0) || sizes.iter().sum::<i64>() != x.shape[*axis] {
                return Err(ShapeError::Invalid(format!(
                    "sizes {sizes:?} must be non-negative and sum to dimension {axis} of {x}"
                )));
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
        Op::Concatenate { dimension } => {
            let first = inputs.first().ok_or("takes at least one operand")?;
            if *dimension >= first.rank() {
                return Err(ShapeError::Invalid(format!(
                    "dimension {dimension} is out of range for rank {}",
                    first.rank()
                )));
            }
            let mut size = 0;
            for x in inputs {
                if x.dtype != first.dtype || x.rank() != first.rank() {
                    return Err(ShapeError::Invalid(format!(
                        "operands must have one dtype and rank, got {first} and {x}"
                    )));
                }
                for d in 0..x.rank() {
                    if d != *dimension && x.shape[d] != first.shape[d] {
                        return Err(ShapeError::Invalid(format!(
                            "operands differ outside dimension {dimension}: {first} and {x}"
                        )));
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
        Op::Pad { config } => pad_types(config, inputs),
    }
}

/// The shape rule of `broadcast_in_dim`.
fn broadcast_in_dim_types(
    shape: &Dims,
    broadcast_dimensions: &Dims,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, 1)?;
    let x = inputs[0];
    if broadcast_dimensions.len() != x.rank() {
        return Err(ShapeError::Invalid(format!(
            "broadcast_dimensions {broadcast_dimensions:?} must have one entry per operand dimension ({})",
            x.rank()
        )));
    }
    if shape.iter().any(|&d| d < 0) {
        return Err(ShapeError::Invalid(format!(
            "negative dimension in shape {shape:?}"
        )));
    }
    for (i, &b) in broadcast_dimensions.iter().enumerate() {
        if b < 0 || b as usize >= shape.len() {
            return Err(ShapeError::Invalid(format!(
                "broadcast dimension {b} is out of range for shape {shape:?}"
            )));
        }
        if i > 0 && b <= broadcast_dimensions[i - 1] {
            return Err(ShapeError::Invalid(format!(
                "broadcast_dimensions {broadcast_dimensions:?} must be strictly increasing"
            )));
        }
        if x.shape[i] != 1 && x.shape[i] != shape[b as usize] {
            return Err(ShapeError::Invalid(format!(
                "operand dimension {i} of size {} cannot broadcast to size {}",
                x.shape[i], shape[b as usize]
            )));
        }
    }
    Ok(vec![x.with_shape(shape)])
}

/// The shape rule of `pad`.
fn pad_types(config: &[(i64, i64, i64)], inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, 2)?;
    let (x, value) = (inputs[0], inputs[1]);
    if value.rank() != 0 || value.dtype != x.dtype {
        return Err(ShapeError::Invalid(format!(
            "the padding value must be a {} scalar, got {value}",
            x.dtype
        )));
    }
    if config.len() != x.rank() {
        return Err(ShapeError::Invalid(format!(
            "padding config has {} entries for rank {}",
            config.len(),
            x.rank()
        )));
    }
    let mut shape = Dims::new();
    for (&d, &(lo, hi, interior)) in x.shape.iter().zip(config) {
        if interior < 0 {
            return Err(ShapeError::Invalid(format!(
                "interior padding {interior} is negative"
            )));
        }
        let size = lo + hi + d + (d - 1).max(0) * interior;
        if size < 0 {
            return Err(ShapeError::Invalid(format!(
                "padding ({lo}, {hi}, {interior}) of size {d} leaves a negative size"
            )));
        }
        shape.push(size);
    }
    Ok(vec![x.with_shape(&shape)])
}

/// The sharding rule (see [`crate::sharding_rules`]): broadcasts, reshapes,
/// transposes and squeezes move the operand's splits with its dimensions;
/// reversal and padding keep them; concatenation takes the operands'
/// agreed splits; a split into pieces needs the cut dimension unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
    outs: &[Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    use crate::sharding_rules::{
        agreed_spec, require_unsplit, reshape_spec, unsplit, without_dims,
    };
    match op {
        Op::Iota { shape, .. } => Ok(vec![unsplit(shape.len())]),
        Op::BroadcastInDim {
            shape,
            broadcast_dimensions,
        } => {
            let operand = inputs[0];
            let mut spec = unsplit(shape.len());
            for (i, (&d, axes)) in broadcast_dimensions
                .iter()
                .zip(operand.dim_axes())
                .enumerate()
            {
                if operand.shape[i] == shape[d as usize] {
                    spec[d as usize] = axes;
                }
            }
            Ok(vec![spec])
        }
        Op::Reshape { new_sizes } => Ok(vec![reshape_spec(inputs[0], new_sizes)?]),
        Op::Transpose { permutation } => {
            let axes = inputs[0].dim_axes();
            Ok(vec![
                permutation
                    .iter()
                    .map(|&p| axes[p as usize].clone())
                    .collect(),
            ])
        }
        Op::Squeeze { dimensions } => Ok(vec![without_dims(inputs[0], dimensions)]),
        Op::Rev { .. } | Op::Pad { .. } => Ok(vec![inputs[0].dim_axes()]),
        Op::Concatenate { .. } => Ok(vec![agreed_spec(inputs)?]),
        Op::Split { axis, .. } => {
            require_unsplit(inputs[0], *axis, "split cuts it into pieces")?;
            Ok(vec![inputs[0].dim_axes(); outs.len()])
        }
    }
}
