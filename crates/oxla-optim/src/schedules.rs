//! Learning-rate schedules as Optax defines them: a value per step count,
//! computed from the optimizer state's (traced) `int32` count.

use oxla::DType;

use oxla::Array;
use oxla::numpy as jnp;

/// A learning rate as a function of the step count (Optax's schedules),
/// computed in the program from the optimizer state's `int32` count (so a
/// jitted step does not recompile as the count grows). A plain `f64` is a
/// [`Schedule::Constant`].
///
/// ```
/// use oxla::Array;
/// use oxla_optim::Schedule;
/// # fn main() -> oxla::Result<()> {
/// // The rate at a step, checked to within 1e-6.
/// let check = |s: &Schedule, step: i32, want: f32| -> oxla::Result<()> {
///     let got = s.value(&Array::scalar(step)?).item::<f32>()?;
///     assert!((got - want).abs() < 1e-6, "step {step}: {got}, not {want}");
///     Ok(())
/// };
/// let linear = Schedule::linear(1.0, 0.0, 4);
/// check(&linear, 0, 1.0)?;
/// check(&linear, 1, 0.75)?;
/// check(&linear, 9, 0.0)?;                                   // after the transition
/// let warmup = Schedule::warmup_cosine_decay(0.0, 1.0, 10, 110, 0.0);
/// check(&warmup, 5, 0.5)?;                                   // warming up
/// check(&warmup, 10, 1.0)?;                                  // the peak
/// check(&warmup, 60, 0.5)?;                                  // halfway down the cosine
/// check(&warmup, 200, 0.0)?;
/// check(&Schedule::exponential(1.0, 10, 0.5), 20, 0.25)?;   // halved every 10 steps
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    /// The same value at every step (`constant_schedule`).
    Constant(f64),
    /// From `init_value` to `end_value` linearly over `transition_steps`
    /// after `transition_begin`, then `end_value` (`linear_schedule`).
    Linear {
        /// Value up to `transition_begin`.
        init_value: f64,
        /// Value after the transition.
        end_value: f64,
        /// Length of the transition.
        transition_steps: i64,
        /// Step at which it starts.
        transition_begin: i64,
    },
    /// Linear warmup from `init_value` to `peak_value` over `warmup_steps`,
    /// then cosine decay to `end_value` at `decay_steps` (a total, warmup
    /// included), then `end_value` (`warmup_cosine_decay_schedule`).
    WarmupCosineDecay {
        /// Value at step 0.
        init_value: f64,
        /// Value at the end of the warmup.
        peak_value: f64,
        /// Length of the warmup.
        warmup_steps: i64,
        /// Step at which the decay ends (warmup included).
        decay_steps: i64,
        /// Value after the decay.
        end_value: f64,
        /// Power of the cosine factor (1 for plain cosine).
        exponent: f64,
    },
    /// `init_value * decay_rate^((step - transition_begin) / transition_steps)`
    /// (floored with `staircase`), `init_value` before `transition_begin`,
    /// bounded by `end_value` when given (`exponential_decay`).
    Exponential {
        /// Value up to `transition_begin`.
        init_value: f64,
        /// Steps per factor of `decay_rate`.
        transition_steps: i64,
        /// Factor per `transition_steps`.
        decay_rate: f64,
        /// Step at which decay starts.
        transition_begin: i64,
        /// Whether the exponent is floored (decay in steps).
        staircase: bool,
        /// Lower bound when decaying (upper bound when growing).
        end_value: Option<f64>,
    },
}

impl From<f64> for Schedule {
    fn from(value: f64) -> Schedule {
        Schedule::Constant(value)
    }
}

impl Schedule {
    /// `linear_schedule(init_value, end_value, transition_steps)`.
    pub fn linear(init_value: f64, end_value: f64, transition_steps: i64) -> Schedule {
        Schedule::Linear {
            init_value,
            end_value,
            transition_steps,
            transition_begin: 0,
        }
    }

    /// `warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps,
    /// decay_steps, end_value)`.
    pub fn warmup_cosine_decay(
        init_value: f64,
        peak_value: f64,
        warmup_steps: i64,
        decay_steps: i64,
        end_value: f64,
    ) -> Schedule {
        Schedule::WarmupCosineDecay {
            init_value,
            peak_value,
            warmup_steps,
            decay_steps,
            end_value,
            exponent: 1.0,
        }
    }

    /// `exponential_decay(init_value, transition_steps, decay_rate)`.
    pub fn exponential(init_value: f64, transition_steps: i64, decay_rate: f64) -> Schedule {
        Schedule::Exponential {
            init_value,
            transition_steps,
            decay_rate,
            transition_begin: 0,
            staircase: false,
            end_value: None,
        }
    }

    /// Whether the value never changes (no step count needed).
    pub fn is_constant(&self) -> bool {
        matches!(self, Schedule::Constant(_))
    }

    /// The value at `count` (an integer scalar array, traced or not), as an
    /// f32 scalar.
    #[track_caller]
    pub fn value(&self, count: &Array) -> Array {
        match *self {
            Schedule::Constant(v) => f32_scalar(v),
            Schedule::Linear {
                init_value,
                end_value,
                transition_steps,
                transition_begin,
            } => linear(
                count,
                init_value,
                end_value,
                transition_steps,
                transition_begin,
            ),
            Schedule::WarmupCosineDecay {
                init_value,
                peak_value,
                warmup_steps,
                decay_steps,
                end_value,
                exponent,
            } => {
                let alpha = if peak_value == 0.0 {
                    0.0
                } else {
                    end_value / peak_value
                };
                let warmup = linear(count, init_value, peak_value, warmup_steps, 0);
                let after = count - &int(warmup_steps);
                let decay = cosine_decay(
                    &after,
                    peak_value,
                    decay_steps - warmup_steps,
                    alpha,
                    exponent,
                );
                let before = jnp::less(count, &int(warmup_steps));
                jnp::where_(&before, &warmup, &decay)
            }
            Schedule::Exponential {
                init_value,
                transition_steps,
                decay_rate,
                transition_begin,
                staircase,
                end_value,
            } => {
                let decreased = count - &int(transition_begin);
                let mut p = to_f32(&decreased) / transition_steps as f64;
                if staircase {
                    p = jnp::floor(&p);
                }
                let decayed = jnp::power(&f32_scalar(decay_rate), &p) * init_value;
                let started = jnp::less_equal(&decreased, &int(0));
                let value = jnp::where_(&started, &f32_scalar(init_value), &decayed);
                match end_value {
                    None => value,
                    Some(end) if decay_rate < 1.0 => jnp::maximum(&value, &f32_scalar(end)),
                    Some(end) => jnp::minimum(&value, &f32_scalar(end)),
                }
            }
        }
    }
}

fn f32_scalar(v: f64) -> Array {
    oxla::lax::convert_element_type(&Array::weak_scalar(v), DType::F32)
}

/// A step number as a weakly typed integer scalar (counts are `int32`).
fn int(v: i64) -> Array {
    Array::weak_scalar(v as i32)
}

fn to_f32(x: &Array) -> Array {
    oxla::lax::convert_element_type(x, DType::F32)
}

/// Optax's `polynomial_schedule` with power 1.
fn linear(count: &Array, init: f64, end: f64, steps: i64, begin: i64) -> Array {
    if steps <= 0 {
        return f32_scalar(init);
    }
    let clipped = jnp::clip(&(count - &int(begin)), &int(0), &int(steps));
    let frac = -(to_f32(&clipped) / steps as f64) + 1.0;
    frac * (init - end) + end
}

/// Optax's `cosine_decay_schedule(init, decay_steps, alpha, exponent)`.
fn cosine_decay(count: &Array, init: f64, steps: i64, alpha: f64, exponent: f64) -> Array {
    if steps <= 0 {
        return f32_scalar(init);
    }
    let count = jnp::minimum(count, &int(steps));
    let phase = to_f32(&count) * std::f64::consts::PI / steps as f64;
    let cosine = (jnp::cos(&phase) + 1.0) * 0.5;
    let decayed = jnp::power(&cosine, &Array::weak_scalar(exponent)) * (1.0 - alpha) + alpha;
    decayed * init
}
