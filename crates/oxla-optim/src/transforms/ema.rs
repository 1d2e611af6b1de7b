//! An exponential moving average of the updates (`optax.ema`).

use oxla::Array;
use oxla::DType;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named};

use super::{GradientTransformation, bias_corrected, ema_update, safe_increment, zero_count};

/// State of [`Ema`]: the step count and the average.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct EmaState<P: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// The moving average (in the accumulator dtype when one is set).
    pub ema: P,
}

/// Replaces the updates by their exponential moving average
/// `(1 - decay) * g + decay * ema`, divided by `1 - decay^count` with
/// `debias` (`optax.ema`; Adafactor's momentum).
#[derive(Debug, Clone, Copy)]
pub struct Ema {
    /// Decay of the average.
    pub decay: f64,
    /// Whether to correct the average's bias towards its zero start.
    pub debias: bool,
    /// The dtype the average is kept in (`None`: each parameter's own).
    pub accumulator_dtype: Option<DType>,
}

/// `optax.ema(decay, debias)`, the average kept in each parameter's dtype.
pub fn ema(decay: f64, debias: bool) -> Ema {
    Ema {
        decay,
        debias,
        accumulator_dtype: None,
    }
}

impl<P: Pytree> GradientTransformation<P> for Ema {
    type State = EmaState<P>;

    fn init(&self, params: &P) -> EmaState<P> {
        let zeros = |p: &Array| match self.accumulator_dtype {
            Some(dtype) => jnp::zeros(p.shape_or_empty(), dtype),
            None => jnp::zeros_like(p),
        };
        EmaState {
            count: zero_count(),
            ema: tree_map(params, zeros).expect("a tree rebuilds from its own leaves"),
        }
    }

    fn update(&self, updates: P, state: EmaState<P>, _: &P) -> Result<(P, EmaState<P>)> {
        let decay = self.decay;
        let new_ema = tree_map_named("ema", &[&updates, &state.ema], |l| {
            ema_update(l[0], l[1], decay)
        })?;
        let count = safe_increment(&state.count);
        let updates = if self.debias {
            tree_map(&new_ema, |m| bias_corrected(m, decay, &count))?
        } else {
            tree_map(&new_ema, Array::clone)?
        };
        let ema = match self.accumulator_dtype {
            Some(dtype) => tree_map(&new_ema, |m| m.astype(dtype))?,
            None => new_ema,
        };
        Ok((updates, EmaState { count, ema }))
    }
}
