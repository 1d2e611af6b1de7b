//! Contractions: the generalized matrix product and convolution
//! (JAX's `dot_general` and `conv_general_dilated`).

use super::print;
use crate::aval::{Aval, Dims};
use crate::dtype::DType;
use crate::primitive::TypeClass;
use crate::shape_rules::{RuleResult, ShapeError, check_axes, expect_arity, expect_class};

/// The layout of a convolution's operands and result: for each, the
/// position of its batch/feature dims and of each spatial dim (JAX's
/// `ConvDimensionNumbers`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvDimensionNumbers {
    /// Input: [batch dim, feature dim, spatial dims...].
    pub lhs_spec: Dims,
    /// Kernel: [out feature dim, in feature dim, spatial dims...].
    pub rhs_spec: Dims,
    /// Output: [batch dim, feature dim, spatial dims...].
    pub out_spec: Dims,
}
/// Precision of a matrix product or convolution on accelerators (XLA's
/// `PrecisionConfig`; CPUs compute in full precision whatever it says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The backend's fastest.
    Default,
    /// More precise (e.g. bf16_3x on TPUs).
    High,
    /// Full f32 precision.
    Highest,
}
impl Precision {
    /// The StableHLO name.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Default => "DEFAULT",
            Precision::High => "HIGH",
            Precision::Highest => "HIGHEST",
        }
    }
}
/// A contraction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// Generalized matrix product.
    DotGeneral {
        /// Contracting dimensions of the left operand.
        lhs_contracting: Dims,
        /// Contracting dimensions of the right operand.
        rhs_contracting: Dims,
        /// Batch dimensions of the left operand.
        lhs_batch: Dims,
        /// Batch dimensions of the right operand.
        rhs_batch: Dims,
        /// The result dtype, if not the operands'.
        preferred_element_type: Option<DType>,
        /// Precision of each operand, if set.
        precision: Option<Precision>,
        /// The result's explicit sharding when the operands' types leave it
        /// ambiguous (JAX's `out_sharding`: contracting dimensions split on
        /// both sides); `None` to take it from the operands.
        out_sharding: Option<crate::sharding::ShardingDesc>,
    },
    /// N-dimensional convolution with strides, padding, dilations and groups.
    ConvGeneralDilated {
        /// Step per spatial dimension.
        window_strides: Dims,
        /// (low, high) padding per spatial dimension.
        padding: Vec<(i64, i64)>,
        /// Input dilation per spatial dimension.
        lhs_dilation: Dims,
        /// Kernel dilation per spatial dimension.
        rhs_dilation: Dims,
        /// Operand and result layouts.
        dimension_numbers: ConvDimensionNumbers,
        /// Feature groups.
        feature_group_count: i64,
        /// Batch groups.
        batch_group_count: i64,
        /// The result dtype, if not the operands'.
        preferred_element_type: Option<DType>,
        /// Precision of both operands on accelerators, if set.
        precision: Option<Precision>,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::ConvGeneralDilated { .. } => "conv_general_dilated",
            Op::DotGeneral { .. } => "dot_general",
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
            Op::ConvGeneralDilated {
                window_strides,
                padding,
                lhs_dilation,
                rhs_dilation,
                dimension_numbers,
                feature_group_count,
                batch_group_count,
                preferred_element_type,
                precision,
            } => vec![
                format!("batch_group_count={batch_group_count}"),
                format!(
                    "dimension_numbers=ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={})",
                    print::tuple(&dimension_numbers.lhs_spec),
                    print::tuple(&dimension_numbers.rhs_spec),
                    print::tuple(&dimension_numbers.out_spec)
                ),
                format!("feature_group_count={feature_group_count}"),
                format!("lhs_dilation={}", print::tuple(lhs_dilation)),
                format!("padding={}", print::pairs(padding)),
                // JAX prints a convolution's precision even when unset.
                match precision {
                    Some(p) => format!("precision=(Precision.{0}, Precision.{0})", p.name()),
                    None => "precision=None".to_string(),
                },
                format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ),
                format!("rhs_dilation={}", print::tuple(rhs_dilation)),
                format!("window_strides={}", print::tuple(window_strides)),
            ],
            Op::DotGeneral {
                lhs_contracting,
                rhs_contracting,
                lhs_batch,
                rhs_batch,
                preferred_element_type,
                precision,
                out_sharding,
            } => {
                let mut params = vec![format!(
                    "dimension_numbers=(({}, {}), ({}, {}))",
                    print::list(lhs_contracting),
                    print::list(rhs_contracting),
                    print::list(lhs_batch),
                    print::list(rhs_batch)
                )];
                // JAX prints the precision only when one is set.
                if let Some(p) = precision {
                    params.push(format!(
                        "precision=(Precision.{0}, Precision.{0})",
                        p.name()
                    ));
                }
                params.push(format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ));
                if let Some(sharding) = out_sharding {
                    params.push(format!("out_sharding={}", sharding.spec_text()));
                }
                params
            }
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::ConvGeneralDilated {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers,
            feature_group_count,
            batch_group_count,
            preferred_element_type,
            precision: _,
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
        Op::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            preferred_element_type,
            precision: _,
            out_sharding: _,
        } => {
            expect_arity(inputs, 2)?;
            let (l, r) = (inputs[0], inputs[1]);
            if l.dtype != r.dtype {
                return Err(ShapeError::Invalid(format!(
                    "operands must have the same dtype, got {} and {}",
                    l.dtype, r.dtype
                )));
            }
            expect_class(TypeClass::Numeric, l)?;
            if lhs_contracting.len() != rhs_contracting.len() || lhs_batch.len() != rhs_batch.len()
            {
                return Err(ShapeError::Invalid(
                    "contracting and batch dimensions must pair up".into(),
                ));
            }
            let lhs_dims: Vec<i64> = lhs_batch.iter().chain(lhs_contracting).copied().collect();
            let rhs_dims: Vec<i64> = rhs_batch.iter().chain(rhs_contracting).copied().collect();
            check_axes(&lhs_dims, l.rank(), "lhs dimension")?;
            check_axes(&rhs_dims, r.rank(), "rhs dimension")?;
            for (&a, &b) in lhs_dims.iter().zip(&rhs_dims) {
                if l.shape[a as usize] != r.shape[b as usize] {
                    return Err(ShapeError::Invalid(format!(
                        "lhs dimension {a} (size {}) does not match rhs dimension {b} (size {})",
                        l.shape[a as usize], r.shape[b as usize]
                    )));
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
    }
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
        return Err(ShapeError::Invalid(format!(
            "operands must have one rank of at least 2, got {lhs} and {rhs}"
        )));
    }
    if lhs.dtype != rhs.dtype {
        return Err(ShapeError::Invalid(format!(
            "operands must have the same dtype, got {} and {}",
            lhs.dtype, rhs.dtype
        )));
    }
    let spatial = rank - 2;
    for spec in [&dn.lhs_spec, &dn.rhs_spec, &dn.out_spec] {
        if spec.len() != rank {
            return Err(ShapeError::Invalid(format!(
                "dimension numbers need {rank} entries, got {spec:?}"
            )));
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
        return Err(ShapeError::Invalid(format!(
            "strides, padding and dilations need {spatial} entries each"
        )));
    }
    if feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1) {
        return Err(ShapeError::Invalid(
            "feature and batch group counts must be positive, and not both above 1".into(),
        ));
    }
    let dim = |a: &Aval, spec: &Dims, i: usize| a.shape[spec[i] as usize];
    let (batch, in_features) = (dim(lhs, &dn.lhs_spec, 0), dim(lhs, &dn.lhs_spec, 1));
    let (out_features, kernel_in) = (dim(rhs, &dn.rhs_spec, 0), dim(rhs, &dn.rhs_spec, 1));
    if in_features != kernel_in * feature_groups {
        return Err(ShapeError::Invalid(format!(
            "input features {in_features} must equal kernel input features {kernel_in} times feature_group_count {feature_groups}"
        )));
    }
    if out_features % feature_groups != 0
        || out_features % batch_groups != 0
        || batch % batch_groups != 0
    {
        return Err(ShapeError::Invalid(
            "output features and batch must divide by the group counts".into(),
        ));
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

/// The sharding rule (see [`crate::sharding_rules`]), JAX's: a matrix
/// product's batch dimensions must be split alike on both sides and keep
/// that split; its free dimensions keep theirs; contracting dimensions
/// must be split alike, and when they are split at all the result's split
/// is ambiguous (sum where?) unless `out_sharding` names it. A convolution
/// keeps the input's batch and spatial splits and the kernel's output
/// feature split, and needs the contracted feature dimensions unsplit.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
    outs: &[Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    use crate::sharding_rules::{require_unsplit, spec_tuple, unsplit};
    let (lhs, rhs) = (inputs[0], inputs[1]);
    let (l, r) = (lhs.dim_axes(), rhs.dim_axes());
    match op {
        Op::DotGeneral {
            lhs_contracting,
            rhs_contracting,
            lhs_batch,
            rhs_batch,
            out_sharding,
            ..
        } => {
            if let Some(sharding) = out_sharding {
                let mut spec = sharding.dims.to_vec();
                spec.resize(outs[0].rank(), std::sync::Arc::from([]));
                return Ok(vec![spec]);
            }
            let pick = |axes: &[crate::sharding::DimAxes],
                        dims: &[i64]|
             -> Vec<crate::sharding::DimAxes> {
                dims.iter().map(|&d| axes[d as usize].clone()).collect()
            };
            let (lb, rb) = (pick(&l, lhs_batch), pick(&r, rhs_batch));
            if lb != rb {
                return Err(ShapeError::Invalid(format!(
                    "the batch dimensions of the operands must be split alike, got lhs_batch_spec={} \
                     and rhs_batch_spec={}",
                    spec_tuple(&lb),
                    spec_tuple(&rb)
                )));
            }
            let (lc, rc) = (pick(&l, lhs_contracting), pick(&r, rhs_contracting));
            if lc.iter().chain(&rc).any(|axes| !axes.is_empty()) {
                return Err(ShapeError::Invalid(format!(
                    "contracting dimensions are split, so how the result is split is ambiguous; \
                     name it with the out_sharding of the product. Got lhs_contracting_spec={} and \
                     rhs_contracting_spec={}",
                    spec_tuple(&lc),
                    spec_tuple(&rc)
                )));
            }
            let free = |axes: &[crate::sharding::DimAxes],
                        taken: Vec<i64>|
             -> Vec<crate::sharding::DimAxes> {
                (0..axes.len() as i64)
                    .filter(|d| !taken.contains(d))
                    .map(|d| axes[d as usize].clone())
                    .collect()
            };
            let lhs_taken = lhs_batch.iter().chain(lhs_contracting).copied().collect();
            let rhs_taken = rhs_batch.iter().chain(rhs_contracting).copied().collect();
            let mut spec = lb;
            spec.extend(free(&l, lhs_taken));
            spec.extend(free(&r, rhs_taken));
            Ok(vec![spec])
        }
        Op::ConvGeneralDilated {
            dimension_numbers: dn,
            ..
        } => {
            let features = "the convolution contracts it";
            require_unsplit(lhs, dn.lhs_spec[1] as usize, features)?;
            require_unsplit(rhs, dn.rhs_spec[1] as usize, features)?;
            for &d in &dn.rhs_spec[2..] {
                require_unsplit(rhs, d as usize, "the kernel window spans it")?;
            }
            let mut spec = unsplit(outs[0].rank());
            spec[dn.out_spec[0] as usize] = l[dn.lhs_spec[0] as usize].clone();
            spec[dn.out_spec[1] as usize] = r[dn.rhs_spec[0] as usize].clone();
            for (&o, &i) in dn.out_spec[2..].iter().zip(&dn.lhs_spec[2..]) {
                spec[o as usize] = l[i as usize].clone();
            }
            Ok(vec![spec])
        }
    }
}
