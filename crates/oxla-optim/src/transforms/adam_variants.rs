//! Variants of Adam's moment estimates: AdaMax (an infinity-norm second
//! moment), RAdam (a rectified second moment), AdaBelief (the second moment
//! of the gradient's deviation from its mean) and Lion (the sign of an
//! interpolated momentum).

use oxla::Array;
use oxla::DType;
use oxla::Result;
use oxla::lax;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map_named};

use super::{
    AdamState, GradientTransformation, bias_corrected, ema_update, first_moment_hat,
    safe_increment, squared_ema_update, zero_count, zeros_like_tree,
};

/// A fresh [`AdamState`] for `params`.
fn adam_like_state<P: Pytree>(params: &P) -> AdamState<P> {
    AdamState {
        count: zero_count(),
        mu: zeros_like_tree(params),
        nu: zeros_like_tree(params),
    }
}

/// Rescales updates by AdaMax's bias-corrected first moment over an
/// exponentially weighted infinity norm of the gradients
/// (`optax.scale_by_adamax`); its state is an [`AdamState`] whose `nu` is
/// that norm.
#[derive(Debug, Clone, Copy)]
pub struct ScaleByAdamax {
    /// Decay of the first moment.
    pub b1: f64,
    /// Decay of the infinity norm.
    pub b2: f64,
    /// Added to `|g|` in the infinity norm.
    pub eps: f64,
}

/// `optax.scale_by_adamax(b1, b2, eps)`.
pub fn scale_by_adamax(b1: f64, b2: f64, eps: f64) -> ScaleByAdamax {
    ScaleByAdamax { b1, b2, eps }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByAdamax {
    type State = AdamState<P>;

    fn init(&self, params: &P) -> AdamState<P> {
        adam_like_state(params)
    }

    fn update(&self, updates: P, state: AdamState<P>, _: &P) -> Result<(P, AdamState<P>)> {
        let (b1, b2, eps) = (self.b1, self.b2, self.eps);
        let count = safe_increment(&state.count);
        let mu = tree_map_named("scale_by_adamax", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], b1)
        })?;
        let nu = tree_map_named("scale_by_adamax", &[&updates, &state.nu], |l| {
            jnp::maximum(&(jnp::abs(l[0]) + eps), &(l[1] * b2))
        })?;
        let updates = tree_map_named("scale_by_adamax", &[&mu, &nu], |l| {
            bias_corrected(l[0], b1, &count) / l[1]
        })?;
        Ok((updates, AdamState { count, mu, nu }))
    }
}

/// Rectified Adam: Adam's update scaled by the rectification `r_t` once the
/// approximated length of the second moment's moving average, `ro_t`,
/// reaches `threshold`, and the bias-corrected first moment alone before
/// (`optax.scale_by_radam`); its state is an [`AdamState`].
#[derive(Debug, Clone, Copy)]
pub struct ScaleByRadam {
    /// Decay of the first moment.
    pub b1: f64,
    /// Decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment inside the root.
    pub eps_root: f64,
    /// The `ro_t` from which the rectified update is used.
    pub threshold: f64,
    /// Nesterov's momentum: the first moment looks one step ahead.
    pub nesterov: bool,
}

/// `optax.scale_by_radam(b1, b2, eps)` (Optax's threshold 5, no `eps_root`,
/// no Nesterov; set the fields for those).
pub fn scale_by_radam(b1: f64, b2: f64, eps: f64) -> ScaleByRadam {
    ScaleByRadam {
        b1,
        b2,
        eps,
        eps_root: 0.0,
        threshold: 5.0,
        nesterov: false,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByRadam {
    type State = AdamState<P>;

    fn init(&self, params: &P) -> AdamState<P> {
        adam_like_state(params)
    }

    fn update(&self, updates: P, state: AdamState<P>, _: &P) -> Result<(P, AdamState<P>)> {
        let (b1, b2) = (self.b1, self.b2);
        let ro_inf = 2.0 / (1.0 - b2) - 1.0;
        let mu = tree_map_named("scale_by_radam", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], b1)
        })?;
        let nu = tree_map_named("scale_by_radam", &[&updates, &state.nu], |l| {
            squared_ema_update(l[0], l[1], b2)
        })?;
        let count = safe_increment(&state.count);
        // ro_t = ro_inf - 2 t b2^t / (1 - b2^t), in f32 as Optax computes it.
        let b2t = jnp::power(
            &lax::convert_element_type(&Array::weak_scalar(b2), DType::F32),
            &lax::convert_element_type(&count, DType::F32),
        );
        let ro = ro_inf - (&count * 2) * &b2t / (1.0 - &b2t);
        // r_t = sqrt((ro - 4)(ro - 2) ro_inf / ((ro_inf - 4)(ro_inf - 2) ro)).
        let r = jnp::sqrt(
            &(((&ro - 4.0) * (&ro - 2.0) * ro_inf) / (&ro * ((ro_inf - 4.0) * (ro_inf - 2.0)))),
        );
        let rectify = jnp::greater_equal(&ro, &Array::weak_scalar(self.threshold));
        let updates = tree_map_named("scale_by_radam", &[&mu, &nu, &updates], |l| {
            let mu_hat = first_moment_hat(l[0], l[2], b1, &count, self.nesterov);
            let nu_hat = bias_corrected(l[1], b2, &count);
            let r = lax::convert_element_type(&r, mu_hat.dtype_or_bool());
            let rectified = (r * &mu_hat) / (jnp::sqrt(&(nu_hat + self.eps_root)) + self.eps);
            jnp::where_(&rectify, &rectified, &mu_hat)
        })?;
        Ok((updates, AdamState { count, mu, nu }))
    }
}

/// AdaBelief: Adam whose second moment is that of the gradient's deviation
/// from its running mean (the "belief"), plus `eps_root` each step
/// (`optax.scale_by_belief`); its state is an [`AdamState`] whose `nu` is
/// that moment.
#[derive(Debug, Clone, Copy)]
pub struct ScaleByBelief {
    /// Decay of the first moment.
    pub b1: f64,
    /// Decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment at every step (and kept in the state).
    pub eps_root: f64,
    /// Nesterov's momentum: the first moment looks one step ahead.
    pub nesterov: bool,
}

/// `optax.scale_by_belief(b1, b2, eps, eps_root)` (no Nesterov; set the
/// field for that).
pub fn scale_by_belief(b1: f64, b2: f64, eps: f64, eps_root: f64) -> ScaleByBelief {
    ScaleByBelief {
        b1,
        b2,
        eps,
        eps_root,
        nesterov: false,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByBelief {
    type State = AdamState<P>;

    fn init(&self, params: &P) -> AdamState<P> {
        adam_like_state(params)
    }

    fn update(&self, updates: P, state: AdamState<P>, _: &P) -> Result<(P, AdamState<P>)> {
        let (b1, b2) = (self.b1, self.b2);
        let mu = tree_map_named("scale_by_belief", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], b1)
        })?;
        let nu = tree_map_named("scale_by_belief", &[&updates, &mu, &state.nu], |l| {
            let prediction_error = l[0] - l[1];
            squared_ema_update(&prediction_error, l[2], b2) + self.eps_root
        })?;
        let count = safe_increment(&state.count);
        let updates = tree_map_named("scale_by_belief", &[&mu, &nu, &updates], |l| {
            let mu_hat = first_moment_hat(l[0], l[2], b1, &count, self.nesterov);
            let nu_hat = bias_corrected(l[1], b2, &count);
            mu_hat / (jnp::sqrt(&nu_hat) + self.eps)
        })?;
        Ok((updates, AdamState { count, mu, nu }))
    }
}

/// State of [`ScaleByLion`]: the step count and the momentum.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct LionState<P: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// The momentum (a running mean of gradients with decay `b2`).
    pub mu: P,
}

/// Lion: the sign of `(1 - b1) g + b1 mu`, then the momentum `mu` decays
/// with `b2` (`optax.scale_by_lion`).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByLion {
    /// Interpolation between gradient and momentum in the update.
    pub b1: f64,
    /// Decay of the momentum.
    pub b2: f64,
}

/// `optax.scale_by_lion(b1, b2)`.
pub fn scale_by_lion(b1: f64, b2: f64) -> ScaleByLion {
    ScaleByLion { b1, b2 }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByLion {
    type State = LionState<P>;

    fn init(&self, params: &P) -> LionState<P> {
        LionState {
            count: zero_count(),
            mu: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: LionState<P>, _: &P) -> Result<(P, LionState<P>)> {
        let (b1, b2) = (self.b1, self.b2);
        let signs = tree_map_named("scale_by_lion", &[&updates, &state.mu], |l| {
            jnp::sign(&ema_update(l[0], l[1], b1))
        })?;
        let mu = tree_map_named("scale_by_lion", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], b2)
        })?;
        let count = safe_increment(&state.count);
        Ok((signs, LionState { count, mu }))
    }
}
