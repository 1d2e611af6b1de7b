//! `jnp.logaddexp`: `log(exp(x) + exp(y))` without overflow, with JAX's
//! derivative rule.

use std::sync::LazyLock;

use super::{broadcast_ranks, promote_args, to_inexact};
use crate::array::Array;
use crate::custom::{CustomJvp, custom_jvp};
use crate::lax;

type Pair = (Array, Array);

/// logaddexp as a function with a custom jvp rule.
type WithRule = CustomJvp<Pair, Array, fn(Pair) -> Array>;

/// logaddexp with JAX's jvp: `t1 exp(x1 - out) + t2 exp(x2 - out)`, with
/// +inf replaced by 0 in the exponents (so that two +inf arguments give a
/// finite slope).
static LOGADDEXP: LazyLock<WithRule> = LazyLock::new(|| {
    custom_jvp(
        (|(x, y): Pair| value(&x, &y)) as fn(Pair) -> Array,
        |(x, y): Pair, (tx, ty): Pair| {
            let out = value(&x, &y);
            let slope = |v: &Array| {
                lax::exp(&lax::sub(
                    &positive_infinity_to_zero(v),
                    &positive_infinity_to_zero(&out),
                ))
            };
            let tangent = lax::add(&lax::mul(&tx, &slope(&x)), &lax::mul(&ty, &slope(&y)));
            (out, tangent)
        },
    )
});

/// `max(x, y) + log1p(exp(-|x - y|))`, or `x + y` where `x - y` is NaN (a
/// NaN, or infinities of the same sign).
fn value(x: &Array, y: &Array) -> Array {
    let delta = lax::sub(x, y);
    let spread = lax::add(
        &lax::max(x, y),
        &lax::log1p(&lax::exp(&lax::neg(&lax::abs(&delta)))),
    );
    let nan = lax::ne(&delta, &delta);
    lax::select_n(&nan, &[&spread, &lax::add(x, y)])
}

/// `v` with +inf replaced by 0 (JAX's `_replace_inf`).
fn positive_infinity_to_zero(v: &Array) -> Array {
    let infinite = lax::eq(v, &Array::weak_scalar(f32::INFINITY));
    lax::select_n(&infinite, &[v, &super::zeros_like(v)])
}

/// `log(exp(x) + exp(y))` without overflow, as `jnp.logaddexp`: computed as
/// `max(x, y) + log1p(exp(-|x - y|))`, with JAX's derivative rule.
/// Integers as floats.
#[track_caller]
pub fn logaddexp(x: &Array, y: &Array) -> Array {
    let v = promote_args(&[x, y]);
    let v = broadcast_ranks(vec![to_inexact(&v[0]), to_inexact(&v[1])]);
    LOGADDEXP
        .call((v[0].clone(), v[1].clone()))
        .unwrap_or_else(Array::error)
}
