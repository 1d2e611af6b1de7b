//! Optax's other schedule constructors, as associated functions of
//! [`Schedule`]; those Optax refuses arguments for return the error.

use std::sync::Arc;

use oxla::{Array, Error, Result};

use super::Schedule;

/// An `InvalidArgument` naming the constructor and the caller's line.
#[track_caller]
fn invalid(function: &str, message: String) -> Error {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    Error::InvalidArgument(format!("{location}: {function}: {message}"))
}

/// The pairs as a Python dict of them holds them (a later pair with the same
/// boundary replaces an earlier one), sorted by boundary; the scales must
/// not be negative (Optax's check).
#[track_caller]
fn boundaries_and_scales(function: &str, pairs: &[(i64, f64)]) -> Result<Vec<(i64, f64)>> {
    if let Some(&(boundary, scale)) = pairs.iter().find(|(_, s)| s.is_nan() || *s < 0.0) {
        return Err(invalid(
            function,
            format!("expects non-negative scale factors; got {scale} at boundary {boundary}"),
        ));
    }
    let mut dict: Vec<(i64, f64)> = Vec::with_capacity(pairs.len());
    for &(boundary, scale) in pairs {
        match dict.iter_mut().find(|(b, _)| *b == boundary) {
            Some(entry) => entry.1 = scale,
            None => dict.push((boundary, scale)),
        }
    }
    dict.sort_by_key(|&(boundary, _)| boundary);
    Ok(dict)
}

impl Schedule {
    /// `piecewise_constant_schedule(init_value, boundaries_and_scales)`:
    /// `init_value` times the scale of each `(boundary, scale)` pair whose
    /// boundary the step has reached. The pairs act as Optax's dict (the
    /// last of equal boundaries counts); a negative scale is an error.
    ///
    /// ```
    /// use oxla::Array;
    /// use oxla_optim::Schedule;
    /// # fn main() -> oxla::Result<()> {
    /// let s = Schedule::piecewise_constant(1.0, &[(100, 0.1), (200, 0.1)])?;
    /// let at = |step: i32| s.value(&Array::scalar(step).unwrap()).item::<f32>();
    /// assert_eq!(at(50)?, 1.0);
    /// assert!((at(150)? - 0.1).abs() < 1e-7 && (at(250)? - 0.01).abs() < 1e-8);
    /// assert!(Schedule::piecewise_constant(1.0, &[(10, -0.5)]).is_err());
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn piecewise_constant(
        init_value: f64,
        boundaries_and_scales: &[(i64, f64)],
    ) -> Result<Schedule> {
        Ok(Schedule::PiecewiseConstant {
            init_value,
            boundaries_and_scales: self::boundaries_and_scales(
                "piecewise_constant_schedule",
                boundaries_and_scales,
            )?,
        })
    }

    /// `piecewise_interpolate_schedule(interpolate_type, init_value,
    /// boundaries_and_scales)` with `interpolate_type` `"linear"` or
    /// `"cosine"` (else an error); the pairs as in
    /// [`Schedule::piecewise_constant`].
    #[track_caller]
    pub fn piecewise_interpolate(
        interpolate_type: &str,
        init_value: f64,
        boundaries_and_scales: &[(i64, f64)],
    ) -> Result<Schedule> {
        let function = "piecewise_interpolate_schedule";
        let cosine = match interpolate_type {
            "linear" => false,
            "cosine" => true,
            other => {
                return Err(invalid(
                    function,
                    format!(
                        "`interpolate_type` must be either 'cosine' or 'linear', not {other:?}"
                    ),
                ));
            }
        };
        Ok(Schedule::PiecewiseInterpolate {
            cosine,
            init_value,
            boundaries_and_scales: self::boundaries_and_scales(function, boundaries_and_scales)?,
        })
    }

    /// `polynomial_schedule(init_value, end_value, power, transition_steps,
    /// transition_begin)`.
    pub fn polynomial(
        init_value: f64,
        end_value: f64,
        power: f64,
        transition_steps: i64,
        transition_begin: i64,
    ) -> Schedule {
        Schedule::Polynomial {
            init_value,
            end_value,
            power,
            transition_steps,
            transition_begin,
        }
    }

    /// `cosine_decay_schedule(init_value, decay_steps, alpha, exponent)`;
    /// `decay_steps` must be positive.
    #[track_caller]
    pub fn cosine_decay(
        init_value: f64,
        decay_steps: i64,
        alpha: f64,
        exponent: f64,
    ) -> Result<Schedule> {
        if decay_steps <= 0 {
            return Err(invalid(
                "cosine_decay_schedule",
                format!("requires positive decay_steps, got decay_steps={decay_steps}"),
            ));
        }
        Ok(Schedule::CosineDecay {
            init_value,
            decay_steps,
            alpha,
            exponent,
        })
    }

    /// `join_schedules(schedules, boundaries)`: `schedules[i + 1]` of the
    /// steps since `boundaries[i]` from that step on. Needs one schedule or
    /// more, one boundary fewer than schedules, and strictly increasing
    /// boundaries (Optax zips whatever it is given; a shorter or unordered
    /// list would silently skip schedules, so here it is an error).
    #[track_caller]
    pub fn join(schedules: Vec<Schedule>, boundaries: Vec<i64>) -> Result<Schedule> {
        let function = "join_schedules";
        if schedules.is_empty() || boundaries.len() + 1 != schedules.len() {
            return Err(invalid(
                function,
                format!(
                    "takes one boundary fewer than schedules; got {} schedules and {} boundaries",
                    schedules.len(),
                    boundaries.len()
                ),
            ));
        }
        if boundaries.windows(2).any(|w| w[0] >= w[1]) {
            return Err(invalid(
                function,
                format!("boundaries must be strictly increasing; got {boundaries:?}"),
            ));
        }
        Ok(Schedule::Join {
            schedules,
            boundaries,
        })
    }

    /// `warmup_exponential_decay_schedule(init_value, peak_value,
    /// warmup_steps, transition_steps, decay_rate, transition_begin,
    /// staircase, end_value)`: [`Schedule::linear`] from `init_value` to
    /// `peak_value` over `warmup_steps`, then exponential decay from
    /// `peak_value` (see [`Schedule::Exponential`]) of the steps since.
    #[allow(clippy::too_many_arguments)]
    pub fn warmup_exponential_decay(
        init_value: f64,
        peak_value: f64,
        warmup_steps: i64,
        transition_steps: i64,
        decay_rate: f64,
        transition_begin: i64,
        staircase: bool,
        end_value: Option<f64>,
    ) -> Schedule {
        Schedule::Join {
            schedules: vec![
                Schedule::linear(init_value, peak_value, warmup_steps),
                Schedule::Exponential {
                    init_value: peak_value,
                    transition_steps,
                    decay_rate,
                    transition_begin,
                    staircase,
                    end_value,
                },
            ],
            boundaries: vec![warmup_steps],
        }
    }

    /// `sgdr_schedule(cosine_kwargs)`: the cycles, each a
    /// [`Schedule::WarmupCosineDecay`] (Optax's kwargs of
    /// `warmup_cosine_decay_schedule`), one after the other, each lasting its
    /// `decay_steps`. Another kind of schedule, or no cycle, is an error.
    #[track_caller]
    pub fn sgdr(cycles: &[Schedule]) -> Result<Schedule> {
        let mut boundaries = Vec::with_capacity(cycles.len());
        let mut step = 0;
        for (i, cycle) in cycles.iter().enumerate() {
            let Schedule::WarmupCosineDecay { decay_steps, .. } = cycle else {
                return Err(invalid(
                    "sgdr_schedule",
                    format!("cycle {i} is {cycle:?}, not a Schedule::WarmupCosineDecay"),
                ));
            };
            step += decay_steps;
            boundaries.push(step);
        }
        if cycles.is_empty() {
            return Err(invalid("sgdr_schedule", "needs at least one cycle".into()));
        }
        boundaries.pop();
        // Optax's boundaries need not increase (a cycle may have no steps).
        Ok(Schedule::Join {
            schedules: cycles.to_vec(),
            boundaries,
        })
    }

    /// `cosine_onecycle_schedule(transition_steps, peak_value, pct_start,
    /// div_factor, final_div_factor)`: cosine from `peak_value / div_factor`
    /// up to `peak_value` over the first `pct_start` of the steps, then down
    /// to `peak_value / (div_factor * final_div_factor)`. Optax's defaults
    /// are 0.3, 25 and 1e4; `transition_steps` must be positive.
    #[track_caller]
    pub fn cosine_onecycle(
        transition_steps: i64,
        peak_value: f64,
        pct_start: f64,
        div_factor: f64,
        final_div_factor: f64,
    ) -> Result<Schedule> {
        onecycle_steps("cosine_onecycle_schedule", transition_steps)?;
        Schedule::piecewise_interpolate(
            "cosine",
            peak_value / div_factor,
            &[
                ((pct_start * transition_steps as f64) as i64, div_factor),
                (transition_steps, 1.0 / (div_factor * final_div_factor)),
            ],
        )
    }

    /// `linear_onecycle_schedule(transition_steps, peak_value, pct_start,
    /// pct_final, div_factor, final_div_factor)`: linear from `peak_value /
    /// div_factor` up to `peak_value` by `pct_start` of the steps, back down
    /// by `pct_final`, then to `peak_value / div_factor / final_div_factor`
    /// at `transition_steps`. Optax's defaults are 0.3, 0.85, 25 and 1e4;
    /// `transition_steps` must be positive.
    #[track_caller]
    pub fn linear_onecycle(
        transition_steps: i64,
        peak_value: f64,
        pct_start: f64,
        pct_final: f64,
        div_factor: f64,
        final_div_factor: f64,
    ) -> Result<Schedule> {
        onecycle_steps("linear_onecycle_schedule", transition_steps)?;
        let steps = transition_steps as f64;
        Schedule::piecewise_interpolate(
            "linear",
            peak_value / div_factor,
            &[
                ((pct_start * steps) as i64, div_factor),
                ((pct_final * steps) as i64, 1.0 / div_factor),
                (transition_steps, 1.0 / final_div_factor),
            ],
        )
    }

    /// Any function of the step count as a schedule (an Optax schedule is
    /// any callable): it gets the integer count array, traced under `jit`,
    /// and returns the value.
    ///
    /// ```
    /// use oxla::{Array, jit, numpy as jnp};
    /// use oxla_optim::Schedule;
    /// # fn main() -> oxla::Result<()> {
    /// let s = Schedule::from_fn(|count| jnp::exp(&(-count.astype(oxla::DType::F32) / 10.0)));
    /// let at = jit(|c: Array| s.value(&c));
    /// assert!((at.call(Array::scalar(10i32)?)?.item::<f32>()? - (-1.0f32).exp()).abs() < 1e-6);
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_fn(f: impl Fn(&Array) -> Array + Send + Sync + 'static) -> Schedule {
        Schedule::Custom(Arc::new(f))
    }
}

/// Optax's check of the one-cycle schedules' length.
#[track_caller]
fn onecycle_steps(function: &str, transition_steps: i64) -> Result<()> {
    if transition_steps <= 0 {
        return Err(invalid(
            function,
            format!("needs a positive `transition_steps`, got {transition_steps}"),
        ));
    }
    Ok(())
}
