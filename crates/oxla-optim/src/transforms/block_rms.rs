//! Per-leaf ("block") root-mean-square scalings, as Adafactor uses them:
//! clipping each update's RMS, and scaling it by its parameter's RMS.

use oxla::Array;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named};

use super::GradientTransformation;

/// `sqrt(mean(x²))` over all of `x`.
fn root_mean_square(x: &Array) -> Array {
    jnp::sqrt(&jnp::mean(&(x * x), None, false))
}

/// Divides each leaf by `max(1, rms(leaf) / threshold)`, so that no leaf's
/// RMS exceeds `threshold` (`optax.clip_by_block_rms`).
#[derive(Debug, Clone, Copy)]
pub struct ClipByBlockRms {
    /// The largest RMS let through.
    pub threshold: f64,
}

/// `optax.clip_by_block_rms(threshold)`.
pub fn clip_by_block_rms(threshold: f64) -> ClipByBlockRms {
    ClipByBlockRms { threshold }
}

impl<P: Pytree> GradientTransformation<P> for ClipByBlockRms {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), _: &P) -> Result<(P, ())> {
        let updates = tree_map(&updates, |u| {
            let denominator = jnp::maximum(
                &Array::weak_scalar(1.0),
                &(root_mean_square(u) / self.threshold),
            );
            u / &denominator
        })?;
        Ok((updates, state))
    }
}

/// Multiplies each leaf's update by its parameter's RMS, or by `min_scale`
/// where that RMS is at most `min_scale` (`optax.scale_by_param_block_rms`).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByParamBlockRms {
    /// The smallest scale used.
    pub min_scale: f64,
}

/// `optax.scale_by_param_block_rms(min_scale)`; Optax's default is 1e-3.
pub fn scale_by_param_block_rms(min_scale: f64) -> ScaleByParamBlockRms {
    ScaleByParamBlockRms { min_scale }
}

impl<P: Pytree> GradientTransformation<P> for ScaleByParamBlockRms {
    type State = ();

    fn init(&self, _: &P) {}

    fn update(&self, updates: P, state: (), params: &P) -> Result<(P, ())> {
        let min_scale = Array::weak_scalar(self.min_scale);
        let updates = tree_map_named("scale_by_param_block_rms", &[&updates, params], |l| {
            // Optax's `safe_root_mean_squares`.
            let small = jnp::less_equal(&root_mean_square(l[1]), &min_scale);
            let safe = jnp::where_(&small, &jnp::ones_like(l[1]), l[1]);
            l[0] * &jnp::where_(&small, &min_scale, &root_mean_square(&safe))
        })?;
        Ok((updates, state))
    }
}
