//! The jvp, transpose and batching rules of the elementwise family
//! (`oxla_core::primitive::elementwise`).
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::BatchArgs;
use crate::transform::batch_rules::{clamp, done, elementwise, same_bdim_unary, select_n};
use crate::transform::jvp_rules::JvpArgs;
use crate::transform::jvp_rules::{
    Jvp, balanced_eq, differentiable, finish, fit, lit, select, single, tangent_values, unary_rule,
    zero_jvp,
};
use crate::transform::support;
use crate::transform::support::{Tangent, add_tangents, batch_at, has_tangent, refs};
use crate::transform::transpose::Operand;
use crate::transform::transpose_rules::TransposeArgs;
use crate::transform::transpose_rules::{self, for_linear, known_at, nonlinear, not_linear};
use oxla_core::primitive::elementwise;
use oxla_core::primitive::elementwise::Op;
use oxla_core::{BinaryOp, DType, Primitive, UnaryOp};

/// Primal outputs and output tangents of a primitive of this family.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::Unary(op) => unary_rule(primitive, primals, tangents, |x, ans, t| {
            unary_tangent(*op, x, ans, t)
        })?,
        Op::Binary(op) => binary_jvp(primitive, *op, primals, tangents)?,
        Op::IntegerPow { y } => unary_rule(primitive, primals, tangents, |x, _, t| {
            Ok(integer_pow_tangent(*y, x, t))
        })?,
        // Linear: the tangent is rounded as the value is (JAX's deflinear).
        Op::ReducePrecision { .. } => unary_rule(primitive, primals, tangents, |_, _, t| {
            support::bind_one(primitive, &[t]).map(Some)
        })?,
        Op::SelectN => select_n_jvp(primitive, primals, tangents)?,
        Op::Clamp => clamp_jvp(primitive, primals, tangents)?,
        Op::ConvertElementType { new_dtype, .. } => {
            convert_jvp(primitive, *new_dtype, primals, tangents)?
        }
        Op::Compare(_) | Op::BitcastConvertType { .. } => zero_jvp(primitive, primals)?,
    };
    finish(primitive, result)
}

/// Cotangents of the operands of a primitive of this family (`ct` is the
/// first nonzero output cotangent, of shape `ct_shape`).
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs {
        primitive,
        operands,
        ct,
        ..
    } = *input;
    match op {
        Op::Unary(op) => unary(primitive, *op, ct, operands),
        Op::Binary(op) => binary(primitive, *op, ct, operands),
        Op::Compare(_) | Op::IntegerPow { .. } | Op::Clamp | Op::BitcastConvertType { .. } => {
            nonlinear(primitive, operands)
        }
        Op::SelectN => transpose_rules::select_n(primitive, ct, operands),
        Op::ConvertElementType { new_dtype, .. } => convert_element_type(*new_dtype, ct, operands),
        Op::ReducePrecision { .. } => for_linear(operands, |_, _| {
            Ok(Some(support::bind_one(primitive, &[ct])?))
        }),
    }
}

/// Batched outputs and their batch dims for a primitive of this family.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    match op {
        Op::Unary(_)
        | Op::IntegerPow { .. }
        | Op::ReducePrecision { .. }
        | Op::ConvertElementType { .. } => same_bdim_unary(primitive, args, bdims, size),
        Op::BitcastConvertType { .. } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            done(vec![support::bind_one(primitive, &[&x])?], vec![Some(0)])
        }
        Op::Binary(_) | Op::Compare(_) => elementwise(primitive, args, bdims, size),
        Op::SelectN => select_n(primitive, args, bdims, size),
        Op::Clamp => clamp(primitive, args, bdims, size),
    }
}

/// `x` where `x != 0`, else 1 (JAX's `_replace_zero`).
fn replace_zero(x: &Array) -> Result<Array> {
    let ones = support::full(x.aval()?, 1.0);
    Ok(select(&lax::eq(x, &lit(0.0, x)), &ones, x))
}

/// Zeros of `x`'s type and shape.
fn zeros_of(x: &Array) -> Result<Array> {
    Ok(support::full(x.aval()?, 0.0))
}

/// `t * coef()`, the coefficient computed only for a nonzero tangent.
fn scaled(t: Option<&Array>, coef: impl FnOnce() -> Result<Array>) -> Result<Tangent> {
    t.map(|t| Ok(lax::mul(t, &coef()?))).transpose()
}

/// The tangent of an elementwise function of one operand, from its operand
/// `x`, its result `ans` and the operand's tangent `t`.
fn unary_tangent(op: UnaryOp, x: &Array, ans: &Array, t: &Array) -> Result<Tangent> {
    use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, PI};
    let c = |v: f64| lit(v, x);
    let scale = |coef: Array| -> Result<Tangent> { Ok(Some(lax::mul(t, &coef))) };
    match op {
        UnaryOp::Sign
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::RoundNearestEven
        | UnaryOp::IsFinite
        | UnaryOp::Not
        | UnaryOp::PopulationCount
        | UnaryOp::CountLeadingZeros => Ok(None),
        UnaryOp::Neg => Ok(Some(lax::neg(t))),
        // As JAX's `_abs_jvp_rule`: real(t conj(x) / |x|) for complex x,
        // with |x| = 0 replaced by 1.
        UnaryOp::Abs if x.dtype_or_bool().is_complex() => {
            let magnitude = lax::convert_element_type(ans, x.dtype_or_bool());
            Ok(Some(lax::real(&lax::mul(
                t,
                &lax::div(&lax::conj(x), &replace_zero(&magnitude)?),
            ))))
        }
        UnaryOp::Abs => Ok(Some(select(&lax::ge(x, &c(0.0)), t, &lax::neg(t)))),
        UnaryOp::Real => Ok(Some(lax::real(t))),
        UnaryOp::Imag => Ok(Some(lax::imag(t))),
        UnaryOp::Conj => Ok(Some(lax::conj(t))),
        UnaryOp::Exp => scale(ans.clone()),
        UnaryOp::Exp2 => scale(lax::mul(ans, &c(LN_2))),
        UnaryOp::Expm1 => scale(lax::add(ans, &c(1.0))),
        UnaryOp::Log => Ok(Some(lax::div(t, x))),
        UnaryOp::Log1p => Ok(Some(lax::div(t, &lax::add(x, &c(1.0))))),
        UnaryOp::Sqrt => scale(lax::div(&c(0.5), ans)),
        UnaryOp::Rsqrt => scale(lax::mul(&c(-0.5), &lax::div(ans, x))),
        UnaryOp::Cbrt => scale(lax::mul(&c(1.0 / 3.0), &lax::integer_pow(ans, -2))),
        UnaryOp::Tanh => scale(lax::mul(&lax::add(&c(1.0), ans), &lax::sub(&c(1.0), ans))),
        UnaryOp::Logistic => scale(lax::mul(ans, &lax::sub(&c(1.0), ans))),
        UnaryOp::Sin => scale(lax::cos(x)),
        UnaryOp::Cos => scale(lax::neg(&lax::sin(x))),
        UnaryOp::Tan => scale(lax::add(&c(1.0), &lax::square(ans))),
        UnaryOp::Asin => scale(lax::rsqrt(&lax::sub(&c(1.0), &lax::square(x)))),
        UnaryOp::Acos => scale(lax::neg(&lax::rsqrt(&lax::sub(&c(1.0), &lax::square(x))))),
        UnaryOp::Atan => Ok(Some(lax::div(t, &lax::add(&c(1.0), &lax::square(x))))),
        UnaryOp::Sinh => scale(lax::cosh(x)),
        UnaryOp::Cosh => scale(lax::sinh(x)),
        UnaryOp::Asinh => scale(lax::rsqrt(&lax::add(&lax::square(x), &c(1.0)))),
        // As JAX: x² - 1 rather than (x - 1)(x + 1) (the domain is x >= 1).
        UnaryOp::Acosh => scale(lax::rsqrt(&lax::sub(&lax::square(x), &c(1.0)))),
        UnaryOp::Atanh => {
            let reciprocal = lax::div(&c(1.0), &lax::add(&c(1.0), x));
            Ok(Some(lax::mul(
                &lax::div(t, &lax::sub(&c(1.0), x)),
                &reciprocal,
            )))
        }
        UnaryOp::Erf | UnaryOp::Erfc => {
            let sign = if op == UnaryOp::Erf { 1.0 } else { -1.0 };
            let gauss = lax::exp(&lax::neg(&lax::square(x)));
            scale(lax::mul(&c(sign * FRAC_2_SQRT_PI), &gauss))
        }
        UnaryOp::ErfInv => scale(lax::mul(&c(PI.sqrt() / 2.0), &lax::exp(&lax::square(ans)))),
        UnaryOp::Lgamma => scale(lax::digamma(x)),
        UnaryOp::Digamma => scale(lax::polygamma(&support::full(x.aval()?, 1.0), x)),
        UnaryOp::Square => scale(lax::mul(&c(2.0), x)),
        UnaryOp::BesselI0e => scale(lax::sub(&lax::bessel_i1e(x), &lax::mul(&lax::sign(x), ans))),
        UnaryOp::BesselI1e => {
            // As JAX: d/dx at |x| <= eps is its limit 1/2.
            let eps = c(eps_value(x));
            let not_tiny = lax::gt(&lax::abs(x), &eps);
            let safe_x = select(&not_tiny, x, &support::full(x.aval()?, eps_value(x)));
            let slope = lax::sub(
                &lax::bessel_i0e(&safe_x),
                &lax::mul(
                    ans,
                    &lax::add(&lax::sign(&safe_x), &lax::integer_pow(&safe_x, -1)),
                ),
            );
            scale(select(&not_tiny, &slope, &support::full(x.aval()?, 0.5)))
        }
    }
}

/// The float epsilon of `x`'s dtype.
fn eps_value(x: &Array) -> f64 {
    x.dtype_or_bool().epsilon().unwrap_or(0.0)
}

/// The tangent of `x ^ y` for a constant integer `y`.
fn integer_pow_tangent(y: i32, x: &Array, t: &Array) -> Tangent {
    match y {
        0 => None,
        1 => Some(t.clone()),
        2 => Some(lax::mul(t, &lax::mul(&lit(2.0, x), x))),
        _ => Some(lax::mul(
            t,
            &lax::mul(&lit(f64::from(y), x), &lax::integer_pow(x, y - 1)),
        )),
    }
}

/// The jvp of an elementwise function of two operands (which may broadcast:
/// the tangent always has the output's shape).
fn binary_jvp(
    primitive: &Primitive,
    op: BinaryOp,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let ans = support::bind_one(primitive, &refs(primals))?;
    let ([x, y], [tx, ty]) = (primals, tangents) else {
        return Ok(single(ans, None));
    };
    if !differentiable(&ans, tangents) {
        return Ok(single(ans, None));
    }
    let tangent = binary_tangent(op, x, y, &ans, tx.as_ref(), ty.as_ref())?;
    let shape = ans.shape_or_empty().to_vec();
    Ok(single(ans, tangent.map(|t| fit(&t, &shape))))
}

/// The tangent of `op(x, y) = ans` (possibly of a broadcastable shape).
fn binary_tangent(
    op: BinaryOp,
    x: &Array,
    y: &Array,
    ans: &Array,
    tx: Option<&Array>,
    ty: Option<&Array>,
) -> Result<Tangent> {
    Ok(match op {
        BinaryOp::Add => add_tangents(tx.cloned(), ty.cloned()),
        BinaryOp::Sub => add_tangents(tx.cloned(), ty.map(lax::neg)),
        BinaryOp::Mul => add_tangents(scaled(tx, || Ok(y.clone()))?, scaled(ty, || Ok(x.clone()))?),
        // Associated as JAX's rule, `(-t x) y^-2`: where y^-2 overflows,
        // the order decides between a signed infinity and NaN.
        BinaryOp::Div => add_tangents(
            tx.map(|t| lax::div(t, y)),
            ty.map(|t| lax::mul(&lax::mul(&lax::neg(t), x), &lax::integer_pow(y, -2))),
        ),
        BinaryOp::Rem => add_tangents(
            tx.cloned(),
            scaled(ty, || {
                // -trunc(x / y)
                let q = lax::div(x, y);
                Ok(lax::neg(&lax::mul(
                    &lax::sign(&q),
                    &lax::floor(&lax::abs(&q)),
                )))
            })?,
        ),
        BinaryOp::Pow => add_tangents(
            scaled(tx, || pow_base_coef(x, y))?,
            scaled(ty, || Ok(lax::mul(&lax::log(&replace_zero(x)?), ans)))?,
        ),
        BinaryOp::Max | BinaryOp::Min => add_tangents(
            scaled(tx, || Ok(balanced_eq(x, ans, y)))?,
            scaled(ty, || Ok(balanced_eq(y, ans, x)))?,
        ),
        // Linear in both parts: complex(tx, ty), a missing tangent zero.
        BinaryOp::Complex => match (tx, ty) {
            (None, None) => None,
            (tx, ty) => {
                let part = |t: Option<&Array>, like: &Array| -> Result<Array> {
                    t.cloned().map_or_else(|| zeros_of(like), Ok)
                };
                let (re, im) = (part(tx, x)?, part(ty, y)?);
                Some(lax::complex(&re, &im))
            }
        },
        BinaryOp::Atan2 => {
            let denominator = lax::add(&lax::square(x), &lax::square(y));
            add_tangents(
                scaled(tx, || Ok(lax::div(y, &denominator)))?,
                scaled(ty, || Ok(lax::div(&lax::neg(x), &denominator)))?,
            )
        }
        BinaryOp::Zeta => {
            return Err(support::rule_error(
                "jvp",
                &Primitive::Elementwise(elementwise::Op::Binary(op)),
                "zeta has no derivative rule (as in JAX)",
            ));
        }
        BinaryOp::Polygamma => {
            if tx.is_some() {
                return Err(support::rule_error(
                    "jvp",
                    &Primitive::Elementwise(elementwise::Op::Binary(op)),
                    "polygamma is not differentiable in its order m (as in JAX)",
                ));
            }
            scaled(ty, || Ok(lax::polygamma(&lax::add(x, &lit(1.0, x)), y)))?
        }
        BinaryOp::NextAfter
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => None,
    })
}

/// d(x^y)/dx = y x^(y-1), as JAX's `_pow_jvp_lhs` for a float exponent
/// (`pow`'s operands share one dtype, so a differentiable one is float):
/// no special case at y == 0, so that d/dy of it is ln(x) x^(y-1) + ...
/// there (a symmetric hessian), and 0 · 0^-1 = NaN at x == y == 0, as in
/// JAX. Static integer exponents are `integer_pow`, with its own rule.
fn pow_base_coef(x: &Array, y: &Array) -> Result<Array> {
    Ok(lax::mul(y, &lax::pow(x, &lax::sub(y, &lit(1.0, y)))))
}

/// `select_n`: the same selection of the case tangents.
fn select_n_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let (Some((which, cases)), Some((_, case_tangents))) =
        (primals.split_first(), tangents.split_first())
    else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, case_tangents) {
        return Ok(single(out, None));
    }
    let case_tangents = cases
        .iter()
        .zip(case_tangents)
        .map(|(p, t)| tangent_values(t, p))
        .collect::<Result<Vec<_>>>()?;
    let mut operands = vec![which];
    operands.extend(case_tangents.iter());
    let tangent = support::bind_one(primitive, &operands)?;
    Ok(single(out, Some(tangent)))
}

/// `clamp(lo, x, hi)`: each operand's tangent where it is the result (as
/// JAX: strictly inside for `x`, none of them on a tie with `lo`).
fn clamp_jvp(primitive: &Primitive, primals: &[Array], tangents: &[Tangent]) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let ([lo, x, hi], [t_lo, t_x, t_hi]) = (primals, tangents) else {
        return Ok(single(out, None));
    };
    if !differentiable(&out, tangents) {
        return Ok(single(out, None));
    }
    let shape = out.shape_or_empty().to_vec();
    let keep = |t: &Tangent, pred: &dyn Fn() -> Array| -> Result<Tangent> {
        t.as_ref()
            .map(|t| {
                let t = fit(t, &shape);
                let zeros = support::zeros(t.aval()?);
                Ok(select(&pred(), &t, &zeros))
            })
            .transpose()
    };
    let from_lo = keep(t_lo, &|| lax::and(&lax::gt(lo, x), &lax::lt(lo, hi)))?;
    let from_x = keep(t_x, &|| lax::and(&lax::gt(x, lo), &lax::lt(x, hi)))?;
    let from_hi = keep(t_hi, &|| lax::lt(hi, x))?;
    Ok(single(
        out,
        add_tangents(add_tangents(from_lo, from_x), from_hi),
    ))
}

/// `convert_element_type`: the tangent converted between float types; no
/// tangent to or from integers and bools.
fn convert_jvp(
    primitive: &Primitive,
    new_dtype: DType,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<Jvp> {
    let out = support::bind_one(primitive, &refs(primals))?;
    let mut tangent = None;
    if let (Some(x), Some(Some(t))) = (primals.first(), tangents.first())
        && has_tangent(x.dtype_or_bool())
        && has_tangent(new_dtype)
    {
        tangent = Some(support::bind_one(primitive, &[t])?);
    }
    Ok(single(out, tangent))
}

/// Unary ops: only `neg` is linear (its transpose is `-ct`).
fn unary(
    primitive: &Primitive,
    op: UnaryOp,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        UnaryOp::Neg => for_linear(operands, |_, _| Ok(Some(lax::neg(ct)))),
        // JAX's transposes: real's is complex(ct, 0), imag's complex(0, -ct),
        // conj's conj(ct).
        UnaryOp::Real => for_linear(operands, |_, _| Ok(Some(lax::complex(ct, &zeros_of(ct)?)))),
        UnaryOp::Imag => for_linear(operands, |_, _| {
            Ok(Some(lax::complex(&zeros_of(ct)?, &lax::neg(ct))))
        }),
        UnaryOp::Conj => for_linear(operands, |_, _| Ok(Some(lax::conj(ct)))),
        UnaryOp::Sign
        | UnaryOp::Abs
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::RoundNearestEven
        | UnaryOp::Exp
        | UnaryOp::Exp2
        | UnaryOp::Expm1
        | UnaryOp::Log
        | UnaryOp::Log1p
        | UnaryOp::Sqrt
        | UnaryOp::Rsqrt
        | UnaryOp::Cbrt
        | UnaryOp::Tanh
        | UnaryOp::Logistic
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Asin
        | UnaryOp::Acos
        | UnaryOp::Atan
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh
        | UnaryOp::Erf
        | UnaryOp::Erfc
        | UnaryOp::ErfInv
        | UnaryOp::Lgamma
        | UnaryOp::Digamma
        | UnaryOp::Square
        | UnaryOp::IsFinite
        | UnaryOp::Not
        | UnaryOp::PopulationCount
        | UnaryOp::CountLeadingZeros
        | UnaryOp::BesselI0e
        | UnaryOp::BesselI1e => nonlinear(primitive, operands),
    }
}

/// Binary ops: `add` and `sub` in both operands, `mul` in one of them,
/// `div` in its numerator (JAX's `_add_transpose`, `_sub_transpose`,
/// `_mul_transpose_*`, `_div_transpose_rule`); cotangents are summed down
/// to operands that were implicitly broadcast.
fn binary(
    primitive: &Primitive,
    op: BinaryOp,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    match op {
        BinaryOp::Add => for_linear(operands, |_, a| Ok(Some(support::unbroadcast(ct, a)))),
        BinaryOp::Sub => for_linear(operands, |i, a| {
            Ok(Some(if i == 0 {
                support::unbroadcast(ct, a)
            } else {
                support::unbroadcast(&lax::neg(ct), a)
            }))
        }),
        BinaryOp::Mul => match operands {
            [Operand::Linear(x), Operand::Known(y)] => {
                Ok(vec![Some(support::unbroadcast(&lax::mul(ct, y), x)), None])
            }
            [Operand::Known(x), Operand::Linear(y)] => {
                Ok(vec![None, Some(support::unbroadcast(&lax::mul(x, ct), y))])
            }
            [Operand::Linear(_), Operand::Linear(_)] => Err(not_linear(primitive, 1)),
            _ => nonlinear(primitive, operands),
        },
        BinaryOp::Div => {
            let y = known_at(primitive, operands, 1)?;
            for_linear(operands, |_, a| {
                Ok(Some(support::unbroadcast(&lax::div(ct, y), a)))
            })
        }
        // JAX's: [real(ct), imag(-ct)].
        BinaryOp::Complex => for_linear(operands, |i, a| {
            let part = if i == 0 {
                lax::real(ct)
            } else {
                lax::imag(&lax::neg(ct))
            };
            Ok(Some(support::unbroadcast(&part, a)))
        }),
        BinaryOp::Rem
        | BinaryOp::Polygamma
        | BinaryOp::Zeta
        | BinaryOp::Pow
        | BinaryOp::Max
        | BinaryOp::Min
        | BinaryOp::Atan2
        | BinaryOp::NextAfter
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => nonlinear(primitive, operands),
    }
}

/// `convert_element_type` between float types: the cotangent converted
/// back to the operand's dtype and weak type; conversions from or to a
/// type without tangents have a zero cotangent.
fn convert_element_type(
    new_dtype: DType,
    ct: &Array,
    operands: &[Operand],
) -> Result<Vec<Tangent>> {
    for_linear(operands, |_, a| {
        Ok((a.dtype.is_inexact() && new_dtype.is_inexact())
            .then(|| lax::convert_element_type_weak(ct, a.dtype, a.weak_type)))
    })
}
