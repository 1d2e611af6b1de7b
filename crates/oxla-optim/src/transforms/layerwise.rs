//! Per-leaf (layer-wise) scalings: the trust ratio of LAMB and LARS, and
//! NovoGrad's second moment of each leaf's gradient norm.

use oxla::Array;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named};

use super::{GradientTransformation, ema_update, safe_increment, zero_count, zeros_like_tree};

/// The L2 norm of all of `x`, or `min_norm` where that is at most
/// `min_norm` (Optax's `safe_norm`, whose gradient stays finite at 0).
fn safe_norm(x: &Array, min_norm: f64) -> Array {
    let norm = jnp::linalg::norm(x, None, None, true);
    let small = jnp::less_equal(&norm, &Array::weak_scalar(min_norm));
    let x = jnp::where_(&small, &jnp::ones_like(x), x);
    let norm = jnp::squeeze(&norm, None);
    let masked_norm = jnp::linalg::norm(&x, None, None, false);
    let small = jnp::less_equal(&norm, &Array::weak_scalar(min_norm));
    jnp::where_(&small, &Array::weak_scalar(min_norm), &masked_norm)
}

/// Scales each leaf's update by its trust ratio,
/// `trust_coefficient * ‖param‖ / (‖update‖ + eps)` (norms at least
/// `min_norm`), or 1 where either norm is 0 (`optax.scale_by_trust_ratio`,
/// as LAMB and LARS use it).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByTrustRatio {
    /// The smallest norm used (`safe_norm`'s floor).
    pub min_norm: f64,
    /// Multiplies the ratio.
    pub trust_coefficient: f64,
    /// Added to the update's norm.
    pub eps: f64,
}

/// `optax.scale_by_trust_ratio(min_norm, trust_coefficient, eps)`; Optax's
/// defaults are `(0.0, 1.0, 0.0)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[3.0f32, 4.0], &[2])?;     // norm 5
/// let u = Array::from_slice(&[0.5f32, 0.0], &[2])?;          // norm 0.5
/// let (u, ()) = optim::scale_by_trust_ratio(0.0, 1.0, 0.0).update(u, (), &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![5.0, 0.0]);            // rescaled to the params' norm
/// # Ok(())
/// # }
/// ```
pub fn scale_by_trust_ratio(min_norm: f64, trust_coefficient: f64, eps: f64) -> ScaleByTrustRatio {
    ScaleByTrustRatio {
        min_norm,
        trust_coefficient,
        eps,
    }
}

impl<P: Pytree> GradientTransformation<P> for ScaleByTrustRatio {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), params: &P) -> Result<(P, ())> {
        let updates = tree_map_named("scale_by_trust_ratio", &[&updates, params], |l| {
            let (update, param) = (l[0], l[1]);
            let param_norm = safe_norm(param, self.min_norm);
            let update_norm = safe_norm(update, self.min_norm);
            let trust_ratio = (&param_norm * self.trust_coefficient) / (&update_norm + self.eps);
            let zero = Array::weak_scalar(0.0);
            let zero_norm = jnp::logical_or(
                &jnp::equal(&param_norm, &zero),
                &jnp::equal(&update_norm, &zero),
            );
            let one = jnp::ones_like(&param_norm).astype(param.dtype_or_bool());
            update * &jnp::where_(&zero_norm, &one, &trust_ratio)
        })?;
        Ok((updates, state))
    }
}

/// State of [`ScaleByNovograd`]: the step count, the momentum and each
/// leaf's second moment (a scalar per leaf).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct NovogradState<P: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// The momentum of normalized gradients (plus weight decay).
    pub mu: P,
    /// Each leaf's running mean of its squared gradient norm (scalars).
    pub nu: P,
}

/// NovoGrad: a layer-wise second moment `nu` of each leaf's squared
/// gradient norm, and momentum over gradients normalized by it, plus
/// `weight_decay * params`; the first step sets both from the gradients
/// alone (`optax.scale_by_novograd`).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByNovograd {
    /// Momentum factor (the first moment is `b1 * mu + normalized`).
    pub b1: f64,
    /// Decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment inside the root.
    pub eps_root: f64,
    /// Times the parameters, added to the normalized gradients.
    pub weight_decay: f64,
}

/// `optax.scale_by_novograd(b1, b2, eps, eps_root, weight_decay)`; Optax's
/// defaults are `(0.9, 0.25, 1e-8, 0.0, 0.0)`.
pub fn scale_by_novograd(
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
) -> ScaleByNovograd {
    ScaleByNovograd {
        b1,
        b2,
        eps,
        eps_root,
        weight_decay,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByNovograd {
    type State = NovogradState<P>;

    fn init(&self, params: &P) -> NovogradState<P> {
        NovogradState {
            count: zero_count(),
            mu: zeros_like_tree(params),
            nu: tree_map(params, |p| jnp::zeros(&[], p.dtype_or_bool()))
                .expect("a tree rebuilds from its own leaves"),
        }
    }

    fn update(
        &self,
        updates: P,
        state: NovogradState<P>,
        params: &P,
    ) -> Result<(P, NovogradState<P>)> {
        let (b1, b2) = (self.b1, self.b2);
        let count = safe_increment(&state.count);
        // Optax's `lax.cond(count == 1, init, update)`, both sides computed.
        let first = jnp::equal(&count, &Array::weak_scalar(1i32));
        let nu = tree_map_named("scale_by_novograd", &[&updates, &state.nu], |l| {
            let norm = jnp::linalg::norm(l[0], None, None, false);
            let squared_norm = &norm * &norm;
            let initial = squared_norm.astype(l[1].dtype_or_bool());
            jnp::where_(&first, &initial, &ema_update(&squared_norm, l[1], b2))
        })?;
        let mu = tree_map_named(
            "scale_by_novograd",
            &[&updates, params, &state.mu, &nu],
            |l| {
                let normalized = l[0] / (jnp::sqrt(&(l[3] + self.eps_root)) + self.eps)
                    + l[1] * self.weight_decay;
                let momentum = l[2] * b1 + &normalized;
                jnp::where_(&first, &normalized, &momentum)
            },
        )?;
        Ok((mu.clone(), NovogradState { count, mu, nu }))
    }
}
