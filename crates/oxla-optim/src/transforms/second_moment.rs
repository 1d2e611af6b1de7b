//! Rescaling by running averages or sums of squared gradients, without a
//! first-moment estimate: RMSProp's (plain and centered), AdaGrad's and
//! AdaDelta's.

use oxla::Array;
use oxla::Result;
use oxla::lax;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map_named};

use super::{
    GradientTransformation, bias_corrected, ema_update, full_like_tree, safe_increment,
    squared_ema_update, zero_count, zeros_like_tree,
};

/// `1 / sqrt(nu + eps)` with `eps_in_sqrt`, else `1 / (sqrt(nu) + eps)`.
fn inverse_root(nu: &Array, eps: f64, eps_in_sqrt: bool) -> Array {
    if eps_in_sqrt {
        lax::rsqrt(&(nu + eps))
    } else {
        1.0 / (jnp::sqrt(nu) + eps)
    }
}

/// The step count after this update: `Some(count + 1)` with bias
/// correction, `None` without; an error when the state has no count to
/// correct with.
fn next_count(what: &str, bias_correction: bool, count: Option<Array>) -> Result<Option<Array>> {
    match (bias_correction, count) {
        (false, _) => Ok(None),
        (true, Some(count)) => Ok(Some(safe_increment(&count))),
        (true, None) => Err(oxla::Error::InvalidArgument(format!(
            "{what}: bias correction needs the state's step count; this state came from a \
             transformation without bias correction"
        ))),
    }
}

/// State of [`ScaleByRms`]: the step count (with bias correction only) and
/// the running mean of squared gradients.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct RmsState<P: Pytree> {
    /// Steps taken (`int32`), kept only with bias correction.
    pub count: Option<Array>,
    /// Running mean of squared gradients.
    pub nu: P,
}

/// Divides updates by the root of a running mean of their squares
/// (`optax.scale_by_rms`, RMSProp's rescaling).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByRms {
    /// Decay of the mean of squares.
    pub decay: f64,
    /// Added to the mean of squares (inside the root with `eps_in_sqrt`,
    /// to the root otherwise).
    pub eps: f64,
    /// Initial value of the mean of squares.
    pub initial_scale: f64,
    /// Whether `eps` goes inside the root (Optax's default) or is added to
    /// it.
    pub eps_in_sqrt: bool,
    /// Whether to divide the mean by `1 - decay^count` (as Adam does).
    pub bias_correction: bool,
}

/// `optax.scale_by_rms(decay, eps, initial_scale)` (eps inside the root,
/// no bias correction; set the fields for those).
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[2.0f32], &[1])?;
/// let rms = optim::scale_by_rms(0.75, 0.0, 0.0);
/// let (u, _) = rms.update(g.clone(), rms.init(&g), &g)?;
/// // nu = 0.25 · 4 = 1, so the update is 2 / √1.
/// assert_eq!(u.to_vec::<f32>()?, vec![2.0]);
/// # Ok(())
/// # }
/// ```
pub fn scale_by_rms(decay: f64, eps: f64, initial_scale: f64) -> ScaleByRms {
    ScaleByRms {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt: true,
        bias_correction: false,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByRms {
    type State = RmsState<P>;

    fn init(&self, params: &P) -> RmsState<P> {
        RmsState {
            count: self.bias_correction.then(zero_count),
            nu: full_like_tree(params, self.initial_scale),
        }
    }

    fn update(&self, updates: P, state: RmsState<P>, _: &P) -> Result<(P, RmsState<P>)> {
        let decay = self.decay;
        let nu = tree_map_named("scale_by_rms", &[&updates, &state.nu], |l| {
            squared_ema_update(l[0], l[1], decay)
        })?;
        let count = next_count("scale_by_rms", self.bias_correction, state.count)?;
        let updates = tree_map_named("scale_by_rms", &[&updates, &nu], |l| {
            let nu_hat = match &count {
                Some(count) => bias_corrected(l[1], decay, count),
                None => l[1].clone(),
            };
            inverse_root(&nu_hat, self.eps, self.eps_in_sqrt) * l[0]
        })?;
        Ok((updates, RmsState { count, nu }))
    }
}

/// State of [`ScaleByStddev`]: the step count (with bias correction only)
/// and the running means of gradients and of their squares.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct StddevState<P: Pytree> {
    /// Steps taken (`int32`), kept only with bias correction.
    pub count: Option<Array>,
    /// Running mean of gradients.
    pub mu: P,
    /// Running mean of squared gradients.
    pub nu: P,
}

/// Divides updates by a running estimate of their standard deviation,
/// `sqrt(nu - mu²)` (`optax.scale_by_stddev`, centered RMSProp's
/// rescaling).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByStddev {
    /// Decay of both running means.
    pub decay: f64,
    /// Added to the variance (inside the root with `eps_in_sqrt`, to the
    /// root otherwise).
    pub eps: f64,
    /// Initial value of the mean of squares.
    pub initial_scale: f64,
    /// Whether `eps` goes inside the root (Optax's default) or is added to
    /// it.
    pub eps_in_sqrt: bool,
    /// Whether to divide both means by `1 - decay^count`.
    pub bias_correction: bool,
}

/// `optax.scale_by_stddev(decay, eps, initial_scale)` (eps inside the root,
/// no bias correction; set the fields for those).
pub fn scale_by_stddev(decay: f64, eps: f64, initial_scale: f64) -> ScaleByStddev {
    ScaleByStddev {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt: true,
        bias_correction: false,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByStddev {
    type State = StddevState<P>;

    fn init(&self, params: &P) -> StddevState<P> {
        StddevState {
            count: self.bias_correction.then(zero_count),
            mu: zeros_like_tree(params),
            nu: full_like_tree(params, self.initial_scale),
        }
    }

    fn update(&self, updates: P, state: StddevState<P>, _: &P) -> Result<(P, StddevState<P>)> {
        let decay = self.decay;
        let mu = tree_map_named("scale_by_stddev", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], decay)
        })?;
        let nu = tree_map_named("scale_by_stddev", &[&updates, &state.nu], |l| {
            squared_ema_update(l[0], l[1], decay)
        })?;
        let count = next_count("scale_by_stddev", self.bias_correction, state.count)?;
        let updates = tree_map_named("scale_by_stddev", &[&updates, &mu, &nu], |l| {
            let (mu_hat, nu_hat) = match &count {
                Some(count) => (
                    bias_corrected(l[1], decay, count),
                    bias_corrected(l[2], decay, count),
                ),
                None => (l[1].clone(), l[2].clone()),
            };
            let variance = nu_hat - &mu_hat * &mu_hat;
            inverse_root(&variance, self.eps, self.eps_in_sqrt) * l[0]
        })?;
        Ok((updates, StddevState { count, mu, nu }))
    }
}

/// State of [`ScaleByRss`]: the running sum of squared gradients.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct RssState<P: Pytree> {
    /// Sum of squared gradients (from the initial accumulator value).
    pub sum_of_squares: P,
}

/// Divides updates by the root of the sum of all squared gradients so far
/// (`optax.scale_by_rss`, AdaGrad's rescaling); 0 where that sum is 0.
#[derive(Debug, Clone, Copy)]
pub struct ScaleByRss {
    /// Initial value of the sum of squares.
    pub initial_accumulator_value: f64,
    /// Added to the sum inside the root.
    pub eps: f64,
}

/// `optax.scale_by_rss(initial_accumulator_value, eps)`.
pub fn scale_by_rss(initial_accumulator_value: f64, eps: f64) -> ScaleByRss {
    ScaleByRss {
        initial_accumulator_value,
        eps,
    }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByRss {
    type State = RssState<P>;

    fn init(&self, params: &P) -> RssState<P> {
        RssState {
            sum_of_squares: full_like_tree(params, self.initial_accumulator_value),
        }
    }

    fn update(&self, updates: P, state: RssState<P>, _: &P) -> Result<(P, RssState<P>)> {
        let sum_of_squares =
            tree_map_named("scale_by_rss", &[&updates, &state.sum_of_squares], |l| {
                l[0] * l[0] + l[1]
            })?;
        let updates = tree_map_named("scale_by_rss", &[&updates, &sum_of_squares], |l| {
            let positive = jnp::greater(l[1], &Array::weak_scalar(0.0));
            let inverse = jnp::where_(
                &positive,
                &lax::rsqrt(&(l[1] + self.eps)),
                &Array::weak_scalar(0.0),
            );
            inverse * l[0]
        })?;
        Ok((updates, RssState { sum_of_squares }))
    }
}

/// State of [`ScaleByAdadelta`]: running means of squared gradients and of
/// squared updates.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct AdadeltaState<P: Pytree> {
    /// Running mean of squared gradients.
    pub e_g: P,
    /// Running mean of squared updates.
    pub e_x: P,
}

/// AdaDelta's rescaling: `g * sqrt(E[x²] + eps) / sqrt(E[g²] + eps)`, the
/// mean of squared updates being the previous step's
/// (`optax.scale_by_adadelta`).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByAdadelta {
    /// Decay of both running means.
    pub rho: f64,
    /// Added to both means inside their roots.
    pub eps: f64,
}

/// `optax.scale_by_adadelta(rho, eps)`.
pub fn scale_by_adadelta(rho: f64, eps: f64) -> ScaleByAdadelta {
    ScaleByAdadelta { rho, eps }
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByAdadelta {
    type State = AdadeltaState<P>;

    fn init(&self, params: &P) -> AdadeltaState<P> {
        AdadeltaState {
            e_g: zeros_like_tree(params),
            e_x: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: AdadeltaState<P>, _: &P) -> Result<(P, AdadeltaState<P>)> {
        let (rho, eps) = (self.rho, self.eps);
        let e_g = tree_map_named("scale_by_adadelta", &[&updates, &state.e_g], |l| {
            squared_ema_update(l[0], l[1], rho)
        })?;
        let updates = tree_map_named("scale_by_adadelta", &[&updates, &e_g, &state.e_x], |l| {
            (jnp::sqrt(&(l[2] + eps)) / jnp::sqrt(&(l[1] + eps))) * l[0]
        })?;
        let e_x = tree_map_named("scale_by_adadelta", &[&updates, &state.e_x], |l| {
            squared_ema_update(l[0], l[1], rho)
        })?;
        Ok((updates, AdadeltaState { e_g, e_x }))
    }
}
