//! JAX's general `lax.reduce`: several operands reduced together over
//! axes by a reducer the user writes. A reducer that is one of `add`,
//! `mul`, `max`, `min`, `and`, `or` with its identity as the initial value
//! becomes that reduction (as JAX's monoid detection does, so it keeps
//! every rule of `reduce_sum` and the others); anything else is the
//! `reduce` primitive with the reducer's jaxpr.

use oxla_core::primitive::{elementwise, reduce};
use oxla_core::{BinaryOp, Location, Primitive, ReduceOp, Scalar, SubJaxpr};

use crate::array::{Array, Inner};
use crate::error::{Error, Result};
use crate::lax;

/// `operands` (of one shape) reduced over `dimensions` by `computation`,
/// starting from `init_values` (one scalar per operand, of its dtype), as
/// `jax.lax.reduce`. `computation(accumulators, values)` combines two
/// lists of scalars (one per operand) into one; it should be associative
/// and commutative, since the order of combination is XLA's. One result
/// per operand.
///
/// ```
/// use oxla::{Array, lax};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[3.0f32, -1.0, 4.0, 1.0, -5.0, 9.0], &[2, 3])?;
/// // The largest magnitude of each row, with its sign: a variadic reduce
/// // over (value, magnitude) pairs.
/// let keep = |acc: &[Array], v: &[Array]| {
///     let bigger = lax::gt(&v[1], &acc[1]);
///     vec![lax::select_n(&bigger, &[&acc[0], &v[0]]), lax::select_n(&bigger, &[&acc[1], &v[1]])]
/// };
/// let zero = Array::scalar(0.0f32)?;
/// let out = lax::reduce(&[&x, &lax::abs(&x)], &[&zero, &zero], keep, &[1])?;
/// assert_eq!(out[0].to_vec::<f32>()?, vec![4.0, 9.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn reduce(
    operands: &[&Array],
    init_values: &[&Array],
    computation: impl Fn(&[Array], &[Array]) -> Vec<Array>,
    dimensions: &[i64],
) -> Result<Vec<Array>> {
    let location = Location::from_caller(std::panic::Location::caller());
    let usage = |message: String| Error::Usage {
        function: "lax::reduce",
        message,
        location,
    };
    let n = operands.len();
    if n == 0 || init_values.len() != n {
        return Err(usage(format!(
            "needs one initial value per operand and at least one operand, got {n} operands and \
             {} initial values",
            init_values.len()
        )));
    }
    let mut scalars = Vec::with_capacity(2 * n);
    let mut inits = Vec::with_capacity(n);
    for (x, init) in operands.iter().zip(init_values) {
        let dtype = x.aval()?.dtype;
        let init_aval = init.aval()?;
        // A weakly typed initial value (a literal) takes the operand's type.
        inits.push(if init_aval.weak_type && init_aval.dtype != dtype {
            lax::convert_element_type(init, dtype)
        } else {
            (*init).clone()
        });
        scalars.push(oxla_core::Aval::new(dtype, &[]));
    }
    scalars.extend(scalars.clone());
    let (jaxpr, consts) = crate::transform::eval::trace_flat(&scalars, true, location, |args| {
        Ok(computation(&args[..n], &args[n..]))
    })?;
    if !consts.is_empty() {
        return Err(usage(
            "the reducer captures arrays from outside it; reduce them as operands instead".into(),
        ));
    }
    if jaxpr.outvars.len() != n {
        return Err(usage(format!(
            "the reducer gives {} values for {n} operands",
            jaxpr.outvars.len()
        )));
    }
    if let [x] = operands
        && let Some(op) = monoid(&jaxpr, &inits[0])?
    {
        return Ok(vec![crate::ops::bind(
            Primitive::Reduce(reduce::Op::Reduce {
                op,
                axes: dimensions.iter().copied().collect(),
            }),
            &[x],
        )]);
    }
    let mut inputs: Vec<&Array> = operands.to_vec();
    inputs.extend(inits.iter());
    let outs = crate::ops::bind_at(
        Primitive::Reduce(reduce::Op::ReduceWith {
            computation: SubJaxpr::new(jaxpr),
            axes: dimensions.iter().copied().collect(),
        }),
        &inputs,
        location,
    )?;
    Ok(outs)
}

/// The built-in reduction a one-operand reducer is, if it is a single
/// `add`, `mul`, `max`, `min`, `and` or `or` of its two arguments and the
/// initial value is concretely that op's identity.
fn monoid(jaxpr: &oxla_core::Jaxpr, init: &Array) -> Result<Option<ReduceOp>> {
    let [eqn] = jaxpr.eqns.as_slice() else {
        return Ok(None);
    };
    let args: Vec<oxla_core::Atom> = jaxpr
        .invars
        .iter()
        .map(|v| oxla_core::Atom::Var(*v))
        .collect();
    let reversed = [args[1].clone(), args[0].clone()];
    let returns_it = jaxpr.outvars.len() == 1
        && eqn.outputs.len() == 1
        && jaxpr.outvars[0] == oxla_core::Atom::Var(eqn.outputs[0]);
    if !returns_it || (eqn.inputs != args && eqn.inputs.as_slice() != reversed) {
        return Ok(None);
    }
    let dtype = init.aval()?.dtype;
    let literal = |v: f64| crate::transform::support::literal(v, dtype, false);
    let extreme = |value: Scalar| {
        Array::from_inner(Inner::Scalar {
            value,
            aval: oxla_core::Aval::new(dtype, &[]),
        })
    };
    let (op, identity) = match eqn.primitive {
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Add)) => {
            (ReduceOp::Sum, literal(0.0))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Mul)) => {
            (ReduceOp::Prod, literal(1.0))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Max)) => {
            (ReduceOp::Max, extreme(Scalar::lowest(dtype)))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Min)) => {
            (ReduceOp::Min, extreme(Scalar::highest(dtype)))
        }
        // Every bit set: true, -1, or the largest unsigned value.
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::And))
            if dtype.is_unsigned_int() =>
        {
            (ReduceOp::And, extreme(Scalar::highest(dtype)))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::And))
            if dtype == oxla_core::DType::Bool =>
        {
            (ReduceOp::And, literal(1.0))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::And)) => {
            (ReduceOp::And, literal(-1.0))
        }
        Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Or)) => {
            (ReduceOp::Or, literal(0.0))
        }
        _ => return Ok(None),
    };
    if init.is_traced() {
        return Ok(None);
    }
    // Read on the host, not as an op: a jit being traced would stage it.
    let (init, identity) = (init.to_host()?, identity.to_host()?);
    let is_identity = if dtype.is_float() {
        init.to_f64_vec() == identity.to_f64_vec()
    } else {
        init.bytes == identity.bytes
    };
    Ok(is_identity.then_some(op))
}
