//! `jnp.tile`: an array repeated along each dim.

use crate::array::Array;
use crate::lax;

/// `x` repeated `reps[i]` times along dim `i`, as `jnp.tile`: the shorter of
/// `x.shape` and `reps` is padded with leading 1s.
#[track_caller]
pub fn tile(x: &Array, reps: &[i64]) -> Array {
    let shape = x.shape_or_empty();
    let rank = shape.len().max(reps.len());
    let padded = |s: &[i64]| -> Vec<i64> {
        let mut p = vec![1; rank - s.len()];
        p.extend_from_slice(s);
        p
    };
    let (shape, reps) = (padded(shape), padded(reps));
    // [1, d0, 1, d1, ...] broadcast to [r0, d0, r1, d1, ...], then merged.
    let spread: Vec<i64> = shape.iter().flat_map(|&d| [1, d]).collect();
    let repeated: Vec<i64> = reps
        .iter()
        .zip(&shape)
        .flat_map(|(&r, &d)| [r, d])
        .collect();
    let merged: Vec<i64> = reps.iter().zip(&shape).map(|(r, d)| r * d).collect();
    let spread = lax::reshape(x, &spread);
    let kept: Vec<i64> = (0..repeated.len() as i64).collect();
    lax::reshape(&lax::broadcast_in_dim(&spread, &repeated, &kept), &merged)
}
