//! Reductions: over axes, running, over windows, and the order statistics
//! (sort, top-k, arg-min/max); JAX's `lax.py`, `windowed_reductions.py`,
//! `control_flow/loops.py` (cumulative reductions).

use super::print;
use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::primitive::TypeClass;
use crate::shape_rules::{RuleResult, ShapeError, check_axes, expect_arity, expect_class};
use crate::subjaxpr::SubJaxpr;

/// Reductions over axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Logical and.
    And,
    /// Logical or.
    Or,
}
impl ReduceOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::Prod => "reduce_prod",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
            ReduceOp::And => "reduce_and",
            ReduceOp::Or => "reduce_or",
        }
    }
}
/// Reductions over sliding windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowOp {
    /// Sum.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}
/// Cumulative reductions along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CumulativeOp {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
    /// Running maximum.
    Max,
    /// Running minimum.
    Min,
}
impl CumulativeOp {
    /// JAX's name of the primitive.
    pub fn name(self) -> &'static str {
        match self {
            CumulativeOp::Sum => "cumsum",
            CumulativeOp::Prod => "cumprod",
            CumulativeOp::Max => "cummax",
            CumulativeOp::Min => "cummin",
        }
    }
}
/// Which of argmax and argmin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgOp {
    /// Index of the maximum.
    Max,
    /// Index of the minimum.
    Min,
}
/// A reduction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// Reduces over axes.
    Reduce {
        /// The reduction.
        op: ReduceOp,
        /// The axes reduced away.
        axes: Dims,
    },
    /// JAX's general `reduce`: `n` operands of one shape and `n` scalar
    /// initial values (operands first), combined over `axes` by the user's
    /// `computation` (`2n` scalars, accumulators first, to `n`); one result
    /// per operand.
    ReduceWith {
        /// The reducer, a jaxpr of scalars without captured values.
        computation: SubJaxpr,
        /// The axes reduced away.
        axes: Dims,
    },
    /// Running reduction along an axis.
    Cumulative {
        /// The reduction.
        op: CumulativeOp,
        /// The axis.
        axis: usize,
        /// Whether it runs from the end.
        reverse: bool,
    },
    /// Reduction over sliding windows.
    ReduceWindow {
        /// The reduction.
        op: WindowOp,
        /// Window size per dimension.
        window_dimensions: Dims,
        /// Step per dimension.
        window_strides: Dims,
        /// (low, high) padding per dimension.
        padding: Vec<(i64, i64)>,
        /// Dilation of the operand per dimension.
        base_dilation: Dims,
        /// Dilation of the window per dimension.
        window_dilation: Dims,
    },
    /// The gradient of a max-pool: operands source (window results) and
    /// operand; each source value is added where its window's maximum was.
    SelectAndScatterAdd {
        /// Window size per dimension.
        window_dimensions: Dims,
        /// Step per dimension.
        window_strides: Dims,
        /// (low, high) padding per dimension.
        padding: Vec<(i64, i64)>,
    },
    /// Index of the maximum or minimum along an axis (first on ties, NaN
    /// counting as the maximum).
    ArgMinMax {
        /// Which one.
        op: ArgOp,
        /// The axis reduced.
        axis: usize,
        /// The index dtype.
        index_dtype: DType,
    },
    /// Sorts operands along a dimension by their first `num_keys` operands
    /// (lexicographically; NaN sorts last).
    Sort {
        /// The dimension.
        dimension: usize,
        /// Whether equal keys keep their order.
        is_stable: bool,
        /// How many leading operands are keys.
        num_keys: usize,
    },
    /// The `k` largest elements of the last axis and their indices.
    TopK {
        /// How many.
        k: i64,
    },
}

impl Op {
    /// The jaxprs the primitive carries: a general reduction's reducer.
    pub fn nested_jaxprs(&self) -> Vec<&SubJaxpr> {
        match self {
            Op::ReduceWith { computation, .. } => vec![computation],
            Op::Reduce { .. }
            | Op::Cumulative { .. }
            | Op::ReduceWindow { .. }
            | Op::SelectAndScatterAdd { .. }
            | Op::ArgMinMax { .. }
            | Op::Sort { .. }
            | Op::TopK { .. } => Vec::new(),
        }
    }

    /// The jaxprs the primitive carries, mutably.
    pub fn nested_jaxprs_mut(&mut self) -> Vec<&mut SubJaxpr> {
        match self {
            Op::ReduceWith { computation, .. } => vec![computation],
            Op::Reduce { .. }
            | Op::Cumulative { .. }
            | Op::ReduceWindow { .. }
            | Op::SelectAndScatterAdd { .. }
            | Op::ArgMinMax { .. }
            | Op::Sort { .. }
            | Op::TopK { .. } => Vec::new(),
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Reduce { op, .. } => op.name(),
            Op::ReduceWith { .. } => "reduce",
            Op::Cumulative { op, .. } => op.name(),
            Op::ReduceWindow {
                op: WindowOp::Sum, ..
            } => "reduce_window_sum",
            Op::ReduceWindow {
                op: WindowOp::Max, ..
            } => "reduce_window_max",
            Op::ReduceWindow {
                op: WindowOp::Min, ..
            } => "reduce_window_min",
            Op::SelectAndScatterAdd { .. } => "select_and_scatter_add",
            Op::ArgMinMax { op: ArgOp::Max, .. } => "argmax",
            Op::ArgMinMax { op: ArgOp::Min, .. } => "argmin",
            Op::Sort { .. } => "sort",
            Op::TopK { .. } => "top_k",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::Cumulative { axis, reverse, .. } => vec![
                format!("axis={axis}"),
                format!("reverse={}", print::py_bool(*reverse)),
            ],
            Op::ReduceWindow {
                window_dimensions,
                window_strides,
                padding,
                base_dilation,
                window_dilation,
                ..
            } => vec![
                format!("base_dilation={}", print::tuple(base_dilation)),
                format!("padding={}", print::pairs(padding)),
                format!("window_dilation={}", print::tuple(window_dilation)),
                format!("window_dimensions={}", print::tuple(window_dimensions)),
                format!("window_strides={}", print::tuple(window_strides)),
            ],
            Op::SelectAndScatterAdd {
                window_dimensions,
                window_strides,
                padding,
            } => vec![
                format!("padding={}", print::pairs(padding)),
                "select_prim=ge".into(),
                format!("window_dimensions={}", print::tuple(window_dimensions)),
                format!("window_strides={}", print::tuple(window_strides)),
            ],
            Op::ArgMinMax {
                axis, index_dtype, ..
            } => vec![
                format!("axes=({axis},)"),
                format!("index_dtype={}", index_dtype.numpy_name()),
            ],
            Op::Sort {
                dimension,
                is_stable,
                num_keys,
            } => vec![
                format!("dimension={dimension}"),
                format!("is_stable={}", print::py_bool(*is_stable)),
                format!("num_keys={num_keys}"),
            ],
            Op::TopK { k } => vec![format!("k={k}")],
            Op::Reduce {
                op: ReduceOp::Sum,
                axes,
            } => {
                vec![
                    format!("axes={}", print::tuple(axes)),
                    "out_sharding=None".into(),
                ]
            }
            Op::Reduce { axes, .. } => {
                vec![format!("axes={}", print::tuple(axes))]
            }
            Op::ReduceWith { computation, axes } => vec![
                format!("dimensions={}", print::tuple(axes)),
                format!("jaxpr={}", nested(computation.jaxpr(), pad)),
            ],
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Reduce { op, axes } => {
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
        Op::ReduceWith { computation, axes } => {
            reduce_with_shapes(computation.jaxpr(), axes, inputs)
        }
        Op::Cumulative { axis, .. } => {
            expect_arity(inputs, 1)?;
            check_axes(&[*axis as i64], inputs[0].rank(), "axis")?;
            expect_class(TypeClass::Numeric, inputs[0])?;
            Ok(vec![inputs[0].clone()])
        }
        Op::ReduceWindow {
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
        Op::SelectAndScatterAdd {
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
                return Err(ShapeError::Invalid(format!(
                    "the source {source} must be the operand's dtype with the windows' shape {windows:?}"
                )));
            }
            Ok(vec![operand.with_dtype(operand.dtype)])
        }
        Op::ArgMinMax {
            axis, index_dtype, ..
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            check_axes(&[*axis as i64], x.rank(), "axis")?;
            if x.shape[*axis] == 0 {
                return Err(ShapeError::Invalid(format!(
                    "cannot take the index of an extremum over an empty axis {axis} of {x}"
                )));
            }
            if !index_dtype.is_int() {
                return Err(ShapeError::Invalid(format!(
                    "index_dtype must be an integer type, got {index_dtype}"
                )));
            }
            let shape: Dims = (0..x.rank())
                .filter(|d| d != axis)
                .map(|d| x.shape[d])
                .collect();
            Ok(vec![Aval::new(*index_dtype, &shape)])
        }
        Op::Sort {
            dimension,
            num_keys,
            ..
        } => {
            let first = inputs.first().ok_or("takes at least one operand")?;
            if *num_keys == 0 || *num_keys > inputs.len() {
                return Err(ShapeError::Invalid(format!(
                    "num_keys {num_keys} must be between 1 and {}",
                    inputs.len()
                )));
            }
            check_axes(&[*dimension as i64], first.rank(), "dimension")?;
            if let Some(x) = inputs.iter().find(|x| x.shape != first.shape) {
                return Err(ShapeError::Invalid(format!(
                    "operands must have one shape, got {first} and {x}"
                )));
            }
            Ok(inputs.iter().map(|x| (*x).clone()).collect())
        }
        Op::TopK { k } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let last = *x
                .shape
                .last()
                .ok_or("needs an operand of rank at least 1")?;
            if *k < 0 || *k > last {
                return Err(ShapeError::Invalid(format!(
                    "k = {k} is out of range for a last dimension of size {last}"
                )));
            }
            let mut shape = x.shape.clone();
            *shape.last_mut().expect("rank >= 1") = *k;
            Ok(vec![x.with_shape(&shape), Aval::new(DType::I32, &shape)])
        }
    }
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
        return Err(ShapeError::Invalid(format!(
            "window parameters need {rank} entries each"
        )));
    }
    (0..rank)
        .map(|d| {
            if window[d] < 1 || strides[d] < 1 || base_dilation[d] < 1 || window_dilation[d] < 1 {
                return Err(ShapeError::Invalid(format!(
                    "window sizes, strides and dilations must be positive (dimension {d})"
                )));
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

/// The results of a general `reduce`: operands of one shape, scalar
/// initial values of their dtypes, and a reducer from `2n` such scalars to
/// `n`.
fn reduce_with_shapes(
    computation: &crate::Jaxpr,
    axes: &[i64],
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.is_empty() || !inputs.len().is_multiple_of(2) {
        return Err(ShapeError::Invalid(format!(
            "takes operands and as many initial values, got {} arrays",
            inputs.len()
        )));
    }
    let n = inputs.len() / 2;
    let (operands, inits) = inputs.split_at(n);
    let shape = &operands[0].shape;
    for (i, (x, init)) in operands.iter().zip(inits).enumerate() {
        if &x.shape != shape {
            return Err(ShapeError::Invalid(format!(
                "operand {i} is {x}, but operand 0 has shape {:?}",
                shape
            )));
        }
        if init.rank() != 0 || init.dtype != x.dtype {
            return Err(ShapeError::Invalid(format!(
                "initial value {i} is {init}; it must be a scalar of operand {i}'s dtype {}",
                x.dtype
            )));
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
        return Err(ShapeError::Invalid(format!(
            "the reducer must take {} scalars (accumulators, then values, of dtypes {:?}) and \
             give {n} of dtypes {:?}",
            2 * n,
            dtypes,
            dtypes
        )));
    }
    let out_shape: Dims = (0..operands[0].rank())
        .filter(|i| !axes.contains(&(*i as i64)))
        .map(|i| shape[i])
        .collect();
    Ok(operands.iter().map(|x| x.with_shape(&out_shape)).collect())
}

/// The sharding rule (see [`crate::sharding_rules`]): reductions drop the
/// reduced dimensions' splits (the partitioner combines the partial
/// results across devices); scans along a dimension, sorts, top-k and
/// windows that span elements need those dimensions unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
    outs: &[Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    use crate::sharding_rules::{require_unsplit, without_dims};
    match op {
        Op::Reduce { axes, .. } | Op::ReduceWith { axes, .. } => {
            Ok(vec![without_dims(inputs[0], axes); outs.len()])
        }
        Op::ArgMinMax { axis, .. } => Ok(vec![without_dims(inputs[0], &[*axis as i64])]),
        Op::Cumulative { axis, .. } => {
            require_unsplit(inputs[0], *axis, "the op accumulates along it")?;
            Ok(vec![inputs[0].dim_axes()])
        }
        Op::Sort { dimension, .. } => {
            for input in inputs {
                require_unsplit(input, *dimension, "the sort orders along it")?;
            }
            Ok(inputs.iter().map(|a| a.dim_axes()).collect())
        }
        Op::TopK { .. } => {
            let last = inputs[0].rank().saturating_sub(1);
            require_unsplit(inputs[0], last, "top_k picks along it")?;
            Ok(vec![inputs[0].dim_axes(); outs.len()])
        }
        Op::ReduceWindow {
            window_dimensions,
            window_strides,
            ..
        }
        | Op::SelectAndScatterAdd {
            window_dimensions,
            window_strides,
            ..
        } => {
            for (dim, (&size, &stride)) in window_dimensions.iter().zip(window_strides).enumerate()
            {
                if size != 1 || stride != 1 {
                    require_unsplit(inputs[0], dim, "the window spans it")?;
                }
            }
            Ok(vec![inputs[0].dim_axes(); outs.len()])
        }
    }
}
