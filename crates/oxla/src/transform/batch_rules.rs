//! The batching dispatcher (each family's rule is in `rules/<family>.rs`)
//! and the helpers several families share: outputs and where their batch
//! dimension is, from operands with a batch dimension (or none).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::transform::rules::{
    call, collective, contract, control, elementwise, fft, host, index, linalg, marker, reduce,
    rng, shape, sharding,
};
use oxla_core::shape_rules::abstract_eval;

use oxla_core::{Aval, DType, Dims, Primitive};

use super::support::{self, batch_at, bind_all, move_axis, rule_error, zeros};

use crate::array::Array;

use crate::error::Result;

use crate::lax;

/// Outputs and their batch dims.
pub(crate) type Batched = (Vec<Array>, Vec<Option<usize>>);

/// What a family's batching rule gets: the equation's primitive, its
/// operands, where each is batched, and the batch size.
#[derive(Clone, Copy)]
pub(crate) struct BatchArgs<'a> {
    /// The primitive.
    pub(crate) primitive: &'a Primitive,
    /// The operands.
    pub(crate) args: &'a [Array],
    /// Each operand's batch dimension (`None`: unbatched).
    pub(crate) bdims: &'a [Option<usize>],
    /// The batch size.
    pub(crate) axis_size: i64,
}

/// Outputs of `primitive` on batched operands (`bdims[i]` is where operand
/// i's batch dimension is, `None` if it has none), and their batch dims.
pub(crate) fn batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    axis_size: i64,
) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    if args.len() != bdims.len() {
        return Err(rule_error(
            "vmap",
            primitive,
            format!("{} operands but {} batch dims", args.len(), bdims.len()),
        ));
    }
    let input = BatchArgs {
        primitive,
        args,
        bdims,
        axis_size,
    };
    match primitive {
        Primitive::Elementwise(op) => elementwise::batch(op, &input),
        Primitive::Shape(op) => shape::batch(op, &input),
        Primitive::Index(op) => index::batch(op, &input),
        Primitive::Reduce(op) => reduce::batch(op, &input),
        Primitive::Contract(op) => contract::batch(op, &input),
        Primitive::Call(op) => call::batch(op, &input),
        Primitive::Control(op) => control::batch(op, &input),
        Primitive::Collective(op) => collective::batch(op, &input),
        Primitive::Sharding(op) => sharding::batch(op, &input),
        Primitive::Host(op) => host::batch(op, &input),
        Primitive::Marker(op) => marker::batch(op, &input),
        Primitive::Fft(op) => fft::batch(op, &input),
        Primitive::Linalg(op) => linalg::batch(op, &input),
        Primitive::Rng(op) => rng::batch(op, &input),
    }
}

/// The outputs with their batch dims, or the error one of them carries.
pub(crate) fn done(outs: Vec<Array>, out_bdims: Vec<Option<usize>>) -> Result<Batched> {
    for out in &outs {
        out.check()?;
    }
    Ok((outs, out_bdims))
}

/// The operand with its batch dim (an unbatched one is broadcast to have
/// one at 0).
pub(crate) fn operand(x: &Array, bdim: Option<usize>, size: i64) -> (Array, usize) {
    match bdim {
        Some(b) => (x.clone(), b),
        None => (batch_at(x, None, size, 0), 0),
    }
}

/// The position of unbatched axis `axis` in the operand batched at `bdim`.
pub(crate) fn to_batched(axis: i64, bdim: usize) -> i64 {
    if axis >= bdim as i64 { axis + 1 } else { axis }
}

/// Unbatched axes as positions in the operand batched at `bdim`.
pub(crate) fn axes_to_batched(axes: &[i64], bdim: usize) -> Dims {
    axes.iter().map(|&a| to_batched(a, bdim)).collect()
}

/// Where the batch dim `bdim` ends up once the (batched) `axes` are gone.
pub(crate) fn bdim_after_removing(axes: &[i64], bdim: usize) -> usize {
    bdim - axes.iter().filter(|&&a| a < bdim as i64).count()
}

/// `values` with `value` inserted at `index`.
pub(crate) fn insert_at<T: Clone, R: FromIterator<T>>(values: &[T], index: usize, value: T) -> R {
    values[..index]
        .iter()
        .cloned()
        .chain(std::iter::once(value))
        .chain(values[index..].iter().cloned())
        .collect()
}

/// The shape of one batch element of `x`.
pub(crate) fn unbatched_shape(x: &Array, bdim: Option<usize>) -> Vec<i64> {
    let mut shape = x.shape_or_empty().to_vec();
    if let Some(b) = bdim {
        shape.remove(b);
    }
    shape
}

/// One-operand elementwise primitives: applied as they are, the batch dim
/// staying where it is.
pub(crate) fn same_bdim_unary(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let (x, b) = operand(&args[0], bdims[0], size);
    done(vec![support::bind_one(primitive, &[&x])?], vec![Some(b)])
}

/// The common batch dim when every batched operand has it and one shape,
/// and every unbatched operand is a scalar that may stay one
/// (`scalar_ok(i)`): then the primitive applies as it is.
fn shared_bdim(
    args: &[Array],
    bdims: &[Option<usize>],
    scalar_ok: impl Fn(usize) -> bool,
) -> Option<usize> {
    let (first, b) = args
        .iter()
        .zip(bdims)
        .find_map(|(x, bd)| bd.map(|b| (x, b)))?;
    let fits = args
        .iter()
        .zip(bdims)
        .enumerate()
        .all(|(i, (x, bd))| match bd {
            Some(d) => *d == b && x.shape_or_empty() == first.shape_or_empty(),
            None => x.ndim_or_zero() == 0 && scalar_ok(i),
        });
    fits.then_some(b)
}

/// Binary elementwise ops and comparisons: batched operands get their batch
/// dim at 0, unbatched ones a size-1 leading dim (rank-0 ones stay), and a
/// batched operand that was rank 0 becomes [B, 1, ..., 1] so that every
/// operand has the same rank (oxla broadcasts only at equal ranks).
pub(crate) fn elementwise(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    let refs: Vec<&Array> = args.iter().collect();
    if let Some(b) = shared_bdim(args, bdims, |_| true) {
        return done(vec![support::bind_one(primitive, &refs)?], vec![Some(b)]);
    }
    let rank = args
        .iter()
        .zip(bdims)
        .map(|(x, bd)| x.ndim_or_zero() - usize::from(bd.is_some()))
        .max()
        .unwrap_or(0);
    let xs: Vec<Array> = args
        .iter()
        .zip(bdims)
        .map(|(x, &bd)| match bd {
            Some(b) => {
                let moved = move_axis(x, b, 0);
                if moved.ndim_or_zero() == 1 && rank > 0 {
                    let mut shape = vec![1; rank + 1];
                    shape[0] = size;
                    lax::reshape(&moved, &shape)
                } else {
                    moved
                }
            }
            None if x.ndim_or_zero() == 0 => x.clone(),
            None => {
                let mut shape = vec![1];
                shape.extend_from_slice(x.shape_or_empty());
                lax::reshape(x, &shape)
            }
        })
        .collect();
    let refs: Vec<&Array> = xs.iter().collect();
    done(vec![support::bind_one(primitive, &refs)?], vec![Some(0)])
}

/// An operand that may be rank 0 next to one of `full_shape` (a select_n
/// selector, a clamp bound): an unbatched scalar stays one; otherwise it
/// gets its batch dim at 0 and the full shape [B, ...full_shape].
fn scalar_or_full(x: &Array, bdim: Option<usize>, size: i64, full_shape: &[i64]) -> Array {
    if bdim.is_none() && x.ndim_or_zero() == 0 {
        return x.clone();
    }
    let y = batch_at(x, bdim, size, 0);
    if y.ndim_or_zero() == 1 && !full_shape.is_empty() {
        let mut shape = vec![size];
        shape.extend_from_slice(full_shape);
        lax::broadcast_in_dim(&y, &shape, &[0])
    } else {
        y
    }
}

/// select_n: the cases (one shape) all get their batch dim at 0; the
/// selector stays an unbatched scalar or gets the cases' full shape.
pub(crate) fn select_n(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Some(b) = shared_bdim(args, bdims, |i| i == 0) {
        let refs: Vec<&Array> = args.iter().collect();
        return done(vec![support::bind_one(primitive, &refs)?], vec![Some(b)]);
    }
    let case_shape = unbatched_shape(&args[1], bdims[1]);
    let mut xs = vec![scalar_or_full(&args[0], bdims[0], size, &case_shape)];
    xs.extend(
        args[1..]
            .iter()
            .zip(&bdims[1..])
            .map(|(x, &bd)| batch_at(x, bd, size, 0)),
    );
    let refs: Vec<&Array> = xs.iter().collect();
    done(vec![support::bind_one(primitive, &refs)?], vec![Some(0)])
}

/// clamp(lo, x, hi): x gets its batch dim at 0; each bound stays an
/// unbatched scalar or gets x's full shape.
pub(crate) fn clamp(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
    size: i64,
) -> Result<Batched> {
    if let Some(b) = shared_bdim(args, bdims, |i| i != 1) {
        let refs: Vec<&Array> = args.iter().collect();
        return done(vec![support::bind_one(primitive, &refs)?], vec![Some(b)]);
    }
    let x_shape = unbatched_shape(&args[1], bdims[1]);
    let lo = scalar_or_full(&args[0], bdims[0], size, &x_shape);
    let x = batch_at(&args[1], bdims[1], size, 0);
    let hi = scalar_or_full(&args[2], bdims[2], size, &x_shape);
    done(
        vec![support::bind_one(primitive, &[&lo, &x, &hi])?],
        vec![Some(0)],
    )
}

/// The one index dtype of start indices (i32 when there are none; the
/// widest integer type when they differ).
pub(crate) fn index_dtype(indices: &[Array]) -> DType {
    match indices.first() {
        None => DType::I32,
        Some(first)
            if indices
                .iter()
                .all(|i| i.dtype_or_bool() == first.dtype_or_bool()) =>
        {
            first.dtype_or_bool()
        }
        Some(_) if indices.iter().any(|i| i.dtype_or_bool().byte_size() == 8) => DType::I64,
        Some(_) => DType::I32,
    }
}

/// Zeros of the outputs' types with an empty batch dim at 0 (for a batch
/// of size 0, which gathers and convolutions cannot express by reshaping).
pub(crate) fn empty_batch(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
) -> Result<Batched> {
    let avals: Vec<Aval> = args
        .iter()
        .zip(bdims)
        .map(|(x, &bd)| {
            let mut aval = x.aval()?.clone();
            aval.shape = unbatched_shape(x, bd).into_iter().collect();
            Ok(aval)
        })
        .collect::<Result<_>>()?;
    let refs: Vec<&Aval> = avals.iter().collect();
    let outs = abstract_eval(primitive, &refs)
        .map_err(|e| rule_error("vmap", primitive, e.to_string()))?;
    let outs: Vec<Array> = outs
        .iter()
        .map(|aval| {
            let mut shape = vec![0];
            shape.extend_from_slice(&aval.shape);
            zeros(&aval.with_shape(&shape))
        })
        .collect();
    let out_bdims = vec![Some(0); outs.len()];
    done(outs, out_bdims)
}

/// An exported function batched by calling it once per example (a `map`
/// over the batch axis, one loop inside the program): its module has fixed
/// shapes, so it cannot take the batch axis itself.
pub(crate) fn per_example(
    primitive: &Primitive,
    args: &[Array],
    bdims: &[Option<usize>],
) -> Result<Batched> {
    let batched: Vec<Array> = args
        .iter()
        .zip(bdims)
        .filter_map(|(x, bd)| bd.map(|d| move_axis(x, d, 0)))
        .collect();
    if batched.is_empty() {
        let refs: Vec<&Array> = args.iter().collect();
        let outs = bind_all(primitive.clone(), &refs)?;
        let n = outs.len();
        return Ok((outs, vec![None; n]));
    }
    let outs = crate::control::map(
        |slices: Vec<Array>| {
            let mut slices = slices.into_iter();
            let operands: Vec<Array> = args
                .iter()
                .zip(bdims)
                .map(|(x, bd)| match bd {
                    Some(_) => slices.next().unwrap_or_else(|| x.clone()),
                    None => x.clone(),
                })
                .collect();
            let refs: Vec<&Array> = operands.iter().collect();
            bind_all(primitive.clone(), &refs)
        },
        batched,
    )?;
    let n = outs.len();
    Ok((outs, vec![Some(0); n]))
}
