//! The gradient transformations Optax's optimizers are built from: the
//! basic ones here, the others in a module per family.

mod adam_variants;
mod block_rms;
mod ema;
mod factored;
mod layerwise;
mod second_moment;
mod sm3;

pub use adam_variants::{
    LionState, ScaleByAdamax, ScaleByBelief, ScaleByLion, ScaleByRadam, scale_by_adamax,
    scale_by_belief, scale_by_lion, scale_by_radam,
};
pub use block_rms::{
    ClipByBlockRms, ScaleByParamBlockRms, clip_by_block_rms, scale_by_param_block_rms,
};
pub use ema::{Ema, EmaState, ema};
pub use factored::{FactoredState, ScaleByFactoredRms, scale_by_factored_rms};
pub use layerwise::{
    NovogradState, ScaleByNovograd, ScaleByTrustRatio, scale_by_novograd, scale_by_trust_ratio,
};
pub use second_moment::{
    AdadeltaState, RmsState, RssState, ScaleByAdadelta, ScaleByRms, ScaleByRss, ScaleByStddev,
    StddevState, scale_by_adadelta, scale_by_rms, scale_by_rss, scale_by_stddev,
};
pub use sm3::{ScaleBySm3, Sm3State, scale_by_sm3};

use oxla::DType;

use super::GradientTransformation;
use super::schedules::Schedule;
use super::tree::global_norm;
use oxla::Array;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named};

/// A new `int32` step count of 0.
pub(crate) fn zero_count() -> Array {
    Array::scalar(0i32).unwrap_or_else(Array::error)
}

/// `count + 1`, saturating at the largest `int32` (Optax's `safe_increment`).
pub(crate) fn safe_increment(count: &Array) -> Array {
    let max = Array::weak_scalar(i32::MAX);
    jnp::where_(&jnp::less(count, &max), &(count + 1), &max)
}

/// `zeros_like` of every leaf.
pub(crate) fn zeros_like_tree<P: Pytree>(params: &P) -> P {
    tree_map(params, jnp::zeros_like).expect("a tree rebuilds from its own leaves")
}

/// Leaves unchanged, no state (`optax.identity`).
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{GradientTransformation, Identity};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[1.0f32, -2.0], &[2])?;
/// let (same, ()) = Identity.update(g.clone(), (), &g)?;
/// assert_eq!(same.to_vec::<f32>()?, vec![1.0, -2.0]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Identity;

impl<P: Pytree> GradientTransformation<P> for Identity {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), _: &P) -> Result<(P, ())> {
        Ok((updates, state))
    }
}

/// Every update times `step_size` (`optax.scale`).
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// The factor.
    pub step_size: f64,
}

/// `optax.scale(step_size)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[1.0f32, -2.0], &[2])?;
/// let (u, ()) = optim::scale(-0.5).update(g.clone(), (), &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-0.5, 1.0]);
/// # Ok(())
/// # }
/// ```
pub fn scale(step_size: f64) -> Scale {
    Scale { step_size }
}

impl<P: Pytree> GradientTransformation<P> for Scale {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), _: &P) -> Result<(P, ())> {
        Ok((tree_map(&updates, |g| g * self.step_size)?, state))
    }
}

/// The step count of a [`ScaleByLearningRate`] with a schedule (`None` for
/// a constant rate, which needs none).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct ScheduleState {
    /// Steps taken (`int32`).
    pub count: Option<Array>,
}

/// Updates times minus the learning rate, a constant or a [`Schedule`] of
/// the step count (`optax.scale_by_learning_rate`); times the rate itself
/// with `flip_sign` false (as Adafactor uses it).
#[derive(Debug, Clone)]
pub struct ScaleByLearningRate {
    /// The learning rate.
    pub schedule: Schedule,
    /// Whether to scale by minus the rate (a descent step; Optax's default).
    pub flip_sign: bool,
}

/// `optax.scale_by_learning_rate(learning_rate)`: a number or a [`Schedule`].
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation, Schedule};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[1.0f32], &[1])?;
/// let opt = optim::scale_by_learning_rate(Schedule::linear(1.0, 0.0, 4));
/// let state = opt.init(&g);
/// let (u, state) = opt.update(g.clone(), state, &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-1.0]);                // rate 1 at step 0
/// let (u, _) = opt.update(g.clone(), state, &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![-0.75]);               // rate 0.75 at step 1
/// # Ok(())
/// # }
/// ```
pub fn scale_by_learning_rate(learning_rate: impl Into<Schedule>) -> ScaleByLearningRate {
    ScaleByLearningRate {
        schedule: learning_rate.into(),
        flip_sign: true,
    }
}

impl<P: Pytree> GradientTransformation<P> for ScaleByLearningRate {
    type State = ScheduleState;

    fn init(&self, _: &P) -> ScheduleState {
        ScheduleState {
            count: (!self.schedule.is_constant()).then(zero_count),
        }
    }

    fn update(&self, updates: P, state: ScheduleState, _: &P) -> Result<(P, ScheduleState)> {
        let sign = if self.flip_sign { -1.0 } else { 1.0 };
        match (&self.schedule, state.count) {
            (Schedule::Constant(rate), _) => {
                Ok((tree_map(&updates, |g| g * (sign * rate))?, state_none()))
            }
            (schedule, Some(count)) => {
                let value = schedule.value(&count);
                let step = if self.flip_sign { -value } else { value };
                let updates = tree_map(&updates, |g| {
                    oxla::lax::convert_element_type(&step, g.dtype_or_bool()) * g
                })?;
                Ok((
                    updates,
                    ScheduleState {
                        count: Some(safe_increment(&count)),
                    },
                ))
            }
            (_, None) => Err(oxla::Error::InvalidArgument(
                "scale_by_learning_rate: a schedule's state needs its step count; this state \
                 came from a constant learning rate"
                    .into(),
            )),
        }
    }
}

fn state_none() -> ScheduleState {
    ScheduleState { count: None }
}

/// State of [`ScaleByAdam`]: the step count and both moment estimates.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct AdamState<P: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// First moment (mean of gradients).
    pub mu: P,
    /// Second moment (mean of squared gradients).
    pub nu: P,
}

/// Rescales updates by Adam's bias-corrected moment estimates
/// (`optax.scale_by_adam`).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByAdam {
    /// Decay of the first moment.
    pub b1: f64,
    /// Decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment inside the root.
    pub eps_root: f64,
    /// Nesterov's momentum (NAdam): the first moment looks one step ahead.
    pub nesterov: bool,
}

/// `optax.scale_by_adam(b1, b2, eps)` (no `eps_root`, no Nesterov; set the
/// fields for those).
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[4.0f32, -0.25], &[2])?;
/// let adam = optim::scale_by_adam(0.9, 0.999, 1e-8);
/// let (u, state) = adam.update(g.clone(), adam.init(&g), &g)?;
/// // At step 1 the bias-corrected moments are g and g², so the update is
/// // about g / |g| (up to f32's rounding of b2 in the correction).
/// let u = u.to_vec::<f32>()?;
/// assert!((u[0] - 1.0).abs() < 1e-4 && (u[1] + 1.0).abs() < 1e-4, "{u:?}");
/// assert_eq!(state.mu.shape(), &[2]);                        // moments shaped like g
/// # Ok(())
/// # }
/// ```
pub fn scale_by_adam(b1: f64, b2: f64, eps: f64) -> ScaleByAdam {
    ScaleByAdam {
        b1,
        b2,
        eps,
        eps_root: 0.0,
        nesterov: false,
    }
}

/// `moment / (1 - decay^count)` (Optax's `bias_correction`).
fn bias_corrected(moment: &Array, decay: f64, count: &Array) -> Array {
    let power = jnp::power(
        &oxla::lax::convert_element_type(&Array::weak_scalar(decay), DType::F32),
        &oxla::lax::convert_element_type(count, DType::F32),
    );
    let correction = -power + 1.0;
    moment / &oxla::lax::convert_element_type(&correction, moment.dtype_or_bool())
}

/// The bias-corrected first moment, looking one step ahead with Nesterov's
/// momentum: `b1 * mu / (1 - b1^(count+1)) + (1 - b1) * g / (1 - b1^count)`
/// (Optax's `nesterov` option of Adam, RAdam and AdaBelief), or
/// `mu / (1 - b1^count)`.
fn first_moment_hat(mu: &Array, g: &Array, b1: f64, count: &Array, nesterov: bool) -> Array {
    if nesterov {
        bias_corrected(mu, b1, &safe_increment(count)) * b1
            + bias_corrected(g, b1, count) * (1.0 - b1)
    } else {
        bias_corrected(mu, b1, count)
    }
}

/// `(1 - decay) * g + decay * moment` (Optax's `update_moment`, order 1).
fn ema_update(g: &Array, moment: &Array, decay: f64) -> Array {
    g * (1.0 - decay) + moment * decay
}

/// `(1 - decay) * g² + decay * moment` (Optax's `update_moment`, order 2,
/// for real `g`).
fn squared_ema_update(g: &Array, moment: &Array, decay: f64) -> Array {
    (g * g) * (1.0 - decay) + moment * decay
}

/// `full_like` of every leaf with `value`.
fn full_like_tree<P: Pytree>(params: &P, value: f64) -> P {
    tree_map(params, |p| jnp::full_like(p, value)).expect("a tree rebuilds from its own leaves")
}

impl<P: Pytree + Clone> GradientTransformation<P> for ScaleByAdam {
    type State = AdamState<P>;

    fn init(&self, params: &P) -> AdamState<P> {
        AdamState {
            count: zero_count(),
            mu: zeros_like_tree(params),
            nu: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: AdamState<P>, _: &P) -> Result<(P, AdamState<P>)> {
        let (b1, b2) = (self.b1, self.b2);
        let mu = tree_map_named("scale_by_adam", &[&updates, &state.mu], |l| {
            ema_update(l[0], l[1], b1)
        })?;
        let nu = tree_map_named("scale_by_adam", &[&updates, &state.nu], |l| {
            squared_ema_update(l[0], l[1], b2)
        })?;
        let count = safe_increment(&state.count);
        let updates = tree_map_named("scale_by_adam", &[&mu, &nu, &updates], |l| {
            let mu_hat = first_moment_hat(l[0], l[2], b1, &count, self.nesterov);
            let nu_hat = bias_corrected(l[1], b2, &count);
            mu_hat / (jnp::sqrt(&(nu_hat + self.eps_root)) + self.eps)
        })?;
        Ok((updates, AdamState { count, mu, nu }))
    }
}

/// State of [`Trace`]: the momentum buffer.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct TraceState<P: Pytree> {
    /// The running trace of updates.
    pub trace: P,
}

/// Momentum: `trace = g + decay * trace`; the update is the trace, or
/// `g + decay * trace` with Nesterov (`optax.trace`).
#[derive(Debug, Clone, Copy)]
pub struct Trace {
    /// Decay of the trace.
    pub decay: f64,
    /// Whether to use Nesterov momentum.
    pub nesterov: bool,
}

/// `optax.trace(decay, nesterov)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[1.0f32], &[1])?;
/// let momentum = optim::trace(0.5, false);
/// let (u, state) = momentum.update(g.clone(), momentum.init(&g), &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![1.0]);
/// let (u, _) = momentum.update(g.clone(), state, &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![1.5]);                 // g + 0.5 · trace
/// # Ok(())
/// # }
/// ```
pub fn trace(decay: f64, nesterov: bool) -> Trace {
    Trace { decay, nesterov }
}

impl<P: Pytree + Clone> GradientTransformation<P> for Trace {
    type State = TraceState<P>;

    fn init(&self, params: &P) -> TraceState<P> {
        TraceState {
            trace: zeros_like_tree(params),
        }
    }

    fn update(&self, updates: P, state: TraceState<P>, _: &P) -> Result<(P, TraceState<P>)> {
        let decay = self.decay;
        let new_trace = tree_map_named("trace", &[&updates, &state.trace], |l| {
            l[0] + &(l[1] * decay)
        })?;
        let out = if self.nesterov {
            tree_map_named("trace", &[&updates, &new_trace], |l| l[0] + &(l[1] * decay))?
        } else {
            new_trace.clone()
        };
        Ok((out, TraceState { trace: new_trace }))
    }
}

/// Adds `weight_decay * params` to the updates (`optax.add_decayed_weights`).
#[derive(Debug, Clone, Copy)]
pub struct AddDecayedWeights {
    /// The decay factor.
    pub weight_decay: f64,
}

/// `optax.add_decayed_weights(weight_decay)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = Array::from_slice(&[2.0f32], &[1])?;
/// let g = Array::from_slice(&[1.0f32], &[1])?;
/// let (u, ()) = optim::add_decayed_weights(0.5).update(g, (), &params)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![2.0]);                 // 1 + 0.5 · 2
/// # Ok(())
/// # }
/// ```
pub fn add_decayed_weights(weight_decay: f64) -> AddDecayedWeights {
    AddDecayedWeights { weight_decay }
}

impl<P: Pytree> GradientTransformation<P> for AddDecayedWeights {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), params: &P) -> Result<(P, ())> {
        let decay = self.weight_decay;
        let out = tree_map_named("add_decayed_weights", &[&updates, params], |l| {
            l[0] + &(l[1] * decay)
        })?;
        Ok((out, state))
    }
}

/// Scales all updates down together when their global L2 norm exceeds
/// `max_norm` (`optax.clip_by_global_norm`).
#[derive(Debug, Clone, Copy)]
pub struct ClipByGlobalNorm {
    /// The largest global norm let through.
    pub max_norm: f64,
}

/// `optax.clip_by_global_norm(max_norm)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// // Two leaves whose global norm is 5.
/// let g = (Array::from_slice(&[3.0f32], &[1])?, Array::from_slice(&[4.0f32], &[1])?);
/// let (clipped, ()) = optim::clip_by_global_norm(1.0).update(g.clone(), (), &g)?;
/// assert!((clipped.0.item::<f32>()? - 0.6).abs() < 1e-6);
/// assert!((clipped.1.item::<f32>()? - 0.8).abs() < 1e-6);
/// let (same, ()) = optim::clip_by_global_norm(10.0).update(g.clone(), (), &g)?;
/// assert_eq!(same.1.item::<f32>()?, 4.0);                    // within the bound: unchanged
/// # Ok(())
/// # }
/// ```
pub fn clip_by_global_norm(max_norm: f64) -> ClipByGlobalNorm {
    ClipByGlobalNorm { max_norm }
}

impl<P: Pytree> GradientTransformation<P> for ClipByGlobalNorm {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), _: &P) -> Result<(P, ())> {
        let norm = global_norm(&updates);
        let within = jnp::less(&norm, &Array::weak_scalar(self.max_norm));
        let out = tree_map(&updates, |t| {
            let clipped =
                (t / &oxla::lax::convert_element_type(&norm, t.dtype_or_bool())) * self.max_norm;
            jnp::where_(&within, t, &clipped)
        })?;
        Ok((out, state))
    }
}

/// Clips every element of the updates to `[-max_delta, max_delta]`
/// (`optax.clip`).
#[derive(Debug, Clone, Copy)]
pub struct Clip {
    /// The largest magnitude let through.
    pub max_delta: f64,
}

/// `optax.clip(max_delta)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let g = Array::from_slice(&[3.0f32, -0.5, -7.0], &[3])?;
/// let (u, ()) = optim::clip(1.0).update(g.clone(), (), &g)?;
/// assert_eq!(u.to_vec::<f32>()?, vec![1.0, -0.5, -1.0]);
/// # Ok(())
/// # }
/// ```
pub fn clip(max_delta: f64) -> Clip {
    Clip { max_delta }
}

impl<P: Pytree> GradientTransformation<P> for Clip {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), _: &P) -> Result<(P, ())> {
        let (lo, hi) = (
            Array::weak_scalar(-self.max_delta),
            Array::weak_scalar(self.max_delta),
        );
        Ok((tree_map(&updates, |g| jnp::clip(g, &lo, &hi))?, state))
    }
}
