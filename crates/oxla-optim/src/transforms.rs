//! The gradient transformations Optax's optimizers are built from.

use oxla::DType;

use super::GradientTransformation;
use super::schedules::Schedule;
use super::tree::global_norm;
use oxla::Array;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named};

/// A new `int32` step count of 0.
fn zero_count() -> Array {
    Array::scalar(0i32).unwrap_or_else(Array::error)
}

/// `count + 1`, saturating at the largest `int32` (Optax's `safe_increment`).
fn safe_increment(count: &Array) -> Array {
    let max = Array::weak_scalar(i32::MAX);
    jnp::where_(&jnp::less(count, &max), &(count + 1), &max)
}

/// `zeros_like` of every leaf.
fn zeros_like_tree<P: Pytree>(params: &P) -> P {
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
/// the step count (`optax.scale_by_learning_rate`).
#[derive(Debug, Clone)]
pub struct ScaleByLearningRate {
    /// The learning rate.
    pub schedule: Schedule,
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
        match (&self.schedule, state.count) {
            (Schedule::Constant(rate), _) => Ok((tree_map(&updates, |g| g * -rate)?, state_none())),
            (schedule, Some(count)) => {
                let step = -schedule.value(&count);
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
}

/// `optax.scale_by_adam(b1, b2, eps)`.
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
            l[0] * (1.0 - b1) + l[1] * b1
        })?;
        let nu = tree_map_named("scale_by_adam", &[&updates, &state.nu], |l| {
            (l[0] * l[0]) * (1.0 - b2) + l[1] * b2
        })?;
        let count = safe_increment(&state.count);
        let updates = tree_map_named("scale_by_adam", &[&mu, &nu], |l| {
            let mu_hat = bias_corrected(l[0], b1, &count);
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
