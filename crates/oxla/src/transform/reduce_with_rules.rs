//! Rules of JAX's general `reduce` (a user's reducer): batching moves
//! every operand's batch dimension to the front; the jvp differentiates a
//! pairwise tree of reducer applications (JAX's `_reduce_jvp`), since a
//! reducer has no derivative of its own over a whole axis. It is not
//! linear, so it has no transpose.

use oxla_core::primitive::reduce;
use oxla_core::{Jaxpr, Primitive, SubJaxpr};

use super::support::{Tangent, batch_at, bind_all, instantiate, rule_error};
use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::trace::BatchAxis;

/// The batched reduce: operands batched at 0, axes shifted past it.
pub(crate) fn batch(
    primitive: &Primitive,
    computation: &SubJaxpr,
    axes: &[i64],
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let n = args.len() / 2;
    if bdims[n..].iter().any(Option::is_some) {
        return Err(rule_error(
            "vmap",
            primitive,
            "the initial values of a general reduce must not be batched (as in JAX)",
        ));
    }
    let mut inputs: Vec<Array> = args[..n]
        .iter()
        .zip(bdims)
        .map(|(x, b)| batch_at(x, *b, size, 0))
        .collect();
    inputs.extend_from_slice(&args[n..]);
    let refs: Vec<&Array> = inputs.iter().collect();
    let outs = bind_all(
        Primitive::Reduce(reduce::Op::ReduceWith {
            computation: computation.clone(),
            axes: axes.iter().map(|a| a + 1).collect(),
        }),
        &refs,
    )?;
    let out_bdims = vec![Some(0); outs.len()];
    Ok((outs, out_bdims))
}

/// Primal outputs and tangents: the jvp of [`tree_reduce`].
pub(crate) fn jvp(
    primitive: &Primitive,
    computation: &SubJaxpr,
    axes: &[i64],
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let n = primals.len() / 2;
    if tangents[..n].iter().all(Option::is_none) {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind_all(primitive.clone(), &refs)?;
        return Ok((outs, vec![None; n]));
    }
    if tangents[n..].iter().any(Option::is_some) {
        return Err(rule_error(
            "jvp",
            primitive,
            "the initial values of a general reduce have no derivative (as in JAX): pass them as \
             constants",
        ));
    }
    let (operands, inits) = primals.split_at(n);
    let operand_tangents: Vec<Array> = operands
        .iter()
        .zip(tangents)
        .map(|(x, t)| Ok(instantiate(t, x.aval()?)))
        .collect::<Result<_>>()?;
    let jaxpr = computation.jaxpr();
    let (outs, out_tangents) = crate::autodiff::jvp(
        |xs: Vec<Array>| tree_reduce(jaxpr, &xs, inits, axes),
        &operands.to_vec(),
        &operand_tangents,
    )?;
    let outs = outs?;
    let out_tangents = out_tangents?;
    Ok((outs, out_tangents.into_iter().map(Some).collect()))
}

/// `operands` reduced over `axes` by a balanced tree of `reducer`
/// applications: halves combined elementwise (the odd one out padded with
/// the initial value) until one row is left.
fn tree_reduce(
    reducer: &Jaxpr,
    operands: &[Array],
    inits: &[Array],
    axes: &[i64],
) -> Result<Vec<Array>> {
    let shape = operands[0].aval()?.shape.clone();
    let rank = shape.len() as i64;
    let kept: Vec<i64> = (0..rank).filter(|d| !axes.contains(d)).collect();
    let out_shape: Vec<i64> = kept.iter().map(|&d| shape[d as usize]).collect();
    let rows: i64 = axes.iter().map(|&d| shape[d as usize]).product();
    let width: i64 = out_shape.iter().product();
    let permutation: Vec<i64> = axes.iter().chain(&kept).copied().collect();
    let mut xs: Vec<Array> = operands
        .iter()
        .map(|x| lax::reshape(&lax::transpose(x, &permutation), &[rows, width]))
        .collect();
    let mut m = rows;
    while m > 1 {
        let first = (m + 1) / 2;
        let second = m - first;
        let mut args: Vec<Array> = xs
            .iter()
            .map(|x| {
                lax::reshape(
                    &lax::slice(x, &[0, 0], &[first, width], None),
                    &[first * width],
                )
            })
            .collect();
        for (x, init) in xs.iter().zip(inits) {
            let rest = lax::slice(x, &[first, 0], &[m, width], None);
            let rest = if second == first {
                rest
            } else {
                lax::pad(&rest, init, &[(0, 1, 0), (0, 0, 0)])
            };
            args.push(lax::reshape(&rest, &[first * width]));
        }
        let combined = super::batching::vmap_flat(
            |flat| super::eval::eval_jaxpr(reducer, &[], flat),
            &args,
            &vec![Some(0); args.len()],
            BatchAxis::unnamed(first * width),
            &|_| Some(0),
        )?;
        xs = combined
            .into_iter()
            .map(|r| {
                r.map(|x| lax::reshape(&x, &[first, width])).map_err(|_| {
                    crate::error::Error::InvalidArgument(
                        "internal: an unbatched reducer output".into(),
                    )
                })
            })
            .collect::<Result<_>>()?;
        m = first;
    }
    if m == 0 {
        return Ok(inits
            .iter()
            .map(|init| crate::numpy::broadcast_to(init, &out_shape))
            .collect());
    }
    Ok(xs.iter().map(|x| lax::reshape(x, &out_shape)).collect())
}
