//! Learning-rate schedules as Optax defines them: a value per step count,
//! computed from the optimizer state's (traced) `int32` count.

mod constructors;
mod debug_eq;
mod formulas;

use std::sync::Arc;

use oxla::Array;
use oxla::numpy as jnp;

use formulas::{f32_scalar, int};

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
#[derive(Clone)]
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
    /// bounded by `end_value` when given (`exponential_decay`); `init_value`
    /// throughout when `transition_steps <= 0` or `decay_rate` is 0, and a
    /// negative `transition_begin` counts as 0, as in Optax.
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
    /// `init_value` times each scale whose boundary the step has reached,
    /// applied in boundary order (`piecewise_constant_schedule`). Build it
    /// with [`Schedule::piecewise_constant`], which checks the scales.
    PiecewiseConstant {
        /// Value before the first boundary.
        init_value: f64,
        /// `(boundary step, scale)` pairs, sorted by boundary.
        boundaries_and_scales: Vec<(i64, f64)>,
    },
    /// `(init_value - end_value) * (1 - t / transition_steps)^power +
    /// end_value` with `t` the steps since `transition_begin`, clipped to
    /// `[0, transition_steps]` (`polynomial_schedule`); `init_value`
    /// throughout when `transition_steps <= 0`.
    Polynomial {
        /// Value up to `transition_begin`.
        init_value: f64,
        /// Value after the transition.
        end_value: f64,
        /// Power of the polynomial (an integral power multiplies, as a
        /// Python `int` power does in Optax).
        power: f64,
        /// Length of the transition.
        transition_steps: i64,
        /// Step at which it starts (0 when negative).
        transition_begin: i64,
    },
    /// `init_value * ((1 - alpha) * (½(1 + cos(π t / decay_steps)))^exponent
    /// + alpha)` with `t` clipped to `decay_steps` (`cosine_decay_schedule`).
    CosineDecay {
        /// Value at step 0.
        init_value: f64,
        /// Length of the decay.
        decay_steps: i64,
        /// Final multiplier of `init_value`.
        alpha: f64,
        /// Power of the cosine factor (1 for plain cosine).
        exponent: f64,
    },
    /// Interpolation between the accumulated products of the scales at
    /// their boundaries, linear or cosine (`piecewise_interpolate_schedule`);
    /// build it with [`Schedule::piecewise_interpolate`].
    PiecewiseInterpolate {
        /// Cosine interpolation (else linear).
        cosine: bool,
        /// Value at step 0.
        init_value: f64,
        /// `(boundary step, scale)` pairs, sorted by boundary.
        boundaries_and_scales: Vec<(i64, f64)>,
    },
    /// `schedules[0]` until `boundaries[0]`, then `schedules[1]` of the
    /// steps since that boundary, and so on (`join_schedules`); build it
    /// with [`Schedule::join`], which checks the boundaries.
    Join {
        /// The schedules in order.
        schedules: Vec<Schedule>,
        /// The step at which each schedule after the first takes over.
        boundaries: Vec<i64>,
    },
    /// Any function of the (integer, possibly traced) step count that
    /// returns the value as an array (an Optax schedule is any callable);
    /// build it with [`Schedule::from_fn`]. It runs under `jit` on the traced
    /// count, so it must use array operations, not host values of the count.
    Custom(Arc<dyn Fn(&Array) -> Array + Send + Sync>),
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

    /// The value at `count` (an integer array, traced or not; a scalar in an
    /// optimizer, any shape elementwise), as f32 ([`Schedule::Custom`]: what
    /// its function returns).
    #[track_caller]
    pub fn value(&self, count: &Array) -> Array {
        match self {
            Schedule::Constant(v) => f32_scalar(*v),
            &Schedule::Linear {
                init_value,
                end_value,
                transition_steps,
                transition_begin,
            } => formulas::polynomial(
                count,
                init_value,
                end_value,
                1.0,
                transition_steps,
                transition_begin,
            ),
            &Schedule::WarmupCosineDecay {
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
                let warmup =
                    formulas::polynomial(count, init_value, peak_value, 1.0, warmup_steps, 0);
                let after = count - &int(warmup_steps);
                let decay = formulas::cosine_decay(
                    &after,
                    peak_value,
                    decay_steps - warmup_steps,
                    alpha,
                    exponent,
                );
                let before = jnp::less(count, &int(warmup_steps));
                jnp::where_(&before, &warmup, &decay)
            }
            &Schedule::Exponential {
                init_value,
                transition_steps,
                decay_rate,
                transition_begin,
                staircase,
                end_value,
            } => formulas::exponential(
                count,
                init_value,
                transition_steps,
                decay_rate,
                transition_begin,
                staircase,
                end_value,
            ),
            Schedule::PiecewiseConstant {
                init_value,
                boundaries_and_scales,
            } => formulas::piecewise_constant(count, *init_value, boundaries_and_scales),
            &Schedule::Polynomial {
                init_value,
                end_value,
                power,
                transition_steps,
                transition_begin,
            } => formulas::polynomial(
                count,
                init_value,
                end_value,
                power,
                transition_steps,
                transition_begin,
            ),
            &Schedule::CosineDecay {
                init_value,
                decay_steps,
                alpha,
                exponent,
            } => formulas::cosine_decay(count, init_value, decay_steps, alpha, exponent),
            Schedule::PiecewiseInterpolate {
                cosine,
                init_value,
                boundaries_and_scales,
            } => {
                formulas::piecewise_interpolate(count, *cosine, *init_value, boundaries_and_scales)
            }
            Schedule::Join {
                schedules,
                boundaries,
            } => {
                let Some(first) = schedules.first() else {
                    return Array::error(oxla::Error::InvalidArgument(
                        "join_schedules: a joined schedule needs at least one schedule".into(),
                    ));
                };
                // Optax's loop: each later schedule sees the steps since its
                // boundary.
                let mut out = first.value(count);
                for (&boundary, schedule) in boundaries.iter().zip(&schedules[1..]) {
                    let later = schedule.value(&(count - &int(boundary)));
                    out = jnp::where_(&jnp::less(count, &int(boundary)), &out, &later);
                }
                out
            }
            Schedule::Custom(f) => f(count),
        }
    }
}
