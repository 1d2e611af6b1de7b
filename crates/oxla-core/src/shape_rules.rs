//! The shape-rule dispatcher (each family's rule is `output_types` in
//! `primitive/<family>.rs`), the checks several families share, the typed
//! [`ShapeError`], and the varying-axes rules: from the input avals to the
//! output avals, or what is wrong.

use crate::aval::Aval;
use crate::primitive::{
    call, collective, contract, control, elementwise, fft, host, index, linalg, marker, reduce,
    rng, shape, sharding,
};

use crate::primitive::{Primitive, TypeClass};

/// What a shape rule found wrong with the inputs of a primitive (the
/// caller adds the primitive, the input types and the source line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// The wrong number of operands.
    #[error("takes {expected} operand(s), got {got}")]
    Arity {
        /// How many the primitive takes.
        expected: usize,
        /// How many it got.
        got: usize,
    },
    /// An operand's dtype is not of the class the primitive accepts.
    #[error("needs {expected}, got {got}")]
    DType {
        /// The class accepted, as words (`a float type`).
        expected: &'static str,
        /// The dtype given.
        got: crate::dtype::DType,
    },
    /// An axis (or dimension) parameter outside the operand's rank.
    #[error("{what} {axis} is out of range for rank {rank}")]
    AxisOutOfRange {
        /// What the axis is (`axis`, `dimension`).
        what: &'static str,
        /// The axis given.
        axis: i64,
        /// The operand's rank.
        rank: usize,
    },
    /// An axis named twice.
    #[error("{what} {axis} appears twice")]
    RepeatedAxis {
        /// What the axis is.
        what: &'static str,
        /// The axis named twice.
        axis: i64,
    },
    /// Any other violation of the primitive's rule, in words.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for ShapeError {
    fn from(message: String) -> Self {
        ShapeError::Invalid(message)
    }
}

impl From<&str> for ShapeError {
    fn from(message: &str) -> Self {
        ShapeError::Invalid(message.to_string())
    }
}

/// A shape rule's result.
pub type RuleResult<T> = Result<T, ShapeError>;

pub(crate) fn expect_arity(inputs: &[&Aval], n: usize) -> RuleResult<()> {
    if inputs.len() == n {
        Ok(())
    } else {
        Err(ShapeError::Arity {
            expected: n,
            got: inputs.len(),
        })
    }
}

pub(crate) fn expect_class(class: TypeClass, aval: &Aval) -> RuleResult<()> {
    if class.contains(aval.dtype) {
        Ok(())
    } else {
        Err(ShapeError::DType {
            expected: class.describe(),
            got: aval.dtype,
        })
    }
}

pub(crate) fn check_axes(axes: &[i64], rank: usize, what: &'static str) -> RuleResult<()> {
    for (i, &a) in axes.iter().enumerate() {
        if a < 0 || a as usize >= rank {
            return Err(ShapeError::AxisOutOfRange {
                what,
                axis: a,
                rank,
            });
        }
        if axes[..i].contains(&a) {
            return Err(ShapeError::RepeatedAxis { what, axis: a });
        }
    }
    Ok(())
}

/// The output avals of `primitive` applied to `inputs`.
pub fn abstract_eval(primitive: &Primitive, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let mut outs = types(primitive, inputs)?;
    varying_axes(primitive, inputs, &mut outs);
    crate::sharding_rules::apply(primitive, inputs, &mut outs)?;
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
        Primitive::Collective(op) => op.varying_rule(),
        // A body's types say what its results vary over.
        Primitive::Call(_) | Primitive::Control(_) | Primitive::Host(_) => VaryingRule::FromBody,
        Primitive::Elementwise(_)
        | Primitive::Shape(_)
        | Primitive::Index(_)
        | Primitive::Reduce(_)
        | Primitive::Contract(_)
        | Primitive::Fft(_)
        | Primitive::Linalg(_)
        | Primitive::Rng(_)
        | Primitive::Sharding(_)
        | Primitive::Marker(_) => VaryingRule::Union,
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
        Primitive::Elementwise(op) => elementwise::output_types(op, inputs),
        Primitive::Shape(op) => shape::output_types(op, inputs),
        Primitive::Index(op) => index::output_types(op, inputs),
        Primitive::Reduce(op) => reduce::output_types(op, inputs),
        Primitive::Contract(op) => contract::output_types(op, inputs),
        Primitive::Call(op) => call::output_types(op, inputs),
        Primitive::Control(op) => control::output_types(op, inputs),
        Primitive::Collective(op) => collective::output_types(op, inputs),
        Primitive::Sharding(op) => sharding::output_types(op, inputs),
        Primitive::Host(op) => host::output_types(op, inputs),
        Primitive::Marker(op) => marker::output_types(op, inputs),
        Primitive::Fft(op) => fft::output_types(op, inputs),
        Primitive::Linalg(op) => linalg::output_types(op, inputs),
        Primitive::Rng(op) => rng::output_types(op, inputs),
    }
}

/// The results of calling a closed jaxpr on `inputs`, which must have its
/// parameters' dtypes and shapes.
pub(crate) fn call_avals(jaxpr: &crate::jaxpr::Jaxpr, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    expect_arity(inputs, jaxpr.invars.len())?;
    for (i, (v, a)) in jaxpr.invars.iter().zip(inputs).enumerate() {
        let want = jaxpr.aval(*v);
        if want.dtype != a.dtype || want.shape != a.shape {
            return Err(ShapeError::Invalid(format!(
                "operand {i} is {a}, but the called function takes {want}"
            )));
        }
    }
    Ok(jaxpr.out_avals())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::primitive::{BinaryOp, Comparison};

    fn f32s(shape: &[i64]) -> Aval {
        Aval::new(DType::F32, shape)
    }

    #[test]
    fn dot_general_puts_batch_then_free_dims() {
        let p = Primitive::Contract(contract::Op::DotGeneral {
            lhs_contracting: [2].into_iter().collect(),
            rhs_contracting: [1].into_iter().collect(),
            lhs_batch: [0].into_iter().collect(),
            rhs_batch: [0].into_iter().collect(),
            preferred_element_type: None,
            precision: None,
            out_sharding: None,
        });
        let out = abstract_eval(&p, &[&f32s(&[5, 2, 3]), &f32s(&[5, 3, 4])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[5,2,4]");
        let err = abstract_eval(&p, &[&f32s(&[5, 2, 3]), &f32s(&[5, 4, 4])]).unwrap_err();
        assert!(err.to_string().contains("does not match"), "{err}");
    }

    #[test]
    fn binary_ops_need_equal_types() {
        let add = Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Add));
        let err = abstract_eval(&add, &[&f32s(&[2]), &f32s(&[3])]).unwrap_err();
        assert!(err.to_string().contains("incompatible shapes"), "{err}");
        let out = abstract_eval(&add, &[&f32s(&[2, 1]), &f32s(&[1, 3])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[2,3]");
        let out = abstract_eval(&add, &[&f32s(&[]), &f32s(&[4])]).unwrap();
        assert_eq!(out[0].to_string(), "f32[4]");
        let i = Aval::new(DType::I32, &[2]);
        assert!(
            abstract_eval(&add, &[&f32s(&[2]), &i])
                .unwrap_err()
                .to_string()
                .contains("same dtype")
        );
        let shl = Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::ShiftLeft));
        assert!(
            abstract_eval(&shl, &[&f32s(&[2]), &f32s(&[2])])
                .unwrap_err()
                .to_string()
                .contains("integer")
        );
        let lt = Primitive::Elementwise(elementwise::Op::Compare(Comparison::Lt));
        assert_eq!(abstract_eval(&lt, &[&i, &i]).unwrap()[0].dtype, DType::Bool);
    }

    #[test]
    fn structural_rules_compute_shapes() {
        let x = f32s(&[2, 1, 3]);
        let squeeze = Primitive::Shape(shape::Op::Squeeze {
            dimensions: [1].into_iter().collect(),
        });
        assert_eq!(
            abstract_eval(&squeeze, &[&x]).unwrap()[0].to_string(),
            "f32[2,3]"
        );
        let slice = Primitive::Index(index::Op::Slice {
            start_indices: [0, 0, 1].into_iter().collect(),
            limit_indices: [2, 1, 3].into_iter().collect(),
            strides: [1, 1, 2].into_iter().collect(),
        });
        assert_eq!(
            abstract_eval(&slice, &[&x]).unwrap()[0].to_string(),
            "f32[2,1,1]"
        );
        let pad = Primitive::Shape(shape::Op::Pad {
            config: vec![(1, 2, 0), (0, 0, 0), (-1, 0, 1)],
        });
        assert_eq!(
            abstract_eval(&pad, &[&x, &f32s(&[])]).unwrap()[0].to_string(),
            "f32[5,1,4]"
        );
        let bcast = Primitive::Shape(shape::Op::BroadcastInDim {
            shape: [4, 2, 5, 3].into_iter().collect(),
            broadcast_dimensions: [1, 2, 3].into_iter().collect(),
        });
        assert_eq!(
            abstract_eval(&bcast, &[&x]).unwrap()[0].to_string(),
            "f32[4,2,5,3]"
        );
        let reshape = Primitive::Shape(shape::Op::Reshape {
            new_sizes: [7].into_iter().collect(),
        });
        assert!(
            abstract_eval(&reshape, &[&x])
                .unwrap_err()
                .to_string()
                .contains("6 elements")
        );
    }
}
