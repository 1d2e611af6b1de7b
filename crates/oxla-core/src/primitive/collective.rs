//! Collectives over named mesh axes inside `shard_map` (JAX's
//! `jax/_src/lax/parallel.py`), and `pvary`, which changes only the type.

use super::print;
use crate::aval::Aval;
use crate::dtype::DType;
use crate::primitive::ReduceOp;
use crate::shape_rules::expect_arity;
use crate::shape_rules::{RuleResult, ShapeError};

/// A collective (or `pvary`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `pvary`: the operand, now typed as varying over `axes` too (no
    /// computation; inside a `shard_map` that checks replication). Its
    /// transpose sums the cotangent over those axes.
    Pvary {
        /// The mesh axes added to the operand's varying axes.
        group: crate::sharding::AxisGroup,
    },
    /// `psum`, `pmax`, `pmin`: the elementwise reduction of the operand
    /// over the devices of each group (inside `shard_map`).
    AllReduce {
        /// Sum, Max or Min.
        op: ReduceOp,
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
    },
    /// `all_gather`: the group's operands stacked (or, `tiled`,
    /// concatenated) along `dim`, in the order of the devices' indices.
    AllGather {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// Where the gathered dimension goes.
        dim: usize,
        /// Concatenate instead of stacking.
        tiled: bool,
        /// JAX's `all_gather_invariant`: the result is replicated over the
        /// group's axes (each device holds the same gathered value), and
        /// its transpose is each device's own slice of the cotangent, not
        /// `psum_scatter`.
        invariant: bool,
    },
    /// `psum_scatter`: the sum over the group, of which each device keeps
    /// its own block along `dim` (with `tiled`; else `dim` has the group's
    /// size and is removed).
    ReduceScatter {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// The scattered dimension.
        dim: usize,
        /// Keep the dimension (as a block) instead of removing it.
        tiled: bool,
    },
    /// `all_to_all`: each device splits `split_dim` into one block per
    /// group member, sends block `j` to member `j`, and concatenates what it
    /// receives along `concat_dim`.
    AllToAll {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// The dimension split and sent.
        split_dim: usize,
        /// The dimension received blocks are concatenated along.
        concat_dim: usize,
    },
    /// `ppermute`: device with index `src` along the group sends its
    /// operand to the device with index `dst`, for each `(src, dst)`;
    /// devices nobody sends to get zeros.
    Ppermute {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
        /// `(source, destination)` indices within a group.
        perm: Vec<(usize, usize)>,
    },
    /// `axis_index`: this device's index along the group's axes (int32).
    AxisIndex {
        /// The mesh axes.
        group: crate::sharding::AxisGroup,
    },
}

impl Op {
    /// How the collective changes the mesh axes its result varies over
    /// (JAX's vma rules).
    pub fn varying_rule(&self) -> crate::shape_rules::VaryingRule {
        use crate::shape_rules::VaryingRule;
        match self {
            Op::Pvary { .. } => VaryingRule::AddGroup,
            Op::AllReduce { .. }
            | Op::AllGather {
                invariant: true, ..
            } => VaryingRule::RemoveGroup,
            Op::AxisIndex { .. } => VaryingRule::Group,
            Op::AllGather {
                invariant: false, ..
            }
            | Op::ReduceScatter { .. }
            | Op::AllToAll { .. }
            | Op::Ppermute { .. } => VaryingRule::Union,
        }
    }

    /// The mesh axes (and index groups) the collective runs over.
    pub fn group(&self) -> &crate::sharding::AxisGroup {
        match self {
            Op::AllReduce { group, .. }
            | Op::AllGather { group, .. }
            | Op::ReduceScatter { group, .. }
            | Op::AllToAll { group, .. }
            | Op::Ppermute { group, .. }
            | Op::AxisIndex { group }
            | Op::Pvary { group } => group,
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Pvary { .. } => "pvary",
            Op::AllReduce {
                op: ReduceOp::Max, ..
            } => "pmax",
            Op::AllReduce {
                op: ReduceOp::Min, ..
            } => "pmin",
            Op::AllReduce { .. } => "psum",
            Op::AllGather {
                invariant: false, ..
            } => "all_gather",
            Op::AllGather {
                invariant: true, ..
            } => "all_gather_invariant",
            Op::ReduceScatter { .. } => "reduce_scatter",
            Op::AllToAll { .. } => "all_to_all",
            Op::Ppermute { .. } => "ppermute",
            Op::AxisIndex { .. } => "axis_index",
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
            Op::Pvary { group } => {
                let names: Vec<String> = group.axes.iter().map(|a| format!("'{a}'")).collect();
                vec![format!("axes=({},)", names.join(", "))]
            }
            Op::AllReduce { group, .. } => vec![
                format!(
                    "axes=({}{})",
                    group
                        .axes
                        .iter()
                        .map(|a| format!("'{a}'"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if group.axes.len() == 1 { "," } else { "" }
                ),
                format!("axis_index_groups={}", group.index_groups_text()),
            ],
            Op::AllGather {
                group,
                dim,
                tiled,
                invariant,
            } => [
                Some(format!("all_gather_dimension={dim}")),
                (!invariant).then(|| format!("axis_index_groups={}", group.index_groups_text())),
                Some(format!("axis_name={}", group.names())),
                Some(format!("axis_size={}", group.size())),
                Some(format!("tiled={}", print::py_bool(*tiled))),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Op::ReduceScatter { group, dim, tiled } => vec![
                format!("axis_name={}", group.names()),
                format!("scatter_dimension={dim}"),
                format!("tiled={}", print::py_bool(*tiled)),
            ],
            Op::AllToAll {
                group,
                split_dim,
                concat_dim,
            } => vec![
                format!("axis_name={}", group.names()),
                format!("concat_axis={concat_dim}"),
                format!("split_axis={split_dim}"),
            ],
            Op::Ppermute { group, perm } => vec![
                format!("axis_name={}", group.names()),
                format!(
                    "perm=({})",
                    perm.iter()
                        .map(|(a, b)| format!("({a}, {b})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ],
            Op::AxisIndex { group } => {
                vec![format!("axis_name={}", group.names())]
            }
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Pvary { .. } => {
            expect_arity(inputs, 1)?;
            Ok(vec![inputs[0].clone()])
        }
        Op::AllReduce { op, .. } => {
            expect_arity(inputs, 1)?;
            match op {
                ReduceOp::Sum | ReduceOp::Max | ReduceOp::Min => Ok(vec![inputs[0].clone()]),
                ReduceOp::Prod | ReduceOp::And | ReduceOp::Or => Err(ShapeError::Invalid(format!(
                    "{op:?} is not a collective reduction (sum, max, min)"
                ))),
            }
        }
        Op::AllGather {
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
                    return Err(ShapeError::Invalid(format!(
                        "dimension {dim} is out of range for {x}"
                    )));
                }
                shape.insert(*dim, n);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Op::ReduceScatter { group, dim, tiled } => {
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
                    return Err(ShapeError::Invalid(format!(
                        "dimension {dim} of {x} (size {size}) is not divisible by the {n} \
                         devices of axes {}",
                        group.names()
                    )));
                }
                shape[*dim] = size / n;
            } else {
                if size != n {
                    return Err(ShapeError::Invalid(format!(
                        "dimension {dim} of {x} has size {size}, but axes {} have {n} devices \
                         (without tiled it must match)",
                        group.names()
                    )));
                }
                shape.remove(*dim);
            }
            Ok(vec![x.with_shape(&shape)])
        }
        Op::AllToAll {
            group,
            split_dim,
            concat_dim,
        } => {
            expect_arity(inputs, 1)?;
            let x = inputs[0];
            let n = group.size() as i64;
            let rank = x.shape.len();
            if *split_dim >= rank || *concat_dim >= rank {
                return Err(ShapeError::Invalid(format!(
                    "split dimension {split_dim} or concat dimension {concat_dim} is out of \
                     range for {x}"
                )));
            }
            if x.shape[*split_dim] % n != 0 {
                return Err(ShapeError::Invalid(format!(
                    "dimension {split_dim} of {x} (size {}) is not divisible by the {n} devices \
                     of axes {}",
                    x.shape[*split_dim],
                    group.names()
                )));
            }
            let mut shape = x.shape.to_vec();
            shape[*split_dim] /= n;
            shape[*concat_dim] *= n;
            Ok(vec![x.with_shape(&shape)])
        }
        Op::Ppermute { group, perm } => {
            expect_arity(inputs, 1)?;
            let n = group.size();
            for (i, &(src, dst)) in perm.iter().enumerate() {
                if src >= n || dst >= n {
                    return Err(ShapeError::Invalid(format!(
                        "pair ({src}, {dst}) names an index beyond the {n} devices of axes {}",
                        group.names()
                    )));
                }
                if perm[..i].iter().any(|&(s, d)| s == src || d == dst) {
                    return Err(ShapeError::Invalid(format!(
                        "pair ({src}, {dst}) repeats a source or a destination; a permutation \
                         sends from and to each device at most once"
                    )));
                }
            }
            Ok(vec![inputs[0].clone()])
        }
        Op::AxisIndex { .. } => {
            expect_arity(inputs, 0)?;
            Ok(vec![Aval::new(DType::I32, &[])])
        }
    }
}

/// The sharding rule (see [`crate::sharding_rules`]): collectives run over
/// manual axes inside `shard_map`, where values carry no explicit
/// sharding, so an operand split over explicit axes is an error.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    Err(ShapeError::Invalid(format!(
        "{} runs over manual mesh axes inside shard_map, but its operands {} are split over \
         explicit axes",
        op.name(),
        crate::sharding_rules::types_text(inputs)
    )))
}
