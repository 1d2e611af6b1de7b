//! The jvp, transpose and batching rules of `custom_linear_solve` (JAX's
//! `jax/_src/lax/control_flow/solves.py`).
//!
//! The solution `x = A⁻¹ b` is differentiated implicitly, never through
//! the solver's own operations: its tangent is another solve,
//! `A⁻¹ (ḃ − Ȧ x)`, where `Ȧ x` is the jvp of `matvec` in its captured
//! values; its transpose is the solve of the transposed system with the
//! transposed solver. Batching finds by fixed point which of the vector's
//! leaves are batched, so that all four functions agree.

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batching::batch_jaxpr_partial;
use crate::transform::eval::eval_jaxpr;
use crate::transform::jvp::jvp_jaxpr;
use crate::transform::support::{
    Tangent, add_tangents, batch_at, bind_all, instantiate, location, refs, rule_error,
};
use crate::transform::transpose::Operand;
use oxla_core::primitive::control::{LinearSolveConsts, LinearSolveParams, Op};
use oxla_core::{Primitive, SubJaxpr};

use super::{nonzero_mask, nonzero_tangents, spread};

fn primitive(params: LinearSolveParams) -> Primitive {
    Primitive::Control(Op::LinearSolve(params))
}

/// jvp: `x = solve(b)`, `ẋ = solve(ḃ − jvp(matvec)(consts; ċonsts)(x))`.
pub(crate) fn linear_solve_jvp(
    params: &LinearSolveParams,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let x = bind_all(primitive(params.clone()), &refs(primals))?;
    let n = params.consts.total();
    let (consts, _) = primals.split_at(n);
    let [matvec_range, ..] = params.consts.ranges();
    let matvec_consts = &consts[matvec_range.clone()];
    let matvec_tangents = &tangents[matvec_range];
    let mut rhs: Vec<Tangent> = tangents[n..].to_vec();
    let moving = nonzero_mask(matvec_consts, matvec_tangents);
    if moving.iter().any(|m| *m) {
        // Ȧ x: the matvec's tangent in its captured values, x held still.
        let mut nonzero = moving.clone();
        nonzero.extend(std::iter::repeat_n(false, x.len()));
        let (jaxpr, jvp_consts, out_nonzero) =
            jvp_jaxpr(params.matvec.jaxpr(), &nonzero, &[], location())?;
        let mut args: Vec<Array> = matvec_consts.to_vec();
        args.extend(x.iter().cloned());
        args.extend(nonzero_tangents(matvec_consts, matvec_tangents, &moving)?);
        let outs = eval_jaxpr(&jaxpr, &jvp_consts, &args)?;
        let a_dot_x = spread(outs[x.len()..].to_vec(), &out_nonzero);
        rhs = rhs
            .into_iter()
            .zip(a_dot_x)
            .map(|(b_dot, ax)| add_tangents(b_dot, ax.map(|t| lax::neg(&t))))
            .collect();
    }
    if rhs.iter().all(Option::is_none) {
        let n_out = x.len();
        return Ok((x, vec![None; n_out]));
    }
    let mut operands = consts.to_vec();
    for (t, p) in rhs.iter().zip(&primals[n..]) {
        operands.push(instantiate(t, p.aval()?));
    }
    let x_dot = bind_all(primitive(params.clone()), &refs(&operands))?;
    Ok((x, x_dot.into_iter().map(Some).collect()))
}

/// Transpose in `b` (the captured values must be known): the transposed
/// system solved by the transposed solver, `b̄ = A⁻ᵀ x̄`.
pub(crate) fn linear_solve_transpose(
    params: &LinearSolveParams,
    cts: &[Tangent],
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    let this = primitive(params.clone());
    let Some(transposed) = params.transposed() else {
        return Err(rule_error(
            "transpose",
            &this,
            "reverse-mode differentiation of custom_linear_solve needs a transpose_solve (or \
             a symmetric operator)",
        ));
    };
    let n = params.consts.total();
    let (const_operands, b) = operands.split_at(n);
    let consts: Vec<Array> = const_operands
        .iter()
        .map(|o| match o {
            Operand::Known(x) => Ok(x.clone()),
            Operand::Linear(_) => Err(rule_error(
                "transpose",
                &this,
                "the operator's captured values must not be linear (differentiate in b only)",
            )),
        })
        .collect::<Result<_>>()?;
    let mut result: Vec<Tangent> = vec![None; n];
    if cts.iter().all(Option::is_none) || b.iter().all(|o| matches!(o, Operand::Known(_))) {
        result.extend(b.iter().map(|_| None));
        return Ok(result);
    }
    let [matvec, vecmat, solve, transpose_solve] = params.consts.ranges();
    let mut new_operands: Vec<Array> = [vecmat, matvec, transpose_solve, solve]
        .into_iter()
        .flat_map(|r| consts[r].to_vec())
        .collect();
    for (ct, o) in cts.iter().zip(b) {
        let aval = match o {
            Operand::Linear(aval) => aval.clone(),
            Operand::Known(x) => x.aval()?.clone(),
        };
        new_operands.push(instantiate(ct, &aval));
    }
    let ct_b = bind_all(primitive(transposed), &refs(&new_operands))?;
    result.extend(ct_b.into_iter().zip(b).map(|(ct, o)| match o {
        Operand::Linear(_) => Some(ct),
        Operand::Known(_) => None,
    }));
    Ok(result)
}

/// Batching: the vector's leaves batched in any function's input or output
/// are batched in all of them (a fixed point), at axis 0; the functions'
/// captured values keep their batch dimensions.
pub(crate) fn linear_solve_batch(
    params: &LinearSolveParams,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let n = params.consts.total();
    let (consts, b) = args.split_at(n);
    let (const_bdims, b_bdims) = bdims.split_at(n);
    let vector_bdims = |batched: &[bool]| -> Vec<Option<usize>> {
        batched.iter().map(|b| b.then_some(0)).collect()
    };
    let batch_part = |jaxpr: &SubJaxpr,
                      range: std::ops::Range<usize>,
                      batched: &[bool]|
     -> Result<(oxla_core::Jaxpr, Vec<Array>, Vec<bool>)> {
        let mut in_bdims = const_bdims[range].to_vec();
        in_bdims.extend(vector_bdims(batched));
        batch_jaxpr_partial(jaxpr.jaxpr(), &in_bdims, axis_size, batched)
    };
    let mut batched: Vec<bool> = b_bdims.iter().map(Option::is_some).collect();
    // Each round can only add batched leaves, so this ends within
    // `b.len() + 1` rounds.
    loop {
        let mut grown = batched.clone();
        for (jaxpr, range) in params.parts() {
            if let Some(jaxpr) = jaxpr {
                let (_, _, out) = batch_part(jaxpr, range, &batched)?;
                grown = grown.iter().zip(&out).map(|(a, b)| *a || *b).collect();
            }
        }
        if grown == batched {
            break;
        }
        batched = grown;
    }
    let mut new_consts: [Vec<Array>; 4] = Default::default();
    let mut new_jaxprs: [Option<SubJaxpr>; 4] = Default::default();
    for (k, (jaxpr, range)) in params.parts().into_iter().enumerate() {
        let Some(jaxpr) = jaxpr else { continue };
        let (traced, captured, _) = batch_part(jaxpr, range.clone(), &batched)?;
        // The batched function's own captured values lead its operands.
        new_consts[k] = captured
            .into_iter()
            .chain(consts[range].iter().cloned())
            .collect();
        new_jaxprs[k] = Some(SubJaxpr::new(traced));
    }
    let [matvec, vecmat, solve, transpose_solve] = new_jaxprs;
    let (Some(matvec), Some(solve)) = (matvec, solve) else {
        return Err(crate::transform::support::internal_error(
            "vmap",
            &primitive(params.clone()),
            "matvec and solve are always present",
        ));
    };
    let new_params = LinearSolveParams {
        matvec,
        vecmat,
        solve,
        transpose_solve,
        consts: LinearSolveConsts {
            matvec: new_consts[0].len(),
            vecmat: new_consts[1].len(),
            solve: new_consts[2].len(),
            transpose_solve: new_consts[3].len(),
        },
    };
    let mut operands: Vec<Array> = new_consts.into_iter().flatten().collect();
    for ((x, bdim), batched) in b.iter().zip(b_bdims).zip(&batched) {
        operands.push(if *batched {
            batch_at(x, *bdim, axis_size, 0)
        } else {
            x.clone()
        });
    }
    let outs = bind_all(primitive(new_params), &refs(&operands))?;
    Ok((outs, vector_bdims(&batched)))
}
